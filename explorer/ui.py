"""Small Streamlit pieces that every page uses, so that no page repeats them."""

from __future__ import annotations

import functools
import io
import logging
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explorer import controls, figures, keyboard, share, style
from explorer.settings import Settings, even_settings

#: Plotly's mode bar keeps "download as PNG"; the logo link is noise in a classroom.
PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
#: Plotly's height for a figure that sets none.
PLOTLY_DEFAULT_HEIGHT = 450
# Importing Streamlit made its chart theme Plotly's default template; every figure the pages
# build from here on takes it with figures.TEMPLATE over it, merged once here (a default named
# "streamlit+explorer" would be merged again for every figure, 2.4 ms each).
pio.templates["explorer"] = pio.templates.merge_templates(pio.templates["streamlit"], figures.TEMPLATE)
pio.templates.default = "explorer"


def even_d_page(title: str, why: str) -> Settings:
    """The title of a page that needs sine/cosine pairs, and the shared settings with an even d
    (with a one-line notice when d was odd: ``why`` says what an odd d would break)."""
    settings, odd_notice = even_settings(st.session_state["settings"], why)
    st.title(title)
    if odd_notice:
        st.warning(odd_notice, icon=":material/warning:")
    return settings


def chart(fig: go.Figure, *, key: str | None = None) -> None:
    """Draw a Plotly figure at the width of the layout (larger in presentation mode)."""
    if presenting():
        _enlarge_for_room(fig)
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key)


def _enlarge_for_room(fig: go.Figure) -> None:
    """Presentation mode's chart: taller, its text larger. Streamlit's Plotly theme sizes
    each kind of text itself, so each is set here, not only the figure's base font."""
    text = share.PRESENT_CHART_FONT_PX
    fig.update_layout(
        height=round((fig.layout.height or PLOTLY_DEFAULT_HEIGHT) * share.PRESENT_CHART_HEIGHT_FACTOR),
        font_size=text, title_font_size=round(text * 1.2), legend_font_size=text, hoverlabel_font_size=text,
    )
    fig.update_xaxes(tickfont_size=text, title_font_size=text)
    fig.update_yaxes(tickfont_size=text, title_font_size=text)
    fig.update_annotations(font_size=text)  # subplot titles
    fig.update_coloraxes(colorbar_tickfont_size=text)
    fig.for_each_trace(lambda trace: trace.update(colorbar_tickfont_size=text), selector={"type": "heatmap"})


def reduced_note(what: str, shown: tuple[int, int], full: tuple[int, int]) -> None:
    """Say on the page that a chart shows block averages, and of what."""
    if shown != full:
        st.caption(
            f"{what}: {full[0]:,} x {full[1]:,} values drawn as {shown[0]:,} x {shown[1]:,} block averages "
            "(each cell is the mean of the block it stands for; hover says which). Nothing is skipped."
        )


def downloads(name: str, table: Callable[[], pd.DataFrame], *, key: str) -> None:
    """CSV and NPY downloads of the data a chart shows, when the sidebar's toggle asks for them.

    Off by default: two download buttons per chart cost every rerun a registration in
    Streamlit's media file manager (under its lock), for files nobody asked for. ``table``
    is called only when the buttons are drawn, and the files are made only when clicked.
    """
    if not st.session_state.get(controls.OFFER_DOWNLOADS, False):
        return
    data = table()
    csv_col, npy_col = st.columns(2)
    # A table of lines holds its x as a column and has no row labels: no index column then.
    labelled = not (isinstance(data.index, pd.RangeIndex) and data.index.name is None)
    csv_col.download_button(
        f"Download {name} (CSV)",
        data=lambda: data.to_csv(index=labelled).encode(),
        file_name=f"{key}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
        icon=":material/download:",
    )

    def npy_bytes() -> bytes:
        buffer = io.BytesIO()
        np.save(buffer, data.to_numpy(), allow_pickle=False)
        return buffer.getvalue()

    npy_col.download_button(
        f"Download {name} (NPY)",
        data=npy_bytes,
        file_name=f"{key}.npy",
        mime="application/octet-stream",
        key=f"{key}_npy",
        on_click="ignore",
        icon=":material/download:",
    )


#: Finished sections kept across sessions (a section is a few elements, a chart at most 1.5 MB).
SECTION_CACHE_ENTRIES = 128


@st.cache_data(max_entries=SECTION_CACHE_ENTRIES, show_spinner=False)
def _drawn_once(name: str, inputs: tuple, _draw: Callable[[], None]) -> None:
    """Run ``_draw``: st.cache_data records the elements it draws, and a hit replays them."""
    _draw()


def cached_section(name: str, draw: Callable[[], None], *inputs: object) -> None:
    """Draw a part of a page once per ``inputs``, for every session: later runs replay its
    finished elements (charts, captions, tables, metrics) without building them again.

    ``inputs`` must hold everything ``draw`` reads that can change (the settings, the page
    controls it uses); ``name`` tells the sections of all pages apart. ``draw`` must not
    create widgets (Streamlit cannot replay them): downloads and controls stay outside.
    """
    # Presentation mode draws the charts larger: its sections are others.
    _drawn_once(name, (*inputs, presenting()), draw)


#: How long a page waits after its first chart before it sends the rest (no CPU: the script
#: sleeps). The browser takes 35-55 ms from a heatmap's message to its picture at L=16384,
#: d=2048; what arrives sooner is laid out, and computed on the server, alongside it (an L step
#: on Encoding matrix and Similarity 5-16 ms slower with 30 ms than with 80, same runs).
FIRST_CHART_LEAD_S = 0.08


