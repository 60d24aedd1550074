"""Binary vs sinusoid: the binary code of a position is the discrete ancestor of the
sinusoidal encoding (seed 003): the lowest bit flips fastest, as the first pair turns fastest."""

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from explorer import figures
from explorer.settings import Settings, format_number
from explorer.topics import binary
from explorer.ui import blocks, cached, controls

MAX_BITS = 16
NEIGHBOURS_SHOWN = 8

settings: Settings = st.session_state["settings"]
d, L = settings.d, settings.L
w = cached.frequencies(settings)

st.title("Binary vs sinusoid")
st.markdown(
    "Write each position k in binary, least significant bit first (seed 003): bit j flips every "
    "2^j positions, a square wave of period 2^(j+1). The sinusoidal encoding does the same with "
    "smooth waves: pair i turns with wavelength 2π/ω_i. Both go from fast (top) to slow (bottom)."
)

needed = pe_core.bits_needed(L - 1)
left, right = st.columns(2)
bits = controls.int_control(
    "bits", "Bits (width of the code)", default=needed, low=needed, high=MAX_BITS, container=left,
    help=f"At least {needed} bits to write position {L - 1:,}.",
)
transpose = controls.bool_control(
    "transpose", "Transpose (bit / dimension down, token across, as seed 003)", container=right
)
# Both maps share the sinusoid map's blocks of positions, so that they face each other.
map_rows, map_cols = figures.heatmap_grid(L, d, transpose=transpose, power_of_two_columns=True)


def maps() -> None:
    # Both maps share the same blocks of positions, so a column of one faces the same column of the other.
    row_edges, binary_blocks = binary.code_blocks(L, bits, map_rows)
    blocks.chart(
        binary.binary_figure(
            binary_blocks, row_edges[:-1], row_edges[1:] - 1, transpose=transpose,
            title=f"Binary codes of {figures.positions_text(0, L - 1)} ({figures.count_text(bits, 'bit')}, "
            "least significant first)",
        ),
        key="binary_codes",
    )
    blocks.reduced_note("Binary codes", binary_blocks.shape, (L, bits))
    reduced = cached.reduced_encoding(settings, map_rows, map_cols)
    labels, ticks = figures.encoding_axis_labels(
        reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w, settings.layout
    )
    shape = f"L={L:,}, d={d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"
    sinusoid = figures.encoding_figure(
        reduced.values, reduced.row_first, reduced.row_last, labels, ticks,
        title=f"Sinusoidal encoding P ({shape})", transpose=transpose,
    )
    blocks.chart(sinusoid, key="binary_sinusoid")
    blocks.reduced_note("Encoding", reduced.values.shape, (L, d))
    averaging = figures.averaging_note(reduced.row_first, reduced.row_last, w)
    if averaging:
        st.caption(f"{averaging} The binary map's blocks are fractions of ones: a fast bit is on half the time, 0.5.")


