"""A lesson followed across replicas: two app processes behind HAProxy (deploy/haproxy.cfg,
tests/support/proxy_harness.py) sharing one real Redis (PE_REDIS_URL; tests/support/redis_harness.py),
driven by real browsers.

The teacher's browser is pinned to one replica and two students' browsers to the other, by the
stickiness cookie HAProxy would have given them: only Redis carries the teacher's step to the class.
Each Next reaches every follower (the waits printed; their budget is the benchmark's). Redis stopped
mid-lesson: the followers keep
their view and say that following paused, the teacher's lesson goes on and says the class cannot
receive the step. Redis back, empty (no persistence): the teacher's heartbeat sends the step again
and the followers show it.

Without HAProxy, redis-server or Chromium (and Playwright) this test skips, except where
PE_REQUIRE_BROWSER=1 (CI), where a missing one is a failure.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import redis
from support.browser_harness import APP_IDLE_JS, CHROMIUM, REPO_ROOT, VIEWPORT, launch_chromium
from support.proxy_harness import ReplicasBehindProxy, replica_names, sticky_cookie_name
from support.redis_harness import RedisServer, require_redis_server
from support.share_panel import follow_link
from support.st_client import fetch_page
from test_deploy import require_haproxy

from explorer import follow_store, lessons
from explorer.lessons import FOLLOW_KEY, LESSON_KEY, STEP_KEY
from explorer.ui.lesson_follow import PAUSED, POLL_S
from explorer.ui.lesson_present import HEARTBEAT_S
from explorer.ui.navigation import PAGE_FAILED

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    expect = None

pytestmark = [pytest.mark.deploy, pytest.mark.browser]

NAME = "sinusoid-to-rope"
LESSON = lessons.shipped_lessons()[NAME]
TEACHER_REPLICA, CLASS_REPLICA = replica_names(2)
FOLLOWERS = 2
#: How long a Next may take to reach every follower here. The promise (two seconds to a student's own
#: device) is a speed, measured by the benchmark (python -m benchmarks.load_test --scenarios follow);
#: in this test three Chromium tabs, two replicas, HAProxy and Redis share two cores with the rest of
#: the suite, and a tab busy drawing charts answers late: its waits are printed, not budgeted.
FOLLOW_WITHIN_S = 15.0
#: Redis stopped: a follower's next poll fails at once (the port is closed) and says so.
PAUSE_WITHIN_S = POLL_S + FOLLOW_WITHIN_S
#: Redis back: the teacher's heartbeat, then a follower's poll and its run of the step.
RESUME_WITHIN_S = HEARTBEAT_S + FOLLOW_WITHIN_S
#: A cold first load (the app's JavaScript, and the replica's first run of the step).
FIRST_LOAD_MS = 60_000
#: Every other single wait.
WAIT_MS = 30_000
CANNOT_RECEIVE = "The class's devices cannot receive this step now"
SCREENSHOTS = REPO_ROOT / "tests" / "screenshots"
#: Page headings (the h1 each page draws), for the steps of the lesson this test presents.
HEADINGS = {"waves": "Waves", "relative": "Relative", "similarity": "Similarity", "rotary": "Rotary"}

#: Whether a follower's page has opened the step whose address path is ``path`` (with a follow id and the
#: step's values; one at its default may be left out): its address is the step's from the moment the
#: follower's server opens it, before the browser has drawn it. On this 2-core machine the drawing is
#: seconds of Chromium's CPU shared by every tab of the test: it is waited for, not timed.
FOLLOWER_AT_JS = """([path, key, values]) => location.pathname.replace(/\\/$/, '') === path
    && new URLSearchParams(location.search).has(key)
    && Object.entries(values).every(([k, v]) => {
        const shown = new URLSearchParams(location.search).get(k);
        return shown === null || shown === v;
    })"""
#: Whether a follower's bar says that following paused.
PAUSED_JS = """(text) => (document.querySelector('.st-key-follow_bar')?.innerText || '').includes(text)"""
#: Every Plotly chart on the page has been drawn.
CHARTS_DRAWN_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .every((chart) => chart.querySelector('.js-plotly-plot .main-svg') !== null)"""


