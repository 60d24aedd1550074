r"""Rotary, one pair: pair i of q at position m and of k at position n, turned by :math:`m\theta'_i` and
:math:`n\theta'_i`, and its part of the score, directly and from m - n alone; Play turning it as m grows;
RoPE's rotation of a pair beside the transition matrix of the Relative positions page. Each with its
figure and table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import animation
from explorer.figures import MARGIN, chart_title, figure
from explorer.topics.rotary.view import RotaryView, query_key

#: Play on one pair: the angle turned from one frame to the next, at most (where whole positions allow).
PLAY_STEP_RAD = np.pi / 6


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
    data = [
        _arrow(f"k turned by n·θ = {n}·θ_{pair}", play.k_turned, "#b2182b", meta=n),
        *({"type": "scatter"} | look | now for look, now in zip(looks, moving(0), strict=True)),
        *_circles(tips[0], play.k_turned),
    ]
    frames = [animation.frame(moving(index), traces=[1, 2, 3], name=str(int(m)))
              for index, m in enumerate(play.positions)]
    # From the trace dicts: add_play on a built figure made Plotly's objects of it twice (~3 ms of the first run).
    return animation.play_figure(data, _plane_layout(520, play.radius, play.columns,
                                                     f"Play: pair {pair} of q turning as m grows"),
                                 frames, label="query position m", redraw=True)


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
