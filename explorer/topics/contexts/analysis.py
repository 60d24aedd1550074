r"""Longer contexts, each method on a view: its scaling (``rope_methods.build_scaling``), the methods
the view can draw and why not the others, the view put right where its parameters cannot go together,
the angles each pair meets (``coverage``) and every method's summary, YaRN's two ramps, the score of
all-ones q and k by offset, and the target lengths Play sweeps with the turns each pair needs there."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

import pe_core
from explorer import animation, rope_methods
from explorer.rope_methods import NONE
from explorer.topics.contexts.view import LENGTH_MAX, ContextView

#: The dot product by offset sums at most this many offsets x pairs per curve (about 30 ms at
#: d = 2048 for its 131,072 offsets), and at most pe_core.MAX_LENGTH offsets (8 MB a curve).
CURVE_TERMS = 2**27
CURVE_MAX_OFFSETS = pe_core.MAX_LENGTH


# ----------------------------------------------------------------------------- methods


def methods() -> tuple[str, ...]:
    """"none" (plain RoPE) and every method the app shows, in the order the page lists them."""
    return (NONE, *rope_methods.method_names())


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
        "beta_fast": view.beta_fast, "beta_slow": view.beta_slow, "partial_rotary_factor": view.partial,
        "truncate": view.truncate,
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


#: The view's parameters that go in pairs, each pair in order (``ordered_pairs``): every method's
#: ordered pairs (explorer.rope_methods), as the view's fields of the same names.
ORDERED_KEYS = tuple(key for name in rope_methods.method_names() for order in rope_methods.method_entry(name).orders
                     for key in (order.first, order.second))


def ordered_pairs(view: ContextView) -> tuple[ContextView, list[str]]:
    """The view with each pair of parameters that must go in order and does not (YaRN's beta_slow
    below beta_fast, llama3's low_freq_factor at most high_freq_factor: ``rope_methods.out_of_order``
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


def unrotated(view: ContextView) -> dict[str, int]:
    """The methods the view can draw that leave pairs unrotated (proportional: θ'_i = 0, which a log axis cannot
    place), with how many."""
    counts = {method: int(np.count_nonzero(coverage(view, method).scaled == 0)) for method in available_methods(view)}
    return {method: count for method, count in counts.items() if count}


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
