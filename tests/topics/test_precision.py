"""explorer.topics.precision against references written here: each format's rounding from known values,
from the test's own ml_dtypes casts and from frexp/rint, float32 arithmetic with NumPy scalars,
float64 sines from the math module, and a brute-force search for equal neighbours; the
reproduce snippet against the app's numbers; the page through streamlit.testing."""

from __future__ import annotations

import math
from dataclasses import replace
from unittest import mock

import ml_dtypes
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from support.angle_rounding import HALF_ULP, angle_rounding_tolerance
from support.app_runs import open_url
from support.snippets import run_snippet

import pe_core
from explorer.settings import Settings
from explorer.topics import precision as pr

SMALL = Settings(d=16, n=10000.0, L=100)


# --- rounding to each format: ml_dtypes casts, checked against values and roundings written here --------

#: Each format by the test's own hand: (ml_dtypes or NumPy type, significant bits, largest finite).
FORMATS = {
    "float32": (np.float32, 24, float(np.finfo(np.float32).max)),
    "float16": (np.float16, 11, 65504.0),  # NumPy's own: cast from float64 directly
    "bfloat16": (ml_dtypes.bfloat16, 8, 3.3895313892515355e38),
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 4, 448.0),
    "float8_e5m2": (ml_dtypes.float8_e5m2, 3, 57344.0),
}


def cast_by_ml_dtypes(x: object, dtype: str) -> np.ndarray:
    """The test's own cast: float64 -> the format's type -> float64."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float64).astype(FORMATS[dtype][0]).astype(np.float64)


def round_by_frexp(x: np.ndarray, bits: int, through_float32: bool) -> np.ndarray:
    """Independent rounding to ``bits`` significant bits, normal range only: x = m 2^e, m in [0.5, 1);
    rint is ties-to-even. ml_dtypes casts a float64 through float32 first (NumPy's float16 does not)."""
    with np.errstate(over="ignore"):
        x = x.astype(np.float32).astype(np.float64) if through_float32 else x
    m, e = np.frexp(x)
    return np.ldexp(np.rint(m * 2**bits), e - bits)


@pytest.mark.parametrize(
    ("dtype", "x", "expected"),
    [
        ("bfloat16", 1 / 3, 0.333984375),  # 0x3EAAAAAB -> 0x3EAB
        ("bfloat16", 65504.0, 65536.0),  # float16's largest needs 11 bits: rounds up to 2^16
        ("bfloat16", 257.0, 256.0),  # a tie, to the even 256
        ("bfloat16", 259.0, 260.0),  # a tie, to the even 260
        ("bfloat16", 1 + 2**-8 + 2**-30, 1.0),  # through float32 the 2^-30 is lost: a tie, to even (not 1 + 2^-7)
        ("bfloat16", float(np.finfo(np.float32).max), math.inf),
        ("float8_e4m3fn", 1 / 3, 0.34375),  # 1.0101..b x 2^-2 -> 1.011b x 2^-2
        ("float8_e4m3fn", 17.0, 16.0),  # a tie, to the even 16: 2^4 is the last exact neighbour pair
        ("float8_e4m3fn", 19.0, 20.0),  # a tie, to the even 20
        ("float8_e4m3fn", 448.0, 448.0),  # the largest
        ("float8_e4m3fn", 464.0, 448.0),  # halfway to the missing 480: to the even 448
        ("float8_e4m3fn", 465.0, math.nan),  # no infinity in the "fn" variant: NaN
        ("float8_e4m3fn", math.inf, math.nan),
        ("float8_e4m3fn", 2.0**-9, 2.0**-9),  # the smallest subnormal
        ("float8_e4m3fn", 2.0**-11, 0.0),  # a quarter of it rounds to zero
        ("float8_e5m2", 1 / 3, 0.3125),  # 1.0101..b x 2^-2 -> 1.01b x 2^-2
        ("float8_e5m2", 9.0, 8.0),  # a tie, to the even 8: 2^3 is the last exact neighbour pair
        ("float8_e5m2", 57344.0, 57344.0),  # the largest
        ("float8_e5m2", 61439.0, 57344.0),
        ("float8_e5m2", 61440.0, math.inf),  # halfway to 2^16: to the even 2^16, which is infinity
        ("float8_e5m2", -math.inf, -math.inf),
        ("float8_e5m2", 2.0**-16, 2.0**-16),  # the smallest subnormal
    ],
)
def test_round_to_known_values(dtype: str, x: float, expected: float) -> None:
    got = float(pr.round_to(np.array([x]), dtype)[0])
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_round_to_keeps_nan_and_sign_of_zero() -> None:
    for dtype in pr.DTYPES:
        out = pr.round_to(np.array([np.nan, -0.0]), dtype)
        assert np.isnan(out[0]) and out[1] == 0.0 and np.signbit(out[1]), dtype


@pytest.mark.parametrize("dtype", list(FORMATS))
def test_round_to_is_the_ml_dtypes_cast_and_a_frexp_rounding(dtype: str) -> None:
    kind, bits, largest = FORMATS[dtype]
    rng = np.random.default_rng(0)
    tiny = float(ml_dtypes.finfo(kind).tiny)  # the smallest normal number: frexp's rounding holds above it
    x = np.concatenate([
        rng.uniform(-1.0, 1.0, 20_000),  # the values of P
        np.exp(rng.uniform(np.log(tiny), np.log(largest), 20_000)) * rng.choice([-1.0, 1.0], 20_000),
        np.arange(0, 70_000, dtype=np.float64),  # positions
        # exact ties in the format: bits + 1 significant bits whose last is 1
        np.ldexp(rng.integers(2**bits, 2 ** (bits + 1), 5_000) * 2.0 + 1, rng.integers(-4, 4, 5_000)) / 2**bits,
    ])
    got = pr.round_to(x, dtype)
    assert got.dtype == np.float32  # held in float32, which holds every value of the format
    np.testing.assert_array_equal(got.astype(np.float64), cast_by_ml_dtypes(x, dtype))
    normal = np.abs(x) >= tiny
    by_frexp = round_by_frexp(x[normal], bits, through_float32=dtype != "float16")
    by_frexp[np.abs(by_frexp) > largest] = np.nan  # beyond the largest: not finite (checked above by value)
    finite = np.isfinite(by_frexp)
    np.testing.assert_array_equal(got[normal][finite].astype(np.float64), by_frexp[finite])
    assert not np.isfinite(got[normal][~finite]).any()


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_round_to_8_bit_formats_is_the_cast_to_the_bit(dtype: str) -> None:
    # The byte table's lookup against ml_dtypes' own cast back to float32: every byte, NaN's bits,
    # signed zeros and infinities, from float64 and float32, and the shape of a scalar.
    kind = FORMATS[dtype][0]
    every_value = np.arange(256, dtype=np.uint8).view(kind).astype(np.float64)
    x = np.concatenate([every_value, np.random.default_rng(0).uniform(-500, 500, 5_000),
                        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e-300]])
    with np.errstate(over="ignore", invalid="ignore"):
        sources = (x, x.astype(np.float32))
    for values in sources:
        with np.errstate(over="ignore", invalid="ignore"):
            expected = values.astype(kind).astype(np.float32)
        np.testing.assert_array_equal(pr.round_to(values, dtype).view(np.uint32), expected.view(np.uint32))
    assert pr.round_to(3.3, dtype).shape == () and pr.round_to(np.ones((2, 3)), dtype).shape == (2, 3)


