"""The app's one piece of CSS: what Streamlit's own styles cannot be told by its options.

Static text only, built from no input, so no user text can reach the raw HTML it is sent
as (tests/test_code_rules.py allows ``st.html`` here alone, and only with this constant).
Each rule says which check it answers (tests/browser/test_accessibility.py).
"""

from __future__ import annotations

import streamlit as st

CSS = """<style>
/* axe color-contrast: Streamlit draws captions (st.caption) in the text colour at opacity
   0.6, 3.9:1 on white, under the 4.5:1 that small text needs. At 0.75 it is 6:1 on white,
   and a caption still reads as secondary (the dark theme's light text gains too). */
[data-testid="stCaptionContainer"] { opacity: 0.75; }
/* axe heading-order: a page's sections are st.header (h2) under its st.title (h1), not h3;
   they keep the size they had as h3. */
[data-testid="stMain"] [data-testid="stHeading"] h2 { font-size: 1.75rem; }
/* Keyboard: Streamlit shows the sidebar's collapse button only while the pointer is over
   the sidebar (visibility: hidden otherwise), which also keeps it out of the tab order. */
[data-testid="stSidebarHeader"] [data-testid="stSidebarCollapseButton"] { visibility: visible; }
/* Phones: a formula wider than the screen wraps at KaTeX's own break points (after its
   relations and operators) instead of scrolling in a box that the keyboard cannot scroll
   (axe scrollable-region-focusable); formulas that fit are unchanged. */
.katex-display > .katex { white-space: normal; }
</style>"""


def apply() -> None:
    """Send the CSS with the page (an st.html of styles only takes no room on it)."""
    st.html(CSS)
