"""Lessons through streamlit.testing: every shipped lesson's steps open their pages with their keys and
no notice; a lesson built in the app, downloaded and uploaded back; hostile files; presenting by
Next and Previous; and a class following the teacher's step from the shared store (this process's
memory, and a real Redis stopped and started again). In a browser: tests/browser/test_lesson_browser.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qsl

import pytest
from streamlit.testing.v1 import AppTest
from support.app_runs import open_url, ran_page_path
from support.redis_harness import RedisServer

from explorer import follow_store, lessons, page_list
from explorer.lessons import FOLLOW_KEY, LESSON_KEY, STEP_KEY
from explorer.ui import lesson_follow, lesson_present

LESSONS = page_list.LESSONS.url_path
SHIPPED = lessons.shipped_lessons()


def notices(at: AppTest) -> list:
    """The URL's notices (explorer/ui/controls.show_notices), not a page's own warnings (a pitfall)."""
    return [w for w in at.warning if w.icon == ":material/link_off:"]


def lesson_bar(at: AppTest) -> str:
    return next(m.value for m in at.markdown if " · step " in m.value)


def assert_at_step(at: AppTest, lesson: lessons.Lesson, index: int) -> None:
    """The session shows step ``index``: its page ran, every key of its view holds the view's value (read,
    not refused), the lesson's bar says where it stands, and no notice or error is on the page."""
    step = lesson.steps[index]
    assert not at.exception, [e.value for e in at.exception]
    assert ran_page_path(at) == step.page_info.path
    assert not notices(at) and not at.error, [w.value for w in (*notices(at), *at.error)]
    written = dict(at.query_params)
    for key, value in step.query:
        assert written.get(key, value) == value, (key, written)  # a value equal to its default is left out
    assert written[STEP_KEY] == str(index + 1)
    assert f"step {index + 1} of {len(lesson.steps)}" in lesson_bar(at)
    if step.narration:
        assert any(m.value == step.narration for m in at.markdown)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_step_of_a_shipped_lesson_opens_its_view_with_no_notice(name: str) -> None:
    lesson = SHIPPED[name]
    at = open_url("", {LESSON_KEY: name})
    for index in range(len(lesson.steps)):
        if index:
            at.button(key=lesson_present.NEXT_KEY).click().run()
        assert_at_step(at, lesson, index)
    assert at.button(key=lesson_present.NEXT_KEY).disabled
    at.button(key=lesson_present.PREVIOUS_KEY).click().run()
    assert_at_step(at, lesson, len(lesson.steps) - 2)


@pytest.mark.parametrize("name", SHIPPED)
def test_each_step_s_address_opens_that_step_in_a_new_session(name: str) -> None:
    """A teacher's address (a reload, a step shared) is the step: its keys, read afresh."""
    lesson = SHIPPED[name]
    for index, step in enumerate(lesson.steps):
        at = open_url(step.page, {**dict(step.query), LESSON_KEY: name, STEP_KEY: str(index + 1)})
        assert_at_step(at, lesson, index)


def test_a_step_opens_its_view_whatever_the_session_held_before() -> None:
    """Next reads every control from the step's address: a value the visitor moved on the step
    before, and that the next step leaves out, goes back to its default."""
    lesson = lessons.parse_lesson("# T\n\n## A\nview: /relative?delta=7\n\n## B\nview: /relative\n")
    at = open_url("", {LESSON_KEY: lessons.link_value(lesson)})
    assert at.slider(key="delta").value == 7
    at.slider(key="delta").set_value(9).run()
    at.button(key=lesson_present.NEXT_KEY).click().run()
    assert at.slider(key="delta").value == 1 and "delta" not in at.query_params