def test_round_to_each_format() -> None:
    x = np.array([1 / 3, 1e7 + 1, 70000.0])
    assert pr.round_to(x, "float32").tolist() == [np.float32(1 / 3), 1e7 + 1, 70000.0]
    assert pr.round_to(x, "float16").tolist()[:2] == [float(np.float16(1 / 3)), math.inf]
    assert pr.round_to(x, "bfloat16").tolist() == [0.333984375, 153 * 2.0**16, 137 * 2.0**9]
    e4m3 = pr.round_to(np.array([300, 1000]), "float8_e4m3fn")  # positions: 300 -> 1.001b x 2^8, 1000 -> NaN
    assert e4m3[0] == 288.0 and np.isnan(e4m3[1])
    with pytest.raises(ValueError, match=r"unknown dtype 'int8'; expected one of float32, .*float8_e5m2"):
        pr.round_to(x, "int8")


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_positional_encoding_casts_to_the_low_precision_types(dtype: str) -> None:
    float64 = pe_core.positional_encoding(50, 16, n=100.0)
    for requested in (dtype, FORMATS[dtype][0]):  # by name and by type
        low = pe_core.positional_encoding(50, 16, n=100.0, dtype=requested)
        assert low.dtype == np.dtype(FORMATS[dtype][0])
        np.testing.assert_array_equal(low.astype(np.float64), cast_by_ml_dtypes(float64, dtype))


finite_values = st.floats(allow_nan=False, allow_infinity=False, width=64)


@hypothesis_settings(max_examples=300, deadline=None)
@given(x=finite_values, dtype=st.sampled_from(pr.DTYPES))
def test_rounding_is_idempotent_and_within_half_a_unit(x: float, dtype: str) -> None:
    kind, bits, largest = FORMATS[dtype]
    once = pr.round_to(np.array([x]), dtype)
    np.testing.assert_array_equal(pr.round_to(once, dtype), once)  # a value of the format stays itself
    if not np.isfinite(once[0]):
        # Only beyond the largest finite value plus half a unit there (to even), or through float32's overflow.
        assert abs(x) >= largest
        return
    # Half a unit of the format at |x| (its spacing is 2^(e - bits + 1) in [2^e, 2^(e+1)), at least the
    # subnormal spacing), plus half a unit of float32 for the cast through float32.
    smallest = float(ml_dtypes.finfo(kind).smallest_subnormal)
    exponent = math.floor(math.log2(abs(x))) if x else -1075
    half_unit = max(2.0 ** (exponent - bits), smallest / 2)
    half_float32 = max(2.0 ** (exponent - 24), 2.0**-150)
    assert abs(float(once[0]) - x) <= half_unit + half_float32


