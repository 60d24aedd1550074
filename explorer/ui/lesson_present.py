"""Presenting a lesson (explorer/lessons.py): the step's narration above its view, "step 3 of 8",
Previous and Next by button and by a clicker's keys, and the step published for a class that
follows it (explorer/ui/lesson_follow.py).

A step is an address like any view's: ``/waves?d=64&lesson=<lesson>&step=3``. Next and Previous
open the next step's address with every control read from it afresh (``controls.open_view``), so
each step is exactly its link, and the browser's Back returns to the step before. A lesson too long
for a link is held in the session, and its addresses carry the step alone.
"""

from __future__ import annotations

import dataclasses
import functools
import json

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer import follow_store, lessons, share
from explorer import settings as s
from explorer.lessons import FOLLOW_KEY, LESSON_KEY, STEP_KEY, Lesson, LessonError, Step
from explorer.ui import controls, navigation

#: Session keys: the lesson held when no link carries it, the step to open next, the teacher's
#: secret (which publishes the step; the class's follow link is derived from it one way), and the
#: step last published with its version.
HELD = "_lesson_held"
GOTO = "_lesson_goto"
SECRET = "_lesson_secret"
PUBLISHED = "_lesson_published"
#: Whether the last send reached the store.
DELIVERED = "_lesson_delivered"
#: The page of this run (its address path), for the callbacks that add a view.
CURRENT_PAGE = "_current_page"
#: The lesson being built on the Lessons page, and what the last "Add this view" did to it.
DRAFT, ADDED = "_lesson_draft", "_lesson_added"
#: Widget keys of the bar; the keyboard's JavaScript clicks the first two.
NEXT_KEY, PREVIOUS_KEY, LEAVE_KEY, ADD_KEY = "lesson_next", "lesson_previous", "lesson_leave", "lesson_add"
#: The teacher's session sends its step again this often: a shared store that was restarted
#: (Redis without persistence) has the step back within this time, and its expiry is pushed on.
HEARTBEAT_S = 5.0


@dataclasses.dataclass(frozen=True)
class Presented:
    """The step a session presents: its lesson, the lesson's ``lesson=`` value ("" when the lesson is
    held in the session) and the step's index (from 0)."""

    lesson: Lesson
    value: str
    index: int

    @property
    def step(self) -> Step:
        return self.lesson.steps[self.index]


@functools.lru_cache(maxsize=64)
def _lesson_from_link(value: str) -> Lesson:
    # A link's lesson is read on every run of the teacher's session: parsed once per process.
    return lessons.lesson_from_link(value)


def _parse_lesson_value(raws: list[str]) -> tuple[str, list[str]]:
    raw = raws[-1]
    try:
        _lesson_from_link(raw)
    except LessonError as error:
        return "", [f"URL: {error}"]
    if not st.query_params.get_all(STEP_KEY):
        st.session_state[GOTO] = 0  # a lesson's link without a step opens its first step's view
    return raw, []


def _parse_step(raws: list[str]) -> tuple[int, list[str]]:
    return s.parse_int(STEP_KEY, raws, default=0, low=1, high=lessons.MAX_STEPS)


def begin() -> Presented | None:
    """In a whole run, before the page: the step this session presents (from the URL's ``lesson`` and
    ``step``, read as every control's value is), or None."""
    state = st.session_state
    value = str(controls.seed_value(LESSON_KEY, "", _parse_lesson_value))
    number = int(controls.seed_value(STEP_KEY, 0, _parse_step))
    lesson = _lesson_from_link(value) if value else state.get(HELD)
    if lesson is not None and number < 1 and GOTO in state:
        number = state[GOTO] + 1  # a lesson just started, or its link without a step
    if lesson is None or number < 1:
        state[STEP_KEY] = 0
        return None
    index = min(number, len(lesson.steps)) - 1
    state[STEP_KEY] = index + 1
    return Presented(lesson, value, index)


def start(lesson: Lesson, index: int = 0) -> None:
    """Callback: present ``lesson`` from step ``index``: by its link when it fits one, else held here."""
    value = lessons.link_value(lesson)
    state = st.session_state
    if len(value) > lessons.MAX_LINK_VALUE_CHARS:
        value = ""
        state[HELD] = lesson
    else:
        state.pop(HELD, None)
    state[LESSON_KEY], state[STEP_KEY], state[GOTO] = value, index + 1, index


def _go(index: int) -> None:
    st.session_state[GOTO] = index


def _leave() -> None:
    state = st.session_state
    state[LESSON_KEY], state[STEP_KEY] = "", 0
    state.pop(HELD, None)
    _publish({"ended": True})


