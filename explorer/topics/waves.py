"""Waves: one position across the pairs (seed 000), chosen columns across positions (seed
002), one pair on the unit circle. Analysis, figure builders and reproduce-this code,
without Streamlit (pages/waves_page.py lays them out).

Lines are never thinned by skipping points: up to ``figures.LINE_MAX_POINTS`` points they
are sent whole, y as float32 (7 significant digits, half the bytes) and x as ``x0``/``dx``;
longer ones show a window of positions.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import pe_core
from explorer import animation, reproduce
from explorer.figures import (
    COLORBAR_MARGIN_R,
    ON_BOTH_THEMES,
    SUBPLOT_TITLES_PX,
    figure,
    frame_layout,
    line_mode,
    positions_text,
    structure_copy,
)
from explorer.settings import Settings

#: Panels per row of the per-position profiles (seed 000 draws four side by side).
PROFILE_PANELS_PER_ROW = 4


#: The unit-circle trail shows at most this many positions, the last ones up to k.
MAX_TRAIL = 2000


#: Waves page: positions drawn at once by "chosen columns across positions"; longer
#: sequences show a window the user moves (16384 points of a fast column are a solid block;
#: 300 positions show about 50 turns of the fastest pair, each still a visible wave).
COLUMNS_WINDOW = 300


def position_profile_figure(positions: Sequence[int], w: np.ndarray, *, title: str) -> go.Figure:
    r"""One panel per position k: :math:`\sin(k\,\omega_x)` over pair index x (seed 000).

    Seed 000's ``plotSinusoid(k)`` plots ``sin(k / n**(2*x/d))`` for x = 0..99: the sine of
    pair x, i.e. column 2x of the interleaved matrix, not column x. ``w`` is
    :math:`\omega_x` for the pairs to draw.
    """
    w = np.asarray(w, dtype=np.float64)
    count = len(positions)
    cols = min(count, PROFILE_PANELS_PER_ROW)
    rows = -(-count // PROFILE_PANELS_PER_ROW)
    layout = _profile_grid(rows, cols, count)
    for annotation, k in zip(layout["annotations"], positions, strict=True):
        annotation["text"] = f"k={k}"
    pairs = np.arange(w.size)
    traces = [
        {
            "type": "scatter", "x": pairs, "y": np.sin(k * w), "name": f"k={k}", "mode": line_mode(w.size),
            "hovertemplate": f"k = {k}<br>pair x = %{{x}}<br>sin(k·ω_x) = %{{y:.7g}}<extra></extra>",
            "showlegend": False, "xaxis": f"x{index + 1 if index else ''}", "yaxis": f"y{index + 1 if index else ''}",
        }
        for index, k in enumerate(positions)
    ]
    return figure(traces, layout | frame_layout(title, 320 * rows + 60, above_plot=SUBPLOT_TITLES_PX))


@functools.cache
def _profile_grid_of_shape(rows: int, cols: int, panels: int) -> dict:
    """make_subplots' layout for ``panels`` panels in ``rows`` x ``cols`` (shared y, a title over each
    panel), with every x axis titled and the first column's y axes too: built once per shape (a
    make_subplots figure costs milliseconds of validation)."""
    fig = make_subplots(
        rows=rows, cols=cols, shared_yaxes=True, subplot_titles=[str(panel) for panel in range(panels)],
        horizontal_spacing=0.04, vertical_spacing=0.18,
    )
    fig.update_xaxes(title_text="pair index x")
    fig.update_yaxes(title_text="sin(k·ω_x)", range=[-1.1, 1.1], col=1)
    layout = fig.layout.to_plotly_json()
    layout.pop("template", None)
    return layout


def _profile_grid(rows: int, cols: int, panels: int) -> dict:
    """A copy of ``_profile_grid_of_shape``'s layout, to fill in."""
    return structure_copy(_profile_grid_of_shape(rows, cols, panels))


