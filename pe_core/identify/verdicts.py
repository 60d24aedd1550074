"""The sentences of a rotary verdict: what a table or a frequency vector was read as, and what it cannot tell."""

from __future__ import annotations

import numpy as np

from pe_core.identify.table import ONE_COLUMN, TableReading
from pe_core.rope.methods import rope_method, rope_method_names
from pe_core.rope.reading import FrequencyReading
from pe_core.wording import number, pair_span

_KIND_PHRASES = {
    "rope_cos": "RoPE cos table",
    "rope_sin": "RoPE sin table",
    "rope_complex": "RoPE complex table (Meta's freqs_cis)",
}
#: How a complex table pairs coordinates: what a port of Meta's code to the half layout must permute.
_COMPLEX_PAIRING = ("interleaved layout (pair i is coordinates 2i and 2i + 1: Meta's code multiplies it with "
                    "view_as_complex(x.reshape(..., -1, 2)); in the half layout the weights' columns are permuted)")
_LAYOUT_PHRASES = {
    "half": "half layout (pair i in columns i and i + d/2: cat(freqs, freqs), GPT-NeoX and Llama in transformers)",
    "interleaved": "interleaved layout (pair i in columns 2i and 2i + 1: RoFormer, GPT-J, Meta)",
    ONE_COLUMN: ("half layout with one column per pair (pair i in column i: the first half of cat(freqs, freqs), "
                 "as gpt-oss's rotary embedding returns cos and sin; its rotation pairs coordinates i and i + d/2)"),
}


def base_phrase(reading: FrequencyReading) -> str:
    if reading.base is None:
        return "one pair turning 1 rad per position for every base (the base cannot be told)"
    return f"base {number(reading.base)}"


def method_phrase(reading: FrequencyReading) -> str:
    if reading.scaling is None:
        return "no scaling"
    return rope_method(reading.scaling["method"]).phrase(reading.scaling)


def scaling_sentence(reading: FrequencyReading, *, d: int, table: bool) -> str:
    scaling = reading.scaling
    if scaling is None and reading.base is None:
        return "Pair 0 turns 1 rad per position: no scaling divides it."
    if scaling is None:
        return "No scaling: theta_i = base^(-2i/d) for every pair read."
    return rope_method(scaling["method"]).sentence(scaling)


def alternatives_sentence(reading: FrequencyReading) -> str:
    """What a base that is not round may be: the base changes its alternatives offer (NTK-aware or dynamic NTK
    scalings of a round base), each named by its method's entry."""
    options = []
    for alternative in reading.alternatives:
        phrase = rope_method(alternative["method"]).offer_phrase if alternative else None
        if phrase is not None:
            options.append(phrase(alternative))
    if not options:
        return ""
    return (
        f"Base {number(reading.base)} is not round: it may be {' or '.join(options)}, since both change only the "
        "base (base' = base q^(d/(d-2))); the frequencies cannot tell a base from such a scaling of another."
    )


def _attention_sentence(table: TableReading) -> str:
    a = table.amplitude
    scaling = table.reading.scaling
    reading = rope_method(scaling["method"]).attention_reading if scaling else None
    if reading is not None:
        return reading(a, table.amplitude_error, scaling)[1]
    if a == 1.0:
        return "Amplitude 1: no attention factor."
    having = [name for name in rope_method_names() if rope_method(name).attention_reading is not None]
    return (f"Amplitude {a:.6g}: transformers multiplies cos and sin by an attention factor only for "
            f"{' and '.join(having)} (or an attention_factor in the config).")


def _start_phrase(table: TableReading, length: int) -> str:
    last = table.start + length - 1
    phrase = f"positions {table.start} to {last}"
    if table.start < 0:
        phrase += (" (a negative start: the rows may run backwards from position "
                   f"{-table.start}, which a cosine cannot tell)" if table.kind == "rope_cos" else "")
    return phrase


def unread_pairs(table: TableReading) -> np.ndarray:
    """The pairs the table could not read, but those left out and those the reading leaves unrotated (frequency 0:
    its method's sentence says so)."""
    unread = np.flatnonzero(~table.measured.readable & (table.reading.frequencies != 0))
    return np.setdiff1d(unread, np.array(table.left_out, dtype=np.int64))


