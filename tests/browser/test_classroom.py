"""In front of a class, in a real browser: the Share panel's address and QR code, and
presentation mode (issues 14 and 20).

The Share panel must show the current view even after a page control moved inside a
fragment (which reruns only its fragment), its address must reopen that view on a server
that never saw this session, and its QR code, as the browser draws it, must decode to
exactly that address and lie whole on a 1280 x 720 projector's screen. Presentation mode
must close the sidebar, stay on after a reload (it is in the URL) and leave with the same
toggle, and Tab must never reach a control that is not on the screen. On a projector, no
page may draw a chart's text over its other text or cut a label off.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import time
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from layout_checks import (
    CHART_SIZES_JS,
    CHART_TEXT_JS,
    CHARTS_AT_WIDTH_JS,
    LABELS_CUT_JS,
    SMALL_CHART_TEXT_JS,
    describe_chart_text,
    open_kept_on_request,
    wait_until_settled,
)
from PIL import Image
from support.browser_harness import APP_IDLE_JS, CHROMIUM, LAUNCH_ARGS, VIEWPORT
from support.proxy_harness import ReplicasBehindProxy, haproxy_binary
from test_accessibility import FOCUSED_JS, OPEN_FROM_NAVIGATION_JS, PAGES, open_page, tab_to
from test_browser import (
    FIRST_LOAD_MS,
    SCREENSHOTS,
    expect_sidebar,
    save_screenshot,
    wait_for_url,
    wait_until_drawn,
)

from explorer import presentation, share
from explorer.page_list import address_path
from explorer.ui.classroom import SIDEBAR_CLOSED

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    expect = PlaywrightTimeout = None

zxingcpp = pytest.importorskip("zxingcpp")

pytestmark = pytest.mark.browser

#: A view far from the defaults: the shared settings and the Waves page's own controls.
VIEW = "waves?d=64&n=100&L=300&layout=concatenated&wave_positions=0%2C5%2C9&pair=3&k=40"
SIDEBAR = '[data-testid="stSidebar"]'


def page_slider(page, label: str):
    """A page control's slider thumb (a range input named by its label), outside the sidebar."""
    return page.locator(f'[data-testid="stMain"] [data-testid="stSlider"] input[type="range"][aria-label="{label}"]')


def open_share_panel(page) -> tuple[str, Image.Image, dict]:
    """Press Share (from the keyboard) and read the panel: the address shown, the QR code as
    drawn, and where it lay in the window as the panel opened (before the screenshot of the
    code, which scrolls it into view)."""
    button = page.get_by_role("button", name="Share this view")
    button.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    page.wait_for_function(APP_IDLE_JS)
    url = dialog.locator('[data-testid="stCode"] code').inner_text().strip()
    qr = dialog.get_by_role("img", name="QR code of this view's address, shown beside it.")
    expect(qr).to_be_visible()
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=qr.element_handle())
    box = qr.bounding_box()
    drawn = Image.open(io.BytesIO(qr.screenshot()))
    return url, drawn, box


def test_the_share_panel_shows_the_current_view_its_qr_code_decodes_to_it_and_it_reopens_it_elsewhere(
    app_server: str, fresh_server: str, page
) -> None:
    """The panel after a page control moved in its fragment; then its address on a server that
    never saw this session (one load fewer than two tests: a load costs ~7 s of Chromium's CPU)."""
    page.goto(f"{app_server}/{VIEW}", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "waves", timeout=FIRST_LOAD_MS)
    expect_sidebar(page, d="64", L="300", n="100")
    # A page control in a fragment moves: only its fragment reruns, the panel must still know it.
    k_slider = page_slider(page, "Position k")
    expect(k_slider).to_have_attribute("aria-valuetext", "40")
    k_slider.focus()
    page.keyboard.press("ArrowRight")
    wait_for_url(page, "waves", k="41")

    url, drawn, _ = open_share_panel(page)
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == app_server and parts.path == "/waves"
    shown = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    expected = {key: values[-1] for key, values in parse_qs(urlsplit(f"/{VIEW}").query).items()} | {"k": "41"}
    assert shown == expected, url
    assert min(drawn.size) >= share.QR_MIN_SIDE_PX, drawn.size
    decoded = zxingcpp.read_barcodes(drawn)
    assert [result.text for result in decoded] == [url]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "share-panel.png"))

    # Escape closes the panel and leaves the view as it was.
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(k_slider).to_have_attribute("aria-valuetext", "41")

    # The same address on another server, which never saw this session: only the host and port differ.
    page.goto(f"{fresh_server}{parts.path}?{parts.query}", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "waves", timeout=FIRST_LOAD_MS)
    expect_sidebar(page, d="64", L="300", n="100")
    expect(page.locator(SIDEBAR).get_by_role("radio", name="concatenated")).to_be_checked()
    expect(page_slider(page, "Position k")).to_have_attribute("aria-valuetext", "41")
    expect(page_slider(page, "Pair i")).to_have_attribute("aria-valuetext", "3")
    expect(page.get_by_label("Positions k (up to 8, comma-separated)")).to_have_value("0,5,9")
    reshared, _, _ = open_share_panel(page)
    again = urlsplit(reshared)
    assert (again.path, parse_qs(again.query)) == (parts.path, parse_qs(parts.query))