def first_chart_sent() -> None:
    """Let the browser draw the page's first chart before the rest of the page arrives.

    The browser lays out every element that has arrived before it paints (about 1 ms an
    element, even an unchanged one) and draws all the charts that changed in one frame, so
    without a pause the chart a visitor is watching waits for the whole page. Measured in
    benchmarks/latency.py: a d step on Similarity at L=16384, d=2048 from about 160 to
    about 115 ms, the trivial app taking 59.
    """
    time.sleep(FIRST_CHART_LEAD_S)


#: URL key of the toggle that shows the "reproduce this" code.
CODE_KEY = "code"


def in_fragment_rerun() -> bool:
    """True while only a fragment reruns (a control inside it moved), not the whole page."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def fragment(body: Callable[[], None]) -> None:
    """Run ``body`` as an st.fragment, now: a control inside it reruns only ``body``, not
    the page, and the URL still follows (the page's other controls keep their keys)."""

    @functools.wraps(body)  # st.fragment tells fragments apart by their function's name
    def run() -> None:
        body()
        if in_fragment_rerun():
            controls.write_url()
            if st.session_state.get(CODE_KEY, False):
                # The page's "reproduce this" code, outside the fragment, holds its controls' values.
                st.rerun(scope="app")

    st.fragment(run)()


def reproduce(numpy_code: str, torch_code: str | None = None) -> None:
    """The 'reproduce this' code for the exact current settings, NumPy and PyTorch, shown on
    request by a toggle kept in the URL (``code=true``, on every page alike).

    Not an expander: a collapsed expander's code is still sent and highlighted by the
    browser, and since the code holds the settings it changes, and costs ~10 ms per block,
    on every slider step.
    """
    libraries = "NumPy" if torch_code is None else "NumPy and PyTorch"
    if not controls.bool_control(CODE_KEY, f"Reproduce this in code ({libraries})"):
        return
    # Long lines wrap: a block that scrolls sideways cannot be scrolled from the keyboard
    # (axe's scrollable-region-focusable), and runs off a phone. The copy button copies them whole.
    with st.container(border=True):
        if torch_code is None:
            st.code(numpy_code, language="python", wrap_lines=True)
            return
        numpy_tab, torch_tab = st.tabs(["NumPy", "PyTorch"])
        numpy_tab.code(numpy_code, language="python", wrap_lines=True)
        torch_tab.code(torch_code, language="python", wrap_lines=True)


#: What a visitor sees if a page fails unexpectedly: no traceback, a way forward.
PAGE_FAILED = (
    "This view could not be drawn with these settings. Try other values in the sidebar, "
    "or choose a preset; the problem has been logged for the maintainers."
)


def run_page(page: StreamlitPage) -> None:
    """Run a page; an unexpected error becomes a short message and a server log entry.

    Streamlit's own rerun and stop signals are BaseExceptions, so they pass through.
    """
    try:
        page.run()
    except Exception:
        logging.getLogger("explorer").exception("page %r failed", getattr(page, "title", page))
        st.error(PAGE_FAILED, icon=":material/error:")


#: Key of the Share button (not in the URL).
SHARE_BUTTON_KEY = "share_view"


def presenting() -> bool:
    """True in presentation mode (``present=true`` in the URL, or its toggle)."""
    return bool(st.session_state.get(share.PRESENT_KEY, False))


def presentation_mode(bar: DeltaGenerator) -> None:
    """Before the page runs: presentation mode (``present=true`` in the URL, or its toggle)
    applied: the sidebar closed and the larger style, in ``bar`` above the page."""
    if controls.seed_bool(share.PRESENT_KEY):
        st.set_page_config(initial_sidebar_state="collapsed")
        style.present(bar)
    else:
        st.set_page_config(initial_sidebar_state="auto")


def classroom_bar(bar: DeltaGenerator) -> bool:
    """In ``bar`` above the page, drawn after it (on a step the page's first chart goes out
    first): the Share button and presentation mode's toggle, reachable with the sidebar
    closed. Returns whether Share was pressed: ``share_panel`` then opens the panel, after
    controls.write_url, when every control's value, also one a fragment moved since the
    last full run, is in the URL.
    """
    with bar, st.container(horizontal=True, horizontal_alignment="right", vertical_alignment="center"):
        # A button, not a popover: pressing it reruns the whole app (not a fragment), so the
        # address is the current one, and a modal dialog cannot go stale behind a moved control.
        pressed = st.button(
            "Share this view", icon=":material/qr_code_2:", key=SHARE_BUTTON_KEY,
            help="This view's address with all its settings, to copy or to scan as a QR code.",
        )
        controls.bool_control(share.PRESENT_KEY, "Presentation mode")
        keyboard.play_keys()
    return pressed


@st.cache_data(max_entries=64, show_spinner=False)
def _qr_png(url: str) -> bytes | None:
    return share.qr_png(url)


@st.dialog("Share this view", width="large")
def _share_dialog(url: str | None) -> None:
    if url is None:
        st.warning("This view's address is unknown here: copy it from the address bar.", icon=":material/link_off:")
        return
    st.caption("This view's address, with all its settings (the copy button is at its right):")
    st.code(url, language=None, wrap_lines=True)
    if share.is_local(url):
        st.warning(
            "This address names this computer only: other devices cannot open it. "
            "Open the app by its network address to share it.", icon=":material/warning:",
        )
    png = _qr_png(url)
    if png is None:
        st.caption("This address is too long for a QR code: copy it instead.")
        return
    st.image(
        png, width="content", caption="Scan with a phone's camera to open this view.",
        alt="QR code of this view's address, shown above.",
    )


def share_panel(pressed: bool, page: StreamlitPage) -> None:
    """When Share was pressed, open the Share panel: the address of this view, with
    st.code's copy button, and its QR code. Call after controls.write_url."""
    if pressed:
        _share_dialog(share.share_url(st.context.url, st.context.headers, page.url_path, st.query_params.to_dict()))
