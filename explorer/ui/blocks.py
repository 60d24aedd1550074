"""The building blocks of a page: its charts, cached sections, downloads, fragments and
"reproduce this" code, so that no page repeats them."""

from __future__ import annotations

import functools
import io
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import plotly.io._json as plotly_json
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer import figures, presentation
from explorer.settings import Settings, even_settings
from explorer.ui import cached, controls, navigation
from explorer.ui.classroom import presented_screen, presenting

#: Plotly's mode bar keeps "download as PNG"; the logo link is noise in a classroom.
PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
# Importing Streamlit made its chart theme Plotly's default template; every figure the pages
# build from here on takes it with figures.TEMPLATE over it, merged once here (a default named
# "streamlit+explorer" would be merged again for every figure, 2.4 ms each).
pio.templates["explorer"] = pio.templates.merge_templates(pio.templates["streamlit"], figures.TEMPLATE)
pio.templates.default = "explorer"
# Plotly escapes "<", ">", "/" and two line separators in a figure's JSON, one pass over the whole text
# each, so that the JSON can sit in an HTML <script>. st.plotly_chart's JSON goes into a protobuf string
# that the browser reads with JSON.parse, which gives the same figure either way, and the app writes no
# Plotly HTML. Every "/" of a base64 array (one character in 64) became six: the escaping was a third of
# a chart's cost on the server under a class on settings of its own (benchmarks/JOURNAL.md, "2026-12-07,
# 04:49"), and the JSON 5 % longer to hash twice and send.
plotly_json._swap_orjson = ()


def even_d_page(title: str, why: str) -> Settings:
    """The title of a page that needs sine/cosine pairs, and the shared settings with an even d
    (``even_d_settings``)."""
    st.title(title)
    return even_d_settings(why)


def even_d_settings(why: str) -> Settings:
    """The shared settings with an even d, with a one-line notice when d was odd (``why`` says what an
    odd d would break): for a page that needs sine/cosine pairs, where it reads the settings."""
    settings, odd_notice = even_settings(st.session_state["settings"], why)
    if odd_notice:
        st.warning(odd_notice, icon=":material/warning:")
    return settings


def row() -> DeltaGenerator:
    """A row for elements side by side, of equal widths, that wrap onto lines of their own on a phone
    as st.columns stack. One block where st.columns(n) sends 1 + n, and a step re-sends each: a block
    costs a rerun what an element does (about 0.1 ms; benchmarks/JOURNAL.md, "2026-11-29,
    12:20-13:10"). Draw the elements into it in order; an element that needs several beside one
    becomes a container of its own."""
    return st.container(horizontal=True)


def on_request(label: str, *, key: str, icon: str | None = None) -> DeltaGenerator | None:
    """An expander, closed until the visitor opens it, for a tool they ask for (an upload, a pasted
    config): the expander to draw the tool into while it is open, else None, and nothing drawn.
    Streamlit's lazy expander (``on_change="rerun"``): opening or closing it reruns the page. Drawn
    closed as st.expander draws it, the tool's widgets and text would still be sent by every whole run
    (a file uploader, a text box, their help: a few per cent of Rotary's and M-RoPE's). Its state is the
    session's, as the tool's is: an upload never goes into a URL, and neither does the box that holds it.
    """
    expander = st.expander(label, key=key, icon=icon, on_change="rerun")
    return expander if expander.open else None


def kept_on_request(label: str, *, key: str, icon: str | None = None) -> DeltaGenerator | None:
    """``on_request``, its state kept in the URL as a toggle's is (``key=true``): a shared view opens
    with it open. Like the code toggle, it stays open on a page opened next that has one with the same
    key (a page without one in between closes it). ``label`` must not change with the settings
    (Streamlit keys the expander's state by it)."""
    # Read from the URL and registered for it as a toggle is, and sent with its value in every run
    # (controls.bool_control says why).
    st.session_state[key] = controls.seed_bool(key)
    return on_request(label, key=key, icon=icon)


#: URL key of the expander that holds a page's Play chart (a page with two names its second otherwise).
PLAY_KEY = "play"


