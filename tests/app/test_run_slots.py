"""navigation.RunSlots: at most ``count`` page runs compute at once, in the order they came,
each freed slot handed to the longest waiter, and always given back."""

from __future__ import annotations

import threading
import time

import pytest
from support.app_runs import PAGES, assert_page_ran, open_url

from explorer.ui import navigation
from explorer.ui.navigation import RunSlots


def run_threads(slots: RunSlots, count: int, work_s: float, log: list) -> None:
    """``count`` threads, started in order a few ms apart, each holding a slot for ``work_s``."""

    def run(index: int) -> None:
        with slots.held():
            log.append(("start", index, time.monotonic()))
            time.sleep(work_s)
            log.append(("end", index, time.monotonic()))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
        time.sleep(0.005)
    for thread in threads:
        thread.join(timeout=10)


def most_at_once(log: list) -> int:
    running = peak = 0
    for event, _, _ in sorted(log, key=lambda entry: entry[2]):
        running += 1 if event == "start" else -1
        peak = max(peak, running)
    return peak


@pytest.mark.parametrize("count", [1, 2, 3])
def test_at_most_count_runs_at_once(count: int) -> None:
    log: list = []
    run_threads(RunSlots(count), 8, 0.03, log)
    assert len(log) == 16
    assert most_at_once(log) == count


def test_runs_start_in_the_order_they_came() -> None:
    log: list = []
    run_threads(RunSlots(1), 6, 0.02, log)
    assert [index for event, index, _ in log if event == "start"] == list(range(6))


def test_others_waiting_says_when_a_run_waits_for_a_slot() -> None:
    slots = RunSlots(1)
    assert not slots.others_waiting()
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        with slots.held():
            holding.set()
            release.wait(5)

    def waiter() -> None:
        with slots.held():
            pass

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    threads[0].start()
    holding.wait(5)
    assert not slots.others_waiting()
    threads[1].start()
    deadline = time.monotonic() + 5
    while not slots.others_waiting() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert slots.others_waiting()
    release.set()
    for thread in threads:
        thread.join(timeout=5)
    assert not slots.others_waiting()


def test_a_freed_slot_goes_to_the_longest_waiter_not_to_a_newcomer() -> None:
    """A run that arrives as a slot frees waits behind the runs already waiting."""
    slots = RunSlots(1)
    order: list[str] = []
    first_holds, waiter_queued = threading.Event(), threading.Event()

    def first() -> None:
        with slots.held():
            first_holds.set()
            waiter_queued.wait(5)
            time.sleep(0.05)  # the waiter is waiting now
        # The slot is free (handed on): arrive again at once, a newcomer.
        with slots.held():
            order.append("newcomer")

    def waiter() -> None:
        first_holds.wait(5)
        waiter_queued.set()
        with slots.held():
            order.append("waiter")
            time.sleep(0.05)

    threads = [threading.Thread(target=first), threading.Thread(target=waiter)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert order == ["waiter", "newcomer"]


def test_a_run_that_raises_gives_its_slot_back() -> None:
    slots = RunSlots(1)
    with pytest.raises(RuntimeError), slots.held():
        raise RuntimeError("the page failed")
    acquired = threading.Event()
    thread = threading.Thread(target=lambda: (slots.held().__enter__(), acquired.set()))
    thread.start()
    assert acquired.wait(2), "the slot was not given back"
    thread.join(timeout=2)


def test_count_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RunSlots(0)


def test_a_page_run_holds_a_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's page runs take a slot (and give it back: a second run after the first works)."""
    slots = RunSlots(1)
    held: list[bool] = []
    real_held = slots.held

    def recording_held():
        held.append(True)
        return real_held()

    monkeypatch.setattr(slots, "held", recording_held)
    monkeypatch.setattr(navigation, "RUN_SLOTS", slots)
    page = PAGES[1]
    at = open_url(page.url_path)
    assert_page_ran(at, page)
    at.sidebar.slider(key="L").set_value(50).run()
    assert_page_ran(at, page)
    assert len(held) == 2


def test_finished_counts_the_runs_that_gave_their_slot_back() -> None:
    slots = RunSlots(2)
    run_threads(slots, 5, 0.01, [])
    assert slots.finished() == 5
    with pytest.raises(RuntimeError), slots.held():
        raise RuntimeError("a failing run still finishes")
    assert slots.finished() == 6


def test_the_free_heap_is_collected_and_released_once_after_a_burst_of_runs_never_during_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """startup.release_free_heap_when_idle: while runs keep finishing, nothing; after a quiet
    interval, one full garbage collection, then one release; quiet again with no new run, none."""
    import asyncio

    from explorer.ui import startup

    slots = RunSlots(2)
    monkeypatch.setattr(navigation, "RUN_SLOTS", slots)
    released: list[int] = []
    events: list[str] = []
    monkeypatch.setattr(startup.gc, "collect", lambda *args: events.append("collect") or 0)
    monkeypatch.setattr(startup, "release_free_heap",
                        lambda: released.append(slots.finished()) or events.append("release") or True)

    async def scenario() -> list[int]:
        task = asyncio.create_task(startup.release_free_heap_when_idle(0.05))
        for _ in range(8):  # a burst: a run finishes within every interval
            await asyncio.sleep(0.02)
            with slots.held():
                pass
        during = list(released)
        await asyncio.sleep(0.3)  # quiet: one release, then none
        task.cancel()
        return during

    during = asyncio.run(scenario())
    assert during == []
    assert released == [8]
    assert events == ["collect", "release"]
