"""What the load benchmarks read of a server process, whether a run it sent back succeeded, and how
they sum up times (shared by the classroom scenarios, benchmarks/load_test.py, the follow scenario,
benchmarks/follow_class.py, and the per-run CPU benchmarks)."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import numpy as np

from explorer.ui.navigation import PAGE_FAILED
from tests.support.st_client import RunResult

MB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    """Resident memory of a process, from /proc (no psutil here)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of a process so far, from /proc; this process if pid is None."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    array = np.asarray(values)
    return {
        "n": len(values), "p50": round(float(np.percentile(array, 50)), 3),
        "p95": round(float(np.percentile(array, 95)), 3), "max": round(float(array.max()), 3),
    }


def run_failure(run: RunResult) -> str | None:
    """Why ``run`` failed (it never finished, drew an exception, or its page could not be drawn), or None."""
    if not run.finished:
        return f"run ended with {run.status}"
    if run.exceptions:
        return f"exception element: {run.exceptions[0].message[:80]!r}"
    if PAGE_FAILED in run.alerts:
        return "page failed (PAGE_FAILED)"
    return None
