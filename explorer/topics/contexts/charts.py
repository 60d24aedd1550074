"""Longer contexts' figures (the turns each pair needs, with Play; every method's θ'/θ; the score by
offset; YaRN's two ramps) and the tables of their data, with the shorter titles of the tables' widest
columns and each method's colour."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer import animation, rope_methods
from explorer.figures import ENVELOPE_HOVER, FONT_PX, MARGIN, chart_title, figure, line_xy, log_axis
from explorer.rope_methods import NONE
from explorer.topics.contexts.analysis import available_methods, coverage, coverage_frames, yarn_bounds, yarn_ramps
from explorer.topics.contexts.view import ContextView

#: Plain RoPE's line in methods_figure: grey beside the methods' hues (explorer.rope_methods).
PLAIN_COLOR = "#8c8c8c"


def method_colour(method: str) -> str:
    return PLAIN_COLOR if method == NONE else rope_methods.method_entry(method).colour


#: Shorter titles for the tables' widest columns (the full name is the column's help): at full
#: length the per-pair table ran 1139 px wide in a 1280 x 720 page's 818.
TABLE_TITLES: dict[str, str] = {
    "θ_i (rad/position)": "θ_i",
    "wavelength λ_i (positions)": "λ_i",
    "turns in training L0/λ_i": "turns L0/λ_i",
    "largest angle in training L0·θ_i (rad)": "L0·θ_i",
    "largest angle at L, L·θ'_i (rad)": "L·θ'_i",
    "meets unseen angles (1 = yes)": "unseen",
    "slowest pair θ'/θ": "slowest θ'/θ",
    "attention factor a": "a",
    "pairs meeting unseen angles": "unseen pairs",
}


# ------------------------------------------------------------------------------- figures


def method_label(view: ContextView) -> str:
    """'plain RoPE', or the method's short name and its factor: 'YaRN ×4'."""
    return "plain RoPE" if view.method == NONE else f"{rope_methods.method_short(view.method)} ×{view.factor:g}"


def coverage_figure(view: ContextView, *, title: str) -> go.Figure:
    r"""Turns per pair on a log axis: over the trained length (:math:`L_0/\lambda_i`), and over a
    target length T plain and with the method (:math:`T\theta'_i/2\pi`), whose line carries a
    cross on each pair that meets unseen angles (its other markers have size 0); a line at one
    turn. Play sweeps T (``play_targets``), the figure opening on the view's target."""
    targets, plain, scaled, unseen = coverage_frames(view)
    seen = coverage(view, NONE).turns_seen
    active = int(np.flatnonzero(targets == view.target)[0])
    every = np.concatenate([seen, plain.ravel(), scaled.ravel()])
    label = method_label(view)

    def frame_data(row: int) -> list[dict]:
        return [
            {"y": plain[row].astype(np.float32)},
            {"y": scaled[row].astype(np.float32), "marker": {"size": np.where(unseen[row], 8, 0).astype(np.uint8)}},
        ]

    hover = "pair i = %{x}<br>%{fullData.name}: %{y:.4g} turns<extra></extra>"
    first = frame_data(active)
    traces = [
        {"type": "scatter", "x0": 0, "dx": 1, "y": seen.astype(np.float32),
         "name": f"in training: L0/λ_i (L0 = {view.trained:,})", "mode": "lines",
         "line": {"color": "#555555", "width": 3}, "hovertemplate": hover},
        {"type": "scatter", "x0": 0, "dx": 1, "name": "at T, plain RoPE: T/λ_i", "mode": "lines",
         "line": {"color": "#d6604d", "dash": "dot"}, "hovertemplate": hover, **first[0]},
        {"type": "scatter", "x0": 0, "dx": 1, "name": f"at T, {label}: T θ'_i/2π (✕: meets angles unseen in training)",
         "mode": "lines+markers", "line": {"color": "#2166ac"}, "hovertemplate": hover, **first[1],
         "marker": {"symbol": "x", "color": "#b2182b", "line": {"width": 0}} | first[1]["marker"]},
    ]
    y_axis = log_axis(every) | {"title": {"text": "turns (angle / 2π)"}}
    if y_axis.get("tickmode") is None:  # several decades: one label a decade (2 and 5 crowd them)
        y_axis |= {"dtick": 1}
    layout = {
        "title": chart_title(title), "height": 480, "margin": MARGIN | {"b": 130},
        "xaxis": {"title": {"text": "pair i (fast → slow)"}, "range": [-0.5, view.pairs - 0.5]},
        "yaxis": y_axis, "legend": {"orientation": "h", "y": -0.22}, "hoverlabel": {"namelength": -1},
        "shapes": [{"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "y0": 1, "y1": 1,
                    "line": {"color": "grey", "dash": "dash", "width": 1}}],
        # At the left, where every line is far above one turn (a log axis places y at log10 1 = 0).
        "annotations": [{"text": "one turn: every angle met", "xref": "x domain", "x": 0.01, "xanchor": "left",
                         "y": 0, "yanchor": "bottom", "showarrow": False, "font": {"size": FONT_PX}}],
    }
    frames = [animation.frame(frame_data(row), traces=[1, 2], name=str(int(T))) for row, T in enumerate(targets)]
    return animation.play_figure(traces, layout, frames, label="Play's length T", redraw=False, active=active,
                                 labels=[f"{int(T):,}" for T in targets])


