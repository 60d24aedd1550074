r"""Rotary position embeddings (RoPE) and the context-length scalings models ship with.

RoFormer (Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
section 3.2) turns each pair of coordinates of a query or key at position m by the angle
:math:`m\,\theta_i`, with the sinusoid's frequencies

.. math::

    \theta_i = b^{-2i/d}, \qquad i = 0 \ldots d/2 - 1,

b the base (transformers' ``rope_theta``: 10000 in RoFormer and Llama 2, 500000 in Llama 3).
Because a rotation by :math:`m\theta` followed by the transpose of one by :math:`n\theta` is a
rotation by :math:`(m - n)\theta`, the score :math:`q_m \cdot k_n` depends only on m - n: the
transition matrix of the Relative positions page, moved into attention.

Two column layouts hold the pairs (``layout``):

- ``"half"``: pair i is columns i and i + d/2 (GPT-NeoX, and every Llama-family model in
  transformers: ``cat(freqs, freqs)`` with ``rotate_half``);
- ``"interleaved"``: pair i is columns 2i and 2i + 1 (RoFormer, GPT-J's ``rotate_every_two``,
  Meta's and DeepSeek's complex ``freqs_cis``).

A scaling (``RopeScaling``) changes the :math:`\theta_i` so that a model reaches past the length
it was trained on; its ``method`` and parameters are named as transformers' ``rope_type`` names
them, with the same defaults, so a config.json reads straight into it (``pe_core.rope_config``).
Where a paper's equation and the code models run differ, this module computes what the code
does, and says where the paper differs.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import KW_ONLY, dataclass

import numpy as np

from pe_core._validate import (
    MAX_D,
    MAX_LENGTH,
    MAX_POSITION,
    check_base,
    check_cells,
    check_choice,
    check_finite_values,
    check_int,
    check_matrix,
    check_real,
)
from pe_core.encoding import positions as position_range
from pe_core.encoding import sin_cos_outer

#: The column layouts of a rotary table.
ROPE_LAYOUTS = ("half", "interleaved")
#: The scaling methods, named as transformers' rope_type (plus the static NTK-aware "ntk").
ROPE_METHODS = ("linear", "ntk", "dynamic", "yarn", "llama3", "longrope")
#: The ways to compute YaRN's ramp: as its code does, or as its paper's equation does.
YARN_RAMP_FORMS = ("code", "paper")
#: Methods whose formula needs the length the model was trained with.
_NEEDS_ORIGINAL_LENGTH = ("dynamic", "yarn", "llama3", "longrope")
#: Angles handled at once by rope_cache and rotate (keeps the temporaries to a few MB; as in
#: encoding.py, also faster than 2^18: rope_cache at L=2103, d=306 11.1 ms instead of 17.9).
_BLOCK_CELLS = 1 << 16

_BASE_NAME = "base (rope_theta)"
_BASE_USUAL = "RoFormer and Llama 2 use 10000, Llama 3 500000."


def _positive(name: str, value: object) -> float:
    number = check_real(name, value)
    if number <= 0:
        raise ValueError(f"{name} must be greater than 0, got {value!r}.")
    return number


def _optional_nonnegative(name: str, value: object) -> float | None:
    if value is None:
        return None
    number = check_real(name, value)
    if number < 0:
        raise ValueError(f"{name} must be 0 or more (or None), got {value!r}.")
    return number


def _factor_list(name: str, values: object) -> tuple[float, ...] | None:
    """A LongRoPE per-pair factor list as a tuple (hashable, so a frozen RopeScaling can key a cache)."""
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name} must be a list of numbers, one per pair (d/2 of them), got {values!r}.")
    if not 1 <= len(values) <= MAX_D // 2:
        raise ValueError(f"{name} must hold 1 to {MAX_D // 2:,} numbers (one per pair), got {len(values):,}.")
    result = []
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name}[{index}] must be a finite number greater than 0, got {value!r}.")
        result.append(float(value))
    return tuple(result)


@dataclass(frozen=True)
class RopeScaling:
    r"""A RoPE scaling: which method, by which factor, from which trained length.

    :math:`\theta_i = b^{-2i/d}` are the unscaled frequencies, :math:`\lambda_i = 2\pi/\theta_i`
    their wavelengths, s = ``factor``, :math:`L_0` = ``original_length`` (a config.json's
    ``original_max_position_embeddings``; for "dynamic", its ``max_position_embeddings``).

    - ``"linear"``: position interpolation (Chen et al. 2023, "Extending Context Window of Large
      Language Models via Positional Interpolation"; kaiokendev): :math:`\theta_i / s`.
    - ``"ntk"``: NTK-aware, static (bloc97, reddit r/LocalLLaMA, June 2023; YaRN paper section
      3.1): :math:`b' = b\,s^{d/(d-2)}`. Not a transformers rope_type; "dynamic" is its
      length-dependent form.
    - ``"dynamic"``: dynamic NTK (emozilla; transformers' ``_compute_dynamic_ntk_parameters``):
      at sequence length L, :math:`b' = b\,(sL/L_0 - (s - 1))^{d/(d-2)}` with L raised to
      :math:`L_0` when shorter. transformers takes :math:`L_0` = ``max_position_embeddings``,
      not ``original_max_position_embeddings`` (``rope_from_config`` does the same).
    - ``"yarn"``: YaRN (Peng et al. 2023, "YaRN: Efficient Context Window Extension of Large
      Language Models"), as its authors' code (jquesnelle/yarn, ``_yarn_find_correction_range``)
      and transformers compute it: pairs before
      :math:`i_{fast} = \lfloor d \ln(L_0/(2\pi\beta_{fast})) / (2\ln b)\rfloor` keep
      :math:`\theta_i`, pairs after :math:`i_{slow} = \lceil d \ln(L_0/(2\pi\beta_{slow})) /
      (2\ln b)\rceil` get :math:`\theta_i/s`, and between them the share of :math:`\theta_i/s`
      rises linearly in the pair index i (``truncate=False``, gpt-oss, drops the floor and
      ceil). The paper's equation ramps linearly in :math:`r_i = L_0/\lambda_i` instead (see
      ``yarn_ramp``). Attention factor :math:`0.1\ln s + 1`, or
      ``(0.1 mscale ln s + 1) / (0.1 mscale_all_dim ln s + 1)`` when both are given
      (DeepSeek), or ``attention_factor`` itself; transformers multiplies cos and sin by it.
    - ``"llama3"``: Llama 3.1 (Meta's ``apply_scaling``): pairs with
      :math:`\lambda_i < L_0/` ``high_freq_factor`` unchanged, with
      :math:`\lambda_i > L_0/` ``low_freq_factor`` divided by s, between them
      :math:`(1 - g)\theta_i/s + g\,\theta_i` with
      :math:`g = (L_0/\lambda_i - \text{low\_freq\_factor})/(\text{high\_freq\_factor} -
      \text{low\_freq\_factor})`.
    - ``"longrope"``: LongRoPE (Ding et al. 2024) as Phi-3 runs it: :math:`\theta_i / e_i` with
      e = ``short_factor`` for sequences up to :math:`L_0`, ``long_factor`` beyond; attention
      factor :math:`\sqrt{1 + \ln s / \ln L_0}` (or ``attention_factor``), where transformers
      takes s = ``max_position_embeddings / original_max_position_embeddings`` when the config
      gives no factor (Phi-3 mini 128k: 131072 / 4096 = 32, factor 1.1902).

    Args:
        method: one of ``ROPE_METHODS``.
        factor: s, at least 1 (1 = no stretch).
        original_length: :math:`L_0`, a whole number >= 1; needed by dynamic, yarn, llama3 and
            longrope.
        low_freq_factor, high_freq_factor: llama3's wavelength bounds (defaults 1 and 4, Meta's),
            0 < low < high.
        beta_fast, beta_slow: YaRN's bounds in turns over :math:`L_0` (defaults 32 and 1),
            beta_fast > beta_slow > 0.
        truncate: YaRN's floor/ceil of its bounds (default True; gpt-oss sets False).
        mscale, mscale_all_dim: DeepSeek's YaRN attention-factor parameters (or None).
        attention_factor: overrides the method's attention factor (yarn, longrope), > 0.
        short_factor, long_factor: LongRoPE's per-pair divisors, d/2 numbers each, > 0.

    Example:
        >>> RopeScaling("llama3", 8.0, 8192).method
        'llama3'

    Reference: transformers 5.18 ``modeling_rope_utils.ROPE_INIT_FUNCTIONS``; the papers above.
    """

    method: str
    factor: float = 1.0
    original_length: int | None = None
    _: KW_ONLY
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    truncate: bool = True
    mscale: float | None = None
    mscale_all_dim: float | None = None
    attention_factor: float | None = None
    short_factor: tuple[float, ...] | None = None
    long_factor: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        method = check_choice("the scaling method", self.method, ROPE_METHODS)
        factor = check_real("factor (the scaling factor)", self.factor)
        if factor < 1.0:
            raise ValueError(
                f"factor (the scaling factor) must be at least 1, got {self.factor!r}: a factor below 1 "
                "would shrink the context instead of stretching it. Use 1 for no stretch."
            )
        original = self.original_length
        if original is None:
            if method in _NEEDS_ORIGINAL_LENGTH:
                raise ValueError(
                    f"{method} scaling needs original_length, the context length the model was trained "
                    "with (original_max_position_embeddings in a config.json"
                    + ("; for dynamic, transformers uses max_position_embeddings" if method == "dynamic" else "")
                    + "), e.g. 8192 for Llama 3.1."
                )
        else:
            original = check_int(
                "original_length (original_max_position_embeddings)", original, low=1, high=MAX_POSITION
            )
        low_freq = _positive("low_freq_factor", self.low_freq_factor)
        high_freq = _positive("high_freq_factor", self.high_freq_factor)
        if high_freq <= low_freq:
            raise ValueError(
                f"high_freq_factor ({high_freq:g}) must be greater than low_freq_factor ({low_freq:g}); "
                "Llama 3.1 uses 4 and 1."
            )
        beta_fast = _positive("beta_fast", self.beta_fast)
        beta_slow = _positive("beta_slow", self.beta_slow)
        if beta_fast <= beta_slow:
            raise ValueError(
                f"beta_fast ({beta_fast:g}) must be greater than beta_slow ({beta_slow:g}); YaRN uses 32 and 1."
            )
        if not isinstance(self.truncate, (bool, np.bool_)):
            raise ValueError(f"truncate must be True or False, got {self.truncate!r}.")
        attention = self.attention_factor
        if attention is not None:
            attention = _positive("attention_factor", attention)
        short = _factor_list("short_factor", self.short_factor)
        long = _factor_list("long_factor", self.long_factor)
        if method == "longrope" and (short is None or long is None):
            missing = " and ".join(n for n, v in (("short_factor", short), ("long_factor", long)) if v is None)
            raise ValueError(f"longrope scaling needs {missing}: one divisor per pair (d/2 numbers each).")
        if short is not None and long is not None and len(short) != len(long):
            raise ValueError(
                f"short_factor and long_factor must have the same length (one number per pair), "
                f"got {len(short)} and {len(long)}."
            )
        for name, value in (
            ("method", method), ("factor", factor), ("original_length", original),
            ("low_freq_factor", low_freq), ("high_freq_factor", high_freq),
            ("beta_fast", beta_fast), ("beta_slow", beta_slow), ("truncate", bool(self.truncate)),
            ("mscale", _optional_nonnegative("mscale", self.mscale)),
            ("mscale_all_dim", _optional_nonnegative("mscale_all_dim", self.mscale_all_dim)),
            ("attention_factor", attention), ("short_factor", short), ("long_factor", long),
        ):
            object.__setattr__(self, name, value)


def check_rope_d(d: object) -> int:
    """Return the rotary dimension d as an int: even, 2 .. MAX_D."""
    d = check_int("d (the rotary dimension)", d, low=2, high=MAX_D)
    if d % 2:
        raise ValueError(
            f"d (the rotary dimension) must be even, got {d}: RoPE turns coordinates in pairs. "
            "Llama uses 128, GPT-NeoX 20B rotates 24 of its 96."
        )
    return d


def check_rope_base(base: object) -> float:
    """Return the RoPE base as a float > 1."""
    return check_base(base, _BASE_NAME, "the base", _BASE_USUAL)


def _check_scaling(scaling: object) -> RopeScaling | None:
    if scaling is not None and not isinstance(scaling, RopeScaling):
        raise ValueError(
            f"scaling must be a RopeScaling (or None for plain RoPE), got {type(scaling).__name__} {scaling!r}; "
            "rope_from_config reads one from a config.json."
        )
    return scaling


def _check_length(length: object) -> int | None:
    if length is None:
        return None
    return check_int("length (the sequence length)", length, low=1, high=MAX_POSITION + 1)


def _check_d_for(method: str, d: int) -> None:
    if method in ("ntk", "dynamic") and d < 4:
        raise ValueError(
            f"{method} scaling needs d >= 4, got d={d}: its base change b * s**(d/(d-2)) divides by d - 2."
        )


def _check_pair_count(scaling: RopeScaling, d: int) -> None:
    if scaling.method == "longrope" and len(scaling.short_factor) != d // 2:
        raise ValueError(
            f"longrope's short_factor and long_factor hold {len(scaling.short_factor)} numbers each, "
            f"but d={d} has {d // 2} pairs: they need one number per pair."
        )


def _ntk_base(base: float, scale: float, d: int) -> float:
    """b * scale**(d/(d-2)), the NTK-aware base change."""
    return base * scale ** (d / (d - 2))


def _yarn_code_ramp(d: int, base: float, scaling: RopeScaling) -> np.ndarray:
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


def _yarn_paper_ramp(d: int, base: float, scaling: RopeScaling) -> np.ndarray:
    """1 - gamma(r_i), r_i = L0 / lambda_i, gamma of the YaRN paper's equation (section 3.2)."""
    theta = base ** -(np.arange(0, d, 2, dtype=np.float64) / d)
    r = scaling.original_length * theta / (2 * math.pi)
    gamma = np.clip((r - scaling.beta_slow) / (scaling.beta_fast - scaling.beta_slow), 0.0, 1.0)
    return 1.0 - gamma


def yarn_ramp(d: int, base: float = 10000.0, *, scaling: RopeScaling, form: str = "code") -> np.ndarray:
    r"""YaRN's share of interpolation w_i of each pair: :math:`\theta'_i = (1 - w_i)\theta_i + w_i\theta_i/s`.

    - ``form="code"`` (what models run; YaRN's repository, transformers, DeepSeek's and gpt-oss's
      reference code): linear in the pair index,
      :math:`w_i = \mathrm{clip}((i - i_{fast})/(i_{slow} - i_{fast}), 0, 1)` with
      :math:`i_{fast} = \max(\lfloor c(\beta_{fast})\rfloor, 0)`,
      :math:`i_{slow} = \min(\lceil c(\beta_{slow})\rceil, d - 1)` and
      :math:`c(\beta) = d\ln(L_0/(2\pi\beta))/(2\ln b)`, the (fractional) pair index whose
      wavelength fits :math:`\beta` turns into :math:`L_0`. ``truncate=False`` drops the floor and
      ceil; equal bounds get 0.001 added to the upper one, as the code does.
    - ``form="paper"`` (Peng et al. 2023, eq. 18-19): linear in :math:`r_i = L_0/\lambda_i`,
      :math:`w_i = 1 - \gamma(r_i)`, :math:`\gamma(r) = \mathrm{clip}((r - \beta_{slow})/
      (\beta_{fast} - \beta_{slow}), 0, 1)`.

    Both are 0 (pair unchanged) for the fast pairs and 1 (divided by s) for the slow ones.
    Between the bounds r falls geometrically with i, so the paper's w rises steeply just past
    the fast bound and flattens towards the slow one, where the code's rises evenly; the
    code's floor and ceil also widen its ramp by up to a pair at each end. With Llama 2's
    d=128, b=10000, L0=4096 the bounds are pairs 20.94 and 45.03 (code: 20 and 46), and the
    two ramps differ most at pair 30: 0.38 (code) against 0.75 (paper). Where the fast bound
    lies past the last coordinate (d = 8, b = 2, L0 = 10**6: 49.1), the code's clamp puts its
    upper bound below its lower one and the ramp turns over: the code divides every pair by s,
    the paper leaves every pair unchanged.

    Args:
        d: even rotary dimension.
        base: b.
        scaling: a RopeScaling with method "yarn".
        form: ``"code"`` or ``"paper"``.

    Returns:
        float64 array (d/2,) in [0, 1].

    Example:
        >>> yarn_ramp(8, 10000.0, scaling=RopeScaling("yarn", 4.0, 64))
        array([0. , 0.5, 1. , 1. ])
    """
    d = check_rope_d(d)
    base = check_rope_base(base)
    scaling = _check_scaling(scaling)
    if scaling is None or scaling.method != "yarn":
        raise ValueError(f"yarn_ramp needs a yarn RopeScaling, got {scaling!r}.")
    form = check_choice("form", form, YARN_RAMP_FORMS)
    return _yarn_code_ramp(d, base, scaling) if form == "code" else _yarn_paper_ramp(d, base, scaling)


def rope_frequencies(
    d: int, base: float = 10000.0, *, scaling: RopeScaling | None = None, length: int | None = None
) -> np.ndarray:
    r"""The angle per position :math:`\theta'_i` of each pair, in rad/position, after the scaling.

    Unscaled, :math:`\theta_i = b^{-2i/d}` (RoFormer eq. 15; transformers'
    ``1 / base ** (arange(0, d, 2) / d)``, computed here in float64 where transformers uses
    float32). Each method of ``RopeScaling`` changes them as its docstring says.

    Args:
        d: even rotary dimension, 2 .. 16384 (a model's head_dim times partial_rotary_factor).
        base: b (rope_theta), finite and > 1.
        scaling: a RopeScaling, or None for plain RoPE.
        length: the sequence length, where the method depends on it: "dynamic" raises it to
            :math:`L_0` when shorter (None = :math:`L_0`, the frequencies transformers starts
            with); "longrope" uses ``long_factor`` when length > :math:`L_0`, else (and for None)
            ``short_factor``. transformers takes the largest position + 1.

    Returns:
        float64 array (d/2,).

    Example:
        >>> rope_frequencies(4, 100.0)
        array([1. , 0.1])
        >>> rope_frequencies(4, 100.0, scaling=RopeScaling("linear", 2.0))
        array([0.5 , 0.05])

    Reference: Su et al. 2021, section 3.2; transformers 5.18 ``modeling_rope_utils``.
    """
    d = check_rope_d(d)
    base = check_rope_base(base)
    scaling = _check_scaling(scaling)
    length = _check_length(length)
    exponents = np.arange(0, d, 2, dtype=np.float64) / d
    theta = base**-exponents
    if scaling is None:
        return theta
    method, s, L0 = scaling.method, scaling.factor, scaling.original_length
    _check_d_for(method, d)
    _check_pair_count(scaling, d)
    if method == "linear":
        return theta / s
    if method == "ntk":
        return _ntk_base(base, s, d) ** -exponents
    if method == "dynamic":
        L = L0 if length is None else max(length, L0)
        return _ntk_base(base, s * L / L0 - (s - 1), d) ** -exponents
    if method == "yarn":
        ramp = _yarn_code_ramp(d, base, scaling)
        return (theta / s) * ramp + theta * (1.0 - ramp)
    if method == "llama3":
        wavelength = 2 * math.pi / theta
        low_wavelength = L0 / scaling.low_freq_factor
        high_wavelength = L0 / scaling.high_freq_factor
        scaled = np.where(wavelength > low_wavelength, theta / s, theta)
        smooth = (L0 / wavelength - scaling.low_freq_factor) / (scaling.high_freq_factor - scaling.low_freq_factor)
        medium = (wavelength >= high_wavelength) & (wavelength <= low_wavelength)
        return np.where(medium, (1 - smooth) * scaled / s + smooth * scaled, scaled)
    divisors = scaling.long_factor if length is not None and length > L0 else scaling.short_factor
    return theta / np.asarray(divisors, dtype=np.float64)


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """0.1 mscale ln(scale) + 1, and 1 for scale <= 1 (YaRN's get_mscale)."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def rope_attention_factor(scaling: RopeScaling | None, length: int | None = None) -> float:
    r"""The factor transformers multiplies cos and sin by (its ``attention_scaling``); 1.0 where the method has none.

    - ``"yarn"``: ``attention_factor`` if given; else, when ``mscale`` and ``mscale_all_dim`` are
      both given and non-zero, :math:`m(s, \text{mscale}) / m(s, \text{mscale\_all\_dim})`
      (DeepSeek-V3: 1.0, its attention applies :math:`m(s, \text{mscale\_all\_dim})^2` to the
      softmax scale instead); else :math:`m(s, 1)`, with :math:`m(s, a) = 0.1\,a\ln s + 1`
      (1 for s <= 1). The YaRN paper's :math:`\sqrt{1/t} = 0.1\ln s + 1` (section 3.4): q and
      k are both multiplied by it, so the scores by its square.
    - ``"longrope"``: ``attention_factor`` if given; else :math:`\sqrt{1 + \ln s/\ln L_0}` (1 for
      s <= 1), the same for short and long factors.
    - every other method: 1.0.

    Args:
        scaling: a RopeScaling or None.
        length: the sequence length, accepted for symmetry with ``rope_frequencies`` and
            validated; no method in transformers 5.18 makes its factor depend on it.

    Example:
        >>> round(rope_attention_factor(RopeScaling("yarn", 4.0, 32768)), 6)
        1.138629
    """
    scaling = _check_scaling(scaling)
    _check_length(length)
    if scaling is None:
        return 1.0
    if scaling.method not in ("yarn", "longrope"):
        return 1.0
    if scaling.attention_factor is not None:
        return scaling.attention_factor
    s = scaling.factor
    if scaling.method == "longrope":
        return 1.0 if s <= 1 else math.sqrt(1 + math.log(s) / math.log(scaling.original_length))
    if scaling.mscale and scaling.mscale_all_dim:
        return _yarn_mscale(s, scaling.mscale) / _yarn_mscale(s, scaling.mscale_all_dim)
    return _yarn_mscale(s)


def _spread(pairs: np.ndarray, layout: str) -> np.ndarray:
    """Per-pair columns (L, d/2) spread to the d columns of a layout."""
    if layout == "half":
        return np.concatenate([pairs, pairs], axis=-1)
    return np.repeat(pairs, 2, axis=-1)


def rope_cache(
    length: int,
    d: int,
    base: float = 10000.0,
    *,
    layout: str = "half",
    scaling: RopeScaling | None = None,
    start: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    r"""The cos and sin tables of positions start .. start+length-1, times the attention factor.

    .. math::

        \cos[m, c] = a\cos(m\,\theta'_{p(c)}), \qquad \sin[m, c] = a\sin(m\,\theta'_{p(c)})

    with a = ``rope_attention_factor`` and p(c) the pair of column c: c mod d/2 for ``"half"``
    (transformers' ``cat(freqs, freqs)``), c // 2 for ``"interleaved"`` (GPT-J's
    ``repeat_interleave``). As a model's rotary embedding returns them: "dynamic" and
    "longrope" take the sequence length start + length (the largest position + 1). Angles are
    computed in float64 to about one ulp (``sin_cos_outer``); transformers computes them in
    float32, so its tables differ from these by float32 rounding of the angle (up to about
    ulp(m θ) at position m).

    Args:
        length: number of positions, 0 .. 1,048,576, length x d <= 2**25.
        d: even rotary dimension.
        base: b (rope_theta).
        layout: ``"half"`` or ``"interleaved"``.
        scaling: a RopeScaling, or None.
        start: first position, a whole number >= 0.

    Returns:
        (cos, sin), float64 arrays of shape (length, d).

    Example:
        >>> cos, sin = rope_cache(2, 4, 100.0)
        >>> cos.round(4)
        array([[1.    , 1.    , 1.    , 1.    ],
               [0.5403, 0.995 , 0.5403, 0.995 ]])

    Reference: transformers 5.18 ``LlamaRotaryEmbedding.forward``; GPT-J's
    ``create_sinusoidal_positions``.
    """
    d = check_rope_d(d)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
    length = check_int("length (the number of positions)", length, low=0, high=MAX_LENGTH)
    start = check_int("start", start, low=0, high=MAX_POSITION)
    check_cells(length, d)
    k = position_range(length, start)
    sequence_length = start + length if length else None
    theta = rope_frequencies(d, base, scaling=scaling, length=sequence_length)
    amplitude = rope_attention_factor(scaling, sequence_length)
    cos = np.empty((length, d), dtype=np.float64)
    sin = np.empty((length, d), dtype=np.float64)
    block = max(1, _BLOCK_CELLS // theta.size)
    for first in range(0, length, block):
        rows = slice(first, first + block)
        sin_block, cos_block = sin_cos_outer(k[rows], theta)
        cos[rows] = _spread(cos_block, layout)
        sin[rows] = _spread(sin_block, layout)
    if amplitude != 1.0:
        cos *= amplitude
        sin *= amplitude
    return cos, sin


def _check_positions(positions: object, count: int) -> np.ndarray:
    array = np.asarray(positions)
    if array.dtype.kind not in "iuf" or array.ndim != 1:
        raise ValueError(
            f"positions must be a 1-D array of whole numbers, got {array.dtype} values of shape {array.shape}."
        )
    if array.size != count:
        raise ValueError(f"positions has {array.size:,} values but x has {count:,} rows (its second-last axis).")
    values = array.astype(np.float64)
    check_finite_values("positions", values)
    if np.any(values != np.round(values)):
        raise ValueError(f"positions must be whole numbers, got {values[values != np.round(values)][0]!r}.")
    if values.size and np.max(np.abs(values)) > MAX_POSITION:
        raise ValueError(f"positions must lie within +-{MAX_POSITION:,}, got {np.max(np.abs(values)):,.0f}.")
    return values


def rotate(
    x: object,
    positions: object,
    base: float = 10000.0,
    *,
    layout: str = "half",
    scaling: RopeScaling | None = None,
) -> np.ndarray:
    r"""Turn each pair of x's row m by the angle :math:`p_m\,\theta'_i` (RoPE applied to a query or key).

    For pair i with coordinates (u, v) (columns i and i + d/2 in ``"half"``, 2i and 2i + 1 in
    ``"interleaved"``) and :math:`\phi = p_m\theta'_i`:

    .. math:: (u, v) \mapsto (u\cos\phi - v\sin\phi,\; v\cos\phi + u\sin\phi)

    transformers' ``q * cos + rotate_half(q) * sin``, GPT-J's ``rotate_every_two``, Meta's
    ``(u + iv) e^{i\phi}``; RoFormer eq. 14-15. Then
    :math:`\mathrm{rotate}(q, m)\cdot\mathrm{rotate}(k, n)` depends only on m - n. This is the
    rotation alone: transformers also multiplies q and k by ``rope_attention_factor`` (folded
    into its cos and sin), which a caller multiplies by where it matters.

    Args:
        x: real array (..., L, d) (a query, or batches and heads of them), d even, at most 2**25
            values, finite.
        positions: (L,) whole numbers, the position of each row. "dynamic" and "longrope" read
            the sequence length as max(positions) + 1, as transformers does.
        base: b (rope_theta).
        layout: ``"half"`` or ``"interleaved"``.
        scaling: a RopeScaling, or None.

    Returns:
        float64 array of x's shape.

    Example:
        >>> rotate(np.array([[1.0, 0.0]]), [1], layout="interleaved").round(4)
        array([[0.5403, 0.8415]])

    Reference: Su et al. 2021, section 3.4.2 (the computationally efficient form).
    """
    dimensions = np.ndim(x)
    if dimensions < 2:
        raise ValueError(f"x must be (..., L, d): rows of d coordinates, got shape {np.shape(x)}.")
    array = check_matrix("x", x, ndim=(dimensions,))
    count, d = array.shape[-2], array.shape[-1]
    d = check_rope_d(d)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
    p = _check_positions(positions, count)
    top = float(np.max(p)) if p.size else -1.0
    sequence_length = int(top) + 1 if top >= 0 else None
    theta = rope_frequencies(d, base, scaling=scaling, length=sequence_length)
    half = d // 2
    first, second = (slice(0, half), slice(half, d)) if layout == "half" else (slice(0, d, 2), slice(1, d, 2))
    out = np.empty_like(array)
    # Blocks of rows keep the temporaries to a few MB whatever the size of x.
    block = max(1, _BLOCK_CELLS * count // max(array.size // 2, 1))
    for start in range(0, count, block):
        rows = slice(start, start + block)
        sin, cos = sin_cos_outer(p[rows], theta)
        u, v = array[..., rows, first], array[..., rows, second]
        out[..., rows, first] = u * cos - v * sin
        out[..., rows, second] = v * cos + u * sin
    return out
