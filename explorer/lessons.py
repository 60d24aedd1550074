"""A lesson: a teacher's sequence of views of this app, each with a few sentences of narration,
kept as a small Markdown file, without Streamlit.

The file, as ``lesson_text`` writes it and ``parse_lesson`` reads it::

    # From the sinusoid to RoPE

    ## A shift is a rotation
    view: /relative?delta=10

    The transition matrix M(δ) turns every sine/cosine pair by its own angle...

    ## The same rotation inside attention
    view: /rotary?qpos=7

    ...

- the first line that is not blank is the lesson's title, after ``# ``;
- each step begins with a heading, after ``## ``, and the next line that is not blank is its view,
  ``view: `` and this app's path and query keys as the Share panel writes them (``/`` is Home);
- the rest of the step, up to the next ``## ``, is its narration: Markdown, never HTML (a tag, an
  image or a link other than http(s) or one of this app's paths is refused, not shown as text),
  and ``###`` headings of its own if it wants them.

A lesson travels in a link as ``lesson=<name>`` for one the app ships (explorer/data/lessons/), or
as its file, compressed (``lesson_token``) when the link stays short enough for a QR code; a longer
lesson travels as its file. Every file is validated here, at the edge: each refusal is a
``LessonError`` whose message is one line naming the step, and nothing of a refused file is shown.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from explorer import page_list, url_keys

#: The largest lesson file read, in bytes of UTF-8: forty steps of a few paragraphs fit in a tenth of it.
MAX_FILE_BYTES = 64 * 1024
#: At most this many steps: a lecture's views, not a crawl of the app.
MAX_STEPS = 40
#: A title or a step's heading, in characters.
MAX_HEADING_CHARS = 120
#: A step's narration, in characters: a few sentences above the view, read from the back row.
MAX_NARRATION_CHARS = 2000
#: A step's view (path and query), in characters.
MAX_VIEW_CHARS = 1000

#: A lesson travels in its link when its ``lesson=`` value is at most this long: the address, with a
#: step's own keys, then stays within the Share panel's 2,000 characters and a QR code. A longer
#: lesson travels as its file.
MAX_LINK_VALUE_CHARS = 1400

#: The URL keys of a lesson being presented or followed, which no step's view may hold: a step is a
#: view of a page, and presentation mode is how the teacher's screen looks, not part of the view.
LESSON_KEY, STEP_KEY, FOLLOW_KEY = "lesson", "step", "follow"
NOT_IN_A_VIEW = frozenset({LESSON_KEY, STEP_KEY, FOLLOW_KEY, "present"})

#: Where the lessons the app ships are kept, one ``<name>.md`` each.
SHIPPED_DIR = Path(__file__).parent / "data" / "lessons"
#: A shipped lesson's name, as ``lesson=<name>`` carries it.
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: A compressed lesson in a link: this mark, then base64url without padding.
TOKEN_MARK = "~"

_VIEW_LINE = re.compile(r"view:\s*(\S*)\s*", re.IGNORECASE)
#: HTML of any kind: a tag, a closing tag, a comment or declaration; an autolink is a tag too.
_HTML = re.compile(r"<(?:[/?]?[A-Za-z]|!)")
#: A Markdown image, shown by the browser from wherever it points.
_IMAGE = re.compile(r"!\[")
#: A Markdown link's target, and the schemes allowed in it.
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]*)")
_SAFE_TARGET = re.compile(r"(?:https?://|/)", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class LessonError(ValueError):
    """A lesson file or link this app does not present; its message is one line naming the step."""


@dataclass(frozen=True)
class Step:
    """One view of a lesson: a heading, the page (its address path: "" for Home) and its query keys
    as a link carries them, and the narration shown above it (Markdown)."""

    heading: str
    page: str
    query: tuple[tuple[str, str], ...]
    narration: str = ""

    @property
    def view(self) -> str:
        """The view as a lesson file and a link write it: ``/waves?d=64&pair=3``."""
        path = f"/{self.page}"
        return f"{path}?{urlencode(self.query)}" if self.query else path

    @property
    def page_info(self) -> page_list.PageInfo:
        """The page this step opens."""
        return _PAGE_BY_ADDRESS[self.page]


@dataclass(frozen=True)
class Lesson:
    """A title and its steps, in the order they are presented."""

    title: str
    steps: tuple[Step, ...]


_PAGE_BY_ADDRESS = {page_list.address_path(info): info for info in page_list.PAGES}


def page_title(page: str) -> str:
    """The title of the page at address path ``page`` ("" for Home)."""
    return _PAGE_BY_ADDRESS[page].title


def markdown_text(text: str) -> str:
    r"""``text`` as Markdown shows it literally: its Markdown characters escaped.

    >>> print(markdown_text("*Seed 001*: [sin | cos]"))
    \*Seed 001\*: \[sin \| cos\]
    """
    return "".join(f"\\{char}" if char in _MARKDOWN_CHARS else char for char in text)


_MARKDOWN_CHARS = frozenset("\\`*_{}[]()#+-.!|<>~$")


def _one_line(text: str, limit: int = 60) -> str:
    """``text`` as a message may quote it: one line, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _where(number: int, heading: str) -> str:
    return f"Step {number} (“{_one_line(heading, 40)}”)"


