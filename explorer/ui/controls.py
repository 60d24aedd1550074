"""The sidebar's shared controls and page controls, each mirrored in the URL.

How a value reaches a widget, in order: a preset's pending value, then the URL (read
once per session and key, validated by explorer.settings), then the widget's default.
The browser's Back and Forward return to an address: in that run every control is read
from the URL again, and one the URL leaves out is at its default (``begin_run``).
After the page has run, ``write_url`` puts every control that differs from its default
back in the query string, so a copied URL reopens the same view, on any page, also on a
freshly started server.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explorer import settings as s
from explorer.presets import CUSTOM, PRESETS, preset_label

#: Session state key of the sidebar toggle that offers the charts' data as files (explorer.ui.downloads).
OFFER_DOWNLOADS = "offer_downloads"

#: The key of the st.fragment each page runs in (explorer.ui.navigation.run_page): a move of a
#: shared control reruns it alone.
PAGE_FRAGMENT = "page"
#: The key of the st.fragment that holds the part of a page reading the shared settings, below the
#: page's own controls (explorer.ui.navigation.run_settings_part): when a page has one, a move of a
#: shared control reruns that part alone.
SETTINGS_PART = "settings_part"

_ABSENT = object()  # a control's value not in session state (write_url)
_KEPT = "_controls"  # session state key of what this module keeps for the session (_ControlsState)


@dataclass
class _ControlsState:
    """What this module keeps for one session between runs, under one session-state key: a read of
    ``st.session_state`` goes through Streamlit's proxy and its lock (about 4 µs, and a missing key
    raises inside it), and a whole run seeds twenty to fifty controls (benchmarks/JOURNAL.md,
    "2026-12-07, 15:20")."""

    #: Keys already read from the URL in this session.
    seeded: set[str] = field(default_factory=set)
    #: Values a preset set for controls that are not drawn yet.
    pending: dict[str, object] = field(default_factory=dict)
    #: Key -> default of every control drawn in this run.
    defaults: dict[str, object] = field(default_factory=dict)
    #: The keys of ``defaults`` when the page began, in the last whole run, and when the page's
    #: settings part began, in the last page run.
    before_page: set[str] = field(default_factory=set)
    before_part: set[str] = field(default_factory=set)
    #: The fragment a move of a shared control reruns (the page's, or its part's).
    step_reruns: str = PAGE_FRAGMENT
    #: The page shows notices of the URL's values (which a step clears).
    notices_shown: bool = False
    #: What the sidebar's controls show in the browser.
    shown: dict[str, object] = field(default_factory=dict)
    #: Notices waiting to be shown above the page.
    notices: list[str] = field(default_factory=list)
    #: The page a preset asked to open.
    switch_to: str | None = None
    #: The next run opens the URL's view afresh (a lesson's step: ``open_view``).
    reopen: bool = False
    #: The next whole run sends the URL even when the session's query is unchanged.
    write_address: bool = False
    #: The query the last run wrote into the URL: the view the browser shows.
    written: dict[str, str] = field(default_factory=dict)
    #: This run reads every control from the URL: one it leaves out is at its default.
    read_all: bool = False


def _kept() -> _ControlsState:
    state = st.session_state
    try:
        return state[_KEPT]
    except KeyError:
        kept = state[_KEPT] = _ControlsState()
        return kept


def begin_run() -> None:
    """Forget which controls the previous run drew. After the browser's Back or Forward, read every
    control from the URL again (and forget what a preset queued): the address the browser went back
    to is the view, and the session still holds the values of the view it left."""
    kept = _kept()
    kept.defaults = {}
    if _history_navigation():
        kept.read_all = True  # a pending reopen waits for the run that opens its view
    else:
        kept.read_all, kept.reopen = kept.reopen, False
    if kept.read_all:
        kept.seeded = set()
        kept.pending = {}


def open_view() -> None:
    """Before st.switch_page to an address that is a whole view (a lesson's step): the next run reads
    every control from that address, as after the browser's Back, and one it leaves out is at its
    default, not at the value this session last held."""
    kept = _kept()
    kept.reopen = True
    # st.switch_page's query_params become the session's query, but the browser's address bar shows
    # them only when the run sends a query of its own (Streamlit 1.67): without it, the address
    # lagged one step behind the view.
    kept.write_address = True


def _history_navigation() -> bool:
    """True in the run the browser's Back or Forward started (Streamlit sends the address's query)."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.is_history_navigation)


