r"""Figures (and the small pure computations behind them) of the pages about how positions
relate: Similarity (seed 001's dot product and SSE against one position, the
position x position dot-product matrix, the closed form :math:`\sum_i \cos(\omega_i\delta)`)
and Relative positions (the transition matrix M(delta), the shifted map P @ M beside the
directly computed shifted encoding, one pair's 2x2 rotation drawn in the plane).

No Streamlit here: arrays in, NumPy results or Plotly figures out, so each is unit-tested.
Every result is exact for what is drawn: large matrices are reduced to block means (never
by skipping rows) or to a window, and the figure's title or hover says which.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer.figures import (
    ENVELOPE_HOVER,
    HEATMAP_MAX_CELLS_DRAWN,
    HEATMAP_MAX_ROWS,
    heatmap_figure,
    heatmap_table,
    line_xy,
    range_label,
    round_ticks,
    tick_subset,
)
from explorer.settings import Settings

#: Tolerance of "accurate to numerical precision", in units of float64's machine epsilon
#: times the largest angle involved: computing sin(k w) rounds the angle k w by about
#: eps |k w|, and the shift adds the rounding of delta w. Measured errors are ~0.4 of 1 unit.
PRECISION_EPS_FACTOR = 16.0

_EPS = float(np.finfo(np.float64).eps)

#: Similarity page: blocks of positions per axis of the dot-product matrix (192 x 192
#: cells, ~0.2 MB), and cells of the encoding built to measure dot products when P is too
#: large to build (~2 MB: 128 positions at d = 2048, each drawn as a marker).
SIMILARITY_BLOCKS = HEATMAP_MAX_ROWS
MEASURED_CELLS = 2**18
#: Above this many measured dot products, the closed-form chart draws them as a dotted line.
MAX_MEASURED_MARKERS = 300
#: Relative positions page: rows and columns of M drawn at once (larger d shows a window
#: the user moves); each shifted map, drawn at half the page's width, has at most
#: SHIFT_MAP_ROWS row blocks and SHIFT_MAP_CELLS cells (~0.2 MB each; seed 001's 50 x 512
#: map is drawn exactly).
TRANSITION_WINDOW = 128
SHIFT_MAP_ROWS = HEATMAP_MAX_ROWS
SHIFT_MAP_CELLS = HEATMAP_MAX_CELLS_DRAWN // 2


def even_settings(settings: Settings, why: str) -> tuple[Settings, str | None]:
    """These pages need sine/cosine pairs: an odd d (impossible from the sidebar, which steps
    by 2, but guarded anyway) becomes the even d below it (2 for d = 1), with a one-line notice."""
    if settings.d % 2 == 0:
        return settings, None
    even = settings.d - 1 if settings.d > 1 else 2
    return replace(settings, d=even), f"d = {settings.d} is odd: {why}; this page uses d = {even}."


# --------------------------------------------------------------------------- similarity


@dataclass(frozen=True)
class SimilarityCurves:
    """Dot product, SSE and cosine of every position k = 0..L-1 against position ``ref``."""

    dot: np.ndarray
    sse: np.ndarray
    cosine: np.ndarray
    ref: int
    from_matrix: bool


def similarity_from_matrix(P: np.ndarray, ref: int) -> SimilarityCurves:
    """The three curves measured on the encoding matrix itself (seed 001's computation)."""
    return SimilarityCurves(
        dot=pe_core.dot_similarity(P, ref),
        sse=pe_core.sse(P, ref),
        cosine=pe_core.cosine_similarity(P, ref),
        ref=int(ref),
        from_matrix=True,
    )


def similarity_from_offsets(values_by_offset: np.ndarray, ref: int, d: int) -> SimilarityCurves:
    r"""The three curves from the closed form, with ``values_by_offset[t + L - 1] = f(t)``.

    For an even d every row has :math:`\lVert P[k]\rVert^2 = d/2`, so position k against
    ``ref`` has dot :math:`f(k - ref)`, SSE :math:`d - 2 f(k - ref)` (``sse_by_offset``) and
    cosine :math:`f(k - ref) / (d/2)`.
    """
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    if f.size % 2 == 0 or not 0 <= ref < L:
        raise ValueError(f"need f(t) for t = -(L-1)..L-1 and a reference 0 <= ref < L; got {f.size} values, ref={ref}.")
    ref = int(ref)
    dot = f[L - 1 - ref : 2 * L - 1 - ref]
    return SimilarityCurves(dot=dot, sse=d - 2.0 * dot, cosine=dot / (d / 2), ref=ref, from_matrix=False)


def measure_window(L: int, d: int, ref: int, max_cells: int) -> tuple[int, int]:
    """(first position, count) of the window of at most ``max_cells // d`` consecutive
    positions around ``ref`` that ``measure_around`` builds."""
    count = max(1, min(L, max_cells // d))
    return min(max(0, ref - count // 2), L - count), count


def measure_around(
    L: int, d: int, n: float, *, layout: str, convention: str, ref: int, max_cells: int
) -> tuple[int, np.ndarray]:
    """Dot products P[k]·P[ref] measured on the encoding itself, for a window of at most
    ``max_cells // d`` consecutive positions around ``ref`` (for when P is too large to build).

    Returns (first position of the window, dot products of the window's positions).
    """
    first, count = measure_window(L, d, ref, max_cells)
    return first, window_dots(first, count, d, n, layout=layout, convention=convention, ref=ref)


def window_dots(first: int, count: int, d: int, n: float, *, layout: str, convention: str, ref: int) -> np.ndarray:
    """P[k]·P[ref] for the positions k = first .. first+count-1, measured on the encoding."""
    P = pe_core.positional_encoding(count, d, n, layout=layout, convention=convention, start=first)
    reference = pe_core.positional_encoding(1, d, n, layout=layout, convention=convention, start=ref)[0]
    return P @ reference


def mirrored_offsets(values_from_zero: np.ndarray) -> np.ndarray:
    """f(t) for t = -(L-1)..L-1 from f(0..L-1), since f(-t) = f(t) (cos is even)."""
    half = np.asarray(values_from_zero, dtype=np.float64)
    return np.r_[half[:0:-1], half]


def similarity_figure(curves: SimilarityCurves, *, title: str) -> go.Figure:
    """Seed 001's two plots (dot product, then SSE, against one position) and the cosine,
    stacked over a shared position axis, with a dotted line at the reference position.
    Lines longer than ``figures.LINE_MAX_POINTS`` are drawn as their min/max envelope.

    Built as one Figure from plain dicts (the layout make_subplots(3, 1, shared_xaxes=True)
    gives): make_subplots and add_vline cost ~25 ms of validation per slider step.
    """
    rows = (
        ("dot product", curves.dot, f"P[k]·P[{curves.ref}]"),
        ("SSE", curves.sse, f"SSE ‖P[k] − P[{curves.ref}]‖²"),
        ("cosine", curves.cosine, f"cos(P[k], P[{curves.ref}])"),
    )
    domains = ([0.7, 1.0], [0.35, 0.65], [0.0, 0.3])
    traces, layout, shapes = [], {}, []
    for row, ((name, values, y_title), domain) in enumerate(zip(rows, domains, strict=True), start=1):
        suffix = "" if row == 1 else str(row)
        line = line_xy(values)
        traces.append(
            go.Scatter(
                **line,
                name=name,
                mode="lines",
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                hovertemplate=f"position k = %{{x}}<br>{y_title} = %{{y:.10g}}"
                + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
            )
        )
        bottom = row == len(rows)
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": [0.0, 1.0]} | (
            {"title": {"text": "position k"}} if bottom else {"matches": "x3", "showticklabels": False}
        )
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": domain, "title": {"text": y_title}}
        shapes.append({
            "type": "line", "x0": curves.ref, "x1": curves.ref, "xref": f"x{suffix}", "y0": 0, "y1": 1,
            "yref": f"y{suffix} domain", "line": {"dash": "dot", "color": "grey"},
        })
    layout |= {
        "title": {"text": title, "x": 0.0, "xanchor": "left"},
        "height": 720,
        "margin": {"l": 80, "r": 20, "t": 60, "b": 60},
        "showlegend": False,
        "hoverlabel": {"namelength": -1},
        "shapes": shapes,
    }
    return go.Figure(data=traces, layout=layout)


def _offset_matrix_labels(edges: np.ndarray) -> tuple[list[str], list[str]]:
    """Row (k) and column (k′) labels of the blocks of positions between ``edges``."""
    edges = np.asarray(edges)
    first, last = edges[:-1], edges[1:] - 1
    rows = [range_label(int(a), int(b), "k") for a, b in zip(first, last, strict=True)]
    cols = [range_label(int(a), int(b), "k′") for a, b in zip(first, last, strict=True)]
    return rows, cols


def offset_matrix_figure(block_means: np.ndarray, edges: np.ndarray, *, d: int, title: str) -> go.Figure:
    """The L x L dot-product matrix G[k, k'] = f(k' - k), drawn as exact block means.

    ``edges`` are the position blocks of both axes (``pe_core.block_edges``); hover names
    the block of positions each cell stands for.
    """
    rows, cols = _offset_matrix_labels(edges)
    starts = np.asarray(edges)[:-1]
    return heatmap_figure(
        block_means,
        row_labels=rows,
        col_labels=cols,
        row_ticks=round_ticks(rows, starts),
        col_ticks=round_ticks(cols, starts),
        title=title,
        x_title="position k′",
        y_title="position k",
        value_name="P[k]·P[k′]",
        zrange=(-d / 2, d / 2),
    )


def closed_form_figure(
    values_by_offset: np.ndarray,
    *,
    measured: np.ndarray | None = None,
    measured_first_offset: int = 0,
    title: str,
) -> go.Figure:
    r"""The closed form :math:`f(\delta) = \sum_i \cos(\omega_i\delta)` over
    :math:`\delta = -(L-1) .. L-1`, with the values measured on the matrix (at the
    consecutive offsets from ``measured_first_offset``) drawn as points on top. Either, when
    longer than ``figures.LINE_MAX_POINTS``, is drawn as its min/max envelope."""
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    line = line_xy(f, x0=-(L - 1))
    traces = [
        go.Scatter(
            **line,
            name="closed form Σ cos(ω_i δ)",
            mode="lines",
            hovertemplate="offset δ = %{x}<br>Σ cos(ω_i δ) = %{y:.10g}"
            + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
        )
    ]
    if measured is not None:
        points = line_xy(measured, x0=measured_first_offset)
        # Thousands of markers (measured on the whole matrix at a small d) cost the browser
        # more than the rest of the page: a dotted line over the closed form says the same.
        as_markers = np.size(measured) <= MAX_MEASURED_MARKERS
        traces.append(
            go.Scatter(
                **points,
                name="measured P[ref+δ]·P[ref]",
                mode="markers" if as_markers else "lines",
                marker={"size": 6, "symbol": "circle-open", "color": "#d6604d", "line": {"width": 1.5}},
                line={"color": "#d6604d", "dash": "dot", "width": 2},
                hovertemplate="offset δ = %{x}<br>measured dot = %{y:.10g}"
                + (ENVELOPE_HOVER if "x" in points else "") + "<extra></extra>",
            )
        )
    return go.Figure(traces, {
        "title": {"text": title, "x": 0.0, "xanchor": "left"},
        "height": 420,
        "margin": {"l": 80, "r": 20, "t": 60, "b": 60},
        "xaxis": {"title": {"text": "offset δ (positions)"}},
        "yaxis": {"title": {"text": "dot product f(δ)"}},
        "legend": {"orientation": "h", "y": -0.2},
        "hoverlabel": {"namelength": -1},
    })


# ----------------------------------------------------------------- transition matrix


def transition_window_limit(d: int, layout: str, size: int) -> int:
    """Largest first dimension of a window of ``size`` rows/columns of M (0 if all fit)."""
    if d <= size:
        return 0
    if layout == "concatenated":
        return d // 2 - size // 2
    return d - size


def transition_window_dims(d: int, layout: str, start: int, size: int) -> np.ndarray:
    """The dimensions (rows = columns) of M shown in a window of ``size`` starting at ``start``.

    Interleaved: the contiguous dimensions start .. start+size-1. Concatenated: the sines
    start .. start+size/2-1 and their cosine partners d/2+start .., so that the window shows
    seed 001's four diagonal blocks however large d is. All of M when d <= size.
    """
    if d <= size:
        return np.arange(d)
    start = min(max(int(start), 0), transition_window_limit(d, layout, size))
    if layout == "concatenated":
        half = np.arange(start, start + size // 2)
        return np.r_[half, d // 2 + half]
    return np.arange(start, start + size)


def transition_window(
    delta: int, d: int, n: float, *, layout: str, convention: str, dims: np.ndarray
) -> np.ndarray:
    r"""``transition_matrix(delta, d, ...)[np.ix_(dims, dims)]`` without building the d x d matrix.

    M[a, b] is non-zero only when columns a and b belong to the same pair i, with
    :math:`\phi_i = \delta\omega_i`: :math:`M[s_i, s_i] = M[c_i, c_i] = \cos\phi_i`,
    :math:`M[c_i, s_i] = \sin\phi_i`, :math:`M[s_i, c_i] = -\sin\phi_i`.
    """
    if d % 2:
        raise ValueError(f"the transition matrix needs an even d (sine/cosine pairs), got d={d}.")
    if not float(delta).is_integer():
        raise ValueError(f"delta (the offset) must be a whole number, got {delta!r}.")
    delta = int(delta)
    pair, is_sine = pe_core.column_pairs(d, layout)
    phi = delta * pe_core.frequencies(d, n, convention)
    dims = np.asarray(dims, dtype=np.int64)
    p, s = pair[dims], is_sine[dims]
    cos_row, sin_row = np.cos(phi[p])[:, None], np.sin(phi[p])[:, None]
    row_sine, col_sine = s[:, None], s[None, :]
    values = np.where(row_sine == col_sine, cos_row, np.where(row_sine, -sin_row, sin_row))
    return np.where(p[:, None] == p[None, :], values, 0.0)


def _dimension_label(j: int, pair: int, is_sine: bool, axis: str) -> str:
    return f"{axis} {j}: {'sin' if is_sine else 'cos'} of pair {pair}"


def _transition_labels(dims: np.ndarray, d: int, layout: str) -> tuple[list[str], list[str]]:
    """Row and column labels of a window of M: dimension, sine or cosine, pair."""
    pair, is_sine = pe_core.column_pairs(d, layout)
    dims = np.asarray(dims)
    rows = [_dimension_label(int(j), int(pair[j]), bool(is_sine[j]), "row") for j in dims]
    cols = [_dimension_label(int(j), int(pair[j]), bool(is_sine[j]), "column") for j in dims]
    return rows, cols


def window_text(dims: np.ndarray, d: int) -> str:
    """'all 64 dimensions' or 'dimensions 0..63 and 256..319 of 512'."""
    dims = np.asarray(dims)
    if dims.size == d:
        return f"all {d} dimensions"
    breaks = np.flatnonzero(np.diff(dims) != 1)
    runs = np.split(dims, breaks + 1)
    return "dimensions " + " and ".join(f"{r[0]}..{r[-1]}" for r in runs) + f" of {d}"


def transition_figure(
    values: np.ndarray, dims: np.ndarray, *, d: int, layout: str, delta: int, title: str
) -> go.Figure:
    """Heatmap of (a window of) M(delta), rows and columns labelled by dimension and pair."""
    rows, cols = _transition_labels(dims, d, layout)
    dims = np.asarray(dims)
    if np.all(np.diff(dims) == 1):
        row_ticks, col_ticks = round_ticks(rows, dims, count=9), round_ticks(cols, dims, count=9)
    else:  # a concatenated window: two runs of dimensions, d/2 apart
        texts = [str(int(j)) for j in dims]
        row_ticks, col_ticks = tick_subset(rows, texts, count=9), tick_subset(cols, texts, count=9)
    return heatmap_figure(
        values,
        row_labels=rows,
        col_labels=cols,
        row_ticks=row_ticks,
        col_ticks=col_ticks,
        title=title,
        x_title="column of M (output dimension)",
        y_title="row of M (input dimension)",
        value_name=f"M({delta})[row, column]",
        height=560,
    )


# ------------------------------------------------------------------- the shifted map


@dataclass(frozen=True)
class ShiftComparison:
    r"""P @ M(delta) beside PE(k + delta) computed directly, and how far apart they are.

    ``shifted`` and ``direct`` are drawn values (rows = blocks of positions k, columns =
    runs of pairs of one kind); ``max_error`` is :math:`\max|P M - PE(k+\delta)|` over every
    cell of positions ``checked_first .. checked_last``; ``seed_error`` is seed 001's check
    ``(P @ M)[rows] - P[rows + delta]`` over the rows whose k + delta is also in 0..L-1
    (None when there are none).
    """

    shifted: np.ndarray
    direct: np.ndarray
    row_first: np.ndarray
    row_last: np.ndarray
    column_is_sine: np.ndarray
    pair_first: np.ndarray
    pair_last: np.ndarray
    max_error: float
    seed_error: float | None
    seed_rows: int
    checked_first: int
    checked_last: int
    whole_matrix: bool
    tolerance: float

    @property
    def accurate(self) -> bool:
        return self.max_error <= self.tolerance and (self.seed_error is None or self.seed_error <= self.tolerance)


def precision_tolerance(largest_angle: float) -> float:
    """What "accurate to numerical precision" allows when angles reach ``largest_angle`` rad."""
    return PRECISION_EPS_FACTOR * _EPS * (1.0 + abs(float(largest_angle)))


def group_columns(values: np.ndarray, layout: str, max_cols: int) -> tuple[np.ndarray, ...]:
    """Average the d columns of ``values`` into ``pe_core.column_groups`` (runs of pairs of
    one kind, never a sine with a cosine). Returns (means, is_sine, pair_first, pair_last)."""
    values = np.asarray(values, dtype=np.float64)
    d = values.shape[1]
    is_sine, first, last = pe_core.column_groups(d, layout, max(2, max_cols))
    pair, col_is_sine = pe_core.column_pairs(d, layout)
    group = np.empty(d, dtype=np.int64)
    for kind in (True, False):
        ids = np.flatnonzero(is_sine == kind)
        cols = col_is_sine == kind
        group[cols] = ids[np.searchsorted(first[ids], pair[cols], side="right") - 1]
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(is_sine.size))
    sums = np.add.reduceat(values[:, order], starts, axis=1)
    counts = np.diff(np.r_[starts, d])
    return sums / counts, is_sine, first, last


def shift_map_max_cols(L: int, d: int) -> int:
    """Columns of each shifted map: all d while SHIFT_MAP_ROWS row blocks fit SHIFT_MAP_CELLS,
    else a power of two within it (equal runs of pairs for d a power of two: round ticks)."""
    rows = min(L, SHIFT_MAP_ROWS)
    if rows * d <= SHIFT_MAP_CELLS:
        return d
    return 1 << ((SHIFT_MAP_CELLS // rows).bit_length() - 1)


def compare_shift(
    L: int,
    d: int,
    n: float,
    *,
    layout: str,
    convention: str,
    delta: int,
    max_rows: int,
    max_cols: int,
    full_cells: int,
) -> ShiftComparison:
    """Shift the encoding by ``delta`` with ``pe_core.shift`` (O(L d)) and compare it with
    ``positional_encoding(..., start=delta)``.

    Up to ``full_cells`` cells the whole matrix is built, shifted and compared, and block
    means of both are drawn. Beyond, the error is measured on the last
    ``full_cells // d`` positions (where the angles, and so the rounding, are largest), and
    the drawn block means come from the closed form: averaging rows commutes with a linear
    map acting on each row, so the shifted block means are ``shift(block means of P)``.
    """
    kw = {"layout": layout, "convention": convention}
    edges = pe_core.block_edges(L, max_rows)
    if L * d <= full_cells:
        first = 0
        P = pe_core.positional_encoding(L, d, n, **kw)
        shifted = pe_core.shift(P, delta, n, **kw)
        direct = pe_core.positional_encoding(L, d, n, start=delta, **kw)
        # Seed 001: errors = (P @ M)[10:] - P[:-10]: the rows k whose k + delta is in P.
        lo, hi = max(0, -delta), min(L, L - delta)
        seed = np.abs(shifted[lo:hi] - P[lo + delta : hi + delta]).max() if hi > lo else None
        per_column = np.arange(d + 1)
        shown_shifted = pe_core.block_average(shifted, edges, per_column)
        shown_direct = pe_core.block_average(direct, edges, per_column)
    else:
        count = max(1, min(L, full_cells // d))
        first = L - count
        P = pe_core.positional_encoding(count, d, n, start=first, **kw)
        shifted = pe_core.shift(P, delta, n, **kw)
        direct = pe_core.positional_encoding(count, d, n, start=first + delta, **kw)
        # Rows of the window whose k + delta is a position of P: PE(k + delta) computed
        # directly is bit for bit the row P[k + delta] (same angle, same sin).
        lo, hi = max(first, -delta), min(L, L - delta)
        seed = np.abs(shifted[lo - first : hi - first] - direct[lo - first : hi - first]).max() if hi > lo else None
        means = pe_core.encoding_block_average(L, d, n, max_rows=max_rows, max_cols=d, **kw).values
        shown_shifted = pe_core.shift(means, delta, n, **kw)
        shown_direct = pe_core.encoding_block_average(L, d, n, start=delta, max_rows=max_rows, max_cols=d, **kw).values
    error = float(np.abs(shifted - direct).max())
    shifted_cols, is_sine, pair_first, pair_last = group_columns(shown_shifted, layout, max_cols)
    direct_cols = group_columns(shown_direct, layout, max_cols)[0]
    return ShiftComparison(
        shifted=shifted_cols,
        direct=direct_cols,
        row_first=edges[:-1],
        row_last=edges[1:] - 1,
        column_is_sine=is_sine,
        pair_first=pair_first,
        pair_last=pair_last,
        max_error=error,
        seed_error=None if seed is None else float(seed),
        seed_rows=max(0, hi - lo),
        checked_first=first,
        checked_last=L - 1,
        whole_matrix=first == 0,
        tolerance=precision_tolerance(L - 1 + abs(delta)),
    )


# ------------------------------------------------------------------ one pair's rotation


def rotation_figure(
    theta: float, phi: float, *, pair: int, k: int, delta: int, axis_names: tuple[str, str]
) -> go.Figure:
    r"""One pair in the plane: the row vector :math:`v = [\sin\theta, \cos\theta]` with
    :math:`\theta = k\omega_i`, and its image :math:`v\,W(\phi)` with :math:`\phi = \delta\omega_i`,
    which is :math:`[\sin(\theta+\phi), \cos(\theta+\phi)]`; the arc between them is
    :math:`\phi` wrapped to (-180°, 180°]."""
    v = np.array([np.sin(theta), np.cos(theta)])
    image = v @ pe_core.rotation(phi)
    circle = np.linspace(0.0, 2 * np.pi, 181)
    turn = float(np.angle(np.exp(1j * phi)))  # phi wrapped to (-pi, pi]
    arc = theta + np.linspace(0.0, 1.0, 61) * turn
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=np.sin(circle), y=np.cos(circle), mode="lines", name="unit circle",
                   line={"color": "lightgrey"}, hoverinfo="skip")
    )
    fig.add_trace(
        go.Scatter(x=0.35 * np.sin(arc), y=0.35 * np.cos(arc), mode="lines", name=f"φ = δ·ω_{pair}",
                   line={"color": "grey", "dash": "dot"}, hoverinfo="skip")
    )
    coordinates = f"({axis_names[0]}, {axis_names[1]}) = (%{{x:.10g}}, %{{y:.10g}})"
    for name, point, colour in (
        (f"P[{k}], pair {pair}", v, "#2166ac"),
        (f"P[{k}] W(δω) = P[{k}{delta:+d}], pair {pair}", image, "#b2182b"),
    ):
        fig.add_trace(
            go.Scatter(
                x=[0.0, point[0]],
                y=[0.0, point[1]],
                mode="lines+markers",
                name=name,
                line={"color": colour, "width": 3},
                marker={"size": [0, 10], "color": colour},
                hovertemplate=f"{name}<br>{coordinates}<extra></extra>",
            )
        )
    fig.update_layout(
        title={"text": f"Pair {pair}: rotation by δ·ω = {np.degrees(phi):.6g}°", "x": 0.0, "xanchor": "left"},
        height=520,
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
        xaxis_title=f"first component: {axis_names[0]}",
        yaxis_title=f"second component: {axis_names[1]}",
        legend={"orientation": "h", "y": -0.2},
        hoverlabel={"namelength": -1},
    )
    fig.update_xaxes(range=[-1.25, 1.25], zeroline=True)
    fig.update_yaxes(range=[-1.25, 1.25], zeroline=True, scaleanchor="x", scaleratio=1)
    return fig



# ------------------------------------------------------------------- download tables


def similarity_table(curves: SimilarityCurves) -> pd.DataFrame:
    """``similarity_figure``'s data: every position k, its dot product, SSE and cosine to ref."""
    ref = curves.ref
    return pd.DataFrame({
        "position k": np.arange(curves.dot.size),
        f"P[k]·P[{ref}]": curves.dot,
        f"SSE ‖P[k] − P[{ref}]‖²": curves.sse,
        f"cos(P[k], P[{ref}])": curves.cosine,
    })


def offset_matrix_table(block_means: np.ndarray, edges: np.ndarray) -> pd.DataFrame:
    """``offset_matrix_figure``'s data, each cell labelled with the blocks of k and k′ it averages."""
    rows, cols = _offset_matrix_labels(edges)
    return heatmap_table(block_means, rows, cols, rows_name="position k", cols_name="position k′")


def closed_form_table(
    values_by_offset: np.ndarray, *, measured: np.ndarray, measured_first_offset: int
) -> pd.DataFrame:
    """``closed_form_figure``'s data: f(δ) for every offset, and the measured dot products at
    the offsets where they were measured (NaN elsewhere)."""
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    measured = np.asarray(measured, dtype=np.float64)
    at_offsets = np.full(f.size, np.nan)
    first = measured_first_offset + L - 1
    at_offsets[first : first + measured.size] = measured
    return pd.DataFrame(
        {"offset δ": np.arange(-(L - 1), L), "Σ cos(ω_i δ)": f, "measured P[ref+δ]·P[ref]": at_offsets}
    )


def transition_table(values: np.ndarray, dims: np.ndarray, *, d: int, layout: str) -> pd.DataFrame:
    """``transition_figure``'s data: the drawn window of M(delta), rows and columns labelled."""
    rows, cols = _transition_labels(dims, d, layout)
    return heatmap_table(values, rows, cols, rows_name="row of M", cols_name="column of M")


def rotation_table(theta: float, phi: float) -> pd.DataFrame:
    """``rotation_figure``'s two points: v = [sin θ, cos θ] and v W(φ) = [sin(θ+φ), cos(θ+φ)]."""
    v = np.array([np.sin(theta), np.cos(theta)])
    return pd.DataFrame(
        np.array([v, v @ pe_core.rotation(phi)]),
        index=pd.Index(["v = P[k] (this pair)", "v W(δω) = P[k+δ] (this pair)"], name="point"),
        columns=["sine component", "cosine component"],
    )