def methods_figure(view: ContextView, *, title: str) -> go.Figure:
    r""":math:`\theta'_i/\theta_i` of every pair against its wavelength :math:`\lambda_i`, one line
    per method, on log axes, with the trained length marked (a pair to its right never
    turned a whole circle in training)."""
    wavelength = coverage(view, NONE).wavelength
    ratios = {method: coverage(view, method).ratio for method in available_methods(view)}
    traces = [
        {"type": "scatter", "x": wavelength.astype(np.float32), "y": ratio.astype(np.float32),
         "name": rope_methods.method_label(method), "mode": "lines+markers" if view.pairs <= 64 else "lines",
         "marker": {"size": 4},
         "line": {"width": 3 if method == view.method else 1.5, "color": method_colour(method)},
         "hovertemplate": "λ_i = %{x:.4g} positions<br>θ'_i/θ_i = %{y:.4g}<br>" + rope_methods.method_label(method)
         + "<extra></extra>"}
        for method, ratio in ratios.items()
    ]
    every = np.concatenate(list(ratios.values()))
    drawn = every[every > 0]  # a pair left unrotated (proportional: θ' = 0) has no place on a log axis
    y_axis = log_axis(drawn) if drawn.max() / drawn.min() > 1.01 else {}
    return figure(traces, {
        "title": chart_title(title), "height": 460, "margin": MARGIN | {"b": 150},
        "xaxis": log_axis(wavelength) | {"title": {"text": "wavelength λ_i = 2π/θ_i (positions)"}},
        "yaxis": y_axis | {"title": {"text": "θ'_i / θ_i"}},
        "legend": {"orientation": "h", "y": -0.28}, "hoverlabel": {"namelength": -1},
        "shapes": [{"type": "line", "x0": view.trained, "x1": view.trained, "yref": "y domain", "y0": 0, "y1": 1,
                    "line": {"color": "grey", "dash": "dot"}}],
        "annotations": [{"text": f" λ = L0 = {view.trained:,}", "x": math.log10(view.trained), "xanchor": "left",
                         "yref": "y domain", "y": 0.02, "yanchor": "bottom", "showarrow": False,
                         "font": {"size": FONT_PX}}],
    })


