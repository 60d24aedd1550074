"""pe_core.rope.scores and the rotary display reductions against references written here.

The references re-type the sources in NumPy, not by calling pe_core: RoFormer's block-diagonal
rotation matrix R_m (eq. 13-16), Hugging Face's ``rotate_half`` with ``cat(freqs, freqs)``,
GPT-J's ``rotate_every_two`` with ``repeat_interleave``, and RoFormer's S_j of section 3.4.3 as a
plain loop over Python complex numbers. Frequencies come from ``pe_core.rope_frequencies``
(tested against the papers and transformers in tests/core/test_rope*.py).

Tolerances: the references round each angle t*theta once (half an ulp of the angle), pe_core
keeps it exact; with offsets below 3000 and d <= 64 that is below 1e-11 on scores of size d.
"""

from __future__ import annotations

import cmath
import math
from itertools import pairwise

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.independent import rotate_every_two, rotate_half

import pe_core
from pe_core import RopeScaling

SETTINGS = settings(max_examples=30, deadline=None)
RNG = np.random.default_rng(1234)
SCALINGS = [
    None,
    RopeScaling("linear", 4.0),
    RopeScaling("ntk", 8.0),
    RopeScaling("dynamic", 2.0, 64),
    RopeScaling("yarn", 4.0, 64),
    RopeScaling("llama3", 8.0, 128),
]


def theta(d: int, base: float, scaling: RopeScaling | None = None, length: int | None = None) -> np.ndarray:
    return pe_core.rope_frequencies(d, base, scaling=scaling, length=length)


def roformer_matrix(m: float, th: np.ndarray) -> np.ndarray:
    """RoFormer eq. 15: the block-diagonal R_m, blocks [[cos, -sin], [sin, cos]] on pairs (2i, 2i+1)."""
    d = 2 * th.size
    R = np.zeros((d, d))
    for i, t in enumerate(th):
        c, s = math.cos(m * t), math.sin(m * t)
        R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    return R


def to_interleaved(x: np.ndarray) -> np.ndarray:
    """A half-layout vector's coordinates in the interleaved order (pair i at 2i, 2i + 1)."""
    d = x.size
    out = np.empty(d)
    out[0::2], out[1::2] = x[: d // 2], x[d // 2 :]
    return out


def apply(x: np.ndarray, positions: np.ndarray, th: np.ndarray, cache: str, rotation: str) -> np.ndarray:
    """x * cos + rot(x) * sin, the cache built as transformers (cat) or GPT-J (repeat_interleave) builds it."""
    freqs = np.outer(positions, th)
    emb = np.concatenate([freqs, freqs], axis=-1) if cache == "half" else np.repeat(freqs, 2, axis=-1)
    rot = rotate_half if rotation == "half" else rotate_every_two
    return x * np.cos(emb) + rot(x) * np.sin(emb)


# ------------------------------------------------------------------------- rope_score_by_offset


@pytest.mark.parametrize("scaling", SCALINGS, ids=lambda s: "none" if s is None else s.method)
def test_score_by_offset_is_roformers_q_rm_rn_k(scaling: RopeScaling | None) -> None:
    d, base, L = 16, 100.0, 40
    th = theta(d, base, scaling, L)
    q, k = RNG.standard_normal(d), RNG.standard_normal(d)
    m, n = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
    got = pe_core.rope_score_by_offset(m - n, q, k, base, layout="interleaved", scaling=scaling, length=L)
    expected = np.array([[q @ roformer_matrix(a, th).T @ roformer_matrix(b, th) @ k for b in range(L)]
                         for a in range(L)])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("layout", pe_core.ROPE_LAYOUTS)
def test_score_by_offset_is_the_dot_product_of_rotate_half_or_rotate_every_two(layout: str) -> None:
    d, base = 32, 10000.0
    th = theta(d, base)
    q, k = RNG.standard_normal(d), RNG.standard_normal(d)
    positions = np.array([0, 1, 7, 100, 2999])
    Q = apply(np.tile(q, (5, 1)), positions, th, layout, layout)
    K = apply(np.tile(k, (5, 1)), positions, th, layout, layout)
    offsets = np.subtract.outer(positions, positions)
    got = pe_core.rope_score_by_offset(offsets, q, k, base, layout=layout)
    np.testing.assert_allclose(got, Q @ K.T, rtol=0, atol=1e-11)


def test_all_ones_score_is_the_sum_of_2_cos() -> None:
    d, base = 64, 500000.0
    t = np.arange(-3000, 3001)
    expected = np.array([sum(2 * math.cos(x * w) for w in theta(d, base)) for x in t])
    got = pe_core.rope_score_by_offset(t, np.ones(d), np.ones(d), base)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-11)