def profile_play_positions(pairs: int) -> np.ndarray:
    """The positions k = 0, 1, 2 ... that Play sweeps over ``pairs`` pairs: one frame per
    position (as many as ``animation.frame_count`` allows), so every frame is a whole k."""
    return np.arange(animation.frame_count(pairs))


def profile_play_figure(w: np.ndarray, *, title: str) -> go.Figure:
    r"""Seed 000's profile :math:`\sin(k\,\omega_x)` over pair index x, one frame per position
    k = 0, 1, 2 ... (``profile_play_positions``): Play sweeps k in the browser."""
    w = np.asarray(w, dtype=np.float64)
    pairs = np.arange(w.size)
    positions = profile_play_positions(w.size)
    hover = "k = %{meta}<br>pair x = %{x}<br>sin(k·ω_x) = %{y:.7g}<extra></extra>"

    def profile(k: int) -> dict:
        """Frame k: only the values (``meta``: k); Plotly merges a frame into the trace's looks."""
        return {"y": np.sin(k * w).astype(np.float32), "meta": int(k)}

    frames = [animation.frame([profile(int(k))], traces=[0], name=str(int(k))) for k in positions]
    return animation.play_figure(
        [{"type": "scatter", **profile(int(positions[0])), "x0": 0, "dx": 1, "mode": line_mode(w.size),
          "name": "sin(k·ω_x)", "hovertemplate": hover, "showlegend": False}],
        {"xaxis": {"title": {"text": "pair index x"}, "range": [-0.5, float(max(pairs[-1], 1)) + 0.5]},
         "yaxis": {"title": {"text": "sin(k·ω_x)"}, "range": [-1.1, 1.1]}} | frame_layout(title, 380),
        frames, label="position k", redraw=False,
    )


def encoding_columns(
    length: int, d: int, n: float, columns: Sequence[int], *, layout: str = "interleaved",
    convention: str = "paper", start: int = 0,
) -> np.ndarray:
    """Columns ``columns`` of ``positional_encoding(length, d, ..., start=start)``, shape (length, len(columns)).

    Computed column by column from the pair each column belongs to, so a few columns of a
    16384 x 2048 encoding cost 16384 values each, never the whole matrix.
    """
    pair, is_sine = pe_core.column_pairs(d, layout)
    w = pe_core.frequencies(d, n, convention)
    k = pe_core.positions(length, start)
    columns = np.asarray(columns, dtype=np.int64)
    if columns.size and (columns.min() < 0 or columns.max() >= d):
        raise ValueError(f"columns must lie in 0..{d - 1}, got {columns.tolist()}.")
    # The angles exact, as positional_encoding takes them: these are its columns to the last bit.
    sines, cosines = pe_core.sin_cos_of_products(k[:, None], w[pair[columns]][None, :])
    return np.where(is_sine[columns], sines, cosines)


def column_names(columns: Sequence[int], d: int, w: np.ndarray, layout: str = "interleaved") -> list[str]:
    """Legend text of each column: 'column 1: cos, pair i = 0, λ = 6.283 positions'."""
    pair, is_sine = pe_core.column_pairs(d, layout)
    return [
        f"column {c}: {'sin' if is_sine[c] else 'cos'}, pair i = {pair[c]}, "
        f"λ = {2 * np.pi / w[pair[c]]:.4g} positions"
        for c in columns
    ]


def columns_over_positions_figure(
    values: np.ndarray, names: Sequence[str], *, title: str, first: int = 0
) -> go.Figure:
    """One line per chosen column over positions k = first, first + 1, ... (seed 002:
    dimensions 0 and 1 over positions 0..49): ``values[r, c]`` is column c at position first + r."""
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[1] != len(names):
        raise ValueError(f"values {values.shape} do not match {len(names)} names.")
    traces = [
        {"type": "scatter", "x0": first, "dx": 1, "y": values[:, column].astype(np.float32), "name": name,
         "mode": line_mode(values.shape[0]),
         "hovertemplate": f"position k = %{{x}}<br>{name}<br>value = %{{y:.7g}}<extra></extra>"}
        for column, name in enumerate(names)
    ]
    return figure(traces, {
        "xaxis": {"title": {"text": "position k"}},
        "yaxis": {"title": {"text": "P[k, j]"}, "range": [-1.1, 1.1]},
        "legend": {"orientation": "h", "y": -0.25},
    } | frame_layout(title, 440))