# --- the three methods against independent computations ---------------------------------


def test_cast_errors_against_math_sin() -> None:
    positions = np.array([1, 7, 1000, 123_456, 9_999_999])
    w = 10000.0 ** (-2 * np.arange(8) / 16)
    for dtype in FORMATS:
        s, c = pr.pair_values(positions, w, dtype, "cast")
        for row, k in enumerate(positions):
            for i, wi in enumerate(w):
                assert s[row, i] == cast_by_ml_dtypes(math.sin(k * wi), dtype)
                assert c[row, i] == cast_by_ml_dtypes(math.cos(k * wi), dtype)


def test_low_float32_is_float32_arithmetic() -> None:
    positions = np.array([3, 4097, 1_000_003, 9_999_991])
    w = 10000.0 ** (-2 * np.arange(8) / 16)
    s, c = pr.pair_values(positions, w, "float32", "low")
    for row, k in enumerate(positions):
        for i, wi in enumerate(w):
            theta = np.float32(k) * np.float32(wi)  # float32 x float32, rounded to float32
            assert s[row, i] == np.sin(np.array([theta]))[0] and c[row, i] == np.cos(np.array([theta]))[0]


@pytest.mark.parametrize(
    ("dtype", "k_held", "w_held", "theta"),
    [
        ("bfloat16", 300.0, 0.69921875, 210.0),  # 300 x 0.69921875 = 209.765625 -> 210
        ("float8_e4m3fn", 288.0, 0.6875, 192.0),  # 300 -> 288, 0.7 -> 0.6875; 198 -> 192 (4 bits: 192, 208)
        ("float8_e5m2", 320.0, 0.75, 256.0),  # 300 -> 320, 0.7 -> 0.75; 240 is a tie of 224 and 256: to the even 256
    ],
)
def test_low_rounds_every_step(dtype: str, k_held: float, w_held: float, theta: float) -> None:
    k, w = np.array([300]), np.array([0.7])
    bits = FORMATS[dtype][1]
    # The values by hand (the parameters), by a frexp rounding and by the test's own ml_dtypes cast.
    assert round_by_frexp(np.array([300.0, 0.7]), bits, through_float32=True).tolist() == [k_held, w_held]
    assert cast_by_ml_dtypes([300.0, 0.7], dtype).tolist() == [k_held, w_held]
    assert cast_by_ml_dtypes(k_held * w_held, dtype) == theta
    s, c = pr.pair_values(k, w, dtype, "low")
    angle = np.array([theta], dtype=np.float32)
    assert s[0, 0] == cast_by_ml_dtypes(np.sin(angle), dtype)[0]
    assert c[0, 0] == cast_by_ml_dtypes(np.cos(angle), dtype)[0]


def test_relative_offset_splits_the_position() -> None:
    k, w = np.array([1_000_050]), np.array([1.0, 0.01])
    s, _ = pr.pair_values(k, w, "float32", "relative", window=100)
    phase = np.float32(np.mod(1_000_000 * w, 2 * np.pi))  # k0 = 1,000,000 in float64
    theta = phase + np.float32(50) * np.float32(w)
    np.testing.assert_array_equal(s[0], np.sin(theta.astype(np.float32)))


def test_float16_cannot_hold_large_positions() -> None:
    s, _ = pr.pair_values(np.array([65519, 65520]), np.array([1.0]), "float16", "low")
    assert np.isfinite(s[0, 0]) and np.isnan(s[1, 0])


def test_errors_against_an_independent_float64_reference() -> None:
    positions = np.array([1, 50, 5000, 10**6])
    result = pr.errors(SMALL, positions)
    w = 10000.0 ** (-2 * np.arange(8) / 16)
    exact = np.empty((4, 16))
    for row, k in enumerate(positions):
        exact[row, 0::2] = [math.sin(k * wi) for wi in w]
        exact[row, 1::2] = [math.cos(k * wi) for wi in w]
    # math.sin of the rounded angle k w: within the angle's rounding of pe_core's (w_0 = 1: angles <= 10^6).
    reference = pr.reference(positions, SMALL)
    np.testing.assert_allclose(reference, exact, rtol=0, atol=angle_rounding_tolerance(positions.max()))
    # An error |x~ - x| moves by at most |x - x'| when the reference moves from x to x', plus the
    # rounding of the subtraction (half an ulp of the error).
    gap = np.abs(reference - exact).max(axis=1)
    cast32 = np.abs(exact.astype(np.float32).astype(np.float64) - exact).max(axis=1)
    np.testing.assert_array_less(np.abs(result.max_error[pr.NAMES[("float32", "cast")]] - cast32),
                                 gap + 2 * HALF_ULP * cast32 + np.finfo(float).tiny)
    for key in pr.SERIES:
        rows = pr.encode(positions, SMALL, *key, SMALL.L)
        textbook = np.abs(rows - exact).max(axis=1)
        finite = np.isfinite(textbook)
        np.testing.assert_array_equal(np.isfinite(result.max_error[pr.NAMES[key]]), finite)
        np.testing.assert_array_less(np.abs(result.max_error[pr.NAMES[key]] - textbook)[finite],
                                     (gap + 2 * HALF_ULP * textbook + np.finfo(float).tiny)[finite])
    # Casting is never worse than half a unit in the last place of a value below 1 (plus half a unit of
    # float32 for ml_dtypes' cast through it); the 8-bit formats come close to it at some position.
    for dtype, (_, bits, _) in FORMATS.items():
        largest = result.max_error[pr.NAMES[(dtype, "cast")]].max()
        assert largest <= 2.0 ** -(bits + 1) + (2.0**-25 if dtype != "float16" else 0.0)
    for dtype in ("float8_e4m3fn", "float8_e5m2"):
        assert result.max_error[pr.NAMES[(dtype, "cast")]].max() > 2.0 ** -(FORMATS[dtype][1] + 2)


