"""Accessibility in a real browser: axe-core on every page at the largest settings and the
keyboard alone (every page at 390 x 844, a phone, is tests/browser/test_phone.py).

axe-core comes with axe-playwright-python (its axe.min.js, offline). One shared server; one
page kept through the tour of every page (conftest's ``tour``).
"""

from __future__ import annotations

import json
import re

import pytest
from layout_checks import open_kept_on_request, wait_until_settled
from support.browser_harness import APP_IDLE_JS, CHART_SIGNATURE_JS, VIEWPORT
from test_browser import (
    FIRST_LOAD_MS,
    assert_no_traceback,
    chart_signature,
    expect_sidebar,
    first_chart_showing,
    fit_viewport_to_content,
    save_screenshot,
    sidebar_slider,
    wait_for_url,
    wait_until_drawn,
)

from explorer import page_list
from explorer.page_list import address_path

try:
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    Axe = expect = PlaywrightError = None

pytestmark = pytest.mark.browser

PAGES = page_list.PAGES
PAGE_IDS = [info.url_path for info in PAGES]
#: axe impacts that fail the test. Moderate and minor findings are not all ours to fix
#: (the one left, "presentation-role-conflict" on Streamlit's file-uploader drop zone, is
#: minor), except heading order, which the pages control and keep.
FAILING_IMPACTS = {"serious", "critical"}
ALSO_FAILING_RULES = {"heading-order"}
PHONE = {"width": 390, "height": 844}


#: The app's CSS (explorer/ui/style.py) is on the page. Its st.html is drawn a moment after the
#: rest of the first run (Streamlit loads that element's code on demand).
APP_STYLE_JS = """() => document.querySelector('[data-testid="stHtml"] style') !== null"""


def open_page(page, base_url: str, path: str, query: str = "") -> None:
    """Open the page (with ``query``, "?a=b..."), and wait until it is drawn and styled."""
    page.goto(f"{base_url}/{path}{query}", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, path, timeout=FIRST_LOAD_MS)
    page.wait_for_function(APP_STYLE_JS)


#: Follows the navigation's link to the page at this path (the link is there, if hidden, with
#: the sidebar closed in presentation mode or on a phone): Streamlit opens it without loading the app again.
OPEN_FROM_NAVIGATION_JS = """(path) => [...document.querySelectorAll('[data-testid="stSidebarNav"] a')]
    .find((link) => new URL(link.href).pathname.replace(/\\/$/, '') === (path ? `/${path}` : '')).click()"""


def open_from_navigation(page, path: str) -> None:
    """Open the page at ``path`` from the app's navigation, as a visitor does, and wait until it
    is drawn and styled: the shared settings go along (test_sidebar_navigation_keeps_the_settings)."""
    page.evaluate(OPEN_FROM_NAVIGATION_JS, path)
    wait_for_url(page, path)
    wait_until_drawn(page, path)
    page.wait_for_function(APP_STYLE_JS)


def visit(page, base_url: str, info: page_list.PageInfo, query: str, size: dict[str, int] = VIEWPORT) -> None:
    """Open ``info``'s page in a tour (conftest's ``tour``) at the window ``size``, with ``query``'s
    shared settings: by its address the first time, from the navigation after that (the settings
    carry over; a test checks them in the sidebar). By its address again when the page a
    failed test left cannot navigate. Page toggles do not carry over: ``show_code``."""
    page.set_viewport_size(size)
    path = address_path(info)
    if page.url.startswith(base_url):
        try:
            open_from_navigation(page, path)
            return
        except (PlaywrightError, AssertionError):
            pass
    open_page(page, base_url, path, query)


def show_code(page) -> None:
    """Turn on the page's "reproduce this" code (its toggle, as a visitor does) and wait for it."""
    code = page.get_by_test_id("stCode").first
    if not code.is_visible():
        page.get_by_text("Reproduce this in code").click()
    expect(code).to_be_visible()
    page.wait_for_function(APP_IDLE_JS)
    page.wait_for_function(APP_STYLE_JS)


def describe_violations(violations: list[dict]) -> str:
    """axe's findings, one line per node: rule, impact, the node and what to fix."""
    lines = []
    for violation in violations:
        for node in violation["nodes"]:
            summary = " ".join(node.get("failureSummary", "").split())
            lines.append(f"{violation['id']} ({violation['impact']}): {node['html'][:160]} -> {summary[:300]}")
    return "\n".join(lines)