def _missing(reason: str) -> None:
    """Skip, or fail where these tests are required (PE_REQUIRE_BROWSER=1)."""
    if os.environ.get("PE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"PE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    require_redis_server()
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def cluster(redis_server: RedisServer) -> Iterator[ReplicasBehindProxy]:
    """Two replicas behind HAProxy, both with PE_REDIS_URL naming the test's Redis."""
    require_haproxy()
    with ReplicasBehindProxy(2, env={follow_store.REDIS_URL_VARIABLE: redis_server.url}) as replicas:
        yield replicas


# Module scope: Playwright's sync API keeps an event loop running in this thread while it is
# open, and other test files of the same process call asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        _missing(f"no browser: {CHROMIUM} is absent (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("no browser: the playwright package is not installed (pip install -r requirements-dev.txt)")
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


def replica_cookies(cluster: ReplicasBehindProxy) -> dict[str, str]:
    """The stickiness cookie's value for each replica, as HAProxy sets it on a first page load."""
    cookie, found = sticky_cookie_name(), {}
    for _ in range(4 * len(cluster.replicas)):  # round robin: a few loads meet every replica
        page = fetch_page(cluster.url)
        found[page.headers["X-Replica"]] = page.cookies[cookie]
        if len(found) == len(cluster.replicas):
            return found
    raise AssertionError(f"the proxy's page loads never met every replica: {found}")


class Tab:
    """A browser context pinned to one replica by its stickiness cookie, and its page; it notes the
    replica (X-Replica) of every response it receives through the proxy."""

    def __init__(self, browser, cluster: ReplicasBehindProxy, replica: str, cookies: dict[str, str]) -> None:
        self.replica, self.cookie = replica, {"name": sticky_cookie_name(), "value": cookies[replica]}
        self.context = browser.new_context(viewport=VIEWPORT)
        self.context.set_default_timeout(WAIT_MS)
        self.context.add_cookies([{**self.cookie, "url": cluster.url}])
        self.served_by: set[str | None] = set()
        self.context.on("response", lambda response: self.served_by.add(response.headers.get("x-replica"))
                        if response.url.startswith(cluster.url) else None)
        self.page = self.context.new_page()

    def assert_pinned(self) -> None:
        """Every response came from its replica, and its cookie still names that replica."""
        assert self.served_by == {self.replica}, (self.replica, self.served_by)
        kept = {cookie["name"]: cookie["value"] for cookie in self.context.cookies()}
        assert kept.get(self.cookie["name"]) == self.cookie["value"], (self.cookie, kept)


def assert_no_failure(page) -> None:
    """No traceback (an exception Streamlit shows) and no page that failed to draw."""
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.get_by_text(PAGE_FAILED)).to_have_count(0)


