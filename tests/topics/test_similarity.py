"""Unit tests of explorer.topics.similarity (the Similarity page's analysis and figures).

Every expected value is computed here from the formulas themselves (seed 001's own code
where it exists), not from pe_core, so that a shared mistake cannot hide.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from support.independent import assert_same_as_validated, encoding, rates, y_of

import pe_core
from explorer import figures
from explorer.topics import similarity

MB = 1_000_000


def test_seed001_similarity_curves_match_the_notebook():
    P = encoding(50, 512, layout="concatenated", convention="tensor2tensor")
    dots = np.dot(P, P[20])
    SSE = np.sum((P - P[20]) ** 2, axis=1)
    cosine = dots / (np.linalg.norm(P, axis=1) * np.linalg.norm(P[20]))
    curves = similarity.similarity_from_matrix(P, 20)
    fig = similarity.similarity_figure(curves, title="t")
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
    curves = similarity.similarity_from_offsets(f, ref, d)
    assert not curves.from_matrix
    np.testing.assert_allclose(curves.dot, P @ P[ref], atol=1e-11)
    np.testing.assert_allclose(curves.sse, ((P - P[ref]) ** 2).sum(axis=1), atol=1e-11)
    np.testing.assert_allclose(curves.cosine, (P @ P[ref]) / (d / 2), atol=1e-12)
    np.testing.assert_allclose(curves.sse, pe_core.sse_by_offset(np.arange(L) - ref, d, convention=convention),
                               atol=1e-11)
    with pytest.raises(ValueError):
        similarity.similarity_from_offsets(f, L, d)


def test_mirrored_offsets_is_even():
    half = np.array([5.0, 3.0, 1.0])
    np.testing.assert_array_equal(similarity.mirrored_offsets(half), [1.0, 3.0, 5.0, 3.0, 1.0])


def test_offset_matrix_figure_shows_exact_block_means():
    L, d = 30, 16
    P = encoding(L, d)
    G = P @ P.T
    edges = pe_core.block_edges(L, 7)
    t = np.arange(-(L - 1), L)
    f = np.cos(t[:, None] * rates(d)[None, :]).sum(axis=1)
    fig = similarity.offset_matrix_figure(pe_core.offset_matrix_block_average(f, edges), edges, d=d, title="G")
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
    fig = similarity.closed_form_figure(f, measured=P @ P[ref], measured_first_offset=-ref, title="f")
    np.testing.assert_allclose(y_of(fig.data[0]), f, atol=1e-12)
    assert fig.data[0].x0 == -(L - 1) and fig.data[1].x0 == -ref
    # Each measured point sits on the curve at its offset k - ref.
    np.testing.assert_allclose(y_of(fig.data[1]), f[L - 1 - ref : 2 * L - 1 - ref], atol=1e-11)
    assert fig.layout.xaxis.title.text == "offset δ (positions)"
    assert fig.layout.yaxis.title.text == "dot product f(δ)"
    assert len(similarity.closed_form_figure(f, title="f").data) == 1


def test_similarity_payloads_at_the_largest_settings():
    L, d = 16384, 2048
    f = np.cos(np.linspace(0, 50, 2 * L - 1))  # shape and size are what matter here
    curves = similarity.similarity_from_offsets(f, 20, d)
    assert len(similarity.similarity_figure(curves, title="s").to_json()) < 1.0 * MB
    assert len(similarity.closed_form_figure(f, title="f").to_json()) < 0.5 * MB
    edges = pe_core.block_edges(L, similarity.SIMILARITY_BLOCKS)
    blocks = pe_core.offset_matrix_block_average(f, edges)
    assert len(similarity.offset_matrix_figure(blocks, edges, d=d, title="G").to_json()) < 0.6 * MB


def test_long_similarity_lines_are_drawn_as_their_envelope():
    """At L = 16384 every curve is drawn as its min/max envelope: exact points, every peak kept."""
    L, d, ref = 16384, 64, 20
    t = np.arange(-(L - 1), L)
    f = np.cos(t[:, None] * rates(d)[None, :]).sum(axis=1)
    curves = similarity.similarity_from_offsets(f, ref, d)
    fig = similarity.similarity_figure(curves, title="s")
    for trace, values in zip(fig.data, (curves.dot, curves.sse, curves.cosine), strict=True):
        assert trace.x.size <= figures.LINE_MAX_POINTS and "envelope" in trace.hovertemplate
        np.testing.assert_array_equal(trace.y, values[trace.x])
        assert trace.y.max() == values.max() and trace.y.min() == values.min()
    # One dotted line at the reference in each of the three panels, all over positions 0..L-1.
    assert [s.x0 for s in fig.layout.shapes] == [ref] * 3
    assert {s.yref for s in fig.layout.shapes} == {"y domain", "y2 domain", "y3 domain"}
    assert [list(fig.layout[f"xaxis{s}"].range) for s in ("", "2", "3")] == [[-0.5, L - 0.5]] * 3
    closed = similarity.closed_form_figure(f, measured=f[L - 1 - ref : 2 * L - 1 - ref], measured_first_offset=-ref,
                                   title="f")
    line, points = closed.data
    np.testing.assert_array_equal(line.y, f[line.x + L - 1])
    assert line.y.max() == f.max() and line.y.min() == f.min() and line.x.size <= figures.LINE_MAX_POINTS
    np.testing.assert_array_equal(points.y, f[points.x + L - 1])
    assert points.mode == "lines"  # 16384 measured values: a dotted line, not thousands of markers
    few = similarity.closed_form_figure(f, measured=f[L - 1 : L + 127], measured_first_offset=0, title="f")
    assert few.data[1].mode == "markers"


@pytest.mark.parametrize(("L", "ref"), [(100, 50), (100, 2), (100, 99), (5, 3)])
def test_measure_around_measures_a_window_containing_ref(L, ref):
    d = 16
    first, dots = similarity.measure_around(L, d, 10000.0, layout="concatenated", convention="paper", ref=ref,
                                    max_cells=20 * d)
    P = encoding(L, d, layout="concatenated")
    assert dots.size == min(L, 20) and first <= ref < first + dots.size and first + dots.size <= L
    np.testing.assert_allclose(dots, P[first : first + dots.size] @ P[ref], atol=1e-12)


@pytest.mark.parametrize(("L", "ref", "layout", "first"),
                         [(5000, 20, "interleaved", 0), (5000, 2500, "concatenated", 1190),
                          (300, 299, "concatenated", 0)])
def test_measured_dots_are_the_window_dots_and_the_closed_form_at_the_same_positions_bit_for_bit(L, ref, layout, first):
    """The page's measured window (at d = 100, 2621 positions): its closed form, read off the window's cosines
    when the window starts at position 0, is closed_form_at's."""
    d, n = 100, 1e4
    assert similarity.measure_window(L, d, ref, similarity.MEASURED_CELLS) == (first, min(L, 2621))
    count = min(L, 2621)
    measured = similarity.measured_dots(first, count, d, n, layout=layout, convention="paper", ref=ref)
    assert measured.first == first
    np.testing.assert_array_equal(
        measured.values, similarity.window_dots(first, count, d, n, layout=layout, convention="paper", ref=ref))
    np.testing.assert_array_equal(
        measured.closed, similarity.closed_form_at(np.arange(first, first + count) - ref, pe_core.frequencies(d, n)))


