"""Lessons: the lessons the app ships, a lesson file opened, and the lesson this session builds
(explorer/lessons.py holds the file format; explorer/ui/lesson_present.py presents a lesson)."""

import dataclasses
import re

import streamlit as st

from explorer import lessons, share
from explorer.lessons import Lesson, LessonError
from explorer.ui import lesson_present

UPLOAD_KEY, MESSAGE_KEY, TITLE_KEY = "lesson_file", "_lesson_file_message", "lesson_title"


def heading_key(index: int) -> str:
    return f"lesson_heading_{index}"


def narration_key(index: int) -> str:
    return f"lesson_narration_{index}"


def show_draft(lesson: Lesson) -> None:
    """Make ``lesson`` the one being built, its boxes showing its words (a callback: before they are drawn)."""
    lesson_present.set_draft(lesson)
    state = st.session_state
    state[TITLE_KEY] = lesson.title
    for index, step in enumerate(lesson.steps):
        state[heading_key(index)], state[narration_key(index)] = step.heading, step.narration
    for index in range(len(lesson.steps), lessons.MAX_STEPS):
        state.pop(heading_key(index), None)
        state.pop(narration_key(index), None)


def read_upload() -> None:
    upload = st.session_state.get(UPLOAD_KEY)
    if upload is None:
        return
    try:
        lesson = lessons.read_lesson_file(upload.getvalue())
    except LessonError as error:
        st.session_state[MESSAGE_KEY] = ("error", f"{upload.name}: {error}")
        return
    show_draft(lesson)
    st.session_state[MESSAGE_KEY] = (
        "success", f"Opened “{lesson.title}”, {len(lesson.steps)} steps: present it or edit it under Your lesson.",
    )


def typed() -> None:
    """A box of the lesson being built was edited: the lesson takes its words."""
    state = st.session_state
    lesson = lesson_present.draft()
    steps = tuple(
        dataclasses.replace(step, heading=state.get(heading_key(index), step.heading).strip(),
                            narration=state.get(narration_key(index), step.narration).strip())
        for index, step in enumerate(lesson.steps)
    )
    lesson_present.set_draft(Lesson(state.get(TITLE_KEY, lesson.title).strip(), steps))


def move(index: int, by: int) -> None:
    steps = list(lesson_present.draft().steps)
    steps.insert(index + by, steps.pop(index))
    show_draft(dataclasses.replace(lesson_present.draft(), steps=tuple(steps)))


def remove(index: int) -> None:
    steps = list(lesson_present.draft().steps)
    del steps[index]
    show_draft(dataclasses.replace(lesson_present.draft(), steps=tuple(steps)))


def file_name(title: str) -> str:
    return (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "lesson")[:60] + ".md"


st.title("Lessons")
st.markdown(
    "A lesson is a sequence of this app's views, each with a few sentences to read above it. "
    "**Present** one: **Next** and **Previous** (or a clicker's Page Down and Page Up, or → and ←) go "
    "from step to step, each exactly as its link opens it, in presentation mode too. "
    "**Share** then gives the class a follow link and its QR code: every phone that opens it shows your "
    "step, can explore it, and comes back to yours with one click."
)

st.header("Lessons to present")
for name, lesson in lessons.shipped_lessons().items():
    with st.container(border=True):
        st.subheader(lesson.title)
        st.caption(f"{len(lesson.steps)} steps: " + " → ".join(step.heading for step in lesson.steps))
        with st.container(horizontal=True):
            st.button("Present", key=f"present_{name}", icon=":material/slideshow:", type="primary",
                      on_click=lesson_present.start, args=(lesson,))
            st.button("Edit a copy", key=f"edit_{name}", icon=":material/edit:", on_click=show_draft, args=(lesson,))

st.header("Open a lesson file")
st.file_uploader(
    f"A lesson file (Markdown, .md, at most {lessons.MAX_FILE_BYTES // 1024} KB)", type=["md", "txt"],
    key=UPLOAD_KEY, on_change=read_upload,
    help="# Title, then for each step: ## Heading, a line view: /page?keys, and its narration in Markdown.",
)
if (message := st.session_state.get(MESSAGE_KEY)) is not None:
    kind, line = message
    (st.error if kind == "error" else st.success)(line, icon=":material/description:")

st.header("Your lesson")
draft = lesson_present.draft()
if not draft.steps:
    st.info("No step yet: open a view, set it as you want it, and press **Add this view to the lesson** "
            "beside Share. Each view comes back here as a step, to narrate and put in order.",
            icon=":material/playlist_add:")
st.session_state.setdefault(TITLE_KEY, draft.title)
st.text_input("Title", key=TITLE_KEY, max_chars=lessons.MAX_HEADING_CHARS, on_change=typed)
for index, step in enumerate(draft.steps):
    with st.container(border=True):
        st.session_state.setdefault(heading_key(index), step.heading)
        st.session_state.setdefault(narration_key(index), step.narration)
        with st.container(horizontal=True, vertical_alignment="bottom"):
            st.text_input(f"Step {index + 1}", key=heading_key(index), max_chars=lessons.MAX_HEADING_CHARS,
                          on_change=typed, width="stretch")
            st.button("", key=f"lesson_up_{index}", icon=":material/arrow_upward:", disabled=index == 0,
                      on_click=move, args=(index, -1), help="Move this step up.")
            st.button("", key=f"lesson_down_{index}", icon=":material/arrow_downward:",
                      disabled=index == len(draft.steps) - 1, on_click=move, args=(index, 1),
                      help="Move this step down.")
            st.button("", key=f"lesson_remove_{index}", icon=":material/delete:", on_click=remove, args=(index,),
                      help="Remove this step.")
        st.caption(f"View: `{step.view}`")
        st.text_area("Narration (Markdown)", key=narration_key(index), max_chars=lessons.MAX_NARRATION_CHARS,
                     on_change=typed, height=100)

if draft.steps:
    try:
        lessons.check_lesson(draft)
        problem = None
    except LessonError as error:
        problem = str(error)
        st.error(problem, icon=":material/error:")
    with st.container(horizontal=True):
        st.button("Present it", key="present_draft", icon=":material/slideshow:", type="primary",
                  disabled=problem is not None, on_click=lesson_present.start, args=(draft,))
        st.download_button("Download the lesson (.md)", lessons.lesson_text(draft), file_name=file_name(draft.title),
                           mime="text/markdown", icon=":material/download:", disabled=problem is not None,
                           on_click="ignore")
    if problem is None:
        value = lessons.link_value(draft)
        link = share.share_url(st.context.url, st.context.headers, "lessons", {lessons.LESSON_KEY: value})
        if link is not None and len(value) <= lessons.MAX_LINK_VALUE_CHARS:
            st.caption("The lesson's link, which opens its first step (its steps are in it):")
            st.code(link, language=None, wrap_lines=True)
        else:
            st.caption("This lesson is too long for a link: share its file, which opens here under "
                       "Open a lesson file.")