#: A public-looking name for the proxy's address (Chromium resolves it to 127.0.0.1 here).
PUBLIC_HOST = "explorer.classroom.test"


def test_behind_the_proxy_the_shared_address_is_the_public_one(browser) -> None:
    """Through HAProxy (deploy/haproxy.cfg), opened by a host name: the Share panel gives
    that name and the proxy's port, never the replica's own 127.0.0.1 address."""
    if haproxy_binary() is None:
        if os.environ.get("PE_REQUIRE_BROWSER") == "1":
            pytest.fail("PE_REQUIRE_BROWSER=1 but haproxy is not installed", pytrace=False)
        pytest.skip("haproxy is not installed (apt-get install haproxy)")
    with ReplicasBehindProxy(1) as cluster:
        port = urlsplit(cluster.url).port
        named = browser.browser_type.launch(
            executable_path=CHROMIUM, headless=True,
            args=[*LAUNCH_ARGS, f"--host-resolver-rules=MAP {PUBLIC_HOST} 127.0.0.1"],
        )
        try:
            page = named.new_page(viewport=VIEWPORT)
            page.goto(f"http://{PUBLIC_HOST}:{port}/{VIEW}", timeout=FIRST_LOAD_MS)
            wait_until_drawn(page, "waves", timeout=FIRST_LOAD_MS)
            url, drawn, _ = open_share_panel(page)
            assert url == f"http://{PUBLIC_HOST}:{port}/{VIEW}", url
            assert [result.text for result in zxingcpp.read_barcodes(drawn)] == [url]
            # A public address: no "this computer only" warning.
            expect(page.get_by_role("dialog").get_by_text("this computer only")).to_have_count(0)
        finally:
            named.close()


def expect_sidebar_open(page, is_open: bool) -> None:
    """The sidebar is open (its settings on screen) or closed (out of view)."""
    expect(page.locator(SIDEBAR)).to_have_attribute("data-collapsed", "false" if is_open else "true")
    settings = expect(page.locator(SIDEBAR).get_by_role("group", name="d: embedding size"))
    settings.to_be_in_viewport() if is_open else settings.not_to_be_in_viewport()


