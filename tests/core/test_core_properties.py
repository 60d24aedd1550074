"""Properties of the sinusoidal encoding that must hold for every d, n, L, start and delta.

Tolerances. pe_core keeps the angle k*w exact (Dekker's two-product, see
pe_core.encoding.sin_cos_outer), so every value of P, of M(delta) and of shift is within
about one ulp of the exact sin/cos, whatever the position: the identities between them
(shift == P @ M == the encoding of the shifted positions, M(a) M(b) == M(a+b), shifts
compose) hold to a few ulps of 1, ARITHMETIC below, at positions up to 3e11 too.
Measured: at most 2.5 ulps (2**-52) for every identity here.

Where a side rounds k*w once in float64, as the test's own reference angle or the textbook
closed form sum(cos(delta*w)) do, that side is off by up to half an ulp of the angle, 2**-53 * |k|
(9.1e-13 at k = 10**4): there the tolerance grows by 2**-52 per unit of the largest
|position| involved (position_tolerance).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pe_core

EPS = np.finfo(np.float64).eps  # 2**-52
#: Error of sin/cos of an exact angle and of a 2x2 rotation of values <= 1: a few ulps of 1.
ARITHMETIC = 8 * EPS

SETTINGS = settings(max_examples=200, deadline=None)

ds = st.integers(min_value=1, max_value=64)
even_ds = st.integers(min_value=1, max_value=32).map(lambda h: 2 * h)
bases = st.one_of(st.sampled_from([10000.0, 100.0, 1e6, 2.0]), st.floats(min_value=1.001, max_value=1e9))
lengths = st.integers(min_value=1, max_value=40)
#: Positions and offsets: small ones, and ones up to 3e11 (the API allows |position| <= 1e12;
#: start + delta + length stays inside it).
starts = st.one_of(st.integers(min_value=-(10**6), max_value=10**6), st.integers(-3 * 10**11, 3 * 10**11))
deltas = starts
layouts = st.sampled_from(pe_core.LAYOUTS)
conventions = st.sampled_from(pe_core.CONVENTIONS)


def position_tolerance(*positions: int) -> float:
    """For a side that rounds k*w once: 2**-52 per unit of the largest |position|, plus ARITHMETIC."""
    return EPS * max(abs(int(p)) for p in positions) + ARITHMETIC


def split_columns(P: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Sine and cosine columns of the complete pairs, written from the layout's definition."""
    d = P.shape[1]
    if layout == "interleaved":
        return P[:, 0 : d - 1 : 2], P[:, 1::2]
    m = (d + 1) // 2
    return P[:, : d // 2], P[:, m:]


@SETTINGS
@given(L=lengths, d=ds, n=bases, start=starts, layout=layouts, convention=conventions)
def test_values_are_bounded(L, d, n, start, layout, convention):
    P = pe_core.positional_encoding(L, d, n, layout=layout, convention=convention, start=start)
    assert P.shape == (L, d)
    assert np.all(np.isfinite(P))
    assert np.all(np.abs(P) <= 1.0)


@SETTINGS
@given(L=lengths, d=ds, n=bases, start=starts, layout=layouts, convention=conventions)
def test_each_pair_is_on_the_unit_circle(L, d, n, start, layout, convention):
    P = pe_core.positional_encoding(L, d, n, layout=layout, convention=convention, start=start)
    s, c = split_columns(P, layout)
    assert s.shape == c.shape == (L, d // 2)
    np.testing.assert_allclose(s**2 + c**2, 1.0, rtol=0, atol=4 * EPS)
    # and the pair's angle is k * w_i: atan2(sin, cos) == k w_i modulo 2 pi (this test's
    # k * w is rounded once: hence the tolerance growing with the position)
    w = pe_core.frequencies(d, n, convention)[: d // 2]
    k = np.arange(start, start + L)[:, None]
    gap = np.angle(np.exp(1j * (np.arctan2(s, c) - k * w)))
    assert np.abs(gap).max(initial=0) <= position_tolerance(start, start + L) + 1e-15


@SETTINGS
@given(L=lengths, d=even_ds, n=bases, start=starts, delta=deltas, layout=layouts, convention=conventions)
def test_dot_product_depends_only_on_the_offset(L, d, n, start, delta, layout, convention):
    P = pe_core.positional_encoding(L, d, n, layout=layout, convention=convention, start=start)
    Q = pe_core.positional_encoding(L, d, n, layout=layout, convention=convention, start=start + delta)
    dots = np.einsum("kj,kj->k", P, Q)  # P[k] . P[k + delta] for every k
    w = pe_core.frequencies(d, n, convention)
    closed = np.cos(delta * w).sum()
    f = pe_core.dot_by_offset(delta, d, n, convention)
    # P, Q and dot_by_offset's angles are all exact: a few ulps per term at any offset
    np.testing.assert_allclose(dots, f, rtol=0, atol=d * ARITHMETIC)
    np.testing.assert_allclose(
        pe_core.sse_by_offset(delta, d, n, convention), ((P - Q) ** 2).sum(axis=1), rtol=0, atol=2 * d * ARITHMETIC
    )
    # the textbook closed form rounds each of its d/2 angles delta*w once
    np.testing.assert_allclose(f, closed, rtol=0, atol=(d // 2) * position_tolerance(delta))


@SETTINGS
@given(L=lengths, d=ds, n=bases, start=starts, ref=st.integers(min_value=0, max_value=39), convention=conventions)
def test_similarity_curves_do_not_depend_on_the_layout(L, d, n, start, ref, convention):
    assume(ref < L)
    inter = pe_core.positional_encoding(L, d, n, convention=convention, start=start)
    concat = pe_core.positional_encoding(L, d, n, layout="concatenated", convention=convention, start=start)
    # the same numbers summed in another order: each sum's rounding is bounded by d eps times
    # the sum of its terms' magnitudes (about d/2 for a row against itself, not 1)
    magnitude = max(1.0, float(np.abs(inter * inter[ref]).sum(axis=1).max()))
    np.testing.assert_allclose(
        pe_core.dot_similarity(inter, ref), pe_core.dot_similarity(concat, ref), rtol=0, atol=d * EPS * magnitude
    )
    spread = max(1.0, float(((inter - inter[ref]) ** 2).sum(axis=1).max()))
    np.testing.assert_allclose(pe_core.sse(inter, ref), pe_core.sse(concat, ref), rtol=0, atol=4 * d * EPS * spread)
    np.testing.assert_allclose(
        pe_core.cosine_similarity(inter, ref), pe_core.cosine_similarity(concat, ref), rtol=0, atol=d * EPS
    )


@SETTINGS
@given(d=even_ds, n=bases, delta=deltas, layout=layouts, convention=conventions)
def test_transition_matrix_is_orthogonal_and_transposes_to_its_inverse(d, n, delta, layout, convention):
    M = pe_core.transition_matrix(delta, d, n, layout=layout, convention=convention)
    assert M.shape == (d, d)
    np.testing.assert_allclose(M @ M.T, np.eye(d), rtol=0, atol=4 * EPS)
    np.testing.assert_allclose(M.T @ M, np.eye(d), rtol=0, atol=4 * EPS)
    # M(-delta) = M(delta)^T: cos is even and sin odd, exactly in floating point too
    np.testing.assert_array_equal(pe_core.transition_matrix(-delta, d, n, layout=layout, convention=convention), M.T)
    # two nonzeros per row and column, on the pair's sine and cosine
    assert np.all(np.count_nonzero(M, axis=0) <= 2)
    assert np.all(np.count_nonzero(M, axis=1) <= 2)
    np.testing.assert_array_equal(pe_core.transition_matrix(0, d, n, layout=layout, convention=convention), np.eye(d))


@SETTINGS
@given(d=even_ds, n=bases, a=deltas, b=deltas, layout=layouts, convention=conventions)
def test_transition_matrices_compose(d, n, a, b, layout, convention):
    kw = {"layout": layout, "convention": convention}
    product = pe_core.transition_matrix(a, d, n, **kw) @ pe_core.transition_matrix(b, d, n, **kw)
    # exact angles: a few ulps at any offset
    np.testing.assert_allclose(product, pe_core.transition_matrix(a + b, d, n, **kw), rtol=0, atol=ARITHMETIC)


@SETTINGS
@given(
    L=lengths,
    d=even_ds,
    n=bases,
    start=starts,
    delta=deltas,
    layout=layouts,
    convention=conventions,
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_shift_is_the_dense_product(L, d, n, start, delta, layout, convention, seed):
    kw = {"layout": layout, "convention": convention}
    M = pe_core.transition_matrix(delta, d, n, **kw)
    P = pe_core.positional_encoding(L, d, n, start=start, **kw)
    # Same P, same cos/sin: only the 2-term rotation's rounding differs, whatever the position.
    np.testing.assert_allclose(pe_core.shift(P, delta, n, **kw), P @ M, rtol=0, atol=ARITHMETIC)
    # Also for any matrix, not only an encoding, and for one row.
    X = np.random.default_rng(seed).normal(scale=3.0, size=(L, d))
    scale = np.abs(X).max()
    np.testing.assert_allclose(pe_core.shift(X, delta, n, **kw), X @ M, rtol=0, atol=ARITHMETIC * scale)
    np.testing.assert_allclose(pe_core.shift(X[0], delta, n, **kw), X[0] @ M, rtol=0, atol=ARITHMETIC * scale)
    assert pe_core.shift(X[0], delta, n, **kw).shape == (d,)


@SETTINGS
@given(L=lengths, d=even_ds, n=bases, start=starts, delta=deltas, layout=layouts, convention=conventions)
def test_shift_equals_the_encoding_of_the_shifted_positions(L, d, n, start, delta, layout, convention):
    kw = {"layout": layout, "convention": convention}
    P = pe_core.positional_encoding(L, d, n, start=start, **kw)
    expected = pe_core.positional_encoding(L, d, n, start=start + delta, **kw)
    # exact angles on both sides: a few ulps at any position (measured <= 2 ulps up to 1e12)
    np.testing.assert_allclose(pe_core.shift(P, delta, n, **kw), expected, rtol=0, atol=ARITHMETIC)
    np.testing.assert_allclose(P @ pe_core.transition_matrix(delta, d, n, **kw), expected, rtol=0, atol=ARITHMETIC)


@SETTINGS
@given(L=lengths, d=even_ds, n=bases, start=starts, a=deltas, b=deltas, layout=layouts)
def test_shifts_compose(L, d, n, start, a, b, layout):
    P = pe_core.positional_encoding(L, d, n, layout=layout, start=start)
    twice = pe_core.shift(pe_core.shift(P, a, n, layout=layout), b, n, layout=layout)
    once = pe_core.shift(P, a + b, n, layout=layout)
    np.testing.assert_allclose(twice, once, rtol=0, atol=ARITHMETIC)


@SETTINGS
@given(L=lengths, d=even_ds, n=bases, delta=deltas, layout=layouts, seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_shift_into_out_and_in_place_equal_a_new_array(L, d, n, delta, layout, seed):
    X = np.random.default_rng(seed).normal(size=(L, d))
    expected = pe_core.shift(X, delta, n, layout=layout)
    buffer = np.full_like(X, np.nan)
    assert pe_core.shift(X, delta, n, layout=layout, out=buffer) is buffer
    np.testing.assert_array_equal(buffer, expected)
    assert pe_core.shift(X, delta, n, layout=layout, out=X) is X
    np.testing.assert_array_equal(X, expected)


@SETTINGS
@given(size=st.integers(min_value=1, max_value=5000), max_blocks=st.integers(min_value=1, max_value=1000))
def test_block_edges_cover_in_nearly_equal_blocks(size, max_blocks):
    edges = pe_core.block_edges(size, max_blocks)
    sizes = np.diff(edges)
    assert edges[0] == 0
    assert edges[-1] == size
    assert sizes.size == min(size, max_blocks)
    assert sizes.min() >= 1
    assert sizes.max() - sizes.min() <= 1


# --------------------------------------------------------------------------------------
# The PRODUCT.md budget: shift agrees with positional_encoding to 1e-12 below 10**4.
# --------------------------------------------------------------------------------------

BUDGET_DELTAS = [1, -1, 5000, -4321]
#: The two code paths of shift (complex view; gather/scatter), with the two seed presets' conventions.
BUDGET_VARIANTS = [("interleaved", "paper"), ("concatenated", "tensor2tensor")]


def _worst_shift_error(P: np.ndarray, layout: str, convention: str) -> float:
    L = P.shape[0]
    worst = 0.0
    for delta in BUDGET_DELTAS:
        kw = {"layout": layout, "convention": convention}
        if delta > 0:
            error = np.abs(pe_core.shift(P[: L - delta], delta, **kw) - P[delta:]).max()
        else:
            error = np.abs(pe_core.shift(P[-delta:], delta, **kw) - P[: L + delta]).max()
        worst = max(worst, float(error))
    return worst


@pytest.fixture(scope="module")
def budget_errors() -> dict[tuple[str, str], float]:
    """Worst |shift(P[k], delta) - P[k+delta]| over positions 0..9999 at d=2048."""
    errors = {}
    for layout, convention in BUDGET_VARIANTS:
        P = pe_core.positional_encoding(10_000, 2048, layout=layout, convention=convention)
        errors[layout, convention] = _worst_shift_error(P, layout, convention)
    return errors


def test_shift_matches_direct_encoding_below_10_000(budget_errors):
    # With angles rounded once this was 1.8e-12 (two half-ulps of 9999); pe_core keeps each
    # angle exact, so it is a few ulps (measured: 3.3e-16).
    for key, error in budget_errors.items():
        assert error <= ARITHMETIC, (key, error)


def test_shift_budget_1e_12_below_10_000(budget_errors):
    for key, error in budget_errors.items():
        assert error <= 1e-12, (key, error)


@SETTINGS
@given(d=ds, n=bases, convention=conventions, start=starts, length=lengths)
def test_sin_cos_of_products_is_the_encoding_cell_by_cell(d, n, convention, start, length):
    # The cells a page computes alone (candidates of a maximum) are bit for bit the matrix's.
    w = pe_core.frequencies(d, n, convention)
    k = start + np.arange(length, dtype=np.float64)
    rows, pairs = np.meshgrid(np.arange(length), np.arange(w.size), indexing="ij")
    sin, cos = pe_core.sin_cos_of_products(k[rows.ravel()], w[pairs.ravel()])
    outer_sin, outer_cos = pe_core.sin_cos_outer(k, w)
    np.testing.assert_array_equal(sin, outer_sin.ravel())
    np.testing.assert_array_equal(cos, outer_cos.ravel())


def _sin_cos_as_one_expression(k: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin_cos_outer's docstring formula in whole-array expressions: Veltkamp's split, Dekker's
    two-product p + e, and sin(p + e), cos(p + e) to the e^3 term."""
    def split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = 134217729.0 * a
        high = c - (c - a)
        return high, a - high

    k_hi, k_lo = split(k)
    w_hi, w_lo = split(w)
    p = k * w
    e = ((k_hi * w_hi - p) + k_hi * w_lo + k_lo * w_hi) + k_lo * w_lo
    sin_p, cos_p = np.sin(p), np.cos(p)
    return sin_p * (1.0 - 0.5 * e * e) + cos_p * (e - e * e * e / 6.0), \
        cos_p * (1.0 - 0.5 * e * e) - sin_p * (e - e * e * e / 6.0)


@settings(max_examples=80, deadline=None)
@given(
    k_shape=st.sampled_from([(), (1,), (37,), (3, 1), (300, 1), (2_000,), (2, 1, 1)]),
    w_shape=st.sampled_from([(), (1,), (37,), (1, 90), (1, 700), (1, 1, 7)]),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1.0, 1e4, 1e7]),
    block_cells=st.sampled_from([1, 5, 64, pe_core.encoding._SIN_COS_BLOCK_CELLS]),
)
def test_sin_cos_of_products_computed_by_blocks_is_the_formula_for_any_broadcast(
    k_shape, w_shape, seed, scale, block_cells
):
    # Blocks of the first axis (whole, partial and one-row blocks, rows longer than a block, scalars):
    # every value bit for bit the formula's, in the broadcast shape. Small blocks give small inputs
    # many blocks; the module's own size is drawn too, and (300, 1) x (1, 700) spans several of it.
    try:
        shape = np.broadcast_shapes(k_shape, w_shape)
    except ValueError:
        assume(False)
    rng = np.random.default_rng(seed)
    k = np.rint(rng.uniform(-scale, scale, size=k_shape))
    w = rng.uniform(1e-8, 1.0, size=w_shape)
    with mock.patch.object(pe_core.encoding, "_SIN_COS_BLOCK_CELLS", block_cells):
        sin, cos = pe_core.sin_cos_of_products(k, w)
    expected_sin, expected_cos = _sin_cos_as_one_expression(k, w)
    assert np.shape(sin) == np.shape(cos) == shape
    np.testing.assert_array_equal(sin, expected_sin)
    np.testing.assert_array_equal(cos, expected_cos)
