"""The app in a real browser: deep links, keyboard, navigation, bad URLs, screenshots.

Streamlit reruns are asynchronous, so every step waits on a condition (bounded by the
context's default timeout), never on a fixed sleep.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np
import pytest
from layout_checks import wait_until_settled
from support.app_runs import DEEP_LINKS
from support.browser_harness import APP_IDLE_JS, CHART_SIGNATURE_JS, REPO_ROOT, VIEWPORT, StreamlitServer
from support.seed_code import seed002_positional_encoding

from explorer.ui.navigation import PAGE_FAILED

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    expect = None

pytestmark = pytest.mark.browser

SCREENSHOTS = REPO_ROOT / "tests" / "screenshots"
#: A cold first load imports NumPy, Plotly and pandas on the server.
FIRST_LOAD_MS = 60_000

#: URL path of each page (explorer/page_list.py; Home, the default page, is at "/") -> the
#: heading it shows, the sidebar link's text, and whether it must draw at least one chart.
PAGES = {
    "": ("Positional Encoding", "Home", False),
    "matrix": ("Encoding matrix", "Encoding matrix", True),
    "waves": ("Waves", "Waves", True),
    "similarity": ("Similarity", "Similarity", True),
    "binary": ("Binary", "Binary vs sinusoid", True),
    "relative": ("Relative", "Relative positions", True),
    # The scorecard's one chart is by offset: with a single position (L=1) there is none.
    "scorecard": ("Criteria scorecard", "Criteria scorecard", False),
    "pitfalls": ("Conventions and pitfalls", "Conventions and pitfalls", True),
    "precision": ("Precision", "Precision", True),
    "embeddings": ("Embeddings + position", "Embeddings + position", True),
    "rotary": ("Rotary (RoPE)", "Rotary (RoPE)", True),
    "attention": ("Attention by offset", "Attention by offset", True),
    "contexts": ("Longer contexts", "Longer contexts", True),
    "layers": ("Your model, layer by layer", "Your model, layer by layer", True),
    "mrope": ("Images and video (M-RoPE)", "Images and video (M-RoPE)", True),
    "lessons": ("Lessons", "Lessons", False),
}
PLOT = '[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg'
EVERY_CHART_DRAWN_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .every((chart) => chart.querySelector('.js-plotly-plot .main-svg') !== null)"""


def sidebar_slider(page, label: str):
    """The sidebar slider's thumb: a range input labelled with the slider's label."""
    # Its accessible name repeats the label (aria-labelledby names it twice), so match aria-label.
    return page.locator(f'[data-testid="stSidebar"] [data-testid="stSlider"] input[type="range"][aria-label="{label}"]')


def expect_sidebar(page, *, d: str, L: str, n: str) -> None:
    """The sidebar sliders show these values (aria-valuetext: for n, the formatted stop)."""
    expect(sidebar_slider(page, "d: embedding size")).to_have_attribute("aria-valuetext", d)
    expect(sidebar_slider(page, "L: positions")).to_have_attribute("aria-valuetext", L)
    expect(sidebar_slider(page, "n: base (log scale)")).to_have_attribute("aria-valuetext", n)


def query(page) -> dict[str, str]:
    """The page URL's query string, each key's last value."""
    return {key: values[-1] for key, values in parse_qs(urlsplit(page.url).query).items()}


def wait_for_url(page, path: str, **values: str) -> None:
    """Wait until the address bar shows ``/path`` with at least these query values."""
    page.wait_for_function(
        """([path, values]) => location.pathname.replace(/\\/$/, '') === path
            && Object.entries(values).every(([k, v]) => new URLSearchParams(location.search).get(k) === v)""",
        arg=[f"/{path}" if path else "", values],
    )


def wait_until_drawn(page, path: str, timeout: float | None = None) -> None:
    """Wait for the page's heading, the end of the rerun and, on chart pages, a drawn chart."""
    title, _, has_chart = PAGES[path]
    heading = page.get_by_role("heading", level=1, name=re.compile(re.escape(title), re.IGNORECASE))
    expect(heading.first).to_be_visible(timeout=timeout)
    page.wait_for_function(APP_IDLE_JS, timeout=timeout)
    if has_chart:
        expect(page.locator(PLOT).first).to_be_visible(timeout=timeout)
    page.wait_for_function(EVERY_CHART_DRAWN_JS, timeout=timeout)