def test_leaving_a_lesson_keeps_the_view_and_drops_the_lesson() -> None:
    at = open_url("", {LESSON_KEY: "sinusoid-to-rope"})
    at.button(key=lesson_present.LEAVE_KEY).click().run()
    assert not any(" · step " in m.value for m in at.markdown)
    assert LESSON_KEY not in at.query_params and STEP_KEY not in at.query_params
    assert ran_page_path(at) == SHIPPED["sinusoid-to-rope"].steps[0].page_info.path


@pytest.mark.parametrize(("query", "notice"), [
    ({LESSON_KEY: "no-such-lesson"}, "is no lesson of this app"),
    ({LESSON_KEY: "~garbage"}, "is damaged"),
    ({LESSON_KEY: "sinusoid-to-rope", STEP_KEY: "99"}, None),
    ({FOLLOW_KEY: "not-an-id"}, "follow link is damaged"),
])
def test_a_bad_lesson_link_says_so_in_one_line_and_the_app_works(query: dict[str, str], notice: str | None) -> None:
    at = open_url("", query)
    assert not at.exception
    if notice is None:  # a step past the end is the last step
        lesson = SHIPPED["sinusoid-to-rope"]
        assert at.query_params[STEP_KEY] == str(len(lesson.steps))
        return
    assert any(notice in w.value for w in notices(at)), [w.value for w in at.warning]
    assert ran_page_path(at) == page_list.HOME.path


# --------------------------------------------------------------------------- building a lesson


def add_view(at: AppTest) -> None:
    at.button(key=lesson_present.ADD_KEY).click().run()
    assert not at.exception, [e.value for e in at.exception]


