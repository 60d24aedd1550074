r"""identify_encoding on what a rotary model holds: a cos or sin table, inv_freq, freqs_cis.

A rotary model holds its positions in one of these forms (``pe_core.rope``):

- ``inv_freq``, the d/2 frequencies :math:`\theta'_i` (a transformers rotary embedding's buffer);
- the cos and sin tables transformers returns, :math:`a\cos(p\,\theta'_{q(c)})` and
  :math:`a\sin(p\,\theta'_{q(c)})` for positions p (rows) and columns c, with the pair q(c) of a
  column in the layout "half" (c mod d/2: ``cat(freqs, freqs)``, GPT-NeoX, Llama in transformers)
  or "interleaved" (c // 2: RoFormer, GPT-J, Meta), and a the attention factor (YaRN, LongRoPE);
- Meta's complex ``freqs_cis`` = :math:`a\,e^{\mathrm{i}p\theta'_i}` (L x d/2, ``torch.polar``),
  or its real view (L, d/2, 2) (``torch.view_as_real``).

Reading a table (``identify_rotary``):

1. **Layout.** Code writes the two columns of a pair as the same numbers. A layout and orientation
   pairs the table when most of its varying column pairs are identical and the share of the
   (centred) energy in their differences, :math:`\sum(U - V)^2 / \sum((U-\bar U)^2 + (V -
   \bar V)^2)`, is below ``PAIRING_LIMIT`` (a sinusoid, sine beside cosine, and noise give about
   1), or, for a noisy table, when that share and the largest difference are both tiny. Other
   tables go to the sinusoidal reading; one it rejects is tried last as gpt-oss's table, one
   column per pair. A pair whose two columns differ far more than the others is left out of the
   fit (and shows in the verification).
2. **Each pair, locally.** On consecutive rows, Prony's recurrence
   :math:`x_{m+1} + x_{m-1} = 2\cos\theta\,x_m` gives each pair's angle per row, a Gauss-Newton
   fit of :math:`A\cos\theta t + B\sin\theta t` refines it; the median amplitude
   :math:`\sqrt{A^2 + B^2}` over the pairs that turn is the attention factor a. With a fixed, a
   fit of :math:`a\cos(\varphi + \theta t)` (t the row from the centre of the fit) gives every
   pair's phase :math:`\varphi` at the centre and :math:`\theta`, the slow ones too (from the
   level and slope of a barely turning cosine). A complex table gives the phases directly.
3. **The start.** :math:`(s + m_c)\,\theta_i \equiv \varphi_i \pmod{2\pi}` for every pair (a sine
   table's phases are a cosine's minus :math:`\pi/2`): from the slowest well-measured pair to the
   fastest, each pair narrows the candidates (as in ``pe_core.identify.sinusoidal``), within
   :math:`\pm 2^{24}` (positions float32 holds exactly) and as far as three pairs' frequencies
   can still place it; s must be a whole number. Cosine and sine are both tried, first the one
   whose phases agree on a start at least cost.
4. **Absolute frequencies.** With s known, :math:`\theta_i = (\varphi_i + 2\pi k)/(s + m_c)` for
   the one whole k the local estimate allows, refined on the absolute phases
   :math:`p\,\theta_i` of rows over the whole table. A pair whose standard error stays above 5 %
   is too slow to read at these positions: only its upper bound is used, and it is named. A pair whose
   values never change (proportional RoPE's unrotated pairs hold a and 0) is bounded by that: its cosine
   moves less than the values' rounding e over the L rows, so its frequency is at most
   :math:`4\sqrt{e}/(L - 1)` (twice that is used); unrotated by the reading, it is not named.
5. **Reading** the frequencies (``pe_core.identify.frequencies``): base, scaling and what the
   frequencies determine of its parameters, the attention factor against the method's formula.
6. **Verification.** The reading is rebuilt on every row (blockwise) and compared cell by cell
   with what round-off allows: twice the storage's cast error plus a times
   :math:`|p|\,\theta'(\epsilon_\theta + 2^{-24}) + 2^{-22}`, the angle error of transformers'
   float32 arithmetic (its :math:`\theta` off by ``float32_frequency_error``, the product
   :math:`p\,\theta` rounded to float32) plus float32 cos and sin; frequencies the reading took
   from the measurement (per-pair divisors, a base that is not round) add their own error. A
   match needs three quarters of the cells to allow less than a tenth of the amplitude (at huge
   positions float32 angles say nothing), and among matches one that fits in float64
   arithmetic, then the shortest base, wins. Otherwise the closest reading and the cell where
   it differs most are named.

What no table tells apart is said (module ``pe_core.identify.frequencies`` for the frequencies). A cos
table with linear scaling s at consecutive positions :math:`p_0, p_0 + 1, \ldots` is the same table
as no scaling at positions :math:`p_0/s, (p_0 + 1)/s, \ldots` (position interpolation scales
position_ids: that is what it is) and as factor :math:`s\,t` at every t-th position; read with
consecutive whole positions, as every model's table is, the factor is the inverse of pair 0's
angle per row, and a start is told apart from a scaling because a start moves each pair's phase by
:math:`p_0\theta_i` while a scaling changes its rate. A cosine cannot tell a position from its
negative, so rows in reverse order read as a negative start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pe_core._validate import MAX_CELLS, check_finite_values, check_matrix
from pe_core.identify.frequencies import read_frequencies
from pe_core.identify.table import ONE_COLUMN, TableReading
from pe_core.identify.verdicts import (
    alternatives_sentence,
    base_phrase,
    matched_verdict,
    method_phrase,
    rejected_verdict,
    scaling_sentence,
    unread_pairs,
)
from pe_core.rope.methods import rope_method
from pe_core.rope.reading import (
    AGREEMENT,
    FrequencyReading,
    MeasuredFrequencies,
    float32_frequency_error,
    shortest,
)
from pe_core.value_precision import FLOAT32_UNIT, value_precision
from pe_core.wording import number

#: Largest share of a table's energy in the differences of its paired columns read as rotary, when
#: most pairs hold identical copies (as code writes them), and when none do (a noisy table, whose
#: paired columns must then also differ by at most this share of its largest value).
PAIRING_LIMIT = 0.3
NOISY_PAIRING_LIMIT = 0.01
#: Values the layout check looks at, on rows spread over the table.
PAIRING_CELLS = 2**20
#: Pair values (rows x pairs) that enter a fit; every row is verified.
FIT_CELLS = 2**21
#: Starts are searched within +- this (float32 holds every whole position up to it exactly).
START_BOUND = 2**24
#: Candidate starts followed at once while the slowest pairs are ambiguous.
MAX_CANDIDATES = 2**16
#: Cells rebuilt at once in the verification.
VERIFY_CELLS = 2**20
#: Fewest positions a table needs (three rows fix a pair's cosine; one more checks it).
MIN_ROWS = 4
#: Share of the cells where round-off must allow less than a tenth of the amplitude for a match to say anything.
INFORMATIVE_CELLS = 0.75
#: The slowest frequency an inv_freq can hold: float32's smallest normal number (1.2e-38), the type
#: transformers computes it in. Slower values (a subnormal, 5e-324) come from no base and scaling.
SLOWEST_FREQUENCY = float(np.finfo(np.float32).tiny)

# ----------------------------------------------------------------------------------------
# Precision of the stored values.
# ----------------------------------------------------------------------------------------


def stored_precision(values: np.ndarray) -> tuple[str, float]:
    """Name of the format the values carry and the largest error of storing a value of [-1, 1]
    in it, as the sinusoidal reading names them (pe_core.value_precision: bfloat16, float16,
    float32, "p decimals" or "s significant digits" of a CSV, float64): one reading of a
    file's precision for both kinds of table."""
    precision = value_precision(np.asarray(values, dtype=np.float64))
    return precision.name, precision.cast_error


