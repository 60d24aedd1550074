r"""RoPE past the trained length: which angles each pair meets.

A model trained on sequences of :math:`L_0` tokens has met, in pair i, the rotations by
:math:`\delta\theta_i` for the offsets :math:`\delta` its training texts held. Run on a text
of L > :math:`L_0` tokens, the fast pairs have long since turned through whole circles (every
angle met), while a slow pair that never completed a turn in training now meets rotations it
never saw. A context-extension scaling (``pe_core.rope.scaling.RopeScaling``) changes
:math:`\theta_i` to :math:`\theta'_i` so that it does not. The functions here measure that, pair by
pair (``angle_coverage``); ``pe_core.attention_scores.rope_dot_by_offset`` gives the score of a
content-free query and key as the offset grows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pe_core._validate import MAX_POSITION, check_int
from pe_core.rope.scaling import RopeScaling, rope_frequencies

#: An arc longer than the trained one by less than this (relative) counts as covered: float64's
#: rounding of L theta_i / s against L0 theta_i, where s = L / L0 exactly (a few ulp).
COVERAGE_RTOL = 1e-12


def _length(name: str, value: object) -> int:
    return check_int(name, value, low=1, high=MAX_POSITION)


@dataclass(frozen=True)
class AngleCoverage:
    r"""Per pair i: the angles met in training (trained length :math:`L_0`) and at a target length L.

    Arrays of shape (d/2,):

    - ``theta``: :math:`\theta_i = b^{-2i/d}`, the frequencies the model was trained with;
    - ``scaled``: :math:`\theta'_i`, after the scaling, at sequence length L;
    - ``seen``: :math:`L_0\theta_i`, the largest angle (rad) pair i turns through over the trained length;
    - ``needed``: :math:`L\theta'_i`, the largest one it turns through over the target length;
    - ``unseen``: whether the pair meets, at the target length, angles it never met in training:
      :math:`L_0\theta_i < 2\pi` (it never turned a whole circle in training) and
      :math:`L\theta'_i > L_0\theta_i`.
    """

    theta: np.ndarray
    scaled: np.ndarray
    seen: np.ndarray
    needed: np.ndarray
    unseen: np.ndarray

    @property
    def wavelength(self) -> np.ndarray:
        r""":math:`\lambda_i = 2\pi/\theta_i`, positions per turn before the scaling."""
        return 2 * math.pi / self.theta

    @property
    def turns_seen(self) -> np.ndarray:
        r"""Turns over the trained length, :math:`L_0/\lambda_i` (YaRN's :math:`r_i`)."""
        return self.seen / (2 * math.pi)

    @property
    def turns_needed(self) -> np.ndarray:
        r"""Turns over the target length after the scaling, :math:`L\theta'_i/2\pi`."""
        return self.needed / (2 * math.pi)

    @property
    def ratio(self) -> np.ndarray:
        r""":math:`\theta'_i/\theta_i`: 1 for a pair the scaling leaves alone, 1/s for one divided by s."""
        return self.scaled / self.theta


def angle_coverage(
    d: int,
    base: float = 10000.0,
    trained_length: int = 4096,
    target_length: int = 4096,
    *,
    scaling: RopeScaling | None = None,
) -> AngleCoverage:
    r"""Which pairs meet, at the target length, angles they never met over the trained length.

    Over a text of :math:`L_0` tokens, pair i of RoPE rotates a query and key
    :math:`\delta` apart by :math:`\delta\theta_i`, for offsets up to about :math:`L_0`: the
    angles :math:`[0, L_0\theta_i]`. A pair that turned through a whole circle
    (:math:`L_0\theta_i \ge 2\pi`, i.e. :math:`L_0 \ge \lambda_i`) has met every rotation; a
    slower one has met only that arc. At the target length L, with the scaled frequencies
    :math:`\theta'_i` (at sequence length L, where the method depends on it), the arc is
    :math:`[0, L\theta'_i]`, and

    .. math::

        \text{unseen}_i = \big(L_0\theta_i < 2\pi\big) \wedge \big(L\theta'_i > L_0\theta_i\big).

    The spans are taken as :math:`L_0` and L positions (not :math:`L_0 - 1` and L - 1), as
    YaRN's :math:`r_i = L_0/\lambda_i` counts turns, so that position interpolation by exactly
    :math:`s = L/L_0` gives :math:`L\theta_i/s = L_0\theta_i`: covered, not one position's angle
    :math:`\theta_i` past the trained arc (and an arc longer by less than ``COVERAGE_RTOL``, relative,
    the rounding of :math:`L\theta_i/s` against :math:`L_0\theta_i`, counts as covered). With no
    scaling and :math:`L \le L_0`, no pair meets an unseen angle. The "seen" arc is measured with
    the unscaled :math:`\theta_i`, the frequencies of pretraining (Phi-3's LongRoPE runs
    ``short_factor`` even within :math:`L_0`; this compares it with the plain RoPE it started
    from), and training at longer lengths after the scaling (Llama 3.1's, DeepSeek-V3's) is not
    counted: it is what this measures the need for.

    Args:
        d: even rotary dimension.
        base: b (rope_theta).
        trained_length: :math:`L_0`, the length the model was trained on (a config.json's
            ``original_max_position_embeddings``), a whole number >= 1.
        target_length: L, the length it is run at, a whole number >= 1.
        scaling: a RopeScaling, or None for plain RoPE.

    Returns:
        AngleCoverage (theta, scaled, seen, needed, unseen; wavelength, turns_seen,
        turns_needed and ratio as properties).

    Example:
        >>> c = angle_coverage(4, 10000.0, 1000, 4000)
        >>> c.turns_seen.round(3), c.unseen
        (array([159.155,   1.592]), array([False, False]))
        >>> angle_coverage(4, 10000.0, 100, 400).unseen
        array([False,  True])

    Reference: Peng et al. 2023 (YaRN), section 3.2 (turns :math:`r = L/\lambda` per dimension);
    Chen et al. 2023, section 2.3 (position interpolation keeps the angles in the trained range).
    """
    trained = _length("trained_length (the trained context length)", trained_length)
    target = _length("target_length (the context length to reach)", target_length)
    theta = rope_frequencies(d, base)
    scaled = rope_frequencies(d, base, scaling=scaling, length=target)
    seen = trained * theta
    needed = target * scaled
    unseen = (seen < 2 * math.pi) & (needed > seen * (1 + COVERAGE_RTOL))
    return AngleCoverage(theta=theta, scaled=scaled, seen=seen, needed=needed, unseen=unseen)
