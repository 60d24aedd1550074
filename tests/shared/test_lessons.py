"""The lesson file (explorer/lessons.py): its format read and written back, its links, and every
malformed or hostile file refused with one line naming the step. The shipped lessons against the
pages they open: tests/app/test_lessons_page.py."""

from __future__ import annotations

import base64
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import lessons, page_list, url_keys
from explorer.lessons import Lesson, LessonError, Step

GOOD = """# Shifts and rotations

## One pair
view: /relative?delta=10

M(δ) turns the pair by **δ·ω_i** when 0 < δ < L; see [the paper](https://arxiv.org/abs/1706.03762).

### Why
Because sin and cos of a sum expand.

## Home
view: /
"""


def test_a_lesson_file_is_read_as_written() -> None:
    lesson = lessons.parse_lesson(GOOD)
    assert lesson.title == "Shifts and rotations"
    assert [step.heading for step in lesson.steps] == ["One pair", "Home"]
    first, home = lesson.steps
    assert (first.page, first.query) == ("relative", (("delta", "10"),))
    assert first.narration.startswith("M(δ) turns") and first.narration.endswith("sin and cos of a sum expand.")
    assert (home.page, home.query, home.narration, home.view) == ("", (), "", "/")
    assert lessons.parse_lesson(lessons.lesson_text(lesson)) == lesson


def test_windows_line_ends_and_a_byte_order_mark_are_read() -> None:
    data = b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode()
    assert lessons.read_lesson_file(data) == lessons.parse_lesson(GOOD)


def test_a_full_address_from_the_share_panel_is_a_view() -> None:
    assert lessons.parse_view("https://class.example.org/similarity?ref=20&d=512") == (
        "similarity", (("ref", "20"), ("d", "512")))


# --------------------------------------------------------------------------- refused files


def one_line_error(text: str) -> str:
    with pytest.raises(LessonError) as raised:
        lessons.parse_lesson(text)
    message = str(raised.value)
    assert "\n" not in message and len(message) < 400, message
    return message


def with_step(body: str, heading: str = "The step") -> str:
    return f"# A lesson\n\n## First\nview: /matrix\n\n## {heading}\n{body}\n"


@pytest.mark.parametrize(("body", "expected"), [
    ("view: /no-such-page", "/no-such-page is not a page"),
    ("view: /matrix?no_such_key=1", "/matrix has no key no_such_key"),
    ("view: /matrix?pair=3", "/matrix has no key pair"),  # Waves' key, not the matrix's
    ("view: /matrix?d=4&d=8", "the key d is given twice"),
    ("view: /matrix?lesson=x", "belongs to a lesson"),
    ("view: /matrix?present=true", "belongs to a lesson"),
    ("The narration comes first.\nview: /matrix", "has no view"),
    ("", "has no view"),
    ("view:", "is empty"),
    ("view: /matrix\n\n<script>alert(1)</script>", "holds HTML"),
    ("view: /matrix\n\nClick <img src=x onerror=alert(1)>", "holds HTML"),
    ("view: /matrix\n\n<!-- a comment -->", "holds HTML"),
    ("view: /matrix\n\n<https://example.org>", "holds HTML"),
    ("view: /matrix\n\n![a tracker](https://example.org/pixel.png)", "holds an image"),
    ("view: /matrix\n\n[click](javascript:alert(1))", "neither http(s)"),
    ("view: /matrix\n\n[click]( data:text/html,x)", "neither http(s)"),
    ("view: /matrix\n\n# A second title", "second title"),
    ("view: /matrix\n\n" + "x" * (lessons.MAX_NARRATION_CHARS + 1), "characters; at most"),
])
def test_a_bad_step_gets_one_line_naming_it(body: str, expected: str) -> None:
    message = one_line_error(with_step(body))
    assert message.startswith("Step 2 (“The step”)"), message
    assert expected in message, message


def test_html_in_a_heading_or_the_title_is_refused() -> None:
    assert "holds HTML" in one_line_error(with_step("view: /matrix", heading="<b>bold</b>"))
    assert "holds HTML" in one_line_error("# <script>x</script>\n\n## A\nview: /\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("", "begins with its title"),
    ("## A step first\nview: /\n", "begins with its title"),
    ("# Title only\n", "no step"),
    ("# Title\nSome words before the steps.\n## A\nview: /\n", "stands between the title"),
    ("# Title\n\n## A\nview: /\x00\n", "control characters"),
    ("# " + "t" * 200 + "\n\n## A\nview: /\n", "1 to 120 characters"),
])
def test_a_bad_file_gets_one_line(text: str, expected: str) -> None:
    assert expected in one_line_error(text)


