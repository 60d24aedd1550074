"""Following a teacher's lesson: ``?follow=<id>`` opens the step the teacher presents, and each of
the teacher's Next or Previous within ``POLL_S`` plus a run.

A follower's session reads the step from the shared store (explorer/follow_store.py: this process's
memory, or Redis across replicas) in a fragment that reruns every ``POLL_S``; it can read that step
and nothing else, and it writes nothing. While the follower's view is the step's, a new step opens
at once. Once the follower moves a control or opens another page, the view is theirs: the teacher's
steps no longer move it, and one click returns to the teacher's step. When the store cannot be
reached, the follower keeps the view and is told that following paused; it resumes by itself.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer import follow_store, lessons, page_list
from explorer.lessons import FOLLOW_KEY
from explorer.ui import controls, navigation
from explorer.ui.lesson_present import CURRENT_PAGE

#: How often a follower's page asks for the teacher's step. A Next reaches the class within this
#: and one whole run of the new step's page (the issue's budget: two seconds, on a server that
#: also serves the class's other runs: at 1 s, a follower under the test suite's load missed it).
POLL_S = 0.5
#: Session keys: the version of the teacher's step this view shows (set once the step's page ran to
#: its end), the version being opened, the view it opened (page and query, as written after its
#: first run), a click on "Back to the teacher's step", and the last step read from the store.
APPLIED, OPENING, BASELINE = "_follow_applied", "_follow_opening", "_follow_baseline"
RETURN, LAST = "_follow_return", "_follow_last"
RETURN_KEY = "follow_return"
PAUSED = ("Following paused: the teacher's steps cannot be read now (the shared store is unreachable). "
          "Your view stays; following resumes by itself.")


def _parse_follow(raws: list[str]) -> tuple[str, list[str]]:
    raw = raws[-1]
    if follow_store.is_follow_id(raw):
        return raw, []
    return "", ["URL: this follow link is damaged (its follow= value is not a lesson's); ask for it again."]


def following() -> str:
    """In a whole run, before the page: the follow id this session follows ("" when it does not)."""
    return str(controls.seed_value(FOLLOW_KEY, "", _parse_follow))


def _read(follow: str) -> dict | None:
    """The teacher's step (a dict with "version"), None when there is none yet; StoreUnavailable."""
    payload = follow_store.shared_store().read(follow)
    if payload is None:
        return None
    try:
        step = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(step, dict) or not (step.get("ended") is True or _valid(step)):
        return None  # not a step: as if the teacher had sent none yet
    return step


def _current_view() -> tuple[str, dict[str, str]]:
    query = {key: value for key, value in st.query_params.to_dict().items() if key != FOLLOW_KEY}
    return st.session_state.get(CURRENT_PAGE, ""), query


def exploring() -> bool:
    """True once the follower's view is no longer the step's view it opened."""
    baseline = st.session_state.get(BASELINE)
    return baseline is not None and _current_view() != baseline


def wanted_view(follow: str) -> tuple[str, dict[str, str]] | None:
    """The teacher's step's address when the follower must open it now (first visit, the teacher's
    next step while following, or "Back to the teacher's step"), else None."""
    try:
        step = _read(follow)
    except follow_store.StoreUnavailable:
        return None
    st.session_state[LAST] = step
    return _step_to_open(step, follow)


def _step_to_open(step: dict | None, follow: str) -> tuple[str, dict[str, str]] | None:
    state = st.session_state
    if step is None or step.get("ended"):
        return None
    asked = state.pop(RETURN, False)
    if not asked and (state.get(APPLIED) == step["version"] or (state.get(APPLIED) is not None and exploring())):
        return None
    state[OPENING], state[BASELINE] = step["version"], None
    if _current_view() == (step["page"], step["query"]):
        return None  # the run the switch started: the step shows once it has run to its end
    return step["page"], {**step["query"], FOLLOW_KEY: follow}