@pytest.mark.parametrize("start", [10**6, 3 * 10**9, -(10**11), 10**12 - 400])
def test_far_offsets_keep_every_angle_exact(start: int) -> None:
    """Offsets up to 10**12: the closed forms against 40-digit sums of the float64 frequencies."""
    d = 16
    th = theta(d, 10000.0)
    t = np.arange(start, start + 400)
    got = pe_core.rope_score_by_offset(t, np.ones(d), np.ones(d))
    bound = pe_core.rope_decay_bound(t, d)
    with mpmath.workdps(40):
        for index in (0, 63, 64, 199, 399):
            terms = [mpmath.expj(mpmath.mpf(int(t[index])) * mpmath.mpf(float(w))) for w in th]
            assert abs(got[index] - float(2 * sum(term.real for term in terms))) < 1e-12
            partial, total = mpmath.mpc(0), mpmath.mpf(0)
            for term in terms:
                partial += term
                total += abs(partial)
            assert abs(bound[index] - float(total / th.size)) < 1e-12


@SETTINGS
@given(d=st.integers(1, 24).map(lambda h: 2 * h), seed=st.integers(0, 2**32 - 1),
       shift=st.integers(-5000, 5000))
def test_the_two_layouts_give_the_same_scores_when_q_and_k_are_permuted_alike(d: int, seed: int, shift: int) -> None:
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    t = np.arange(shift - 70, shift + 70)
    half = pe_core.rope_score_by_offset(t, q, k, 1000.0, layout="half")
    interleaved = pe_core.rope_score_by_offset(t, to_interleaved(q), to_interleaved(k), 1000.0, layout="interleaved")
    np.testing.assert_allclose(half, interleaved, rtol=0, atol=1e-12 * d)


# ------------------------------------------------------------------------- mixing the layouts


@pytest.mark.parametrize(("cache", "rotation"), [("half", "interleaved"), ("interleaved", "half"),
                                                 ("half", "half"), ("interleaved", "interleaved")])
@pytest.mark.parametrize("scaling", [None, RopeScaling("yarn", 4.0, 32)], ids=["none", "yarn"])
def test_mixed_scores_are_u_of_m_minus_n_plus_v_of_m_plus_n(cache: str, rotation: str,
                                                             scaling: RopeScaling | None) -> None:
    d, base, L = 12, 50.0, 30
    th = theta(d, base, scaling, L)
    q, k = RNG.standard_normal(d), RNG.standard_normal(d)
    positions = np.arange(L)
    S = apply(np.tile(q, (L, 1)), positions, th, cache, rotation) @ apply(np.tile(k, (L, 1)), positions, th,
                                                                            cache, rotation).T
    m, n = np.meshgrid(positions, positions, indexing="ij")
    U, V = pe_core.rope_mixed_scores(m - n, m + n, q, k, base, cache_layout=cache, rotation_layout=rotation,
                                     scaling=scaling, length=L)
    np.testing.assert_allclose(U + V, S, rtol=0, atol=1e-12)
    if cache == rotation:
        assert not V.any(), "a matched layout has no m + n term"
        np.testing.assert_array_equal(U, pe_core.rope_score_by_offset(m - n, q, k, base, layout=cache,
                                                                      scaling=scaling, length=L))
    else:
        assert np.abs(V).max() > 0.1, "mixed layouts depend on m + n"


@pytest.mark.parametrize(("cache", "rotation"), [("half", "interleaved"), ("interleaved", "half")])
def test_apply_cache_is_the_code_that_mixes_the_layouts_and_changes_norms(cache: str, rotation: str) -> None:
    d, base = 16, 10000.0
    x = RNG.standard_normal((3, 5, d))
    positions = np.array([0, 3, 10, 257, 4000])
    got = pe_core.rope_apply_cache(x, positions, base, cache_layout=cache, rotation_layout=rotation)
    np.testing.assert_allclose(got, apply(x, positions, theta(d, base), cache, rotation), rtol=0, atol=1e-12)
    norms = np.linalg.norm(got, axis=-1) / np.linalg.norm(x, axis=-1)
    np.testing.assert_allclose(norms[:, 0], 1.0, rtol=0, atol=1e-15)  # position 0: cos 1, sin 0
    assert np.abs(norms[:, 1:] - 1).max() > 1e-3, "a mixed cache keeps no norm"