def play_on_request(label: str, *, key: str = PLAY_KEY) -> DeltaGenerator | None:
    """An expander for a Play chart (explorer/animation.py) that animates a chart drawn above it, closed
    until the visitor opens it (``kept_on_request``, so ``play=true`` in a link opens it): the expander
    to draw the Play chart, its caption and downloads into while it is open, else None, and nothing drawn.

    The Play charts' frames, sent with every whole run for an animation nobody had started, cost a class
    on settings of its own 14-21 % of the server's CPU (benchmarks/JOURNAL.md, "2026-12-07, 12:40")."""
    return kept_on_request(label, key=key, icon=":material/play_arrow:")


def chart(fig: go.Figure, *, key: str | None = None) -> None:
    """Draw a Plotly figure at the width of the layout, its title wrapped to fit a phone
    (in presentation mode, sized for the screen)."""
    figures.fit_title(fig)
    screen = presented_screen()
    if screen is not None:
        _fit_to_screen(fig, screen)
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key)


def panel_columns() -> int:
    """How many columns a chart of stacked panels takes: presentation mode's wide, short screen
    takes presentation.PANEL_COLUMNS (Attention's six panels one under another would have been
    70 px each once fitted to a 720 px projector), a page one."""
    return presentation.PANEL_COLUMNS if presenting() else 1


def _fit_to_screen(fig: go.Figure, screen: presentation.Screen) -> None:
    """Presentation mode's chart (explorer/presentation.py): its text larger, growing with the
    screen, and taller, but never taller than the screen. Streamlit's Plotly theme sizes each
    kind of text itself, so each is set here, not only the figure's base font. What the top
    margin holds (the title, subplot titles, Play's buttons and frame slider) is text, so it
    grows with the text, and the slider keeps its distance above the larger buttons."""
    text, title = presentation.chart_font_px(screen)
    grow = text / figures.FONT_PX
    layout = fig.layout
    designed = layout.height or figures.PLOTLY_DEFAULT_HEIGHT
    top = layout.margin.t or figures.PLOTLY_DEFAULT_MARGIN_T
    bottom = layout.margin.b or figures.PLOTLY_DEFAULT_MARGIN_B
    height = min(
        round(designed * presentation.CHART_HEIGHT_FACTOR * presentation.scale(screen)) + round(top * (grow - 1)),
        presentation.chart_max_height_px(screen),
    )
    fig.update_layout(
        height=height, margin_t=round(top * grow),
        font_size=text, title_font_size=title, legend_font_size=text, hoverlabel_font_size=text,
    )
    if layout.legend.y is not None and layout.legend.y < 0:
        # A legend under the plot is placed in fractions of the plot's height: on a plot made
        # shorter to fit the screen it would rise into the x axis's labels. Its distance below
        # the plot, and the margin that holds it, grow with the text instead.
        layout.margin.b = round(bottom * grow)
        plot = max(height - layout.margin.t - layout.margin.b, 1)
        layout.legend.y = layout.legend.y * (designed - top - bottom) * grow / plot
    if fig.layout.title.pad.t:  # a wrapped title's pad grows with its lines (figures.fit_title)
        clearance = figures.MODEBAR_CLEARANCE_PX
        fig.layout.title.pad.t = clearance + (fig.layout.title.pad.t - clearance) * title / figures.TITLE_FONT_PX
    for slider in fig.layout.sliders:
        slider.pad.b = round((slider.pad.b or 0) * grow)
    fig.update_xaxes(tickfont_size=text, title_font_size=text)
    fig.update_yaxes(tickfont_size=text, title_font_size=text)
    fig.update_annotations(font_size=text)  # subplot titles
    fig.update_coloraxes(colorbar_tickfont_size=text)
    fig.for_each_trace(lambda trace: trace.update(colorbar_tickfont_size=text), selector={"type": "heatmap"})


def table(
    data: object, *, titles: dict[str, str] | None = None, formats: dict[str, str] | None = None,
    names_px: int | None = None, **kwargs: object,
) -> None:
    """st.dataframe, with the shorter ``titles`` (column -> title shown) of columns whose full
    names would make the table wider than the page, each full name kept as the column's help;
    ``formats`` (column -> printf format) for numeric columns; ``names_px`` sets the width of
    the first column (the index) in pixels."""
    titles, formats = titles or {}, formats or {}
    config: dict[str, object] = {
        column: st.column_config.Column(title, help=column) for column, title in titles.items()
    }
    for column, number_format in formats.items():
        config[column] = st.column_config.NumberColumn(
            titles.get(column), help=column if column in titles else None, format=number_format
        )
    if names_px is not None:
        config["_index"] = st.column_config.Column(width=names_px)
    st.dataframe(data, column_config=config, **kwargs)


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


