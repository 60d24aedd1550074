"""Start-up: compute what the first visitors will ask for before the server lets them in.

``streamlit run app.py`` finds the ``st.App`` in app.py and serves the app through it;
its lifespan (``lifespan`` below) runs after Streamlit's runtime has started and before
the server accepts a connection. It opens every page at the defaults, and every seed
preset on its page, as in-process sessions that run the real scripts: each page's
``st.cache_data`` computations and cached charts are then warm, with no second list of
what each page computes to keep in step with the pages. A class that opens the default
URL, or a preset a teacher shares, meets warm caches from its first run.

Then the start-up heap (modules, warm caches) is frozen out of the garbage collector
(``gc.freeze``): with Streamlit's per-run ``gc.collect(2)`` turned off
(``runner.postScriptGC`` in .streamlit/config.toml), Python's own full collections, rarer
but still needed for cycles, no longer walk those long-lived objects each time.

NumPy's BLAS (OpenBLAS) computes in one thread: a server runs many small products for many
sessions, two runs at a time (explorer.ui.navigation.RUN_SLOTS), and OpenBLAS's other threads,
woken for each product, spin for about 0.1 s after it: a matrix-vector product of 6000 x 300
cost 13.5 ms of CPU with the default threads, 0.5-1.7 ms in one (the same bits), and
Similarity's cold run about 50 ms more (threadpoolctl sets it at run time, whoever imported
NumPy first).

And glibc's malloc is held to two arenas, as the Dockerfile's MALLOC_ARENA_MAX does, so
that a plain ``streamlit run app.py`` behaves the same: by default every script thread of
a burst of sessions may get an arena of its own, and memory freed there stays with it
(100 sessions with their own settings: 181 MB above the start after they left, 84 MB with
two arenas; benchmarks/README.md, "A class on one server").
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import Runtime
from streamlit.runtime.session_manager import SessionClient
from threadpoolctl import threadpool_info, threadpool_limits

from explorer import page_list
from explorer.presets import PRESETS

_LOG = logging.getLogger("explorer.ui.startup")
#: Bound on one warm-up visit: a visit still running then is logged and left behind.
VISIT_TIMEOUT_S = 60.0
_RERUNNING = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
#: mallopt's parameter number for the arena limit (glibc's malloc.h) and the limit.
_M_ARENA_MAX, MALLOC_ARENAS = -8, 2


@dataclass(frozen=True)
class Visit:
    """One page opened with one query string, as a visitor's URL opens it."""

    page: str  # URL path, "" for the default page
    query: str


def start_up_visits() -> list[Visit]:
    """Every page at the defaults, then every seed preset on the page that draws it."""
    visits = [Visit("" if info is page_list.HOME else info.url_path, "") for info in page_list.PAGES]
    visits += [Visit(preset.page, f"preset={key}") for key, preset in PRESETS.items()]
    return visits


class _ClientContext:
    """What a session may ask of its client's connection: a visit has no headers, cookies or address."""

    headers: tuple[tuple[str, str], ...] = ()
    cookies: Mapping[str, str] = {}
    remote_ip: str | None = None


class _VisitClient(SessionClient):
    """A session's client that keeps nothing but the end of the run (and whether it failed)."""

    def __init__(self) -> None:
        self.finished = asyncio.Event()
        self.failures: list[str] = []

    def write_forward_msg(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.new_element.WhichOneof("type") == "exception":
            self.failures.append(msg.delta.new_element.exception.message)
        elif kind == "script_finished" and msg.script_finished != _RERUNNING:
            self.finished.set()

    @property
    def client_context(self) -> _ClientContext:
        return _ClientContext()


async def visit(runtime: Runtime, page: str, query: str, timeout_s: float = VISIT_TIMEOUT_S) -> list[str]:
    """Run one page as a fresh session would and close the session; the exceptions it showed."""
    client = _VisitClient()
    session_id = runtime.connect_session(client=client, user_info={"is_logged_in": False})
    try:
        back = BackMsg()
        back.rerun_script.query_string = query
        back.rerun_script.page_name = page
        runtime.handle_backmsg(session_id, back)
        await asyncio.wait_for(client.finished.wait(), timeout_s)
    finally:
        runtime.close_session(session_id)
    return client.failures


async def warm_up(runtime: Runtime, visits: Iterable[Visit]) -> None:
    """Make every visit in turn; a failed or slow one is logged, and start-up goes on."""
    began = time.perf_counter()
    for one in visits:
        try:
            failures = await visit(runtime, one.page, one.query)
        except TimeoutError:
            failures = [f"no end of run within {VISIT_TIMEOUT_S:g} s"]
        for failure in failures:
            _LOG.warning("start-up visit /%s?%s: %s", one.page, one.query, failure)
    _LOG.info("caches warmed in %.1f s", time.perf_counter() - began)


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for the threads started from now on; False where the C
    library is not glibc (musl, macOS), which has no such setting."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))


def single_threaded_blas() -> int:
    """Hold NumPy's BLAS to one thread for the rest of the process; the largest thread count
    a BLAS library keeps afterwards (1)."""
    threadpool_limits(limits=1, user_api="blas")
    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """st.App's lifespan: BLAS in one thread, cap malloc's arenas, warm the caches, freeze the
    start-up heap, then serve."""
    single_threaded_blas()
    limit_malloc_arenas()
    await warm_up(Runtime.instance(), start_up_visits())
    gc.collect()
    gc.freeze()
    yield
