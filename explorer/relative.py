r"""Relative positions: the transition matrix M(delta), the shifted map P @ M beside the
directly computed shifted encoding and their error, one pair's 2x2 rotation drawn in the
plane (seed 001's shift by -10; seeds 003 and 004's W). Analysis, figure builders and
reproduce-this code, without Streamlit (pages/relative_page.py lays them out).

Every result is exact for what is drawn: large matrices are reduced to block means (never
by skipping rows) or to a window, and the figure's title or hover says which.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import reproduce
from explorer.figures import (
    HEATMAP_MAX_CELLS_DRAWN,
    HEATMAP_MAX_ROWS,
    chart_title,
    group_columns,
    heatmap_figure,
    heatmap_table,
    round_ticks,
    tick_subset,
)
from explorer.settings import Settings

#: Tolerance of "accurate to numerical precision", in units of float64's machine epsilon
#: times the largest angle involved: computing sin(k w) rounds the angle k w by about
#: eps |k w|, and the shift adds the rounding of delta w. Measured errors are ~0.4 of 1 unit.
PRECISION_EPS_FACTOR = 16.0

_EPS = float(np.finfo(np.float64).eps)

#: Relative positions page: rows and columns of M drawn at once (larger d shows a window
#: the user moves); each shifted map, drawn at half the page's width, has at most
#: SHIFT_MAP_ROWS row blocks and SHIFT_MAP_CELLS cells (~0.2 MB each; seed 001's 50 x 512
#: map is drawn exactly).
TRANSITION_WINDOW = 128
SHIFT_MAP_ROWS = HEATMAP_MAX_ROWS
SHIFT_MAP_CELLS = HEATMAP_MAX_CELLS_DRAWN // 2


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
        title=chart_title(f"Pair {pair}: rotation by δ·ω = {np.degrees(phi):.6g}°"),
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


def _index_runs(dims: np.ndarray) -> str:
    """``np.r_[0:64, 256:320]`` for the indices 0..63 and 256..319."""
    dims = np.asarray(dims)
    runs = np.split(dims, np.flatnonzero(np.diff(dims) != 1) + 1)
    return "np.r_[" + ", ".join(f"{int(r[0])}:{int(r[-1]) + 1}" for r in runs) + "]"


def relative_code(
    settings: Settings,
    *,
    delta: int,
    window_start: int,
    window: int,
    pair: int,
    position: int,
    map_rows: int,
    map_cols: int,
    library: str = "numpy",
) -> str:
    """Relative positions: the drawn window of M(delta), the shifted map P M(delta) beside
    PE(k + delta) computed directly (block means as drawn), and one pair's rotation.

    NumPy multiplies by the dense M, as seed 001 does; PyTorch rotates each pair as a complex
    multiply z * exp(-i delta w), the O(L d) way the app computes it.
    """
    L, d, layout = settings.L, settings.d, settings.layout
    dims = transition_window_dims(d, layout, window_start, window)
    row_edges = pe_core.block_edges(L, map_rows)
    pair_edges = reproduce.pair_edges(d, layout, max(2, map_cols))
    lib = "np" if library == "numpy" else "torch"
    columns = (
        f"{lib}.arange(0, d, 2), {lib}.arange(1, d, 2)" if layout == "interleaved"
        else f"{lib}.arange(d // 2), {lib}.arange(d // 2, d)"
    )
    zeros = "np.zeros((d, d))" if library == "numpy" else "torch.zeros(d, d, dtype=torch.float64)"
    code = reproduce.title("Relative positions", settings, f"the shift by δ = {delta}")
    code += reproduce.header(settings, reproduce.imports(library), library)
    code += reproduce.encoding_rows_code(settings, library=library)
    code += (
        f"\ndelta = {delta}\n"
        "phi = delta * w  # pair i turns by φ_i = δ·ω_i\n"
        "# M(δ): the row [sin, cos] of pair i times W(φ_i) = [[cos φ_i, -sin φ_i], [sin φ_i, cos φ_i]]\n"
        f"s, c = {columns}  # the sine and the cosine column of each pair\n"
        f"M = {zeros}\n"
        f"M[s, s], M[c, s], M[s, c], M[c, c] = {lib}.cos(phi), {lib}.sin(phi), -{lib}.sin(phi), {lib}.cos(phi)\n"
    )
    if library == "numpy":
        code += "shifted = P @ M  # row k becomes P[k + δ] (seed 001's P @ M)\n"
    else:
        code += "# The same shift pair by pair: z_i = sin + i·cos of pair i, times e^(-iφ_i)\n"
        code += "turn = torch.polar(torch.ones_like(phi), -phi)\n"
        if layout == "interleaved":
            code += (
                "z = torch.view_as_complex(P.reshape(L, d // 2, 2).contiguous()) * turn\n"
                "shifted = torch.view_as_real(z).reshape(L, d)\n"
            )
        else:
            code += (
                "z = torch.complex(P[:, : d // 2], P[:, d // 2 :]) * turn\n"
                "shifted = torch.cat([z.real, z.imag], dim=1)\n"
            )
    code += "# PE(k + δ) computed directly\n"
    code += reproduce.encoding_rows_code(settings, start=delta, name="direct", library=library)
    if library == "torch":
        code += (
            "# From here on NumPy: what the page draws\n"
            "P, M, shifted, direct, w = (x.numpy() for x in (P, M, shifted, direct, w))\n"
        )
    code += (
        f"window = M[np.ix_({_index_runs(dims)}, {_index_runs(dims)})]  # the rows and columns of M drawn\n"
        "error = np.abs(shifted - direct).max()  # max |P M(δ) - PE(k + δ)|: rounding only\n\n"
        + reproduce.encoding_blocks_code("shifted", "shifted_shown", layout, row_edges, pair_edges)
        + reproduce.encoding_blocks_code("direct", "direct_shown", layout, row_edges, pair_edges)
        + f"\n# Pair {pair} at position {position}: v = [sin θ, cos θ] with θ = k·ω_i, and v W(δ·ω_i)\n"
        f"pair, position = {pair}, {position}\n"
        "theta, angle = position * w[pair], delta * w[pair]\n"
        "v = np.array([np.sin(theta), np.cos(theta)])\n"
        "W = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])\n"
        "rotation = np.array([v, v @ W])  # [sin(θ + φ), cos(θ + φ)] in the second row\n"
    )
    return code + reproduce.result_code({
        "relative_transition": "window",
        "relative_shifted": "shifted_shown",
        "relative_direct": "direct_shown",
        "relative_rotation": "rotation",
    })
