r"""How precise are a matrix's values? Read from the values alone, whatever file held them.

A table of sines and cosines reaches the checker as float64 numbers, but they were made in
some arithmetic (float64, or float32 as PyTorch computes) and stored in some format (a
binary float, or text with a number of digits). The same float32 table saved as .npy, as
``np.savetxt(fmt="%.9g")`` or as pandas' ``to_csv()`` carries the same information, and a
reading of it must not depend on which; the values themselves tell which it was:

- **binary formats**: every value is exactly a bfloat16, float16 or float32 number (the
  coarsest that holds them all), else float64;
- **text**: every value is a multiple of :math:`10^{-p}` (``"%.6f"``: *p decimals*), or has
  at most s significant digits (``"%.9g"``, ``"%.6e"``, the shortest repr pandas writes).
  A value :math:`x` printed with its last digit at :math:`10^{q}` is within
  :math:`h = 10^{q}/2` of the number that was printed;
- **float32 behind the text**: if every value lies within its own h of a float32 number,
  the text may be float32 numbers written out, and nothing in it rules out a float32
  computation. Where the digits are finer than float32's spacing (9 significant digits,
  or the shortest repr of a float32), this test is a real one, and the values are named
  float32. Coarser text (6 decimals of values near 1 are coarser than float32's
  :math:`2^{-24}`) passes it trivially: named by its digits, float32 arithmetic still
  cannot be ruled out.

Reference: IEEE 754-2019 (binary32 spacing :math:`2^{e-23}`); Steele & White (1990) and
Ryu (Adams 2018) for shortest round-trip decimal output, the format of ``repr`` and pandas.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: Unit round-off of each arithmetic, and the largest error of casting a value of [-1, 1].
FLOAT64_UNIT = 2.0**-53
FLOAT32_UNIT = 2.0**-24
CAST_ERROR = {"float64": 0.0, "float32": 2.0**-25, "float16": 2.0**-12, "bfloat16": 2.0**-9}
#: Values read: a guess about the whole matrix, which only labels and bounds round-off.
SAMPLE = 2**20
#: Most decimals and significant digits a text format is recognised by; beyond, a value's
#: last digit is below float64's own resolution at scale and the test would prove nothing.
MAX_DECIMALS = 10
MAX_DIGITS = 12
#: Text is named float32 when values not made in float32 would lie this close to float32
#: numbers with a chance below e**FLOAT32_EVIDENCE (one in a million).
FLOAT32_EVIDENCE = np.log(1e-6)


class ValuePrecision(NamedTuple):
    """What the values say about how they were made and stored.

    ``name``: "float64", "float32", "float16", "bfloat16", "6 decimals", "9 significant
    digits"...; ``cast_error``: the largest |stored value - computed value| the storing
    explains; ``compute_unit``: the unit round-off of the arithmetic that name implies
    (float32's for the float32 family, float64's for float64 and text); ``float32_possible``:
    the values do not rule out a float32 computation (float32 family, or text within its
    digits of float32 numbers).
    """

    name: str
    cast_error: float
    compute_unit: float
    float32_possible: bool


def value_precision(matrix: np.ndarray) -> ValuePrecision:
    """The precision the values of ``matrix`` carry (module docstring), on its first SAMPLE values.

    Args:
        matrix: an array of finite float64 values.

    Returns:
        ValuePrecision(name, cast_error, compute_unit, float32_possible).

    Example:
        >>> P = np.sin(np.arange(60, dtype=np.float32) / 7).reshape(6, 10)
        >>> value_precision(P.astype(np.float64)).name
        'float32'
        >>> text = np.array([float(f"{v:.9g}") for v in P.ravel()])  # np.savetxt(fmt="%.9g")
        >>> value_precision(text).name, value_precision(np.round(text, 6)).name
        ('float32', '6 decimals')
        >>> value_precision(np.round(text, 6)).float32_possible
        True
    """
    sample = np.asarray(matrix, dtype=np.float64).reshape(-1)[:SAMPLE]
    binary = _binary_format(sample)
    if binary is not None:
        return binary
    text = _text_format(sample)
    if text is None:
        return ValuePrecision("float64", CAST_ERROR["float64"], FLOAT64_UNIT, False)
    name, cast_error, own_half_spacing = text
    single = sample.astype(np.float32)
    # Parsing the text rounds once more, by float64's relative 2**-53.
    slack = np.abs(sample) * 2.0**-52
    float32_possible = bool(np.all(np.abs(sample - single.astype(np.float64)) <= own_half_spacing + slack))
    if float32_possible and _float32_evidence(sample, single, own_half_spacing) < FLOAT32_EVIDENCE:
        # Text on float32 numbers, finer than chance explains: float32 numbers written out,
        # within half a float32 ulp of those numbers, themselves within 2**-25 of the values.
        return ValuePrecision("float32", 2 * CAST_ERROR["float32"], FLOAT32_UNIT, True)
    return ValuePrecision(name, cast_error, FLOAT64_UNIT, float32_possible)


def _float32_evidence(sample: np.ndarray, single: np.ndarray, own_half_spacing: np.ndarray) -> float:
    """ln of the chance that values not made in float32 lie as close to float32 numbers as these.

    A value's distance to the nearest float32 is uniform in [0, ulp/2] unless it is one:
    it lies within its own half spacing h by chance with probability min(1, h / (ulp/2)).
    """
    half_ulp = 0.5 * np.spacing(np.abs(single)).astype(np.float64)
    nonzero = sample != 0
    chance = np.minimum(own_half_spacing[nonzero] / half_ulp[nonzero], 1.0)
    return float(np.sum(np.log(np.maximum(chance, 1e-300))))


def _binary_format(sample: np.ndarray) -> ValuePrecision | None:
    """The coarsest of bfloat16, float16, float32 holding every value exactly; None if none does."""
    with np.errstate(over="ignore", invalid="ignore"):
        single = sample.astype(np.float32)
        if not np.array_equal(single.astype(np.float64), sample):
            return None
        if not np.any(single.view(np.uint32) & np.uint32(0xFFFF)):
            name = "bfloat16"
        elif np.array_equal(sample.astype(np.float16).astype(np.float64), sample):
            name = "float16"
        else:
            name = "float32"
    return ValuePrecision(name, CAST_ERROR[name], FLOAT32_UNIT, True)


def _text_format(sample: np.ndarray) -> tuple[str, float, np.ndarray] | None:
    """How short decimal text wrote the values: its name ("6 decimals", "7 significant
    digits"), the largest half spacing of its last digit (the cast error), and each value's
    own half spacing (of its fewest digits: the shortest repr writes each value with as many
    digits as it needs, no more). None if some value needs more than MAX_DIGITS digits.

    Fixed-point text ("%.6f": p decimals) and significant digits ("%.7g", s digits) are
    told apart by which is shorter: p decimals give small values few significant digits,
    s digits give them many decimals. Each test runs on the first 1,000 values first.
    """
    nonzero = sample != 0
    magnitude = np.abs(sample[nonzero])
    exponent = np.floor(np.log10(magnitude))
    if not np.all(_significant_digits(magnitude[:1000], exponent[:1000])):
        return None  # cheap early exit: float64 values that were never short text
    digits = _significant_digits(magnitude, exponent)
    if not np.all(digits):
        return None
    own_half_spacing = np.zeros(sample.shape)
    own_half_spacing[nonzero] = 0.5 * 10.0 ** (exponent - digits + 1)
    most_digits = int(digits.max(initial=1))
    places = _decimals(sample)
    if places is not None and places <= most_digits:
        return f"{places} decimals", 0.5 * 10.0**-places, own_half_spacing
    largest_exponent = float(exponent.max(initial=0.0))
    return f"{most_digits} significant digits", 0.5 * 10.0 ** (largest_exponent - most_digits + 1), own_half_spacing


def _decimals(sample: np.ndarray) -> int | None:
    """Fewest decimals p <= MAX_DECIMALS that write every value exactly, else None."""
    for places in range(1, MAX_DECIMALS + 1):
        scale = 10.0**places
        if _on_grid(sample[:1000] * scale, 1e-13 * scale) and _on_grid(sample * scale, 1e-13 * scale):
            return places
    return None


def _significant_digits(magnitude: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Fewest significant digits s <= MAX_DIGITS that write each |x| = magnitude exactly (0: none)."""
    digits = np.zeros(magnitude.shape, dtype=np.int64)
    for s in range(1, MAX_DIGITS + 1):
        open_ = np.flatnonzero(digits == 0)
        if open_.size == 0:
            break
        scaled = magnitude[open_] * 10.0 ** (s - 1 - exponent[open_])
        # The scaling itself rounds by a few units of float64 at the size of ``scaled``.
        found = np.abs(scaled - np.rint(scaled)) <= 1e-6 + scaled * 2.0**-50
        digits[open_[found]] = s
    return digits


def _on_grid(scaled: np.ndarray, tolerance: float) -> bool:
    return bool(np.all(np.abs(scaled - np.rint(scaled)) <= tolerance))
