r"""Reducing large matrices to what a screen can show, without aliasing.

A chart has a few hundred pixels per axis; the app's largest view is 16384 positions x
2048 dimensions. Skipping rows would alias the fast pairs (a sine of wavelength 2*pi
sampled every 32 positions looks like a slow wave), so every reduction here is a *block
average*: each drawn cell is the mean of the block of cells it stands for, and it says
which block that is.

The sinusoidal blocks have a closed form (the sum of a sine over an arithmetic
progression), so the app draws a 16384 x 2048 encoding without building it:

.. math::

    \frac{1}{N}\sum_{k=a}^{a+N-1} \sin(k\omega)
      = \frac{\sin(N\omega/2)}{N \sin(\omega/2)}\,\sin\!\Big(\big(a + \tfrac{N-1}{2}\big)\omega\Big)

and the same with cos for the cosine columns (:math:`0 < \omega \le 1`, so
:math:`\sin(\omega/2) > 0`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pe_core._validate import (
    LAYOUTS,
    MAX_LENGTH,
    check_cells,
    check_choice,
    check_d,
    check_int,
    check_matrix,
)
from pe_core.encoding import frequencies, positions


def block_edges(size: int, max_blocks: int) -> np.ndarray:
    """Edges of min(size, max_blocks) contiguous blocks of nearly equal size covering 0..size.

    Example:
        >>> block_edges(10, 4)
        array([ 0,  2,  5,  8, 10])
    """
    size = check_int("size", size, low=1, high=MAX_LENGTH * 2)
    max_blocks = check_int("max_blocks", max_blocks, low=1)
    count = min(size, max_blocks)
    return np.round(np.linspace(0, size, count + 1)).astype(np.int64)


def block_average(
    matrix: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray | None = None
) -> np.ndarray:
    r"""Mean of each block of ``matrix`` between consecutive row (and column) edges.

    .. math:: A[r, c] = \operatorname{mean}\{M[i, j] : e_r \le i < e_{r+1},\ f_c \le j < f_{c+1}\}
    """
    matrix = check_matrix("matrix", matrix)
    row_edges = np.asarray(row_edges, dtype=np.int64)
    col_edges = np.array([0, matrix.shape[1]]) if col_edges is None else np.asarray(col_edges, dtype=np.int64)
    for name, edges, size in (("row", row_edges, matrix.shape[0]), ("column", col_edges, matrix.shape[1])):
        if edges[0] != 0 or edges[-1] != size or np.any(np.diff(edges) < 1):
            raise ValueError(f"{name} edges must rise strictly from 0 to {size}, got {edges[:5]}...")
    sums = np.add.reduceat(np.add.reduceat(matrix, row_edges[:-1], axis=0), col_edges[:-1], axis=1)
    return sums / np.multiply.outer(np.diff(row_edges), np.diff(col_edges))


@dataclass(frozen=True)
class ReducedEncoding:
    """A block-averaged encoding: ``values[r, c]`` is the mean over positions
    ``row_first[r] .. row_last[r]`` and over the ``column_is_sine[c]`` columns of pairs
    ``pair_first[c] .. pair_last[c]``. With blocks of one the values are exact cells."""

    values: np.ndarray
    row_first: np.ndarray
    row_last: np.ndarray
    column_is_sine: np.ndarray
    pair_first: np.ndarray
    pair_last: np.ndarray

    @property
    def is_reduced(self) -> bool:
        rows_reduced = bool(np.any(self.row_last > self.row_first))
        return rows_reduced or bool(np.any(self.pair_last > self.pair_first))


def column_groups(d: int, layout: str, max_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group the d columns into at most ``max_cols`` display columns of one kind each.

    Sines and cosines are never averaged together: each display column covers a run of
    consecutive pairs' sines, or their cosines, in the order of the layout.

    Returns:
        (is_sine, pair_first, pair_last) per display column.
    """
    d = check_d(d)
    layout = check_choice("layout", layout, LAYOUTS)
    max_cols = check_int("max_cols", max_cols, low=2)
    m, cosine_pairs = (d + 1) // 2, d // 2
    if d <= max_cols:
        pair_edges = np.arange(m + 1)
    else:
        pair_edges = block_edges(m, max_cols // 2)
    first, last = pair_edges[:-1], pair_edges[1:] - 1
    has_cosine = first < cosine_pairs
    cos_first, cos_last = first[has_cosine], np.minimum(last[has_cosine], cosine_pairs - 1)
    if layout == "concatenated":
        is_sine = np.r_[np.ones(first.size, bool), np.zeros(cos_first.size, bool)]
        return is_sine, np.r_[first, cos_first], np.r_[last, cos_last]
    # Interleaved: sin block 0, cos block 0, sin block 1, ... (the last sine may stand alone).
    order = np.argsort(np.r_[2 * np.arange(first.size), 2 * np.flatnonzero(has_cosine) + 1], kind="stable")
    is_sine = np.r_[np.ones(first.size, bool), np.zeros(cos_first.size, bool)][order]
    return is_sine, np.r_[first, cos_first][order], np.r_[last, cos_last][order]


def encoding_block_average(
    length: int,
    d: int,
    n: float = 10000.0,
    *,
    layout: str = "interleaved",
    convention: str = "paper",
    start: int = 0,
    max_rows: int = 512,
    max_cols: int = 256,
) -> ReducedEncoding:
    r"""Block averages of ``positional_encoding(length, d, ...)`` computed in closed form.

    Never builds the (length, d) matrix: the cost is (rows x pairs), whatever the length.
    Row blocks are contiguous runs of positions; column blocks are runs of consecutive
    pairs of one kind (see ``column_groups``).
    """
    w = frequencies(d, n, convention)
    k = positions(length, start)
    if k.size == 0:
        raise ValueError("length must be at least 1 to draw the encoding.")
    edges = block_edges(k.size, max_rows)
    first, count = k[edges[:-1]], np.diff(edges).astype(np.float64)
    centre = np.multiply.outer(first + (count - 1) / 2, w)
    # Dirichlet-kernel factor sin(N w/2) / (N sin(w/2)); exactly 1 for blocks of one.
    factor = np.sin(np.multiply.outer(count, w / 2)) / np.multiply.outer(count, np.sin(w / 2))
    factor[count == 1] = 1.0
    mean_sin, mean_cos = factor * np.sin(centre), factor * np.cos(centre)
    is_sine, pair_first, pair_last = column_groups(d, layout, max_cols)
    values = np.empty((first.size, is_sine.size))
    for kind, means in ((True, mean_sin), (False, mean_cos[:, : d // 2])):
        cols = np.flatnonzero(is_sine == kind)
        sums = np.add.reduceat(means, pair_first[cols], axis=1)
        values[:, cols] = sums / (pair_last[cols] - pair_first[cols] + 1)
    last = k[edges[1:] - 1]
    return ReducedEncoding(values, first, last, is_sine, pair_first, pair_last)


def angle_block_mean(
    length: int,
    d: int,
    n: float = 10000.0,
    *,
    convention: str = "paper",
    start: int = 0,
    max_rows: int = 512,
    max_pairs: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Circular mean of the angles :math:`k\omega_i` over blocks, in degrees in [0, 360).

    Angles wrap, so an arithmetic mean of 350 deg and 10 deg (= 180) would be wrong; the
    circular mean is :math:`\operatorname{atan2}(\overline{\sin}, \overline{\cos})`, computed
    from the same closed-form block means as ``encoding_block_average``.

    Returns:
        (degrees (rows, pair blocks), row_first, row_last, pair_edges).
    """
    m = (check_d(d) + 1) // 2
    reduced = encoding_block_average(
        length, 2 * m, n, layout="concatenated", convention=convention, start=start,
        max_rows=max_rows, max_cols=2 * max_pairs,
    )
    half = reduced.values.shape[1] // 2
    mean_sin, mean_cos = reduced.values[:, :half], reduced.values[:, half:]
    degrees = np.degrees(np.arctan2(mean_sin, mean_cos)) % 360.0
    pair_edges = np.r_[reduced.pair_first[:half], m]
    return degrees, reduced.row_first, reduced.row_last, pair_edges


def offset_matrix_block_average(values_by_offset: np.ndarray, edges: np.ndarray) -> np.ndarray:
    r"""Block averages of the L x L matrix :math:`G[a, b] = f(b - a)` without building it.

    ``values_by_offset[t + L - 1] = f(t)`` for t = -(L-1) .. L-1. With C the prefix sum of
    f and D the prefix sum of C, the sum of a block
    :math:`[a_0, a_1) \times [b_0, b_1)` is
    :math:`D(b_1{-}1{-}a_0) - D(b_1{-}1{-}a_1) - D(b_0{-}1{-}a_0) + D(b_0{-}1{-}a_1)`.
    """
    f = check_matrix("values_by_offset", values_by_offset, ndim=(1,))
    if f.size % 2 == 0:
        raise ValueError("values_by_offset must hold f(t) for t = -(L-1) .. L-1 (an odd count).")
    L = (f.size + 1) // 2
    edges = np.asarray(edges, dtype=np.int64)
    if edges[0] != 0 or edges[-1] != L or np.any(np.diff(edges) < 1):
        raise ValueError(f"edges must rise strictly from 0 to L={L}.")
    check_cells(edges.size, edges.size)
    # D is indexed by u + L + 1 for u = -(L+1) .. L-1, with f = 0 outside -(L-1) .. L-1.
    C = np.cumsum(np.r_[0.0, 0.0, f])
    D = np.cumsum(C)

    def D_at(u: np.ndarray) -> np.ndarray:
        return D[u + L + 1]

    a0, a1 = edges[:-1, None], edges[1:, None]
    b0, b1 = edges[None, :-1], edges[None, 1:]
    sums = D_at(b1 - 1 - a0) - D_at(b1 - 1 - a1) - D_at(b0 - 1 - a0) + D_at(b0 - 1 - a1)
    return sums / ((a1 - a0) * (b1 - b0))
