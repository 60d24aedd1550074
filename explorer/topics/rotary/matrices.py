r"""Rotary's L x L matrices and curves of one view: the scores :math:`q_m\cdot k_n` beside their closed
form g(m - n), RoFormer's long-term decay, the two layouts' cos tables and the error of mixing them, each
with its figure and table; ``analyse`` computes them all once per view, at the page's grids.

Every L x L matrix is drawn from closed forms over the offsets m - n (and the sums m + n for the mixing
error) as exact block means, never built; direct computations with pe_core.rotate on the first and the last
W positions check the closed forms."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer.figures import (
    MARGIN,
    chart_title,
    figure,
    heatmap_figure,
    heatmap_table,
    line_xy,
    range_label,
    round_ticks,
)
from explorer.topics.rotary.view import (
    LAYOUT_CODE,
    OTHER_LAYOUT,
    RotaryView,
    cache_grid,
    query_key,
    score_blocks,
    span,
    window_positions,
)

# ----------------------------------------------------------------------------- the score matrix


@dataclass(frozen=True)
class ScoreMatrix:
    """The L x L scores q_m·k_n (times a²) from the closed form g over the offsets, drawn as block
    means, and the direct check on the first and the last W positions."""

    by_offset: np.ndarray  # g(t) for t = -(L-1) .. L-1
    edges: np.ndarray
    block_means: np.ndarray
    window: int
    measured: np.ndarray  # direct scores at the last W positions, t = -(W-1) .. W-1
    closed_error: float  # max |direct - g(m - n)| on both corner blocks
    shift_error: float  # max |S[m, n] - S[m + L - W, n + L - W]| over the first block


def _block_mean_scores(view: RotaryView, qk: np.ndarray, edges: np.ndarray, rotation_layout: str) -> np.ndarray:
    """The block means of the scores (times a²) of q and k (``qk``, stacked): products of the block
    means of the turned q and k."""
    q_means, k_means = pe_core.rope_rotated_block_average(
        qk, view.L, edges, view.base, cache_layout=view.layout,
        rotation_layout=rotation_layout, scaling=view.scaling,
    )
    return view.attention() ** 2 * (q_means @ k_means.T)


def _offsets(L: int) -> np.ndarray:
    return np.arange(-(L - 1), L, dtype=np.float64)


def _at_positions(qk: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(2, positions, d): q (``qk[0]``) in every row of the first, k in every row of the second."""
    return np.repeat(qk[:, None, :], positions.size, axis=1)


def scores(view: RotaryView, blocks: int) -> ScoreMatrix:
    r"""g(t) = a² Σ_i Re(h_i e^{itθ'_i}) (``pe_core.rope_score_by_offset``) at every offset; the L x L
    matrix S[m, n] = g(m - n) as block means, the product of the block means of the turned q and k
    (``pe_core.rope_rotated_block_average``: a score's mean over a block is that product); and,
    measured with ``pe_core.rotate``, the W x W blocks of the first and the last W positions."""
    qk = np.stack(query_key(view))
    q, k = qk
    a2 = view.attention() ** 2
    L = view.L
    g = a2 * pe_core.rope_score_by_offset(_offsets(L), q, k, view.base, layout=view.layout, scaling=view.scaling,
                                          length=L)
    edges = pe_core.block_edges(L, blocks)
    means = _block_mean_scores(view, qk, edges, view.layout)
    W, positions = window_positions(L)
    # q and k in one call: the sines and cosines of the positions, most of its cost, once.
    Q, K = pe_core.rotate(_at_positions(qk, positions), positions, view.base, layout=view.layout,
                          scaling=view.scaling)
    first, last = a2 * (Q[:W] @ K[:W].T), a2 * (Q[W:] @ K[W:].T)
    closed = g[np.subtract.outer(np.arange(W), np.arange(W)) + L - 1]
    return ScoreMatrix(
        by_offset=g, edges=edges, block_means=means, window=W,
        measured=np.r_[last[: W - 1, W - 1], last[W - 1, ::-1]],
        closed_error=float(max(np.abs(first - closed).max(), np.abs(last - closed).max())),
        shift_error=float(np.abs(first - last).max()),
    )