def parse_view(view: str, where: str = "The view") -> tuple[str, tuple[tuple[str, str], ...]]:
    """(page, query) of a view written as this app's path and query (``/waves?d=64``, or a full
    address the Share panel gave: its scheme and host are dropped). ``where`` begins each message.

    >>> parse_view("/similarity?ref=20&d=512")
    ('similarity', (('ref', '20'), ('d', '512')))
    >>> parse_view("/")
    ('', ())
    """
    if not view:
        raise LessonError(f"{where} is empty: write its page and keys, as /waves?d=64.")
    if len(view) > MAX_VIEW_CHARS:
        raise LessonError(f"{where} is {len(view):,} characters long; at most {MAX_VIEW_CHARS:,}.")
    try:
        parts = urlsplit(view)
    except ValueError as error:
        raise LessonError(f"{where} is not a path and query ({error}).") from None
    page = parts.path.strip("/")
    if page not in _PAGE_BY_ADDRESS:
        known = ", ".join(f"/{address}" for address in _PAGE_BY_ADDRESS)
        raise LessonError(f"{where}: /{_one_line(page, 40)} is not a page of this app; its pages: {known}.")
    query = tuple(parse_qsl(parts.query, keep_blank_values=True))
    known_keys = url_keys.page_keys(_PAGE_BY_ADDRESS[page].url_path) - NOT_IN_A_VIEW
    seen: set[str] = set()
    for key, _ in query:
        if key in NOT_IN_A_VIEW:
            raise LessonError(f"{where}: {_one_line(key, 30)}= belongs to a lesson, not to a view; remove it.")
        if key not in known_keys:
            raise LessonError(
                f"{where}: /{page} has no key {_one_line(key, 30)}; its keys: {', '.join(sorted(known_keys))}."
            )
        if key in seen:
            raise LessonError(f"{where}: the key {key} is given twice.")
        seen.add(key)
    return page, query


def _check_narration(narration: str, where: str) -> None:
    if len(narration) > MAX_NARRATION_CHARS:
        raise LessonError(f"{where}: its narration is {len(narration):,} characters; at most {MAX_NARRATION_CHARS:,}.")
    if (found := _HTML.search(narration)) is not None:
        raise LessonError(
            f"{where}: its narration holds HTML ({_one_line(narration[found.start():found.start() + 12], 12)}); "
            "a lesson is Markdown only."
        )
    if _IMAGE.search(narration):
        raise LessonError(f"{where}: its narration holds an image; a lesson shows the app's views, not pictures.")
    for target in _LINK_TARGET.findall(narration):
        if not _SAFE_TARGET.match(target):
            raise LessonError(
                f"{where}: the link to {_one_line(target, 30)} is neither http(s) nor one of this app's paths."
            )


def _check_heading(heading: str, where: str) -> None:
    if not heading:
        raise LessonError(f"{where} has no heading after its ##.")
    if len(heading) > MAX_HEADING_CHARS:
        raise LessonError(f"{where}: its heading is {len(heading):,} characters; at most {MAX_HEADING_CHARS}.")
    _check_narration(heading, where)


def parse_lesson(text: str) -> Lesson:
    """The lesson a file holds (the format in this module's docstring); LessonError otherwise.

    >>> lesson = parse_lesson("# Shifts\\n\\n## One pair\\nview: /relative?delta=10\\n\\nM(δ) turns the pair.\\n")
    >>> lesson.title, lesson.steps[0].view, lesson.steps[0].narration
    ('Shifts', '/relative?delta=10', 'M(δ) turns the pair.')
    """
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_FILE_BYTES:
        raise LessonError(f"The lesson is {size:,} bytes; a lesson file holds at most {MAX_FILE_BYTES:,}.")
    if _CONTROL.search(text):
        raise LessonError("The lesson holds control characters: is it a text file?")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    written = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if not written or not written[0][1].startswith("# "):
        raise LessonError("A lesson begins with its title on a line of its own: # Title.")
    title = written[0][1][2:].strip()
    if not title or len(title) > MAX_HEADING_CHARS:
        raise LessonError(f"The lesson's title must be 1 to {MAX_HEADING_CHARS} characters.")
    _check_narration(title, "The title")
    starts = [index for index, line in enumerate(lines) if line.startswith("## ") or line.rstrip() == "##"]
    if not starts:
        raise LessonError("The lesson has no step: begin each one with ## and its heading.")
    if len(starts) > MAX_STEPS:
        raise LessonError(f"The lesson has {len(starts):,} steps; a lesson holds at most {MAX_STEPS}.")
    between = [line for line in lines[written[0][0]: starts[0]] if line.strip()]
    if between:
        raise LessonError(
            f"The line “{_one_line(between[0], 40)}” stands between the title and the first step; "
            "begin the step with ##."
        )
    steps = []
    for number, (start, end) in enumerate(zip(starts, [*starts[1:], len(lines)], strict=True), 1):
        heading = lines[start][2:].strip()
        where = _where(number, heading)
        _check_heading(heading, where)
        body = lines[start + 1: end]
        if any(line.startswith("# ") or line.rstrip() == "#" for line in body):
            raise LessonError(f"{where} holds a second title (#): a lesson has one; use ### inside a step.")
        filled = [index for index, line in enumerate(body) if line.strip()]
        view_line = _VIEW_LINE.fullmatch(body[filled[0]].strip()) if filled else None
        if view_line is None:
            raise LessonError(f"{where} has no view: its first line must be “view: /page?keys”.")
        page, query = parse_view(view_line.group(1), where)
        narration = "\n".join(body[filled[0] + 1:]).strip("\n").rstrip()
        _check_narration(narration, where)
        steps.append(Step(heading, page, query, narration))
    return Lesson(title, tuple(steps))


