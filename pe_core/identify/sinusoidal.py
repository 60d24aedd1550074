r"""Which variant of the sinusoidal encoding is a given matrix? (page "Conventions and pitfalls")

Every variant this module knows is, for a matrix of L positions and d dimensions,

.. math::

    \sin((s + k)\,\omega_i), \quad \cos((s + k)\,\omega_i), \qquad
    \omega_i = e^{-a i}, \quad k = 0 .. L-1, \quad i = 0 .. m-1, \quad m = \lceil d/2 \rceil,

with the columns in one of two layouts (interleaved or concatenated), possibly transposed,
from a whole start position s. Both conventions are the same family of straight lines
:math:`\ln\omega_i = -a i`:

- paper with base n: :math:`a = 2\ln(n)/d`;
- tensor2tensor with base n': :math:`a = \ln(n')/(m-1)`;

so a paper matrix with base n *is* a tensor2tensor matrix with base
:math:`n' = n^{2(m-1)/d}`, and seed 002's loop (``10000 ** (2*i/d)`` with i already
stepping by 2, i.e. exponent 4j/d) is the paper formula with base :math:`10000^2 = 10^8`.
The matrix alone gives a; which reading was meant is decided by which base is "rounder".

The estimation, for each orientation and layout:

1. Pair the columns: :math:`z_{k,i} = C_{k,i} + \mathrm{i}\,S_{k,i}` (cosine + i sine).
   A true encoding has :math:`|z| = 1`; the median of :math:`|S^2 + C^2 - 1|` picks the
   orientation and layout (and rejects random values, constants, values out of [-1, 1]).
   It cannot tell which column of a pair is the sine: a table with the cosine first has
   :math:`z = \mathrm{i}\,e^{-\mathrm{i}\theta}`, phases running backwards, and is fitted
   again with each pair's columns traded.
2. Phase increments :math:`z_{k+1,i}\,\bar z_{k,i} = e^{\mathrm{i}\omega_i}` (no aliasing:
   :math:`\omega_i \le 1 < \pi`) unwrap the phase along the rows; its least-squares slope is
   :math:`\omega_i`. Since the noise of the slopes is absolute, :math:`\ln\omega_i` has
   variance :math:`\propto \omega_i^{-2}`: a weighted fit of :math:`\ln\omega_i = -a i`
   (weights :math:`\omega_i^2`) starts Gauss-Newton on :math:`\sum_i (\omega_i - e^{-a i})^2`.
3. The start: demodulating each pair at the central row :math:`k_c` gives
   :math:`\theta_i = (s + k_c)\,\omega_i \bmod 2\pi`. Going from the slowest pair to the
   fastest, each pair narrows :math:`s + k_c` (a short list of candidates where the slowest
   phase has wrapped); s must be a whole number.
4. With s known, the absolute phases :math:`(s + k)\,\omega_i` refine a by Gauss-Newton.
5. Readings: a gives the paper base, the tensor2tensor base and the root r of a `2*i`
   bug (paper base r^2). Each is "snapped" to its shortest decimal form within 5 standard
   errors of a (the data say how many digits are known), and also rounded to 1 and 2
   significant digits; the first, in order of fewest digits, then closest to 1, 2 or 5
   times a power of ten, then the paper, that rebuilds the fitted rows as well as the
   estimate wins. A round base (1 or 2 digits) rebuilds as well when round-off explains its
   error: float32 rounds -ln(n)/d, which moves every frequency alike, so the estimate can
   fit a float32 table better than the base its author wrote, and for an even d the paper's
   10000 and tensor2tensor's 8659.64 give the same frequencies. The bug is only a reading
   for a round r, and is preferred for r = 10000. The arithmetic the values may come from
   is read from the values (``pe_core.value_precision``): a float32 table reads the same
   from a .npy file and from a CSV of its printed digits.
6. Verification: rebuild with ``positional_encoding`` and measure the largest
   :math:`|M - P|` on every row. It is a match only within the round-off of the format
   the values are stored in (the coarsest of bfloat16, float16, float32, p decimals or s
   significant digits that holds them all, else float64), or of a float32 computation:
   twice the largest cast error (:math:`2^{-9}` for bfloat16, :math:`2^{-12}` for float16,
   :math:`2^{-25}` for float32), plus 64 units of round-off per unit of the largest |position|, because
   an angle :math:`k\,\omega_i \le |k|` is rounded relative to its size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np

from pe_core._validate import LAYOUTS, MAX_POSITION, check_matrix
from pe_core.encoding import positional_encoding, swapped_columns
from pe_core.identify.rotary import identify_rotary, with_rotary_keys
from pe_core.value_precision import CAST_ERROR, FLOAT32_UNIT, ValuePrecision, value_precision
from pe_core.wording import number

#: At most this many rows (and this many complex cells) enter the fit; every row is verified.
FIT_ROWS = 4096
FIT_CELLS = 2**20
#: Rows on which the circle test chooses orientation and layout.
CIRCLE_ROWS = 256
#: Largest median |S^2 + C^2 - 1| of a layout that is still tried (bfloat16 gives ~4e-3).
CIRCLE_TOLERANCE = 0.05
#: Rows of the rebuilt encoding compared at once: bounded memory at any size.
VERIFY_CELLS = 2**20
#: Candidate start positions kept while the slowest pairs are still ambiguous; when the
#: start found with the first number does not fit, the search is repeated with the second.
MAX_START_CANDIDATES = 2**12
#: Candidates a branching pair may make of them at once (each candidate times the wraps that fit
#: it); past it, the cheapest candidates that fit are followed. A step costs a few passes over
#: them: 2**22 made a 33 x 201 table take 37 s.
MAX_BRANCHES = 2**16
WIDE_START_CANDIDATES = 2**17
#: No tolerance is looser than this: beyond it a "match" would say nothing.
MAX_TOLERANCE = 1e-2
#: All-zero rows set aside as padding rows (fairseq zeroes its padding index's row): at most
#: this many, and at most a quarter of the rows. An encoding's row is never all zero (each
#: pair has sin^2 + cos^2 = 1), so these cells hold no variant's values; many zero rows would
#: leave too little to verify, and a table that is mostly zeros is no encoding.
MAX_ZERO_ROWS = 2

# ----------------------------------------------------------------------------------------
# Round-off: how far the precision the values carry (pe_core.value_precision) can move them.
# ----------------------------------------------------------------------------------------


def _tolerance(cast_error: float, compute_unit: float, max_position: float) -> float:
    """Largest |M - P| that round-off explains: the cast, plus angles rounded near |k| w <= |k|."""
    return min(2.0 * cast_error + 64.0 * compute_unit * (1.0 + max_position), MAX_TOLERANCE)


def _stored_tolerance(precision: ValuePrecision, max_position: float) -> float:
    """_tolerance of the format the values are stored in (and the arithmetic it implies)."""
    return _tolerance(precision.cast_error, precision.compute_unit, max_position)


def _precision_of(error: float, precision: ValuePrecision, max_position: float) -> str | None:
    """The stored format if its round-off explains ``error``, else float32 if it does, else None."""
    if error <= _stored_tolerance(precision, max_position):
        return precision.name
    # Values stored in float64 may still come from a float32 computation.
    if error <= _tolerance(CAST_ERROR["float32"], FLOAT32_UNIT, max_position):
        return "float32"
    return None


# ----------------------------------------------------------------------------------------
# Layouts: which columns are the sines and cosines of each pair.
# ----------------------------------------------------------------------------------------


def _pair_columns(d: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Sine and cosine columns of the d // 2 complete pairs (odd d: the lone sine is left out)."""
    pairs = np.arange(d // 2)
    if layout == "interleaved":
        return 2 * pairs, 2 * pairs + 1
    return pairs, (d + 1) // 2 + pairs


def _phasors(A: np.ndarray, layout: str, rows: int) -> np.ndarray:
    """z = cos + i sin of every complete pair, on the first ``rows`` rows."""
    sines, cosines = _pair_columns(A.shape[1], layout)
    return A[:rows, cosines] + 1j * A[:rows, sines]


def _fit_rows(A: np.ndarray) -> int:
    return int(min(A.shape[0], FIT_ROWS, max(256, FIT_CELLS // max(A.shape[1] // 2, 1))))


def _circle_deviation(A: np.ndarray, layout: str) -> float:
    """Median |S^2 + C^2 - 1| over the pairs: 0 for an encoding in this layout."""
    z = _phasors(A, layout, min(_fit_rows(A), CIRCLE_ROWS))
    return float(np.median(np.abs(z.real**2 + z.imag**2 - 1.0)))


# ----------------------------------------------------------------------------------------
# The fit: frequencies, then the start, then the frequencies again from absolute phases.
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Variant:
    layout: str
    convention: str
    n: float
    start: int
    transposed: bool
    swapped: bool = False  # each pair's cosine comes first (pe_core.swapped_columns)


@dataclass
class _Outcome:
    variant: _Variant
    error: float
    where: tuple[int, int, float, float]  # row, column (of A), value, expected
    reading: str | None  # "paper", "tensor2tensor" or "bug"; None: n unknown or no fit
    readings: dict
    n_spread: float  # relative uncertainty of n allowed by the round-off
    start_ambiguous: bool
    problem: str | None  # why the fit failed, if it did
    length: int  # number of positions
    cells: int  # number of values
    mismatches: int  # values beyond the round-off of the stored format (-1: not counted)
    search_bound: float = math.inf  # starts were searched within +-search_bound
    zero_rows: tuple[int, ...] = ()  # all-zero rows of A set aside (padding rows), not verified
    filler_column: int | None = None  # A's all-zero last column, set aside: the variant is narrower
    runs_backwards: bool = False  # the first pair turns by -1 rad per row: maybe each pair's cosine first


def _slopes(z: np.ndarray, sigma_floor: float) -> tuple[np.ndarray, float]:
    """Least-squares slope of the unwrapped phase of each pair, and the phase noise per row."""
    rows = z.shape[0]
    increments = np.angle(z[1:] * np.conj(z[:-1]))
    theta = np.angle(z[0]) + np.concatenate([np.zeros((1, z.shape[1])), np.cumsum(increments, axis=0)])
    centred = np.arange(rows) - (rows - 1) / 2.0
    slope = centred @ theta / (centred @ centred)
    if rows > 2:
        residual = theta - theta.mean(axis=0) - np.multiply.outer(centred, slope)
        noise = math.sqrt(float(np.mean(residual**2)) * rows / (rows - 2))
    else:
        noise = 0.0
    return slope, max(noise, sigma_floor)


def _fit_rate(slope: np.ndarray, slope_noise: float) -> tuple[float | None, float]:
    """The rate a of w_i = exp(-a i) from the pairs' slopes, and its standard error."""
    i = np.arange(slope.size, dtype=np.float64)
    usable = (i >= 1) & (slope > 5.0 * slope_noise) & (slope < 1.5)
    if not np.any(usable):
        return None, math.inf
    weights = slope[usable] ** 2
    a = -float(np.sum(weights * i[usable] * np.log(slope[usable])) / np.sum(weights * i[usable] ** 2))
    if not math.isfinite(a) or a <= 0:
        return None, math.inf

    def cost(rate: float) -> float:
        return float(np.sum((slope - np.exp(-rate * i)) ** 2))

    # Gauss-Newton on sum (w_i - exp(-a i))^2: equal weights, as the slopes' noise is absolute.
    for _ in range(50):
        w = np.exp(-a * i)
        jacobian = -i * w
        curvature = float(jacobian @ jacobian)
        if curvature == 0.0:
            break
        step = float(jacobian @ (slope - w)) / curvature
        trial = a + step
        while (trial <= 0 or cost(trial) > cost(a)) and abs(step) > 1e-18:
            step /= 2.0
            trial = a + step
        if trial <= 0 or cost(trial) > cost(a):
            break
        a = trial
        if abs(step) <= 1e-15 * a:
            break
    jacobian = -i * np.exp(-a * i)
    curvature = float(jacobian @ jacobian)
    return a, (slope_noise / math.sqrt(curvature) if curvature > 0 else math.inf)


def _find_centre_position(
    phase: np.ndarray, w: np.ndarray, phase_noise: float, rate_error: float, max_candidates: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, bool]:
    """Candidates for x = s + k_c from phase_i = x w_i (mod 2 pi).

    Slowest pair first: it leaves candidates 2 pi / w apart; each faster pair either
    refines every candidate (when its uncertainty times w is well below pi) or branches it
    into the few wraps that fit, and the chi-square cost prunes the ones that disagree.

    Returns the candidates' values, variances and costs, the bound B of the search
    (|x| <= B), and whether B was set by ``max_candidates`` (a larger one would search further).
    """
    index = np.arange(w.size, dtype=np.float64)
    # A pair slower than 1e-12 rad/position barely turns at any allowed position.
    order = [int(j) for j in np.argsort(w) if w[j] > 1e-12] if phase_noise < 0.5 else []
    if not order:
        return np.zeros(1), np.full(1, math.inf), np.zeros(1), 0.0, False

    def variance(pair: np.ndarray | int, x: np.ndarray) -> np.ndarray:
        # Phase noise, the error of the model frequency (s + k_c) * i * da, and float64 round-off of x.
        return (phase_noise / w[pair]) ** 2 + (np.abs(x) * (index[pair] * rate_error + 2.0**-50)) ** 2

    first = order[0]
    # Beyond |x| = 0.5 / (max_i i w_i * da) the frequencies are too uncertain to place x:
    # the search stops there, and at MAX_START_CANDIDATES wraps of the slowest pair.
    reach_of_rate = 0.5 / (float(np.max(index * w)) * rate_error) if rate_error > 0 else math.inf
    by_candidates = max_candidates * math.pi / w[first]
    bound = min(float(MAX_POSITION), by_candidates, reach_of_rate)
    limited = bound == by_candidates
    bound = min(max(bound, math.pi / w[first]), float(MAX_POSITION))  # at least one candidate
    low = math.ceil((-bound * w[first] - phase[first]) / (2 * math.pi))
    high = math.floor((bound * w[first] - phase[first]) / (2 * math.pi))
    x = (phase[first] + 2 * math.pi * np.arange(low, high + 1)) / w[first]
    if x.size == 0:
        # The slowest pair never reaches its phase within |x| <= MAX_POSITION: no position fits
        # this reading (a wrong layout tried, say); the verification that follows rejects it.
        return np.zeros(1), np.full(1, math.inf), np.zeros(1), bound, limited
    var = variance(first, x)
    cost = np.zeros_like(x)
    position = 1
    while position < len(order):
        spread = 4.0 * math.sqrt(float(np.max(var)))
        largest = float(np.max(np.abs(x)))
        pair = order[position]
        rest = np.array(order[position:])
        reach = 4.0 * np.sqrt(np.max(var) + variance(rest, np.array([largest]))) * w[rest]
        chunk = int(np.argmin(reach < 1.0)) if not np.all(reach < 1.0) else rest.size
        chunk = min(chunk, max(1, (2**22) // max(x.size, 1)))
        if chunk >= 1 and reach[0] < 1.0:
            # No wrap is in doubt: unwrap these pairs at once, nearest wrap for each.
            pairs = rest[:chunk]
            wraps = np.rint((np.multiply.outer(x, w[pairs]) - phase[pairs]) / (2 * math.pi))
            estimates = (phase[pairs] + 2 * math.pi * wraps) / w[pairs]
            pair_var = variance(pairs, x[:, None])
            cost = cost + np.sum((estimates - x[:, None]) ** 2 / (var[:, None] + pair_var), axis=1)
            precision = 1.0 / var + np.sum(1.0 / pair_var, axis=1)
            x = (x / var + np.sum(estimates / pair_var, axis=1)) / precision
            var = 1.0 / precision
            position += chunk
        else:
            # The wrap of this pair is in doubt for some candidates: branch into every wrap that fits.
            pair_var = variance(pair, x)
            half = spread + 4.0 * np.sqrt(pair_var)
            low_wrap = np.ceil(((x - half) * w[pair] - phase[pair]) / (2 * math.pi))
            high_wrap = np.floor(((x + half) * w[pair] - phase[pair]) / (2 * math.pi))
            nearest = np.rint((x * w[pair] - phase[pair]) / (2 * math.pi))
            low_wrap = np.minimum(low_wrap, nearest)
            high_wrap = np.maximum(high_wrap, nearest)
            counts = (high_wrap - low_wrap + 1).astype(np.int64)
            if counts.sum() > MAX_BRANCHES:
                # Too many wraps to follow: keep the cheapest candidates that fit the budget,
                # the nearest to position 0 among equals (small starts are the common case).
                order_by_cost = np.lexsort((np.abs(x), cost))
                fits = np.cumsum(counts[order_by_cost]) <= MAX_BRANCHES
                fits[0] = True
                kept = np.sort(order_by_cost[fits])
                x, var, cost, pair_var = x[kept], var[kept], cost[kept], pair_var[kept]
                low_wrap, counts = low_wrap[kept], np.minimum(counts[kept], MAX_BRANCHES)
            parent = np.repeat(np.arange(x.size), counts)
            offsets = np.arange(parent.size) - np.repeat(np.cumsum(counts) - counts, counts)
            wraps = low_wrap[parent] + offsets
            estimate = (phase[pair] + 2 * math.pi * wraps) / w[pair]
            px, pv, pc, ppv = x[parent], var[parent], cost[parent], pair_var[parent]
            cost = pc + (estimate - px) ** 2 / (pv + ppv)
            x = (px / pv + estimate / ppv) / (1.0 / pv + 1.0 / ppv)
            var = 1.0 / (1.0 / pv + 1.0 / ppv)
            position += 1
        keep = np.flatnonzero(cost <= np.min(cost) + 30.0)
        if keep.size > max_candidates:
            keep = keep[np.lexsort((np.abs(x[keep]), cost[keep]))[:max_candidates]]
        x, var, cost = x[keep], var[keep], cost[keep]
    return x, var, cost, bound, limited


def _choose_start(x: np.ndarray, var: np.ndarray, cost: np.ndarray, centre: float) -> tuple[int, bool]:
    """The whole start s = x - k_c: the cheapest candidates, then the smallest |s| among equals."""
    start = np.rint(x - centre)
    var = var + (2.0**-50 * np.abs(x)) ** 2 + 2.0**-100  # x itself carries float64 round-off
    cost = cost + (x - centre - start) ** 2 / var
    cost = np.where(np.isfinite(cost), cost, np.inf)
    best = float(np.min(cost))
    equals = np.unique(start[cost <= best + 9.0]) if math.isfinite(best) else start[:1]
    chosen = equals[np.argmin(np.abs(equals))]
    return int(np.clip(chosen, -MAX_POSITION, MAX_POSITION)), equals.size > 1


def _refine_rate(z: np.ndarray, a: float, start: int) -> tuple[float, float | None]:
    """Gauss-Newton on the absolute phases (s + k) w_i, once s is known; a and its standard error.

    The standard error is the residual phase noise over sqrt(sum J^2), J = -(s + k) i w_i;
    None when the phases are too far from the model to be unwrapped this way.
    """
    i = np.arange(z.shape[1], dtype=np.float64)
    k = start + np.arange(z.shape[0], dtype=np.float64)
    error = None
    for _ in range(5):
        w = np.exp(-a * i)
        model = np.multiply.outer(k, w)
        residual = np.angle(z * np.exp(-1j * model))
        if not np.all(np.abs(residual) < 1.0):
            break
        jacobian = -model * i
        curvature = float(np.sum(jacobian**2))
        if curvature == 0.0:
            break
        error = max(math.sqrt(float(np.mean(residual**2)) / curvature), _pair_scatter(residual, jacobian))
        step = float(np.sum(residual * jacobian)) / curvature
        if not math.isfinite(step) or a + step <= 0:
            break
        a += step
        if abs(step) <= 1e-16 * a:
            break
    return a, error


def _pair_scatter(residual: np.ndarray, jacobian: np.ndarray) -> float:
    """Standard error of a from how much the pairs disagree about it.

    Each pair i alone gives a step da_i = sum_k r J / sum_k J^2 with weight sum_k J^2; the
    weighted scatter of these steps also captures errors that are systematic within a pair
    (a frequency computed in float32 is off by the same relative amount at every row), which
    the residual noise alone would take for independent and so average away.
    """
    weights = np.sum(jacobian**2, axis=0)
    usable = weights > 0
    if np.count_nonzero(usable) < 3:
        return 0.0
    steps = np.sum(residual * jacobian, axis=0)[usable] / weights[usable]
    weights = weights[usable]
    mean = float(np.sum(weights * steps) / np.sum(weights))
    spread = float(np.sum(weights * (steps - mean) ** 2)) / (steps.size - 1)
    return math.sqrt(spread / float(np.sum(weights)))


def _fit_lone_sine(column: np.ndarray, start: int) -> float | None:
    """d = 3: the second frequency from its lone sine, by a log-spaced search then Newton."""
    k = start + np.arange(column.size, dtype=np.float64)
    grid = np.exp(-np.linspace(0.0, 25.0, 4001))
    cost = np.sum((np.sin(np.multiply.outer(k, grid)) - column[:, None]) ** 2, axis=0)
    w = float(grid[int(np.argmin(cost))])
    for _ in range(30):
        angle = k * w
        residual = np.sin(angle) - column
        jacobian = k * np.cos(angle)
        curvature = float(jacobian @ jacobian)
        if curvature == 0.0:
            break
        step = float(jacobian @ residual) / curvature
        if not 0 < w - step <= 1.0:
            break
        w -= step
        if abs(step) <= 1e-16 * w:
            break
    return -math.log(w) if 0 < w < 1 else None


def _max_error(
    A: np.ndarray, variant: _Variant, threshold: float = math.inf, skip_rows: tuple[int, ...] = ()
) -> tuple[float, tuple[int, int, float, float], int]:
    """Largest |A - P| over every row but ``skip_rows`` (block by block), where it is, and how
    many values exceed ``threshold``."""
    length, d = A.shape
    block = max(1, VERIFY_CELLS // d)
    skipped = np.asarray(skip_rows, dtype=np.intp)
    worst, where, over = -1.0, (0, 0, float(A[0, 0]), 0.0), 0
    for first in range(0, length, block):
        rows = A[first : first + block]
        P = positional_encoding(
            rows.shape[0],
            d,
            variant.n,
            layout=variant.layout,
            convention=variant.convention,
            start=variant.start + first,
        )
        difference = np.abs(rows - P)
        in_block = skipped[(skipped >= first) & (skipped < first + rows.shape[0])]
        difference[in_block - first] = 0.0
        over += int(np.count_nonzero(difference > threshold))
        flat = int(np.argmax(difference))
        row, column = divmod(flat, d)
        if difference[row, column] > worst:
            worst = float(difference[row, column])
            where = (first + row, column, float(rows[row, column]), float(P[row, column]))
    return worst, where, over


# ----------------------------------------------------------------------------------------
# Readings of the rate a: which base, in which convention, is the "roundest".
# ----------------------------------------------------------------------------------------


def _rate_of(reading: str, base: float, d: int) -> float:
    """Inverse of the readings: the rate a of a base in a reading."""
    m = (d + 1) // 2
    if reading == "paper":
        return 2.0 * math.log(base) / d
    if reading == "bug":
        return 4.0 * math.log(base) / d
    return math.log(base) / (m - 1)


def _readings(a: float, d: int) -> dict[str, float]:
    """The base each reading gives: paper n, tensor2tensor n', and r with paper n = r**2."""
    m = (d + 1) // 2
    exponents = {"paper": a * d / 2.0, "bug": a * d / 4.0}
    if m >= 2:
        exponents["tensor2tensor"] = a * (m - 1)
    return {name: math.exp(e) for name, e in exponents.items() if 0.0 < e < 700.0}


def _snap(reading: str, base: float, a: float, d: int, budget: float) -> tuple[float, int]:
    """Shortest decimal form of ``base`` whose rate is within ``budget`` of a, and its digits."""
    for digits in range(1, 16):
        snapped = float(f"{base:.{digits - 1}e}")
        if snapped > 1.0 and abs(_rate_of(reading, snapped, d) - a) <= budget:
            return snapped, digits
    return base, 17


def _log_roundness(base: float) -> float:
    """Distance, in decades, from the nearest 1, 2 or 5 times a power of ten."""
    exponent = math.log10(base)
    return min(abs(v - round(v)) for v in (exponent, exponent - math.log10(2), exponent - math.log10(5)))


def _candidate_bases(a: float, d: int, budget: float, library_table: bool = False) -> list[tuple[str, float]]:
    """The (reading, base) pairs worth a rebuild, roundest first.

    For each reading: its base snapped to the shortest decimal form within ``budget`` of a,
    and its base rounded to 1 and 2 significant digits, a round base that the rebuild then
    keeps only if it fits as well as the estimate: the round base a person wrote, even where
    float32 arithmetic moved the frequencies further than the statistics of the fit allow.

    Rounder: fewer digits, then closer to 1/2/5 x 10^k, which only separates round bases
    (1 or 2 digits); other ties go to the paper. The `2*i` bug is a reading only for a
    round root r (paper base r^2), and it wins the tie for r = 10000 (paper n = 1e8).
    A ``library_table`` (concatenated, with fairseq's zeros set aside) is fairseq's, so
    there tensor2tensor wins every tie (for d = 4, tensor2tensor 10000 is paper 1e8).
    """
    preference = {"paper": 1, "tensor2tensor": 2, "bug": 3}
    if library_table:
        preference["tensor2tensor"] = -1
    ranked = []
    for reading, base in _readings(a, d).items():
        snapped, digits = _snap(reading, base, a, d, budget)
        options = {snapped: digits}
        for round_digits in (1, 2):
            options.setdefault(float(f"{base:.{round_digits - 1}e}"), round_digits)
        for value, digits in options.items():
            if value <= 1.0 or (reading == "bug" and digits > 2):
                continue
            rank = 0 if reading == "bug" and value == 10000.0 else preference[reading]
            roundness = round(_log_roundness(value), 6) if digits <= 2 else 0.0
            ranked.append(((digits, roundness, rank), reading, value))
    return [(reading, value) for _, reading, value in sorted(ranked)]


def _equivalent_bases(reading: str, base: float, d: int, budget: float) -> dict[str, float]:
    """The base of every reading that gives the same frequencies as ``base`` in ``reading``,
    each in its shortest decimal form within ``budget`` (``reading`` keeps ``base`` itself)."""
    a = _rate_of(reading, base, d)
    equivalents = {other: _snap(other, value, a, d, budget)[0] for other, value in _readings(a, d).items()}
    return equivalents | {reading: base}


# ----------------------------------------------------------------------------------------
# One hypothesis (orientation + layout) from start to verdict material.
# ----------------------------------------------------------------------------------------


def _fit_hypothesis(
    A: np.ndarray, layout: str, transposed: bool, precision: ValuePrecision, library_table: bool = False
) -> _Outcome:
    d = A.shape[1]
    m = (d + 1) // 2
    rows = _fit_rows(A)
    z = _phasors(A, layout, rows)
    floor = 2.0 * max(precision.cast_error, precision.compute_unit)
    slope, noise = _slopes(z, floor)
    centred = np.arange(rows) - (rows - 1) / 2.0
    slope_noise = noise / math.sqrt(float(centred @ centred)) if rows > 1 else math.inf
    problem = None
    if abs(slope[0] - 1.0) > max(20.0 * slope_noise, 1e-6):
        problem = (
            f"its first sine/cosine pair turns by {slope[0]:.4g} rad per row, where every variant turns "
            "by exactly 1 rad per position"
        )
        if abs(slope[0] + 1.0) < 0.01:
            problem += " (the phases run backwards: are the rows in reverse order, or the sines negated?)"
    a, rate_error = _fit_rate(slope, slope_noise) if z.shape[1] >= 2 else (None, math.inf)
    if a is None and z.shape[1] >= 2 and problem is None:
        if np.all(slope[1:] > 5.0 * slope_noise):
            problem = "its frequencies do not decrease from one pair to the next"
        else:
            # Every pair after the first is too slow to measure over these rows: any
            # large base fits, so read it as the paper's 10000 and let the spread say so.
            a, rate_error = 2.0 * math.log(10000.0) / d, math.inf
    if m >= 2 and a is None and z.shape[1] == 1:
        a = 2.0 * math.log(10000.0) / d  # d = 3: placeholder until the lone sine is fitted
    rate = a if a is not None else 2.0 * math.log(10000.0) / d

    best = None
    for max_candidates in (MAX_START_CANDIDATES, WIDE_START_CANDIDATES):
        located = _locate(A, layout, z, a, rate, rate_error, noise, max_candidates)
        outcome = _verify(A, layout, transposed, precision, rows, *located[:5], problem, library_table)
        outcome.search_bound = located[5]
        if best is None or outcome.error < best.error:
            best = outcome
        # Search further only if the values are wrong almost everywhere (a few bad values do
        # not make a wrong start) and round-off of the stored format does not explain them.
        explained = outcome.error <= _stored_tolerance(precision, _largest_position(outcome))
        if explained or outcome.mismatches <= 0.5 * outcome.cells or not located[6]:
            break
    best.runs_backwards = abs(slope[0] + 1.0) < 0.01
    return best


def _largest_position(outcome: _Outcome) -> float:
    start = outcome.variant.start
    return float(max(abs(start), abs(start + outcome.length - 1)))


def _locate(
    A: np.ndarray,
    layout: str,
    z: np.ndarray,
    a: float | None,
    rate: float,
    rate_error: float,
    noise: float,
    max_candidates: int,
) -> tuple[float | None, float, float, int, bool, float, bool]:
    """The start, found twice: the rate refined with the first start can change it.

    Returns a (None if unknown), the rate used, its standard error, the start, whether
    other starts fit as well, the search bound and whether the bound was the candidate cap.
    """
    length, d = A.shape
    m = (d + 1) // 2
    rows = z.shape[0]
    centred = np.arange(rows) - (rows - 1) / 2.0
    start, ambiguous, bound, limited = 0, False, 0.0, False
    pair_index = np.arange(z.shape[1], dtype=np.float64)
    phase_noise = 3.0 * noise / math.sqrt(rows) + 1e-15
    for _ in range(2):
        w = np.exp(-rate * pair_index)
        demodulated = np.sum(z * np.exp(-1j * np.multiply.outer(centred, w)), axis=0)
        phase = np.angle(demodulated)
        error_of_rate = 3.0 * rate_error if math.isfinite(rate_error) else 0.0
        x, var, cost, bound, limited = _find_centre_position(
            phase, w, phase_noise, error_of_rate, max_candidates
        )
        start, ambiguous = _choose_start(x, var, cost, (rows - 1) / 2.0)
        start = int(np.clip(start, -MAX_POSITION, MAX_POSITION - length + 1))
        if a is not None and z.shape[1] >= 2:
            rate, refined_error = _refine_rate(z, rate, start)
            a = rate
            if refined_error is not None:
                rate_error = min(rate_error, refined_error)
    if m == 2 and z.shape[1] == 1:
        lone = A[:rows, m - 1] if layout == "concatenated" else A[:rows, d - 1]
        a = _fit_lone_sine(lone, start)
        rate = a if a is not None else rate
    return a, rate, rate_error, start, ambiguous, bound, limited


def _verify(
    A: np.ndarray,
    layout: str,
    transposed: bool,
    precision: ValuePrecision,
    rows: int,
    a: float | None,
    rate: float,
    rate_error: float,
    start: int,
    ambiguous: bool,
    problem: str | None,
    library_table: bool,
) -> _Outcome:
    """Choose the reading and the digits of n, rebuild, and measure the error on every row."""
    length, d = A.shape
    m = (d + 1) // 2
    max_position = float(max(abs(start), abs(start + length - 1)))
    tolerance = _stored_tolerance(precision, max_position)
    i_all = np.arange(m, dtype=np.float64)
    # A change da of the rate moves a value by at most |da| * sensitivity.
    sensitivity = max_position * float(np.max(i_all * np.exp(-rate * i_all)))
    exact = _readings(rate, d) if m >= 2 and a is not None else {}
    if "paper" not in exact:
        variant = _Variant(layout, "paper", 10000.0, start, transposed)
        error, where, over = _max_error(A, variant, tolerance)
        return _Outcome(variant, error, where, None, {}, math.inf, ambiguous, problem, length, A.size, over)
    # The choice of digits is made on the fitted rows; the final error on every row.
    fitted = A[:rows]
    error = _max_error(fitted, _Variant(layout, "paper", exact["paper"], start, transposed))[0]
    # Snap the base to its shortest decimal form within the statistical error of the rate:
    # the data, not a fixed tolerance, says how many digits of n are known.
    floor = 2.0 * precision.cast_error + 4.0 * 2.0**-53 * (1.0 + max_position)
    if math.isfinite(rate_error):
        # Within 5 standard errors of the estimated rate, plus a few units of round-off of
        # the arithmetic the values may come from (float32 rounds -ln(n)/d once, which shifts
        # every frequency alike and so escapes the standard error). Float32 arithmetic is
        # allowed for whenever the values cannot rule it out, whatever file held them, so that
        # a float32 table reads the same from .npy and from a CSV of its printed digits.
        unit = FLOAT32_UNIT if precision.float32_possible else precision.compute_unit
        budget = 5.0 * rate_error + max(1.5 * unit, 64.0 * 2.0**-53) * rate
    else:
        budget = (0.5 * error + floor) / sensitivity if sensitivity > 0 else math.inf
    # A round base (1 or 2 digits) fits as well as the estimate when round-off of the arithmetic
    # the values may come from explains its error: float32 rounds -ln(n)/d, which moves every
    # frequency alike, so that the estimate fits the float32 table better than the base written.
    round_fits = tolerance
    if precision.float32_possible:
        round_fits = max(round_fits, _tolerance(CAST_ERROR["float32"], FLOAT32_UNIT, max_position))
    candidates = _candidate_bases(rate, d, budget, library_table)
    for reading, base in candidates:
        convention = "tensor2tensor" if reading == "tensor2tensor" else "paper"
        variant = _Variant(layout, convention, base * base if reading == "bug" else base, start, transposed)
        is_round = float(f"{base:.1e}") == base
        if _rebuilds_within(fitted, variant, max(1.5 * error + floor, round_fits if is_round else 0.0)):
            readings = _equivalent_bases(reading, base, d, budget)
            break
    else:
        # No snapped base rebuilds as well as the estimate: keep every digit of the estimate.
        reading = candidates[0][0] if candidates[0][0] != "bug" else "paper"
        convention = "tensor2tensor" if reading == "tensor2tensor" else "paper"
        variant = _Variant(layout, convention, exact[reading], start, transposed)
        readings = dict(exact)
    error, where, over = _max_error(A, variant, tolerance)
    # How far a may move before the round-off no longer hides it, in relative n.
    allowed = 0.5 * tolerance / sensitivity if sensitivity > 0 else math.inf
    n_spread = allowed * (float(m - 1) if reading == "tensor2tensor" else d / 2.0)
    return _Outcome(
        variant, error, where, reading, readings, n_spread, ambiguous, problem, length, A.size, over
    )


def _rebuilds_within(fitted: np.ndarray, variant: _Variant, limit: float) -> bool:
    """Whether the variant rebuilds the fitted rows within ``limit``: first on their last rows
    (the largest positions, where a wrong base shows most), which rejects most bases cheaply."""
    last = max(fitted.shape[0] - 64, 0)
    probe = replace(variant, start=variant.start + last)
    return _max_error(fitted[last:], probe)[0] <= limit and _max_error(fitted, variant)[0] <= limit


def _fit_swapped(A: np.ndarray, layout: str, transposed: bool, precision: ValuePrecision) -> _Outcome | None:
    """The hypothesis with each pair's sine and cosine traded (cos, sin, ... or [cos | sin]),
    fitted on A's columns put back in order. None for an odd width (a lone sine has no partner)
    and for a single pair: some start turns one pair to any phase, so that a single pair read
    backwards (rows reversed, sine negated) would fit as well.

    ``A`` is the matrix as uploaded; the outcome's cell is one of its columns again.
    """
    positions_down = A.T if transposed else A
    d = positions_down.shape[1]
    if d % 2 or d < 4:
        return None
    order = swapped_columns(d, layout)
    outcome = _fit_hypothesis(positions_down[:, order], layout, transposed, precision)
    row, column, value, expected = outcome.where
    return replace(
        outcome, variant=replace(outcome.variant, swapped=True), where=(row, int(order[column]), value, expected)
    )


# ----------------------------------------------------------------------------------------
# Zeros a library writes into its table: set aside, the rest identified and verified.
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _SetAside:
    zero_rows: tuple[int, ...]  # all-zero rows (padding rows)
    filler_column: int | None  # the all-zero last column of an odd width, if any
    run: tuple[int, int]  # first and stop of the longest run of rows between the zero rows


def _zeros_to_set_aside(A: np.ndarray) -> _SetAside | None:
    """What fairseq's SinusoidalPositionalEmbedding zeroes in A, if A has it and it may be set aside.

    fairseq zeroes the row of its padding index (1 in its models, sometimes 0) and, when the
    width d is odd, appends a zero column after the d - 1 sines and cosines. None when A has
    neither, or more zero rows than MAX_ZERO_ROWS allows, or no two consecutive rows remain.
    """
    length, d = A.shape
    zero_rows = tuple(int(row) for row in np.flatnonzero(~A.any(axis=1)))
    filler_column = d - 1 if d % 2 == 1 and d > 2 and not A[:, -1].any() else None
    if not zero_rows and filler_column is None:
        return None
    if len(zero_rows) > MAX_ZERO_ROWS or 4 * len(zero_rows) > length:
        return None
    edges = [-1, *zero_rows, length]
    first, stop = max(((a + 1, b) for a, b in pairwise(edges)), key=lambda run: run[1] - run[0])
    return _SetAside(zero_rows, filler_column, (first, stop)) if stop - first >= 2 else None


def _set_aside_outcomes(matrix: np.ndarray, precision: ValuePrecision) -> list[_Outcome]:
    """Each orientation and layout fitted without its zero rows and filler column (see _fit_set_aside)."""
    outcomes = []
    for transposed in (False, True):
        A = matrix.T if transposed else matrix
        aside = _zeros_to_set_aside(A)
        if aside is None:
            continue
        kept = A[:, : aside.filler_column] if aside.filler_column is not None else A
        first, stop = aside.run
        for layout in LAYOUTS:
            if _circle_deviation(kept[first:stop], layout) <= CIRCLE_TOLERANCE:
                outcomes.append(_fit_set_aside(kept, layout, transposed, precision, aside))
    return outcomes


def _fit_set_aside(
    kept: np.ndarray, layout: str, transposed: bool, precision: ValuePrecision, aside: _SetAside
) -> _Outcome:
    """Fit on the longest run of rows between the zero rows, then verify every other row.

    Row r of such a table still holds position start + r (the padding row is only
    overwritten), so the table's start is the run's start minus the run's first row.
    """
    first, stop = aside.run
    outcome = _fit_hypothesis(kept[first:stop], layout, transposed, precision, layout == "concatenated")
    length = kept.shape[0]
    start = int(np.clip(outcome.variant.start - first, -MAX_POSITION, MAX_POSITION - length + 1))
    outcome = replace(
        outcome,
        variant=replace(outcome.variant, start=start),
        length=length,
        cells=(length - len(aside.zero_rows)) * kept.shape[1],
        zero_rows=aside.zero_rows,
        filler_column=aside.filler_column,
    )
    tolerance = _stored_tolerance(precision, _largest_position(outcome))
    outcome.error, outcome.where, outcome.mismatches = _max_error(kept, outcome.variant, tolerance, aside.zero_rows)
    return outcome


# ----------------------------------------------------------------------------------------
# Sentences.
# ----------------------------------------------------------------------------------------


def _precision_phrase(name: str) -> str:
    return f"CSV with {name}" if "decimals" in name else name


def _describe(variant: _Variant) -> str:
    return (
        f"{variant.layout} layout" + (", cosine first in each pair" if variant.swapped else "")
        + f", {variant.convention} frequencies, n = {number(variant.n)}, start {variant.start}"
        + (", transposed" if variant.transposed else "")
    )


def _layout_phrase(variant: _Variant) -> str:
    """How a verdict names the layout, leading its sentence."""
    if not variant.swapped:
        return f"{variant.layout.capitalize()} layout"
    if variant.layout == "interleaved":
        return "Interleaved layout with sine and cosine swapped in each pair (cos, sin, cos, sin, ...)"
    return "Concatenated layout with sines and cosines swapped (all cosines first: [cos | sin])"


def _swapped_sentence(layout: str) -> str:
    exchanged = "P[:, 0::2] and P[:, 1::2] exchanged" if layout == "interleaved" else "its two halves exchanged"
    return (
        f"The paper and most libraries put the sine first: this is their table with {exchanged}, a common "
        "bug. A model trained with one order and fed the other reads each pair's angle θ as 90° - θ, which is "
        "the encoding of no position."
    )


def _cell(where: tuple[int, int, float, float], transposed: bool) -> str:
    row, column, value, expected = where
    if transposed:
        row, column = column, row
    return (
        f"row {row}, column {column}: the matrix has {value:.6g} where the encoding has {expected:.6g} "
        f"(difference {abs(value - expected):.3g})"
    )


def _set_aside_of_M(outcome: _Outcome) -> tuple[list[int], list[int]]:
    """The zero rows and columns set aside, as rows and columns of M (the user's orientation)."""
    position_rows = list(outcome.zero_rows)
    filler = [] if outcome.filler_column is None else [outcome.filler_column]
    return (filler, position_rows) if outcome.variant.transposed else (position_rows, filler)


def _set_aside_sentence(outcome: _Outcome, fairseq: bool) -> str:
    """What was set aside and why a library writes it, in M's rows and columns ('' if nothing)."""
    row, column = ("column", "row") if outcome.variant.transposed else ("row", "column")
    library = "fairseq" if fairseq else "libraries such as fairseq"
    parts = []
    if outcome.zero_rows:
        numbers = " and ".join(str(r) for r in outcome.zero_rows)
        several = len(outcome.zero_rows) > 1
        # fairseq numbers positions from padding_idx + 1 on, so a row before the padding row is never used.
        used_from = ""
        if fairseq and not several:
            used_from = f", and real positions use {row}s {outcome.zero_rows[0] + 1} onwards"
        what = f"{row}s {numbers} are all zeros (padding indices' positions" if several else (
            f"{row} {numbers} is all zeros (a padding index's position"
        )
        parts.append(
            f"{what}: {library} zero{'es' if fairseq else ''} {'them' if several else 'it'} so that padding "
            f"tokens add nothing to the embeddings{used_from})"
        )
    if outcome.filler_column is not None:
        width = outcome.filler_column + 1
        parts.append(
            f"the last {column} ({column} {outcome.filler_column}) is a zero filler (d = {width} is odd: the sines "
            f"and cosines fill d - 1 = {width - 1} dimensions, and {library} append{'s' if fairseq else ''} one "
            "zero dimension)"
        )
    if not parts:
        return ""
    joined = " and ".join(parts)
    if fairseq:
        return f"This is the table as fairseq's SinusoidalPositionalEmbedding exports it: {joined}."
    return f"Set aside: {joined}."


def _result(
    outcome: _Outcome,
    *,
    matched: bool,
    fitted: bool,
    verdict: str,
    dtype_guess: str | None,
) -> dict:
    """The public dict: the variant's fields when it matched, or those of the fitted closest one."""
    variant = outcome.variant
    zero_rows, zero_columns = _set_aside_of_M(outcome)
    return {
        "layout": variant.layout if fitted else None,
        "convention": variant.convention if matched else None,
        "n": float(variant.n) if fitted and outcome.reading is not None else None,
        "start": int(variant.start) if fitted else None,
        "max_abs_error": float(outcome.error),
        "verdict": verdict,
        "transposed": bool(variant.transposed) if fitted else False,
        "swapped": bool(variant.swapped) if fitted else False,
        "dtype_guess": dtype_guess,
        "closest_convention": variant.convention if fitted else None,
        "zero_rows": zero_rows,
        "zero_columns": zero_columns,
    }


def _matched(outcome: _Outcome, matrix_shape: tuple[int, int], dtype_guess: str) -> dict:
    variant = outcome.variant
    length, d = matrix_shape[::-1] if variant.transposed else matrix_shape
    # The variant's own width, and the positions it is verified on, once zeros are set aside.
    width = d if outcome.filler_column is None else outcome.filler_column
    verified = (
        f"these {length} positions x {d} dimensions"
        if width == d and not outcome.zero_rows
        else f"{length - len(outcome.zero_rows)} positions x {width} dimensions (all but the zeros set aside)"
    )
    round_off = "round-off of " + ("a " if "decimals" in dtype_guess else "") + _precision_phrase(dtype_guess)
    fit = f"start {variant.start}: it rebuilds {verified} to {outcome.error:.1e}, within the {round_off}."
    layout = _layout_phrase(variant)
    sentences = []
    if outcome.reading is None and width <= 2:
        sentences.append(
            f"{layout}, a single sine/cosine pair, {fit} With d = {width} the only frequency is "
            "1 rad per position for every base and convention, so n cannot be told from the matrix."
        )
    elif outcome.reading is None:
        sentences.append(
            f"{layout}, {fit} The slower frequencies could not be measured from these rows, so n "
            "cannot be told from the matrix."
        )
    elif outcome.reading == "bug":
        root = outcome.readings["bug"]
        sentences.append(
            f"Paper formula with base {number(variant.n)} = {number(root)}^2: this is the `2*i` bug of "
            f"seed 002 (i already steps by 2, so the exponent 2i/d becomes 4j/d and squares the base "
            f"{number(root)}). {layout}, {fit}"
        )
        if "tensor2tensor" in outcome.readings:
            equivalent = number(outcome.readings["tensor2tensor"])
            sentences.append(f"Equivalently tensor2tensor frequencies with n = {equivalent}.")
    else:
        other = "tensor2tensor" if variant.convention == "paper" else "paper"
        formula = "w_i = n^(-2i/d)" if variant.convention == "paper" else "w_i = n^(-i/(m-1))"
        sentences.append(
            f"{layout}, {variant.convention} frequencies ({formula}) with n = "
            f"{number(variant.n)}, {fit}"
        )
        if other in outcome.readings:
            sentences.append(f"Equivalently {other} frequencies with n = {number(outcome.readings[other])}.")
    if variant.swapped:
        sentences.append(_swapped_sentence(variant.layout))
    fairseq = variant.layout == "concatenated" and variant.convention == "tensor2tensor"
    sentences.append(_set_aside_sentence(outcome, fairseq))
    if outcome.reading is not None and outcome.n_spread > 1.0:
        sentences.append("These few rows hardly pin n down: bases far from this one fit about as well.")
    elif outcome.reading is not None and outcome.n_spread > 0.01:
        sentences.append(
            f"These few rows pin n down only to about ±{outcome.n_spread:.0%}: longer sequences would tell "
            "nearby bases apart."
        )
    if outcome.start_ambiguous:
        sentences.append(f"Other starts fit nearly as well; {variant.start} is the smallest of them.")
    if variant.transposed:
        sentences.append(
            f"The matrix is transposed: its rows are the {d} dimensions and its columns the {length} "
            "positions."
        )
    verdict = " ".join(sentence for sentence in sentences if sentence)
    return _result(outcome, matched=True, fitted=True, verdict=verdict, dtype_guess=dtype_guess)


def _rejected(reason: str, outcome: _Outcome) -> dict:
    """Not an encoding: convention None, and the verdict says where the closest variant differs.

    When the closest variant was fitted to M (a base was measured), its layout, n, start
    and orientation are returned too, so that a page can draw the difference; otherwise
    it is only named in the verdict.
    """
    variant = outcome.variant
    fitted = outcome.reading is not None
    closest = "closest variant" if fitted else "paper's encoding of this shape"
    verdict = (
        f"Not a sinusoidal positional encoding: {reason}. The {closest} ({_describe(variant)}) differs by up "
        f"to {outcome.error:.3g}, most at {_cell(outcome.where, variant.transposed)}."
    )
    set_aside = _set_aside_sentence(outcome, fairseq=False)
    verdict = f"{verdict} {set_aside}" if set_aside else verdict
    return _result(outcome, matched=False, fitted=fitted, verdict=verdict, dtype_guess=None)


def _default_outcome(
    A: np.ndarray, layout: str, transposed: bool, problem: str | None = None, like: _Outcome | None = None
) -> _Outcome:
    """The paper's own encoding (n = 10000, start 0), to say where a non-encoding differs; with
    ``like``, compared without the zeros that outcome set aside."""
    zero_rows = like.zero_rows if like is not None else ()
    filler_column = like.filler_column if like is not None else None
    kept = A if filler_column is None else A[:, :filler_column]
    variant = _Variant(layout, "paper", 10000.0, 0, transposed)
    error, where, _ = _max_error(kept, variant, skip_rows=zero_rows)
    cells = (A.shape[0] - len(zero_rows)) * kept.shape[1]
    return _Outcome(
        variant, error, where, None, {}, math.inf, False, problem, A.shape[0], cells, -1,
        zero_rows=zero_rows, filler_column=filler_column,
    )


# ----------------------------------------------------------------------------------------
# The public function.
# ----------------------------------------------------------------------------------------


def identify_encoding(M: object) -> dict:
    r"""Say which variant of the sinusoidal positional encoding the matrix M is, if any.

    M may be (L, d) or transposed (d, L), in any layout and convention, from any whole
    start position, with any base n > 1, rounded to float32, float16 or bfloat16. See the
    module docstring for the maths: |cos + i sin| = 1 picks the layout, phase increments
    give the frequencies w_i = exp(-a i), unwrapping from the slowest pair gives the start,
    and a rebuild with ``positional_encoding`` verifies the answer on every row.

    What a rotary model holds (a cos or sin table, inv_freq, freqs_cis) is read by
    ``pe_core.identify.rotary.identify_rotary``, whose docstring lists the keys every result has
    besides these: "kind", "d", "scaling", "attention_factor" and the rotary details.

    A table as a library exports it is recognised too: when nothing matches M as it is, up
    to MAX_ZERO_ROWS all-zero rows (a padding token's row, which fairseq's
    SinusoidalPositionalEmbedding zeroes; at most a quarter of the rows) and an all-zero
    last column of an odd width (fairseq's filler) are set aside, the variant is fitted on
    the rest (row r still holds position start + r) and verified on every other value.
    No encoding has an all-zero row (each pair has sin^2 + cos^2 = 1), so this never
    hides a wrong value; a zero column elsewhere, or more zero rows, is not set aside.

    A table with each pair's cosine first (cos, sin, cos, sin, ...; [cos | sin]), whose
    phases run backwards when read sine first, is fitted again with each pair's columns
    traded, and named as such (``"swapped"``).

    Args:
        M: a 2-D array of real numbers, at most 2**25 values.

    Returns:
        dict with

        - ``"layout"``: ``"interleaved"`` or ``"concatenated"`` (None if nothing fits at all);
        - ``"convention"``: ``"paper"`` or ``"tensor2tensor"``; None when M is not an encoding;
        - ``"n"``: the base (float), or None (not an encoding, or d <= 2 where any base fits);
        - ``"start"``: the position of row 0 (int), or None;
        - ``"max_abs_error"``: max |M - rebuilt encoding| of the best (closest) variant;
        - ``"verdict"``: a sentence saying which variant, or why none fits and where the
          closest one differs most (row and column of M);
        - ``"transposed"``: True if the positions run along the columns;
        - ``"swapped"``: True if each pair's sine and cosine trade places (cos, sin, cos, sin
          interleaved, or [cos | sin] concatenated): M is then the variant's table with
          columns ``pe_core.swapped_columns(d, layout)``;
        - ``"dtype_guess"``: the precision whose round-off explains the values
          (``"float64"``, ``"float32"``, ``"float16"``, ``"bfloat16"``, ``"6 decimals"``...);
        - ``"closest_convention"``: the convention of the variant whose rebuild gave
          ``"max_abs_error"``: equal to ``"convention"`` for a match, and for a near miss
          (convention None) the convention of the closest variant fitted to M, beside its
          layout, n and start, so that a page can draw the difference; None when no
          variant could be fitted (the verdict then compares with the paper's encoding);
        - ``"rotary_buffer"``: for a table that is also what a rotary model holds in sinusoidal form
          (GPT-J's embed_positions: concatenated, paper frequencies, start 0), what it is; else None;
        - ``"zero_rows"``, ``"zero_columns"``: the all-zero rows and columns of M that were
          set aside (lists of indices of M, empty when none), e.g. ``[1]`` and ``[d - 1]``
          for fairseq's table with padding index 1 and an odd d; the variant's width is
          then d minus the zero columns.

        For a paper matrix, the other convention's base that gives the same matrix is named
        in the verdict ("Equivalently tensor2tensor frequencies with n = ..."); a paper base
        of 10000^2 is reported as seed 002's `2*i` bug.

    Raises:
        ValueError: M is not 2-D, is empty, holds NaN or infinity, or is too large.

    Example:
        >>> identify_encoding(positional_encoding(50, 128))["convention"]
        'paper'
        >>> table = positional_encoding(50, 128, layout="concatenated", convention="tensor2tensor")
        >>> table[1] = 0.0  # fairseq's padding row (padding_idx = 1)
        >>> result = identify_encoding(table)
        >>> result["convention"], result["start"], result["zero_rows"], result["zero_columns"]
        ('tensor2tensor', 0, [1], [])
    """
    # What a rotary model holds (inv_freq, freqs_cis, a table whose columns pair up) is read beside.
    rotary = identify_rotary(M)
    if rotary is None:
        matrix = check_matrix("M (the matrix to identify)", M)
        # Huge values (not an encoding) may overflow squares on their way to the verdict.
        with np.errstate(over="ignore", invalid="ignore"):
            result = with_rotary_keys(_identify(matrix), matrix)
    else:
        result = rotary
    # Swapped columns are a sinusoidal table's variant: a rotary reading has none.
    return _named_rotary_buffer({"swapped": False, **result})


#: What GPT-J's rotary buffer is, for the verdict of a table that is one.
GPTJ_BUFFER = ("GPT-J's and CodeGen's rotary buffer embed_positions (transformers' create_sinusoidal_positions("
               "n_positions, rotary_dim))")


def _named_rotary_buffer(result: dict) -> dict:
    r"""A concatenated paper table that starts at 0, [sin(k θ_i) | cos(k θ_i)] with θ_i = n^(-2i/d), is
    also GPT-J's rotary buffer: its attention takes the sin and cos halves at the position ids and
    turns interleaved pairs of its first rotary_dim = d coordinates (``rotate_every_two``). The result
    names it (``"rotary_buffer"``) and the verdict says so; other results hold None there."""
    is_buffer = (result.get("kind") == "sinusoidal" and result["layout"] == "concatenated"
                 and result["convention"] == "paper" and not result["swapped"] and result["start"] == 0)
    if not is_buffer:
        return {**result, "rotary_buffer": None}
    sentence = (f" It is also {GPTJ_BUFFER}: the sin and cos halves of the rotary angles k θ_i, θ_i = n^(-2i/d), "
                f"which GPT-J's attention applies to interleaved pairs (rotate_every_two) of its first rotary_dim = "
                f"{result['d'] if result.get('d') else 'd'} coordinates of each head.")
    return {**result, "rotary_buffer": GPTJ_BUFFER, "verdict": result["verdict"] + sentence}


def _first_match(outcomes: list[_Outcome], precision: ValuePrecision) -> tuple[_Outcome, str] | None:
    """The closest outcome whose error round-off explains, and the precision that explains it."""
    for outcome in sorted(outcomes, key=lambda o: o.error):
        explained_by = _precision_of(outcome.error, precision, _largest_position(outcome))
        if explained_by is not None and outcome.problem is None:
            return outcome, explained_by
    return None


def _identify(matrix: np.ndarray) -> dict:
    precision = value_precision(matrix)
    length, d = matrix.shape
    if min(length, d) < 2:
        outcome = _default_outcome(matrix, "interleaved", False)
        return _rejected(
            f"a {length} x {d} matrix has a single {'column' if d < 2 else 'row'}, but an encoding needs "
            "at least 2 positions and a sine/cosine pair of columns (in either orientation)",
            outcome,
        )
    if np.ptp(matrix) == 0:
        return _rejected(
            f"every value is {number(float(matrix[0, 0]))}, but an encoding changes from one position "
            "to the next",
            _default_outcome(matrix, "interleaved", False),
        )
    largest = float(np.max(np.abs(matrix)))
    out_of_range = None
    if largest > 1.0 + 1e-6:
        row, column = np.unravel_index(int(np.argmax(np.abs(matrix))), matrix.shape)
        out_of_range = (
            f"values reach {largest:.4g} (row {row}, column {column}), but sines and cosines stay within "
            "[-1, 1] (was the encoding scaled, or added to embeddings?)"
        )

    hypotheses = []
    for transposed in (False, True):
        A = matrix.T if transposed else matrix
        for layout in LAYOUTS:
            hypotheses.append((_circle_deviation(A, layout), transposed, layout))
    hypotheses.sort(key=lambda h: h[0])
    tried = [h for h in hypotheses if h[0] <= CIRCLE_TOLERANCE]
    outcomes = []
    for _, transposed, layout in tried:
        A = matrix.T if transposed else matrix
        outcomes.append(_fit_hypothesis(A, layout, transposed, precision))
    # Phases that run backwards may be a table with each pair's cosine first: a common variant.
    for (_, transposed, layout), outcome in zip(tried, list(outcomes), strict=True):
        if outcome.runs_backwards:
            swapped = _fit_swapped(matrix, layout, transposed, precision)
            if swapped is None:
                continue
            # A near miss only if most values fit and n was read; else the first fit's problem says more.
            near_miss = swapped.reading is not None and 2 * swapped.mismatches <= swapped.cells
            if near_miss or _first_match([swapped], precision) is not None:
                outcomes.append(swapped)
    match = _first_match(outcomes, precision)
    if match is None:
        # Only then may zero rows or a zero last column be a library's: no encoding has a zero
        # row, and a genuine encoding that happens to have a zero column has matched above.
        set_aside = _set_aside_outcomes(matrix, precision)
        match = _first_match(set_aside, precision)
        # Failed, such a fit says where the matrix differs only as a near miss (most values fit);
        # otherwise its zeros were no padding, and the verdict compares the matrix as it is.
        outcomes += [outcome for outcome in set_aside if 2 * outcome.mismatches <= outcome.cells]
    if match is not None:
        outcome, explained_by = match
        return _matched(outcome, matrix.shape, explained_by)

    if not outcomes:
        best_deviation, transposed, layout = hypotheses[0]
        reason = out_of_range or (
            "no orientation and layout pairs its columns into sines and cosines on the unit circle: the "
            f"median of |sin^2 + cos^2 - 1| is {best_deviation:.2g} at best, where an encoding has 0"
        )
        A = matrix.T if transposed else matrix
        radii = np.abs(_phasors(A, layout, min(_fit_rows(A), CIRCLE_ROWS)))
        radius = float(np.median(radii))
        if out_of_range is None and radius > 0 and np.median(np.abs(radii / radius - 1)) < 0.01:
            reason += f" (every pair has radius {radius:.4g}: is the encoding scaled by {radius:.4g}?)"
        outcome = _default_outcome(A, layout, transposed)
        return _rejected(reason, outcome)

    closest = min(outcomes, key=lambda o: o.error)
    if closest.reading is None:
        # Nothing was measured (say, phases running backwards): compare with the paper's own encoding.
        A = matrix.T if closest.variant.transposed else matrix
        closest = _default_outcome(
            A, closest.variant.layout, closest.variant.transposed, closest.problem, like=closest
        )
    max_position = _largest_position(closest)
    stored = _stored_tolerance(precision, max_position)
    in_float32 = _tolerance(CAST_ERROR["float32"], FLOAT32_UNIT, max_position)
    allowed = f"at most {stored:.1g} for {_precision_phrase(precision.name)} values at these positions"
    if in_float32 > stored:
        allowed += f", {in_float32:.1g} if computed in float32"
    differ = "differs" if closest.mismatches == 1 else "differ"
    reason = (
        closest.problem
        or out_of_range
        or f"{closest.mismatches:,} of its {closest.cells:,} values {differ} from the best fitting variant "
        f"by more than round-off explains ({allowed})"
    )
    # Wrong almost everywhere: maybe a start beyond the search rather than a few bad values.
    wrong_almost_everywhere = closest.mismatches > 0.5 * closest.cells
    if (
        closest.problem is None
        and out_of_range is None
        and wrong_almost_everywhere
        and closest.search_bound > 0
    ):
        reason += (
            f"; starts within ±{closest.search_bound:,.0f} were searched, and one further away cannot be "
            "pinned down from these rows"
        )
    return _rejected(reason, closest)

