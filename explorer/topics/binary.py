"""Binary vs sinusoid: the binary codes of the positions (seed 003) beside the sinusoidal
encoding, bit periods against wavelengths, Hamming distance against SSE. Analysis, figure
builders and reproduce-this code, without Streamlit (pages/binary_page.py lays them out).

Lines are never thinned by skipping points: up to ``figures.LINE_MAX_POINTS`` points they
are sent whole; longer ones are drawn as their min/max envelope (``pe_core.line_envelope``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import reproduce
from explorer.figures import (
    ENVELOPE_HOVER,
    SEQUENTIAL,
    SUBPLOT_TITLES_PX,
    count_text,
    figure,
    frame_layout,
    heatmap_figure,
    heatmap_table,
    line_mode,
    line_xy,
    range_label,
    round_ticks,
    tick_subset,
)
from explorer.settings import Settings


def code_blocks(length: int, bits: int, max_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The binary codes of positions 0 .. length-1 as drawn: the row blocks' edges and, per
    block and bit, the fraction of ones (each position exactly, when length <= max_rows)."""
    edges = pe_core.block_edges(length, max_rows)
    return edges, pe_core.block_average(pe_core.binary_encoding(length, bits), edges, np.arange(bits + 1))


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


def lsb_first(k: int, bits: int) -> str:
    """Position k written in ``bits`` binary digits, least significant first (seed 003's order): 6 -> '0110'."""
    return "".join(str((k >> j) & 1) for j in range(bits))


def periods_figure(bit_periods: np.ndarray, wavelengths: np.ndarray, length: int) -> go.Figure:
    """Bit periods 2^(j+1) and pair wavelengths 2π/ω_i as two rows of marks on one log axis.

    Both are geometric progressions, so on a log axis each is a row of evenly spaced marks:
    the bits step by a factor 2, the pairs by n^(2/d); the dotted line is the length L.
    Built from plain dicts without Plotly's validation (``figures.figure``).
    """
    rows = ("bit j: period 2^(j+1)", "pair i: wavelength 2π/ω_i")
    traces = [
        {
            "type": "scatter", "x": values, "y": [name] * values.size, "customdata": np.arange(values.size),
            "name": name, "mode": "markers",
            "marker": {"symbol": "line-ns-open", "size": 18, "line": {"width": 2}},
            "hovertemplate": f"{index} = %{{customdata}}<br>{name} = %{{x:.7g}} positions<extra></extra>",
        }
        for name, index, values in (
            (rows[0], "bit j", np.asarray(bit_periods, dtype=np.float64)),
            (rows[1], "pair i", np.asarray(wavelengths, dtype=np.float64)),
        )
    ]
    # A trace, not add_vline: shapes' annotations on a log axis take log10 of the position.
    traces.append({
        "type": "scatter", "x": [length, length], "y": list(rows), "mode": "lines",
        "line": {"dash": "dot", "color": "gray"}, "name": "length L",
        "hovertemplate": f"L = {count_text(length, 'position')}<extra></extra>",
    })
    layout = frame_layout("Bit period against sinusoid wavelength", 300)
    layout["margin"]["l"] = 190  # room for the two row names
    return figure(traces, layout | {
        # Its label halfway between the two rows, right of the line: clear of both rows' marks and
        # of the axis's ticks (an annotation on a log axis is placed at log10 of its x).
        "annotations": [{"x": math.log10(length), "y": 0.5, "yref": "y", "text": f"L = {length:,}",
                         "showarrow": False, "xanchor": "left", "xshift": 4, "font": {"color": "gray"}}],
        # On two lines: centred under the plot, which the row names push right, one line ran off a phone.
        "xaxis": {"title": {"text": "period, wavelength<br>(positions, log scale)"}, "type": "log",
                  "dtick": 1},  # powers of ten only: Plotly draws the 2s and 5s between them at 9 px
        "yaxis": {"title": {"text": ""}, "type": "category"},
        "showlegend": False,
    })


