r"""Similarity: how alike every position's encoding is to one reference position (seed
001's dot product and SSE against position 20), the position x position dot-product
matrix, and its closed form :math:`\sum_i \cos(\omega_i\delta)`. Analysis, figure
builders and reproduce-this code, without Streamlit (pages/similarity_page.py lays them out).

Every result is exact for what is drawn: the L x L matrix is never built (it depends only on
the offset), and large views are block means of the closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import animation, reproduce
from explorer.figures import (
    ENVELOPE_HOVER,
    HEATMAP_CELLS,
    LINE_MAX_POINTS,
    MARGIN,
    chart_title,
    figure,
    heatmap_figure,
    heatmap_table,
    line_xy,
    range_label,
    round_ticks,
)
from explorer.settings import Settings

#: Similarity page: blocks of positions per axis of the dot-product matrix (square blocks,
#: 226 x 226 cells within figures.HEATMAP_CELLS, ~0.27 MB), and cells of the encoding built
#: to measure dot products when P is too large to build (~2 MB: 128 positions at d = 2048, each drawn as a marker).
SIMILARITY_BLOCKS = math.isqrt(HEATMAP_CELLS)


MEASURED_CELLS = 2**18


#: Above this many measured dot products, the closed-form chart draws them as a dotted line.
MAX_MEASURED_MARKERS = 300


@dataclass(frozen=True)
class SimilarityCurves:
    """Dot product, SSE and cosine of every position k = 0..L-1 against position ``ref``."""

    dot: np.ndarray
    sse: np.ndarray
    cosine: np.ndarray
    ref: int
    from_matrix: bool


def similarity_from_matrix(P: np.ndarray, ref: int) -> SimilarityCurves:
    """The three curves measured on the encoding matrix itself (seed 001's computation).

    Bit for bit ``pe_core.dot_similarity``, ``pe_core.sse`` and ``pe_core.cosine_similarity``
    (tests/topics/test_similarity.py), sharing one P @ P[ref] and one P − P[ref] between them:
    each of those validates P again and the SSE forms P − P[ref] twice (at L x d = 2M cells,
    12 ms of a new setting's run instead of 3). The rows of an encoding are never zero.
    """
    P = np.asarray(P, dtype=np.float64)
    ref = int(ref)
    row = P[ref]
    dot = P @ row
    diff = P - row
    norms = np.linalg.norm(P, axis=1) * np.linalg.norm(row)
    return SimilarityCurves(
        dot=dot,
        sse=np.einsum("kj,kj->k", diff, diff),
        cosine=np.divide(dot, norms, out=np.zeros_like(dot), where=norms > 0),
        ref=ref,
        from_matrix=True,
    )


@dataclass(frozen=True)
class MeasuredDots:
    """Dot products P[k]·P[ref] measured on the encoding, for the positions k = first ..
    first + len(values) - 1, and the closed form f(k − ref) at the same positions computed as
    the snippet computes it (``closed_form_at``): the closed-form chart's points, and its check."""

    first: int
    values: np.ndarray
    closed: np.ndarray


def closed_form_from_encoding(P: np.ndarray, layout: str, offsets: np.ndarray) -> np.ndarray:
    r"""``closed_form_at(offsets, w)`` read off the encoding P of positions 0, 1, 2 ... (even d),
    which holds every cosine it sums: row t's cosine columns are :math:`\cos(t\,\omega_i)`
    computed with the same arithmetic (``pe_core.sin_cos_of_products``), so each row's sum is
    bit for bit closed_form_at's f(t), for none of its sines and cosines again."""
    distances = np.abs(np.asarray(offsets, dtype=np.int64))
    if distances.size == 0:
        return np.zeros(0)
    cosine_columns = pe_core.sine_cosine_columns(P.shape[1], layout)[1]
    # Contiguous, as closed_form_at's rows are: the same sums in the same order.
    cosines = np.ascontiguousarray(P[: int(distances.max()) + 1, cosine_columns])
    return cosines.sum(axis=1)[distances]


def similarity_from_offsets(values_by_offset: np.ndarray, ref: int, d: int) -> SimilarityCurves:
    r"""The three curves from the closed form, with ``values_by_offset[t + L - 1] = f(t)``.

    For an even d every row has :math:`\lVert P[k]\rVert^2 = d/2`, so position k against
    ``ref`` has dot :math:`f(k - ref)`, SSE :math:`d - 2 f(k - ref)` (``sse_by_offset``) and
    cosine :math:`f(k - ref) / (d/2)`.
    """
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    if f.size % 2 == 0 or not 0 <= ref < L:
        raise ValueError(f"need f(t) for t = -(L-1)..L-1 and a reference 0 <= ref < L; got {f.size} values, ref={ref}.")
    ref = int(ref)
    dot = f[L - 1 - ref : 2 * L - 1 - ref]
    return SimilarityCurves(dot=dot, sse=d - 2.0 * dot, cosine=dot / (d / 2), ref=ref, from_matrix=False)


def measure_window(L: int, d: int, ref: int, max_cells: int) -> tuple[int, int]:
    """(first position, count) of the window of at most ``max_cells // d`` consecutive
    positions around ``ref`` that ``measure_around`` builds."""
    count = max(1, min(L, max_cells // d))
    return min(max(0, ref - count // 2), L - count), count


def measure_around(
    L: int, d: int, n: float, *, layout: str, convention: str, ref: int, max_cells: int
) -> tuple[int, np.ndarray]:
    """Dot products P[k]·P[ref] measured on the encoding itself, for a window of at most
    ``max_cells // d`` consecutive positions around ``ref`` (for when P is too large to build).

    Returns (first position of the window, dot products of the window's positions).
    """
    first, count = measure_window(L, d, ref, max_cells)
    return first, window_dots(first, count, d, n, layout=layout, convention=convention, ref=ref)


def window_dots(first: int, count: int, d: int, n: float, *, layout: str, convention: str, ref: int) -> np.ndarray:
    """P[k]·P[ref] for the positions k = first .. first+count-1, measured on the encoding."""
    P = pe_core.positional_encoding(count, d, n, layout=layout, convention=convention, start=first)
    return dots_against(P, d, n, layout=layout, convention=convention, ref=ref)


def dots_against(P: np.ndarray, d: int, n: float, *, layout: str, convention: str, ref: int) -> np.ndarray:
    """P @ P[ref], the encoding's row of position ``ref`` made on its own."""
    return P @ pe_core.positional_encoding(1, d, n, layout=layout, convention=convention, start=ref)[0]


def measured_dots(first: int, count: int, d: int, n: float, *, layout: str, convention: str, ref: int) -> MeasuredDots:
    """``window_dots``, and the closed form at the same positions (``closed_form_at``'s numbers,
    bit for bit): read off the window's own cosines (``closed_form_from_encoding``) when it starts
    at position 0, where it holds every distance to ``ref``, instead of making them again."""
    P = pe_core.positional_encoding(count, d, n, layout=layout, convention=convention, start=first)
    offsets = np.arange(first, first + count) - ref
    closed = (closed_form_from_encoding(P, layout, offsets) if first == 0
              else closed_form_at(offsets, pe_core.frequencies(d, n, convention)))
    return MeasuredDots(first, dots_against(P, d, n, layout=layout, convention=convention, ref=ref), closed)


def closed_form_at(offsets: np.ndarray, w: np.ndarray) -> np.ndarray:
    r""":math:`f(\delta) = \sum_i \cos(\omega_i |\delta|)` at each offset (even d), each angle exact
    (``pe_core.sin_cos_of_products``) and each row summed by NumPy's own sum: the arithmetic of the
    snippet's closed form, so that the page's check of the measured dot products against it is the
    number the snippet prints, to the last bit. (``pe_core.dot_by_offset``, which the charts draw,
    sums in another order for speed: the same values to ~1e-14.)"""
    distances = np.abs(np.asarray(offsets, dtype=np.int64))
    if distances.size == 0:
        return np.zeros(0)
    # Each |δ| once (f is even), row by row as the snippet's f(t) for t = 0 .. max |δ|.
    t = np.arange(int(distances.max()) + 1, dtype=np.float64)
    return pe_core.sin_cos_of_products(t[:, None], np.asarray(w, dtype=np.float64)[None, :])[1].sum(axis=1)[distances]


def metric_labels(ref: int, L: int) -> dict[str, str]:
    """The labels of the page's numbers (its metrics, and its snippet's printed numbers): the
    reference against itself and its neighbour (when there is one), and the closed form's check."""
    labels = {"self": f"P[{ref}]·P[{ref}] = d/2"}
    if L > 1:
        neighbour = neighbour_of(ref, L)
        labels |= {"neighbour": f"P[{neighbour}]·P[{ref}] (neighbour)", "sse": f"SSE to the neighbour {neighbour}"}
    return labels | {"f0": "f(0) = d/2", "check": "max |measured − closed form|"}


def neighbour_of(ref: int, L: int) -> int:
    """The position next to ``ref``: after it, or before it at the end of the sequence."""
    return ref + 1 if ref + 1 < L else ref - 1


def mirrored_offsets(values_from_zero: np.ndarray) -> np.ndarray:
    """f(t) for t = -(L-1)..L-1 from f(0..L-1), since f(-t) = f(t) (cos is even)."""
    half = np.asarray(values_from_zero, dtype=np.float64)
    return np.r_[half[:0:-1], half]


def similarity_figure(curves: SimilarityCurves, *, title: str) -> go.Figure:
    """Seed 001's two plots (dot product, then SSE, against one position) and the cosine,
    stacked over the same range of positions, with a dotted line at the reference position.
    Lines longer than ``figures.LINE_MAX_POINTS`` are drawn as their min/max envelope.

    Built from plain dicts (the layout make_subplots(3, 1, shared_xaxes=True) gives) without
    Plotly's validation (``figures.figure``): make_subplots and add_vline cost ~25 ms of
    validation per slider step, and validating the plain dicts another 5.
    """
    rows = (
        ("dot product", curves.dot, f"P[k]·P[{curves.ref}]"),
        ("SSE", curves.sse, f"SSE ‖P[k] − P[{curves.ref}]‖²"),
        ("cosine", curves.cosine, f"cos(P[k], P[{curves.ref}])"),
    )
    domains = ([0.7, 1.0], [0.35, 0.65], [0.0, 0.3])
    # One fixed range on the three position axes, not "matches": linked axes cost Plotly a
    # second layout pass each time the chart appears (similarity L step 2.25x -> 1.94x the
    # trivial app in benchmarks/latency.py); zooming one panel then leaves the others.
    x_range = [-0.5, len(curves.dot) - 0.5]
    traces, layout, shapes = [], {}, []
    for row, ((name, values, y_title), domain) in enumerate(zip(rows, domains, strict=True), start=1):
        suffix = "" if row == 1 else str(row)
        line = line_xy(values)
        traces.append({
            "type": "scatter",
            **line,
            "name": name,
            "mode": "lines" if values.size > 1 else "markers",  # one position: its point
            "xaxis": f"x{suffix}",
            "yaxis": f"y{suffix}",
            "hovertemplate": f"position k = %{{x}}<br>{y_title} = %{{y:.10g}}"
            + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
        })
        bottom = row == len(rows)
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": [0.0, 1.0]} | (
            {"title": {"text": "position k"}} if bottom else {"showticklabels": False}
        ) | {"range": x_range}
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": domain, "title": {"text": y_title}}
        shapes.append({
            "type": "line", "x0": curves.ref, "x1": curves.ref, "xref": f"x{suffix}", "y0": 0, "y1": 1,
            "yref": f"y{suffix} domain", "line": {"dash": "dot", "color": "grey"},
        })
    layout |= {
        "title": chart_title(title),
        "height": 720,
        "margin": dict(MARGIN),
        "showlegend": False,
        "hoverlabel": {"namelength": -1},
        "shapes": shapes,
    }
    return figure(traces, layout)


def reference_play_positions(L: int) -> np.ndarray:
    """The reference positions Play sweeps over L positions: every position when they fit
    ``animation.frame_count`` (a frame is a line of L points, or its min/max envelope with x
    and y), else as many whole positions as fit, evenly spread over 0 .. L-1."""
    values = L if L <= LINE_MAX_POINTS else 2 * LINE_MAX_POINTS
    count = min(L, animation.frame_count(values + 4))
    return np.unique(np.round(np.linspace(0, L - 1, max(1, count))).astype(np.int64))


def reference_play_figure(values_by_offset: np.ndarray, *, title: str) -> go.Figure:
    r"""The dot product :math:`P[k]\cdot P[r] = f(k - r)` over every position k, one frame per
    reference position r (``reference_play_positions``), with ``values_by_offset[t + L - 1] = f(t)``
    (the closed form, as ``similarity_from_offsets``): Play slides the reference along and the
    curve moves with it unchanged, since it depends only on the offset k - r.

    Lines longer than ``figures.LINE_MAX_POINTS`` are drawn as their min/max envelope (x and y
    as float32: positions below 2^24 are exact).
    """
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    if f.size % 2 == 0:
        raise ValueError(f"need f(t) for t = -(L-1)..L-1: an odd count of values, got {f.size}.")
    refs = reference_play_positions(L)
    low, high = float(f.min()), float(f.max())
    pad = 0.05 * max(high - low, 1.0)

    def curve(ref: int) -> list[dict]:
        """Frame r: the dot products against r (``meta``: r), and a vertical line at r."""
        line = line_xy(f[L - 1 - ref : 2 * L - 1 - ref], dtype=np.float32)
        if "x" in line:
            line["x"] = np.asarray(line["x"], dtype=np.float32)
        return [line | {"meta": int(ref)}, {"x": [ref, ref], "y": [low - pad, high + pad]}]

    looks = [
        {"type": "scatter", "mode": "lines", "name": "P[k]·P[r]",
         "hovertemplate": "position k = %{x}<br>P[k]·P[r] = %{y:.7g}, r = %{meta}<extra></extra>"},
        {"type": "scatter", "mode": "lines", "name": "reference r", "line": {"dash": "dot", "color": "grey"},
         "hoverinfo": "skip"},
    ]
    by_frame = [curve(int(ref)) for ref in refs]
    layout = {
        "title": chart_title(title), "height": 380, "showlegend": False,
        "margin": dict(MARGIN), "hoverlabel": {"namelength": -1},
        "xaxis": {"title": {"text": "position k"}, "range": [-0.5, L - 0.5]},
        "yaxis": {"title": {"text": "P[k]·P[r]"}, "range": [low - pad, high + pad]},
    }
    frames = [animation.frame(data, traces=[0, 1], name=str(int(ref)))
              for data, ref in zip(by_frame, refs, strict=True)]
    # animation.play_figure, not figures.figure then add_play: that made the figure Plotly's
    # objects only to read its traces and layout back (3-4 ms of each run at L = 2247). The
    # figure shows the first frame's data, made once.
    return animation.play_figure([look | now for look, now in zip(looks, by_frame[0], strict=True)], layout, frames,
                                 label="reference position r", redraw=False)


def reference_play_table(values_by_offset: np.ndarray) -> pd.DataFrame:
    """``reference_play_figure``'s frames: every position k, then P[k]·P[r] = f(k − r) for each
    reference r it sweeps (every value, also where the chart draws an envelope)."""
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    refs = reference_play_positions(L)
    return pd.DataFrame({"position k": np.arange(L), **{f"P[k]·P[{r}]": f[L - 1 - r : 2 * L - 1 - r] for r in refs}})


def _offset_matrix_labels(edges: np.ndarray) -> tuple[list[str], list[str]]:
    """Row (k) and column (k′) labels of the blocks of positions between ``edges``."""
    edges = np.asarray(edges)
    first, last = edges[:-1], edges[1:] - 1
    rows = [range_label(int(a), int(b), "k") for a, b in zip(first, last, strict=True)]
    cols = [range_label(int(a), int(b), "k′") for a, b in zip(first, last, strict=True)]
    return rows, cols


def offset_matrix_figure(block_means: np.ndarray, edges: np.ndarray, *, d: int, title: str) -> go.Figure:
    """The L x L dot-product matrix G[k, k'] = f(k' - k), drawn as exact block means.

    ``edges`` are the position blocks of both axes (``pe_core.block_edges``); hover names
    the block of positions each cell stands for.
    """
    rows, cols = _offset_matrix_labels(edges)
    starts = np.asarray(edges)[:-1]
    return heatmap_figure(
        block_means,
        row_labels=rows,
        col_labels=cols,
        row_ticks=round_ticks(rows, starts),
        col_ticks=round_ticks(cols, starts),
        title=title,
        x_title="position k′",
        y_title="position k",
        value_name="P[k]·P[k′]",
        zrange=(-d / 2, d / 2),
    )


def closed_form_figure(
    values_by_offset: np.ndarray,
    *,
    measured: np.ndarray | None = None,
    measured_first_offset: int = 0,
    title: str,
) -> go.Figure:
    r"""The closed form :math:`f(\delta) = \sum_i \cos(\omega_i\delta)` over
    :math:`\delta = -(L-1) .. L-1`, with the values measured on the matrix (at the
    consecutive offsets from ``measured_first_offset``) drawn as points on top. Either, when
    longer than ``figures.LINE_MAX_POINTS``, is drawn as its min/max envelope."""
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    line = line_xy(f, x0=-(L - 1))
    traces = [{
        "type": "scatter",
        **line,
        "name": "closed form Σ cos(ω_i δ)",
        "mode": "lines" if f.size > 1 else "markers",  # one position: the offset 0 alone
        "hovertemplate": "offset δ = %{x}<br>Σ cos(ω_i δ) = %{y:.10g}"
        + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
    }]
    if measured is not None:
        points = line_xy(measured, x0=measured_first_offset)
        # Thousands of markers (measured on the whole matrix at a small d) cost the browser
        # more than the rest of the page: a dotted line over the closed form says the same.
        as_markers = np.size(measured) <= MAX_MEASURED_MARKERS
        traces.append({
            "type": "scatter",
            **points,
            "name": "measured P[ref+δ]·P[ref]",
            "mode": "markers" if as_markers else "lines",
            "marker": {"size": 6, "symbol": "circle-open", "color": "#d6604d", "line": {"width": 1.5}},
            "line": {"color": "#d6604d", "dash": "dot", "width": 2},
            "hovertemplate": "offset δ = %{x}<br>measured dot = %{y:.10g}"
            + (ENVELOPE_HOVER if "x" in points else "") + "<extra></extra>",
        })
    return figure(traces, {
        "title": chart_title(title),
        "height": 420,
        "margin": MARGIN | {"b": 100},  # the legend below the axis
        "xaxis": {"title": {"text": "offset δ (positions)"}},
        "yaxis": {"title": {"text": "dot product f(δ)"}},
        "legend": {"orientation": "h", "y": -0.2},
        "hoverlabel": {"namelength": -1},
    })


def similarity_table(curves: SimilarityCurves) -> pd.DataFrame:
    """``similarity_figure``'s data: every position k, its dot product, SSE and cosine to ref."""
    ref = curves.ref
    return pd.DataFrame({
        "position k": np.arange(curves.dot.size),
        f"P[k]·P[{ref}]": curves.dot,
        f"SSE ‖P[k] − P[{ref}]‖²": curves.sse,
        f"cos(P[k], P[{ref}])": curves.cosine,
    })


def offset_matrix_table(block_means: np.ndarray, edges: np.ndarray) -> pd.DataFrame:
    """``offset_matrix_figure``'s data, each cell labelled with the blocks of k and k′ it averages."""
    rows, cols = _offset_matrix_labels(edges)
    return heatmap_table(block_means, rows, cols, rows_name="position k", cols_name="position k′")


def closed_form_table(
    values_by_offset: np.ndarray, *, measured: np.ndarray, measured_first_offset: int
) -> pd.DataFrame:
    """``closed_form_figure``'s data: f(δ) for every offset, and the measured dot products at
    the offsets where they were measured (NaN elsewhere)."""
    f = np.asarray(values_by_offset, dtype=np.float64)
    L = (f.size + 1) // 2
    measured = np.asarray(measured, dtype=np.float64)
    at_offsets = np.full(f.size, np.nan)
    first = measured_first_offset + L - 1
    at_offsets[first : first + measured.size] = measured
    return pd.DataFrame(
        {"offset δ": np.arange(-(L - 1), L), "Σ cos(ω_i δ)": f, "measured P[ref+δ]·P[ref]": at_offsets}
    )


def similarity_code(settings: Settings, ref: int, *, blocks: int, full_cells: int, measured_cells: int) -> str:
    """Similarity: the curves against ``ref`` (measured on P up to ``full_cells`` cells, else
    the closed form), the dot-product matrix in ``blocks`` x ``blocks`` block means, and the
    closed form with the dot products measured as the page measures them."""
    L, d = settings.L, settings.d
    edges = pe_core.block_edges(L, blocks)
    code = reproduce.title("Similarity", settings, f"every position against position {ref}")
    code += reproduce.encoding_function_code(settings)
    code += "# f(t) = P[k]·P[k+t] for every k (even d), mirrored to t = -(L-1)..L-1 since cos is even\n"
    code += reproduce.OFFSET_DOT_LINE + "f = np.r_[half[:0:-1], half]\n"
    code += f"\nref = {ref}\n"
    if L * d <= full_cells:
        code += (
            "# The curves, measured on P (seed 001's computation)\n"
            "P = encoding(0, L)\n"
            "dot = P @ P[ref]\n"
            'sse = np.einsum("kj,kj->k", P - P[ref], P - P[ref])\n'
            "cosine = dot / (np.linalg.norm(P, axis=1) * np.linalg.norm(P[ref]))\n"
            "first, measured = 0, dot\n"
        )
    else:
        first, count = measure_window(L, d, ref, measured_cells)
        code += (
            f"# L x d = {L * d:,} cells: the page draws the curves from the closed form (|P[k]|² = d/2)\n"
            "dot = f[np.arange(L) - ref + L - 1]\n"
            "sse = d - 2.0 * dot\n"
            "cosine = dot / (d / 2)\n"
            "# ... and measures the dot products on a window of positions around the reference\n"
            f"first, count = {first}, {count}\n"
            "measured = encoding(first, count) @ encoding(ref, 1)[0]\n"
        )
    code += "\n# The L x L dot-product matrix G[k, k′] = f(k′ - k)" + (
        ", averaged over blocks of positions as drawn\n" if reproduce.is_reduced(edges) else "\n"
    )
    size = f"  # {L * L * 8 / 1e9:.1f} GB: block by block if that is too much\n" if L * L * 8 > 5e8 else "\n"
    code += "t = np.arange(L)\nG = f[t[None, :] - t[:, None] + L - 1]" + size
    if reproduce.is_reduced(edges):
        code += reproduce.block_average_code("G", edges, edges)
    code += (
        "\n# The closed form at every offset δ, and the measured P[ref+δ]·P[ref] (NaN where not measured)\n"
        "measured_at = np.full(2 * L - 1, np.nan)\n"
        "measured_at[first - ref + L - 1 : first - ref + L - 1 + measured.size] = measured\n"
    )
    labels = metric_labels(ref, L)
    values = {"self": ("dot[ref]", ".10g")}
    if L > 1:
        code += f"neighbour = {neighbour_of(ref, L)}\n"
        values |= {"neighbour": ("dot[neighbour]", ".10g"), "sse": ("sse[neighbour]", ".10g")}
    values |= {"f0": ("f[L - 1]", ".10g"),
               "check": ("np.abs(measured - f[first - ref + L - 1 :][: measured.size]).max()", ".2e")}
    return code + reproduce.result_code({
        "similarity_lines": "np.column_stack([np.arange(L), dot, sse, cosine])",
        "similarity_matrix": "G",
        "similarity_closed_form": "np.column_stack([np.arange(-(L - 1), L), f, measured_at])",
    }) + reproduce.numbers_code({labels[key]: value for key, value in values.items()})