#: Finished sections kept across sessions (a section is a few elements, a chart at most 1.5 MB):
#: start-up's visits leave 81 (every page at its defaults, every preset); 128 held 15 MB after 50
#: students with settings of their own, 96 about 11.
SECTION_CACHE_ENTRIES = 96


# st.cache_resource, not st.cache_data: both record the elements drawn and replay them on a hit,
# but cache_data pickles them when a section is drawn and unpickles them at every replay (a
# chart's JSON, up to 1.5 MB); a replayed element is copied into the session's message anyway.
# Warm reruns at the largest settings: Waves 15.0 -> 13.8 ms, Matrix 10.0 -> 8.7 (rerun_cost.py).
@st.cache_resource(max_entries=SECTION_CACHE_ENTRIES, show_spinner=False, hash_funcs=cached.SETTINGS_HASH)
def _drawn_once(name: str, inputs: tuple, _draw: Callable[[], None]) -> None:
    """Run ``_draw``: st.cache_resource records the elements it draws, and a hit replays them."""
    _draw()


def cached_section(name: str, draw: Callable[[], None], *inputs: object) -> None:
    """Draw a part of a page once per ``inputs``, for every session: later runs replay its
    finished elements (charts, captions, tables, metrics) without building them again.

    ``inputs`` must hold everything ``draw`` reads that can change (the settings, the page
    controls it uses); ``name`` tells the sections of all pages apart. ``draw`` must not
    create widgets (Streamlit cannot replay them): downloads and controls stay outside.
    """
    # Presentation mode draws the charts for the screen: its sections are others, one per screen.
    # By keyword: for each positional argument Streamlit reads the function's signature again.
    _drawn_once(name=name, inputs=(*inputs, presented_screen()), _draw=draw)


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
    Skipped while other runs wait for a slot (navigation.RUN_SLOTS): then the next run's
    picture matters more than the order this one's arrive in.
    """
    if not navigation.RUN_SLOTS.others_waiting():
        time.sleep(FIRST_CHART_LEAD_S)


#: URL key of the toggle that shows the "reproduce this" code.
CODE_KEY = "code"


def fragment(body: Callable[..., None], *args: object) -> None:
    """Run ``body(*args)`` as an st.fragment, now: a control inside it reruns only ``body`` (with
    the same ``args``), not the page, and the URL still follows (the page's other controls keep
    their keys)."""

    @functools.wraps(body)  # st.fragment tells fragments apart by their function's name
    def run(*args: object) -> None:
        body(*args)
        if navigation.in_fragment_rerun() and not navigation.rerunning_page():
            controls.write_url()
            if st.session_state.get(CODE_KEY, False):
                # The page's "reproduce this" code, outside the fragment, holds its controls' values.
                st.rerun(scope="app")

    st.fragment(run)(*args)


def reproduce(numpy_code: str | Callable[[], str], torch_code: str | Callable[[], str] | None = None) -> bool:
    """The 'reproduce this' code for the exact current settings, NumPy and PyTorch, shown on
    request by a toggle kept in the URL (``code=true``, on every page alike). Either may be given
    as a function that writes it, called only when the code is shown.

    Not an expander: a collapsed expander's code is still sent and highlighted by the
    browser, and since the code holds the settings it changes, and costs ~10 ms per block,
    on every slider step. Returns whether the code is shown.
    """
    libraries = "NumPy" if torch_code is None else "NumPy and PyTorch"
    if not controls.bool_control(CODE_KEY, f"Reproduce this in code ({libraries})"):
        return False
    numpy_code = numpy_code() if callable(numpy_code) else numpy_code
    torch_code = torch_code() if callable(torch_code) else torch_code
    # Long lines wrap: a block that scrolls sideways cannot be scrolled from the keyboard
    # (axe's scrollable-region-focusable), and runs off a phone. The copy button copies them whole.
    with st.container(border=True):
        if torch_code is None:
            st.code(numpy_code, language="python", wrap_lines=True)
            return True
        numpy_tab, torch_tab = st.tabs(["NumPy", "PyTorch"])
        numpy_tab.code(numpy_code, language="python", wrap_lines=True)
        torch_tab.code(torch_code, language="python", wrap_lines=True)
    return True
