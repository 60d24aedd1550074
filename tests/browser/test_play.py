"""Play buttons in a real browser: pressing Play changes the chart over time, and no frame
costs a Streamlit run.

The page's WebSocket is wrapped before the app's scripts run (as benchmarks/latency.py
does) to count the messages the browser sends (a rerun request is one) and receives, and a
MutationObserver counts the app's switches to a running script. The drawn plot's data is
read twice while playing; each trace carries the value it was drawn for (``meta``: k, δ or
the angle α), so every reading is checked against a formula computed here.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from layout_checks import open_kept_on_request, wait_until_settled
from support.browser_harness import APP_IDLE_JS, REPO_ROOT
from support.independent import encoding, rates
from test_accessibility import PlaywrightError, open_from_navigation, open_page, tab_to

pytestmark = pytest.mark.browser

SCREENSHOTS = REPO_ROOT / "tests" / "screenshots"
FIRST_LOAD_MS = 60_000

#: Before the app's scripts: count WebSocket messages each way, and the runs the app starts.
COUNT_RUNS_JS = """(() => {
    const log = {sent: 0, received: 0, runs: 0};
    window.__pePlay = log;
    const Native = window.WebSocket;
    class Counted extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener('message', () => { log.received += 1; });
        }
        send(data) {
            log.sent += 1;
            return super.send(data);
        }
    }
    window.WebSocket = Counted;
    const watch = () => {
        const app = document.querySelector('[data-testid="stApp"]');
        if (app === null) { requestAnimationFrame(watch); return; }
        new MutationObserver(() => {
            if (app.getAttribute('data-test-script-state') === 'running') log.runs += 1;
        }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
    };
    watch();
})();"""

#: The Plotly chart whose title starts with the argument: which frame it is in and the drawn
#: data of its traces (``meta`` and x, y, z), or null while it is not drawn.
PLAY_STATE_JS = """(title) => {
    const plot = [...document.querySelectorAll('.js-plotly-plot')]
        .find((p) => (p.querySelector('.gtitle')?.textContent ?? '').startsWith(title));
    if (!plot || !plot._fullData) return null;
    const list = (a) => (a === undefined || a === null) ? null
        : Array.from(a, (v) => (v !== null && typeof v === 'object') ? Array.from(v) : v);
    return {
        frame: plot._fullLayout._currentFrame ?? null,
        traces: plot._fullData.map((t) => ({meta: t.meta ?? null, x: list(t.x), y: list(t.y), z: list(t.z)})),
    };
}"""


def check_profile(trace: dict) -> None:
    """Waves at the defaults (d=128, n=10^4, the 64 pairs): the drawn line is sin(k·ω_x)."""
    k = trace["meta"]
    np.testing.assert_allclose(trace["y"], np.sin(k * rates(128)), atol=1e-6)


def check_circle(trace: dict) -> None:
    """Pair 0 at d=128: the point is (cos k·ω_0, sin k·ω_0), ω_0 = 1."""
    k = trace["meta"]
    np.testing.assert_allclose([trace["x"][1], trace["y"][1]], [np.cos(k), np.sin(k)], atol=1e-9)


def check_shift(trace: dict) -> None:
    """Seed 001 (L=50, d=512, concatenated, tensor2tensor): row k of frame δ is PE(k + δ) on
    positions 0..23 and dimensions 0..15 with their cosines 256..271."""
    delta = trace["meta"]
    dims = np.r_[0:16, 256:272]
    expected = encoding(24, 512, 10000.0, "concatenated", "tensor2tensor", start=delta)[:, dims]
    np.testing.assert_allclose(np.array(trace["z"], dtype=float), expected, atol=1e-6)


def check_rotation(trace: dict) -> None:
    """Seed 001, pair 0 (ω_0 = 1) at k = 1 (the page's default): v W(α) = (sin(1 + α), cos(1 + α))."""
    alpha = trace["meta"]
    np.testing.assert_allclose([trace["x"][1], trace["y"][1]], [np.sin(1 + alpha), np.cos(1 + alpha)], atol=1e-9)


def check_reference(trace: dict) -> None:
    """Seed 001 (L=50, d=512, tensor2tensor): the line is P[k]·P[r] over k = 0..49, measured here."""
    P = encoding(50, 512, 10000.0, "concatenated", "tensor2tensor")
    np.testing.assert_allclose(trace["y"], P @ P[trace["meta"]], rtol=1e-6, atol=1e-4)


def check_rotary_pair(trace: dict) -> None:
    """Rotary at the defaults (d=128, seed 0, half): pair 0 of q, (u, v) from the seed, turned by m rad."""
    u, v = np.random.default_rng(0).standard_normal((2, 2, 64))[0, :, 0]
    m = trace["meta"]
    expected = [u * np.cos(m) - v * np.sin(m), u * np.sin(m) + v * np.cos(m)]
    np.testing.assert_allclose([trace["x"][1], trace["y"][1]], expected, atol=1e-9)


def check_attention(trace: dict) -> None:
    """Attention by offset at the defaults (L=100, causal, 8 heads, head 1: slope 1/2): ALiBi's
    weights of the query at m are e^(-(m - n)/2) over the keys n <= m, normalised, 0 after."""
    m = trace["meta"]
    keys = np.arange(100)
    weights = np.where(keys <= m, np.exp(-0.5 * (m - keys)), 0.0)
    np.testing.assert_allclose(trace["y"], weights / weights.sum(), atol=1e-6)


#: Tours of the pages with Play charts: the settings of a tour's first page (opened by its
#: address), then each page (the next ones opened from the navigation, the settings carried
#: along) with its Play charts: (the chart's title, which of its traces moves, the check of that
#: trace, screenshot name). A load costs ~7 s of Chromium's CPU here, a navigation 2-3 s.
TOURS = {
    "seed001": ("?preset=seed001-shift", {
        "relative": [("Play: P @ M(δ)", 0, check_shift, "play-relative"),
                     ("Pair 0: rotation", 3, check_rotation, "play-relative-rotation")],
        # Seed 001's settings came along; the reference is the page's own (check_reference reads it).
        "similarity": [("Play: P[k]·P[r]", 0, check_reference, "play-similarity")],
    }),
    "defaults": ("", {
        "waves": [("Play: sin(k·ω_x)", 0, check_profile, "play-waves"),
                  ("Play: pair 0", 2, check_circle, "play-waves-circle")],
        "rotary": [("Play: pair 0 of q turning", 2, check_rotary_pair, "play-rotary")],
        # Traces: the six schemes' weights in page order (ALiBi third), then their markers.
        "attention": [("Play: the weights as the query moves", 2, check_attention, "play-attention")],
    }),
}
STOPS = [(tour, path) for tour, (_, pages) in TOURS.items() for path in pages]


def wait_for_other_frame(page, title: str, moving: int, seen: dict) -> dict:
    """The chart's state once its moving trace is drawn for another value than in ``seen``."""
    page.wait_for_function(
        "([title, moving, meta]) => { const s = (" + PLAY_STATE_JS + ")(title);"
        " return s !== null && s.traces[moving].meta !== meta; }",
        arg=[title, moving, seen["traces"][moving]["meta"]],
    )
    return page.evaluate(PLAY_STATE_JS, title)


@pytest.mark.parametrize(("tour_name", "path"), STOPS, ids=[path for _, path in STOPS])
def test_play_animates_in_the_browser_without_a_rerun(app_server: str, tour, tour_name: str, path: str) -> None:
    """Each Play chart of the page in turn: two readings while it plays, each of another frame
    and each what the formula says, and not one message either way nor a script run meanwhile."""
    page = tour  # conftest's page kept through the module; it counts from its first load on
    if not hasattr(page, "play_settings"):
        page.add_init_script(COUNT_RUNS_JS)
        page.play_settings = None
    query, pages = TOURS[tour_name]
    try:
        if page.play_settings != tour_name or not page.url.startswith(app_server):
            raise LookupError("not on this tour's settings")
        open_from_navigation(page, path)
    except (LookupError, PlaywrightError, AssertionError):  # by its address, as a failed stop leaves it
        open_page(page, app_server, path, query)
        page.play_settings = tour_name
    page.wait_for_function(APP_IDLE_JS)
    wait_until_settled(page)
    open_kept_on_request(page)  # the Play charts drawn on request, opened by a click (the next page may keep them open)
    for title, moving, check, shot in pages[path]:
        page.wait_for_function("(title) => (" + PLAY_STATE_JS + ")(title) !== null", arg=title)
        plot = page.locator(".js-plotly-plot", has=page.locator(".gtitle", has_text=title)).first
        plot.scroll_into_view_if_needed()
        page.wait_for_function(APP_IDLE_JS)
        before = page.evaluate(PLAY_STATE_JS, title)
        check(before["traces"][moving])
        counts = page.evaluate("() => ({...window.__pePlay})")

        plot.locator(".updatemenu-button", has_text="Play").click()
        # Two readings while playing, each of a frame other than the one drawn before.
        first = wait_for_other_frame(page, title, moving, before)
        plot.screenshot(path=str(SCREENSHOTS / f"{shot}.png"))
        second = wait_for_other_frame(page, title, moving, first)
        after = page.evaluate("() => ({...window.__pePlay})")

        for reading in (first, second):
            check(reading["traces"][moving])
        assert first["traces"][moving]["meta"] != second["traces"][moving]["meta"], f"{title}: the chart did not move"
        assert first["traces"][moving] != second["traces"][moving]
        # No rerun: the browser sent nothing, the server sent nothing, no script ran.
        assert after == counts, f"{title}: messages or runs while playing: {counts} -> {after}"


def test_play_pause_and_frames_by_keyboard_alone(app_server: str, page) -> None:
    """Similarity's Play chart (seed 001) by keys only: from the page's control above it, Tab
    reaches the expander that holds it and Enter opens it; Tab then reaches the frame slider,
    then Play, then Pause. Enter plays (the chart moves, no rerun) and pauses (it stays); the
    arrow keys, Home and End step the frames, and the slider says which frame it is on."""
    title = "Play: P[k]·P[r]"
    page.add_init_script(COUNT_RUNS_JS)
    page.goto(app_server + "/similarity?preset=seed001-similarity", timeout=FIRST_LOAD_MS)
    page.wait_for_function(APP_IDLE_JS, timeout=FIRST_LOAD_MS)
    wait_until_settled(page)
    assert page.evaluate(PLAY_STATE_JS, title) is None, "Play was drawn before it was asked for"
    page.get_by_role("slider", name="Reference position").focus()
    tab_to(page, re.escape("Play: P[k]·P[r] as r moves"))
    page.keyboard.press("Enter")
    page.wait_for_function("(title) => (" + PLAY_STATE_JS + ")(title) !== null", arg=title)
    plot = page.locator(".js-plotly-plot", has=page.locator(".gtitle", has_text=title)).first
    plot.scroll_into_view_if_needed()
    page.wait_for_function(APP_IDLE_JS)
    slider = plot.locator(".slider-container")
    page.wait_for_function("(el) => el.getAttribute('role') === 'slider'", arg=slider.element_handle())
    counts = page.evaluate("() => ({...window.__pePlay})")
    frames = int(slider.get_attribute("aria-valuemax")) + 1
    assert frames > 2 and slider.get_attribute("aria-valuenow") == "0"

    page.get_by_role("slider", name="Reference position").focus()
    tab_to(page, "^" + re.escape(f"Frame ({title}"))
    page.keyboard.press("End")
    expect_frame(page, slider, title, frames - 1)
    page.keyboard.press("Home")
    expect_frame(page, slider, title, 0)
    page.keyboard.press("ArrowRight")
    expect_frame(page, slider, title, 1)

    tab_to(page, "^" + re.escape(f"Play ({title}"))
    before = page.evaluate(PLAY_STATE_JS, title)
    page.keyboard.press("Enter")
    first = wait_for_other_frame(page, title, 0, before)
    second = wait_for_other_frame(page, title, 0, first)
    for reading in (first, second):
        check_reference(reading["traces"][0])
    tab_to(page, "^" + re.escape(f"Pause ({title}"))
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)  # a frame that was due when Pause was pressed may still be drawn
    paused = page.evaluate(PLAY_STATE_JS, title)["traces"][0]["meta"]
    page.wait_for_timeout(1000)  # ten frames' time at Play's pace
    assert page.evaluate(PLAY_STATE_JS, title)["traces"][0]["meta"] == paused, "Pause did not stop the chart"
    plot.screenshot(path=str(SCREENSHOTS / "play-keyboard.png"))

    after = page.evaluate("() => ({...window.__pePlay})")
    assert after == counts, f"messages or runs while playing by keyboard: {counts} -> {after}"


