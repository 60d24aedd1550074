"""Positional Encoding Explorer: entry point.

Draws the shared controls (in the sidebar, mirrored in the URL), then runs the page the
URL names. Pages live in app_pages/ (not pages/: Streamlit would treat a pages/ folder
as a second, legacy navigation and run a deep-linked page without this file).
"""

import streamlit as st

from explorer import controls

st.set_page_config(page_title="Positional Encoding Explorer", page_icon=":material/waves:", layout="wide")

PAGES = {
    "home": st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True),
    "matrix": st.Page("app_pages/matrix.py", title="Encoding matrix", icon=":material/grid_on:", url_path="matrix"),
    "waves": st.Page("app_pages/waves.py", title="Waves", icon=":material/show_chart:", url_path="waves"),
    "similarity": st.Page(
        "app_pages/similarity.py", title="Similarity", icon=":material/compare_arrows:", url_path="similarity"
    ),
    "binary": st.Page(
        "app_pages/binary.py", title="Binary vs sinusoid", icon=":material/looks_one:", url_path="binary"
    ),
    "relative": st.Page(
        "app_pages/relative.py", title="Relative positions", icon=":material/rotate_right:", url_path="relative"
    ),
}

page = st.navigation(list(PAGES.values()))
controls.begin_run()
st.session_state["settings"] = controls.sidebar_ui()
target = controls.pending_page_switch()
if target is not None and PAGES[target] is not page:
    st.switch_page(PAGES[target])
notice_area = st.container()
page.run()
controls.show_notices(notice_area)
controls.write_url()
