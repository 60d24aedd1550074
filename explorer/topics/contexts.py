r"""Longer contexts: a model's RoPE (a preset, or its config.json) run past the length it was
trained on, pair by pair, for every context-extension method. Analysis, figures and
reproduce-this code, without Streamlit (pages/contexts_page.py lays them out).

A model trained on :math:`L_0` tokens has turned pair i of its RoPE through the angles
:math:`[0, L_0\theta_i]`. Run it on L tokens and a pair that never turned a whole circle in
training meets rotations it never saw, unless a scaling lowers its frequency
(``pe_core.angle_coverage``). Every number is pe_core's: the scalings as transformers computes
them (``pe_core.rope``), a config.json read as transformers reads it (``pe_core.rope_config``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import animation, reproduce, rope_methods
from explorer.figures import ENVELOPE_HOVER, FONT_PX, MARGIN, chart_title, figure, line_xy, log_axis
from explorer.model_configs import MODEL_CONFIGS, load_config, model_config
from explorer.rope_methods import NONE
from explorer.settings import D_MAX, N_OPTIONS, echo, format_number, last_value, nearest_n, read_number
from pe_core.rope.methods import ORIGINAL_LENGTH_KEYS, rope_method

#: Plain RoPE's line in methods_figure: grey beside the methods' hues (explorer.rope_methods).
PLAIN_COLOR = "#8c8c8c"


def methods() -> tuple[str, ...]:
    """"none" (plain RoPE) and every method the app shows, in the order the page lists them."""
    return (NONE, *rope_methods.method_names())


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
#: URL value of the model key when the settings come from no preset.
CUSTOM_MODEL = "custom"
MODEL_KEYS: tuple[str, ...] = (CUSTOM_MODEL, *(model.key for model in MODEL_CONFIGS))

#: Limits of the page's own keys. Lengths up to 2**24 tokens (Llama 4 Scout's 10M fits).
LENGTH_MAX = 2**24
FACTOR_MAX = 1024.0
BASE_MAX = 1e12
#: YaRN's beta_fast and beta_slow, llama3's low and high frequency factors, in turns or ratios.
PARAMETER_MAX = 1024.0
#: mscale, mscale_all_dim and an attention factor given by a config (0: not given).
MSCALE_MAX = 100.0
#: What a trained length defaults to when a config says nothing of it (Llama 2's).
DEFAULT_TRAINED = 4096
#: A config with no scaling is shown against the methods at this factor (target = factor x trained).
DEFAULT_FACTOR = 4.0

#: A pasted or uploaded config.json, at most (Phi-3 mini 128k's, with its factor lists, is 3.6 KB): the
#: uploader's limit (in MB, as Streamlit counts them) and the text box's alike.
CONFIG_MAX_MB = 1
CONFIG_MAX_BYTES = CONFIG_MAX_MB * 1024 * 1024
#: The dot product by offset sums at most this many offsets x pairs per curve (about 30 ms at
#: d = 2048 for its 131,072 offsets), and at most pe_core.MAX_LENGTH offsets (8 MB a curve).
CURVE_TERMS = 2**27
CURVE_MAX_OFFSETS = pe_core.MAX_LENGTH

#: Meta's reference apply_scaling (llama-models, models/llama3/reference_impl/model.py) hard-codes these.
META_LLAMA3 = {"factor": 8.0, "low_freq": 1.0, "high_freq": 4.0, "trained": 8192}


@dataclass(frozen=True)
class ContextView:
    """What the page shows: a model's RoPE, its lengths and a method with every method's parameters.

    ``d`` is the rotary dimension (the sidebar's d), ``base`` the RoPE base; ``trained`` the
    length the model was trained on (L0, a config's ``original_max_position_embeddings``),
    ``target`` the length to reach (L); ``max_positions`` a config's ``max_position_embeddings``
    (0: not given), which dynamic NTK takes as its original length, as transformers does.
    ``mscale``, ``mscale_all_dim`` and ``attention_factor`` of 0 mean "not given"; they and the
    LongRoPE lists belong to the chosen method only.
    """

    d: int = 128
    base: float = 10000.0
    method: str = "yarn"
    factor: float = 4.0
    trained: int = 4096
    target: int = 16384
    max_positions: int = 0
    low_freq: float = 1.0
    high_freq: float = 4.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    truncate: bool = True
    mscale: float = 0.0
    mscale_all_dim: float = 0.0
    attention_factor: float = 0.0
    short_factor: tuple[float, ...] | None = None
    long_factor: tuple[float, ...] | None = None

    @property
    def pairs(self) -> int:
        return self.d // 2

    @property
    def has_lists(self) -> bool:
        """Whether LongRoPE's factor lists are here, one number per pair."""
        return (
            self.short_factor is not None and self.long_factor is not None
            and len(self.short_factor) == len(self.long_factor) == self.pairs
        )

    def describe(self) -> str:
        how = "plain RoPE" if self.method == NONE else f"{rope_methods.method_label(self.method)} x{self.factor:g}"
        return (
            f"d={self.d}, base {format_number(self.base)}, trained on {self.trained:,}, "
            f"run at {self.target:,}, {how}"
        )


DEFAULT_VIEW = ContextView()
#: The URL keys of the page's own settings (the sidebar's d and n hold d and the base).
PAGE_KEYS = (
    "method", "factor", "trained", "target", "max_positions", "low_freq", "high_freq",
    "beta_fast", "beta_slow", "truncate", "mscale", "mscale_all_dim", "attention_factor",
)


# ----------------------------------------------------------------------------- methods


def scaling(view: ContextView, method: str) -> pe_core.RopeScaling | None:
    """The RopeScaling of ``method`` with the view's factor, lengths and parameters
    (``rope_methods.build_scaling``).

    A method whose L0 is max_position_embeddings (dynamic NTK, as transformers reads it) takes
    ``max_positions`` (else the trained length); attention_factor, mscale and mscale_all_dim apply
    to the view's own method (a config gives them for it). Raises ValueError where the method
    cannot be built (LongRoPE without lists for this d).
    """
    if method == NONE:
        return None
    own = method == view.method
    given = {
        "factor": view.factor, "low_freq_factor": view.low_freq, "high_freq_factor": view.high_freq,
        "beta_fast": view.beta_fast, "beta_slow": view.beta_slow, "truncate": view.truncate,
        "short_factor": view.short_factor, "long_factor": view.long_factor,
    }
    if own:  # 0: not given
        given |= {"mscale": view.mscale or None, "mscale_all_dim": view.mscale_all_dim or None,
                  "attention_factor": view.attention_factor or None}
    return rope_methods.build_scaling(method, given, d=view.d, trained=view.trained, max_positions=view.max_positions)


def _refusal(view: ContextView, method: str) -> str:
    """Why ``method`` cannot be drawn for this view ("" when it can)."""
    try:
        scaling(view, method)
    except ValueError as refusal:
        return str(refusal)
    return ""


def available_methods(view: ContextView) -> tuple[str, ...]:
    """The methods the page can draw for this view: those whose scaling can be built for it (NTK
    and dynamic need d >= 4, as their base change divides by d - 2; LongRoPE its lists for this d)."""
    return tuple(method for method in methods() if not _refusal(view, method))


def unavailable_methods(view: ContextView) -> dict[str, str]:
    """The methods the page cannot draw for this view, each with the reason pe_core gives."""
    return {method: reason for method in methods() if (reason := _refusal(view, method))}


#: The view's parameters that go in pairs, each pair in order (``ordered_pairs``).
ORDERED_KEYS = ("beta_fast", "beta_slow", "low_freq", "high_freq")


def ordered_pairs(view: ContextView) -> tuple[ContextView, list[str]]:
    """The view with each pair of parameters that must go in order and does not (YaRN's beta_slow
    below beta_fast, llama3's low_freq_factor below high_freq_factor: ``rope_methods.out_of_order``
    over every method, whose parameters the page's boxes all show) replaced by its authors' values,
    and a one-line notice for each."""
    ordered, notices = rope_methods.out_of_order(
        rope_methods.method_names(), {key: getattr(view, key) for key in ORDERED_KEYS})
    return replace(view, **ordered), notices


def checked_view(view: ContextView) -> tuple[ContextView, list[str]]:
    """The view with what cannot go together put right, and a one-line notice for each change:
    ``ordered_pairs``, and a method this view cannot draw."""
    view, notices = ordered_pairs(view)
    if view.method != NONE and (refusal := _refusal(view, view.method)):
        notices.append(f"{rope_methods.method_label(view.method)} cannot be drawn here: {refusal} Showing plain RoPE.")
        view = replace(view, method=NONE)
    return view, notices


def attention_factor(view: ContextView, method: str) -> float:
    """The factor transformers multiplies cos and sin by for ``method`` at the target length."""
    return pe_core.rope_attention_factor(scaling(view, method), view.target)


def coverage(view: ContextView, method: str | None = None, target: int | None = None) -> pe_core.AngleCoverage:
    """pe_core.angle_coverage for ``method`` (default: the view's) at ``target`` (default: the view's)."""
    method = view.method if method is None else method
    return pe_core.angle_coverage(
        view.d, view.base, view.trained, view.target if target is None else target, scaling=scaling(view, method)
    )


def pairs_text(count: int) -> str:
    """'1 pair', '0 pairs', '12 pairs'."""
    return f"{count} pair" if count == 1 else f"{count} pairs"


def unseen_text(unseen: np.ndarray) -> str:
    """'none', 'pair 30' or 'pairs 30..63' (or '12 pairs from 5 to 63' when not consecutive)."""
    which = np.flatnonzero(unseen)
    if which.size == 0:
        return "none"
    if which.size == 1:
        return f"pair {which[0]}"
    if which[-1] - which[0] + 1 == which.size:
        return f"pairs {which[0]}..{which[-1]}"
    return f"{which.size} pairs from {which[0]} to {which[-1]}"


def methods_summary(view: ContextView) -> pd.DataFrame:
    """One row per method the view can draw: its slowest pair's theta'/theta, attention factor
    a, the factor a^2 on every score, and the pairs meeting unseen angles at the target length."""
    rows = []
    for method in available_methods(view):
        c = coverage(view, method)
        a = attention_factor(view, method)
        rows.append({
            "method": rope_methods.method_label(method),
            "slowest pair θ'/θ": float(c.ratio[-1]),
            "attention factor a": a,
            "scores × a²": a * a,
            "pairs meeting unseen angles": int(c.unseen.sum()),
            "which": unseen_text(c.unseen),
        })
    return pd.DataFrame(rows)


def yarn_ramps(view: ContextView) -> tuple[np.ndarray, np.ndarray]:
    """YaRN's share of interpolation per pair, as its code computes it and as its paper's equation does
    (with the view's factor, trained length and betas, whatever its method)."""
    yarn = scaling(view, "yarn")
    return (pe_core.yarn_ramp(view.d, view.base, scaling=yarn, form="code"),
            pe_core.yarn_ramp(view.d, view.base, scaling=yarn, form="paper"))


def yarn_bounds(view: ContextView) -> tuple[float, float]:
    r"""The fractional pair indices :math:`c(\beta) = d\ln(L_0/(2\pi\beta))/(2\ln b)` of YaRN's
    fast and slow bounds (before the code's floor and ceil)."""
    def correction(turns: float) -> float:
        return view.d * math.log(view.trained / (turns * 2 * math.pi)) / (2 * math.log(view.base))

    return correction(view.beta_fast), correction(view.beta_slow)


# ------------------------------------------------------------------- dot product by offset


def curve_offsets(view: ContextView) -> int:
    """How many offsets 0 .. count - 1 the dot-product curves cover: every offset of the target
    length, unless that is more than CURVE_TERMS terms or CURVE_MAX_OFFSETS offsets."""
    return max(1, min(view.target, CURVE_MAX_OFFSETS, CURVE_TERMS // view.pairs))


def dot_curves(view: ContextView) -> tuple[np.ndarray, np.ndarray]:
    r"""The score of an all-ones query and key at offsets 0 .. ``curve_offsets`` - 1, as transformers
    computes it: plain RoPE, :math:`\sum_i 2\cos(\delta\theta_i)`, and with the view's method at the
    target length, :math:`a^2\sum_i 2\cos(\delta\theta'_i)` (``pe_core.rope_dot_by_offset`` is the
    rotation alone; transformers multiplies cos and sin by the attention factor a, so q and k
    each carry a and the score :math:`a^2`)."""
    offsets = np.arange(curve_offsets(view), dtype=np.float64)
    method = scaling(view, view.method)
    a = pe_core.rope_attention_factor(method, view.target)
    before = pe_core.rope_dot_by_offset(offsets, view.d, view.base)
    after = pe_core.rope_dot_by_offset(offsets, view.d, view.base, scaling=method, length=view.target)
    return before, (a * a) * after


# --------------------------------------------------------------------------- play (target grows)


def play_targets(view: ContextView, frames: int) -> np.ndarray:
    """Target lengths Play sweeps: about ``frames`` whole lengths spread geometrically from the
    shorter of the trained and target lengths to the longer (4 x the trained length when they
    are equal), both ends and the view's target among them."""
    low, high = sorted((view.trained, view.target))
    if low == high:
        high = min(LENGTH_MAX, 4 * low) if low < LENGTH_MAX else low
    sweep = np.geomspace(low, high, max(2, frames)) if high > low else np.array([float(low)])
    values = np.unique(np.r_[np.round(sweep).astype(np.int64), view.target])
    return values


def play_frame_count(view: ContextView) -> int:
    """Frames that fit animation.PLAY_MAX_BYTES: per frame, two lines of d/2 values and the sizes
    of the method line's markers (d/2 bytes, counted as a quarter of a value each)."""
    return animation.frame_count(2 * view.pairs + -(-view.pairs // 4))


def coverage_frames(view: ContextView) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per Play target T (rows): turns needed by every pair, plain and with the method, and the
    method's unseen mask. Returns (targets, plain turns, method turns, unseen)."""
    targets = play_targets(view, play_frame_count(view))
    plain = np.array([coverage(view, NONE, int(T)).turns_needed for T in targets])
    scaled = [coverage(view, view.method, int(T)) for T in targets]
    return targets, plain, np.array([c.turns_needed for c in scaled]), np.array([c.unseen for c in scaled])


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
    y_axis = log_axis(every) if every.max() / every.min() > 1.01 else {}
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


# ------------------------------------------------------------------------------- tables


def _marks(shapes: list[dict], notes: list[dict]) -> dict:
    """A layout's shapes and annotations, left out when there are none (as validation leaves out an empty list)."""
    return ({"shapes": shapes} if shapes else {}) | ({"annotations": notes} if notes else {})


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


# -------------------------------------------------------------------------- config.json


def config_size(data: str | bytes) -> int:
    """The size in bytes of a pasted or uploaded config.json."""
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))


def read_config(data: str | bytes) -> dict:
    """The dict of a pasted or uploaded config.json; ValueError with one line for anything else
    (too large, not UTF-8, not JSON, nested too deeply, not an object)."""
    size = config_size(data)
    if size > CONFIG_MAX_BYTES:
        raise ValueError(
            f"That is {size / 1024:,.0f} KB; this page reads a config.json of at most {CONFIG_MAX_MB} MB "
            "(a model's is a few KB)."
        )
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError("The file is not UTF-8 text; a config.json is JSON text.") from None
    else:
        text = data
    if not text.strip():
        raise ValueError("The config is empty: paste the text of a config.json, or upload the file.")
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"This is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno}).") from None
    except RecursionError:
        raise ValueError("This JSON nests too deeply to be a config.json.") from None
    except ValueError:  # a whole number of more than 4300 digits
        raise ValueError("This JSON holds a number too long to read.") from None
    if not isinstance(config, dict):
        raise ValueError(f"A config.json is a JSON object ({{...}}); this is a JSON {type(config).__name__}.")
    return config


def _declared_original(config: dict) -> int | None:
    """original_max_position_embeddings where a config gives it (top, text_config, rope_scaling or
    rope_parameters), for the methods whose RopeScaling does not hold it (linear, dynamic)."""
    where = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    for source in (where, where.get("rope_scaling"), where.get("rope_parameters")):
        if isinstance(source, dict) and source.get("original_max_position_embeddings") is not None:
            value = source["original_max_position_embeddings"]
            return pe_core.RopeScaling("yarn", 1.0, value).original_length  # validated as RopeScaling does
    return None


def _clamp(name: str, value: float, low: float, high: float, notices: list[str]) -> float:
    if low <= value <= high:
        return value
    clamped = min(max(value, low), high)
    notices.append(f"The config's {name} {format_number(value)} is outside {format_number(low)}.."
                   f"{format_number(high)}; using {format_number(clamped)}.")
    return clamped


def view_from_config(config: dict) -> tuple[ContextView, list[str]]:
    """A view of a model's config.json (read by pe_core.rope_from_config), and one-line notices of
    what the page had to assume or clamp.

    trained: the scaling's original length; for linear and dynamic, original_max_position_embeddings
    where the config gives it, else max_position_embeddings / factor (linear) or
    max_position_embeddings (dynamic, and no scaling). target: max_position_embeddings when it is
    longer, else factor x trained (4 x trained with no scaling, shown against every method at
    factor 4). Raises ValueError (one line, naming the key) for a config that lacks what is needed.
    """
    rope = pe_core.rope_from_config(config)
    notices: list[str] = []
    rope_scaling, max_length = rope.scaling, rope.max_length
    method = NONE if rope_scaling is None else rope_scaling.method
    factor = DEFAULT_FACTOR if rope_scaling is None else rope_scaling.factor
    declared = _declared_original(config)
    if method != NONE and rope_method(method).original_length == ORIGINAL_LENGTH_KEYS[0]:
        trained = rope_scaling.original_length
    elif declared is not None:
        trained = declared
    elif method != NONE and rope_methods.method_entry(method).stretched_max_length and max_length is not None:
        trained = max(1, round(max_length / factor))
        notices.append(
            f"The config gives no original_max_position_embeddings: trained length taken as "
            f"max_position_embeddings / factor = {trained:,}; set it if the model was trained longer."
        )
    elif max_length is not None:
        trained = max_length
    else:
        trained = DEFAULT_TRAINED
        notices.append(f"The config gives no max_position_embeddings: trained length {DEFAULT_TRAINED:,} assumed.")
    if max_length is not None and max_length > trained:
        target = max_length
    else:
        target = round(factor * trained)
    values = {
        "d": int(_clamp("rotary dimension", rope.d, 2, D_MAX, notices)),
        "base": _clamp("rope_theta", rope.base, 1.0, BASE_MAX, notices),
        "method": method,
        "factor": _clamp("factor", factor, 1.0, FACTOR_MAX, notices),
        "trained": int(_clamp("trained length", trained, 1, LENGTH_MAX, notices)),
        "target": int(_clamp("target length", target, 1, LENGTH_MAX, notices)),
        "max_positions": 0 if max_length is None else int(_clamp("max_position_embeddings", max_length, 0,
                                                                   LENGTH_MAX, notices)),
    }
    if rope_scaling is not None:
        s = rope_scaling
        values |= {
            "low_freq": _clamp("low_freq_factor", s.low_freq_factor, 0.0, PARAMETER_MAX, notices),
            "high_freq": _clamp("high_freq_factor", s.high_freq_factor, 0.0, PARAMETER_MAX, notices),
            "beta_fast": _clamp("beta_fast", s.beta_fast, 0.0, PARAMETER_MAX, notices),
            "beta_slow": _clamp("beta_slow", s.beta_slow, 0.0, PARAMETER_MAX, notices),
            "truncate": bool(s.truncate),
            "mscale": _clamp("mscale", s.mscale or 0.0, 0.0, MSCALE_MAX, notices),
            "mscale_all_dim": _clamp("mscale_all_dim", s.mscale_all_dim or 0.0, 0.0, MSCALE_MAX, notices),
            "attention_factor": _clamp("attention_factor", s.attention_factor or 0.0, 0.0, MSCALE_MAX, notices),
            "short_factor": s.short_factor, "long_factor": s.long_factor,
        }
    view, more = checked_view(ContextView(**values))
    return view, notices + more


def preset_view(key: str) -> ContextView:
    """The view of a model preset (explorer.model_configs), from its config.json file."""
    return view_from_config(load_config(model_config(key).key))[0]


def view_values(view: ContextView) -> dict[str, object]:
    """The controls' values that show ``view``: the sidebar's d and n (the nearest stop of its
    base scale), the exact base (0 when n holds it), and every page key."""
    on_scale = view.base in N_OPTIONS
    values: dict[str, object] = {
        "d": view.d, "n": view.base if on_scale else nearest_n(min(max(view.base, N_OPTIONS[0]), N_OPTIONS[-1])),
        "base": 0.0 if on_scale else float(view.base),
    }
    for field in fields(ContextView):
        if field.name in PAGE_KEYS:
            value = getattr(view, field.name)
            values[field.name] = float(value) if isinstance(value, float) else value
    return values


def parse_base(raws: list[str]) -> tuple[float, list[str]]:
    """The URL's exact base: a number in (1, BASE_MAX], or 0 (the sidebar's n) with a notice."""
    notices: list[str] = []
    raw = last_value("base", raws, notices)
    value = read_number(raw)
    if value == 0.0 or (value is not None and 1.0 < value <= BASE_MAX):  # 0: the sidebar's n
        return value, notices
    if value is not None and value > BASE_MAX:
        notices.append(f"URL: base={echo(raw)} is above {format_number(BASE_MAX)}; using {format_number(BASE_MAX)}.")
        return BASE_MAX, notices
    if not raw:
        problem = "base is empty"
    elif value is None:
        problem = f"base={echo(raw)} is not a finite number"
    else:
        problem = f"base={echo(raw)} must be greater than 1"
    notices.append(f"URL: {problem}; using the sidebar's n.")
    return 0.0, notices


#: Characters a message from a config may not carry into Streamlit's Markdown as they are.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def one_line(message: str, limit: int = 300) -> str:
    """A message about a visitor's config for st.error: one line, at most ``limit`` characters,
    every Markdown character escaped (the message quotes the config's values)."""
    flat = " ".join(str(message).split())
    if len(flat) > limit:
        flat = flat[: limit - 3] + "..."
    return _MARKDOWN.sub(r"\\\1", flat)


# ---------------------------------------------------------------------------------- pitfalls


def _yarn_factor_pitfall(view: ContextView) -> str:
    """transformers #38224: a YaRN factor replaced by max_position_embeddings / original."""
    L, L0, s = view.target, view.trained, view.factor
    if not view.max_positions:
        return ""
    ratio = view.max_positions / L0
    if math.isclose(ratio, s):
        return ""
    if ratio >= 1:
        old = coverage(replace(view, factor=ratio, attention_factor=0.0), "yarn")
        then = (f"at L = {L:,} tokens {pairs_text(int(old.unseen.sum()))} would meet angles unseen in "
                f"training, against {int(coverage(view).unseen.sum())} with factor {s:g}")
    else:
        then = "a factor below 1 would shrink the context instead"
    return (
        f"**YaRN's factor and transformers #38224.** transformers releases of 2025 before PR #40320 replaced "
        f"a YaRN factor by max_position_embeddings / original_max_position_embeddings whenever rope_scaling "
        f"holds original_max_position_embeddings: here {view.max_positions:,} / {L0:,} = {ratio:g} instead "
        f"of {s:g}: {then}. Qwen's suggested long-context dict leaves max_position_embeddings at 32,768 and "
        f"so meant factor 1; with such a release, set max_position_embeddings to {round(s * L0):,}."
    )


def _meta_reference_pitfall(view: ContextView) -> str:
    """llama-models #166: Meta's reference apply_scaling hard-codes Llama 3.1's parameters."""
    L, L0, s = view.target, view.trained, view.factor
    meta = (META_LLAMA3["factor"], META_LLAMA3["low_freq"], META_LLAMA3["high_freq"], META_LLAMA3["trained"])
    if (s, view.low_freq, view.high_freq, L0) == meta:
        return ""
    reference = pe_core.RopeScaling("llama3", META_LLAMA3["factor"], META_LLAMA3["trained"])
    theirs = pe_core.angle_coverage(view.d, view.base, L0, L, scaling=reference)
    ours = coverage(view)
    differ = int(np.sum(~np.isclose(theirs.scaled, ours.scaled, rtol=1e-12, atol=0.0)))
    return (
        f"**Meta's reference apply_scaling and llama-models #166.** Meta's reference code hard-codes "
        f"scale_factor 8, low_freq_factor 1, high_freq_factor 4 and old_context_len 8192; this "
        f"configuration says factor {s:g}, {view.low_freq:g}, {view.high_freq:g} and {L0:,} (Llama 3.2's "
        f"config says 32). Code copied from the reference gives {differ} of the {view.pairs} pairs other "
        f"frequencies: at L = {L:,}, angles unseen in training in {pairs_text(int(theirs.unseen.sum()))} "
        f"there, in {int(ours.unseen.sum())} here."
    )


def _dynamic_length_pitfall(view: ContextView) -> str:
    """Dynamic NTK reads max_position_embeddings, and its frequencies follow the sequence length."""
    L0 = view.trained
    start = view.max_positions or L0
    given = f"({start:,})" if view.max_positions else f"(none given here, so this page takes L0, {L0:,})"
    text = (
        f"**Dynamic NTK reads max_position_embeddings.** transformers' dynamic NTK divides by "
        f"max_position_embeddings {given}, never by original_max_position_embeddings, and changes nothing "
        "until the sequence is longer than that"
    )
    if start > L0:
        at = pe_core.angle_coverage(view.d, view.base, L0, start)
        text += (f": this model was trained on {L0:,}, so up to {start:,} tokens it runs plain RoPE, and at "
                 f"{start:,} angles unseen in training in {pairs_text(int(at.unseen.sum()))}")
    return text + (". Its frequencies also follow the sequence length, so keys cached at one length "
                   "were turned with other frequencies than the queries that meet them later.")


def _deepseek_mscale_pitfall(view: ContextView) -> str:
    """DeepSeek-V3 puts YaRN's mscale_all_dim factor in its softmax scale, not in cos and sin."""
    if view.mscale_all_dim <= 0:
        return ""
    s = view.factor
    scale = 0.1 * view.mscale_all_dim * math.log(s) + 1 if s > 1 else 1.0
    return (
        f"**Where DeepSeek puts YaRN's factor.** With mscale and mscale_all_dim both given, cos and sin carry "
        f"a = m(s, mscale) / m(s, mscale_all_dim) = {attention_factor(view, 'yarn'):.6g}; DeepSeek-V3's "
        f"attention (its code, and transformers' yarn_apply_mscale) multiplies its softmax scale by "
        f"m(s, mscale_all_dim)² = {scale * scale:.6g} instead, with m(s, a) = 0.1 a ln s + 1."
    )


#: The pitfalls that bit real users of a method, by method: each returns its paragraph for a view
#: that meets it ("" otherwise).
PITFALLS = {
    "yarn": (_yarn_factor_pitfall, _deepseek_mscale_pitfall),
    "llama3": (_meta_reference_pitfall,),
    "dynamic": (_dynamic_length_pitfall,),
}


def pitfalls(view: ContextView) -> list[str]:
    """The pitfalls that bit real users, for the settings that meet them (one paragraph each)."""
    return [note for pitfall in PITFALLS.get(view.method, ()) if (note := pitfall(view))]


# ------------------------------------------------------------------------- reproduce this


def contexts_code(view: ContextView, library: str = "numpy") -> str:
    """Standalone NumPy (or PyTorch) code for the page's numbers at ``view``: every method's
    frequencies as transformers computes them (each method's fragment, explorer.rope_methods), the
    angle coverage per pair, the Play frames, the dot products by offset and YaRN's two ramps;
    ``result`` maps each download to its array."""
    torch = library == "torch"
    lib = "torch" if torch else "np"
    axis = "dim" if torch else "axis"

    def arange(args: str) -> str:
        return f"torch.arange({args}, dtype=torch.float64)" if torch else f"np.arange({args}, dtype=np.float64)"

    def columns(items: str) -> str:
        return f"torch.stack({items}, dim=1)" if torch else f"np.column_stack({items})"

    clip = "torch.clamp" if torch else "np.clip"
    index, offsets = arange("d // 2"), arange("count")
    empty = "torch.empty(count, dtype=torch.float64)" if torch else "np.empty(count)"
    as_number = "unseen.to(torch.float64)" if torch else "unseen * 1.0"
    targets = coverage_frames(view)[0]
    count = curve_offsets(view)
    shown = available_methods(view)
    scalings = {method: scaling(view, method) for method in shown if method != NONE}
    code = f"# Longer contexts ({view.describe()})\n" + reproduce.imports(library) + "import math\n\n"
    code += (
        f"d, base = {view.d}, {reproduce.literal(view.base)}  # rotary coordinates (head_dim x partial_rotary_factor), "
        "rope_theta\n"
        f"L0, L = {view.trained}, {view.target}  # trained length (original_max_position_embeddings), target length\n"
        f"s = {reproduce.literal(view.factor)}  # the scaling factor\n"
        f"method = {view.method!r}\n"
        f"beta_fast, beta_slow, truncate = {reproduce.literal(view.beta_fast)}, {reproduce.literal(view.beta_slow)}, "
        f"{view.truncate}  # YaRN's, for its ramp below\n\n"
        f"exponent = {arange('0, d, 2')} / d\n"
        "theta = base ** -exponent  # θ_i = b^(-2i/d)\n"
        "wavelength = 2 * math.pi / theta  # λ_i\n\n\n"
        "# Each method as transformers computes it, with this page's parameters: θ'_i and the attention factor a\n"
        + "\n\n".join(rope_methods.fragment(scaling_of, library) for scaling_of in scalings.values())
        + ("\n\n" if scalings else "")
        + ("" if "yarn" in scalings else rope_methods.YARN_RAMP_CODE.replace("{xp}", lib))
        + "SCALED = {\n    \"none\": lambda theta, d, base, length: (theta, 1.0),\n"
        + "".join(f"    {method!r}: {rope_methods.method_entry(method).function},\n" for method in scalings)
        + "}\n\n\n"
        "def frequencies(m, length):\n"
        '    """θ\'_i of method m on a sequence of `length` tokens."""\n'
        "    return SCALED[m](theta, d, base, length)[0]\n\n\n"
        "def attention(m):\n"
        '    """The factor transformers multiplies cos and sin by (so every score by its square)."""\n'
        "    return SCALED[m](theta, d, base, L)[1]\n\n\n"
        "def correction(turns):\n"
        '    """YaRN\'s bound c(beta): the (fractional) pair index whose wavelength fits `turns` turns into L0."""\n'
        "    return d * math.log(L0 / (turns * 2 * math.pi)) / (2 * math.log(base))\n\n\n"
        "def coverage(m, length):\n"
        '    """Largest angle met in training (L0 θ_i), at `length` (length θ\'_i), and whether it is new."""\n'
        "    seen, needed = L0 * theta, length * frequencies(m, length)\n"
        "    # (an arc longer by float64 rounding only, as linear interpolation by exactly L/L0 leaves, is covered)\n"
        "    return seen, needed, (seen < 2 * math.pi) & (needed > seen * (1 + 1e-12))\n\n\n"
    )
    code += (
        "# Per pair, the chosen method at the target length\n"
        "seen, needed, unseen = coverage(method, L)\n"
        "ratio = frequencies(method, L) / theta\n"
        f"pairs = {columns(f'[{index}, theta, wavelength, seen / (2 * math.pi), ratio, seen, needed, {as_number}]')}\n"
        "\n# Every method side by side: θ'/θ per pair\n"
        f"methods = {list(shown)!r}\n"
        f"ratios = {columns(f'[{index}, wavelength] + [frequencies(m, L) / theta for m in methods]')}\n"
        "\n# Play: turns per pair over the trained length, and at each target length T, plain and with the method\n"
        f"targets = {[int(T) for T in targets]!r}\n"
        f"play = [{arange('d // 2')}, L0 * theta / (2 * math.pi)]\n"
        "for T in targets:\n"
        "    play += [T * theta / (2 * math.pi), T * frequencies(method, T) / (2 * math.pi)]\n"
        f"play = {columns('play')}\n"
        "\n# The score of q = k = (1, ..., 1) by offset: a² Σ 2cos(δθ'_i), plain and with the method, in blocks\n"
        f"count = {count}  # offsets 0 .. count - 1\n"
        "after_theta, a = frequencies(method, L), attention(method)\n"
        f"before, after = {empty}, {empty}\n"
        "for first in range(0, count, 4096):\n"
        f"    delta = {arange('first, min(count, first + 4096)')}[:, None]\n"
        f"    before[first : first + 4096] = 2 * {lib}.cos(delta * theta).sum({axis}=1)\n"
        f"    after[first : first + 4096] = 2 * a * a * {lib}.cos(delta * after_theta).sum({axis}=1)\n"
        f"dot = {columns(f'[{offsets}, before, after]')}\n"
        "\n# YaRN's ramp, its code against its paper (θ'_i = (1 - w_i) θ_i + w_i θ_i / s)\n"
        "code_w = yarn_ramp(d, base, L0, beta_fast, beta_slow, truncate)  # linear in the pair index i\n"
        f"paper_w = 1 - {clip}((L0 / wavelength - beta_slow) / (beta_fast - beta_slow), 0, 1)  # linear in L0/λ_i\n"
        f"ramp = {columns(f'[{index}, code_w, paper_w, 1 - code_w + code_w / s, 1 - paper_w + paper_w / s]')}\n"
    )
    chosen = method_label(view) if view.method != NONE else "method: none"
    return code + reproduce.result_code({
        "contexts_coverage": "play",
        "contexts_pairs": "pairs",
        "contexts_methods": "ratios",
        "contexts_dot": "dot",
        "contexts_yarn_ramp": "ramp",
    }) + (
        "\n# Pairs meeting unseen angles at L, plain and with the method; YaRN's two ramps apart\n"
        'plain_unseen = coverage("none", L)[2]\n'
        "gap = abs(code_w - paper_w)\n"
    ) + reproduce.numbers_code({
        "plain RoPE": ("(int(plain_unseen.sum()), d // 2)", "d"),
        chosen: ("(int(unseen.sum()), d // 2)", "d"),
        "attention factor a": ("a", ".6g"),
        "scores × a²": ("a * a", ".6g"),
        "bounds c(β_fast), c(β_slow)": ("(correction(beta_fast), correction(beta_slow))", ".2f"),
        "largest |w_code − w_paper|": ("float(gap.max())", ".3g"),
        "pairs where they differ": ("(int((gap > 1e-12).sum()), d // 2)", "d"),
    })
