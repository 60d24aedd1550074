r"""What a method's inverse reading takes and gives: a table's measured frequencies in, candidate parameters out.

Each entry of the registry (``pe_core.rope.methods``) reads a frequency vector back into its own
parameters (``RopeMethod.read``); ``pe_core.identify.frequencies.read_frequencies`` measures the base
and the gains once, asks every registered method for its candidates and ranks them all. The types
both sides share live here, under ``rope/``, because the registry is where the readings are and
``rope/`` never imports ``identify/``.

A reading proposes parameters and has them tried through ``FrequencyEvidence.compute``, which the
caller supplies: the registry cannot import ``RopeScaling`` or ``rope_frequencies`` (they dispatch
through the registry), so the evidence carries the one function that builds a scaling and computes
its frequencies.

The gains :math:`g_i = \theta'_i\,b^{2i/d}` are split into a prefix of ones, a plateau of equal
gains :math:`1/s` (two pairs at least) and the pairs between; ``pe_core.identify.frequencies``
says how each shipped method shapes them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pe_core.wording import number

#: Standard errors within which values are taken as equal (and a base or factor is snapped).
AGREEMENT = 4.0
#: Largest relative standard error of a pair that counts as read, and of one that still counts, both ways,
#: in whether a reading fits (beyond it, only the pair's upper bound is used).
READABLE_SIGMA = 0.05
INFORMATIVE_SIGMA = 0.5
#: The largest factor and NTK step offered.
MAX_FACTOR = 1024.0
#: The trained lengths tried when the divided pairs are too slow to read: the powers of two models train on.
TRAINED_LENGTHS = tuple(2.0**k for k in range(8, 21))
#: Said of a reading whose factor comes from the pairs between, the divided ones being unread.
UNREAD_PLATEAU_NOTE = ("The pairs the scaling divides fully are too slow to read here: the factor is read from the "
                       "pairs between, with the method's default bounds assumed.")


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
    ``measured_parameters``: the parameters are the measured values themselves (per-pair divisors),
    so its frequencies carry the measurement's error, where a formula's round parameters carry none.
    """

    base: float | None
    frequencies: np.ndarray
    scaling: dict | None
    notes: tuple[str, ...] = ()
    excess: float = math.inf
    worst_pair: int = 0
    alternatives: tuple[dict, ...] = field(default=())
    measured_parameters: bool = False

    @property
    def fits(self) -> bool:
        return self.excess <= 1.0


def with_note(reading: FrequencyReading, note: str, *others: dict) -> FrequencyReading:
    """The reading with one more note, and the readings it names as indistinguishable among its alternatives."""
    return dataclasses.replace(reading, notes=(*reading.notes, note), alternatives=(*reading.alternatives, *others))


@dataclass(frozen=True)
class Gains:
    """The gains g_i = theta'_i b^(2i/d) of a base: a prefix of ones, a plateau of equal gains, the pairs between."""

    gains: np.ndarray
    sigma: np.ndarray  # standard error of each gain, with float32 rounding
    ones: np.ndarray  # readable pairs whose gain is 1
    prefix_last: int  # last pair of the leading run of ones (-1: none)
    tail_first: int  # first pair of the trailing run of equal gains (P: none)
    tail_gain: float
    tail_error: float
    middle: np.ndarray  # readable pairs strictly between


def gains_at(measured: MeasuredFrequencies, log_base: float, d: int) -> Gains:
    """The measured frequencies' gains over the plain ones of base exp(log_base), split as ``Gains`` says."""
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
    return Gains(gains, sigma, ones, prefix_last, tail_first, tail_gain, tail_error, middle)


#: compute(base, method, factor, original_length, **parameters): the frequencies of that scaling of base
#: (method None: plain RoPE); ValueError for parameters the method refuses.
Compute = Callable[..., np.ndarray]


@dataclass(frozen=True)
class FrequencyEvidence:
    """What the shared analysis found in a frequency vector, as every method's inverse reading takes it.

    ``base`` is the base most neighbouring pairs share (shortest decimal form, ``base_digits``
    significant digits, ``log_error`` the standard error of its logarithm) and ``gains`` the gains
    over it; ``scaled``: some pair read departs from the plain frequencies (else only a base change,
    NTK's, can hide in them); ``decreasing``: no neighbours fall slower than the base (no gain rises);
    ``lowest_base``: when some do, the round base of the slowest-falling neighbours (per-pair divisors'
    equal neighbours), else None.
    """

    measured: MeasuredFrequencies
    d: int
    base: float
    base_digits: int
    log_error: float
    gains: Gains
    scaled: bool
    decreasing: bool
    lowest_base: float | None
    compute: Compute

    @property
    def plain(self) -> np.ndarray:
        return self.compute(self.base)

    @property
    def plateau_factor(self) -> float | None:
        """s = 1 / the plateau's gain in its shortest decimal form within its error; None without a plateau."""
        gains = self.gains
        if gains.tail_first >= self.measured.theta.size:
            return None
        relative = AGREEMENT * gains.tail_error / gains.tail_gain + 1e-12
        return shortest(1.0 / gains.tail_gain, relative)[0]

    @property
    def plateau_unread(self) -> bool:
        """Pairs stay unchanged at the fast end and no gain rises: the divided plateau may be too slow to read."""
        return self.gains.prefix_last >= 0 and (not self.scaled or self.decreasing)

    def reading(self, base: float, frequencies: np.ndarray, scaling: dict | None, notes: tuple[str, ...] = (),
                **flags: bool) -> FrequencyReading:
        excess, worst = self.measured.excess(frequencies, math.log(base))
        return FrequencyReading(base, frequencies, scaling, notes, excess, worst, **flags)

    def scaled_reading(
        self, method: str, factor: float, original: float | None, determined: dict, notes: tuple[str, ...] = (),
        **parameters: object,
    ) -> list[FrequencyReading]:
        """The reading of one candidate scaling of ``base``, or none when RopeScaling rejects its parameters
        (they come from the data, and noise can put them out of any model's range)."""
        try:
            frequencies = self.compute(self.base, method, factor, None if original is None else round(original),
                                       **parameters)
        except ValueError:
            return []
        return [self.reading(self.base, frequencies, determined, notes)]


