"""The benchmark script runs and compares equal work (its timings are not asserted: speed is
measured by benchmarks/bench_core.py, never by a test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.angle_rounding import angle_rounding_tolerance
from support.browser_harness import StreamlitServer

import pe_core
from explorer import page_list

ROOT = Path(__file__).resolve().parents[2]


def test_bench_core_quick_times_both_layouts_and_each_ratio_compares_the_same_numbers(tmp_path: Path) -> None:
    output = tmp_path / "core.json"
    subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_core", "--quick", "--output", str(output)],
        check=True, capture_output=True, text=True, timeout=120, cwd=ROOT,
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


def test_cold_compute_quick_runs_every_page_at_the_defaults_and_the_largest_settings(tmp_path: Path) -> None:
    """The cold-computation benchmark still calls what each topic computes (its exit status,
    1 when a row is over the budget, is the benchmark's verdict, not this test's)."""
    output = tmp_path / "cold.json"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.cold_compute", "--quick", "--repeats", "1", "--output", str(output)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert completed.returncode in (0, 1), completed.stderr[-3000:]
    rows = json.loads(output.read_text())["rows"]
    measured = {(row["page"], row["settings"]) for row in rows}
    for page in page_list.PAGES:
        name = page.url_path
        assert {(name, "defaults"), (name, "largest")} <= measured, name
    assert all(row["median_s"] > 0 for row in rows)


def test_the_follow_scenario_sees_every_follower_open_every_next(tmp_path: Path) -> None:
    """The load test's class following a lesson, at 5 followers and a Next every 1.5 s (one poll
    and a run are well within it here; the benchmark's 4 s would only add waiting): the teacher's
    link comes from its Share panel, and every follower's tab opens each of the four Nexts' views
    (the times are the benchmark's verdict, in its exit status, not this test's)."""
    output = tmp_path / "load.json"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.load_test", "--scenarios", "follow", "--sessions", "5",
         "--next-every", "1.5", "--out", str(output)],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )
    assert completed.returncode in (0, 1), completed.stderr[-3000:]
    result = json.loads(output.read_text())["follow"]
    assert result["failures"] == [], result["failures"]
    assert (result["followers_ok"], result["missed_nexts"]) == (5, 0)
    assert result["first_run_s"]["n"] == 5 and result["next_s"]["n"] == 5 * result["scenario"]["nexts"]
    assert result["targets"]["every_follower_sees_every_next"]
    assert result["scenario"]["next_every_s"] == 1.5
    assert result["poll_run_s"]["n"] > 0, "the followers never polled"


def test_rerun_cost_measures_a_server_started_outside_it_beside_its_own_trivial_app(tmp_path: Path) -> None:
    """``--url`` and ``--pid``: the rows are the outside server's (its CPU read from the pid given), each
    with a ratio to the script's own trivial app; the verdict on the budgets is the exit status, not this
    test's. One without the other is refused in one line."""
    output = tmp_path / "rerun.json"
    with StreamlitServer("app.py", cwd=ROOT) as server:
        completed = subprocess.run(
            [sys.executable, "-m", "benchmarks.rerun_cost", "--pages", "scorecard", "--kinds", "whole run",
             "--reruns", "3", "--url", server.url, "--pid", str(server.pid), "--out", str(output)],
            capture_output=True, text=True, timeout=180, cwd=ROOT,
        )
        assert completed.returncode in (0, 1), completed.stderr[-3000:]
        assert server.log_tail().count("page 'Criteria scorecard' failed") == 0
    result = json.loads(output.read_text())
    assert result["outside_server"] == server.url
    rows = result["rows"]
    assert [(row["page"], row["settings"], row["rerun"]) for row in rows] == [
        ("scorecard", "defaults", "whole run"), ("scorecard", "largest", "whole run")]
    assert all(row["cpu_ms_per_rerun"] > 0 and row["ratio_to_trivial"] > 0 for row in rows)

    refused = subprocess.run([sys.executable, "-m", "benchmarks.rerun_cost", "--url", server.url],
                             capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert refused.returncode == 2 and "--url and --pid go together" in refused.stderr