def trail_positions(k: int, max_trail: int = MAX_TRAIL) -> np.ndarray:
    """The positions of the unit circle's trail: the last ``max_trail`` of 0 .. k."""
    return np.arange(max(0, k - max_trail + 1), k + 1)


def unit_circle_figure(
    w_i: float, k: int, *, pair: int, max_trail: int = MAX_TRAIL
) -> go.Figure:
    r"""Pair i as the point :math:`(\cos k\omega_i, \sin k\omega_i)` on the unit circle.

    Draws the circle, the trail of the positions up to k (at most the last ``max_trail``:
    a geometric illustration, not a data series), the current point with its radius, and
    the angle :math:`k\omega_i` in degrees.
    """
    trail = trail_positions(k, max_trail)
    theta = trail * w_i
    around = np.linspace(0.0, 2.0 * np.pi, 361)
    angle = k * w_i
    degrees = np.degrees(angle)
    traces = [
        {"type": "scatter", "x": np.cos(around), "y": np.sin(around), "mode": "lines", "name": "unit circle",
         "line": {"color": "lightgray"}, "hoverinfo": "skip"},
        {"type": "scatter", "x": np.cos(theta).astype(np.float32), "y": np.sin(theta).astype(np.float32),
         "mode": "markers", "name": positions_text(int(trail[0]), k),
         # A colour bar over the trail's positions (none for a trail of one position: nothing to tell apart).
         "marker": {"color": trail, "colorscale": ON_BOTH_THEMES, "size": 6, "cmin": int(trail[0]),
                    "cmax": int(max(k, trail[0] + 1)), "showscale": trail.size > 1,
                    "colorbar": {"title": {"text": "position k", "side": "right"}}},
         "hovertemplate": "position k = %{marker.color}<br>cos = %{x:.7g}<br>sin = %{y:.7g}<extra></extra>"},
        {"type": "scatter", "x": [0.0, float(np.cos(angle))], "y": [0.0, float(np.sin(angle))],
         "mode": "lines+markers", "name": f"k = {k}", "marker": {"size": [0, 14], "color": "crimson"},
         "line": {"color": "crimson"},
         "hovertemplate": f"k = {k}<br>cos = %{{x:.7g}}<br>sin = %{{y:.7g}}<extra></extra>"},
    ]
    layout = _circle_layout(pair, f"Pair i = {pair} on the unit circle at k = {k}")
    layout["annotations"] = [{
        "x": 0.0, "y": -1.35, "showarrow": False,
        "text": f"k·ω_{pair} = {k} × {w_i:.6g} rad = {degrees:,.4f}° ≡ {degrees % 360.0:.4f}° (mod 360)",
    }]
    return figure(traces, layout)


def _circle_layout(pair: int, title: str) -> dict:
    """The unit circle charts' layout: equal axes around the circle, the legend below, room for a colour bar."""
    layout = {
        "xaxis": {"title": {"text": f"cos(k·ω_{pair})"}, "range": [-1.5, 1.5], "zeroline": True},
        "yaxis": {"title": {"text": f"sin(k·ω_{pair})"}, "range": [-1.5, 1.5], "scaleanchor": "x", "scaleratio": 1},
        "legend": {"orientation": "h", "y": -0.2},
    } | frame_layout(title, 560)
    layout["margin"]["r"] = COLORBAR_MARGIN_R
    return layout


