r"""The RoPE scaling methods, one entry each, as transformers' ``ROPE_INIT_FUNCTIONS`` is one function per rope_type.

An entry (``RopeMethod``) is everything a method is: how it turns the plain frequencies
:math:`\theta_i = b^{-2i/d}` into :math:`\theta'_i`, its attention factor, the keys of a
config.json's ``rope_scaling`` it reads (with their defaults, or that the config must give them),
where its trained length :math:`L_0` comes from, the constraints on its parameters (one
validator) and the sentences that name a reading of it. ``RopeScaling``, ``rope_frequencies``,
``rope_attention_factor``, ``rope_from_config`` and the checker's verdicts dispatch through
``rope_method(name)``; adding a method is one ``register_rope_method`` call.

The formulas of each method are written out in ``RopeScaling``'s docstring (pe_core.rope.scaling).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

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
      its short name.
    """

    name: str
    frequencies: Callable[[np.ndarray, int, float, RopeScaling, int | None], np.ndarray]
    attention_factor: Callable[[RopeScaling], float]
    config_keys: tuple[ConfigKey, ...]
    original_length: str | None
    validate: Callable[[RopeScaling, int | None], None]
    sentence: Callable[[dict], str]
    phrase: Callable[[dict], str]

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


LINEAR = RopeMethod(
    name="linear", frequencies=_linear_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length=None, validate=_nothing_to_check,
    sentence=_linear_sentence, phrase=_factor_phrase,
)


# ----------------------------------------------------------------------------------------
# ntk and dynamic
# ----------------------------------------------------------------------------------------


def _ntk_frequencies(theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None) -> np.ndarray:
    return ntk_base(base, scaling.factor, d) ** -_exponents(d)


def _ntk_sentence(reading: dict) -> str:
    return (f"NTK-aware scaling by {number(reading['factor'])}: the base multiplied by "
            f"{number(reading['factor'])}^(d/(d-2)), every pair but the first slowed.")


NTK = RopeMethod(
    name="ntk", frequencies=_ntk_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length=None, validate=_needs_d_of_4,
    sentence=_ntk_sentence, phrase=_factor_phrase,
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


DYNAMIC = RopeMethod(
    name="dynamic", frequencies=_dynamic_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length="max_position_embeddings", validate=_needs_d_of_4,
    sentence=_dynamic_sentence, phrase=_factor_phrase,
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


YARN = RopeMethod(
    name="yarn", frequencies=_yarn_frequencies, attention_factor=_yarn_attention_factor,
    config_keys=(
        ConfigKey("factor", FROM_LENGTHS, present=True), ConfigKey("beta_fast", 32.0), ConfigKey("beta_slow", 1.0),
        ConfigKey("mscale", None), ConfigKey("mscale_all_dim", None), ConfigKey("attention_factor", None),
        ConfigKey("truncate", True),
    ),
    original_length="original_max_position_embeddings", validate=_yarn_validate,
    sentence=_yarn_sentence, phrase=_factor_phrase,
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


LLAMA3 = RopeMethod(
    name="llama3", frequencies=_llama3_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"), ConfigKey("low_freq_factor"), ConfigKey("high_freq_factor")),
    original_length="original_max_position_embeddings", validate=_llama3_validate,
    sentence=_llama3_sentence, phrase=_factor_phrase,
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
        raise ValueError(f"longrope scaling needs {missing}: one divisor per pair (d/2 numbers each).")
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


LONGROPE = RopeMethod(
    name="longrope", frequencies=_longrope_frequencies, attention_factor=_longrope_attention_factor,
    config_keys=(
        ConfigKey("factor", FROM_LENGTHS), ConfigKey("short_factor"), ConfigKey("long_factor"),
        ConfigKey("attention_factor", None),
    ),
    original_length="original_max_position_embeddings", validate=_longrope_validate,
    sentence=_longrope_sentence, phrase=_longrope_phrase,
)

for _method in (LINEAR, NTK, DYNAMIC, YARN, LLAMA3, LONGROPE):
    register_rope_method(_method)