def test_errors_on_the_grid_read_the_reference_of_their_own_settings() -> None:
    # The grid's float64 sines and cosines are kept by d, n and convention: the same errors, to the
    # bit, as those computed from the positions, whatever was asked for before.
    for settings in (SMALL, replace(SMALL, d=17, convention="tensor2tensor"), replace(SMALL, n=2.0), SMALL):
        kept, computed = pr.errors(settings), pr.errors(settings, pr.grid())
        for name in pr.NAMES.values():
            np.testing.assert_array_equal(kept.max_error[name], computed.max_error[name])
            np.testing.assert_array_equal(kept.telling[name], computed.telling[name])


def test_column_errors_are_one_column_of_the_rows() -> None:
    settings = replace(SMALL, layout="concatenated")
    positions = np.array([2, 3000, 777_777])
    exact = pr.reference(positions, settings)
    for column in (0, 9, 15):
        by_column = pr.column_errors(settings, column, positions)
        for key in pr.SERIES:
            rows = pr.encode(positions, settings, *key, settings.L)
            np.testing.assert_array_equal(by_column[pr.NAMES[key]], np.abs(rows[:, column] - exact[:, column]))


# --- indistinguishable neighbours ----------------------------------------------------------


def brute_force_first_equal(settings: Settings, dtype: str, method: str, limit: int) -> int | None:
    rows = pr.encode(np.arange(limit + 1), settings, dtype, method, settings.L)
    equal = np.flatnonzero((rows[:-1] == rows[1:]).all(axis=1))
    return int(equal[0]) if equal.size else None


@pytest.mark.parametrize(
    ("dtype", "method", "window", "expected"),
    [
        ("bfloat16", "low", 100, 256),  # k + 1 rounds to k from 2^8
        ("float16", "low", 100, 2048),  # from 2^11
        ("bfloat16", "relative", 300, 256),  # r reaches 256 inside a window of 300
        ("bfloat16", "cast", 100, None),
        ("float32", "low", 100, None),
        ("float8_e4m3fn", "low", 100, 16),  # from 2^4
        ("float8_e5m2", "low", 100, 8),  # from 2^3
        ("float8_e4m3fn", "relative", 18, 16),  # r = 16, 17 inside a window of 18: both round to 16
        ("float8_e4m3fn", "relative", 17, 66),  # every offset exact: a later accident of rounding in all 16 columns
        ("float8_e4m3fn", "relative", 5, None),
        ("float8_e5m2", "relative", 10, 8),
        ("float8_e5m2", "relative", 9, 21),
        ("float8_e4m3fn", "cast", 100, None),
        ("float8_e5m2", "cast", 100, None),
    ],
)
def test_first_equal_neighbours_matches_brute_force(dtype: str, method: str, window: int, expected: int | None) -> None:
    settings = replace(SMALL, L=window)
    limit = 3000
    assert brute_force_first_equal(settings, dtype, method, limit) == expected
    assert pr.neighbours(settings, dtype, method, limit=limit).first_equal == expected


@pytest.mark.parametrize(("dtype", "window"), [("float8_e5m2", 9), ("float8_e4m3fn", 17)])
def test_candidates_are_confirmed_in_order_in_batches_that_grow(dtype: str, window: int) -> None:
    # The candidates: every k whose fastest pair equals k+1's (d = 64, relative offsets: 36 and 235 of them
    # fail on a slower pair first). The first whose whole row does, wherever it falls in the batches
    # (16, 32, 64 ... candidates), and none when it is not among them.
    settings, method = Settings(d=64, L=window), "relative"
    expected = brute_force_first_equal(settings, dtype, method, 3000)
    s, c = pr.pair_values(np.arange(3001), np.ones(1), dtype, method, window)
    candidates = np.flatnonzero((s[:-1, 0] == s[1:, 0]) & (c[:-1, 0] == c[1:, 0]))
    before = int(np.searchsorted(candidates, expected))
    assert before > pr.FIRST_CONFIRM_BATCH  # it is not in the first batch
    assert pr._confirm(candidates, settings, dtype, method, window) == expected
    assert pr._confirm(candidates[before - 20 :], settings, dtype, method, window) == expected
    assert pr._confirm(candidates[:before], settings, dtype, method, window) is None


