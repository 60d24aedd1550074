"""Small Streamlit pieces that every page uses, so that no page repeats them."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

#: Plotly's mode bar keeps "download as PNG"; the logo link is noise in a classroom.
PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def chart(fig: go.Figure, *, key: str | None = None) -> None:
    """Draw a Plotly figure at the width of the layout."""
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key)


def reduced_note(what: str, shown: tuple[int, int], full: tuple[int, int]) -> None:
    """Say on the page that a chart shows block averages, and of what."""
    if shown != full:
        st.caption(
            f"{what}: {full[0]:,} x {full[1]:,} values drawn as {shown[0]:,} x {shown[1]:,} block averages "
            "(each cell is the mean of the block it stands for; hover says which). Nothing is skipped."
        )
