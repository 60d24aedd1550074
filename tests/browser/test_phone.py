"""Every page on a phone (390 x 844, touch, dark theme), in a real browser: nothing cut off or
off the screen, the sidebar's controls reachable, axe-core's findings, a screenshot.

Beside tests/browser/test_accessibility.py (its helpers), in a file of its own so that the two
run side by side under pytest-xdist (``--dist loadfile``). One shared server; one phone page kept
through the tour of every page (test_accessibility.visit).
"""

from __future__ import annotations

import pytest
from layout_checks import CHART_TEXT_JS, LABELS_CUT_JS, describe_chart_text, open_kept_on_request, wait_until_settled
from test_accessibility import (
    PAGE_IDS,
    PAGES,
    PHONE,
    describe_violations,
    open_page,
    run_axe,
    serious_axe_violations,
    show_code,
    visit,
)
from test_browser import PAGES as CHART_PAGES  # path -> (heading, link text, must draw a chart)
from test_browser import SCREENSHOTS, fit_viewport_to_content, wait_for_url, wait_until_drawn

from explorer import page_list
from explorer.page_list import address_path

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    expect = None

pytestmark = pytest.mark.browser

#: How the page lies out in the viewport: the document's and the main container's widths,
#: elements that reach past the right edge without a container that clips or scrolls them,
#: the formulas (KaTeX) and, per chart, its mode bar against its title and annotations.
PHONE_LAYOUT_JS = """() => {
    const vw = window.innerWidth;
    const main = document.querySelector('[data-testid="stMain"]');
    const scrolls = (el) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
    const clippedWithin = (el) => {
        for (let p = el.parentElement; p; p = p.parentElement) {
            if (scrolls(p) && p.getBoundingClientRect().right <= vw + 0.5) return true;
        }
        return false;
    };
    const overflowing = [...main.querySelectorAll('*')].filter((el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && (r.right > vw + 0.5 || r.left < -0.5) && !clippedWithin(el);
    }).slice(0, 10).map((el) => el.outerHTML.slice(0, 160));
    // A control's box, hidden or not, is where the focus ring and a scroll into view go: within
    // the screen unless a container in the page scrolls it there (a table's cells).
    const scrollsTo = (el) => {
        for (let p = el.parentElement; p && p !== main; p = p.parentElement) {
            if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true;
        }
        return false;
    };
    const controlsOff = [...main.querySelectorAll('input, button, select, textarea, a[href], [tabindex]')]
        .filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && (r.right > vw + 0.5 || r.left < -0.5) && !scrollsTo(el);
        }).slice(0, 10).map((el) => {
            const r = el.getBoundingClientRect();
            const name = el.getAttribute('aria-label') || el.outerHTML.slice(0, 120);
            return `${name} (${Math.round(r.left)}..${Math.round(r.right)} px)`;
        });
    const formulas = [...main.querySelectorAll('.katex-display')].map((k) => {
        const r = k.getBoundingClientRect();
        return {left: r.left, right: r.right, fits: k.scrollWidth <= k.clientWidth + 0.5,
                scrolls: scrolls(k), text: k.textContent.slice(0, 60)};
    });
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const meet = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
    const charts = [...main.querySelectorAll('.js-plotly-plot')].map((plot) => {
        const bar = plot.querySelector('.modebar');
        const texts = [...plot.querySelectorAll('.gtitle, .annotation-text')];
        return {bar: bar ? box(bar) : null, texts: texts.length,
                covered: bar ? texts.filter((t) => meet(box(bar), box(t))).map((t) => t.textContent) : []};
    });
    return {vw, documentWidth: document.documentElement.scrollWidth, mainWidth: main.scrollWidth,
            mainClient: main.clientWidth, overflowing, controlsOff, formulas, charts};
}"""


