"""Encoding matrix: P as a heatmap (position x dimension), its angles in degrees (seed 001),
the frequencies and wavelengths of its pairs. Analysis, figure builders and reproduce-this
code, without Streamlit (pages/matrix_page.py lays them out; the heatmap builder itself is
shared, in explorer.figures, with the Binary and Relative pages).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

import pe_core
from explorer import reproduce
from explorer.figures import MARGIN, Figure, chart_title, figure, heatmap_grid, log_axis, pair_text
from explorer.settings import Settings


def rates_figure(w: np.ndarray) -> Figure:
    """Seed 001's angle rates ω_i and seed 003's wavelengths λ_i = 2π/ω_i over the pair index,
    side by side on log axes. One figure, not two: Streamlit draws every changed chart anew
    on a slider step, and each costs the browser ~15 ms whatever its size."""
    w = np.asarray(w, dtype=np.float64)
    pairs, lengths = np.arange(w.size), 2 * np.pi / w
    mode = "lines+markers" if w.size <= 64 else "lines"
    pair_ticks = {"dtick": 1} if w.size <= 10 else {}  # whole pair indices only (seed 000 has 2 pairs)
    traces = [
        {"type": "scatter", "x": pairs, "y": w, "name": "ω_i", "mode": mode,
         "hovertemplate": "pair i = %{x}<br>ω_i = %{y:.7g} rad/position<extra></extra>"},
        {"type": "scatter", "x": pairs, "y": lengths, "name": "λ_i", "mode": mode, "xaxis": "x2", "yaxis": "y2",
         "hovertemplate": "pair i = %{x}<br>λ_i = 2π/ω_i = %{y:.7g} positions<extra></extra>"},
    ]
    # One title over both panels, not one above each: side by side on a phone, a panel is about
    # 110 px wide, and their titles ran into each other and off the chart.
    layout = {
        "title": chart_title("Angle rate ω_i (seed 001) and wavelength λ_i = 2π/ω_i (seed 003), by pair"),
        "height": 430,
        "margin": dict(MARGIN),
        "showlegend": False,
        "hoverlabel": {"namelength": -1},
        "xaxis": {"domain": [0.0, 0.44], "anchor": "y", "title": {"text": "pair i"}} | pair_ticks,
        "yaxis": {"anchor": "x", "title": {"text": "ω_i (rad/position)"}} | log_axis(w),
        "xaxis2": {"domain": [0.56, 1.0], "anchor": "y2", "title": {"text": "pair i"}} | pair_ticks,
        "yaxis2": {"anchor": "x2", "title": {"text": "λ_i (positions)"}} | log_axis(lengths),
    }
    return figure(traces, layout)


def window_note(first: int, count: int, length: int, columns: tuple[int, int], what: str) -> str:
    """What a heatmap of a window of single positions shows: positions first .. first+count-1
    of 0..length-1, and ``columns`` = (drawn, all) columns, averaged in runs of ``what``."""
    drawn, total = columns
    note = (
        f"Positions {first:,}..{first + count - 1:,} of 0..{length - 1:,}, one row each (exact values); move the "
        "window with the slider above."
    )
    if drawn < total:
        note += (
            f" The {total:,} {what} are drawn as {drawn:,} block averages of runs of pairs (hover says which): "
            "far from k = 0 neighbouring pairs are out of phase, so a run of fast pairs averages to nearly 0 too."
        )
    return note


def matrix_grid(L: int, d: int, view: str, *, transpose: bool = False) -> tuple[int, int]:
    """Rows and columns the Encoding matrix heatmap draws (figures.heatmap_grid): rows of the L
    positions (or the length of a window of single positions), columns of the d values, or of
    the pairs for the angle map (``view`` "angles")."""
    columns = d if view == "values" else (d + 1) // 2
    return heatmap_grid(L, columns, transpose=transpose)


def angle_axis_labels(pair_edges: np.ndarray, w: np.ndarray) -> list[str]:
    """Hover label of each drawn column of the angle map: the pair, or run of pairs, it stands for."""
    return [pair_text(int(a), int(b) - 1, w) for a, b in itertools.pairwise(np.asarray(pair_edges))]


def frequency_table(w: np.ndarray) -> pd.DataFrame:
    """The rate and wavelength charts' data: pair i, ω_i and λ_i = 2π/ω_i."""
    w = np.asarray(w, dtype=np.float64)
    return pd.DataFrame(
        {"pair i": np.arange(w.size), "ω_i (rad/position)": w, "λ_i = 2π/ω_i (positions)": 2 * np.pi / w}
    )


