"""Unit tests of explorer.relation_figures (Similarity and Relative positions pages).

Every expected value is computed here from the formulas themselves (seed 001's own code
where it exists), not from pe_core, so that a shared mistake cannot hide.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from angle_rounding import angle_rounding_tolerance
from seed_code import seed001_transition_matrix

import pe_core
from explorer import figures
from explorer import relation_figures as rf

MB = 1_000_000


def encoding(L: int, d: int, n: float = 10000.0, layout: str = "interleaved", convention: str = "paper",
             start: int = 0) -> np.ndarray:
    """PE(k, 2i) = sin(k w_i), PE(k, 2i+1) = cos(k w_i), written out independently (even d)."""
    m = d // 2
    i = np.arange(m)
    w = n ** (-2.0 * i / d) if convention == "paper" else (1.0 / n) ** np.linspace(0, 1, m)
    angle = np.arange(start, start + L)[:, None] * w[None, :]
    if layout == "concatenated":
        return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1)
    P = np.empty((L, d))
    P[:, 0::2], P[:, 1::2] = np.sin(angle), np.cos(angle)
    return P


def rates(d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    m = d // 2
    return n ** (-2.0 * np.arange(m) / d) if convention == "paper" else (1.0 / n) ** np.linspace(0, 1, m)


def y_of(trace) -> np.ndarray:
    return np.asarray(trace.y, dtype=np.float64)


# ------------------------------------------------------------------------ similarity


def test_seed001_similarity_curves_match_the_notebook():
    P = encoding(50, 512, layout="concatenated", convention="tensor2tensor")
    dots = np.dot(P, P[20])
    SSE = np.sum((P - P[20]) ** 2, axis=1)
    cosine = dots / (np.linalg.norm(P, axis=1) * np.linalg.norm(P[20]))
    curves = rf.similarity_from_matrix(P, 20)
    fig = rf.similarity_figure(curves, title="t")
    np.testing.assert_allclose(y_of(fig.data[0]), dots, rtol=0, atol=1e-10)
    np.testing.assert_allclose(y_of(fig.data[1]), SSE, rtol=0, atol=1e-10)
    np.testing.assert_allclose(y_of(fig.data[2]), cosine, rtol=0, atol=1e-12)
    assert fig.data[0].x0 == 0 and fig.data[0].dx == 1
    assert int(np.argmax(y_of(fig.data[0]))) == 20 and int(np.argmin(y_of(fig.data[1]))) == 20
    assert fig.layout.yaxis.title.text == "P[k]·P[20]"
    assert fig.layout.yaxis2.title.text.startswith("SSE")
    assert fig.layout.yaxis3.title.text.startswith("cos")
    assert fig.layout.xaxis3.title.text == "position k"


@pytest.mark.parametrize("convention", ["paper", "tensor2tensor"])
def test_closed_form_curves_equal_the_measured_ones(convention):
    L, d, ref = 64, 32, 17
    P = encoding(L, d, convention=convention)
    t = np.arange(-(L - 1), L)
    f = np.cos(t[:, None] * rates(d, convention=convention)[None, :]).sum(axis=1)
    curves = rf.similarity_from_offsets(f, ref, d)
    assert not curves.from_matrix
    np.testing.assert_allclose(curves.dot, P @ P[ref], atol=1e-11)
    np.testing.assert_allclose(curves.sse, ((P - P[ref]) ** 2).sum(axis=1), atol=1e-11)
    np.testing.assert_allclose(curves.cosine, (P @ P[ref]) / (d / 2), atol=1e-12)
    np.testing.assert_allclose(curves.sse, pe_core.sse_by_offset(np.arange(L) - ref, d, convention=convention),
                               atol=1e-11)
    with pytest.raises(ValueError):
        rf.similarity_from_offsets(f, L, d)


def test_mirrored_offsets_is_even():
    half = np.array([5.0, 3.0, 1.0])
    np.testing.assert_array_equal(rf.mirrored_offsets(half), [1.0, 3.0, 5.0, 3.0, 1.0])


def test_offset_matrix_figure_shows_exact_block_means():
    L, d = 30, 16
    P = encoding(L, d)
    G = P @ P.T
    edges = pe_core.block_edges(L, 7)
    t = np.arange(-(L - 1), L)
    f = np.cos(t[:, None] * rates(d)[None, :]).sum(axis=1)
    fig = rf.offset_matrix_figure(pe_core.offset_matrix_block_average(f, edges), edges, d=d, title="G")
    expected = np.array([[G[a0:a1, b0:b1].mean() for b0, b1 in itertools.pairwise(edges)]
                         for a0, a1 in itertools.pairwise(edges)])
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    np.testing.assert_allclose(z, expected, atol=1e-5 * d)  # drawn as float32
    assert fig.layout.xaxis.title.text == "position k′" and fig.layout.yaxis.title.text == "position k"
    assert fig.data[0].y[0] == f"k = 0..{edges[1] - 1} (mean of {edges[1]})"
    assert (fig.data[0].zmin, fig.data[0].zmax, fig.data[0].zmid) == (-d / 2, d / 2, 0.0)


def test_closed_form_figure_with_measured_points():
    L, d, ref = 40, 24, 5
    t = np.arange(-(L - 1), L)
    f = np.cos(t[:, None] * rates(d)[None, :]).sum(axis=1)
    P = encoding(L, d)
    fig = rf.closed_form_figure(f, measured=P @ P[ref], measured_first_offset=-ref, title="f")
    np.testing.assert_allclose(y_of(fig.data[0]), f, atol=1e-12)
    assert fig.data[0].x0 == -(L - 1) and fig.data[1].x0 == -ref
    # Each measured point sits on the curve at its offset k - ref.
    np.testing.assert_allclose(y_of(fig.data[1]), f[L - 1 - ref : 2 * L - 1 - ref], atol=1e-11)
    assert fig.layout.xaxis.title.text == "offset δ (positions)"
    assert fig.layout.yaxis.title.text == "dot product f(δ)"
    assert len(rf.closed_form_figure(f, title="f").data) == 1


def test_similarity_payloads_at_the_largest_settings():
    L, d = 16384, 2048
    f = np.cos(np.linspace(0, 50, 2 * L - 1))  # shape and size are what matter here
    curves = rf.similarity_from_offsets(f, 20, d)
    assert len(rf.similarity_figure(curves, title="s").to_json()) < 1.0 * MB
    assert len(rf.closed_form_figure(f, title="f").to_json()) < 0.5 * MB
    edges = pe_core.block_edges(L, rf.SIMILARITY_BLOCKS)
    blocks = pe_core.offset_matrix_block_average(f, edges)
    assert len(rf.offset_matrix_figure(blocks, edges, d=d, title="G").to_json()) < 0.6 * MB


def test_long_similarity_lines_are_drawn_as_their_envelope():
    """At L = 16384 every curve is drawn as its min/max envelope: exact points, every peak kept."""
    L, d, ref = 16384, 64, 20
    t = np.arange(-(L - 1), L)
    f = np.cos(t[:, None] * rates(d)[None, :]).sum(axis=1)
    curves = rf.similarity_from_offsets(f, ref, d)
    fig = rf.similarity_figure(curves, title="s")
    for trace, values in zip(fig.data, (curves.dot, curves.sse, curves.cosine), strict=True):
        assert trace.x.size <= figures.LINE_MAX_POINTS and "envelope" in trace.hovertemplate
        np.testing.assert_array_equal(trace.y, values[trace.x])
        assert trace.y.max() == values.max() and trace.y.min() == values.min()
    # One dotted line at the reference in each of the three panels, x axes shared.
    assert [s.x0 for s in fig.layout.shapes] == [ref] * 3
    assert {s.yref for s in fig.layout.shapes} == {"y domain", "y2 domain", "y3 domain"}
    assert fig.layout.xaxis.matches == "x3" and fig.layout.xaxis2.matches == "x3"
    closed = rf.closed_form_figure(f, measured=f[L - 1 - ref : 2 * L - 1 - ref], measured_first_offset=-ref,
                                   title="f")
    line, points = closed.data
    np.testing.assert_array_equal(line.y, f[line.x + L - 1])
    assert line.y.max() == f.max() and line.y.min() == f.min() and line.x.size <= figures.LINE_MAX_POINTS
    np.testing.assert_array_equal(points.y, f[points.x + L - 1])
    assert points.mode == "lines"  # 16384 measured values: a dotted line, not thousands of markers
    few = rf.closed_form_figure(f, measured=f[L - 1 : L + 127], measured_first_offset=0, title="f")
    assert few.data[1].mode == "markers"


# ----------------------------------------------------------------- transition matrix


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
@pytest.mark.parametrize("start", [0, 3, 7])
def test_transition_window_is_a_window_of_the_transition_matrix(layout, start):
    d, delta, size = 24, -7, 8
    dims = rf.transition_window_dims(d, layout, start, size)
    window = rf.transition_window(delta, d, 100.0, layout=layout, convention="paper", dims=dims)
    M = pe_core.transition_matrix(delta, d, 100.0, layout=layout)
    np.testing.assert_allclose(window, M[np.ix_(dims, dims)], atol=1e-15)


def test_transition_window_reproduces_seed001():
    d, delta = 512, -10
    dims = np.arange(d)
    window = rf.transition_window(delta, d, 10000.0, layout="concatenated", convention="tensor2tensor", dims=dims)
    np.testing.assert_allclose(window, seed001_transition_matrix(delta, rates(d, convention="tensor2tensor")),
                               atol=1e-15)
    with pytest.raises(ValueError):
        rf.transition_window(1, 7, 100.0, layout="interleaved", convention="paper", dims=np.arange(4))
    with pytest.raises(ValueError):
        rf.transition_window(0.5, 8, 100.0, layout="interleaved", convention="paper", dims=np.arange(4))


def test_transition_window_dims():
    np.testing.assert_array_equal(rf.transition_window_dims(64, "interleaved", 5, 128), np.arange(64))
    np.testing.assert_array_equal(rf.transition_window_dims(512, "interleaved", 10, 128), np.arange(10, 138))
    # Concatenated: a run of sines and their cosine partners d/2 further on.
    dims = rf.transition_window_dims(512, "concatenated", 10, 128)
    np.testing.assert_array_equal(dims, np.r_[np.arange(10, 74), np.arange(266, 330)])
    assert rf.transition_window_limit(512, "interleaved", 128) == 384
    assert rf.transition_window_limit(512, "concatenated", 128) == 192
    assert rf.transition_window_limit(64, "concatenated", 128) == 0
    # Past the limit: clamped, never shorter.
    np.testing.assert_array_equal(rf.transition_window_dims(512, "interleaved", 10**6, 128), np.arange(384, 512))
    assert rf.window_text(np.arange(64), 64) == "all 64 dimensions"
    assert rf.window_text(dims, 512) == "dimensions 10..73 and 266..329 of 512"


def test_transition_figure_labels_and_payload():
    d, delta = 2048, 3
    dims = rf.transition_window_dims(d, "interleaved", 100, 128)
    values = rf.transition_window(delta, d, 10000.0, layout="interleaved", convention="paper", dims=dims)
    fig = rf.transition_figure(values, dims, d=d, layout="interleaved", delta=delta, title="M")
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
        means, is_sine, first, last = rf.group_columns(values, layout, 6)
        assert means.shape == (3, is_sine.size) and is_sine.size <= 6
        for c in range(is_sine.size):
            pairs = range(first[c], last[c] + 1)
            if layout == "interleaved":
                cols = [2 * p + (0 if is_sine[c] else 1) for p in pairs]
            else:
                cols = [p if is_sine[c] else d // 2 + p for p in pairs]
            np.testing.assert_allclose(means[:, c], values[:, cols].mean(axis=1), atol=1e-14)
        # Enough columns: every column as it is.
        np.testing.assert_array_equal(rf.group_columns(values, layout, d)[0], values)


def test_compare_shift_reproduces_seed001_error():
    L, d, delta = 50, 512, -10
    P = encoding(L, d, layout="concatenated", convention="tensor2tensor")
    update = seed001_transition_matrix(delta, rates(d, convention="tensor2tensor"))
    errors = np.dot(P, update)[10:] - P[:-10]
    result = rf.compare_shift(L, d, 10000.0, layout="concatenated", convention="tensor2tensor", delta=delta,
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
    result = rf.compare_shift(L, d, 10000.0, layout="interleaved", convention="paper", delta=delta,
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
    assert rf.precision_tolerance(0) == pytest.approx(rf.PRECISION_EPS_FACTOR * eps)
    assert rf.precision_tolerance(-1000) == pytest.approx(rf.PRECISION_EPS_FACTOR * eps * 1001)


# ------------------------------------------------------------------ one pair's rotation


@pytest.mark.parametrize(("k", "delta", "w"), [(1, 1, 1.0), (20, -10, 0.3), (7, 5000, 0.01)])
def test_rotation_figure_turns_the_pair_by_delta_w(k, delta, w):
    theta, phi = k * w, delta * w
    fig = rf.rotation_figure(theta, phi, pair=2, k=k, delta=delta, axis_names=("column 4", "column 5"))
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
    assert f"{np.degrees(phi):.6g}°" in fig.layout.title.text
    assert fig.layout.yaxis.scaleanchor == "x"


def test_seed003_form_is_the_same_map_transposed():
    phi, t = 0.7, 1.9
    W_seed = np.array([[np.cos(phi), np.sin(phi)], [-np.sin(phi), np.cos(phi)]])  # seeds 003, 004
    column = W_seed @ np.array([np.sin(t), np.cos(t)])
    row = np.array([np.sin(t), np.cos(t)]) @ pe_core.rotation(phi)
    np.testing.assert_allclose(column, row, atol=1e-15)
    np.testing.assert_allclose(pe_core.rotation(phi), W_seed.T, atol=1e-15)


@pytest.mark.parametrize(("L", "ref"), [(100, 50), (100, 2), (100, 99), (5, 3)])
def test_measure_around_measures_a_window_containing_ref(L, ref):
    d = 16
    first, dots = rf.measure_around(L, d, 10000.0, layout="concatenated", convention="paper", ref=ref,
                                    max_cells=20 * d)
    P = encoding(L, d, layout="concatenated")
    assert dots.size == min(L, 20) and first <= ref < first + dots.size and first + dots.size <= L
    np.testing.assert_allclose(dots, P[first : first + dots.size] @ P[ref], atol=1e-12)


def test_even_settings_guards_an_odd_d():
    from explorer.settings import Settings

    same, notice = rf.even_settings(Settings(d=64), "why")
    assert same == Settings(d=64) and notice is None
    fixed, notice = rf.even_settings(Settings(d=7, L=9), "pairs")
    assert fixed == Settings(d=6, L=9) and notice == "d = 7 is odd: pairs; this page uses d = 6."
    assert rf.even_settings(Settings(d=1), "pairs")[0].d == 2