def _unit(precision: tuple[str, float]) -> float:
    """Relative resolution of the values: float64's where they are stored in float64, float32's otherwise."""
    return 2.0**-52 if precision[0] == "float64" else FLOAT32_UNIT


def _cast_error(name: str, cast: float, largest: float) -> float:
    """The storing error at values up to ``largest`` (binary formats: relative, so it doubles per octave)."""
    if "decimals" in name or largest <= 1.0:
        return cast
    return cast * 2.0 ** math.ceil(math.log2(largest))


# ----------------------------------------------------------------------------------------
# 1. Layout: which columns hold the same pair.
# ----------------------------------------------------------------------------------------


def pair_columns(d: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The two columns of each of the d/2 pairs in a rotary layout."""
    pairs = np.arange(d // 2)
    if layout == "half":
        return pairs, pairs + d // 2
    return 2 * pairs, 2 * pairs + 1


@dataclass(frozen=True)
class _Pairing:
    mismatch: float  # share of the centred energy in the paired columns' differences
    identical: float  # share of the varying pairs whose two columns are the same numbers
    spread: float  # largest difference of paired columns over the largest |value|
    transposed: bool
    layout: str

    @property
    def rotary(self) -> bool:
        """Code writes each pair's values twice, identical; noise may blur them, but only a little."""
        if self.identical >= 0.5:
            return self.mismatch <= PAIRING_LIMIT
        return self.mismatch <= NOISY_PAIRING_LIMIT and self.spread <= NOISY_PAIRING_LIMIT


def _pairings(matrix: np.ndarray) -> list[_Pairing]:
    """Each orientation and rotary layout, the best paired first (rows sampled evenly)."""
    found = []
    for transposed in (False, True):
        A = matrix.T if transposed else matrix
        L, d = A.shape
        if d % 2 or L < 2:
            continue
        rows = A[np.unique(np.linspace(0, L - 1, min(L, 4096, max(16, PAIRING_CELLS // d))).astype(np.int64))]
        for layout in ("half", "interleaved"):
            first, second = pair_columns(d, layout)
            U, V = rows[:, first], rows[:, second]
            energy = float(np.sum((U - U.mean(axis=0)) ** 2) + np.sum((V - V.mean(axis=0)) ** 2))
            difference = float(np.sum((U - V) ** 2))
            # Pairs that hold a constant (padding, an all-zero block) say nothing about the layout.
            varying = (np.ptp(U, axis=0) > 0) | (np.ptp(V, axis=0) > 0)
            identical = float(np.mean(np.all(U == V, axis=0)[varying])) if varying.any() else 0.0
            largest = float(np.max(np.abs(rows)))
            spread = float(np.max(np.abs(U - V))) / largest if largest > 0 else math.inf
            found.append(_Pairing(difference / energy if energy > 0 else math.inf, identical, spread, transposed,
                                  layout))
    return sorted(found, key=lambda p: p.mismatch)


# ----------------------------------------------------------------------------------------
# 2. Each pair, locally: Prony, then a sinusoid fit, then the amplitude and phases.
# ----------------------------------------------------------------------------------------


@dataclass
class _Pairs:
    """Per-pair estimates at the centre row m_c of the fit: angle per row, phase, their errors."""

    theta: np.ndarray
    sigma_theta: np.ndarray
    phase: np.ndarray  # of the cosine: x = a cos(phase + theta t)
    sigma_phase: np.ndarray
    centre: float  # m_c, a row index
    amplitude: float
    amplitude_error: float
    noise: float  # per-value noise of the fit, in units of a


def _correlation(values: np.ndarray, cast: float) -> np.ndarray:
    """sqrt(n / n_eff) per column: rounding errors are independent only between values a rounding step apart.

    A slowly changing column keeps the same rounding error over many rows; the rows it spends
    within one step of the format (2 cast) count as one. n_eff = total variation / (2 cast),
    between 1 and the number of rows.
    """
    n = values.shape[0]
    if cast <= 0 or n < 2:
        return np.ones(values.shape[1])
    variation = np.sum(np.abs(np.diff(values, axis=0)), axis=0)
    effective = np.clip(variation / (2.0 * cast), 1.0, n)
    return np.sqrt(n / effective)


def _sinusoid_fit(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A cos(theta t) + B sin(theta t) per column of X (t centred on consecutive rows): A, B and theta."""
    n = X.shape[0]
    t = np.arange(n) - (n - 1) / 2.0
    middle = X[1:-1]
    numerator = np.sum(middle * (X[:-2] + X[2:]), axis=0)
    denominator = 2.0 * np.sum(middle**2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cosine = np.where(denominator > 0, numerator / denominator, 1.0)
    theta = np.arccos(np.clip(cosine, -1.0, 1.0))

    def solve(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        C, S = np.cos(np.multiply.outer(t, theta)), np.sin(np.multiply.outer(t, theta))
        g = np.stack([np.stack([np.sum(C * C, 0), np.sum(C * S, 0)], -1),
                      np.stack([np.sum(C * S, 0), np.sum(S * S, 0)], -1)], -2)
        rhs = np.stack([np.sum(C * X, 0), np.sum(S * X, 0)], -1)
        coefficients = np.einsum("pij,pj->pi", np.linalg.pinv(g), rhs)
        A, B = coefficients[:, 0], coefficients[:, 1]
        return A, B, np.sum((X - A * C - B * S) ** 2, axis=0)

    A, B, cost = solve(theta)
    for _ in range(8):
        C, S = np.cos(np.multiply.outer(t, theta)), np.sin(np.multiply.outer(t, theta))
        residual = X - A * C - B * S
        J = np.stack([C, S, t[:, None] * (B * C - A * S)], axis=-1)  # (n, P, 3)
        g = np.einsum("npi,npj->pij", J, J)
        step = np.einsum("pij,pj->pi", np.linalg.pinv(g), np.einsum("npi,np->pi", J, residual))
        trial = np.clip(theta + step[:, 2], 0.0, math.pi)
        A_new, B_new, cost_new = solve(trial)
        better = cost_new < cost
        theta = np.where(better, trial, theta)
        A, B, cost = np.where(better, A_new, A), np.where(better, B_new, B), np.where(better, cost_new, cost)
        if not np.any(better):
            break
    return A, B, theta


def _phase_fit(
    Y: np.ndarray, t: np.ndarray, phase: np.ndarray, theta: np.ndarray, noise: float, fit_span: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """cos(phase + theta t) fitted to Y (rows at offsets t from the centre), amplitude 1: Gauss-Newton on
    (phase, theta) per pair, on rows where the phase cannot have drifted by more than 0.3 rad
    (growing as theta gets known). Returns phase, theta and their standard errors."""
    P = Y.shape[1]
    sigma_theta = np.full(P, math.inf)
    reach = np.full(P, fit_span)  # |t| of the rows in use
    inflation = None
    for _ in range(40):
        use = np.abs(t)[:, None] <= reach[None, :]
        angle = phase + np.multiply.outer(t, theta)
        sine = np.sin(angle)
        residual = np.where(use, Y - np.cos(angle), 0.0)
        J_phase, J_theta = np.where(use, -sine, 0.0), np.where(use, -t[:, None] * sine, 0.0)
        a11, a12, a22 = np.sum(J_phase**2, 0), np.sum(J_phase * J_theta, 0), np.sum(J_theta**2, 0)
        b1, b2 = np.sum(J_phase * residual, 0), np.sum(J_theta * residual, 0)
        det = a11 * a22 - a12**2
        ok = det > 1e-30 * np.maximum(a11 * a22, 1e-300)
        with np.errstate(divide="ignore", invalid="ignore"):
            d_phase = np.where(ok, (a22 * b1 - a12 * b2) / det, 0.0)
            d_theta = np.where(ok, (a11 * b2 - a12 * b1) / det, 0.0)
            d_phase = np.clip(d_phase, -0.5, 0.5)
            d_theta = np.clip(d_theta, -0.5 / np.maximum(reach, 1.0), 0.5 / np.maximum(reach, 1.0))
            phase, theta = phase + d_phase, theta + d_theta
            # cos(phase + theta t) = cos(-phase - theta t): keep theta >= 0.
            flip = theta < 0
            phase, theta = np.where(flip, -phase, phase), np.abs(theta)
            count = np.sum(use, axis=0)
            rms = np.sqrt(np.sum(residual**2, 0) / np.maximum(count - 2, 1))
            if inflation is None:  # the rows first in use say how correlated their rounding is
                inflation = _correlation(_used_values(Y, t, use), noise * math.sqrt(3.0))
            sigma_theta = np.where(ok, np.maximum(rms, noise) * np.sqrt(a11 / det) * inflation, math.inf)
        grown = np.minimum(np.maximum(reach, 0.3 / np.maximum(sigma_theta, 1e-300)), np.max(np.abs(t)))
        if np.all(grown <= reach) and np.all(np.abs(d_theta) <= 1e-3 * np.maximum(sigma_theta, 1e-300)):
            break
        reach = np.maximum(reach, grown)
    inflation = _correlation(_used_values(Y, t, use), noise * math.sqrt(3.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma_theta = np.where(ok, np.maximum(rms, noise) * np.sqrt(a11 / det) * inflation, math.inf)
        sigma_phase = np.where(ok, np.maximum(rms, noise) * np.sqrt(a22 / det) * inflation, math.inf)
    return np.angle(np.exp(1j * phase)), theta, sigma_phase, sigma_theta


def _used_values(Y: np.ndarray, t: np.ndarray, use: np.ndarray) -> np.ndarray:
    """The values of each column on its rows in use, in row order (rows out of use repeat a neighbour's,
    adding nothing to the variation)."""
    order = np.argsort(t)
    used = use[order]
    values = Y[order]
    first = np.sum(np.where(used, values, 0.0), axis=0) / np.maximum(np.sum(used, axis=0), 1)
    # Carry the last value in use forward (and the mean before the first), so gaps add no variation.
    index = np.where(used, np.arange(values.shape[0])[:, None], 0)
    np.maximum.accumulate(index, axis=0, out=index)
    carried = values[index, np.arange(values.shape[1])]
    seen = np.maximum.accumulate(used, axis=0)
    return np.where(seen, carried, first)


# ----------------------------------------------------------------------------------------
# 3. The start: phases (s + m_c) theta_i = phase_i (mod 2 pi), slowest pair first.
# ----------------------------------------------------------------------------------------


def _find_start(
    theta: np.ndarray, sigma_theta: np.ndarray, phase: np.ndarray, sigma_phase: np.ndarray, centre: float
) -> tuple[int, float, bool]:
    """The whole start s with the least chi-square over the pairs: (s, cost per pair, ambiguous)."""
    usable = (theta > 0) & (sigma_theta <= 0.01 * theta) & (sigma_phase < 0.3)
    order = np.flatnonzero(usable)[np.argsort(theta[usable])]
    if order.size == 0:
        return 0, math.inf, True

    def variance(pairs: np.ndarray, x: np.ndarray) -> np.ndarray:
        return (sigma_phase[pairs] / theta[pairs]) ** 2 + (x * sigma_theta[pairs] / theta[pairs]) ** 2 + 1e-18

    first = int(order[0])
    # Beyond |x| = 0.3 / sigma_theta a pair's predicted phase is lost: search where three pairs still see.
    reach = np.sort(0.3 / sigma_theta[order])[::-1]
    bound = min(START_BOUND + abs(centre), float(reach[min(2, reach.size - 1)]))
    wraps = 2 * bound * theta[first] / (2 * math.pi)
    if wraps > MAX_CANDIDATES:
        bound *= MAX_CANDIDATES / wraps
    k = np.arange(math.ceil((-bound * theta[first] - phase[first]) / (2 * math.pi)),
                  math.floor((bound * theta[first] - phase[first]) / (2 * math.pi)) + 1)
    if k.size == 0:
        k = np.array([0])
    x = (phase[first] + 2 * math.pi * k) / theta[first]
    var = variance(np.array([first]), x[:, None])[:, 0]
    cost = np.zeros_like(x)
    position = 1
    while position < order.size:
        rest = order[position:]
        spread = 4.0 * np.sqrt(np.max(var) + variance(rest, np.array([[np.max(np.abs(x))]]))[0]) * theta[rest]
        chunk = int(np.argmax(spread >= 1.0)) if np.any(spread >= 1.0) else rest.size
        chunk = min(chunk, max(1, 2**22 // max(x.size, 1)))
        if spread[0] < 1.0:
            pairs = rest[:chunk]
            wrap = np.rint((np.multiply.outer(x, theta[pairs]) - phase[pairs]) / (2 * math.pi))
            estimate = (phase[pairs] + 2 * math.pi * wrap) / theta[pairs]
            pair_var = variance(pairs, x[:, None])
            cost = cost + np.sum((estimate - x[:, None]) ** 2 / (var[:, None] + pair_var), axis=1)
            precision = 1.0 / var + np.sum(1.0 / pair_var, axis=1)
            x = (x / var + np.sum(estimate / pair_var, axis=1)) / precision
            var = 1.0 / precision
            position += chunk
        else:
            pair = int(rest[0])
            half = 4.0 * np.sqrt(var + variance(np.array([pair]), x[:, None])[:, 0])
            low = np.ceil(((x - half) * theta[pair] - phase[pair]) / (2 * math.pi))
            high = np.floor(((x + half) * theta[pair] - phase[pair]) / (2 * math.pi))
            counts = np.clip(high - low + 1, 1, 64).astype(np.int64)
            parent = np.repeat(np.arange(x.size), counts)
            offsets = np.arange(parent.size) - np.repeat(np.cumsum(counts) - counts, counts)
            estimate = (phase[pair] + 2 * math.pi * (low[parent] + offsets)) / theta[pair]
            pair_var = variance(np.array([pair]), x[parent][:, None])[:, 0]
            cost = cost[parent] + (estimate - x[parent]) ** 2 / (var[parent] + pair_var)
            x = (x[parent] / var[parent] + estimate / pair_var) / (1.0 / var[parent] + 1.0 / pair_var)
            var = 1.0 / (1.0 / var[parent] + 1.0 / pair_var)
            position += 1
        keep = np.flatnonzero(cost <= np.min(cost) + 30.0)
        if keep.size > MAX_CANDIDATES:
            keep = keep[np.lexsort((np.abs(x[keep] - centre), cost[keep]))[:MAX_CANDIDATES]]
        x, var, cost = x[keep], var[keep], cost[keep]
    start = np.rint(x - centre)
    cost = cost + (x - centre - start) ** 2 / var
    best = float(np.min(cost))
    equals = np.unique(start[cost <= best + 9.0])
    chosen = int(equals[np.argmin(np.abs(equals))])
    return chosen, best / order.size, equals.size > 1


# ----------------------------------------------------------------------------------------
# 4. Absolute frequencies, once the start is known.
# ----------------------------------------------------------------------------------------


def _absolute(
    Y: np.ndarray, p: np.ndarray, shift: float, pairs: _Pairs, start: int, measured: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """theta_i = (phase_i + 2 pi k)/(s + m_c) where one k fits, refined on cos(p theta - shift) over the rows."""
    theta, sigma = pairs.theta.copy(), pairs.sigma_theta.copy()
    position = start + pairs.centre
    phase = pairs.phase + shift
    if abs(position) >= 1.0:
        unique = measured & (sigma * abs(position) < 0.25 * math.pi)
        wrap = np.rint((position * theta - phase) / (2 * math.pi))
        theta = np.where(unique, (phase + 2 * math.pi * wrap) / position, theta)
        sigma = np.where(unique, pairs.sigma_phase / abs(position), sigma)
    else:
        unique = np.zeros_like(measured)
    counted, inflation = None, None
    for _ in range(30):
        reach = np.where(unique, 0.3 / np.maximum(sigma, 1e-300), 0.0)
        use = np.abs(p)[:, None] <= reach[None, :]
        if counted is None or not np.array_equal(counted, np.sum(use, axis=0)):
            # How correlated the rounding of the rows in use is: recomputed only when they change.
            counted = np.sum(use, axis=0)
            inflation = _correlation(_used_values(Y, p, use), pairs.noise * math.sqrt(3.0))
        angle = np.multiply.outer(p, theta) - shift
        residual = np.where(use, Y - np.cos(angle), 0.0)
        J = np.where(use, -p[:, None] * np.sin(angle), 0.0)
        curvature = np.sum(J**2, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(unique & (curvature > 0), np.sum(J * residual, 0) / curvature, 0.0)
            count = np.sum(use, axis=0)
            rms = np.sqrt(np.sum(residual**2, 0) / np.maximum(count - 1, 1))
            new_sigma = np.maximum(rms, pairs.noise) / np.sqrt(curvature) * inflation
        step = np.clip(step, -sigma * 3, sigma * 3)
        theta = theta + step
        sigma = np.where(unique & (curvature > 0), np.minimum(sigma, new_sigma), sigma)
        if np.all(~unique | (np.abs(step) <= 1e-3 * sigma) & np.all(use | ~unique[None, :], axis=0)):
            break
    return theta, sigma


# ----------------------------------------------------------------------------------------
# The reading of a table, kind by kind.
# ----------------------------------------------------------------------------------------


def _values_of(A: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's values (mean of its two columns) and the pairs whose columns disagree far more than the rest."""
    if layout == ONE_COLUMN:
        return A, np.zeros(A.shape[1], dtype=bool)
    first, second = pair_columns(A.shape[1], layout)
    U, V = A[:, first], A[:, second]
    disagreement = np.max(np.abs(U - V), axis=0)
    scale = float(np.max(np.abs(A))) if A.size else 1.0
    odd = disagreement > 10.0 * float(np.median(disagreement)) + 1e-9 * scale
    return 0.5 * (U + V), odd


def _fit_rows(L: int, P: int) -> int:
    return int(min(L, max(64, FIT_CELLS // max(P, 1))))


def _sample_rows(L: int, n_fit: int) -> np.ndarray:
    return np.unique(np.concatenate([np.arange(n_fit), np.linspace(0, L - 1, n_fit).round().astype(np.int64)]))


def _read_real(A: np.ndarray, layout: str, transposed: bool, precision: tuple[str, float]) -> list[TableReading]:
    """The cos and sin readings of a table whose rows are positions (each verified)."""
    L, width = A.shape
    d = 2 * width if layout == ONE_COLUMN else width
    P = d // 2
    X, odd = _values_of(A, layout)
    n_fit = _fit_rows(L, P)
    largest = float(np.max(np.abs(X))) if X.size else 0.0
    cast = _cast_error(precision[0], precision[1], largest)
    floor = max(cast, largest * _unit(precision), 1e-300) / math.sqrt(3.0)
    A_fit, B_fit, theta = _sinusoid_fit(X[:n_fit])
    turning = (theta * (n_fit - 1) >= 3.0) & ~odd
    amplitudes = np.hypot(A_fit, B_fit)
    chosen = amplitudes[turning] if np.any(turning) else amplitudes[~odd][:1]
    if chosen.size == 0 or float(np.median(chosen)) <= 0:
        return []
    a = float(np.median(chosen))
    spread = float(np.median(np.abs(chosen - a))) * 1.4826 / math.sqrt(chosen.size)
    # The amplitude is known to a rounding step of the values at best (their rounding is not independent).
    a_error = spread + floor * math.sqrt(3.0) + 2.0**-40 * a
    a = 1.0 if abs(a - 1.0) <= AGREEMENT * a_error else a
    noise = floor / a
    # A pair whose values never change over the L rows (proportional RoPE's unrotated pairs hold a and 0) turns
    # by at most 4 sqrt(e) over them, e the values' relative rounding (at worst they straddle an extremum of
    # the cosine): its frequency is at most that over L - 1, taken twice for safety.
    still = np.where((np.ptp(X, axis=0) == 0) & ~odd,
                     8.0 * math.sqrt(cast / a + 2.0 * FLOAT32_UNIT) / max(L - 1, 1), np.inf)
    centre = (n_fit - 1) / 2.0
    rows = _sample_rows(L, n_fit)
    t = rows - centre
    Y = X[rows] / a
    # Starting values: the sinusoid fit, or a barely turning cosine's level and slope, whichever explains
    # the pair's values on the fit rows better.
    head, t_head = X[:n_fit] / a, np.arange(n_fit) - centre
    slow_theta, slow_phase = _slow_start(head)
    fitted_phase = np.arctan2(-B_fit, A_fit)

    def misfit(phase: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return np.sum((head - np.cos(phase + np.multiply.outer(t_head, theta))) ** 2, axis=0)

    sinusoid = turning | (misfit(fitted_phase, theta) <= misfit(slow_phase, slow_theta))
    phase0, theta0 = np.where(sinusoid, fitted_phase, slow_phase), np.where(sinusoid, theta, slow_theta)
    phase, theta_local, sigma_phase, sigma_local = _phase_fit(Y, t, phase0, theta0, noise, centre)
    # A fit far worse than the others' found no sinusoid there (or a wrong one): the pair is not read.
    residual = np.sqrt(misfit(phase, theta_local) / n_fit)
    failed = residual > 10.0 * float(np.median(residual)) + max(10.0 * noise, 1e-4)
    sigma_local = np.where(odd | failed, math.inf, sigma_local)
    local = _Pairs(theta_local, sigma_local, phase, sigma_phase, centre, a, a_error, noise)
    tables = []
    # Cosine or sine: the kind whose phases agree on a start at least cost is read first.
    starts = {kind: _find_start(theta_local, sigma_local, phase + shift, sigma_phase, centre)
              for kind, shift in (("rope_cos", 0.0), ("rope_sin", math.pi / 2))}
    for kind in sorted(starts, key=lambda k: starts[k][1]):
        shift = 0.0 if kind == "rope_cos" else math.pi / 2
        start, _cost, ambiguous = starts[kind]
        positions = start + rows.astype(np.float64)
        theta_abs, sigma_abs = _absolute(Y, positions, shift, local, start, np.isfinite(sigma_local))
        # A pair whose values barely leave +-a (at most 10 % below it) is read from how far below a they
        # stay: a's own error moves it by (error of a) / (2 (1 - |x/a|)), relative.
        below = 1.0 - np.abs(np.clip(Y, -1.0, 1.0))
        depth = np.maximum(np.mean(below, axis=0), 1e-300)
        level_read = np.max(below, axis=0) < 0.1
        sigma_abs = np.where(level_read, np.hypot(sigma_abs, np.abs(theta_abs) * (a_error / a) / (2.0 * depth)),
                             sigma_abs)
        measured = _measured(theta_abs, sigma_abs, still)
        for reading in read_frequencies(measured, d)[:4]:
            table = TableReading(kind, layout, transposed, d, start, a, reading, measured, a_error,
                           start_ambiguous=ambiguous, left_out=tuple(int(i) for i in np.flatnonzero(odd)))
            _verify_real(A, table, precision)
            tables.append(table)
            if _settled(table):
                break
        if tables and _settled(tables[-1]):
            break
    return tables


def _matches(table: TableReading) -> bool:
    return table.excess <= 1.0 and table.problem is None


def _digits(base: float | None) -> int:
    return 0 if base is None else shortest(base, 1e-12)[1]


def _settled(table: TableReading) -> bool:
    """A match no later reading can better: a round base, or a fit in float64 arithmetic (the readings
    come shortest base first; a longer one is tried only where the values hold more digits)."""
    return _matches(table) and (_digits(table.reading.base) <= 2 or table.arithmetic == "float64")


def _preferred(tables: list[TableReading]) -> list[TableReading]:
    """The matches, best first: fitting in float64 arithmetic, then the fewest digits of the base."""
    return sorted((t for t in tables if _matches(t)), key=lambda t: (t.arithmetic != "float64",
                                                                       _digits(t.reading.base), t.excess))


def _slow_start(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """theta and phase of cos(phase + theta t) from the level and slope of a barely turning cosine."""
    n = Y.shape[0]
    t = np.arange(n) - (n - 1) / 2.0
    c2, c1, c0 = np.polyfit(t, Y, 2) if n >= 3 else (np.zeros(Y.shape[1]),) * 3
    level = np.clip(c0, -1.0, 1.0)
    sine = np.sqrt(1.0 - level**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_slope = np.abs(c1) / sine
        by_curvature = np.sqrt(np.abs(2.0 * c2 / np.where(level != 0, level, 1.0)))
    theta = np.where(sine > 0.1, by_slope, by_curvature)
    theta = np.where(np.isfinite(theta), theta, 0.0)
    # x = cos(phase + theta t): the slope -sin(phase) theta says the sign of the phase (theta >= 0).
    phase = np.arctan2(-np.sign(c1) * sine, level)
    return np.maximum(theta, 1e-12), phase


def _measured(theta: np.ndarray, sigma: np.ndarray, still: np.ndarray | None = None) -> MeasuredFrequencies:
    """The frequencies as the reading takes them. A pair too slow to read is bounded by the read pair
    before it (every shipped method keeps the frequencies non-increasing) and, where ``still`` gives one, by
    what its unchanging values allow: the rebuild of the table, not its own noisy estimate, says whether
    the reading fits it."""
    measured = MeasuredFrequencies(np.maximum(theta, 0.0), sigma, theta, 0.0, FLOAT32_UNIT)
    readable = measured.informative
    bound = np.where(readable, theta + AGREEMENT * sigma, np.inf)
    bound = np.minimum.accumulate(np.concatenate([[max(float(theta[0]), 1.0) * 1.5], bound[:-1]]))
    if still is not None:
        bound = np.minimum(bound, still)
    upper = np.where(readable, theta + AGREEMENT * sigma, bound)
    return MeasuredFrequencies(measured.theta, sigma, upper, 0.0, FLOAT32_UNIT)


def _tolerance(
    p: np.ndarray, frequencies: np.ndarray, amplitude: float, cast: float, log_base: float, uncertainty: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Allowed |M - rebuilt| per cell (rows p, pairs): float32 arithmetic, and float64 arithmetic.

    float32: each frequency off by ``float32_frequency_error``, the product p theta by half a unit of
    itself, cos and sin by a unit or two; float64: a few units of float64 (a base read to them).
    """
    angle = np.multiply.outer(np.abs(p), frequencies)
    epsilon = float32_frequency_error(2 * frequencies.size, log_base) + uncertainty
    in_float32 = 2.0 * cast + amplitude * (angle * (epsilon + FLOAT32_UNIT) + 2.0**-22)
    # float64 arithmetic, with room for a base read to a few units of float64 (never near float32's 2**-24).
    in_float64 = 2.0 * cast + amplitude * (angle * (uncertainty + 2.0**-44) + 2.0**-48)
    return in_float32, in_float64


def _uncertainty(table: TableReading) -> np.ndarray:
    """Relative uncertainty of the reading's frequencies: measured ones (per-pair divisors, a base that is
    not round) carry the error of the measurement; those of a formula with round parameters none."""
    reading, measured = table.reading, table.measured
    if reading.measured_parameters or _digits(reading.base) > 2 or reading.base is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(measured.readable, AGREEMENT * measured.sigma / measured.theta, 0.0)
        return relative
    return np.zeros_like(reading.frequencies)


def _verify_real(A: np.ndarray, table: TableReading, precision: tuple[str, float]) -> None:
    """Rebuild the cos or sin table of the reading on every row; the error, where, and how many cells exceed."""
    L, width = A.shape
    column_sets = (np.arange(width),) if table.layout == ONE_COLUMN else pair_columns(width, table.layout)
    frequencies = table.reading.frequencies
    log_base = math.log(table.reading.base) if table.reading.base else 0.0
    cast = _cast_error(precision[0], precision[1], table.amplitude)
    uncertainty = _uncertainty(table)
    block = max(1, VERIFY_CELLS // width)
    worst, excess, over, where, float64, informative = -1.0, 0.0, 0, (0, 0, 0.0, 0.0), True, 0
    for row in range(0, L, block):
        rows = A[row : row + block]
        p = table.start + np.arange(row, row + rows.shape[0], dtype=np.float64)
        angle = np.multiply.outer(p, frequencies)
        values = table.amplitude * (np.cos(angle) if table.kind == "rope_cos" else np.sin(angle))
        allowed, allowed64 = _tolerance(p, frequencies, table.amplitude, cast, log_base, uncertainty)
        for columns in column_sets:
            difference = np.abs(rows[:, columns] - values)
            ratio = difference / allowed
            over += int(np.count_nonzero(ratio > 1.0))
            informative += int(np.count_nonzero(allowed < 0.1 * table.amplitude))
            float64 = float64 and bool(np.all(difference <= allowed64))
            excess = max(excess, float(np.max(ratio)))
            flat = int(np.argmax(difference))
            r, c = divmod(flat, difference.shape[1])
            if difference[r, c] > worst:
                worst = float(difference[r, c])
                where = (row + r, int(columns[c]), float(rows[r, columns[c]]), float(values[r, c]))
    _record(table, worst, excess, where, over, A.size, float64, informative)


# ----------------------------------------------------------------------------------------
# Complex tables (freqs_cis) and their real view.
# ----------------------------------------------------------------------------------------


def _read_complex(Z: np.ndarray, precision: tuple[str, float]) -> list[TableReading]:
    """freqs_cis (L x d/2): phases read directly, then the same start search, reading and verification."""
    L, P = Z.shape
    d = 2 * P
    n_fit = _fit_rows(L, P)
    moduli = np.abs(Z[:n_fit])
    a = float(np.median(moduli))
    if a <= 0:
        return []
    cast = _cast_error(precision[0], precision[1], a)
    floor = max(cast, a * _unit(precision)) / a
    a_error = floor * a / math.sqrt(moduli.size) + 1.4826 * float(np.median(np.abs(moduli - a))) / math.sqrt(
        moduli.size) + 2.0**-40 * a
    a = 1.0 if abs(a - 1.0) <= AGREEMENT * a_error else a
    centre = (n_fit - 1) / 2.0
    t = np.arange(n_fit) - centre
    unwrapped = np.unwrap(np.angle(Z[:n_fit]), axis=0)
    theta = t @ (unwrapped - unwrapped.mean(0)) / (t @ t) if n_fit > 1 else np.zeros(P)
    residual = unwrapped - unwrapped.mean(0) - np.multiply.outer(t, theta)
    rms = np.sqrt(np.sum(residual**2, 0) / max(n_fit - 2, 1))
    noise = max(floor, 1e-300)
    sigma_theta = np.maximum(rms, noise) / math.sqrt(max(t @ t, 1e-300))
    phase = np.angle(np.exp(1j * unwrapped.mean(0)))
    sigma_phase = np.maximum(rms, noise) / math.sqrt(n_fit)
    negative = theta < 0
    sigma_theta = np.where(negative, math.inf, sigma_theta)
    start, _cost, ambiguous = _find_start(theta, sigma_theta, phase, sigma_phase, centre)
    rows = _sample_rows(L, n_fit)
    positions = start + rows.astype(np.float64)
    theta_abs, sigma_abs = _absolute_complex(Z[rows] / a, positions, theta, sigma_theta, phase, sigma_phase,
                                             start + centre, noise)
    measured = _measured(theta_abs, sigma_abs)
    tables = []
    for reading in read_frequencies(measured, d)[:4]:
        table = TableReading("rope_complex", "interleaved", False, d, start, a, reading, measured, a_error,
                       start_ambiguous=ambiguous)
        _verify_complex(Z, table, precision)
        tables.append(table)
        if _settled(table):
            break
    return tables


def _absolute_complex(
    Z: np.ndarray, p: np.ndarray, theta: np.ndarray, sigma: np.ndarray, phase: np.ndarray, sigma_phase: np.ndarray,
    position: float, noise: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Absolute frequencies from phases: the one whole wrap at the centre, then least squares on p theta."""
    theta, sigma = theta.copy(), sigma.copy()
    unique = np.isfinite(sigma) & (sigma * abs(position) < 0.25 * math.pi) & (abs(position) >= 1.0)
    wrap = np.rint((position * theta - phase) / (2 * math.pi))
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(unique, (phase + 2 * math.pi * wrap) / position, theta)
        sigma = np.where(unique, sigma_phase / abs(position), sigma)
    for _ in range(30):
        reach = np.where(unique, 0.3 / np.maximum(sigma, 1e-300), 0.0)
        use = np.abs(p)[:, None] <= reach[None, :]
        residual = np.where(use, np.angle(Z * np.exp(-1j * np.multiply.outer(p, theta))), 0.0)
        weight = np.sum(np.where(use, p[:, None] ** 2, 0.0), axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(unique & (weight > 0), np.sum(residual * p[:, None], 0) / weight, 0.0)
            rms = np.sqrt(np.sum(residual**2, 0) / np.maximum(np.sum(use, 0) - 1, 1))
            sigma = np.where(unique & (weight > 0), np.minimum(sigma, np.maximum(rms, noise) / np.sqrt(weight)),
                             sigma)
        theta = theta + step
        if np.all(np.all(use | ~unique[None, :], axis=0) & (np.abs(step) <= 1e-3 * np.maximum(sigma, 1e-300))):
            break
    return theta, sigma


def _verify_complex(Z: np.ndarray, table: TableReading, precision: tuple[str, float]) -> None:
    L, P = Z.shape
    frequencies = table.reading.frequencies
    log_base = math.log(table.reading.base) if table.reading.base else 0.0
    cast = _cast_error(precision[0], precision[1], table.amplitude) * math.sqrt(2.0)
    uncertainty = _uncertainty(table)
    block = max(1, VERIFY_CELLS // P)
    worst, excess, over, where, float64, informative = -1.0, 0.0, 0, (0, 0, 0.0, 0.0), True, 0
    for row in range(0, L, block):
        rows = Z[row : row + block]
        p = table.start + np.arange(row, row + rows.shape[0], dtype=np.float64)
        values = table.amplitude * np.exp(1j * np.multiply.outer(p, frequencies))
        allowed, allowed64 = _tolerance(p, frequencies, table.amplitude, cast, log_base, uncertainty)
        difference = np.abs(rows - values)
        ratio = difference / allowed
        over += int(np.count_nonzero(ratio > 1.0))
        informative += int(np.count_nonzero(allowed < 0.1 * table.amplitude))
        float64 = float64 and bool(np.all(difference <= allowed64))
        excess = max(excess, float(np.max(ratio)))
        r, c = divmod(int(np.argmax(difference)), P)
        if difference[r, c] > worst:
            worst = float(difference[r, c])
            where = (row + r, c, complex(rows[r, c]), complex(values[r, c]))
    _record(table, worst, excess, where, over, Z.size, float64, informative)


def _record(
    table: TableReading, error: float, excess: float, where: tuple, over: int, cells: int, float64: bool,
    informative: int,
) -> None:
    """Store a verification's outcome. Where float32 angles are too coarse to say anything (positions
    so large that round-off allows a tenth of the amplitude in most cells), nothing is verified."""
    table.error, table.excess, table.where, table.mismatches, table.cells = error, excess, where, over, cells
    table.arithmetic = "float64" if float64 else "float32"
    table.informative = informative / max(cells, 1)
    if table.informative < INFORMATIVE_CELLS:
        table.problem = (
            "nothing in it can be checked: the frequencies a reading would need are too uncertain, or the "
            "positions too large for float32 angles, so that in a quarter of the cells or more the error allowed "
            "exceeds a tenth of the amplitude"
        )


# ----------------------------------------------------------------------------------------
# 1-D vectors: inv_freq.
# ----------------------------------------------------------------------------------------


def _read_inv_freq(vector: np.ndarray) -> dict:
    precision = stored_precision(vector)
    P = vector.size
    problem = None
    # Zeros after positive values may be the pairs proportional RoPE leaves unrotated: checked as frequencies are
    # only the values before them, and the readings decide (only proportional's can fit them).
    rotated = int(np.argmin(vector > 0)) if np.any(vector <= 0) else P
    unrotated = 0 < rotated < P and not np.any(vector[rotated:])
    head = vector[:rotated] if unrotated else vector
    if np.any(head <= 0):
        index = int(np.flatnonzero(head <= 0)[0])
        problem = (f"value {index} is {number(float(head[index]))}, but every frequency is positive "
                   "(inv_freq = 1 / base ** (2i / d))")
    elif head[0] > 1.0 + 1e-6:
        problem = (f"its first value is {head[0]:.6g}, but pair 0 turns 1 rad per position (base ** 0), "
                   "or 1/factor under a scaling, never faster")
    elif np.any(head < SLOWEST_FREQUENCY):
        index = int(np.flatnonzero(head < SLOWEST_FREQUENCY)[0])
        problem = (f"value {index} is {head[index]:.3g}, below float32's smallest normal number "
                   f"({SLOWEST_FREQUENCY:.2g}), in which transformers computes inv_freq: no base and scaling turns a "
                   "pair that slowly")
    rises = np.flatnonzero(np.diff(head) > 0) if problem is None else np.array([], dtype=np.int64)
    if rises.size:
        i = int(rises[0])
        problem = (f"its values rise from pair {i} to pair {i + 1} ({vector[i]:.6g} to {vector[i + 1]:.6g}), where "
                   "every base and scaling makes each pair turn slower than the one before")
    # Values no frequency can be (nonpositive, subnormal, faster than 1 rad per position) are read as
    # unreadable pairs: the closest reading comes from the others.
    theta = np.where((vector >= SLOWEST_FREQUENCY) & (vector <= 1.0 + 1e-6), vector, 0.0)
    cast = 2.0 * precision[1] if "decimals" not in precision[0] else 0.0
    sigma = np.zeros(P) if "decimals" not in precision[0] else np.full(P, precision[1])
    measured = MeasuredFrequencies(theta, sigma, theta, cast, FLOAT32_UNIT)
    reading = read_frequencies(measured, 2 * P)[0]
    if problem is None and unrotated and (reading.scaling or {}).get("method") != "proportional":
        # A reading that only bounds the zero pairs (LongRoPE's divisors leave them unread) is none of them.
        problem = f"value {rotated} is 0, but every frequency is positive (inv_freq = 1 / base ** (2i / d))"
    expected = reading.frequencies
    difference = np.abs(vector - expected)
    worst = int(np.argmax(difference))
    matched = problem is None and reading.fits
    result = _common_keys(
        kind="rope_inv_freq" if matched else None, d=2 * P, layout=None, base=reading.base, start=None,
        error=float(difference[worst]), dtype=precision[0] if matched else None,
        scaling=_scaling_key(reading) if matched else None, attention_factor=None,
    )
    if matched:
        sentences = [
            f"RoPE frequency vector (inv_freq) of {P} pair{'s' if P > 1 else ''}, d = {2 * P}: "
            f"{base_phrase(reading)}.",
            scaling_sentence(reading, d=2 * P, table=False),
            f"It matches every value to {result['max_abs_error']:.1e}, within the rounding of "
            f"{precision[0]} values computed in float32 as transformers computes them.",
            *reading.notes,
            alternatives_sentence(reading),
            "The attention factor is not in inv_freq (transformers multiplies cos and sin by it).",
        ]
        result["verdict"] = " ".join(s for s in sentences if s)
        result["alternatives"] = list(reading.alternatives)
        return result
    closest = f"{base_phrase(reading)}" + (f", {method_phrase(reading)}" if reading.scaling else "")
    reason = problem or (
        f"no base and scaling gives these frequencies: the closest reading ({closest}) differs most at pair "
        f"{worst}, where the vector has {vector[worst]:.6g} and the reading {expected[worst]:.6g}"
    )
    result["verdict"] = f"Not a RoPE frequency vector (inv_freq): {reason}."
    result["layout"] = None
    result["worst_cell"] = [worst]
    return result


# ----------------------------------------------------------------------------------------
# Result dicts.
# ----------------------------------------------------------------------------------------


def _scaling_key(reading: FrequencyReading) -> dict | None:
    return None if reading.scaling is None else dict(reading.scaling)


def _common_keys(
    *, kind: str | None, d: int | None, layout: str | None, base: float | None, start: int | None, error: float,
    dtype: str | None, scaling: dict | None, attention_factor: float | None, transposed: bool = False,
) -> dict:
    return {
        "kind": kind,
        "layout": layout,
        "convention": None,
        "n": None if base is None else float(base),
        "start": start,
        "max_abs_error": float(error),
        "verdict": "",
        "transposed": transposed,
        "dtype_guess": dtype,
        "closest_convention": None,
        "zero_rows": [],
        "zero_columns": [],
        "d": d,
        "scaling": scaling,
        "attention_factor": attention_factor,
        "alternatives": [],
        "unreadable_pairs": [],
        "worst_cell": None,
    }


def _attention_factor(table: TableReading) -> float:
    """The amplitude, as the method's formula gives it when the measurement agrees within its error."""
    scaling = table.reading.scaling
    reading = rope_method(scaling["method"]).attention_reading if scaling else None
    if reading is None:
        return table.amplitude
    return reading(table.amplitude, table.amplitude_error, scaling)[0]


def _closest(tables: list[TableReading]) -> TableReading:
    """The reading a near miss is compared with: the first (the shortest base, the simplest scaling) of
    those that miss by at most half again the least misfit."""
    checkable = [t for t in tables if t.problem is None] or tables
    least = min(t.excess for t in checkable)
    return next(t for t in checkable if t.excess <= 1.5 * least)


def _result_layout(table: TableReading) -> str | None:
    # A complex table's pairs are adjacent coordinates: Meta's code multiplies it with
    # view_as_complex(x.reshape(..., -1, 2)), the interleaved layout (table.layout says so).
    return "half" if table.layout == ONE_COLUMN else table.layout


def _table_result(tables: list[TableReading], shape: tuple[int, ...], precision: tuple[str, float]) -> dict:
    matched = _preferred(tables)
    table = matched[0] if matched else _closest(tables)
    reading = table.reading
    result = _common_keys(
        kind=table.kind if matched else None, d=table.d, layout=_result_layout(table),
        base=reading.base, start=table.start, error=table.error, dtype=precision[0] if matched else None,
        scaling=_scaling_key(reading) if matched else None, attention_factor=_attention_factor(table) if matched
        else None,
        transposed=table.transposed,
    )
    if matched:
        result["verdict"] = matched_verdict(table, shape, precision)
        result["alternatives"] = list(reading.alternatives)
        result["unreadable_pairs"] = [int(i) for i in unread_pairs(table)]
    else:
        result["verdict"] = rejected_verdict(table, shape)
        row, column = table.where[:2]
        result["worst_cell"] = [column, row] if table.transposed else [row, column]
    return result


# ----------------------------------------------------------------------------------------
# Entry points for identify_encoding.
# ----------------------------------------------------------------------------------------


def _not_rotary_input(array: np.ndarray) -> ValueError:
    return ValueError(
        "M must be a 2-D table (positions x dimensions), a 1-D vector of RoPE frequencies (inv_freq), a complex "
        f"table (freqs_cis, positions x d/2) or its real view (positions, d/2, 2); got an array of shape {array.shape}."
    )


def _complex_array(array: np.ndarray) -> np.ndarray:
    parts = check_matrix("M (the complex table to identify)", np.stack([array.real, array.imag], axis=-1), ndim=(3,))
    return parts[..., 0] + 1j * parts[..., 1]


def identify_rotary(M: object) -> dict | None:
    """The rotary reading of M, or None when M is a 2-D real table that does not pair as a rotary one.

    Args:
        M: what identify_encoding was given.

    Returns:
        The result dict for a 1-D vector (inv_freq), a complex table (freqs_cis), its real view
        (L, d/2, 2), or a real 2-D table whose columns pair up as a rotary layout's; None for any
        other 2-D real table (the sinusoidal reading's, to which ``with_rotary_keys`` adds these
        keys). Besides identify_encoding's ("layout" is "half" or "interleaved" for a rotary
        table, None for inv_freq and freqs_cis; "convention" and "closest_convention" None;
        "n" the base, "start" the position of row 0, "max_abs_error", "verdict", "transposed",
        "dtype_guess", "zero_rows", "zero_columns"):

        - ``"kind"``: "sinusoidal", "rope_cos", "rope_sin", "rope_inv_freq", "rope_complex", or
          None when nothing fits (the verdict then names the closest reading and where it differs);
        - ``"d"``: the rotary dimension (2 x the pairs);
        - ``"scaling"``: None, or a dict with "method" and "factor" and what the frequencies fix
          of the method's parameters: yarn "truncate", "ramp" (the pairs where it starts and
          ends) and the intervals "original_length_over_beta_fast" / "_slow"; llama3
          "low_freq_wavelength" and "high_freq_wavelength"; longrope "divisors" (None where a pair
          is too slow to read); proportional "partial_rotary_factor" (the rotated pairs' share) and
          "rotated_pairs" (an inv_freq whose last values are exactly 0); with "original_length"
          and the method's other parameters completed by its defaults, listed in "assumed";
        - ``"attention_factor"``: the amplitude of a table (YaRN's 0.1 ln s + 1 where it agrees),
          None for inv_freq, which does not hold it;
        - ``"alternatives"``: readings no table tells from this one (NTK-aware or dynamic NTK of a
          round base, the other of yarn and llama3), as dicts;
        - ``"unreadable_pairs"``: pairs too slow to read at the table's positions;
        - ``"worst_cell"``: for a near miss, the [row, column] of M (or [index] of a vector)
          where the closest reading differs most; else None.

    Raises:
        ValueError: M is of another shape, empty, holds NaN or infinity, or is too large.
    """
    try:
        array = np.asarray(M)
    except (TypeError, ValueError) as error:
        raise ValueError(f"M must be an array of numbers: {error}.") from error
    if np.iscomplexobj(array):
        if array.ndim != 2:
            raise _not_rotary_input(array)
        Z = _complex_array(array)
        return _complex_result(Z, Z.shape)
    if array.ndim == 3 and array.shape[-1] == 2:
        view = check_matrix("M (the real view of a complex table)", array, ndim=(3,))
        return _complex_result(view[..., 0] + 1j * view[..., 1], view.shape)
    if array.ndim == 1:
        vector = check_matrix("M (the frequency vector to identify)", array, ndim=(1,))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return _read_inv_freq(vector)
    if array.ndim != 2:
        if array.dtype.kind in "iufb":
            raise _not_rotary_input(array)
        return None  # check_matrix names what is wrong
    matrix = check_matrix("M (the matrix to identify)", array)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _real_result(matrix)


def _real_result(matrix: np.ndarray) -> dict | None:
    pairings = [p for p in _pairings(matrix) if p.rotary]
    if not pairings or np.ptp(matrix) == 0:
        return None
    best = pairings[0]
    A = matrix.T if best.transposed else matrix
    if A.shape[0] < MIN_ROWS:
        result = _common_keys(kind=None, d=A.shape[1], layout=best.layout, base=None, start=None, error=math.nan,
                              dtype=None, scaling=None, attention_factor=None, transposed=best.transposed)
        result["verdict"] = (f"Not readable as a RoPE table: its columns pair up as a rotary table's, but "
                             f"{A.shape[0]} positions are too few (at least {MIN_ROWS}).")
        return result
    precision = stored_precision(matrix)
    tables = []
    for pairing in pairings[:2]:
        if pairing.mismatch > 3 * best.mismatch + 0.01:
            continue
        A = matrix.T if pairing.transposed else matrix
        tables += _read_real(A, pairing.layout, pairing.transposed, precision)
        if tables and tables[-1].excess <= 1.0 and tables[-1].problem is None:
            break
    if not tables:
        return None
    return _table_result(tables, matrix.shape, precision)


def _complex_result(Z: np.ndarray, shape: tuple[int, ...]) -> dict:
    check_finite_values("M", Z.view(np.float64))
    if Z.size > MAX_CELLS:
        raise ValueError(f"M has {Z.size:,} values, more than the limit of {MAX_CELLS:,}.")
    precision = stored_precision(Z.view(np.float64))
    L, P = Z.shape
    if L < MIN_ROWS:
        result = _common_keys(kind=None, d=2 * P, layout=None, base=None, start=None, error=math.nan, dtype=None,
                              scaling=None, attention_factor=None)
        result["verdict"] = f"Not readable as a RoPE complex table: {L} positions are too few (at least {MIN_ROWS})."
        return result
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        tables = _read_complex(Z, precision)
    if not tables:
        result = _common_keys(kind=None, d=2 * P, layout=None, base=None, start=None, error=float(np.max(np.abs(Z))),
                              dtype=None, scaling=None, attention_factor=None)
        result["verdict"] = "Not a RoPE complex table: every value is 0, where freqs_cis has modulus 1 (or a)."
        return result
    return _table_result(tables, shape, precision)


def _one_column_result(matrix: np.ndarray) -> dict | None:
    """A table with one column per pair (gpt-oss), if it is one: only a match is returned.

    Tried when the sinusoidal reading fails, and only on tables whose every column is a sinusoid
    turning at most 1 rad per row (Prony's recurrence explains it), so that other tables cost little.
    """
    precision = stored_precision(matrix)
    for transposed in (False, True):
        A = matrix.T if transposed else matrix
        rows = min(A.shape[0], 256)
        if rows < MIN_ROWS:
            continue
        head = A[:rows]
        middle = head[1:-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            cosine = np.sum(middle * (head[:-2] + head[2:]), 0) / (2 * np.sum(middle**2, 0))
            residual = head[2:] + head[:-2] - 2 * cosine * middle
            explained = np.sqrt(np.mean(residual**2, 0)) <= 0.05 * np.max(np.abs(head), 0) + 1e-12
        if not (np.all(explained) and np.all(cosine >= math.cos(1.0) - 0.01)):
            continue
        tables = _read_real(A, ONE_COLUMN, transposed, precision)
        matched = _preferred(tables)
        if matched:
            return _table_result(matched, matrix.shape, precision)
    return None


def with_rotary_keys(result: dict, matrix: object) -> dict:
    """The sinusoidal reading's result with the keys rotary readings add: kind "sinusoidal" (or None), d,
    scaling None, attention_factor None; a table that is neither says it is no rotary table either.

    A table the sinusoidal reading rejects may still be a rotary table with one column per pair
    (gpt-oss's cos or sin): its reading replaces the rejection when it matches.
    """
    matched = result["convention"] is not None
    if not matched:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            one_column = _one_column_result(np.asarray(matrix, dtype=np.float64))
        if one_column is not None:
            return one_column
    width = None
    if matched:
        shape = np.shape(matrix)
        width = (shape[0] if result["transposed"] else shape[1]) - len(result["zero_columns"] if not
                                                                       result["transposed"] else result["zero_rows"])
    else:
        result = {**result, "verdict": result["verdict"] + (
            " Nor is it a RoPE cos or sin table: no rotary layout pairs its columns into equal copies "
            "(transformers' cat(freqs, freqs), GPT-J's repeat_interleave)."
        )}
    return {**result, "kind": "sinusoidal" if matched else None, "d": width, "scaling": None,
            "attention_factor": None, "alternatives": [], "unreadable_pairs": [], "worst_cell": None}
