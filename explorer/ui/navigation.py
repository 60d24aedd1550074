"""The app's navigation: its st.Page list, built once per process, and a page run that
turns an unexpected error into a short message."""

from __future__ import annotations

import copy
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TypeVar

import streamlit as st
from streamlit.navigation.page import StreamlitPage
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explorer import page_list
from explorer.ui import controls, model_carry

T = TypeVar("T")

#: The pages as first built in this process, by URL path (see ``pages``).
_BUILT: dict[str, StreamlitPage] = {}
#: Addresses that are no page's own but land on one (hidden pages that switch to it, see
#: ``routes``): Home is served at "/", and "/home", its URL path in the page list (an old
#: link, or what a person types), would otherwise open Streamlit's "Page not found". Only in
#: lower case, as every page's address: Streamlit matches URL paths exactly.
ALIASES: dict[str, str] = {page_list.HOME.url_path: page_list.HOME.url_path}
_ALIAS_PAGES: list[StreamlitPage] = []


def pages() -> dict[str, StreamlitPage]:
    """This run's pages for st.navigation, by URL path, in the page list's order.

    st.Page resolves its file on the disk (``Path.resolve``, ``is_file``) when it is built:
    a realpath per page in every run of every session, 2.5% of the server's time under a
    class of 100. So each page is built once per process, on the first run (st.Page needs a
    script run to find the app's folder), and every run gets shallow copies: st.navigation
    marks the page it returns as runnable and ``run`` unmarks it, state of one run that
    two sessions running at once must not share.

    Home, the default page, is served at "/" whatever its url_path; it gets the empty one,
    so that "/home" is free for its alias (``ALIASES``).
    """
    if not _BUILT:
        _BUILT.update({
            info.url_path: st.Page(
                info.path, title=info.title, icon=info.icon, default=info is page_list.HOME,
                url_path=page_list.address_path(info),
            )
            for info in page_list.ALL_PAGES
        })
        _ALIAS_PAGES.extend(
            st.Page(_switch_to(_BUILT[target]), title=_BUILT[target].title, url_path=alias, visibility="hidden")
            for alias, target in ALIASES.items()
        )
    return {url_path: copy.copy(page) for url_path, page in _BUILT.items()}


def open_view(view: tuple[str, dict[str, str]]) -> None:
    """Switch to ``view`` (a page's URL path and its whole query: a lesson's step), read as a link
    is read: every control from the query, one it leaves out at its default."""
    controls.open_view()
    _stop_timed_reruns()
    st.switch_page(pages()[view[0]], query_params=view[1])


def reopen_after_a_late_timer(current_page: str) -> None:
    """First in a ``run_every`` fragment (a follower's poll, a presenter's heartbeat): when this run's
    request left the browser before the browser learned that the page changed, draw the session's
    view (``current_page``, the URL path of its last whole run, and the query last written) again,
    whole.

    ``_stop_timed_reruns`` cannot stop a timer's request already on its way, and such a request names
    the page the browser showed before. Streamlit 1.67 runs the fragment anyway, as a run of that
    page: the server takes that page's query and drops the new page's controls, and the browser, told
    of a run of another page, removes the page's own fragment. A follower under load was left with
    the step's narration over an empty page, until the teacher's next step."""
    ctx = get_script_run_ctx()
    if ctx is None or not ctx.fragment_ids_this_run:
        return
    url_path = current_page or page_list.HOME.url_path
    if url_path in _BUILT and ctx.page_script_hash != _BUILT[url_path]._script_hash:
        open_view((url_path, controls.written_query()))


