"""Figures of the Precision page: one line per (format, method) over log-spaced positions.

Colour says the format, dash the method, so nine lines stay readable. Arrays in, Plotly
figure out; no Streamlit. NaN (a value the format cannot hold) leaves a gap in the line.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures import line_figure

#: One colour per format, one dash per method.
DTYPE_COLOURS = {"float32": "#1f77b4", "float16": "#d62728", "bfloat16": "#2ca02c"}
METHOD_DASHES = {"cast": "solid", "low": "dash", "relative": "dot"}


def precision_figure(
    positions: np.ndarray,
    lines: dict[tuple[str, str], np.ndarray],
    names: dict[tuple[str, str], str],
    *,
    title: str,
    y_title: str,
    log_y: bool = True,
    hover_format: str = ".3g",
    height: int = 480,
) -> go.Figure:
    """Lines of ``lines[(dtype, method)]`` against the positions, on a log position axis."""
    fig = line_figure(
        np.asarray(positions),
        {names[key]: y for key, y in lines.items()},
        title=title,
        x_title="position k",
        y_title=y_title,
        log_x=True,
        log_y=log_y,
        height=height,
        hover_format=hover_format,
    )
    for trace, (dtype, method) in zip(fig.data, lines, strict=True):
        trace.line = {"color": DTYPE_COLOURS.get(dtype), "dash": METHOD_DASHES.get(method, "solid"), "width": 2}
    if log_y:
        fig.update_yaxes(exponentformat="power")
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return fig


def scheme_distance_figure(
    offsets: np.ndarray, series: dict[str, np.ndarray], *, title: str, dashes: dict[str, str] | None = None
) -> go.Figure:
    """The scorecard's distance by offset, one line per scheme, log-log; ``dashes`` tells
    apart lines that coincide (integer and scaled positions grow alike within one length)."""
    fig = line_figure(
        np.asarray(offsets), series, title=title, x_title="offset δ (positions)",
        y_title="distance ÷ distance at δ = 1", log_x=True, log_y=True, hover_format=".4g",
    )
    for trace in fig.data:
        if dashes and trace.name in dashes:
            trace.line = {"dash": dashes[trace.name], "width": 3}
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return fig
