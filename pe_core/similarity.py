r"""How alike two positions' encodings are.

For an even d, the dot product of two positions depends only on their offset:

.. math::

    P[k] \cdot P[k+\delta] = \sum_i \sin(\omega_i k)\sin(\omega_i (k+\delta))
        + \cos(\omega_i k)\cos(\omega_i (k+\delta)) = \sum_i \cos(\omega_i \delta)

and the sum of squared differences follows from it:
:math:`\lVert P[k] - P[k+\delta] \rVert^2 = 2 \sum_i (1 - \cos(\omega_i\delta))`.
Seed 001 plots both against position 20.
"""

from __future__ import annotations

import numpy as np

from pe_core._validate import MAX_LENGTH, check_d, check_even_d, check_int, check_matrix
from pe_core.encoding import frequencies


def _reference_row(P: object, ref: object) -> tuple[np.ndarray, np.ndarray]:
    P = check_matrix("P", P)
    ref = check_int("ref (the reference position's row)", ref, low=0, high=P.shape[0] - 1)
    return P, P[ref]


def dot_similarity(P: np.ndarray, ref: int) -> np.ndarray:
    r"""Dot product of every row with row ``ref``: :math:`s_k = P[k] \cdot P[ref]`.

    Args:
        P: matrix (L, d), one position per row.
        ref: row index of the reference position, 0 .. L-1 (seed 001 uses 20).

    Returns:
        float64 array (L,). Equals ``P @ P[ref]``.
    """
    P, row = _reference_row(P, ref)
    return P @ row


def sse(P: np.ndarray, ref: int) -> np.ndarray:
    r"""Sum of squared differences to row ``ref``: :math:`e_k = \sum_j (P[k,j] - P[ref,j])^2`."""
    P, row = _reference_row(P, ref)
    return np.einsum("kj,kj->k", P - row, P - row)


def cosine_similarity(P: np.ndarray, ref: int) -> np.ndarray:
    r"""Cosine of the angle between every row and row ``ref``:
    :math:`P[k]\cdot P[ref] / (\lVert P[k]\rVert\,\lVert P[ref]\rVert)`.

    Rows of zero norm (possible only for hand-made matrices) give 0.
    """
    P, row = _reference_row(P, ref)
    norms = np.linalg.norm(P, axis=1) * np.linalg.norm(row)
    dots = P @ row
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def dot_by_offset(delta: object, d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    r"""Closed form of the dot product of two positions delta apart:
    :math:`f(\delta) = \sum_i \cos(\omega_i \delta)` (even d; the same for both layouts).

    Args:
        delta: an offset or an array of offsets (whole numbers or not: f is smooth).
        d: even embedding size.

    Returns:
        float64 array of delta's shape; f(0) = d/2.
    """
    d = check_d(d)
    check_even_d(d, "dot_by_offset")
    w = frequencies(d, n, convention)
    delta = check_matrix("delta", delta, ndim=(0, 1))
    if delta.size > 2 * MAX_LENGTH:
        raise ValueError(f"{delta.size:,} offsets is more than the limit of {2 * MAX_LENGTH:,}; ask for fewer.")
    flat = delta.reshape(-1)
    out = np.empty(flat.shape)
    # Blocks of offsets keep the (offsets x pairs) temporary near 8 MB at any size.
    block = max(1, _BLOCK_TERMS // w.size)
    for first in range(0, flat.size, block):
        out[first : first + block] = np.cos(np.multiply.outer(flat[first : first + block], w)).sum(axis=-1)
    return out.reshape(delta.shape)


#: Terms (offsets x pairs) evaluated at once by dot_by_offset.
_BLOCK_TERMS = 1 << 20


def sse_by_offset(delta: object, d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    r"""Closed form of the SSE of two positions delta apart: :math:`d - 2 f(\delta)`."""
    return d - 2.0 * dot_by_offset(delta, d, n, convention)
