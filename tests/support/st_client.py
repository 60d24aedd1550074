"""A small client of Streamlit's own WebSocket protocol, shared by the load test
(benchmarks/load_test.py) and the deployment and security tests.

It says what a browser tab says on ``/_stcore/stream`` (subprotocol "streamlit"): BackMsg
protobufs up, ForwardMsg protobufs down. A ``rerun_script`` BackMsg (a ClientState with
the query string, the page and the widget values) starts a run; the server answers with
``new_session``, deltas (the elements), ``page_info_changed`` (the URL the app writes) and
finally ``script_finished``. A run that reruns itself (a preset, st.switch_page) first
finishes with FINISHED_EARLY_FOR_RERUN and goes on; the run is over at the first other
status. Nothing is drawn: the client only records what a test or a benchmark asks about.

Like a browser tab, it keeps Streamlit's message cache (the frontend's ForwardMessageCache): an
element of 10 kB or more (a chart) arrives with a hash and is kept; each rerun request lists the
hashes kept, and the server sends a short reference in place of an element the tab already holds.
An entry leaves the cache when ``maxCachedMessageAge`` runs (2, from new_session) that could have
redrawn it (a whole run, or a run of the fragment it was drawn in) went by without it. A warm
slider step in a browser re-sends its charts this way, and so does this client.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.message import Message
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.Exception_pb2 import Exception as ExceptionProto
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.state.common import user_key_from_element_id

# The Streamlit server launcher of the browser tests, so that there is one way to start a server.
from .browser_harness import StreamlitServer, free_port

__all__ = ["RunResult", "StreamlitServer", "StreamlitSession", "fetch_page", "free_port", "open_once"]

#: Bound on one run (connect included); a cold first run imports NumPy, Plotly, pandas.
RUN_TIMEOUT_S = 60.0
_RERUNNING = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
#: A whole run, or an st.fragment's run, that reached its end.
_SUCCESS = (
    ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY,
    ForwardMsg.ScriptFinishedStatus.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
)


@dataclass
class RunResult:
    """What one run sent back, as far as the tests and the load test look at it."""

    seconds: float = 0.0
    #: The name of the final script_finished status, or None if the run never finished.
    status: str | None = None
    bytes_received: int = 0
    messages: int = 0
    #: Element id of every keyed widget or chart drawn, by its user key (ids end in "-<key>").
    widget_ids: dict[str, str] = field(default_factory=dict)
    #: The st.fragment each keyed element was drawn in, by its user key (absent: not in a fragment).
    fragment_ids: dict[str, str] = field(default_factory=dict)
    #: The type of every element drawn ("plotly_chart", "slider"...), in order.
    element_types: list[str] = field(default_factory=list)
    #: The value of every keyed slider drawn, by its user key (as the browser shows it).
    slider_values: dict[str, list[float]] = field(default_factory=dict)
    #: The value of every keyed toggle drawn, by its user key, when the run sends it (the browser then shows
    #: it), or None when the run leaves the toggle as the browser shows it.
    toggle_values: dict[str, bool | None] = field(default_factory=dict)
    #: Texts of st.error / st.warning / st.info / st.success elements.
    alerts: list[str] = field(default_factory=list)
    #: Exception elements: what Streamlit shows for an uncaught error.
    exceptions: list[ExceptionProto] = field(default_factory=list)
    #: The script hash of the page the run drew, and the query string the app left in the URL.
    page_script_hash: str = ""
    query_string: str = ""
    #: The URL path st.navigation gives the page the run drew ("" for the default page), and
    #: whether the server answered "page not found" (the browser's dialog).
    page_url_path: str = ""
    page_not_found: bool = False
    #: The text of every st.code element drawn (a Share panel's link).
    code_texts: list[str] = field(default_factory=list)
    #: The st.fragment ids whose ``run_every`` timer the run started in the browser (auto_rerun).
    timers: list[str] = field(default_factory=list)
    #: Every ForwardMsg payload, only when the session was asked to keep them.
    payloads: list[bytes] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        """The script ran to its end (an uncaught exception in it also ends a run "successfully")."""
        return self.status in {ForwardMsg.ScriptFinishedStatus.Name(status) for status in _SUCCESS}


@dataclass
class _CachedMessage:
    """A message the tab keeps in its message cache."""

    payload: bytes
    #: The session's run count when the message last arrived or was referred to.
    last_used: int
    #: The st.fragment it was drawn in ("" for none).
    fragment_id: str


@dataclass
class PageResponse:
    """What a first HTTP GET of the page brought back, as a browser keeps it."""

    #: The cookies it set, by name (a sticky proxy's among them).
    cookies: dict[str, str]
    #: The response's headers (case-insensitive, as ``Message.get`` reads them).
    headers: Message


def fetch_page(base_url: str, cookies: Mapping[str, str] | None = None, timeout_s: float = 10.0) -> PageResponse:
    """GET the app's page as a browser does before it opens the WebSocket (blocking)."""
    request = urllib.request.Request(f"{base_url.rstrip('/')}/")
    if cookies:
        request.add_header("Cookie", cookie_header(cookies))
    # No proxy from the environment: these requests are for loopback servers only.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=timeout_s) as response:
        response.read()
        jar: SimpleCookie = SimpleCookie()
        for set_cookie in response.headers.get_all("Set-Cookie") or []:
            jar.load(set_cookie)
        return PageResponse({name: morsel.value for name, morsel in jar.items()}, response.headers)