@pytest.fixture(scope="module")
def phone(browser):
    """A phone-sized page (390 x 844 CSS pixels, touch, mobile viewport, twice the pixels), in
    dark mode: Streamlit follows the system's theme, so this is the dark theme's check too.
    Kept through the tour of every page, as conftest's ``tour`` is."""
    context = browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2, color_scheme="dark"
    )
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("info", PAGES, ids=PAGE_IDS)
def test_page_fits_a_phone(app_server: str, phone, info: page_list.PageInfo) -> None:
    """At 390 x 844, in the dark theme, the code, the Play charts and M-RoPE's text and video sliders shown: no
    label is cut off, nothing runs off the screen (formulas and code wrap to fit), the mode bar covers no chart
    title, the sidebar's controls open on the screen, and axe finds no serious violation there either."""
    path = address_path(info)
    visit(phone, app_server, info, "", PHONE)
    show_code(phone)
    wait_until_settled(phone)
    open_kept_on_request(phone)
    # No label cut off (issue 20): every text of a chart inside the chart and the screen, no
    # label ending in an ellipsis or running off the screen. (Tables scroll sideways here.)
    cut = describe_chart_text(phone.evaluate(CHART_TEXT_JS), f"/{path}", overlaps=False)
    cut += [f"/{path}: {label}" for label in phone.evaluate(LABELS_CUT_JS, False)]
    assert not cut, "\n".join(cut)
    layout = phone.evaluate(PHONE_LAYOUT_JS)
    assert layout["vw"] == PHONE["width"], layout["vw"]
    assert layout["documentWidth"] <= PHONE["width"], layout
    assert layout["mainWidth"] <= layout["mainClient"], layout
    assert not layout["overflowing"], "\n".join(layout["overflowing"])
    # Issue 37: Waves' slider at its maximum had its hidden input 107 px past the edge.
    assert not layout["controlsOff"], "\n".join(layout["controlsOff"])
    for formula in layout["formulas"]:
        # Within the screen, and wrapped to fit: a box that only a finger can scroll is no
        # use from the keyboard (axe's scrollable-region-focusable, checked below as well).
        assert formula["left"] >= 0 and formula["right"] <= PHONE["width"], formula
        assert formula["fits"], formula
    if CHART_PAGES[path][2]:
        assert layout["charts"] and all(c["bar"] and c["texts"] for c in layout["charts"]), layout["charts"]
    for chart in layout["charts"]:
        assert not chart["covered"], f"the mode bar covers {chart['covered']}"

    # The sidebar is closed on a phone; its button opens it, with its controls on the screen.
    # The slider as drawn (its range input itself is visually hidden, under the drawn thumb).
    slider = phone.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(
        has=phone.locator('input[type="range"][aria-label="d: embedding size"]')
    )
    expect(slider).not_to_be_in_viewport()
    phone.get_by_test_id("stExpandSidebarButton").click()
    expect(slider).to_be_in_viewport(ratio=1)  # whole, once the sidebar has slid in
    phone.get_by_role("button", name="Collapse sidebar").click()
    expect(slider).not_to_be_in_viewport()
    fit_viewport_to_content(phone, PHONE["width"], PHONE["height"])
    failing = serious_axe_violations(run_axe(phone, path))
    assert not failing, f"axe on /{path} at 390 px:\n{describe_violations(failing)}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"phone-{info.url_path}.png"
    # One image pixel per CSS pixel: a quarter of the twice-the-pixels image to encode.
    phone.screenshot(path=str(target), full_page=True, scale="css")
    assert target.stat().st_size > 10_000, f"{target} looks empty"


#: A browser that names itself a phone (Streamlit then closes the sidebar itself: it must stay closed).
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.0 Mobile/15E148 Safari/604.1")


@pytest.mark.parametrize("user_agent", [None, IPHONE], ids=["chromium", "iphone"])
def test_the_sidebar_closes_once_a_page_is_chosen_in_it(app_server: str, browser, user_agent: str | None) -> None:
    """On a phone the sidebar is drawn over the page: a page chosen in it opens with the sidebar
    closed, the new page on the screen (it stayed open over the new page: Streamlit closes it only
    for a browser that names itself a phone, and Chromium, as many, does not). A new context: the
    module's phone page may have the sidebar open from another test."""
    context = browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2, user_agent=user_agent
    )
    phone = context.new_page()
    try:
        open_page(phone, app_server, "similarity")
        sidebar = phone.get_by_test_id("stSidebar")
        phone.get_by_test_id("stExpandSidebarButton").click()
        link = sidebar.get_by_role("link", name=CHART_PAGES["waves"][1])
        expect(link).to_be_in_viewport(ratio=1)
        link.tap()
        wait_for_url(phone, "waves")
        wait_until_drawn(phone, "waves")
        expect(sidebar).to_have_attribute("data-collapsed", "true")
        expect(link).not_to_be_in_viewport()
        heading = phone.get_by_role("heading", level=1, name="Waves")
        expect(heading).to_be_in_viewport()
        # Nothing left over the page: what is at the heading's middle is the heading.
        assert phone.evaluate("""() => {
            const box = [...document.querySelectorAll('h1')].find((h) => h.innerText.startsWith('Waves'))
                .getBoundingClientRect();
            return document.elementFromPoint(box.left + 5, box.top + box.height / 2).closest('h1') !== null;
        }""")
    finally:
        context.close()
