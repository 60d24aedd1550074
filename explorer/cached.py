"""Cached computations for the pages: pure pe_core calls behind st.cache_data.

Every cache has max_entries, so a hundred students moving sliders keep the server's
memory bounded; arrays kept here are at most display-sized, except ``encoding`` whose
callers only ask for what is downloaded or small enough to draw whole.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

import pe_core
from explorer import criteria as criteria_module
from explorer import pitfalls as pitfalls_module
from explorer import precision as precision_module
from explorer import relation_figures
from explorer import scorecard as scorecard_module
from explorer.settings import L_MAX, Settings

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


def frequencies(settings: Settings) -> np.ndarray:
    """ω_i of every pair (cached by what they depend on: an L step computes nothing)."""
    return pair_frequencies(settings.d, settings.n, settings.convention)


@st.cache_data(max_entries=32, show_spinner=False)
def pair_frequencies(d: int, n: float, convention: str) -> np.ndarray:
    """ω_i of every pair."""
    return pe_core.frequencies(d, n, convention)


@st.cache_data(max_entries=16, show_spinner=False)
def angle_map(settings: Settings, max_rows: int, max_pairs: int, start: int = 0):
    """Circular block means of the angles, in degrees (positions start .. start+L-1)."""
    return pe_core.angle_block_mean(
        settings.L, settings.d, settings.n, convention=settings.convention, start=start, max_rows=max_rows,
        max_pairs=max_pairs,
    )


@st.cache_data(max_entries=16, show_spinner=False)
def criteria(settings: Settings) -> tuple[criteria_module.Measurement, ...]:
    """Seed 000's four criteria measured for the settings (explorer.criteria; ~0.6 s at the largest)."""
    return criteria_module.evaluate(settings)


def sse_by_abs_offset(settings: Settings) -> np.ndarray:
    """SSE of two positions |delta| = 0 .. L-1 apart, closed form d - 2 sum_i cos(w_i delta).

    The SSE is even in delta, so one array serves every reference position. Derived from the
    cached ``dot_from_zero`` (as pe_core.sse_by_offset is), so the pages share one computation.
    """
    return settings.d - 2.0 * dot_from_zero(settings.d, settings.n, settings.convention)[: settings.L]


def dot_by_offset(settings: Settings) -> np.ndarray:
    """Dot product of two positions t apart, closed form sum_i cos(w_i t), for t = -(L-1) .. L-1.

    ``values[t + L - 1] = f(t)`` (the layout of pe_core.offset_matrix_block_average). f is
    even and does not depend on L, so it is a slice of the cached ``dot_from_zero``: moving L
    or the reference position computes nothing.
    """
    half = dot_from_zero(settings.d, settings.n, settings.convention)[: settings.L]
    return relation_figures.mirrored_offsets(half)


@st.cache_data(max_entries=16, show_spinner=False)
def dot_from_zero(d: int, n: float, convention: str) -> np.ndarray:
    """f(t) = sum_i cos(w_i t) for t = 0 .. L_MAX-1 (128 KB), once per (d, n, convention):
    every length is a prefix of it (1024 x 16384 cosines, ~0.2 s, at the largest d)."""
    return pe_core.dot_by_offset(np.arange(L_MAX, dtype=np.float64), d, n, convention)


def measure_around(settings: Settings, ref: int, max_cells: int) -> tuple[int, np.ndarray]:
    """relation_figures.measure_around, cached by its window of positions: the window does
    not move with L (unless ref is near the end), so an L step measures nothing again."""
    first, count = relation_figures.measure_window(settings.L, settings.d, ref, max_cells)
    return first, window_dots(settings.d, settings.n, settings.layout, settings.convention, ref, first, count)


@st.cache_data(max_entries=32, show_spinner=False)
def window_dots(d: int, n: float, layout: str, convention: str, ref: int, first: int, count: int) -> np.ndarray:
    """P[k]·P[ref] for k = first .. first+count-1 (relation_figures.window_dots)."""
    return relation_figures.window_dots(first, count, d, n, layout=layout, convention=convention, ref=ref)


@st.cache_data(max_entries=16, show_spinner=False)
def shift_comparison(
    settings: Settings, delta: int, max_rows: int, max_cols: int
) -> relation_figures.ShiftComparison:
    """P @ M(delta) against PE(k + delta) computed directly (explorer.relation_figures.compare_shift)."""
    return relation_figures.compare_shift(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention, delta=delta,
        max_rows=max_rows, max_cols=max_cols, full_cells=FULL_MATRIX_CELLS,
    )


