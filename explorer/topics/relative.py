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
from explorer import animation, reproduce
from explorer.figures import (
    MARGIN,
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
#: the user moves).
TRANSITION_WINDOW = 128
#: Play on the shifted map: a window of the first positions and the fastest dimensions, every
#: cell exact (no block means), small enough that a frame per offset fits animation's budget
#: (24 x 32 cells: ~4 KB a frame) and that Chromium redraws a frame well within its time.
SHIFT_PLAY_ROWS, SHIFT_PLAY_COLS = 24, 32
#: Play sweeps at least this many offsets past 0 (towards δ's side): at the page's δ = 1 a sweep to δ
#: alone was two frames, nothing to play.
SHIFT_PLAY_MIN_SWEEP = 16
#: Play on one pair's rotation: frames of the angle growing from 0 to δ·ω_i (every ~5° of a half turn).
ROTATION_PLAY_FRAMES = 37


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
    :math:`\phi_i = \delta\omega_i` (exact: ``pe_core.sin_cos_of_products``):
    :math:`M[s_i, s_i] = M[c_i, c_i] = \cos\phi_i`, :math:`M[c_i, s_i] = \sin\phi_i`, :math:`M[s_i, c_i] = -\sin\phi_i`.
    """
    if d % 2:
        raise ValueError(f"the transition matrix needs an even d (sine/cosine pairs), got d={d}.")
    if not float(delta).is_integer():
        raise ValueError(f"delta (the offset) must be a whole number, got {delta!r}.")
    delta = int(delta)
    pair, is_sine = pe_core.column_pairs(d, layout)
    # The angles δ·ω_i exact, as pe_core.transition_matrix and pe_core.shift take them: the M drawn is the M applied.
    sin_phi, cos_phi = pe_core.sin_cos_of_products(float(delta), pe_core.frequencies(d, n, convention))
    dims = np.asarray(dims, dtype=np.int64)
    p, s = pair[dims], is_sine[dims]
    cos_row, sin_row = cos_phi[p][:, None], sin_phi[p][:, None]
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


def checked_first(L: int, d: int, full_cells: int) -> int:
    """First position over which ``compare_shift`` measures the error: 0 (every position) up to
    ``full_cells`` cells, else the first of the last ``full_cells // d`` positions."""
    return 0 if L * d <= full_cells else L - max(1, min(L, full_cells // d))


def metric_labels(delta: int, pair: int) -> dict[str, str]:
    """The labels of the page's numbers (its metrics), which its snippet prints under the same names."""
    return {
        "error": f"max |P M({delta}) − PE(k{delta:+d})|",
        "seed": f"Seed 001's check: max |(P M)[k] − P[k{delta:+d}]|",
        "angle": f"angle δ·ω_{pair}",
        "wrapped": "the same angle mod 360°",
        "rotation": f"max |v·W − (sin, cos) of (k{delta:+d})·ω_{pair}|",
    }


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
    P and PE(k + delta) are rows of one encoding where their positions overlap
    (``_encoding_and_direct``).
    """
    kw = {"layout": layout, "convention": convention}
    edges = pe_core.block_edges(L, max_rows)
    first = checked_first(L, d, full_cells)
    P, direct = _encoding_and_direct(first, L, delta, d, n, **kw)
    shifted = pe_core.shift(P, delta, n, **kw)
    if first == 0:
        per_column = np.arange(d + 1)
        shown_shifted = pe_core.block_average(shifted, edges, per_column)
        shown_direct = pe_core.block_average(direct, edges, per_column)
    else:
        means = pe_core.encoding_block_average(L, d, n, max_rows=max_rows, max_cols=d, **kw).values
        shown_shifted = pe_core.shift(means, delta, n, **kw)
        shown_direct = pe_core.encoding_block_average(L, d, n, start=delta, max_rows=max_rows, max_cols=d, **kw).values
    # |P M - PE(k + delta)|, written over P M once its block means are taken: no third array of L x d cells.
    gap = np.abs(np.subtract(shifted, direct, out=shifted), out=shifted)
    error = float(gap.max())
    # Seed 001: errors = (P @ M)[10:] - P[:-10], over the rows k whose k + delta is a position of P:
    # there PE(k + delta) computed directly is the row P[k + delta] itself (the same angle, the same sin).
    lo, hi = max(first, -delta), min(L, L - delta)
    seed = gap[lo - first : hi - first].max() if hi > lo else None
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


def _encoding_and_direct(
    first: int, L: int, delta: int, d: int, n: float, *, layout: str, convention: str
) -> tuple[np.ndarray, np.ndarray]:
    """PE(k) and PE(k + delta) for k = first .. L-1, as ``positional_encoding(..., start=first)`` and
    ``(..., start=first + delta)`` give them: rows of one encoding of the positions either needs when
    they overlap (|delta| < L - first: the positions k + delta of a small offset are nearly all
    positions k too), so that no position is encoded twice. The same values to the bit: each entry
    is sin or cos of its own exact angle k·ω_i, whatever rows are computed with it."""
    count, kw = L - first, {"layout": layout, "convention": convention}
    if abs(delta) >= count:
        return (pe_core.positional_encoding(count, d, n, start=first, **kw),
                pe_core.positional_encoding(count, d, n, start=first + delta, **kw))
    start = first + min(delta, 0)
    both = pe_core.positional_encoding(count + abs(delta), d, n, start=start, **kw)
    return both[first - start : first - start + count], both[first + delta - start : first + delta - start + count]


def shift_play_deltas(delta: int, max_frames: int) -> np.ndarray:
    """The offsets Play sweeps, from 0 to ``delta`` in order: every whole offset when there are
    at most ``max_frames``, else ``max_frames`` whole offsets evenly spread (0 and delta included)."""
    delta = int(delta)
    count = min(abs(delta) + 1, max(2, max_frames))
    swept = np.unique(np.round(np.linspace(0, delta, count)).astype(np.int64))
    return swept[::-1] if delta < 0 else swept


def shift_play_end(delta: int) -> int:
    """The offset Play sweeps to: ``delta``, or SHIFT_PLAY_MIN_SWEEP on its side when it is nearer 0
    (every whole offset is then a frame, ``delta`` one of them)."""
    side = -1 if delta < 0 else 1
    return delta if abs(delta) >= SHIFT_PLAY_MIN_SWEEP else side * SHIFT_PLAY_MIN_SWEEP


def shift_play_window(L: int, d: int, layout: str) -> tuple[int, np.ndarray]:
    """The window Play draws of the shifted map: its rows (the first positions) and its dimensions
    (the first of ``transition_window_dims``: the fastest pairs, sines with their cosines)."""
    return min(L, SHIFT_PLAY_ROWS), transition_window_dims(d, layout, 0, SHIFT_PLAY_COLS)


def shift_play_frames(
    L: int, d: int, n: float, *, layout: str, convention: str, delta: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``shift_play_figure`` animates: the offsets δ' from 0 to ``shift_play_end(delta)``
    (``shift_play_deltas``, as many as fit
    ``animation.frame_count``), P @ M(δ') on the window for each (shape: offsets x rows x
    dimensions, by ``pe_core.shift``) and the window's dimensions."""
    rows, dims = shift_play_window(L, d, layout)
    kw = {"layout": layout, "convention": convention}
    P = pe_core.positional_encoding(rows, d, n, **kw)
    deltas = shift_play_deltas(shift_play_end(delta), animation.frame_count(rows * dims.size))
    return deltas, np.stack([pe_core.shift(P, int(offset), n, **kw)[:, dims] for offset in deltas]), dims


def _play_dimension_labels(dims: np.ndarray, d: int, layout: str) -> list[str]:
    pair, is_sine = pe_core.column_pairs(d, layout)
    return [_dimension_label(int(j), int(pair[j]), bool(is_sine[j]), "dimension") for j in dims]


def shift_play_table(L: int, d: int, n: float, *, layout: str, convention: str, delta: int) -> pd.DataFrame:
    """``shift_play_figure``'s frames: a row per (offset δ', position k), a column per dimension."""
    deltas, values, dims = shift_play_frames(L, d, n, layout=layout, convention=convention, delta=delta)
    frames, rows, _ = values.shape
    index = pd.MultiIndex.from_arrays([np.repeat(deltas, rows), np.tile(np.arange(rows), frames)],
                                      names=["offset δ", "position k"])
    return pd.DataFrame(values.reshape(frames * rows, -1), index=index, columns=_play_dimension_labels(dims, d, layout))


def shift_play_figure(
    L: int, d: int, n: float, *, layout: str, convention: str, delta: int
) -> go.Figure:
    r"""P @ M(δ') on a window (the first ``SHIFT_PLAY_ROWS`` positions, the dimensions of the
    first ``SHIFT_PLAY_COLS`` of ``transition_window_dims``: the fastest pairs, sines with their
    cosines), one heatmap frame per offset δ' from 0 to ``shift_play_end(delta)`` (``shift_play_deltas``).

    Row k of frame δ' is :math:`P[k]\,M(\delta') = PE(k + \delta')`: Play slides the map by
    one offset after another. The figure first shows δ' = ``delta``, as the maps above it.
    """
    deltas, values, dims = shift_play_frames(L, d, n, layout=layout, convention=convention, delta=delta)
    rows, shown = values.shape[1], int(np.flatnonzero(deltas == delta)[0])
    hover = "position %{y}<br>%{x}<br>(P M(δ))[k, j] = %{z:.7g}<extra></extra>"

    def shifted(index: int) -> dict:
        """Frame δ' = deltas[index] (``meta``: the browser can tell which frame it shows)."""
        return {"type": "heatmap", "z": values[index].astype(np.float32), "hovertemplate": hover,
                "meta": int(deltas[index])}

    col_labels = _play_dimension_labels(dims, d, layout)
    row_labels = [f"k = {k}" for k in range(rows)]
    # As Plotly's dicts, from which the Play figure is made once: updating the figure's trace, then
    # add_play, made Plotly's objects of it twice (a third of this chart's cost).
    heatmap = heatmap_figure(
        values[shown],
        row_labels=row_labels,
        col_labels=col_labels,
        row_ticks=round_ticks(row_labels, range(rows), count=6),
        col_ticks=tick_subset(col_labels, [str(int(j)) for j in dims], count=9),
        title=f"Play: P @ M(δ), δ = 0..{int(deltas[-1])}",
        x_title="dimension j (column)",
        y_title="position k",
        value_name="(P M(δ))[k, j]",
        height=440,
    ).to_dict()
    # Its z the array again (to_dict encoded it), as in every frame.
    first = heatmap["data"][0] | shifted(shown) | {"meta": int(delta)}
    frames = [animation.frame([shifted(index)], traces=[0], name=str(int(offset)))
              for index, offset in enumerate(deltas)]
    return animation.play_figure([first], heatmap["layout"], frames, label="δ", redraw=True,
                                 frame_ms=animation.PLAY_HEATMAP_FRAME_MS, active=shown)


# ------------------------------------------------------------------ one pair's rotation


def rotation_play_angles(phi: float, frames: int = ROTATION_PLAY_FRAMES) -> np.ndarray:
    r"""The angles Play turns the pair through: ``frames`` angles from 0 to :math:`\phi` wrapped
    to (-π, π] (the shorter way round, as the arc is drawn), the last one :math:`\phi` itself
    (the same rotation: W is 2π-periodic)."""
    turn = float(np.angle(np.exp(1j * phi)))  # phi wrapped to (-pi, pi]
    angles = np.linspace(0.0, 1.0, max(2, frames)) * turn + 0.0  # + 0.0: no "-0.0°" first frame
    angles[-1] = phi
    return angles


def rotation_figure(
    theta: float, phi: float, *, pair: int, k: int, delta: int, axis_names: tuple[str, str]
) -> go.Figure:
    r"""One pair in the plane: the row vector :math:`v = [\sin\theta, \cos\theta]` with
    :math:`\theta = k\omega_i`, and its image :math:`v\,W(\phi)` with :math:`\phi = \delta\omega_i`,
    which is :math:`[\sin(\theta+\phi), \cos(\theta+\phi)]`; the arc between them is
    :math:`\phi` wrapped to (-180°, 180°].

    Play turns the image from v to :math:`v\,W(\phi)` through ``rotation_play_angles(phi)``:
    each frame is :math:`v\,W(\alpha)` and the arc up to α. The figure first shows α = φ.
    """
    v = np.array([np.sin(theta), np.cos(theta)])
    circle = np.linspace(0.0, 2 * np.pi, 181)
    coordinates = f"({axis_names[0]}, {axis_names[1]}) = (%{{x:.10g}}, %{{y:.10g}})"

    def arrow(name: str, point: np.ndarray, colour: str, angle: float = 0.0) -> dict:
        """An arrow from 0 to ``point`` (``meta``: the angle it is turned by, for the browser test)."""
        return {
            "type": "scatter", "x": [0.0, float(point[0])], "y": [0.0, float(point[1])], "mode": "lines+markers",
            "name": name, "meta": angle, "line": {"color": colour, "width": 3},
            "marker": {"size": [0, 10], "color": colour}, "hovertemplate": f"{name}<br>{coordinates}<extra></extra>",
        }

    along = np.linspace(0.0, 1.0, 61)  # the arc's points, from its start (0) to its end (1)

    def arc(turn: float) -> np.ndarray:
        """The arc from θ to θ + ``turn`` (an angle wrapped to (-π, π]), at radius 0.35."""
        return theta + along * turn

    def turning(alpha: float, turn: float, final: bool) -> list[dict]:
        """A frame: the arc up to α (``turn``: α wrapped; float32: a drawing) and the image v W(α), with
        no looks (Plotly merges a frame into the traces, which keep theirs)."""
        name = (f"P[{k}] W(δω) = P[{k}{delta:+d}], pair {pair}" if final
                else f"P[{k}] W(α), α = {np.degrees(alpha):.4g}°, pair {pair}")
        image = v @ pe_core.rotation(alpha)
        points = arc(turn)
        return [
            {"x": (0.35 * np.sin(points)).astype(np.float32), "y": (0.35 * np.cos(points)).astype(np.float32)},
            {"x": [0.0, image[0]], "y": [0.0, image[1]], "name": name, "meta": alpha,
             "hovertemplate": f"{name}<br>{coordinates}<extra></extra>"},
        ]

    angles = rotation_play_angles(phi)
    # Each angle wrapped once: the frame's arc and the slider's label both read it.
    turns = [float(np.angle(np.exp(1j * alpha))) for alpha in angles]
    turn_phi = float(np.angle(np.exp(1j * phi)))
    whole_arc = arc(turn_phi)
    data = [
        {"type": "scatter", "x": np.sin(circle), "y": np.cos(circle), "mode": "lines", "name": "unit circle",
         "line": {"color": "lightgrey"}, "hoverinfo": "skip"},
        {"type": "scatter", "x": 0.35 * np.sin(whole_arc), "y": 0.35 * np.cos(whole_arc), "mode": "lines",
         "name": f"φ = δ·ω_{pair}", "line": {"color": "grey", "dash": "dot"}, "hoverinfo": "skip"},
        arrow(f"P[{k}], pair {pair}", v, "#2166ac"),
        arrow(f"P[{k}] W(δω) = P[{k}{delta:+d}], pair {pair}", v @ pe_core.rotation(phi), "#b2182b", phi),
    ]
    layout = {
        "title": chart_title(f"Pair {pair}: rotation by δ·ω = {np.degrees(phi):.6g}°" + (
            f", the same turn as {np.degrees(turn_phi):.6g}° (the arc)" if abs(phi) > np.pi else "")),
        "height": 520,
        "margin": MARGIN | {"b": 115},  # the legend below the axis
        "xaxis": {"title": {"text": f"first component: {axis_names[0]}"}, "range": [-1.25, 1.25], "zeroline": True},
        "yaxis": {"title": {"text": f"second component: {axis_names[1]}"}, "range": [-1.25, 1.25], "zeroline": True,
                  "scaleanchor": "x", "scaleratio": 1},
        "legend": {"orientation": "h", "y": -0.2},
        "hoverlabel": {"namelength": -1},
    }
    frames = [
        animation.frame(turning(float(alpha), turn, final=index == angles.size - 1), traces=[1, 3], name=str(index))
        for index, (alpha, turn) in enumerate(zip(angles, turns, strict=True))
    ]
    return animation.play_figure(data, layout, frames, label="turned by α", redraw=True, active=angles.size - 1,
                                 labels=[f"{np.degrees(turn) + 0.0:.1f}°" for turn in turns])


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


def rotation_play_table(theta: float, phi: float) -> pd.DataFrame:
    """``rotation_figure``'s Play frames: each angle α of ``rotation_play_angles(phi)`` and
    v W(α) = [sin(θ+α), cos(θ+α)] for v = [sin θ, cos θ]."""
    v = np.array([np.sin(theta), np.cos(theta)])
    angles = rotation_play_angles(phi)
    images = np.array([v @ pe_core.rotation(alpha) for alpha in angles])
    return pd.DataFrame({"α (rad)": angles, "α (degrees)": np.degrees(angles),
                         "sine component": images[:, 0], "cosine component": images[:, 1]})


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
    full_cells: int,
    library: str = "numpy",
) -> str:
    """Relative positions: the drawn window of M(delta), the shifted map P M(delta) beside
    PE(k + delta) computed directly (block means as drawn), one pair's rotation, and the page's
    numbers (``numbers``, by ``metric_labels``).

    Both shift pair by pair, as the page does (``pe_core.shift``): NumPy with the page's own
    arithmetic (the interleaved pairs as one complex multiply, the [sin | cos] pairs by the 2x2
    formula), so that its errors are the page's to the last bit; PyTorch as a complex multiply
    z * exp(-i delta w) whatever the layout. The angles are exact in both (``reproduce.sin_cos_code``):
    with angles rounded first, the shift error of seed 001 comes out 5.4e-15 instead of 2.5e-16.
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
        "sin_phi, cos_phi = sin_cos(delta, w)  # pair i turns by φ_i = δ·ω_i\n"
        "# M(δ): the row [sin, cos] of pair i times W(φ_i) = [[cos φ_i, -sin φ_i], [sin φ_i, cos φ_i]]\n"
        f"s, c = {columns}  # the sine and the cosine column of each pair\n"
        f"M = {zeros}\n"
        "M[s, s], M[c, s], M[s, c], M[c, c] = cos_phi, sin_phi, -sin_phi, cos_phi\n"
    )
    if library == "numpy":
        code += "# Seed 001's P @ M, pair by pair as the page does: the same to rounding, in O(L·d) not O(L·d²)\n"
        if layout == "interleaved":
            code += (
                "# Each pair [sin, cos] is the complex number sin + i·cos; P[k] M(δ) turns it by e^(-iφ_i)\n"
                "shifted = (P.view(np.complex128) * (cos_phi - 1j * sin_phi)).view(np.float64)\n"
            )
        else:
            code += (
                "shifted = np.empty_like(P)\n"
                "shifted[:, s] = P[:, s] * cos_phi + P[:, c] * sin_phi\n"
                "shifted[:, c] = P[:, c] * cos_phi - P[:, s] * sin_phi\n"
            )
    else:
        code += "# The same shift pair by pair: z_i = sin + i·cos of pair i, times e^(-iφ_i)\n"
        code += "turn = torch.complex(cos_phi, -sin_phi)\n"
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
    first = checked_first(L, d, full_cells)
    where = "every position" if first == 0 else "the last positions, where the angles and their rounding are largest"
    code += (
        f"window = M[np.ix_({_index_runs(dims)}, {_index_runs(dims)})]  # the rows and columns of M drawn\n"
        f"\n# The errors, over {where} (as the page measures them): rounding only"
        + ("; torch's sin and complex multiply round otherwise than NumPy's, so their digits may differ from the "
           "page's\n" if library == "torch" else "\n")
        + f"first = {first}\n"
        "error = np.abs(shifted[first:] - direct[first:]).max()  # max |P M(δ) - PE(k + δ)|\n"
        "lo, hi = max(first, -delta), min(L, L - delta)  # seed 001: the rows k whose k + δ is a row of P\n"
        "seed_check = np.abs(shifted[lo:hi] - P[lo + delta : hi + delta]).max() if hi > lo else None\n\n"
        + reproduce.encoding_blocks_code("shifted", "shifted_shown", layout, row_edges, pair_edges)
        + reproduce.encoding_blocks_code("direct", "direct_shown", layout, row_edges, pair_edges)
        + f"\n# Pair {pair} at position {position}: v = [sin θ, cos θ] with θ = k·ω_i, and v W(δ·ω_i)\n"
        f"pair, position = {pair}, {position}\n"
        "theta, angle = position * w[pair], delta * w[pair]\n"
        "v = np.array([np.sin(theta), np.cos(theta)])\n"
        "W = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])\n"
        "rotation = np.array([v, v @ W])  # [sin(θ + φ), cos(θ + φ)] in the second row\n"
        "expected = np.array([np.sin((position + delta) * w[pair]), np.cos((position + delta) * w[pair])])\n"
    )
    labels = metric_labels(delta, pair)
    return code + reproduce.result_code({
        "relative_transition": "window",
        "relative_shifted": "shifted_shown",
        "relative_direct": "direct_shown",
        "relative_rotation": "rotation",
    }) + reproduce.numbers_code({
        labels["error"]: ("error", ".2e"),
        labels["seed"]: ("seed_check", ".2e"),
        labels["angle"]: ("np.degrees(angle)", ".6g"),
        labels["wrapped"]: ("np.degrees(angle) % 360", ".6g"),
        labels["rotation"]: ("np.abs(v @ W - expected).max()", ".2e"),
    })