def test_thousands_of_steps_are_refused_before_any_is_read() -> None:
    text = "# Many\n" + "".join(f"## {i}\nview: /x\n" for i in range(3000))
    assert len(text) < lessons.MAX_FILE_BYTES
    assert f"3,000 steps; a lesson holds at most {lessons.MAX_STEPS}" in one_line_error(text)


def test_a_huge_file_is_refused_by_its_size() -> None:
    data = GOOD.encode() + b"x" * lessons.MAX_FILE_BYTES
    with pytest.raises(LessonError, match="at most 65,536"):
        lessons.read_lesson_file(data)
    assert "at most 65,536" in one_line_error(GOOD + "y" * lessons.MAX_FILE_BYTES)


def test_a_binary_file_is_refused() -> None:
    with pytest.raises(LessonError, match="not UTF-8 text"):
        lessons.read_lesson_file(b"\x89PNG\r\n\x1a\n\xff\xfe")


# --------------------------------------------------------------------------- links


def test_a_shipped_lesson_travels_by_its_name_and_any_other_as_its_file() -> None:
    for name, shipped in lessons.shipped_lessons().items():
        assert lessons.link_value(shipped) == name
        assert lessons.lesson_from_link(name) is shipped
    built = lessons.parse_lesson(GOOD)
    token = lessons.link_value(built)
    assert token.startswith(lessons.TOKEN_MARK) and lessons.lesson_from_link(token) == built


@pytest.mark.parametrize("value", ["no-such-lesson", "../etc/passwd", "~not*base64", "~" + "A" * 40])
def test_a_bad_link_value_gets_one_line(value: str) -> None:
    with pytest.raises(LessonError) as raised:
        lessons.lesson_from_link(value)
    assert "\n" not in str(raised.value)


def test_a_link_that_inflates_past_a_lesson_file_is_refused_without_inflating_it() -> None:
    bomb = zlib.compress(b"# T\n\n## A\nview: /\n" + b" " * (50 * lessons.MAX_FILE_BYTES), 9)
    token = lessons.TOKEN_MARK + base64.urlsafe_b64encode(bomb).decode().rstrip("=")
    assert len(token) < 8000
    with pytest.raises(LessonError, match="larger than a lesson file"):
        lessons.lesson_from_link(token)


def test_a_link_s_lesson_is_validated_as_a_file_is() -> None:
    hostile = Lesson("T", (Step("A", "matrix", (), "<script>alert(1)</script>"),))
    token = lessons.lesson_token(hostile)
    with pytest.raises(LessonError, match="holds HTML"):
        lessons.lesson_from_link(token)


# --------------------------------------------------------------------------- a lesson built in the app


def test_a_narration_line_read_back_as_a_step_is_caught_before_it_is_saved() -> None:
    built = Lesson("T", (Step("A", "matrix", (), "First line\n## not a step"),))
    with pytest.raises(LessonError, match="Step 1"):
        lessons.check_lesson(built)
    lessons.check_lesson(lessons.parse_lesson(GOOD))


ADDRESSES = [page_list.address_path(info) for info in page_list.PAGES]
WORDS = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "Zs"), exclude_characters="\x85\xa0"),
                min_size=1, max_size=40).map(str.strip).filter(bool)


@st.composite
def steps(draw: st.DrawFn) -> Step:
    address = draw(st.sampled_from(ADDRESSES))
    keys = sorted(url_keys.page_keys(lessons.Step("", address, ()).page_info.url_path) - lessons.NOT_IN_A_VIEW)
    chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=4))
    query = tuple((key, draw(st.from_regex(r"[A-Za-z0-9.,-]{1,8}", fullmatch=True))) for key in chosen)
    narration = draw(st.lists(WORDS, max_size=4).map("\n\n".join))
    return Step(draw(WORDS), address, query, narration)


@settings(max_examples=60, deadline=None)
@given(title=WORDS, chosen=st.lists(steps(), min_size=1, max_size=6))
def test_any_lesson_survives_its_file_and_its_link(title: str, chosen: list[Step]) -> None:
    lesson = Lesson(title, tuple(chosen))
    assert lessons.parse_lesson(lessons.lesson_text(lesson)) == lesson
    assert lessons.lesson_from_link(lessons.lesson_token(lesson)) == lesson
    lessons.check_lesson(lesson)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400))
def test_any_text_is_a_lesson_or_one_line(text: str) -> None:
    try:
        lesson = lessons.parse_lesson(text)
    except LessonError as error:
        assert "\n" not in str(error)
    else:
        assert lesson.steps and all(step.page_info in page_list.PAGES for step in lesson.steps)
