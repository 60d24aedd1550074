r"""What position alone puts into an attention score, and where softmax then looks.

A query at position m and a key at position n with no content (no token, only position) get a
score that depends on the scheme: the sinusoid added to the input gives
:math:`P[m]\cdot P[n] = \sum_i\cos(\omega_i\delta)` (``dot_by_offset``), ALiBi and T5 add a bias
of the offset :math:`\delta = n - m` (``attention_bias``), and RoPE turns the query and the key
by their positions (``rope_dot_by_offset`` here). Softmax over the query's keys turns the scores
into the weights it gives each key (``attention_weights``), and two numbers say where those
weights sit (``half_mass_radius``, ``effective_keys``).
"""

from __future__ import annotations

import numpy as np

from pe_core._validate import check_int, check_matrix
from pe_core.rope.scaling import RopeScaling, rope_frequencies
from pe_core.similarity import cos_sum_by_offset


def rope_dot_by_offset(
    delta: object, d: int, base: float = 10000.0, *, scaling: RopeScaling | None = None, length: int | None = None
) -> np.ndarray:
    r"""RoPE's score :math:`\sum_i 2\cos(\delta\,\theta'_i)` of an all-ones query and key :math:`\delta` apart;
    also the expected score of a random query and a key equal to it.

    Derivation. RoPE turns pair i of a query at position m by :math:`m\theta_i`, and of a key at
    n by :math:`n\theta_i` (``rotate``), with :math:`R(\phi)` the 2 x 2 rotation. Rotations
    compose, :math:`R(m\theta)^\top R(n\theta) = R(\delta\theta)` with :math:`\delta = n - m`, so

    .. math::

        \mathrm{rotate}(q, m)\cdot\mathrm{rotate}(k, n) = \sum_i q_{(i)}^\top R(\delta\theta_i)\, k_{(i)},

    :math:`q_{(i)}` the two coordinates of pair i. For any 2-vector u,
    :math:`u^\top R(\phi)\,u = (u_1^2 + u_2^2)\cos\phi` (the sine terms,
    :math:`-u_1u_2\sin\phi + u_2u_1\sin\phi`, cancel). So for k = q, exactly and for every q,

    .. math:: s(\delta) = \sum_i \lVert q_{(i)}\rVert^2 \cos(\delta\theta_i).

    - all-ones q = k: :math:`\lVert q_{(i)}\rVert^2 = 2`, :math:`s(\delta) = \sum_i 2\cos(\delta\theta_i)`
      (RoFormer's long-term decay, section 3.4.3, is about this sum);
    - q = k with independent entries of mean 0 and variance :math:`\sigma^2`:
      :math:`E\,\lVert q_{(i)}\rVert^2 = 2\sigma^2`, so :math:`E\,s(\delta) = 2\sigma^2\sum_i\cos(\delta\theta_i)`:
      for :math:`\sigma = 1` the same curve, exactly. One draw scatters around it with variance
      :math:`\mathrm{Var}\,s(\delta) = 2(\mu_4 - \sigma^4)\sum_i\cos^2(\delta\theta_i)`
      (:math:`\mu_4 = E\,x^4`; Gaussian entries: :math:`4\sigma^4\sum_i\cos^2(\delta\theta_i)`, a standard
      deviation of :math:`\sqrt{2d}` at :math:`\delta = 0` that tends to about :math:`\sqrt{d}` far away);
    - q and k independent, each of mean 0: :math:`E\,s(\delta) = 0` at every offset.

    The layout (``"half"`` or ``"interleaved"``) does not matter here: every pair holds two equal
    coordinates either way. Like ``rotate``, this is the rotation alone: transformers also
    multiplies q and k by ``rope_attention_factor``, which multiplies the score by its square.
    Without scaling, :math:`\theta_i = b^{-2i/d}` equals the sinusoid's paper frequencies
    :math:`\omega_i`, so the score is exactly ``2 * dot_by_offset(delta, d, base)``.

    Args:
        delta: an offset (key position - query position) or a 1-D array of them, |delta| <= 1e12.
        d: even rotary dimension, 2 .. 16384.
        base: b (rope_theta), finite and > 1.
        scaling: a RopeScaling, or None for plain RoPE (``rope_frequencies``).
        length: the sequence length, for the methods that depend on it ("dynamic", "longrope").

    Returns:
        float64 array of delta's shape; the value at 0 is d.

    Example:
        >>> rope_dot_by_offset([0, 1], 2, 100.0).round(6)
        array([2.      , 1.080605])

    Reference: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    sections 3.2 and 3.4.3.
    """
    theta = rope_frequencies(d, base, scaling=scaling, length=length)
    return 2.0 * cos_sum_by_offset(delta, theta)