def fit_viewport_to_content(page, width: int, min_height: int, *, from_top: bool = True) -> None:
    """Make the viewport as tall as the page's content (at least ``min_height``, at most 8000 px).

    Streamlit scrolls inside its main container, not the document: what lies below the
    fold is clipped by that container, so axe skips it as hidden and a full-page screenshot
    stops at the viewport. ``from_top``: scrolled back to the top first, as a toggle pressed
    further down (show_code) leaves the container scrolled and the top would be what is
    clipped; without it, a page longer than 8000 px keeps the part a test scrolled to.
    """
    height = page.evaluate(
        """(fromTop) => Math.max(...['stMain', 'stAppViewContainer', 'stSidebarContent'].map((id) => {
            const el = document.querySelector(`[data-testid="${id}"]`);
            if (el && fromTop) el.scrollTo(0, 0);
            return el ? el.scrollHeight : 0;
        }))""",
        from_top,
    )
    page.set_viewport_size({"width": width, "height": min(max(height, min_height), 8000)})
    page.wait_for_function(APP_IDLE_JS)
    page.wait_for_function(EVERY_CHART_DRAWN_JS)


def save_screenshot(page, name: str) -> None:
    """A full-page screenshot, tests/screenshots/<name>.png, for a person to look at: of the part
    of the page a test scrolled to, where the page is longer than 8000 px."""
    fit_viewport_to_content(page, VIEWPORT["width"], VIEWPORT["height"], from_top=False)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000, f"{target} looks empty"


def chart_signature(page) -> str | None:
    return page.evaluate(CHART_SIGNATURE_JS, 0)


def first_chart_showing(page, text: str) -> str:
    """The first chart's signature once it shows ``text``: a page's first chart may be drawn a
    moment after the charts below it (a warm server replays them all at once), so the first
    chart drawn is not always the first chart."""
    page.wait_for_function(f"(text) => (({CHART_SIGNATURE_JS})(0) || '').includes(text)", arg=text)
    return chart_signature(page)


def assert_no_traceback(page) -> None:
    """No exception element, no traceback text, no "could not be drawn" message. (The
    words "error" and "exception" alone are fair: the Precision page measures errors.)"""
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    text = page.locator("body").inner_text()
    for marker in ("Traceback", 'File "', PAGE_FAILED, "This app has encountered an error"):
        assert marker not in text, f"{marker!r} on the page:\n{text[:2000]}"


@pytest.fixture(scope="module")
def new_server(browser) -> Iterator[str]:
    """A server started for the deep-link tests alone: the first page's deep link is its very
    first request, and every other page's deep link is the first visit a browser makes to that page. (One
    server for them all, not one each: Streamlit's file-based page discovery runs a page
    file named as its URL path without app.py on a fresh server and after it alike.)"""
    with StreamlitServer("app.py") as server:
        yield server.url


#: Pages whose deep link the browser opens: Home (the server's first request) and one with page
#: controls in its link. tests/app/test_deep_links.py opens every page's over Streamlit's
#: protocol, as the browser asks for it.
DEEP_LINK_PAGES = ["", "rotary"]


@pytest.mark.parametrize("path", DEEP_LINK_PAGES, ids=[path or "home" for path in DEEP_LINK_PAGES])
def test_deep_link_opens_the_view_on_a_fresh_server(new_server: str, page, path: str) -> None:
    """A deep link is the first visit its page gets on a newly started server; the page, its
    chart and the sidebar all show the URL's settings (so app.py ran, not the page file alone)."""
    url = f"{new_server}/{path}?{DEEP_LINKS[path]}"
    page.goto(url, timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, path, timeout=FIRST_LOAD_MS)
    expect_sidebar(page, d="64", L="300", n="100")
    wait_for_url(page, path, d="64", L="300", n="100")
    assert_no_traceback(page)
    save_screenshot(page, path or "home")


def test_an_old_home_address_lands_on_home_with_its_settings(app_server: str, page) -> None:
    """/home (Home's URL path in the page list, an old link, what a person types): Home, at
    "/", with the URL's settings, and no "Page not found" dialog."""
    page.goto(f"{app_server}/home?d=64&L=300&n=100", timeout=FIRST_LOAD_MS)
    wait_for_url(page, "", d="64", L="300", n="100")
    wait_until_drawn(page, "", timeout=FIRST_LOAD_MS)
    expect_sidebar(page, d="64", L="300", n="100")
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert_no_traceback(page)