#: The distance chart's two panels, as make_subplots(rows=2, cols=1, shared_xaxes=True,
#: vertical_spacing=0.12) lays them out: the top one's position axis follows the bottom one's.
DISTANCE_PANELS = {
    "xaxis": {"anchor": "y", "domain": [0.0, 1.0], "matches": "x2", "showticklabels": False},
    "yaxis": {"anchor": "x", "domain": [0.56, 1.0]},
    "xaxis2": {"anchor": "y2", "domain": [0.0, 1.0]},
    "yaxis2": {"anchor": "x2", "domain": [0.0, 0.44]},
}


def distance_by_offset_figure(hamming: np.ndarray, sse: np.ndarray, *, ref: int, bits: int) -> go.Figure:
    """Hamming distance (bits) and SSE of every position k = 0 .. L-1 to ``ref``, over k - ref
    (each as its min/max envelope when longer than ``figures.LINE_MAX_POINTS``).

    Built from plain dicts (``DISTANCE_PANELS``, and make_subplots' titles) without Plotly's
    validation (``figures.figure``): make_subplots and its updates cost ~40 ms a new setting.
    """
    hamming, sse = np.asarray(hamming), np.asarray(sse)
    if hamming.shape != sse.shape or hamming.ndim != 1:
        raise ValueError(f"hamming {hamming.shape} and sse {sse.shape} must be two equal 1-D arrays.")
    mode = line_mode(hamming.size)
    traces = []
    for row, (name, values, unit) in enumerate((("Hamming distance", hamming, "bits"), ("SSE", sse, "")), start=1):
        line = line_xy(values, x0=-ref, dtype=np.float32)
        suffix = "" if row == 1 else str(row)
        traces.append({
            "type": "scatter", **line, "name": name, "mode": mode, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            "hovertemplate": f"offset k − {ref} = %{{x}}<br>{name} = %{{y:.7g}} {unit}"
            + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
        })
    layout = {axis: dict(settings) for axis, settings in DISTANCE_PANELS.items()}
    layout["yaxis"]["title"] = {"text": "Hamming distance (bits)"}
    layout["yaxis2"]["title"] = {"text": "SSE ‖P[k] − P[ref]‖²"}
    layout["xaxis2"]["title"] = {"text": f"offset k − ref (positions; ref = {ref})"}
    # The panels' titles, as make_subplots writes them. Short: centred over a phone's narrow plot,
    # longer titles ran off the chart (the reference position is in the x axis's title).
    titles = (f"Binary ({count_text(bits, 'bit')}): Hamming distance", "Sinusoid: SSE")
    layout["annotations"] = [
        {"font": {"size": 16}, "showarrow": False, "text": text, "x": 0.5, "xanchor": "center", "xref": "paper",
         "y": top, "yanchor": "bottom", "yref": "paper"}
        for text, top in zip(titles, (DISTANCE_PANELS["yaxis"]["domain"][1], DISTANCE_PANELS["yaxis2"]["domain"][1]),
                             strict=True)
    ]
    layout["showlegend"] = False
    title = "Distance to the reference position, by offset"
    return figure(traces, layout | frame_layout(title, 560, above_plot=SUBPLOT_TITLES_PX))


def binary_table(
    values: np.ndarray, row_first: np.ndarray, row_last: np.ndarray, *, transpose: bool = False
) -> pd.DataFrame:
    """``binary_figure``'s data: bits (or fractions of ones in a block of positions) per bit j."""
    rows = [range_label(int(a), int(b), "position k") for a, b in zip(row_first, row_last, strict=True)]
    bits = [f"bit j = {j}" for j in range(np.shape(values)[1])]
    return heatmap_table(values, rows, bits, rows_name="position k", cols_name="bit j", transpose=transpose)


def periods_table(bit_periods: np.ndarray, wavelengths: np.ndarray) -> pd.DataFrame:
    """``periods_figure``'s data: bit period of bit j and wavelength of pair i, row j = i
    (NaN past the end of the shorter list: the page shows ``NO_ENTRY`` there)."""
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


