"""The Share panel as a person reads it in a browser: a presented lesson's follow link, for the lesson
browser test (tests/browser/test_lesson_browser.py) and the replica test (tests/deploy/test_lesson_replicas.py)."""

from __future__ import annotations

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixtures skip, or fail where PE_REQUIRE_BROWSER=1
    expect = None


def follow_link(page) -> str:
    """The teacher's Share panel: the class's follow link, from its "Follow this lesson" tab, with its QR
    code shown; then Escape closes the panel."""
    page.get_by_role("button", name="Share this view").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("tab", name="Follow this lesson")).to_be_visible()
    expect(dialog.get_by_role("img", name="QR code of the class's follow link, shown above it.")).to_be_visible()
    url = dialog.locator('[data-testid="stCode"] code').first.inner_text().strip()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    return url
