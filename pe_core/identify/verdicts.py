"""The sentences of a rotary verdict: what a table or a frequency vector was read as, and what it cannot tell."""

from __future__ import annotations

import math

import numpy as np

from pe_core.identify.frequencies import AGREEMENT, FrequencyReading
from pe_core.identify.table import ONE_COLUMN, TableReading
from pe_core.rope.methods import rope_method
from pe_core.wording import number, pair_span

_KIND_PHRASES = {
    "rope_cos": "RoPE cos table",
    "rope_sin": "RoPE sin table",
    "rope_complex": "RoPE complex table (Meta's freqs_cis)",
}
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
    """What a base that is not round may be: NTK-aware or dynamic NTK scalings of a round base."""
    ntk = [a for a in reading.alternatives if a and a.get("method") == "ntk"]
    dynamic = [a for a in reading.alternatives if a and a.get("method") == "dynamic"]
    if not ntk and not dynamic:
        return ""
    options = [f"NTK-aware scaling by {number(o['factor'])} of base {number(o['base'])} (or dynamic NTK at the "
               "sequence length where its step s L / L0 - (s - 1) is that)" for o in ntk]
    options += [
        f"dynamic NTK of base {number(o['base'])} with step q = {number(o['step'])} (q = s L / L0 - (s - 1) at "
        "sequence length L: only q is in the frequencies)"
        for o in dynamic
    ]
    return (
        f"Base {number(reading.base)} is not round: it may be {' or '.join(options)}, since both change only the "
        "base (base' = base q^(d/(d-2))); the frequencies cannot tell a base from such a scaling of another."
    )


def _attention_sentence(table: TableReading) -> str:
    a = table.amplitude
    scaling = table.reading.scaling
    method = scaling["method"] if scaling else None
    if method == "yarn":
        s = scaling["factor"]
        default = 0.1 * math.log(s) + 1.0
        if abs(a - default) <= AGREEMENT * table.amplitude_error:
            return f"Attention factor {a:.6g} = 0.1 ln {number(s)} + 1, YaRN's default, in the amplitude."
        if a == 1.0:
            return ("Attention factor 1: with YaRN this is mscale = mscale_all_dim (DeepSeek-V3, whose attention "
                    "applies the factor to the softmax scale instead) or attention_factor 1.")
        return (f"Attention factor {a:.6g}, not YaRN's default {default:.6g}: the config sets attention_factor, or "
                "mscale and mscale_all_dim (their ratio).")
    if method == "longrope":
        if a == 1.0:
            return "Attention factor 1 (LongRoPE's sqrt(1 + ln s / ln L0) is 1 only without a factor)."
        ratio = a * a - 1.0
        offers = [
            (2**k, 2.0 ** (k * ratio)) for k in range(9, 21) if abs(2.0 ** (k * ratio) - round(2.0 ** (k * ratio)))
            <= 1e-3 * 2.0 ** (k * ratio)
        ]
        offer = f", e.g. factor {number(round(offers[0][1]))} from {offers[0][0]} positions" if offers else ""
        return (f"Attention factor {a:.6g} = sqrt(1 + ln s / ln L0) with ln s / ln L0 = {ratio:.4g}{offer}: "
                "only that ratio is in the table.")
    if a == 1.0:
        return "Amplitude 1: no attention factor."
    return (f"Amplitude {a:.6g}: transformers multiplies cos and sin by an attention factor only for yarn and "
            "longrope (or an attention_factor in the config).")


def _start_phrase(table: TableReading, length: int) -> str:
    last = table.start + length - 1
    phrase = f"positions {table.start} to {last}"
    if table.start < 0:
        phrase += (" (a negative start: the rows may run backwards from position "
                   f"{-table.start}, which a cosine cannot tell)" if table.kind == "rope_cos" else "")
    return phrase


def _unreadable_sentence(table: TableReading, length: int) -> str:
    unread = np.flatnonzero(~table.measured.readable)
    unread = np.setdiff1d(unread, np.array(table.left_out, dtype=np.int64))
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
        layout = ""
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
    if reading.scaling and reading.scaling["method"] == "linear":
        s = number(reading.scaling["factor"])
        sentences.append(
            f"As a table: the same numbers are no scaling at positions {number(table.start)}/{s}, "
            f"({number(table.start)} + 1)/{s}, ... (position_ids divided by {s}, which is what position "
            f"interpolation does), or factor {s} t at every t-th position; read at consecutive whole positions, "
            f"as models hold them, the factor is {s}."
        )
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
    layout = "" if table.kind == "rope_complex" else f", {table.layout} layout"
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
