"""Cached computations for the pages: pure pe_core calls behind st.cache_data.

Every cache has max_entries, so a hundred students moving sliders keep the server's
memory bounded; arrays kept here are at most display-sized, except ``encoding`` whose
callers only ask for what is downloaded or small enough to draw whole.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import pe_core
from explorer.settings import Settings

#: Largest matrix (cells) a page builds in full, e.g. for a download; larger views are
#: drawn from closed-form block averages and offered as code instead.
FULL_MATRIX_CELLS = 2_000_000


@st.cache_data(max_entries=16, show_spinner=False)
def reduced_encoding(settings: Settings, max_rows: int, max_cols: int, start: int = 0) -> pe_core.ReducedEncoding:
    """Block averages of the encoding for drawing (closed form, never the full matrix)."""
    return pe_core.encoding_block_average(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention,
        start=start, max_rows=max_rows, max_cols=max_cols,
    )


@st.cache_data(max_entries=8, show_spinner=False)
def encoding(settings: Settings, start: int = 0) -> np.ndarray:
    """The full (L, d) encoding; only for views of at most FULL_MATRIX_CELLS cells."""
    if settings.L * settings.d > FULL_MATRIX_CELLS:
        raise ValueError(
            f"L x d = {settings.L * settings.d:,} cells is more than this page builds in full "
            f"({FULL_MATRIX_CELLS:,})."
        )
    return pe_core.positional_encoding(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention, start=start
    )


@st.cache_data(max_entries=32, show_spinner=False)
def frequencies(settings: Settings) -> np.ndarray:
    """ω_i of every pair."""
    return pe_core.frequencies(settings.d, settings.n, settings.convention)


@st.cache_data(max_entries=16, show_spinner=False)
def angle_map(settings: Settings, max_rows: int, max_pairs: int):
    """Circular block means of the angles, in degrees."""
    return pe_core.angle_block_mean(
        settings.L, settings.d, settings.n, convention=settings.convention, max_rows=max_rows, max_pairs=max_pairs
    )
