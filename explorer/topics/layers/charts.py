"""Your model, layer by layer: the figures (the stack at a glance; wavelengths per pair against the windows and
lengths; turns per pair as the target grows, with Play; the score by offset per layer type; Llama 4's query
scale) and the tables of their data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer import animation
from explorer.figures import ENVELOPE_HOVER, FONT_PX, MARGIN, chart_title, figure, line_xy, log_axis
from explorer.settings import format_number
from explorer.topics.layers.analysis import (
    RUNS_SHOWN,
    KindCoverage,
    LayerKind,
    ModelStack,
    coverage,
    head_frequencies,
    layer_runs,
    play_targets,
    query_scale_steps,
    score_by_offset,
)

#: One colour per layer kind, in the order the model first uses them (colour-blind safe, on both themes).
KIND_COLOURS = ("#2166ac", "#d6604d", "#1b7837", "#762a83", "#b8860b", "#4d4d4d")
#: A layer without position: drawn hollow, in grey.
NO_POSITION_COLOUR = "#8c8c8c"


def kind_colour(stack: ModelStack, kind: LayerKind) -> str:
    return KIND_COLOURS[stack.kinds.index(kind) % len(KIND_COLOURS)] if kind.rotary else NO_POSITION_COLOUR


def base_text(kind: LayerKind) -> str:
    return format_number(kind.rope.base) if kind.rope is not None else "no position"


def reach_text(kind: LayerKind) -> str:
    """'window 1,024', 'chunk 8,192' or 'all earlier keys'."""
    if kind.window is not None:
        return f"window {kind.window:,}"
    return f"chunk {kind.chunk:,}" if kind.chunk is not None else "all earlier keys"


def layer_summary(stack: ModelStack, kind: LayerKind) -> str:
    """One layer's marks in words (the stack's hover)."""
    if not kind.rotary:
        what = "no position" + (": its queries scaled by position (Llama 4)" if kind.query_scale else "")
    else:
        what = (f"base {base_text(kind)}, scaling {kind.scaling_text()}, {kind.rotated_pairs} of {kind.head_pairs} "
                "pairs rotate")
    return f"{kind.layer_type}: {what}; {reach_text(kind)}"


def stack_figure(stack: ModelStack, *, title: str) -> go.Figure:
    """One mark per decoder layer, left to right, one row per layer kind (named in the legend, which a phone's
    width keeps readable where a column of row labels took a third of it): its colour; a filled circle rotates, a
    hollow one carries no position; hover says its type, base, scaling, rotated pairs and window or chunk."""
    size = 14 if len(stack.layers) <= 40 else 10 if len(stack.layers) <= 80 else 6
    traces = []
    for row, kind in enumerate(stack.kinds):
        traces.append({
            "type": "scatter", "x": list(kind.layers), "y": [-row] * len(kind.layers), "mode": "markers",
            "name": f"{kind.name} ({len(kind.layers)})",
            "marker": {"size": size, "symbol": "circle" if kind.rotary else "circle-open",
                       "color": kind_colour(stack, kind), "line": {"width": 2}},
            "text": [layer_summary(stack, kind)] * len(kind.layers),
            "hovertemplate": "layer %{x}<br>%{text}<extra></extra>",
        })
    return figure(traces, {
        "title": chart_title(title), "height": 200 + 40 * len(stack.kinds), "margin": MARGIN | {"l": 20, "b": 110},
        "xaxis": {"title": {"text": "layer (input → output)"}, "range": [-0.8, len(stack.layers) - 0.2],
                  "zeroline": False},
        "yaxis": {"visible": False, "range": [-len(stack.kinds) + 0.5, 0.5]},
        "legend": {"orientation": "h", "y": -0.35}, "hoverlabel": {"namelength": -1},
    })


def _edges(stack: ModelStack, target: int) -> list[tuple[float, str, str, str]]:
    """The lengths drawn across a chart: each window or chunk (in its kind's colour), the trained length and
    the target: (value, label, colour, dash)."""
    edges = [(float(kind.seen), f"{reach_text(kind)} ({kind.name})", kind_colour(stack, kind), "dash")
             for kind in stack.kinds if kind.seen is not None and kind.rotary]
    edges.append((float(stack.trained), f"trained length {stack.trained:,}", "#555555", "dot"))
    if target != stack.trained:
        edges.append((float(target), f"target {target:,}", "#b2182b", "dashdot"))
    return edges


def wavelength_figure(stack: ModelStack, target: int, *, title: str) -> go.Figure:
    r"""Each rotating kind's wavelengths :math:`2\pi/\theta'_i` per pair of its head on a log axis, against the
    windows, the trained length and the target (horizontal lines); the pairs a proportional or partial head
    leaves unrotated have none: a band in the kind's colour marks them."""
    traces, every = [], []
    for kind in stack.kinds:
        if not kind.rotary:
            continue
        wavelength = coverage(kind, stack.trained, target).wavelength
        shown = np.isfinite(wavelength)
        every.append(wavelength[shown])
        traces.append({
            "type": "scatter", "x": np.flatnonzero(shown), "y": wavelength[shown].astype(np.float32),
            "name": kind.name, "mode": "lines", "line": {"color": kind_colour(stack, kind), "width": 2.5},
            "hovertemplate": "pair i = %{x}<br>λ_i = %{y:.4g} positions<br>" + kind.name + "<extra></extra>",
        })
    edges = _edges(stack, target)
    values = np.concatenate([*every, [value for value, *_ in edges]])
    # The pairs a proportional or partial head leaves unrotated: a band per kind, in its colour.
    unrotated = [kind for kind in stack.kinds if kind.rotary and kind.unrotated_pairs]
    bands = [{"type": "rect", "xref": "x", "yref": "y domain", "x0": kind.rotated_pairs - 0.5,
              "x1": kind.head_pairs - 0.5, "y0": 0, "y1": 1, "fillcolor": kind_colour(stack, kind), "opacity": 0.12,
              "line": {"width": 0}, "layer": "below"} for kind in unrotated]
    band_labels = [{"text": f"{kind.name}: pairs {kind.rotated_pairs}-{kind.head_pairs - 1} unrotated (no position)",
                    "x": (kind.rotated_pairs + kind.head_pairs - 1) / 2, "yref": "y domain", "y": 0.97 - 0.07 * n,
                    "showarrow": False, "font": {"size": FONT_PX, "color": kind_colour(stack, kind)}}
                   for n, kind in enumerate(unrotated)]
    widest = max(kind.head_pairs for kind in stack.kinds if kind.rotary)
    return figure(traces, {
        "title": chart_title(title), "height": 480, "margin": MARGIN | {"b": 120},
        "xaxis": {"title": {"text": "pair i of the head (fast → slow)"}, "range": [-0.5, widest - 0.5]},
        "yaxis": log_axis(values) | {"title": {"text": "wavelength λ_i = 2π/θ'_i (positions)"}},
        "legend": {"orientation": "h", "y": -0.2}, "hoverlabel": {"namelength": -1},
        "shapes": bands + [{"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "y0": value, "y1": value,
                            "line": {"color": colour, "dash": dash, "width": 1.5}} for value, _, colour, dash in edges],
        # The target's label at the right: at the left it sat on the trained length's, a factor 2 below.
        "annotations": [{"text": label, "xref": "x domain", "x": 0.99 if label.startswith("target") else 0.01,
                         "xanchor": "right" if label.startswith("target") else "left", "y": math.log10(value),
                         "yanchor": "bottom", "showarrow": False, "font": {"size": FONT_PX, "color": colour}}
                        for value, label, colour, _ in edges] + band_labels,
    })


def turns_frames(stack: ModelStack, target: int) -> tuple[np.ndarray, dict[str, list[KindCoverage]]]:
    """Play's targets and, per rotating kind, its coverage at each."""
    rotating = [kind for kind in stack.kinds if kind.rotary]
    values = sum(kind.head_pairs for kind in rotating)
    targets = play_targets(stack, target, animation.frame_count(2 * values))
    return targets, {kind.name: [coverage(kind, stack.trained, int(T)) for T in targets] for kind in rotating}


def turns_figure(stack: ModelStack, target: int, *, title: str) -> go.Figure:
    """Per rotating kind, the turns each pair makes over the offsets its layers see at a length T
    (:math:`\\min(T, W)\\,\\theta'_i/2\\pi`), solid, and in training (dotted), with a line at one turn; a
    cross marks each pair that meets angles unseen in training. Play grows T: a window stops the growth."""
    targets, frames_by_kind = turns_frames(stack, target)
    rotating = [kind for kind in stack.kinds if kind.rotary]
    active = int(np.flatnonzero(targets == target)[0])
    hover = "pair i = %{x}<br>%{fullData.name}: %{y:.4g} turns<extra></extra>"

    def frame_data(row: int) -> list[dict]:
        return [{"y": frames_by_kind[kind.name][row].turns_target.astype(np.float32),
                 "marker": {"size": np.where(frames_by_kind[kind.name][row].unseen, 8, 0).astype(np.uint8)}}
                for kind in rotating]

    first = frame_data(active)
    traces = [
        {"type": "scatter", "x0": 0, "dx": 1, "name": f"{kind.name}, in training ({stack.trained:,})",
         "mode": "lines", "line": {"color": kind_colour(stack, kind), "dash": "dot", "width": 1.5},
         "hovertemplate": hover, "y": frames_by_kind[kind.name][0].turns_trained.astype(np.float32)}
        for kind in rotating
    ] + [
        {"type": "scatter", "x0": 0, "dx": 1, "name": f"{kind.name}, at T (✕: unseen angles)", "mode": "lines+markers",
         "line": {"color": kind_colour(stack, kind), "width": 2.5}, "hovertemplate": hover, **data,
         "marker": {"symbol": "x", "color": "#b2182b", "line": {"width": 0}} | data["marker"]}
        for kind, data in zip(rotating, first, strict=True)
    ]
    every = np.concatenate([c.turns_target for runs in frames_by_kind.values() for c in runs]
                           + [runs[0].turns_trained for runs in frames_by_kind.values()])
    y_axis = log_axis(every) | {"title": {"text": "turns over the offsets seen"}}
    layout = {
        "title": chart_title(title), "height": 500, "margin": MARGIN | {"b": 150},
        "xaxis": {"title": {"text": "pair i of the head (fast → slow)"}}, "yaxis": y_axis,
        "legend": {"orientation": "h", "y": -0.24}, "hoverlabel": {"namelength": -1},
        "shapes": [{"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "y0": 1, "y1": 1,
                    "line": {"color": "grey", "dash": "dash", "width": 1}}],
        "annotations": [{"text": "one turn", "xref": "x domain", "x": 0.99, "xanchor": "right", "y": 0,
                         "yanchor": "bottom", "showarrow": False, "font": {"size": FONT_PX}}],
    }
    moving = list(range(len(rotating), 2 * len(rotating)))
    frames = [animation.frame(frame_data(row), traces=moving, name=str(int(T))) for row, T in enumerate(targets)]
    return animation.play_figure(traces, layout, frames, label="Play's length T", redraw=False, active=active,
                                 labels=[f"{int(T):,}" for T in targets])


def scored_kinds(stack: ModelStack) -> list[LayerKind]:
    """The kinds whose layers score a query against keys: all but linear attention."""
    return [kind for kind in stack.kinds if kind.layer_type != "linear_attention"]


def score_figure(stack: ModelStack, count: int, target: int, *, title: str) -> go.Figure:
    """Per kind, the all-ones score by offset on a text of ``target`` tokens (``score_by_offset``) up to its
    window's or chunk's edge (a vertical line), a kind without position flat at its head size."""
    traces, edges = [], []
    for kind in scored_kinds(stack):
        scores = score_by_offset(kind, count, target)
        traces.append({"type": "scatter", "name": kind.name, "mode": "lines", **line_xy(scores, dtype=np.float32),
                       "line": {"color": kind_colour(stack, kind), "width": 2},
                       "hovertemplate": "offset %{x}<br>score %{y:.6g}<br>" + kind.name
                       + (ENVELOPE_HOVER if scores.size > 2000 else "") + "<extra></extra>"})
        if kind.seen is not None and kind.seen < count:
            edges.append((kind.seen - 0.5, f"{reach_text(kind)}: edge", kind_colour(stack, kind)))
    return figure(traces, {
        "title": chart_title(title), "height": 460, "margin": MARGIN | {"b": 120},
        "xaxis": {"title": {"text": "offset δ = m − n (positions)"}, "range": [0, count - 1]},
        "yaxis": {"title": {"text": "q·k of all-ones q and k"}},
        "legend": {"orientation": "h", "y": -0.22}, "hoverlabel": {"namelength": -1},
        "shapes": [{"type": "line", "x0": x, "x1": x, "yref": "y domain", "y0": 0, "y1": 1,
                    "line": {"color": colour, "dash": "dash", "width": 1.5}} for x, _, colour in edges],
        "annotations": [{"text": label, "x": x, "xanchor": "left", "yref": "y domain", "y": 1 - 0.07 * n,
                         "showarrow": False, "font": {"size": FONT_PX, "color": colour}}
                        for n, (x, label, colour) in enumerate(edges)],
    })


def query_scale_figure(stack: ModelStack, count: int, *, title: str) -> go.Figure:
    """Llama 4's query scale over positions 0 .. count - 1: a step every floor_scale positions."""
    starts, scales = query_scale_steps(stack, count)
    return figure([{"type": "scatter", "name": "query scale", "mode": "lines", "line": {"color": "#762a83",
                                                                                        "shape": "hv"},
                    "x": np.r_[starts, count - 1], "y": np.r_[scales, scales[-1]].astype(np.float32),
                    "hovertemplate": "from position %{x}<br>scale %{y:.6g}<extra></extra>"}], {
        "title": chart_title(title), "height": 380, "margin": MARGIN,
        "xaxis": {"title": {"text": "position p"}}, "yaxis": {"title": {"text": "factor q is multiplied by"}},
        "showlegend": False,
    })


# ------------------------------------------------------------------------------- tables

#: Shorter titles for the table of layer types' widest columns (the full name is the column's help).
TABLE_TITLES: dict[str, str] = {
    "pairs rotating": "rotating",
    "attention factor": "a",
    "no turn in reach": "no turn in W",
    "unseen at target": "unseen at L",
}


def kinds_table(stack: ModelStack, target: int) -> pd.DataFrame:
    """One row per layer kind: its layers, base, scaling, rotating pairs of the head, reach, attention factor,
    pairs that never turn inside the reach, pairs meeting unseen angles at the target."""
    rows = []
    for kind in stack.kinds:
        seen = coverage(kind, stack.trained, target)
        rows.append({
            "layer type": kind.name,
            "layers": f"{len(kind.layers)} ({layer_runs(kind.layers, RUNS_SHOWN)})",
            "base": base_text(kind),
            "scaling": kind.scaling_text() or "n/a",
            "pairs rotating": f"{kind.rotated_pairs} of {kind.head_pairs}",
            "sees": reach_text(kind),
            "attention factor": f"{kind.attention(target):.6g}",
            "no turn in reach": f"{int(seen.beyond_window.sum())}" if kind.seen is not None and kind.rotary else "n/a",
            "unseen at target": f"{int(seen.unseen.sum())}" if kind.rotary else "n/a",
        })
    return pd.DataFrame(rows)


def layers_table(stack: ModelStack, target: int) -> pd.DataFrame:
    """One row per decoder layer: its type, whether it rotates (1) or not (0), base (NaN: none), rotating pairs,
    window and chunk (0: none), whether its queries are scaled (1), attention factor on a text of ``target``
    tokens."""
    rows = []
    for layer in stack.layers:
        kind = stack.kind_of(layer.index)
        rows.append({
            "layer": layer.index, "layer type": layer.layer_type, "rotary": int(layer.rotary),
            "base": kind.rope.base if kind.rope is not None else np.nan,
            "pairs rotating": kind.rotated_pairs, "head pairs": kind.head_pairs,
            "window": layer.window or 0, "chunk": layer.chunk or 0, "query scale": int(layer.query_scale),
            "attention factor": kind.attention(target),
        })
    # Labels as the index: the NPY download holds the numbers alone (a text column cannot go in without pickle).
    return pd.DataFrame(rows).set_index(["layer", "layer type"])


def pairs_table(stack: ModelStack, target: int) -> pd.DataFrame:
    """Per pair of each rotating kind's head: θ'_i, wavelength, turns in training and at the target, flags."""
    frames = []
    for kind in stack.kinds:
        if not kind.rotary:
            continue
        seen = coverage(kind, stack.trained, target)
        theta = head_frequencies(kind, target)
        frames.append(pd.DataFrame({
            "layer type": kind.name, "pair i": np.arange(kind.head_pairs), "θ'_i (rad/position)": theta,
            "wavelength λ_i (positions)": seen.wavelength, "turns in training": seen.turns_trained,
            "turns at target": seen.turns_target, "no turn in reach": seen.beyond_window.astype(int),
            "unseen at target": seen.unseen.astype(int),
        }))
    return pd.concat(frames).set_index("layer type")


def scores_table(stack: ModelStack, count: int, target: int) -> pd.DataFrame:
    """The score by offset on a text of ``target`` tokens, one column per scored kind (empty past its reach)."""
    table = pd.DataFrame({"offset δ": np.arange(count)})
    for kind in scored_kinds(stack):
        scores = np.full(count, np.nan)
        values = score_by_offset(kind, count, target)
        scores[: values.size] = values
        table[kind.name] = scores
    return table


def turns_table(stack: ModelStack, target: int) -> pd.DataFrame:
    """Play's frames: per kind and pair, the turns at each target T."""
    targets, frames_by_kind = turns_frames(stack, target)
    rows = []
    for name, runs in frames_by_kind.items():
        for T, seen in zip(targets, runs, strict=True):
            rows.append(pd.DataFrame({"layer type": name, "T": int(T), "pair i": np.arange(seen.turns_target.size),
                                      "turns": seen.turns_target, "unseen": seen.unseen.astype(int)}))
    return pd.concat(rows).set_index("layer type")


def query_scale_table(stack: ModelStack, count: int) -> pd.DataFrame:
    """The query scale's steps over positions 0 .. count - 1: from which position, which scale."""
    starts, scales = query_scale_steps(stack, count)
    return pd.DataFrame({"from position": starts, "query scale": scales})