def test_closed_form_at_is_the_sum_of_cosines_at_each_offset_and_even():
    w = pe_core.frequencies(64, 1e4)
    offsets = np.arange(-40, 25)
    expected = [math.fsum(math.cos(abs(int(t)) * x) for x in w) for t in offsets]
    got = similarity.closed_form_at(offsets, w)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got, similarity.closed_form_at(-offsets, w))
    assert got[offsets == 0] == 32.0 and similarity.closed_form_at(np.array([], dtype=int), w).size == 0


@pytest.mark.parametrize("L", [1, 40, 2500])
def test_similarity_figures_built_without_validation_are_the_validated_ones(L):
    """The page's four charts skip Plotly's validation (figures.figure): validated, each is the same JSON."""
    d, ref = 16, min(20, L - 1)
    f = pe_core.dot_by_offset(np.arange(-(L - 1), L, dtype=np.float64), d)
    curves = similarity.similarity_from_matrix(pe_core.positional_encoding(L, d), ref)
    edges = pe_core.block_edges(L, similarity.SIMILARITY_BLOCKS)
    charts = [
        similarity.similarity_figure(curves, title="s"),
        similarity.closed_form_figure(f, measured=curves.dot, measured_first_offset=-ref, title="f"),
        similarity.closed_form_figure(f, measured=curves.dot[:5], measured_first_offset=-ref, title="f"),
        similarity.closed_form_figure(f, title="f"),
        similarity.offset_matrix_figure(pe_core.offset_matrix_block_average(f, edges), edges, d=d, title="G"),
    ]
    if L > 1:
        charts.append(similarity.reference_play_figure(f, title="t"))
    for fig in charts:
        assert_same_as_validated(fig)


@pytest.mark.parametrize(("L", "d", "layout", "convention"), [
    (50, 512, "concatenated", "tensor2tensor"),
    (3000, 300, "interleaved", "paper"),  # pe_core builds P in several blocks of rows
    (7, 2, "interleaved", "paper"),
    (1, 4, "concatenated", "paper"),
])
def test_the_measured_curves_and_their_closed_form_are_pe_cores_bit_for_bit(L, d, layout, convention):
    """The page's numbers are printed by its snippet to the last digit: its curves are pe_core's
    dot_similarity, sse and cosine_similarity exactly, and the closed form read off P's cosines is
    closed_form_at's (the snippet's arithmetic) exactly."""
    P = pe_core.positional_encoding(L, d, 1e4, layout=layout, convention=convention)
    w = pe_core.frequencies(d, 1e4, convention)
    for ref in sorted({0, L // 3, L - 1}):
        curves = similarity.similarity_from_matrix(P, ref)
        np.testing.assert_array_equal(curves.dot, pe_core.dot_similarity(P, ref))
        np.testing.assert_array_equal(curves.sse, pe_core.sse(P, ref))
        np.testing.assert_array_equal(curves.cosine, pe_core.cosine_similarity(P, ref))
        offsets = np.arange(L) - ref
        np.testing.assert_array_equal(similarity.closed_form_from_encoding(P, layout, offsets),
                                      similarity.closed_form_at(offsets, w))
