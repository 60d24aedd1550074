r"""The sinusoidal positional encoding of "Attention Is All You Need" (section 3.5).

.. math::

    PE(k, 2i)   = \sin(k / n^{2i/d}) = \sin(k\,\omega_i)

    PE(k, 2i+1) = \cos(k / n^{2i/d}) = \cos(k\,\omega_i)

k is a position, d the embedding size, n the base (10000 in the paper) and
i = 0 .. ceil(d/2) - 1 the index of a sine/cosine pair, whose angular frequency is
:math:`\omega_i` rad/position and whose wavelength is :math:`2\pi/\omega_i` positions.

Two conventions for :math:`\omega_i` are in use, and two layouts of the columns:

- convention ``"paper"``: :math:`\omega_i = n^{-2i/d}`;
- convention ``"tensor2tensor"``: :math:`\omega_i = n^{-i/(m-1)}` with m = ceil(d/2)
  pairs (tensor2tensor's ``get_timing_signal_1d``, fairseq, the TensorFlow notebook of
  seed 001), so that the slowest pair has exactly :math:`\omega = 1/n`;
- layout ``"interleaved"``: columns sin w0, cos w0, sin w1, cos w1, ... (the paper);
- layout ``"concatenated"``: all sines, then all cosines (tensor2tensor, seed 001).

For odd d the interleaved layout follows the per-column formula (column d-1 is a sine
with no cosine partner) and the concatenated layout puts that extra sine at the end of
the first half.
"""

from __future__ import annotations

import numpy as np

from pe_core._validate import (
    CONVENTIONS,
    LAYOUTS,
    MAX_LENGTH,
    check_base,
    check_cells,
    check_choice,
    check_d,
    check_dtype,
    check_int,
    check_position,
)


def pair_count(d: int) -> int:
    """Number of frequencies m = ceil(d/2) of a d-dimensional encoding."""
    return (check_d(d) + 1) // 2


