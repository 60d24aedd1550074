"""benchmarks/server_process.cpu_clock reads a server's CPU time, its ended threads' too: a child burns
a known amount of CPU in a thread that ends, and the clock must have counted it (CPU time against CPU
time the child measured itself: no wall-clock timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import server_process

#: How far /proc's CPU time (10 ms ticks, sampled) may stray from what the child measured itself.
PROC_TICKS_SLACK_S = 0.05
#: Waits for a line, burns CPU in a thread of its own that then ends, prints the CPU time it burned.
CHILD = """
import sys, threading, time
sys.stdin.readline()
start = time.process_time()
def burn():
    begun = time.thread_time()
    while time.thread_time() - begun < 0.3:
        pass
worker = threading.Thread(target=burn)
worker.start()
worker.join()
print(time.process_time() - start, flush=True)
sys.stdin.readline()
"""


def burned_and_counted(clock_of) -> tuple[float, float, str]:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        with clock_of(child.pid) as clock:
            before = clock()
            child.stdin.write("go\n")
            child.stdin.flush()
            burned = float(child.stdout.readline())
            counted = clock() - before
        return burned, counted, clock.__name__
    finally:
        child.communicate("end\n", timeout=30)


def test_the_clock_counts_the_cpu_of_a_thread_that_ended() -> None:
    burned, counted, name = burned_and_counted(server_process.cpu_clock)
    # /proc's ticks are sampled at the timer's interrupts: a few either way over the 30 of a 0.3 s burn.
    ticks = 0.0 if name == "cgroup_nanoseconds" else PROC_TICKS_SLACK_S
    assert burned >= 0.3
    assert burned - ticks <= counted <= burned + 0.05 + ticks, (name, burned, counted)
    assert not list(server_process.CPUACCT.glob("pe-benchmark-*")), "a cgroup was left behind"


def test_without_a_cgroup_the_clock_reads_proc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(server_process, "CPUACCT", tmp_path / "no-cpuacct-here")
    burned, counted, name = burned_and_counted(server_process.cpu_clock)
    assert name == "proc_ticks"
    assert burned - PROC_TICKS_SLACK_S <= counted <= burned + 0.05 + PROC_TICKS_SLACK_S, (burned, counted)