def test_search_up_to_ten_million() -> None:
    found = {key: pr.neighbours(SMALL, *key) for key in [("float32", "low"), ("float16", "low"), ("float32", "cast")]}
    assert found[("float32", "low")].first_equal is None  # float32 holds every k up to 2^24 > 10^7
    assert found[("float32", "cast")].first_equal is None
    assert found[("float16", "low")].first_equal == 2048
    assert found[("float16", "low")].first_nonfinite == 65520  # 65520 is halfway to 65536: rounds to inf
    e4m3, e5m2 = pr.neighbours(SMALL, "float8_e4m3fn", "low"), pr.neighbours(SMALL, "float8_e5m2", "low")
    assert (e4m3.first_equal, e4m3.first_nonfinite, e4m3.limit) == (16, 465, 10**7)  # 465 -> NaN (no infinity)
    assert (e5m2.first_equal, e5m2.first_nonfinite, e5m2.limit) == (8, 61440, 10**7)  # a tie, to the even 2^16: inf


def test_search_continues_past_the_candidate_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    # With at most 3 fastest-pair candidates per scan, the search still finds 256.
    calls = []

    def small_scan(*args):
        calls.append(args)
        return pr.scan_fastest_pair(*args, max_candidates=3)

    assert pr.neighbours(SMALL, "bfloat16", "low", limit=5000, scan=small_scan).first_equal == 256
    scan = pr.scan_fastest_pair("bfloat16", "low", 1.0, 1, 0, 5000, max_candidates=3)
    assert scan.candidates.tolist() == [256, 259, 260] and scan.stop == 261


def test_summary_table() -> None:
    positions = pr.grid()
    assert positions[0] == 1 and positions[-1] == 10**7 and np.all(np.diff(positions) > 0)
    result = pr.errors(SMALL)
    found = {pr.NAMES[key]: pr.Neighbours(256 if key == ("bfloat16", "low") else None, None, 10**7)
             for key in pr.SERIES}
    found[pr.NAMES[("float8_e5m2", "relative")]] = pr.Neighbours(None, None, pr.SHORT_SCAN_LIMIT)
    table = pr.summary_table(result, found)
    assert table.shape == (15, 6) and table.to_numpy().dtype == np.float64
    assert table.loc[pr.NAMES[("bfloat16", "low")], "first k: P[k] = P[k+1]"] == 256
    shown = pr.display_summary(table)
    assert shown.shape == (15, 5)  # where each search stopped is worded in its cells
    assert shown.loc[pr.NAMES[("float32", "cast")], "first k: P[k] = P[k+1]"] == "none below 10⁷"
    assert shown.loc[pr.NAMES[("float8_e5m2", "relative")], "first k: P[k] = P[k+1]"] == "none below 10⁵"
    formats = pr.formats_table()
    assert formats.loc["bfloat16", "every whole number up to"] == "256"
    assert formats.loc["float16", "spacing of its numbers near 10⁷"] == "cannot hold it"
    assert formats.loc["float32", "spacing of its numbers near 10⁷"] == "1"
    assert formats.loc["float8_e4m3fn", "every whole number up to"] == "16"
    assert formats.loc["float8_e5m2", "largest finite value"] == "57344"
    assert formats["a larger value becomes"].to_dict() == {
        "float64": "infinity", "float32": "infinity", "float16": "infinity", "bfloat16": "infinity",
        "float8_e4m3fn": "NaN", "float8_e5m2": "infinity",
    }


def test_summary_tables_are_the_frames_of_their_rows() -> None:
    # The summary and its words against frames built here row by row, from each series' numbers.
    settings = replace(SMALL, L=9)
    result = pr.results(settings)
    table = pr.summary_table(result.errors, result.neighbours)
    rows = {}
    for name, error in result.errors.max_error.items():
        row = {}
        for bound in pr.ERROR_BOUNDS:
            inside = error[result.errors.positions <= bound]
            finite = inside[np.isfinite(inside)]
            row[pr.largest_error_column(bound)] = float(finite.max()) if finite.size else math.nan
        scan = result.neighbours[name]
        row[pr.FIRST_EQUAL] = math.nan if scan.first_equal is None else float(scan.first_equal)
        row[pr.FIRST_NONFINITE] = math.nan if scan.first_nonfinite is None else float(scan.first_nonfinite)
        row[pr.SEARCHED] = float(scan.limit)
        rows[name] = row
    expected = pd.DataFrame.from_dict(rows, orient="index").rename_axis("dtype · method")
    pd.testing.assert_frame_equal(table, expected)
    words = expected.drop(columns=pr.SEARCHED).astype(object)
    for column in words.columns:
        words[column] = [
            (f"{v:.3g}" if math.isfinite(v) else "n/a") if column.startswith("largest error")
            else (f"{int(v):,}" if math.isfinite(v) else f"none below {pr.power_text(int(limit))}")
            for v, limit in zip(expected[column], expected[pr.SEARCHED], strict=True)
        ]
    pd.testing.assert_frame_equal(pr.display_summary(table), words)


