"""Figure builders of the Waves and Binary-vs-sinusoid pages: arrays in, Figure out.

No Streamlit here, so each builder is unit-tested on its data. Lines are never thinned by
skipping points: up to ``figures.LINE_MAX_POINTS`` points they are sent whole, y as float32
(7 significant digits, half the bytes) and x as ``x0``/``dx``; longer ones are drawn as
their min/max envelope (``pe_core.line_envelope``), or the page shows a window of positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import pe_core
from explorer.figures import (
    ENVELOPE_HOVER,
    HEATMAP_MAX_CELLS_DRAWN,
    HEATMAP_MAX_ROWS,
    SEQUENTIAL,
    heatmap_figure,
    heatmap_table,
    line_xy,
    range_label,
    round_ticks,
    tick_subset,
)

#: Panels per row of the per-position profiles (seed 000 draws four side by side).
PROFILE_PANELS_PER_ROW = 4
#: The unit-circle trail shows at most this many positions, the last ones up to k.
MAX_TRAIL = 2000
#: Above this many points a line is drawn without markers (they would only blur it).
MARKER_LIMIT = 200
#: Waves page: positions drawn at once by "chosen columns across positions"; longer
#: sequences show a window the user moves (16384 points of a fast column are a solid block;
#: 300 positions show about 50 turns of the fastest pair, each still a visible wave).
COLUMNS_WINDOW = 300


def _frame(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left"},
        height=height,
        margin={"l": 70, "r": 20, "t": 70, "b": 60},
        hoverlabel={"namelength": -1},
    )
    return fig


def _line_mode(points: int) -> str:
    return "lines+markers" if points <= MARKER_LIMIT else "lines"


# --------------------------------------------------------------------------------------
# Waves page
# --------------------------------------------------------------------------------------


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
    fig = make_subplots(
        rows=rows, cols=cols, shared_yaxes=True, subplot_titles=[f"k={k}" for k in positions],
        horizontal_spacing=0.04, vertical_spacing=0.18,
    )
    pairs = np.arange(w.size)
    for index, k in enumerate(positions):
        fig.add_trace(
            go.Scatter(
                x=pairs,
                y=np.sin(k * w),
                name=f"k={k}",
                mode=_line_mode(w.size),
                hovertemplate=f"k = {k}<br>pair x = %{{x}}<br>sin(k·ω_x) = %{{y:.7g}}<extra></extra>",
                showlegend=False,
            ),
            row=index // PROFILE_PANELS_PER_ROW + 1,
            col=index % PROFILE_PANELS_PER_ROW + 1,
        )
    fig.update_xaxes(title_text="pair index x")
    fig.update_yaxes(title_text="sin(k·ω_x)", range=[-1.1, 1.1], col=1)
    return _frame(fig, title, 320 * rows + 60)


def encoding_columns(
    length: int, d: int, n: float, columns: Sequence[int], *, layout: str = "interleaved",
    convention: str = "paper",
) -> np.ndarray:
    """Columns ``columns`` of ``positional_encoding(length, d, ...)``, shape (length, len(columns)).

    Computed column by column from the pair each column belongs to, so a few columns of a
    16384 x 2048 encoding cost 16384 values each, never the whole matrix.
    """
    pair, is_sine = pe_core.column_pairs(d, layout)
    w = pe_core.frequencies(d, n, convention)
    k = pe_core.positions(length)
    columns = np.asarray(columns, dtype=np.int64)
    if columns.size and (columns.min() < 0 or columns.max() >= d):
        raise ValueError(f"columns must lie in 0..{d - 1}, got {columns.tolist()}.")
    theta = np.multiply.outer(k, w[pair[columns]])
    return np.where(is_sine[columns], np.sin(theta), np.cos(theta))


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
    fig = go.Figure()
    for column, name in enumerate(names):
        fig.add_trace(
            go.Scatter(
                x0=first, dx=1, y=values[:, column].astype(np.float32), name=name,
                mode=_line_mode(values.shape[0]),
                hovertemplate=f"position k = %{{x}}<br>{name}<br>value = %{{y:.7g}}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="position k")
    fig.update_yaxes(title_text="P[k, j]", range=[-1.1, 1.1])
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return _frame(fig, title, 440)


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
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=np.cos(around), y=np.sin(around), mode="lines", name="unit circle",
            line={"color": "lightgray"}, hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=np.cos(theta).astype(np.float32), y=np.sin(theta).astype(np.float32), mode="markers",
            name=f"positions {trail[0]}..{k}",
            marker={"color": trail, "colorscale": SEQUENTIAL, "size": 6,
                    "colorbar": {"title": {"text": "position k"}}},
            hovertemplate="position k = %{marker.color}<br>cos = %{x:.7g}<br>sin = %{y:.7g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0, np.cos(angle)], y=[0.0, np.sin(angle)], mode="lines+markers", name=f"k = {k}",
            marker={"size": [0, 14], "color": "crimson"}, line={"color": "crimson"},
            hovertemplate=f"k = {k}<br>cos = %{{x:.7g}}<br>sin = %{{y:.7g}}<extra></extra>",
        )
    )
    degrees = np.degrees(angle)
    fig.add_annotation(
        x=0.0, y=-1.35, showarrow=False,
        text=f"k·ω_{pair} = {k} × {w_i:.6g} rad = {degrees:,.4f}° ≡ {degrees % 360.0:.4f}° (mod 360)",
    )
    fig.update_xaxes(title_text=f"cos(k·ω_{pair})", range=[-1.5, 1.5], zeroline=True)
    fig.update_yaxes(title_text=f"sin(k·ω_{pair})", range=[-1.5, 1.5], scaleanchor="x", scaleratio=1)
    fig.update_layout(legend={"orientation": "h", "y": -0.2})
    return _frame(fig, f"Pair i = {pair} on the unit circle at k = {k}", 560)


def profile_table(positions: Sequence[int], w: np.ndarray) -> pd.DataFrame:
    """``position_profile_figure``'s data: the pair index x, then sin(k·ω_x) for each position k."""
    w = np.asarray(w, dtype=np.float64)
    return pd.DataFrame({"pair x": np.arange(w.size), **{f"k={k}": np.sin(k * w) for k in positions}})


