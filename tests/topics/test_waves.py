"""explorer.topics.waves holds the numbers the seeds compute: seed 000's panels, seed 002's
columns (with and without its 2*i bug), one pair on the unit circle.

Each expected value is written here from the formula (or the seed's own loop, re-typed),
independently of explorer; payload sizes are checked at the largest view.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.independent import payload, rates
from support.seed_code import seed002_positional_encoding

import pe_core
from explorer.topics import waves

CHART_BUDGET = 1_500_000


# --------------------------------------------------------------------------------------
# (a) Seed 000: sin(k / n^(2x/d)) over x = 0..99 for k = 0, 4, 8, 12
# --------------------------------------------------------------------------------------


def seed000_plotSinusoid_y(k, d=512, n=10000):
    x = np.arange(0, 100, 1)
    denominator = np.power(n, 2 * x / d)
    return np.sin(k / denominator)


def test_profiles_reproduce_seed000_panels():
    w = pe_core.frequencies(512, 10000.0)[:100]
    fig = waves.position_profile_figure([0, 4, 8, 12], w, title="seed 000")
    assert len(fig.data) == 4
    for trace, k in zip(fig.data, [0, 4, 8, 12], strict=True):
        np.testing.assert_array_equal(trace.x, np.arange(100))
        np.testing.assert_allclose(trace.y, seed000_plotSinusoid_y(k), rtol=0, atol=1e-12)
    assert [a.text for a in fig.layout.annotations] == ["k=0", "k=4", "k=8", "k=12"]
    assert fig.layout.xaxis.title.text == "pair index x"
    assert fig.layout.yaxis.title.text == "sin(k·ω_x)"
    assert payload(fig) < 50_000


def test_profiles_wrap_into_rows_of_four():
    w = pe_core.frequencies(2048, 10000.0)
    fig = waves.position_profile_figure(list(range(0, 80, 10)), w, title="eight")
    assert len(fig.data) == 8
    assert fig.data[7].xaxis == "x8"
    assert fig.layout.height > 600
    expected = np.sin(70 * 10000.0 ** (-2 * np.arange(1024) / 2048))
    np.testing.assert_allclose(fig.data[7].y, expected, atol=1e-12)
    assert payload(fig) < 400_000


# --------------------------------------------------------------------------------------
# (b) Seed 002: dimensions 0 and 1 over 50 positions, with and without its 2*i bug
# --------------------------------------------------------------------------------------


def test_columns_reproduce_seed002_dims_0_and_1():
    seed = seed002_positional_encoding(50, 128)
    values = waves.encoding_columns(50, 128, 10000.0, [0, 1])
    np.testing.assert_allclose(values, seed[:, :2], rtol=0, atol=1e-12)


def test_seed002_bug_is_base_n_squared():
    seed = seed002_positional_encoding(50, 128)
    every_column = waves.encoding_columns(50, 128, 1e8, list(range(128)))
    np.testing.assert_allclose(every_column, seed, rtol=0, atol=1e-9)
    # ... and with the intended base only pair 0 agrees.
    paper = waves.encoding_columns(50, 128, 10000.0, [2, 3])
    assert np.abs(paper - seed[:, 2:4]).max() > 0.1


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
@pytest.mark.parametrize("convention", ["paper", "tensor2tensor"])
def test_columns_equal_the_matrix_columns(layout, convention):
    columns = [0, 1, 5, 16, 17, 31]
    P = pe_core.positional_encoding(300, 32, 500.0, layout=layout, convention=convention)
    values = waves.encoding_columns(300, 32, 500.0, columns, layout=layout, convention=convention)
    np.testing.assert_allclose(values, P[:, columns], rtol=0, atol=1e-12)


def test_columns_out_of_range_raise():
    with pytest.raises(ValueError, match=r"0\.\.7"):
        waves.encoding_columns(10, 8, 100.0, [8])


def test_column_names_say_sin_cos_and_pair():
    w = pe_core.frequencies(8, 100.0)
    assert waves.column_names([0, 1, 6], 8, w)[:2] == [
        "column 0: sin, pair i = 0, λ = 6.283 positions",
        "column 1: cos, pair i = 0, λ = 6.283 positions",
    ]
    assert waves.column_names([6], 8, w, "concatenated")[0].startswith("column 6: cos, pair i = 2, λ = ")
    assert waves.column_names([6], 8, w)[0].startswith("column 6: sin, pair i = 3, λ = ")


def test_columns_figure_has_every_position_at_the_largest_view():
    L, d, columns = 16384, 2048, [0, 1, 2, 3, 1000, 1001, 2046, 2047]
    values = waves.encoding_columns(L, d, 10000.0, columns)
    names = waves.column_names(columns, d, pe_core.frequencies(d))
    fig = waves.columns_over_positions_figure(values, names, title="big")
    assert len(fig.data) == 8
    k = np.arange(L)
    for trace, c in zip(fig.data, columns, strict=True):
        assert (trace.x0, trace.dx) == (0, 1)
        assert trace.y.size == L
        formula = (np.sin if c % 2 == 0 else np.cos)(k / 10000.0 ** (2 * (c // 2) / d))
        np.testing.assert_allclose(trace.y, formula, rtol=0, atol=1e-6)  # float32 on the wire
    assert [t.name for t in fig.data] == names
    assert fig.layout.xaxis.title.text == "position k"
    assert fig.layout.yaxis.title.text == "P[k, j]"
    assert payload(fig) < CHART_BUDGET


def test_columns_figure_draws_a_window_of_positions():
    """The Waves page draws COLUMNS_WINDOW positions from a movable first one: x starts there."""
    L, d, first = 16384, 2048, 12000
    values = waves.encoding_columns(L, d, 10000.0, [0, 1])
    window = values[first : first + waves.COLUMNS_WINDOW]
    fig = waves.columns_over_positions_figure(window, waves.column_names([0, 1], d, pe_core.frequencies(d)),
                                           title="window", first=first)
    k = np.arange(first, first + waves.COLUMNS_WINDOW)
    for trace, f in zip(fig.data, (np.sin, np.cos), strict=True):
        assert (trace.x0, trace.dx, trace.y.size) == (first, 1, waves.COLUMNS_WINDOW)
        np.testing.assert_allclose(trace.y, f(k * 1.0), atol=1e-6)
    assert payload(fig) < 50_000


def test_columns_figure_rejects_mismatched_names():
    with pytest.raises(ValueError):
        waves.columns_over_positions_figure(np.zeros((5, 2)), ["one"], title="x")


# --------------------------------------------------------------------------------------
# (c) One pair on the unit circle
# --------------------------------------------------------------------------------------


def test_unit_circle_trail_and_point():
    w_i = 10000.0 ** (-2 * 3 / 64)
    fig = waves.unit_circle_figure(w_i, 40, pair=3)
    circle, trail, point = fig.data
    assert len(fig.data) == 3
    np.testing.assert_allclose(circle.x**2 + circle.y**2, 1.0, atol=1e-12)
    k = np.arange(41)
    np.testing.assert_array_equal(trail.marker.color, k)
    np.testing.assert_allclose(trail.x, np.cos(k * w_i), atol=1e-6)
    np.testing.assert_allclose(trail.y, np.sin(k * w_i), atol=1e-6)
    np.testing.assert_allclose(point.x, [0.0, math.cos(40 * w_i)], atol=1e-12)
    np.testing.assert_allclose(point.y, [0.0, math.sin(40 * w_i)], atol=1e-12)
    degrees = math.degrees(40 * w_i)
    assert f"{degrees % 360:.4f}°" in fig.layout.annotations[0].text
    assert fig.layout.xaxis.title.text == "cos(k·ω_3)"
    assert fig.layout.yaxis.title.text == "sin(k·ω_3)"


def test_unit_circle_trail_is_capped_at_the_last_positions():
    fig = waves.unit_circle_figure(1.0, 16383, pair=0)
    trail = fig.data[1]
    assert trail.x.size == waves.MAX_TRAIL
    assert trail.marker.color[0] == 16383 - waves.MAX_TRAIL + 1 and trail.marker.color[-1] == 16383
    assert "572" not in fig.layout.annotations[0].text  # 16383 rad, not 10 rad
    assert f"{math.degrees(16383) % 360:.4f}°" in fig.layout.annotations[0].text
    assert payload(fig) < 100_000


def test_the_profile_grid_is_made_once_per_shape_and_filled_in_on_a_copy() -> None:
    """make_subplots' grid is cached by its shape (a second figure of that shape is a hit, another
    shape is not served it), and each figure fills in its own copy of it."""
    waves._profile_grid_of_shape.cache_clear()
    first = waves.position_profile_figure([1, 2, 3, 4, 5], rates(64)[:10], title="t")
    second = waves.position_profile_figure([6, 7, 8, 9, 10], rates(64)[:10], title="t")
    assert waves._profile_grid_of_shape.cache_info().hits == 1
    assert [a.text for a in first.layout.annotations] == [f"k={k}" for k in (1, 2, 3, 4, 5)]
    assert [a.text for a in second.layout.annotations] == [f"k={k}" for k in (6, 7, 8, 9, 10)]
    other = waves.position_profile_figure([1, 2], rates(64)[:10], title="t")
    assert waves._profile_grid_of_shape.cache_info().misses == 2
    assert [a.text for a in other.layout.annotations] == ["k=1", "k=2"] and "xaxis3" not in other.to_dict()["layout"]