def open_lessons_page(at: AppTest) -> AppTest:
    at.switch_page(page_list.LESSONS.path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_lesson_built_in_the_app_is_downloaded_and_uploaded_as_the_same_steps() -> None:
    at = open_url("relative", {"delta": "10", "d": "16"})
    add_view(at)
    at.switch_page("pages/similarity_page.py").run()
    at.slider(key="ref").set_value(5).run()
    add_view(at)
    at.switch_page("pages/matrix_page.py").run()
    add_view(at)
    open_lessons_page(at)
    assert [t.value for t in at.text_input if t.key.startswith("lesson_heading_")] == [
        "Relative positions", "Similarity", "Encoding matrix"]
    at.text_input(key="lesson_title").input("Shifts, built here").run()
    at.text_input(key="lesson_heading_0").input("A shift is a rotation").run()
    at.text_area(key="lesson_narration_0").input("M(δ) turns each pair by **δ·ω_i**.").run()
    at.button(key="lesson_down_0").click().run()  # the shift second
    at.button(key="lesson_remove_2").click().run()  # the matrix removed
    draft = at.session_state[lesson_present.DRAFT]
    assert [step.heading for step in draft.steps] == ["Similarity", "A shift is a rotation"]
    assert dict(draft.steps[0].query) == {"d": "16", "ref": "5"}
    assert dict(draft.steps[1].query) == {"delta": "10", "d": "16"}
    assert draft.steps[1].narration == "M(δ) turns each pair by **δ·ω_i**."
    (download,) = at.get("download_button")
    text = download.proto.data if hasattr(download.proto, "data") else None
    file_text = lessons.lesson_text(draft)
    assert text is None or text == file_text

    again = open_url(LESSONS)
    again.file_uploader(key="lesson_file").upload("shifts.md", file_text.encode()).run()
    assert not again.exception and any("Opened “Shifts, built here”, 2 steps" in s.value for s in again.success)
    assert again.session_state[lesson_present.DRAFT] == draft
    again.button(key="present_draft").click().run()
    assert_at_step(again, draft, 0)
    again.button(key=lesson_present.NEXT_KEY).click().run()
    assert_at_step(again, draft, 1)


def test_a_built_lesson_s_link_opens_it() -> None:
    at = open_url("relative", {"delta": "10"})
    add_view(at)
    open_lessons_page(at)
    (link,) = [c.value for c in at.code if f"{LESSON_KEY}=" in c.value] or [None]
    draft = at.session_state[lesson_present.DRAFT]
    value = lessons.link_value(draft)
    if link is not None:  # AppTest has no browser address; the value is what the link carries
        assert dict(parse_qsl(link.split("?", 1)[1]))[LESSON_KEY] == value
    opened = open_url(LESSONS, {LESSON_KEY: value})
    assert_at_step(opened, draft, 0)


HOSTILE = {
    "script.md": b"# T\n\n## A\nview: /matrix\n\n<script>alert(1)</script>\n",
    "image.md": b"# T\n\n## A\nview: /matrix\n\n![x](https://tracker.example/p.png)\n",
    "keys.md": b"# T\n\n## A\nview: /matrix?evil=1\n",
    "huge.md": b"# T\n\n## A\nview: /\n\n" + b"x" * (lessons.MAX_FILE_BYTES + 1),
    "many.md": b"# T\n" + b"".join(b"## s\nview: /\n" for _ in range(2000)),
    "binary.md": bytes(range(256)),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_lesson_file_gets_one_line_and_nothing_of_it_is_shown(name: str) -> None:
    at = open_url(LESSONS)
    at.file_uploader(key="lesson_file").upload(name, HOSTILE[name]).run()
    assert not at.exception
    (error,) = at.error
    assert error.value.startswith(f"{name}: ") and "\n" not in error.value
    assert lesson_present.DRAFT not in at.session_state
    shown = " ".join(str(element.value) for element in (*at.markdown, *at.caption, *at.text_input, *at.text_area))
    assert "<script>" not in shown and "tracker.example" not in shown and "evil" not in shown


def test_html_typed_into_a_narration_is_refused_before_it_is_presented_or_saved() -> None:
    at = open_url("matrix")
    add_view(at)
    open_lessons_page(at)
    at.text_area(key="lesson_narration_0").input("<img src=x onerror=alert(1)>").run()
    assert any("holds HTML" in e.value for e in at.error)
    assert at.button(key="present_draft").disabled
    assert at.get("download_button")[0].proto.disabled


# --------------------------------------------------------------------------- following the teacher


@pytest.fixture
def memory_store(monkeypatch: pytest.MonkeyPatch) -> Iterator[follow_store.MemoryStore]:
    store = follow_store.MemoryStore()
    monkeypatch.setattr(follow_store, "shared_store", lambda: store)
    yield store


def teacher_with_follow_link(name: str) -> tuple[AppTest, str]:
    teacher = open_url("", {LESSON_KEY: name})
    teacher.button(key="share_view").click().run()
    assert not teacher.exception, [e.value for e in teacher.exception]
    return teacher, follow_store.follow_id(teacher.session_state[lesson_present.SECRET])


def follower_step(follower: AppTest) -> tuple[str, dict[str, str]]:
    query = {k: v for k, v in follower.query_params.items() if k != FOLLOW_KEY}
    return ran_page_path(follower), query


def test_a_follower_follows_each_next_explores_and_returns(memory_store: follow_store.MemoryStore) -> None:
    lesson = SHIPPED["sinusoid-to-rope"]
    teacher, follow = teacher_with_follow_link("sinusoid-to-rope")
    follower = open_url("", {FOLLOW_KEY: follow})
    for index in range(1, 4):
        teacher.button(key=lesson_present.NEXT_KEY).click().run()
        follower.run()  # what the follower's poll does when the step changed (a browser: tests/browser)
        page, query = follower_step(follower)
        step = lesson.steps[index]
        assert page == step.page_info.path
        assert all(query.get(key, value) == value for key, value in step.query), (query, step.query)
        assert any(m.value == step.narration for m in follower.markdown)
        assert not notices(follower)
    # Exploring: the follower's own value, kept through the teacher's next step.
    follower.slider(key="ref").set_value(3).run()
    teacher.button(key=lesson_present.NEXT_KEY).click().run()
    follower.run()
    assert follower.query_params["ref"] == "3"
    assert any("The teacher is at step 5 of 7" in m.value for m in follower.markdown)
    follower.button(key=lesson_follow.RETURN_KEY).click().run()
    assert follower_step(follower)[0] == lesson.steps[4].page_info.path
    assert FOLLOW_KEY in follower.query_params and LESSON_KEY not in follower.query_params
    # The follower changed nothing of the teacher's: the same step, the same version.
    published = json.loads(memory_store.read(follow))
    assert published["index"] == 4 and lesson_present.SECRET not in follower.session_state


def test_a_follower_reads_the_step_and_nothing_else(memory_store: follow_store.MemoryStore) -> None:
    teacher, follow = teacher_with_follow_link("stretching-context")
    published = json.loads(memory_store.read(follow))
    assert set(published) == {"version", "title", "index", "count", "heading", "narration", "page", "query"}
    assert teacher.session_state[lesson_present.SECRET] not in memory_store.read(follow)
    assert follow_store.follow_id(follow) != follow  # the link does not give the secret's power


def test_a_follower_waits_for_a_lesson_and_is_told_when_it_ends(memory_store: follow_store.MemoryStore) -> None:
    follow = follow_store.follow_id(follow_store.new_teacher_secret())
    follower = open_url("", {FOLLOW_KEY: follow})
    assert not follower.exception and any("Waiting for the teacher" in i.value for i in follower.info)
    teacher, follow = teacher_with_follow_link("sinusoid-to-rope")
    follower = open_url("", {FOLLOW_KEY: follow})
    teacher.button(key=lesson_present.LEAVE_KEY).click().run()
    follower.run()
    assert any("lesson has ended" in i.value for i in follower.info)


def test_with_redis_stopped_the_class_keeps_its_view_and_the_lesson_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    with RedisServer() as redis_server:
        store = follow_store.RedisStore(redis_server.url)
        monkeypatch.setattr(follow_store, "shared_store", lambda: store)
        lesson = SHIPPED["sinusoid-in-eight-views"]
        teacher, follow = teacher_with_follow_link("sinusoid-in-eight-views")
        follower = open_url("", {FOLLOW_KEY: follow})
        assert follower_step(follower)[0] == lesson.steps[0].page_info.path
        redis_server.stop()
        teacher.button(key=lesson_present.NEXT_KEY).click().run()
        assert ran_page_path(teacher) == lesson.steps[1].page_info.path and not teacher.exception
        assert any("cannot receive this step" in c.value for c in teacher.caption)
        follower.run()
        assert follower_step(follower)[0] == lesson.steps[0].page_info.path
        assert any(lesson_follow.PAUSED in w.value for w in follower.warning)
        redis_server.start()
        teacher.run()  # the heartbeat's work: the step sent again
        follower.run()
        assert follower_step(follower)[0] == lesson.steps[1].page_info.path
        assert not follower.warning


@pytest.mark.parametrize("stored", [
    {"page": "../../etc", "query": {}},
    {"page": "matrix", "query": {"evil": "1"}},
    {"page": "matrix", "query": {"d": ["4"]}},
    {"page": "matrix", "query": "d=4"},
    {"page": "lessons", "query": {}},
], ids=["path", "key", "value", "query", "lessons"])
def test_a_step_in_the_store_that_is_no_view_of_this_app_is_not_opened(
    memory_store: follow_store.MemoryStore, stored: dict
) -> None:
    """The store may be a Redis that others reach: what a follower opens is checked as a lesson's view."""
    follow = follow_store.follow_id(follow_store.new_teacher_secret())
    memory_store.publish(follow, json.dumps({"version": 1, "title": "T", "index": 0, "count": 1, "heading": "H",
                                             "narration": "", **stored}))
    follower = open_url("", {FOLLOW_KEY: follow})
    assert not follower.exception and not follower.error
    assert ran_page_path(follower) == page_list.HOME.path
