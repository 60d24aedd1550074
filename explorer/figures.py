"""Plotly figure builders: arrays in, Figure out. No Streamlit, so each is unit-tested.

Conventions shared by every chart: signed values use the diverging "RdBu" scale centred
on 0 (as seed 001), angles the cyclic "Twilight" scale, colour bars and axes say their
units, and hover shows the exact value that is drawn. Values are sent as float32, which
halves the payload and still shows 7 significant digits.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

DIVERGING = "RdBu"
CYCLIC = "Twilight"
SEQUENTIAL = "Viridis"
#: At most this many cells in one heatmap: 0.9 MB of float32, inside the 1.5 MB budget.
MAX_HEATMAP_CELLS = 160_000
HEATMAP_HEIGHT = 520


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left"},
        height=height,
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
        xaxis_title=x_title,
        yaxis_title=y_title,
        hoverlabel={"namelength": -1},
    )
    return fig


def heatmap_figure(
    values: np.ndarray,
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    row_ticks: tuple[Sequence[str], Sequence[str]] | None = None,
    col_ticks: tuple[Sequence[str], Sequence[str]] | None = None,
    title: str,
    x_title: str,
    y_title: str,
    value_name: str = "value",
    colorscale: str = DIVERGING,
    zrange: tuple[float, float] | None = (-1.0, 1.0),
    transpose: bool = False,
    height: int = HEATMAP_HEIGHT,
    reversed_rows: bool = True,
) -> go.Figure:
    """A heatmap of ``values`` (rows x columns) with a label per row and column for hover.

    Rows and columns are categories whose labels say exactly what a drawn cell stands
    for (a position or a block of positions, a column or a run of pairs); ``*_ticks``
    are (labels to tick, text to show) so the axes stay readable.
    """
    values = np.asarray(values)
    if values.size > MAX_HEATMAP_CELLS:
        raise ValueError(f"{values.shape} is more than {MAX_HEATMAP_CELLS:,} cells; reduce it before drawing.")
    if values.shape != (len(row_labels), len(col_labels)):
        raise ValueError(f"values {values.shape} do not match {len(row_labels)} x {len(col_labels)} labels.")
    z, x, y = values.astype(np.float32), list(col_labels), list(row_labels)
    x_ticks, y_ticks = col_ticks, row_ticks
    if transpose:
        z, x, y = z.T, y, x
        x_title, y_title = y_title, x_title
        x_ticks, y_ticks = y_ticks, x_ticks
    heatmap = go.Heatmap(
        z=z,
        x=x,
        y=y,
        colorscale=colorscale,
        zmid=0.0 if colorscale == DIVERGING else None,
        zmin=None if zrange is None else zrange[0],
        zmax=None if zrange is None else zrange[1],
        colorbar={"title": {"text": value_name, "side": "right"}},
        hovertemplate=f"%{{y}}<br>%{{x}}<br>{value_name} = %{{z:.7g}}<extra></extra>",
        hoverongaps=False,
    )
    fig = _layout(go.Figure(heatmap), title, x_title, y_title, height)
    for axis, ticks in (("xaxis", x_ticks), ("yaxis", y_ticks)):
        if ticks is not None:
            fig.update_layout({axis: {"tickmode": "array", "tickvals": list(ticks[0]), "ticktext": list(ticks[1])}})
    fig.update_xaxes(type="category", showgrid=False)
    fig.update_yaxes(type="category", showgrid=False, autorange="reversed" if reversed_rows else True)
    return fig


def tick_subset(labels: Sequence[str], texts: Sequence[str], count: int = 8) -> tuple[list[str], list[str]]:
    """About ``count`` evenly spaced (label, text) ticks out of many categories."""
    if len(labels) == 0:
        return [], []
    index = np.unique(np.linspace(0, len(labels) - 1, min(count, len(labels))).round().astype(int))
    return [labels[i] for i in index], [texts[i] for i in index]


def line_figure(
    x: np.ndarray,
    series: dict[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    height: int = 420,
    mode: str = "lines",
    hover_format: str = ".7g",
) -> go.Figure:
    """Lines (one per named series) over a shared x, hover with exact values."""
    fig = go.Figure()
    for name, y in series.items():
        fig.add_trace(
            go.Scatter(
                x=np.asarray(x),
                y=np.asarray(y, dtype=np.float64),
                name=name,
                mode=mode,
                hovertemplate=f"{x_title} = %{{x}}<br>{name} = %{{y:{hover_format}}}<extra></extra>",
            )
        )
    fig = _layout(fig, title, x_title, y_title, height)
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    fig.update_layout(legend={"orientation": "h", "y": -0.2})
    return fig


def range_label(first: int, last: int, name: str) -> str:
    """'k = 12' or 'k = 32..63 (mean of 32)': what one drawn row or column stands for."""
    if first == last:
        return f"{name} = {first}"
    return f"{name} = {first}..{last} (mean of {last - first + 1})"


def pair_text(first: int, last: int, w: np.ndarray) -> str:
    if first == last:
        return f"pair i = {first}, ω = {w[first]:.6g} rad/pos, λ = {2 * np.pi / w[first]:.6g} pos"
    return (
        f"pairs i = {first}..{last} (mean of {last - first + 1}), ω = {w[first]:.3g}..{w[last]:.3g} rad/pos, "
        f"λ = {2 * np.pi / w[first]:.4g}..{2 * np.pi / w[last]:.4g} pos"
    )


def encoding_axis_labels(
    column_is_sine: np.ndarray, pair_first: np.ndarray, pair_last: np.ndarray, w: np.ndarray, layout: str
) -> tuple[list[str], list[str]]:
    """Hover label and tick text for each drawn column of an encoding.

    The hover label names the matrix column (or columns), whether it is a sine or a
    cosine, its pair index, frequency ω and wavelength λ = 2π/ω.
    """
    m = len(w)
    labels, ticks = [], []
    for is_sine, first, last in zip(column_is_sine, pair_first, pair_last, strict=True):
        if layout == "interleaved":
            columns = (2 * first + (0 if is_sine else 1), 2 * last + (0 if is_sine else 1))
        else:
            columns = (first, last) if is_sine else (m + first, m + last)
        kind = "sin" if is_sine else "cos"
        where = f"column {columns[0]}" if first == last else f"columns {columns[0]}..{columns[1]} ({kind} only)"
        labels.append(f"{where}: {kind}, {pair_text(int(first), int(last), w)}")
        ticks.append(str(columns[0]))
    return labels, ticks


def encoding_figure(
    values: np.ndarray,
    row_first: np.ndarray,
    row_last: np.ndarray,
    column_labels: list[str],
    column_ticks: list[str],
    *,
    title: str,
    transpose: bool = False,
    value_name: str = "P[k, j]",
    colorscale: str = DIVERGING,
    zrange: tuple[float, float] | None = (-1.0, 1.0),
) -> go.Figure:
    """Heatmap of an encoding (or its angles): positions down, dimensions across."""
    row_labels = [range_label(int(a), int(b), "position k") for a, b in zip(row_first, row_last, strict=True)]
    row_ticks = tick_subset(row_labels, [str(int(a)) for a in row_first])
    col_ticks = tick_subset(column_labels, column_ticks, count=10)
    return heatmap_figure(
        values,
        row_labels=row_labels,
        col_labels=column_labels,
        row_ticks=row_ticks,
        col_ticks=col_ticks,
        title=title,
        x_title="dimension j (column)",
        y_title="position k",
        value_name=value_name,
        colorscale=colorscale,
        zrange=zrange,
        transpose=transpose,
    )


# --------------------------------------------------------------------------------------
# Download tables: the numbers a chart draws, labelled as its hover labels them
# --------------------------------------------------------------------------------------

#: The Encoding matrix page draws at most this many rows (blocks of positions) and columns.
MATRIX_MAX_ROWS, MATRIX_MAX_COLS = 400, 400


def heatmap_table(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    rows_name: str,
    cols_name: str,
    transpose: bool = False,
) -> pd.DataFrame:
    """The values a heatmap draws, one row and one column per drawn row and column, labelled
    with what each stands for (a position or a block of them, a column or a run of pairs)."""
    table = pd.DataFrame(
        np.asarray(values, dtype=np.float64),
        index=pd.Index(list(row_labels), name=rows_name),
        columns=pd.Index(list(col_labels), name=cols_name),
    )
    return table.T if transpose else table


def encoding_table(
    values: np.ndarray,
    row_first: np.ndarray,
    row_last: np.ndarray,
    column_labels: Sequence[str],
    *,
    transpose: bool = False,
) -> pd.DataFrame:
    """What ``encoding_figure`` draws (values or angles), with the positions each row averages
    and, per column, the hover label of ``encoding_axis_labels`` (or of the angle map)."""
    rows = [range_label(int(a), int(b), "position k") for a, b in zip(row_first, row_last, strict=True)]
    return heatmap_table(
        values, rows, column_labels, rows_name="position k", cols_name="dimension j", transpose=transpose
    )


def angle_axis_labels(pair_edges: np.ndarray, w: np.ndarray) -> list[str]:
    """Hover label of each drawn column of the angle map: the pair, or run of pairs, it stands for."""
    return [pair_text(int(a), int(b) - 1, w) for a, b in itertools.pairwise(np.asarray(pair_edges))]


def frequency_table(w: np.ndarray) -> pd.DataFrame:
    """The rate and wavelength charts' data: pair i, ω_i and λ_i = 2π/ω_i."""
    w = np.asarray(w, dtype=np.float64)
    return pd.DataFrame(
        {"pair i": np.arange(w.size), "ω_i (rad/position)": w, "λ_i = 2π/ω_i (positions)": 2 * np.pi / w}
    )
