"""Images and video (M-RoPE): the figures (the image's tokens coloured by each of their three positions; the
sequence's three position rows; which pairs take which axis, blocked and interleaved; the score between an image
token and the others, with Play moving it; the same read the wrong way) and the tables of their data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import animation
from explorer.figures import FONT_PX, MARGIN, chart_title, figure, line_xy, named_colorscale
from explorer.topics.mrope.analysis import (
    AXES,
    MropeView,
    image_grid,
    image_scores,
    layout_name,
    play_path,
    sliced_axes,
    text_resumes,
)

#: The three axes' colours (temporal, height, width): colour-blind safe, on both themes.
AXIS_COLOURS = ("#1b7837", "#2166ac", "#d6604d")
#: Where each segment kind is shaded on the rows chart.
SEGMENT_COLOURS = {"image": "#2166ac", "video": "#762a83"}


def _panels(count: int, gap: float = 0.06) -> list[tuple[float, float]]:
    width = (1 - gap * (count - 1)) / count
    return [(i * (width + gap), i * (width + gap) + width) for i in range(count)]


def image_axes_figure(view: MropeView, ids: np.ndarray, *, title: str) -> go.Figure:
    """The image's tokens as their grid (rows x columns), three times: coloured by their temporal, height and
    width positions."""
    grid = image_grid(view, ids)
    traces, layout = [], {"title": chart_title(title), "height": 360, "margin": MARGIN | {"t": 90}}
    for axis, (name, (low, high)) in enumerate(zip(AXES, _panels(3), strict=True)):
        suffix = "" if axis == 0 else str(axis + 1)
        traces.append({"type": "heatmap", "z": grid[axis].astype(np.float32), "xaxis": f"x{suffix}",
                       "yaxis": f"y{suffix}", "colorscale": named_colorscale("Viridis"), "showscale": False,
                       "hovertemplate": f"row %{{y}}, column %{{x}}<br>{name} position %{{z}}<extra></extra>"})
        values = grid[axis]
        span = f"{values.min()}" if values.min() == values.max() else f"{values.min()} to {values.max()}"
        layout[f"xaxis{suffix}"] = {"domain": [low, high], "title": {"text": f"{name}: {span}"}}
        # One row axis for the three: the others' labels sat inside the panel before them on a phone.
        layout[f"yaxis{suffix}"] = {"range": [view.image_rows - 0.5, -0.5], "anchor": f"x{suffix}",
                                    "showticklabels": axis == 0, "title": {"text": "row" if axis == 0 else ""}}
    return figure(traces, layout)


def rows_figure(view: MropeView, ids: np.ndarray, *, title: str) -> go.Figure:
    """The sequence's three position rows by token index, its image and video shaded, and where text resumes."""
    traces = [{"type": "scatter", "mode": "lines", "name": name, **line_xy(ids[axis]),
               "line": {"color": colour, "width": 2, "dash": ("solid", "dash", "dot")[axis]},
               "hovertemplate": f"token %{{x}}<br>{name} position %{{y}}<extra></extra>"}
              for axis, (name, colour) in enumerate(zip(AXES, AXIS_COLOURS, strict=True))]
    shapes = [{"type": "rect", "x0": start - 0.5, "x1": stop - 0.5, "yref": "y domain", "y0": 0, "y1": 1,
               "fillcolor": SEGMENT_COLOURS[kind], "opacity": 0.1, "line": {"width": 0}, "layer": "below"}
              for kind, start, stop in view.spans() if kind != "text"]
    # Inside the plot's top edge: above it they ran into the title on a projector.
    notes = [{"text": kind, "x": (start + stop - 1) / 2, "yref": "y domain", "y": 0.99, "yanchor": "top",
              "showarrow": False, "font": {"size": FONT_PX, "color": SEGMENT_COLOURS[kind]}}
             for kind, start, stop in view.spans() if kind != "text"]
    notes += [{"text": f"text resumes at {position}", "x": index, "y": position, "ax": 30, "ay": -30,
               "font": {"size": FONT_PX}} for index, position in text_resumes(view, ids)]
    return figure(traces, {
        "title": chart_title(title), "height": 440, "margin": MARGIN | {"b": 110},
        "xaxis": {"title": {"text": "token index in the sequence"}},
        "yaxis": {"title": {"text": "position id"}}, "legend": {"orientation": "h", "y": -0.22},
        "shapes": shapes, "annotations": notes,
    })


