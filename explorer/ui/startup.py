"""Start-up: compute what the first visitors will ask for before the server lets them in.

``streamlit run app.py`` finds the ``st.App`` in app.py and serves the app through it;
its lifespan (``lifespan`` below) runs after Streamlit's runtime has started and before
the server accepts a connection. It opens every page at the defaults, and every seed
preset on its page, as in-process sessions that run the real scripts: each page's
``st.cache_data`` computations and cached charts are then warm, with no second list of
what each page computes to keep in step with the pages. A class that opens the default
URL, or a preset a teacher shares, meets warm caches from its first run. One more session stays
connected, running nothing, for as long as the server runs: Streamlit forgets the compiled pages
whenever its last session closes, and a class after a quiet spell would compile them all again.

Then the start-up heap (modules, warm caches) is frozen out of the garbage collector
(``gc.freeze``): with Streamlit's per-run ``gc.collect(2)`` turned off
(``runner.postScriptGC`` in .streamlit/config.toml), Python's own full collections, rarer
but still needed for cycles, no longer walk those long-lived objects each time. Those full
collections are also made ten times rarer (``hold_full_collections``), and one is made after each
burst of runs instead, when the class is quiet: a class's sessions grow the heap they walk.

NumPy's BLAS (OpenBLAS) computes in one thread: a server runs many small products for many
sessions, two runs at a time (explorer.ui.navigation.RUN_SLOTS), and OpenBLAS's other threads,
woken for each product, spin for about 0.1 s after it: a matrix-vector product of 6000 x 300
cost 13.5 ms of CPU with the default threads, 0.5-1.7 ms in one (the same bits), and
Similarity's cold run about 50 ms more (threadpoolctl sets it at run time, whoever imported
NumPy first).

And glibc's malloc is tuned as the Dockerfile's MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_ do,
so that a plain ``streamlit run app.py`` behaves the same. Two arenas: by default every script
thread of a burst of sessions may get an arena of its own, and memory freed there stays with it
(100 sessions with their own settings: 181 MB above the start after they left, 84 MB with two
arenas). Arrays of 4 MiB and more mapped on their own and unmapped when freed: by default glibc
raises that threshold to the largest block freed so far (up to 32 MiB), after which a page's
matrices of a few megabytes are carved from the heap, whose holes it keeps (50 sessions with
their own settings: a peak 177 MB above the start, 109 MB with the threshold held; a smaller
threshold pays page faults on every array: at 256 KiB the mean cold run cost 55 ms of CPU
instead of 43; benchmarks/JOURNAL.md, "A class on one server" and "A class on settings of its own").
The free space at the top of a heap is kept up to the same 4 MiB: with the mmap threshold held,
glibc otherwise holds this at 128 KiB and gives back the top of the heap on nearly every free, so
that a computation's blocks of a few hundred KiB, freed and made again, fault their pages in anew
each time (Home's cold computation at the largest settings 445 -> 336 ms, the Scorecard's 676 ->
393, with 8 MiB; 4 MiB timed alike within this machine's noise, and a class of 50 with settings of
their own peaked at +68 and +71 MB with it, +89 and +92 with 8 MiB, +74 and +79 before;
benchmarks/JOURNAL.md, "2026-11-29, 04:05-05:05"). And after each burst of runs the heap's free
pages go back to the system (``release_free_heap``: malloc returns by itself only the free space at
the top of the heap, beyond that 4 MiB): 50 sessions with their own settings left 272 MB 5 s after
they closed without it, 249-253 with it.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
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
from explorer.ui import navigation

_LOG = logging.getLogger("explorer.ui.startup")
#: Bound on one warm-up visit: a visit still running then is logged and left behind.
VISIT_TIMEOUT_S = 60.0
_RERUNNING = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
#: mallopt's parameter numbers (glibc's malloc.h) for the arena limit, the mmap threshold and the
#: trim threshold.
_M_ARENA_MAX, _M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD = -8, -3, -1
#: malloc's arenas, and the size from which a block is mapped on its own (returned to the
#: system when freed); setting it also keeps glibc from raising it.
MALLOC_ARENAS, MMAP_THRESHOLD_BYTES = 2, 4 * 1024 * 1024
#: Free space at the top of a heap that malloc keeps for the next blocks instead of giving it back.
TRIM_THRESHOLD_BYTES = MMAP_THRESHOLD_BYTES
#: Seconds without a finished run after which the heap's free pages go back to the system.
HEAP_RELEASE_INTERVAL_S = 1.0
#: Python considers a full collection (generation 2) after this many collections of generation 1;
#: its default is 10.
FULL_COLLECTION_AFTER = 100


@dataclass(frozen=True)
class Visit:
    """One page opened with one query string, as a visitor's URL opens it."""

    page: str  # URL path, "" for the default page
    query: str


