"""Fixtures for the browser tests: Streamlit servers and a headless Chromium page.

Without Chromium (or Playwright) the browser tests skip, except where PE_REQUIRE_BROWSER=1
(CI), where a missing browser is a failure: a suite that silently skips proves nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.browser_harness import CHROMIUM, VIEWPORT, StreamlitServer, launch_chromium

#: Bound on every single wait in the tests (a cold first page load imports NumPy, Plotly...).
WAIT_MS = 30_000


def _browser_missing(reason: str) -> None:
    """Skip, or fail where the browser tests are required (PE_REQUIRE_BROWSER=1)."""
    if os.environ.get("PE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"PE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(f"no browser: {reason}")


# Module scope, not session: Playwright's sync API keeps an event loop running in this
# thread while it is open, and later test files call asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless Chromium for the whole session."""
    if not Path(CHROMIUM).exists():
        _browser_missing(f"{CHROMIUM} is absent (apt-get install chromium)")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        _browser_missing("the playwright package is not installed (pip install -r requirements-dev.txt)")
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        # Every context listens, however a test or fixture makes it (its own viewport, a phone's).
        open_context = chromium.new_context

        def new_context(**options: object) -> object:
            context = open_context(**options)
            context.on("request", lambda request: OUTSIDE_REQUESTS.append(request.url)
                       if leaves_the_machine(request.url) else None)
            return context

        chromium.new_context = new_context
        yield chromium
        chromium.close()


#: The address of every request a page of this module's browser made past this machine, since the
#: last test's end: a page asks its own server for everything, the tab's icon too (for a Material
#: icon Streamlit had the browser fetch it from fonts.gstatic.com: nothing on a school's offline
#: server, and a call out from a self-hosted app).
OUTSIDE_REQUESTS: list[str] = []


def leaves_the_machine(url: str) -> bool:
    """A request over the network (not data: or blob:) to a host other than this machine's loopback."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in ("127.0.0.1", "localhost")


@pytest.fixture(autouse=True)
def no_request_leaves_the_machine() -> Iterator[None]:
    """After every browser test: none of its pages asked anything of another machine."""
    OUTSIDE_REQUESTS.clear()
    yield
    assert not OUTSIDE_REQUESTS, f"requests that left the machine: {OUTSIDE_REQUESTS}"


# Session scope: one server per test process for every browser file (each test has a session
# of its own in it), instead of one per file, each warming every page at start-up.
@pytest.fixture(scope="session")
def app_server() -> Iterator[str]:
    """The app, shared by the tests that do not need a fresh server; yields its base URL."""
    with StreamlitServer("app.py") as server:
        yield server.url


@pytest.fixture
def fresh_server(browser) -> Iterator[str]:
    """A brand-new server for one test, so that the test's first request is the server's first."""
    with StreamlitServer("app.py") as server:
        yield server.url


@pytest.fixture(scope="module")
def tour(browser) -> Iterator[object]:
    """One page kept through a module's tests of every page in turn: the first page is opened by
    its address, the next ones from the app's navigation (test_accessibility.visit). A load
    compiles and runs the app's JavaScript again (about 7 s of Chromium's CPU here, a page
    reached from the navigation 2-3 s): a tour of thirteen pages by address cost more than any
    other part of the suite."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(WAIT_MS)
    yield context.new_page()
    context.close()


@pytest.fixture
def page(browser) -> Iterator[object]:
    """A new browser context (no cookies, no session) and page per test."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    yield page
    context.close()