def _position_labels(edges: np.ndarray, name: str) -> list[str]:
    return [range_label(int(a), int(b) - 1, name) for a, b in pairwise(edges)]


def _line_mode(points: int) -> str:
    """A line, or a marker where a single point would draw nothing (L = 1)."""
    return "lines" if points > 1 else "markers"


def _symmetric(values: np.ndarray) -> tuple[float, float]:
    span = float(np.abs(values).max()) or 1.0
    return -span, span


def square_figure(values: np.ndarray, edges: np.ndarray, *, title: str, value_name: str) -> go.Figure:
    """An L x L matrix of positions (query m down, key n across) drawn as its block means."""
    rows, cols = _position_labels(edges, "query m"), _position_labels(edges, "key n")
    starts = edges[:-1]
    return heatmap_figure(
        values, row_labels=rows, col_labels=cols, row_ticks=round_ticks(rows, starts),
        col_ticks=round_ticks(cols, starts), title=title, x_title="key position n", y_title="query position m",
        value_name=value_name, zrange=_symmetric(values), height=520,
    )


def square_table(values: np.ndarray, edges: np.ndarray) -> pd.DataFrame:
    return heatmap_table(values, _position_labels(edges, "query m"), _position_labels(edges, "key n"),
                         rows_name="query position m", cols_name="key position n")


def closed_form_figure(s: ScoreMatrix) -> go.Figure:
    """g(t) over every offset t = m - n, with the scores measured at the last positions as points."""
    L = (s.by_offset.size + 1) // 2
    line = line_xy(s.by_offset, x0=-(L - 1))
    points = line_xy(s.measured, x0=-(s.window - 1))
    traces = [
        {"type": "scatter", **line, "mode": _line_mode(s.by_offset.size), "name": "closed form g(m − n)",
         "hovertemplate": "m − n = %{x}<br>g = %{y:.10g}<extra></extra>"},
        {"type": "scatter", **points, "mode": "markers", "name": f"measured at {span(L - s.window, L - 1)}",
         "marker": {"size": 6, "symbol": "circle-open", "color": "#d6604d", "line": {"width": 1.5}},
         "hovertemplate": "m − n = %{x}<br>q_m·k_n = %{y:.10g}<extra></extra>"},
    ]
    return figure(traces, {
        "title": chart_title("The closed form: q_m·k_n = g(m − n)"),
        "height": 520, "margin": MARGIN | {"b": 115},
        "xaxis": {"title": {"text": "offset m − n"}}, "yaxis": {"title": {"text": "score"}},
        "legend": {"orientation": "h", "y": -0.2}, "hoverlabel": {"namelength": -1},
    })


def closed_form_table(s: ScoreMatrix) -> pd.DataFrame:
    """g at every offset, and the measured scores where measured (NaN elsewhere)."""
    L = (s.by_offset.size + 1) // 2
    measured = np.full(s.by_offset.size, np.nan)
    measured[L - s.window : L - 1 + s.window] = s.measured
    return pd.DataFrame({"offset m − n": np.arange(-(L - 1), L), "g(m − n)": s.by_offset,
                         "measured q_m·k_n": measured})


# ----------------------------------------------------------------------------- long-term decay


@dataclass(frozen=True)
class Decay:
    """RoFormer's relative upper bound and the all-ones score at every distance 0 .. L-1."""

    bound: np.ndarray
    ones: np.ndarray
    #: max |ones(t)| / (a² d bound(t)): RoFormer's inequality says at most 1.
    worst_ratio: float


def decay(d: int, base: float, scaling: pe_core.RopeScaling | None, L: int) -> Decay:
    r"""``pe_core.rope_decay_bound`` and a² Σ_i 2 cos(tθ'_i) (all-ones q and k), t = 0 .. L-1.

    For all-ones q and k every :math:`h_i = 2`, so :math:`\max_i|h_{i+1} - h_i| = |h_{d/2} - h_{d/2-1}| = 2`
    and RoFormer's inequality reads :math:`|score(t)| \le a^2\cdot 2\cdot\frac d2\cdot bound(t)`."""
    t = np.arange(L, dtype=np.float64)
    bound = pe_core.rope_decay_bound(t, d, base, scaling=scaling, length=L)
    a2 = pe_core.rope_attention_factor(scaling, L) ** 2
    ones = a2 * pe_core.rope_score_by_offset(t, np.ones(d), np.ones(d), base, scaling=scaling, length=L)
    return Decay(bound, ones, float(np.max(np.abs(ones) / (a2 * d * bound))))


