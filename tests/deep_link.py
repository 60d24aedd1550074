"""Open the app in streamlit.testing as a copied URL does: a fresh session on /<url path>?<query>."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

APP = Path(__file__).resolve().parents[1] / "app.py"


def open_url(url_path: str, query: dict[str, str | list[str]] | None = None, *, run: bool = True) -> AppTest:
    """A fresh AppTest session on the page at ``url_path`` ("" for the default page).

    A browser's deep link names the page by its URL path, and st.Page identifies a page by
    the hash of its url_path; AppTest has no public way to name a page that way before its
    first run (its switch_page goes by file name, which differs from the URL path here: see
    app.py), so the session is given that hash directly.
    """
    at = AppTest.from_file(str(APP), default_timeout=60)
    if url_path:
        at._page_hash = calc_hash(url_path)
    at.query_params.update(query or {})
    return at.run() if run else at
