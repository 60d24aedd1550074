r"""Relative positions: the encoding of k + delta is a fixed linear map of the encoding of k.

For each pair i, with :math:`\phi = \delta\,\omega_i`, the angle-addition formulas

.. math::

    \sin(\omega_i (k+\delta)) &= \sin(\omega_i k)\cos\phi + \cos(\omega_i k)\sin\phi \\
    \cos(\omega_i (k+\delta)) &= \cos(\omega_i k)\cos\phi - \sin(\omega_i k)\sin\phi

say that the row vector [sin, cos] of pair i is multiplied by the rotation

.. math::

    W(\phi) = \begin{bmatrix} \cos\phi & -\sin\phi \\ \sin\phi & \cos\phi \end{bmatrix}

(rows: input sin, cos; columns: output sin, cos). This is seeds 003's and 004's W acting
on a column vector, transposed to act on the rows of P, as seed 001 does. The transition
matrix M(delta) places one W per pair on the block diagonal (interleaved) or in four
diagonal blocks (concatenated), and :math:`P[k] M(\delta) = P[k + \delta]` for every k.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from pe_core._validate import (
    CONVENTIONS,
    LAYOUTS,
    MAX_CELLS,
    MAX_D,
    check_base,
    check_choice,
    check_d,
    check_even_d,
    check_finite_values,
    check_matrix,
    check_position,
    check_real,
)
from pe_core.encoding import frequencies, sin_cos_outer, sine_cosine_columns


def rotation(phi: float) -> np.ndarray:
    r"""The 2x2 matrix W(phi) that turns the row [sin t, cos t] into [sin(t+phi), cos(t+phi)].

    .. math:: W(\phi) = \begin{bmatrix} \cos\phi & -\sin\phi \\ \sin\phi & \cos\phi \end{bmatrix}

    Example:
        >>> rotation(0.0)
        array([[ 1., -0.],
               [ 0.,  1.]])
    """
    phi = check_real("the rotation angle", phi)
    c, s = np.cos(phi), np.sin(phi)
    return np.array([[c, -s], [s, c]])


def _pair_rotations(delta: object, d: int, n: float, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of delta * w_i for every pair of an even-d encoding."""
    delta = check_position("delta (the offset)", delta)
    # The same exact angles as positional_encoding, so that a shift agrees with it to ulps.
    sin_phi, cos_phi = sin_cos_outer(np.array([float(delta)]), frequencies(d, n, convention))
    return cos_phi[0], sin_phi[0]


def transition_matrix(
    delta: int,
    d: int,
    n: float = 10000.0,
    *,
    layout: str = "interleaved",
    convention: str = "paper",
) -> np.ndarray:
    r"""The d x d matrix M(delta) with :math:`P[k] M(\delta) = P[k+\delta]` for every k.

    Interleaved: block diagonal, block i is :math:`W(\delta\omega_i)` in rows and columns
    2i, 2i+1. Concatenated (seed 001): four diagonal blocks
    :math:`\begin{bmatrix} C & -S \\ S & C \end{bmatrix}` with
    :math:`C = \mathrm{diag}(\cos\delta\omega_i)`, :math:`S = \mathrm{diag}(\sin\delta\omega_i)`.
    M is orthogonal, :math:`M(a)M(b) = M(a+b)` and :math:`M(-\delta) = M(\delta)^T`.

    Args:
        delta: offset, a whole number (negative shifts back, as seed 001's -10).
        d: even embedding size (odd d raises: a lone sine has no partner to rotate with),
            at most 5792, so that d x d stays within MAX_CELLS.
        n, layout, convention: as in ``positional_encoding``.

    Example:
        >>> transition_matrix(1, 2, n=100).round(4)
        array([[ 0.5403, -0.8415],
               [ 0.8415,  0.5403]])
    """
    d = check_d(d)
    check_even_d(d, "transition_matrix")
    if d * d > MAX_CELLS:
        raise ValueError(
            f"transition_matrix(d={d:,}) would hold d x d = {d * d:,} values, more than the limit of "
            f"{MAX_CELLS:,} (d <= {math.isqrt(MAX_CELLS)}); shift(P, delta) applies it without building it."
        )
    layout = check_choice("layout", layout, LAYOUTS)
    cos_phi, sin_phi = _pair_rotations(delta, d, n, convention)
    sines, cosines = sine_cosine_columns(d, layout)
    sine_index = np.arange(d)[sines]
    cosine_index = np.arange(d)[cosines]
    M = np.zeros((d, d))
    M[sine_index, sine_index] = cos_phi
    M[cosine_index, sine_index] = sin_phi
    M[sine_index, cosine_index] = -sin_phi
    M[cosine_index, cosine_index] = cos_phi
    return M


