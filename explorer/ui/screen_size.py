"""The browser window's size, which presentation mode fits its charts and text to
(explorer/presentation.py): no part of Streamlit's page protocol tells the server the screen.

A Streamlit component (``st.components.v2``, static JavaScript, nothing drawn), mounted in
presentation mode only. It is given the size the server laid the run out for and reports the
window's size when that differs: once on a screen other than the projector's 1280 x 720 (a rerun
then draws the page for it), and after a resize has settled. Normal mode never mounts it.
"""

from __future__ import annotations

import streamlit as st

from explorer import presentation

#: Element key of the component; style.py hides its (empty) element container.
KEY = "screen_size"
#: Session key of the last screen reported (presentation.Screen).
SCREEN_KEY = "screen"

#: A resize reports once the window has kept its size this long (a drag is many resizes).
JS = r"""
export default function ({ data, setStateValue }) {
    const report = () => {
        const width = window.innerWidth, height = window.innerHeight;
        if (width !== data.width || height !== data.height) setStateValue('size', { width, height });
    };
    let timer;
    const settle = () => { clearTimeout(timer); timer = setTimeout(report, 250); };
    report();
    window.addEventListener('resize', settle);
    return () => { clearTimeout(timer); window.removeEventListener('resize', settle); };
}
"""

_component = st.components.v2.component("explorer.screen_size", js=JS)


def screen() -> presentation.Screen:
    """The screen the browser last reported, or the projector's until it has."""
    return st.session_state.get(SCREEN_KEY, presentation.PROJECTOR)


def _remember_report() -> None:
    reported = presentation.screen_from_report(st.session_state[KEY].get("size"))
    if reported is not None:
        st.session_state[SCREEN_KEY] = reported


def mount() -> None:
    """Mount the component (every run in presentation mode), given the screen this run is laid out for."""
    current = screen()
    _component(
        key=KEY, data={"width": current.width, "height": current.height},
        default={"size": None}, on_size_change=_remember_report,
    )
