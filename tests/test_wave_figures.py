"""The Waves and Binary-vs-sinusoid figures hold the numbers the seeds compute.

Each expected value is written here from the formula (or the seed's own loop, re-typed),
independently of explorer.wave_figures; payload sizes are checked at the largest view.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from seed_code import seed002_positional_encoding, seed003_binary_representation

import pe_core
from explorer import figures
from explorer import wave_figures as wf
from explorer.settings import Settings, parse_int_list

CHART_BUDGET = 1_500_000


def payload(fig) -> int:
    return len(fig.to_json())


# --------------------------------------------------------------------------------------
# (a) Seed 000: sin(k / n^(2x/d)) over x = 0..99 for k = 0, 4, 8, 12
# --------------------------------------------------------------------------------------


def seed000_plotSinusoid_y(k, d=512, n=10000):
    x = np.arange(0, 100, 1)
    denominator = np.power(n, 2 * x / d)
    return np.sin(k / denominator)


def test_profiles_reproduce_seed000_panels():
    w = pe_core.frequencies(512, 10000.0)[:100]
    fig = wf.position_profile_figure([0, 4, 8, 12], w, title="seed 000")
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
    fig = wf.position_profile_figure(list(range(0, 80, 10)), w, title="eight")
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
    values = wf.encoding_columns(50, 128, 10000.0, [0, 1])
    np.testing.assert_allclose(values, seed[:, :2], rtol=0, atol=1e-12)


def test_seed002_bug_is_base_n_squared():
    seed = seed002_positional_encoding(50, 128)
    every_column = wf.encoding_columns(50, 128, 1e8, list(range(128)))
    np.testing.assert_allclose(every_column, seed, rtol=0, atol=1e-9)
    # ... and with the intended base only pair 0 agrees.
    paper = wf.encoding_columns(50, 128, 10000.0, [2, 3])
    assert np.abs(paper - seed[:, 2:4]).max() > 0.1


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
@pytest.mark.parametrize("convention", ["paper", "tensor2tensor"])
def test_columns_equal_the_matrix_columns(layout, convention):
    columns = [0, 1, 5, 16, 17, 31]
    P = pe_core.positional_encoding(300, 32, 500.0, layout=layout, convention=convention)
    values = wf.encoding_columns(300, 32, 500.0, columns, layout=layout, convention=convention)
    np.testing.assert_allclose(values, P[:, columns], rtol=0, atol=1e-12)


def test_columns_out_of_range_raise():
    with pytest.raises(ValueError, match=r"0\.\.7"):
        wf.encoding_columns(10, 8, 100.0, [8])


def test_column_names_say_sin_cos_and_pair():
    w = pe_core.frequencies(8, 100.0)
    assert wf.column_names([0, 1, 6], 8, w)[:2] == [
        "column 0: sin, pair i = 0, λ = 6.283 positions",
        "column 1: cos, pair i = 0, λ = 6.283 positions",
    ]
    assert wf.column_names([6], 8, w, "concatenated")[0].startswith("column 6: cos, pair i = 2, λ = ")
    assert wf.column_names([6], 8, w)[0].startswith("column 6: sin, pair i = 3, λ = ")


def test_columns_figure_has_every_position_at_the_largest_view():
    L, d, columns = 16384, 2048, [0, 1, 2, 3, 1000, 1001, 2046, 2047]
    values = wf.encoding_columns(L, d, 10000.0, columns)
    names = wf.column_names(columns, d, pe_core.frequencies(d))
    fig = wf.columns_over_positions_figure(values, names, title="big")
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
    values = wf.encoding_columns(L, d, 10000.0, [0, 1])
    window = values[first : first + wf.COLUMNS_WINDOW]
    fig = wf.columns_over_positions_figure(window, wf.column_names([0, 1], d, pe_core.frequencies(d)),
                                           title="window", first=first)
    k = np.arange(first, first + wf.COLUMNS_WINDOW)
    for trace, f in zip(fig.data, (np.sin, np.cos), strict=True):
        assert (trace.x0, trace.dx, trace.y.size) == (first, 1, wf.COLUMNS_WINDOW)
        np.testing.assert_allclose(trace.y, f(k * 1.0), atol=1e-6)
    assert payload(fig) < 50_000


def test_columns_figure_rejects_mismatched_names():
    with pytest.raises(ValueError):
        wf.columns_over_positions_figure(np.zeros((5, 2)), ["one"], title="x")


# --------------------------------------------------------------------------------------
# (c) One pair on the unit circle
# --------------------------------------------------------------------------------------


def test_unit_circle_trail_and_point():
    w_i = 10000.0 ** (-2 * 3 / 64)
    fig = wf.unit_circle_figure(w_i, 40, pair=3)
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
    fig = wf.unit_circle_figure(1.0, 16383, pair=0)
    trail = fig.data[1]
    assert trail.x.size == wf.MAX_TRAIL
    assert trail.marker.color[0] == 16383 - wf.MAX_TRAIL + 1 and trail.marker.color[-1] == 16383
    assert "572" not in fig.layout.annotations[0].text  # 16383 rad, not 10 rad
    assert f"{math.degrees(16383) % 360:.4f}°" in fig.layout.annotations[0].text
    assert payload(fig) < 100_000


# --------------------------------------------------------------------------------------
# Seed 003: binary codes with width 10, periods, Hamming distance against SSE
# --------------------------------------------------------------------------------------


def test_binary_figure_reproduces_seed003_width_10_map():
    seed = seed003_binary_representation(range(100)).astype(float)
    edges = pe_core.block_edges(100, wf.BINARY_MAX_ROWS)
    B = pe_core.block_average(pe_core.binary_encoding(100, 10), edges, np.arange(11))
    fig = wf.binary_figure(B, edges[:-1], edges[1:] - 1, title="seed 003", transpose=True)
    (heatmap,) = fig.data
    np.testing.assert_array_equal(heatmap.z, seed.T)  # matshow(x.T): bits down, tokens across
    assert fig.layout.yaxis.autorange == "reversed"  # bit 0 on top, as matshow
    assert fig.layout.xaxis.title.text == "position k"
    assert fig.layout.yaxis.title.text == "bit j (least significant first)"
    assert heatmap.colorbar.title.text == "bit"
    assert list(heatmap.x[:2]) == ["position k = 0", "position k = 1"]
    assert heatmap.y[3] == "bit j = 3 (period 2^4 = 16 positions)"


def test_binary_figure_block_averages_at_the_largest_view():
    L, bits = 16384, 16
    edges = pe_core.block_edges(L, wf.BINARY_MAX_ROWS)
    B = pe_core.binary_encoding(L, bits)
    blocks = pe_core.block_average(B, edges, np.arange(bits + 1))
    fig = wf.binary_figure(blocks, edges[:-1], edges[1:] - 1, title="big")
    z = fig.data[0].z
    assert z.shape == (wf.BINARY_MAX_ROWS, 16)
    # The block of positions a..b: fraction of k in a..b with bit j set, counted directly.
    a, b = edges[7], edges[8] - 1
    k = np.arange(a, b + 1)
    np.testing.assert_allclose(z[7], [np.mean((k >> j) & 1) for j in range(bits)], atol=1e-6)
    assert fig.data[0].colorbar.title.text == "fraction of ones"
    assert fig.data[0].y[7] == f"position k = {a}..{b} (mean of {b - a + 1})"
    assert payload(fig) < CHART_BUDGET


def test_periods_figure():
    d, n, L = 512, 1e6, 100
    fig = wf.periods_figure(pe_core.bit_periods(10), pe_core.wavelengths(d, n), L)
    bits, pairs, length = fig.data
    np.testing.assert_array_equal(bits.x, [2.0 ** (j + 1) for j in range(10)])
    np.testing.assert_allclose(pairs.x, [2 * math.pi * n ** (2 * i / d) for i in range(256)], rtol=1e-12)
    np.testing.assert_array_equal(pairs.customdata, np.arange(256))
    assert set(bits.y) == {"bit j: period 2^(j+1)"} and set(pairs.y) == {"pair i: wavelength 2π/ω_i"}
    assert fig.layout.xaxis.type == "log"
    assert list(length.x) == [L, L] and not fig.layout.shapes  # no log10-coordinate shapes
    assert fig.layout.xaxis.title.text == "period, wavelength (positions, log scale)"
    assert payload(fig) < 100_000


def test_periods_table_shows_a_dash_where_a_row_has_no_bit():
    table = wf.periods_table(pe_core.bit_periods(3), pe_core.wavelengths(10, 100.0))
    assert np.isnan(table.iloc[4, 1]) and table.to_numpy().dtype.kind == "f"  # the download stays numeric
    html = wf.periods_display(table).to_html()
    assert "—" in html and "None" not in html and "nan" not in html.lower()
    assert "16,384" in wf.periods_display(wf.periods_table(pe_core.bit_periods(14), np.ones(2))).to_html()


def test_distance_figure_hamming_jumps_and_sse_is_the_closed_form():
    L, d, n, ref = 64, 16, 100.0, 5
    hamming = pe_core.hamming_distance(pe_core.binary_encoding(L, 6), ref)
    sse = pe_core.sse_by_offset(np.arange(L) - ref, d, n)
    fig = wf.distance_by_offset_figure(hamming, sse, ref=ref, bits=6)
    top, bottom = fig.data
    assert (top.x0, top.dx, bottom.x0) == (-ref, 1, -ref)
    np.testing.assert_array_equal(top.y, [bin(k ^ ref).count("1") for k in range(L)])
    P = np.array(
        [[f(k * n ** (-2 * i / d)) for i in range(d // 2) for f in (math.sin, math.cos)] for k in range(L)]
    )
    np.testing.assert_allclose(bottom.y, ((P - P[ref]) ** 2).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert fig.layout.yaxis.title.text == "Hamming distance (bits)"
    assert fig.layout.yaxis2.title.text == "SSE ‖P[k] − P[ref]‖²"
    assert fig.layout.xaxis2.title.text.startswith("offset k − ref")


def test_distance_figure_payload_at_the_largest_view():
    L, ref = 16384, 100
    hamming = pe_core.hamming_distance(pe_core.binary_encoding(L, 14), ref)
    sse = pe_core.sse_by_offset(np.arange(L) - ref, 2048)
    fig = wf.distance_by_offset_figure(hamming, sse, ref=ref, bits=14)
    assert payload(fig) < 100_000
    # Drawn as min/max envelopes: exact points at their offsets, every extreme kept.
    for trace, values in zip(fig.data, (hamming, sse), strict=True):
        assert trace.x.size <= figures.LINE_MAX_POINTS and (trace.x[0], trace.x[-1]) == (-ref, L - 1 - ref)
        assert "envelope" in trace.hovertemplate
        np.testing.assert_allclose(trace.y, values[trace.x + ref], rtol=1e-6)
        assert trace.y.max() == pytest.approx(values.max(), rel=1e-6)
        assert trace.y.min() == pytest.approx(values.min(), rel=1e-6)
    with pytest.raises(ValueError):
        wf.distance_by_offset_figure(np.zeros(3), np.zeros(4), ref=0, bits=2)


def test_sse_by_abs_offset_is_the_closed_form():
    from explorer import compute

    settings = Settings(d=256, n=10000.0, L=16384)  # compute.dot_by_offset sums it in two chunks
    values = compute.sse_by_abs_offset(settings)
    assert values.shape == (16384,)
    picks = np.array([0, 1, 8191, 8192, 16383])
    expected = [256 - 2 * sum(math.cos(t * 10000.0 ** (-2 * i / 256)) for i in range(128)) for t in picks]
    np.testing.assert_allclose(values[picks], expected, rtol=0, atol=1e-9)


# --------------------------------------------------------------------------------------
# The text boxes: lists of whole numbers
# --------------------------------------------------------------------------------------


def parse(raw, **limits):
    kwargs = {"default": "0,4,8,12", "low": 0, "high": 10**7, "max_count": 8} | limits
    return parse_int_list("wave_positions", raw, **kwargs)


def test_parse_int_list_keeps_clean_lists_silently():
    assert parse("0,4,8,12") == ("0,4,8,12", [])
    assert parse(" 1; 2  3 ") == ("1,2,3", [])


@pytest.mark.parametrize("raw", ["", "   ", "abc", ",,,", "x" * 300])
def test_parse_int_list_falls_back_to_the_default(raw):
    value, notices = parse(raw)
    assert value == "0,4,8,12" and len(notices) == 1


def test_parse_int_list_clamps_drops_and_caps_in_one_line():
    value, notices = parse("-3, 99999999999999999999999, 5, 5, 1.5, nan, [a](javascript:alert(1))")
    assert value == "0,10000000,5"
    assert len(notices) == 1
    for part in ("`1.5`", "`nan`", "moved 2", "dropped 1 repeat"):
        assert part in notices[0]
    assert "(" not in notices[0].split("ignored", 1)[1].split("(not", 1)[0]  # no markdown echoed back
    value, notices = parse(",".join(map(str, range(20))))
    assert value == "0,1,2,3,4,5,6,7" and "first 8 of 20" in notices[0]
    clamped = ("127,2", ["wave_positions: moved 1 value(s) into 0..127."])
    assert parse("300,2", high=127, default="0,1") == clamped
