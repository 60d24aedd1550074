"""Cached computations for the pages: pure pe_core calls behind st.cache_data.

Every cache has max_entries, so a hundred students moving sliders keep the server's
memory bounded; arrays kept here are at most display-sized, except ``encoding`` whose
callers only ask for what is downloaded or small enough to draw whole.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import pe_core
from explorer import criteria as criteria_module
from explorer import relation_figures
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


@st.cache_data(max_entries=16, show_spinner=False)
def criteria(settings: Settings) -> tuple[criteria_module.Measurement, ...]:
    """Seed 000's four criteria measured for the settings (explorer.criteria; ~0.6 s at the largest)."""
    return criteria_module.evaluate(settings)


def sse_by_abs_offset(settings: Settings) -> np.ndarray:
    """SSE of two positions |delta| = 0 .. L-1 apart, closed form d - 2 sum_i cos(w_i delta).

    The SSE is even in delta, so one array serves every reference position. Derived from the
    cached ``dot_by_offset`` (as pe_core.sse_by_offset is), so the pages share one computation.
    """
    return settings.d - 2.0 * dot_by_offset(settings)[settings.L - 1:]


@st.cache_data(max_entries=16, show_spinner=False)
def dot_by_offset(settings: Settings) -> np.ndarray:
    """Dot product of two positions t apart, closed form sum_i cos(w_i t), for t = -(L-1) .. L-1.

    ``values[t + L - 1] = f(t)`` (the layout of pe_core.offset_matrix_block_average). f is
    even, so only t = 0 .. L-1 is computed (pe_core bounds its own temporary memory).
    """
    half = pe_core.dot_by_offset(np.arange(settings.L, dtype=np.float64), settings.d, settings.n, settings.convention)
    return relation_figures.mirrored_offsets(half)


@st.cache_data(max_entries=16, show_spinner=False)
def shift_comparison(
    settings: Settings, delta: int, max_rows: int, max_cols: int
) -> relation_figures.ShiftComparison:
    """P @ M(delta) against PE(k + delta) computed directly (explorer.relation_figures.compare_shift)."""
    return relation_figures.compare_shift(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention, delta=delta,
        max_rows=max_rows, max_cols=max_cols, full_cells=FULL_MATRIX_CELLS,
    )
