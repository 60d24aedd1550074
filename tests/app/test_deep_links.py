"""A copied link is the first visit its page gets on a newly started server: the server runs
that page through app.py (its st.navigation, not the page file alone, which Streamlit's
file-based page discovery would run for a path named like a file in pages/), with the
link's settings in the sidebar and in the URL the app writes back.

Every page, over Streamlit's own WebSocket protocol (tests/st_client.py), as a browser
asks for a page when it opens an address; a real browser opens two of these links
(tests/browser/test_browser.py: a load costs about 7 s of Chromium's CPU here).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from urllib.parse import parse_qs

import pytest
from support.app_runs import DEEP_LINKS, HOME, PAGES, page_id
from support.st_client import StreamlitServer, open_once

from explorer.page_list import PageInfo, address_path


@pytest.fixture(scope="module")
def new_server() -> Iterator[str]:
    """A server started for these tests alone: the first link is its very first request, and
    every other link the first visit its page gets."""
    with StreamlitServer("app.py") as server:
        yield server.url


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_a_deep_link_opens_its_view_on_a_fresh_server(new_server: str, page: PageInfo) -> None:
    path = address_path(page)
    query = DEEP_LINKS[path]
    result = asyncio.run(open_once(new_server, path, query))
    assert result.finished, result.status
    assert not result.exceptions, [exception.message for exception in result.exceptions]
    assert not result.page_not_found
    assert result.page_url_path == path, "another page ran"
    # The sidebar shows the link's settings, and the URL the app writes keeps every one of them.
    assert result.slider_values["d"] == [64.0] and result.slider_values["L"] == [300.0], result.slider_values
    written = parse_qs(result.query_string)
    assert parse_qs(query).items() <= written.items(), result.query_string
    if page is not HOME:
        assert "plotly_chart" in result.element_types, "no chart drawn"


def test_an_unknown_path_says_page_not_found_and_runs_home(new_server: str) -> None:
    """The check above can fail: an address no page has is answered as such."""
    result = asyncio.run(open_once(new_server, "no-such-page", DEEP_LINKS[""]))
    assert result.finished and result.page_not_found and result.page_url_path == ""
