r"""Proportional RoPE, Gemma 4's global layers: the first pairs of the whole head rotate, divided by the
factor, and the rest are left unrotated,

.. math::

    \theta'_i = \begin{cases} b^{-2i/d} / s & i < r = \lfloor p\,d/2 \rfloor \\ 0 & r \le i < d/2 \end{cases}

with d the whole head (``global_head_dim``, 512 in Gemma 4), p = ``partial_rotary_factor`` (0.25) and
s = ``factor``: the exponent runs over the whole head, where the partial rotary of Phi-3 or Qwen3.5
computes plain RoPE on a head of ``int(p d)`` coordinates. No attention factor. Its inverse reading takes
frequencies whose last pairs are measured as 0 after positive ones (an inv_freq's zeros, a cos or sin
table's unchanging columns): p from the rotated pairs, s from their gain.

Reference: transformers 5.18 ``modeling_rope_utils._compute_proportional_rope_parameters``
(``ROPE_INIT_FUNCTIONS["proportional"]``): it reads ``factor`` and ``partial_rotary_factor`` from the rope
parameters, both 1.0 when absent, and computes ``int(partial_rotary_factor * head_dim // 2)`` rotated pairs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.methods.registry import ConfigKey, RopeMethod
from pe_core.rope.methods.shared import _no_attention_factor
from pe_core.rope.reading import AGREEMENT, FrequencyEvidence, MethodReadings
from pe_core.wording import number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling


def rotated_pairs(d: int, partial_rotary_factor: float) -> int:
    r""":math:`r = \lfloor p\,d/2 \rfloor`, the pairs proportional RoPE turns, as transformers' ``int(p * d // 2)``."""
    return int(partial_rotary_factor * d // 2)


def _proportional_frequencies(
    theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None
) -> np.ndarray:
    r""":math:`\theta'_i = \theta_i / s` for :math:`i < \lfloor p d / 2 \rfloor`, 0 after."""
    rotated = np.arange(theta.size) < rotated_pairs(d, scaling.partial_rotary_factor)
    return np.where(rotated, theta / scaling.factor, 0.0)


def _proportional_validate(scaling: RopeScaling, d: int | None) -> None:
    if d is not None and rotated_pairs(d, scaling.partial_rotary_factor) < 1:
        raise ValueError(
            f"proportional RoPE with partial_rotary_factor {scaling.partial_rotary_factor:g} rotates "
            f"int({scaling.partial_rotary_factor:g} * {d} // 2) = 0 pairs of d={d}: no position at all. "
            f"Use a partial_rotary_factor of at least {2 / d:g} (Gemma 4: 0.25 of 512)."
        )


def _proportional_sentence(reading: dict) -> str:
    s, p, rotated = reading["factor"], reading["partial_rotary_factor"], reading["rotated_pairs"]
    divided = "" if s == 1.0 else f", divided by the factor {number(s)}"
    return (
        f"Proportional RoPE (Gemma 4's global layers), partial_rotary_factor {number(p)}: pairs 0 to {rotated - 1} "
        f"turn at base^(-2i/d) with d the whole head{divided}; pairs from {rotated} on are left unrotated "
        "(frequency exactly 0)."
    )


def _proportional_phrase(reading: dict) -> str:
    scaled = "" if reading["factor"] == 1.0 else f" by {number(reading['factor'])}"
    return f"proportional{scaled}, partial_rotary_factor {number(reading['partial_rotary_factor'])}"


def _rotary_share(rotated: int, d: int) -> float:
    """rotated / (d/2), nudged up where float rounding would make transformers' int(p * d // 2) one less."""
    share = rotated / (d // 2)
    while rotated_pairs(d, share) < rotated:
        share = math.nextafter(share, 2.0)
    return share


def _proportional_read(evidence: FrequencyEvidence) -> MethodReadings:
    """Positive frequencies, then pairs measured as 0 to the end: p = rotated pairs / (d/2), s = 1 over the
    rotated pairs' common gain (1 when they are unscaled at the base read), the base as every reading takes it.

    A zero counts only where the measurement tells it from the plain frequency the pair would otherwise have:
    a CSV's decimals can round a slow pair to 0, and a table's unchanging column bounds its frequency only to
    what its rows and rounding can show."""
    measured, gains = evidence.measured, evidence.gains
    positive = np.flatnonzero(measured.theta > 0)
    if positive.size == 0:
        return MethodReadings()
    rotated = int(positive[-1]) + 1
    if rotated == measured.theta.size or rotated != positive.size:
        return MethodReadings()
    if not evidence.scaled:
        s = 1.0
    else:
        s = evidence.plateau_factor
        if not (s is not None and s > 1.0 and gains.prefix_last < 0 and gains.tail_first == 0):
            return MethodReadings()
    # The largest frequency the data allow the first zero pair: a table's bound, or a value's rounding.
    sigma = measured.sigma[rotated]
    allowed = max(measured.upper[rotated], AGREEMENT * sigma) if math.isfinite(sigma) else measured.upper[rotated]
    if evidence.plain[rotated] / s <= allowed:
        return MethodReadings()
    p = _rotary_share(rotated, evidence.d)
    determined = {"method": "proportional", "factor": s, "partial_rotary_factor": p, "rotated_pairs": rotated}
    zeros = measured.theta.size - rotated
    notes = (
        f"Only proportional RoPE leaves pairs unrotated: the {zeros} pair{'s' if zeros > 1 else ''} of frequency 0 "
        f"fix partial_rotary_factor to [{number(p)}, {number((rotated + 1) / (evidence.d // 2))}), since "
        f"transformers rotates int(p d / 2) pairs; {number(p)} is the rotated pairs' share of the {evidence.d // 2}.",
    )
    return MethodReadings(distinctive=tuple(
        evidence.scaled_reading("proportional", s, None, determined, notes, partial_rotary_factor=p)))


PROPORTIONAL = RopeMethod(
    name="proportional", frequencies=_proportional_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor", 1.0), ConfigKey("partial_rotary_factor", 1.0)), original_length=None,
    validate=_proportional_validate, sentence=_proportional_sentence, phrase=_proportional_phrase,
    read=_proportional_read,
)