def columns_table(values: np.ndarray, names: Sequence[str]) -> pd.DataFrame:
    """``columns_over_positions_figure``'s data: the position k, then one column per line."""
    values = np.asarray(values, dtype=np.float64)
    return pd.DataFrame({"position k": np.arange(values.shape[0]), **dict(zip(names, values.T, strict=True))})


def circle_table(w_i: float, k: int, *, max_trail: int = MAX_TRAIL) -> pd.DataFrame:
    """``unit_circle_figure``'s trail: each position up to k and its point (cos kω_i, sin kω_i)."""
    trail = trail_positions(k, max_trail)
    theta = trail * w_i
    return pd.DataFrame({"position k": trail, "cos(k·ω_i)": np.cos(theta), "sin(k·ω_i)": np.sin(theta)})


# --------------------------------------------------------------------------------------
# Binary vs sinusoid page
# --------------------------------------------------------------------------------------

#: Positions drawn (blocks when L is larger); dimensions of the sinusoid map up to a cell
#: budget of 256 x 256 (~0.3 MB), so seed 003's 100 x 512 matrix is still drawn exactly.
BINARY_MAX_ROWS, BINARY_MAX_COLS, BINARY_MAX_CELLS = HEATMAP_MAX_ROWS, 1024, HEATMAP_MAX_CELLS_DRAWN


