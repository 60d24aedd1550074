"""explorer.precision against references written here: bfloat16 from known values and from
frexp/rint, float32 arithmetic with NumPy scalars, float64 sines from the math module, and a
brute-force search for equal neighbours; the reproduce snippet against the app's numbers."""

from __future__ import annotations

import math
from dataclasses import replace
from unittest import mock

import numpy as np
import pytest
from angle_rounding import HALF_ULP, angle_rounding_tolerance
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import pe_core
from explorer import precision as pr
from explorer.reproduce import run_snippet
from explorer.settings import Settings

SMALL = Settings(d=16, n=10000.0, L=100)


# --- bfloat16 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (1.0, 1.0),
        (1 / 3, 0.333984375),  # 0x3EAAAAAB -> 0x3EAB
        (-1 / 3, -0.333984375),
        (65504.0, 65536.0),  # float16's largest needs 11 bits: rounds up to 2^16
        (256.0, 256.0),
        (257.0, 256.0),  # a tie, to the even 256
        (259.0, 260.0),  # a tie, to the even 260
        (1 + 2**-8, 1.0),  # tie between 1 and 1 + 2^-7: to the even mantissa
        (1 + 3 * 2**-8, 1 + 2**-6),  # tie between 1 + 2^-7 and 1 + 2^-6: to the even one
        (1 + 2**-8 + 2**-20, 1 + 2**-7),  # just above a tie: up
        (3.3895313892515355e38, 3.3895313892515355e38),  # the largest bfloat16
        (float(np.finfo(np.float32).max), math.inf),  # rounds past it
        (math.inf, math.inf),
        (-math.inf, -math.inf),
        (0.0, 0.0),
        (1e-45, 0.0),  # the smallest float32 subnormal rounds to zero
    ],
)
def test_bfloat16_known_values(x: float, expected: float) -> None:
    assert float(pr.bfloat16_round(np.float32(x))) == expected


def test_bfloat16_keeps_nan_and_sign_of_zero() -> None:
    out = pr.bfloat16_round(np.array([np.nan, -0.0], dtype=np.float32))
    assert np.isnan(out[0]) and out[1] == 0.0 and np.signbit(out[1])
    signalling = np.array([0x7F800001], dtype=np.uint32).view(np.float32)  # its payload must not round to inf
    assert np.isnan(pr.bfloat16_round(signalling)[0])


def bfloat16_by_frexp(x: np.ndarray) -> np.ndarray:
    """Independent rounding to 8 significant bits: x = m 2^e, m in [0.5, 1); rint is ties-to-even."""
    m, e = np.frexp(x.astype(np.float64))
    return np.ldexp(np.rint(m * 2**8), e - 8)


def test_bfloat16_matches_an_independent_rounding() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000),
        # exact ties: 9 significant bits whose last is 1
        np.ldexp(rng.integers(2**8, 2**9, 5_000) * 2 + 1, rng.integers(-40, 40, 5_000)) / 2**10,
    ]).astype(np.float32)
    np.testing.assert_array_equal(pr.bfloat16_round(x).astype(np.float64), bfloat16_by_frexp(x))


def test_round_to_each_format() -> None:
    x = np.array([1 / 3, 1e7 + 1, 70000.0])
    assert pr.round_to(x, "float32").tolist() == [np.float32(1 / 3), 1e7 + 1, 70000.0]
    assert pr.round_to(x, "float16").tolist()[:2] == [float(np.float16(1 / 3)), math.inf]
    assert pr.round_to(x, "bfloat16").tolist() == [0.333984375, 153 * 2.0**16, 137 * 2.0**9]
    with pytest.raises(ValueError, match="unknown dtype"):
        pr.round_to(x, "int8")


# --- the three methods against independent computations ---------------------------------


def test_cast_errors_against_math_sin() -> None:
    positions = np.array([1, 7, 1000, 123_456, 9_999_999])
    w = 10000.0 ** (-2 * np.arange(8) / 16)
    for dtype, to in [("float32", np.float32), ("float16", np.float16)]:
        s, c = pr.pair_values(positions, w, dtype, "cast")
        for row, k in enumerate(positions):
            for i, wi in enumerate(w):
                assert s[row, i] == float(to(math.sin(k * wi)))
                assert c[row, i] == float(to(math.cos(k * wi)))


