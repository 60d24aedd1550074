"""Encoding matrix: P as a heatmap, its angles, its frequencies and wavelengths."""

from dataclasses import replace

import pandas as pd
import streamlit as st

import pe_core
from explorer import figures
from explorer.settings import Settings, format_number
from explorer.topics import matrix
from explorer.ui import blocks, cached, controls

# --- this page's cached computations (st.cache_data: shared by every session) ---


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def angle_map(settings: Settings, max_rows: int, max_pairs: int, start: int = 0):
    """Circular block means of the angles, in degrees (positions start .. start+L-1)."""
    return pe_core.angle_block_mean(
        settings.L, settings.d, settings.n, convention=settings.convention, start=start, max_rows=max_rows,
        max_pairs=max_pairs,
    )


settings: Settings = st.session_state["settings"]
st.title("Encoding matrix")
# One element for the formula and its reading (a page's elements each cost its every rerun, and these come
# before its first chart).
st.markdown(
    "$$\n"
    r"P[k, 2i] = \sin\!\left(k\,\omega_i\right),\allowbreak\quad P[k, 2i{+}1] = \cos\!\left(k\,\omega_i\right),"
    r"\allowbreak\quad \omega_i = n^{-2i/d}\ \text{(paper)}\ \text{or}\ n^{-i/(m-1)}\ \text{(tensor2tensor)}"
    "\n$$"
    "\n\n"
    "Each row is the encoding of one position k; each pair of columns is a sine and a cosine "
    "turning at its own frequency ω_i. Fast pairs (left) change colour from row to row; slow "
    "pairs (right) barely move, so together they give every position a unique, bounded code."
)


def heatmap() -> None:
    """The view and row controls and the heatmap they choose: moving them reruns only this."""
    # One row of two columns for all four controls: every block is a message the browser lays out.
    left, right = st.columns(2)
    view = controls.choice_control(
        "view", "Show", ("values", "angles"), default="values", container=left,
        format_func={"values": "values P[k, j]", "angles": "angles k·ω_i (degrees, mod 360)"}.get,
    )
    transpose = controls.bool_control("transpose", "Transpose (dimensions down, as seed 003)", container=right)
    grid = matrix.matrix_grid(L, d, view, transpose=transpose)
    # More positions than rows: draw block averages of all of them, or a window of single positions.
    row_start = None
    if grid[0] < L:
        rows = controls.choice_control(
            "rows", f"Positions on the {grid[0]} {'columns' if transpose else 'rows'}", ("average", "window"),
            default="average", container=left,
            format_func={"average": "block averages of all positions",
                         "window": f"a window of {grid[0]} single positions"}.get,
        )
        if rows == "window":
            row_start = controls.int_control(
                "row_start", "First position of the window", default=0, low=0, high=L - grid[0],
                container=right,
                help=f"The window shows positions from here to here + {grid[0] - 1}, one each.",
            )
    if view == "values":
        blocks.cached_section("matrix_values", lambda: values_map(grid, transpose, row_start), settings, transpose,
                              row_start)
        blocks.downloads("the heatmap's values", lambda: values_table(grid, transpose, row_start), key="matrix_heatmap")
    else:
        blocks.cached_section("matrix_angles", lambda: angles_map(grid, transpose, row_start), settings, transpose,
                              row_start)
        blocks.downloads("the angles (degrees)", lambda: angles_table(grid, transpose, row_start), key="matrix_angles")
    snippet.update(view=view, transpose=transpose, row_start=row_start, max_rows=grid[0], max_cols=grid[1])


def drawn_settings(rows: int, row_start: int | None) -> tuple[Settings, int, str]:
    """The positions the heatmap stands for (all, or a window of ``rows``), its first position,
    its title's settings."""
    shape = f"L={L:,}, d={d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"
    if row_start is None:
        return settings, 0, shape
    return replace(settings, L=rows), row_start, f"{shape}; positions {row_start:,}..{row_start + rows - 1:,}"