def test_keyboard_moves_a_slider_and_the_chart_follows(app_server: str, page) -> None:
    page.goto(f"{app_server}/matrix?d=64&L=300", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "matrix", timeout=FIRST_LOAD_MS)
    before = first_chart_showing(page, "d=64")

    d_slider = sidebar_slider(page, "d: embedding size")
    d_slider.focus()
    page.keyboard.press("ArrowRight")
    expect(d_slider).to_have_attribute("aria-valuetext", "66")
    wait_for_url(page, "matrix", d="66", L="300")
    page.wait_for_function(f"(before) => {{ const now = ({CHART_SIGNATURE_JS})(0); "
                           "return now !== null && now !== before; }", arg=before)
    after = chart_signature(page)
    assert "d=66" in after, after

    page.keyboard.press("ArrowLeft")
    expect(d_slider).to_have_attribute("aria-valuetext", "64")
    wait_for_url(page, "matrix", d="64", L="300")
    # Back at d=64 the chart shows exactly what it showed before.
    page.wait_for_function(f"(before) => ({CHART_SIGNATURE_JS})(0) === before", arg=before)


def test_sidebar_navigation_keeps_the_settings(app_server: str, page) -> None:
    page.goto(f"{app_server}/matrix?d=64&L=300&n=100", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "matrix", timeout=FIRST_LOAD_MS)
    nav = page.locator('[data-testid="stSidebarNav"]')
    expected = {"d": "64", "L": "300", "n": "100"}
    for path in ("waves", "similarity", "binary", "relative", "", "matrix"):
        nav.get_by_role("link", name=PAGES[path][1]).click()
        wait_for_url(page, path, **expected)
        wait_until_drawn(page, path)
        expect_sidebar(page, **expected)
        assert query(page).items() >= expected.items(), page.url
        if path == "waves":
            # A change made on another page than the first is kept too.
            sidebar_slider(page, "L: positions").focus()
            page.keyboard.press("ArrowRight")
            expected["L"] = "301"
            wait_for_url(page, path, **expected)
            expect(sidebar_slider(page, "L: positions")).to_have_attribute("aria-valuetext", "301")
    # The tab's icon is the app's own, in the page (conftest's no_request_leaves_the_machine).
    page.wait_for_function("() => document.querySelector('link[rel~=\"icon\"]')?.href.startsWith('data:')")


#: What every control on the page shows, sidebar and page alike: each slider's value, each select
#: box's and radio group's label with its choice, each toggle's label and state.
CONTROLS_SHOWN_JS = """() => {
    const named = (selector, value) => [...document.querySelectorAll(selector)]
        .map((el) => `${el.getAttribute('aria-label')}: ${value(el)}`);
    return JSON.stringify([
        ...named('input[type="range"]', (el) => el.getAttribute('aria-valuetext')),
        ...named('input[role="combobox"]', (el) => el.value),
        ...named('input[type="number"], input[type="text"]:not([role])', (el) => el.value),
        ...named('[role="radiogroup"]', (el) => el.querySelector('input:checked')?.closest('label')?.innerText),
        ...[...document.querySelectorAll('[data-testid="stCheckbox"] input')]
            .map((el) => `${el.closest('label').innerText.trim()}: ${el.checked}`),
    ]);
}"""


#: Teachers' links (a page's own key, Similarity's ref; a Rotary model with a scaling of its own) ->
#: controls the view shows.
SHARED_VIEWS = {
    "similarity?ref=30&L=200": ["Reference position: 30", "L: positions: 200"],
    "rotary?model=llama-3-8b&scaling=linear&factor=4&L=300": [
        "Model preset (sets d, n, the layout and the scaling): Llama 3 8B",
        "Scaling: linear (position interpolation)", "L: positions: 300",
    ],
}


@pytest.mark.parametrize(("link", "shown"), SHARED_VIEWS.items(), ids=["similarity", "rotary"])
def test_one_back_returns_to_the_view_with_every_key(app_server: str, page, link: str, shown: list[str]) -> None:
    """From a shared view, choosing another page in the sidebar and pressing Back once returns to
    the view as it was: the same address with every key, every control showing what it showed.
    (Streamlit pushed two entries for a page change, the first without the settings, and Back to
    an address did not read its keys again: the page lost ``ref``, Rotary its model.)"""
    path = link.split("?")[0]
    page.goto(f"{app_server}/{link}", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, path, timeout=FIRST_LOAD_MS)
    wait_until_settled(page)
    view_url, view_controls = page.url, page.evaluate(CONTROLS_SHOWN_JS)
    for control in shown:
        assert control in view_controls, view_controls
    assert query(page).items() >= dict(parse_qs_last(link.split("?")[1])).items(), page.url
    entries = page.evaluate("history.length")

    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Waves").click()
    wait_for_url(page, "waves")
    wait_until_drawn(page, "waves")
    page.wait_for_function(APP_IDLE_JS)
    assert page.evaluate("history.length") == entries + 1, "a page change is one history entry"

    page.go_back()
    wait_until_drawn(page, path)
    page.wait_for_function("(url) => location.href === url", arg=view_url)
    page.wait_for_function(f"(shown) => ({CONTROLS_SHOWN_JS})() === shown", arg=view_controls)
    assert page.url == view_url
    assert_no_traceback(page)