#: The page whose "reproduce this" code axe reads. The code block is Streamlit's, with the same
#: colours on every page, and reading its every highlighted token was most of axe's time on a page
#: (Rotary: 6.2 s with it, 2.7 s without); it is read on Rotary's, the longest, in both themes.
AXE_CODE_PAGE = "rotary"


def run_axe(page, path: str):
    """axe on the whole page, violations only (listing every node that passed doubled its time; one
    node per passed rule is kept), the code block skipped except on ``AXE_CODE_PAGE``."""
    context = None if path == AXE_CODE_PAGE else {"exclude": [['[data-testid="stCode"]']]}
    return Axe().run(page, context=context, options={"resultTypes": ["violations"]})


def serious_axe_violations(results) -> list[dict]:
    """The violations in axe's ``results`` that fail a test."""
    return [
        violation for violation in results.response["violations"]
        if violation["impact"] in FAILING_IMPACTS or violation["id"] in ALSO_FAILING_RULES
    ]


@pytest.mark.parametrize("info", PAGES, ids=PAGE_IDS)
def test_largest_settings_draw_every_chart_and_axe_finds_no_serious_violation(
    app_server: str, tour, info: page_list.PageInfo
) -> None:
    """At L=16384, d=2048 (where the size budgets bite), every chart drawn without an error, and
    no serious or critical axe-core violation, with headings in order, on the whole page in the
    light theme, its "reproduce this" code, its Play charts and M-RoPE's text and video sliders shown
    (test_page_fits_a_phone: the dark one)."""
    path = address_path(info)
    visit(tour, app_server, info, "?d=2048&L=16384")
    expect_sidebar(tour, d="2048", L="16384", n="10000")
    show_code(tour)
    wait_until_settled(tour)
    open_kept_on_request(tour)
    assert_no_traceback(tour)
    fit_viewport_to_content(tour, VIEWPORT["width"], VIEWPORT["height"])
    results = run_axe(tour, path)
    failing = serious_axe_violations(results)
    assert not failing, f"axe on /{path}:\n{describe_violations(failing)}"
    # axe did look at the page: it passed the rules the fixes answer.
    passed = {rule["id"] for rule in results.response["passes"]}
    assert {"color-contrast", "heading-order"} <= passed, passed
    save_screenshot(tour, f"{path or 'home'}-largest")


# --- the keyboard alone ---------------------------------------------------------------

#: A short description of the focused element, or null when nothing (the body) has focus.
FOCUSED_JS = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    return [el.tagName, el.getAttribute('type') || el.getAttribute('role') || '',
            el.getAttribute('aria-label') || el.textContent.trim().slice(0, 60)];
}"""
#: Every control of the sidebar and of the page a visitor can operate: the same description
#: as FOCUSED_JS. A radio group is one tab stop (its checked radio; arrows move within it).
#: Left out: what Streamlit takes out of the tab order itself (tabindex -1: a select box's
#: "Open" arrow, whose box, a tab stop, opens with ArrowDown), and what is inside a Plotly
#: chart: its mode bar's buttons (out of the tab order: explorer/ui/keyboard.py), the Play controls and legend
#: entries (explorer/ui/keyboard.py; test_play.py and test_legend_entries_by_keyboard_alone).
CONTROLS_JS = """() => {
    const selector = 'input:not([type="hidden"]):not([type="file"]), button, a[href], textarea, [role="slider"]';
    const roots = ['stSidebar', 'stMain'].map((id) => document.querySelector(`[data-testid="${id}"]`));
    return roots.flatMap((root) => [...root.querySelectorAll(selector)])
        .filter((el) => !el.closest('.js-plotly-plot') && !el.disabled && el.tabIndex >= 0
            && el.checkVisibility({visibilityProperty: true})
            && !(el.type === 'radio' && !el.checked))
        .map((el) => [el.tagName, el.getAttribute('type') || el.getAttribute('role') || '',
                      el.getAttribute('aria-label') || el.textContent.trim().slice(0, 60)]);
}"""


def tab_to(page, name: str, *, key: str = "Tab", limit: int = 120) -> None:
    """Press ``key`` (Tab, or Shift+Tab to go back) until the focused element's label matches ``name``."""
    for _ in range(limit):
        page.keyboard.press(key)
        focused = page.evaluate(FOCUSED_JS)
        if focused is not None and re.search(name, focused[2]):
            return
    raise AssertionError(f"{name!r} not reached in {limit} presses of {key}")


