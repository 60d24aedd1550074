r"""Position as a bias added to attention scores: ALiBi's linear penalty and T5's bucketed offsets.

Neither scheme touches the queries and keys: the score of a query at position i for a key at
position j gets a term that depends only on the offset :math:`\delta = j - i` (key minus
query, T5's ``memory_position - context_position``):

- ALiBi (Press et al. 2022, "Train Short, Test Long: Attention with Linear Biases Enables
  Input Length Extrapolation"): :math:`-m_h |\delta|`, a fixed slope :math:`m_h` per head;
- T5 (Raffel et al. 2020, section 2.1): a learned scalar per head and per *bucket* of
  :math:`\delta`; ``t5_relative_bucket`` is the bucket, which is what fixes the shape.
"""

from __future__ import annotations

import math

import numpy as np

from pe_core._validate import MAX_CELLS, MAX_POSITION, check_finite_values, check_int

#: Largest number of heads alibi_slopes and alibi_bias accept.
MAX_HEADS = 4096
#: Largest num_buckets t5_relative_bucket accepts (T5 uses 32).
MAX_BUCKETS = 1024


def alibi_slopes(heads: int) -> np.ndarray:
    r"""ALiBi's slope :math:`m_h` of each head, h = 1 .. H.

    For H a power of two, the geometric sequence :math:`m_h = 2^{-8h/H}` (starting at and with
    ratio :math:`2^{-8/H}`: 1/2, 1/4, ..., 1/256 for H = 8). Otherwise, as the authors' code
    (``get_slopes`` in ofirpress/attention_with_linear_biases) does: the slopes of the largest
    power of two :math:`P < H`, then every other slope of the sequence for 2P (its 1st, 3rd,
    ...) until there are H.

    Args:
        heads: H, 1 .. 4096.

    Returns:
        float64 array (H,), each in (0, 1).

    Example:
        >>> alibi_slopes(4)
        array([0.25      , 0.0625    , 0.015625  , 0.00390625])
        >>> alibi_slopes(3)
        array([0.0625    , 0.00390625, 0.25      ])

    Reference: Press et al. 2022, section 3; the repository's ``get_slopes``.
    """
    heads = check_int("heads (the number of attention heads)", heads, low=1, high=MAX_HEADS)
    power = 1 << (heads.bit_length() - 1)  # the largest power of two <= heads

    def geometric(count: int) -> np.ndarray:
        return 2.0 ** (-8.0 * np.arange(1, count + 1, dtype=np.float64) / count)

    if power == heads:
        return geometric(heads)
    return np.concatenate([geometric(power), geometric(2 * power)[0::2][: heads - power]])


def _check_offsets(offsets: object) -> np.ndarray:
    """Whole-number offsets within +-MAX_POSITION as int64, any shape, at most MAX_CELLS of them."""
    array = np.asarray(offsets)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"offsets must be whole numbers (key position - query position), got {array.dtype} values.")
    if array.size > MAX_CELLS:
        raise ValueError(f"offsets has {array.size:,} values, more than the limit of {MAX_CELLS:,}.")
    if array.dtype.kind == "f":
        check_finite_values("offsets", array)
        fractional = array != np.round(array)
        if np.any(fractional):
            raise ValueError(f"offsets must be whole numbers, got {array[fractional].flat[0]!r}.")
    if array.size and np.max(np.abs(array.astype(np.float64))) > MAX_POSITION:
        raise ValueError(f"offsets must lie within +-{MAX_POSITION:,}.")
    return array.astype(np.int64)


def alibi_bias(offsets: object, heads: int) -> np.ndarray:
    r"""ALiBi's bias :math:`-m_h|\delta|` of each head for each offset :math:`\delta` = key - query.

    Args:
        offsets: 1-D whole numbers (key position - query position).
        heads: H, 1 .. 4096; the slopes are ``alibi_slopes(H)``.

    Returns:
        float64 array (H, len(offsets)). A causal model only ever sees :math:`\delta \le 0`;
        the bidirectional form of the paper's section 3 is the same symmetric penalty.

    Example:
        >>> alibi_bias([-2, 0, 1], 2)
        array([[-0.125     ,  0.        , -0.0625    ],
               [-0.0078125 ,  0.        , -0.00390625]])

    Reference: Press et al. 2022, section 3, figure 3.
    """
    delta = _check_offsets(offsets)
    if delta.ndim != 1:
        raise ValueError(f"offsets must be 1-D, got shape {delta.shape}.")
    slopes = alibi_slopes(heads)
    if slopes.size * delta.size > MAX_CELLS:
        raise ValueError(
            f"heads x offsets = {slopes.size:,} x {delta.size:,} is more than the limit of {MAX_CELLS:,} values."
        )
    # 0 - (...) keeps the bias at offset 0 a plain 0 rather than -0.
    return 0.0 - np.multiply.outer(slopes, np.abs(delta).astype(np.float64))