def _valid(step: dict) -> bool:
    """A step as lesson_present.snapshot writes it: a view of this app with its keys (the store may be a
    Redis others reach too), and where it stands in its lesson."""
    try:
        page = "" if step["page"] == page_list.HOME.url_path else step["page"]
        if not all(isinstance(value, str) for value in step["query"].values()):
            return False
        lessons.parse_view(f"/{page}?{urlencode(step['query'])}")
        return all(isinstance(step[key], int) for key in ("index", "count", "version"))
    except (KeyError, TypeError, AttributeError, ValueError):
        return False


def after_url_written(follow: str, bar: DeltaGenerator) -> None:
    """After controls.write_url in a whole run: a step's page that ran to its end shows the step, and
    its view (as written) is the one the follower's own moves are measured from. Then the poll starts
    in ``bar`` (``draw_bar``'s place), after every control of the view was drawn.

    The step is marked shown here, not when it was opened: a run can be cut short (the poll's next
    run, a click), and a step marked shown by a run that never finished was never opened again (a
    follower missed a Next). The poll starts last because its timer's requests carry the values the
    browser's controls hold: started before the page's and the sidebar's controls reached the
    browser, its first requests sent the old step's values back as moves."""
    state = st.session_state
    if state.get(OPENING) is not None:
        state[APPLIED] = state.pop(OPENING)
        state[BASELINE] = None
    if state.get(BASELINE) is None:
        state[BASELINE] = _current_view()
    with bar:
        _poll(follow)


def _opened(step: dict) -> bool:
    """True when the follower's view is ``step``'s, shown or being opened by this run."""
    return step.get("version") in (st.session_state.get(APPLIED), st.session_state.get(OPENING))


def _return() -> None:
    st.session_state[RETURN] = True


def draw_bar() -> DeltaGenerator:
    """Above the page: the teacher's step and its narration. Returns the place under them where
    ``after_url_written`` starts the poll."""
    shown = st.session_state.get(LAST)
    with st.container(key="follow_bar"):
        if isinstance(shown, dict) and not shown.get("ended") and _opened(shown):
            # Which step this view is, first in the run: the page's charts take the browser a while.
            st.markdown(f"**{lessons.markdown_text(str(shown.get('title', '')))}** · step {shown['index'] + 1} of "
                        f"{shown['count']}: **{lessons.markdown_text(str(shown.get('heading', '')))}**")
            narration = str(shown.get("narration", ""))
            if narration:
                st.markdown(narration)
        return st.container()


@st.fragment(run_every=POLL_S)
def _poll(follow: str) -> None:
    """The follower's state, read again every ``POLL_S``; a new step's page is opened from here."""
    state = st.session_state
    navigation.reopen_after_a_late_timer(state.get(CURRENT_PAGE, ""))
    try:
        step = _read(follow)
    except follow_store.StoreUnavailable:
        st.warning(PAUSED, icon=":material/sync_problem:")
        return
    # A step the follower's view has not opened, while the view is still the teacher's: open it now,
    # from here (one whole run of its page, not a run of this page that then switches).
    view = _step_to_open(step, follow)
    if view is not None:
        navigation.open_view(view)
    if state.get(OPENING) is not None and navigation.in_fragment_rerun():
        st.rerun(scope="app")  # the step's page was cut short before its end: run it whole
    state[LAST] = step
    if step is None:
        st.info("Waiting for the teacher's lesson: this page opens its step when the teacher presents one.",
                icon=":material/hourglass_top:")
    elif step.get("ended"):
        st.info("The teacher's lesson has ended; this view is yours.", icon=":material/flag:")
    elif exploring() or not _opened(step):
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(f"You are exploring on your own. The teacher is at step {step['index'] + 1} of "
                        f"{step['count']}.", width="stretch")
            st.button("Back to the teacher's step", icon=":material/group:", key=RETURN_KEY,
                      on_click=_return, type="primary")
    else:
        st.caption(":material/group: Following the teacher: each step opens here as it is presented.")
