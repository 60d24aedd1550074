"""Server CPU of a warm rerun, page by page, beside the trivial app: a slider step and a whole run.

Run from the repository root:

    python -m benchmarks.rerun_cost                  # every page (and a lesson's step), defaults and largest
    python -m benchmarks.rerun_cost --reruns 40      # more reruns per row
    python -m benchmarks.rerun_cost --kinds "whole run" --pages attention   # whole runs only, one page
    python -m benchmarks.rerun_cost --rounds 3 --pages rotary contexts   # three passes, medians
    python -m benchmarks.rerun_cost --extra-arg --runner.postScriptGC=true   # another server option
    python -m benchmarks.rerun_cost --floor --pages matrix   # and the app's chrome alone: every page's floor
    python -m benchmarks.rerun_cost --url http://127.0.0.1:8501 --pid 1234   # a server of your own (an outside run)

Each row is one session (tests/st_client.py speaks Streamlit's WebSocket protocol, and keeps Streamlit's
message cache as a browser tab does: a chart it already holds comes as a reference) on one page: it
opens the page, moves the sidebar's d slider between two values twice (so both are in every cache:
warm), then reruns ``--reruns`` times while this script reads the server process's CPU time before and
after (server_process.cpu_clock: nanoseconds where this script may give the server a cpuacct cgroup of
its own, as root on Linux, else /proc's user + system time in 10 ms ticks). Two kinds of rerun, a row
each: a "step" moves the slider between the two values (what one student's slider step costs the server
when nothing new has to be computed), a "whole run" reruns the page as it stands, nothing changed (what
a returning visitor, a page change or a lesson's step costs once its computations are cached: the whole
script). The figure is that CPU time divided by the reruns. Wall time from request to script_finished is
not the measure: on loopback it has a floor of its own (~44 ms even for the trivial app). On /proc's
clock, which ticks in 10 ms, many reruns a row, or the tick decides the figure.

The trivial app (benchmarks/baseline_app.py, the project's config) is measured the same way, the
same kind of rerun, just before each row, and the row is printed with its ratio to that
measurement: on these shared machines the same rerun costs tens of percent more or less from one
minute to the next, and a yardstick read minutes apart moved the ratios as much. With ``--rounds N``
every row is measured N times (the pages in turn, N passes, each pass on freshly started servers: two
processes of the same code differ by up to 9 % for as long as they run) and printed as the median of
its N figures, its range, and the median of its N ratios. The budgets (PRODUCT.md), on every page, at the
defaults and at the largest settings (L=16384, d=2048): a step at most 4x the trivial app's, a whole
run at most 5x (``BUDGET_RATIO``). Results go to benchmarks/results/rerun_cost.json; the exit status
is 1 if a page's row misses its budget.

``--floor`` adds the rows of "chrome only": a copy of the app whose Encoding matrix draws only its
title, served the same way. What it costs is what every page's step costs before the page draws
anything: a d step reruns the page's fragment alone (explorer/ui/navigation.py), so Streamlit's
start of the run the browser asked for, its turn into the fragment's run, the settings and the URL;
the floor under every page's row, on this machine, in this run (Home, Rotary, Attention and Longer
contexts rerun less than their page: the part of it that reads the settings, see
navigation.run_settings_part). It is not a page, and does not set the exit status.

``--url`` and ``--pid`` measure a server started outside this script instead of one of its own: ``streamlit
run app.py`` as the README starts it, a container's process, a deployment's replica (its CPU is read from
``--pid``; as root the process is moved into a cpuacct cgroup for the rows and back). The trivial app is still
this script's, served beside it. Every round then measures the same server process, warm from the round
before, where the script's own servers are fresh each round.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from benchmarks.baseline_app import trivial_server
from benchmarks.server_process import cpu_clock, run_failure
from explorer import page_list
from explorer import settings as s
from tests.support.st_client import StreamlitServer, StreamlitSession

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "benchmarks" / "results" / "rerun_cost.json"
#: The two kinds of warm rerun, and their budgets in PRODUCT.md: at most this many times the trivial
#: app's, measured the same way in the same run.
STEP, WHOLE = "step", "whole run"
BUDGET_RATIO = {STEP: 4.0, WHOLE: 5.0}
#: (name, query string, the two d values a step moves between)
SETTINGS = (
    ("defaults", "", (s.D_DEFAULT, s.D_DEFAULT - 2)),
    ("largest", f"d={s.D_MAX}&L={s.L_MAX}", (s.D_MAX, s.D_MAX - 2)),
)
#: A page's own controls at their largest, added to the "largest" row's query (its sidebar settings do not
#: reach it): Your model, layer by layer's deepest stack at the longest target; M-RoPE's longest sequence.
PAGE_LARGEST = {
    "layers": "&layer_model=deepseek-v3&layer_target=16777216",
    "mrope": "&text_before=512&text_between=512&text_after=512&image_rows=64&image_cols=64&video_frames=32"
             "&video_rows=64&video_cols=64",
}
#: Rows of a lesson being presented (explorer/ui/lesson_present.py): the step's bar and narration above its
#: page, by row name -> (URL path, query). A d step reruns the page's fragment as on the page alone.
LESSON_ROWS = {"relative, lesson step": ("relative", "lesson=sinusoid-to-rope&step=2&delta=10")}
#: The "page" of --floor's rows, and what its copy of the app draws in place of Encoding matrix.
FLOOR = "chrome only"
FLOOR_PAGE = f'import streamlit as st\n\nst.title("{page_list.PAGES[1].title}")\n'


@contextmanager
def chrome_only_app() -> Iterator[Path]:
    """A copy of the app (script, packages, pages, config) whose Encoding matrix draws only its title."""
    assert page_list.PAGES[1].url_path == "matrix", "FLOOR_PAGE stands in for Encoding matrix"
    with tempfile.TemporaryDirectory(prefix="pe-chrome-only-") as folder:
        copy = Path(folder)
        shutil.copy2(ROOT / "app.py", copy)
        for tree in (".streamlit", "explorer", "pages", "pe_core"):
            shutil.copytree(ROOT / tree, copy / tree, ignore=shutil.ignore_patterns("__pycache__"))
        (copy / page_list.PAGES[1].path).write_text(FLOOR_PAGE)
        yield copy


@dataclass(frozen=True)
class OutsideServer:
    """A server of the app this script did not start (``--url``, ``--pid``)."""

    url: str
    pid: int


async def rerun_cpu_ms(
    base_url: str, clock: Callable[[], float], page: str, query: str, key: str, values: tuple, reruns: int,
    kind: str = STEP,
) -> float:
    """Server CPU (ms) per rerun of one session: moving slider ``key`` between two values already seen
    (``STEP``), or a whole run of the page as it stands (``WHOLE``: a returning visitor's, a page change's);
    ``clock`` reads the server's CPU time in seconds (server_process.cpu_clock)."""
    async with StreamlitSession(base_url) as session:
        known = await session.open_page(page, query)
        if (failure := run_failure(known)) is not None:
            raise RuntimeError(f"{page or 'home'}?{query}: first run: {failure}")
        for value in (values[1], values[0]) * 2:  # warm: both values in every cache
            known = await session.set_slider(key, value, known)
        before = clock()
        for step in range(reruns):
            if kind == WHOLE:
                known = await session.rerun()
            else:
                known = await session.set_slider(key, values[(step + 1) % 2], known)
            if (failure := run_failure(known)) is not None:
                raise RuntimeError(f"{page or 'home'}?{query}: {kind}: {failure}")
        return 1000 * (clock() - before) / reruns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reruns", type=int, default=24, help="timed reruns per row (default 24)")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the rows; medians are printed (default 1)")
    parser.add_argument("--pages", nargs="*", help="URL paths of the pages to measure (default: all)")
    parser.add_argument("--kinds", nargs="*", choices=(STEP, WHOLE), default=[STEP, WHOLE],
                        help=f'which reruns: a sidebar "{STEP}", a "{WHOLE}" of the page (default both)')
    parser.add_argument("--extra-arg", action="append", default=[], help="an option for both servers")
    parser.add_argument("--floor", action="store_true", help='also the rows of "chrome only" (see above)')
    parser.add_argument("--url", help="measure this running server of the app instead of one of this script's")
    parser.add_argument("--pid", type=int, help="with --url: the server's process id, whose CPU time is read")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if (args.url is None) != (args.pid is None):
        parser.error("--url and --pid go together: the server's address, and its process id to read its CPU time")
    pages = [p for p in page_list.ALL_PAGES if not args.pages or p.url_path in args.pages]
    # (row's page, URL path, settings' name, query, d values): the floor's rows first, on their own server.
    floor_path = page_list.address_path(page_list.PAGES[1])
    views = [(FLOOR, floor_path, name, query, values) for name, query, values in SETTINGS if args.floor]
    views += [(info.url_path, page_list.address_path(info), name,
               query + (PAGE_LARGEST.get(info.url_path, "") if name == "largest" else ""), values)
              for info in pages for name, query, values in SETTINGS]
    views += [(row, path, name, lesson_query + (f"&{query}" if query else ""), values)
              for row, (path, lesson_query) in LESSON_ROWS.items() if not args.pages or path in args.pages
              for name, query, values in SETTINGS]
    plan = [(*view, kind) for view in views for kind in args.kinds]

    load_before = os.getloadavg()[0]
    measured: dict[tuple[str, str, str], list[tuple[float, float]]] = {}  # row -> [(page ms, trivial ms)]
    # Fresh servers for every round: two server processes of the same code differ by up to 9 % for as long
    # as they run (benchmarks/JOURNAL.md, "2026-12-06, 21:55-22:00"), so a round's pair is one draw of that.
    with chrome_only_app() if args.floor else nullcontext() as floor_copy:
        for round_number in range(1, args.rounds + 1):
            with ExitStack() as servers:
                trivial = servers.enter_context(trivial_server(args.extra_arg))
                app = (OutsideServer(args.url.rstrip("/"), args.pid) if args.url
                       else servers.enter_context(StreamlitServer("app.py", extra_args=args.extra_arg)))
                clocks = {server: servers.enter_context(cpu_clock(server.pid)) for server in (trivial, app)}
                cpu_clock_used = clocks[app].__name__
                if floor_copy is not None:
                    floor = servers.enter_context(StreamlitServer("app.py", cwd=floor_copy, extra_args=args.extra_arg))
                    clocks[floor] = servers.enter_context(cpu_clock(floor.pid))
                for row_page, path, name, query, values, kind in plan:
                    server = floor if row_page == FLOOR else app
                    trivial_ms = asyncio.run(
                        rerun_cpu_ms(trivial.url, clocks[trivial], "", "", "value", (50, 51), args.reruns, kind))
                    ms = asyncio.run(
                        rerun_cpu_ms(server.url, clocks[server], path, query, "d", values, args.reruns, kind))
                    measured.setdefault((row_page, name, kind), []).append((ms, trivial_ms))
                    print(f"round {round_number}: {row_page} {name} {kind}: {ms:.1f} ms (trivial {trivial_ms:.1f})",
                          flush=True)
    print(f"{'page':<12} {'settings':<9} {'rerun':<9} {'ms/rerun':>9} {'range':>12} {'trivial':>8} {'x trivial':>10}"
          f"  budget")
    rows: list[dict] = []
    for row_page, _path, name, query, _values, kind in plan:
        pairs = measured[(row_page, name, kind)]
        page_each, trivial_each = zip(*pairs, strict=True)
        ms = statistics.median(page_each)
        ratio = statistics.median(page_ms / trivial_ms for page_ms, trivial_ms in pairs)
        met = ratio <= BUDGET_RATIO[kind]
        rows.append({"page": row_page, "settings": name, "rerun": kind, "query": query,
                     "cpu_ms_per_rerun": round(ms, 2),
                     "cpu_ms_each_round": [round(page_ms, 2) for page_ms in page_each],
                     "trivial_cpu_ms_each_round": [round(trivial_ms, 2) for trivial_ms in trivial_each],
                     "ratio_to_trivial": round(ratio, 2), "budget_ratio": BUDGET_RATIO[kind], "within_budget": met})
        span = f"{min(page_each):.1f}-{max(page_each):.1f}" if args.rounds > 1 else ""
        print(f"{row_page:<12} {name:<9} {kind:<9} {ms:>9.1f} {span:>12} {statistics.median(trivial_each):>8.1f} "
              f"{ratio:>10.1f}  {BUDGET_RATIO[kind]:g}x {'met' if met else 'MISSED'}")
    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
        "reruns_per_row": args.reruns, "rounds": args.rounds, "server_args": args.extra_arg,
        "outside_server": args.url,
        "cpu_clock": cpu_clock_used,
        "budget_ratio": BUDGET_RATIO, "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    after = result["load_average_1min"]["after"]
    print(f"load average {load_before:.2f} before, {after:.2f} after; CPU clock {cpu_clock_used}; written {args.out}")
    return 0 if all(row["within_budget"] for row in rows if row["page"] != FLOOR) else 1

if __name__ == "__main__":
    sys.exit(main())