def test_a_larger_d_tells_neighbours_apart_in_more_columns() -> None:
    counts = [pr.telling_at(replace(SMALL, d=d), "bfloat16") for d in (16, 32, 64)]
    assert counts[0] < counts[1] < counts[2] and counts[2] <= 64


# --- reproduce this -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [SMALL, Settings(d=10, n=100.0, L=300, layout="concatenated", convention="tensor2tensor")],
    ids=["paper", "t2t-concatenated"],
)
def test_snippet_reproduces_the_errors_and_the_search(settings: Settings) -> None:
    code = pr.snippet(settings, limit=3000)
    assert "explorer" not in code and "pe_core" not in code
    namespace = run_snippet(code)
    # The snippet's float64 reference rounds the angles k w (w_0 = 1: at most 10^7 rad); the low-precision
    # rows are the same computation on both sides, so each error moves by at most the reference's gap.
    np.testing.assert_array_equal(namespace["k"], pr.grid())
    reference = pr.reference(namespace["k"], settings)
    P64 = namespace["P64"]
    np.testing.assert_allclose(P64, reference, rtol=0, atol=angle_rounding_tolerance(pr.LAST_POSITION))
    gap = np.abs(P64 - reference).max(axis=1)[:, None]
    result, expected = namespace["result"]["precision_errors"], pr.errors_table(pr.errors(settings)).to_numpy()
    np.testing.assert_array_equal(np.isfinite(result), np.isfinite(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_less(np.abs(result - expected)[finite],
                                 (gap + 2 * HALF_ULP * expected + np.finfo(float).tiny)[finite])
    expected = {key: pr.neighbours(settings, *key, limit=3000).first_equal for key in pr.SERIES}
    assert namespace["neighbours"] == expected


def test_snippet_brute_force_agrees_with_the_bounded_search_at_full_limits() -> None:
    # The snippet computes every position to each series' limit (10^7, or 10^5 for the 8-bit relative
    # offsets at L = 9): the app's shortcuts (cast never equal, low stopping where k is unholdable, the
    # screened relative scans) must find the same first k.
    settings = Settings(d=64, n=10000.0, L=9)
    namespace = run_snippet(pr.snippet(settings))
    assert namespace["neighbours"] == {key: pr.neighbours(settings, *key).first_equal for key in pr.SERIES}


def test_page_snippet_searches_to_ten_million() -> None:
    assert "limits = dict.fromkeys(series, 10000000)\n" in pr.snippet(SMALL)
    # Where the app's search of the 8-bit relative offsets stops early, the snippet's does too.
    limit = pr.SHORT_SCAN_LIMIT
    short = f"{{('float8_e4m3fn', 'relative'): {limit}, ('float8_e5m2', 'relative'): {limit}}}"
    assert f"limits = dict.fromkeys(series, 10000000) | {short}\n" in pr.snippet(replace(SMALL, L=9))


# --- the relative method's scan computes only the pairs that can match ----------------------


@hypothesis_settings(max_examples=80, deadline=None)
@given(
    dtype=st.sampled_from(pr.DTYPES),
    window=st.one_of(st.integers(1, 3000), st.sampled_from([119, 120, 121, 1015, 1016, 1017, 2049, 16384])),
    start=st.integers(0, 40_000),
    span=st.integers(1, 60_000),
    max_candidates=st.one_of(st.just(pr.MAX_CANDIDATES), st.integers(1, 50)),
)
def test_relative_scan_matches_the_scan_of_every_pair(dtype, window, start, span, max_candidates) -> None:
    # The pairs skipped (offsets below relative_first_offset) can never match: the same
    # candidates, stop and first non-finite position as computing every pair.
    screened = pr.scan_fastest_pair(dtype, "relative", 1.0, window, start, start + span, max_candidates)
    with mock.patch.object(pr, "relative_first_offset", return_value=0):
        every_pair = pr.scan_fastest_pair(dtype, "relative", 1.0, window, start, start + span, max_candidates)
    np.testing.assert_array_equal(screened.candidates, every_pair.candidates)
    assert screened.stop == every_pair.stop


@pytest.mark.parametrize(("dtype", "window"), [("bfloat16", 130), ("float16", 1100), ("float16", 2049)])
def test_relative_neighbours_above_the_screen_match_brute_force(dtype: str, window: int) -> None:
    settings = replace(SMALL, L=window)
    limit = 40_000
    expected = brute_force_first_equal(settings, dtype, "relative", limit)
    assert pr.neighbours(settings, dtype, "relative", limit=limit).first_equal == expected


# --- the bounds that keep the 8-bit searches short -------------------------------------------


@hypothesis_settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(pr.DTYPES),
    method=st.sampled_from(["cast", "low"]),
    start=st.integers(0, 70_000),
    span=st.integers(1, 30_000),
)
# Found by hypothesis: the first chunk with candidates ends at the first unholdable position (465).
@example(dtype="float8_e4m3fn", method="low", start=0, span=466)
@example(dtype="float8_e4m3fn", method="low", start=0, span=10_399)
def test_cast_and_low_scans_skip_only_what_cannot_match(dtype, method, start, span) -> None:
    # Without cast_never_equal and first_unholdable every position is computed: the same candidates
    # (none at all when cast). The bounded scan may say it got further (nothing beyond its bound can
    # match, so it is whole); what it got past, computed position by position, holds no candidate.
    bounded = pr.scan_fastest_pair(dtype, method, 1.0, 1, start, start + span)
    with mock.patch.object(pr, "cast_never_equal", return_value=False), \
            mock.patch.object(pr, "first_unholdable", return_value=None):
        every_position = pr.scan_fastest_pair(dtype, method, 1.0, 1, start, start + span)
        np.testing.assert_array_equal(bounded.candidates, every_position.candidates)
        assert bounded.stop >= every_position.stop
        skipped = every_position.stop
        while skipped < bounded.stop:
            beyond = pr.scan_fastest_pair(dtype, method, 1.0, 1, skipped, bounded.stop)
            assert beyond.candidates.size == 0, (skipped, beyond.candidates[:5])
            skipped = beyond.stop
    if method == "cast":
        assert bounded.candidates.size == 0


@pytest.mark.parametrize("dtype", pr.DTYPES)
def test_first_nonfinite_matches_the_rows(dtype: str) -> None:
    settings = replace(SMALL, L=600)
    for method in pr.METHODS:
        rows = pr.encode(np.arange(70_000), settings, dtype, method, settings.L)
        bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
        assert pr.first_nonfinite(dtype, method, settings.L) == (int(bad[0]) if bad.size else None), method
    # float8_e4m3fn's relative offsets reach 465 only in windows longer than that.
    assert pr.first_nonfinite("float8_e4m3fn", "relative", 465) is None


def test_first_unholdable_against_the_casts() -> None:
    for dtype in pr.DTYPES:
        first = pr.first_unholdable(dtype)
        if first is None:  # float32, bfloat16: beyond 2^53
            assert np.isfinite(cast_by_ml_dtypes(2.0**53, dtype))
            continue
        assert np.isfinite(cast_by_ml_dtypes(first - 1, dtype)) and not np.isfinite(cast_by_ml_dtypes(first, dtype))
    assert (pr.first_unholdable("float16"), pr.first_unholdable("float8_e4m3fn")) == (65520, 465)


def test_search_limit_is_short_only_where_every_offset_is_exact() -> None:
    assert pr.search_limit("float8_e4m3fn", "relative", 17) == pr.SHORT_SCAN_LIMIT
    assert pr.search_limit("float8_e4m3fn", "relative", 18) == pr.SCAN_LIMIT  # 16 and 17 share a value
    assert pr.search_limit("float8_e5m2", "relative", 9) == pr.SHORT_SCAN_LIMIT
    assert pr.search_limit("float8_e5m2", "relative", 10) == pr.SCAN_LIMIT
    assert pr.search_limit("bfloat16", "relative", 2) == pr.SCAN_LIMIT
    assert pr.search_limit("float8_e5m2", "low", 1) == pr.SCAN_LIMIT
    assert pr.neighbours(replace(SMALL, L=5), "float8_e4m3fn", "relative").limit == pr.SHORT_SCAN_LIMIT


def test_what_helps_reads_the_summary() -> None:
    settings = replace(SMALL, L=300)
    result = pr.errors(settings)
    found = {pr.NAMES[key]: pr.neighbours(settings, *key) for key in pr.SERIES}
    advice = pr.what_helps(pr.summary_table(result, found), settings.L)
    assert list(advice) == list(pr.DTYPES)
    assert advice["float32"].startswith("Computed in it, neighbours stay apart below 10⁷")
    assert "k + 1 rounds to k from k = 16, and k is not finite from k = 465" in advice["float8_e4m3fn"]
    assert "k + 1 rounds to k from k = 8, and k is not finite from k = 61,440" in advice["float8_e5m2"]
    assert "only while L ≤ 257: with L = 300, neighbours are equal from k = 256" in advice["bfloat16"]
    assert "only while L ≤ 2,049: with L = 300, no two neighbours are equal below 10⁷" in advice["float16"]


def test_reference_rows_are_pe_core_rows() -> None:
    for settings in (SMALL, Settings(d=9, n=2.0, layout="concatenated", convention="tensor2tensor")):
        k = np.r_[pr.grid(), pr.grid() + 1]
        rows = [
            pe_core.positional_encoding(1, settings.d, settings.n, layout=settings.layout,
                                        convention=settings.convention, start=int(position))[0]
            for position in k
        ]
        np.testing.assert_array_equal(pr.reference(k, settings), np.array(rows))


@pytest.mark.parametrize("log_y", [True, False])
def test_precision_figure_is_the_figure_plotly_validates(log_y: bool) -> None:
    # Built without Plotly's validation (explorer.figures.line_figure): built again with it, the same figure.
    result = pr.errors(SMALL)
    lines = {key: (result.max_error if log_y else result.telling)[pr.NAMES[key]] for key in pr.SERIES}
    fig = pr.precision_figure(result.positions, lines, pr.NAMES, title="t", y_title="y", log_y=log_y)
    assert go.Figure(fig.to_dict()).to_dict() == fig.to_dict()
    assert [(trace.line.color, trace.line.dash) for trace in fig.data] == [
        (pr.DTYPE_COLOURS[dtype], pr.METHOD_DASHES[method]) for dtype, method in pr.SERIES]
    assert fig.layout.legend.y == -0.35 and fig.layout.yaxis.exponentformat == ("power" if log_y else None)


# --- the page, through streamlit.testing ---------------------------------------------------


def test_an_L_step_computes_only_the_relative_series_again(monkeypatch: pytest.MonkeyPatch) -> None:
    computed = []
    real = pr.results
    monkeypatch.setattr(pr, "results", lambda settings, series, **kwargs: computed.append(
        (settings.d, settings.L, {method for _, method in series})) or real(settings, series, **kwargs))

    def summary(query: dict[str, str]) -> tuple[pd.DataFrame, Settings]:
        at = open_url("precision", query | {"n": "12345"})  # settings no other test asks for
        assert not at.exception
        shown = next(frame.value for frame in at.dataframe if "dtype · method" in frame.value.index.names)
        return shown, at.session_state["settings"]

    first = summary({"d": "24", "L": "100"})
    assert computed == [(24, 1, {"cast", "low"}), (24, 100, {"relative"})]
    moved = summary({"d": "24", "L": "10"})  # the other series come from the cache (L=1)
    assert computed[2:] == [(24, 10, {"relative"})]
    other = summary({"d": "26", "L": "10"})
    assert computed[3:] == [(26, 1, {"cast", "low"}), (26, 10, {"relative"})]
    # Not served stale: the relative series are those of each one's L, computed now; the others those of its d.
    relative = [name for (dtype, method), name in pr.NAMES.items() if method == "relative"]
    for shown, settings in (first, moved, other):
        result = real(settings, [key for key in pr.SERIES if key[1] == "relative"])
        pd.testing.assert_frame_equal(
            shown.loc[relative], pr.display_summary(pr.summary_table(result.errors, result.neighbours)))
    assert not first[0].loc[relative].equals(moved[0].loc[relative])
    fixed = [name for name in pr.NAMES.values() if name not in relative]
    assert first[0].loc[fixed].equals(moved[0].loc[fixed]) and not moved[0].loc[fixed].equals(other[0].loc[fixed])


@pytest.mark.parametrize("query", [{}, {"L": "9"}], ids=["defaults", "L=9"])
def test_the_page_shows_every_format(query: dict[str, str]) -> None:
    at = open_url("precision", query)
    assert not at.exception, [e.value for e in at.exception]
    metrics = {metric.label: metric.value for metric in at.metric}
    # Computed in each format, neighbours collapse where k + 1 rounds to k: 2^bits, never in float32.
    assert metrics == {
        "float32": "none < 10⁷", "float16": "k = 2,048", "bfloat16": "k = 256", "float8_e4m3fn": "k = 16",
        "float8_e5m2": "k = 8",
    }
    summary = next(frame.value for frame in at.dataframe if "dtype · method" in frame.value.index.names)
    assert list(summary.index) == [f"{dtype} · {words}" for dtype in FORMATS for words in pr.METHODS.values()]
    relative_e5m2 = summary.loc["float8_e5m2 · from a relative offset", "first k: P[k] = P[k+1]"]
    assert relative_e5m2 == ("none below 10⁵" if query else "8")  # L = 100 > 9: offsets 8 and 9 share 8
    helps = "\n".join(markdown.value for markdown in at.markdown)
    for dtype in FORMATS:
        assert f"- **{dtype}.** " in helps
    captions = "\n".join(caption.value for caption in at.caption)
    assert "float8_e4m3fn" in captions and "no infinity" in captions and "largest 448" in captions


@pytest.mark.parametrize("dtype", [name for name in pr.DTYPES if name != "float32"])
def test_sines_and_cosines_looked_up_are_those_computed_for_every_value_of_the_format(dtype: str) -> None:
    """Every value the format holds (infinities and NaN too), in arrays laid out several ways (reversed,
    strided, of odd length): the table's sin and cos are np.sin and np.cos of it rounded to the format."""
    numpy_dtype = pr.NUMPY_DTYPES[dtype]
    bits = np.arange(1 << (8 * numpy_dtype.itemsize), dtype=f"u{numpy_dtype.itemsize}")
    every = bits.view(numpy_dtype).astype(np.float32)
    for theta in (every, every[::-1], every[3:], np.repeat(every, 3)[1::2]):
        sin, cos = pr._sin_cos_in(theta, dtype)
        with np.errstate(invalid="ignore"):
            expected_sin, expected_cos = pr.round_to(np.sin(theta), dtype), pr.round_to(np.cos(theta), dtype)
        np.testing.assert_array_equal(sin, expected_sin)  # NaN where NaN
        np.testing.assert_array_equal(cos, expected_cos)
        finite = np.isfinite(expected_sin)
        assert np.array_equal(sin[finite].view(np.uint32), expected_sin[finite].view(np.uint32))  # -0.0 too