def circle_play_positions(k: int, length: int) -> np.ndarray:
    """The positions Play turns a pair through: consecutive positions from k on, as many as
    fit ``animation.frame_count`` (a frame holds the trail so far), within 0 .. length-1
    (starting before k when k is near the end)."""
    if not 0 <= k < length:
        raise ValueError(f"k must be a position 0..{length - 1}, got {k}.")
    count = min(length, animation.PLAY_MAX_FRAMES)
    # The longest frame: the whole trail (cos, sin and its colour per position) and the point.
    while count > 1 and animation.frame_count(3 * count + 4) < count:
        count -= 1
    first = max(0, min(k, length - count))
    return np.arange(first, first + count)


def unit_circle_play_figure(w_i: float, positions: np.ndarray, *, pair: int, shown: int) -> go.Figure:
    r"""Pair i turning on the unit circle, one frame per position of ``positions`` (consecutive):
    each frame shows the point :math:`(\cos k\omega_i, \sin k\omega_i)`, its radius, and the
    trail of the positions from ``positions[0]`` up to that k. Before Play the figure shows
    the frame of position ``shown``."""
    positions = np.asarray(positions, dtype=np.int64)
    if positions.size == 0 or np.any(np.diff(positions) != 1):
        raise ValueError("positions must be consecutive whole numbers, at least one.")
    if not positions[0] <= shown <= positions[-1]:
        raise ValueError(f"shown must be one of the positions {positions[0]}..{positions[-1]}, got {shown}.")
    first, last = int(positions[0]), int(positions[-1])
    around = np.linspace(0.0, 2.0 * np.pi, 361)
    circle = {"type": "scatter", "x": np.cos(around), "y": np.sin(around), "mode": "lines", "name": "unit circle",
              "line": {"color": "lightgray"}, "hoverinfo": "skip"}

    def moving(k: int) -> list[dict]:
        """What changes from one position to the next: the trail so far, the point, the angle's text."""
        trail = np.arange(first, k + 1)
        theta, angle = trail * w_i, k * w_i
        degrees = np.degrees(angle)
        return [
            {"x": np.cos(theta).astype(np.float32), "y": np.sin(theta).astype(np.float32),
             "marker": {"color": trail.astype(np.int32)}},
            {"x": [0.0, np.cos(angle)], "y": [0.0, np.sin(angle)], "meta": k,
             "hovertemplate": f"k = {k}<br>cos = %{{x:.7g}}<br>sin = %{{y:.7g}}<extra></extra>"},
            {"text": [f"k = {k}: k·ω_{pair} = {degrees:,.2f}° ≡ {degrees % 360.0:.2f}° (mod 360)"]},
        ]

    # The traces' looks are set once; a frame sends only what moves (Plotly merges it into the trace).
    looks = [
        {"type": "scatter", "mode": "markers", "name": f"positions {first}..{last}",
         "marker": {"colorscale": ON_BOTH_THEMES, "cmin": first, "cmax": max(last, first + 1), "size": 6,
                    "colorbar": {"title": {"text": "position k", "side": "right"}}},
         "hovertemplate": "position k = %{marker.color}<br>cos = %{x:.7g}<br>sin = %{y:.7g}<extra></extra>"},
        {"type": "scatter", "mode": "lines+markers", "name": "the point at k",
         "marker": {"size": [0, 14], "color": "crimson"}, "line": {"color": "crimson"}},
        {"type": "scatter", "x": [0.0], "y": [-1.35], "mode": "text", "showlegend": False, "hoverinfo": "skip"},
    ]
    now = moving(shown)
    trail_marker = looks[0]["marker"] | now[0]["marker"]  # the trail's colours, with its looks
    frames = [animation.frame(moving(int(k)), traces=[1, 2, 3], name=str(int(k))) for k in positions]
    return animation.play_figure(
        [circle, looks[0] | now[0] | {"marker": trail_marker}, looks[1] | now[1], looks[2] | now[2]],
        _circle_layout(pair, f"Play: pair {pair} turning, k = {first}..{last}"),
        frames, label="position k", redraw=True, active=shown - first,
    )