def dot_figure(view: ContextView, before: np.ndarray, after: np.ndarray, *, title: str) -> go.Figure:
    """The two curves of ``dot_curves`` by offset (min/max envelopes past figures.LINE_MAX_POINTS),
    with the trained length marked."""
    label = method_label(view)
    traces = []
    for values, name, style in (
        (before, "plain RoPE: Σ 2cos(δθ_i)", {"color": "#d6604d", "width": 1}),
        (after, f"{label}: a² Σ 2cos(δθ'_i)", {"color": "#2166ac", "width": 1.5}),
    ):
        line = line_xy(values)
        traces.append({"type": "scatter", **line, "name": name, "mode": "lines", "line": style,
                       "hovertemplate": "offset δ = %{x}<br>score = %{y:.7g}"
                       + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>"})
    shapes, notes = [], []
    if view.trained < before.size:
        shapes.append({"type": "line", "x0": view.trained, "x1": view.trained, "yref": "y domain", "y0": 0, "y1": 1,
                       "line": {"color": "grey", "dash": "dot"}})
        notes.append({"text": f" L0 = {view.trained:,}", "x": view.trained, "xanchor": "left", "yref": "y domain",
                      "y": 1, "yanchor": "top", "showarrow": False, "font": {"size": FONT_PX}})
    return figure(traces, {
        "title": chart_title(title), "height": 440, "margin": MARGIN | {"b": 120},
        "xaxis": {"title": {"text": "offset δ = m − n (positions)"}},
        "yaxis": {"title": {"text": "q_m · k_n for q = k = (1, …, 1)"}},
        "legend": {"orientation": "h", "y": -0.25}, "hoverlabel": {"namelength": -1},
    } | _marks(shapes, notes))


def ramp_figure(view: ContextView, *, title: str) -> go.Figure:
    r"""YaRN's share of interpolation :math:`w_i` per pair, as its code and as its paper
    compute it, with the fractional bounds :math:`c(\beta_{fast})` and :math:`c(\beta_{slow})`."""
    code, paper = yarn_ramps(view)
    fast, slow = yarn_bounds(view)
    traces = [
        {"type": "scatter", "x0": 0, "dx": 1, "y": code, "name": "code (transformers, YaRN's repository): linear in i",
         "mode": "lines", "line": {"color": "#2166ac", "width": 2.5, "shape": "linear"},
         "hovertemplate": "pair i = %{x}<br>w_i (code) = %{y:.6g}<extra></extra>"},
        {"type": "scatter", "x0": 0, "dx": 1, "y": paper, "name": "paper, eq. 18-19: linear in r_i = L0/λ_i",
         "mode": "lines", "line": {"color": "#d6604d", "dash": "dash", "width": 2},
         "hovertemplate": "pair i = %{x}<br>w_i (paper) = %{y:.6g}<extra></extra>"},
    ]
    shapes, notes = [], []
    # Each bound's label on the side of its line where no ramp is drawn: the fast one to the left,
    # high up (the ramps are 0 there), the slow one to the right, half way (they are 1 there).
    for where, text, side, height in ((fast, f"c(β_fast={view.beta_fast:g}) ", "right", 0.85),
                                      (slow, f" c(β_slow={view.beta_slow:g})", "left", 0.5)):
        if -0.5 <= where <= view.pairs - 0.5:
            shapes.append({"type": "line", "x0": where, "x1": where, "yref": "y domain", "y0": 0, "y1": 1,
                           "line": {"color": "grey", "dash": "dot"}})
            notes.append({"text": text, "x": where, "xanchor": side, "yref": "y domain", "y": height,
                          "yanchor": "middle", "showarrow": False, "font": {"size": FONT_PX}})
    return figure(traces, {
        "title": chart_title(title), "height": 420, "margin": MARGIN | {"b": 120},
        "xaxis": {"title": {"text": "pair i"}, "range": [-0.5, view.pairs - 0.5]},
        "yaxis": {"title": {"text": "w_i: θ'_i = (1 − w_i) θ_i + w_i θ_i / s"}, "range": [-0.05, 1.05]},
        "legend": {"orientation": "h", "y": -0.25}, "hoverlabel": {"namelength": -1},
    } | _marks(shapes, notes))


def _marks(shapes: list[dict], notes: list[dict]) -> dict:
    """A layout's shapes and annotations, left out when there are none (as validation leaves out an empty list)."""
    return ({"shapes": shapes} if shapes else {}) | ({"annotations": notes} if notes else {})


# ------------------------------------------------------------------------------- tables


def pairs_table(view: ContextView) -> pd.DataFrame:
    """Per pair, for the view's method at the target length: frequency, wavelength, turns in
    training, theta'/theta, the largest angles in training and at the target, and whether the
    pair meets unseen angles (1) or not (0)."""
    c = coverage(view)
    return pd.DataFrame({
        "pair i": np.arange(view.pairs),
        "θ_i (rad/position)": c.theta,
        "wavelength λ_i (positions)": c.wavelength,
        "turns in training L0/λ_i": c.turns_seen,
        "θ'_i/θ_i": c.ratio,
        "largest angle in training L0·θ_i (rad)": c.seen,
        "largest angle at L, L·θ'_i (rad)": c.needed,
        "meets unseen angles (1 = yes)": c.unseen.astype(np.int64),
    })


def methods_table(view: ContextView) -> pd.DataFrame:
    """``methods_figure``'s data: each pair's wavelength and theta'/theta for every method."""
    table = {"pair i": np.arange(view.pairs), "wavelength λ_i (positions)": coverage(view, NONE).wavelength}
    for method in available_methods(view):
        table[f"θ'/θ, {method}"] = coverage(view, method).ratio
    return pd.DataFrame(table)


def coverage_table(view: ContextView) -> pd.DataFrame:
    """``coverage_figure``'s data: per pair, its turns in training and, for every target length
    T Play sweeps, its turns at T plain and with the method."""
    targets, plain, scaled, _ = coverage_frames(view)
    table = {"pair i": np.arange(view.pairs), "turns in training L0/λ_i": coverage(view, NONE).turns_seen}
    for row, T in enumerate(targets):
        table[f"turns at T={int(T)}, plain"] = plain[row]
        table[f"turns at T={int(T)}, {view.method}"] = scaled[row]
    return pd.DataFrame(table)


def dot_table(view: ContextView, before: np.ndarray, after: np.ndarray) -> pd.DataFrame:
    """``dot_figure``'s data: every offset and both scores."""
    return pd.DataFrame({"offset δ": np.arange(before.size), "plain RoPE": before, f"{view.method}": after})


def ramp_table(view: ContextView) -> pd.DataFrame:
    """``ramp_figure``'s data, and theta'/theta under each form."""
    code, paper = yarn_ramps(view)
    s = view.factor
    return pd.DataFrame({
        "pair i": np.arange(view.pairs), "w_i, code": code, "w_i, paper": paper,
        "θ'/θ, code": 1 - code + code / s, "θ'/θ, paper": 1 - paper + paper / s,
    })