def expect_frame(page, slider, title: str, index: int) -> None:
    """The frame slider is on frame ``index``, says so, and the chart draws that frame's reference.
    Waited for together: Plotly moves the slider as the step starts and draws the frame a moment
    later (CI once read the slider at r = 49 and the chart still at r = 0)."""
    page.wait_for_function(
        "([el, index, title]) => { const s = (" + PLAY_STATE_JS + ")(title);"
        " return el.getAttribute('aria-valuenow') === String(index) && s !== null"
        " && (el.getAttribute('aria-valuetext') ?? '').endsWith('= ' + s.traces[0].meta); }",
        arg=[slider.element_handle(), index, title],
    )
    state = page.evaluate(PLAY_STATE_JS, title)
    check_reference(state["traces"][0])
    reference = state["traces"][0]["meta"]
    assert slider.get_attribute("aria-valuetext").endswith(f"= {reference}"), slider.get_attribute("aria-valuetext")


#: The pages with Play charts.
PLAY_PAGES = ("waves", "similarity", "relative", "rotary", "attention", "contexts", "layers", "mrope")
#: Bound on the Tab presses from the top of a Play page to its first Play button, past the sidebar's
#: (the navigation and the shared settings, about 25 stops, closed in presentation mode): the Share
#: bar, the page's own controls, heading links, the tables' cells and toolbars and the legend entries
#: of the charts above (Attention by offset has the most: 46, two legends of six schemes); no chart's
#: mode bar (eight buttons a chart: Attention's Play was 70 presses away).
MAX_TABS_TO_PLAY = 50
#: After a Tab: the focused element, whether it is a chart's mode bar button or in the sidebar, its chart's index on
#: the page (-1 outside a chart) and the top of its box in its chart's (Streamlit scrolls its main container, not
#: the window, to show what Tab reached: a top in the window moves between two presses).
FOCUS_PLACE_JS = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const plot = el.closest('.js-plotly-plot');
    const charts = [...document.querySelectorAll('.js-plotly-plot')];
    return {label: el.getAttribute('aria-label') || el.getAttribute('data-title') || el.textContent.trim().slice(0, 60),
            modebar: el.closest('.modebar') !== null, sidebar: el.closest('[data-testid="stSidebar"]') !== null,
            chart: plot ? charts.indexOf(plot) : -1,
            top: el.getBoundingClientRect().top - (plot ? plot.getBoundingClientRect().top : 0)};
}"""


@pytest.mark.parametrize("path", PLAY_PAGES)
def test_tab_reaches_play_soon_past_no_chart_toolbar_and_in_the_drawn_order(app_server: str, tour, path: str) -> None:
    """From the top of each Play page at its defaults, Tab reaches the first Play button within
    MAX_TABS_TO_PLAY presses past the sidebar's, and no chart's mode bar button on the way (eight a chart were tab
    stops); within that Play chart, the frame slider, Play and Pause are reached in the order they
    are drawn from the top (the slider was reached first though drawn below the buttons)."""
    try:
        if not tour.url.startswith(app_server):
            raise LookupError("not on the app yet")
        open_from_navigation(tour, path)
    except (LookupError, PlaywrightError, AssertionError):
        open_page(tour, app_server, path)
    page = tour
    wait_until_settled(page)
    open_kept_on_request(page)
    page.wait_for_function("() => document.querySelectorAll('.updatemenu-button[tabindex=\"0\"]').length >= 2")
    page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
    reached: list[dict] = []
    play_chart = None
    for _ in range(MAX_TABS_TO_PLAY + 60):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUS_PLACE_JS)
        if focused is None:
            continue
        if focused["chart"] == play_chart and any(stop["label"] == focused["label"] for stop in reached):
            break  # the tab order came round to the Play chart again (no chart below it was drawn yet)
        reached.append(focused)
        if play_chart is None and focused["label"].startswith("Play ("):
            play_chart = focused["chart"]
        if play_chart is not None and focused["chart"] != play_chart and focused["chart"] != -1:
            break  # past the first Play chart
    stops = [stop["label"] for stop in reached]
    assert not [stop for stop in reached if stop["modebar"]], f"/{path}: a chart's toolbar in the tab order: {stops}"
    assert play_chart is not None, f"/{path}: Play not reached: {stops}"
    before_play = reached[:next(index for index, stop in enumerate(reached) if stop["label"].startswith("Play ("))]
    tabs_to_play = 1 + sum(not stop["sidebar"] for stop in before_play)
    assert tabs_to_play <= MAX_TABS_TO_PLAY, f"/{path}: {tabs_to_play} Tabs to Play: {stops}"
    controls = [stop for stop in reached if stop["chart"] == play_chart
                and re.match(r"(Play|Pause|Frame) \(", stop["label"])]
    assert [stop["label"].split(" (")[0] for stop in controls] == ["Frame", "Play", "Pause"], controls
    tops = [stop["top"] for stop in controls]
    assert tops[0] < tops[1] <= tops[2], f"/{path}: the tab order is not the drawn order: {controls}"