def axes_figure(view: MropeView, *, title: str) -> go.Figure:
    """Which axis each pair takes with the model's sections, blocked (Qwen2-VL, Qwen2.5-VL) and interleaved
    (Qwen3-VL) as the models' code slices them; the model's own layout marked."""
    rows = {layout_name(interleaved): sliced_axes(view.d, view.sections, interleaved) for interleaved in (False, True)}
    labels = [f"{name}{' (this model)' if (name == 'interleaved') == view.interleaved else ' (misread)'}"
              for name in rows]
    scale = [[0, AXIS_COLOURS[0]], [1 / 3, AXIS_COLOURS[0]], [1 / 3, AXIS_COLOURS[1]], [2 / 3, AXIS_COLOURS[1]],
             [2 / 3, AXIS_COLOURS[2]], [1, AXIS_COLOURS[2]]]
    values = np.array(list(rows.values()), dtype=np.float32)
    return figure([{
        "type": "heatmap", "z": values, "y": labels, "x0": 0, "dx": 1, "zmin": 0, "zmax": 2, "colorscale": scale,
        "text": [[AXES[int(a)] for a in row] for row in values], "xgap": 1,
        "hovertemplate": "pair %{x}: %{text}<br>%{y}<extra></extra>",
        "colorbar": {"tickvals": [1 / 3, 1, 5 / 3], "ticktext": list(AXES), "title": {"text": "axis"}},
    }], {
        "title": chart_title(title), "height": 260, "margin": MARGIN | {"l": 170},
        "xaxis": {"title": {"text": f"pair j (θ_j = b^(−2j/d), d = {view.d})"}},
    })


def axis_counts(axes: np.ndarray) -> str:
    """'22 temporal, 21 height, 21 width pairs'."""
    counts = np.bincount(axes, minlength=3)
    return ", ".join(f"{count} {name}" for count, name in zip(counts, AXES, strict=True)) + " pairs"


def _score_heatmap(values: np.ndarray, name: str, **axes: str) -> dict:
    return {"type": "heatmap", "z": values.astype(np.float32), "colorscale": named_colorscale("RdBu"),
            "zmid": 0, "hovertemplate": f"row %{{y}}, column %{{x}}<br>{name}: score %{{z:.5g}}<extra></extra>",
            **axes}


def score_figure(view: MropeView, ids: np.ndarray, *, title: str) -> go.Figure:
    """The score between one image token (the query, marked) and every token of the image, as the model reads
    its sections; Play moves the query across the image (one heatmap frame per stop)."""
    cells = view.image_rows * view.image_cols
    path = play_path(view, animation.frame_count(cells))
    if (view.query_row, view.query_col) not in path:
        path.append((view.query_row, view.query_col))
    frames_values = [image_scores(view, ids, row, col) for row, col in path]
    active = path.index((view.query_row, view.query_col))
    every = np.concatenate([v.ravel() for v in frames_values])
    low, high = float(every.min()), float(every.max())

    def marker(row: int, col: int) -> dict:
        return {"type": "scatter", "x": [col], "y": [row], "mode": "markers", "hoverinfo": "skip",
                "marker": {"symbol": "x", "size": 14, "color": "black", "line": {"width": 2}}}

    traces = [_score_heatmap(frames_values[active], layout_name(view.interleaved)) | {"zmin": low, "zmax": high},
              marker(*path[active]) | {"name": "query", "showlegend": False}]
    layout = {"title": chart_title(title), "height": 520, "margin": MARGIN,
              "xaxis": {"title": {"text": "column of the image (δw from the ✕)"}},
              "yaxis": {"title": {"text": "row (δh)"}, "autorange": "reversed"}}
    frames = [animation.frame([{"type": "heatmap", "z": values.astype(np.float32)}, marker(row, col)], traces=[0, 1],
                              name=f"{row},{col}") for values, (row, col) in zip(frames_values, path, strict=True)]
    return animation.play_figure(traces, layout, frames, label="query at row, column", redraw=True,
                                 frame_ms=animation.PLAY_HEATMAP_FRAME_MS, active=active,
                                 labels=[f"{row},{col}" for row, col in path])


