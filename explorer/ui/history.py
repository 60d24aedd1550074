"""The browser's history: one entry per thing the visitor did, so that one Back returns to the view
before it.

Streamlit pushes a history entry for each address it writes: a page chosen in the sidebar is
two, the page's address without the view's settings (Streamlit drops the query string on a page
change) and then the address the app writes after the page's run (controls.write_url), with
them. The first Back went to the address without settings and changed nothing visible. This
Streamlit component (``st.components.v2``, static JavaScript, no data, nothing drawn) makes an
address written before the visitor's next action (a press of a key or a pointer, a drop) replace
the current entry instead of adding one: the page change is one entry, with its settings.
Back and Forward themselves are Streamlit's (it replaces the entry after them); what the app
shows after one is read from its address again (controls.begin_run).
"""

from __future__ import annotations

import streamlit as st

#: Element key of the component; style.py hides its (empty) element container.
KEY = "history_entries"

#: Runs in the app's page (components v2 are not sandboxed), once per page however often it is
#: mounted. Capture phase: an action counts before any handler of the page sees it.
JS = r"""
export default function () {
    if (window.__peHistory) return;
    window.__peHistory = true;
    let acted = false;
    for (const type of ['pointerdown', 'keydown', 'drop']) {
        window.addEventListener(type, (event) => { if (event.isTrusted) acted = true; }, true);
    }
    const push = history.pushState.bind(history);
    history.pushState = (state, unused, url) => {
        if (acted) {
            acted = false;
            return push(state, unused, url);
        }
        return history.replaceState(state, unused, url);
    };
}
"""

_component = st.components.v2.component("explorer.history_entries", js=JS)


def one_entry_per_action() -> None:
    """Mount the component (every whole run, as keyboard.play_keys: mounted once it was sometimes
    gone before the browser had started it)."""
    _component(key=KEY)
