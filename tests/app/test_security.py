"""The hardening of PRODUCT.md "Reliability and security", checked against a real server.

- .streamlit/config.toml says what README "Deployment" promises.
- A WebSocket from a foreign Origin (cross-site WebSocket hijacking) is refused; the
  app's own origin is accepted. An upload without the XSRF token is refused.
- A forced error never puts a traceback, an exception type or its message on the page:
  neither inside a page (explorer.ui.navigation.run_page) nor anywhere in a script (the hardened
  client.showErrorDetails="none"), read from what the server actually sends.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import shutil
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets
from streamlit.testing.v1 import AppTest
from support.st_client import StreamlitServer, StreamlitSession, open_once

from explorer.ui.navigation import PAGE_FAILED

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".streamlit" / "config.toml"
#: A detail that must stay on the server: it is in the error's message and in its traceback.
SECRET = "secret-detail-7f3a /srv/internal/path.py"
LEAKS = (b"Traceback", b"RuntimeError", b"secret-detail-7f3a", b"/srv/internal/path.py", b'File "')


def test_config_is_hardened() -> None:
    config = tomllib.loads(CONFIG.read_text())
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"
    assert config["client"]["toolbarMode"] == "viewer"
    server = config["server"]
    assert server["enableXsrfProtection"] is True
    assert server["enableCORS"] is True
    assert server["enableStaticServing"] is False
    assert server["headless"] is True
    assert server["runOnSave"] is False
    assert 0 < server["maxUploadSize"] <= 10, "MB: uploads are small matrices"
    assert "corsAllowedOrigins" not in server, "no foreign origin is allowed in"


@pytest.fixture(scope="module")
def app_server() -> Iterator[str]:
    """The app with the project's config (the server runs from the repository root)."""
    with StreamlitServer("app.py") as server:
        yield server.url


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1.evil.example"])
def test_websocket_from_a_foreign_origin_is_refused(app_server: str, origin: str) -> None:
    async def connect() -> None:
        async with StreamlitSession(app_server, origin=origin, timeout_s=20) as tab:
            await tab.open_page()

    with pytest.raises(websockets.InvalidStatus) as refused:
        asyncio.run(connect())
    assert refused.value.response.status_code == 403


def test_websocket_from_the_apps_own_origin_is_accepted(app_server: str) -> None:
    run = asyncio.run(open_once(app_server, "matrix", "d=64"))  # Origin: the server's own address
    assert run.finished and not run.exceptions and PAGE_FAILED not in run.alerts, run


def test_upload_without_the_xsrf_token_is_refused(app_server: str) -> None:
    url = f"{app_server}/_stcore/upload_file/no-such-session/file-1"

    def put(headers: dict[str, str], opener: urllib.request.OpenerDirector) -> int:
        request = urllib.request.Request(url, data=b"\x93NUMPY", method="PUT", headers=headers)
        try:
            with opener.open(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    cookies = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
    assert put({}, browser) == 403
    # A page of the app itself holds the XSRF cookie and sends it back as the token: that
    # passes the XSRF check (and then fails on the made-up session), so the 403 above was the check.
    browser.open(f"{app_server}/_stcore/health", timeout=10).read()
    token = next(cookie.value for cookie in cookies if cookie.name == "_streamlit_xsrf")
    assert put({"X-Xsrftoken": token}, browser) == 400


def _page_that_raises() -> None:
    """Run by AppTest as a whole script: app.py's way of running a page, with a page that fails."""
    from explorer.ui import navigation

    class FailingPage:
        title = "Failing page"
        url_path = "failing"

        def run(self) -> None:
            raise RuntimeError("secret-detail-7f3a /srv/internal/path.py")

    navigation.run_page(FailingPage())


def test_a_failing_page_shows_the_friendly_message_only() -> None:
    at = AppTest.from_function(_page_that_raises, default_timeout=30).run()
    assert not at.exception
    assert [error.value for error in at.error] == [PAGE_FAILED]
    sent = b"".join(node.proto.SerializeToString() for node in at.main if getattr(node, "proto", None) is not None)
    assert not [leak for leak in LEAKS if leak in sent]


@pytest.fixture(scope="module")
def raising_app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A one-line app that raises outside any page, served with the project's config."""
    folder = tmp_path_factory.mktemp("raising_app")
    (folder / ".streamlit").mkdir()
    shutil.copy(CONFIG, folder / ".streamlit" / "config.toml")
    script = f"import streamlit as st\n\nst.title('Before the error')\nraise RuntimeError({SECRET!r})\n"
    (folder / "app.py").write_text(script)
    with StreamlitServer(folder / "app.py", cwd=folder) as server:
        yield server.url


def test_an_uncaught_error_reaches_the_browser_without_details(raising_app_server: str) -> None:
    run = asyncio.run(open_once(raising_app_server, keep_payloads=True))
    assert run.status is not None, "the run never finished"
    # Streamlit shows that something failed, and nothing of what or where.
    assert len(run.exceptions) == 1, run.exceptions
    (shown,) = run.exceptions
    assert not shown.stack_trace and not shown.type and SECRET not in shown.message, shown
    leaked = [leak for leak in LEAKS if any(leak in payload for payload in run.payloads)]
    assert not leaked, f"the browser received {leaked}"
