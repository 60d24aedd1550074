r"""What a vector of RoPE frequencies says about the base and the scaling that made it.

Every scaling transformers ships (``pe_core.rope.scaling.RopeScaling``) turns the plain frequencies
:math:`\theta_i = b^{-2i/d}` into :math:`\theta'_i = g_i\,\theta_i` with gains :math:`g_i` that
never rise with i (no method speeds a slower pair up):

- none, "ntk", "dynamic": :math:`g_i = 1` (the NTK scalings change the base itself);
- "linear": :math:`g_i = 1/s` for every pair, pair 0 included;
- "yarn": 1 up to the ramp's fast bound, :math:`1/s` past its slow bound, between them
  :math:`1 - w_i(1 - 1/s)` with :math:`w_i` linear in the pair index i;
- "llama3": 1 for wavelengths below :math:`L_0/\text{high\_freq\_factor}`, :math:`1/s` above
  :math:`L_0/\text{low\_freq\_factor}`, between them :math:`(1 - m_i)/s + m_i` with
  :math:`m_i` linear in :math:`\theta_i` (in :math:`L_0/\lambda_i`);
- "longrope": :math:`1/e_i`, one divisor per pair (LongRoPE's search keeps them non-decreasing);
- "proportional": :math:`1/s` for the first pairs, then pairs of frequency exactly 0 (left unrotated), which
  no other method gives: its reading comes before every other.

So the log-ratio of neighbouring pairs, :math:`\ell_i = \tfrac{d}{2}\ln(\theta'_i/\theta'_{i+1})
= \ln b + \tfrac{d}{2}\ln(g_i/g_{i+1}) \ge \ln b`, equals :math:`\ln b` wherever two neighbours
share a gain (the unchanged fast pairs, the uniformly divided slow ones, LongRoPE's runs of
equal divisors), and exceeds it elsewhere. The reading:

1. the base: the largest group of mutually consistent :math:`\ell_i` (ties: the lowest), its
   weighted mean, snapped to its shortest decimal form within 4 standard errors (the unrounded
   value is kept as a later candidate, for tables that hold more digits). Ratios clearly below
   the group mean gains that rise somewhere, which no shipped method gives; per-pair divisors
   are then read with the lowest group's base, when that is round (LongRoPE's equal neighbours);
2. the gains :math:`g_i = \theta'_i\,b^{2i/d}`, split into a prefix of ones, a plateau of equal
   gains :math:`1/s` (two pairs at least) and what lies between, which names the method: all
   ones (none), all equal (linear), ones - between - :math:`1/s` (yarn or llama3: the shape
   between decides), or any other non-increasing gains (per-pair divisors, LongRoPE);
3. each registered method reads the gains back into its own parameters (its entry's ``read``,
   ``pe_core.rope.methods``); for yarn and llama3 the parameters the gains determine: yarn's ramp
   bounds :math:`i_{fast}, i_{slow}` fix only the ratios
   :math:`L_0/\beta_{fast}` and :math:`L_0/\beta_{slow}` (to an interval when the code floors
   and ceils them), llama3's middle band fixes only :math:`L_0/\text{low\_freq\_factor}` and
   :math:`L_0/\text{high\_freq\_factor}`; the reading completes them with the defaults
   (:math:`\beta` = 32 and 1; low_freq_factor 1) where those fit and says which parameters it
   assumed. When the divided pairs are too slow to read (a table at small positions), each
   power-of-two :math:`L_0` with the default bounds gives the factor that fits the pairs between
   best; the roundest factor that fits is the reading, and the other (method, L0, factor) that
   fit as well are named. Every candidate is confirmed with ``rope_frequencies`` to the rounding
   of float32 arithmetic, as transformers computes them. The ranking is shared: readings that
   fit first; then, in this order, those read with the equal neighbours' base, those read from a
   plateau (methods whose shape between fits the pairs between better first, then the roundest
   L0), the roundest of those read without a plateau, and those that fit any falling frequencies;
4. what no vector tells apart is said: a base that is not round may be an NTK-aware or dynamic
   scaling of a round one (:math:`b' = b\,q^{d/(d-2)}`: offered for round b and q, and as
   dynamic NTK's step q for the power of ten below); linear scaling is LongRoPE with every
   divisor s; LongRoPE's base and divisors trade off (the reading takes the largest base that
   keeps the divisors non-decreasing, which makes the equal ones equal).

Pairs that could not be measured precisely (standard error above 5 %) only bound the reading
from above (up to 50 % they still rule readings out both ways), and are named by the caller.

Reference: transformers 5.18 ``modeling_rope_utils`` (every ``_compute_*_parameters``); Peng et
al. 2023 (YaRN); Meta's ``apply_scaling`` (Llama 3.1); Ding et al. 2024 (LongRoPE, whose search
keeps the rescale factors monotonically non-decreasing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pe_core.rope.methods import RopeMethod, rope_method, rope_method_names
from pe_core.rope.reading import (
    AGREEMENT,
    Compute,
    FrequencyEvidence,
    FrequencyReading,
    Gains,
    MeasuredFrequencies,
    MethodReadings,
    gains_at,
    roundness,
    shortest,
    with_note,
)
from pe_core.rope.scaling import RopeScaling, rope_frequencies
from pe_core.wording import number

__all__ = ["FrequencyReading", "MeasuredFrequencies", "read_frequencies"]


# ----------------------------------------------------------------------------------------
# 1. The base: the log-ratio most neighbours share.
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Base:
    log: float  # ln b (unsnapped)
    error: float  # its standard error
    members: np.ndarray  # indices i of the ratios theta_i / theta_{i+1} that share it
    below: np.ndarray  # ratios clearly below it: a gain that rises from pair i to i + 1
    lowest: tuple[float, float] | None = None  # ln b and error of the lowest group, when ratios lie below
    precise: float = math.nan  # ln b from the same ratios weighted by their statistical error alone


#: ln of the largest float64: a base read as larger is none (exp would overflow).
_LOG_LARGEST = math.log(np.finfo(np.float64).max)


def _common_base(measured: MeasuredFrequencies, d: int) -> _Base | None:
    theta, readable = measured.theta, measured.readable
    both = np.flatnonzero(readable[:-1] & readable[1:])
    if both.size == 0:
        return None
    with np.errstate(divide="ignore"):
        ratios = 0.5 * d * np.log(theta[both] / theta[both + 1])
    guess = float(np.median(ratios))
    relative = measured.relative_error(guess)
    sigma = 0.5 * d * np.hypot(relative[both], relative[both + 1])
    # For each ratio as a centre, the ratios consistent with it; chunks keep memory bounded.
    counts = np.empty(both.size, dtype=np.int64)
    for first in range(0, both.size, 256):
        centre = slice(first, first + 256)
        gap = np.abs(ratios[centre, None] - ratios[None, :])
        counts[centre] = np.sum(gap <= AGREEMENT * np.hypot(sigma[centre, None], sigma[None, :]), axis=1)
    # A noisy centre's wide window may take in precise ratios that disagree with each other:
    # each group keeps only the ratios consistent with its own weighted mean.
    def group(centre: int) -> tuple[float, float, np.ndarray]:
        members = np.abs(ratios - ratios[centre]) <= AGREEMENT * np.hypot(sigma[centre], sigma)
        for _ in range(5):
            weights = np.where(members, 1.0 / sigma**2, 0.0)
            if not np.sum(weights) > 0:
                # Its members' errors are infinite (a table whose precision no value bounds): no mean to take.
                return float(ratios[centre]), math.inf, members
            log = float(np.sum(weights * ratios) / np.sum(weights))
            error = float(1.0 / math.sqrt(np.sum(weights)))
            kept = np.abs(ratios - log) <= AGREEMENT * np.hypot(sigma, error)
            if np.array_equal(kept, members) or not kept.any():
                break
            members = kept
        return log, error, members

    groups = [group(int(centre)) for centre in np.argsort(-counts, kind="stable")[:16]]
    log, error, members = min(groups, key=lambda g: (-int(np.count_nonzero(g[2])), g[0]))
    below = both[ratios < log - AGREEMENT * np.hypot(sigma, error)]
    # Rounding moves every ratio alike where the values are precise: for every digit of the base, weight each
    # ratio by how precisely the table measured it.
    statistical = 0.5 * d * np.hypot(*(np.where(measured.theta > 0, measured.sigma / measured.theta, np.inf)[k]
                                       for k in (both, both + 1))) + 1e-300
    precise = float(np.sum(ratios[members] / statistical[members] ** 2) / np.sum(1.0 / statistical[members] ** 2))
    lowest = None
    if below.size:
        # No shipped scaling lets a frequency fall slower than the base does: with ratios clearly below the
        # largest group, the base of per-pair divisors (LongRoPE's few equal neighbours) is the lowest group.
        lowest = group(int(np.argmin(ratios)))[:2]
    return _Base(log, error, both[members], below, lowest, precise)


# ----------------------------------------------------------------------------------------
# 2. Every registered method's readings, ranked.
# ----------------------------------------------------------------------------------------


def _computer(d: int) -> Compute:
    """compute(base, method, factor, original_length, **parameters) for FrequencyEvidence: RopeScaling builds
    (and checks) the scaling, rope_frequencies computes it."""

    def compute(base: float, method: str | None = None, factor: float = 1.0, original: int | None = None,
                **parameters: object) -> np.ndarray:
        scaling = None if method is None else RopeScaling(method, factor, original, **parameters)
        return rope_frequencies(d, base, scaling=scaling)

    return compute


def _no_reading(measured: MeasuredFrequencies) -> FrequencyReading:
    """No base and scaling: the measured frequencies themselves, fitting nothing (excess inf), with the
    pair where they stray furthest from what the measurement allows."""
    _, worst = measured.excess(measured.theta, 0.0)
    return FrequencyReading(None, measured.theta.copy(), None, (), math.inf, worst)


def _offers(found: list[tuple[RopeMethod, MethodReadings]]) -> tuple[dict, ...]:
    """Every method's offers, in the registry's order; an offer of a base an earlier one names is left out."""
    offers: list[dict] = []
    for _, readings in found:
        offers += [offer for offer in readings.offers if all(o["base"] != offer["base"] for o in offers)]
    return tuple(offers)


def _rank_plateau(found: list[tuple[RopeMethod, MethodReadings]], gains: Gains) -> list[FrequencyReading]:
    """The readings from a plateau: when methods of different shapes between fit, each names the others as
    what the frequencies cannot tell apart; the method whose shape fits the pairs between best first (when
    every one can say), then the roundest original length."""
    groups = [(method, list(readings.from_plateau), readings.shape) for method, readings in found
              if readings.from_plateau]
    shaped = [(method, group, shape) for method, group, shape in groups
              if shape is not None and any(r.fits for r in group)]
    if len(shaped) >= 2:
        between = gains.middle.size
        note = (
            f"With {between} pair{'s' if between != 1 else ''} between the unchanged and the divided ones, "
            f"{' and '.join(shape.description for *_, shape in shaped)} give the same frequencies here: "
            f"{'the two' if len(shaped) == 2 else 'they'} cannot be told apart."
        )
        first_fitting = {method.name: next(r for r in group if r.fits).scaling for method, group, _ in shaped}
        groups = [
            (method, [with_note(r, note, *(scaling for name, scaling in first_fitting.items() if name != method.name))
                      for r in group], shape) if method.name in first_fitting else (method, group, shape)
            for method, group, shape in groups
        ]
    if all(shape is not None and shape.misfit is not None for *_, shape in groups):
        groups.sort(key=lambda g: g[2].misfit)

    def rank(reading: FrequencyReading) -> tuple:
        if not reading.fits:
            return (True, (True, 0))
        # Among those that fit, the roundest original length first (a power of two, as models are trained
        # on): a ramp with unrounded bounds can mimic another shape with an odd L0.
        original = reading.scaling.get("original_length")
        return (False, roundness(float(original)) if original is not None else (False, 0))

    return sorted((r for _, group, _ in groups for r in group), key=rank)


def _rank_without_plateau(found: list[tuple[RopeMethod, MethodReadings]]) -> list[FrequencyReading]:
    """The readings whose divided pairs are too slow to read, pooled: the roundest factor that fits (ties: the
    smaller original length, then the method's pool rank), naming the other (method, L0, factor) that fit
    as well; the closest one when none fits."""
    pooled = sorted(
        ((readings.pool_rank, reading) for _, readings in found for reading in readings.without_plateau),
        key=lambda ranked: (ranked[1].scaling.get("original_length", 0), ranked[0]),
    )
    readings = [reading for _, reading in pooled]
    fitting = [reading for reading in readings if reading.fits]
    if not fitting:
        return sorted(readings, key=lambda reading: reading.excess)[:1]
    best = min(fitting, key=lambda r: (roundness(r.scaling["factor"]), r.excess))
    others = {(r.scaling["method"], r.scaling["original_length"], r.scaling["factor"]) for r in fitting} - {
        (best.scaling["method"], best.scaling["original_length"], best.scaling["factor"])}
    if others:
        listed = "; ".join(f"{m} by {number(f)} from {L0}" for m, L0, f in sorted(others)[:4])
        best = with_note(best, f"These fit the pairs read as well: {listed}{' ...' if len(others) > 4 else ''}.")
    return [best]


# ----------------------------------------------------------------------------------------
# The public function.
# ----------------------------------------------------------------------------------------


def read_frequencies(measured: MeasuredFrequencies, d: int) -> list[FrequencyReading]:
    """The readings of a frequency vector, best first (those that fit before those that do not).

    Args:
        measured: the frequencies of the d/2 pairs as measured (a vector read as it is, or a
            table's pairs as fitted).
        d: the rotary dimension, 2 x the number of pairs.

    Returns:
        A non-empty list of FrequencyReading; ``readings[0]`` is the reading to report (it fits
        when ``readings[0].fits``, else it is the closest one).

    Example:
        >>> theta = rope_frequencies(8, 10000.0, scaling=RopeScaling("linear", 4.0))
        >>> reading = read_frequencies(MeasuredFrequencies(theta, np.zeros(4), theta), 8)[0]
        >>> reading.base, reading.scaling
        (10000.0, {'method': 'linear', 'factor': 4.0})
    """
    theta = measured.theta
    P = theta.size
    readable = measured.readable
    if P == 1 or not readable[0]:
        # A single pair turns theta_0 = 1 rad per position for every base: only a division shows.
        with np.errstate(over="ignore"):
            s = 1.0 / theta[0] if readable[0] else 1.0
        if not math.isfinite(s):
            # So slow (a subnormal) that its factor 1/theta_0 overflows: no scaling a model ships.
            return [_no_reading(measured)]
        relative = AGREEMENT * float(measured.relative_error(0.0)[0])
        s = shortest(s, relative)[0] if readable[0] else 1.0
        scaling = None if s == 1.0 else {"method": "linear", "factor": s}
        frequencies = np.full(P, 1.0 / s)
        excess, worst = measured.excess(frequencies, 0.0)
        return [FrequencyReading(None, frequencies, scaling, (), excess, worst)]
    common = _common_base(measured, d)
    if common is None:
        # No two neighbouring pairs read: the base cannot be measured.
        return [_no_reading(measured)]
    log_base = common.log
    budget = AGREEMENT * common.error
    base, digits = shortest(math.exp(log_base), budget) if log_base < _LOG_LARGEST else (math.inf, 0)
    if not 1.0 < base < math.inf:
        # Frequencies that rise from pair to pair, or fall faster than any float64 base makes them: no base.
        return [_no_reading(measured)]
    lowest_base = None
    if common.lowest is not None:
        # Per-pair divisors' base shows only where neighbours share a divisor: taken when it is round. Divisors
        # without such a pair fit any falling frequencies with some base, so they are no reading.
        divisor_base, divisor_digits = shortest(math.exp(common.lowest[0]), AGREEMENT * common.lowest[1])
        if divisor_digits <= 3 and divisor_base > 1.0:
            lowest_base = divisor_base
    # Whether a scaling shows is asked of the measured base: rounding it may move the slowest gains a little.
    evidence = FrequencyEvidence(
        measured, d, base, digits, common.error, gains_at(measured, math.log(base), d),
        scaled=bool(np.any(readable & ~gains_at(measured, log_base, d).ones)), decreasing=common.below.size == 0,
        lowest_base=lowest_base, compute=_computer(d),
    )
    found = [(method, method.read(evidence)) for method in map(rope_method, rope_method_names())]
    readings = [reading for _, method_readings in found for reading in method_readings.distinctive]
    if not evidence.scaled:
        plain = evidence.reading(base, evidence.plain, None)
        offers = _offers(found)
        readings.append(FrequencyReading(base, plain.frequencies, None, (), plain.excess, plain.worst_pair, offers))
        exact = math.exp(common.precise) if math.isfinite(common.precise) else math.exp(log_base)
        if exact != base:
            # The base with every digit measured: a table may hold it more precisely than the shortest form
            # the frequencies allow (its verification decides, after the shortest form).
            unrounded = evidence.reading(exact, rope_frequencies(d, exact), None)
            readings.append(FrequencyReading(exact, unrounded.frequencies, None, (), unrounded.excess,
                                             unrounded.worst_pair, offers))
        # Pairs read only roughly may show a scaling the precisely read ones do not: offered after
        # the plain reading, for a table's verification to decide.
        readings += _rank_without_plateau(found)
    else:
        readings += [reading for _, method_readings in found for reading in method_readings.at_lowest_base]
        readings += _rank_plateau(found, evidence.gains)
        # The plateau of divided pairs may be unreadable (or be two noisy pairs of the ramp).
        readings += _rank_without_plateau(found)
        readings += [reading for _, method_readings in found for reading in method_readings.last]
        if not readings:
            # Gains that rise somewhere: no method gives that. The closest: the plain base.
            readings.append(evidence.reading(base, evidence.plain, None))
    order = sorted(range(len(readings)), key=lambda k: (not readings[k].fits, k))
    return [readings[k] for k in order]