def begin_page() -> None:
    """In a whole run, as the page begins: the controls drawn so far are the app's, not the page's."""
    kept = _kept()
    kept.before_page = set(kept.defaults)
    kept.step_reruns = PAGE_FRAGMENT


def begin_page_rerun() -> s.Settings:
    """As the page's fragment reruns alone: forget the page's own controls (it draws them again, and
    one it no longer draws leaves the URL, as in a whole run) and read the shared settings again
    (a callback may have set them). Returns them."""
    kept = _kept()
    kept.step_reruns = PAGE_FRAGMENT
    return _forget_controls_since(kept.before_page)


def begin_settings_part() -> None:
    """In a whole run or a page's rerun, as the page's settings part begins: the controls drawn so
    far are the page's own, which a move of a shared control no longer draws again."""
    kept = _kept()
    kept.before_part = set(kept.defaults)
    kept.step_reruns = SETTINGS_PART


def steps_rerun_page() -> None:
    """Something drawn after the page's settings part reads the shared settings too (the code shown, a
    reading compared with the view): until the page's next run, a move of a shared control reruns the
    page, not the part alone."""
    _kept().step_reruns = PAGE_FRAGMENT


def begin_settings_part_rerun() -> s.Settings:
    """As the page's settings part reruns alone: ``begin_page_rerun`` for the part's controls."""
    return _forget_controls_since(_kept().before_part)


def _forget_controls_since(before: set[str]) -> s.Settings:
    kept = _kept()
    kept.defaults = {key: default for key, default in kept.defaults.items() if key in before}
    return shared_settings()


def needs_whole_run() -> bool:
    """True when a rerun of the page alone cannot show what the session holds: the sidebar's
    controls show other values than session state's (a page's preset, config or reading set d or
    n; a move left a preset, whose name the sidebar still shows), or a preset waits to open its page."""
    state, kept = st.session_state, _kept()
    return kept.switch_to is not None or any(state.get(key) != shown for key, shown in kept.shown.items())


def _seed(key: str, default: object, parse: Callable[[list[str]], tuple[object, list[str]]]) -> object:
    """Put the value this control should start with into session state, before drawing it; returns it."""
    state, kept = st.session_state, _kept()
    kept.defaults[key] = default
    if key in kept.pending:
        value = state[key] = kept.pending.pop(key)
        return value
    if key not in kept.seeded:
        kept.seeded.add(key)
        raws = st.query_params.get_all(key)
        if raws:
            value, notices = parse(raws)
            state[key] = value
            kept.notices.extend(notices)
            return value
        if kept.read_all:
            state[key] = default  # the address left it out: its default is what it shows
            return default
    return state.setdefault(key, default)


def _moved(key: str) -> None:
    """A shared control the visitor moved: no preset any more, and only the page reruns (the
    browser already shows the move; ``needs_whole_run`` asks for a whole run if more changed)."""
    if _sent_by_a_fragment():
        return
    state, kept = st.session_state, _kept()
    state["preset"] = CUSTOM
    kept.shown[key] = state[key]
    # The page's notices of the URL's values are above its settings part: the page reruns to clear them.
    st.rerun(PAGE_FRAGMENT if kept.notices_shown else kept.step_reruns)


def _apply_preset() -> None:
    """Sidebar callback: apply the preset the selectbox now shows."""
    if not _sent_by_a_fragment():
        apply_preset(st.session_state["preset"])