def expect_drawn(page, index: int) -> None:
    """Step ``index``'s page is drawn: its heading, the end of the run, its charts."""
    heading = HEADINGS[LESSON.steps[index].page]
    expect(page.get_by_role("heading", level=1, name=heading).first).to_be_visible()
    page.wait_for_function(APP_IDLE_JS)
    expect(page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').first).to_be_visible()
    page.wait_for_function(CHARTS_DRAWN_JS)
    assert_no_failure(page)


def expect_teacher_at(page, index: int) -> None:
    """The teacher shows step ``index``: its bar, its address (lesson and step) and its view, drawn."""
    expect(page.locator(".st-key-lesson_bar")).to_contain_text(f"step {index + 1} of {len(LESSON.steps)}")
    page.wait_for_function(
        """([path, values]) => location.pathname.replace(/\\/$/, '') === path
            && Object.entries(values).every(([k, v]) => new URLSearchParams(location.search).get(k) === v)""",
        arg=[step_path(index), {LESSON_KEY: NAME, STEP_KEY: str(index + 1)}],
    )
    expect_drawn(page, index)
    # The clicker's keys work once the lesson's key watcher has started in the page.
    page.wait_for_function("() => window.__peLessonKeys === true")


def step_path(index: int) -> str:
    page = LESSON.steps[index].page
    return f"/{page}" if page else ""


def follower_at(index: int) -> list[object]:
    return [step_path(index), FOLLOW_KEY, dict(LESSON.steps[index].query)]


def expect_follower_bar(follower: Tab, index: int) -> None:
    """The follower's bar names step ``index``."""
    expect(follower.page.locator(".st-key-follow_bar")).to_contain_text(
        f"step {index + 1} of {len(LESSON.steps)}: {LESSON.steps[index].heading}")



def wait_for_followers(followers: list[Tab], condition: str, arg: object, since: float, within_s: float,
                       what: str) -> list[float]:
    """Seconds from ``since`` until each follower's page met ``condition`` (JavaScript taking ``arg``),
    polled every few milliseconds; fails past ``within_s``."""
    waits: list[float | None] = [None] * len(followers)
    while True:
        for number, follower in enumerate(followers):
            if waits[number] is None and follower.page.evaluate(condition, arg):
                waits[number] = time.monotonic() - since
        if all(wait is not None for wait in waits):
            return waits  # type: ignore[return-value]  # none is None
        if time.monotonic() - since > within_s:
            shown = [(f.page.url, f.page.locator(".st-key-follow_bar").inner_text()) for f in followers]
            raise AssertionError(f"not every follower {what} within {within_s:g} s (waits so far {waits}): {shown}")
        time.sleep(0.02)


def wait_for_step(followers: list[Tab], index: int, since: float, within_s: float) -> list[float]:
    """Seconds from ``since`` until each follower opened step ``index`` (its address), then its bar says so."""
    waits = wait_for_followers(followers, FOLLOWER_AT_JS, follower_at(index), since, within_s,
                               f"opened step {index + 1}")
    for follower in followers:
        expect_follower_bar(follower, index)
    return waits


def test_the_class_on_another_replica_follows_through_redis_pauses_without_it_and_resumes(
    browser, redis_server: RedisServer, cluster: ReplicasBehindProxy
) -> None:
    """The browser first: without Chromium the test skips before any server starts."""
    cookies = replica_cookies(cluster)
    assert set(cookies) == {TEACHER_REPLICA, CLASS_REPLICA} and cookies[TEACHER_REPLICA] != cookies[CLASS_REPLICA]
    tabs: list[Tab] = []
    try:
        tabs.append(teacher := Tab(browser, cluster, TEACHER_REPLICA, cookies))
        followers = [Tab(browser, cluster, CLASS_REPLICA, cookies) for _ in range(FOLLOWERS)]
        tabs += followers
        page = teacher.page
        page.goto(f"{cluster.url}/?lesson={NAME}", timeout=FIRST_LOAD_MS)
        expect_teacher_at(page, 0)
        link = follow_link(page)
        parts = urlsplit(link)
        assert f"{parts.scheme}://{parts.netloc}" == cluster.url, (link, cluster.url)  # the proxy's address
        assert list(parse_qs(parts.query)) == [FOLLOW_KEY], link
        key = follow_store.REDIS_KEY_PREFIX + parse_qs(parts.query)[FOLLOW_KEY][0]

        # The class opens the link (both loads at once: a load is seconds of Chromium's CPU).
        for follower in followers:
            follower.page.goto(link, wait_until="commit", timeout=FIRST_LOAD_MS)
        for follower in followers:
            follower.page.wait_for_function(FOLLOWER_AT_JS, arg=follower_at(0), timeout=FIRST_LOAD_MS)
            expect_follower_bar(follower, 0)
            expect_drawn(follower.page, 0)
        # Each tab's every response came from its replica, and HAProxy holds the teacher's WebSocket
        # on one replica and the class's two on the other: only Redis joins them.
        for tab in tabs:
            tab.assert_pinned()
        open_sockets = {TEACHER_REPLICA: "1", CLASS_REPLICA: str(FOLLOWERS)}
        cluster.proxy.wait_until(
            lambda servers: {name: servers[name]["scur"] for name in open_sockets} == open_sockets, 15,
            f"one WebSocket open to {TEACHER_REPLICA}, {FOLLOWERS} to {CLASS_REPLICA}",
        )

        # Three Nexts, by the clicker's Page Down: every follower opens each.
        waits = []
        for index in range(1, 4):
            started = time.monotonic()
            page.keyboard.press("PageDown")
            waits.append(wait_for_step(followers, index, started, FOLLOW_WITHIN_S))
            expect_teacher_at(page, index)
            for follower in followers:
                expect_drawn(follower.page, index)
        print(f"\nfollowers' waits after each Next (s): {[[round(w, 2) for w in each] for each in waits]}")

        # Redis stops mid-lesson: the followers keep their view and say that following paused...
        kept = [follower.page.url for follower in followers]
        redis_server.stop()
        stopped = time.monotonic()
        paused = wait_for_followers(followers, PAUSED_JS, "Following paused", stopped, PAUSE_WITHIN_S,
                                    "said that following paused")
        print(f"followers' waits until 'Following paused' (s): {[round(w, 2) for w in paused]}")
        # ...and the teacher's lesson goes on: the next step, drawn, and a word that the class cannot receive it.
        page.keyboard.press("PageDown")
        expect_teacher_at(page, 4)
        # In the lesson's bar, under Next, where the teacher looks (not below the page, 6000 px down).
        expect(page.locator(".st-key-lesson_bar").get_by_text(CANNOT_RECEIVE)).to_be_in_viewport()
        for follower in followers:
            expect(follower.page.get_by_text(PAUSED)).to_be_visible()
            expect_drawn(follower.page, 3)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        # For a person to look at: what a student and the teacher see while Redis is down (the top of the page).
        followers[0].page.screenshot(path=str(SCREENSHOTS / "lesson-replicas-follower-paused.png"))
        page.screenshot(path=str(SCREENSHOTS / "lesson-replicas-teacher-store-down.png"))
        assert [follower.page.url for follower in followers] == kept

        # Redis back, empty: the teacher's heartbeat sends the step again, and the class opens it.
        redis_server.start()
        restarted = time.monotonic()
        resumed = wait_for_step(followers, 4, restarted, RESUME_WITHIN_S)
        print(f"followers' waits after Redis came back (s): {[round(w, 2) for w in resumed]}")
        for follower in followers:
            expect(follower.page.get_by_text("Following paused")).to_have_count(0)
            expect_drawn(follower.page, 4)
        expect(page.get_by_text(CANNOT_RECEIVE)).to_have_count(0, timeout=(HEARTBEAT_S + FOLLOW_WITHIN_S) * 1000)
        expect_teacher_at(page, 4)
        assert json.loads(redis.Redis.from_url(redis_server.url).get(key))["index"] == 4
        for tab in tabs:
            tab.assert_pinned()
    finally:
        for tab in tabs:
            tab.context.close()
