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

import functools
from dataclasses import dataclass

import numpy as np

from pe_core._validate import (
    LAYOUTS,
    MAX_LENGTH,
    check_cells,
    check_choice,
    check_d,
    check_edges,
    check_int,
    check_matrix,
)
from pe_core.encoding import frequencies, positions
from pe_core.rope.rotation import ROPE_LAYOUTS
from pe_core.rope.scaling import RopeScaling, check_rope_d, rope_attention_factor, rope_frequencies


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
    row_edges = check_edges("row edges", row_edges, matrix.shape[0])
    col_edges = check_edges("column edges", [0, matrix.shape[1]] if col_edges is None else col_edges, matrix.shape[1])
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
    d = check_d(d)
    k, edges, mean_sin, mean_cos = _row_block_means(length, d, n, convention, start, max_rows)
    is_sine, pair_first, pair_last = column_groups(d, layout, max_cols)
    values = np.empty((edges.size - 1, is_sine.size))
    for kind, means in ((True, mean_sin), (False, mean_cos[:, : d // 2])):
        cols = np.flatnonzero(is_sine == kind)
        sums = np.add.reduceat(means, pair_first[cols], axis=1)
        values[:, cols] = sums / (pair_last[cols] - pair_first[cols] + 1)
    return ReducedEncoding(values, k[edges[:-1]], k[edges[1:] - 1], is_sine, pair_first, pair_last)


def _row_block_means(
    length: int, d: int, n: float, convention: str, start: int, max_rows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positions, row-block edges and the block means of sin and cos of every pair."""
    max_rows = check_int("max_rows", max_rows, low=1)
    w = frequencies(d, n, convention)
    k = positions(length, start)
    if k.size == 0:
        raise ValueError("length must be at least 1 to draw the encoding.")
    edges = block_edges(k.size, max_rows)
    return (k, edges, *_block_means(k, edges, w))


def _block_means(k: np.ndarray, edges: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean of sin(k w_i) and of cos(k w_i) over each block of positions, for every pair (read-only).

    Blocks of consecutive positions: a block's mean depends on its first position, its size and w
    alone. The last ``BLOCK_MEANS_KEPT`` results are kept by those: the Rotary page asks for the
    same ones up to four times a run (its scores, its mixing error and both cos tables share L and θ',
    and their blocks at most settings; 10 ms each at L=16384, d=2048 on the benchmarks' machine).
    """
    first = np.asarray(k[edges[:-1]], dtype=np.float64)
    count = np.diff(edges).astype(np.float64)
    return _block_means_of(first.tobytes(), count.tobytes(), np.asarray(w, dtype=np.float64).tobytes())


#: Block means kept (``_block_means``): 192 blocks x 1,024 pairs, the largest the pages ask for, are 3 MB.
BLOCK_MEANS_KEPT = 2


@functools.lru_cache(maxsize=BLOCK_MEANS_KEPT)
def _block_means_of(first_bytes: bytes, count_bytes: bytes, w_bytes: bytes) -> tuple[np.ndarray, np.ndarray]:
    first, count, w = (np.frombuffer(raw, dtype=np.float64) for raw in (first_bytes, count_bytes, w_bytes))
    centre = np.multiply.outer(first + (count - 1) / 2, w)
    # Dirichlet-kernel factor sin(N w/2) / (N sin(w/2)), once per block size (block_edges makes
    # at most two); exactly 1 for blocks of one, and for a pair that does not turn (w = 0: a pair
    # proportional RoPE leaves unrotated), its limit.
    sizes, size_of_row = np.unique(count, return_inverse=True)
    still = w == 0
    factor = np.sin(np.multiply.outer(sizes, w / 2)) / np.multiply.outer(sizes, np.where(still, 1.0, np.sin(w / 2)))
    factor[sizes == 1] = 1.0
    factor[:, still] = 1.0
    factor = factor[size_of_row]
    means = factor * np.sin(centre), factor * np.cos(centre)
    for array in means:
        array.setflags(write=False)  # shared by every caller with the same blocks
    return means


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
    max_pairs = check_int("max_pairs", max_pairs, low=1)
    k, edges, mean_sin, mean_cos = _row_block_means(length, d, n, convention, start, max_rows)
    pair_edges = block_edges(mean_sin.shape[1], max_pairs)
    counts = np.diff(pair_edges)
    mean_sin = np.add.reduceat(mean_sin, pair_edges[:-1], axis=1) / counts
    mean_cos = np.add.reduceat(mean_cos, pair_edges[:-1], axis=1) / counts
    degrees = np.degrees(np.arctan2(mean_sin, mean_cos)) % 360.0
    return degrees, k[edges[:-1]], k[edges[1:] - 1], pair_edges


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
    edges = check_edges("edges", edges, L, "L=")
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


def rope_cache_block_average(
    length: int,
    d: int,
    base: float = 10000.0,
    *,
    layout: str = "half",
    scaling: RopeScaling | None = None,
    table: str = "cos",
    max_rows: int = 512,
    max_cols: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Block averages of a table of ``rope_cache(length, d, ...)`` (cos or sin), without building it.

    Rows are blocks of consecutive positions (``block_edges(length, max_rows)``), columns blocks
    of consecutive columns (``block_edges(d, max_cols)``). Column c holds pair p(c) (c mod d/2 in
    ``"half"``, c // 2 in ``"interleaved"``), so a block's mean is the mean over its columns of the
    pair's mean over the positions, in closed form (the module's Dirichlet factor, with the
    frequencies :math:`\theta'_i` of ``rope_frequencies`` at the sequence length ``length``),
    times ``rope_attention_factor`` as ``rope_cache`` returns it.

    Returns:
        (values (rows, cols), row edges, column edges).

    Example:
        >>> values, rows, cols = rope_cache_block_average(3, 4, 100.0, layout="interleaved", max_rows=1, max_cols=2)
        >>> values.round(4)   # the mean of cos(m), m = 0..2, then of cos(0.1 m)
        array([[0.3747, 0.9917]])
    """
    d = check_rope_d(d)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
    table = check_choice("table", table, ("cos", "sin"))
    length = check_int("length (the number of positions)", length, low=1, high=MAX_LENGTH)
    max_rows = check_int("max_rows", max_rows, low=1)
    max_cols = check_int("max_cols", max_cols, low=1)
    theta = rope_frequencies(d, base, scaling=scaling, length=length)
    k = positions(length)
    row_edges, col_edges = block_edges(length, max_rows), block_edges(d, max_cols)
    mean_sin, mean_cos = _block_means(k, row_edges, theta)
    per_pair = mean_cos if table == "cos" else mean_sin
    pair = np.arange(d) % (d // 2) if layout == "half" else np.arange(d) // 2
    sums = np.add.reduceat(per_pair[:, pair], col_edges[:-1], axis=1)
    return rope_attention_factor(scaling, length) * sums / np.diff(col_edges), row_edges, col_edges


def line_envelope(x: object, y: object, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    r"""At most ``max_points`` points of the line (x, y) that keep every bin's extremes, in order.

    A chart a thousand pixels wide cannot show 32767 points, and skipping points would
    alias a fast oscillation into a slow one. Instead the N points are split into
    :math:`B = \lfloor (\text{max\_points} - 2) / 2 \rfloor` consecutive bins of nearly equal
    count, with edges :math:`e = \text{block\_edges}(N, B)`, and from each bin the first point
    where y is smallest and the first where it is largest are kept, with the line's first
    and last points (so that the reduced line spans the same x range):

    .. math::

        K = \{0, N-1\} \cup \bigcup_{b=0}^{B-1} \Big\{
            \operatorname*{arg\,min}_{e_b \le i < e_{b+1}} y_i,\
            \operatorname*{arg\,max}_{e_b \le i < e_{b+1}} y_i \Big\},
        \qquad \text{result} = (x_K, y_K) \text{ in increasing } i

    (each index once). Drawn with a bin per pixel column or less, the
    reduced line spans, in each column, exactly the values the full line spans there: the
    min/max envelope. Every kept point is an exact point of the line, so hover stays exact,
    and no maximum or minimum is lost. Lines of at most ``max_points`` points come back whole.
    The bins are equal counts of points, so for evenly spaced x (positions, offsets) they
    are equal widths on the axis.

    Args:
        x: 1-D array of the points' x (any numbers; returned as given, never reordered).
        y: 1-D array of finite values, the same length as x.
        max_points: at least 4.

    Returns:
        (x kept, y kept as float64), each of at most ``max_points`` values.

    Example:
        >>> line_envelope(np.arange(10), np.array([0., 3, 1, 2, -1, 5, 4, 4, 2, 1]), 6)
        (array([0, 1, 4, 5, 9]), array([ 0.,  3., -1.,  5.,  1.]))
    """
    y = check_matrix("y", y, ndim=(1,))
    x = np.asarray(x)
    if x.shape != y.shape:
        raise ValueError(f"x {x.shape} and y {y.shape} must be two 1-D arrays of the same length.")
    max_points = check_int("max_points", max_points, low=4)
    if y.size <= max_points:
        return x.copy(), y.copy()
    edges = block_edges(y.size, (max_points - 2) // 2)
    starts, counts = edges[:-1], np.diff(edges)
    offsets = np.arange(counts.max())
    # One row per bin; shorter bins are padded with their own first point, which can only
    # tie with it, and argmin/argmax return the first of equal values.
    index = np.where(offsets[None, :] < counts[:, None], starts[:, None] + offsets[None, :], starts[:, None])
    values = y[index]
    rows = np.arange(starts.size)
    lowest = index[rows, np.argmin(values, axis=1)]
    highest = index[rows, np.argmax(values, axis=1)]
    # Bin after bin, so each bin's two in order make them all increasing (np.unique would sort them):
    # only a bin whose extremes are one point, or the first or last point, repeats an index.
    keep = np.empty(2 * starts.size + 2, dtype=np.intp)
    keep[0], keep[-1] = 0, y.size - 1
    np.minimum(lowest, highest, out=keep[1:-1:2])
    np.maximum(lowest, highest, out=keep[2:-1:2])
    keep = keep[np.r_[True, keep[1:] != keep[:-1]]]
    return x[keep], y[keep]