def cookie_header(cookies: Mapping[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


class StreamlitSession:
    """One browser tab's session, over one WebSocket (use ``async with``).

    ``origin`` is the Origin header: by default the server's own address, as a browser on
    that page sends it; None sends none. ``cookies`` go with the WebSocket's upgrade
    request; with ``fetch_cookies`` the tab first loads the page, as a browser does, and
    adds the cookies that response set (a sticky proxy's cookie, Streamlit's XSRF cookie).
    """

    def __init__(
        self, base_url: str, *, origin: str | None = "", keep_payloads: bool = False, timeout_s: float = RUN_TIMEOUT_S,
        cookies: Mapping[str, str] | None = None, fetch_cookies: bool = False,
    ) -> None:
        parts = urlsplit(base_url)
        self.base_url = base_url
        self.ws_url = f"ws://{parts.netloc}{parts.path.rstrip('/')}/_stcore/stream"
        self.origin = f"{parts.scheme}://{parts.netloc}" if origin == "" else origin
        self.keep_payloads = keep_payloads
        self.timeout_s = timeout_s
        self.cookies: dict[str, str] = dict(cookies or {})
        self.fetch_cookies = fetch_cookies
        #: The page's response (with fetch_cookies), and the WebSocket upgrade's response headers.
        self.page: PageResponse | None = None
        self.handshake_headers: Mapping[str, str] = {}
        self._ws: websockets.ClientConnection | None = None
        self._page_script_hash = ""
        self._query_string = ""
        # The widgets the tab shows: a fragment's run re-sends only its own, and the browser keeps the others.
        self._shown_widget_ids: dict[str, str] = {}
        self._shown_fragment_ids: dict[str, str] = {}
        # The browser's message cache, by the messages' hashes.
        self._message_cache: dict[str, _CachedMessage] = {}
        self._run_count = 0
        self._max_message_age = 2

    async def connect(self) -> None:
        """Open the WebSocket; raises websockets.InvalidStatus if the server refuses it."""
        if self.fetch_cookies:
            self.page = await asyncio.to_thread(fetch_page, self.base_url, self.cookies, self.timeout_s)
            self.cookies |= self.page.cookies
        self._ws = await asyncio.wait_for(
            websockets.connect(
                self.ws_url, subprotocols=[websockets.Subprotocol("streamlit")], origin=self.origin,
                max_size=None, open_timeout=self.timeout_s, ping_interval=None,
                additional_headers={"Cookie": cookie_header(self.cookies)} if self.cookies else None,
            ),
            self.timeout_s,
        )
        self.handshake_headers = self._ws.response.headers

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    async def __aenter__(self) -> StreamlitSession:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open_page(self, page: str = "", query_string: str = "") -> RunResult:
        """The first run of a tab opened on ``/<page>?<query_string>`` ("" is the default page)."""
        back = BackMsg()
        back.rerun_script.query_string = query_string
        back.rerun_script.page_name = page
        back.rerun_script.cached_message_hashes.extend(self._message_cache)
        self._query_string = query_string  # the tab's URL, until the app writes another
        return await self._run(back)

    async def set_choice(self, key: str, label: str, known: RunResult) -> RunResult:
        """Choose the option shown as ``label`` in the radio or select box with user key ``key``, as a click does."""
        return await self._move(key, known, lambda state: setattr(state, "string_value", label))

    async def click(self, key: str, known: RunResult) -> RunResult:
        """Click the button with user key ``key``."""
        return await self._move(key, known, lambda state: setattr(state, "trigger_value", True))

    async def set_slider(self, key: str, value: float, known: RunResult) -> RunResult:
        """Move the slider with user key ``key`` (drawn in run ``known``, or still shown from an
        earlier run when ``known`` was a fragment's) to ``value``, as a drag does: a slider inside an
        st.fragment reruns only that fragment, as the browser asks."""
        return await self._move(key, known, lambda state: state.double_array_value.data.append(float(value)))

    async def _move(self, key: str, known: RunResult, set_value: Callable[[WidgetState], None]) -> RunResult:
        drawn_earlier = key not in known.widget_ids  # not re-sent by a fragment's run, still shown by the tab
        back = self._rerun_request()
        fragment_ids = self._shown_fragment_ids if drawn_earlier else known.fragment_ids
        back.rerun_script.fragment_id = fragment_ids.get(key, "")
        state = back.rerun_script.widget_states.widgets.add()
        state.id = self._shown_widget_ids[key] if drawn_earlier else known.widget_ids[key]
        set_value(state)
        return await self._run(back)

    async def rerun(self) -> RunResult:
        """A whole run of the view the tab shows, with no widget's value (as a browser's request that
        left before the tab had mounted the last run's widgets, or its Rerun)."""
        return await self._run(self._rerun_request())

    async def fire_timer(self, fragment_id: str, shown: RunResult | None = None) -> RunResult:
        """The ``run_every`` timer of fragment ``fragment_id`` (in ``RunResult.timers``) fires: its rerun,
        as the browser sends it, naming the page and the query the tab shows, or those of run ``shown``
        (a request that left the tab before it learned of the runs after that one)."""
        back = self._rerun_request(shown)
        back.rerun_script.fragment_id = fragment_id
        back.rerun_script.is_auto_rerun = True
        return await self._run(back)

    def _rerun_request(self, shown: RunResult | None = None) -> BackMsg:
        """A rerun request as the tab sends it: the page and query it shows (or those of run ``shown``)
        and the hashes of the messages it keeps."""
        back = BackMsg()
        back.rerun_script.query_string = self._query_string if shown is None else shown.query_string
        back.rerun_script.page_script_hash = self._page_script_hash if shown is None else shown.page_script_hash
        back.rerun_script.cached_message_hashes.extend(self._message_cache)
        return back

    async def wait_closed(self, timeout_s: float) -> bool:
        """True if the server closes the WebSocket within ``timeout_s`` (reading what still comes)."""
        assert self._ws is not None, "not connected"
        deadline = time.monotonic() + timeout_s
        try:
            while (left := deadline - time.monotonic()) > 0:
                await asyncio.wait_for(self._ws.recv(), left)
        except websockets.ConnectionClosed:
            return True
        except TimeoutError:
            return False
        return False

    async def _run(self, back: BackMsg) -> RunResult:
        assert self._ws is not None, "not connected"
        result = RunResult()
        start = time.perf_counter()
        await self._ws.send(back.SerializeToString())
        deadline = time.monotonic() + self.timeout_s
        while True:
            payload = await asyncio.wait_for(self._ws.recv(decode=False), max(deadline - time.monotonic(), 0.001))
            result.messages += 1
            result.bytes_received += len(payload)
            received = ForwardMsg.FromString(payload)
            message = self._through_cache(payload, received)
            if self.keep_payloads:  # a reference as the message it names, as the tab reads it
                result.payloads.append(payload if message is received else message.SerializeToString())
            kind = message.WhichOneof("type")
            if kind == "new_session":
                self._max_message_age = message.new_session.config.max_cached_message_age
            elif kind == "navigation":  # st.navigation names the page it runs (new_session names app.py)
                self._page_script_hash = message.navigation.page_script_hash
                result.page_url_path = next(
                    ("" if page.is_default else page.url_pathname for page in message.navigation.app_pages
                     if page.page_script_hash == self._page_script_hash), "")
            elif kind == "auto_rerun":
                result.timers.append(message.auto_rerun.fragment_id)
            elif kind == "page_not_found":
                result.page_not_found = True
            elif kind == "page_info_changed":
                self._query_string = message.page_info_changed.query_string
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                _record_element(message.delta.new_element, result, message.delta.fragment_id)
            elif kind == "script_finished" and message.script_finished != _RERUNNING:
                result.status = ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)
                self._expire_cached_messages(message.metadata.run.fragment_ids)
                break
        result.seconds = time.perf_counter() - start
        result.page_script_hash = self._page_script_hash
        result.query_string = self._query_string
        if result.status != "FINISHED_FRAGMENT_RUN_SUCCESSFULLY":
            self._shown_widget_ids.clear()
            self._shown_fragment_ids.clear()
        self._shown_widget_ids |= result.widget_ids
        self._shown_fragment_ids |= result.fragment_ids
        return result

    def _through_cache(self, payload: bytes, message: ForwardMsg) -> ForwardMsg:
        """The message as the tab reads it: a reference is the cached message it names (with the
        reference's own place on the page), a cacheable message (``payload``) is kept."""
        if message.WhichOneof("type") == "ref_hash":
            entry = self._message_cache[message.ref_hash]  # a miss is the server's error, as in the browser
            entry.last_used = self._run_count
            cached = ForwardMsg.FromString(entry.payload)
            cached.metadata.CopyFrom(message.metadata)
            return cached
        if message.metadata.cacheable and message.hash and message.hash not in self._message_cache:
            self._message_cache[message.hash] = _CachedMessage(payload, self._run_count, message.delta.fragment_id)
        return message

    def _expire_cached_messages(self, fragment_ids: Sequence[str]) -> None:
        """After a run, forget what the last ``max_cached_message_age`` runs that could have drawn it did not use."""
        self._run_count += 1
        for message_hash, entry in list(self._message_cache.items()):
            could_redraw = not fragment_ids or (entry.fragment_id and entry.fragment_id in fragment_ids)
            if could_redraw and self._run_count - entry.last_used > self._max_message_age:
                del self._message_cache[message_hash]


def _record_element(element: Element, result: RunResult, fragment_id: str) -> None:
    kind = element.WhichOneof("type")
    result.element_types.append(kind or "")
    if kind == "alert":
        result.alerts.append(element.alert.body)
    elif kind == "code":
        result.code_texts.append(element.code.code_text)
    elif kind == "exception":
        exception = ExceptionProto()
        exception.CopyFrom(element.exception)
        result.exceptions.append(exception)
    else:
        widget_id = getattr(getattr(element, kind), "id", "") if kind else ""
        user_key = user_key_from_element_id(widget_id) if isinstance(widget_id, str) and widget_id else None
        if user_key is not None:
            result.widget_ids[user_key] = widget_id
            if kind == "slider":
                result.slider_values[user_key] = list(element.slider.value or element.slider.default)
            elif kind == "checkbox":
                result.toggle_values[user_key] = element.checkbox.value if element.checkbox.set_value else None
            if fragment_id:
                result.fragment_ids[user_key] = fragment_id


async def open_once(base_url: str, page: str = "", query_string: str = "", **session_options) -> RunResult:
    """Open one tab on ``page``, run it once, close it."""
    async with StreamlitSession(base_url, **session_options) as session:
        return await session.open_page(page, query_string)