@st.cache_data(max_entries=16, show_spinner=False)
def scorecard(settings: Settings, offset: int) -> scorecard_module.Scorecard:
    """Every scheme x criterion of the Criteria scorecard (explorer.scorecard; ~1 s at the largest)."""
    return scorecard_module.evaluate(settings, offset)


@st.cache_data(max_entries=16, show_spinner=False)
def scorecard_distances(settings: Settings) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Distance by offset of every scheme, relative to offset 1 (the scorecard's chart)."""
    return scorecard_module.distance_by_offset(settings)


@st.cache_data(max_entries=32, show_spinner=False)
def precision_scan(
    dtype: str, method: str, w0: float, window: int, start: int, limit: int
) -> precision_module.PairScan:
    """The fastest pair's neighbour scan up to 10^7 (independent of d, n and layout: cached once)."""
    return precision_module.scan_fastest_pair(dtype, method, w0, window, start, limit)


def precision_errors(settings: Settings) -> precision_module.Errors:
    """Errors of float32, float16 and bfloat16 against float64 on ~200 positions up to 10^7.

    Only the "relative" series depend on L (their window), so the others are cached without it.
    """
    fixed = precision_series_errors(replace(settings, L=1), False)
    moving = precision_series_errors(settings, True)
    order = precision_module.NAMES.values()
    return precision_module.Errors(
        fixed.positions,
        {name: {**fixed.max_error, **moving.max_error}[name] for name in order},
        {name: {**fixed.telling, **moving.telling}[name] for name in order},
    )


@st.cache_data(max_entries=32, show_spinner=False)
def precision_series_errors(settings: Settings, relative: bool) -> precision_module.Errors:
    """precision_errors for the "relative" series, or for all the others."""
    series = [key for key in precision_module.SERIES if (key[1] == "relative") == relative]
    return precision_module.errors(settings, series=series)


@st.cache_data(max_entries=16, show_spinner=False)
def precision_column(settings: Settings, column: int) -> dict[str, np.ndarray]:
    """The same errors for one column of P."""
    return precision_module.column_errors(settings, column)


def precision_neighbours(settings: Settings) -> dict[str, precision_module.Neighbours]:
    """First k with P[k] = P[k+1] after rounding, per dtype and method (exact, k < 10^7).

    Only the "relative" method depends on L (its window of positions), so the others are
    cached without it: an L step searches again for three series, not nine.
    """
    return {
        precision_module.series_name(dtype, method): precision_neighbour(
            settings if method == "relative" else replace(settings, L=1), dtype, method
        )
        for dtype in precision_module.DTYPES
        for method in precision_module.METHODS
    }


@st.cache_data(max_entries=64, show_spinner=False)
def precision_neighbour(settings: Settings, dtype: str, method: str) -> precision_module.Neighbours:
    """precision_neighbours for one dtype and method."""
    return precision_module.neighbours(settings, dtype, method, scan=precision_scan)


@st.cache_data(max_entries=16, show_spinner="Comparing the two variants...")
def pitfalls_comparison(
    a: pitfalls_module.Variant, b: pitfalls_module.Variant, L: int, d: int, max_rows: int, max_cols: int
) -> pitfalls_module.Comparison:
    """Two variants as drawn, their difference, and the largest |A - B| over the full matrices
    (explorer.pitfalls.compare, in row blocks of at most FULL_MATRIX_CELLS; ~3 s at the largest)."""
    return pitfalls_module.compare(a, b, L, d, max_rows=max_rows, max_cols=max_cols, max_cells=FULL_MATRIX_CELLS)


@st.cache_data(max_entries=4, show_spinner="Checking the matrix...")
def pitfalls_upload(name: str, data: bytes, max_rows: int, max_cols: int) -> pitfalls_module.UploadCheck:
    """Load, identify and compare an uploaded matrix (explorer.pitfalls.check_upload); keeps only
    display-sized results, never the upload itself. Raises ValueError for a bad file."""
    return pitfalls_module.check_upload(name, data, max_rows=max_rows, max_cols=max_cols, max_cells=FULL_MATRIX_CELLS)