def test_every_control_is_reached_by_tab(app_server: str, page) -> None:
    """Tabbing from the top of Matrix passes every control of the sidebar and the page."""
    page.goto(f"{app_server}/matrix?d=64&L=300", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "matrix", timeout=FIRST_LOAD_MS)
    controls = {tuple(c) for c in page.evaluate(CONTROLS_JS)}
    assert len(controls) >= 10, controls  # the sidebar alone has 8
    reached: set[tuple] = set()
    for _ in range(4 * len(controls)):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED_JS)
        if focused is not None:
            reached.add(tuple(focused))
        if controls <= reached:
            break
    assert controls <= reached, f"never focused by Tab: {sorted(controls - reached)}"


def test_slider_toggle_and_select_box_by_keyboard_alone(app_server: str, page) -> None:
    """On Matrix, by keys only: a sidebar slider, the page's transpose toggle and the
    sidebar's preset select box each change the URL and what is drawn."""
    page.goto(f"{app_server}/matrix?d=64&L=300", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "matrix", timeout=FIRST_LOAD_MS)

    before = first_chart_showing(page, "d=64")
    tab_to(page, r"^d: embedding size$")
    page.keyboard.press("ArrowRight")
    expect(sidebar_slider(page, "d: embedding size")).to_have_attribute("aria-valuetext", "66")
    wait_for_url(page, "matrix", d="66", L="300")
    page.wait_for_function(f"(before) => {{ const now = ({CHART_SIGNATURE_JS})(0); "
                           "return now !== null && now !== before; }", arg=before)
    assert "d=66" in chart_signature(page)

    before = chart_signature(page)
    tab_to(page, r"^Transpose")
    page.keyboard.press("Space")
    wait_for_url(page, "matrix", d="66", transpose="true")
    page.wait_for_function(f"(before) => {{ const now = ({CHART_SIGNATURE_JS})(0); "
                           "return now !== null && now !== before; }", arg=before)
    # Transposed: the first trace's rows are now the 66 dimensions.
    assert json.loads(chart_signature(page))[1][0][3][0] == 66

    # Back to the sidebar's select box: the first preset (seed 000's 4 x 4 matrix) by arrows and Enter.
    tab_to(page, r"^Preset$", key="Shift+Tab")
    page.keyboard.press("ArrowDown")  # opens the list on the option after the current one (Custom)
    expect(page.get_by_role("listbox")).to_be_visible()
    active = page.evaluate("() => document.getElementById(document.activeElement.getAttribute('aria-activedescendant'))"
                           ".textContent")
    assert active.startswith("Seed 000: 4x4 example"), active
    page.keyboard.press("Enter")
    wait_for_url(page, "matrix", preset="seed000-matrix", d="4", L="4", n="100")
    page.wait_for_function(APP_IDLE_JS)
    expect(sidebar_slider(page, "d: embedding size")).to_have_attribute("aria-valuetext", "4")
    assert_no_traceback(page)


def test_legend_entries_by_keyboard_alone(app_server: str, page) -> None:
    """A chart's legend entries are switches (explorer/ui/keyboard.py): Tab reaches them, Enter
    hides the trace and Space shows it again, as a click on the entry does (Similarity, seed
    001: the closed form's chart and its measured points)."""
    page.goto(f"{app_server}/similarity?preset=seed001-similarity", timeout=FIRST_LOAD_MS)
    page.wait_for_function(APP_IDLE_JS, timeout=FIRST_LOAD_MS)
    name = "measured P[ref+δ]·P[ref]"
    entry = page.locator('.js-plotly-plot .legend .traces[role="switch"]', has_text=name).first
    expect(entry).to_have_attribute("aria-checked", "true")
    shown = "(entry) => entry.closest('.js-plotly-plot')._fullData.map((trace) => trace.visible)"
    assert entry.evaluate(shown) == [True, True]

    page.get_by_role("slider", name="Reference position").focus()
    tab_to(page, "^" + re.escape(name))
    page.keyboard.press("Enter")
    expect(entry).to_have_attribute("aria-checked", "false")
    assert entry.evaluate(shown) == [True, "legendonly"]
    assert page.evaluate(FOCUSED_JS)[2].startswith(name), "the focus left the legend entry"
    page.keyboard.press("Space")
    expect(entry).to_have_attribute("aria-checked", "true")
    assert entry.evaluate(shown) == [True, True]
    assert_no_traceback(page)