def test_presentation_mode_closes_the_sidebar_survives_a_reload_and_leaves(app_server: str, page) -> None:
    page.goto(f"{app_server}/waves?d=64&L=300", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "waves", timeout=FIRST_LOAD_MS)
    expect_sidebar_open(page, True)
    # Measured once the page has settled: a chart just drawn may still be at Plotly's default
    # height, taller than the page's (under CI's load the larger charts then never looked larger).
    wait_until_settled(page)
    captions = page.locator('[data-testid="stCaptionContainer"]')
    caption_count = captions.count()
    assert caption_count > 0
    normal_font = page.evaluate("() => getComputedStyle(document.documentElement).fontSize")
    chart_height = page.locator('[data-testid="stPlotlyChart"]').first.bounding_box()["height"]

    # Keyboard: the toggle is reachable and works without a mouse.
    toggle = page.get_by_role("switch", name="Presentation mode")
    toggle.focus()
    page.keyboard.press("Space")
    wait_for_url(page, "waves", d="64", L="300", present="true")
    wait_until_drawn(page, "waves")

    def expect_presenting() -> None:
        expect_sidebar_open(page, False)
        expect(page.get_by_role("switch", name="Presentation mode")).to_be_checked()
        expect(page.locator('[data-testid="stMainMenu"]')).to_be_hidden()
        page.wait_for_function("(normal) => getComputedStyle(document.documentElement).fontSize !== normal",
                               arg=normal_font)
        # The charts are drawn larger (waited for: after a reload the page may show its charts a
        # moment before the larger ones arrive), and the page's captions stay (with the line on
        # where the closed sidebar is).
        page.wait_for_function(
            """(least) => document.querySelector('[data-testid="stPlotlyChart"]')
                              .getBoundingClientRect().height > least""",
            arg=chart_height * 1.15,
        )
        expect(captions.filter(has_not_text=SIDEBAR_CLOSED)).to_have_count(caption_count)
        expect(captions.filter(has_text=SIDEBAR_CLOSED)).to_have_count(1)

    expect_presenting()
    page.reload(timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "waves", timeout=FIRST_LOAD_MS)
    wait_for_url(page, "waves", d="64", L="300", present="true")
    expect_presenting()
    save_screenshot(page, "present-mode")

    page.get_by_role("switch", name="Presentation mode").focus()
    page.keyboard.press("Space")
    page.wait_for_function("() => !new URLSearchParams(location.search).has('present')")
    wait_for_url(page, "waves", d="64", L="300")
    wait_until_drawn(page, "waves")
    expect(page.locator('[data-testid="stMainMenu"]')).to_be_visible()
    page.wait_for_function("(normal) => getComputedStyle(document.documentElement).fontSize === normal",
                           arg=normal_font)
    expect_sidebar_open(page, True)


#: The smaller of a projector's two screens (the Share panel and the page must fit it).
PROJECTOR = {"width": 1280, "height": 720}


def expect_the_whole_qr_code_on_the_screen(page, screenshot: str) -> None:
    """Share opened on the page as it is: the whole QR code, quiet zone included, lies in the
    window without scrolling, at least QR_MIN_SIDE_PX wide, beside the address and its copy
    button, and the code as drawn decodes to the address. Closed again after."""
    url, drawn, box = open_share_panel(page)
    dialog = page.get_by_role("dialog")
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    assert box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width, box
    assert box["y"] + box["height"] <= height, box
    assert min(box["width"], box["height"]) >= share.QR_MIN_SIDE_PX, box
    assert [result.text for result in zxingcpp.read_barcodes(drawn)] == [url]
    # The quiet zone: QR_QUIET_ZONE modules of light all round the code, as drawn.
    modules = share.qr_code(url).symbol_size(scale=1, border=share.QR_QUIET_ZONE)[0]
    quiet = int(drawn.width * share.QR_QUIET_ZONE / modules) - 1
    pixels = np.asarray(drawn.convert("L"))
    for band in (pixels[:quiet], pixels[-quiet:], pixels[:, :quiet], pixels[:, -quiet:]):
        assert band.min() >= 200, "the quiet zone is not light all round"
    expect(dialog.locator('[data-testid="stCode"] code')).to_have_text(url)
    # st.code's copy button (shown under the mouse or with the focus).
    expect(dialog.locator('[data-testid="stCode"] button[aria-label="Copy to clipboard"]')).to_have_count(1)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{screenshot}.png"))
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)


def test_the_whole_qr_code_is_on_a_1280_x_720_projector(app_server: str, page) -> None:
    """On a 1280 x 720 screen the Share panel shows the whole QR code at once, in normal mode
    and in presentation mode (its larger type makes the panel's text larger)."""
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{app_server}/{VIEW}", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "waves", timeout=FIRST_LOAD_MS)
    expect_the_whole_qr_code_on_the_screen(page, "share-panel-1280x720")
    page.get_by_role("switch", name="Presentation mode").focus()
    page.keyboard.press("Space")
    wait_for_url(page, "waves", **{share.PRESENT_KEY: "true"})
    wait_until_drawn(page, "waves")
    expect_the_whole_qr_code_on_the_screen(page, "share-panel-1280x720-present")


