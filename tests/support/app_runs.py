"""Open the app in streamlit.testing as a copied URL does (a fresh session on
/<url path>?<query>), check that the page ran, and measure what it sends: shared by the
app, topic and shared-piece tests."""

from __future__ import annotations

import functools
from pathlib import Path

from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from explorer import page_list, url_keys
from explorer.page_list import PageInfo, address_path
from explorer.ui.navigation import PAGE_FAILED

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
#: Budgets of PRODUCT.md, in bytes of what the server sends.
MAX_CHART_BYTES = 1_500_000
MAX_PAGE_BYTES = 3_000_000
SIDEBAR_KEYS = ("d", "n", "L", "layout", "convention", "preset")


PAGES = page_list.PAGES
PAGE_BY_KEY = {page.url_path: page for page in PAGES}
HOME = page_list.HOME
MATRIX = PAGE_BY_KEY["matrix"]


#: A copied link to each page, by URL path ("" for Home): the shared settings, with a page control
#: where the page has one to show (tests/app/test_deep_links.py, tests/browser/test_browser.py).
DEEP_LINKS = {
    address_path(page): "d=64&L=300&n=100" + {
        "matrix": "&transpose=true", "similarity": "&ref=5", "rotary": "&rope_layout=interleaved&qpos=7",
        "attention": "&query=40&heads=12", "layers": "&layer_model=gpt-oss-20b&layer_target=300000",
        "mrope": "&vl_model=qwen3-vl-8b-instruct&query_row=1",
    }.get(page.url_path, "")
    for page in PAGES
}


#: The URL keys of the expanders that hold the Play charts drawn on request (explorer.ui.blocks.play_on_request):
#: blocks.PLAY_KEY, and Waves' second (waves_page.CIRCLE_PLAY_KEY).
PLAY_KEYS = frozenset({"play", "circle_play"})


def play_open(url_path: str) -> dict[str, str]:
    """The query that opens every Play chart drawn on request of the page at ``url_path`` ("" for Home), as a
    shared link with them open does: none on a page without one."""
    return {key: "true" for key in sorted(url_keys.PAGE_KEYS[url_path or "home"] & PLAY_KEYS)}


def page_id(page: PageInfo) -> str:
    return page.url_path


def open_page(page: PageInfo, query: dict[str, str | list[str]] | None = None) -> AppTest:
    """A fresh session that opens ``page`` with ``query``, as a copied URL does."""
    at = open_url(address_path(page), query)
    assert_page_ran(at, page)
    return at


def open_on_request(at: AppTest, key: str) -> AppTest:
    """Open the expander under ``key`` that a page draws on request (blocks.on_request), as a click on it
    does: the run that follows draws what it holds."""
    at.session_state[key] = True
    return at.run()


def ran_page_path(at: AppTest) -> str:
    """The file of the page the last run drew (from AppTest's navigation registry).

    AppTest keeps the registry of the last run only, and a run of the page's fragment alone (a
    shared control's move) registers no page: its page is then found by its hash in the page list.
    """
    page_hash = at._finished_page_script_hash  # no public API for either in 1.67
    info = at._registered_pages.get(page_hash, {})
    if "script_path" not in info:
        return next(page.path for page in page_list.PAGES if calc_hash(address_path(page)) == page_hash)
    return Path(str(info["script_path"])).resolve().relative_to(ROOT).as_posix()


def assert_page_ran(at: AppTest, page: PageInfo) -> None:
    assert not at.exception, f"{page.path} raised: {[e.value for e in at.exception]}"
    # app.py turns a page's exception into a friendly message: that is a failure too.
    assert PAGE_FAILED not in [e.value for e in at.error], f"{page.path} failed (see the log)"
    assert ran_page_path(at) == page.path


def move_shared(at: AppTest, kind: str, key: str, value: object) -> AppTest:
    """Move the sidebar's shared control ``key`` (an AppTest element kind: "slider", "radio"...) to
    ``value`` as a visitor does, and check that the page's fragment, or its settings part, reran alone
    (controls._moved): AppTest's element tree then holds what reran without the sidebar, which the
    browser keeps as it is. ``at.run()`` (nothing moved) runs the app whole again, sidebar included."""
    getattr(at.sidebar, kind)(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.sidebar, f"moving {key} ran the app whole, not the page alone"
    assert len(at.main), f"moving {key} drew nothing"
    return at


def open_url(url_path: str, query: dict[str, str | list[str]] | None = None, *, run: bool = True) -> AppTest:
    """A fresh AppTest session on the page at ``url_path`` ("" for the default page).

    A browser's deep link names the page by its URL path, and st.Page identifies a page by
    the hash of its url_path; AppTest has no public way to name a page that way before its
    first run (its switch_page goes by file name, which differs from the URL path here: see
    app.py), so the session is given that hash directly.
    """
    at = AppTest.from_file(str(APP), default_timeout=60)
    # A new AppTest scans every installed package's metadata for Streamlit components before its
    # first run: 0.23 s of a 0.3 s page run here, at each of the suite's hundreds of sessions. What is
    # installed does not change during the tests, so the sessions of a process share one scan
    # (a private attribute, as _page_hash below: 1.67 has no public way to give it).
    at._bidi_component_manager = installed_components()
    if url_path:
        at._page_hash = calc_hash(url_path)
    at.query_params.update(query or {})
    return at.run() if run else at


@functools.cache
def installed_components() -> BidiComponentManager:
    """The Streamlit components installed in this environment, scanned once per process as
    AppTest scans them (without watching their files)."""
    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def element_bytes(at: AppTest) -> int:
    """Serialised size of every element of the run: roughly what goes over the wire."""
    return sum(
        node.proto.ByteSize()
        for block in (at.main, at.sidebar)
        for node in block
        if not hasattr(node, "children") and getattr(node, "proto", None) is not None
    )