def _largest_buckets(magnitude: np.ndarray, max_exact: int, max_distance: int, buckets: int) -> np.ndarray:
    r"""floor((buckets - max_exact) ln(a / max_exact) / ln(max_distance / max_exact)) for a >= max_exact, exactly.

    T5 computes this in float32, where a value that is exactly an integer (a/max_exact a power
    of max_distance/max_exact with a whole exponent) can round to either side. Here the floor
    is taken in float64 and every value within 1e-6 of an integer k is settled exactly, with
    integers: k is reached when :math:`a^{n} \, e^{k} \ge D^{k}\, e^{n}` (e = max_exact,
    D = max_distance, n = buckets - max_exact).
    """
    span = buckets - max_exact
    value = span * np.log(magnitude / max_exact) / math.log(max_distance / max_exact)
    steps = np.floor(value).astype(np.int64)
    nearest = np.round(value)
    close = np.abs(value - nearest) < 1e-6
    for a in np.unique(magnitude[close]):
        k = int(np.round(span * math.log(a / max_exact) / math.log(max_distance / max_exact)))
        reached = int(a) ** span * max_exact**k >= max_distance**k * max_exact**span
        steps[close & (magnitude == a)] = k if reached else k - 1
    return steps


def t5_relative_bucket(
    offsets: object, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    r"""T5's relative-position bucket of each offset :math:`\delta` = key - query.

    As T5's ``_relative_position_bucket`` (Mesh TensorFlow; transformers' ``T5Attention``):

    - bidirectional: keys after the query (:math:`\delta > 0`) get the upper half of the
      buckets (n = num_buckets / 2 each side), and :math:`a = |\delta|`; causal
      (``bidirectional=False``): n = num_buckets and :math:`a = \max(-\delta, 0)`, so every
      key after the query falls in bucket 0 with the query itself;
    - then the first e = n/2 buckets hold a = 0 .. e-1 exactly, and larger a go to
      :math:`e + \lfloor (n - e)\ln(a/e)/\ln(D/e)\rfloor`, capped at n - 1 (D = max_distance:
      every a >= D shares the last bucket).

    T5 takes the logarithm in float32; this takes it exactly (see ``_largest_buckets``). The
    two agree for T5's (32, 128) at every offset, in both directions. Compared with
    transformers' T5 over every even num_buckets 4 .. 128 and max_distance 2 .. 299 (and 500
    .. 4096), both directions, offsets within +-3000, float32 puts one offset magnitude in a
    neighbouring bucket in 14 of the 35,075 settings: where the exact value is a whole
    number (num_buckets=34, max_distance=27, |offset| 18: exactly 6 steps, bucket 14; T5
    gives 13) or within 2e-6 of one (92, 164, |offset| 107: 17.9999982 steps, bucket 40; T5
    gives 41).

    Args:
        offsets: whole numbers, any shape (key position - query position).
        bidirectional: True for T5's encoder, False for its decoder's causal self-attention.
        num_buckets: even, at least 4 (bidirectional) or 2 (causal), at most 1024; T5 uses 32.
        max_distance: D, greater than the exact-bucket count e; T5 uses 128.

    Returns:
        int64 array of offsets' shape, values in [0, num_buckets).

    Example:
        >>> t5_relative_bucket([-200, -9, -1, 0, 1, 9, 200])
        array([15,  8,  1,  0, 17, 24, 31])
        >>> t5_relative_bucket([-200, -9, -1, 0, 1, 9, 200], bidirectional=False)
        array([31,  9,  1,  0,  0,  0,  0])

    Reference: Raffel et al. 2020, section 2.1; transformers ``T5Attention._relative_position_bucket``.
    """
    delta = _check_offsets(offsets)
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise ValueError(f"bidirectional must be True or False, got {bidirectional!r}.")
    smallest = 4 if bidirectional else 2
    num_buckets = check_int("num_buckets", num_buckets, low=smallest, high=MAX_BUCKETS)
    if num_buckets % 2:
        raise ValueError(
            f"num_buckets must be even, got {num_buckets}: half of each side's buckets are exact offsets. T5 uses 32."
        )
    per_side = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_side // 2
    max_distance = check_int("max_distance", max_distance, low=max_exact + 1, high=MAX_POSITION)
    flat = delta.reshape(-1)
    if bidirectional:
        base = np.where(flat > 0, per_side, 0)
        magnitude = np.abs(flat)
    else:
        base = np.zeros_like(flat)
        magnitude = np.maximum(-flat, 0)
    result = base + np.minimum(magnitude, max_exact)
    large = magnitude >= max_exact
    if np.any(large):
        steps = _largest_buckets(magnitude[large], max_exact, max_distance, per_side)
        result[large] = base[large] + np.minimum(max_exact + steps, per_side - 1)
    return result.astype(np.int64).reshape(delta.shape)
