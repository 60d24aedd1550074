r"""Precision: the encoding in float32, float16, bfloat16 and two 8-bit floats against float64, as k grows.

Three ways to get P[k] in a low-precision format ``dtype``:

- ``"cast"``: compute in float64, then round each value to the dtype (the best the dtype
  can hold: at most half a unit in the last place);
- ``"low"``: compute in the dtype: k and :math:`\omega_i` are rounded to it first, their
  product is rounded to it, sin and cos are taken in float32 (as frameworks do for
  float16 and bfloat16) and rounded to the dtype. The angle :math:`k\omega_i` then carries
  the dtype's error of the large number k: a few radians once k is large;
- ``"relative"``: in the dtype too, but from a small number: k = k0 + r with k0 a multiple
  of the window (the sequence length L) and r < L; the phase :math:`k_0\omega_i \bmod 2\pi`
  is computed once per window in float64, and only :math:`r\omega_i` and the sum are in the
  dtype.

The low-precision formats are real NumPy dtypes from ``ml_dtypes`` (the package JAX uses):
bfloat16, float8_e4m3fn and float8_e5m2 beside NumPy's own float32 and float16. Rounding to
a format is a cast (float64 -> dtype); ``ml_dtypes`` converts a float64 through float32, as
PyTorch converts a float64 to bfloat16, so a value within a float32 unit of a tie between two
format numbers can round the other way (a double rounding). Of the two e4m3 variants this is
``float8_e4m3fn`` ("finite": no infinity, one NaN, largest 448, what NVIDIA's Hopper and the
OCP 8-bit float specification use); a value beyond 464 becomes NaN, where e5m2 (largest
57344) goes to infinity. Every low-precision value is held in a float32 (which holds all of
them exactly), so errors are plain differences.

Two neighbours k and k+1 are indistinguishable in a dtype when all d values of P[k] and
P[k+1] round to the same numbers. The search is exact up to 10**7 and cheap: rows can only
be equal if their fastest pair (:math:`\omega_0 = 1` rad per position) is, so that pair
alone is scanned for every k, then the slower pairs only for the positions that survive.
The fastest pair's scan does not depend on d, n or the layout (:math:`\omega_0 = 1` always),
so the app caches it once. No Streamlit here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import reproduce
from explorer.arrays import true_cells
from explorer.figures import line_figure
from explorer.settings import Settings

#: The low-precision formats, by their NumPy names, widest first.
DTYPES: tuple[str, ...] = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")
#: Each format's NumPy dtype (the last three from ml_dtypes).
NUMPY_DTYPES: dict[str, np.dtype] = {
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
}
METHODS: dict[str, str] = {
    "cast": "float64, then cast",
    "low": "computed in the dtype",
    "relative": "from a relative offset",
}
#: Significant bits (the stored mantissa bits plus the implicit one) and largest finite value of each format.
MANTISSA_BITS: dict[str, int] = {"float64": 53} | {
    name: int(ml_dtypes.finfo(dtype).nmant) + 1 for name, dtype in NUMPY_DTYPES.items()
}
LARGEST: dict[str, float] = {name: float(ml_dtypes.finfo(dtype).max) for name, dtype in NUMPY_DTYPES.items()}
#: The chart's positions: about 200 log-spaced whole numbers from 1 to 10**7.
GRID_POINTS = 200
LAST_POSITION = 10**7
#: Neighbours are searched exactly for k = 0 .. SCAN_LIMIT - 1 (``search_limit`` says where less).
SCAN_LIMIT = 10**7
#: The search of the 8-bit formats' "relative" method when every offset r < L is exact: no
#: early match is certain there, and each million positions costs ~0.3 s (see ``search_limit``).
SHORT_SCAN_LIMIT = 10**5
#: Positions computed at a time: from 0 the first chunk is small (most searches end there), then each doubles.
FIRST_SCAN_CHUNK = 2**12
SCAN_CHUNK = 2**20
#: Fastest-pair candidates kept per scan; the search continues past them if none is a match.
MAX_CANDIDATES = 2**16
#: The error columns of the summary: the largest error over positions up to each bound.
ERROR_BOUNDS = (10**3, 10**5, 10**7)
#: A position that float32, float16 and bfloat16 hold exactly (bfloat16 holds integers up to 256).
PROBE_POSITION = 200


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_text(value: int) -> str:
    """10**7 as '10⁷' (a power of ten), anything else with thousands separators."""
    exponent = round(math.log10(value)) if value > 0 else 0
    return f"10{str(exponent).translate(_SUPERSCRIPTS)}" if 10**exponent == value else f"{value:,}"


def series_name(dtype: str, method: str) -> str:
    """'bfloat16 · computed in the dtype': the name of one line and one table row."""
    return f"{dtype} · {METHODS[method]}"


#: Every (dtype, method), in the order of the charts, tables and the snippet's ``result``.
SERIES: tuple[tuple[str, str], ...] = tuple((dtype, method) for dtype in DTYPES for method in METHODS)
NAMES: dict[tuple[str, str], str] = {key: series_name(*key) for key in SERIES}


# ------------------------------------------------------------------------------ rounding


def round_to(x: object, dtype: str) -> np.ndarray:
    """``x`` rounded to ``dtype`` (a cast to its NumPy dtype), held in float32 (which holds every
    value of every format here exactly).

    Whole numbers (positions) go through float64, which holds them exactly below 2^53. A
    value the format cannot hold becomes infinity (NaN in float8_e4m3fn, which has no infinity).
    No cast copies an array that is already of its dtype: float32 rounded to float32 is ``x``
    itself (a third of the Precision page's casts at the largest settings; the callers only read).
    """
    if dtype not in NUMPY_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}.")
    x = np.asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = x.astype(NUMPY_DTYPES[dtype], copy=False)
    if dtype in _BYTE_VALUES:
        return _BYTE_VALUES[dtype].take(rounded.view(np.uint8).reshape(-1)).reshape(rounded.shape)
    return rounded.astype(np.float32, copy=False)


#: Each 8-bit format's 256 values (NaN included) as float32, indexed by their bytes: ml_dtypes' own
#: cast of each, so a lookup is that cast to the bit, at a fifth of its cost (it converts value by
#: value, 3.5-5 ms per million against 1 for the lookup; the 8-bit series' arrays are half a million
#: values a run at d = 300).
_BYTE_VALUES: dict[str, np.ndarray] = {
    name: np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)
    for name, dtype in NUMPY_DTYPES.items() if dtype.itemsize == 1
}


# ------------------------------------------------------------------------ the encodings


def pair_values(k: object, w: np.ndarray, dtype: str, method: str, window: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of k·ω_i as ``method`` gets them in ``dtype``: two float32 arrays (len(k), len(w)).

    Arithmetic is float32, then rounded to the dtype: a product of two float16 or bfloat16
    numbers is exact in float32, so this is the format's own multiplication; a sum of two
    is rounded twice (through float32), which can differ in the last bit in rare ties. A
    float16 position above 65504 is infinite, and its sine NaN: the format cannot hold it.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}.")
    k = np.asarray(k, dtype=np.int64).reshape(-1)
    w = np.asarray(w, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if method == "cast":
            # pe_core's float64 values (to one ulp), then rounded: at most half an ulp of the format.
            sin64, cos64 = pe_core.sin_cos_outer(k.astype(np.float64), w)
            return round_to(sin64, dtype), round_to(cos64, dtype)
        if method == "low":
            theta = round_to(np.multiply.outer(round_to(k, dtype), round_to(w, dtype)), dtype)
        else:
            window = max(int(window), 1)
            first = (k // window) * window
            theta = relative_angles(relative_phase(first, w, dtype), k - first, w, dtype)
        return _sin_cos_in(theta, dtype)


def _sin_cos_in(theta: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of the dtype's angles (float32 holding values of the dtype), in float32, rounded
    to the dtype: looked up (``_sin_cos_table``) for the formats narrower than float32.

    ``take`` with an index of NumPy's own integer type (intp), made once for both tables: indexing
    with the uint32 index converted it for each table and took a slower path, 2-3x the time (60,000
    angles: 0.7-1.7 ms -> 0.2-0.5 ms)."""
    if dtype in _TABLE_SHIFT:
        sin_table, cos_table = _sin_cos_table(dtype)
        index = (theta.view(np.uint32) >> np.uint32(_TABLE_SHIFT[dtype])).astype(np.intp)
        return sin_table.take(index), cos_table.take(index)
    with np.errstate(over="ignore", invalid="ignore"):
        return round_to(np.sin(theta), dtype), round_to(np.cos(theta), dtype)


#: The float32 bits below a format's last stored mantissa bit: zero in every value the format holds
#: (its subnormals included: in float32 they are normal numbers with as few significant bits), so the
#: bits above them tell its values apart, infinities and NaN included.
_TABLE_SHIFT: dict[str, int] = {
    name: 23 - int(ml_dtypes.finfo(NUMPY_DTYPES[name]).nmant) for name in DTYPES if name != "float32"
}


@functools.cache
def _sin_cos_table(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """``round_to(np.sin(x), dtype)`` and the same of cos for every float32 x whose bits below
    ``_TABLE_SHIFT`` are zero (every value of the dtype), indexed by x's bits above them.

    The "low" and "relative" methods take the sine and cosine of angles already rounded to the
    dtype: a few thousand distinct values (65,536 at most in float16), each met many times by a
    scan. Looked up, a million angles cost two reads each instead of two sines and four casts
    (ml_dtypes and NumPy cast value by value): float16 and the float8 formats 4-8x faster, the
    same numbers (np.sin of one float32 value is the same in any array). Built once per dtype:
    2^19 angles for float16 (4 MB), 2^16 for bfloat16, 2^12 and 2^11 for the float8 formats.
    """
    shift = _TABLE_SHIFT[dtype]
    values = (np.arange(1 << (32 - shift), dtype=np.uint32) << np.uint32(shift)).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        return round_to(np.sin(values), dtype), round_to(np.cos(values), dtype)


def window_phase(first: np.ndarray, w: np.ndarray) -> np.ndarray:
    r""":math:`\mathrm{first}\cdot\omega_i \bmod 2\pi` in float64, shape ``first.shape + (len(w),)``:
    ``relative_phase`` before its rounding to a dtype (the same for every dtype)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.mod(np.asarray(first, dtype=np.int64)[..., None].astype(np.float64) * w, 2 * np.pi)


def relative_phase(first: np.ndarray, w: np.ndarray, dtype: str) -> np.ndarray:
    r"""The "relative" method's phase of a window starting at ``first``:
    :math:`\mathrm{R}(\mathrm{first}\cdot\omega_i \bmod 2\pi)`, in float64 then rounded to the
    dtype. Shape ``first.shape + (len(w),)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        return round_to(window_phase(first, w), dtype)


def relative_angles(phase: np.ndarray, offset: np.ndarray, w: np.ndarray, dtype: str) -> np.ndarray:
    r"""The "relative" method's angles at ``offset`` positions into windows of phase ``phase``:

    .. math::

        \theta = \mathrm{R}\big(\mathrm{phase} + \mathrm{R}(\mathrm{R}(\mathrm{offset})\,\mathrm{R}(\omega_i))\big)

    with R the rounding to the dtype and float32 arithmetic (``relative_phase`` gives the
    phase). ``phase`` broadcasts with ``offset.shape + (len(w),)``: each step is computed once
    per offset, each phase once per window, whatever they broadcast to.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        step = round_to(round_to(np.asarray(offset, dtype=np.int64), dtype)[..., None] * round_to(w, dtype), dtype)
        return round_to(phase + step, dtype)


def _rows(sines: np.ndarray, cosines: np.ndarray, settings: Settings) -> np.ndarray:
    """Rows of P, as float64 (len, d), from the sines and cosines of every pair, in the layout's columns."""
    d = settings.d
    sine_columns, cosine_columns = pe_core.sine_cosine_columns(d, settings.layout)
    P = np.empty((sines.shape[0], d))
    P[:, sine_columns] = sines
    P[:, cosine_columns] = cosines[:, : d // 2]
    return P


def encode(positions: object, settings: Settings, dtype: str, method: str, window: int = 1) -> np.ndarray:
    """Rows P[k] for the given positions, in the dtype by the method, as float64 (len, d)."""
    w = pe_core.frequencies(settings.d, settings.n, settings.convention)
    return _rows(*pair_values(positions, w, dtype, method, window), settings)


def reference(positions: object, settings: Settings) -> np.ndarray:
    """Rows P[k] in float64, bit for bit pe_core.positional_encoding's (its sin_cos_outer), all at once."""
    k = np.asarray(positions, dtype=np.int64).reshape(-1).astype(np.float64)
    return _rows(*pe_core.sin_cos_outer(k, pe_core.frequencies(settings.d, settings.n, settings.convention)), settings)


def grid(count: int = GRID_POINTS, last: int = LAST_POSITION) -> np.ndarray:
    """Log-spaced whole positions from 1 to ``last`` (repeats at the low end removed)."""
    return np.unique(np.round(np.geomspace(1, last, count)).astype(np.int64))


# -------------------------------------------------------------------- errors on the grid


@dataclass(frozen=True)
class Errors:
    """Per position of the grid and per series (``NAMES``): what the charts draw."""

    positions: np.ndarray
    max_error: dict[str, np.ndarray]  # largest |P~[k, j] - P[k, j]| over the d columns (NaN: not finite)
    telling: dict[str, np.ndarray]  # columns in which P~[k] and P~[k+1] differ


def errors(
    settings: Settings, positions: np.ndarray | None = None, series: Sequence[tuple[str, str]] = SERIES
) -> Errors:
    """Errors of every dtype and method (or of ``series``) against float64 on the grid (~200 positions x d).

    The float64 sines and cosines of k and k+1 are computed once: they are the reference rows,
    and rounded to each dtype they are the "cast" series (as ``pair_values`` rounds them); the
    "relative" windows' float64 phases too (``window_phase``), rounded to each dtype. The rows
    themselves are never put together: the layout only orders the columns, so the largest error
    and the count of differing columns are those of the sines and of the cosines (an odd d's
    last pair is a lone sine).
    """
    w = pe_core.frequencies(settings.d, settings.n, settings.convention)
    if positions is None:
        k = grid()
        both = np.concatenate([k, k + 1])
        sin64, cos64 = _grid_reference(settings.d, settings.n, settings.convention)
    else:
        k = np.asarray(positions, dtype=np.int64)
        both = np.concatenate([k, k + 1])
        sin64, cos64 = pe_core.sin_cos_outer(both.astype(np.float64), w)
    cosines = settings.d // 2
    window = max(int(settings.L), 1)
    first = (both // window) * window  # the "relative" windows
    phase = window_phase(first, w) if any(method == "relative" for _, method in series) else None
    max_error, telling = {}, {}
    for dtype, method in series:
        sin, cos = _series_values(both, w, dtype, method, window, (sin64, cos64), first, phase)
        # NaN if any value is not finite: np.max and np.maximum keep it.
        error = np.abs(sin[: k.size] - sin64[: k.size]).max(axis=1)
        differ = np.count_nonzero(sin[: k.size] != sin[k.size :], axis=1)
        if cosines:
            error = np.maximum(error, np.abs(cos[: k.size, :cosines] - cos64[: k.size, :cosines]).max(axis=1))
            differ += np.count_nonzero(cos[: k.size, :cosines] != cos[k.size :, :cosines], axis=1)
        max_error[NAMES[dtype, method]] = error
        telling[NAMES[dtype, method]] = differ.astype(np.float64)
    return Errors(k, max_error, telling)


def _series_values(
    k: np.ndarray, w: np.ndarray, dtype: str, method: str, window: int,
    reference: tuple[np.ndarray, np.ndarray], first: np.ndarray, phase: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``pair_values(k, w, dtype, method, window)``, from what every dtype shares, computed once by the
    caller: ``reference``, pe_core's float64 sines and cosines of k (rounded, the "cast" series), and
    ``phase``, the float64 phases (``window_phase``) of k's windows, which start at ``first``."""
    if method == "cast":
        return round_to(reference[0], dtype), round_to(reference[1], dtype)
    if method == "relative":
        return _sin_cos_in(relative_angles(round_to(phase, dtype), k - first, w, dtype), dtype)
    return pair_values(k, w, dtype, method, window)


#: Grid references kept (``_grid_reference``): 1 MB each at d = 300, 6.6 MB at d = 2048.
GRID_REFERENCES_KEPT = 4


@functools.lru_cache(maxsize=GRID_REFERENCES_KEPT)
def _grid_reference(d: int, n: float, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """``errors``' float64 sines and cosines (``pe_core.sin_cos_outer``) of the grid's positions, then
    of each plus one, read-only. They do not depend on L: the page asks for the series in two groups
    (those of the relative offset depend on L, the others are cached without it), and each group and
    each L step read the same ones, computed once (2.3 ms of each at d = 300)."""
    k = grid()
    both = np.concatenate([k, k + 1]).astype(np.float64)
    reference = pe_core.sin_cos_outer(both, pe_core.frequencies(d, n, convention))
    for values in reference:
        values.flags.writeable = False
    return reference


def column_errors(settings: Settings, column: int, positions: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """|P~[k, column] - P[k, column]| on the grid, per series: only that column's pair is computed.

    As in ``errors``, the float64 values (the reference, and rounded to each dtype the "cast"
    series) and the relative windows' float64 phases are computed once for the five dtypes.
    """
    k = grid() if positions is None else np.asarray(positions, dtype=np.int64)
    column = min(max(int(column), 0), settings.d - 1)
    pair, is_sine = pe_core.column_pairs(settings.d, settings.layout)
    w = pe_core.frequencies(settings.d, settings.n, settings.convention)[pair[column] : pair[column] + 1]
    which = 0 if is_sine[column] else 1  # the sine or the cosine of the pair
    reference = pe_core.sin_cos_outer(k.astype(np.float64), w)
    window = max(int(settings.L), 1)
    first = (k // window) * window
    phase = window_phase(first, w)
    out = {}
    for dtype, method in SERIES:
        value = _series_values(k, w, dtype, method, window, reference, first, phase)[which]
        out[NAMES[dtype, method]] = np.abs(value[:, 0].astype(np.float64) - reference[which][:, 0])
    return out


def errors_table(result: Errors) -> pd.DataFrame:
    """The largest error per position (the first chart), one column per series."""
    return pd.DataFrame(result.max_error, index=pd.Index(result.positions, name="position k"))


# ------------------------------------------------------------------ indistinguishable neighbours


@dataclass(frozen=True)
class PairScan:
    """Positions k in [start, stop) whose fastest pair equals that of k+1, in order."""

    candidates: np.ndarray
    stop: int


def relative_first_offset(dtype: str, method: str, w0: float, window: int) -> int:
    r"""Offset r in the window below which a "relative" pair (k, k+1) cannot match (0: no such bound).

    With :math:`\omega_0 = 1`, k = k0 + r and P the window's phase rounded to the dtype, the
    angle is :math:`\theta(r) = \mathrm{R}(P + r)` while r is exact (below :math:`2^p`, p
    significant bits). Rounding to nearest, even twice (float32, then the dtype), moves P + r by
    at most half the dtype's spacing plus :math:`2^{-14}`: at most 1/4 + 2^-14 below
    :math:`2^{p-1}`. So while :math:`P + r + 1 < 2^{p-1}` (r < :math:`2^{p-1} - 8`, as P < 2π)
    neighbours in a window turn by :math:`1 \pm (1/2 + 2^{-13})` rad, and across a window's end
    (r = L-1; each phase is :math:`k_0 \bmod 2\pi` rounded, off by at most 1/64) by
    :math:`1 \pm 0.29` rad: their (sin, cos) are at least :math:`2\sin(0.2499) = 0.49` apart,
    and rounding each to the dtype (at most :math:`2^{-8}`) cannot make them equal. Every value
    is finite while the window's offsets are. Other methods, other :math:`\omega_0`, the 8-bit
    formats (:math:`2^{p-1} \le 8`: no such r), or windows with offsets the dtype cannot hold:
    0 (scan every pair).
    """
    if method != "relative" or w0 != 1.0 or window > LARGEST[dtype]:
        return 0
    return max(0, 2 ** (MANTISSA_BITS[dtype] - 1) - 8)


def cast_never_equal(dtype: str, w0: float) -> bool:
    r"""Whether no two neighbours' fastest pairs can be equal when cast from float64 (so no scan is needed).

    The float64 points :math:`(\sin k\omega_0, \cos k\omega_0)` of k and k+1 are
    :math:`2|\sin(\omega_0/2)|` apart (0.959 for :math:`\omega_0 = 1`; their angles are exact to
    ~1e-9 below 10^7). Casting moves each coordinate, in [-1, 1], by at most half the format's
    spacing below 1, :math:`2^{-(p+1)}`, plus :math:`2^{-25}` for the cast through float32: each
    point by at most :math:`\sqrt 2` times that. If the two moves cannot close the distance, the
    rounded pairs differ (in every format here: 0.18 in float8_e5m2, p = 3). Sines and cosines are
    finite in every format.
    """
    move = math.sqrt(2.0) * (2.0 ** -(MANTISSA_BITS[dtype] + 1) + 2.0**-25)
    return 2.0 * abs(math.sin(w0 / 2.0)) - 1e-6 > 2.0 * move


def first_unholdable(dtype: str) -> int | None:
    """The smallest whole number the dtype rounds to infinity or NaN (465 in float8_e4m3fn, 65520
    in float16); None if it is beyond 2^53."""
    largest = LARGEST[dtype]
    if largest >= 2.0**53:
        return None
    half_spacing = 2.0 ** (math.floor(math.log2(largest)) - MANTISSA_BITS[dtype])
    tie = int(largest + half_spacing)  # rounds to even: to the largest or beyond, by format
    return tie if not np.isfinite(round_to(tie, dtype)) else tie + 1


def search_limit(dtype: str, method: str, window: int) -> int:
    r"""Where the neighbour search of ``method`` in ``dtype`` stops: 10^7, or ``SHORT_SCAN_LIMIT``
    for the 8-bit formats' "relative" method while every offset of a window is exact.

    With p significant bits, :math:`2^p + 1` rounds to :math:`2^p` (a tie, to even): in a window
    of :math:`L \ge 2^p + 2` positions, offsets :math:`2^p` and :math:`2^p + 1` have the same
    angles in every pair (window 0 has phase 0), so the first match is at most :math:`2^p` and the
    search ends in its first chunk. With :math:`L \le 2^p + 1` (17 in float8_e4m3fn, 9 in
    float8_e5m2) no match is certain, the fastest pair matches often (its angles are rounded to
    1/2 rad and coarser), and the candidates then fail on slower pairs one batch at a time: a
    search to 10^7 costs seconds. The other formats keep 10^7 (``relative_first_offset``).
    """
    p = MANTISSA_BITS[dtype]
    if method == "relative" and p <= 4 and window <= 2**p + 1:
        return SHORT_SCAN_LIMIT
    return SCAN_LIMIT


def scan_fastest_pair(
    dtype: str, method: str, w0: float, window: int, start: int = 0, limit: int = SCAN_LIMIT,
    max_candidates: int = MAX_CANDIDATES,
) -> PairScan:
    """Scan k = start .. limit-1 for neighbours whose fastest pair rounds to the same values.

    A scan from 0 computes small chunks first, doubling, and stops at the end of the first that
    holds candidates (most searches end there); otherwise it stops once ``max_candidates`` are
    found (``stop`` says where: the caller scans on from there, in full chunks, if none is a match). Only the
    positions that can match are computed: none for "cast" (``cast_never_equal``), none from
    the first position the dtype cannot hold for "low" (``first_unholdable``: NaN rows are
    never equal), and for "relative" only the offsets from
    ``relative_first_offset`` (none at all in float32, whose windows of fewer than 2^23
    positions never collapse).
    """
    empty = np.zeros(0, np.int64)
    if method == "cast" and cast_never_equal(dtype, w0):
        return PairScan(empty, limit)
    w = np.array([w0])
    window = max(int(window), 1)
    skip_below = relative_first_offset(dtype, method, w0, window)
    if skip_below >= window:
        return PairScan(empty, limit)  # no pair can match: all values finite, nothing to find
    runs = _RelativeRuns(w, dtype, window, skip_below) if skip_below > 0 else None
    unholdable = first_unholdable(dtype) if method == "low" else None
    end = limit if unholdable is None else min(limit, unholdable)
    found: list[np.ndarray] = []
    total = 0
    a, chunk = start, FIRST_SCAN_CHUNK if start == 0 else SCAN_CHUNK
    while a < end:
        b = min(a + chunk, end)
        if runs is not None:
            equal = runs.matches(a, b)
        else:
            s, c = pair_values(np.arange(a, b + 1), w, dtype, method, window)
            equal = np.flatnonzero((s[:-1, 0] == s[1:, 0]) & (c[:-1, 0] == c[1:, 0])) + a
        found.append(equal[: max_candidates - total])
        total += found[-1].size
        if total >= max_candidates:
            return PairScan(np.concatenate(found), int(found[-1][-1]) + 1)
        if total and chunk < SCAN_CHUNK:  # the caller confirms these first: the first candidates usually match
            # At ``end`` nothing further can match (an unholdable position): the scan is whole.
            return PairScan(np.concatenate(found), b if b < end else limit)
        a, chunk = b, min(2 * chunk, SCAN_CHUNK)
    return PairScan(np.concatenate(found) if found else empty, limit)


def first_nonfinite(dtype: str, method: str, window: int) -> int | None:
    r"""The first k whose row holds a value that is not finite, by ``method`` in ``dtype`` (None: none).

    Only a position the dtype cannot hold makes one (``first_unholdable``): "cast" never does;
    "low" from that k on (R(k) is infinite or NaN, and every :math:`\omega_i = n^{-x} \le 1`: a
    finite R(k) gives a product no larger); "relative" where an offset r < L reaches it, first at
    k = r in window 0 (a phase below 2π added to a finite step stays below the next tie:
    448 + 6.5 < 464 in float8_e4m3fn, the closest case).
    """
    unholdable = first_unholdable(dtype)
    if method == "cast" or unholdable is None:
        return None
    if method == "relative" and unholdable >= window:
        return None
    return unholdable


class _RelativeRuns:
    """The "relative" scan's pairs at offsets r >= skip_below of each window (``relative_first_offset``).

    Inside a window the values depend only on its rounded phase, and a dtype has a few thousand
    values below 2π: windows share them, so each run of offsets is computed once per phase for
    the whole scan, and each window reads its phase's run (plus its last offset against the next
    window's first position, which has a phase of its own).
    """

    def __init__(self, w: np.ndarray, dtype: str, window: int, skip_below: int) -> None:
        self.w, self.dtype, self.window = w, dtype, window
        self.offsets = np.arange(skip_below, window)
        self.phases = np.zeros(0, dtype=np.float32)  # sorted, with their rows below
        self.inside = np.zeros((0, self.offsets.size - 1), dtype=bool)  # pair (r, r+1) equal
        self.last = np.zeros((0, 2), dtype=np.float32)  # (sin, cos) at offset window-1

    def _values(self, phase: np.ndarray, offset: object) -> tuple[np.ndarray, np.ndarray]:
        return _sin_cos_in(relative_angles(phase, offset, self.w, self.dtype)[..., 0], self.dtype)

    def _learn(self, phases: np.ndarray) -> None:
        new = np.setdiff1d(phases, self.phases)
        if not new.size:
            return
        s, c = self._values(new[:, None, None], self.offsets[None, :])
        order = np.argsort(np.concatenate([self.phases, new]), kind="stable")
        self.phases = np.concatenate([self.phases, new])[order]
        self.inside = np.concatenate([self.inside, (s[:, :-1] == s[:, 1:]) & (c[:, :-1] == c[:, 1:])])[order]
        self.last = np.concatenate([self.last, np.stack([s[:, -1], c[:, -1]], axis=1)])[order]

    def matches(self, a: int, b: int) -> np.ndarray:
        """k in [a, b) whose fastest pair equals k+1's, in order."""
        firsts = np.arange(a // self.window, (b - 1) // self.window + 2, dtype=np.int64) * self.window
        phases = relative_phase(firsts, self.w, self.dtype)[:, 0]
        self._learn(phases[:-1])
        which = np.searchsorted(self.phases, phases[:-1])
        following = self._values(phases[1:, None], 0)
        across = (self.last[which, 0] == following[0]) & (self.last[which, 1] == following[1])
        window_index, offset_index = true_cells(np.concatenate([self.inside[which], across[:, None]], axis=1))
        k = firsts[window_index] + self.offsets[offset_index]
        return k[(k >= a) & (k < b)]


#: Candidates confirmed at a time, in order: the first batch usually holds the answer, often as
#: its first candidate (while the coarse formats' runs of equal neighbours would carry a large
#: batch through every pair), so batches start small and double.
FIRST_CONFIRM_BATCH, CONFIRM_BATCH = 16, 256


def _confirm(candidates: np.ndarray, settings: Settings, dtype: str, method: str, window: int) -> int | None:
    """The first candidate whose every value equals its neighbour's, pair by pair (fastest first).

    Candidates go in order, a batch at a time (FIRST_CONFIRM_BATCH, doubling to CONFIRM_BATCH),
    so that a long run of matches after the first one costs nothing.
    """
    w = pe_core.frequencies(settings.d, settings.n, settings.convention)
    cosine_pairs = settings.d // 2  # an odd d's last pair is a lone sine
    first, batch = 0, FIRST_CONFIRM_BATCH
    while first < candidates.size:
        alive = candidates[first : first + batch]
        first, batch = first + batch, min(2 * batch, CONFIRM_BATCH)
        # Pairs 1, then 2, 4, 8 ... at a time: most candidates fail on the first pairs, and
        # the few left are checked in a handful of vectorised calls instead of one per pair.
        i, size = 1, 1
        while i < w.size and alive.size:
            stop = min(w.size, i + size)
            s, c = pair_values(np.concatenate([alive, alive + 1]), w[i:stop], dtype, method, window)
            same = np.all(s[: alive.size] == s[alive.size :], axis=1)
            with_cosine = max(0, min(stop, cosine_pairs) - i)
            same &= np.all(c[: alive.size, :with_cosine] == c[alive.size :, :with_cosine], axis=1)
            alive = alive[same]
            i, size = stop, 2 * size
        if alive.size:
            return int(alive[0])
    return None


@dataclass(frozen=True)
class Neighbours:
    """First k with P~[k] = P~[k+1] in every column, and first k with a non-finite value."""

    first_equal: int | None
    first_nonfinite: int | None
    limit: int


def neighbours(
    settings: Settings, dtype: str, method: str, *, limit: int | None = None,
    scan: Callable[..., PairScan] = scan_fastest_pair,
) -> Neighbours:
    """Exact search of k < limit (by default ``search_limit``; ``scan`` may be a cached ``scan_fastest_pair``).

    The "relative" method's scan depends on L and costs at most a few tens of ms
    (``relative_first_offset``): it is computed here rather than through ``scan``, so that a
    bounded cache of scans keeps the settings-independent ones (seconds to redo) however many
    lengths a class tries.
    """
    window = settings.L if method == "relative" else 1
    limit = search_limit(dtype, method, window) if limit is None else limit
    w0 = float(pe_core.frequencies(settings.d, settings.n, settings.convention)[0])
    search = scan_fastest_pair if method == "relative" else scan
    nonfinite = first_nonfinite(dtype, method, window)
    nonfinite = nonfinite if nonfinite is not None and nonfinite < limit else None
    start = 0
    while start < limit:
        found = search(dtype, method, w0, window, start, limit)
        match = _confirm(found.candidates, settings, dtype, method, window)
        if match is not None:
            return Neighbours(match, nonfinite, limit)
        start = found.stop
    return Neighbours(None, nonfinite, limit)


@dataclass(frozen=True)
class Results:
    """What the page shows of some series: their errors on the grid and their neighbour searches (by name)."""

    errors: Errors
    neighbours: dict[str, Neighbours]


def results(
    settings: Settings, series: Sequence[tuple[str, str]] = SERIES, *, scan: Callable[..., PairScan] = scan_fastest_pair
) -> Results:
    """``errors`` and ``neighbours`` of each of ``series`` for the settings, in one go."""
    return Results(
        errors(settings, series=series),
        {NAMES[dtype, method]: neighbours(settings, dtype, method, scan=scan) for dtype, method in series},
    )


def merged(*parts: Results) -> Results:
    """The results of several groups of series (on the same grid) as one, in SERIES order."""
    max_error = {name: part.errors.max_error[name] for part in parts for name in part.errors.max_error}
    telling = {name: part.errors.telling[name] for part in parts for name in part.errors.telling}
    found = {name: part.neighbours[name] for part in parts for name in part.neighbours}
    order = [name for name in NAMES.values() if name in max_error]
    return Results(
        Errors(parts[0].errors.positions, {name: max_error[name] for name in order},
               {name: telling[name] for name in order}),
        {name: found[name] for name in order},
    )


# ------------------------------------------------------------------------------ formats


def formats_table(position: int = LAST_POSITION) -> pd.DataFrame:
    """What each format can hold, as text: significant bits, the whole numbers it holds with
    all their neighbours (up to 2^bits), the spacing of its numbers near ``position``, its
    largest finite value and what a larger value becomes (infinity, or NaN in float8_e4m3fn)."""
    rows = {}
    for dtype in ("float64", *DTYPES):
        p = MANTISSA_BITS[dtype]
        largest = float(np.finfo(np.float64).max) if dtype == "float64" else LARGEST[dtype]
        beyond = math.inf if dtype == "float64" else float(round_to(2.0 * largest, dtype))
        spacing = 2.0 ** (math.floor(math.log2(position)) - (p - 1))
        rows[dtype] = {
            "significant bits": str(p),
            "every whole number up to": f"{2**p:,}",
            f"spacing of its numbers near {power_text(position)}": f"{spacing:.4g}" if position <= largest
            else "cannot hold it",
            "largest finite value": f"{largest:.5g}",
            "a larger value becomes": "NaN" if math.isnan(beyond) else "infinity",
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("format")


# ------------------------------------------------------------------------------ summary

#: The summary's columns for the neighbour search.
FIRST_EQUAL, FIRST_NONFINITE, SEARCHED = "first k: P[k] = P[k+1]", "first k not finite", "searched k <"


def largest_error_column(bound: int) -> str:
    """The summary's column of the largest error over positions up to ``bound``."""
    return f"largest error, k ≤ {power_text(bound)}"


#: Shorter titles of the tables' widest columns (the full title is their help), so that the
#: formats and the summary fit the page at 1280 x 720, in presentation mode too.
TABLE_TITLES: dict[str, str] = {
    f"spacing of its numbers near {power_text(LAST_POSITION)}": f"spacing near {power_text(LAST_POSITION)}",
} | {largest_error_column(bound): f"error, k ≤ {power_text(bound)}" for bound in ERROR_BOUNDS}
#: Width of the summary's first column (pixels): its longest name, "float8_e4m3fn · from a relative
#: offset", is 214 px wide in the table's 14 px type and 281 px in presentation mode's; Streamlit
#: sizes a column by its first nine rows and its last, which miss that name (it was cut).
SUMMARY_NAMES_PX = 310


def summary_table(result: Errors, found: dict[str, Neighbours]) -> pd.DataFrame:
    """One row per series: the largest error up to 10^3, 10^5, 10^7, and the neighbour search
    (its first equal and first non-finite position, and where it stopped).

    Numbers only (NaN where there is none), for the download; ``display_summary`` words it.
    Built column by column from arrays: a frame from fifteen rows of dicts cost twice as much.
    """
    names = list(result.max_error)
    errors = np.stack([result.max_error[name] for name in names])
    columns: dict[str, object] = {}
    for bound in ERROR_BOUNDS:
        inside = errors[:, result.positions <= bound]
        finite = np.isfinite(inside)
        largest = np.where(finite, inside, -np.inf).max(axis=1, initial=-np.inf)
        columns[largest_error_column(bound)] = np.where(finite.any(axis=1), largest, math.nan)
    scans = [found[name] for name in names]
    columns[FIRST_EQUAL] = [math.nan if scan.first_equal is None else float(scan.first_equal) for scan in scans]
    columns[FIRST_NONFINITE] = [math.nan if scan.first_nonfinite is None else float(scan.first_nonfinite)
                                for scan in scans]
    columns[SEARCHED] = [float(scan.limit) for scan in scans]
    return pd.DataFrame(columns, index=pd.Index(names, name="dtype · method"))


def display_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The summary as text: errors to 3 digits, 'none below 10⁷' (where that row's search stopped)
    for a search that found nothing. One frame made from the columns' texts (a copy of the table
    whose columns were replaced one by one cost twice as much)."""
    limits = table[SEARCHED].to_numpy().astype(int).tolist()
    shown = {}
    for column in table.columns.drop(SEARCHED):
        values = table[column].to_numpy().tolist()
        if column.startswith("largest error"):
            shown[column] = [f"{v:.3g}" if math.isfinite(v) else "n/a" for v in values]
        else:
            shown[column] = [f"{int(v):,}" if math.isfinite(v) else f"none below {power_text(limit)}"
                             for v, limit in zip(values, limits, strict=True)]
    return pd.DataFrame(shown, index=table.index)


def what_helps(summary: pd.DataFrame, L: int) -> dict[str, str]:
    """One sentence per format: what to do about it, from the numbers of ``summary_table``."""
    worst = largest_error_column(LAST_POSITION)
    # The columns read, as dicts by series: a row of the frame (summary.loc) cost 20 us each, fifteen a run.
    read = {column: summary[column].to_dict() for column in (worst, FIRST_EQUAL, FIRST_NONFINITE, SEARCHED)}
    advice = {}
    for dtype in DTYPES:
        cast, low, relative = ({column: by_series[NAMES[dtype, method]] for column, by_series in read.items()}
                               for method in ("cast", "low", "relative"))
        exact = 2 ** MANTISSA_BITS[dtype]
        if not math.isfinite(low[FIRST_EQUAL]):
            text = (
                f"Computed in it, neighbours stay apart below {power_text(int(low[SEARCHED]))}, but the angle's error "
                f"grows with k (largest error {low[worst]:.2g}): compute k·ω in float64 and cast "
                f"({cast[worst]:.2g}), or from a relative offset ({relative[worst]:.2g})."
            )
        else:
            nonfinite = low[FIRST_NONFINITE]
            text = (
                f"Never compute positions in it: k + 1 rounds to k from k = {int(low[FIRST_EQUAL]):,}"
                + (f", and k is not finite from k = {int(nonfinite):,}" if math.isfinite(nonfinite) else "")
                + f". Compute in float64 (or float32) and cast: largest error {cast[worst]:.2g}, and no two "
                f"neighbours ever round alike. A relative offset keeps every offset r < L exact only while "
                f"L ≤ {exact + 1:,}: with L = {L:,}, "
                + (f"neighbours are equal from k = {int(relative[FIRST_EQUAL]):,}."
                   if math.isfinite(relative[FIRST_EQUAL])
                   else f"no two neighbours are equal below {power_text(int(relative[SEARCHED]))}.")
            )
        advice[dtype] = text
    return advice


def telling_at(settings: Settings, dtype: str, position: int = PROBE_POSITION) -> int:
    """Columns in which P~[k] and P~[k+1] differ, computed in the dtype (the "low" method)."""
    rows = encode(np.array([position, position + 1]), settings, dtype, "low")
    return int(np.count_nonzero(rows[0] != rows[1]))


# ------------------------------------------------------------------------ reproduce this


_SNIPPET = '''import ml_dtypes  # bfloat16, float8_e4m3fn and float8_e5m2 as NumPy dtypes (pip install ml_dtypes)
import numpy as np

# Precision of the sinusoidal encoding in float32, float16, bfloat16 and two 8-bit floats against float64.
d, n, L = {d}, {n}, {L}
layout, convention = {layout!r}, {convention!r}
i = np.arange((d + 1) // 2)
{rate}
sines, cosines = (slice(0, d, 2), slice(1, d, 2)) if layout == "interleaved" else (slice(0, len(w)), slice(len(w), d))


dtypes = {{"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
          "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}}


def round_to(x, dtype):  # x cast to dtype, held in float32 (which holds every value of these formats exactly)
    x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(np.float64)  # positions: whole numbers, exact in float64
    return x.astype(dtypes[dtype]).astype(np.float32)


def pairs(k, w, dtype, method):  # sin and cos of k * w, (len(k), len(w)), float32 arithmetic
    k = np.asarray(k, dtype=np.int64)
    if method == "cast":  # float64, then cast
        theta = np.multiply.outer(k.astype(np.float64), w)
        return round_to(np.sin(theta), dtype), round_to(np.cos(theta), dtype)
    if method == "low":  # k and w rounded, product rounded, sin/cos in float32, rounded
        theta = round_to(np.multiply.outer(round_to(k, dtype), round_to(w, dtype)), dtype)
    else:  # relative: k = k0 + r, phase k0 * w mod 2 pi in float64, r * w in the dtype
        first = (k // L) * L
        phase = np.mod(np.multiply.outer(first.astype(np.float64), w), 2 * np.pi)
        step = round_to(np.multiply.outer(round_to(k - first, dtype), round_to(w, dtype)), dtype)
        theta = round_to(round_to(phase, dtype) + step, dtype)
    return round_to(np.sin(theta), dtype), round_to(np.cos(theta), dtype)


def encode(k, dtype, method):
    s, c = pairs(k, w, dtype, method)
    P = np.empty((len(s), d))
    P[:, sines], P[:, cosines] = s, c[:, : d // 2]
    return P


def exact(k):  # float64 rows (the app also keeps the rounding error of k * w: ~1e-9 apart at k = 10**7)
    theta = np.multiply.outer(k.astype(np.float64), w)
    P = np.empty((len(k), d))
    np.sin(theta, out=P[:, sines])
    np.cos(theta[:, : d // 2], out=P[:, cosines])
    return P


def first_equal(dtype, method, limit, chunk=2**20):  # first k with P[k] == P[k+1] in every column
    for a in range(0, limit, chunk):
        if method == "low" and not np.isfinite(round_to(a, dtype)):
            return None  # from here on k itself is infinite in the dtype: NaN rows, never equal
        k = np.arange(a, min(a + chunk, limit) + 1)
        s, c = pairs(k, w[:1], dtype, method)  # the fastest pair first: most k drop out there
        candidates = k[:-1][(s[:-1, 0] == s[1:, 0]) & (c[:-1, 0] == c[1:, 0])]
        for b in range(0, len(candidates), 256):  # then the slower pairs, for the first candidates
            alive = candidates[b:b + 256]
            for j in range(1, len(w)):
                if alive.size == 0:
                    break
                s, c = pairs(np.concatenate([alive, alive + 1]), w[j:j + 1], dtype, method)
                same = s[:len(alive), 0] == s[len(alive):, 0]
                if j < d // 2:  # an odd d's last pair is a lone sine
                    same &= c[:len(alive), 0] == c[len(alive):, 0]
                alive = alive[same]
            if alive.size:
                return int(alive[0])
    return None


with np.errstate(over="ignore", invalid="ignore"):
    k = np.unique(np.round(np.geomspace(1, {last}, {points})).astype(np.int64))
    P64 = exact(k)
    series = [(dtype, method) for dtype in dtypes for method in ("cast", "low", "relative")]
    # errors[:, s]: largest |error| over the d columns at each position k (NaN: not a finite number)
    errors = np.column_stack([np.abs(encode(k, *s) - P64).max(axis=1) for s in series])
    result = {{"precision_errors": errors}}  # the download of the errors by position
    # where the app's search stops (the 8-bit formats' relative offsets stop early when L <= 2^bits + 1)
    limits = {limits}
    neighbours = {{s: first_equal(*s, limits[s]) for s in series}} if {scan} else None
'''


def snippet(settings: Settings, *, scan: bool = True, limit: int | None = None) -> str:
    """Standalone NumPy code: ``result`` is ``errors_table(errors(settings)).to_numpy()``, and
    ``neighbours`` the first k with P[k] = P[k+1] per (dtype, method) (None: none below ``limit``,
    by default each series' ``search_limit``); with ``scan``, ``numbers`` the page's (computed in
    each format) by dtype."""
    limits = {
        key: search_limit(key[0], key[1], settings.L if key[1] == "relative" else 1) if limit is None else limit
        for key in SERIES
    }
    usual = max(limits.values())
    shorter = {key: value for key, value in limits.items() if value != usual}
    limits_code = f"dict.fromkeys(series, {usual})" + (f" | {shorter}" if shorter else "")
    if settings.convention == "paper":
        rate = "w = n ** (-2 * i / d)  # paper: w_i = n^(-2i/d)"
    else:
        rate = "w = n ** (-i / max(len(i) - 1, 1))  # tensor2tensor: w_i = n^(-i/(m-1))"
    code = _SNIPPET.format(
        d=settings.d, n=repr(float(settings.n)), L=settings.L, layout=settings.layout,
        convention=settings.convention, rate=rate, last=LAST_POSITION, points=GRID_POINTS, limits=limits_code,
        scan=scan,
    )
    if not scan:
        return code
    # The page's numbers: computed in each format, the first k whose neighbour has the same code (None: none found).
    return code + reproduce.numbers_code({dtype: (f"neighbours[({dtype!r}, 'low')]", ",") for dtype in DTYPES})


#: One colour per format, one dash per method.
DTYPE_COLOURS = {
    "float32": "#1f77b4", "float16": "#d62728", "bfloat16": "#2ca02c",
    "float8_e4m3fn": "#9467bd", "float8_e5m2": "#8c564b",
}


METHOD_DASHES = {"cast": "solid", "low": "dash", "relative": "dot"}


def precision_figure(
    positions: np.ndarray,
    lines: dict[tuple[str, str], np.ndarray],
    names: dict[tuple[str, str], str],
    *,
    title: str,
    y_title: str,
    log_y: bool = True,
    hover_format: str = ".3g",
    height: int = 600,
) -> go.Figure:
    """Lines of ``lines[(dtype, method)]`` against the positions, on a log position axis. Tall
    enough for the legend below it: on a phone its 15 entries are a column of 15 rows."""
    return line_figure(
        np.asarray(positions),
        {names[key]: y for key, y in lines.items()},
        title=title,
        x_title="position k",
        y_title=y_title,
        log_x=True,
        log_y=log_y,
        height=height,
        hover_format=hover_format,
        line_styles={
            names[dtype, method]: {"color": DTYPE_COLOURS.get(dtype), "dash": METHOD_DASHES.get(method, "solid"),
                                   "width": 2}
            for dtype, method in lines
        },
        # The gap above the legend is a fraction of the plot's height: on a phone's shorter plot,
        # -0.25 put the legend's first row on the axis title.
        legend={"orientation": "h", "y": -0.35},
        y_axis={"exponentformat": "power"} if log_y else None,
    )
