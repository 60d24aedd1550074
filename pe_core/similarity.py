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

import math

import numpy as np

from pe_core._validate import MAX_LENGTH, MAX_POSITION, check_d, check_even_d, check_int, check_matrix
from pe_core.encoding import frequencies, sin_cos_outer


def _reference_row(P: object, ref: object) -> tuple[np.ndarray, np.ndarray]:
    P = check_matrix("P", P)
    ref = check_int("ref (the reference position's row)", ref, low=0, high=P.shape[0] - 1)
    return P, P[ref]


# Values beyond about 1e154 can overflow a product or a square. Where one does, the dot
# product and the SSE are themselves out of float64's range, or cancel to a value whose
# rounding error is: those raise a ValueError. The cosine does not depend on the rows'
# scale, so it is recomputed on rows divided by a power of two (exact), which also saves
# the squares of tiny values (below about 1e-160) from underflowing to 0.


def _row_exponents(X: np.ndarray) -> np.ndarray:
    """e with 2**e at or above each row's largest |value| (0 for a zero row)."""
    return np.frexp(np.abs(X).max(axis=-1))[1]


def _in_range(what: str, values: np.ndarray, P: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        raise ValueError(
            f"The {what} exceed the float64 range (about 1.8e308): P's values reach "
            f"{np.abs(P).max():.3g}; divide P by a constant first."
        )
    return values


def dot_similarity(P: np.ndarray, ref: int) -> np.ndarray:
    r"""Dot product of every row with row ``ref``: :math:`s_k = P[k] \cdot P[ref]`.

    Args:
        P: matrix (L, d), one position per row.
        ref: row index of the reference position, 0 .. L-1 (seed 001 uses 20).

    Returns:
        float64 array (L,). Equals ``P @ P[ref]``.
    """
    P, row = _reference_row(P, ref)
    with np.errstate(over="ignore", invalid="ignore"):
        return _in_range("dot products", P @ row, P)


def sse(P: np.ndarray, ref: int) -> np.ndarray:
    r"""Sum of squared differences to row ``ref``: :math:`e_k = \sum_j (P[k,j] - P[ref,j])^2`."""
    P, row = _reference_row(P, ref)
    with np.errstate(over="ignore", invalid="ignore"):
        return _in_range("sums of squared differences", np.einsum("kj,kj->k", P - row, P - row), P)


def cosine_similarity(P: np.ndarray, ref: int) -> np.ndarray:
    r"""Cosine of the angle between every row and row ``ref``:
    :math:`P[k]\cdot P[ref] / (\lVert P[k]\rVert\,\lVert P[ref]\rVert)`.

    Rows of zero norm (possible only for hand-made matrices) give 0.
    """
    P, row = _reference_row(P, ref)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        norms = np.linalg.norm(P, axis=1) * np.linalg.norm(row)
        dots = P @ row
        if not np.all(np.isfinite(norms) & np.isfinite(dots) & (norms > 0)):
            # Overflow, or squares of tiny values lost: the cosine does not change when a
            # row is scaled, so scale every row's largest |value| into [0.5, 1] and redo.
            P, row = np.ldexp(P, -_row_exponents(P)[:, None]), np.ldexp(row, -_row_exponents(row))
            norms = np.linalg.norm(P, axis=1) * np.linalg.norm(row)
            dots = P @ row
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def dot_by_offset(delta: object, d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    r"""Closed form of the dot product of two positions delta apart:
    :math:`f(\delta) = \sum_i \cos(\omega_i \delta)` (even d; the same for both layouts).

    Each angle :math:`\delta\omega_i` is kept exact, as in ``positional_encoding``
    (``sin_cos_outer``), so f agrees with the dot products of the encoding's rows at any
    offset. Whole-number offsets are split as :math:`\delta = qB + j` with :math:`0 \le j < B`
    (B = 64, or for N offsets the power of two at most :math:`\sqrt N` when that is larger), and

    .. math::

        f(qB + j) = \sum_i \cos(qB\omega_i)\cos(j\omega_i) - \sin(qB\omega_i)\sin(j\omega_i),

    two matrix products between the sines and cosines of the distinct q and those of
    j = 0..B-1: a range of N offsets needs N/B + B rows of sines and cosines instead of N
    (about :math:`2\sqrt N`: 131,072 offsets at d = 2048 in tens of ms, not a second).

    Args:
        delta: an offset or an array of offsets, |delta| <= 1e12 (whole numbers or not:
            f is smooth).
        d: even embedding size.

    Returns:
        float64 array of delta's shape; f(0) = d/2.
    """
    d = check_d(d)
    check_even_d(d, "dot_by_offset")
    return cos_sum_by_offset(delta, frequencies(d, n, convention))


def cos_sum_by_offset(delta: object, w: np.ndarray) -> np.ndarray:
    r""":math:`\sum_i \cos(\omega_i \delta)` for each offset, for any rates ``w`` (rad/position).

    The computation of ``dot_by_offset`` (exact angles; whole-number offsets through
    :math:`\delta = qB + j`), for the rotary scores of ``pe_core.attention_scores`` too.

    Args:
        delta: an offset or a 1-D array of offsets, |delta| <= 1e12, at most 2**21 of them.
        w: 1-D float64 rates, as returned by ``frequencies`` or ``rope_frequencies``.

    Returns:
        float64 array of delta's shape.
    """
    delta = check_matrix("delta", delta, ndim=(0, 1))
    if delta.size > 2 * MAX_LENGTH:
        raise ValueError(f"{delta.size:,} offsets is more than the limit of {2 * MAX_LENGTH:,}; ask for fewer.")
    largest = float(np.abs(delta).max())
    if largest > MAX_POSITION:
        raise ValueError(f"offsets must lie within +-{MAX_POSITION:,}, got one of size {largest:,.0f}.")
    flat = delta.reshape(-1)
    whole = bool(np.all(flat == np.round(flat)))
    if whole and flat.size > 1 and bool(np.all(np.diff(flat) == 1)):
        # A run of consecutive offsets (a curve's): its table of q and j is the run itself, in order.
        return _sum_cos_run(float(flat[0]), flat.size, w).reshape(delta.shape)
    return (_sum_cos_whole(flat, w) if whole else _sum_cos(flat, w)).reshape(delta.shape)


#: Terms (offsets x pairs) evaluated at once by dot_by_offset: each of sin_cos_outer's temporaries
#: is then 1 MB, the few alive together a few MB (a server computes for many sessions at once).
_BLOCK_TERMS = 1 << 17
#: The least step B of dot_by_offset's split delta = q B + j (more offsets take a larger one: _step).
_STEP = 64


def _step(count: int) -> int:
    """B for ``count`` offsets: the power of two at most sqrt(count), at least _STEP, so that the
    rows of sines and cosines, count / B of q and B of j, are fewest for a range of offsets."""
    return max(_STEP, 1 << (math.isqrt(max(count, 1)).bit_length() - 1))


def _sum_cos(offsets: np.ndarray, w: np.ndarray) -> np.ndarray:
    """sum_i cos(offset w_i) for each offset, angles exact, in blocks of offsets."""
    out = np.empty(offsets.shape)
    block = max(1, _BLOCK_TERMS // w.size)
    for first in range(0, offsets.size, block):
        out[first : first + block] = sin_cos_outer(offsets[first : first + block], w)[1].sum(axis=-1)
    return out


def _sum_cos_whole(offsets: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The same for whole-number offsets, through delta = q B + j (see dot_by_offset)."""
    step = _step(offsets.size)
    q, j = np.divmod(offsets, step)
    distinct_q, which_q = np.unique(q, return_inverse=True)
    sin_j, cos_j = sin_cos_outer(np.arange(step, dtype=np.float64), w)
    # Offsets sorted by q, so that each block of distinct q owns a contiguous run of them.
    order = np.argsort(which_q, kind="stable")
    sorted_q = which_q[order]
    out = np.empty(offsets.shape)
    # Rows of q per block: their sines and cosines, and their table of B values each, near 8 MB.
    block = max(1, _BLOCK_TERMS // max(w.size, step))
    for first in range(0, distinct_q.size, block):
        sin_q, cos_q = sin_cos_outer(distinct_q[first : first + block] * step, w)
        table = cos_q @ cos_j.T - sin_q @ sin_j.T  # table[q, j] = f(q B + j)
        run = order[np.searchsorted(sorted_q, first) : np.searchsorted(sorted_q, first + block)]
        out[run] = table[which_q[run] - first, j[run].astype(np.int64)]
    return out


def _sum_cos_run(first: float, count: int, w: np.ndarray) -> np.ndarray:
    """sum_i cos((first + k) w_i) for k = 0 .. count - 1: the split of dot_by_offset with
    first + k = (first + q B) + j, whose table[q, j], read row by row, is the run itself (no
    sorting or gathering of offsets)."""
    step = _step(count)
    rows = -(-count // step)
    sin_j, cos_j = sin_cos_outer(np.arange(step, dtype=np.float64), w)
    out = np.empty(rows * step)
    block = max(1, _BLOCK_TERMS // max(w.size, step))
    for start in range(0, rows, block):
        stop = min(rows, start + block)
        sin_q, cos_q = sin_cos_outer(first + np.arange(start, stop, dtype=np.float64) * step, w)
        out[start * step : stop * step] = (cos_q @ cos_j.T - sin_q @ sin_j.T).ravel()
    return out[:count]


def sse_by_offset(delta: object, d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    r"""Closed form of the SSE of two positions delta apart: :math:`d - 2 f(\delta)`."""
    return d - 2.0 * dot_by_offset(delta, d, n, convention)
