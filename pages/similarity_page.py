"""Similarity: how alike every position's encoding is to one reference position (seed 001),
the position x position dot-product matrix, and its closed form sum_i cos(w_i delta)."""

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from explorer import animation, figures
from explorer.settings import FULL_MATRIX_CELLS, Settings, format_number
from explorer.topics import similarity
from explorer.topics.similarity import MEASURED_CELLS, SIMILARITY_BLOCKS
from explorer.ui import blocks, cached, controls

# --- this page's cached computations (st.cache_data: shared by every session) ---


def measured_around(settings: Settings, ref: int) -> similarity.MeasuredDots:
    """similarity.measured_dots around ``ref``, cached by its window of positions: the window does
    not move with L (unless ref is near the end), so an L step measures nothing again."""
    first, count = similarity.measure_window(settings.L, settings.d, ref, MEASURED_CELLS)
    return measured_window(settings.d, settings.n, settings.layout, settings.convention, ref, first, count)


@cached.page_cache(st.cache_data(max_entries=32, show_spinner=False))
def measured_window(
    d: int, n: float, layout: str, convention: str, ref: int, first: int, count: int
) -> similarity.MeasuredDots:
    """P[k]·P[ref] for k = first .. first+count-1, and the closed form there (similarity.measured_dots)."""
    return similarity.measured_dots(first, count, d, n, layout=layout, convention=convention, ref=ref)


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def reference_curves(
    settings: Settings, ref: int
) -> tuple[similarity.SimilarityCurves, similarity.MeasuredDots, str]:
    """Dot product, SSE and cosine of every position against ``ref``, the dot products measured
    on the encoding with the closed form at the same positions, and how they were measured:
    computed once for the three sections and the downloads that show them."""
    L, d = settings.L, settings.d
    if L * d <= FULL_MATRIX_CELLS:
        # Built for these measurements and dropped (never cached: up to 4 MB, which
        # st.cache_data pickled on every write and read); its cosines give the closed form too.
        P = pe_core.positional_encoding(L, d, settings.n, layout=settings.layout, convention=settings.convention)
        curves = similarity.similarity_from_matrix(P, ref)
        closed = similarity.closed_form_from_encoding(P, settings.layout, np.arange(L) - ref)
        return curves, similarity.MeasuredDots(0, curves.dot, closed), (
            f"Measured on the {L:,} x {d:,} encoding matrix: P @ P[ref], the row-wise SSE, and the cosine."
        )
    # P is too large to build: the dot products are measured on a window of positions around ref.
    return similarity.similarity_from_offsets(cached.dot_by_offset(settings), ref, d), measured_around(settings, ref), (
        f"L x d = {L * d:,} cells is more than this page builds ({FULL_MATRIX_CELLS:,}), so the curves "
        "use the closed forms: dot = Σ cos(ω_i (k − ref)), SSE = d − 2·dot, cosine = dot / (d/2) "
        "(every row has squared norm d/2). They are checked against the matrix around the reference below."
    )


#: Rows of the table of exact values around the reference position.
TABLE_RADIUS = 5

settings = blocks.even_d_page("Similarity", "the closed forms need sine/cosine pairs")
d, L = settings.d, settings.L
# One element for the text and its two formulas (a page's elements each cost its every rerun, and these come
# before its first chart).
st.markdown(
    "Nearby positions have similar encodings. Compare every position k with one reference "
    "position, as seed 001 does with position 20: the dot product is largest at the "
    "reference and falls off with distance; the sum of squared differences (SSE) does the opposite.\n\n"
    "$$\n"
    r"P[k]\cdot P[k{+}\delta] = \sum_{i} \big(\sin\omega_i k\,\sin\omega_i (k{+}\delta)"
    r" + \cos\omega_i k\,\cos\omega_i (k{+}\delta)\big) = \sum_{i} \cos(\omega_i \delta)"
    "\n$$"
    "\n\n"
    "$$\n"
    r"\lVert P[k]-P[k{+}\delta]\rVert^2 = d - 2\sum_i \cos(\omega_i\delta)"
    "\n$$"
)

shape = f"L={L:,}, d={d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"
by_offset = cached.dot_by_offset(settings)


def measured_where(curves: similarity.SimilarityCurves, measured: similarity.MeasuredDots) -> str:
    """Which positions' dot products were measured on the encoding."""
    if curves.from_matrix:
        return "every position"
    last = measured.first + measured.values.size - 1
    return f"positions {measured.first:,}..{last:,} (a window around the reference)"


def against_reference(ref: int) -> None:
    curves, _, method = reference_curves(settings, ref)
    st.header(f"Every position against position {ref}")
    blocks.chart(similarity.similarity_figure(curves, title=f"Similarity to position {ref} ({shape})"),
                 key="similarity_lines")
    st.caption(method)
    if figures.envelope_note(L):
        st.caption(figures.envelope_note(L, "position"))


def reference_numbers(ref: int) -> None:
    curves, _, _ = reference_curves(settings, ref)
    near = np.arange(max(0, ref - TABLE_RADIUS), min(L, ref + TABLE_RADIUS + 1))
    labels = similarity.metric_labels(ref, L)
    numbers = blocks.row()
    numbers.metric(labels["self"], f"{curves.dot[ref]:.10g}")
    if L > 1:
        neighbour = similarity.neighbour_of(ref, L)
        numbers.metric(labels["neighbour"], f"{curves.dot[neighbour]:.10g}")
        numbers.metric(labels["sse"], f"{curves.sse[neighbour]:.10g}")
    blocks.table(
        pd.DataFrame(
            {"position k": near, "offset k − ref": near - ref, "dot product": curves.dot[near],
             "SSE": curves.sse[near], "cosine": curves.cosine[near]}
        ),
        formats=dict.fromkeys(("dot product", "SSE", "cosine"), "%.12g"),
        hide_index=True,
    )


