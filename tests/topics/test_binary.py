"""explorer.topics.binary holds the numbers seed 003 computes: binary codes, bit periods against
wavelengths, Hamming distance against SSE.

Each expected value is written here from the formula (or the seed's own loop, re-typed),
independently of explorer; payload sizes are checked at the largest view.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from plotly.subplots import make_subplots
from support.app_runs import PAGE_BY_KEY, open_page
from support.independent import assert_same_as_validated, payload
from support.seed_code import seed003_binary_representation

import pe_core
from explorer import figures
from explorer.settings import Settings
from explorer.topics import binary
from explorer.ui import cached

CHART_BUDGET = 1_500_000


# --------------------------------------------------------------------------------------
# Seed 003: binary codes with width 10, periods, Hamming distance against SSE
# --------------------------------------------------------------------------------------


def test_binary_figure_reproduces_seed003_width_10_map():
    seed = seed003_binary_representation(range(100)).astype(float)
    edges = pe_core.block_edges(100, figures.heatmap_grid(100, 512, transpose=True)[0])
    B = pe_core.block_average(pe_core.binary_encoding(100, 10), edges, np.arange(11))
    fig = binary.binary_figure(B, edges[:-1], edges[1:] - 1, title="seed 003", transpose=True)
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
    rows = figures.heatmap_grid(L, 2048, power_of_two_columns=True)[0]
    edges = pe_core.block_edges(L, rows)
    B = pe_core.binary_encoding(L, bits)
    blocks = pe_core.block_average(B, edges, np.arange(bits + 1))
    fig = binary.binary_figure(blocks, edges[:-1], edges[1:] - 1, title="big")
    z = fig.data[0].z
    assert z.shape == (rows, 16) and rows < L
    # The block of positions a..b: fraction of k in a..b with bit j set, counted directly.
    a, b = edges[7], edges[8] - 1
    k = np.arange(a, b + 1)
    np.testing.assert_allclose(z[7], [np.mean((k >> j) & 1) for j in range(bits)], atol=1e-6)
    assert fig.data[0].colorbar.title.text == "fraction of ones"
    assert fig.data[0].y[7] == f"position k = {a}..{b} (mean of {b - a + 1})"
    assert payload(fig) < CHART_BUDGET


def test_periods_figure():
    d, n, L = 512, 1e6, 100
    fig = binary.periods_figure(pe_core.bit_periods(10), pe_core.wavelengths(d, n), L)
    bits, pairs, length = fig.data
    np.testing.assert_array_equal(bits.x, [2.0 ** (j + 1) for j in range(10)])
    np.testing.assert_allclose(pairs.x, [2 * math.pi * n ** (2 * i / d) for i in range(256)], rtol=1e-12)
    np.testing.assert_array_equal(pairs.customdata, np.arange(256))
    assert set(bits.y) == {"bit j: period 2^(j+1)"} and set(pairs.y) == {"pair i: wavelength 2π/ω_i"}
    assert fig.layout.xaxis.type == "log"
    assert list(length.x) == [L, L] and not fig.layout.shapes  # no log10-coordinate shapes
    assert fig.layout.xaxis.title.text == "period, wavelength<br>(positions, log scale)"
    assert payload(fig) < 100_000


def test_periods_figure_labels_the_length_between_the_rows_clear_of_the_axis():
    fig = binary.periods_figure(pe_core.bit_periods(7), pe_core.wavelengths(128, 1e4), 100)
    # Not at the line's ends, where the rows' marks and the axis's tick labels are (it lay on bit 6's tick).
    assert fig.data[2].text is None and fig.data[2].mode == "lines"
    (label,) = fig.layout.annotations
    assert label.text == "L = 100" and label.yref == "y" and label.y == 0.5  # halfway between the two rows
    assert label.x == pytest.approx(2.0) and label.xanchor == "left"  # log10(100): right of the dotted line


def test_periods_note_says_why_a_row_is_empty():
    assert binary.periods_note(7, 7) == ""
    assert "no bit j = 7 or above" in binary.periods_note(7, 64) and "7 bits" in binary.periods_note(7, 64)
    assert "no pair i = 1 or above" in binary.periods_note(10, 1) and "1 pair." in binary.periods_note(10, 1)


@pytest.mark.parametrize(("L", "seven", "eight"), [(16, "1110", "0001"), (100, "1110000", "0001000")])
def test_page_writes_its_example_codes_as_its_table_does_least_significant_bit_first(
    L: int, seven: str, eight: str
) -> None:
    at = open_page(PAGE_BY_KEY["binary"], {"L": str(L), "ref": "4"})
    table = next(t.value for t in at.dataframe if "binary code (LSB first)" in t.value.columns)
    codes = dict(zip(table["position k"], table["binary code (LSB first)"], strict=True))
    assert (codes[7], codes[8]) == (seven, eight)
    assert f"7 and 8, {seven} and {eight} written least significant bit first" in " ".join(
        element.value for element in at.markdown
    )


def test_periods_table_shows_a_dash_where_a_row_has_no_bit():
    table = binary.periods_table(pe_core.bit_periods(3), pe_core.wavelengths(10, 100.0))
    assert np.isnan(table.iloc[4, 1]) and table.to_numpy().dtype.kind == "f"  # the download stays numeric
    # On the page (4 bits, 64 pairs): the missing bits are shown as the placeholder, the numbers
    # to 6 significant digits with thousands separators (Streamlit's column format, as "16,384").
    at = open_page(PAGE_BY_KEY["binary"], {"L": "16", "d": "128"})
    (shown,) = [t for t in at.dataframe if "bit j / pair i" in t.value.columns]
    assert shown.proto.placeholder == "—" and "None" not in shown.proto.placeholder
    assert shown.value.iloc[4:, 1].isna().all() and shown.value.iloc[:4, 1].tolist() == [2.0, 4.0, 8.0, 16.0]
    formats = json.loads(shown.proto.columns)
    assert {formats[column]["type_config"]["format"] for column in shown.value.columns[1:]} == {"%,.6g"}


def test_distance_figure_hamming_jumps_and_sse_is_the_closed_form():
    L, d, n, ref = 64, 16, 100.0, 5
    hamming = pe_core.hamming_distance(pe_core.binary_encoding(L, 6), ref)
    sse = pe_core.sse_by_offset(np.arange(L) - ref, d, n)
    fig = binary.distance_by_offset_figure(hamming, sse, ref=ref, bits=6)
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
    fig = binary.distance_by_offset_figure(hamming, sse, ref=ref, bits=14)
    assert payload(fig) < 100_000
    # Drawn as min/max envelopes: exact points at their offsets, every extreme kept.
    for trace, values in zip(fig.data, (hamming, sse), strict=True):
        assert trace.x.size <= figures.LINE_MAX_POINTS and (trace.x[0], trace.x[-1]) == (-ref, L - 1 - ref)
        assert "envelope" in trace.hovertemplate
        np.testing.assert_allclose(trace.y, values[trace.x + ref], rtol=1e-6)
        assert trace.y.max() == pytest.approx(values.max(), rel=1e-6)
        assert trace.y.min() == pytest.approx(values.min(), rel=1e-6)
    with pytest.raises(ValueError):
        binary.distance_by_offset_figure(np.zeros(3), np.zeros(4), ref=0, bits=2)


def test_sse_by_abs_offset_is_the_closed_form():
    settings = Settings(d=256, n=10000.0, L=16384)  # cached.dot_from_zero sums it in two chunks
    values = cached.sse_by_abs_offset(settings)
    assert values.shape == (16384,)
    picks = np.array([0, 1, 8191, 8192, 16383])
    expected = [256 - 2 * sum(math.cos(t * 10000.0 ** (-2 * i / 256)) for i in range(128)) for t in picks]
    np.testing.assert_allclose(values[picks], expected, rtol=0, atol=1e-9)


def test_code_blocks_are_seed003s_codes_and_their_exact_block_fractions():
    edges, blocks = binary.code_blocks(100, 10, 100)
    assert edges.tolist() == list(range(101))  # one position per row: seed 003's map itself
    np.testing.assert_array_equal(blocks, seed003_binary_representation(range(100)).astype(float))
    L = 5000
    edges, blocks = binary.code_blocks(L, 13, figures.heatmap_grid(L, 512)[0])
    bits = (np.arange(L)[:, None] >> np.arange(13)) & 1  # bit j of k, least significant first
    for row in (0, len(edges) // 2, len(edges) - 2):
        np.testing.assert_allclose(blocks[row], bits[edges[row]:edges[row + 1]].mean(axis=0), rtol=0, atol=1e-15)


@pytest.mark.parametrize(("L", "bits", "ref"), [(1, 1, 0), (100, 7, 5), (3000, 12, 2999)])
def test_figures_built_without_validation_are_the_validated_ones(L: int, bits: int, ref: int) -> None:
    """The periods and distance charts skip Plotly's validation (figures.figure): validated,
    each is the same JSON; the distance chart's panels are make_subplots' own."""
    hamming = pe_core.hamming_distance(pe_core.binary_encoding(L, bits), ref)
    sse = pe_core.sse_by_offset(np.arange(L) - ref, 16)
    distance = binary.distance_by_offset_figure(hamming, sse, ref=ref, bits=bits)
    assert_same_as_validated(distance)
    assert_same_as_validated(binary.periods_figure(pe_core.bit_periods(bits), pe_core.wavelengths(16, 1e4), L))
    panels = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=("a", "b"))
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        drawn = distance.layout[axis].to_plotly_json()
        assert {key: drawn[key] for key in panels.layout[axis].to_plotly_json()} == panels.layout[axis].to_plotly_json()
    for title, made in zip(distance.layout.annotations, panels.layout.annotations, strict=True):
        assert title.to_plotly_json() | {"text": made.text} == made.to_plotly_json()