def start_up_visits() -> list[Visit]:
    """Every page at the defaults, then every seed preset on the page that draws it."""
    visits = [Visit(page_list.address_path(info), "") for info in page_list.PAGES]
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


@functools.cache  # find_library runs `ldconfig -p` (~4 ms), and the release runs in the event loop
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has mallopt and malloc_trim), else None (musl, macOS)."""
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    return libc if libc is not None and hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def tune_malloc(
    arenas: int = MALLOC_ARENAS, mmap_threshold: int = MMAP_THRESHOLD_BYTES, trim_threshold: int = TRIM_THRESHOLD_BYTES
) -> bool:
    """Cap glibc's malloc arenas for the threads started from now on, hold its mmap threshold, and
    keep up to ``trim_threshold`` bytes free at the top of each heap; False where the C library is
    not glibc, which has no such settings."""
    libc = _glibc()
    if libc is None:
        return False
    return all(libc.mallopt(parameter, value) for parameter, value in (
        (_M_ARENA_MAX, arenas), (_M_MMAP_THRESHOLD, mmap_threshold), (_M_TRIM_THRESHOLD, trim_threshold)))


def release_free_heap() -> bool:
    """Give the heap's free pages back to the system (glibc's malloc_trim): malloc returns only
    the free space at the top of the heap by itself, and keeps the pages of the holes between
    live blocks that a run's freed arrays leave. A few milliseconds at most; False where the C
    library is not glibc, or nothing was released."""
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0))


async def release_free_heap_when_idle(interval_s: float = HEAP_RELEASE_INTERVAL_S) -> None:
    """A full garbage collection, then ``release_free_heap``, once after each burst of runs, when
    ``interval_s`` seconds have passed without a run finishing: while runs follow each other the
    pages given back would be faulted in again by the next run (Rotary's warm rerun 15-16 ms of CPU
    without releasing, 19 with it every second, rerun_cost.py), and the collection, which holds the
    GIL, would hold up every run in flight (``hold_full_collections``)."""
    seen = navigation.RUN_SLOTS.finished()
    released = seen
    while True:
        await asyncio.sleep(interval_s)
        now = navigation.RUN_SLOTS.finished()
        if now == seen and now != released:
            gc.collect()
            release_free_heap()
            released = now
        seen = now


def hold_full_collections() -> tuple[int, int, int]:
    """Python's own full collections, ten times rarer (``FULL_COLLECTION_AFTER``); the thresholds.

    A full collection walks every object not frozen, the sessions' included, with the GIL held, and
    Python makes one whenever that heap has grown by a quarter: seven in a class of 200 on settings
    of their own, 60-85 ms each, with every run in flight held up (benchmarks/JOURNAL.md, "2026-12-07,
    02:51"). Those collections now wait for the class's quiet (``release_free_heap_when_idle``), and
    still happen, rarer, in a burst that never pauses.
    """
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_AFTER)
    return gc.get_threshold()


def single_threaded_blas() -> int:
    """Hold NumPy's BLAS to one thread for the rest of the process; the largest thread count
    a BLAS library keeps afterwards (1)."""
    threadpool_limits(limits=1, user_api="blas")
    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)


@asynccontextmanager
async def scripts_kept_compiled(runtime: Runtime) -> AsyncIterator[str]:
    """One session, connected for as long as the block runs, that never runs a script (its id).

    Streamlit empties its cache of compiled scripts whenever its last session closes ("to avoid stale
    cached scripts"), so that after every quiet spell each page's first visitor compiled app.py and the
    page again: 250-400 ms of CPU for the sixteen pages, queued before a class's first runs. With a
    session always connected the pages stay compiled from start-up's visits on. Nothing is stale: the
    project's server watches no file (``server.fileWatcherType = "none"``), and where a developer's does,
    Streamlit empties the cache on every change of a file whatever the sessions."""
    session_id = runtime.connect_session(client=_VisitClient(), user_info={"is_logged_in": False})
    try:
        yield session_id
    finally:
        runtime.close_session(session_id)


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """st.App's lifespan: BLAS in one thread, tune malloc, keep the scripts compiled, warm the caches,
    freeze the start-up heap, hold off full collections, then serve, collecting the garbage and giving
    the heap's free pages back after each burst of runs."""
    single_threaded_blas()
    tune_malloc()
    runtime = Runtime.instance()
    async with scripts_kept_compiled(runtime):
        await warm_up(runtime, start_up_visits())
        gc.collect()
        gc.freeze()
        hold_full_collections()
        releasing = asyncio.create_task(release_free_heap_when_idle())
        try:
            yield
        finally:
            releasing.cancel()