def _sent_by_a_fragment() -> bool:
    """True when a sidebar control's change came with a fragment's rerun: not the visitor's move (a
    sidebar control is in no fragment, so moving it reruns the app) but the browser's copy of the
    control sent along with a timer's run (a follower's poll), still holding the view it left while
    the new one is being drawn. Taken as a move, it put the old step's value back into the new step.
    The browser sends its drawn value with the next run, which restores it."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def apply_preset(key: str) -> None:
    """Set the shared controls to preset ``key``, queue its page's, and go to its page.

    Use as a widget callback (the sidebar's selectbox, the Home page's buttons): it
    writes widget state, which Streamlit allows only before the widgets are drawn.
    """
    st.session_state["preset"] = key
    if key == CUSTOM:
        return
    preset = PRESETS[key]
    for name, value in vars(preset.settings).items():
        st.session_state[name] = value
    kept = _kept()
    kept.pending.update(preset.page_values)
    kept.switch_to = preset.page


def _parse_preset(raws: list[str]) -> tuple[str, list[str]]:
    value, notices = s.parse_choice("preset", raws, default=CUSTOM, options=(CUSTOM, *PRESETS))
    if value != CUSTOM:
        # A preset in a URL sets what the URL does not say itself.
        pending = _kept().pending
        for name, setting in vars(PRESETS[value].settings).items():
            if not st.query_params.get_all(name):
                pending[name] = setting
        pending.update({k: v for k, v in PRESETS[value].page_values.items() if not st.query_params.get_all(k)})
    return value, notices


def shared_settings() -> s.Settings:
    """The settings the sidebar's shared controls hold, read before the page runs.

    Each control's value is in session state before its widget is drawn (a preset's pending
    value, the URL once per session, the default, or the value the visitor just moved), so
    the page can run first and the widgets (``sidebar_ui``) be drawn after it: on a slider
    step the page's first chart then reaches the browser without waiting for the sidebar.
    """
    _seed("preset", CUSTOM, _parse_preset)
    for key, default in SHARED_DEFAULTS.items():
        _seed(key, default, s.PARSERS[key])
    state = st.session_state
    # Defensive: a value set through session state may bypass the slider's step.
    d = max(s.D_MIN, min(s.D_MAX, int(state["d"]) - int(state["d"]) % 2))
    return s.Settings(d=d, n=float(state["n"]), L=int(state["L"]), layout=state["layout"],
                      convention=state["convention"])


#: The shared controls (URL key -> default), in the sidebar's order.
SHARED_DEFAULTS: dict[str, object] = {
    "d": s.D_DEFAULT, "n": s.N_DEFAULT, "L": s.L_DEFAULT, "layout": "interleaved", "convention": "paper",
}


def sidebar_ui() -> None:
    """Draw the shared controls in the sidebar (after ``shared_settings`` and the page)."""
    with st.sidebar:
        st.selectbox("Preset", (CUSTOM, *PRESETS), format_func=preset_label, key="preset", on_change=_apply_preset)
        # Each slider's value is its minimum, as in int_control.
        st.slider(
            "d: embedding size", s.D_MIN, s.D_MAX, s.D_MIN, step=2, key="d", on_change=_moved, args=("d",),
            help="Number of dimensions; sine/cosine pairs, so even.",
        )
        st.select_slider(
            "n: base (log scale)", s.N_OPTIONS, format_func=s.format_number, key="n", on_change=_moved, args=("n",),
            help="The paper uses 10000; wavelengths grow from 2π to about 2π·n.",
        )
        st.slider("L: positions", s.L_MIN, s.L_MAX, s.L_MIN, key="L", on_change=_moved, args=("L",))
        st.radio(
            "Sinusoid's layout", ("interleaved", "concatenated"), key="layout", horizontal=True, on_change=_moved,
            args=("layout",),
            help="interleaved: sin, cos, sin, cos... (paper). concatenated: [all sines | all cosines]. "
            "The sinusoid's columns: RoPE's layout (half or interleaved) is Rotary's own control.",
        )
        st.radio(
            "Frequencies", ("paper", "tensor2tensor"), key="convention", horizontal=True,
            on_change=_moved, args=("convention",),
            help="paper: ω_i = n^(-2i/d). tensor2tensor: ω_i = n^(-i/(m-1)), slowest exactly 1/n.",
        )
        # Not in the URL: it changes what this visitor is offered, not the view.
        st.toggle(
            "Offer the charts' data (CSV, NPY)", key=OFFER_DOWNLOADS,
            help="Download buttons under every chart, for the exact values it shows.",
        )
    state = st.session_state
    _kept().shown = {key: state[key] for key in ("preset", *SHARED_DEFAULTS)}


def int_control(
    key: str, label: str, *, default: int, low: int, high: int, container=None, help: str | None = None,
    drawn: bool = True, persist: bool = False,
) -> int:
    """A page's whole-number slider, kept in the URL under ``key``, clamped to [low, high].
    ``drawn`` and ``persist`` as ``bool_control``'s: a slider shown on request keeps its value while hidden."""
    high = max(high, low)
    default = min(max(default, low), high)
    value = _seed(key, default, lambda raws: s.parse_int(key, raws, default=default, low=low, high=high))
    # Limits depend on the settings (e.g. ref < L): clamp what an earlier run left.
    value = st.session_state[key] = min(max(int(value), low), high)
    if not drawn:
        return value
    if low == high:
        (container or st).caption(f"{label}: {low}")
        return low
    # The value given is the one Streamlit takes for none (the minimum; session state holds the real one).
    # Left out, Streamlit copies the whole session state in every run to see whether the key holds a range.
    return int((container or st).slider(
        label, low, high, low, key=key, help=help, persist_state="session" if persist else None))