def maps_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two maps as drawn, as tables."""
    row_edges, binary_blocks = binary.code_blocks(L, bits, map_rows)
    reduced = cached.reduced_encoding(settings, map_rows, map_cols)
    labels, _ = figures.encoding_axis_labels(
        reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w, settings.layout
    )
    return (
        binary.binary_table(binary_blocks, row_edges[:-1], row_edges[1:] - 1, transpose=transpose),
        figures.encoding_table(reduced.values, reduced.row_first, reduced.row_last, labels, transpose=transpose),
    )


blocks.cached_section("binary_maps", maps, settings, bits, transpose)
blocks.downloads("the binary map's values", lambda: maps_tables()[0], key="binary_codes")
blocks.downloads("the sinusoid map's values", lambda: maps_tables()[1], key="binary_sinusoid")


def periods() -> None:
    st.header("Bit period against wavelength")
    periods = pe_core.bit_periods(bits)
    lengths = pe_core.wavelengths(d, settings.n, settings.convention)
    blocks.chart(binary.periods_figure(periods, lengths, L), key="binary_periods")
    st.markdown(
        "Bit periods double at every bit; wavelengths grow by the constant factor "
        f"λ_(i+1)/λ_i = {lengths[1] / lengths[0] if len(lengths) > 1 else 1.0:.6g} per pair. A bit or a pair "
        f"whose period exceeds L = {L:,} (dotted line) never completes a cycle in the sequence: here "
        f"{int(np.sum(periods <= L))} of {figures.count_text(bits, 'bit')} and {int(np.sum(lengths <= L))} of "
        f"{figures.count_text(len(lengths), 'pair')} do."
    )
    periods_table = binary.periods_table(periods, lengths)
    # Streamlit writes a missing value as "None" unless told otherwise.
    blocks.table(periods_table, formats=dict.fromkeys(periods_table.columns[1:], binary.PERIODS_FORMAT),
                 hide_index=True, placeholder=binary.NO_ENTRY)
    if binary.periods_note(bits, len(lengths)):
        st.caption(binary.periods_note(bits, len(lengths)))


blocks.cached_section("binary_periods", periods, settings, bits)
blocks.downloads("periods and wavelengths", lambda: binary.periods_table(
    pe_core.bit_periods(bits), pe_core.wavelengths(d, settings.n, settings.convention)), key="binary_periods")


def distances_section() -> None:
    """Hamming distance and SSE against a reference: moving it reruns only this."""
    st.header("Hamming distance against SSE")
    ref = controls.int_control("ref", "Reference position", default=0, low=0, high=L - 1)
    blocks.cached_section("binary_distances", lambda: distances(ref), settings, bits, ref)
    blocks.downloads("both distances", lambda: binary.distance_table(*hamming_and_sse(ref), ref=ref),
                     key="binary_distances")
    snippet["ref"] = ref


def hamming_and_sse(ref: int) -> tuple[np.ndarray, np.ndarray]:
    hamming = pe_core.hamming_distance(pe_core.binary_encoding(L, bits), ref)
    return hamming, cached.sse_by_abs_offset(settings)[np.abs(np.arange(L) - ref)]


def distances(ref: int) -> None:
    B = pe_core.binary_encoding(L, bits)
    hamming, sse = hamming_and_sse(ref)
    blocks.chart(binary.distance_by_offset_figure(hamming, sse, ref=ref, bits=bits), key="binary_distances")
    if figures.envelope_note(L):
        st.caption(figures.envelope_note(L, "position"))

    neighbour_flips = np.abs(np.diff(B, axis=0)).sum(axis=1) if L > 1 else np.zeros(0)
    st.markdown(
        "The binary distance **jumps**: two neighbours can differ in one bit or in all of them "
        f"(7 and 8, {binary.lsb_first(7, max(bits, 4))} and {binary.lsb_first(8, max(bits, 4))} written least "
        "significant bit first as in the table below, differ in all 4 bits), and a far position can be one bit "
        "away. The sinusoid's "
        "SSE is **smooth** and depends only on the offset, never on where you stand: "
        "‖P[k] − P[k+δ]‖² = d − 2·Σ_i cos(ω_i δ), the same for every k."
    )
    if L > 1:
        worst = int(np.argmax(neighbour_flips))
        numbers = blocks.row()
        flips_label, neighbour_label, largest_label = binary.metric_labels(ref)
        numbers.metric(
            flips_label, f"{int(neighbour_flips.min())} to {int(neighbour_flips.max())} bits",
            help=f"Largest between positions {worst} and {worst + 1}.",
        )
        numbers.metric(neighbour_label, f"{cached.sse_by_abs_offset(settings)[1]:.6g}")
        numbers.metric(largest_label, f"{sse.max():.6g}", help=f"At most 2d = {2 * d}.")
    near = np.arange(max(0, ref - NEIGHBOURS_SHOWN), min(L, ref + NEIGHBOURS_SHOWN + 1))
    st.dataframe(
        pd.DataFrame({
            "position k": near,
            "offset k − ref": near - ref,
            "binary code (LSB first)": [binary.lsb_first(int(k), bits) for k in near],
            "Hamming distance (bits)": hamming[near].astype(int),
            "SSE": sse[near],
        }),
        hide_index=True,
    )


#: The reproduce-this code's reference position (set by its control's fragment).
snippet: dict[str, int] = {}
blocks.fragment(distances_section)
blocks.reproduce(
    binary.binary_code(settings, bits=bits, ref=snippet["ref"], transpose=transpose, max_rows=map_rows,
                          max_cols=map_cols)
)
