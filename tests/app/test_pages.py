"""One contract over the page list (explorer/page_list.py): every page runs at its defaults
with its code shown and its downloads offered, and shows "reproduce this" code that runs and
binds the arrays of its downloads. A page added to the list is held to it here with no other
line of test (its layout in tests/app/test_layout.py).

Each topic's numbers are compared with its snippet's in its own tests
(tests/topics/test_reproduce.py and the topic's test file).
"""

from __future__ import annotations

import numpy as np
import pytest
from app_runs import assert_page_ran, open_url, page_id

from explorer import page_list, reproduce
from explorer.page_list import PageInfo
from explorer.ui.controls import OFFER_DOWNLOADS


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_the_page_runs_and_its_code_runs_and_covers_its_downloads(page: PageInfo) -> None:
    """AppTest smoke run at the defaults with the code shown and the downloads offered; the
    first snippet shown (NumPy) runs in a fresh namespace and binds ``result``: a dict from
    the key of one or more of the page's downloads to the array that download holds (every
    download, except the Scorecard's distances and Precision's summary and one column)."""
    at = open_url("" if page is page_list.HOME else page.url_path, {"code": "true"})
    assert_page_ran(at, page)
    at.sidebar.toggle(key=OFFER_DOWNLOADS).set_value(True).run()
    assert_page_ran(at, page)
    downloads = {button.key.rsplit("_", 1)[0] for button in at.get("download_button")} - {"pitfalls_example"}
    assert downloads, "the page offers no download"
    codes = at.get("code")
    assert codes, "the page shows no reproduce-this code"
    result = reproduce.run_snippet(codes[0].value)["result"]
    assert isinstance(result, dict) and result, "the snippet's result is not a dict of downloads"
    assert set(result) <= downloads, f"not a download of the page: {sorted(set(result) - downloads)}"
    assert all(np.asarray(value).size for value in result.values())