def option_control(
    key: str, label: str, options: tuple[float, ...], *, default: float, container=None, help: str | None = None,
    drawn: bool = True, persist: bool = False,
) -> float:
    """A page's slider over numeric stops (``options``, ascending), kept in the URL under ``key``.
    ``drawn`` and ``persist`` as ``bool_control``'s."""
    value = _seed(key, default, lambda raws: s.parse_option(key, raws, default=default, options=options))
    if not drawn:
        return float(value)
    return float((container or st).select_slider(
        label, options, key=key, format_func=s.format_number, help=help,
        persist_state="session" if persist else None))


def select_control(
    key: str, label: str, options: tuple[str, ...], *, default: str, container=None,
    format_func: Callable[[str], str] = str, help: str | None = None,
) -> str:
    """A page's select box, kept in the URL under ``key``."""
    _seed(key, default, lambda raws: s.parse_choice(key, raws, default=default, options=options))
    return (container or st).selectbox(label, options, key=key, format_func=format_func, help=help)


def preset_control(
    key: str, label: str, options: tuple[str, ...], *, default: str, values: Callable[[str], dict[str, object]],
    container=None, format_func: Callable[[str], str] = str, help: str | None = None,
) -> str:
    """A page's select box of presets, kept in the URL under ``key``: choosing one, or opening a URL
    that names one, sets the controls ``values(choice)`` names (the sidebar's shared ones, such as
    d and n, and the page's own), except those the URL itself gives, as the sidebar's presets do.

    Call it before the page reads its settings: on a URL, it changes the shared ones in this run
    (``st.session_state["settings"]`` is then the new settings).
    """

    def parse(raws: list[str]) -> tuple[str, list[str]]:
        value, notices = s.parse_choice(key, raws, default=default, options=options)
        if value != default:
            _set_controls({k: v for k, v in values(value).items() if not st.query_params.get_all(k)})
        return value, notices

    def chosen() -> None:
        value = st.session_state[key]
        if value != default:
            _set_controls(values(value))

    _seed(key, default, parse)
    return (container or st).selectbox(
        label, options, key=key, format_func=format_func, help=help, on_change=chosen
    )


def _set_controls(values: dict[str, object]) -> None:
    """Set shared controls now (their widgets are drawn after the page) and queue the page's own
    (set when each is drawn: a widget not drawn in a run loses its state)."""
    state = st.session_state
    shared = {k: v for k, v in values.items() if k in SHARED_DEFAULTS}
    if shared:
        state.update(shared)
        state["preset"] = CUSTOM
        state["settings"] = shared_settings()
    _kept().pending.update({k: v for k, v in values.items() if k not in SHARED_DEFAULTS})


def reseed(keys: tuple[str, ...]) -> None:
    """Read these controls from the URL again when they are next drawn: a link to another page
    (st.page_link's query_params) then opens it with the values it carries."""
    _kept().seeded.difference_update(keys)