def shift(
    P: np.ndarray,
    delta: int,
    n: float = 10000.0,
    *,
    layout: str = "interleaved",
    convention: str = "paper",
    out: np.ndarray | None = None,
) -> np.ndarray:
    r"""``P @ transition_matrix(delta, P.shape[-1], ...)``, computed pair by pair.

    .. math::

        P'[k, s_i] = P[k, s_i]\cos\phi_i + P[k, c_i]\sin\phi_i, \qquad
        P'[k, c_i] = P[k, c_i]\cos\phi_i - P[k, s_i]\sin\phi_i

    with :math:`\phi_i = \delta\omega_i` and :math:`s_i, c_i` the sine and cosine columns
    of pair i. Written as complex numbers :math:`z_i = P[k, s_i] + \mathrm{i}\,P[k, c_i]`
    this is one multiplication, :math:`z_i' = z_i\,e^{-\mathrm{i}\phi_i}`: O(L d) work
    instead of the O(L d^2) of the dense product.

    Args:
        P: array of shape (d,) or (L, d), d even, finite values.
        delta, n, layout, convention: as in ``transition_matrix``.
        out: optional C-contiguous float64 array of P's shape to write the result into, as
            NumPy's ``out=``; it may be P itself, to rotate in place. For a large P this
            saves allocating a new array, whose first writes cost about as much as the
            rotation (the system zeroes every new page).

    Returns:
        float64 array of P's shape (``out`` when given).

    Example:
        >>> from pe_core import positional_encoding
        >>> P = positional_encoding(20, 8)
        >>> bool(np.allclose(shift(P[:10], 10), P[10:]))
        True
    """
    P = np.ascontiguousarray(check_matrix("P", P, ndim=(1, 2), check_finite=False))
    d = P.shape[-1]
    if d > MAX_D:
        raise ValueError(f"P has {d:,} columns, more than the limit d <= {MAX_D:,}.")
    check_even_d(d, "shift")
    layout = check_choice("layout", layout, LAYOUTS)
    check_base(n)
    check_choice("convention", convention, CONVENTIONS)
    result, in_place = _output_for(P, out)
    cos_phi, sin_phi = _pair_rotations(delta, d, n, convention)
    rows, result_rows = P.reshape(-1, d), result.reshape(-1, d)
    block_rows = max(1, _CACHE_VALUES // d)
    m = d // 2
    if layout == "interleaved":
        turn = cos_phi - 1j * sin_phi

        def rotate_block(first: int, stop: int) -> None:
            # Columns sin, cos, sin, cos... are already the real and imaginary parts of a
            # complex128 array: one contiguous vectorised multiply (safe in place, as each
            # value is read before it is written).
            z = rows[first:stop].view(np.complex128)
            np.multiply(z, turn, out=result_rows[first:stop].view(np.complex128))

    else:
        # [sin | cos]: row k seen as a (2, m) array, pair i is column i of it, and
        # out[k, b, i] = sum_a P[k, a, i] W_i[a, b] with W_i = W(phi_i) (module docstring).
        # W is stored transposed, [b, a, i]: einsum runs a third faster with that layout.
        rotations = np.array([[cos_phi, sin_phi], [-sin_phi, cos_phi]])

        def rotate_block(first: int, stop: int) -> None:
            # einsum documents no rule for an output that is also an input: in place, it
            # reads a copy of the block.
            source = rows[first:stop].copy() if in_place else rows[first:stop]
            target = result_rows[first:stop].reshape(-1, 2, m)
            np.einsum("kai,bai->kbi", source.reshape(-1, 2, m), rotations, out=target)

    def rotate(first: int, stop: int) -> bool:
        """Rotate rows first..stop-1 in cache-sized blocks; False if a result is not finite."""
        finite = True
        # NaN or inf is reported below as a ValueError, so NumPy must not warn about it
        # first (errstate is per thread, hence here, in the worker).
        with np.errstate(invalid="ignore", over="ignore"):
            for row in range(first, stop, block_rows):
                end = min(row + block_rows, stop)
                rotate_block(row, end)
                # Summing the block while it is in cache replaces a separate pass of
                # np.isfinite over all of P: NaN or inf in P reaches the sum. (einsum's
                # sum is the fastest of NumPy's here.)
                finite &= bool(np.isfinite(np.einsum("ij->", result_rows[row:end])))
        return finite

    # A sum can also overflow on finite values, so a failed block check is confirmed exactly.
    if not over_row_blocks(rotate, rows.shape[0], rows.size) and not np.isfinite(result).all():
        if in_place:
            raise ValueError(
                "P contains NaN or infinite values, or values too large to rotate (near 1e308); "
                "it was rotated in place, so some of its values are now NaN or infinite."
            )
        check_finite_values("P", P)
        raise ValueError("P has values too large to rotate without overflow (near 1e308).")
    return result


def _output_for(P: np.ndarray, out: np.ndarray | None) -> tuple[np.ndarray, bool]:
    """The array shift writes into, and whether it is P itself (a rotation in place)."""
    if out is None:
        return np.empty_like(P), False
    if not isinstance(out, np.ndarray):
        raise ValueError(f"out must be a NumPy array, got {type(out).__name__}.")
    if out.dtype != np.float64 or out.shape != P.shape:
        raise ValueError(f"out must be a float64 array of P's shape {P.shape}, got {out.dtype} of shape {out.shape}.")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable (np.empty_like(P) is).")
    in_place = out.ctypes.data == P.ctypes.data
    if not in_place and np.may_share_memory(out, P):
        raise ValueError("out overlaps P without being P itself; pass P to rotate in place, or another array.")
    return out, in_place


#: Values per cache-sized block of rows: 1 MiB of float64, half of one core's L2 cache.
_CACHE_VALUES = 1 << 17
#: Below this many values one thread is faster than handing work to two.
_PARALLEL_MIN_VALUES = 1 << 20
_POOL: ThreadPoolExecutor | None = None


def over_row_blocks(work: Callable[[int, int], bool], rows: int, values: int) -> bool:
    """Run ``work(first, stop)`` over row ranges, on two threads for large arrays; True if
    every call returned True.

    NumPy's ufuncs release the GIL, so two halves of a large array are rotated at once;
    without this, shift is bound by one core while the dense BLAS product uses all.
    """
    global _POOL
    workers = min(2, os.cpu_count() or 1)
    if workers == 1 or values < _PARALLEL_MIN_VALUES:
        return work(0, rows)
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pe_core-shift")
    bounds = np.linspace(0, rows, workers + 1).astype(int)
    futures = [_POOL.submit(work, a, b) for a, b in itertools.pairwise(bounds)]
    return all([future.result() for future in futures])
