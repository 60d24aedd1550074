"""Seed 000's four criteria for a positional encoding, measured for given settings.

Seed 000 asks that an encoding (1) be unique for each position, (2) keep the distance
between two positions consistent across sentences of different lengths, (3) generalise to
longer sentences with bounded values, and (4) be deterministic. Each function here
measures one of them with a number, for the sinusoidal encoding of the given settings,
and says in one sentence what it found. Pure: no Streamlit, so every number is tested.

The ``*_of`` functions measure the same criteria, and two more (defined beyond the
trained length, a shift that is a fixed linear map), for any encoding scheme given as
``rows(start, count, length)``; the Criteria scorecard compares schemes with them.

Shared by two topics: Home (explorer.topics.home) shows the four criteria for the
sidebar's settings, the Criteria scorecard (explorer.topics.scorecard) compares schemes.

Memory stays bounded at the largest settings (L=16384, d=2048): the full L x d matrix is
never held at once, and no L x L matrix is ever built.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import pe_core
from explorer.arrays import true_cells
from explorer.settings import L_MAX

#: Two positions closer than this (Euclidean distance of their encodings) count as one:
#: float32, in which models usually add the encoding, resolves about 1e-7 per value.
UNIQUE_MIN_DISTANCE = 1e-6
#: Largest change of the offset-1 distance along the positions that is still rounding.
CONSISTENT_TOLERANCE = 1e-9
#: A position far beyond any trained length, where the encoding must still be bounded.
FAR_POSITION = 10**7
#: Positions compared in the consistency and determinism checks (from each start).
WINDOW = 256
#: The direct (all pairs) uniqueness check runs when L * L * d is at most this.
DIRECT_PAIRS_CELLS = 2**22
#: Cells computed at a time when a check walks all L positions (16 MB of float64).
CHUNK_CELLS = 2**21
#: Angles ``sinusoid_largest_abs`` screens at a time (2 MiB of float64 in each of its arrays): below
#: the server's mmap threshold (explorer.ui.startup), so they stay in the heap, made once. With
#: CHUNK_CELLS the screen's fresh 16 MB arrays were mapped and faulted in anew each time: 108 ms
#: at L=16384, d=2048, 26 ms now (benchmarks/JOURNAL.md, "2026-11-29, 04:05-05:05").
SCREEN_CELLS = 2**18
#: A shift map passes if it misses by at most this, relative to the largest |value| (or 1).
SHIFT_TOLERANCE = 1e-9


#: The title each criterion is shown under (Home's metrics, and its snippet's printed numbers).
TITLES = {
    "unique": "Unique per position",
    "consistent": "Consistent distance",
    "bounded": "Bounded, generalises",
    "deterministic": "Deterministic",
}


@dataclass(frozen=True)
class Measurement:
    """One criterion measured: the number, whether it passes, and why, in one sentence."""

    key: str
    title: str
    label: str
    value: float
    passed: bool
    reason: str


#: A scheme's codes: ``rows(start, count, length)`` is positions start..start+count-1 of a
#: sentence of ``length`` positions, shape (count, width); see "any encoding scheme" below.
Rows = Callable[[int, int, int], np.ndarray]


class NoCodeError(LookupError):
    """The scheme has no code for a position (a learned table beyond its trained length)."""


def _positions(count: int) -> str:
    return "1 position" if count == 1 else f"the {count:,} positions"


def _first_positions(count: int) -> str:
    """'position 0' or 'positions 0..count-1'."""
    return "position 0" if count == 1 else f"positions 0..{count - 1:,}"


def _encoding(length: int, d: int, n: float, layout: str, convention: str, start: int = 0) -> np.ndarray:
    return pe_core.positional_encoding(length, d, n, layout=layout, convention=convention, start=start)


#: pe_core's encoding: the closed-form maximum (``sinusoid_largest_abs``) holds for it, and
#: ``bounded`` uses it only while ``_encoding`` is this function (tests feed other encodings).
_PE_CORE_ENCODING = _encoding


def _closest_pair_direct(P: np.ndarray) -> tuple[float, int]:
    r"""Smallest Euclidean distance between two distinct rows of P, and their offset.

    Walks the offsets, so memory is O(L*d) and nothing assumes the distance depends only
    on the offset (true for even d, not for odd d). One monotone column (integer or scaled
    positions) needs offset 1 only: :math:`|v_{k+o} - v_k| \ge |v_{k+1} - v_k|` for every k
    and o >= 1, and rounding the difference and its square keeps that order, so no later
    offset would be strictly closer. Only the offsets that ``_closest_offsets`` cannot rule out
    are walked: the same numbers, each offset's distances computed as the walk over all of them
    computes them (the learned table's 334 rows of d = 300: 2.4 ms instead of 12.8; an odd d's
    2048 positions: 35 ms instead of 440).
    """
    if P.shape[1] == 1 and P.shape[0] > 1:
        steps = np.diff(P[:, 0])
        if np.all(steps >= 0) or np.all(steps <= 0):
            diff = P[1:] - P[:-1]
            return math.sqrt(float(np.einsum("kj,kj->k", diff, diff).min())), 1
    offsets = _closest_offsets(P) if P.shape[0] > 2 else None
    best, best_offset = math.inf, 0
    for offset in range(1, P.shape[0]) if offsets is None else offsets.tolist():
        diff = P[offset:] - P[:-offset]
        smallest = float(np.einsum("kj,kj->k", diff, diff).min())
        if smallest < best:
            best, best_offset = smallest, offset
    return math.sqrt(best), best_offset


#: Pairs ``_closest_offsets`` estimates at a time (2 MiB of float64).
SCREEN_PAIRS = 2**18


def _closest_offsets(P: np.ndarray) -> np.ndarray | None:
    r"""The offsets o at which some pair P[k], P[k+o] may be the closest of all, ascending (None:
    values too large or not finite to screen, walk every offset).

    Every squared distance is estimated from the Gram matrix, :math:`\lVert a\rVert^2 +
    \lVert b\rVert^2 - 2\,a \cdot b` (BLAS: d multiply-adds a pair in its fastest loop, where the
    walk subtracts, squares and sums d values, array by array). In floating point the estimate and the walk's
    :math:`\sum_j (a_j - b_j)^2` are each within :math:`5\gamma_{d+2} (\lVert a\rVert^2 +
    \lVert b\rVert^2)` of the true value (:math:`\gamma_m = m u/(1 - m u)`, u = 2^-53, any
    order of summation), so they differ by less than ``margin`` = :math:`16 (d+2) u \cdot 2
    \max_k \lVert P_k\rVert^2` (plus underflow's absolute error). An offset whose smallest
    estimate is more than twice that above the smallest estimate of all has, in the walk's
    arithmetic, a smallest distance strictly above the walk's minimum: it cannot be the first
    offset to reach it.
    """
    rows, width = P.shape
    squares = np.einsum("kj,kj->k", P, P)
    largest = float(squares.max())
    if not math.isfinite(largest) or largest > 1e300:
        return None
    margin = 16.0 * (width + 2) * 2.0**-53 * 2.0 * largest + 2.0**-1000
    smallest = np.full(rows, np.inf)  # smallest[o]: the smallest estimate at offset o
    block = max(1, min(rows - 1, SCREEN_PAIRS // rows))
    for first in range(0, rows - 1, block):
        count, later = min(block, rows - 1 - first), rows - first
        # Row i of the block against rows first.. (column c), laid out with a row stride of one
        # more than the rows' width: column o of the skewed view is offset o = c - i (padding: inf).
        width_padded = later + count
        skewed = np.full(count * (width_padded + 1), np.inf)
        estimate = skewed[: count * width_padded].reshape(count, width_padded)[:, :later]
        np.add(squares[first : first + count, None], squares[None, first:], out=estimate)
        estimate -= 2.0 * (P[first : first + count] @ P[first:].T)
        by_offset = skewed.reshape(count, width_padded + 1)[:, 1:later].min(axis=0)
        np.minimum(smallest[1:later], by_offset, out=smallest[1:later])
    return np.flatnonzero(smallest <= smallest[1:].min() + 2.0 * margin)


def _closest_pair_by_offset(L: int, d: int, n: float, convention: str) -> tuple[float, int]:
    """Same as ``_closest_pair_direct`` for even d, from the closed form SSE(delta).

    For even d, ||P[k] - P[k+delta]||^2 = d - 2 sum_i cos(w_i delta) for every k and either
    layout, so the closest pair is at the offset 1..L-1 of smallest SSE.
    """
    if L <= L_MAX:
        sse = _sse_by_offset_up_to_max(d, n, convention)[: L - 1]
    else:
        sse = _sse_by_offset(1, L, d, n, convention)
    i = int(np.argmin(sse))
    return math.sqrt(float(sse[i])), i + 1


def _sse_by_offset(first: int, stop: int, d: int, n: float, convention: str) -> np.ndarray:
    """The closed-form SSE at the offsets first .. stop-1, in chunks of bounded memory."""
    step = max(1, CHUNK_CELLS // max(d // 2, 1))
    parts = [
        pe_core.sse_by_offset(np.arange(start, min(start + step, stop), dtype=np.float64), d, n, convention)
        for start in range(first, stop, step)
    ]
    # Rounding can make d - 2 sum cos a hair negative when the true SSE is ~0.
    return np.maximum(np.concatenate(parts), 0.0)


@functools.lru_cache(maxsize=32)
def _sse_by_offset_up_to_max(d: int, n: float, convention: str) -> np.ndarray:
    """The SSE at offsets 1 .. L_MAX-1 (128 KB), once per (d, n, convention): it does not
    depend on L, so moving the L slider reads a prefix instead of 16383 x 1024 cosines.
    Each value is computed exactly as at any other length (one offset per row). 32 entries
    (4 MB): a class with its own settings (about 16 sessions on Home and the Scorecard, each its
    own d) keeps each session's table from its first run to its L moves; 8 were evicted."""
    sse = _sse_by_offset(1, L_MAX, d, n, convention)
    sse.flags.writeable = False
    return sse


def _unique_measurement(distance: float, offset: int, L: int, how: str) -> Measurement:
    title, label = TITLES["unique"], "smallest distance between two positions"
    passed = distance >= UNIQUE_MIN_DISTANCE
    verdict = "every position has its own code" if passed else "two positions are indistinguishable"
    reason = (
        f"The closest two of {_positions(L)} are {offset:,} apart, at distance {distance:.6g} "
        f"({how}); {verdict} (threshold {UNIQUE_MIN_DISTANCE:g})."
    )
    return Measurement("unique", title, label, distance, passed, reason)


def _single_position() -> Measurement:
    return Measurement(
        "unique", TITLES["unique"], "smallest distance between two positions", math.inf, True,
        "Only one position: there is no pair to tell apart.",
    )


def unique(L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper") -> Measurement:
    """Unique per position: the smallest distance between the encodings of two positions."""
    if L < 2:
        return _single_position()
    if L * L * d <= DIRECT_PAIRS_CELLS or d % 2:
        distance, offset = _closest_pair_direct(_encoding(L, d, n, layout, convention))
        how = "every pair of rows compared"
    else:
        distance, offset = _closest_pair_by_offset(L, d, n, convention)
        how = f"closed form over offsets 1..{L - 1:,}"
    return _unique_measurement(distance, offset, L, how)


def closest_pair_of(rows: Rows, count: int, length: int) -> tuple[float, int]:
    """The smallest distance between two of positions 0..count-1 of a sentence of ``length``
    positions (every pair compared), and their offset."""
    return _closest_pair_direct(rows(0, count, length))


def unique_of(
    rows: Rows, L: int, *, sample: int | None = None, closest_pair: Callable[[int], tuple[float, int]] | None = None
) -> Measurement:
    """Unique per position, for any scheme: every pair among positions 0..sample-1 compared.

    With ``sample`` < L the smallest distance over all L positions can only be smaller.
    ``closest_pair(count)``, if given, is ``closest_pair_of`` for positions 0..count-1,
    measured instead of reading ``rows`` (a scheme whose pairs do not depend on L caches it).
    """
    if L < 2:
        return _single_position()
    count = L if sample is None else max(2, min(L, sample))
    distance, offset = closest_pair_of(rows, count, L) if closest_pair is None else closest_pair(count)
    if count == L:
        how = "every pair of rows compared"
    else:
        how = f"every pair among positions 0..{count - 1:,}, sampled of the {L:,}"
    return _unique_measurement(distance, offset, L, how)


def _sinusoid_rows(d: int, n: float, layout: str, convention: str) -> Rows:
    # Looks _encoding up at every call, so that a test can swap the encoding.
    return lambda start, count, length: _encoding(count, d, n, layout, convention, start)


def consistent_distance(
    L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper"
) -> Measurement:
    """Consistent distance: ||P[k+1] - P[k]|| is the same in a sentence of L and of 2L positions."""
    return consistent_of(_sinusoid_rows(d, n, layout, convention), L)


def bounded(L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper") -> Measurement:
    """Bounded: the largest |value| over all L positions and at position 10**7."""
    encoding = _encoding  # looked up now, so that a test can swap it
    largest_abs = None
    if encoding is _PE_CORE_ENCODING:
        def largest_abs(ranges: Sequence[tuple[int, int]]) -> float:
            return sinusoid_largest_abs(ranges, d, n, convention)

    m = bounded_of(_sinusoid_rows(d, n, layout, convention), L, d, far=FAR_POSITION, largest_abs=largest_abs)
    return dataclasses.replace(m, label="largest |value|, up to k = 10^7")


#: How far (rad) an angle k·ω_i must be from every multiple of π/2 for its sine and cosine
#: to be surely below 1 in magnitude: cos(0.99e-6) < 1 - 4.9e-13, and pe_core's values are
#: within a few ulp (1e-15) of the true ones.
NEAR_AXIS = 1e-6
#: Every cell farther than NEAR_AXIS from the axes is below this (see sinusoid_largest_abs).
OFF_AXIS_LARGEST = 1.0 - 4e-13
#: Largest |position| for which the screen's angles are accurate enough: the quarter turns
#: k·fl(2ω/π), rounded, are within 4e-9 of the exact ones (1% of the margin).
SCREEN_MAX_POSITION = 2**24


def sinusoid_largest_abs(ranges: Sequence[tuple[int, int]], d: int, n: float, convention: str) -> float:
    r"""max |P[k, j]| over the positions k of the ``(first, count)`` ranges, bit for bit the maximum
    of the matrix that ``pe_core.positional_encoding`` builds (either layout: the same values).

    :math:`|\sin\theta|` and :math:`|\cos\theta|` reach 1 only at multiples of :math:`\pi/2`: a
    cell whose angle :math:`k\omega_i` is at least :math:`\eta` = NEAR_AXIS from every one of them has

    .. math:: |P[k, j]| \le \cos(0.99\,\eta) + \text{a few ulp} < 1 - 4\times 10^{-13}

    (0.99: the screen's own rounding, at most 1% of :math:`\eta` for positions up to 2^24).

    So the angles are screened in quarter turns, :math:`t = k\omega_i \cdot 2/\pi`, keeping the
    cells with :math:`|t - \operatorname{rint}(t)| \le 2\eta/\pi` (about one in a million, and
    the first positions of the slowest pairs), and only those are computed, with pe_core's own
    arithmetic (``sin_cos_of_products``). When their maximum is above the bound (always once
    k = 0 is read: cos 0 = 1 exactly), it is the maximum of the whole matrix; otherwise every
    cell is computed. The screen costs a few multiplications per cell instead of a sine and
    a cosine, SCREEN_CELLS at a time in arrays made once.
    """
    w = pe_core.frequencies(d, n, convention)
    quarter_turns = w * (2.0 / np.pi)
    cosine_pairs = d // 2  # an odd d's last pair is a lone sine
    best = -np.inf
    if max(max(abs(first), abs(first + count - 1)) for first, count in ranges) <= SCREEN_MAX_POSITION:
        rows = max(1, min(SCREEN_CELLS // w.size, max(count for _, count in ranges)))  # no larger than a range
        turns, whole, near = np.empty((rows, w.size)), np.empty((rows, w.size)), np.empty((rows, w.size), dtype=bool)
        for first, count in ranges:
            for start in range(first, first + count, rows):
                k = np.arange(start, min(start + rows, first + count), dtype=np.float64)
                t, r, m = turns[: k.size], whole[: k.size], near[: k.size]
                np.multiply.outer(k, quarter_turns, out=t)
                np.subtract(t, np.rint(t, out=r), out=t)
                np.less_equal(np.abs(t, out=t), NEAR_AXIS * (2.0 / np.pi), out=m)
                near_row, near_pair = true_cells(m)
                if near_row.size:
                    sin, cos = pe_core.sin_cos_of_products(k[near_row], w[near_pair])
                    values = np.maximum(np.abs(sin), np.where(near_pair < cosine_pairs, np.abs(cos), 0.0))
                    best = max(best, float(values.max()))
    if best >= OFF_AXIS_LARGEST:
        return best
    rows = max(1, CHUNK_CELLS // w.size)
    return max(
        (float(np.abs(pe_core.positional_encoding(min(rows, first + count - start), d, n, convention=convention,
                                                  start=start)).max())
         for first, count in ranges for start in range(first, first + count, rows)),
        default=0.0,
    )


def deterministic(
    L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper"
) -> Measurement:
    """Deterministic: two computations of the same positions are bit for bit identical."""
    rows = min(L, WINDOW)
    starts = sorted({0, max(L - rows, 0), FAR_POSITION})
    return deterministic_of(_sinusoid_rows(d, n, layout, convention), L, starts=starts, count=rows)


# ------------------------------------------------------------------- any encoding scheme
#
# The same criteria for any scheme (integer positions, positions scaled to [0, 1], binary
# codes, a learned table), so that the Criteria scorecard compares schemes with one set of
# measurements. A scheme is ``rows(start, count, length)``: the codes of positions
# start..start+count-1 in a sentence of ``length`` positions, shape (count, width). The
# sentence length matters to positions scaled to [0, 1] (k / (length - 1)); a scheme with
# no code for a position (a learned table beyond its trained length) raises NoCodeError.


def _offset_distances(rows: Rows, start: int, pairs: int, length: int, offset: int) -> np.ndarray:
    """||P[k+offset] - P[k]|| for k = start .. start+pairs-1, in a sentence of ``length`` positions."""
    if pairs <= 0:
        return np.zeros(0)
    P = rows(start, pairs + offset, length)
    diff = P[offset:] - P[:-offset]
    return np.sqrt(np.einsum("kj,kj->k", diff, diff))


def _span(values: np.ndarray) -> str:
    """One number if the values agree to rounding, else their range."""
    low, high = float(values.min()), float(values.max())
    return f"{values[0]:.10g}" if high - low <= CONSISTENT_TOLERANCE else f"{low:.6g} to {high:.6g}"


def _k_range(start: int, count: int) -> str:
    return f"k = {start:,}" if count == 1 else f"k = {start:,}..{start + count - 1:,}"


def consistent_of(rows: Rows, L: int, *, offset: int = 1, window: int = WINDOW) -> Measurement:
    """Same distance for the same offset, in a sentence of L and in one of 2L positions.

    Compared: ||P[k+offset] - P[k]|| for the first ``window`` k of the sentence of L, and in
    the sentence of 2L (at least L + 2 offset) for its first ``window`` k and for the
    ``window`` k from L-offset on, whose pairs reach the positions the longer sentence adds.
    Fewer than two distances give nothing to compare: NaN, not passed.
    """
    title, label = TITLES["consistent"], f"largest change of the offset-{offset} distance"
    name = f"||P[k+{offset}] - P[k]||"
    longer = max(2 * L, L + 2 * offset)  # at least two pairs, even for a one-position sentence
    inside = _offset_distances(rows, 0, min(L - offset, window), L, offset)
    groups = [inside]
    try:
        first = _offset_distances(rows, 0, min(longer - offset, window), longer, offset)
        added_start = max(L - offset, first.size)  # the window from 0 may already reach them
        added = _offset_distances(rows, added_start, min(longer - offset - added_start, window), longer, offset)
    except NoCodeError:
        in_longer = f"cannot be measured at L={longer:,}: there is no code beyond position {L - 1:,}"
    else:
        groups += [first, added]
        longer_span = _span(np.concatenate([first, added]))
        where = _k_range(0, first.size) + (f" and {_k_range(added_start, added.size)}" if added.size else "")
        in_longer = f"{longer_span} at L={longer:,} ({where}, reaching the positions a longer sentence adds)"
    if inside.size:
        measured = f"{name} is {_span(inside)} at L={L:,} ({_k_range(0, inside.size)}) and {in_longer}"
    elif len(groups) > 1:  # a sentence too short for one pair: the longer one is compared with itself
        measured = (
            f"A sentence of L={L:,} has no two positions {offset} apart, so {name} is measured in one of "
            f"L={longer:,} instead: {longer_span} for {where}"
        )
    else:
        measured = f"{name} is not defined at L={L:,} (no two positions {offset} apart) and {in_longer}"
    distances = np.concatenate(groups)
    if distances.size < 2:
        pairs = "1 pair" if distances.size == 1 else f"{distances.size} pairs"
        return Measurement("consistent", title, label, math.nan, False,
                           f"{measured}: {pairs} only, nothing to compare.")
    spread = float(np.ptp(distances))
    passed = spread <= CONSISTENT_TOLERANCE
    verdict = "rounding only" if passed else "the distance depends on the length or on where it is measured"
    reason = f"{measured}; largest difference {spread:.3g} ({verdict})."
    return Measurement("consistent", title, label, spread, passed, reason)


def _ranges_text(ranges: Sequence[tuple[int, int]], L: int) -> str:
    if len(ranges) == 1 and ranges[0] == (0, L):
        return _positions(L)
    shown = " and ".join(f"{first:,}..{first + count - 1:,}" for first, count in ranges)
    return f"positions {shown} (sampled, of {L:,})"


def bounded_of(
    rows: Rows, L: int, width: int, *, far: int, ranges: Sequence[tuple[int, int]] | None = None,
    largest_abs: Callable[[Sequence[tuple[int, int]]], float] | None = None,
) -> Measurement:
    """Bounded: the largest |value| over the positions (all, or the ``(first, count)`` ranges)
    and at position ``far``, far beyond the sentence. It passes if the value there is no
    larger than inside the sentence (or than 1): the values do not grow with the position.

    The positions are read in chunks of CHUNK_CELLS values; ``largest_abs(ranges)``, if given,
    measures them instead of ``rows`` (a scheme whose maximum has a cheaper exact form).
    """
    ranges = [(0, L)] if ranges is None else list(ranges)
    if largest_abs is None:
        chunk = max(1, CHUNK_CELLS // max(width, 1))
        largest = 0.0
        for first, count in ranges:
            for start in range(first, first + count, chunk):
                largest = max(largest, float(np.abs(rows(start, min(chunk, first + count - start), L)).max()))
    else:
        largest = largest_abs(ranges)
    where = _ranges_text(ranges, L)
    try:
        far_value = float(np.abs(rows(far, 1, far + 1)).max())
    except NoCodeError:
        passed = math.isfinite(largest)
        reason = f"Largest |value| is {largest:.6g} over {where}; there is no code at position {far:,} to check."
        return Measurement("bounded", TITLES["bounded"], "largest |value|", largest, passed, reason)
    passed = far_value <= max(largest, 1.0)
    verdict = "it does not grow with the position" if passed else "it grows with the position, without bound"
    reason = f"Largest |value| is {largest:.6g} over {where} and {far_value:.6g} at position {far:,}: {verdict}."
    return Measurement(
        "bounded", TITLES["bounded"], f"largest |value|, up to k = {far:,}", max(largest, far_value), passed,
        reason,
    )


def deterministic_of(
    rows: Rows, L: int, *, starts: Sequence[int], count: int, again: Rows | None = None
) -> Measurement:
    """Deterministic: ``count`` positions from each start computed twice, compared bit for bit:
    by ``rows``, then by ``again`` (by default ``rows`` itself; a scheme that keeps the rows it
    computed, as the Criteria scorecard's sinusoid does, passes a ``rows`` that computes them anew)."""
    again = rows if again is None else again
    differing = total = 0
    for start in starts:
        length = max(L, start + count)
        first = np.ascontiguousarray(rows(start, count, length), dtype=np.float64)
        second = np.ascontiguousarray(again(start, count, length), dtype=np.float64)
        differing += int(np.count_nonzero(first.view(np.uint64) != second.view(np.uint64)))
        total += first.size
    passed = differing == 0
    where = ", ".join(f"{start:,}" if count == 1 else f"{start:,}..{start + count - 1:,}" for start in starts)
    positions = "Position" if len(starts) == 1 and count == 1 else "Positions"
    values = "the 1 value differs" if total == 1 else f"{total:,} values differ"
    reason = f"{positions} {where} computed twice: {differing:,} of {values} in any bit."
    return Measurement(
        "deterministic", TITLES["deterministic"], "values that differ between two runs", float(differing), passed,
        reason,
    )


def defined_beyond_of(rows: Rows, L: int, *, probes: Sequence[int], width: int) -> Measurement:
    """Defined beyond the trained length L: the positions ``probes`` (all >= L) have a code.

    The value is the first probed position without a code (inf when all have one). A code
    wider than the trained one (``width`` columns; binary needs more bits) is defined, and
    said so.
    """
    title, label = "Defined beyond the trained length", "first position without a code"
    trained_width = width
    widths: dict[int, int] = {}
    for k in sorted(probes):
        try:
            widths[k] = rows(k, 1, k + 1).shape[1]
        except NoCodeError:
            reason = (
                f"No code for position {k:,}: the scheme has codes for {_first_positions(k)} only, so a "
                f"sentence longer than L={L:,} cannot be encoded."
            )
            return Measurement("defined", title, label, float(k), False, reason)
    shown = ", ".join(f"{k:,}" for k in widths)
    last = max(widths)
    if widths[last] != trained_width:
        note = (
            f"; but position {last:,} needs {widths[last]} columns where "
            + f"{_first_positions(L)} need{'s' if L == 1 else ''}"
            + f" {trained_width}: an input of fixed size cannot take it"
        )
    else:
        note = f", with the same {trained_width:,} column{'s' if trained_width > 1 else ''}"
    reason = f"Positions {shown} (beyond L={L:,}) have a code{note}."
    return Measurement("defined", title, label, math.inf, True, reason)


def least_squares_image(X: np.ndarray, Y: np.ndarray, fit: int) -> np.ndarray:
    """X @ M for the least-squares M of smallest norm with X[:fit] @ M ~ Y[:fit]: M = pinv(X[:fit]) Y[:fit].

    The product is associated so that the width x width matrix M is formed only when it is
    no larger than the fit: O(rows x fit x width) either way, never O(width^3).
    """
    pinv = np.linalg.pinv(X[:fit])
    return X @ (pinv @ Y[:fit]) if fit >= X.shape[1] else (X @ pinv) @ Y[:fit]


def linear_shift_of(
    rows: Rows,
    L: int,
    *,
    offset: int,
    fit: int,
    test: int,
    known_map: Callable[[np.ndarray], np.ndarray] | None = None,
    map_name: str = "",
) -> Measurement:
    """A shift is a fixed linear map: one matrix M with P[k] M = P[k+offset] for every k.

    Without ``known_map``, M is the least-squares fit on the pairs k = 0..fit-1 and is then
    tested on the next ``test`` pairs: with fewer rows than columns a fit is always exact,
    so only pairs it was not fitted on can tell a real map from an overfit one. With
    ``known_map`` (the sinusoid's M(offset)), every pair k = 0..fit+test-1 is a test.
    """
    title, label = "Shift is a fixed linear map", f"largest |P[k] M - P[k+{offset}]|"
    pairs = L - offset
    fit, test = min(fit, pairs // 2), min(test, pairs - min(fit, pairs // 2))
    if fit < 1 or test < 1:
        reason = (
            f"Only {max(pairs, 0)} pair(s) of positions {offset} apart in {_positions(L)}: too few to fit "
            "a map on some and test it on others."
        )
        return Measurement("shift", title, label, math.nan, False, reason)
    P = rows(0, fit + test + offset, L)
    X, Y = P[: fit + test], P[offset : offset + fit + test]
    scale = max(1.0, float(np.abs(Y).max()))
    if known_map is not None:
        value = float(np.abs(known_map(X) - Y).max())
        passed = value <= SHIFT_TOLERANCE * scale
        reason = (
            f"P[k] M({offset}) against P[k+{offset}], with {map_name}: largest error {value:.2e} over "
            f"{_k_range(0, fit + test)}"
        )
    else:
        errors = np.abs(least_squares_image(X, Y, fit) - Y)
        fit_error, test_error = float(errors[:fit].max()), float(errors[fit:].max())
        value = max(fit_error, test_error)
        passed = value <= SHIFT_TOLERANCE * scale
        reason = (
            f"The best linear map M (least squares on {_k_range(0, fit)}) misses P[k+{offset}] by up to "
            f"{fit_error:.3g} on those pairs and {test_error:.3g} on {_k_range(fit, test)}, which it was not "
            "fitted on"
        )
    verdict = "one fixed matrix shifts every position" if passed else f"no fixed matrix maps P[k] to P[k+{offset}]"
    return Measurement("shift", title, label, value, passed, f"{reason}: {verdict}.")
