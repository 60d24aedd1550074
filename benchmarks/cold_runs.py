"""Server CPU of a cold run, page by page: what one student with settings of their own costs.

Run from the repository root:

    python -m benchmarks.cold_runs                 # every page, 8 fresh settings each
    python -m benchmarks.cold_runs --pages waves similarity --settings 10

A class exploring on its own (benchmarks/load_test.py --scenarios own) asks every page for
settings nobody asked for before, so every run is a cold one: the page's computations,
figures and messages built from nothing. This measures that cost one run at a time, so that
each is attributed to its page: for each page, ``--settings`` sessions, each opening the page
at a (d, L) used nowhere before in the run (d = 256 + 2 (i mod 50), L = 2048 + i, as the
load test's own scenario), then moving L twice to new values (cold too), while this script
reads the server process's CPU time before and after each run (server_process.cpu_clock: in
nanoseconds where the server can have a cpuacct cgroup of its own, else /proc's 10 ms ticks; both
count the script threads that ended; a figure is a mean over the runs). The
trivial app (benchmarks/baseline_app.py, the project's config) is measured the same way in the
same run: its first run and its slider move.

The load test's own class is one server core shared by 100 sessions of three cold runs
each: its p95 first run (budget 10 s) is about the sum of these costs over the class, so the
mean cold run over the pages says whether it can be met (about 30 ms a run for 10 s). Results
go to benchmarks/results/cold_runs.json.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.baseline_app import trivial_server
from benchmarks.load_test import OWN_D_COUNT, OWN_D_FIRST, OWN_L_FIRST, OWN_MOVE_L_FIRST
from benchmarks.server_process import cpu_clock, run_failure
from explorer import page_list
from tests.support.st_client import StreamlitServer, StreamlitSession

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "benchmarks" / "results" / "cold_runs.json"
MOVES = 2


async def cold_session_ms(
    base_url: str, clock: Callable[[], float], page: str, query: str, key: str, values: list[int],
) -> list[float]:
    """Server CPU (ms) of one session's first run and of each move of slider ``key`` to ``values``."""
    costs: list[float] = []
    async with StreamlitSession(base_url) as session:
        before = clock()
        known = await session.open_page(page, query)
        costs.append(1000 * (clock() - before))
        if (failure := run_failure(known)) is not None:
            raise RuntimeError(f"{page or 'home'}?{query}: first run: {failure}")
        for value in values:
            before = clock()
            known = await session.set_slider(key, value, known)
            costs.append(1000 * (clock() - before))
            if (failure := run_failure(known)) is not None:
                raise RuntimeError(f"{page or 'home'}?{query}: move to {key}={value}: {failure}")
    return costs


def summary(costs: list[list[float]]) -> dict[str, float]:
    """Means (on /proc's clock a run's CPU is read in 10 ms ticks: a median would round to a tick)."""
    firsts = [c[0] for c in costs]
    moves = [m for c in costs for m in c[1:]]
    return {
        "first_ms": round(statistics.fmean(firsts), 1),
        "move_ms": round(statistics.fmean(moves), 1) if moves else None,
        "mean_ms": round(statistics.fmean([x for c in costs for x in c]), 1),
    }


async def measure_app(
    base_url: str, clock: Callable[[], float], pages: list[page_list.PageInfo], settings: int,
) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    index = 0
    for page in pages:
        costs = []
        for _ in range(settings):
            query = urlencode({"d": OWN_D_FIRST + 2 * (index % OWN_D_COUNT), "L": OWN_L_FIRST + index})
            moves = [OWN_MOVE_L_FIRST + MOVES * index + k for k in range(MOVES)]
            costs.append(await cold_session_ms(base_url, clock, "" if page is page_list.HOME else page.url_path,
                                               query, "L", moves))
            index += 1
        rows[page.url_path] = summary(costs)
        print(f"{page.url_path:12s} first {rows[page.url_path]['first_ms']:7.1f} ms   "
              f"L move {rows[page.url_path]['move_ms']:7.1f} ms   mean {rows[page.url_path]['mean_ms']:7.1f} ms",
              flush=True)
    return rows


async def measure_trivial(base_url: str, clock: Callable[[], float], settings: int) -> dict[str, float]:
    costs = [await cold_session_ms(base_url, clock, "", "", "value", [51 + k % 2 for k in range(MOVES)])
             for _ in range(settings)]
    return summary(costs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--settings", type=int, default=8, help="fresh settings (sessions) per page (default 8)")
    parser.add_argument("--pages", nargs="*", help="URL paths of the pages to measure (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    pages = [p for p in page_list.PAGES if not args.pages or p.url_path in args.pages]
    load_before = os.getloadavg()[0]
    with trivial_server() as server, cpu_clock(server.pid) as clock:
        trivial = asyncio.run(measure_trivial(server.url, clock, args.settings))
    print(f"{'trivial app':12s} first {trivial['first_ms']:7.1f} ms   slider {trivial['move_ms']:7.1f} ms", flush=True)
    with StreamlitServer("app.py") as server, cpu_clock(server.pid) as clock:
        rows = asyncio.run(measure_app(server.url, clock, pages, args.settings))
        clock_name = clock.__name__
    mean = statistics.fmean(row["mean_ms"] for row in rows.values())
    print(f"mean cold run over the pages: {mean:.1f} ms ({mean / trivial['mean_ms']:.1f}x the trivial app's run)")
    result = {
        "date": datetime.date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2)},
        "settings_per_page": args.settings, "cpu_clock": clock_name,
        "trivial": trivial, "pages": rows, "mean_cold_run_ms": round(mean, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
