"""Lessons in a real browser: a teacher presents a shipped lesson with a clicker's keys (Page Down
through every step, Page Up back, → and ← with no control focused; in presentation mode a few
steps); and a student in a second browser follows the teacher's steps, explores, and returns."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from support.browser_harness import VIEWPORT
from support.share_panel import follow_link
from test_accessibility import PHONE, describe_violations, open_page, run_axe, serious_axe_violations
from test_browser import FIRST_LOAD_MS, SCREENSHOTS, save_screenshot, wait_for_url, wait_until_drawn
from test_phone import PHONE_LAYOUT_JS

from explorer import lessons
from explorer.lessons import FOLLOW_KEY

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    expect = None

pytestmark = pytest.mark.browser

NAME = "sinusoid-to-rope"
LESSON = lessons.shipped_lessons()[NAME]
#: How long a Next may take to reach the student's tab here. The promise (two seconds to a student's
#: own device) is a speed, measured by the benchmark (python -m benchmarks.load_test --scenarios
#: follow); here both tabs draw the same charts on two cores shared with the rest of the suite: the
#: waits are printed, not budgeted.
FOLLOW_WITHIN_MS = 15_000


def expect_step(page, index: int) -> None:
    """The page shows step ``index``: its bar, its address and its view, drawn."""
    step = LESSON.steps[index]
    expect(page.locator(".st-key-lesson_bar")).to_contain_text(f"step {index + 1} of {len(LESSON.steps)}")
    wait_for_url(page, step.page, step=str(index + 1), lesson=NAME)
    wait_until_drawn(page, step.page)
    # The clicker's keys work once the lesson's key watcher has started in the page.
    page.wait_for_function("() => window.__peLessonKeys === true")


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presentation"])
def test_a_teacher_presents_a_lesson_with_a_clicker(app_server: str, page, present: bool) -> None:
    """Normal mode walks the whole lesson: Page Down through every step and once past the last, Page
    Up back to the first. Presentation mode, whose pages the projector tour looks at one by one
    (test_classroom.py), goes two steps on and one back, and keeps present=true in the address. Both
    then step with → and ← with no control focused."""
    page.goto(f"{app_server}/?lesson={NAME}" + ("&present=true" if present else ""), timeout=FIRST_LOAD_MS)
    expect_step(page, 0)
    last = len(LESSON.steps) - 1 if not present else 2
    for index in range(1, last + 1):
        page.keyboard.press("PageDown")
        expect_step(page, index)
        if index == 2:
            save_screenshot(page, f"lesson-step-3-{'presentation' if present else 'normal'}")
    if not present:
        page.keyboard.press("PageDown")  # past the last step: it stays
        expect_step(page, last)
    first = 0 if not present else 1
    for index in reversed(range(first, last)):
        page.keyboard.press("PageUp")
        expect_step(page, index)
    # The arrows, with no control focused (a click on the page's text leaves the focus on the body).
    page.locator("h1").first.click()
    page.keyboard.press("ArrowRight")
    expect_step(page, first + 1)
    page.keyboard.press("ArrowLeft")
    expect_step(page, first)
    if present:
        assert parse_qs(urlsplit(page.url).query)["present"] == ["true"]


def test_the_arrows_leave_a_focused_slider_alone(app_server: str, page) -> None:
    """→ on a page's slider moves the slider, not the lesson."""
    page.goto(f"{app_server}/relative?lesson={NAME}&step=2&d=16&delta=10", timeout=FIRST_LOAD_MS)
    expect_step(page, 1)
    slider = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]').first
    slider.focus()
    page.keyboard.press("ArrowRight")
    wait_for_url(page, "relative", step="2", delta="11")
    expect(page.locator(".st-key-lesson_bar")).to_contain_text("step 2 of")



def expect_following(student, index: int, timeout: float) -> None:
    """The student's page opened step ``index`` within ``timeout`` ms (its address is the step's from
    the moment the student's server opens it, with the step's values; one at its default may be left
    out), then its bar names the step. The drawing is not timed: on this 2-core machine it is seconds
    of Chromium's CPU, shared with the teacher's tab that draws the same step at the same time."""
    step = LESSON.steps[index]
    path = f"/{step.page}" if step.page else ""
    student.wait_for_function(
        """([path, key, values]) => location.pathname.replace(/\\/$/, '') === path
            && new URLSearchParams(location.search).has(key)
            && Object.entries(values).every(([k, v]) => {
                const shown = new URLSearchParams(location.search).get(k);
                return shown === null || shown === v;
            })""",
        arg=[path, FOLLOW_KEY, dict(step.query)], timeout=timeout,
    )
    expect(student.locator(".st-key-follow_bar")).to_contain_text(
        f"step {index + 1} of {len(LESSON.steps)}: {step.heading}")


