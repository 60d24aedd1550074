"""In front of a class: presentation mode, the Share button, and the Share panel with the
view's address and its QR code."""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.navigation.page import StreamlitPage

from explorer import presentation, share
from explorer.ui import controls, lesson_present, screen_size

#: Presentation mode closes the sidebar, which the pages' text names ("the sidebar's d"): where it is.
SIDEBAR_CLOSED = "The sidebar's d, n, L and presets: open it with » at the top left."

#: Key of the Share button (not in the URL).
SHARE_BUTTON_KEY = "share_view"


def presenting() -> bool:
    """True in presentation mode (``present=true`` in the URL, or its toggle)."""
    return bool(st.session_state.get(share.PRESENT_KEY, False))


def presented_screen() -> presentation.Screen | None:
    """The screen presentation mode draws for (explorer/ui/screen_size.py); None in normal mode."""
    return screen_size.screen() if presenting() else None


def page_config(**config: object) -> bool:
    """Before the page runs: the app's page ``config`` with presentation mode's sidebar, closed when
    presenting (``present=true`` in the URL, or its toggle). One st.set_page_config: each call is a
    message of every rerun. Returns whether this run presents (the app then sends the larger style)."""
    presenting_now = controls.seed_bool(share.PRESENT_KEY)
    st.set_page_config(**config, initial_sidebar_state="collapsed" if presenting_now else "auto")
    return presenting_now


def page_block() -> AbstractContextManager:
    """Where the page is drawn: in presentation mode a block of its own for each screen size
    (explorer/ui/screen_size.py), so that on a screen of another size every element is drawn
    anew; a table keeps the column widths it measured when first drawn, and after the window
    shrank it scrolled sideways. In normal mode the page is drawn where it stands."""
    screen = presented_screen()
    if screen is None:
        return contextlib.nullcontext()
    return st.container(key=f"present_{screen.width}x{screen.height}")


def bar_place() -> DeltaGenerator:
    """Above the page, before it runs: the row ``classroom_bar`` fills once the page has run. One block:
    each costs a whole run what an element does (blocks.row)."""
    return st.container(horizontal=True, horizontal_alignment="right", vertical_alignment="center")


def classroom_bar(bar: DeltaGenerator, *, building: bool = True) -> bool:
    """In ``bar`` (``bar_place``) above the page, drawn after it (on a step the page's first chart goes
    out first): the Share button, "Add this view to the lesson" (``building``: neither presenting nor
    following a lesson) and presentation mode's toggle, reachable with the sidebar closed.
    Returns whether Share was pressed: ``share_panel`` then opens the panel, after
    controls.write_url, when every control's value, also one a fragment moved since the
    last full run, is in the URL.
    """
    with bar:
        if presenting():
            st.caption(SIDEBAR_CLOSED)
            screen_size.mount()
        if building:
            lesson_present.add_view_button()
        # A button, not a popover: pressing it reruns the whole app (not a fragment), so the
        # address is the current one, and a modal dialog cannot go stale behind a moved control.
        pressed = st.button(
            "Share this view", icon=":material/qr_code_2:", key=SHARE_BUTTON_KEY,
            help="This view's address with all its settings, to copy or to scan as a QR code.",
        )
        controls.bool_control(share.PRESENT_KEY, "Presentation mode")
    return pressed


@st.cache_data(max_entries=64, show_spinner=False)
def _qr_png(url: str) -> bytes | None:
    return share.qr_png(url)


#: Key of the Share panel's QR code container: explorer/ui/style.py sizes the code to the screen.
QR_KEY = "share_qr"


def _address(url: str) -> None:
    st.caption("This view's address, with all its settings (the copy button is at its right):")
    st.code(url, language=None, wrap_lines=True)
    if share.is_local(url):
        st.warning(
            "This address names this computer only: other devices cannot open it. "
            "Open the app by its network address to share it.", icon=":material/warning:",
        )


@st.dialog("Share this view", width="large")
def _share_dialog(url: str | None, follow_url: str | None = None, following: bool = False) -> None:
    if following:
        follow_tab, view_tab = st.tabs(["Follow this lesson", "This view only"])
        with follow_tab:
            lesson_present.follow_panel(follow_url, _qr_png)
        with view_tab:
            _view_panel(url)
        return
    _view_panel(url)


def _view_panel(url: str | None) -> None:
    if url is None:
        st.warning("This view's address is unknown here: copy it from the address bar.", icon=":material/link_off:")
        return
    png = _qr_png(url)
    if png is None:
        _address(url)
        st.caption("This address is too long for a QR code: copy it instead.")
        return
    # The address beside the code, not above it: below the address, the code ran off a
    # 1280 x 720 projector's screen. On a phone the columns stack, the address first.
    address, code = st.columns([2, 3])
    with address:
        _address(url)
        st.caption("Scan the code with a phone's camera to open this view.")
    with code, st.container(key=QR_KEY):
        st.image(png, width="stretch", alt="QR code of this view's address, shown beside it.")


def share_panel(pressed: bool, page: StreamlitPage, lesson: lesson_present.Presented | None = None) -> None:
    """When Share was pressed, open the Share panel: the address of this view, with
    st.code's copy button, and its QR code; while a lesson is presented, first the class's
    follow link and its code (the step is published from then on: lesson_present.publish). Call after
    controls.write_url."""
    if not pressed:
        return
    url = share.share_url(st.context.url, st.context.headers, page.url_path, st.query_params.to_dict())
    if lesson is None:
        _share_dialog(url)
        return
    _share_dialog(url, lesson_present.follow_url(page.url_path), following=True)
