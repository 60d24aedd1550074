"""Seed 000's four criteria for a positional encoding, measured for given settings.

Seed 000 asks that an encoding (1) be unique for each position, (2) keep the distance
between two positions consistent across sentences of different lengths, (3) generalise to
longer sentences with bounded values, and (4) be deterministic. Each function here
measures one of them with a number, for the sinusoidal encoding of the given settings,
and says in one sentence what it found. Pure: no Streamlit, so every number is tested.

Memory stays bounded at the largest settings (L=16384, d=2048): the full L x d matrix is
never held at once, and no L x L matrix is ever built.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import pe_core
from explorer.settings import Settings

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


@dataclass(frozen=True)
class Measurement:
    """One criterion measured: the number, whether it passes, and why, in one sentence."""

    key: str
    title: str
    label: str
    value: float
    passed: bool
    reason: str


def _positions(count: int) -> str:
    return "1 position" if count == 1 else f"the {count:,} positions"


def _encoding(length: int, d: int, n: float, layout: str, convention: str, start: int = 0) -> np.ndarray:
    return pe_core.positional_encoding(length, d, n, layout=layout, convention=convention, start=start)


def _closest_pair_direct(P: np.ndarray) -> tuple[float, int]:
    """Smallest Euclidean distance between two distinct rows of P, and their offset.

    Walks the offsets, so memory is O(L*d) and nothing assumes the distance depends only
    on the offset (true for even d, not for odd d).
    """
    best, best_offset = math.inf, 0
    for offset in range(1, P.shape[0]):
        diff = P[offset:] - P[:-offset]
        smallest = float(np.einsum("kj,kj->k", diff, diff).min())
        if smallest < best:
            best, best_offset = smallest, offset
    return math.sqrt(best), best_offset


def _closest_pair_by_offset(L: int, d: int, n: float, convention: str) -> tuple[float, int]:
    """Same as ``_closest_pair_direct`` for even d, from the closed form SSE(delta).

    For even d, ||P[k] - P[k+delta]||^2 = d - 2 sum_i cos(w_i delta) for every k and either
    layout, so the closest pair is at the offset 1..L-1 of smallest SSE.
    """
    pairs = max(d // 2, 1)
    step = max(1, CHUNK_CELLS // pairs)
    best, best_offset = math.inf, 0
    for first in range(1, L, step):
        offsets = np.arange(first, min(first + step, L), dtype=np.float64)
        # Rounding can make d - 2 sum cos a hair negative when the true SSE is ~0.
        sse = np.maximum(pe_core.sse_by_offset(offsets, d, n, convention), 0.0)
        i = int(np.argmin(sse))
        if sse[i] < best:
            best, best_offset = float(sse[i]), int(offsets[i])
    return math.sqrt(best), best_offset


def unique(L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper") -> Measurement:
    """Unique per position: the smallest distance between the encodings of two positions."""
    title, label = "Unique per position", "smallest distance between two positions"
    if L < 2:
        return Measurement(
            "unique", title, label, math.inf, True, "Only one position: there is no pair to tell apart."
        )
    if L * L * d <= DIRECT_PAIRS_CELLS or d % 2:
        distance, offset = _closest_pair_direct(_encoding(L, d, n, layout, convention))
        how = "every pair of rows compared"
    else:
        distance, offset = _closest_pair_by_offset(L, d, n, convention)
        how = f"closed form over offsets 1..{L - 1:,}"
    passed = distance >= UNIQUE_MIN_DISTANCE
    verdict = "every position has its own code" if passed else "two positions are indistinguishable"
    reason = (
        f"The closest two of {_positions(L)} are {offset:,} apart, at distance {distance:.6g} "
        f"({how}); {verdict} (threshold {UNIQUE_MIN_DISTANCE:g})."
    )
    return Measurement("unique", title, label, distance, passed, reason)


def consistent_distance(
    L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper"
) -> Measurement:
    """Consistent distance: ||P[k+1] - P[k]|| is the same inside the sentence and beyond it.

    The positions L.. are what a longer sentence adds, so comparing the step there with the
    step at 0.. compares sentences of different lengths.
    """
    rows = min(L, WINDOW) + 1
    steps = []
    for start in (0, L):
        P = _encoding(rows, d, n, layout, convention, start=start)
        steps.append(np.linalg.norm(np.diff(P, axis=0), axis=1))
    step = np.concatenate(steps)
    spread = float(np.max(np.abs(step - step[0])))
    passed = spread <= CONSISTENT_TOLERANCE
    reason = (
        f"||P[k+1] - P[k]|| = {step[0]:.10g} for k = 0..{rows - 2:,} and k = {L:,}..{L + rows - 2:,} "
        f"(a sentence longer than L); largest difference {spread:.3g} "
        f"({'rounding only' if passed else 'the step depends on where it is'})."
    )
    return Measurement(
        "consistent", "Consistent distance", "largest change of the offset-1 distance", spread, passed, reason
    )


def bounded(L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper") -> Measurement:
    """Bounded: the largest |value| over all L positions and at position 10**7."""
    rows = max(1, CHUNK_CELLS // d)
    largest = 0.0
    for start in range(0, L, rows):
        largest = max(largest, float(np.abs(_encoding(min(rows, L - start), d, n, layout, convention, start)).max()))
    far = float(np.abs(_encoding(1, d, n, layout, convention, FAR_POSITION)).max())
    value = max(largest, far)
    passed = value <= 1.0
    reason = (
        f"Largest |P[k, j]| is {largest:.6g} over {_positions(L)} and {far:.6g} at position "
        f"{FAR_POSITION:,}, far beyond any trained length (an integer position would be {FAR_POSITION:,})."
    )
    return Measurement("bounded", "Bounded, generalises", "largest |value|, up to k = 10^7", value, passed, reason)


def deterministic(
    L: int, d: int, n: float, layout: str = "interleaved", convention: str = "paper"
) -> Measurement:
    """Deterministic: two computations of the same positions are bit for bit identical."""
    rows = min(L, WINDOW)
    starts = sorted({0, max(L - rows, 0), FAR_POSITION})
    differing = 0
    for start in starts:
        first = _encoding(rows, d, n, layout, convention, start)
        second = _encoding(rows, d, n, layout, convention, start)
        differing += int(np.count_nonzero(first.view(np.uint64) != second.view(np.uint64)))
    passed = differing == 0
    reason = (
        f"Positions 0..{rows - 1:,}, the last {rows:,} and {rows:,} from {FAR_POSITION:,} computed twice: "
        f"{differing:,} of {len(starts) * rows * d:,} values differ in any bit (no randomness, no learned table)."
    )
    return Measurement("deterministic", "Deterministic", "values that differ between two runs", float(differing),
                       passed, reason)


def evaluate(settings: Settings) -> tuple[Measurement, ...]:
    """All four criteria of seed 000 for the settings, in seed 000's order."""
    args = (settings.L, settings.d, settings.n, settings.layout, settings.convention)
    return unique(*args), consistent_distance(*args), bounded(*args), deterministic(*args)