def wrong_reading_figure(view: MropeView, ids: np.ndarray, *, title: str) -> go.Figure:
    """The query's scores over the image as the model reads its sections, beside the same positions read with the
    other layout (Qwen3-VL's interleaved sections read as blocks, or the reverse: alibaba/MNN #4133)."""
    right, wrong = image_scores(view, ids), image_scores(view, ids, misread=True)
    low, high = float(min(right.min(), wrong.min())), float(max(right.max(), wrong.max()))
    traces, layout = [], {"title": chart_title(title), "height": 400, "margin": MARGIN | {"t": 90}}
    names = (f"{layout_name(view.interleaved)} (as the model)", f"{layout_name(not view.interleaved)} (misread)")
    for index, (values, name, (start, end)) in enumerate(zip((right, wrong), names, _panels(2), strict=True)):
        suffix = "" if index == 0 else "2"
        traces.append(_score_heatmap(values, name, xaxis=f"x{suffix}", yaxis=f"y{suffix}")
                      | {"zmin": low, "zmax": high, "showscale": index == 1})
        layout[f"xaxis{suffix}"] = {"domain": [start, end], "title": {"text": name}}
        layout[f"yaxis{suffix}"] = {"autorange": "reversed", "anchor": f"x{suffix}"}
    return figure(traces, layout)


# ------------------------------------------------------------------------------- tables


def positions_table(view: MropeView, ids: np.ndarray) -> pd.DataFrame:
    """Every token: its segment and its three positions."""
    kinds = np.empty(view.length, dtype=object)
    for kind, start, stop in view.spans():
        kinds[start:stop] = kind
    return pd.DataFrame({"token": np.arange(view.length), **{name: ids[axis] for axis, name in enumerate(AXES)}},
                        index=pd.Index(kinds, name="segment"))


def axes_table(view: MropeView) -> pd.DataFrame:
    """Per pair: its axis (0 temporal, 1 height, 2 width), blocked and interleaved as the models slice them."""
    return pd.DataFrame({"pair j": np.arange(view.d // 2), "blocked": sliced_axes(view.d, view.sections, False),
                         "interleaved": sliced_axes(view.d, view.sections, True)})


def scores_table(view: MropeView, ids: np.ndarray) -> pd.DataFrame:
    """Per image token: its row and column, its score with the query as the model reads the sections, and misread."""
    right, wrong = image_scores(view, ids), image_scores(view, ids, misread=True)
    rows, cols = np.indices(right.shape)
    return pd.DataFrame({"row": rows.ravel(), "column": cols.ravel(), "score": right.ravel(),
                         "score misread": wrong.ravel()})


#: The cos and sin download holds at most this many tokens (d columns each: about 1M values at d = 128); the
#: reproduce-this code computes them for any length.
CACHE_TOKENS = 4096


def cache_table(view: MropeView, ids: np.ndarray) -> pd.DataFrame:
    """cos and sin (half layout) of the first CACHE_TOKENS tokens, as the model's rotary embedding returns them
    (``pe_core.mrope_cache``): one row per token."""
    shown = ids[:, :CACHE_TOKENS]
    cos, sin = pe_core.mrope_cache(shown, view.d, view.base, sections=view.sections, interleaved=view.interleaved)
    columns = [f"cos {j}" for j in range(view.d)] + [f"sin {j}" for j in range(view.d)]
    return pd.DataFrame(np.concatenate([cos, sin], axis=1), columns=columns,
                        index=pd.RangeIndex(shown.shape[1], name="token"))