def number_control(
    key: str, label: str, *, default: float, low: float, high: float, step: float | None = None,
    whole: bool = False, format: str | None = None, container=None, help: str | None = None, drawn: bool = True,
) -> float:
    """A page's number box, kept in the URL under ``key``, clamped to [low, high]: for values a
    slider cannot hold exactly (a scaling factor, a length of 131,072 tokens). ``whole`` makes
    it a whole number (an int, shown in full). What is typed beyond the limits is clamped, and a
    fraction in a whole-number box rounded, with a caption under the box saying so.
    ``drawn=False`` keeps the value (URL, session) without drawing the box, for controls a page
    shows on request: the box keeps its value while it is not drawn (``persist_state``), so
    hiding it changes nothing."""
    kind = int if whole else float
    low, high, default = kind(low), kind(high), kind(default)
    parse = s.parse_int if whole else s.parse_float
    wanted = _seed(key, default, lambda raws: parse(key, raws, default=default, low=low, high=high))
    # Clamp what was typed, or what an earlier run or a preset left.
    usable = isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and math.isfinite(wanted)
    value = min(max(wanted, low), high) if usable else default
    value = kind(math.floor(value + 0.5) if whole else value)
    st.session_state[key] = value
    if not drawn:
        return value
    # The browser's box has no limits and takes any number: with them, it refused one beyond them
    # with a word only in a tooltip. And it is the float box: its whole-number box reads what is
    # typed with parseInt, "1e5" as 1 and "1.5e4" as 1, where the float box reads 100000 and 15000.
    box = (container or st).number_input(
        label, step=None if step is None else float(step), format=format or ("%.0f" if whole else "%g"),
        key=key, help=help, persist_state="session",
    )
    if value != wanted and isinstance(wanted, float):  # typed: the box sends a float
        if not usable:
            why = f"{wanted} is not a finite number"
        elif not low <= wanted <= high:
            why = f"{s.format_number(wanted)} is outside {s.format_number(low)}..{s.format_number(high)}"
        else:
            why = f"{s.format_number(wanted)} is not a whole number"
        (container or st).caption(f"{why}: using {s.format_number(value)}.")
    return kind(box)


def seed_value(key: str, default: object, parse: Callable[[list[str]], tuple[object, list[str]]]) -> object:
    """A page's value kept in the URL under ``key`` with no widget of its own (the page shows it
    in its own words): a preset's pending value, else the URL's (read once per session and
    cleaned by ``parse``), else what this session holds, else ``default``."""
    return _seed(key, default, parse)


def queue_values(values: dict[str, object]) -> None:
    """Give controls new values from a widget callback (a page's preset or a pasted file),
    sidebar or page alike: each takes its value when it is next drawn, before the widget is."""
    _kept().pending.update(values)


def correct_controls(values: dict[str, object], notices: list[str]) -> None:
    """The page cannot use its controls' values as they are (two that must go in order): the controls
    take ``values`` and the app runs again, the URL following, with ``notices`` above the page."""
    queue_values(values)
    _kept().notices.extend(notices)
    st.rerun(scope="app")


def choice_control(
    key: str, label: str, options: tuple[str, ...], *, default: str, container=None,
    format_func: Callable[[str], str] = str, horizontal: bool = True,
) -> str:
    """A page's radio choice, kept in the URL under ``key``."""
    _seed(key, default, lambda raws: s.parse_choice(key, raws, default=default, options=options))
    return (container or st).radio(label, options, key=key, format_func=format_func, horizontal=horizontal)


def multi_control(
    key: str, label: str, options: tuple[str, ...], *, default: tuple[str, ...], container=None,
    format_func: Callable[[str], str] = str, help: str | None = None,
) -> tuple[str, ...]:
    """A page's choice of several options (pills), kept in the URL under ``key`` as "a,b,c";
    returned in the options' order."""

    def parse(raws: list[str]) -> tuple[list[str], list[str]]:
        value, notices = s.parse_subset(key, raws, default=default, options=options)
        return list(value), notices

    _seed(key, list(default), parse)

    def in_options_order() -> None:
        # The widget lists choices in the order they were clicked; the URL and the defaults in the options'.
        st.session_state[key] = [option for option in options if option in st.session_state[key]]

    chosen = (container or st).pills(
        label, options, selection_mode="multi", key=key, format_func=format_func, help=help,
        on_change=in_options_order,
    )
    return tuple(option for option in options if option in (chosen or ()))


