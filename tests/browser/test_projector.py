"""In front of a class, in a real browser (issue 20): on every page of explorer.page_list, in
normal and presentation mode, at a projector's 1920 x 1080 and 1280 x 720, no text of a chart
is drawn over other text of the same chart, and no label, on a chart or beside it, is cut
off. (On a phone, 390 x 844: tests/browser/test_accessibility.py, test_page_fits_a_phone.)

One server and one browser page for all. The first page is opened by its address, the next
ones from the navigation, as a visitor goes (a page load would cost twice as long); each page
is looked at in both sizes, the window resized between them and the page laid out again.
"""

from __future__ import annotations

import pytest
from layout_checks import CHART_TEXT_JS, CHARTS_AT_WIDTH_JS, LABELS_CUT_JS, describe_chart_text, wait_until_settled
from test_accessibility import PAGES, open_page, url_path
from test_browser import wait_for_url, wait_until_drawn

from explorer import share

pytestmark = pytest.mark.browser

#: A projector's two screens.
PROJECTORS = ({"width": 1920, "height": 1080}, {"width": 1280, "height": 720})
#: Follows the navigation's link to the page at this path (the link is there, if hidden, with
#: the sidebar closed in presentation mode): Streamlit opens it without loading the app again.
OPEN_FROM_NAVIGATION_JS = """(path) => [...document.querySelectorAll('[data-testid="stSidebarNav"] a')]
    .find((link) => new URL(link.href).pathname.replace(/\\/$/, '') === (path ? `/${path}` : '')).click()"""


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presentation"])
def test_no_chart_text_over_text_and_no_label_cut_off_on_a_projector(app_server: str, page, present: bool) -> None:
    query = f"?{share.PRESENT_KEY}=true" if present else ""
    problems: list[str] = []
    sizes = list(PROJECTORS)
    page.set_viewport_size(sizes[0])
    for index, info in enumerate(PAGES):
        path = url_path(info)
        if index == 0:
            open_page(page, app_server, path, query)
        else:
            page.evaluate(OPEN_FROM_NAVIGATION_JS, path)
            wait_for_url(page, path, **({share.PRESENT_KEY: "true"} if present else {}))
            wait_until_drawn(page, path)
        wait_until_settled(page)
        for size in sizes:
            if size != page.viewport_size:
                page.set_viewport_size(size)
                page.wait_for_function(CHARTS_AT_WIDTH_JS)
            where = f"/{path}{query} at {size['width']} x {size['height']}"
            problems += describe_chart_text(page.evaluate(CHART_TEXT_JS), where)
            problems += [f"{where}: {label}" for label in page.evaluate(LABELS_CUT_JS, True)]
        sizes.reverse()  # the next page starts at the size this one ends at
    assert not problems, "\n".join(problems)