def closed_form(ref: int) -> None:
    curves, measured, _ = reference_curves(settings, ref)
    where = measured_where(curves, measured)
    difference = float(np.abs(measured.values - measured.closed).max())
    st.header("The closed form")
    blocks.chart(
        similarity.closed_form_figure(
            by_offset, measured=measured.values, measured_first_offset=measured.first - ref,
            title=f"Σ cos(ω_i δ), and the dot products measured against position {ref} (points)",
        ),
        key="similarity_closed_form",
    )
    numbers = blocks.row()
    labels = similarity.metric_labels(ref, L)
    numbers.metric(labels["f0"], f"{by_offset[L - 1]:.10g}")
    numbers.metric(
        labels["check"], f"{difference:.2e}",
        help=f"Largest difference between P[k]·P[ref] computed on the encoding and Σ cos(ω_i (k − ref)), over "
        f"{where}.",
    )
    if L > 1:
        offsets = f"for δ = −{L - 1:,} .. {L - 1:,}: even in δ, largest (= d/2 = {d // 2:,}) at δ = 0"
    else:
        offsets = f"at δ = 0, the one offset of one position: d/2 = {d // 2:,}"
    st.caption(
        f"f(δ) {offsets}, and the same for both layouts. Measured points: {where}. "
        f"{figures.envelope_note(2 * L - 1, 'offset')}"
    )


def closed_form_table(ref: int) -> pd.DataFrame:
    measured = reference_curves(settings, ref)[1]
    return similarity.closed_form_table(by_offset, measured=measured.values, measured_first_offset=measured.first - ref)


def reference_sections() -> None:
    """Everything that depends on the reference position: moving it reruns only this."""
    ref = controls.int_control(
        "ref", "Reference position", default=min(20, L - 1), low=0, high=L - 1,
        help="Every position is compared with this one (seed 001 uses 20).",
    )
    blocks.cached_section("similarity_lines", lambda: against_reference(ref), settings, ref)
    blocks.first_chart_sent()
    blocks.downloads("these curves", lambda: similarity.similarity_table(reference_curves(settings, ref)[0]),
                     key="similarity_lines")
    blocks.cached_section("similarity_numbers", lambda: reference_numbers(ref), settings, ref)
    blocks.cached_section("similarity_closed_form", lambda: closed_form(ref), settings, ref)
    blocks.downloads("the closed form and the measured points", lambda: closed_form_table(ref),
                     key="similarity_closed_form")
    snippet["ref"] = ref


def reference_play() -> None:
    figure = similarity.reference_play_figure(
        by_offset, title="Play: P[k]·P[r] as r moves"
    )
    swept = [int(name) for name in figure.frame_names]
    blocks.chart(figure, key="similarity_reference_play")
    st.caption(
        f"{shape}. Press Play: the reference r goes from {swept[0]:,} to {swept[-1]:,} in "
        f"{figures.count_text(len(swept), 'frame')}"
        + (f" (evenly spread positions of 0..{L - 1:,})" if len(swept) < L else "")
        + ", drawn by your browser (no server run per frame). The curve slides with r without changing shape "
        "(cut off at the ends): P[k]·P[r] = Σ cos(ω_i (k − r)) depends only on the offset k − r. "
        + animation.KEYBOARD_NOTE
    )


def offset_matrix() -> None:
    st.header("Every pair of positions")
    edges = pe_core.block_edges(L, SIMILARITY_BLOCKS)
    block_means = pe_core.offset_matrix_block_average(by_offset, edges)
    blocks.chart(
        similarity.offset_matrix_figure(block_means, edges, d=d, title=f"Dot product P[k]·P[k′] ({shape})"),
        key="similarity_matrix",
    )
    st.caption(
        "Each cell depends only on the offset k′ − k, so the matrix is constant along every diagonal "
        "(a Toeplitz matrix): it is drawn from the closed form Σ cos(ω_i (k′ − k)) over the 2L − 1 offsets, "
        "never built as an L x L matrix."
    )
    blocks.reduced_note("Dot-product matrix", block_means.shape, (L, L))


def offset_matrix_table() -> pd.DataFrame:
    edges = pe_core.block_edges(L, SIMILARITY_BLOCKS)
    return similarity.offset_matrix_table(pe_core.offset_matrix_block_average(by_offset, edges), edges)


#: The reproduce-this code's reference position (set by its control's fragment).
snippet: dict[str, int] = {}
blocks.fragment(reference_sections)
st.header("The reference position, moving")
if L > 1:
    play = blocks.play_on_request("Play: P[k]·P[r] as r moves")
    if play is not None:
        with play:
            blocks.cached_section("similarity_reference_play", reference_play, settings)
            blocks.downloads("the Play frames' values", lambda: similarity.reference_play_table(by_offset),
                             key="similarity_reference_play")
else:
    st.caption("With one position the reference cannot move: Play, which slides it along the positions, needs L ≥ 2.")
blocks.cached_section("similarity_matrix", offset_matrix, settings)
blocks.downloads("the matrix's values", offset_matrix_table, key="similarity_matrix")
blocks.reproduce(
    similarity.similarity_code(
        settings, snippet["ref"], blocks=SIMILARITY_BLOCKS, full_cells=FULL_MATRIX_CELLS,
        measured_cells=MEASURED_CELLS,
    )
)