def lesson_text(lesson: Lesson) -> str:
    """The lesson as its file: ``parse_lesson(lesson_text(lesson)) == lesson``."""
    parts = [f"# {lesson.title}\n"]
    for step in lesson.steps:
        parts.append(f"\n## {step.heading}\nview: {step.view}\n")
        if step.narration:
            parts.append(f"\n{step.narration}\n")
    return "".join(parts)


def check_lesson(lesson: Lesson) -> None:
    """LessonError unless ``lesson`` (built in the app, its text typed) is read back from its file as
    itself: every field within its limits, no HTML, and no narration line that a file reads as a
    title or a new step."""
    if len(lesson.steps) > MAX_STEPS:
        raise LessonError(f"The lesson has {len(lesson.steps):,} steps; a lesson holds at most {MAX_STEPS}.")
    for number, step in enumerate(lesson.steps, 1):
        where = _where(number, step.heading)
        _check_heading(step.heading, where)
        _check_narration(step.narration, where)
        for line in step.narration.split("\n"):
            if line.startswith("# ") or line.startswith("## ") or line.rstrip() in ("#", "##"):
                raise LessonError(
                    f"{where}: its narration's line “{_one_line(line, 30)}” would be read as a title or a new "
                    "step; use ### for a heading inside a step."
                )
    if parse_lesson(lesson_text(lesson)) != lesson:
        raise LessonError("The lesson would not be read back as it is: check its title and headings.")


def read_lesson_file(data: bytes) -> Lesson:
    """The lesson an uploaded file holds; LessonError (one line) for anything else."""
    if len(data) > MAX_FILE_BYTES:
        raise LessonError(f"The file is {len(data):,} bytes; a lesson file holds at most {MAX_FILE_BYTES:,}.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LessonError("The file is not UTF-8 text: a lesson is a Markdown file (.md).") from None
    return parse_lesson(text)


def lesson_token(lesson: Lesson) -> str:
    """The lesson as a link's ``lesson=`` value: its file, compressed, in base64url after TOKEN_MARK."""
    packed = zlib.compress(lesson_text(lesson).encode("utf-8"), 9)
    return TOKEN_MARK + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def _from_token(token: str) -> Lesson:
    data = token[len(TOKEN_MARK):]
    try:
        packed = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        inflate = zlib.decompressobj()
        # Never more than a lesson file's size, however the link was made.
        text = inflate.decompress(packed, MAX_FILE_BYTES + 1)
    except (binascii.Error, ValueError, zlib.error):
        raise LessonError("The link's lesson is damaged: open it again from the teacher's link or file.") from None
    if len(text) > MAX_FILE_BYTES or inflate.unconsumed_tail:
        raise LessonError(f"The link's lesson is larger than a lesson file ({MAX_FILE_BYTES:,} bytes).")
    return read_lesson_file(text)


@functools.cache
def shipped_lessons() -> dict[str, Lesson]:
    """The lessons the app ships, by name (their files' stems), in their names' order."""
    return {path.stem: parse_lesson(path.read_text(encoding="utf-8")) for path in sorted(SHIPPED_DIR.glob("*.md"))}


def lesson_from_link(value: str) -> Lesson:
    """The lesson a link's ``lesson=`` value names: a shipped lesson's name, or a lesson_token."""
    if value.startswith(TOKEN_MARK):
        return _from_token(value)
    if _NAME.fullmatch(value) and value in shipped_lessons():
        return shipped_lessons()[value]
    names = ", ".join(shipped_lessons())
    raise LessonError(f"lesson={_one_line(value, 30)} is no lesson of this app; its lessons: {names}.")


def link_value(lesson: Lesson) -> str:
    """The shortest ``lesson=`` value that opens ``lesson``: its name when the app ships it."""
    for name, shipped in shipped_lessons().items():
        if shipped == lesson:
            return name
    return lesson_token(lesson)


def step_link_query(lesson_value: str, lesson: Lesson, index: int) -> dict[str, str]:
    """The query of the address that presents step ``index`` (0-based) of a lesson: the step's own
    keys, then the lesson and the step's number (from 1)."""
    step = lesson.steps[index]
    return {**dict(step.query), LESSON_KEY: lesson_value, STEP_KEY: str(index + 1)}