def values_map(grid: tuple[int, int], transpose: bool, row_start: int | None) -> None:
    drawn, start, shape = drawn_settings(grid[0], row_start)
    reduced = cached.reduced_encoding(drawn, *grid, start)
    labels, ticks = figures.encoding_axis_labels(
        reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w, settings.layout
    )
    fig = figures.encoding_figure(
        reduced.values, reduced.row_first, reduced.row_last, labels, ticks,
        title=f"Positional encoding P ({shape})", transpose=transpose,
    )
    blocks.chart(fig, key="matrix_heatmap")
    if row_start is None:
        blocks.reduced_note("Encoding", reduced.values.shape, (L, d))
        averaging = figures.averaging_note(reduced.row_first, reduced.row_last, w)
        if averaging:
            st.caption(f"{averaging} To see single positions, choose a window of {grid[0]} single positions above.")
    else:
        st.caption(matrix.window_note(start, grid[0], L, (reduced.values.shape[1], d), "columns"))


def values_table(grid: tuple[int, int], transpose: bool, row_start: int | None):
    drawn, start, _ = drawn_settings(grid[0], row_start)
    reduced = cached.reduced_encoding(drawn, *grid, start)
    labels, _ = figures.encoding_axis_labels(
        reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w, settings.layout
    )
    return figures.encoding_table(reduced.values, reduced.row_first, reduced.row_last, labels, transpose=transpose)


def angles_map(grid: tuple[int, int], transpose: bool, row_start: int | None) -> None:
    drawn, start, shape = drawn_settings(grid[0], row_start)
    degrees, row_first, row_last, pair_edges = angle_map(drawn, *grid, start)
    labels = matrix.angle_axis_labels(pair_edges, w)
    fig = figures.encoding_figure(
        degrees, row_first, row_last, labels, [str(int(a)) for a in pair_edges[:-1]],
        title=f"Angle k·ω_i in degrees, mod 360 ({shape})", transpose=transpose, value_name="angle (deg)",
        colorscale=figures.CYCLIC, zrange=(0.0, 360.0), x_title="pair i",
    )
    blocks.chart(fig, key="matrix_angles")
    if row_start is None:
        blocks.reduced_note("Angles", degrees.shape, (L, len(w)))
    else:
        st.caption(matrix.window_note(start, grid[0], L, (degrees.shape[1], len(w)), "pairs"))
    if degrees.shape != (drawn.L, len(w)):  # some cell stands for a block of angles
        st.caption("Blocks of angles are circular means, atan2(mean sin, mean cos), since 359° and 1° are neighbours.")
    if row_start is None and grid[0] < L:
        st.caption(
            "A pair that turns through whole cycles within a block has a mean (sin, cos) near 0, whose angle "
            "is no more than rounding: choose a window of single positions to see every angle."
        )


def angles_table(grid: tuple[int, int], transpose: bool, row_start: int | None):
    drawn, start, _ = drawn_settings(grid[0], row_start)
    degrees, row_first, row_last, pair_edges = angle_map(drawn, *grid, start)
    return figures.encoding_table(degrees, row_first, row_last, matrix.angle_axis_labels(pair_edges, w),
                                  transpose=transpose)


def rates() -> None:
    st.header("Frequencies and wavelengths")
    st.markdown(r"Pair i turns at $\omega_i$ rad/position, so it repeats every $\lambda_i = 2\pi/\omega_i$ positions.")
    blocks.chart(matrix.rates_figure(w), key="matrix_rates")


def numbers() -> None:
    st.header("The matrix as numbers")
    P = cached.encoding(settings)
    st.dataframe(pd.DataFrame(P, columns=[f"j={j}" for j in range(settings.d)]).style.format("{:.8f}"))


L, d = settings.L, settings.d
w = cached.frequencies(settings)
#: The reproduce-this code's arguments; the heatmap's controls add theirs.
snippet: dict[str, object] = {}
blocks.fragment(heatmap)
blocks.first_chart_sent()
blocks.cached_section("matrix_rates", rates, settings.d, settings.n, settings.convention)
blocks.downloads("ω_i and λ_i", lambda: matrix.frequency_table(w), key="matrix_rates")
if settings.L * settings.d <= matrix.NUMBERS_CELLS:
    blocks.cached_section("matrix_numbers", numbers, settings)
blocks.reproduce(lambda: matrix.matrix_code(settings, **snippet),
                 lambda: matrix.matrix_code(settings, **snippet, library="torch"))
