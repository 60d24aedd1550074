"""Speed of pe_core against the seeds' own ways of computing the same numbers.

Run from the repository root:

    python -m benchmarks.bench_core            # full run, about a minute on 2 cores
    python -m benchmarks.bench_core --quick    # smaller sizes, a few seconds (smoke test)

Everything is measured in one run on one machine with time.perf_counter: one warm-up call
of each side, then several rounds that time each side once (alternating, so that other work
on the machine hits both sides alike); the figures are the medians. Each row also checks that the two ways give the
same numbers (max |difference|), so that a ratio never compares different work. The table
is printed and written as JSON to benchmarks/results/core.json.

(a) positional_encoding against seed 000's double loop (re-typed below) and against a
    plain vectorised np.sin/np.cos version. The loop runs only at sizes where it finishes
    in a few seconds; no time is extrapolated.
(b) shift against the dense ``P @ transition_matrix(delta)`` of seed 001 (building M is
    part of that way and is timed with it) at L=8192, d=2048, for both layouts, two ways:
    each side returning a new array, and each side writing into an array allocated once
    (``shift(..., out=)`` and ``np.matmul(..., out=)``). Each is also set against a plain
    copy of P split over rows exactly as shift splits its work (two threads at this size):
    the floor of any pass that reads and writes L*d values, allocated the same way.
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

# OpenBLAS's threads spin for about 0.1 s after a product before they sleep, taking both
# cores from whatever is timed next. 2**4 cycles instead: they sleep at once. This does not
# slow the product itself (measured: 465 ms for the dense shift either way). Set before
# NumPy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np

import pe_core
from pe_core.relative import over_row_blocks
from tests.support.seed_code import seed000_getPositionEncoding

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "benchmarks" / "results" / "core.json"

#: PRODUCT.md, "Budgets": shift() is at least this many times faster than the dense P @ M
#: at this size.
BUDGET_RATIO = 20.0
BUDGET_SIZE = {"L": 8192, "d": 2048}


# --------------------------------------------------------------------------------------
# The ways pe_core is compared with
# --------------------------------------------------------------------------------------


def vectorised(seq_len: int, d: int, n: float = 10000.0) -> np.ndarray:
    """The usual broadcast version: one angle matrix, then sin and cos into the columns."""
    angle = np.arange(seq_len)[:, None] / np.power(n, 2 * np.arange(d // 2) / d)
    P = np.empty((seq_len, d))
    P[:, 0::2] = np.sin(angle)
    P[:, 1::2] = np.cos(angle)
    return P


def dense_shift(P: np.ndarray, delta: int, layout: str, out: np.ndarray | None = None) -> np.ndarray:
    """Seed 001's way: build the d x d transition matrix and multiply."""
    return np.matmul(P, pe_core.transition_matrix(delta, P.shape[1], layout=layout), out=out)


