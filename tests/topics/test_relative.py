"""Unit tests of explorer.topics.relative (the Relative positions page's analysis and figures).

Every expected value is computed here from the formulas themselves (seed 001's own code
where it exists), not from pe_core, so that a shared mistake cannot hide.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from support.angle_rounding import angle_rounding_tolerance
from support.independent import encoding, rates
from support.seed_code import seed001_transition_matrix

import pe_core
from explorer import figures
from explorer.topics import relative

MB = 1_000_000

# ----------------------------------------------------------------- transition matrix


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
@pytest.mark.parametrize("start", [0, 3, 7])
def test_transition_window_is_a_window_of_the_transition_matrix(layout, start):
    d, delta, size = 24, -7, 8
    dims = relative.transition_window_dims(d, layout, start, size)
    window = relative.transition_window(delta, d, 100.0, layout=layout, convention="paper", dims=dims)
    M = pe_core.transition_matrix(delta, d, 100.0, layout=layout)
    np.testing.assert_allclose(window, M[np.ix_(dims, dims)], atol=1e-15)


def test_transition_window_reproduces_seed001():
    d, delta = 512, -10
    dims = np.arange(d)
    window = relative.transition_window(delta, d, 10000.0, layout="concatenated", convention="tensor2tensor", dims=dims)
    np.testing.assert_allclose(window, seed001_transition_matrix(delta, rates(d, convention="tensor2tensor")),
                               atol=1e-15)
    with pytest.raises(ValueError):
        relative.transition_window(1, 7, 100.0, layout="interleaved", convention="paper", dims=np.arange(4))
    with pytest.raises(ValueError):
        relative.transition_window(0.5, 8, 100.0, layout="interleaved", convention="paper", dims=np.arange(4))


def test_transition_window_dims():
    np.testing.assert_array_equal(relative.transition_window_dims(64, "interleaved", 5, 128), np.arange(64))
    np.testing.assert_array_equal(relative.transition_window_dims(512, "interleaved", 10, 128), np.arange(10, 138))
    # Concatenated: a run of sines and their cosine partners d/2 further on.
    dims = relative.transition_window_dims(512, "concatenated", 10, 128)
    np.testing.assert_array_equal(dims, np.r_[np.arange(10, 74), np.arange(266, 330)])
    assert relative.transition_window_limit(512, "interleaved", 128) == 384
    assert relative.transition_window_limit(512, "concatenated", 128) == 192
    assert relative.transition_window_limit(64, "concatenated", 128) == 0
    # Past the limit: clamped, never shorter.
    np.testing.assert_array_equal(relative.transition_window_dims(512, "interleaved", 10**6, 128), np.arange(384, 512))
    assert relative.window_text(np.arange(64), 64) == "all 64 dimensions"
    assert relative.window_text(dims, 512) == "dimensions 10..73 and 266..329 of 512"


def test_transition_figure_labels_and_payload():
    d, delta = 2048, 3
    dims = relative.transition_window_dims(d, "interleaved", 100, 128)
    values = relative.transition_window(delta, d, 10000.0, layout="interleaved", convention="paper", dims=dims)
    fig = relative.transition_figure(values, dims, d=d, layout="interleaved", delta=delta, title="M")
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    w = rates(d)
    # Row 100 is the sine of pair 50; its block is W(delta w_50) = [[cos, -sin], [sin, cos]].
    phi = delta * w[50]
    np.testing.assert_allclose(z[:2, :2], [[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]], atol=1e-7)
    assert np.count_nonzero(z) == 2 * 128
    assert fig.data[0].y[0] == "row 100: sin of pair 50" and fig.data[0].x[1] == "column 101: cos of pair 50"
    assert fig.layout.xaxis.title.text.startswith("column of M")
    assert fig.layout.yaxis.title.text.startswith("row of M")
    assert len(fig.to_json()) < 0.2 * MB


# ------------------------------------------------------------------- the shifted map


def test_group_columns_never_mixes_sines_and_cosines():
    rng = np.random.default_rng(0)
    d = 20
    values = rng.normal(size=(3, d))
    for layout in ("interleaved", "concatenated"):
        means, is_sine, first, last = figures.group_columns(values, layout, 6)
        assert means.shape == (3, is_sine.size) and is_sine.size <= 6
        for c in range(is_sine.size):
            pairs = range(first[c], last[c] + 1)
            if layout == "interleaved":
                cols = [2 * p + (0 if is_sine[c] else 1) for p in pairs]
            else:
                cols = [p if is_sine[c] else d // 2 + p for p in pairs]
            np.testing.assert_allclose(means[:, c], values[:, cols].mean(axis=1), atol=1e-14)
        # Enough columns: every column as it is.
        np.testing.assert_array_equal(figures.group_columns(values, layout, d)[0], values)


def test_compare_shift_reproduces_seed001_error():
    L, d, delta = 50, 512, -10
    P = encoding(L, d, layout="concatenated", convention="tensor2tensor")
    update = seed001_transition_matrix(delta, rates(d, convention="tensor2tensor"))
    errors = np.dot(P, update)[10:] - P[:-10]
    result = relative.compare_shift(L, d, 10000.0, layout="concatenated", convention="tensor2tensor", delta=delta,
                              max_rows=300, max_cols=d, full_cells=2_000_000)
    assert result.whole_matrix and result.seed_rows == 40
    assert result.seed_error == pytest.approx(np.abs(errors).max(), abs=1e-14)
    assert result.max_error < 1e-13 and result.accurate
    # Drawn values: the seed's shifted map P @ M, and PE(k + delta) computed directly.
    np.testing.assert_allclose(result.shifted, P @ update, atol=1e-13)
    np.testing.assert_allclose(result.direct, encoding(L, d, layout="concatenated", convention="tensor2tensor",
                                                       start=delta), atol=1e-13)
    np.testing.assert_array_equal(result.row_first, np.arange(L))


@pytest.mark.parametrize("delta", [7, -13, 250, -250])
def test_compare_shift_on_a_window_when_the_matrix_is_large(delta):
    L, d, full_cells, rows, cols = 200, 16, 800, 30, 6
    result = relative.compare_shift(L, d, 10000.0, layout="interleaved", convention="paper", delta=delta,
                              max_rows=rows, max_cols=cols, full_cells=full_cells)
    P = encoding(L, d)
    shifted = P @ pe_core.transition_matrix(delta, d)
    direct = encoding(L, d, start=delta)
    first = L - full_cells // d
    assert not result.whole_matrix and (result.checked_first, result.checked_last) == (first, L - 1)
    # The textbook rows above round the angles k w (w_0 = 1, |k| < L + |delta|); pe_core does not. A
    # difference of two rows moves by at most that rounding in each: sqrt(2) of it through the rotation
    # (|cos| + |sin| <= sqrt(2)) and once more in the other row; 1e-14 is the matrix products' own rounding.
    textbook = (1 + np.sqrt(2)) * angle_rounding_tolerance(L - 1 + abs(delta)) + 1e-14
    assert result.max_error == pytest.approx(np.abs(shifted[first:] - direct[first:]).max(), abs=textbook)
    inside = [k for k in range(first, L) if 0 <= k + delta < L]
    if inside:
        ks = np.array(inside)
        assert result.seed_error == pytest.approx(np.abs(shifted[ks] - P[ks + delta]).max(), abs=textbook)
    else:
        assert result.seed_error is None and result.seed_rows == 0
    # Drawn: exact block means (rows: position blocks; columns: runs of one kind).
    edges = pe_core.block_edges(L, rows)
    for drawn, full in ((result.shifted, shifted), (result.direct, direct)):
        row_means = np.array([full[a:b].mean(axis=0) for a, b in itertools.pairwise(edges)])
        for c in range(drawn.shape[1]):
            pairs = np.arange(result.pair_first[c], result.pair_last[c] + 1)
            column = 2 * pairs + (0 if result.column_is_sine[c] else 1)
            np.testing.assert_allclose(drawn[:, c], row_means[:, column].mean(axis=1), atol=1e-12)
    assert result.accurate


def test_precision_tolerance():
    eps = np.finfo(float).eps
    assert relative.precision_tolerance(0) == pytest.approx(relative.PRECISION_EPS_FACTOR * eps)
    assert relative.precision_tolerance(-1000) == pytest.approx(relative.PRECISION_EPS_FACTOR * eps * 1001)


# ------------------------------------------------------------------ one pair's rotation


@pytest.mark.parametrize(("k", "delta", "w"), [(1, 1, 1.0), (20, -10, 0.3), (7, 5000, 0.01)])
def test_rotation_figure_turns_the_pair_by_delta_w(k, delta, w):
    theta, phi = k * w, delta * w
    fig = relative.rotation_figure(theta, phi, pair=2, k=k, delta=delta, axis_names=("column 4", "column 5"))
    circle, arc, before, after = fig.data
    np.testing.assert_allclose([before.x[1], before.y[1]], [np.sin(theta), np.cos(theta)], atol=1e-15)
    np.testing.assert_allclose([after.x[1], after.y[1]], [np.sin((k + delta) * w), np.cos((k + delta) * w)],
                               atol=1e-12)
    np.testing.assert_allclose(np.hypot(circle.x, circle.y), 1.0, atol=1e-15)
    # The arc turns by phi wrapped into (-180°, 180°] and ends at the image's direction.
    end = np.arctan2(arc.x[-1], arc.y[-1])
    assert np.cos(end - (theta + phi)) == pytest.approx(1.0, abs=1e-12)
    assert fig.layout.xaxis.title.text == "first component: column 4"
    assert fig.layout.yaxis.title.text == "second component: column 5"
    title = fig.layout.title.text.replace("<br>", " ")
    assert f"{np.degrees(phi):.6g}°" in title
    # Beyond half a turn the title also says the angle the arc turns by: phi wrapped, by the test's own sum.
    wrapped = np.degrees(phi) - 360.0 * np.floor((np.degrees(phi) + 180.0) / 360.0)
    assert (f"the same turn as {wrapped:.6g}°" in title) == (abs(phi) > np.pi)
    assert fig.layout.yaxis.scaleanchor == "x"


def test_seed003_form_is_the_same_map_transposed():
    phi, t = 0.7, 1.9
    W_seed = np.array([[np.cos(phi), np.sin(phi)], [-np.sin(phi), np.cos(phi)]])  # seeds 003, 004
    column = W_seed @ np.array([np.sin(t), np.cos(t)])
    row = np.array([np.sin(t), np.cos(t)]) @ pe_core.rotation(phi)
    np.testing.assert_allclose(column, row, atol=1e-15)
    np.testing.assert_allclose(pe_core.rotation(phi), W_seed.T, atol=1e-15)


@pytest.mark.parametrize(("first", "L", "delta"), [(0, 300, 1), (0, 300, -10), (250, 300, 7), (250, 300, -49),
                                                    (0, 30, 30), (0, 30, -45), (10, 30, 25)])
def test_the_encoding_and_its_shift_come_from_one_encoding_to_the_bit(first: int, L: int, delta: int) -> None:
    """compare_shift encodes the positions k and k + delta once where they overlap: the very
    values of two separate encodings (its errors are the snippet's to the bit)."""
    kw = {"layout": "concatenated", "convention": "tensor2tensor"}
    P, direct = relative._encoding_and_direct(first, L, delta, 64, 1e4, **kw)
    np.testing.assert_array_equal(P, pe_core.positional_encoding(L - first, 64, 1e4, start=first, **kw))
    np.testing.assert_array_equal(direct, pe_core.positional_encoding(L - first, 64, 1e4, start=first + delta, **kw))
