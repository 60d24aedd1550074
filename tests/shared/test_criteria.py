"""explorer.criteria against independent formulas: seed 000's loop, all-pairs distances,
and the textbook identity |P[k] - P[k+delta]|^2 = 4 sum_i sin^2(w_i delta / 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pe_core
from explorer import criteria
from explorer.settings import Settings
from explorer.topics import home


def seed000_loop(seq_len: int, d: int, n: float = 10000.0, start: int = 0) -> np.ndarray:
    """getPositionEncoding of seed 000, verbatim but for ``start`` (interleaved, paper; even d)."""
    P = np.zeros((seq_len, d))
    for row in range(seq_len):
        k = start + row
        for i in np.arange(int(d / 2)):
            denominator = np.power(n, 2 * i / d)
            P[row, 2 * i] = np.sin(k / denominator)
            P[row, 2 * i + 1] = np.cos(k / denominator)
    return P


def omega(d: int, n: float, convention: str) -> np.ndarray:
    m = (d + 1) // 2
    i = np.arange(m, dtype=np.float64)
    return n ** (-2 * i / d) if convention == "paper" else n ** (-i / max(m - 1, 1))


def all_pairs_min_distance(P: np.ndarray) -> tuple[float, int]:
    """Smallest distance between distinct rows from the full L x L distance matrix (tests only)."""
    diff = P[:, None, :] - P[None, :, :]
    distance = np.sqrt((diff**2).sum(-1))
    np.fill_diagonal(distance, np.inf)
    a, b = np.unravel_index(np.argmin(distance), distance.shape)
    return float(distance[a, b]), abs(int(a) - int(b))


def sse_identity(offsets: np.ndarray, d: int, n: float, convention: str) -> np.ndarray:
    return 4.0 * (np.sin(np.multiply.outer(offsets, omega(d, n, convention)) / 2) ** 2).sum(-1)


@pytest.mark.parametrize(("L", "d", "n"), [(4, 4, 100.0), (50, 128, 10000.0), (60, 2, 10000.0), (30, 8, 2.0)])
def test_unique_direct_matches_all_pairs_of_seed000(L: int, d: int, n: float) -> None:
    expected, offset = all_pairs_min_distance(seed000_loop(L, d, n))
    m = criteria.unique(L, d, n)
    assert m.value == pytest.approx(expected, rel=1e-12)
    assert f"{offset:,} apart" in m.reason and "every pair" in m.reason
    assert m.passed


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
@pytest.mark.parametrize("convention", ["paper", "tensor2tensor"])
def test_unique_closed_form_matches_all_pairs(layout: str, convention: str) -> None:
    L, d, n = 700, 10, 50.0
    assert L * L * d > criteria.DIRECT_PAIRS_CELLS  # the closed-form path
    P = criteria._encoding(L, d, n, layout, convention)
    expected, _ = all_pairs_min_distance(P)
    m = criteria.unique(L, d, n, layout, convention)
    assert m.value == pytest.approx(expected, rel=1e-9)
    assert "closed form" in m.reason


def test_unique_odd_d_compares_rows_directly() -> None:
    L, d, n = 40, 5, 100.0
    P = criteria._encoding(L, d, n, "interleaved", "paper")
    assert criteria.unique(L, d, n).value == pytest.approx(all_pairs_min_distance(P)[0], rel=1e-12)


def test_unique_at_the_largest_length_with_two_dimensions() -> None:
    # d=2: one pair at w=1, so the distance is 2|sin(delta/2)|; 710 = 2 * 355 with
    # 355/113 ~ pi is the offset that comes back closest to a full turn.
    offsets = np.arange(1, 16384)
    closest = 2 * np.abs(np.sin(offsets / 2))
    m = criteria.unique(16384, 2, 10000.0)
    assert m.value == pytest.approx(float(closest.min()), rel=1e-6)
    assert int(offsets[np.argmin(closest)]) == 710 and "710 apart" in m.reason
    assert m.passed and m.value < 1e-4


def test_unique_closed_form_at_large_d_matches_the_sine_identity() -> None:
    L, d, n = 4096, 2048, 1e8
    offsets = np.arange(1, L, dtype=np.float64)
    expected = math.sqrt(float(sse_identity(offsets, d, n, "paper").min()))
    assert criteria.unique(L, d, n).value == pytest.approx(expected, rel=1e-10)


def test_unique_single_position_has_nothing_to_compare() -> None:
    m = criteria.unique(1, 128, 10000.0)
    assert m.passed and math.isinf(m.value)


@pytest.mark.parametrize(("L", "d", "n", "convention"), [(100, 128, 1e4, "paper"), (16384, 64, 2.0, "tensor2tensor"),
                                                         (1, 4, 100.0, "paper")])
def test_consistent_distance_is_rounding_only(L: int, d: int, n: float, convention: str) -> None:
    m = criteria.consistent_distance(L, d, n, "concatenated", convention)
    step = math.sqrt(float(sse_identity(np.array([1.0]), d, n, convention)[0]))
    assert m.passed and 0 <= m.value <= 1e-11
    assert f"{step:.10g}" in m.reason


def test_bounded_is_one_and_matches_the_far_position() -> None:
    d, n = 64, 10000.0
    m = criteria.bounded(300, d, n)
    theta = [criteria.FAR_POSITION * w for w in omega(d, n, "paper")]
    far = max(max(abs(math.sin(t)), abs(math.cos(t))) for t in theta)
    assert m.value == 1.0 and m.passed  # cos(0) = 1 exactly
    assert f"{far:.6g} at position 10,000,000" in m.reason


def test_bounded_walks_every_position_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(criteria, "CHUNK_CELLS", 64)
    seen: list[tuple[int, int]] = []
    original = criteria._encoding

    def spy(length, d, n, layout, convention, start=0):
        seen.append((start, length))
        return original(length, d, n, layout, convention, start)

    monkeypatch.setattr(criteria, "_encoding", spy)
    criteria.bounded(100, 16, 100.0)
    inside = sorted(x for x in seen if x[0] < criteria.FAR_POSITION)
    assert [x[0] for x in inside] == list(range(0, 100, 4)) and sum(x[1] for x in inside) == 100


def test_deterministic_counts_no_difference() -> None:
    m = criteria.deterministic(1000, 128, 10000.0)
    assert m.value == 0.0 and m.passed


def test_evaluate_lists_seed000_order() -> None:
    result = home.evaluate(Settings(d=4, n=100.0, L=4))
    assert [m.key for m in result] == ["unique", "consistent", "bounded", "deterministic"]
    assert all(m.passed for m in result)
    assert all(m.reason.endswith(".") and "\n" not in m.reason for m in result)


# --- each measurement can fail: fed another encoding, it says so -------------------------


def test_a_random_table_fails_consistency_and_determinism(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    monkeypatch.setattr(criteria, "_encoding", lambda length, d, *a, **k: rng.uniform(-1, 1, (length, d)))
    assert not criteria.consistent_distance(50, 16, 100.0).passed
    m = criteria.deterministic(50, 16, 100.0)
    assert not m.passed and m.value > 0


def test_integer_positions_fail_boundedness(monkeypatch: pytest.MonkeyPatch) -> None:
    def integer_positions(length, d, n, layout, convention, start=0):
        return np.repeat((start + np.arange(length, dtype=np.float64))[:, None], d, axis=1)

    monkeypatch.setattr(criteria, "_encoding", integer_positions)
    m = criteria.bounded(50, 4, 100.0)
    assert not m.passed and m.value == criteria.FAR_POSITION


def test_a_periodic_code_fails_uniqueness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(criteria, "_encoding",
                        lambda length, d, *a, **k: np.tile(np.eye(d)[: min(d, 3)], (length, 1))[:length])
    m = criteria.unique(12, 4, 100.0)
    assert not m.passed and m.value == 0.0 and "3 apart" in m.reason


# --- the exact maximum |value| without the full matrix ----------------------------------


@settings(max_examples=150, deadline=None)
@given(
    d=st.integers(min_value=1, max_value=80),
    n=st.one_of(st.sampled_from([2.0, 100.0, 10000.0, 1e8]), st.floats(min_value=1.001, max_value=1e9)),
    convention=st.sampled_from(pe_core.CONVENTIONS),
    ranges=st.lists(
        st.tuples(st.integers(min_value=-3000, max_value=3000), st.integers(min_value=1, max_value=400)),
        min_size=1, max_size=3,
    ),
)
def test_sinusoid_largest_abs_is_the_maximum_of_the_matrix(d, n, convention, ranges) -> None:
    # Ranges with and without position 0, odd d (a lone sine), any base: the screened maximum
    # (or its fallback) is bit for bit the largest |value| of the matrices themselves.
    direct = max(
        float(np.abs(pe_core.positional_encoding(count, d, n, convention=convention, start=first)).max())
        for first, count in ranges
    )
    assert criteria.sinusoid_largest_abs(ranges, d, n, convention) == direct


def test_sinusoid_largest_abs_at_the_largest_settings_reads_the_whole_matrix() -> None:
    for n, convention in ((10000.0, "paper"), (2.0, "paper"), (1e8, "tensor2tensor")):
        direct = max(
            float(np.abs(pe_core.positional_encoding(2048, 2048, n, convention=convention, start=a)).max())
            for a in range(0, 16384, 2048)
        )
        assert criteria.sinusoid_largest_abs([(0, 16384)], 2048, n, convention) == direct == 1.0


def offsets_walk(P: np.ndarray) -> tuple[float, int]:
    """The closest pair by walking every offset, as _closest_pair_direct did before its screen."""
    best, best_offset = math.inf, 0
    for offset in range(1, P.shape[0]):
        diff = P[offset:] - P[:-offset]
        smallest = float(np.einsum("kj,kj->k", diff, diff).min())
        if smallest < best:
            best, best_offset = smallest, offset
    return math.sqrt(best), best_offset


def closest_pair_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    cases = []
    for rows in (3, 4, 17, 334, 700):
        for width in (1, 2, 17, 300):
            cases += [
                rng.standard_normal((rows, width)),
                np.round(rng.standard_normal((rows, width))),  # ties at many offsets
                rng.integers(0, 2, (rows, width)).astype(np.float64),  # binary codes' distances
                np.repeat(rng.standard_normal((rows, width)), 3, axis=0)[:rows],  # distance 0
                rng.standard_normal((rows, width)) * 1e-160,  # squares in the subnormals
                rng.standard_normal((rows, width)) * 1e150,  # too large to screen: walked
            ]
    for d in (17, 301):  # odd d: the distance by offset depends on k
        cases += [pe_core.positional_encoding(600, d),
                  pe_core.positional_encoding(600, d, 2.0, convention="tensor2tensor")]
    return cases


@pytest.mark.parametrize("P", closest_pair_cases(), ids=lambda P: f"{P.shape[0]}x{P.shape[1]}")
def test_closest_pair_screened_is_the_walk_over_every_offset(P) -> None:
    # Bit for bit the same distance and the same (first) offset as walking every offset.
    assert criteria._closest_pair_direct(P) == offsets_walk(P)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(3, 40), width=st.integers(1, 24), scale=st.sampled_from([1.0, 1e-3, 1e6]),
    seed=st.integers(0, 2**32 - 1), whole=st.booleans(),
)
def test_closest_pair_screened_ties_are_the_walks(rows, width, scale, seed, whole) -> None:
    values = np.random.default_rng(seed).standard_normal((rows, width)) * 3
    P = (np.round(values) if whole else values) * scale
    assert criteria._closest_pair_direct(P) == offsets_walk(P)


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.integers(-(10**6), 10**6).map(float), st.floats(-1e6, 1e6, allow_nan=False)),
        min_size=2, max_size=60,
    ),
    descending=st.booleans(),
)
def test_closest_pair_of_one_monotone_column_is_the_all_pairs_walk(values, descending) -> None:
    # Offset 1 alone, for sorted columns with ties too, gives what comparing every pair gives.
    column = np.sort(np.array(values))[:: -1 if descending else 1][:, None]
    best, best_offset = math.inf, 0
    for offset in range(1, column.shape[0]):
        smallest = float(((column[offset:] - column[:-offset]) ** 2).min())
        if smallest < best:
            best, best_offset = smallest, offset
    assert criteria._closest_pair_direct(column) == (math.sqrt(best), best_offset)
