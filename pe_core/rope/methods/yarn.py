r"""YaRN: the ramp (as its code computes it, ``yarn_code_ramp``) that blends each pair's :math:`\theta_i`
with :math:`\theta_i / s`, its attention factor (:math:`0.1\ln s + 1`, or mscale's ratio), and its
inverse reading: the ramp's bounds, :math:`L_0` and the betas from measured frequencies."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.methods.registry import FROM_LENGTHS, ConfigKey, RopeMethod
from pe_core.rope.methods.shared import _factor_phrase, _line_misfit
from pe_core.rope.reading import (
    AGREEMENT,
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
from pe_core.wording import assumed_phrase, interval, number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling


def yarn_code_ramp(d: int, base: float, scaling: RopeScaling) -> np.ndarray:
    """transformers' find_correction_range and linear_ramp_factor (YaRN's own code), in float64."""
    L0 = scaling.original_length

    def correction_dim(rotations: float) -> float:
        # The pair index i whose wavelength fits `rotations` turns into L0.
        return d * math.log(L0 / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction_dim(scaling.beta_fast), correction_dim(scaling.beta_slow)
    if scaling.truncate:
        low, high = math.floor(low), math.ceil(high)
    # The code clamps the upper bound to d - 1 (not d/2 - 1), as YaRN's repository does.
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001  # the code's guard against a zero-width ramp
    return np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def _yarn_frequencies(theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None) -> np.ndarray:
    ramp = yarn_code_ramp(d, base, scaling)
    return (theta / scaling.factor) * ramp + theta * (1.0 - ramp)


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """0.1 mscale ln(scale) + 1, and 1 for scale <= 1 (YaRN's get_mscale)."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _yarn_attention_factor(scaling: RopeScaling) -> float:
    if scaling.attention_factor is not None:
        return scaling.attention_factor
    if scaling.mscale and scaling.mscale_all_dim:
        return _yarn_mscale(scaling.factor, scaling.mscale) / _yarn_mscale(scaling.factor, scaling.mscale_all_dim)
    return _yarn_mscale(scaling.factor)


def _yarn_validate(scaling: RopeScaling, d: int | None) -> None:
    if scaling.beta_fast <= scaling.beta_slow:
        raise ValueError(
            f"beta_fast ({scaling.beta_fast:g}) must be greater than beta_slow ({scaling.beta_slow:g}); "
            "YaRN uses 32 and 1."
        )


def _yarn_sentence(reading: dict) -> str:
    low, high = reading["ramp"]
    bounds = (f"pairs up to {int(low)} unchanged, from {int(high)} on divided by {number(reading['factor'])}"
              if reading["truncate"] else
              f"the ramp runs from pair {low:.3f} to pair {high:.3f} (not rounded: truncate false, as gpt-oss)")
    fixed = ""
    if "original_length_over_beta_fast" in reading:
        fixed = (
            " The frequencies fix only original_max_position_embeddings / beta_fast = "
            f"{interval(reading['original_length_over_beta_fast'])} and / beta_slow = "
            f"{interval(reading['original_length_over_beta_slow'])}."
        )
    return (
        f"YaRN scaling by {number(reading['factor'])}: {bounds}, between them the share of the divided "
        f"frequency rises linearly in the pair index (YaRN's code).{fixed} With {assumed_phrase(reading)}: "
        f"original_max_position_embeddings = {reading['original_length']}, beta_fast "
        f"{number(reading['beta_fast'])}, beta_slow {number(reading['beta_slow'])}."
    )


def _yarn_read(evidence: FrequencyEvidence) -> MethodReadings:
    """YaRN: the ramp's bounds from where the gains leave 1 and reach 1/s; without a readable plateau, the
    factor from the pairs between for each trained length with the default betas."""
    s, gains = evidence.plateau_factor, evidence.gains
    from_plateau: tuple[FrequencyReading, ...] = ()
    shape = None
    if evidence.scaled and s is not None and s > 1.0 and gains.prefix_last >= 0 and evidence.decreasing:
        from_plateau = tuple(_yarn_plateau_readings(evidence, s))
        shape = ShapeFit("YaRN's ramp (linear in the pair index)",
                         _line_misfit(gains.middle.astype(float), gains, s))
    without = tuple(_yarn_unread_plateau_readings(evidence)) if evidence.plateau_unread else ()
    return MethodReadings(from_plateau=from_plateau, shape=shape, without_plateau=without, pool_rank=1)


def _yarn_plateau_readings(evidence: FrequencyEvidence, s: float) -> list[FrequencyReading]:
    d, base, gains = evidence.d, evidence.base, evidence.gains
    ln_b = math.log(base)
    readable = np.flatnonzero(evidence.measured.readable)
    w = (1.0 - gains.gains) / (1.0 - 1.0 / s)  # share of the divided frequency

    def turns(index: float) -> float:
        # L0 / beta of a bound at this (fractional) pair index: c(beta) = d ln(L0/(2 pi beta)) / (2 ln b).
        return 2.0 * math.pi * math.exp(2.0 * index * ln_b / d)

    readings = []
    # truncate=True: integer bounds; the last unchanged pair is i_fast, the first divided one i_slow.
    after_prefix = readable[readable > gains.prefix_last]
    before_tail = readable[readable < gains.tail_first]
    fast_stop = int(after_prefix[0]) if after_prefix.size else gains.prefix_last + 1
    fast_options = range(max(gains.prefix_last, 0), fast_stop)
    slow_options = range(int(before_tail[-1]) + 1 if before_tail.size else 1, gains.tail_first + 1)
    for i_fast in list(fast_options)[:4]:
        for i_slow in list(slow_options)[:4]:
            if i_slow <= i_fast:
                continue
            fast_interval = (turns(i_fast) if i_fast > 0 else 0.0, turns(i_fast + 1))
            slow_interval = (turns(i_slow - 1), turns(i_slow) if i_slow < d - 1 else math.inf)
            readings += _yarn_candidates(evidence, s, True, (i_fast, i_slow), fast_interval, slow_interval)
    # truncate=False (gpt-oss): real bounds, from a straight line through the middle's shares.
    if gains.middle.size >= 2:
        x = gains.middle.astype(np.float64)
        slope, intercept = np.polyfit(x, w[gains.middle], 1)
        if slope > 0:
            i_fast, i_slow = -intercept / slope, (1.0 - intercept) / slope
            # How far the bounds may move: the shares' errors (and misfit) over the ramp's slope.
            misfit = np.abs(w[gains.middle] - (slope * x + intercept))
            share_error = np.max(AGREEMENT * gains.sigma[gains.middle] / (1.0 - 1.0 / s) + misfit)
            relative = 2.0 * ln_b / d * share_error / slope
            readings += _yarn_candidates(
                evidence, s, False, (i_fast, i_slow), (turns(i_fast),) * 2, (turns(i_slow),) * 2, relative
            )
    return readings


def _yarn_candidates(
    evidence: FrequencyEvidence, s: float, truncate: bool, bounds: tuple[float, float],
    fast_interval: tuple[float, float], slow_interval: tuple[float, float], relative: float = 0.0,
) -> list[FrequencyReading]:
    """A yarn reading for ramp bounds: L0 and the betas, the defaults (32, 1) where they fit.

    Unrounded bounds (``truncate=False``) give L0/beta exactly, to ``relative``; rounded ones an interval.
    """
    if not truncate:
        # With beta_fast = 32, L0 is the roundest number the bound's precision allows.
        wanted = 32.0 * fast_interval[0]
        original = power_of_two_or_decimal(wanted * (1 - relative), wanted * (1 + relative)) or wanted
        wanted = original / slow_interval[0]
        beta_slow = power_of_two_or_decimal(wanted * (1 - relative), wanted * (1 + relative)) or wanted
        candidates = [(original, 32.0, beta_slow, ("beta_fast",))]
    else:
        original = power_of_two_or_decimal(
            max(32.0 * fast_interval[0], slow_interval[0]), min(32.0 * fast_interval[1] * (1 - 1e-12), slow_interval[1])
        )
        if original is not None:
            candidates = [(original, 32.0, 1.0, ("beta_fast", "beta_slow"))]
        else:
            # Not the default betas: beta_slow 1, L0 in its interval, beta_fast from the fast interval.
            original = power_of_two_or_decimal(*slow_interval) or slow_interval[0]
            middle = math.sqrt(max(fast_interval[0], fast_interval[1] / 2) * fast_interval[1])
            beta_fast = shortest(original / middle, 0.02)[0]
            candidates = [(original, beta_fast, 1.0, ("beta_slow",))]
    readings = []
    for original, beta_fast, beta_slow, assumed in candidates:
        if not beta_fast > beta_slow > 0 or original < 1:
            continue
        determined = {
            "method": "yarn",
            "factor": s,
            "truncate": truncate,
            "ramp": (float(bounds[0]), float(bounds[1])),
            "original_length_over_beta_fast": tuple(float(v) for v in fast_interval),
            "original_length_over_beta_slow": tuple(float(v) for v in slow_interval),
            "original_length": round(original),
            "beta_fast": float(beta_fast),
            "beta_slow": float(beta_slow),
            "assumed": assumed,
        }
        readings += evidence.scaled_reading("yarn", s, original, determined, beta_fast=beta_fast,
                                            beta_slow=beta_slow, truncate=truncate)
    return readings


def _yarn_unread_plateau_readings(evidence: FrequencyEvidence) -> list[FrequencyReading]:
    """For each trained length L0 and the default betas 32 and 1 (ramp rounded or not), the factor that fits
    the pairs between best."""
    pairs = unread_plateau_pairs(evidence)
    if pairs is None:
        return []
    middle, weight = pairs
    d, gains, ln_b = evidence.d, evidence.gains, math.log(evidence.base)
    readings: list[FrequencyReading] = []
    for original in TRAINED_LENGTHS:
        for truncate in (True, False):
            fast = d * math.log(original / (32 * 2 * math.pi)) / (2 * ln_b)
            slow = d * math.log(original / (2 * math.pi)) / (2 * ln_b)
            if truncate:
                fast, slow = math.floor(fast), math.ceil(slow)
            fast, slow = max(fast, 0), min(slow, d - 1)
            share = np.clip((middle - fast) / max(slow - fast, 1e-3), 0.0, 1.0)
            if np.any(share <= 0) or gains.prefix_last > fast:
                continue
            ramp = (float(fast), float(slow))
            readings += factor_from_shares(gains, middle, weight, share, lambda s, L0=original, t=truncate, r=ramp:
                                           evidence.scaled_reading(
                                               "yarn", s, L0,
                                               {"method": "yarn", "factor": s, "truncate": t, "ramp": r,
                                                "original_length": round(L0), "beta_fast": 32.0, "beta_slow": 1.0,
                                                "assumed": ("beta_fast", "beta_slow")},
                                               (UNREAD_PLATEAU_NOTE,), truncate=t))
    return readings


def _yarn_attention_reading(amplitude: float, error: float, reading: dict) -> tuple[float, str]:
    """YaRN's default 0.1 ln s + 1 when the amplitude agrees with it within its error, else the amplitude."""
    s = reading["factor"]
    default = 0.1 * math.log(s) + 1.0
    if abs(amplitude - default) <= AGREEMENT * error:
        # The value read is the default, and the sentence writes that value: the amplitude of a
        # bfloat16 table (1.13872 for s = 4) differs from it by the table's rounding only.
        return default, f"Attention factor {default:.6g} = 0.1 ln {number(s)} + 1, YaRN's default, in the amplitude."
    if amplitude == 1.0:
        return amplitude, ("Attention factor 1: with YaRN this is mscale = mscale_all_dim (DeepSeek-V3, whose "
                           "attention applies the factor to the softmax scale instead) or attention_factor 1.")
    return amplitude, (f"Attention factor {amplitude:.6g}, not YaRN's default {default:.6g}: the config sets "
                       "attention_factor, or mscale and mscale_all_dim (their ratio).")


YARN = RopeMethod(
    name="yarn", frequencies=_yarn_frequencies, attention_factor=_yarn_attention_factor,
    config_keys=(
        ConfigKey("factor", FROM_LENGTHS, present=True), ConfigKey("beta_fast", 32.0), ConfigKey("beta_slow", 1.0),
        ConfigKey("mscale", None), ConfigKey("mscale_all_dim", None), ConfigKey("attention_factor", None),
        ConfigKey("truncate", True),
    ),
    original_length="original_max_position_embeddings", validate=_yarn_validate,
    sentence=_yarn_sentence, phrase=_factor_phrase, read=_yarn_read,
    attention_reading=_yarn_attention_reading,
)
