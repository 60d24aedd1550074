r"""Linear scaling (position interpolation): every pair divided by the factor,
:math:`\theta'_i = \theta_i / s`; its inverse reading (a plateau of gain 1/s from the first pair read on)
and what else a table read as it may be."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.methods.registry import ConfigKey, RopeMethod
from pe_core.rope.methods.shared import _factor_phrase, _no_attention_factor, _nothing_to_check
from pe_core.rope.reading import FrequencyEvidence, MethodReadings
from pe_core.wording import number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling


def _linear_frequencies(theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None) -> np.ndarray:
    return theta / scaling.factor


def _linear_sentence(reading: dict) -> str:
    return f"Linear scaling (position interpolation) by {number(reading['factor'])}: every pair divided by it."


def _linear_read(evidence: FrequencyEvidence) -> MethodReadings:
    """Every pair divided alike: a plateau from the first pair read on, its gain 1/s."""
    s, gains = evidence.plateau_factor, evidence.gains
    first_read = int(np.flatnonzero(evidence.measured.readable)[0])
    if not (evidence.scaled and s is not None and s > 1.0 and gains.prefix_last < 0 and gains.tail_first == first_read):
        return MethodReadings()
    notes = (
        f"Linear scaling by {number(s)} divides every pair, pair 0 included (which no base changes), so "
        "the factor is read from the fastest pair alone. LongRoPE with every divisor "
        f"{number(s)} gives the same frequencies, and so does YaRN whose ramp lies past the last pair.",
    )
    return MethodReadings(from_plateau=tuple(
        evidence.scaled_reading("linear", s, None, {"method": "linear", "factor": s}, notes)))


def _linear_table_note(reading: dict, start: int) -> str:
    s = number(reading["factor"])
    return (
        f"As a table: the same numbers are no scaling at positions {number(start)}/{s}, "
        f"({number(start)} + 1)/{s}, ... (position_ids divided by {s}, which is what position "
        f"interpolation does), or factor {s} t at every t-th position; read at consecutive whole positions, "
        f"as models hold them, the factor is {s}."
    )


LINEAR = RopeMethod(
    name="linear", frequencies=_linear_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length=None, validate=_nothing_to_check,
    sentence=_linear_sentence, phrase=_factor_phrase, read=_linear_read, table_note=_linear_table_note,
)
