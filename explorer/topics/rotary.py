r"""Rotary (RoPE): a query and a key turned pair by pair by their positions; the score matrix
:math:`q_m\cdot k_n`, constant along its diagonals, beside its closed form; RoFormer's long-term
decay; the two layouts and the error of mixing them; the rotation as the transition matrix of
the Relative positions page. Analysis, figure builders and reproduce-this code, without
Streamlit (pages/rotary_page.py lays them out).

Every L x L matrix is drawn from closed forms over the offsets m - n (and the sums m + n for
the mixing error) as exact block means, never built; direct computations with pe_core.rotate on
a window of positions check the closed forms on the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import animation, reproduce, rope_methods, uploads
from explorer.figures import (
    HALF_PLOT_COLS,
    MARGIN,
    chart_title,
    figure,
    heatmap_figure,
    heatmap_grid,
    heatmap_table,
    line_xy,
    range_label,
    round_ticks,
)
from explorer.rope_presets import CUSTOM, choice_parameters, scaling_from_choice, scaling_label
from explorer.settings import D_MAX, D_MIN, format_n, nearest_n
from pe_core.wording import number

#: The query and key: seeded random numbers, or all ones (the score is then the rotation alone).
QK_CHOICES = ("random", "ones")
QK_LABELS = {"random": "seeded random", "ones": "all ones"}
#: Positions measured directly at each end of the sequence (pe_core.rotate on 2 x 64 rows).
MEASURE_WINDOW = 64
#: Play on one pair: the angle turned from one frame to the next, at most (where whole positions allow).
PLAY_STEP_RAD = np.pi / 6
#: The other layout, whose rotate function the mixing error applies to this layout's cache.
OTHER_LAYOUT = {"half": "interleaved", "interleaved": "half"}
#: How each layout builds its cache and turns a pair, as the code names it.
LAYOUT_CODE = {
    "half": ("cat(freqs, freqs)", "rotate_half", "columns i and i + d/2"),
    "interleaved": ("repeat_interleave(freqs, 2)", "rotate_every_two", "columns 2i and 2i + 1"),
}


@dataclass(frozen=True)
class RotaryView:
    """What the page draws: rotary dimension d, base b, length L, the layout of q and k (and of
    the cache), the scaling, and the query and key (``qk``, with ``seed``)."""

    d: int
    base: float
    L: int
    layout: str = "half"
    scaling: pe_core.RopeScaling | None = None
    qk: str = "random"
    seed: int = 0

    def theta(self) -> np.ndarray:
        """θ'_i of every pair, at the sequence length L (as a model runs a sequence of L tokens)."""
        return pe_core.rope_frequencies(self.d, self.base, scaling=self.scaling, length=self.L)

    def attention(self) -> float:
        """The attention factor a (cos and sin carry it, so scores carry a²)."""
        return pe_core.rope_attention_factor(self.scaling, self.L)

    def key(self) -> tuple:
        """The view as plain values, for the page's cached sections (hashed on every run: a tuple of
        numbers and strings costs a third of the dataclass)."""
        return (self.d, self.base, self.L, self.layout, repr(self.scaling), self.qk, self.seed)

    def describe(self) -> str:
        return (f"L={self.L:,}, d={self.d:,}, b={format_n(self.base)}, {self.layout}, "
                f"{rope_methods.describe(self.scaling, self.d)}")


def lay_out(pairs: np.ndarray, layout: str) -> np.ndarray:
    """A vector from its pairs' coordinates (2, d/2): u_i and v_i in the layout's two columns of pair i."""
    d = 2 * pairs.shape[1]
    first, second = pe_core.rope_pair_columns(d, layout)
    x = np.empty(d)
    x[first], x[second] = pairs
    return x