#: The focused element is on the screen: shown (not hidden, not transparent: Streamlit and
#: Plotly fade some controls in), with a size, and inside the window (the browser scrolls a
#: focused element into view; a collapsed sidebar's controls stay off its left edge).
FOCUS_SEEN_JS = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return true;
    const r = el.getBoundingClientRect();
    return el.checkVisibility({opacityProperty: true, visibilityProperty: true})
        && r.width > 0 && r.height > 0 && r.right > 0 && r.left < window.innerWidth
        && r.bottom > 0 && r.top < window.innerHeight;
}"""
#: After a Tab: the focused element as FOCUSED_JS describes it (null for the page itself),
#: and whether it is seen (FOCUS_SEEN_JS), in one call.
FOCUS_STATE_JS = f"() => [({FOCUSED_JS})(), ({FOCUS_SEEN_JS})()]"
#: Bound on the Tab presses through a page (Waves has about 80 tab stops).
MAX_TAB_STOPS = 250


def test_in_presentation_mode_tab_reaches_only_controls_on_the_screen(app_server: str, page) -> None:
    """With the sidebar closed by presentation mode, Tab from the top of Waves round the whole
    page reaches every control of the page and none that cannot be seen (the closed sidebar's
    ~23 controls were in the tab order: an arrow key then changed d with nothing moving).
    Opened again, the sidebar's controls are reached."""
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{app_server}/waves?{share.PRESENT_KEY}=true", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "waves", timeout=FIRST_LOAD_MS)
    # The whole page before the walk: the Share bar is drawn after the page, and Play's buttons join
    # the tab order once drawn (CI once walked a page whose last charts had not arrived).
    wait_until_settled(page)
    assert open_kept_on_request(page) == 2, "Waves' two Play charts drawn on request"
    page.wait_for_function("() => document.querySelectorAll('.updatemenu-button[tabindex=\"0\"]').length >= 2")
    expect_sidebar_open(page, False)
    reached: list[tuple] = []
    unseen: list[tuple] = []
    for _ in range(MAX_TAB_STOPS):
        page.keyboard.press("Tab")
        focused, seen = page.evaluate(FOCUS_STATE_JS)
        if focused is not None and reached and tuple(focused) == reached[0]:
            break  # round the page and back to the first stop
        if focused is None:
            continue
        reached.append(tuple(focused))
        if seen:
            continue
        try:  # a control that fades in when focused gets a moment
            page.wait_for_function(FOCUS_SEEN_JS, timeout=2_000)
        except PlaywrightTimeout:
            unseen.append(tuple(focused))
    else:
        raise AssertionError(f"Tab did not come round the page in {MAX_TAB_STOPS} presses: {reached[-5:]}")
    assert not unseen, f"Tab reached controls that are not on the screen: {unseen}"
    names = [name for _, _, name in reached]
    for control in (r"Share this view$", r"^Presentation mode$", r"^Pair i$", r"^Position k$",
                    r"^Play \(Play: pair \d+ turning"):
        assert any(re.search(control, name) for name in names), f"{control!r} not reached: {names}"
    assert "d: embedding size" not in names

    # Back at the first stop: the next is the sidebar's open button. Opened, its controls are reached.
    tab_to(page, r"^Expand sidebar$")
    page.keyboard.press("Enter")
    expect(page.locator(SIDEBAR)).to_have_attribute("data-collapsed", "false")
    tab_to(page, r"^d: embedding size$")
    page.wait_for_function(FOCUS_SEEN_JS)


# --- every page on a projector ------------------------------------------------------------

#: A projector's two screens.
PROJECTORS = ({"width": 1920, "height": 1080}, PROJECTOR)
#: No chart text smaller than this (CSS pixels), in either mode: Plotly's base size. Longer contexts'
#: annotations were 11 px and the digits between a log axis's powers of ten 9 px.
LEAST_CHART_TEXT_PX = 12


#: Counts the app's runs from now on (its script state turning to "running") in ``window.__peRuns``.
COUNT_RUNS_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    window.__peRuns = 0;
    window.__peRunObserver?.disconnect();
    window.__peRunObserver = new MutationObserver(() => {
        if (app.getAttribute('data-test-script-state') === 'running') window.__peRuns += 1;
    });
    window.__peRunObserver.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


#: Presentation mode's chart text on the larger projector's screen, at least this many times the
#: smaller's: the screens are 1.5 times apart, and the text was 17 px on both.
LEAST_TEXT_GROWTH = 1.4


