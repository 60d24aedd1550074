r"""LongRoPE, as Phi-3 runs it: one divisor per pair, short_factor up to :math:`L_0` and long_factor past
it, :math:`\theta'_i = \theta_i / e_i`, with the attention factor :math:`\sqrt{1 + \ln s / \ln L_0}`; its
inverse reading, per-pair divisors with the base that keeps them non-decreasing."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.methods.registry import FROM_LENGTHS, ConfigKey, RopeMethod
from pe_core.rope.reading import (
    AGREEMENT,
    FrequencyEvidence,
    FrequencyReading,
    Gains,
    MethodReadings,
    float32_frequency_error,
    gains_at,
    shortest,
)
from pe_core.wording import number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling


def _longrope_frequencies(
    theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None
) -> np.ndarray:
    long = length is not None and length > scaling.original_length
    divisors = scaling.long_factor if long else scaling.short_factor
    return theta / np.asarray(divisors, dtype=np.float64)


def _longrope_attention_factor(scaling: RopeScaling) -> float:
    if scaling.attention_factor is not None:
        return scaling.attention_factor
    s = scaling.factor
    return 1.0 if s <= 1 else math.sqrt(1 + math.log(s) / math.log(scaling.original_length))


def _longrope_validate(scaling: RopeScaling, d: int | None) -> None:
    short, long = scaling.short_factor, scaling.long_factor
    if short is None or long is None:
        missing = " and ".join(n for n, v in (("short_factor", short), ("long_factor", long)) if v is None)
        raise ValueError(f"longrope scaling needs {missing}: one divisor per pair (d/2 numbers each), which a "
                         "search finds for each model: a LongRoPE config.json (Phi-3's) gives them.")
    if d is not None and len(short) != d // 2:
        raise ValueError(
            f"longrope's short_factor and long_factor hold {len(short)} numbers each, "
            f"but d={d} has {d // 2} pairs: they need one number per pair."
        )


def _longrope_sentence(reading: dict) -> str:
    divisors = [v for v in reading["divisors"] if v is not None]
    shown = ", ".join(number(v) for v in divisors[:6]) + (", ..." if len(divisors) > 6 else "")
    return f"Per-pair divisors (LongRoPE, as Phi-3 runs it): e_i = {shown}."


def _longrope_phrase(reading: dict) -> str:
    return "per-pair divisors (LongRoPE)"


def _longrope_read(evidence: FrequencyEvidence) -> MethodReadings:
    """Per-pair divisors: with the round base of the equal neighbours when some neighbours fall slower than
    the common base, and, last of all readings, with the common base when no gain rises above 1."""
    if not evidence.scaled:
        return MethodReadings()
    measured, gains = evidence.measured, evidence.gains
    readable = measured.readable
    first: tuple[FrequencyReading, ...] = ()
    if evidence.lowest_base is not None:
        lowest_gains = gains_at(measured, math.log(evidence.lowest_base), evidence.d)
        if np.all(lowest_gains.gains[readable] <= 1.0 + AGREEMENT * lowest_gains.sigma[readable]):
            first = (_divisor_reading(evidence, evidence.lowest_base, lowest_gains),)
    last: tuple[FrequencyReading, ...] = ()
    non_ones = np.flatnonzero(readable & ~gains.ones)
    if evidence.decreasing and np.all(gains.gains[non_ones] < 1.0 + AGREEMENT * gains.sigma[non_ones]):
        last = (_divisor_reading(evidence, evidence.base, gains),)
    return MethodReadings(at_lowest_base=first, last=last)


def _divisor_reading(evidence: FrequencyEvidence, base: float, gains: Gains) -> FrequencyReading:
    """Per-pair divisors, each in its shortest decimal form within its error: the measurement's, and what
    float32 arithmetic moves a frequency (the same as a table's verification allows)."""
    measured, d = evidence.measured, evidence.d
    readable = measured.readable
    arithmetic = float32_frequency_error(d, math.log(base)) + measured.cast
    divisors = []
    for i in range(measured.theta.size):
        if readable[i]:
            relative = AGREEMENT * measured.sigma[i] / measured.theta[i] + arithmetic
            divisors.append(shortest(1.0 / gains.gains[i], relative)[0])
        else:
            divisors.append(None)
    plain = evidence.compute(base)
    frequencies = np.where(readable, plain / np.array([v or 1.0 for v in divisors]), measured.theta)
    notes = (
        "Per-pair divisors fit any frequencies, so this reading holds only because they do not "
        "decrease (LongRoPE keeps them so); the base and the divisors trade off (any base b' works with "
        f"divisors e_i (b/b')^(2i/d)): {number(base)} is the largest that keeps them non-decreasing, "
        "which makes the equal ones equal. Whether they are short_factor or long_factor depends on the "
        "sequence length (long_factor beyond original_max_position_embeddings).",
    )
    scaling = {"method": "longrope", "factor": None, "divisors": tuple(divisors)}
    return evidence.reading(base, frequencies, scaling, notes, measured_parameters=True)


def _longrope_attention_reading(amplitude: float, error: float, reading: dict) -> tuple[float, str]:
    if amplitude == 1.0:
        return amplitude, "Attention factor 1 (LongRoPE's sqrt(1 + ln s / ln L0) is 1 only without a factor)."
    ratio = amplitude * amplitude - 1.0
    offers = [
        (2**k, 2.0 ** (k * ratio)) for k in range(9, 21) if abs(2.0 ** (k * ratio) - round(2.0 ** (k * ratio)))
        <= 1e-3 * 2.0 ** (k * ratio)
    ]
    offer = f", e.g. factor {number(round(offers[0][1]))} from {offers[0][0]} positions" if offers else ""
    return amplitude, (f"Attention factor {amplitude:.6g} = sqrt(1 + ln s / ln L0) with ln s / ln L0 = "
                       f"{ratio:.4g}{offer}: only that ratio is in the table.")


LONGROPE = RopeMethod(
    name="longrope", frequencies=_longrope_frequencies, attention_factor=_longrope_attention_factor,
    config_keys=(
        ConfigKey("factor", FROM_LENGTHS), ConfigKey("short_factor"), ConfigKey("long_factor"),
        ConfigKey("attention_factor", None),
    ),
    original_length="original_max_position_embeddings", validate=_longrope_validate,
    sentence=_longrope_sentence, phrase=_longrope_phrase, read=_longrope_read,
    attention_reading=_longrope_attention_reading,
)
