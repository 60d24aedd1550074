r"""The RoPE scaling methods, one entry each, as transformers' ``ROPE_INIT_FUNCTIONS`` is one function per rope_type.

An entry (``RopeMethod``) is everything a method is: how it turns the plain frequencies
:math:`\theta_i = b^{-2i/d}` into :math:`\theta'_i`, its attention factor, the keys of a
config.json's ``rope_scaling`` it reads (with their defaults, or that the config must give them),
where its trained length :math:`L_0` comes from, the constraints on its parameters (one
validator), how a table's measured frequencies are read back into its parameters (its inverse
reading, on the types of ``pe_core.rope.reading``) and the sentences that name a reading of it.
``RopeScaling``, ``rope_frequencies``, ``rope_attention_factor``, ``rope_from_config`` and the
checker (its ranking of every method's readings, its verdicts) dispatch through ``rope_method(name)``
and ``rope_method_names()``; adding a method is one ``register_rope_method`` call.

The formulas of each method are written out in ``RopeScaling``'s docstring (pe_core.rope.scaling).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.reading import (
    AGREEMENT,
    MAX_FACTOR,
    TRAINED_LENGTHS,
    UNREAD_PLATEAU_NOTE,
    FrequencyEvidence,
    FrequencyReading,
    Gains,
    MethodReadings,
    ShapeFit,
    factor_from_shares,
    float32_frequency_error,
    gains_at,
    power_of_two_or_decimal,
    shortest,
    unread_plateau_pairs,
)
from pe_core.wording import assumed_phrase, interval, number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling

#: A config key the method needs: rope_from_config raises when the config does not give it.
REQUIRED = "required"
#: The factor of a config that gives none: max_position_embeddings / original_max_position_embeddings.
FROM_LENGTHS = "max_position_embeddings / original_max_position_embeddings"
#: Where a method's trained length L0 comes from in a config.json.
ORIGINAL_LENGTH_KEYS = ("original_max_position_embeddings", "max_position_embeddings")


@dataclass(frozen=True)
class ConfigKey:
    """A key of a config's rope_scaling (rope_parameters) a method reads, as a RopeScaling field of the same name.

    ``default``: the value when the config gives none or null (RopeScaling's own default), ``REQUIRED``,
    or ``FROM_LENGTHS`` (the factor only); ``present``: the config must hold the key, even as null
    (transformers 5 refuses a yarn config without ``factor``).
    """

    name: str
    default: object = REQUIRED
    present: bool = False


@dataclass(frozen=True)
class RopeMethod:
    r"""One RoPE scaling method.

    - ``frequencies(theta, d, base, scaling, length)``: :math:`\theta'` from the plain :math:`\theta`
      (float64, (d/2,)); ``length`` is the sequence length or None;
    - ``attention_factor(scaling)``: what transformers multiplies cos and sin by;
    - ``config_keys``: the rope_scaling keys it reads, in the order rope_from_config checks them;
    - ``original_length``: the config key its :math:`L_0` is read from (one of
      ``ORIGINAL_LENGTH_KEYS``), or None when the method needs none;
    - ``validate(scaling, d)``: raises ValueError for parameters the method cannot take (d None:
      before the rotary dimension is known);
    - ``sentence(reading)``: the checker's sentence on a reading of the method (the reading's
      scaling dict: "method", "factor" and what the frequencies determined); ``phrase(reading)``
      its short name;
    - ``read(evidence)``: its inverse, the candidate readings of measured frequencies as this method
      (``MethodReadings``; empty when the evidence shows none), which the checker ranks with every
      other method's;
    - ``offer_phrase(offer)``: for a method that changes only the base, how an offer of it (a dict
      of ``MethodReadings.offers``) is named; None for the others;
    - ``attention_reading(amplitude, error, reading)``: for a method with an attention factor, the
      factor a table's amplitude is read as (within ``error``) and the sentence that says it;
    - ``table_note(reading, start)``: what a table read as this method may also be, or None.
    """

    name: str
    frequencies: Callable[[np.ndarray, int, float, RopeScaling, int | None], np.ndarray]
    attention_factor: Callable[[RopeScaling], float]
    config_keys: tuple[ConfigKey, ...]
    original_length: str | None
    validate: Callable[[RopeScaling, int | None], None]
    sentence: Callable[[dict], str]
    phrase: Callable[[dict], str]
    read: Callable[[FrequencyEvidence], MethodReadings]
    offer_phrase: Callable[[dict], str] | None = None
    attention_reading: Callable[[float, float, dict], tuple[float, str]] | None = None
    table_note: Callable[[dict, int], str] | None = None

    def __post_init__(self) -> None:
        if self.original_length not in (None, *ORIGINAL_LENGTH_KEYS):
            raise ValueError(f"original_length must be one of {ORIGINAL_LENGTH_KEYS} or None, "
                             f"got {self.original_length!r}.")
        if not any(key.name == "factor" for key in self.config_keys):
            raise ValueError(f"{self.name} must read the factor (a ConfigKey named 'factor').")


_METHODS: dict[str, RopeMethod] = {}


def register_rope_method(method: RopeMethod) -> Callable[[], None]:
    """Add a method to the registry; returns the function that removes it again (for a test's fixture)."""
    if not isinstance(method, RopeMethod):
        raise ValueError(f"register_rope_method takes a RopeMethod, got {type(method).__name__}.")
    if method.name in _METHODS:
        raise ValueError(f"A rope method named {method.name!r} is already registered.")
    _METHODS[method.name] = method

    def unregister() -> None:
        if _METHODS.get(method.name) is method:
            del _METHODS[method.name]

    return unregister


def rope_method_names() -> tuple[str, ...]:
    """The registered methods' names, in the order they were registered."""
    return tuple(_METHODS)


def rope_method(name: str) -> RopeMethod:
    """The registered method of this name (ValueError naming the registered ones otherwise)."""
    if name not in _METHODS:
        raise ValueError(f"No rope method {name!r}; the registered ones are {', '.join(_METHODS)}.")
    return _METHODS[name]


# ----------------------------------------------------------------------------------------
# Pieces two methods share.
# ----------------------------------------------------------------------------------------


def _exponents(d: int) -> np.ndarray:
    return np.arange(0, d, 2, dtype=np.float64) / d


def ntk_base(base: float, scale: float, d: int) -> float:
    """b * scale**(d/(d-2)), the NTK-aware base change."""
    return base * scale ** (d / (d - 2))


def _no_attention_factor(scaling: RopeScaling) -> float:
    return 1.0


def _nothing_to_check(scaling: RopeScaling, d: int | None) -> None:
    return None


def _needs_d_of_4(scaling: RopeScaling, d: int | None) -> None:
    if d is not None and d < 4:
        raise ValueError(
            f"{scaling.method} scaling needs d >= 4, got d={d}: its base change b * s**(d/(d-2)) divides by d - 2."
        )


def _factor_phrase(reading: dict) -> str:
    return f"{reading['method']} scaling by {number(reading['factor'])}"


# ----------------------------------------------------------------------------------------
# linear
# ----------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------
# ntk and dynamic
# ----------------------------------------------------------------------------------------


def _ntk_frequencies(theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None) -> np.ndarray:
    return ntk_base(base, scaling.factor, d) ** -_exponents(d)


def _ntk_sentence(reading: dict) -> str:
    return (f"NTK-aware scaling by {number(reading['factor'])}: the base multiplied by "
            f"{number(reading['factor'])}^(d/(d-2)), every pair but the first slowed.")


def _ntk_read(evidence: FrequencyEvidence) -> MethodReadings:
    """Round bases b and round steps q with b q^(d/(d-2)) = the base read: NTK-aware scaling by q of base b,
    offered when the base read is not round (the frequencies cannot tell a base from such a scaling)."""
    d, base = evidence.d, evidence.base
    if evidence.scaled or evidence.base_digits <= 2 or d < 4:
        return MethodReadings()
    offers = []
    for exponent in range(2, 10):
        for mantissa in (1.0, 2.0, 5.0):
            round_base = mantissa * 10.0**exponent
            if round_base >= base * (1 - 1e-9):
                continue
            q = (base / round_base) ** ((d - 2) / d)
            relative = AGREEMENT * evidence.log_error * (d - 2) / d + 1e-9
            snapped, digits = shortest(q, relative)
            if digits <= 2 and 1.0 < snapped <= MAX_FACTOR:
                offers.append((digits, -round_base, {"method": "ntk", "factor": snapped, "base": round_base}))
    return MethodReadings(offers=tuple([offer for *_, offer in sorted(offers, key=lambda o: o[:2])][:2]))


def _ntk_offer_phrase(offer: dict) -> str:
    return (f"NTK-aware scaling by {number(offer['factor'])} of base {number(offer['base'])} (or dynamic NTK at "
            "the sequence length where its step s L / L0 - (s - 1) is that)")


NTK = RopeMethod(
    name="ntk", frequencies=_ntk_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length=None, validate=_needs_d_of_4,
    sentence=_ntk_sentence, phrase=_factor_phrase, read=_ntk_read, offer_phrase=_ntk_offer_phrase,
)


def _dynamic_frequencies(
    theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None
) -> np.ndarray:
    s, L0 = scaling.factor, scaling.original_length
    L = L0 if length is None else max(length, L0)
    return ntk_base(base, s * L / L0 - (s - 1), d) ** -_exponents(d)


def _dynamic_sentence(reading: dict) -> str:
    return (f"Dynamic NTK scaling by {number(reading['factor'])}: the base multiplied by q^(d/(d-2)), "
            "q = s L / L0 - (s - 1) at sequence length L.")


def _dynamic_read(evidence: FrequencyEvidence) -> MethodReadings:
    """Dynamic NTK of the power of ten b below the base read, when that is not round: b' = b q^(d/(d-2)),
    q = s L / L0 - (s - 1) at sequence length L. Only the step q is in the frequencies, not s, L or L0."""
    d, base = evidence.d, evidence.base
    if evidence.scaled or evidence.base_digits <= 2 or d < 4 or base <= 100.0:
        return MethodReadings()
    round_base = 10.0 ** math.floor(math.log10(base * (1 - 1e-9)))  # the power of ten below
    q = (base / round_base) ** ((d - 2) / d)
    step = shortest(q, AGREEMENT * evidence.log_error + 1e-9)[0]
    return MethodReadings(offers=({"method": "dynamic", "base": round_base, "step": step},))


def _dynamic_offer_phrase(offer: dict) -> str:
    return (f"dynamic NTK of base {number(offer['base'])} with step q = {number(offer['step'])} (q = s L / L0 - "
            "(s - 1) at sequence length L: only q is in the frequencies)")


DYNAMIC = RopeMethod(
    name="dynamic", frequencies=_dynamic_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length="max_position_embeddings", validate=_needs_d_of_4,
    sentence=_dynamic_sentence, phrase=_factor_phrase, read=_dynamic_read,
    offer_phrase=_dynamic_offer_phrase,
)


# ----------------------------------------------------------------------------------------
# yarn
# ----------------------------------------------------------------------------------------


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


def _line_misfit(x: np.ndarray, gains: Gains, s: float) -> float | None:
    """The residual of a straight line through the pairs between's shares of the divided frequency, in x;
    None with fewer than three pairs between (any two lie on a line)."""
    middle = gains.middle
    if middle.size < 3:
        return None
    share = (1.0 - gains.gains[middle]) / (1.0 - 1.0 / s)
    residual = np.polyfit(x, share, 1, full=True)[1]
    return float(residual[0]) if residual.size else None


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
        return default, f"Attention factor {amplitude:.6g} = 0.1 ln {number(s)} + 1, YaRN's default, in the amplitude."
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


# ----------------------------------------------------------------------------------------
# llama3
# ----------------------------------------------------------------------------------------


def _llama3_frequencies(
    theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None
) -> np.ndarray:
    s, L0 = scaling.factor, scaling.original_length
    wavelength = 2 * math.pi / theta
    low_wavelength = L0 / scaling.low_freq_factor
    high_wavelength = L0 / scaling.high_freq_factor
    scaled = np.where(wavelength > low_wavelength, theta / s, theta)
    smooth = (L0 / wavelength - scaling.low_freq_factor) / (scaling.high_freq_factor - scaling.low_freq_factor)
    medium = (wavelength >= high_wavelength) & (wavelength <= low_wavelength)
    return np.where(medium, (1 - smooth) * scaled / s + smooth * scaled, scaled)


def _llama3_validate(scaling: RopeScaling, d: int | None) -> None:
    if scaling.high_freq_factor <= scaling.low_freq_factor:
        raise ValueError(
            f"high_freq_factor ({scaling.high_freq_factor:g}) must be greater than low_freq_factor "
            f"({scaling.low_freq_factor:g}); Llama 3.1 uses 4 and 1."
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


# ----------------------------------------------------------------------------------------
# longrope
# ----------------------------------------------------------------------------------------


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

for _method in (LINEAR, NTK, DYNAMIC, YARN, LLAMA3, LONGROPE):
    register_rope_method(_method)
