"""Requests and runs that overtake each other in the browser, as they do under a class's load.

A timer's request that left the browser before the browser learned that the page changed: a
follower's poll and a presenter's heartbeat are ``run_every`` fragments, whose reruns the browser
sends on its own clock, naming the page and the query it shows. When a step opens another page, a
request already on its way names the page before. Streamlit runs it as a run of that page, and the
browser then removes the new page's own part: a follower in CI was left with the step's narration
over an empty page. The app answers such a run with a whole run of the session's view
(explorer/ui/navigation.py, ``reopen_after_a_late_timer``).

A run whose toggles the browser had not mounted yet when the next run replaced them: a toggle sent
without its value leaves the browser showing the toggle's default, which its next request sends back
as a click; a teacher's presentation mode switched itself off between two steps that way. Every run
sends a toggle's value (explorer/ui/controls.py, ``bool_control``).

Against the real server (``streamlit run app.py``) over Streamlit's own protocol (tests/st_client.py),
the lesson's steps in a real Redis that this test writes as the teacher's session would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from support.redis_harness import RedisServer, require_redis_server
from support.st_client import RunResult, StreamlitServer, StreamlitSession

from explorer import follow_store, lessons, page_list
from explorer.lessons import FOLLOW_KEY, LESSON_KEY
from explorer.share import PRESENT_KEY
from explorer.ui.classroom import SHARE_BUTTON_KEY
from explorer.ui.lesson_present import NEXT_KEY, Presented, snapshot

NAME = "sinusoid-to-rope"
LESSON = lessons.shipped_lessons()[NAME]
WHOLE_RUN = "FINISHED_SUCCESSFULLY"


@pytest.fixture(scope="module")
def redis_and_app() -> Iterator[tuple[RedisServer, StreamlitServer]]:
    require_redis_server()
    with RedisServer() as redis_server, StreamlitServer(
        "app.py", env={follow_store.REDIS_URL_VARIABLE: redis_server.url}
    ) as app:
        yield redis_server, app


def present(store: follow_store.RedisStore, follow_id: str, index: int, version: int) -> None:
    """What a teacher's session sends to the class when it presents step ``index``."""
    step = snapshot(Presented(LESSON, NAME, index))
    store.publish(follow_id, json.dumps({"version": version, **step}))


def page_of(index: int) -> str:
    """The URL path step ``index``'s page is served at ("" for Home)."""
    return page_list.address_path(LESSON.steps[index].page_info)


def assert_whole_run_of(late: RunResult, opened: RunResult) -> None:
    assert late.status == WHOLE_RUN, f"the late timer's run was {late.status}, not a whole run of the view"
    assert (late.page_url_path, late.query_string) == (opened.page_url_path, opened.query_string)
    # Every element but st.html's: a step opened by a click also takes the focus off the button (a script).
    drawn = [kind for kind in late.element_types if kind != "html"]
    assert drawn == [kind for kind in opened.element_types if kind != "html"], "the view was not drawn again, whole"
    assert not late.exceptions


def test_a_follower_s_late_poll_draws_the_step_s_view_again_whole(redis_and_app) -> None:
    redis_server, app = redis_and_app
    store = follow_store.RedisStore(redis_server.url)
    follow_id = follow_store.follow_id(follow_store.new_teacher_secret())

    async def follow() -> None:
        async with StreamlitSession(app.url) as student:
            present(store, follow_id, 0, version=1)
            first = await student.open_page("", f"{FOLLOW_KEY}={follow_id}")
            assert first.status == WHOLE_RUN and first.page_url_path == page_of(0)
            (poll,) = first.timers
            present(store, follow_id, 1, version=2)
            opened = await student.fire_timer(poll)
            assert opened.status == WHOLE_RUN and opened.page_url_path == page_of(1), "the poll did not open step 2"
            assert opened.page_url_path != first.page_url_path, "the lesson's first two steps must be two pages"
            # The poll's next tick, sent before the browser had step 2's page: it names step 1's.
            late = await student.fire_timer(poll, shown=first)
            assert_whole_run_of(late, opened)
            # And a tick on time is the poll's own short run again.
            on_time = await student.fire_timer(poll)
            assert on_time.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"
            assert on_time.page_script_hash == opened.page_script_hash

    asyncio.run(follow())


def test_a_presenter_s_late_heartbeat_draws_the_step_s_view_again_whole(redis_and_app) -> None:
    _, app = redis_and_app

    async def teach() -> None:
        async with StreamlitSession(app.url) as teacher:
            first = await teacher.open_page("", f"{LESSON_KEY}={NAME}")
            assert first.status == WHOLE_RUN and first.page_url_path == page_of(0)
            shared = await teacher.click(SHARE_BUTTON_KEY, first)  # the follow link exists: the heartbeat starts
            (heartbeat,) = shared.timers
            opened = await teacher.click(NEXT_KEY, shared)
            assert opened.status == WHOLE_RUN and opened.page_url_path == page_of(1)
            late = await teacher.fire_timer(heartbeat, shown=shared)
            assert_whole_run_of(late, opened)

    asyncio.run(teach())


def test_every_run_sends_presentation_mode_s_value_to_the_browser(redis_and_app) -> None:
    _, app = redis_and_app

    async def overtake() -> None:
        async with StreamlitSession(app.url) as teacher:
            first = await teacher.open_page("waves", f"{PRESENT_KEY}=true")
            assert first.toggle_values[PRESENT_KEY] is True
            # The next run, asked before the browser had mounted the toggle: its request carries no value of it.
            overtaking = await teacher.rerun()
            assert overtaking.status == WHOLE_RUN
            assert overtaking.toggle_values[PRESENT_KEY] is True, "the browser would show presentation mode off"

    asyncio.run(overtake())