def _stop_timed_reruns() -> None:
    """Tell the browser to stop the timers of this session's ``run_every`` fragments (a follower's
    poll, a presenter's heartbeat) until the new view's run registers them again, at its end.

    A timer's request carries every value the browser's controls hold, and until the new view's run
    has drawn its controls those are the old view's: Streamlit took them as the visitor's moves (a
    follower's step opened with the old step's L, its reference position clamped to it). Streamlit
    cancels a timer only for a nested fragment that is gone, so the message is sent here: the one
    that it sends then (1.67), put before ``st.switch_page``, which waits for the browser to get it."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    fragment_ids = ctx.fragment_storage.ids_registered_after(0)
    if fragment_ids:
        message = ForwardMsg()
        message.stop_auto_rerun.fragment_ids.extend(sorted(fragment_ids))
        ctx.enqueue(message)


def page(url_path: str) -> StreamlitPage:
    """The app's page at ``url_path`` (page_list's), for st.page_link: a link to the page itself is
    checked against the navigation by its hash, where a link to its file resolves the file on the disk
    in every run (a realpath per link) and, in AppTest's rerun of a fragment, finds no pages at all."""
    return _BUILT[url_path]


def routes(run_pages: dict[str, StreamlitPage]) -> list[StreamlitPage]:
    """What st.navigation takes: this run's pages (``pages``), then the hidden aliases.

    One flat list, not st.navigation's sections: Streamlit 1.67 draws sections as <div>s inside
    the navigation's <ul>, which axe reports as a serious list violation on every page. Home's
    map of the pages shows the sections instead.
    """
    return [*run_pages.values(), *(copy.copy(alias) for alias in _ALIAS_PAGES)]


def _switch_to(target: StreamlitPage):
    """An alias's page: it switches to ``target`` (whose own URL then shows); the settings
    the alias's URL carried are in the session already, and the target's run writes them back."""

    def switch() -> None:
        st.switch_page(target)

    return switch


class RunSlots:
    """At most ``count`` page runs compute at once; the others wait for a slot in the order
    they came, each freed slot handed to the longest waiter.

    Streamlit runs every session's script in a thread of its own, all at once under one GIL:
    a class of 100 with settings of their own had 100 runs in flight, each holding its
    temporaries (peak memory grows with them) and each finished only when nearly all were
    (processor sharing: the first runs waited for the others' second ones). With a few
    slots a run is done soon after it starts, in arrival order, and memory holds a few runs'
    temporaries. The hand-off matters: with threading.Semaphore a run arriving as a slot
    frees takes it before the waiter woken for it, and under a class's stream of new runs
    some waited 40 s.
    """

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError(f"count must be at least 1, got {count}.")
        self.count = count
        self._free = count
        self._waiting: deque[threading.Event] = deque()
        self._lock = threading.Lock()
        self._finished = 0

    def _acquire(self) -> None:
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return
            turn = threading.Event()
            self._waiting.append(turn)
        turn.wait()  # set by _release, which hands this thread its slot

    def _release(self) -> None:
        with self._lock:
            self._finished += 1
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._free += 1

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block (waiting for one, in turn, if every slot is taken)."""
        self._acquire()
        try:
            yield
        finally:
            self._release()

    def others_waiting(self) -> bool:
        """True while runs wait for a slot."""
        with self._lock:
            return bool(self._waiting)

    def finished(self) -> int:
        """How many runs have given their slot back so far."""
        with self._lock:
            return self._finished


#: Page runs computing at once in this process (PE_RUN_SLOTS overrides, for benchmarks).
RUN_SLOTS = RunSlots(int(os.environ.get("PE_RUN_SLOTS", "2")))


#: What a visitor sees if a page fails unexpectedly: no traceback, a way forward.
PAGE_FAILED = (
    "This view could not be drawn with these settings. Try other values in the sidebar, "
    "or choose a preset; the problem has been logged for the maintainers."
)


_this_run = threading.local()


def in_fragment_rerun() -> bool:
    """True while only a fragment reruns (a control inside it moved), not the whole app."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def rerunning_page() -> bool:
    """True while the page's fragment, or its settings part, reruns alone: the fragments inside it run
    in full, as in a whole run."""
    return getattr(_this_run, "page", False)


