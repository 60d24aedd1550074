"""The benchmark script runs and compares equal work (its timings are not asserted: speed is
measured by benchmarks/bench_core.py, never by a test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from angle_rounding import angle_rounding_tolerance

import pe_core

ROOT = Path(__file__).resolve().parents[1]


def test_bench_core_quick_times_both_layouts_and_each_ratio_compares_the_same_numbers(tmp_path: Path) -> None:
    output = tmp_path / "core.json"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_core.py"), "--quick", "--output", str(output)],
        check=True, capture_output=True, text=True, timeout=120,
    )
    results = json.loads(output.read_text())
    rows = results["rows"]

    shift_rows = [row for row in rows if row["benchmark"].startswith("shift")]
    assert {row["layout"] for row in shift_rows} == set(pe_core.LAYOUTS)
    for layout in pe_core.LAYOUTS:
        of_layout = [row for row in shift_rows if row["layout"] == layout]
        # Against the dense product, new arrays and out=; against the copy floor, the same two.
        assert [row["floor"] for row in of_layout] == [False, False, True, True], layout

    for row in rows:
        assert row["ours_median_s"] > 0 and row["theirs_median_s"] > 0, row["benchmark"]
        assert row["ratio"] == row["theirs_median_s"] / row["ours_median_s"]
        if row["floor"]:
            assert "max_abs_difference" not in row
        elif row["benchmark"] == "encoding":
            # The rivals round each angle k*w once; pe_core does not.
            assert row["max_abs_difference"] <= angle_rounding_tolerance(row["L"] - 1), row
        else:
            # The pair-by-pair rotation and the dense product agree to a few ulps of values <= 1.
            assert row["max_abs_difference"] <= 4 * 2.0**-52, row

    # The budget block restates the four shift-vs-dense ratios, the default layout's
    # like-for-like one first, and gives no verdict at --quick's smaller sizes.
    budget = results["budget"]
    assert (budget["ratio"], budget["L"], budget["d"], budget["checked"]) == (20.0, 8192, 2048, False)
    dense_ratios = {
        (row["layout"], row["ours"]): row["ratio"] for row in shift_rows if not row["floor"]
    }
    readings = budget["readings"]
    assert [(r["layout"], r["arrays"]) for r in readings] == [
        ("interleaved", "allocated once (out=)"),
        ("interleaved", "new"),
        ("concatenated", "allocated once (out=)"),
        ("concatenated", "new"),
    ]
    for reading in readings:
        ours = "shift(out=)" if reading["arrays"] != "new" else "shift"
        assert reading["ratio"] == dense_ratios[(reading["layout"], ours)]
        assert reading["met"] is None