def frequencies(d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    r"""Angular frequency :math:`\omega_i` of each sine/cosine pair, in rad/position.

    - ``"paper"``: :math:`\omega_i = n^{-2i/d}`, i = 0 .. ceil(d/2)-1;
    - ``"tensor2tensor"``: :math:`\omega_i = n^{-i/\max(m-1, 1)}` with m = ceil(d/2),
      i.e. seed 001's ``min_rate ** linspace(0, 1, d/2)`` with ``min_rate = 1/n``.

    Args:
        d: embedding size, 1 .. 16384.
        n: base, a finite number > 1 (10000 in the paper).
        convention: ``"paper"`` or ``"tensor2tensor"``.

    Returns:
        float64 array of shape (ceil(d/2),), decreasing from 1.

    Example:
        >>> frequencies(4, n=100)
        array([1. , 0.1])

    Reference: Vaswani et al. 2017, "Attention Is All You Need", section 3.5.
    """
    d = check_d(d)
    base = check_base(n)
    convention = check_choice("convention", convention, CONVENTIONS)
    m = (d + 1) // 2
    i = np.arange(m, dtype=np.float64)
    if convention == "paper":
        exponents = 2.0 * i / d
    else:
        exponents = i / max(m - 1, 1)
    return np.power(base, -exponents)


def wavelengths(d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    r"""Wavelength :math:`\lambda_i = 2\pi / \omega_i` of each pair, in positions.

    In the paper's convention :math:`\lambda_i = 2\pi\, n^{2i/d}`: a geometric progression
    from :math:`2\pi` to just under :math:`2\pi n` (seed 003).

    Example:
        >>> wavelengths(2, n=100)
        array([6.28318531])
    """
    return 2.0 * np.pi / frequencies(d, n, convention)


def positions(length: int, start: int = 0) -> np.ndarray:
    """The positions k = start, start+1, ..., start+length-1 as float64."""
    length = check_int("length (the number of positions)", length, low=0, high=MAX_LENGTH)
    start = check_position("start", start)
    check_position("the last position start + length - 1", start + max(length - 1, 0))
    return start + np.arange(length, dtype=np.float64)


def angles(
    length: int, d: int, n: float = 10000.0, *, convention: str = "paper", start: int = 0
) -> np.ndarray:
    r"""The angle :math:`\theta_{k,i} = k\,\omega_i` in radians, shape (length, ceil(d/2)).

    Seed 001 draws these in degrees modulo 360 with a cyclic colour map.
    """
    w = frequencies(d, n, convention)
    k = positions(length, start)
    check_cells(k.size, w.size)
    return np.multiply.outer(k, w)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split a = hi + lo, each with at most 26 significant bits."""
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def sin_cos_outer(k: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""sin and cos of every angle :math:`\theta_{k,i} = k\,\omega_i`, to about one ulp.

    Rounding the product :math:`k\omega_i` to float64 alone would cost up to half an ulp
    of the *angle* (9e-13 at k = 10^4, 6e-5 at k = 10^12). Instead the product is kept
    exactly as p + e (Dekker's two-product: p = fl(k w), e its rounding error, |e| <= ulp(p)/2),
    and

    .. math::

        \sin(p + e) = \sin p\,(1 - e^2/2) + \cos p\,(e - e^3/6), \qquad
        \cos(p + e) = \cos p\,(1 - e^2/2) - \sin p\,(e - e^3/6)

    (the next terms are below 1e-18 for every position this package allows). So P is as
    exact as float64 can hold, and shift, which rotates by angles computed the same way,
    agrees with it to a few ulp at any position.

    Returns:
        (sin, cos), float64 arrays of shape (len(k), len(w)).
    """
    return sin_cos_of_products(np.asarray(k, dtype=np.float64)[:, None], np.asarray(w, dtype=np.float64)[None, :])


def sin_cos_of_products(k: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""sin and cos of :math:`k\,\omega` element by element (k and w broadcast together), to about one ulp.

    The same arithmetic as ``sin_cos_outer`` (which is this function on ``k[:, None]`` and
    ``w[None, :]``), so a value is bit for bit the one ``positional_encoding`` holds for that
    position and frequency: pages that need a few cells of P (the candidates of a maximum)
    compute just those.

    Computed a block of ``_SIN_COS_BLOCK_CELLS`` values at a time, into scratch arrays made
    once: the formula's dozen intermediate arrays, each made anew for the whole input, cost
    more than the sines and cosines themselves where fresh memory is slow to touch (a
    1024 x 1024 outer product 57 -> 36 ms on the benchmarks' machine, where np.sin and
    np.cos take 22; benchmarks/JOURNAL.md, "2026-11-29, 04:05-05:05"). Each value goes through
    the same operations in the same order, so the results are the same to the bit.
    """
    k = np.asarray(k, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    shape = np.broadcast_shapes(k.shape, w.shape)
    sin, cos = np.empty(shape), np.empty(shape)
    if sin.size == 0:
        return sin, cos
    # Split before broadcasting: a column of positions or a row of frequencies is split once.
    k_hi, k_lo = _split(k)
    w_hi, w_lo = _split(w)
    blocked = shape or (1,)  # blocks of the first axis; two scalars are one row of one value
    k, k_hi, k_lo, w, w_hi, w_lo = (np.broadcast_to(a, blocked) for a in (k, k_hi, k_lo, w, w_hi, w_lo))
    sin_rows, cos_rows = sin.reshape(blocked), cos.reshape(blocked)
    rows = blocked[0]
    step = max(1, _SIN_COS_BLOCK_CELLS // (sin.size // rows))
    p, e, near_one, small = (np.empty((min(step, rows), *sin_rows.shape[1:])) for _ in range(4))
    for first in range(0, rows, step):
        block = slice(first, first + step)
        count = min(step, rows - first)
        _sin_cos_block(k[block], k_hi[block], k_lo[block], w[block], w_hi[block], w_lo[block],
                       sin_rows[block], cos_rows[block], p[:count], e[:count], near_one[:count], small[:count])
    return (sin, cos) if shape else (sin[()], cos[()])


#: Values ``sin_cos_of_products`` computes at once: its four scratch arrays of 128 KiB each stay in
#: a core's cache (2^13 to 2^17 timed alike on the benchmarks' machine).
_SIN_COS_BLOCK_CELLS = 1 << 14


def _sin_cos_block(
    k: np.ndarray, k_hi: np.ndarray, k_lo: np.ndarray, w: np.ndarray, w_hi: np.ndarray, w_lo: np.ndarray,
    sin: np.ndarray, cos: np.ndarray, p: np.ndarray, e: np.ndarray, near_one: np.ndarray, small: np.ndarray,
) -> None:
    """``sin_cos_outer``'s formula on one block, written into ``sin`` and ``cos`` (the other four
    arrays are scratch of the block's shape). Operation by operation, in the formula's order:

        p = k w,   e = ((k_hi w_hi - p) + k_hi w_lo + k_lo w_hi) + k_lo w_lo,
        near_one = 1 - (0.5 e) e,   small = e - ((e e) e) / 6,
        sin = sin p near_one + cos p small,   cos = cos p near_one - sin p small.
    """
    np.multiply(k, w, out=p)
    np.multiply(k_hi, w_hi, out=e)
    np.subtract(e, p, out=e)
    np.multiply(k_hi, w_lo, out=small)
    np.add(e, small, out=e)
    np.multiply(k_lo, w_hi, out=small)
    np.add(e, small, out=e)
    np.multiply(k_lo, w_lo, out=small)
    np.add(e, small, out=e)
    np.multiply(0.5, e, out=near_one)
    np.multiply(near_one, e, out=near_one)
    np.subtract(1.0, near_one, out=near_one)
    np.multiply(e, e, out=small)
    np.multiply(small, e, out=small)
    np.divide(small, 6.0, out=small)
    np.subtract(e, small, out=small)
    np.sin(p, out=sin)
    np.cos(p, out=cos)
    np.multiply(cos, small, out=e)  # cos p small (e is no longer needed)
    np.multiply(sin, small, out=small)  # sin p small
    np.multiply(sin, near_one, out=sin)
    np.add(sin, e, out=sin)
    np.multiply(cos, near_one, out=cos)
    np.subtract(cos, small, out=cos)


def column_pairs(d: int, layout: str = "interleaved") -> tuple[np.ndarray, np.ndarray]:
    """For each column c, its pair index i and whether it is a sine (True) or cosine.

    Interleaved: column c is pair c // 2, a sine when c is even. Concatenated: the first
    ceil(d/2) columns are the sines of pairs 0.., the rest the cosines of pairs 0...

    Example:
        >>> column_pairs(5, "concatenated")
        (array([0, 1, 2, 0, 1]), array([ True,  True,  True, False, False]))
    """
    d = check_d(d)
    layout = check_choice("layout", layout, LAYOUTS)
    c = np.arange(d)
    if layout == "interleaved":
        return c // 2, c % 2 == 0
    m = (d + 1) // 2
    return np.where(c < m, c, c - m), c < m


def swapped_columns(d: int, layout: str = "interleaved") -> np.ndarray:
    """The column order that trades each pair's sine and cosine: ``P[:, swapped_columns(d,
    layout)]`` is the table with the cosine first (cos, sin, cos, sin, ... interleaved;
    [cos | sin] concatenated), a common variant (or bug). The order is its own inverse.

    Args:
        d: the embedding size, even (an odd d's lone sine has no cosine to trade with).
        layout: "interleaved" (column c trades with c XOR 1) or "concatenated" (the two
            halves trade places: c with c + d/2 mod d).

    Example:
        >>> swapped_columns(6), swapped_columns(6, "concatenated")
        (array([1, 0, 3, 2, 5, 4]), array([3, 4, 5, 0, 1, 2]))
    """
    d = check_d(d)
    layout = check_choice("layout", layout, LAYOUTS)
    if d % 2:
        raise ValueError(f"d must be even to swap sines and cosines, got d = {d} (its last sine has no cosine).")
    c = np.arange(d)
    return c ^ 1 if layout == "interleaved" else (c + d // 2) % d


def sine_cosine_columns(d: int, layout: str = "interleaved") -> tuple[slice, slice]:
    """Slices selecting the sine columns and the cosine columns, both in pair order."""
    d = check_d(d)
    layout = check_choice("layout", layout, LAYOUTS)
    m = (d + 1) // 2
    if layout == "interleaved":
        return slice(0, d, 2), slice(1, d, 2)
    return slice(0, m), slice(m, d)


def positional_encoding(
    length: int,
    d: int,
    n: float = 10000.0,
    *,
    layout: str = "interleaved",
    convention: str = "paper",
    start: int = 0,
    dtype: object = np.float64,
) -> np.ndarray:
    r"""The positional-encoding matrix P of shape (length, d).

    .. math::

        P[k, 2i] = \sin(k\,\omega_i), \qquad P[k, 2i+1] = \cos(k\,\omega_i)

    for k = start .. start+length-1 (interleaved layout; the concatenated layout holds the
    same values with all sines first). Values are computed in float64 and then cast to
    ``dtype``, which is the most exact result that dtype can hold (ml_dtypes' bfloat16 and
    8-bit floats round through float32: a value within a float32 unit of a tie may round the
    other way).

    Args:
        length: number of positions, 0 .. 1,048,576 (and length x d <= 2**25).
        d: embedding size, 1 .. 16384.
        n: base, finite and > 1.
        layout: ``"interleaved"`` (paper) or ``"concatenated"`` ([sin | cos]).
        convention: ``"paper"`` or ``"tensor2tensor"`` frequencies (see ``frequencies``).
        start: first position (a whole number), e.g. to continue a sequence.
        dtype: floating result type: a NumPy one, or ml_dtypes' bfloat16, float8_e4m3fn or
            float8_e5m2 (by type or name).

    Example:
        >>> positional_encoding(2, 4, n=100).round(4)
        array([[0.    , 1.    , 0.    , 1.    ],
               [0.8415, 0.5403, 0.0998, 0.995 ]])

    Reference: Vaswani et al. 2017, section 3.5, equations for PE(pos, 2i), PE(pos, 2i+1).
    """
    d = check_d(d)
    layout = check_choice("layout", layout, LAYOUTS)
    dtype = check_dtype(dtype)
    length = check_int("length (the number of positions)", length, low=0, high=MAX_LENGTH)
    check_cells(length, d)
    w = frequencies(d, n, convention)
    k = positions(length, start)
    P = np.empty((k.size, d), dtype=np.float64)
    sines, cosines = sine_cosine_columns(d, layout)
    # Blocks of rows keep the temporaries of sin_cos_outer to a few MB at any size.
    block = max(1, _BLOCK_CELLS // w.size)
    for first in range(0, k.size, block):
        rows = slice(first, first + block)
        sin_block, cos_block = sin_cos_outer(k[rows], w)
        P[rows, sines] = sin_block
        P[rows, cosines] = cos_block[:, : d // 2]
    return P if dtype == np.float64 else P.astype(dtype)


#: Angles handled at once by positional_encoding: each temporary of sin_cos_outer is 0.5 MB, the
#: few of a block together a few MB (a server computes for many sessions, and memory a run touched
#: stays with the process). Faster than larger blocks, too (L=2103, d=306: 10.9 ms, 14.5 with 2^18).
_BLOCK_CELLS = 1 << 16
