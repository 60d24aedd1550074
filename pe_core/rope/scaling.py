r"""RoPE's frequencies and the context-length scalings models ship with.

Plain RoPE turns pair i by :math:`\theta_i = b^{-2i/d}` per position (``pe_core.rope.rotation``).
A scaling (``RopeScaling``) changes the :math:`\theta_i` so that a model reaches past the length
it was trained on; its ``method`` and parameters are named as transformers' ``rope_type`` names
them, with the same defaults, so a config.json reads straight into it (``pe_core.rope.config``).
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
    MAX_POSITION,
    check_base,
    check_choice,
    check_int,
    check_real,
)
from pe_core.rope.methods import rope_method, rope_method_names, yarn_code_ramp

#: The scaling methods shipped, named as transformers' rope_type (plus the static NTK-aware "ntk"); one entry
#: each in pe_core.rope.methods, whose rope_method_names() also lists methods registered later.
ROPE_METHODS = rope_method_names()
#: The ways to compute YaRN's ramp: as its code does, or as its paper's equation does.
YARN_RAMP_FORMS = ("code", "paper")

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


def _partial_rotary_factor(value: object) -> float:
    share = check_real("partial_rotary_factor (the share of the head that rotates)", value)
    if not 0 < share <= 1:
        raise ValueError(
            f"partial_rotary_factor (the share of the head that rotates) must lie in (0, 1], got {value!r}: "
            "1 rotates every pair, Gemma 4's global layers rotate 0.25 of theirs."
        )
    return share


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
    - ``"proportional"``: Gemma 4's global layers (transformers' ``_compute_proportional_rope_parameters``):
      with p = ``partial_rotary_factor`` and d the whole head,
      :math:`\theta'_i = \theta_i / s` for :math:`i < r = \lfloor p d / 2 \rfloor` and 0 (the pair left
      unrotated) for the others. The exponent of :math:`\theta_i = b^{-2i/d}` runs over the whole head,
      where partial rotary elsewhere (Phi-3, Qwen3.5) computes plain RoPE on a head of ``int(p d)``.

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
        partial_rotary_factor: p, the share of the head a method that reads it rotates (proportional),
            0 < p <= 1 (default 1). The other methods rotate the d they are given (a config's
            ``int(head_dim * p)`` already) and refuse any p but 1, which they would ignore.

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
    partial_rotary_factor: float = 1.0

    def __post_init__(self) -> None:
        method = check_choice("the scaling method", self.method, rope_method_names())
        entry = rope_method(method)
        factor = check_real("factor (the scaling factor)", self.factor)
        if factor < 1.0:
            raise ValueError(
                f"factor (the scaling factor) must be at least 1, got {self.factor!r}: a factor below 1 "
                "would shrink the context instead of stretching it. Use 1 for no stretch."
            )
        original = self.original_length
        if original is None:
            if entry.original_length is not None:
                from_max = entry.original_length == "max_position_embeddings"
                raise ValueError(
                    f"{method} scaling needs original_length, the context length the model was trained "
                    "with (original_max_position_embeddings in a config.json"
                    + (f"; for {method}, transformers uses max_position_embeddings" if from_max else "")
                    + "), e.g. 8192 for Llama 3.1."
                )
        else:
            original = check_int(
                "original_length (original_max_position_embeddings)", original, low=1, high=MAX_POSITION
            )
        if not isinstance(self.truncate, (bool, np.bool_)):
            raise ValueError(f"truncate must be True or False, got {self.truncate!r}.")
        attention = self.attention_factor
        if attention is not None:
            attention = _positive("attention_factor", attention)
        short = _factor_list("short_factor", self.short_factor)
        long = _factor_list("long_factor", self.long_factor)
        if short is not None and long is not None and len(short) != len(long):
            raise ValueError(
                f"short_factor and long_factor must have the same length (one number per pair), "
                f"got {len(short)} and {len(long)}."
            )
        partial = _partial_rotary_factor(self.partial_rotary_factor)
        if partial != 1.0 and not entry.whole_head:
            raise ValueError(
                f"{method} scaling does not read partial_rotary_factor (got {self.partial_rotary_factor!r}): it "
                "rotates the d it is given, which for a partial head is already int(head_dim * "
                "partial_rotary_factor). Leave it 1, or use proportional, which rotates a share of the whole head."
            )
        for name, value in (
            ("method", method), ("factor", factor), ("original_length", original),
            ("low_freq_factor", _positive("low_freq_factor", self.low_freq_factor)),
            ("high_freq_factor", _positive("high_freq_factor", self.high_freq_factor)),
            ("beta_fast", _positive("beta_fast", self.beta_fast)),
            ("beta_slow", _positive("beta_slow", self.beta_slow)), ("truncate", bool(self.truncate)),
            ("mscale", _optional_nonnegative("mscale", self.mscale)),
            ("mscale_all_dim", _optional_nonnegative("mscale_all_dim", self.mscale_all_dim)),
            ("attention_factor", attention), ("short_factor", short), ("long_factor", long),
            ("partial_rotary_factor", partial),
        ):
            object.__setattr__(self, name, value)
        entry.validate(self, None)


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
    return yarn_code_ramp(d, base, scaling) if form == "code" else _yarn_paper_ramp(d, base, scaling)


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
    entry = rope_method(scaling.method)
    entry.validate(scaling, d)
    return entry.frequencies(theta, d, base, scaling, length)


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
    return rope_method(scaling.method).attention_factor(scaling)