def seed_bool(key: str, default: bool = False) -> bool:
    """The value of the toggle ``key`` (kept in the URL as true/false), before it is drawn."""

    def parse(raws: list[str]) -> tuple[bool, list[str]]:
        value, notices = s.parse_choice(key, raws, default=str(default).lower(), options=("true", "false"))
        return value == "true", notices

    return bool(_seed(key, default, parse))


def bool_control(
    key: str, label: str, *, default: bool = False, container=None, drawn: bool = True, persist: bool = False,
) -> bool:
    """A page's toggle, kept in the URL under ``key`` as true/false. ``drawn=False`` and ``persist``
    as ``number_control``'s: a toggle shown on request keeps its value while hidden."""
    value = seed_bool(key, default)
    if not drawn:
        return value
    # Sent with its value in every run, not only when it changed: a run whose toggle the browser had not
    # yet mounted when the next run replaced it (a component's report at once, under load) left the
    # browser showing the toggle's default, which its next request then sent back as a click. A
    # teacher's presentation mode switched itself off that way between two steps.
    st.session_state[key] = value
    return bool((container or st).toggle(label, key=key, persist_state="session" if persist else None))


def text_control(
    key: str, label: str, *, default: str, parse: Callable[[str], tuple[str, list[str]]], container=None
) -> str:
    """A page's text box, kept in the URL under ``key``; ``parse`` cleans what is typed."""
    _seed(key, default, lambda raws: parse(raws[-1]))
    raw = (container or st).text_input(label, key=key, max_chars=s.MAX_RAW_LENGTH * 4)
    value, notices = parse(raw)
    for notice in notices:
        st.caption(notice)
    return value


def show_notices(container) -> None:
    """Show, once, what was changed in the URL's values (one line each), and which of its keys this
    view did not read (a control these settings do not draw, another page's key): ``write_url``
    leaves them out."""
    kept = _kept()
    unread = [key for key in st.query_params if key not in kept.seeded]
    kept.seeded.update(unread)  # said once; the URL no longer holds them after this run
    kept.notices.extend(
        f"URL: {s.echo(f'{key}={st.query_params.get_all(key)[-1]}')} is not used by this view at these settings; "
        "it was left out."
        for key in unread
    )
    notices, kept.notices = kept.notices, []
    for notice in notices:
        container.warning(notice, icon=":material/link_off:")
    kept.notices_shown = bool(notices)


def show_note(container, note: str) -> None:
    """Show ``note``, one line about where the settings come from, with the notices: like them, the
    next step of a shared control reruns the page and so updates or clears it."""
    container.caption(note)
    _kept().notices_shown = True


def pending_page_switch() -> str | None:
    """The page a preset asked to open, if any (read once)."""
    kept = _kept()
    target, kept.switch_to = kept.switch_to, None
    return target


def write_url() -> None:
    """Mirror every control drawn in this run that differs from its default into the URL."""
    state, kept = st.session_state, _kept()
    # One read of session state per control: each goes through Streamlit's proxy and its lock (about 4 µs),
    # and a whole run writes twenty to fifty controls (benchmarks/JOURNAL.md, "2026-12-07, 14:25").
    values = {key: (state.get(key, _ABSENT), default) for key, default in kept.defaults.items()}
    query = {
        key: s.query_value(key, value).lower() if isinstance(value, bool) else s.query_value(key, value)
        for key, (value, default) in values.items()
        if value is not _ABSENT and value != default
    }
    current = {key: st.query_params.get_all(key)[-1] for key in st.query_params}
    if query != current:
        st.query_params.from_dict(query)
    elif kept.write_address:  # sent once more by the first run whose query is already the session's
        kept.write_address = False
        st.query_params.from_dict(query)
    kept.written = query


def written_query() -> dict[str, str]:
    """The query the last run wrote into the URL (``write_url``): the view the browser shows."""
    return dict(_kept().written)
