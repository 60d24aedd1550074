"""Instructions the server spends on a page's runs, counted by valgrind's callgrind: for telling whether a
change pays, where CPU time cannot.

Run from the repository root (valgrind from Debian's packages: `apt-get install -y valgrind`):

    python -m benchmarks.instructions --pages rotary mrope              # warm whole runs, this checkout
    python -m benchmarks.instructions --pages rotary --base ../before   # the same in another checkout beside it
    python -m benchmarks.instructions --kind cold --pages scorecard     # cold runs (a first run, two L moves)

CPU time on these shared machines drifts by tens of percent from one minute to the next, and two server
processes of the same code differ by up to 9 % for as long as they run (benchmarks/JOURNAL.md,
"2026-12-06, 21:55-22:00"): a change that saves 3 % cannot be told from nothing by rerun_cost.py or
cold_runs.py. callgrind counts the instructions the server's threads execute between two of its
commands, and the same code counts the same to 1 % (PYTHONHASHSEED fixed), whatever else the machine
does; two checkouts are counted in one run. What it does not count: the kernel's part (system calls,
sockets), which is most of the trivial app's warm rerun (4.3 M instructions, 3-5 ms of CPU, where a page's
is 13-15x in instructions and 3-5x in time). So it says which change pays and by how much of the app's
own work; the budgets stay CPU time, judged by rerun_cost.py and cold_runs.py.

A whole run: a session opens the page, reruns it three times, then ``--runs`` reruns are counted. A cold
run: ``--runs`` sessions each open the page at a (d, L) nobody asked for (cold_runs.py's settings) and move
L twice to new values; the count is per run. All pages on one server of each checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.load_test import OWN_D_COUNT, OWN_D_FIRST, OWN_L_FIRST, OWN_MOVE_L_FIRST
from explorer.page_list import PAGES
from tests.support.browser_harness import StreamlitServer
from tests.support.st_client import StreamlitSession

ROOT = Path(__file__).resolve().parents[1]
#: Under callgrind a run is 50-100x slower: start-up's visits take minutes, a first run of the largest page seconds.
RUN_TIMEOUT_S = 600.0
START_TIMEOUT_S = 600.0


class CountedServer:
    """``streamlit run app.py`` of a checkout under callgrind, counting only between ``start`` and ``stop``."""

    def __init__(self, checkout: Path) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="pe-instructions-")
        self._out = Path(self._folder.name) / "callgrind.out"
        try:
            self._server = StreamlitServer(
                "app.py", cwd=checkout, env={"PYTHONHASHSEED": "0"}, start_timeout_s=START_TIMEOUT_S,
                wrapper=("valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={self._out}"),
            )
        except BaseException:
            self._folder.cleanup()
            raise
        self.url = self._server.url

    def _control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self._server.pid)], capture_output=True, check=True)

    def start(self) -> None:
        self._control("--zero")
        self._control("--instr=on")

    def stop(self) -> int:
        """The instructions counted since ``start``."""
        self._control("--instr=off")
        before = set(Path(self._folder.name).glob("callgrind.out.*"))
        self._control("--dump")
        [dump] = set(Path(self._folder.name).glob("callgrind.out.*")) - before
        return next(int(line.split()[1]) for line in dump.read_text().splitlines() if line.startswith("totals:"))

    def close(self) -> None:
        self._server.stop()
        self._folder.cleanup()


async def whole_runs(server: CountedServer, page: str, runs: int) -> float:
    async with StreamlitSession(server.url, timeout_s=RUN_TIMEOUT_S) as session:
        await session.open_page(page)
        for _ in range(3):
            await session.rerun()
        server.start()
        for _ in range(runs):
            await session.rerun()
        return server.stop() / runs


async def cold_runs(server: CountedServer, page: str, runs: int, first_index: int) -> float:
    total = 0
    for index in range(first_index, first_index + runs):
        query = urlencode({"d": OWN_D_FIRST + 2 * (index % OWN_D_COUNT), "L": OWN_L_FIRST + index})
        async with StreamlitSession(server.url, timeout_s=RUN_TIMEOUT_S) as session:
            server.start()
            known = await session.open_page(page, query)
            for move in range(2):
                known = await session.set_slider("L", OWN_MOVE_L_FIRST + 2 * index + move, known)
            total += server.stop()
    return total / (3 * runs)


async def count_pages(server: CountedServer, pages: list[str], kind: str, runs: int) -> list[float]:
    counts = []
    for number, page in enumerate(pages):
        path = "" if page == "home" else page
        counts.append(await whole_runs(server, path, runs) if kind == "whole"
                      else await cold_runs(server, path, runs, 100 * number))
    return counts


def count(checkout: Path, pages: list[str], kind: str, runs: int) -> list[float]:
    """Each page's instructions per run, on one server of ``checkout``."""
    server = CountedServer(checkout)
    try:
        return asyncio.run(count_pages(server, pages, kind, runs))
    finally:
        server.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="*", default=[info.url_path for info in PAGES])
    parser.add_argument("--kind", choices=("whole", "cold"), default="whole")
    parser.add_argument("--runs", type=int, default=8, help="runs counted per page (cold: sessions)")
    parser.add_argument("--base", type=Path, help="another checkout of the app, counted beside this one")
    args = parser.parse_args()
    checkouts = [ROOT] if args.base is None else [args.base.resolve(), ROOT]
    counts = [count(checkout, args.pages, args.kind, args.runs) for checkout in checkouts]
    for page, values in zip(args.pages, zip(*counts, strict=True), strict=True):
        line = f"{page:12s} {args.kind} run: " + " -> ".join(f"{value / 1e6:.2f}" for value in values)
        print(line + (f" M instructions ({values[1] / values[0]:.3f}x)" if len(values) == 2 else " M instructions"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
