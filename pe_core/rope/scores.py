r"""Attention scores of rotated queries and keys, as functions of the two positions.

RoPE turns a query q at position m and a key k at position n (``pe_core.rope.rotation.rotate``); the
score :math:`\mathrm{rotate}(q, m)\cdot\mathrm{rotate}(k, n)` is then a function of m - n
alone, a sum of one cosine and one sine per pair (``rope_score_by_offset``), so a whole
L x L score matrix is known from its 2L - 1 offsets. When a model's cos/sin cache of one
layout meets the rotate function of the other (the bug of transformers #40462 and
rasbt/LLMs-from-scratch PR #802), the score is no longer relative: it is a function of
m - n plus one of m + n (``rope_mixed_scores``). RoFormer's section 3.4.3 bounds the score by
a quantity that decays with the distance (``rope_decay_bound``).

Sums over many offsets use whole-number offsets t = qB + j (B = 64): the sines and cosines of
the distinct qB and of j = 0..B-1 are combined by the angle-addition formulas (two matrix
products), with every angle kept exact as in ``pe_core.encoding.sin_cos_outer``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from pe_core._validate import (
    MAX_CELLS,
    MAX_LENGTH,
    MAX_POSITION,
    check_choice,
    check_edges,
    check_int,
    check_matrix,
)
from pe_core.display import _block_means
from pe_core.encoding import sin_cos_outer
from pe_core.rope.rotation import ROPE_LAYOUTS
from pe_core.rope.scaling import RopeScaling, check_rope_d, rope_frequencies

#: The step B of the split t = qB + j.
_STEP = 64
#: Terms (offsets x pairs) handled at once (keeps the temporaries near 16 MB).
_BLOCK_TERMS = 1 << 18


def _whole_numbers(name: str, values: object) -> np.ndarray:
    """A 1-D float64 array of whole numbers within +-MAX_POSITION (at most 2 * MAX_LENGTH of them)."""
    array = check_matrix(name, values, ndim=(np.ndim(values),)).reshape(-1)
    if array.size > 2 * MAX_LENGTH:
        raise ValueError(f"{name}: {array.size:,} values is more than the limit of {2 * MAX_LENGTH:,}; ask for fewer.")
    if np.any(array != np.round(array)):
        raise ValueError(f"{name} must be whole numbers (positions and their differences), "
                         f"got {array[array != np.round(array)][0]!r}.")
    if np.max(np.abs(array)) > MAX_POSITION:
        raise ValueError(f"{name} must lie within +-{MAX_POSITION:,}, got {np.max(np.abs(array)):,.0f}.")
    return array


def _query_key(q: object, k: object) -> tuple[np.ndarray, np.ndarray, int]:
    """q and k as float64 vectors of one even length d."""
    q = check_matrix("q (the query)", q, ndim=(1,))
    k = check_matrix("k (the key)", k, ndim=(1,))
    if q.size != k.size:
        raise ValueError(f"q and k must have the same length d, got {q.size} and {k.size}.")
    return q, k, check_rope_d(q.size)


def rope_pair_columns(d: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The two columns of each pair i: (i, i + d/2) in ``"half"``, (2i, 2i + 1) in ``"interleaved"``.

    Example:
        >>> rope_pair_columns(4, "half")
        (array([0, 1]), array([2, 3]))
    """
    d = check_rope_d(d)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
    if layout == "half":
        return np.arange(d // 2), np.arange(d // 2, d)
    return np.arange(0, d, 2), np.arange(1, d, 2)


def _q_blocks(t: np.ndarray, per_block: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The whole numbers t split as t = qB + j, by blocks of at most ``per_block`` distinct q: for each
    block its q (ascending), and the indices of the t whose q is in it, with their q's index in the
    block and their j."""
    q, j = np.divmod(t, _STEP)
    distinct_q, which_q = np.unique(q, return_inverse=True)
    order = np.argsort(which_q, kind="stable")
    sorted_q = which_q[order]
    for first in range(0, distinct_q.size, per_block):
        run = order[np.searchsorted(sorted_q, first) : np.searchsorted(sorted_q, first + per_block)]
        yield distinct_q[first : first + per_block], run, which_q[run] - first, j[run].astype(np.int64)


def _turns_of_steps(q: np.ndarray, rates: np.ndarray) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A function giving sin and cos of (qB) r for whole numbers q of the array ``q`` (any of them).

    For a range of q (the pages' case): through q = q0 + aC + b, C about the square root of the
    range, exact tables (``sin_cos_outer``) of (q0 + aC)B r and of bB r combined by the
    angle-addition formulas, a few ulp, for about 2 sqrt(range) rows of sines and cosines instead
    of one row per q. For scattered q (fewer than those rows), ``sin_cos_outer`` of each.
    """
    if q.size == 0:
        return lambda values: sin_cos_outer(values * _STEP, rates)
    low = float(q.min())
    span = int(q.max() - low) + 1
    step = math.isqrt(span - 1) + 1
    if -(-span // step) + step > np.unique(q).size:
        return lambda values: sin_cos_outer(values * _STEP, rates)
    sin_a, cos_a = sin_cos_outer((low + np.arange(-(-span // step)) * step) * _STEP, rates)
    sin_b, cos_b = sin_cos_outer(np.arange(step, dtype=np.float64) * _STEP, rates)

    def turns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if values.size > 1 and np.all(np.diff(values) == 1):
            # Consecutive q (a range of offsets, the pages' case): whole rows a of the tables times every b,
            # by broadcasting: the same products and sums, without gathering four copies (half the time).
            first = int(values[0] - low)
            a0, b0 = divmod(first, step)
            a1 = (first + values.size - 1) // step + 1
            sa, ca = sin_a[a0:a1, None, :], cos_a[a0:a1, None, :]
            rows = slice(b0, b0 + values.size)
            return ((sa * cos_b + ca * sin_b).reshape(-1, rates.size)[rows],
                    (ca * cos_b - sa * sin_b).reshape(-1, rates.size)[rows])
        a, b = np.divmod((values - low).astype(np.int64), step)
        sa, ca, sb, cb = sin_a[a], cos_a[a], sin_b[b], cos_b[b]
        return sa * cb + ca * sb, ca * cb - sa * sb

    return turns


def _trig_sums(t: np.ndarray, rates: np.ndarray, cos_coef: np.ndarray, sin_coef: np.ndarray) -> np.ndarray:
    r""":math:`\sum_p c_p\cos(t r_p) + s_p\sin(t r_p)` for whole-number t, through t = qB + j.

    With :math:`C_q = \cos(qBr)`, :math:`S_q = \sin(qBr)` and the same of j:
    :math:`\sum_p C_q(c\,C_j + s\,S_j) + S_q(s\,C_j - c\,S_j)`, two matrix products per block of q.
    """
    if t.size < _STEP:  # fewer offsets than the table of j would hold: directly
        sin, cos = sin_cos_outer(t, rates)
        return cos @ cos_coef + sin @ sin_coef
    out = np.empty(t.shape)
    sin_j, cos_j = sin_cos_outer(np.arange(_STEP, dtype=np.float64), rates)
    with_cos = (cos_coef * cos_j + sin_coef * sin_j).T  # (pairs, B)
    with_sin = (sin_coef * cos_j - cos_coef * sin_j).T
    turns = _turns_of_steps(np.floor_divide(t, _STEP), rates)
    # Rows of q per block: their sines and cosines (rows x pairs) and their table (rows x B) both bounded.
    for q, run, row, j in _q_blocks(t, max(1, _BLOCK_TERMS // max(rates.size, _STEP))):
        sin_q, cos_q = turns(q)
        table = cos_q @ with_cos + sin_q @ with_sin  # table[q, j] = the sum at t = qB + j
        out[run] = table[row, j]
    return out


def _rotation_partners(d: int, rotation_layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Column c's partner and sign in a rotate function: rotate_half / rotate_every_two give (-x_v, x_u)."""
    first, second = rope_pair_columns(d, rotation_layout)
    partner = np.empty(d, dtype=np.int64)
    sign = np.empty(d)
    partner[first], partner[second] = second, first
    sign[first], sign[second] = -1.0, 1.0
    return partner, sign


def _cache_pairs(d: int, cache_layout: str) -> np.ndarray:
    """The pair whose angle a cache of ``cache_layout`` puts in each column."""
    first, second = rope_pair_columns(d, cache_layout)
    pair = np.empty(d, dtype=np.int64)
    pair[first] = pair[second] = np.arange(d // 2)
    return pair


def _score_coefficients(
    q: np.ndarray, k: np.ndarray, cache_layout: str, rotation_layout: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pair p of the cache layout: the coefficients of cos and sin of (m - n)θ'_p and of (m + n)θ'_p."""
    d = q.size
    partner, sign = _rotation_partners(d, rotation_layout)
    pair = _cache_pairs(d, cache_layout)
    a, f = q * k, q[partner] * k[partner]
    b, e = sign * q * k[partner], sign * q[partner] * k
    pairs = d // 2

    def per_pair(values: np.ndarray) -> np.ndarray:
        # Columns of one pair summed in column order: in a matched layout the m + n terms are x and -x, exactly 0.
        total = np.zeros(pairs)
        np.add.at(total, pair, values)
        return 0.5 * total

    return per_pair(a + f), per_pair(e - b), per_pair(a - f), per_pair(b + e)


def rope_score_by_offset(
    offsets: object,
    q: object,
    k: object,
    base: float = 10000.0,
    *,
    layout: str = "half",
    scaling: RopeScaling | None = None,
    length: int | None = None,
) -> np.ndarray:
    r"""The score :math:`g(t)` of a rotated query and key t = m - n positions apart.

    For pair i with coordinates :math:`(q_u, q_v)` and :math:`(k_u, k_v)` (columns i and
    i + d/2 in ``"half"``, 2i and 2i + 1 in ``"interleaved"``), :math:`z_q = q_u + i q_v`,
    :math:`z_k = k_u + i k_v` and :math:`h_i = z_q \bar z_k`:

    .. math::

        \mathrm{rotate}(q, m)\cdot\mathrm{rotate}(k, n)
          = \sum_i \mathrm{Re}\big(h_i\, e^{i(m-n)\theta'_i}\big)
          = \sum_i (q_u k_u + q_v k_v)\cos(t\theta'_i) + (q_u k_v - q_v k_u)\sin(t\theta'_i)
          = g(m - n)

    (RoFormer eq. 16: :math:`R_m^\top R_n = R_{n-m}`). For all-ones q and k,
    :math:`g(t) = \sum_i 2\cos(t\theta'_i)`. The rotation alone: a model's cos and sin tables
    also carry ``rope_attention_factor`` a, which multiplies every score by :math:`a^2`.

    Args:
        offsets: whole numbers t = m - n, |t| <= 10**12, at most 2,097,152 of them.
        q, k: the query and the key, real vectors of one even length d.
        base: b (rope_theta).
        layout: the layout of q and k (which columns pair up).
        scaling: a RopeScaling, or None.
        length: the sequence length, for "dynamic" and "longrope" (``rope_frequencies``).

    Returns:
        float64 array of the offsets' shape.

    Example:
        >>> rope_score_by_offset([0, 1], np.ones(2), np.ones(2)).round(4)  # 2 cos(t)
        array([2.    , 1.0806])

    Reference: Su et al. 2021, "RoFormer", section 3.2-3.4.
    """
    shape = np.shape(offsets)
    t = _whole_numbers("offsets", offsets)
    q, k, d = _query_key(q, k)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
    theta = rope_frequencies(d, base, scaling=scaling, length=length)
    cos_coef, sin_coef, _, _ = _score_coefficients(q, k, layout, layout)
    return _trig_sums(t, theta, cos_coef, sin_coef).reshape(shape)


def rope_mixed_scores(
    offsets: object,
    sums: object,
    q: object,
    k: object,
    base: float = 10000.0,
    *,
    cache_layout: str = "half",
    rotation_layout: str = "interleaved",
    scaling: RopeScaling | None = None,
    length: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Scores when a cos/sin cache of one layout is applied with the rotate function of another:
    :math:`S[m, n] = U(m - n) + V(m + n)`.

    The cache gives column c the angle rate :math:`\varphi_c = \theta'_{p(c)}`, p(c) its pair in
    ``cache_layout`` (``cat(freqs, freqs)`` for ``"half"``, ``repeat_interleave`` for
    ``"interleaved"``); the rotate function of ``rotation_layout`` (``rotate_half``, or GPT-J's
    ``rotate_every_two``) pairs c with :math:`\pi(c)` and sign :math:`s_c` (-1 for the pair's
    first column, +1 for its second):
    :math:`x'_c(m) = x_c\cos(m\varphi_c) + s_c x_{\pi(c)}\sin(m\varphi_c)`. With
    :math:`a = q_c k_c`, :math:`b = s_c q_c k_{\pi(c)}`, :math:`e = s_c q_{\pi(c)} k_c`,
    :math:`f = q_{\pi(c)} k_{\pi(c)}`, products of cosines and sines give

    .. math::

        U(t) = \tfrac12\sum_c (a + f)\cos(t\varphi_c) + (e - b)\sin(t\varphi_c), \qquad
        V(u) = \tfrac12\sum_c (a - f)\cos(u\varphi_c) + (b + e)\sin(u\varphi_c).

    When the two layouts agree, the two columns of a pair share :math:`\varphi` and their V
    terms cancel: V = 0 exactly and U is ``rope_score_by_offset``. When they differ, a pair of
    the rotation mixes two of the cache's angles: the map is no longer a rotation, norms are not
    kept, and V(m + n) makes the score depend on where the two tokens are, not only on m - n.
    Scores are of the rotation alone, as ``rope_score_by_offset``'s.

    Args:
        offsets: whole numbers t = m - n at which U is wanted.
        sums: whole numbers u = m + n at which V is wanted.
        q, k: the query and the key, in ``cache_layout``'s column order, of one even length d.
        base, scaling, length: as ``rope_frequencies``.
        cache_layout, rotation_layout: each ``"half"`` or ``"interleaved"``.

    Returns:
        (U at the offsets, V at the sums), float64 arrays of their shapes.

    Example:
        >>> U, V = rope_mixed_scores([0], [2], np.ones(4), np.ones(4))
        >>> float(U[0]), round(float(V[0]), 6)
        (4.0, -1.778598)

    Reference: transformers issue #40462; rasbt/LLMs-from-scratch PR #802.
    """
    shape_u, shape_v = np.shape(offsets), np.shape(sums)
    t = _whole_numbers("offsets", offsets)
    u = _whole_numbers("sums", sums)
    q, k, d = _query_key(q, k)
    cache_layout = check_choice("cache_layout", cache_layout, ROPE_LAYOUTS)
    rotation_layout = check_choice("rotation_layout", rotation_layout, ROPE_LAYOUTS)
    theta = rope_frequencies(d, base, scaling=scaling, length=length)
    u_cos, u_sin, v_cos, v_sin = _score_coefficients(q, k, cache_layout, rotation_layout)
    U = _trig_sums(t, theta, u_cos, u_sin).reshape(shape_u)
    if not (np.any(v_cos) or np.any(v_sin)):
        return U, np.zeros(shape_v)
    return U, _trig_sums(u, theta, v_cos, v_sin).reshape(shape_v)


def rope_apply_cache(
    x: object,
    positions: object,
    base: float = 10000.0,
    *,
    cache_layout: str = "half",
    rotation_layout: str = "half",
    scaling: RopeScaling | None = None,
    length: int | None = None,
) -> np.ndarray:
    r"""``x * cos + rot(x) * sin`` with the cos/sin cache of one layout and the rotate function of another.

    .. math:: x'_c(m) = x_c\cos(m\varphi_c) + s_c\,x_{\pi(c)}\sin(m\varphi_c)

    with :math:`\varphi_c`, :math:`\pi(c)` and :math:`s_c` as in ``rope_mixed_scores``. With
    equal layouts this is ``rotate`` (each pair turned by :math:`m\theta'_i`); with different
    ones it is what a model computes when its cache was built for the other layout (transformers'
    ``cat(freqs, freqs)`` fed to GPT-J's ``rotate_every_two``, or ``repeat_interleave`` fed to
    ``rotate_half``): a pair of the rotation gets two different angles, so this is no rotation
    and norms change. The rotation alone, without the attention factor.

    Args:
        x: real array (..., L, d), d even, finite.
        positions: (L,) whole numbers, the position of each row.
        base, scaling: as ``rope_frequencies``.
        cache_layout, rotation_layout: each ``"half"`` or ``"interleaved"``.
        length: the sequence length for "dynamic" and "longrope" (None: max(positions) + 1, as
            ``rotate`` reads it).

    Returns:
        float64 array of x's shape.

    Example:
        >>> rope_apply_cache(np.ones((1, 4)), [1], 100.0, rotation_layout="interleaved").round(4)
        array([[-0.3012,  1.0948, -0.3012,  1.0948]])
    """
    dimensions = np.ndim(x)
    if dimensions < 2:
        raise ValueError(f"x must be (..., L, d): rows of d coordinates, got shape {np.shape(x)}.")
    array = check_matrix("x", x, ndim=(dimensions,))
    d = check_rope_d(array.shape[-1])
    p = _whole_numbers("positions", positions)
    if p.size != array.shape[-2]:
        raise ValueError(f"positions has {p.size:,} values but x has {array.shape[-2]:,} rows (its second-last axis).")
    cache_layout = check_choice("cache_layout", cache_layout, ROPE_LAYOUTS)
    rotation_layout = check_choice("rotation_layout", rotation_layout, ROPE_LAYOUTS)
    if length is None and p.size and p.max() >= 0:
        length = int(p.max()) + 1
    theta = rope_frequencies(d, base, scaling=scaling, length=length)
    sin, cos = sin_cos_outer(p, theta)
    pair = _cache_pairs(d, cache_layout)
    partner, sign = _rotation_partners(d, rotation_layout)
    return array * cos[:, pair] + sign * array[..., partner] * sin[:, pair]


def rope_rotated_block_average(
    x: object,
    length: int,
    edges: object,
    base: float = 10000.0,
    *,
    cache_layout: str = "half",
    rotation_layout: str | None = None,
    scaling: RopeScaling | None = None,
) -> np.ndarray:
    r"""The mean of x turned at each position of a block: row r is the mean over
    :math:`e_r \le m < e_{r+1}` of ``rope_apply_cache(x, m)`` (``rotate`` when the layouts agree).

    Column c of x at position m is :math:`x_c\cos(m\varphi_c) + s_c x_{\pi(c)}\sin(m\varphi_c)`
    (``rope_mixed_scores``), linear in :math:`\cos` and :math:`\sin`, so its mean over a block is
    the same with the block means of :math:`\cos(m\varphi)` and :math:`\sin(m\varphi)`, in closed
    form (``pe_core.display``'s Dirichlet factor). A score is a product of a turned query and a
    turned key, each a function of its own position, so the mean of the scores over a block of
    queries and a block of keys is the product of their means:

    .. math:: \operatorname{mean}_{m \in A,\, n \in B}\, q'_m\cdot k'_n = \bar q'_A\cdot \bar k'_B,

    which draws an L x L score matrix as exact block means from two (blocks, d) arrays. The
    rotation alone (no attention factor); frequencies at the sequence length ``length``.

    Args:
        x: a real vector of even length d (a query or a key, in ``cache_layout``'s order), or
            several, (..., d): the closed form's sines and cosines are computed once for all.
        length: the positions 0 .. length-1, 1 .. 1,048,576.
        edges: block edges rising from 0 to ``length`` (``block_edges``).
        base, scaling: as ``rope_frequencies``.
        cache_layout: the layout of the cos/sin cache (and of x).
        rotation_layout: the rotate function's layout (None: the cache's, the right one).

    Returns:
        float64 array (..., blocks, d).

    Example:
        >>> rope_rotated_block_average([1.0, 0.0], 2, [0, 2], 100.0).round(4)  # (1 + cos 1, 0 + sin 1) / 2
        array([[0.7702, 0.4207]])
    """
    x = check_matrix("x", x, ndim=(max(1, np.ndim(x)),))
    d = check_rope_d(x.shape[-1])
    length = check_int("length (the number of positions)", length, low=1, high=MAX_LENGTH)
    edges = check_edges("edges", edges, length, "length=")
    cache_layout = check_choice("cache_layout", cache_layout, ROPE_LAYOUTS)
    rotation_layout = check_choice("rotation_layout", rotation_layout or cache_layout, ROPE_LAYOUTS)
    theta = rope_frequencies(d, base, scaling=scaling, length=length)
    mean_sin, mean_cos = _block_means(np.arange(length, dtype=np.float64), edges, theta)
    pair = _cache_pairs(d, cache_layout)
    partner, sign = _rotation_partners(d, rotation_layout)
    x = x[..., None, :]  # a row of blocks for each vector
    return x * mean_cos[:, pair] + sign * x[..., partner] * mean_sin[:, pair]


def _decay_of_ranges(
    t: np.ndarray, turns: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], turn_j: np.ndarray, out: np.ndarray
) -> None:
    r"""``rope_decay_bound`` of whole blocks of distances t = qB + j, into ``out``: pair after pair, the
    partial sums of every distance at once, :math:`S_{k+1} = S_k + e^{iqB\theta_k}e^{ij\theta_k}`, and
    their running sum of magnitudes.

    By pairs, not by distances: a cumulative sum along the pairs (``np.cumsum`` of each distance's
    row) is one long chain of dependent additions, where each step here adds two whole vectors
    (the decay at L=16384, d=2048: 155 -> 100 ms on the benchmarks' machine). The partial sums are
    the same additions in the same order; only the mean over the pairs is summed in another order.
    """
    pairs = turn_j.shape[1]
    turn_j = np.ascontiguousarray(turn_j.T)  # row k: e^{i j θ_k}, j = 0..B-1
    # At most 2^16 distances and 4 MB of the q's turns at a time.
    per_block = max(1, min(_BLOCK_TERMS // (4 * _STEP), _BLOCK_TERMS // pairs))
    for q, run, row, j in _q_blocks(t, per_block):
        sin_q, cos_q = turns(q)
        turn_q = np.ascontiguousarray((cos_q + 1j * sin_q).T)  # row k: e^{i qB θ_k} of the block's q
        partial, term = np.zeros((2, q.size, _STEP), dtype=np.complex128)
        magnitude, total = np.empty((q.size, _STEP)), np.zeros((q.size, _STEP))
        for k in range(pairs):
            np.multiply.outer(turn_q[k], turn_j[k], out=term)  # e^{i (qB + j) θ_k}
            np.add(partial, term, out=partial)  # S_{k+1}
            np.add(total, np.abs(partial, out=magnitude), out=total)
        out[run] = total.reshape(-1)[row * _STEP + j] / pairs


def rope_decay_bound(
    distances: object,
    d: int,
    base: float = 10000.0,
    *,
    scaling: RopeScaling | None = None,
    length: int | None = None,
) -> np.ndarray:
    r"""RoFormer's long-term decay: :math:`\frac{1}{d/2}\sum_{j=1}^{d/2}\lvert S_j\rvert` at each distance m - n.

    With :math:`h_i = z_q \bar z_k` the pairs' products (``rope_score_by_offset``),
    :math:`h_{d/2} = 0` and

    .. math:: S_j = \sum_{k=0}^{j-1} e^{i(m-n)\theta'_k}, \qquad S_0 = 0,

    Abel summation gives
    :math:`\sum_i h_i e^{i(m-n)\theta'_i} = -\sum_{i=0}^{d/2-1} S_{i+1}(h_{i+1} - h_i)`, so

    .. math::

        \big|\mathrm{rotate}(q, m)\cdot\mathrm{rotate}(k, n)\big|
          \le \max_i\,\lvert h_{i+1} - h_i\rvert\; \sum_{j=1}^{d/2}\lvert S_j\rvert
          = \max_i\,\lvert h_{i+1} - h_i\rvert\;\frac d2\;\mathrm{bound}(m - n)

    (RoFormer eq. 37). This function returns the "relative upper bound" of RoFormer's
    Figure 2, the mean of the :math:`\lvert S_j\rvert`: d/2 + 1 over 2 at distance 0, and
    falling with the distance for :math:`\theta_i = b^{-2i/d}` (the paper's b = 10000). It depends
    on the frequencies alone, not on q and k; it is even in the distance.

    Args:
        distances: whole numbers m - n, |m - n| <= 10**12, at most 2**25 / (d/2) of them.
        d: even rotary dimension.
        base: b (rope_theta).
        scaling: a RopeScaling (it changes the frequencies), or None.
        length: the sequence length, for "dynamic" and "longrope".

    Returns:
        float64 array of the distances' shape.

    Example:
        >>> rope_decay_bound([0, 1], 4, 100.0).round(4)   # (|1| + |1 + 1|) / 2 at 0
        array([1.5   , 1.4004])

    Reference: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    section 3.4.3 and Figure 2.
    """
    shape = np.shape(distances)
    t = _whole_numbers("distances", distances)
    d = check_rope_d(d)
    pairs = d // 2
    if t.size * pairs > MAX_CELLS:
        raise ValueError(
            f"{t.size:,} distances x {pairs:,} pairs = {t.size * pairs:,} partial sums is more than the limit of "
            f"{MAX_CELLS:,}; ask for fewer distances."
        )
    theta = rope_frequencies(d, base, scaling=scaling, length=length)
    sin_j, cos_j = sin_cos_outer(np.arange(_STEP, dtype=np.float64), theta)
    turn_j = cos_j + 1j * sin_j  # e^{i j θ}, j = 0..B-1
    turns = _turns_of_steps(np.floor_divide(t, _STEP), theta)
    out = np.empty(t.size)
    # A range of distances (the pages' case): whole blocks of B distances t = qB + j, nothing computed
    # twice. Scattered distances: a block of them at a time.
    if np.unique(t // _STEP).size * _STEP <= 2 * t.size:
        _decay_of_ranges(t, turns, turn_j, out)
        return out.reshape(shape)
    per_block = max(1, _BLOCK_TERMS // pairs)
    # Buffers written in place block after block: a new 4 MB array per block costs its page faults.
    rows = min(t.size, per_block)
    terms, magnitudes = np.empty((rows, pairs), dtype=np.complex128), np.empty((rows, pairs))
    for first in range(0, t.size, per_block):
        q, j = np.divmod(t[first : first + per_block], _STEP)
        sin_q, cos_q = turns(q)
        block = terms[: q.size]
        np.multiply(cos_q + 1j * sin_q, turn_j[j.astype(np.int64)], out=block)
        np.cumsum(block, axis=1, out=block)  # S_1 .. S_{d/2}
        size = magnitudes[: q.size]
        np.abs(block, out=size)
        out[first : first + q.size] = size.mean(axis=1)
    return out.reshape(shape)
