r"""Rotary position embeddings (RoPE): the rotation and its cos/sin tables.

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

The frequencies, scaled or not, come from ``pe_core.rope.scaling``.
"""

from __future__ import annotations

import numpy as np

from pe_core._validate import (
    MAX_LENGTH,
    MAX_POSITION,
    check_cells,
    check_choice,
    check_int,
    check_matrix,
    check_whole_positions,
)
from pe_core.encoding import positions as position_range
from pe_core.encoding import sin_cos_outer
from pe_core.rope.scaling import RopeScaling, check_rope_d, rope_attention_factor, rope_frequencies

#: The column layouts of a rotary table.
ROPE_LAYOUTS = ("half", "interleaved")
#: Angles handled at once by rope_cache and rotate (keeps the temporaries to a few MB; as in
#: encoding.py, also faster than 2^18: rope_cache at L=2103, d=306 11.1 ms instead of 17.9).
_BLOCK_CELLS = 1 << 16


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
    return check_whole_positions("positions", array)


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
