"""The app's navigation: its st.Page list, built once per process, and a page run that
turns an unexpected error into a short message."""

from __future__ import annotations

import copy
import logging

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from explorer import page_list

#: The pages as first built in this process, by URL path (see ``pages``).
_BUILT: dict[str, StreamlitPage] = {}


def pages() -> dict[str, StreamlitPage]:
    """This run's pages for st.navigation, by URL path, in the page list's order.

    st.Page resolves its file on the disk (``Path.resolve``, ``is_file``) when it is built:
    a realpath per page in every run of every session, 2.5% of the server's time under a
    class of 100. So each page is built once per process, on the first run (st.Page needs a
    script run to find the app's folder), and every run gets shallow copies: st.navigation
    marks the page it returns as runnable and ``run`` unmarks it, state of one run that
    two sessions running at once must not share.
    """
    if not _BUILT:
        _BUILT.update({
            info.url_path: st.Page(
                info.path, title=info.title, icon=info.icon, url_path=info.url_path, default=info is page_list.HOME
            )
            for info in page_list.PAGES
        })
    return {url_path: copy.copy(page) for url_path, page in _BUILT.items()}


#: What a visitor sees if a page fails unexpectedly: no traceback, a way forward.
PAGE_FAILED = (
    "This view could not be drawn with these settings. Try other values in the sidebar, "
    "or choose a preset; the problem has been logged for the maintainers."
)


def run_page(page: StreamlitPage) -> None:
    """Run a page; an unexpected error becomes a short message and a server log entry.

    Streamlit's own rerun and stop signals are BaseExceptions, so they pass through.
    """
    try:
        page.run()
    except Exception:
        logging.getLogger("explorer").exception("page %r failed", getattr(page, "title", page))
        st.error(PAGE_FAILED, icon=":material/error:")