def step_address(presented: Presented, index: int) -> tuple[str, dict[str, str]]:
    """(page's URL path, query) of step ``index``'s address."""
    step = presented.lesson.steps[index]
    query = {**dict(step.query), STEP_KEY: str(index + 1)}
    if presented.value:
        query[LESSON_KEY] = presented.value
    if st.session_state.get(share.PRESENT_KEY):
        query[share.PRESENT_KEY] = "true"  # how the teacher's screen looks, kept from step to step
    return step.page_info.url_path, query


def wanted_view(presented: Presented | None, page_address: str) -> tuple[str, dict[str, str]] | None:
    """The step's address the app must open now (Next, Previous, a lesson just started, or a lesson's
    link that names another page than its step's), or None to run this run's page."""
    goto = st.session_state.pop(GOTO, None)
    if presented is None:
        return None
    if goto is None and presented.step.page != page_address:
        goto = presented.index
    if goto is None:
        return None
    goto = max(0, min(goto, len(presented.lesson.steps) - 1))
    # The class is sent the step now, as the teacher's view begins to change, not after its page ran.
    _publish(snapshot(dataclasses.replace(presented, index=goto)))
    return step_address(presented, goto)


def draw_bar(presented: Presented) -> DeltaGenerator:
    """Above the page: the lesson, "step k of m", Previous, Next and Leave, then the step's narration.
    Returns the place under the buttons where ``publish`` says whether the class receives the step."""
    count = len(presented.lesson.steps)
    with st.container(key="lesson_bar"):
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(
                f"**{lessons.markdown_text(presented.lesson.title)}** · step {presented.index + 1} of {count}: "
                f"**{lessons.markdown_text(presented.step.heading)}**",
                width="stretch",
            )
            st.button("Previous", icon=":material/arrow_back:", key=PREVIOUS_KEY, disabled=presented.index == 0,
                      on_click=_go, args=(presented.index - 1,), help="The step before (Page Up, or ←).")
            st.button("Next", icon=":material/arrow_forward:", key=NEXT_KEY, disabled=presented.index == count - 1,
                      on_click=_go, args=(presented.index + 1,), type="primary",
                      help="The next step (Page Down, or →).")
            st.button("Leave the lesson", icon=":material/close:", key=LEAVE_KEY, on_click=_leave)
        delivery = st.container()
        if presented.step.narration:
            st.markdown(presented.step.narration)
        _keys(key="lesson_keys")
    return delivery



# --- the class's follow link --------------------------------------------------------------


def snapshot(presented: Presented) -> dict[str, object]:
    """What a follower may read: this step (its view and words) and where it stands, nothing else."""
    step = presented.step
    return {
        "title": presented.lesson.title, "index": presented.index, "count": len(presented.lesson.steps),
        "heading": step.heading, "narration": step.narration, "page": step.page_info.url_path,
        "query": dict(step.query),
    }


def follow_id() -> str:
    """The follow link's id of this session's lesson, made on first use."""
    state = st.session_state
    if SECRET not in state:
        state[SECRET] = follow_store.new_teacher_secret()
    return follow_store.follow_id(state[SECRET])


def _publish(step: dict[str, object], *, again: bool = False) -> bool:
    """Send ``step`` to the class, with a new version when it changed; False when the store is
    unreachable (the teacher's lesson goes on, and the heartbeat sends it again)."""
    state = st.session_state
    if SECRET not in state:
        return True
    version, last = state.get(PUBLISHED, (0, None))
    if step != last:
        version += 1
    elif not again:
        return state.get(DELIVERED, True)
    state[PUBLISHED] = (version, step)
    try:
        follow_store.shared_store().publish(follow_id(), json.dumps({"version": version, **step}))
    except follow_store.StoreUnavailable:
        state[DELIVERED] = False
        return False
    state[DELIVERED] = True
    return True


def publish(presented: Presented, delivery: DeltaGenerator) -> None:
    """In a whole run of a presenting session with a follow link, after the page: send the step if it
    changed, and keep sending it (``HEARTBEAT_S``), saying in ``delivery`` (``draw_bar``'s place under
    Next, where the teacher looks; not below a page thousands of pixels long) when the class cannot
    receive it."""
    if SECRET not in st.session_state:
        return
    _publish(snapshot(presented))

    @st.fragment(run_every=HEARTBEAT_S)
    def heartbeat() -> None:
        navigation.reopen_after_a_late_timer(st.session_state.get(CURRENT_PAGE, ""))
        if not _publish(snapshot(presented), again=True):
            st.caption(":material/sync_problem: The class's devices cannot receive this step now "
                       "(the shared store is unreachable); it is sent again every few seconds.")

    with delivery:
        heartbeat()


