"""Binary codes of positions, the discrete ancestor of the sinusoidal encoding (seed 003).

Bit j of k, :math:`b_j(k) = \\lfloor k / 2^j \\rfloor \\bmod 2`, is a square wave of period
:math:`2^{j+1}` positions: the lowest bit flips fastest, as the first sine pair turns
fastest.
"""

from __future__ import annotations

import numpy as np

from pe_core._validate import MAX_LENGTH, check_int, check_matrix


def bits_needed(largest: int) -> int:
    """Number of bits to write the whole number ``largest`` >= 0 (at least 1)."""
    return max(1, check_int("largest (the number to write in binary)", largest, low=0).bit_length())


def binary_encoding(length: int, width: int | None = None) -> np.ndarray:
    r"""Binary code of positions 0 .. length-1, least significant bit first.

    .. math:: B[k, j] = \lfloor k / 2^j \rfloor \bmod 2

    Seed 003 draws ``binary_representation(range(100))`` with width 10, which is
    ``binary_encoding(100, 10)``.

    Args:
        length: number of positions, 0 .. 1,048,576.
        width: number of bits (columns); defaults to the bits needed for length-1.

    Returns:
        float64 array (length, width) of 0.0 and 1.0.

    Example:
        >>> binary_encoding(4)
        array([[0., 0.],
               [1., 0.],
               [0., 1.],
               [1., 1.]])
    """
    length = check_int("length (the number of positions)", length, low=0, high=MAX_LENGTH)
    needed = bits_needed(max(length - 1, 0))
    if width is None:
        width = needed
    width = check_int("width (the number of bits)", width, low=1, high=62)
    if width < needed:
        raise ValueError(
            f"width={width} bits cannot hold position {length - 1}; it needs at least {needed} bits."
        )
    k = np.arange(length, dtype=np.int64)
    return ((k[:, None] >> np.arange(width)) & 1).astype(np.float64)


def bit_periods(width: int) -> np.ndarray:
    """Period :math:`2^{j+1}` positions of bit j, for j = 0 .. width-1."""
    width = check_int("width (the number of bits)", width, low=1, high=62)
    return 2.0 ** np.arange(1, width + 1)


def hamming_distance(B: np.ndarray, ref: int) -> np.ndarray:
    r"""Number of differing bits between every row of B and row ``ref``:
    :math:`h_k = \sum_j |B[k,j] - B[ref,j]|`."""
    B = check_matrix("B", B)
    ref = check_int("ref (the reference position's row)", ref, low=0, high=B.shape[0] - 1)
    return np.abs(B - B[ref]).sum(axis=1)
