"""Conventions and pitfalls: two variants of the encoding side by side, and a checker for
a user's own matrix (page "Conventions and pitfalls"). Pure NumPy and pandas, no Streamlit.

A variant is the sidebar's encoding with one thing changed (the layout, the frequencies,
seed 002's `2*i` bug, the base, the first position). The page draws both as block means and
their difference; since both are averaged over the same blocks of rows and of raw columns,
the difference of the drawn means is exactly the mean of the difference.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
import pandas as pd

import pe_core
from explorer import reproduce, uploads
from explorer.arrays import true_cells
from explorer.figures import heatmap_grid
from explorer.settings import Settings, format_number
from pe_core.wording import number

# ----------------------------------------------------------------------------------------
# Variants
# ----------------------------------------------------------------------------------------

#: The variants a visitor may compare, in the order the page offers them.
VARIANTS: dict[str, str] = {
    "sidebar": "sidebar settings",
    "concatenated": "concatenated [sin | cos]",
    "tensor2tensor": "tensor2tensor frequencies",
    "bug": "seed 002's 2*i bug",
    "other_base": "another base n",
    "offset": "positions from an offset",
}


@dataclass(frozen=True)
class Variant:
    """One encoding: P[r, :] is the encoding of position start + r, r = 0 .. L-1."""

    layout: str
    convention: str
    n: float
    start: int = 0

    def describe(self) -> str:
        return (
            f"{self.layout}, {self.convention}, n = {format_number(self.n)}"
            + (f", positions from {self.start}" if self.start else "")
        )


def variant(key: str, settings: Settings, *, other_n: float, offset: int) -> Variant:
    """The variant ``key`` of VARIANTS for the sidebar's ``settings``."""
    base = Variant(settings.layout, settings.convention, float(settings.n))
    if key == "sidebar":
        return base
    if key == "concatenated":
        return replace(base, layout="concatenated")
    if key == "tensor2tensor":
        return replace(base, convention="tensor2tensor")
    if key == "bug":
        # 10000 ** (2*i/d) with i = 0, 2, 4, ...: the exponent of pair j is 4j/d = 2j/d with base n^2.
        return replace(base, convention="paper", n=float(settings.n) ** 2)
    if key == "other_base":
        return replace(base, n=float(other_n))
    if key == "offset":
        return replace(base, start=int(offset))
    raise ValueError(f"unknown variant {key!r}; choose one of {', '.join(VARIANTS)}.")


def explanation(key: str, settings: Settings, v: Variant) -> str:
    """One paragraph: what this variant is and why it is a pitfall (Markdown, no user text)."""
    n = format_number(settings.n)
    m = (settings.d + 1) // 2
    if key == "sidebar":
        return (
            f"The sidebar's encoding: {v.describe()}. With the defaults this is the paper's formula, "
            "PE(k, 2i) = sin(k·n^(-2i/d)), PE(k, 2i+1) = cos(k·n^(-2i/d))."
        )
    if key == "concatenated":
        return (
            "All sines, then all cosines (seed 001, tensor2tensor): **the same numbers in another column "
            "order**. A model trained with one layout and served with the other sees its columns "
            "shuffled, i.e. garbage, although every value is a correct sine or cosine."
        )
    if key == "tensor2tensor":
        return (
            f"Frequencies ω_i = n^(-i/(m-1)) with m = {m} pairs (tensor2tensor, fairseq, seed 001) instead "
            f"of n^(-2i/d): the slowest pair turns at **exactly 1/n** rad per position (the paper's slowest "
            f"is n^(-2(m-1)/d), a little faster). Fast pairs agree; the slow pairs drift apart."
        )
    if key == "bug":
        return (
            f"Seed 002's loop computes `n ** (2*i/d)` with an i that already steps by 2, so pair j gets "
            f"the exponent **4j/d**: n^(4j/d) = (n²)^(2j/d), the paper's formula with base n² = "
            f"{format_number(v.n)} instead of {n}. Columns 0 and 1 (exponent 0) are unchanged, which is why "
            "the bug hides in plots of the first dimensions."
        )
    if key == "other_base":
        return (
            f"The same formula with base n = {format_number(v.n)} (seed 003 uses 1,000,000): wavelengths run "
            f"from 2π to about 2π·n, so a model trained with one base reads another's slow pairs as "
            "other positions."
        )
    if key == "offset":
        return (
            f"Positions counted from {v.start} instead of 0 (e.g. an off-by-one from 1-based positions, "
            f"or a cache that restarts): row r holds PE({v.start} + r). Pair i is rotated by "
            f"{v.start}·ω_i, so the fast pairs differ most; every row is a valid encoding, of the wrong "
            "position."
        )
    raise ValueError(f"unknown variant {key!r}.")


