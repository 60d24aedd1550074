r"""llama3 (Llama 3.1): fast pairs unchanged, slow pairs divided by s, and between the wavelength bounds
:math:`L_0/\mathrm{high\_freq\_factor}` and :math:`L_0/\mathrm{low\_freq\_factor}` a blend linear in the
frequency; its inverse reading: the bounds, :math:`L_0` and the factors from measured frequencies."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.methods.registry import ConfigKey, RopeMethod
from pe_core.rope.methods.shared import _factor_phrase, _line_misfit, _no_attention_factor
from pe_core.rope.reading import (
    TRAINED_LENGTHS,
    UNREAD_PLATEAU_NOTE,
    FrequencyEvidence,
    FrequencyReading,
    MethodReadings,
    ShapeFit,
    factor_from_shares,
    power_of_two_or_decimal,
    shortest,
    unread_plateau_pairs,
)
from pe_core.wording import assumed_phrase, number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling


def _llama3_frequencies(
    theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None
) -> np.ndarray:
    s, L0 = scaling.factor, scaling.original_length
    wavelength = 2 * math.pi / theta
    low_wavelength = L0 / scaling.low_freq_factor
    high_wavelength = L0 / scaling.high_freq_factor
    scaled = np.where(wavelength > low_wavelength, theta / s, theta)
    if scaling.high_freq_factor == scaling.low_freq_factor:  # Llama 4 Scout's 1 and 1: no band between
        return scaled
    smooth = (L0 / wavelength - scaling.low_freq_factor) / (scaling.high_freq_factor - scaling.low_freq_factor)
    medium = (wavelength >= high_wavelength) & (wavelength <= low_wavelength)
    return np.where(medium, (1 - smooth) * scaled / s + smooth * scaled, scaled)


def _llama3_validate(scaling: RopeScaling, d: int | None) -> None:
    if scaling.high_freq_factor < scaling.low_freq_factor:
        raise ValueError(
            f"high_freq_factor ({scaling.high_freq_factor:g}) must be at least low_freq_factor "
            f"({scaling.low_freq_factor:g}); Llama 3.1 uses 4 and 1, Llama 4 Scout 1 and 1."
        )


def _llama3_sentence(reading: dict) -> str:
    bounds = ""
    if "high_freq_wavelength" in reading:
        bounds = (f"; wavelength bounds {number(round(reading['low_freq_wavelength'], 1))} and "
                  f"{number(round(reading['high_freq_wavelength'], 1))} positions, which fix only "
                  "original_max_position_embeddings / low_freq_factor and / high_freq_factor")
    elif "low_freq_wavelength" in reading:
        low, high = reading["low_freq_wavelength"]
        bounds = (f"; no pair lies between the bounds here, so the band is only placed between wavelengths "
                  f"{number(round(low, 1))} and {number(round(high, 1))}")
    return (
        f"llama3 scaling by {number(reading['factor'])} (Llama 3.1): fast pairs unchanged, slow pairs divided "
        f"by {number(reading['factor'])}, between them a blend linear in the frequency{bounds}. With "
        f"{assumed_phrase(reading)}: original_max_position_embeddings = {reading['original_length']}, "
        f"low_freq_factor {number(reading['low_freq_factor'])}, high_freq_factor "
        f"{number(reading['high_freq_factor'])}."
    )


def _llama3_read(evidence: FrequencyEvidence) -> MethodReadings:
    """llama3: the wavelength bounds L0/high_freq_factor and L0/low_freq_factor from the pairs between;
    without a readable plateau, the factor from the pairs between for each trained length with Meta's
    factors 1 and 4."""
    s, gains = evidence.plateau_factor, evidence.gains
    from_plateau: tuple[FrequencyReading, ...] = ()
    shape = None
    if evidence.scaled and s is not None and s > 1.0 and gains.prefix_last >= 0 and evidence.decreasing:
        from_plateau = tuple(_llama3_plateau_readings(evidence, s))
        shape = ShapeFit("llama3's (linear in the frequency)", _line_misfit(evidence.plain[gains.middle], gains, s))
    without = tuple(_llama3_unread_plateau_readings(evidence)) if evidence.plateau_unread else ()
    return MethodReadings(from_plateau=from_plateau, shape=shape, without_plateau=without, pool_rank=0)


def _llama3_plateau_readings(evidence: FrequencyEvidence, s: float) -> list[FrequencyReading]:
    gains = evidence.gains
    theta_count = evidence.measured.theta.size
    theta = evidence.plain
    wavelength = 2.0 * math.pi / theta
    smooth = (gains.gains - 1.0 / s) / (1.0 - 1.0 / s)  # llama3's smooth factor m_i
    middle = gains.middle
    candidates: list[tuple[float, float, float, tuple[str, ...], dict]] = []
    if middle.size >= 2:
        # m = L0/(2 pi (high - low)) theta - low/(high - low): a line in theta.
        alpha, beta = np.polyfit(theta[middle], smooth[middle], 1)
        if alpha > 0 and beta < 0:
            low_wavelength, high_wavelength = 2 * math.pi * alpha / -beta, 2 * math.pi * alpha / (1 - beta)
            bounds = {"low_freq_wavelength": low_wavelength, "high_freq_wavelength": high_wavelength}
            # The roundest L0 and high_freq_factor near the bounds (the fit decides how near is near enough).
            for spread in (0.02, 1e-3, 1e-5):
                original = power_of_two_or_decimal(low_wavelength * (1 - spread), low_wavelength * (1 + spread))
                ratio = low_wavelength / high_wavelength
                high = power_of_two_or_decimal(ratio * (1 - spread), ratio * (1 + spread))
                if original is not None and high is not None:
                    candidates.append((original, 1.0, high, ("low_freq_factor",), bounds))
    else:
        # Too few pairs between the bounds: Meta's factors 1 and 4, L0 where the data put the band.
        last_one = gains.prefix_last
        first_divided = gains.tail_first if gains.tail_first < theta_count else None
        if middle.size == 1:
            i = int(middle[0])
            original = shortest(wavelength[i] * (1.0 + 3.0 * smooth[i]), 1e-3)[0]
        else:
            low = 4.0 * wavelength[last_one] if last_one >= 0 else 0.0
            high = wavelength[first_divided] if first_divided is not None else math.inf
            original = power_of_two_or_decimal(low, high)
        if original is not None:
            bounds = {
                "low_freq_wavelength": (float(wavelength[max(last_one, 0)]), float(wavelength[min(gains.tail_first,
                                        theta_count - 1)])),
            }
            candidates.append((original, 1.0, 4.0, ("low_freq_factor", "high_freq_factor"), bounds))
    readings = []
    for original, low, high, assumed, bounds in candidates:
        if not (original >= 1 and high > low > 0):
            continue
        determined = {
            "method": "llama3",
            "factor": s,
            **{key: (tuple(float(v) for v in value) if isinstance(value, tuple) else float(value))
               for key, value in bounds.items()},
            "original_length": round(original),
            "low_freq_factor": float(low),
            "high_freq_factor": float(high),
            "assumed": assumed,
        }
        readings += evidence.scaled_reading("llama3", s, original, determined, low_freq_factor=low,
                                            high_freq_factor=high)
        if readings and readings[-1].fits:
            break
    return readings


def _llama3_unread_plateau_readings(evidence: FrequencyEvidence) -> list[FrequencyReading]:
    """For each trained length L0 and Meta's factors (low_freq_factor 1, high_freq_factor 4), the factor that
    fits the pairs between best."""
    pairs = unread_plateau_pairs(evidence)
    if pairs is None:
        return []
    middle, weight = pairs
    plain = evidence.plain
    readings: list[FrequencyReading] = []
    for original in TRAINED_LENGTHS:
        # The smooth factor m_i = (L0 theta_i / (2 pi) - 1) / 3, clipped: 1 unchanged, 0 divided by s.
        smooth = np.clip((original * plain[middle] / (2 * math.pi) - 1.0) / 3.0, 0.0, 1.0)
        if np.any(smooth < 1):
            share = 1.0 - smooth  # g = 1 - share (1 - 1/s)
            readings += factor_from_shares(evidence.gains, middle, weight, share, lambda s, L0=original:
                                           evidence.scaled_reading(
                                               "llama3", s, L0,
                                               {"method": "llama3", "factor": s, "original_length": round(L0),
                                                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                "assumed": ("low_freq_factor", "high_freq_factor")},
                                               (UNREAD_PLATEAU_NOTE,)))
    return readings


LLAMA3 = RopeMethod(
    name="llama3", frequencies=_llama3_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"), ConfigKey("low_freq_factor"), ConfigKey("high_freq_factor")),
    original_length="original_max_position_embeddings", validate=_llama3_validate,
    sentence=_llama3_sentence, phrase=_factor_phrase, read=_llama3_read,
)