def _unreadable_sentence(table: TableReading, length: int) -> str:
    unread = unread_pairs(table)
    if unread.size == 0:
        return ""
    reach = max(abs(table.start), abs(table.start + length - 1), 1)
    turn = float(np.max(table.reading.frequencies[unread])) * reach
    return (
        f"Pair{'s' if unread.size > 1 else ''} {pair_span(unread)} turn{'s' if unread.size == 1 else ''} too slowly "
        f"to read at these positions (at most {turn:.2g} rad at position {reach} by the reading): the table only "
        "bounds their frequencies, which are the reading's; a scaling that changed only them could not be seen."
    )


def matched_verdict(table: TableReading, shape: tuple[int, ...], precision: tuple[str, float]) -> str:
    L = shape[0] if not table.transposed else shape[1]
    reading = table.reading
    kind = _KIND_PHRASES[table.kind]
    if table.kind == "rope_complex":
        layout = f", {_COMPLEX_PAIRING}"
    elif table.d == 2:
        layout = ", a single pair (both layouts are the same for d = 2)"
    else:
        layout = f", {_LAYOUT_PHRASES[table.layout]}"
    first = f"{kind}{layout}, d = {table.d}, {base_phrase(reading)}, {_start_phrase(table, L)}."
    arithmetic = ""
    if table.arithmetic == "float32":
        arithmetic = " with angles computed in float32 (as transformers and Meta's code compute them)"
    name = precision[0]
    fit = (f"It rebuilds every value to {table.error:.1e}, within the round-off of "
           f"{'a CSV with ' if 'decimals' in name else ''}{name} values{arithmetic}.")
    sentences = [first, scaling_sentence(reading, d=table.d, table=True), _attention_sentence(table), fit,
                 _unreadable_sentence(table, L), *reading.notes, alternatives_sentence(reading)]
    table_note = rope_method(reading.scaling["method"]).table_note if reading.scaling else None
    if table_note is not None:
        sentences.append(table_note(reading.scaling, table.start))
    if table.start_ambiguous:
        sentences.append(f"Other starts fit nearly as well; {table.start} is the smallest of them.")
    if table.transposed:
        sentences.append(f"The table is transposed: its rows are the {table.d} dimensions and its columns the "
                         f"{L} positions.")
    if table.kind == "rope_complex" and len(shape) == 3:
        sentences.append("Read as the real view (L, d/2, 2) of a complex table (torch.view_as_real).")
    return " ".join(s for s in sentences if s)


def rejected_verdict(table: TableReading, shape: tuple[int, ...]) -> str:
    row, column, value, expected = table.where
    if table.transposed:
        row, column = column, row
    what = {"rope_cos": "RoPE cos or sin table", "rope_sin": "RoPE cos or sin table",
            "rope_complex": "RoPE complex table"}[table.kind]
    layout = f", {table.layout} layout"
    closest = (f"{_KIND_PHRASES[table.kind].replace('RoPE ', '')}{layout}, d = {table.d}, "
               f"{base_phrase(table.reading)}, {method_phrase(table.reading)}, start {table.start}, amplitude "
               f"{table.amplitude:.6g}")
    if table.kind == "rope_complex":
        cell = f"the table has {_complex_text(value)} where the reading has {_complex_text(expected)}"
    else:
        cell = f"the table has {value:.6g} where the reading has {expected:.6g}"
    differ = "values differs" if table.mismatches == 1 else "values differ"
    reason = table.problem or (
        f"{table.mismatches:,} of its {table.cells:,} {differ} from the closest reading by more than round-off "
        "explains"
    )
    left_out = (f" The two columns of pair{'s' if len(table.left_out) > 1 else ''} {pair_span(table.left_out)} "
                "disagree (a rotary table holds each pair's values twice).") if table.left_out else ""
    return (
        f"Not a {what} as a model computes it: {reason}. The closest reading ({closest}) differs by up to "
        f"{table.error:.3g}, most at row {row}, column {column}: {cell}.{left_out}"
    )


def _complex_text(value: complex) -> str:
    return f"{value.real:.6g}{value.imag:+.6g}i"