def follow_panel(url: str | None, qr_png) -> None:
    """The Share panel's part for a lesson: the class's follow link and its QR code."""
    st.caption("The class opens this link (or scans its code) and follows each step you present; "
               "each device can explore a step and come back to yours.")
    if url is None:
        st.warning("This view's address is unknown here: copy it from the address bar.",
                   icon=":material/link_off:")
        return
    st.code(url, language=None, wrap_lines=True)
    png = qr_png(url)
    if png is not None:
        st.image(png, width="stretch", alt="QR code of the class's follow link, shown above it.")


def follow_url(page_url_path: str) -> str | None:
    """The absolute follow link of this session's lesson (its Share panel's)."""
    return share.share_url(st.context.url, st.context.headers, page_url_path, {FOLLOW_KEY: follow_id()})


# --- building a lesson --------------------------------------------------------------------


def draft() -> Lesson:
    """The lesson this session is building (an empty one to begin with)."""
    return st.session_state.get(DRAFT) or Lesson("My lesson", ())


def set_draft(lesson: Lesson) -> None:
    st.session_state[DRAFT] = lesson


def _add_view() -> None:
    """Callback of "Add this view to the lesson": the view as the Share panel would give it."""
    page_address = st.session_state.get(CURRENT_PAGE, "")
    query = "&".join(
        f"{key}={value}" for key, value in st.query_params.to_dict().items()
        if key not in lessons.NOT_IN_A_VIEW
    )
    lesson = draft()
    if len(lesson.steps) >= lessons.MAX_STEPS:
        st.session_state[ADDED] = f"Your lesson has {lessons.MAX_STEPS} steps, as many as a lesson holds."
        return
    try:
        page, parsed = lessons.parse_view(f"/{page_address}?{query}")
    except LessonError as error:
        st.session_state[ADDED] = str(error)
        return
    heading = lessons.page_title(page)
    set_draft(dataclasses.replace(lesson, steps=(*lesson.steps, Step(heading, page, parsed))))
    st.session_state[ADDED] = f"Added as step {len(lesson.steps) + 1} of your lesson: narrate it on the Lessons page."


def add_view_button() -> None:
    """Beside Share: add this view to the lesson being built, and say once what became of it (a line,
    not st.toast: Streamlit's toast is an unnamed dialog to a screen reader)."""
    added = st.session_state.pop(ADDED, None)
    if added:
        st.caption(added)
    st.button("Add this view to the lesson", icon=":material/playlist_add:", key=ADD_KEY, on_click=_add_view,
              help="Adds this view, with its settings, as the next step of the lesson on the Lessons page.")


# --- the keys a clicker sends -----------------------------------------------------------

#: Page Down and Page Up (what a presentation clicker sends) press Next and Previous, except in a
#: text box; → and ← too when no control has focus (a slider or a chart's keys use the arrows), or
#: when the focus is on the lesson's own buttons (after a click on them). ↑ and ↓ still scroll.
JS = r"""
export default function () {
    if (window.__peLessonKeys) return;
    window.__peLessonKeys = true;
    const typing = (element) => element && (element.isContentEditable
        || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName));
    const ownButton = (element) => element?.closest?.('.st-key-lesson_next, .st-key-lesson_previous');
    // A scrolling container the browser focused on a click (tabindex -1) is no control.
    const CONTROL = 'button, a[href], input, textarea, select, [contenteditable], [role=slider], [role=button], '
        + '[role=switch], [role=tab], [role=radio], [role=checkbox], [role=combobox], [role=listbox], [role=option]';
    const aControl = (element) => element && element !== document.body && !ownButton(element)
        && (element.matches(CONTROL) || element.closest('.js-plotly-plot'));
    const ARROWS = {ArrowRight: 'next', ArrowLeft: 'previous'};
    const PAGES = {PageDown: 'next', PageUp: 'previous'};
    document.addEventListener('keydown', (event) => {
        if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
        const focused = document.activeElement;
        let which = PAGES[event.key];
        if (which && typing(focused)) return;
        if (!which && ARROWS[event.key] && !aControl(focused)) which = ARROWS[event.key];
        if (!which) return;
        const button = document.querySelector(`.st-key-lesson_${which} button`);
        if (!button) return;
        event.preventDefault();
        // A button left focused (Share, after its panel closed) keeps its tooltip on the projected
        // screen through every step: a clicker's step takes the focus off it.
        if (focused && focused !== document.body && !ownButton(focused)) focused.blur();
        if (!button.disabled) button.click();
    }, true);
}
"""

_keys = st.components.v2.component("explorer.lesson_keys", js=JS)