@dataclass(frozen=True)
class ShapeFit:
    """How a method shapes the gains between its unchanged and its divided pairs: ``description`` names it
    when another method fits as well; ``misfit`` is how far the gains between lie from that shape (None when
    too few pairs lie between to tell shapes apart)."""

    description: str
    misfit: float | None


@dataclass(frozen=True)
class MethodReadings:
    """A method's candidate readings of a frequency vector, by what they rest on (the ranking's order):

    - ``distinctive``: readings resting on what no other method gives (proportional's pairs of frequency
      exactly 0), tried before all the others, whether the pairs read look scaled or not;
    - ``offers``: scalings of a round base that give the measured base (a base change), for an
      unscaled reading's alternatives; dicts with "method" and "base";
    - ``at_lowest_base``: read with ``FrequencyEvidence.lowest_base``;
    - ``from_plateau``: the factor read from the divided pairs' plateau, with ``shape`` saying how
      the pairs between follow the method;
    - ``without_plateau``: the divided pairs too slow to read, the factor from the pairs between;
      pooled with the other methods', by original length then ``pool_rank``, the roundest factor winning;
    - ``last``: readings that fit any falling frequencies, taken only after all the others.
    """

    distinctive: tuple[FrequencyReading, ...] = ()
    offers: tuple[dict, ...] = ()
    at_lowest_base: tuple[FrequencyReading, ...] = ()
    from_plateau: tuple[FrequencyReading, ...] = ()
    shape: ShapeFit | None = None
    without_plateau: tuple[FrequencyReading, ...] = ()
    pool_rank: int = 0
    last: tuple[FrequencyReading, ...] = ()


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


def power_of_two_or_decimal(low: float, high: float) -> float | None:
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


def roundness(value: float) -> tuple:
    """Powers of two first, then fewer significant digits."""
    power = math.log2(value)
    return (power != round(power), shortest(value, 1e-12)[1])


def float32_frequency_error(d: int, log_base: float) -> float:
    """Relative error of a frequency transformers computes in float32: base ** (2i/d) and its inverse are
    off by a few units (6 u, u = 2**-24), plus ln(base) u where 2i/d is itself rounded (d not a power of two)."""
    exponent_rounding = 0.0 if d & (d - 1) == 0 else abs(log_base)
    return (exponent_rounding + 6.0) * 2.0**-24


# ----------------------------------------------------------------------------------------
# A factor from the pairs between, when the divided ones are too slow to read.
# ----------------------------------------------------------------------------------------


def unread_plateau_pairs(evidence: FrequencyEvidence) -> tuple[np.ndarray, np.ndarray] | None:
    """The pairs past the unchanged ones read at least roughly, and their weights; None when none is divided."""
    after = np.flatnonzero(evidence.measured.informative)
    middle = after[after > evidence.gains.prefix_last]
    if not np.any(evidence.gains.gains[middle] < 1.0):
        return None
    return middle, 1.0 / evidence.gains.sigma[middle] ** 2


def factor_from_shares(
    gains: Gains, middle: np.ndarray, weight: np.ndarray, share: np.ndarray,
    build: Callable[[float], list[FrequencyReading]],
) -> list[FrequencyReading]:
    """1 - g_i = share_i (1 - 1/s) for the pairs between: s by least squares, then the roundest factor that fits."""
    denominator = float(np.sum(weight * share**2))
    if denominator <= 0:
        return []
    divided = float(np.sum(weight * share * (1.0 - gains.gains[middle]))) / denominator
    if not 0 < divided < 1:
        return []
    return roundest_factor(1.0 / (1.0 - divided), build)


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

    return sorted(found, key=lambda value: (*roundness(value), abs(math.log(value / estimate))))[:16]


def roundest_factor(estimate: float, build: Callable[[float], list[FrequencyReading]]) -> list[FrequencyReading]:
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
        best = with_note(best, (
            f"Factor{'s' if several else ''} {listed} fit{'' if several else 's'} these frequencies as well: the "
            f"table cannot tell {'them' if several else 'it'} from {number(best.scaling['factor'])}, the roundest."
        ))
    return [best]