def test_low_float32_is_float32_arithmetic() -> None:
    positions = np.array([3, 4097, 1_000_003, 9_999_991])
    w = 10000.0 ** (-2 * np.arange(8) / 16)
    s, c = pr.pair_values(positions, w, "float32", "low")
    for row, k in enumerate(positions):
        for i, wi in enumerate(w):
            theta = np.float32(k) * np.float32(wi)  # float32 x float32, rounded to float32
            assert s[row, i] == np.sin(np.array([theta]))[0] and c[row, i] == np.cos(np.array([theta]))[0]


def test_low_bfloat16_rounds_every_step() -> None:
    k, w = np.array([300]), np.array([0.7])
    kb, wb = bfloat16_by_frexp(np.array([300.0]))[0], bfloat16_by_frexp(np.array([0.7]))[0]
    assert kb == 300.0 and wb == 0.69921875
    theta = bfloat16_by_frexp(np.array([kb * wb]))[0]  # 209.765625 -> 210
    assert theta == 210.0
    s, c = pr.pair_values(k, w, "bfloat16", "low")
    assert s[0, 0] == bfloat16_by_frexp(np.sin(np.array([theta], dtype=np.float32)))[0]
    assert c[0, 0] == bfloat16_by_frexp(np.cos(np.array([theta], dtype=np.float32)))[0]


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
    # Casting is never worse than half a unit in the last place of the value.
    for dtype, half_ulp in [("float32", 2**-25), ("float16", 2**-12), ("bfloat16", 2**-9)]:
        assert result.max_error[pr.NAMES[(dtype, "cast")]].max() <= half_ulp


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
    ],
)
def test_first_equal_neighbours_matches_brute_force(dtype: str, method: str, window: int, expected: int | None) -> None:
    settings = replace(SMALL, L=window)
    limit = 3000
    assert brute_force_first_equal(settings, dtype, method, limit) == expected
    assert pr.neighbours(settings, dtype, method, limit=limit).first_equal == expected


def test_search_up_to_ten_million() -> None:
    found = {key: pr.neighbours(SMALL, *key) for key in [("float32", "low"), ("float16", "low"), ("float32", "cast")]}
    assert found[("float32", "low")].first_equal is None  # float32 holds every k up to 2^24 > 10^7
    assert found[("float32", "cast")].first_equal is None
    assert found[("float16", "low")].first_equal == 2048
    assert found[("float16", "low")].first_nonfinite == 65520  # 65520 is halfway to 65536: rounds to inf


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
    table = pr.summary_table(result, found)
    assert table.shape == (9, 5) and table.to_numpy().dtype == np.float64
    assert table.loc[pr.NAMES[("bfloat16", "low")], "first k: P[k] = P[k+1]"] == 256
    shown = pr.display_summary(table)
    assert shown.loc[pr.NAMES[("float32", "cast")], "first k: P[k] = P[k+1]"] == "none below 10⁷"
    formats = pr.formats_table()
    assert formats.loc["bfloat16", "every whole number up to"] == "256"
    assert formats.loc["float16", "spacing of its numbers near 10⁷"] == "cannot hold it"
    assert formats.loc["float32", "spacing of its numbers near 10⁷"] == "1"


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


def test_page_snippet_searches_to_ten_million() -> None:
    assert "limit=10000000" in pr.snippet(SMALL)


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
    assert (screened.stop, screened.first_nonfinite) == (every_pair.stop, every_pair.first_nonfinite)


@pytest.mark.parametrize(("dtype", "window"), [("bfloat16", 130), ("float16", 1100), ("float16", 2049)])
def test_relative_neighbours_above_the_screen_match_brute_force(dtype: str, window: int) -> None:
    settings = replace(SMALL, L=window)
    limit = 40_000
    expected = brute_force_first_equal(settings, dtype, "relative", limit)
    assert pr.neighbours(settings, dtype, "relative", limit=limit).first_equal == expected


def test_reference_rows_are_pe_core_rows() -> None:
    for settings in (SMALL, Settings(d=9, n=2.0, layout="concatenated", convention="tensor2tensor")):
        k = np.r_[pr.grid(), pr.grid() + 1]
        rows = [
            pe_core.positional_encoding(1, settings.d, settings.n, layout=settings.layout,
                                        convention=settings.convention, start=int(position))[0]
            for position in k
        ]
        np.testing.assert_array_equal(pr.reference(k, settings), np.array(rows))