def profile_table(positions: Sequence[int], w: np.ndarray) -> pd.DataFrame:
    """``position_profile_figure``'s data: the pair index x, then sin(k·ω_x) for each position k."""
    w = np.asarray(w, dtype=np.float64)
    return pd.DataFrame({"pair x": np.arange(w.size), **{f"k={k}": np.sin(k * w) for k in positions}})


def columns_table(values: np.ndarray, names: Sequence[str], first: int = 0) -> pd.DataFrame:
    """``columns_over_positions_figure``'s data: the position k (from ``first``, the row labels
    too), then one column per line."""
    values = np.asarray(values, dtype=np.float64)
    positions = pd.RangeIndex(first, first + values.shape[0])
    return pd.DataFrame({"position k": positions.to_numpy(), **dict(zip(names, values.T, strict=True))},
                        index=positions)


def circle_table(w_i: float, k: int, *, max_trail: int = MAX_TRAIL) -> pd.DataFrame:
    """``unit_circle_figure``'s trail: each position up to k and its point (cos kω_i, sin kω_i)."""
    trail = trail_positions(k, max_trail)
    theta = trail * w_i
    return pd.DataFrame({"position k": trail, "cos(k·ω_i)": np.cos(theta), "sin(k·ω_i)": np.sin(theta)})


def waves_code(
    settings: Settings,
    *,
    positions: Sequence[int],
    pairs_shown: int,
    columns: Sequence[int],
    pair: int,
    position: int,
    max_trail: int,
) -> str:
    """Waves: sin(k·ω_x) of the first ``pairs_shown`` pairs at ``positions``, the chosen
    ``columns`` of P over every position, and ``pair``'s trail on the unit circle up to ``position``."""
    positions, columns = [int(k) for k in positions], [int(j) for j in columns]
    trail_first = max(0, position - max_trail + 1)
    return (
        reproduce.title("Waves", settings, "the three charts' data")
        + reproduce.encoding_code(settings)
        + f"\n# (a) sin(k·ω_x) of pairs x = 0..{pairs_shown - 1}: the pair index x, then one column per position k\n"
        f"positions = {positions}\n"
        f"profiles = np.column_stack([np.arange({pairs_shown}), "
        f"np.sin(np.multiply.outer(w[:{pairs_shown}], positions))])\n"
        "\n# (b) chosen columns of P over every position: the position k, then one column per j\n"
        f"columns = {columns}\n"
        "lines = np.column_stack([np.arange(L), P[:, columns]])\n"
        f"\n# (c) pair {pair} on the unit circle: positions {trail_first}..{position} and their (cos, sin)\n"
        f"pair, last = {pair}, {position}\n"
        f"trail = np.arange({trail_first}, last + 1)\n"
        "theta = trail * w[pair]\n"
        "circle = np.column_stack([trail, np.cos(theta), np.sin(theta)])\n"
        "angle = last * w[pair]  # the angle of position k\n"
        + reproduce.result_code({"waves_profiles": "profiles", "waves_columns": "lines", "waves_circle": "circle"})
        + reproduce.numbers_code(dict(zip(circle_labels(pair), (
            ("w[pair]", ".10g"), ("np.degrees(angle)", ",.4f"), ("np.degrees(angle) % 360.0", ".4f"),
            ("(np.sin(angle), np.cos(angle))", ".6f"),
        ), strict=True)))
    )


def circle_labels(pair: int) -> tuple[str, str, str, str]:
    """The labels of the unit circle's numbers (the page's metrics, the snippet's printed numbers):
    ω_i, the angle k·ω_i in degrees, the same mod 360, and (sin, cos) of it."""
    return (f"ω_{pair} (rad/position)", f"angle k·ω_{pair}", "angle mod 360", f"(sin, cos)(k·ω_{pair})")