#: The page shows P as a table of numbers (and its snippet prints it) up to this many cells: seed 000's 4 x 4.
NUMBERS_CELLS = 64


def matrix_code(
    settings: Settings,
    view: str,
    *,
    transpose: bool = False,
    max_rows: int,
    max_cols: int,
    row_start: int | None = None,
    library: str = "numpy",
) -> str:
    """Encoding matrix: the heatmap of P (view "values") or of its angles in degrees ("angles"),
    averaged as drawn with at most ``max_rows`` x ``max_cols`` cells (``max_cols`` counts pairs
    for the angles), and the rates chart.

    Rows are blocks of all L positions, or with ``row_start`` the window of ``max_rows``
    single positions row_start .. row_start + max_rows - 1 that the page then draws.
    """
    if view not in ("values", "angles"):
        raise ValueError(f"view must be 'values' or 'angles', got {view!r}.")
    L, d, layout = settings.L, settings.d, settings.layout
    rows = L if row_start is None else min(max_rows, L)
    row_edges = pe_core.block_edges(rows, max_rows)
    where = "" if row_start is None else f" on positions {row_start}..{row_start + rows - 1}"
    code = reproduce.title("Encoding matrix", settings, f"the {view} heatmap as drawn{where}, and the rates")
    code += reproduce.header(settings, reproduce.imports(library), library)
    if row_start is None:
        positions = reproduce.positions_line(0, library)
    else:
        arange = "np.arange" if library == "numpy" else "torch.arange"
        dtype = "np.float64" if library == "numpy" else "torch.float64"
        positions = (
            f"first, rows = {row_start}, {rows}  # the window: positions first .. first+rows-1, one row each\n"
            f"k = {arange}(first, first + rows, dtype={dtype})[:, None]\n"
        )
    if view == "values":
        key = "matrix_heatmap"
        fill = reproduce.fill_lines(layout, "P", "L" if row_start is None else "rows", library)
        code += positions + "\n".join(fill) + "\n"
        if library == "torch":
            code += "P, w = P.numpy(), w.numpy()  # from here on NumPy: the averages the chart draws\n"
        pair_edges = reproduce.pair_edges(d, layout, max_cols)
        code += "\n" + reproduce.encoding_blocks_code("P", "shown", layout, row_edges, pair_edges)
    else:
        key = "matrix_angles"
        pair_edges = reproduce.pair_edges(2 * ((d + 1) // 2), "concatenated", 2 * max_cols)
        code += positions + "theta = k * w  # the angle k·ω_i of every position and pair (rad)\n"
        if library == "torch":
            code += "theta, w = theta.numpy(), w.numpy()  # from here on NumPy: the averages the chart draws\n"
        code += (
            "\n# A block of angles is drawn as its circular mean atan2(mean sin, mean cos): 359° and 1° are close\n"
            "S, C = np.sin(theta), np.cos(theta)\n"
        )
        blocks = row_edges if reproduce.is_reduced(row_edges) else None
        code += reproduce.block_average_code(("S", "C"), blocks, pair_edges)
        code += "shown = np.degrees(np.arctan2(S, C)) % 360.0\n"
    code += (
        "\n# The rate and wavelength charts: pair i, ω_i (rad/position), λ_i = 2π/ω_i (positions)\n"
        "rates = np.column_stack([np.arange(len(w)), w, 2 * np.pi / w])\n"
    )
    if L * d <= NUMBERS_CELLS:
        if view != "values" or row_start is not None:
            torch = library == "torch"
            code += "\n# P itself, every position, for the page's table of numbers\n"
            code += "w = torch.from_numpy(w)\n" if torch else ""
            code += reproduce.encoding_rows_code(settings, library=library)
            code += "P, w = P.numpy(), w.numpy()\n" if torch else ""
        code += (
            "\n# The matrix as numbers, as the page's table shows it: position k, then its d values\n"
            "for k, row in enumerate(P):\n"
            '    print(f"{k}:", *(f"{x:.8f}" for x in row))\n'
        )
    return code + reproduce.result_code({key: "shown.T" if transpose else "shown", "matrix_rates": "rates"})