def sinusoid_max_cols(row_blocks: int) -> int:
    """Columns of the sinusoid map beside ``row_blocks`` rows of binary codes: a power of two
    within the cell budget, so that for d a power of two the runs of pairs are equal and the
    axis ticks land on round columns (0, 256, 512, ...)."""
    cols = min(BINARY_MAX_COLS, BINARY_MAX_CELLS // row_blocks)
    return 1 << (cols.bit_length() - 1)


def binary_figure(
    values: np.ndarray, row_first: np.ndarray, row_last: np.ndarray, *, title: str, transpose: bool = False
) -> go.Figure:
    """Heatmap of binary codes (positions down, bits across; seed 003 draws it transposed).

    ``values`` are bits, or with blocks of several positions the fraction of ones in the block.
    """
    values = np.asarray(values)
    reduced = bool(np.any(np.asarray(row_last) > np.asarray(row_first)))
    row_labels = [range_label(int(a), int(b), "position k") for a, b in zip(row_first, row_last, strict=True)]
    bits = range(values.shape[1])
    col_labels = [f"bit j = {j} (period 2^{j + 1} = {2 ** (j + 1)} positions)" for j in bits]
    return heatmap_figure(
        values,
        row_labels=row_labels,
        col_labels=col_labels,
        row_ticks=round_ticks(row_labels, row_first),
        col_ticks=tick_subset(col_labels, [str(j) for j in bits], count=16),
        title=title,
        x_title="bit j (least significant first)",
        y_title="position k",
        value_name="fraction of ones" if reduced else "bit",
        colorscale=SEQUENTIAL,
        zrange=(0.0, 1.0),
        transpose=transpose,
    )


def periods_figure(bit_periods: np.ndarray, wavelengths: np.ndarray, length: int) -> go.Figure:
    """Bit periods 2^(j+1) and pair wavelengths 2π/ω_i as two rows of marks on one log axis.

    Both are geometric progressions, so on a log axis each is a row of evenly spaced marks:
    the bits step by a factor 2, the pairs by n^(2/d); the dotted line is the length L.
    """
    fig = go.Figure()
    for name, index, values in (
        ("bit j: period 2^(j+1)", "bit j", np.asarray(bit_periods, dtype=np.float64)),
        ("pair i: wavelength 2π/ω_i", "pair i", np.asarray(wavelengths, dtype=np.float64)),
    ):
        fig.add_trace(
            go.Scatter(
                x=values, y=[name] * values.size, customdata=np.arange(values.size), name=name,
                mode="markers",
                marker={"symbol": "line-ns-open", "size": 18, "line": {"width": 2}},
                hovertemplate=f"{index} = %{{customdata}}<br>{name} = %{{x:.7g}} positions<extra></extra>",
            )
        )
    # A trace, not add_vline: shapes' annotations on a log axis take log10 of the position.
    rows = [fig.data[0].y[0], fig.data[1].y[0]]
    fig.add_trace(
        go.Scatter(
            x=[length, length], y=rows, mode="lines+text", text=[f"L = {length:,}", ""],
            textposition="bottom center", line={"dash": "dot", "color": "gray"}, name="length L",
            hovertemplate=f"L = {length:,} positions<extra></extra>",
        )
    )
    fig.update_xaxes(title_text="period, wavelength (positions, log scale)", type="log")
    fig.update_yaxes(title_text="", type="category")
    fig.update_layout(showlegend=False)
    fig = _frame(fig, "Bit period against sinusoid wavelength", 300)
    fig.update_layout(margin={"l": 190})  # room for the two row names
    return fig


def distance_by_offset_figure(hamming: np.ndarray, sse: np.ndarray, *, ref: int, bits: int) -> go.Figure:
    """Hamming distance (bits) and SSE of every position k = 0 .. L-1 to ``ref``, over k - ref
    (each as its min/max envelope when longer than ``figures.LINE_MAX_POINTS``)."""
    hamming, sse = np.asarray(hamming), np.asarray(sse)
    if hamming.shape != sse.shape or hamming.ndim != 1:
        raise ValueError(f"hamming {hamming.shape} and sse {sse.shape} must be two equal 1-D arrays.")
    fig = make_subplots(
        rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
        subplot_titles=(f"Binary: Hamming distance to position {ref} ({bits} bits)",
                        f"Sinusoid: SSE to position {ref}"),
    )
    mode = _line_mode(hamming.size)
    for row, (name, values, unit) in enumerate(
        (("Hamming distance", hamming, "bits"), ("SSE", sse, "")), start=1
    ):
        line = line_xy(values, x0=-ref, dtype=np.float32)
        fig.add_trace(
            go.Scatter(
                **line, name=name, mode=mode,
                hovertemplate=f"offset k − {ref} = %{{x}}<br>{name} = %{{y:.7g}} {unit}"
                + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
            ),
            row=row, col=1,
        )
    fig.update_yaxes(title_text="Hamming distance (bits)", row=1, col=1)
    fig.update_yaxes(title_text="SSE ‖P[k] − P[ref]‖²", row=2, col=1)
    fig.update_xaxes(title_text=f"offset k − ref (positions; ref = {ref})", row=2, col=1)
    fig.update_layout(showlegend=False)
    return _frame(fig, "Distance to the reference position, by offset", 560)


def binary_table(
    values: np.ndarray, row_first: np.ndarray, row_last: np.ndarray, *, transpose: bool = False
) -> pd.DataFrame:
    """``binary_figure``'s data: bits (or fractions of ones in a block of positions) per bit j."""
    rows = [range_label(int(a), int(b), "position k") for a, b in zip(row_first, row_last, strict=True)]
    bits = [f"bit j = {j}" for j in range(np.shape(values)[1])]
    return heatmap_table(values, rows, bits, rows_name="position k", cols_name="bit j", transpose=transpose)


def periods_table(bit_periods: np.ndarray, wavelengths: np.ndarray) -> pd.DataFrame:
    """``periods_figure``'s data: bit period of bit j and wavelength of pair i, row j = i
    (NaN past the end of the shorter list: shown as "—" by ``periods_display``)."""
    periods, lengths = np.asarray(bit_periods, dtype=np.float64), np.asarray(wavelengths, dtype=np.float64)
    count = max(periods.size, lengths.size)
    return pd.DataFrame({
        "bit j / pair i": np.arange(count),
        "bit period 2^(j+1) (positions)": np.r_[periods, np.full(count - periods.size, np.nan)],
        "wavelength 2π/ω_i (positions)": np.r_[lengths, np.full(count - lengths.size, np.nan)],
    })


def distance_table(hamming: np.ndarray, sse: np.ndarray, *, ref: int) -> pd.DataFrame:
    """``distance_by_offset_figure``'s data: every position, its offset to ``ref``, both distances."""
    k = np.arange(np.size(hamming))
    return pd.DataFrame({
        "position k": k,
        "offset k − ref": k - ref,
        "Hamming distance (bits)": np.asarray(hamming, dtype=np.float64),
        "SSE ‖P[k] − P[ref]‖²": np.asarray(sse, dtype=np.float64),
    })


def periods_display(table: pd.DataFrame):
    """``periods_table`` for st.dataframe: numbers to 6 significant digits, and "—" where a
    row has no bit or no pair (the table itself keeps NaN, so its download stays numeric)."""
    return table.style.format("{:,.6g}", subset=list(table.columns[1:]), na_rep="—")
