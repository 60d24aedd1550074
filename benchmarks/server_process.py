"""What the load benchmarks read of a server process, whether a run it sent back succeeded, and how
they sum up times (shared by the classroom scenarios, benchmarks/load_test.py, the follow scenario,
benchmarks/follow_class.py, and the per-run CPU benchmarks)."""

from __future__ import annotations

import os
import resource
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
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


#: Linux's cpuacct controller (cgroup v1), where a process's CPU time is kept in nanoseconds.
CPUACCT = Path("/sys/fs/cgroup/cpuacct")


@contextmanager
def cpu_clock(pid: int) -> Iterator[Callable[[], float]]:
    """A reader of process ``pid``'s CPU time so far, in seconds, for the block.

    /proc gives it in clock ticks (10 ms): a row of 40 reruns of the trivial app's 4 ms is 16 ticks,
    so one tick more or less moves its ratio by 6 %. Where this process may make a cgroup of Linux's
    cpuacct controller (root, cgroup v1), the server is moved into one of its own for the block: the
    cgroup counts the CPU time of every thread the server runs, those that ended too (Streamlit runs
    each script run in a new thread), in nanoseconds. Elsewhere, /proc's ticks.
    Each reader's name says which it is: ``cgroup_nanoseconds`` or ``proc_ticks``."""
    group = CPUACCT / f"pe-benchmark-{pid}"

    def proc_ticks() -> float:
        return cpu_seconds(pid)

    def cgroup_nanoseconds() -> float:
        return int((group / "cpuacct.usage").read_text()) / 1e9

    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(pid))
    except OSError:
        if group.exists():
            group.rmdir()
        yield proc_ticks
        return
    try:
        yield cgroup_nanoseconds
    finally:
        with suppress(OSError):  # back to the root group, if it still runs, so that its own can go
            (CPUACCT / "cgroup.procs").write_text(str(pid))
        group.rmdir()


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