#: What the periods table shows where a row has no bit or no pair (st.dataframe's placeholder).
NO_ENTRY = "—"
#: How the periods table writes its periods and wavelengths: 6 significant digits, thousands
#: separated (Streamlit's printf-style column format; the table itself keeps NaN and every digit,
#: so its download stays numeric).
PERIODS_FORMAT = "%,.6g"


def periods_note(bits: int, pairs: int) -> str:
    """Why the periods table has empty rows ("—"), or "" when it has none."""
    if bits == pairs:
        return ""
    if bits < pairs:
        return (f"{NO_ENTRY}: no bit j = {bits:,} or above, the code has {count_text(bits, 'bit')} (the Bits "
                "control above widens it); the encoding has a pair for every row.")
    return f"{NO_ENTRY}: no pair i = {pairs:,} or above, d = {2 * pairs:,} has {count_text(pairs, 'pair')}."


def binary_code(
    settings: Settings, *, bits: int, ref: int, transpose: bool = False, max_rows: int, max_cols: int
) -> str:
    """Binary vs sinusoid: the binary codes and the encoding averaged over the same blocks of
    positions, bit periods against wavelengths, and Hamming distance against SSE to ``ref``."""
    row_edges = pe_core.block_edges(settings.L, max_rows)
    code = reproduce.title("Binary vs sinusoid", settings, "the four charts' data") + reproduce.encoding_code(settings)
    code += (
        f"\n# Binary codes of positions 0..L-1 with {bits} bits, least significant first\n"
        f"bits = {bits}\n"
        "B = ((np.arange(L)[:, None] >> np.arange(bits)) & 1).astype(np.float64)\n"
        "codes = B\n"
    )
    if reproduce.is_reduced(row_edges):
        code += "# A block of positions is drawn as the fraction of ones in it\n"
        code += reproduce.block_average_code("codes", row_edges)
    code += "\n# The sinusoidal encoding over the same blocks of positions\n"
    code += reproduce.encoding_blocks_code(
        "P", "sinusoid", settings.layout, row_edges, reproduce.pair_edges(settings.d, settings.layout, max_cols)
    )
    code += (
        "\n# Bit period 2^(j+1) and wavelength 2π/ω_i, row j = i (NaN past the end of the shorter list)\n"
        "count = max(bits, len(w))\n"
        "periods = np.full((count, 3), np.nan)\n"
        "periods[:, 0] = np.arange(count)\n"
        "periods[:bits, 1] = 2.0 ** np.arange(1, bits + 1)\n"
        "periods[: len(w), 2] = 2 * np.pi / w\n"
        "\n# Hamming distance and SSE of every position to the reference (SSE = d - 2 f(k - ref))\n"
        f"ref = {ref}\n"
        "hamming = np.abs(B - B[ref]).sum(axis=1)\n"
        + reproduce.OFFSET_DOT_LINE
        + "sse = d - 2.0 * half[np.abs(np.arange(L) - ref)]\n"
        "distances = np.column_stack([np.arange(L), np.arange(L) - ref, hamming, sse])\n"
    )
    code += reproduce.result_code({
        "binary_codes": "codes.T" if transpose else "codes",
        "binary_sinusoid": "sinusoid.T" if transpose else "sinusoid",
        "binary_periods": "periods",
        "binary_distances": "distances",
    })
    if settings.L == 1:  # the page shows its numbers about neighbours from two positions on
        return code
    flips, neighbour_sse, largest = metric_labels(ref)
    return (
        code
        + "flips = np.abs(np.diff(B, axis=0)).sum(axis=1)  # bits that differ between neighbours k, k + 1\n"
        + reproduce.numbers_code({
            flips: ("(flips.min(), flips.max())", ".6g"), neighbour_sse: ("d - 2.0 * half[1]", ".6g"),
            largest: ("sse.max()", ".6g"),
        })
    )


def metric_labels(ref: int) -> tuple[str, str, str]:
    """The labels of the page's numbers (its metrics, and its snippet's printed numbers)."""
    return "Hamming distance between neighbours", "SSE between neighbours (any k)", f"Largest SSE to position {ref}"