def query_key(view: RotaryView) -> tuple[np.ndarray, np.ndarray]:
    """q and k in the view's layout: all ones, or standard normal pairs from ``seed`` (the same
    pairs in either layout, so the two layouts give the same scores)."""
    if view.qk == "ones":
        return np.ones(view.d), np.ones(view.d)
    pairs = np.random.default_rng(view.seed).standard_normal((2, 2, view.d // 2))
    return lay_out(pairs[0], view.layout), lay_out(pairs[1], view.layout)


def score_blocks(L: int) -> int:
    """Blocks of positions per axis of the L x L heatmaps (square, half the page's width)."""
    return min(heatmap_grid(L, L, across=HALF_PLOT_COLS))


def cache_grid(L: int, d: int) -> tuple[int, int]:
    """Rows and columns drawn of an L x d cos table (half the page's width)."""
    return heatmap_grid(L, d, across=HALF_PLOT_COLS, power_of_two_columns=True)


def window_positions(L: int) -> tuple[int, np.ndarray]:
    """W and the positions measured directly: 0 .. W-1, then L-W .. L-1, apart when L >= 2 (their
    largest is L - 1, so pe_core.rotate reads the sequence length L, as the closed forms do)."""
    W = max(1, min(L // 2, MEASURE_WINDOW))
    return W, np.r_[np.arange(W), np.arange(L - W, L)]


def span(first: int, last: int) -> str:
    """'position 5' or 'positions 0..63'."""
    return f"position {first:,}" if first == last else f"positions {first:,}..{last:,}"


def _offsets(L: int) -> np.ndarray:
    return np.arange(-(L - 1), L, dtype=np.float64)


# ----------------------------------------------------------------------------- one pair


@dataclass(frozen=True)
class PairView:
    """Pair i of q at position m and of k at position n, before and after their rotations."""

    pair: int
    m: int
    n: int
    columns: tuple[int, int]
    theta: float
    q: np.ndarray  # (u, v) before
    k: np.ndarray
    q_turned: np.ndarray  # R(m θ'_i) (u, v)
    k_turned: np.ndarray
    score: float  # a² q_m,i · k_n,i
    from_offset: float  # a² Re(h_i e^{i(m-n)θ'_i})


def pair_view(view: RotaryView, pair: int, m: int, n: int) -> PairView:
    """Pair ``pair`` of q turned by m θ'_i and of k turned by n θ'_i (pe_core.rotation's 2x2 matrix),
    and its part of the score, directly and from m - n alone (pe_core.rope_score_by_offset on
    this pair's columns)."""
    q, k = query_key(view)
    first, second = pe_core.rope_pair_columns(view.d, view.layout)
    columns = (int(first[pair]), int(second[pair]))
    theta = float(view.theta()[pair])
    q_pair, k_pair = q[list(columns)], k[list(columns)]
    q_turned = pe_core.rotation(m * theta) @ q_pair
    k_turned = pe_core.rotation(n * theta) @ k_pair
    only = np.zeros(view.d)
    only[list(columns)] = 1.0
    a2 = view.attention() ** 2
    from_offset = pe_core.rope_score_by_offset(
        [m - n], q * only, k * only, view.base, layout=view.layout, scaling=view.scaling, length=view.L
    )[0]
    return PairView(pair, m, n, columns, theta, q_pair, k_pair, q_turned, k_turned,
                    a2 * float(q_turned @ k_turned), a2 * float(from_offset))


def play_last(theta: float, L: int, max_frames: int = animation.PLAY_MAX_FRAMES) -> int:
    """The last position Play turns a pair to (``play_positions`` are fixed by it: L enters them only here)."""
    step = max(1, int(PLAY_STEP_RAD // theta)) if theta > 0 else L
    return min(L - 1, step * (max_frames - 1))


def play_positions(theta: float, L: int, max_frames: int = animation.PLAY_MAX_FRAMES) -> np.ndarray:
    """The positions m Play turns a pair through: from 0, a step of whole positions that turns it by at
    most ``PLAY_STEP_RAD`` (one position for the fast pairs), as many as fit, up to L - 1 (a slow
    pair then turns only a little over the whole sequence)."""
    last = play_last(theta, L, max_frames)
    return np.unique(np.round(np.linspace(0, last, min(max_frames, last + 1))).astype(np.int64))


def pair_inputs(view: RotaryView, pair: int) -> tuple:
    """What one pair's chart, numbers and Play depend on besides the positions m, n (and, for Play,
    ``play_last``): the view without its length L, but with θ'_i and a at L, through which alone L
    enters them (a dynamic or LongRoPE scaling changes them with L). Without such a scaling, moving
    L leaves the pair's section as it was: the page replays it."""
    return (view.d, view.base, view.layout, repr(view.scaling), view.qk, view.seed, float(view.theta()[pair]),
            view.attention())


def _arrow(name: str, point: np.ndarray, colour: str, *, dash: str = "solid", meta: object = None) -> dict:
    arrow = {
        "type": "scatter", "x": [0.0, float(point[0])], "y": [0.0, float(point[1])], "mode": "lines+markers",
        "name": name, "line": {"color": colour, "width": 3, "dash": dash}, "marker": {"size": [0, 10], "color": colour},
        "hovertemplate": f"{name}<br>(%{{x:.7g}}, %{{y:.7g}})<extra></extra>",
    }
    return arrow if meta is None else arrow | {"meta": meta}


def _circles(q: np.ndarray, k: np.ndarray) -> list[dict]:
    """The circles the pair's tips of q and k stay on as they turn (their lengths: a rotation keeps them)."""
    around = np.linspace(0.0, 2.0 * np.pi, 121)
    return [{"type": "scatter", "x": (r * np.cos(around)).astype(np.float32),
             "y": (r * np.sin(around)).astype(np.float32), "mode": "lines", "name": f"|{name}| = {r:.4g}",
             "line": {"color": colour, "width": 1}, "hoverinfo": "skip", "showlegend": False}
            for name, r, colour in (("q", float(np.hypot(*q)), "#d1e5f0"), ("k", float(np.hypot(*k)), "#fddbc7"))]


def _plane_layout(fig_height: int, radius: float, columns: tuple[int, int], title: str) -> dict:
    extent = 1.15 * max(radius, 1e-9)
    axis = {"range": [-extent, extent], "zeroline": True}
    return {
        "title": chart_title(title),
        "height": fig_height,
        "margin": MARGIN | {"b": 115},
        "xaxis": axis | {"title": {"text": f"first coordinate (column {columns[0]})"}},
        "yaxis": axis | {"title": {"text": f"second coordinate (column {columns[1]})"}, "scaleanchor": "x",
                         "scaleratio": 1},
        "legend": {"orientation": "h", "y": -0.2},
        "hoverlabel": {"namelength": -1},
    }


def pair_figure(p: PairView) -> go.Figure:
    r"""Pair i in its plane: q's coordinates before (dashed) and after the turn by :math:`m\theta'_i`,
    k's before and after :math:`n\theta'_i`. Their dot product is the pair's part of the score;
    it depends on the angle between the two turned arrows, :math:`(m - n)\theta'_i` plus the angle
    between q and k before."""
    radius = float(max(np.hypot(*p.q), np.hypot(*p.k)))
    traces = [
        *_circles(p.q, p.k),
        _arrow(f"q, pair {p.pair}, before", p.q, "#92c5de", dash="dot"),
        _arrow(f"k, pair {p.pair}, before", p.k, "#f4a582", dash="dot"),
        _arrow(f"q turned by m·θ = {p.m}·θ_{p.pair}", p.q_turned, "#2166ac", meta=p.m),
        _arrow(f"k turned by n·θ = {p.n}·θ_{p.pair}", p.k_turned, "#b2182b", meta=p.n),
    ]
    title = f"Pair {p.pair}: q at m = {p.m}, k at n = {p.n}"
    return figure(traces, _plane_layout(520, radius, p.columns, title))


@dataclass(frozen=True)
class PairPlay:
    """Pair i of q turned at each position m Play sweeps, and its part of the score with k at n."""

    positions: np.ndarray
    theta: float
    columns: tuple[int, int]
    radius: float
    tips: np.ndarray  # (frames, 2): q's pair turned by m θ'_i
    k_turned: np.ndarray
    scores: np.ndarray  # a² tip · k_turned


def pair_play(view: RotaryView, pair: int, n: int) -> PairPlay:
    """What Play draws: ``play_positions``, each turn by pe_core.rotation's 2x2 matrix."""
    p = pair_view(view, pair, 0, n)
    positions = play_positions(p.theta, view.L)
    tips = np.array([pe_core.rotation(m * p.theta) @ p.q for m in positions])
    a2 = view.attention() ** 2
    radius = float(max(np.hypot(*p.q), np.hypot(*p.k)))
    return PairPlay(positions, p.theta, p.columns, radius, tips, p.k_turned, a2 * (tips @ p.k_turned))


def pair_play_figure(view: RotaryView, pair: int, n: int) -> go.Figure:
    r"""Play: pair i of q turning as m grows (``play_positions``), k fixed at position n; each frame
    draws q's turned arrow, the trail of its tip so far, and says the pair's part of the score.
    The figure first shows m = 0."""
    play = pair_play(view, pair, n)
    tips = play.tips

    def moving(index: int) -> list[dict]:
        m = int(play.positions[index])
        degrees = np.degrees(m * play.theta)
        return [
            {"x": tips[: index + 1, 0].astype(np.float32), "y": tips[: index + 1, 1].astype(np.float32)},
            {"x": [0.0, float(tips[index, 0])], "y": [0.0, float(tips[index, 1])], "meta": m},
            {"text": [f"m = {m}: m·θ = {degrees:,.1f}°, pair score {play.scores[index]:.4g}"]},
        ]

    looks = [
        {"mode": "markers", "name": "q's tip at earlier m", "marker": {"size": 5, "color": "#92c5de"},
         "hoverinfo": "skip"},
        {"mode": "lines+markers", "name": "q turned by m·θ", "line": {"color": "#2166ac", "width": 3},
         "marker": {"size": [0, 10], "color": "#2166ac"},
         "hovertemplate": "q turned<br>(%{x:.7g}, %{y:.7g})<extra></extra>"},
        {"x": [0.0], "y": [-1.08 * max(play.radius, 1e-9)], "mode": "text", "showlegend": False, "hoverinfo": "skip"},
    ]
    fig = figure([
        _arrow(f"k turned by n·θ = {n}·θ_{pair}", play.k_turned, "#b2182b", meta=n),
        *({"type": "scatter"} | look | now for look, now in zip(looks, moving(0), strict=True)),
        *_circles(tips[0], play.k_turned),
    ], _plane_layout(520, play.radius, play.columns, f"Play: pair {pair} of q turning as m grows"))
    frames = [animation.frame(moving(index), traces=[1, 2, 3], name=str(int(m)))
              for index, m in enumerate(play.positions)]
    return animation.add_play(fig, frames, label="query position m", redraw=True)


def pair_table(p: PairView) -> pd.DataFrame:
    """``pair_figure``'s four points."""
    return pd.DataFrame(
        np.array([p.q, p.q_turned, p.k, p.k_turned]),
        index=pd.Index(["q before", f"q at m = {p.m}", "k before", f"k at n = {p.n}"], name="point"),
        columns=[f"column {p.columns[0]}", f"column {p.columns[1]}"],
    )


def pair_play_table(view: RotaryView, pair: int, n: int) -> pd.DataFrame:
    """``pair_play_figure``'s frames: each position m, the angle m θ'_i, q's turned pair and the pair's score."""
    play = pair_play(view, pair, n)
    return pd.DataFrame({
        "position m": play.positions, "m·θ (degrees)": np.degrees(play.positions * play.theta),
        "q turned, first": play.tips[:, 0], "q turned, second": play.tips[:, 1], "pair score": play.scores,
    })


@dataclass(frozen=True)
class TransitionBlock:
    """RoPE's rotation of pair i by m θ_i beside the transition matrix M(m)'s block of pair i."""

    rope: np.ndarray  # (2, 2): columns are the images of the pair's two unit vectors
    transition: np.ndarray  # M(m)[2i:2i+2, 2i:2i+2]
    max_difference: float


def transition_block(d: int, base: float, pair: int, m: int) -> TransitionBlock:
    r"""R(mθ_i) from ``pe_core.rotate`` (unscaled, the half layout: columns i and i + d/2), as the
    images of the pair's unit vectors, and the 2x2 block of pair i of ``pe_core.transition_matrix(m,
    d, b)`` (the paper's frequencies, interleaved: rows and columns 2i, 2i + 1), read from
    ``pe_core.shift`` of the two unit rows (P @ M, without building the d x d matrix)."""
    unit = np.zeros((2, d))
    first, second = pe_core.rope_pair_columns(d, "half")
    unit[0, first[pair]] = unit[1, second[pair]] = 1.0
    turned = pe_core.rotate(unit, [m, m], base, layout="half")
    rope = np.array([[turned[0, first[pair]], turned[1, first[pair]]],
                     [turned[0, second[pair]], turned[1, second[pair]]]])
    rows = np.zeros((2, d))
    rows[0, 2 * pair] = rows[1, 2 * pair + 1] = 1.0
    transition = pe_core.shift(rows, m, base, layout="interleaved", convention="paper")[:, 2 * pair : 2 * pair + 2]
    return TransitionBlock(rope, transition, float(np.abs(rope - transition).max()))


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


def _block_mean_scores(view: RotaryView, edges: np.ndarray, rotation_layout: str) -> np.ndarray:
    """The block means of the scores (times a²): products of the block means of the turned q and k."""
    q_means, k_means = pe_core.rope_rotated_block_average(
        np.stack(query_key(view)), view.L, edges, view.base, cache_layout=view.layout,
        rotation_layout=rotation_layout, scaling=view.scaling,
    )
    return view.attention() ** 2 * (q_means @ k_means.T)


def scores(view: RotaryView, blocks: int) -> ScoreMatrix:
    r"""g(t) = a² Σ_i Re(h_i e^{itθ'_i}) (``pe_core.rope_score_by_offset``) at every offset; the L x L
    matrix S[m, n] = g(m - n) as block means, the product of the block means of the turned q and k
    (``pe_core.rope_rotated_block_average``: a score's mean over a block is that product); and,
    measured with ``pe_core.rotate``, the W x W blocks of the first and the last W positions."""
    q, k = query_key(view)
    a2 = view.attention() ** 2
    L = view.L
    g = a2 * pe_core.rope_score_by_offset(_offsets(L), q, k, view.base, layout=view.layout, scaling=view.scaling,
                                          length=L)
    edges = pe_core.block_edges(L, blocks)
    means = _block_mean_scores(view, edges, view.layout)
    W, positions = window_positions(L)
    kw = {"layout": view.layout, "scaling": view.scaling}
    Q = pe_core.rotate(np.tile(q, (2 * W, 1)), positions, view.base, **kw)
    K = pe_core.rotate(np.tile(k, (2 * W, 1)), positions, view.base, **kw)
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
    q, k = query_key(view)
    a2 = view.attention() ** 2
    L, other = view.L, OTHER_LAYOUT[view.layout]
    edges = pe_core.block_edges(L, blocks)
    if right_means is None:
        right_means = _block_mean_scores(view, edges, view.layout)
    mixed_means = _block_mean_scores(view, edges, other)
    W, positions = window_positions(L)
    kw = {"cache_layout": view.layout, "rotation_layout": other, "scaling": view.scaling}
    mixed_q = pe_core.rope_apply_cache(np.tile(q, (2 * W, 1)), positions, view.base, **kw)
    mixed_k = pe_core.rope_apply_cache(np.tile(k, (2 * W, 1)), positions, view.base, **kw)
    first, last = mixed_q[:W] @ mixed_k[:W].T, mixed_q[W:] @ mixed_k[W:].T
    within = np.arange(W)
    errors = []
    for block, start in ((first, 0), (last, L - W)):
        # m = start + i, n = start + j: m - n = i - j, m + n = 2 start + i + j.
        U, V = pe_core.rope_mixed_scores(np.subtract.outer(within, within), np.add.outer(within, within) + 2 * start,
                                         q, k, view.base, length=L, **kw)
        errors.append(np.abs(block - (U + V)).max())
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


# ----------------------------------------------------------------------------- check your RoPE

#: The rotary kinds in the few words of a metric box (the verdict names them in full).
KIND_SHORT = {"rope_cos": "cos table", "rope_sin": "sin table", "rope_inv_freq": "inv_freq",
              "rope_complex": "freqs_cis"}
@dataclass(frozen=True)
class ArrayReading:
    """One array of an uploaded file and what identify_encoding reads in it (``result``), or the
    one line saying why it could not (``error``)."""

    name: str | None  # in a .npz file
    shape: tuple[int, ...]
    notes: tuple[str, ...]
    result: dict | None
    error: str | None = None

    @property
    def status(self) -> str:
        """What the array is: "rotary" (what a rotary model holds), "near" (closest to a rotary reading,
        which differs), "sinusoidal", "unknown" (neither) or "error" (not read)."""
        if self.result is None:
            return "error"
        kind = self.result["kind"]
        if kind in uploads.ROTARY_KINDS:
            return "rotary"
        if kind == "sinusoidal":
            return "sinusoidal"
        return "near" if uploads.is_rotary(self.result) else "unknown"

    @property
    def label(self) -> str:
        """The array as the page's choice of arrays names it: its name in the .npz and its shape."""
        shape = " x ".join(f"{size:,}" for size in self.shape)
        return f"{self.name} ({shape})" if self.name is not None else shape


@dataclass(frozen=True)
class RopeCheck:
    """Every array of an uploaded file, read. Only what the page shows is kept, never the upload."""

    readings: tuple[ArrayReading, ...]

    @property
    def first_rotary(self) -> int:
        """The array the page shows first: the first that is what a rotary model holds, else the first."""
        return next((i for i, r in enumerate(self.readings) if r.status == "rotary"), 0)


def check_upload(name: str, data: bytes) -> RopeCheck:
    """Read every array of an uploaded .npy, .npz or .csv file (``uploads.read_arrays``) and
    identify each (``pe_core.identify_encoding``). Raises ValueError for a file that cannot be
    read, with one line for the visitor; an array identify_encoding refuses keeps its line."""
    readings = []
    for array in uploads.read_arrays(name, data):
        try:
            result, error = pe_core.identify_encoding(array.values), None
        except ValueError as refusal:
            result, error = None, str(refusal)
        readings.append(ArrayReading(array.name, array.values.shape, array.notes, result, error))
    return RopeCheck(tuple(readings))


def reading_summary(reading: ArrayReading) -> str:
    """One line for the table of a file's arrays: what the array is, in the verdict's terms."""
    result = reading.result
    status = reading.status
    if status == "error":
        return f"not read: {reading.error}"
    if status == "unknown":
        return "not recognised"
    if status == "sinusoidal":
        return f"{uploads.KIND_NAMES['sinusoidal']}, {result['layout']} layout, n = {format_n(result['n'])}"
    facts = [f"d = {result['d']:,}"] + ([f"{result['layout']} layout"] if result["layout"] else [])
    facts += [] if result["n"] is None else [f"base {number(result['n'])}"]
    if status == "near":
        return f"no reading fits; the closest: {', '.join(facts)}"
    return ", ".join([uploads.KIND_NAMES[result["kind"]], *facts, f"scaling {scaling_short(result['scaling'])}"])


def arrays_table(check: RopeCheck) -> pd.DataFrame:
    """The arrays of a file, their shapes (as read) and what each is."""
    return pd.DataFrame(
        {"shape": [" x ".join(f"{size:,}" for size in r.shape) for r in check.readings],
         "what it is": [reading_summary(r) for r in check.readings]},
        index=pd.Index([r.name or "-" for r in check.readings], name="array"),
    )


def scaling_short(scaling: dict | None) -> str:
    """'none', 'llama3 ×8', 'YaRN ×4', 'LongRoPE': the scaling in the verdict's terms, short enough for a box."""
    if scaling is None:
        return "none"
    name = rope_methods.method_short(scaling["method"])
    return name if scaling.get("factor") is None else f"{name} ×{number(scaling['factor'])}"


def _cell(cell: list[int]) -> str:
    return f"index {cell[0]:,}" if len(cell) == 1 else f"row {cell[0]:,}, column {cell[1]:,}"


def reading_metrics(result: dict) -> dict[str, str]:
    """The page's metric boxes for a reading, label -> value, in the verdict's own numbers: for what a
    rotary model holds its kind, d, layout, base, start, scaling, attention factor and the pairs read;
    for a near miss the closest reading's d, layout, base and start (those it names), and where and
    by how much it differs; nothing for other readings (the verdict says them)."""
    if not uploads.is_rotary(result):
        return {}
    d, n, start = result["d"], result["n"], result["start"]
    facts = {
        "d": f"{d:,}",
        "layout": result["layout"] or "-",
        "base": "-" if n is None else number(n),
        "start": "-" if start is None else f"{start:,}",
    }
    if result["kind"] is None:
        if result["worst_cell"] is None:
            return {}  # not read far enough to name a cell: the verdict says why
        return {label: value for label, value in facts.items() if value != "-"} | {
            "differs most at": _cell(result["worst_cell"]), "by up to": f"{result['max_abs_error']:.3g}"}
    a = result["attention_factor"]
    pairs = d // 2
    return {"kind": KIND_SHORT[result["kind"]]} | facts | {
        "scaling": scaling_short(result["scaling"]),
        "attention factor": "-" if a is None else f"{a:.6g}",
        "pairs read": f"{pairs - len(result['unreadable_pairs']):,} of {pairs:,}",
    }


def _interval(bounds: tuple[float, float]) -> str:
    low, high = bounds
    if low == high:
        return f"{low:.6g}"
    return f"[{low:.6g}, {high:.6g})" if np.isfinite(high) else f"at least {low:.6g}"


def _wavelength(value: float | tuple[float, float]) -> str:
    """A llama3 wavelength bound: a value read, or the interval it lies in when no pair lies between the bounds."""
    return f"{number(round(value, 1))} positions" if np.isscalar(value) else f"{_interval(value)} positions"


def _divisors(values: tuple[float | None, ...]) -> str:
    shown = ", ".join("?" if v is None else number(v) for v in values[:8])
    return f"{shown}{', ...' if len(values) > 8 else ''} ({len(values)} pairs; ? too slow to read)"


#: The scaling's keys as the table of parameters names them, and how it writes their values.
SCALING_KEYS: dict[str, tuple[str, object]] = {
    "factor": ("factor s", number),
    "ramp": ("YaRN's ramp: from pair, to pair", lambda r: f"{r[0]:g}, {r[1]:g}"),
    "truncate": ("truncate (the ramp's bounds rounded)", lambda t: "true" if t else "false"),
    "original_length_over_beta_fast": ("original_max_position_embeddings / beta_fast", _interval),
    "original_length_over_beta_slow": ("original_max_position_embeddings / beta_slow", _interval),
    "low_freq_wavelength": ("wavelength bound: original / low_freq_factor", _wavelength),
    "high_freq_wavelength": ("wavelength bound: original / high_freq_factor", _wavelength),
    "original_length": ("original_max_position_embeddings", number),
    "beta_fast": ("beta_fast", number),
    "beta_slow": ("beta_slow", number),
    "low_freq_factor": ("low_freq_factor", number),
    "high_freq_factor": ("high_freq_factor", number),
    "divisors": ("divisors e_i, pair by pair", _divisors),
}


#: The parameters a reading completes (yarn's and llama3's): the table fixes only ratios of them.
_COMPLETED = ("original_length", "beta_fast", "beta_slow", "low_freq_factor", "high_freq_factor")


def scaling_table(scaling: dict) -> pd.DataFrame:
    """What the reading says of the scaling's parameters: each value and how the table gives it
    (read from its frequencies, following from them with the assumed values, or assumed: the
    method's default), in the order of ``SCALING_KEYS``."""
    assumed = tuple(scaling.get("assumed", ()))
    rows = []
    for key, (label, write) in SCALING_KEYS.items():
        if key not in scaling or scaling[key] is None:
            continue
        if key in assumed:
            how = "assumed: the method's default"
        elif key in _COMPLETED and assumed:
            how = "follows from the table with the assumed values"
        else:
            how = "read from the table"
        rows.append((label, write(scaling[key]), how))
    method = rope_methods.method_short(scaling["method"])
    return pd.DataFrame([("method", method, "read from the table"), *rows],
                        columns=["parameter", "value", "how the table tells it"]).set_index("parameter")


def alternative_text(alternative: dict) -> str:
    """A reading no table tells from the one shown (``result["alternatives"]``), in a few words."""
    text = rope_methods.method_short(alternative["method"])
    if "factor" in alternative:
        text += f" ×{number(alternative['factor'])}"
    if "base" in alternative:
        text += f" of base {number(alternative['base'])}"
    if "step" in alternative:
        text += f", step q = {number(alternative['step'])}"
    if "original_length" in alternative:
        text += f" from {alternative['original_length']:,} positions"
    return text


@dataclass(frozen=True)
class Opening:
    """The page's controls that show a reading: ``values`` for the sidebar's d and n, the model
    (none), the layout, the scaling and its parameters, and the scaling they build; or None and
    the ``reason`` the controls cannot hold the reading exactly."""

    values: dict[str, object] | None
    scaling: pe_core.RopeScaling | None = None
    reason: str = ""

    def shown_by(self, view: RotaryView) -> bool:
        """Whether the page already shows this reading (its d, base, layout and scaling)."""
        v = self.values
        return v is not None and (view.d, view.base, view.scaling) == (v["d"], v["n"], self.scaling) and (
            "rope_layout" not in v or view.layout == v["rope_layout"])


def opening(result: dict) -> Opening:
    """How the page's controls show ``result`` (as a model preset sets them), when they can: a
    reading of what a rotary model holds, with a base on the n slider's stops, d within the
    sidebar's, a scaling the page's controls build with the same frequencies and attention factor."""
    kind = result["kind"]
    if kind not in uploads.ROTARY_KINDS:
        return Opening(None, reason="only a reading of what a rotary model holds opens here")
    d, base = result["d"], result["n"]
    if base is None:
        return Opening(None, reason="the table does not tell the base")
    if not D_MIN <= d <= D_MAX:
        return Opening(None, reason=f"d = {d:,} is beyond the sidebar's d (at most {D_MAX:,})")
    if nearest_n(base) != base:
        return Opening(None, reason=f"the base {number(base)} is not a stop of the sidebar's n slider")
    values: dict[str, object] = {"d": d, "n": base, "model": CUSTOM}
    if result["layout"] is not None or kind == "rope_complex":
        values["rope_layout"] = result["layout"] or "interleaved"  # freqs_cis pairs neighbours: Meta's layout
    scaling = result["scaling"]
    method = rope_methods.NONE if scaling is None else scaling["method"]
    if scaling is not None:
        beyond = rope_methods.method_entry(method).beyond_controls
        reason = beyond(scaling) if beyond is not None else ""
        if reason:
            return Opening(None, reason=reason)
    for name in choice_parameters(method):
        parameter = rope_methods.PARAMETERS[name]
        value = float(scaling[parameter.field])
        if value not in parameter.stops:
            return Opening(None, reason=f"{parameter.label} = {number(value)} is not a stop of its slider")
        values[name] = value
    values["scaling"] = method
    built, notices = scaling_from_choice(method, d=d, **{name: values[name] for name in choice_parameters(method)})
    a, given_a = result["attention_factor"], pe_core.rope_attention_factor(built)
    if notices:
        return Opening(None, reason=notices[0])
    if a is not None and not math.isclose(a, given_a, rel_tol=1e-9):
        return Opening(None, reason=f"the attention factor {a:.6g}, where the page's scaling "
                                    f"({scaling_label(method)}) gives {given_a:.6g}")
    return Opening(values, built)



# ----------------------------------------------------------------------------- reproduce this

#: The labels of the page's metrics, which the snippet's ``numbers`` repeats.
DECAY_LABELS = ("largest |score| ÷ (d·a²·bound)", "relative bound at m − n = L − 1")
MIXING_LABELS = ("largest |error| of a drawn cell", "largest change of |q| (%)", "change along a diagonal")


def pair_labels(pair: int) -> tuple[str, str, str]:
    """The labels of the pair section's metrics: the angle, the pair's score, the same from m - n."""
    return f"m·θ'_{pair} (degrees)", f"pair {pair}: q_m·k_n", f"pair {pair}: g_{pair}(m − n)"


def scaling_code(scaling: pe_core.RopeScaling | None, d: int) -> str:
    """NumPy lines that turn ``theta`` (θ_i) into θ'_i and set ``a``, the attention factor, as
    pe_core.rope_frequencies and rope_attention_factor compute them: the method's own fragment
    (explorer.rope_methods), called at the sequence length L."""
    if scaling is None:
        return "a = 1.0  # no scaling: no attention factor\n"
    function = rope_methods.method_entry(scaling.method).function
    return (f"\n\n{rope_methods.fragment(scaling)}\n\n"
            f"theta, a = {function}(theta, d, b, L)  # {rope_methods.describe(scaling, d)}\n")


#: The snippets' columns of each pair, by layout.
PAIR_COLUMNS_CODE = {"half": "np.arange(d // 2), np.arange(d // 2, d)",
                     "interleaved": "np.arange(0, d, 2), np.arange(1, d, 2)"}


def rotary_code(
    view: RotaryView,
    *,
    pair: int,
    m: int,
    n: int,
    blocks: int,
    library: str = "numpy",
) -> str:
    """Rotary: the page's numbers for the exact settings, and the score matrix, the decay and the mixing
    error as drawn. NumPy applies the cache as transformers does (``rotate_half``, or GPT-J's
    ``rotate_every_two`` for the interleaved layout); PyTorch the same with torch's tensors. Binds
    ``result`` (download key -> array) and ``numbers`` (the page's metrics), and prints them."""
    d, L, layout = view.d, view.L, view.layout
    rotate, other = LAYOUT_CODE[layout][1], LAYOUT_CODE[OTHER_LAYOUT[layout]][1]
    edges = pe_core.block_edges(L, blocks)
    torch = library == "torch"
    code = (
        f"# Rotary (RoPE), {view.describe()}, query and key {QK_LABELS[view.qk]}"
        + (f" (seed {view.seed})" if view.qk == "random" else "") + "\n"
        "import math\n\nimport numpy as np\n" + (reproduce.TORCH_IMPORTS if torch else "")
        + f"\nL, d, b = {L}, {d}, {reproduce.literal(view.base)}\n"
        "theta = b ** -(np.arange(0, d, 2, dtype=np.float64) / d)  # θ_i = b^(-2i/d), in float64 "
        "(transformers: float32)\n"
        + scaling_code(view.scaling, d)
        + f"first, second = {PAIR_COLUMNS_CODE[layout]}  # {layout}: pair i is {LAYOUT_CODE[layout][2]}\n"
    )
    if view.qk == "ones":
        code += "q, k = np.ones(d), np.ones(d)\n"
    else:
        code += (
            f"pairs = np.random.default_rng({view.seed}).standard_normal((2, 2, d // 2))  # (q, k) x (u, v) x pair\n"
            "q, k = np.empty(d), np.empty(d)\n"
            "q[first], q[second] = pairs[0]\n"
            "k[first], k[second] = pairs[1]\n"
        )
    if torch:
        emb = "torch.cat((freqs, freqs), dim=-1)" if layout == "half" else "freqs.repeat_interleave(2, dim=-1)"
        code += (
            "\n# transformers' cos and sin cache (times a) and apply_rotary_pos_emb, in float64\n"
            "freqs = torch.outer(torch.arange(L, dtype=torch.float64), torch.from_numpy(theta))\n"
            f"emb = {emb}\n"
            "cos, sin = a * emb.cos(), a * emb.sin()\n\n\n"
            "def rotate_half(x):\n"
            "    return torch.cat((-x[..., d // 2 :], x[..., : d // 2]), dim=-1)\n\n\n"
            "def rotate_every_two(x):  # GPT-J\n"
            "    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)\n\n\n"
            "Q, K = torch.from_numpy(q).expand(L, d), torch.from_numpy(k).expand(L, d)\n"
            f"q_m, k_n = (Q * cos + {rotate}(Q) * sin).numpy(), (K * cos + {rotate}(K) * sin).numpy()\n"
            f"wrong_q, wrong_k = (Q * cos + {other}(Q) * sin).numpy(), (K * cos + {other}(K) * sin).numpy()\n"
        )
    else:
        emb = "np.concatenate([freqs, freqs], axis=1)" if layout == "half" else "np.repeat(freqs, 2, axis=1)"
        code += (
            "\n# transformers' cos and sin cache (times a) and apply_rotary_pos_emb\n"
            "freqs = np.outer(np.arange(L, dtype=np.float64), theta)  # m θ'_i\n"
            f"emb = {emb}\n"
            "cos, sin = a * np.cos(emb), a * np.sin(emb)\n\n\n"
            "def rotate_half(x):\n"
            "    return np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], axis=-1)\n\n\n"
            "def rotate_every_two(x):  # GPT-J\n"
            "    return np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)\n\n\n"
            "Q, K = np.tile(q, (L, 1)), np.tile(k, (L, 1))\n"
            f"q_m, k_n = Q * cos + {rotate}(Q) * sin, K * cos + {rotate}(K) * sin  # each position's turned q and k\n"
            f"wrong_q, wrong_k = Q * cos + {other}(Q) * sin, K * cos + {other}(K) * sin\n"
        )
    size = f"  # {L * L * 8 / 1e9:.1f} GB here: in blocks of rows if that is too much" if L * L * 8 > 5e8 else ""
    W = window_positions(L)[0]
    angle, pair_score, pair_offset = pair_labels(pair)
    code += (
        f"S = q_m @ k_n.T  # the scores q_m·k_n, L x L{size}\n"
        "scores = S.copy()\n" + _averaged("scores", edges, edges)
        + "wrong = wrong_q @ wrong_k.T  # the scores with the other layout's rotate: the bug\n"
        "error = wrong - S\n" + _averaged("error", edges, edges)
        + f"W = {W}  # the page measures the first and the last W positions\n"
        "norms = np.linalg.norm(wrong_q[np.r_[0:W, L - W : L]], axis=1) / (a * np.linalg.norm(q))  # 1 if rotated\n"
        "\n# RoFormer's long-term decay: bound = mean_j |Σ_{i<j} e^(i t θ'_i)|; the all-ones score Σ_i 2 cos(t θ'_i)\n"
        "distance = np.arange(L)\n"
        "bound = np.abs(np.cumsum(np.exp(1j * np.outer(distance, theta)), axis=1)).mean(axis=1)\n"
        "ones = a**2 * 2 * np.cos(np.outer(distance, theta)).sum(axis=1)\n"
        f"\n# Pair {pair} of q at m = {m} and of k at n = {n}, as complex numbers u + iv turned by e^(i m θ')\n"
        f"pair, m, n = {pair}, {m}, {n}\n"
        "zq, zk = q[first[pair]] + 1j * q[second[pair]], k[first[pair]] + 1j * k[second[pair]]\n"
        "turned_q, turned_k = zq * np.exp(1j * m * theta[pair]), zk * np.exp(1j * n * theta[pair])\n"
        + reproduce.numbers_code({
            angle: ("np.degrees(m * theta[pair])", ",.4f"),
            pair_score: ("a**2 * (turned_q * turned_k.conjugate()).real", ".6g"),
            pair_offset: ("a**2 * (zq * zk.conjugate() * np.exp(1j * (m - n) * theta[pair])).real", ".6g"),
            DECAY_LABELS[0]: ("np.max(np.abs(ones) / (a**2 * d * bound))", ".4f"),
            DECAY_LABELS[1]: ("bound[-1]", ".6g"),
            MIXING_LABELS[0]: ("np.abs(error).max()", ".4g"),
            MIXING_LABELS[1]: ("100 * np.abs(norms - 1).max()", ".3g"),
            MIXING_LABELS[2]: ("np.abs(wrong[:W, :W] - wrong[L - W :, L - W :]).max()", ".4g"),
        })
    )
    return code + reproduce.result_code({
        "rotary_scores": "scores",
        "rotary_decay": "np.column_stack([distance, bound, ones])",
        "rotary_mixing": "error",
    })


def _averaged(names: str | tuple[str, ...], row_edges: np.ndarray, col_edges: np.ndarray) -> str:
    """Block-average code for the axes the charts reduce (none when every cell is drawn)."""
    return reproduce.block_average_code(
        names, row_edges if reproduce.is_reduced(row_edges) else None,
        col_edges if reproduce.is_reduced(col_edges) else None,
    )