def parse_qs_last(query_string: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(query_string).items()}


#: Pages whose bad URL the browser shows: Home (no chart) and one that wants an even d. The
#: notices and the clamping are app.py's, the same on every page, and tests/app/test_app.py
#: checks them on every page (a browser load here costs ~7 s of CPU).
BAD_URL_PAGES = ["", "rotary"]


@pytest.mark.parametrize("path", BAD_URL_PAGES, ids=[path or "home" for path in BAD_URL_PAGES])
def test_bad_url_values_are_clamped_with_a_notice(app_server: str, page, path: str) -> None:
    page.goto(f"{app_server}/{path}?d=abc&L=-5&n=nan", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, path, timeout=FIRST_LOAD_MS)
    notices = page.locator('[data-testid="stAlert"] [data-testid="stMarkdownContainer"]')
    for key in ("d", "L", "n"):
        notice = notices.filter(has_text=re.compile(rf"\b{key}\b\s*=")).first
        expect(notice).to_be_visible()
        assert "\n" not in notice.inner_text().strip(), notice.inner_text()
    expect_sidebar(page, d="128", L="1", n="10000")
    wait_for_url(page, path, L="1")
    assert not {"d", "n"} & query(page).keys(), page.url
    assert_no_traceback(page)


def test_a_hostile_url_value_is_shown_as_typed_and_never_rendered(app_server: str, page) -> None:
    """A notice quotes the URL's value as typed (a code span): no link, bold, colour or emoji made of
    it, and a key no control reads at these settings is named too."""
    typed = "[x](//ev.il):red[y]<b>z"
    page.goto(f"{app_server}/rotary?model={quote(typed)}&row_start=1e20", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "rotary", timeout=FIRST_LOAD_MS)
    notice = page.locator('[data-testid="stAlert"]').filter(has_text="model=").first
    expect(notice).to_contain_text(f"model={typed} is not one of")
    assert notice.locator("a, b, strong, [class*=red], code b").count() == 0
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="row_start=1e20 is not used").first).to_be_visible()
    assert_no_traceback(page)


def test_upload_a_matrix_and_read_the_verdict(app_server: str, page, tmp_path) -> None:
    """A student's own matrix, saved as a real .npy file, goes through the page's uploader."""
    matrix = tmp_path / "my_encoding.npy"
    np.save(matrix, seed002_positional_encoding(60, 32).astype(np.float32))
    page.goto(f"{app_server}/pitfalls", timeout=FIRST_LOAD_MS)
    page.get_by_role("heading", level=1, name="Conventions and pitfalls").wait_for(timeout=FIRST_LOAD_MS)
    page.wait_for_function(APP_IDLE_JS)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(matrix))
    verdict = page.locator('[data-testid="stAlert"]').filter(has_text="bug of seed 002")
    expect(verdict.first).to_be_visible(timeout=FIRST_LOAD_MS)
    assert "1e8" in verdict.first.inner_text() or "10000^2" in verdict.first.inner_text()
    assert_no_traceback(page)


def test_download_the_drawn_matrix(app_server: str, page, tmp_path) -> None:
    """The NPY download of the encoding heatmap is the matrix drawn (here every cell)."""
    page.goto(f"{app_server}/matrix?d=8&L=5&n=100", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "matrix", timeout=FIRST_LOAD_MS)
    # Downloads are offered on request (the sidebar's toggle), so that no rerun pays for them.
    assert page.get_by_role("button", name=re.compile(r"\(NPY\)")).count() == 0
    page.get_by_text("Offer the charts' data").click()
    button = page.get_by_role("button", name=re.compile(r"\(NPY\)")).first
    button.wait_for(timeout=FIRST_LOAD_MS)
    with page.expect_download() as download_info:
        button.click()
    target = tmp_path / "download.npy"
    download_info.value.save_as(target)
    drawn = np.load(target, allow_pickle=False)
    k = np.arange(5)[:, None]
    w = 100.0 ** (-2 * np.arange(4) / 8)
    expected = np.empty((5, 8))
    expected[:, 0::2], expected[:, 1::2] = np.sin(k * w), np.cos(k * w)
    np.testing.assert_allclose(drawn, expected, rtol=0, atol=1e-12)