def test_a_student_follows_three_nexts_explores_and_returns(app_server: str, browser, page) -> None:
    page.goto(f"{app_server}/?lesson={NAME}", timeout=FIRST_LOAD_MS)
    expect_step(page, 0)
    link = follow_link(page)
    assert urlsplit(link).query == f"{FOLLOW_KEY}={parse_qs(urlsplit(link).query)[FOLLOW_KEY][0]}"

    context = browser.new_context(viewport=VIEWPORT)
    try:
        student = context.new_page()
        student.goto(link, timeout=FIRST_LOAD_MS)
        expect_following(student, 0, timeout=FIRST_LOAD_MS)
        waits = []
        for index in range(1, 4):
            started = time.monotonic()
            page.keyboard.press("PageDown")
            expect_following(student, index, timeout=FOLLOW_WITHIN_MS)
            waits.append(time.monotonic() - started)
            expect_step(page, index)
        # Exploring: the student moves the step's own slider; the teacher's next step leaves it there.
        wait_until_drawn(student, LESSON.steps[3].page)
        slider = student.locator(
            '[data-testid="stMain"] [data-testid="stSlider"] input[type="range"][aria-label="Reference position"]')
        slider.focus()
        student.keyboard.press("ArrowRight")
        wait_for_url(student, LESSON.steps[3].page, ref=str(int(dict(LESSON.steps[3].query)["ref"]) + 1))
        explored = student.evaluate("location.href")
        page.keyboard.press("PageDown")
        expect_step(page, 4)
        expect(student.locator(".st-key-follow_bar")).to_contain_text("The teacher is at step 5 of")
        assert student.evaluate("location.href") == explored
        save_screenshot(student, "lesson-follower-exploring")
        student.get_by_role("button", name="Back to the teacher's step").click()
        expect_following(student, 4, timeout=FOLLOW_WITHIN_MS * 2)
        wait_until_drawn(student, LESSON.steps[4].page)
        print(f"follower waits after each Next: {[round(w, 2) for w in waits]} s")
    finally:
        context.close()


def test_the_lessons_page_with_a_built_lesson_fits_a_phone_and_axe_finds_no_serious_violation(
    app_server: str, browser
) -> None:
    """Built on a phone: a view added from beside Share, then the Lessons page with its step's boxes."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    try:
        phone = context.new_page()
        open_page(phone, app_server, "relative", "?delta=10")
        phone.get_by_role("button", name="Add this view to the lesson").click()
        expect(phone.get_by_text("Added as step 1 of your lesson")).to_be_visible()
        phone.evaluate("""() => [...document.querySelectorAll('[data-testid="stSidebarNav"] a')]
            .find((link) => new URL(link.href).pathname === '/lessons').click()""")
        wait_for_url(phone, "lessons")
        wait_until_drawn(phone, "lessons")
        expect(phone.get_by_label("Step 1")).to_have_value("Relative positions")
        layout = phone.evaluate(PHONE_LAYOUT_JS)
        assert layout["documentWidth"] <= PHONE["width"] and not layout["overflowing"], layout
        assert not layout["controlsOff"], "\n".join(layout["controlsOff"])
        failing = serious_axe_violations(run_axe(phone, "lessons"))
        assert not failing, f"axe on /lessons at 390 px:\n{describe_violations(failing)}"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        phone.screenshot(path=str(SCREENSHOTS / "phone-lessons.png"), full_page=True, scale="css")
    finally:
        context.close()


def test_a_presented_step_and_a_follower_s_bar_pass_axe(app_server: str, page) -> None:
    page.goto(f"{app_server}/?lesson={NAME}", timeout=FIRST_LOAD_MS)
    expect_step(page, 0)
    failing = serious_axe_violations(run_axe(page, LESSON.steps[0].page))
    assert not failing, f"axe on a presented step:\n{describe_violations(failing)}"
    link = follow_link(page)
    page.goto(link, timeout=FIRST_LOAD_MS)
    expect_following(page, 0, timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, LESSON.steps[0].page)
    failing = serious_axe_violations(run_axe(page, LESSON.steps[0].page))
    assert not failing, f"axe on a follower's step:\n{describe_violations(failing)}"
