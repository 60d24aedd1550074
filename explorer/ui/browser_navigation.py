"""How the browser moves between views: one history entry per thing the visitor did, so that one
Back returns to the view before it, and on a phone the sidebar closes once a page is chosen in it.

History: Streamlit pushes a history entry for each address it writes. A page chosen in the
sidebar was two: the page's address without the view's settings (Streamlit drops the query
string on a page change), then the address the app writes after the page's run
(controls.write_url), with them; the first Back went to the address without settings and
changed nothing visible. Here an address written before the visitor's next action (a press of a
key or a pointer, a drop) replaces the current entry instead of adding one: a page change is one
entry, with its settings. Back and Forward themselves are Streamlit's (it replaces the entry
after them); what the app shows after one is read from its address again (controls.begin_run).

The phone's sidebar: where it is drawn over the page (a narrow screen), Streamlit closes it after
a page is chosen only for a browser that names itself a phone; it stayed open over the new page
on others. Here it closes wherever it covers the page.

A script (static JavaScript, sent with the app's style sheet: explorer/ui/style.py).
"""

from __future__ import annotations

#: Runs in the app's page, once per page however often Streamlit draws the element that carries it.
#: An action counts in the capture phase, before any handler of the page sees it. The sidebar is
#: looked at a frame after the click, once Streamlit has handled it (it may have closed it itself).
SCRIPT = r"""<script>
(() => {
    if (window.__peBrowserNavigation) return;
    window.__peBrowserNavigation = true;

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

    const closeCoveringSidebar = () => {
        const sidebar = document.querySelector('[data-testid="stSidebar"]');
        const main = document.querySelector('[data-testid="stMain"]');
        if (!sidebar || !main || sidebar.getAttribute('data-collapsed') === 'true') return;
        if (sidebar.getBoundingClientRect().right > main.getBoundingClientRect().left + 1) {
            document.querySelector('[data-testid="stSidebarCollapseButton"] button')?.click();
        }
    };
    document.addEventListener('click', (event) => {
        if (event.target.closest?.('[data-testid="stSidebarNav"] a')) requestAnimationFrame(closeCoveringSidebar);
    });
})();
</script>"""