def _check_query(query: object, count: int) -> int:
    return check_int("query (the query's position)", query, low=0, high=count - 1)


def _check_causal(causal: object) -> bool:
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}.")
    return bool(causal)


def attention_weights(scores: object, query: int, *, causal: bool = False) -> np.ndarray:
    r"""Softmax weights of one query at position m over the keys n = 0 .. L-1.

    .. math::

        a_n = \frac{e^{s_n}}{\sum_{n' \in K} e^{s_{n'}}}\ \text{ for } n \in K,\qquad a_n = 0 \text{ otherwise},

    with K every key, or with ``causal`` the keys n <= m (a decoder's mask: the keys after the
    query get :math:`-\infty`). Computed as :math:`e^{s_n - \max_K s}` so that no score overflows;
    a weight below about 1e-308 of the largest is 0.

    Args:
        scores: 1-D finite scores :math:`s_n` of the query against each key (already scaled, with
            any bias added), at most 2**25 of them.
        query: m, 0 .. L-1.
        causal: True to mask the keys after the query.

    Returns:
        float64 array (L,), each in [0, 1], summing to 1 (to rounding).

    Example:
        >>> attention_weights([0.0, 0.0, 0.0], 1, causal=True)
        array([0.5, 0.5, 0. ])

    Reference: Vaswani et al. 2017, equation (1), and section 3.2.3 (the decoder's mask).
    """
    s = check_matrix("scores", scores, ndim=(1,))
    query = _check_query(query, s.size)
    causal = _check_causal(causal)
    visible = slice(0, query + 1) if causal else slice(0, s.size)
    weights = np.zeros(s.size)
    shown = np.exp(s[visible] - s[visible].max())
    weights[visible] = shown / shown.sum()
    return weights


def _check_weights(weights: object) -> np.ndarray:
    w = check_matrix("weights", weights, ndim=(1,))
    if np.any(w < 0):
        raise ValueError(f"weights must be 0 or more, got {float(w.min())!r}.")
    if not w.sum() > 0:
        raise ValueError("weights are all 0: there is no mass to locate.")
    return w


def half_mass_radius(weights: object, query: int) -> int:
    r"""Where attention puts half its mass: the smallest r with
    :math:`\sum_{|n - m| \le r} a_n \ge \tfrac12 \sum_n a_n`.

    The keys within r positions of the query hold at least half of the weight; r = 0 when the
    query's own key holds half of it. Sums are compared with a relative slack of 1e-12, so that
    two keys of exactly 1/2 each count as half.

    Args:
        weights: 1-D finite weights :math:`a_n \ge 0` over keys n = 0 .. L-1, not all 0.
        query: m, 0 .. L-1.

    Returns:
        r, 0 .. L-1.

    Example:
        >>> half_mass_radius([0.25, 0.25, 0.25, 0.25], 0)
        1
    """
    w = _check_weights(weights)
    query = _check_query(query, w.size)
    distance = np.abs(np.arange(w.size) - query)
    mass_by_distance = np.bincount(distance, weights=w)
    reached = np.cumsum(mass_by_distance) >= 0.5 * w.sum() * (1.0 - 1e-12)
    return int(np.argmax(reached))


def effective_keys(weights: object) -> float:
    r"""The number of keys the weights are spread over, :math:`e^{H}` with
    :math:`H = -\sum_n p_n \ln p_n`, :math:`p = a / \sum a` (the perplexity of the weights).

    1 when one key holds every weight; k when k keys share it equally.

    Args:
        weights: 1-D finite weights :math:`a_n \ge 0`, not all 0.

    Returns:
        float in [1, number of keys].

    Example:
        >>> effective_keys([0.5, 0.5, 0.0])
        2.0
    """
    w = _check_weights(weights)
    p = w / w.sum()
    held = p[p > 0]
    return float(np.exp(-np.sum(held * np.log(held))))