def split_copy(P: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """P copied over shift's own row split (two threads for large P): shift's floor.

    A one-thread copy is no floor for a two-thread pass (shift beats it); this one is.
    """
    out = np.empty_like(P) if out is None else out

    def copy_rows(first: int, stop: int) -> bool:
        np.copyto(out[first:stop], P[first:stop])
        return True

    over_row_blocks(copy_rows, P.shape[0], P.size)
    return out


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


def measure(calls: list[Callable[[], object]], repeats: int) -> list[list[float]]:
    """One warm-up call of each, then ``repeats`` rounds timing each call once per round.

    Alternating the calls round by round exposes all of them to the same background load,
    so a burst of other work on the machine skews both sides of a ratio, not only one.
    The calls follow each other without a pause: on this virtual machine a core left idle
    for a fraction of a second is slow to come back, which would add milliseconds to
    whichever two-thread call comes first after the pause (measured: shift 25 ms back to
    back, 38 ms after 0.2 s idle).
    """
    for call in calls:
        call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for call, runs in zip(calls, times, strict=True):
            start = time.perf_counter()
            call()
            runs.append(time.perf_counter() - start)
    return times


def compare(
    name: str,
    size: dict,
    ours: tuple[str, Callable[[], np.ndarray]],
    theirs: tuple[str, Callable[[], np.ndarray]],
    repeats: int,
    check: bool = True,
) -> dict:
    """Time two ways of computing one result; ratio = their median / our median.

    ``check=False`` marks a floor row (a different operation that bounds ours from below):
    no difference is computed and the verdict says how many floors' time ours takes.
    """
    ours_name, ours_call = ours
    theirs_name, theirs_call = theirs
    ours_runs, theirs_runs = measure([ours_call, theirs_call], repeats)
    ours_median, theirs_median = statistics.median(ours_runs), statistics.median(theirs_runs)
    row = {
        "benchmark": name,
        **size,
        "ours": ours_name,
        "theirs": theirs_name,
        "ours_median_s": ours_median,
        "theirs_median_s": theirs_median,
        "ratio": theirs_median / ours_median,
        "ratio_of_fastest_runs": min(theirs_runs) / min(ours_runs),
        "repeats": repeats,
        "floor": not check,
        "ours_runs_s": ours_runs,
        "theirs_runs_s": theirs_runs,
    }
    if check:
        row["max_abs_difference"] = float(np.abs(ours_call() - theirs_call()).max())
    row["verdict"] = verdict(row)
    print_row(row)
    return row


def seconds(value: float) -> str:
    return f"{value * 1e3:9.2f} ms" if value < 10 else f"{value:9.2f} s "


def verdict(row: dict) -> str:
    """The ratio in words: a speed-up, or for the floor rows how many copies' time it takes."""
    fastest = row["ratio_of_fastest_runs"]
    if row["floor"]:
        floor = row["theirs"].split(" (")[0]
        return f"{row['ours']} = {1 / row['ratio']:.1f}x the time of {floor} (fastest runs {1 / fastest:.1f}x)"
    return f"{row['ours']} vs {row['theirs'].split(' (')[0]}: {row['ratio']:.1f}x (fastest runs {fastest:.1f}x)"


def print_header() -> None:
    print(f"{'benchmark':<22}{'L':>6}{'d':>6}  {'compared with':<33}{'ours':>12}{'theirs':>12}  ratio")


def print_row(row: dict) -> None:
    difference = f"  (max|diff| {row['max_abs_difference']:.1e})" if "max_abs_difference" in row else ""
    print(
        f"{row['benchmark']:<22}{row['L']:>6}{row['d']:>6}  {row['theirs']:<33}"
        f"{seconds(row['ours_median_s'])}{seconds(row['theirs_median_s'])}  {verdict(row)}{difference}",
        flush=True,
    )


# --------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------


def run(quick: bool) -> dict:
    rows = []
    started = datetime.datetime.now(datetime.UTC)
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} (1 min) on {os.cpu_count()} CPUs; other work skews the times\n")
    print_header()

    # (a) building the matrix, against each other way at the sizes where it finishes
    loop_sizes = [(100, 512, 5), (2048, 512, 3)] if not quick else [(50, 128, 3)]
    vector_sizes = [(100, 512, 21), (2048, 512, 11), (8192, 2048, 7)] if not quick else [(50, 128, 5), (512, 512, 5)]
    rivals = [
        ("seed 000 loop", seed000_getPositionEncoding, loop_sizes),
        ("vectorised np.sin/np.cos", vectorised, vector_sizes),
    ]
    for theirs_name, theirs, sizes in rivals:
        for L, d, repeats in sizes:
            rows.append(
                compare(
                    "encoding",
                    {"L": L, "d": d},
                    ("positional_encoding", lambda L=L, d=d: pe_core.positional_encoding(L, d)),
                    (theirs_name, lambda L=L, d=d, theirs=theirs: theirs(L, d)),
                    repeats,
                )
            )

    # (b) shifting the matrix: new arrays, then arrays allocated once (the budget's row)
    L, d, delta = (BUDGET_SIZE["L"], BUDGET_SIZE["d"], -10) if not quick else (1024, 512, -10)
    repeats = 15 if not quick else 3
    for layout in pe_core.LAYOUTS:
        P = pe_core.positional_encoding(L, d, layout=layout)
        ours_out, theirs_out = np.empty_like(P), np.empty_like(P)
        size = {"L": L, "d": d, "layout": layout, "delta": delta}
        new = ("shift", lambda P=P, layout=layout: pe_core.shift(P, delta, layout=layout))
        into = (
            "shift(out=)",
            lambda P=P, layout=layout, out=ours_out: pe_core.shift(P, delta, layout=layout, out=out),
        )
        rows += [
            compare(
                f"shift ({layout})",
                size,
                new,
                ("dense P @ transition_matrix", lambda P=P, layout=layout: dense_shift(P, delta, layout)),
                repeats,
            ),
            compare(
                f"shift ({layout})",
                size,
                into,
                (
                    "dense matmul(out=)",
                    lambda P=P, layout=layout, out=theirs_out: dense_shift(P, delta, layout, out),
                ),
                repeats,
            ),
            compare(
                f"shift ({layout})", size, new, ("copy split as shift (floor)", lambda P=P: split_copy(P)), repeats,
                check=False,
            ),
            compare(
                f"shift ({layout})",
                size,
                into,
                ("copy(out=) split as shift (floor)", lambda P=P, out=theirs_out: split_copy(P, out)),
                repeats,
                check=False,
            ),
        ]
        del P, ours_out, theirs_out

    budget = budget_summary(rows, checked=not quick)
    return {
        "started_utc": started.isoformat(timespec="seconds"),
        "quick": quick,
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "load_average_1min_before": load_before[0],
            "load_average_1min_after": os.getloadavg()[0],
            "free_page_reporting": Path("/sys/module/page_reporting").exists(),
        },
        "timer": "time.perf_counter; 1 warm-up call each, then `repeats` alternating rounds; medians",
        "ratio": "theirs median / ours median (> 1: pe_core is faster); ratio_of_fastest_runs: the same with minima",
        "budget": budget,
        "rows": rows,
    }