def screen_fit_problems(page, where: str, fonts: dict[tuple[str, int], float], path: str) -> list[str]:
    """Presentation mode: once the app has drawn for the window's size (every chart's text at
    presentation.chart_font_px for it; the app learns the size from the browser, and a resize
    reruns it), every chart, Play's buttons and slider included, within the window under
    Streamlit's toolbar. Each chart's text size goes in ``fonts`` by (path, chart)."""
    screen = presentation.Screen(page.viewport_size["width"], page.viewport_size["height"])
    text, _ = presentation.chart_font_px(screen)
    with contextlib.suppress(PlaywrightTimeout):  # the sizes below say what is drawn instead
        page.wait_for_function(f"() => ({CHART_SIZES_JS})().every((chart) => chart.font === {text})", timeout=15_000)
    problems = []
    for index, chart in enumerate(page.evaluate(CHART_SIZES_JS)):
        fonts[path, index] = chart["font"]
        if chart["height"] > chart["room"] or chart["font"] != text:
            problems.append(f"{where}: chart {index} ({chart['title']!r}) is {chart['height']:.0f} px tall with "
                            f"{chart['font']} px text; the screen has {chart['room']:.0f} px under the toolbar, "
                            f"its text should be {text} px")
    return problems


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presentation"])
def test_no_chart_text_over_text_and_no_label_cut_off_on_a_projector(app_server: str, page, present: bool) -> None:
    """On every page of page_list.PAGES, in normal and presentation mode, at 1920 x 1080 and
    1280 x 720 (layout_checks): no text of a chart over another of the same chart, no chart
    text outside its chart, no chart text under LEAST_CHART_TEXT_PX, no label cut off, no table wider
    than its box. In presentation mode also: every chart, with its Play controls, fits the
    screen, and its text is larger on the larger screen (screen_fit_problems). (On a phone:
    test_phone.py, test_page_fits_a_phone.) The first page is opened by its address,
    the next ones from the navigation, as a visitor goes (a load costs twice as long); each
    is looked at in both sizes, the window resized between them."""
    query = f"?{share.PRESENT_KEY}=true" if present else ""
    problems: list[str] = []
    fonts: dict[str, dict[tuple[str, int], float]] = {f"{size['width']}": {} for size in PROJECTORS}
    sizes = list(PROJECTORS)
    page.set_viewport_size(sizes[0])
    sent: list[float] = []  # when the page sent each message to the server, to explain a page not redrawn
    page.on("websocket", lambda socket: socket.on("framesent", lambda _: sent.append(time.monotonic())))
    for index, info in enumerate(PAGES):
        path = address_path(info)
        if index == 0:
            open_page(page, app_server, path, query)
        else:
            page.evaluate(OPEN_FROM_NAVIGATION_JS, path)
            wait_for_url(page, path, **({share.PRESENT_KEY: "true"} if present else {}))
            wait_until_drawn(page, path)
        wait_until_settled(page)
        open_kept_on_request(page)  # a teacher's Play charts too (the next page may keep them open)
        for size in sizes:
            resized = size != page.viewport_size
            if resized:
                page.evaluate(COUNT_RUNS_JS)
                resized_at = time.monotonic()
                page.set_viewport_size(size)
                page.wait_for_function(CHARTS_AT_WIDTH_JS)
            where = f"/{path}{query} at {size['width']} x {size['height']}"
            if present:
                unfit = screen_fit_problems(page, where, fonts[f"{size['width']}"], path)
                if unfit and resized:
                    unfit.append(f"{where}: since the resize the app ran {page.evaluate('window.__peRuns')} times, "
                                 f"and the page sent the server {sum(moment > resized_at for moment in sent)} messages")
                problems += unfit
            problems += describe_chart_text(page.evaluate(CHART_TEXT_JS), where)
            problems += [f"{where}: {label}" for label in page.evaluate(LABELS_CUT_JS, True)]
            problems += [f"{where}: chart {small['chart']} ({small['title']!r}): {small['text']!r} "
                         f"at {small['size']} px" for small in page.evaluate(SMALL_CHART_TEXT_JS, LEAST_CHART_TEXT_PX)]
        sizes.reverse()  # the next page starts at the size this one ends at
    if present:
        large, small = (fonts[f"{size['width']}"] for size in PROJECTORS)
        assert large, "no chart measured"
        problems += [f"/{path} chart {index}: text {small[path, index]} px at 1280 x 720, {font} px at 1920 x 1080"
                     for (path, index), font in large.items() if font < LEAST_TEXT_GROWTH * small[path, index]]
    assert not problems, "\n".join(problems)