# ----------------------------------------------------------------------------------------
# Drawing both variants and their difference
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnBlocks:
    """Drawn column c is the mean of raw columns ``order[edges[c]:edges[c+1]]``.

    Both variants are averaged over the same raw columns, so the difference map is exact.
    ``pair_edges`` (same layout, runs of pairs as pe_core.column_groups) or ``col_edges``
    (layouts differ: runs of raw columns) say how, for the reproduce snippet.
    """

    order: np.ndarray
    edges: np.ndarray
    labels: list[str]
    ticks: list[int]
    pair_edges: np.ndarray | None
    col_edges: np.ndarray | None

    def reduce(self, values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values[:, self.order], self.edges[:-1], axis=1) / np.diff(self.edges)


def column_blocks(
    d: int, layout_a: str, layout_b: str, max_cols: int, *, order: np.ndarray | None = None
) -> ColumnBlocks:
    """How the d columns are drawn on at most ``max_cols`` columns.

    Same layout: runs of pairs' sines or cosines (as every other page draws an encoding);
    ``order`` says where the layout's column c is in the matrix drawn (column ``order[c]``: a
    table with each pair's cosine first has ``pe_core.swapped_columns``), by default in place.
    Different layouts disagree on which columns are sines, so runs of raw columns are averaged.
    """
    if d <= max_cols:
        columns = np.arange(d)
        return ColumnBlocks(columns, np.arange(d + 1), [f"column j = {j}" for j in columns], list(columns), None, None)
    if layout_a != layout_b:
        edges = pe_core.block_edges(d, max_cols)
        labels = [f"columns j = {a}..{b - 1} (mean of {b - a})" for a, b in pairwise(edges)]
        return ColumnBlocks(np.arange(d), edges, labels, [int(a) for a in edges[:-1]], None, edges)
    is_sine, first, last = pe_core.column_groups(d, layout_a, max_cols)
    m = (d + 1) // 2
    runs, edges, labels, ticks = [], [0], [], []
    for sine, a, b in zip(is_sine, first, last, strict=True):
        pairs = np.arange(a, b + 1)
        raw = (2 * pairs + (0 if sine else 1)) if layout_a == "interleaved" else (pairs if sine else m + pairs)
        raw = raw if order is None else order[raw]
        runs.append(raw)
        edges.append(edges[-1] + raw.size)
        kind = "sin" if sine else "cos"
        labels.append(f"columns j = {raw[0]}..{raw[-1]} ({kind} of pairs {a}..{b})")
        ticks.append(int(raw[0]))
    return ColumnBlocks(
        np.concatenate(runs), np.asarray(edges), labels, ticks, np.r_[first[is_sine], m], None
    )


@dataclass(frozen=True)
class Comparison:
    """Both variants and A - B as drawn (block means), and the largest |A - B| of the full matrix."""

    values_a: np.ndarray
    values_b: np.ndarray
    difference: np.ndarray
    row_edges: np.ndarray
    columns: ColumnBlocks
    max_abs: float  # over every cell of the full L x d matrices
    max_row: int
    max_col: int

    @property
    def row_labels(self) -> list[str]:
        return [
            f"row r = {a}" if b - a == 1 else f"rows r = {a}..{b - 1} (mean of {b - a})"
            for a, b in pairwise(self.row_edges)
        ]

    @property
    def is_reduced(self) -> bool:
        return self.difference.shape != (int(self.row_edges[-1]), int(self.columns.order.size))