def budget_summary(rows: list[dict], checked: bool) -> dict:
    """Each shift-vs-dense ratio set against the budget, the first one being the budget's
    reading: shift as called by default (the interleaved layout), each side writing into an
    array allocated once, so that the ratio compares the two computations and not the
    system's zeroing of fresh pages (benchmarks/README.md, "Why two ways of allocating").

    ``checked=False`` (--quick, smaller sizes): the ratios are listed without a verdict.
    """
    default_layout = inspect.signature(pe_core.shift).parameters["layout"].default
    dense_rows = [row for row in rows if row["benchmark"].startswith("shift") and not row["floor"]]
    readings = sorted(
        (
            {
                "layout": row["layout"],
                "arrays": "allocated once (out=)" if row["ours"].endswith("(out=)") else "new",
                "ratio": row["ratio"],
                "met": row["ratio"] >= BUDGET_RATIO if checked else None,
            }
            for row in dense_rows
        ),
        key=lambda reading: (reading["layout"] != default_layout, reading["arrays"] == "new"),
    )
    print(
        f"\nbudget (PRODUCT.md): shift() at least {BUDGET_RATIO:g}x faster than the dense P @ M"
        f" at L={BUDGET_SIZE['L']}, d={BUDGET_SIZE['d']}"
        + ("" if checked else " (--quick ran smaller sizes: no verdict)")
    )
    for index, reading in enumerate(readings):
        outcome = "" if reading["met"] is None else ("  met" if reading["met"] else "  not met")
        role = "  <- the budget's reading (shift's default layout, like for like)" if index == 0 else ""
        print(f"  {reading['layout']:<13} arrays {reading['arrays']:<22} {reading['ratio']:5.1f}x{outcome}{role}")
    return {"ratio": BUDGET_RATIO, **BUDGET_SIZE, "checked": checked, "readings": readings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke test, not for the README)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON file to write (default {RESULTS})")
    args = parser.parse_args()
    results = run(args.quick)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten to {args.output}")


if __name__ == "__main__":
    main()
