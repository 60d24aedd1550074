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
- "longrope": :math:`1/e_i`, one divisor per pair (LongRoPE's search keeps them non-decreasing).

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
3. for yarn and llama3 the parameters the gains determine (module ``rope.yarn_ramp`` and
   ``RopeScaling``): yarn's ramp bounds :math:`i_{fast}, i_{slow}` fix only the ratios
   :math:`L_0/\beta_{fast}` and :math:`L_0/\beta_{slow}` (to an interval when the code floors
   and ceils them), llama3's middle band fixes only :math:`L_0/\text{low\_freq\_factor}` and
   :math:`L_0/\text{high\_freq\_factor}`; the reading completes them with the defaults
   (:math:`\beta` = 32 and 1; low_freq_factor 1) where those fit and says which parameters it
   assumed. When the divided pairs are too slow to read (a table at small positions), each
   power-of-two :math:`L_0` with the default bounds gives the factor that fits the pairs between
   best; the roundest factor that fits is the reading, and the other (method, L0, factor) that
   fit as well are named. Every candidate is confirmed with ``rope_frequencies`` to the rounding
   of float32 arithmetic, as transformers computes them;
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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pe_core.rope.scaling import RopeScaling, rope_frequencies
from pe_core.wording import number

#: Standard errors within which values are taken as equal (and a base or factor is snapped).
AGREEMENT = 4.0
#: Largest relative standard error of a pair that counts as read, and of one that still counts, both ways,
#: in whether a reading fits (beyond it, only the pair's upper bound is used).
READABLE_SIGMA = 0.05
INFORMATIVE_SIGMA = 0.5
#: The largest factor and NTK step offered.
MAX_FACTOR = 1024.0


@dataclass(frozen=True)
class MeasuredFrequencies:
    r"""Each pair's angle per position as measured: value, standard error and bound.

    ``sigma`` is the statistical standard error of ``theta`` (``np.inf`` where the pair could not
    be read); ``upper`` the largest frequency the data allow (``theta + 4 sigma`` where read).
    ``cast`` is the relative error of storing a value (bfloat16: 2**-9), ``unit`` the unit
    round-off of the arithmetic the frequencies may come from (float32: 2**-24): transformers
    computes :math:`b^{2i/d}` in float32, which rounds :math:`2i/d\,\ln b` and so moves each
    frequency by up to :math:`(2\ln b + 8)\,u` relative.
    """

    theta: np.ndarray
    sigma: np.ndarray
    upper: np.ndarray
    cast: float = 0.0
    unit: float = 2.0**-24

    @property
    def readable(self) -> np.ndarray:
        return np.isfinite(self.sigma) & (self.theta > 0) & (self.sigma <= READABLE_SIGMA * self.theta)

    @property
    def informative(self) -> np.ndarray:
        """Pairs read roughly (to 50 %): too rough for the structure, enough to rule a reading out."""
        return np.isfinite(self.sigma) & (self.theta > 0) & (self.sigma <= INFORMATIVE_SIGMA * self.theta)

    def relative_error(self, log_base: float) -> np.ndarray:
        """Standard error of each read frequency, relative, with the rounding of float32 arithmetic."""
        with np.errstate(divide="ignore", invalid="ignore"):
            statistical = np.where(self.theta > 0, self.sigma / self.theta, np.inf)
        return statistical + self.cast + (2.0 * abs(log_base) + 8.0) * self.unit

    def excess(self, predicted: np.ndarray, log_base: float) -> tuple[float, int]:
        """Largest |predicted - theta| over what the measurement allows (<= 1: consistent), and where."""
        readable = self.informative
        allowed = AGREEMENT * self.relative_error(log_base) * np.abs(self.theta) + 1e-300
        ratio = np.where(readable, np.abs(predicted - self.theta) / allowed, 0.0)
        # An unread pair only says the frequency is at most its bound.
        ratio = np.where(readable, ratio, np.maximum(predicted / np.maximum(self.upper, 1e-300), 0.0))
        worst = int(np.argmax(ratio))
        return float(ratio[worst]), worst


@dataclass(frozen=True)
class FrequencyReading:
    """One reading of a frequency vector: base, scaling and the frequencies it gives every pair.

    ``scaling`` is None or the result's dict ("method", "factor" and what the frequencies
    determine of the method's parameters; "assumed" lists those the reading filled in with the
    method's defaults); ``notes`` are sentences on what no table can tell apart; ``excess`` is
    the largest misfit over what the measurement allows (<= 1: the reading fits), at ``worst_pair``.
    """

    base: float | None
    frequencies: np.ndarray
    scaling: dict | None
    notes: tuple[str, ...] = ()
    excess: float = math.inf
    worst_pair: int = 0
    alternatives: tuple[dict, ...] = field(default=())

    @property
    def fits(self) -> bool:
        return self.excess <= 1.0


# ----------------------------------------------------------------------------------------
# Numbers as a person writes them.
# ----------------------------------------------------------------------------------------


def shortest(x: float, relative: float) -> tuple[float, int]:
    """The shortest decimal form of x within ``relative`` of it, and its number of significant digits."""
    for digits in range(1, 16):
        value = float(f"{x:.{digits - 1}e}")
        if value != 0.0 and abs(value - x) <= relative * abs(x):
            return value, digits
    return x, 17


def _power_of_two_or_decimal(low: float, high: float) -> float | None:
    """The roundest number in [low, high]: a power of two, else the fewest decimal digits; None if empty."""
    if not (0 < low <= high and math.isfinite(high)):
        return None
    middle = math.sqrt(low * high)
    powers = [2.0**k for k in range(math.ceil(math.log2(low)), math.floor(math.log2(high)) + 1)]
    if powers:
        return min(powers, key=lambda p: abs(math.log(p / middle)))
    for digits in range(1, 8):
        step = 10.0 ** (math.floor(math.log10(high)) - digits + 1)
        first, last = math.ceil(low / step), math.floor(high / step)
        if first <= last:
            return min((k * step for k in range(first, last + 1)), key=lambda v: abs(math.log(v / middle)))
    return None


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
# 2. The gains: prefix of ones, tail of equal gains, the pairs between.
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Gains:
    gains: np.ndarray
    sigma: np.ndarray  # standard error of each gain, with float32 rounding
    ones: np.ndarray  # readable pairs whose gain is 1
    prefix_last: int  # last pair of the leading run of ones (-1: none)
    tail_first: int  # first pair of the trailing run of equal gains (P: none)
    tail_gain: float
    tail_error: float
    middle: np.ndarray  # readable pairs strictly between


def _gains(measured: MeasuredFrequencies, log_base: float, d: int) -> _Gains:
    P = measured.theta.size
    readable = np.flatnonzero(measured.readable)
    gains = measured.theta * np.exp(np.arange(P) * 2.0 * log_base / d)
    sigma = measured.relative_error(log_base) * np.abs(gains)
    ones = np.zeros(P, dtype=bool)
    rough = np.flatnonzero(measured.informative)
    ones[rough] = np.abs(gains[rough] - 1.0) <= AGREEMENT * sigma[rough]
    prefix = 0
    while prefix < readable.size and ones[readable[prefix]]:
        prefix += 1
    prefix_last = int(readable[prefix - 1]) if prefix else -1
    # The trailing run of equal gains, grown from the last readable pair while consistent.
    tail = readable.size
    total_weight = total = 0.0
    while tail > prefix:
        j = readable[tail - 1]
        weight = 1.0 / sigma[j] ** 2
        if total_weight:
            mean, error = total / total_weight, 1.0 / math.sqrt(total_weight)
            if abs(gains[j] - mean) > AGREEMENT * math.hypot(sigma[j], error):
                break
        total_weight += weight
        total += weight * gains[j]
        tail -= 1
    # A plateau needs two pairs, unless it holds every pair read (linear scaling of a short head).
    if tail < readable.size and (readable.size - tail >= 2 or tail == 0):
        tail_first = int(readable[tail])
        tail_gain, tail_error = total / total_weight, 1.0 / math.sqrt(total_weight)
    else:
        tail_first, tail_gain, tail_error = P, 1.0, math.inf
    middle = readable[(readable > prefix_last) & (readable < tail_first)]
    return _Gains(gains, sigma, ones, prefix_last, tail_first, tail_gain, tail_error, middle)


# ----------------------------------------------------------------------------------------
# 3. Candidate readings.
# ----------------------------------------------------------------------------------------


def _reading(
    measured: MeasuredFrequencies, d: int, base: float, frequencies: np.ndarray, scaling: dict | None,
    notes: tuple[str, ...] = (),
) -> FrequencyReading:
    excess, worst = measured.excess(frequencies, math.log(base))
    return FrequencyReading(base, frequencies, scaling, notes, excess, worst)


def _scaled(
    measured: MeasuredFrequencies, d: int, base: float, method: str, s: float, original: float | None,
    determined: dict, notes: tuple[str, ...] = (), **parameters: object,
) -> list[FrequencyReading]:
    """The reading of one candidate scaling, or none when RopeScaling rejects its parameters (they
    come from the data, and noise can put them out of any model's range)."""
    try:
        scaling = RopeScaling(method, s, None if original is None else round(original), **parameters)
        frequencies = rope_frequencies(d, base, scaling=scaling)
    except ValueError:
        return []
    return [_reading(measured, d, base, frequencies, determined, notes)]


def _factor(gains: _Gains) -> float:
    """s = 1 / tail gain, in its shortest decimal form within its error."""
    s = 1.0 / gains.tail_gain
    relative = AGREEMENT * gains.tail_error / gains.tail_gain + 1e-12
    return shortest(s, relative)[0]


def _linear_readings(measured: MeasuredFrequencies, d: int, base: float, s: float) -> list[FrequencyReading]:
    notes = (
        f"Linear scaling by {number(s)} divides every pair, pair 0 included (which no base changes), so "
        "the factor is read from the fastest pair alone. LongRoPE with every divisor "
        f"{number(s)} gives the same frequencies, and so does YaRN whose ramp lies past the last pair.",
    )
    return _scaled(measured, d, base, "linear", s, None, {"method": "linear", "factor": s}, notes)


def _yarn_readings(
    measured: MeasuredFrequencies, d: int, base: float, s: float, gains: _Gains
) -> list[FrequencyReading]:
    """YaRN candidates: the ramp's bounds from where the gains leave 1 and reach 1/s."""
    ln_b = math.log(base)
    readable = np.flatnonzero(measured.readable)
    w = (1.0 - gains.gains) / (1.0 - 1.0 / s)  # share of the divided frequency

    def turns(index: float) -> float:
        # L0 / beta of a bound at this (fractional) pair index: c(beta) = d ln(L0/(2 pi beta)) / (2 ln b).
        return 2.0 * math.pi * math.exp(2.0 * index * ln_b / d)

    readings = []
    # truncate=True: integer bounds; the last unchanged pair is i_fast, the first divided one i_slow.
    after_prefix = readable[readable > gains.prefix_last]
    before_tail = readable[readable < gains.tail_first]
    fast_stop = int(after_prefix[0]) if after_prefix.size else gains.prefix_last + 1
    fast_options = range(max(gains.prefix_last, 0), fast_stop)
    slow_options = range(int(before_tail[-1]) + 1 if before_tail.size else 1, gains.tail_first + 1)
    for i_fast in list(fast_options)[:4]:
        for i_slow in list(slow_options)[:4]:
            if i_slow <= i_fast:
                continue
            fast_interval = (turns(i_fast) if i_fast > 0 else 0.0, turns(i_fast + 1))
            slow_interval = (turns(i_slow - 1), turns(i_slow) if i_slow < d - 1 else math.inf)
            readings += _yarn_candidates(measured, d, base, s, True, (i_fast, i_slow), fast_interval, slow_interval)
    # truncate=False (gpt-oss): real bounds, from a straight line through the middle's shares.
    if gains.middle.size >= 2:
        x = gains.middle.astype(np.float64)
        slope, intercept = np.polyfit(x, w[gains.middle], 1)
        if slope > 0:
            i_fast, i_slow = -intercept / slope, (1.0 - intercept) / slope
            # How far the bounds may move: the shares' errors (and misfit) over the ramp's slope.
            misfit = np.abs(w[gains.middle] - (slope * x + intercept))
            share_error = np.max(AGREEMENT * gains.sigma[gains.middle] / (1.0 - 1.0 / s) + misfit)
            relative = 2.0 * ln_b / d * share_error / slope
            readings += _yarn_candidates(
                measured, d, base, s, False, (i_fast, i_slow), (turns(i_fast),) * 2, (turns(i_slow),) * 2, relative
            )
    return readings


def _yarn_candidates(
    measured: MeasuredFrequencies, d: int, base: float, s: float, truncate: bool,
    bounds: tuple[float, float], fast_interval: tuple[float, float], slow_interval: tuple[float, float],
    relative: float = 0.0,
) -> list[FrequencyReading]:
    """A yarn reading for ramp bounds: L0 and the betas, the defaults (32, 1) where they fit.

    Unrounded bounds (``truncate=False``) give L0/beta exactly, to ``relative``; rounded ones an interval.
    """
    if not truncate:
        # With beta_fast = 32, L0 is the roundest number the bound's precision allows.
        wanted = 32.0 * fast_interval[0]
        original = _power_of_two_or_decimal(wanted * (1 - relative), wanted * (1 + relative)) or wanted
        wanted = original / slow_interval[0]
        beta_slow = _power_of_two_or_decimal(wanted * (1 - relative), wanted * (1 + relative)) or wanted
        candidates = [(original, 32.0, beta_slow, ("beta_fast",))]
    else:
        original = _power_of_two_or_decimal(
            max(32.0 * fast_interval[0], slow_interval[0]), min(32.0 * fast_interval[1] * (1 - 1e-12), slow_interval[1])
        )
        if original is not None:
            candidates = [(original, 32.0, 1.0, ("beta_fast", "beta_slow"))]
        else:
            # Not the default betas: beta_slow 1, L0 in its interval, beta_fast from the fast interval.
            original = _power_of_two_or_decimal(*slow_interval) or slow_interval[0]
            middle = math.sqrt(max(fast_interval[0], fast_interval[1] / 2) * fast_interval[1])
            beta_fast = shortest(original / middle, 0.02)[0]
            candidates = [(original, beta_fast, 1.0, ("beta_slow",))]
    readings = []
    for original, beta_fast, beta_slow, assumed in candidates:
        if not beta_fast > beta_slow > 0 or original < 1:
            continue
        determined = {
            "method": "yarn",
            "factor": s,
            "truncate": truncate,
            "ramp": (float(bounds[0]), float(bounds[1])),
            "original_length_over_beta_fast": tuple(float(v) for v in fast_interval),
            "original_length_over_beta_slow": tuple(float(v) for v in slow_interval),
            "original_length": round(original),
            "beta_fast": float(beta_fast),
            "beta_slow": float(beta_slow),
            "assumed": assumed,
        }
        readings += _scaled(measured, d, base, "yarn", s, original, determined, beta_fast=beta_fast,
                            beta_slow=beta_slow, truncate=truncate)
    return readings


def _llama3_readings(
    measured: MeasuredFrequencies, d: int, base: float, s: float, gains: _Gains
) -> list[FrequencyReading]:
    """llama3 candidates: the wavelength bounds L0/high_freq_factor and L0/low_freq_factor."""
    theta_count = measured.theta.size
    theta = rope_frequencies(d, base)
    wavelength = 2.0 * math.pi / theta
    smooth = (gains.gains - 1.0 / s) / (1.0 - 1.0 / s)  # llama3's smooth factor m_i
    middle = gains.middle
    candidates: list[tuple[float, float, float, tuple[str, ...], dict]] = []
    if middle.size >= 2:
        # m = L0/(2 pi (high - low)) theta - low/(high - low): a line in theta.
        alpha, beta = np.polyfit(theta[middle], smooth[middle], 1)
        if alpha > 0 and beta < 0:
            low_wavelength, high_wavelength = 2 * math.pi * alpha / -beta, 2 * math.pi * alpha / (1 - beta)
            bounds = {"low_freq_wavelength": low_wavelength, "high_freq_wavelength": high_wavelength}
            # The roundest L0 and high_freq_factor near the bounds (the fit decides how near is near enough).
            for spread in (0.02, 1e-3, 1e-5):
                original = _power_of_two_or_decimal(low_wavelength * (1 - spread), low_wavelength * (1 + spread))
                ratio = low_wavelength / high_wavelength
                high = _power_of_two_or_decimal(ratio * (1 - spread), ratio * (1 + spread))
                if original is not None and high is not None:
                    candidates.append((original, 1.0, high, ("low_freq_factor",), bounds))
    else:
        # Too few pairs between the bounds: Meta's factors 1 and 4, L0 where the data put the band.
        last_one = gains.prefix_last
        first_divided = gains.tail_first if gains.tail_first < theta_count else None
        if middle.size == 1:
            i = int(middle[0])
            original = shortest(wavelength[i] * (1.0 + 3.0 * smooth[i]), 1e-3)[0]
        else:
            low = 4.0 * wavelength[last_one] if last_one >= 0 else 0.0
            high = wavelength[first_divided] if first_divided is not None else math.inf
            original = _power_of_two_or_decimal(low, high)
        if original is not None:
            bounds = {
                "low_freq_wavelength": (float(wavelength[max(last_one, 0)]), float(wavelength[min(gains.tail_first,
                                        theta_count - 1)])),
            }
            candidates.append((original, 1.0, 4.0, ("low_freq_factor", "high_freq_factor"), bounds))
    readings = []
    for original, low, high, assumed, bounds in candidates:
        if not (original >= 1 and high > low > 0):
            continue
        determined = {
            "method": "llama3",
            "factor": s,
            **{key: (tuple(float(v) for v in value) if isinstance(value, tuple) else float(value))
               for key, value in bounds.items()},
            "original_length": round(original),
            "low_freq_factor": float(low),
            "high_freq_factor": float(high),
            "assumed": assumed,
        }
        readings += _scaled(measured, d, base, "llama3", s, original, determined, low_freq_factor=low,
                            high_freq_factor=high)
        if readings and readings[-1].fits:
            break
    return readings


def _untailed_readings(measured: MeasuredFrequencies, d: int, base: float, gains: _Gains) -> list[FrequencyReading]:
    """llama3 and yarn when the divided pairs are too slow to read: for each power-of-two original length
    L0 and the method's default bounds (llama3: low_freq_factor 1, high_freq_factor 4; yarn: betas 32
    and 1, rounded or not), the factor that fits the pairs between best; the roundest reading that fits,
    naming the other (L0, factor) that fit as well."""
    after = np.flatnonzero(measured.informative)
    middle = after[after > gains.prefix_last]
    if not np.any(gains.gains[middle] < 1.0):
        return []
    weight = 1.0 / gains.sigma[middle] ** 2
    plain = rope_frequencies(d, base)
    ln_b = math.log(base)
    note = ("The pairs the scaling divides fully are too slow to read here: the factor is read from the pairs "
            "between, with the method's default bounds assumed.")
    readings: list[FrequencyReading] = []
    for original in (2.0**k for k in range(8, 21)):
        # llama3: smooth factor m_i = (L0 theta_i / (2 pi) - 1) / 3, clipped: 1 unchanged, 0 divided by s.
        smooth = np.clip((original * plain[middle] / (2 * math.pi) - 1.0) / 3.0, 0.0, 1.0)
        if np.any(smooth < 1):
            share = 1.0 - smooth  # g = 1 - share (1 - 1/s)
            readings += _untailed_factor(gains, middle, weight, share, lambda s, L0=original: _scaled(
                measured, d, base, "llama3", s, L0,
                {"method": "llama3", "factor": s, "original_length": round(L0), "low_freq_factor": 1.0,
                 "high_freq_factor": 4.0, "assumed": ("low_freq_factor", "high_freq_factor")}, (note,)))
        for truncate in (True, False):
            fast = d * math.log(original / (32 * 2 * math.pi)) / (2 * ln_b)
            slow = d * math.log(original / (2 * math.pi)) / (2 * ln_b)
            if truncate:
                fast, slow = math.floor(fast), math.ceil(slow)
            fast, slow = max(fast, 0), min(slow, d - 1)
            share = np.clip((middle - fast) / max(slow - fast, 1e-3), 0.0, 1.0)
            if np.any(share <= 0) or gains.prefix_last > fast:
                continue
            ramp = (float(fast), float(slow))
            readings += _untailed_factor(gains, middle, weight, share, lambda s, L0=original, t=truncate, r=ramp:
                                         _scaled(measured, d, base, "yarn", s, L0,
                                                 {"method": "yarn", "factor": s, "truncate": t, "ramp": r,
                                                  "original_length": round(L0), "beta_fast": 32.0, "beta_slow": 1.0,
                                                  "assumed": ("beta_fast", "beta_slow")}, (note,), truncate=t))
    fitting = [reading for reading in readings if reading.fits]
    if not fitting:
        return sorted(readings, key=lambda reading: reading.excess)[:1]
    best = min(fitting, key=lambda r: (_roundness(r.scaling["factor"]), r.excess))
    others = {(r.scaling["method"], r.scaling["original_length"], r.scaling["factor"]) for r in fitting} - {
        (best.scaling["method"], best.scaling["original_length"], best.scaling["factor"])}
    if others:
        listed = "; ".join(f"{m} by {number(f)} from {L0}" for m, L0, f in sorted(others)[:4])
        best = _with_note(best, f"These fit the pairs read as well: {listed}{' ...' if len(others) > 4 else ''}.",
                          None)
    return [best]


def _untailed_factor(
    gains: _Gains, middle: np.ndarray, weight: np.ndarray, share: np.ndarray,
    build: Callable[[float], list[FrequencyReading]],
) -> list[FrequencyReading]:
    """1 - g_i = share_i (1 - 1/s) for the pairs between: s by least squares, then the roundest factor that fits."""
    denominator = float(np.sum(weight * share**2))
    if denominator <= 0:
        return []
    divided = float(np.sum(weight * share * (1.0 - gains.gains[middle]))) / denominator
    if not 0 < divided < 1:
        return []
    return _factor_readings(1.0 / (1.0 - divided), build)


def _roundness(value: float) -> tuple:
    """Powers of two first, then fewer significant digits."""
    power = math.log2(value)
    return (power != round(power), shortest(value, 1e-12)[1])


def _factor_candidates(estimate: float) -> list[float]:
    """Factors near an estimate, roundest first: powers of two, then whole numbers, then 1 to 3 digits."""
    if not (estimate > 1.0 and math.isfinite(estimate)):
        return []
    found = {2.0**k for k in range(1, 11) if estimate / 1.5 <= 2.0**k <= estimate * 1.5}
    if estimate < 64:
        found |= {float(k) for k in range(max(2, math.ceil(0.8 * estimate)), math.floor(1.25 * estimate) + 1)}
    for digits in range(1, 4):
        value = float(f"{estimate:.{digits - 1}e}")
        if value > 1.0 and abs(value - estimate) <= 0.2 * estimate:
            found.add(value)

    return sorted(found, key=lambda value: (*_roundness(value), abs(math.log(value / estimate))))[:16]


def _factor_readings(
    estimate: float, build: Callable[[float], list[FrequencyReading]]
) -> list[FrequencyReading]:
    """The reading of the roundest factor near an estimate that fits, naming the others that fit as well
    (the frequencies cannot tell them apart); the closest one when none fits."""
    readings = [reading for s in _factor_candidates(estimate) for reading in build(s)]
    fitting = [reading for reading in readings if reading.fits]
    if not fitting:
        return sorted(readings, key=lambda reading: reading.excess)[:1]
    best = fitting[0]
    others = sorted({r.scaling["factor"] for r in fitting[1:]} - {best.scaling["factor"]})
    if others:
        several = len(others) > 1
        listed = ", ".join(number(v) for v in others)
        best = _with_note(best, (
            f"Factor{'s' if several else ''} {listed} fit{'' if several else 's'} these frequencies as well: the "
            f"table cannot tell {'them' if several else 'it'} from {number(best.scaling['factor'])}, the roundest."
        ), None)
    return [best]


def float32_frequency_error(d: int, log_base: float) -> float:
    """Relative error of a frequency transformers computes in float32: base ** (2i/d) and its inverse are
    off by a few units (6 u, u = 2**-24), plus ln(base) u where 2i/d is itself rounded (d not a power of two)."""
    exponent_rounding = 0.0 if d & (d - 1) == 0 else abs(log_base)
    return (exponent_rounding + 6.0) * 2.0**-24


def _divisor_reading(measured: MeasuredFrequencies, d: int, base: float, gains: _Gains) -> FrequencyReading:
    """Per-pair divisors (LongRoPE), each in its shortest decimal form within its error: the measurement's,
    and what float32 arithmetic moves a frequency (the same as a table's verification allows)."""
    readable = measured.readable
    arithmetic = float32_frequency_error(d, math.log(base)) + measured.cast
    divisors = []
    for i in range(measured.theta.size):
        if readable[i]:
            relative = AGREEMENT * measured.sigma[i] / measured.theta[i] + arithmetic
            divisors.append(shortest(1.0 / gains.gains[i], relative)[0])
        else:
            divisors.append(None)
    plain = rope_frequencies(d, base)
    frequencies = np.where(readable, plain / np.array([v or 1.0 for v in divisors]), measured.theta)
    notes = (
        "Per-pair divisors fit any frequencies, so this reading holds only because they do not "
        "decrease (LongRoPE keeps them so); the base and the divisors trade off (any base b' works with "
        f"divisors e_i (b/b')^(2i/d)): {number(base)} is the largest that keeps them non-decreasing, "
        "which makes the equal ones equal. Whether they are short_factor or long_factor depends on the "
        "sequence length (long_factor beyond original_max_position_embeddings).",
    )
    scaling = {"method": "longrope", "factor": None, "divisors": tuple(divisors)}
    return _reading(measured, d, base, frequencies, scaling, notes)


def _dynamic_offer(base: float, log_error: float, d: int) -> dict | None:
    """Dynamic NTK of the power of ten b below: b' = b q^(d/(d-2)), q = s L / L0 - (s - 1) at
    sequence length L. Only the step q is in the frequencies, not s, L or L0."""
    if d < 4:
        return None
    if base <= 100.0:
        return None
    round_base = 10.0 ** math.floor(math.log10(base * (1 - 1e-9)))  # the power of ten below
    q = (base / round_base) ** ((d - 2) / d)
    return {"method": "dynamic", "base": round_base, "step": shortest(q, AGREEMENT * log_error + 1e-9)[0]}


def _ntk_offers(base: float, log_error: float, d: int) -> list[dict]:
    """Round bases b and round steps q with b q^(d/(d-2)) = base: NTK-aware scaling by q of base b."""
    if d < 4:
        return []
    offers = []
    for exponent in range(2, 10):
        for mantissa in (1.0, 2.0, 5.0):
            round_base = mantissa * 10.0**exponent
            if round_base >= base * (1 - 1e-9):
                continue
            q = (base / round_base) ** ((d - 2) / d)
            relative = AGREEMENT * log_error * (d - 2) / d + 1e-9
            snapped, digits = shortest(q, relative)
            if digits <= 2 and 1.0 < snapped <= MAX_FACTOR:
                offers.append((digits, -round_base, {"method": "ntk", "factor": snapped, "base": round_base}))
    return [offer for *_, offer in sorted(offers, key=lambda o: o[:2])][:2]


def _no_reading(measured: MeasuredFrequencies) -> FrequencyReading:
    """No base and scaling: the measured frequencies themselves, fitting nothing (excess inf), with the
    pair where they stray furthest from what the measurement allows."""
    _, worst = measured.excess(measured.theta, 0.0)
    return FrequencyReading(None, measured.theta.copy(), None, (), math.inf, worst)


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
    gains = _gains(measured, math.log(base), d)
    readings: list[FrequencyReading] = []
    non_ones = np.flatnonzero(readable & ~gains.ones)
    # Whether a scaling shows is asked of the measured base: rounding it may move the slowest gains a little.
    if not np.any(readable & ~_gains(measured, log_base, d).ones):
        plain = _reading(measured, d, base, rope_frequencies(d, base), None)
        offers = tuple(_ntk_offers(base, common.error, d)) if digits > 2 else ()
        dynamic = _dynamic_offer(base, common.error, d) if digits > 2 else None
        if dynamic and all(offer["base"] != dynamic["base"] for offer in offers):
            offers += (dynamic,)
        readings.append(FrequencyReading(base, plain.frequencies, None, (), plain.excess, plain.worst_pair, offers))
        exact = math.exp(common.precise) if math.isfinite(common.precise) else math.exp(log_base)
        if exact != base:
            # The base with every digit measured: a table may hold it more precisely than the shortest form
            # the frequencies allow (its verification decides, after the shortest form).
            unrounded = _reading(measured, d, exact, rope_frequencies(d, exact), None)
            readings.append(FrequencyReading(exact, unrounded.frequencies, None, (), unrounded.excess,
                                             unrounded.worst_pair, offers))
        if gains.prefix_last >= 0:
            # Pairs read only roughly may show a scaling the precisely read ones do not: offered after
            # the plain reading, for a table's verification to decide.
            readings += _untailed_readings(measured, d, base, gains)
    else:
        s = _factor(gains) if gains.tail_first < P else None
        decreasing = common.below.size == 0
        if common.lowest is not None:
            # LongRoPE's base shows only where neighbours share a divisor: taken when it is round. Divisors
            # without such a pair fit any falling frequencies with some base, so they are no reading.
            divisor_base, divisor_digits = shortest(math.exp(common.lowest[0]), AGREEMENT * common.lowest[1])
            if divisor_digits <= 3 and divisor_base > 1.0:
                lowest_gains = _gains(measured, math.log(divisor_base), d)
                if np.all(lowest_gains.gains[readable] <= 1.0 + AGREEMENT * lowest_gains.sigma[readable]):
                    readings.append(_divisor_reading(measured, d, divisor_base, lowest_gains))
        if s is not None and s > 1.0 and gains.prefix_last < 0 and gains.tail_first == np.flatnonzero(readable)[0]:
            readings += _linear_readings(measured, d, base, s)
        elif s is not None and s > 1.0 and gains.prefix_last >= 0 and decreasing:
            yarn = _yarn_readings(measured, d, base, s, gains)
            llama3 = _llama3_readings(measured, d, base, s, gains)
            readings += _rank_shapes(yarn, llama3, gains, s, rope_frequencies(d, base))
        if gains.prefix_last >= 0 and decreasing:
            # The plateau of divided pairs may be unreadable (or be two noisy pairs of the ramp).
            readings += _untailed_readings(measured, d, base, gains)
        if decreasing and np.all(gains.gains[non_ones] < 1.0 + AGREEMENT * gains.sigma[non_ones]):
            readings.append(_divisor_reading(measured, d, base, gains))
        if not readings:
            # Gains that rise somewhere: no method gives that. The closest: the plain base.
            readings.append(_reading(measured, d, base, rope_frequencies(d, base), None))
    order = sorted(range(len(readings)), key=lambda k: (not readings[k].fits, k))
    return [readings[k] for k in order]


def _rank_shapes(
    yarn: list[FrequencyReading], llama3: list[FrequencyReading], gains: _Gains, s: float, plain: np.ndarray
) -> list[FrequencyReading]:
    """YaRN and llama3 readings, the one whose shape between the bounds fits best first; when
    both fit, each names the other as what the frequencies cannot tell apart."""
    fitting_yarn = [r for r in yarn if r.fits]
    fitting_llama3 = [r for r in llama3 if r.fits]
    if fitting_yarn and fitting_llama3:
        note = (
            f"With {gains.middle.size} pair{'s' if gains.middle.size != 1 else ''} between the unchanged and the "
            "divided ones, YaRN's ramp (linear in the pair index) and llama3's (linear in the frequency) give "
            "the same frequencies here: the two cannot be told apart."
        )
        yarn = [_with_note(r, note, fitting_llama3[0].scaling) for r in yarn]
        llama3 = [_with_note(r, note, fitting_yarn[0].scaling) for r in llama3]
    first, second = (llama3, yarn) if _prefers_llama3(gains, s, plain) else (yarn, llama3)
    # Among those that fit, the roundest original length first (a power of two, as models are trained
    # on): a ramp with unrounded bounds can mimic another shape with an odd L0.
    ranked = first + second
    return sorted(ranked, key=lambda r: (not r.fits, _roundness(float(r.scaling["original_length"]))
                                         if r.fits else (True, 0)))


def _prefers_llama3(gains: _Gains, s: float, plain: np.ndarray) -> bool:
    """Which straight line the shares between the bounds follow better: in the plain frequency
    theta_i (llama3) or in the pair index i (yarn)."""
    middle = gains.middle
    if middle.size < 3:
        return False
    share = (1.0 - gains.gains[middle]) / (1.0 - 1.0 / s)
    in_index = np.polyfit(middle.astype(float), share, 1, full=True)[1]
    in_theta = np.polyfit(plain[middle], share, 1, full=True)[1]
    return bool(in_theta.size and in_index.size and in_theta[0] < in_index[0])


def _with_note(reading: FrequencyReading, note: str, other: dict | None) -> FrequencyReading:
    alternatives = (*reading.alternatives, other) if other is not None else reading.alternatives
    return FrequencyReading(
        reading.base, reading.frequencies, reading.scaling, (*reading.notes, note), reading.excess,
        reading.worst_pair, alternatives,
    )