def _row_block_means(v: Variant, L: int, d: int, max_rows: int) -> np.ndarray:
    """Means of blocks of rows of the variant, every raw column kept (closed form)."""
    return pe_core.encoding_block_average(
        L, d, v.n, layout=v.layout, convention=v.convention, start=v.start, max_rows=max_rows, max_cols=max(d, 2)
    ).values


#: Largest |position| for which the float32 screen below holds every position exactly.
SCREEN_MAX_POSITION = 2**24
#: Slack of the screen's bound: the float32 sums and differences that apply it round too.
_SCREEN_SLACK = 2.0**-20


@functools.lru_cache(maxsize=4)
def _float32_frequencies(d: int, n: float, convention: str) -> np.ndarray:
    """``pe_core.frequencies`` rounded to float32 (read-only): made once for every block of a screen."""
    w = pe_core.frequencies(d, n, convention).astype(np.float32)
    w.setflags(write=False)
    return w


def _float32_cells(v: Variant, first: int, d: int, out: np.ndarray) -> np.ndarray:
    """Rows first .. first+len(out)-1 of the variant into ``out``, from float32 angles and float32 sin/cos."""
    w = _float32_frequencies(d, v.n, v.convention)
    k = (v.start + first + np.arange(out.shape[0])).astype(np.float32)
    theta = np.multiply.outer(k, w)
    sines, cosines = pe_core.sine_cosine_columns(d, v.layout)
    np.sin(theta, out=out[:, sines])
    np.cos(theta[:, : d // 2], out=out[:, cosines])
    return out


def _screen_error(v: Variant, L: int, d: int) -> np.ndarray:
    r"""Per column j, a bound on |float32 cell - exact cell| over the positions of ``v``.

    With K the largest |position|: k is exact in float32 (K <= 2^24), :math:`\omega` and the
    product :math:`k\omega` are each rounded once (relative 2^-24), so the angle is off by at
    most :math:`2^{-23}(1 + 2^{-23}) K \omega_j`; NumPy's float32 sin and cos are within 4 ulp
    (4 x 2^-24 for values of at most 1); the exact cell is within 2^-40 of the true value.
    """
    K = max(abs(v.start), abs(v.start + L - 1))
    pair, _ = pe_core.column_pairs(d, v.layout)
    w = pe_core.frequencies(d, v.n, v.convention)[pair]
    return 2.0**-23 * (1 + 2.0**-23) * K * w + 4 * 2.0**-24 + 2.0**-40


#: Largest |position| for which the shift screen below holds every midpoint k + (s_a + s_b)/2 exactly in float32.
SHIFT_SCREEN_MAX_POSITION = 2**22


def _shift_amplitudes(a: Variant, b: Variant, d: int) -> np.ndarray:
    r"""Per pair i, :math:`c_i = 2|\sin((s_a - s_b)\,\omega_i / 2)|`, the largest |A - B| the pair can show
    (read-only: made once for every block of a screen)."""
    return _amplitudes_of_shift(d, a.n, a.convention, a.start - b.start)


@functools.lru_cache(maxsize=4)
def _amplitudes_of_shift(d: int, n: float, convention: str, shift: int) -> np.ndarray:
    amplitudes = 2 * np.abs(np.sin(shift * pe_core.frequencies(d, n, convention) / 2))
    amplitudes.setflags(write=False)
    return amplitudes


def _float32_shift_gaps(a: Variant, b: Variant, first: int, d: int, out: np.ndarray) -> np.ndarray:
    r"""|A - B| on rows first .. first+len(out)-1 of one encoding from two starts (same frequencies and layout).

    Each pair's two cells differ in closed form: with :math:`h = (s_a + s_b)/2` and
    :math:`c_i = 2|\sin((s_a - s_b)\omega_i/2)|`,

    .. math::

        |\sin((k + s_a)\omega_i) - \sin((k + s_b)\omega_i)| = c_i\,|\cos((k + h)\,\omega_i)|, \qquad
        |\cos((k + s_a)\omega_i) - \cos((k + s_b)\omega_i)| = c_i\,|\sin((k + h)\,\omega_i)|:

    one sine and one cosine a pair instead of two of each, from float32 angles.
    """
    w = _float32_frequencies(d, a.n, a.convention)
    # k + h is a whole or half number below 2^22: exact in float32.
    k = (first + np.arange(out.shape[0]) + (a.start + b.start) / 2).astype(np.float32)
    theta = np.multiply.outer(k, w)
    amplitude = _shift_amplitudes(a, b, d).astype(np.float32)
    sines, cosines = pe_core.sine_cosine_columns(d, a.layout)
    half = d // 2
    for columns, trig, pairs in ((sines, np.cos, slice(None)), (cosines, np.sin, slice(0, half))):
        cells = out[:, columns]
        trig(theta[:, pairs], out=cells)
        np.abs(cells, out=cells)
        np.multiply(cells, amplitude[pairs], out=cells)
    return out


def _shift_screen_error(a: Variant, b: Variant, L: int, d: int) -> np.ndarray:
    r"""Per column j, a bound on |_float32_shift_gaps - |A - B|| over the positions, as ``_screen_error``'s.

    With K the largest |k + h|: the angle is off by at most :math:`2^{-23}(1 + 2^{-23}) K \omega_j` (k + h
    exact, :math:`\omega` and the product rounded once each), float32 sin and cos by 4 ulp; :math:`c_j` is
    rounded to float32 (relative 2^-24) and the product once more (2^-23 for a value of at most 2); each of
    the two exact cells is within 2^-40 of the true value.
    """
    half_sum = (a.start + b.start) / 2
    K = max(abs(half_sum), abs(L - 1 + half_sum))
    pair, _ = pe_core.column_pairs(d, a.layout)
    w = pe_core.frequencies(d, a.n, a.convention)[pair]
    amplitude = _shift_amplitudes(a, b, d)[pair]
    angle = 2.0**-23 * (1 + 2.0**-23) * K * w
    return amplitude * (1 + 2.0**-23) * (angle + 5 * 2.0**-24) + 2.0**-23 + 2.0**-37 + 2 * 2.0**-40


def _exact_gaps(a: Variant, b: Variant, rows: np.ndarray, cols: np.ndarray, d: int) -> np.ndarray:
    """|A - B| at the cells (rows, cols), each value bit for bit positional_encoding's."""
    values = []
    for v in (a, b):
        pair, is_sine = pe_core.column_pairs(d, v.layout)
        w = pe_core.frequencies(d, v.n, v.convention)
        sin, cos = pe_core.sin_cos_of_products((v.start + rows).astype(np.float64), w[pair[cols]])
        values.append(np.where(is_sine[cols], sin, cos))
    return np.abs(values[0] - values[1])


def max_difference(a: Variant, b: Variant, L: int, d: int, max_cells: int) -> tuple[float, int, int]:
    r"""Largest |A - B| over the full L x d matrices and its (row, column): the first such
    cell in row order, as ``np.argmax`` over the whole difference would give.

    Exact without building A and B in float64. Both are first built in float32 (float32
    angles, float32 sin and cos: a tenth of the cost), at most ``max_cells`` cells of each at
    once, giving G~ = |A~ - B~| and a bound :math:`\epsilon_j` on |G~ - G| per column j
    (``_screen_error``). Then :math:`M = \max(\tilde G - \epsilon)` is at most the true maximum,
    and a cell with :math:`\tilde G + \epsilon_j < M` is below it: only the cells with
    :math:`\tilde G + \epsilon_j \ge M` (a handful, unless A and B agree almost everywhere)
    are computed exactly, with pe_core's own arithmetic. Identical variants differ nowhere.
    One encoding from two starts (same frequencies and layout) is screened from its gaps in
    closed form (``_float32_shift_gaps``, bound ``_shift_screen_error``): half the sines and cosines.
    """
    rows_per_block = max(1, max_cells // d)
    same_frequencies = np.array_equal(
        pe_core.frequencies(d, a.n, a.convention), pe_core.frequencies(d, b.n, b.convention)
    )
    same_angles = same_frequencies and a.start == b.start
    largest_position = max(abs(v.start) + L for v in (a, b))
    if same_angles and a.layout == b.layout:
        return 0.0, 0, 0
    if largest_position > SCREEN_MAX_POSITION:
        return _max_difference_in_float64(a, b, L, d, rows_per_block)
    # One encoding from two starts (the page's offset variant against the sidebar's): its gaps in closed form.
    shifted = same_frequencies and a.layout == b.layout and largest_position <= SHIFT_SCREEN_MAX_POSITION
    # Written in place, block after block: fresh memory costs more than the arithmetic here. B's cells only
    # where B is built.
    cells_a = np.empty((min(rows_per_block, L), d), dtype=np.float32)
    cells_b = None if shifted else np.empty_like(cells_a)
    if shifted:
        error = (_shift_screen_error(a, b, L, d) + _SCREEN_SLACK).astype(np.float32)
    else:
        error = (_screen_error(a, L, d) + _screen_error(b, L, d) + _SCREEN_SLACK).astype(np.float32)
    # The same angles in another column order (the sidebar's layout against the other one): B's float32
    # cells are A's sines and cosines, in B's columns, and are computed once.
    moves = (tuple(zip(pe_core.sine_cosine_columns(d, b.layout), pe_core.sine_cosine_columns(d, a.layout), strict=True))
             if same_angles else None)

    def block_gaps(first: int, count: int) -> np.ndarray:
        """The float32 |A - B| of ``count`` rows from ``first``, in cells_a."""
        if shifted:
            return _float32_shift_gaps(a, b, first, d, cells_a[:count])
        gap = _float32_cells(a, first, d, cells_a[:count])
        if moves is None:
            other = _float32_cells(b, first, d, cells_b[:count])
        else:
            other = cells_b[:count]
            for b_columns, a_columns in moves:
                other[:, b_columns] = gap[:, a_columns]
        return np.abs(np.subtract(gap, other, out=gap), out=gap)

    lower = -np.inf
    kept_rows, kept_cols = [], []
    for first in range(0, L, rows_per_block):
        count = min(rows_per_block, L - first)
        gap = block_gaps(first, count)
        lower = max(lower, float((gap.max(axis=0) - error).max()))
        # The running lower bound only grows: a cell dropped here is below the final one too.
        rows, cols = true_cells(gap >= np.float32(lower) - error)
        kept_rows.append(rows + first)
        kept_cols.append(cols)
    rows, cols = np.concatenate(kept_rows), np.concatenate(kept_cols)
    exact = np.concatenate([
        _exact_gaps(a, b, rows[i : i + max_cells], cols[i : i + max_cells], d)
        for i in range(0, rows.size, max_cells)
    ])
    best = int(np.argmax(exact))  # cells are in row order: the first of equal maxima
    return float(exact[best]), int(rows[best]), int(cols[best])


def _max_difference_in_float64(a: Variant, b: Variant, L: int, d: int, rows: int) -> tuple[float, int, int]:
    """max_difference by building both matrices, ``rows`` rows at a time (positions beyond the screen)."""
    best, where = -1.0, (0, 0)
    for first in range(0, L, rows):
        count = min(rows, L - first)
        blocks = [
            pe_core.positional_encoding(
                count, d, v.n, layout=v.layout, convention=v.convention, start=v.start + first
            )
            for v in (a, b)
        ]
        gap = np.abs(blocks[0] - blocks[1])
        flat = int(np.argmax(gap))
        if gap.flat[flat] > best:
            best = float(gap.flat[flat])
            where = (first + flat // d, flat % d)
    return best, where[0], where[1]


def compare(a: Variant, b: Variant, L: int, d: int, *, max_rows: int, max_cols: int, max_cells: int) -> Comparison:
    """Variants a and b reduced to at most max_rows x max_cols, their difference, and its maximum.
    Its arrays are read-only: the page shares one Comparison between every session that asks for it."""
    row_edges = pe_core.block_edges(L, max_rows)
    columns = column_blocks(d, a.layout, b.layout, max_cols)
    values_a = columns.reduce(_row_block_means(a, L, d, max_rows))
    values_b = columns.reduce(_row_block_means(b, L, d, max_rows))
    largest, row, col = max_difference(a, b, L, d, max_cells)
    comparison = Comparison(values_a, values_b, values_a - values_b, row_edges, columns, largest, row, col)
    for array in (*vars(comparison).values(), *vars(columns).values()):
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
    return comparison


# ----------------------------------------------------------------------------------------
# Reproduce: both variants with explicit formulas, and their difference as drawn
# ----------------------------------------------------------------------------------------


def _variant_line(name: str, v: Variant, note: str) -> str:
    return (
        f'{name} = encoding(n={float(v.n)!r}, convention="{v.convention}", layout="{v.layout}", '
        f"start={v.start})  # {note}\n"
    )


def difference_code(a: Variant, b: Variant, L: int, d: int, comparison: Comparison, labels: tuple[str, str]) -> str:
    """Standalone NumPy code: both variants, A - B, and the drawn block means bound to ``result``."""
    code = (
        f"# Conventions and pitfalls: A = {labels[0]} minus B = {labels[1]}\n"
        "import numpy as np\n\n"
        f"L, d = {L}, {d}\n"
        "i = np.arange((d + 1) // 2)  # pair index\n"
        + reproduce.sin_cos_code()
        + "def encoding(n, convention, layout, start):\n"
        '    """Rows start .. start+L-1 of the sinusoidal encoding."""\n'
        '    if convention == "paper":\n'
        "        w = n ** (-2 * i / d)  # ω_i = n^(-2i/d)\n"
        "    else:\n"
        "        w = n ** (-i / max(len(i) - 1, 1))  # tensor2tensor: ω_i = n^(-i/(m-1)), slowest 1/n\n"
        "    sines, cosines = sin_cos(np.arange(start, start + L, dtype=np.float64)[:, None], w)\n"
        '    if layout == "concatenated":\n'
        "        return np.concatenate([sines, cosines[:, : d // 2]], axis=1)  # [sin | cos]\n"
        "    P = np.empty((L, d))\n"
        "    P[:, 0::2] = sines  # interleaved: sin, cos, sin, cos, ...\n"
        "    P[:, 1::2] = cosines[:, : d // 2]\n"
        "    return P\n\n\n"
        + _variant_line("A", a, labels[0])
        + _variant_line("B", b, labels[1])
        + "difference = A - B\n"
        "row, col = np.unravel_index(np.abs(difference).argmax(), difference.shape)  # the first largest\n\n"
        "# What the page draws: block means over rows (and runs of columns), the same blocks for A and B\n"
        "shown = difference\n"
    )
    edges = comparison.row_edges
    if edges.size - 1 < int(edges[-1]):
        code += f"rows = np.round(np.linspace(0, {int(edges[-1])}, {edges.size})).astype(int)\n"
        code += "shown = np.add.reduceat(shown, rows[:-1], axis=0) / np.diff(rows)[:, None]\n"
    columns = comparison.columns
    if columns.col_edges is not None:
        code += f"cols = np.round(np.linspace(0, d, {columns.col_edges.size})).astype(int)\n"
        code += "shown = np.add.reduceat(shown, cols[:-1], axis=1) / np.diff(cols)[None, :]\n"
    elif columns.pair_edges is not None:
        pairs = columns.pair_edges
        code += f"pairs = np.round(np.linspace(0, {int(pairs[-1])}, {pairs.size})).astype(int)  # runs of pairs\n"
        if a.layout == "interleaved":
            code += "S, C = shown[:, 0::2], shown[:, 1::2]  # sines and cosines are averaged apart\n"
        else:
            code += "S, C = shown[:, : d // 2], shown[:, d // 2 :]  # sines and cosines are averaged apart\n"
        code += (
            "S = np.add.reduceat(S, pairs[:-1], axis=1) / np.diff(pairs)[None, :]\n"
            "C = np.add.reduceat(C, pairs[:-1], axis=1) / np.diff(pairs)[None, :]\n"
        )
        if a.layout == "interleaved":
            code += "shown = np.empty((S.shape[0], 2 * S.shape[1]))\nshown[:, 0::2], shown[:, 1::2] = S, C\n"
        else:
            code += "shown = np.concatenate([S, C], axis=1)\n"
    code += 'result = {"pitfalls_difference": shown}  # the download of the difference map\n'
    every, where, drawn = METRIC_LABELS
    return code + reproduce.numbers_code(
        {every: ("np.abs(difference).max()", ".6g"), where: ("(row, col)", ","), drawn: ("np.abs(shown).max()", ".6g")}
    )


#: The labels of the comparison's numbers (the page's metrics, the snippet's printed numbers).
METRIC_LABELS = ("max |A - B| (every cell)", "where", "max |A - B| drawn (block means)")


# ----------------------------------------------------------------------------------------
# Checking an uploaded matrix
# ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UploadCheck:
    """What the checker found: the verdict of identify_encoding and, when a variant fits or
    nearly fits, the upload minus the rebuilt variant (positions down), reduced as drawn."""

    shape: tuple[int, ...]
    result: dict
    notes: tuple[str, ...] = ()  # what reading the file took (Upload.notes)
    difference: np.ndarray | None = None
    row_edges: np.ndarray | None = None
    columns: ColumnBlocks | None = None

    @property
    def rebuilt(self) -> Variant | None:
        """The variant that fits, or the closest one fitted to a near miss; None if none was fitted."""
        r = self.result
        if r["closest_convention"] is None:
            return None
        return Variant(r["layout"], r["closest_convention"], r["n"] if r["n"] is not None else 10000.0, r["start"])

    @property
    def rebuilt_description(self) -> str | None:
        """The rebuilt variant in words, with its column order when each pair's cosine comes first."""
        rebuilt = self.rebuilt
        if rebuilt is None:
            return None
        return rebuilt.describe() + (", cosine first in each pair" if self.result["swapped"] else "")

    @property
    def layout_metric(self) -> tuple[str, str]:
        """The layout's metric box as the page shows it, (label, value): the label says when
        each pair's cosine comes first, as the verdict does (a value that long would be cut)."""
        layout = self.result["layout"]
        if layout is None:
            return "layout", "-"
        if self.result["swapped"]:
            return ("layout, cosine first" if layout == "interleaved" else "layout, cosines first"), layout
        return "layout", layout

    @property
    def rotary(self) -> bool:
        """Whether the upload is what a rotary model holds (or nearly), which the Rotary page's checker reads."""
        return uploads.is_rotary(self.result)

    @property
    def rotary_note(self) -> str | None:
        """What the page says of a rotary upload: what it is, or for a near miss the reading's own verdict,
        and that the Rotary page's checker reads it; None for any other upload (Markdown, no user text)."""
        r = self.result
        if not self.rotary:
            return None
        if r["kind"] is None:
            return (f"{r['verdict']} Its columns pair up as a rotary table's, not as a sinusoidal encoding's: the "
                    "Rotary page's checker reads what a rotary model holds.")
        facts = [f"d = {r['d']}"] + ([f"{r['layout']} layout"] if r["layout"] else [])
        facts += [] if r["n"] is None else [f"base {number(r['n'])}"]
        return (f"A {uploads.KIND_NAMES[r['kind']]}: what a rotary model holds, not a sinusoidal encoding "
                f"({', '.join(facts)}). The Rotary page's checker reads it whole, its scaling and attention "
                "factor too.")

    @property
    def set_aside(self) -> tuple[list[int], list[int]]:
        """The all-zero rows (padding positions) and filler columns identify_encoding set aside,
        positions down as drawn: those rows are drawn as 0 (the library's table is zero there
        too) and those columns are left out."""
        r = self.result
        return (r["zero_columns"], r["zero_rows"]) if r["transposed"] else (r["zero_rows"], r["zero_columns"])

    @property
    def set_aside_note(self) -> str | None:
        """A caption for the difference map when zeros were set aside, else None."""
        rows, columns = self.set_aside
        parts = [f"row r = {', '.join(map(str, rows))} drawn as 0"] if rows else []
        parts += [f"column j = {', '.join(map(str, columns))} left out"] if columns else []
        return f"Set aside, all zeros in your matrix (see the verdict): {'; '.join(parts)}." if parts else None


def check_upload(
    name: str, data: bytes, *, max_cells: int, grid: Callable[[int, int], tuple[int, int]] = heatmap_grid
) -> UploadCheck:
    """Load, identify and, when a variant fits, compare the upload with it (row blocks of at
    most ``max_cells`` rebuilt cells at once), drawn on ``grid(L, d)`` = (rows, columns) for
    its L positions and d columns. A 1-D vector or a complex table, which are no encoding matrix,
    are read as a rotary model holds them (inv_freq, freqs_cis), and named if they are.
    Raises ValueError as ``uploads.read_matrix``."""
    try:
        upload = uploads.read_matrix(name, data)
    except ValueError:
        rotary = _rotary_upload(name, data)
        if rotary is None:
            raise
        return rotary
    matrix = upload.matrix
    result = pe_core.identify_encoding(matrix)
    check = UploadCheck(matrix.shape, result, upload.notes)
    rebuilt = check.rebuilt
    if rebuilt is None:
        return check
    zero_rows, filler_columns = check.set_aside
    positions_down = matrix.T if result["transposed"] else matrix
    # The filler column is the last one, so the variant's columns keep their indices.
    A = positions_down[:, : positions_down.shape[1] - len(filler_columns)]
    L, d = A.shape
    max_rows, max_cols = grid(L, d)
    # A table with each pair's cosine first is compared with the variant's columns in that order.
    order = pe_core.swapped_columns(d, rebuilt.layout) if result["swapped"] else None
    columns = column_blocks(d, rebuilt.layout, rebuilt.layout, max_cols, order=order)
    rows = max(1, max_cells // d)
    reduced = []
    for first in range(0, L, rows):
        count = min(rows, L - first)
        P = pe_core.positional_encoding(
            count, d, rebuilt.n, layout=rebuilt.layout, convention=rebuilt.convention, start=rebuilt.start + first
        )
        # The library's table is zero on its padding rows, as the upload is.
        P[[row - first for row in zero_rows if first <= row < first + count]] = 0.0
        reduced.append(columns.reduce(A[first : first + count] - (P if order is None else P[:, order])))
    row_edges = pe_core.block_edges(L, max_rows)
    reduced = np.concatenate(reduced)
    difference = pe_core.block_average(reduced, row_edges, np.arange(reduced.shape[1] + 1))
    return replace(check, difference=difference, row_edges=row_edges, columns=columns)


def _rotary_upload(name: str, data: bytes) -> UploadCheck | None:
    """The check of a file the matrix reading refuses when it is what a rotary model holds (an
    inv_freq, a complex freqs_cis), else None."""
    try:
        [array] = uploads.read_arrays(name, data, suffixes=(".npy", ".csv"))
        result = pe_core.identify_encoding(array.values)
    except ValueError:
        return None
    if result["kind"] not in uploads.ROTARY_KINDS:
        return None
    return UploadCheck(array.values.shape, result, array.notes)


def example_npy() -> bytes:
    """Seed 002's buggy matrix (L=50, d=128: base 10000 squared) as .npy."""
    buffer = io.BytesIO()
    np.save(buffer, pe_core.positional_encoding(50, 128, 10000.0**2), allow_pickle=False)
    return buffer.getvalue()


def example_csv() -> bytes:
    """Seed 001's layout and frequencies (concatenated, tensor2tensor, L=50, d=128) rounded
    to float16, as .csv with a header row (written exactly, so float16 is recognisable)."""
    P = pe_core.positional_encoding(50, 128, layout="concatenated", convention="tensor2tensor").astype(np.float16)
    table = pd.DataFrame(P.astype(np.float64), columns=[f"dim{j}" for j in range(P.shape[1])])
    return table.to_csv(index=False, float_format="%.17g").encode()