@pytest.mark.parametrize("layout", pe_core.ROPE_LAYOUTS)
def test_apply_cache_with_one_layout_is_rotate(layout: str) -> None:
    x = RNG.standard_normal((7, 8))
    positions = np.array([0, 1, 2, 50, 51, 999, 3])
    scaling = RopeScaling("longrope", 16.0, 4, short_factor=(1.0, 2.0, 3.0, 4.0), long_factor=(5.0, 6.0, 7.0, 8.0))
    np.testing.assert_array_equal(
        pe_core.rope_apply_cache(x, positions, 99.0, cache_layout=layout, rotation_layout=layout, scaling=scaling),
        pe_core.rotate(x, positions, 99.0, layout=layout, scaling=scaling),
    )


# ------------------------------------------------------------------------- RoFormer's decay bound


def roformer_bound(t: int, th: np.ndarray) -> float:
    """(1/(d/2)) sum_{j=1}^{d/2} |S_j|, S_j = sum_{k<j} e^{i t theta_k}: RoFormer 3.4.3 as a loop."""
    total, partial = 0.0, 0j
    for w in th:
        partial += cmath.exp(1j * t * w)
        total += abs(partial)
    return total / th.size


@pytest.mark.parametrize("scaling", SCALINGS, ids=lambda s: "none" if s is None else s.method)
def test_decay_bound_is_roformers_mean_of_the_partial_sums(scaling: RopeScaling | None) -> None:
    d, base, L = 32, 10000.0, 300
    th = theta(d, base, scaling, L)
    t = np.arange(L)
    expected = np.array([roformer_bound(x, th) for x in t])
    np.testing.assert_allclose(pe_core.rope_decay_bound(t, d, base, scaling=scaling, length=L), expected,
                               rtol=0, atol=1e-12)