def decay_figure(dec: Decay, *, d: int) -> go.Figure:
    """Two panels over the distance m - n: RoFormer's relative upper bound (its Figure 2), and the
    score of all-ones q and k."""
    panels = (
        (dec.bound, "relative upper bound", "(1/(d/2)) Σ_j |S_j|"),
        (dec.ones, "all-ones score", "score of all-ones q, k"),
    )
    traces, layout = [], {}
    for row, ((values, name, y_title), domain) in enumerate(zip(panels, ([0.55, 1.0], [0.0, 0.45]), strict=True), 1):
        suffix = "" if row == 1 else str(row)
        line = line_xy(values)
        traces.append({"type": "scatter", **line, "mode": _line_mode(values.size), "name": name,
                       "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                       "hovertemplate": f"m − n = %{{x}}<br>{name} = %{{y:.10g}}<extra></extra>"})
        bottom = row == len(panels)
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": [0.0, 1.0],
                                    "range": [-0.5, values.size - 0.5]} | (
            {"title": {"text": "distance m − n"}} if bottom else {"showticklabels": False})
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": domain, "title": {"text": y_title}}
    layout |= {"title": chart_title(f"Long-term decay (RoFormer 3.4.3), d = {d:,}"), "height": 560,
               "margin": dict(MARGIN), "showlegend": False, "hoverlabel": {"namelength": -1}}
    return figure(traces, layout)


def decay_table(dec: Decay) -> pd.DataFrame:
    return pd.DataFrame({"distance m − n": np.arange(dec.bound.size), "relative upper bound": dec.bound,
                         "all-ones score": dec.ones})


# ----------------------------------------------------------------------------- the two layouts


def cos_table(
    d: int, base: float, scaling: pe_core.RopeScaling | None, L: int, layout: str, max_rows: int, max_cols: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cos table of ``layout`` (a cos(m θ'_{p(c)}), as ``rope_cache`` returns it) as block means, with its
    row and column edges."""
    return pe_core.rope_cache_block_average(L, d, base, layout=layout, scaling=scaling, max_rows=max_rows,
                                            max_cols=max_cols)


def _column_labels(col_edges: np.ndarray, d: int, layout: str) -> list[str]:
    """Each drawn column's columns and the pairs they hold (lowest..highest, one reduceat per drawn row)."""
    pairs = np.arange(d) % (d // 2) if layout == "half" else np.arange(d) // 2
    starts = np.asarray(col_edges[:-1], dtype=np.int64)
    lowest, highest = np.minimum.reduceat(pairs, starts).tolist(), np.maximum.reduceat(pairs, starts).tolist()
    labels = []
    for a, b, low, high in zip(starts.tolist(), col_edges[1:].tolist(), lowest, highest, strict=True):
        which = f"pair {low}" if low == high else f"pairs {low}..{high}"
        labels.append(f"column {a} ({which})" if b - a == 1 else f"columns {a}..{b - 1} ({which}, mean of {b - a})")
    return labels


def cos_figure(values: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray, *, d: int, layout: str,
               a: float) -> go.Figure:
    rows = _position_labels(row_edges, "position m")
    cols = _column_labels(col_edges, d, layout)
    return heatmap_figure(
        values, row_labels=rows, col_labels=cols, row_ticks=round_ticks(rows, row_edges[:-1]),
        col_ticks=round_ticks(cols, col_edges[:-1]), title=f"{layout}: {LAYOUT_CODE[layout][0]}",
        x_title="column c", y_title="position m", value_name="cos", zrange=(-a, a), height=520,
    )


def cos_download(values: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray, *, d: int,
                 layout: str) -> pd.DataFrame:
    return heatmap_table(values, _position_labels(row_edges, "position m"), _column_labels(col_edges, d, layout),
                         rows_name="position m", cols_name="column c")


@dataclass(frozen=True)
class Mixing:
    """This layout's cache applied with the other layout's rotate function, against the right one."""

    edges: np.ndarray
    error_means: np.ndarray  # block means of S_mixed - S
    window: int
    closed_error: float  # max |direct mixed scores - (U + V)| on the two corner blocks
    drift: float  # max |S_mixed[m, n] - S_mixed[m + L - W, n + L - W]|: no longer a function of m - n
    norm_change: float  # largest relative change of |q| by the mixed "rotation", measured


def mixing(view: RotaryView, blocks: int, right_means: np.ndarray | None = None) -> Mixing:
    r"""This layout's cache with the other layout's rotate function: the error
    :math:`S_{mixed} - S` as block means (each the product of the block means of the turned q and k,
    ``pe_core.rope_rotated_block_average``; ``right_means``: ``scores(view, blocks).block_means`` when
    already computed); measured with ``pe_core.rope_apply_cache`` on the first and the last W
    positions, against its closed form :math:`a^2[U(m - n) + V(m + n)]` (``pe_core.rope_mixed_scores``)."""
    qk = np.stack(query_key(view))
    q, k = qk
    a2 = view.attention() ** 2
    L, other = view.L, OTHER_LAYOUT[view.layout]
    edges = pe_core.block_edges(L, blocks)
    if right_means is None:
        right_means = _block_mean_scores(view, qk, edges, view.layout)
    mixed_means = _block_mean_scores(view, qk, edges, other)
    W, positions = window_positions(L)
    kw = {"cache_layout": view.layout, "rotation_layout": other, "scaling": view.scaling}
    mixed_q, mixed_k = pe_core.rope_apply_cache(_at_positions(qk, positions), positions, view.base, **kw)
    first, last = mixed_q[:W] @ mixed_k[:W].T, mixed_q[W:] @ mixed_k[W:].T
    # m = start + i, n = start + j: m - n = i - j, the same in both blocks (U once: the second call's
    # one offset is not read), and m + n = 2 start + i + j.
    within = np.arange(W)
    differences, sums = np.subtract.outer(within, within), np.add.outer(within, within)
    U, V_first = pe_core.rope_mixed_scores(differences, sums, q, k, view.base, length=L, **kw)
    V_last = pe_core.rope_mixed_scores([0], sums + 2 * (L - W), q, k, view.base, length=L, **kw)[1]
    errors = [np.abs(first - (U + V_first)).max(), np.abs(last - (U + V_last)).max()]
    norms = np.linalg.norm(mixed_q, axis=1) / np.linalg.norm(q)
    return Mixing(edges, mixed_means - right_means, W, a2 * float(max(errors)),
                  a2 * float(np.abs(first - last).max()), float(np.abs(norms - 1.0).max()))


# ----------------------------------------------------------------------------- one view, once


@dataclass(frozen=True)
class Analysis:
    """Everything the page's score, decay and layout sections draw for one view, computed once: the
    scores, the mixing error (from the scores' block means), the decay and both layouts' cos tables
    (values, row edges, column edges), at the page's grids (``score_blocks``, ``cache_grid``). Its
    arrays are read-only: one Analysis is shared by every session that asks for the view."""

    scores: ScoreMatrix
    mixing: Mixing
    decay: Decay
    cos_tables: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def analyse(view: RotaryView) -> Analysis:
    """``scores``, ``mixing``, ``decay`` and each layout's ``cos_table`` of ``view``, at the page's grids."""
    blocks = score_blocks(view.L)
    rows, cols = cache_grid(view.L, view.d)
    s = scores(view, blocks)
    result = Analysis(
        scores=s, mixing=mixing(view, blocks, s.block_means), decay=decay(view.d, view.base, view.scaling, view.L),
        cos_tables={layout: cos_table(view.d, view.base, view.scaling, view.L, layout, rows, cols)
                    for layout in pe_core.ROPE_LAYOUTS},
    )
    parts = (*vars(result.scores).values(), *vars(result.mixing).values(), *vars(result.decay).values(),
             *(array for table in result.cos_tables.values() for array in table))
    for array in parts:
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
    return result