def run_page(page: StreamlitPage) -> None:
    """Run a page in an st.fragment keyed ``controls.PAGE_FRAGMENT``; an unexpected error becomes a
    short message and a server log entry.

    A move of a shared control (d, n, L, the layout, the frequencies) or of a page's own control
    reruns the page alone: the navigation, the style sheet, the Share bar and the sidebar stay in
    the browser as they are, where a whole run sends them again, about a third of a light page's
    warm rerun (benchmarks/JOURNAL.md, "2026-11-29, 10:15-11:00"). When the page's run leaves the
    sidebar showing other values than the session holds (a preset, a pasted config), or a preset
    waits to open its page, the app reruns whole. A page whose own controls come first may put what
    reads the shared settings in a part of its own (``run_settings_part``), which a shared control's
    move then reruns alone.

    Streamlit's own rerun and stop signals are BaseExceptions, so they pass through.
    """

    def page_fragment() -> None:
        alone = in_fragment_rerun()  # the body runs in a whole run, or when this fragment reruns
        # Above the page, the notices of the URL's values it read: in this fragment, so that the
        # next step clears them, as the next run did when every step ran the app whole.
        notices = st.container()
        if alone:
            st.session_state["settings"] = controls.begin_page_rerun()
            # st.navigation marks the page it returns to run once a run; this rerun is a run.
            page._can_be_called = True
        else:
            controls.begin_page()
        _run_guarded(page.run, getattr(page, "title", page), alone=alone, in_slot=True)
        controls.show_notices(notices)
        carried = model_carry.note(page.url_path)
        if carried:
            controls.show_note(notices, carried)

    st.fragment(page_fragment, key=controls.PAGE_FRAGMENT)()


def run_settings_part(draw: Callable[[], T]) -> T | None:
    """Run ``draw``, the part of a page below its own controls that reads the shared settings, in an
    st.fragment keyed ``controls.SETTINGS_PART``: a move of a shared control reruns this part alone,
    and the page's title, text and controls above it stay in the browser as they are. ``draw`` reads
    the shared settings from ``st.session_state["settings"]``, and the page's controls above it from
    its closure (Streamlit keeps the part's function of the page's last run). Call it once. Returns
    what ``draw`` returns in the page's run (None if it failed); what the page draws after it is not
    drawn again when the part reruns alone, so if that reads the shared settings too, it calls
    ``controls.steps_rerun_page``.

    Home, Rotary, Attention and Longer contexts have one. On Rotary, the title, the text and the
    model, layout, q, k and scaling controls (twenty messages and five widgets) are not sent again on
    a d step, nor, below the part, the checker and the code toggle (benchmarks/JOURNAL.md,
    "2026-11-29, 12:20-13:10").
    """

    def settings_part() -> T | None:
        alone = in_fragment_rerun() and not rerunning_page()
        if alone:
            st.session_state["settings"] = controls.begin_settings_part_rerun()
        else:
            controls.begin_settings_part()
        # In a whole run or the page's rerun the page already holds a run slot.
        return _run_guarded(draw, "settings part", alone=alone, in_slot=alone)

    return st.fragment(settings_part, key=controls.SETTINGS_PART)()


def _run_guarded(draw: Callable[[], T], name: object, *, alone: bool, in_slot: bool) -> T | None:
    """Run ``draw`` (in a run slot if ``in_slot``); an unexpected error becomes a short message and a
    log entry. When ``draw`` is a fragment's run alone (``alone``), the whole app reruns instead
    whenever the sidebar would show stale values or a page must open, and the URL follows. Returns
    what ``draw`` returns, or None if it failed."""
    if alone and controls.needs_whole_run():
        st.rerun(scope="app")
    around = rerunning_page()  # the page's rerun, around its settings part
    _this_run.page = alone or around
    drawn = None
    try:
        with RUN_SLOTS.held() if in_slot else nullcontext():
            drawn = draw()
    except Exception:
        logging.getLogger("explorer").exception("page %r failed", name)
        st.error(PAGE_FAILED, icon=":material/error:")
    finally:
        _this_run.page = around
    if alone:
        if controls.needs_whole_run():
            st.rerun(scope="app")
        controls.write_url()
    return drawn