def test_decay_bound_at_0_is_half_of_d_over_2_plus_1_and_it_decays() -> None:
    d = 128
    bound = pe_core.rope_decay_bound(np.arange(2000), d)
    assert bound[0] == (d // 2 + 1) / 2
    assert bound[1000:].max() < 0.5 * bound[0], "RoFormer's Figure 2: the bound falls with the distance"


def test_decay_bound_is_the_same_for_isolated_distances_and_ranges() -> None:
    """Scattered distances (one per block of 64) take another path than ranges: the same numbers."""
    # Mostly one distance per block of 64, and one block holding 60 of them.
    scattered = np.r_[5, -5, 700, 64 * 97 + 3, 12345, 0, 3, 99999, np.full(60, 64 * 5 + 3), np.arange(0, 64 * 300, 64)]
    d = 2048
    whole = pe_core.rope_decay_bound(scattered, d, 500.0)
    one_by_one = np.array([pe_core.rope_decay_bound(np.arange(x, x + 2), d, 500.0)[0] for x in scattered])
    np.testing.assert_allclose(whole, one_by_one, rtol=0, atol=1e-12)
    np.testing.assert_allclose(whole[0], whole[1], rtol=0, atol=1e-12)  # even in the distance


@SETTINGS
@given(d=st.integers(1, 24).map(lambda h: 2 * h), seed=st.integers(0, 2**32 - 1), t=st.integers(-10**6, 10**6))
def test_the_score_never_exceeds_roformers_bound(d: int, seed: int, t: int) -> None:
    """|sum_i h_i e^{i t theta_i}| <= max_i |h_{i+1} - h_i| sum_j |S_j| (eq. 37), h_{d/2} = 0."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    h = (q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2])
    steps = np.abs(np.diff(np.r_[h, 0.0]))
    bound = steps.max() * (d // 2) * pe_core.rope_decay_bound([t], d, 1000.0)[0]
    score = pe_core.rope_score_by_offset([t], q, k, 1000.0, layout="interleaved")[0]
    assert abs(score) <= bound * (1 + 1e-12) + 1e-12


# ------------------------------------------------------------------------- display reductions


def block_means(matrix: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return np.array([[matrix[a:b, c:e].mean() for c, e in pairwise(cols)] for a, b in pairwise(rows)])


@pytest.mark.parametrize(("L", "blocks"), [(1, 1), (7, 7), (50, 7), (301, 16)])
@pytest.mark.parametrize(("cache", "rotation"), [("half", "half"), ("interleaved", "interleaved"),
                                                 ("half", "interleaved"), ("interleaved", "half")])
def test_rotated_block_means_give_the_block_means_of_the_score_matrix(L: int, blocks: int, cache: str,
                                                                      rotation: str) -> None:
    d, base = 10, 30.0
    scaling = RopeScaling("dynamic", 3.0, 20)
    th = theta(d, base, scaling, L)
    q, k = RNG.standard_normal(d), RNG.standard_normal(d)
    positions = np.arange(L)
    Q = apply(np.tile(q, (L, 1)), positions, th, cache, rotation)
    K = apply(np.tile(k, (L, 1)), positions, th, cache, rotation)
    edges = pe_core.block_edges(L, blocks)
    q_means = pe_core.rope_rotated_block_average(q, L, edges, base, cache_layout=cache, rotation_layout=rotation,
                                                 scaling=scaling)
    np.testing.assert_allclose(q_means, np.array([Q[a:b].mean(axis=0) for a, b in pairwise(edges)]), rtol=0,
                               atol=1e-13)
    k_means = pe_core.rope_rotated_block_average(k, L, edges, base, cache_layout=cache, rotation_layout=rotation,
                                                 scaling=scaling)
    np.testing.assert_allclose(q_means @ k_means.T, block_means(Q @ K.T, edges, edges), rtol=0, atol=1e-12)
    both = pe_core.rope_rotated_block_average(np.stack([q, k]), L, edges, base, cache_layout=cache,
                                              rotation_layout=rotation, scaling=scaling)
    np.testing.assert_array_equal(both, [q_means, k_means])


@pytest.mark.parametrize("layout", pe_core.ROPE_LAYOUTS)
@pytest.mark.parametrize("scaling", [None, RopeScaling("yarn", 8.0, 100)], ids=["none", "yarn"])
@pytest.mark.parametrize("table", ["cos", "sin"])
def test_rope_cache_block_average_is_the_mean_of_each_block_of_the_table(
    layout: str, scaling: RopeScaling | None, table: str
) -> None:
    L, d, base = 500, 32, 1000.0
    th = theta(d, base, scaling, L)
    freqs = np.outer(np.arange(L), th)
    emb = np.concatenate([freqs, freqs], axis=1) if layout == "half" else np.repeat(freqs, 2, axis=1)
    full = pe_core.rope_attention_factor(scaling, L) * (np.cos(emb) if table == "cos" else np.sin(emb))
    values, rows, cols = pe_core.rope_cache_block_average(L, d, base, layout=layout, scaling=scaling, table=table,
                                                          max_rows=37, max_cols=8)
    assert values.shape == (37, 8)
    np.testing.assert_allclose(values, block_means(full, rows, cols), rtol=0, atol=1e-12)
    whole, _, _ = pe_core.rope_cache_block_average(L, d, base, layout=layout, scaling=scaling, table=table,
                                                   max_rows=L, max_cols=d)
    np.testing.assert_allclose(whole, full, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(("call", "message"), [
    (lambda: pe_core.rope_score_by_offset([0.5], np.ones(4), np.ones(4)), "whole numbers"),
    (lambda: pe_core.rope_score_by_offset([np.nan], np.ones(4), np.ones(4)), "NaN"),
    (lambda: pe_core.rope_score_by_offset([10**13], np.ones(4), np.ones(4)), "within"),
    (lambda: pe_core.rope_score_by_offset([0], np.ones(4), np.ones(6)), "same length"),
    (lambda: pe_core.rope_score_by_offset([0], np.ones(5), np.ones(5)), "even"),
    (lambda: pe_core.rope_score_by_offset([0], np.ones(4), np.ones(4), layout="diagonal"), "layout"),
    (lambda: pe_core.rope_score_by_offset([0], np.ones((2, 4)), np.ones(4)), "1-D"),
    (lambda: pe_core.rope_score_by_offset([0], [1.0, "a"], np.ones(2)), "real numbers"),
    (lambda: pe_core.rope_mixed_scores([0], [0.5], np.ones(4), np.ones(4)), "sums must be whole numbers"),
    (lambda: pe_core.rope_mixed_scores([0], [0], np.ones(4), np.ones(4), cache_layout="x"), "cache_layout"),
    (lambda: pe_core.rope_decay_bound([], 4), "empty"),
    (lambda: pe_core.rope_decay_bound(np.arange(2**16), 2048), "partial sums"),
    (lambda: pe_core.rope_decay_bound([1], 3), "even"),
    (lambda: pe_core.rope_decay_bound([1], 4, 1.0), "greater than 1"),
    (lambda: pe_core.rope_apply_cache(np.ones(4), [0], 100.0), "(..., L, d)"),
    (lambda: pe_core.rope_apply_cache(np.ones((2, 4)), [0], 100.0), "rows"),
    (lambda: pe_core.rope_rotated_block_average(np.ones(4), 3, [0, 2]), "rise strictly from 0 to length=3"),
    (lambda: pe_core.rope_rotated_block_average(1.0, 3, [0, 3]), "1-D"),
    (lambda: pe_core.rope_rotated_block_average(np.ones(4), 3, [0, 3], rotation_layout="x"), "rotation_layout"),
    (lambda: pe_core.rope_cache_block_average(0, 4), "at least 1"),
    (lambda: pe_core.rope_cache_block_average(4, 4, table="tan"), "table"),
])
def test_bad_arguments_raise_a_message_a_person_can_act_on(call, message: str) -> None:
    with pytest.raises(ValueError, match=None) as raised:
        call()
    assert message in str(raised.value), str(raised.value)


@SETTINGS
@given(low=st.integers(-5000, 5000), span=st.integers(2, 3000), first=st.integers(0, 2999), count=st.integers(2, 600),
       pairs=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_the_turns_of_a_run_of_steps_are_those_of_the_same_steps_one_by_one(low, span, first, count, pairs, seed):
    """The scores' and the decay's sines and cosines of qB r: a run of consecutive q (computed by
    broadcasting the tables' rows) bit for bit as the same q taken one by one (gathered from them)."""
    first, count = first % span, min(count, span - first % span)
    if count < 2:
        count, first = 2, max(0, span - 2)
    q = low + np.arange(span, dtype=np.float64)
    rates = np.random.default_rng(seed).uniform(1e-6, 1.0, pairs)
    turns = pe_core.rope.scores._turns_of_steps(q, rates)
    run = q[first : first + count]
    sin_run, cos_run = turns(run)
    order = np.random.default_rng(seed).permutation(count)
    if np.all(np.diff(order) == 1):
        order = order[::-1]  # not a run: the gathering path
    sin_one, cos_one = turns(run[order])
    np.testing.assert_array_equal(sin_run[order], sin_one)
    np.testing.assert_array_equal(cos_run[order], cos_one)
    assert sin_run.shape == cos_run.shape == (count, pairs)


def test_block_means_asked_again_are_shared_and_other_inputs_are_not_served_them() -> None:
    """The Rotary page's four closed-form block means of one run (scores, mixing error, both cos tables)
    are computed once; other blocks, frequencies or positions get their own, equal to a fresh computation."""
    display = pe_core.display
    display._block_means_of.cache_clear()
    L, d, edges = 3000, 64, pe_core.block_edges(3000, 40)
    theta = pe_core.rope_frequencies(d, 500.0)
    x = np.random.default_rng(1).standard_normal((2, d))
    pe_core.rope_rotated_block_average(x, L, edges, 500.0)
    pe_core.rope_rotated_block_average(x, L, edges, 500.0, rotation_layout="interleaved")
    for layout in pe_core.ROPE_LAYOUTS:
        pe_core.rope_cache_block_average(L, d, 500.0, layout=layout, max_rows=40)
    assert display._block_means_of.cache_info().misses == 1
    sin, cos = display._block_means(np.arange(L, dtype=np.float64), edges, theta)
    with pytest.raises(ValueError, match="read-only"):
        sin[0, 0] = 0.0
    for k, other_edges, w in ((np.arange(L) + 7, edges, theta), (np.arange(L), pe_core.block_edges(L, 41), theta),
                              (np.arange(L), edges, pe_core.rope_frequencies(d, 501.0))):
        got = display._block_means(k, other_edges, w)
        display._block_means_of.cache_clear()
        fresh = display._block_means(k, other_edges, w)
        np.testing.assert_array_equal(got[0], fresh[0])
        np.testing.assert_array_equal(got[1], fresh[1])
        assert not np.array_equal(got[1], cos)
