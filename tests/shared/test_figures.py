"""explorer.figures: the shared builders' axes, ticks and the reductions that keep charts fast.

Expected values are written from what a reader should see (round tick numbers, exact
points of the line, the positions a block stands for), not from the implementation.
"""

from __future__ import annotations

import base64
import copy
import json

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit as st
from _plotly_utils.utils import convert_to_base64
from support.independent import assert_same_as_validated

import pe_core
from explorer import figures
from explorer.topics import attention, contexts, matrix, relative, waves


def starts_of_blocks(size: int, blocks: int) -> np.ndarray:
    return pe_core.block_edges(size, blocks)[:-1]


def tick_texts(size: int, blocks: int = 256, count: int = 8) -> list[str]:
    starts = starts_of_blocks(size, blocks)
    labels = [f"block from {a}" for a in starts]
    chosen, texts = figures.round_ticks(labels, starts, count)
    # Each tick names the category it sits on by that category's first number: exact.
    assert [labels.index(c) for c in chosen] == sorted(labels.index(c) for c in chosen)
    assert all(c == f"block from {t}" for c, t in zip(chosen, texts, strict=True))
    return texts


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (4, ["0", "1", "2", "3"]),
        (50, ["0", "5", "10", "15", "20", "25", "30", "35", "40", "45"]),
        (100, ["0", "10", "20", "30", "40", "50", "60", "70", "80", "90"]),
        (300, ["0", "50", "100", "150", "200", "250"]),
        # 256 blocks of 64 positions: no multiple of 1000 starts a block, powers of two do.
        (16384, ["0", "2048", "4096", "6144", "8192", "10240", "12288", "14336"]),
    ],
)
def test_round_ticks_land_on_round_first_positions(size: int, expected: list[str]) -> None:
    assert tick_texts(size) == expected


def test_round_ticks_take_quarter_steps_that_land_exactly() -> None:
    """1000 positions in 192 blocks: 250, 500, 750 start blocks, 100, 200 ... do not."""
    assert tick_texts(1000, 192) == ["0", "250", "500", "750"]


def test_round_ticks_fall_back_to_the_blocks_nearest_round_numbers() -> None:
    """3000 positions in 256 blocks: no step lands exactly, so each tick is the block whose
    first position is nearest a multiple of 500, and shows that first position."""
    texts = [int(t) for t in tick_texts(3000)]
    starts = starts_of_blocks(3000, 256)
    assert texts[0] == 0 and len(texts) >= 4
    for text, multiple in zip(texts, range(0, 3000, 500), strict=False):
        assert text in starts
        assert abs(text - multiple) == np.abs(starts - multiple).min()


def test_round_ticks_on_encoding_columns() -> None:
    """d = 2048 in 256 drawn columns (runs of 8 pairs, sines and cosines apart)."""
    is_sine, first, _ = pe_core.column_groups(2048, "interleaved", 256)
    columns = 2 * first + np.where(is_sine, 0, 1)
    labels = [f"c{c}" for c in columns]
    _, texts = figures.round_ticks(labels, columns, count=10)
    assert texts == ["0", "256", "512", "768", "1024", "1280", "1536", "1792"]
    is_sine, first, _ = pe_core.column_groups(512, "concatenated", 256)
    columns = np.where(is_sine, first, 256 + first)
    _, texts = figures.round_ticks([str(c) for c in columns], columns, count=10)
    assert texts == [str(c) for c in range(0, 501, 50)]


def test_round_ticks_small_and_mismatched() -> None:
    assert figures.round_ticks(["a", "b"], [0, 1]) == (["a", "b"], ["0", "1"])
    assert figures.round_ticks([], []) == ([], [])
    with pytest.raises(ValueError):
        figures.round_ticks(["a"], [0, 1])


def test_encoding_figure_ticks_are_round_at_the_largest_view() -> None:
    rows, cols = figures.heatmap_grid(16384, 2048)
    reduced = pe_core.encoding_block_average(16384, 2048, max_rows=rows, max_cols=cols)
    w = pe_core.frequencies(2048)
    labels, ticks = figures.encoding_axis_labels(
        reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w, "interleaved"
    )
    fig = figures.encoding_figure(reduced.values, reduced.row_first, reduced.row_last, labels, ticks, title="P")
    assert list(fig.layout.yaxis.ticktext) == ["0", "2048", "4096", "6144", "8192", "10240", "12288", "14336"]
    assert fig.layout.yaxis.tickvals[1] == "position k = 2048..2175 (mean of 128)"
    assert list(fig.layout.xaxis.ticktext)[:3] == ["0", "256", "512"]
    assert fig.data[0].z.shape == (128, 288)
    assert fig.data[0].z.size <= figures.BLOCK_AVERAGE_CELLS
    assert (fig.layout.xaxis.type, fig.layout.yaxis.type, fig.layout.yaxis.autorange) == ("category", "category",
                                                                                         "reversed")
    transposed = figures.encoding_figure(
        reduced.values, reduced.row_first, reduced.row_last, labels, ticks, title="P", transpose=True
    )
    assert list(transposed.layout.xaxis.ticktext)[:2] == ["0", "2048"]
    assert transposed.layout.xaxis.title.text == "position k"


@pytest.mark.parametrize(("colorscale", "zrange", "transpose"), [
    (figures.DIVERGING, (-1.0, 1.0), False),
    (figures.CYCLIC, (0.0, 360.0), True),
    (figures.SEQUENTIAL, None, False),
])
def test_heatmaps_built_without_validation_are_the_validated_ones(colorscale, zrange, transpose) -> None:
    """heatmap_figure skips Plotly's validation (figures.figure): the same figure validated is the same JSON."""
    values = np.arange(12.0).reshape(3, 4) / 12
    fig = figures.heatmap_figure(
        values, row_labels=["a", "b", "c"], col_labels=["w", "x", "y", "z"], row_ticks=(["a", "c"], ["0", "2"]),
        title="t", x_title="x", y_title="y", colorscale=colorscale, zrange=zrange, transpose=transpose,
    )
    assert_same_as_validated(fig)
    # Sent as the scale's stops, as validation sends it (Plotly.js's own "RdBu" is another scale).
    assert not isinstance(fig.to_plotly_json()["data"][0]["colorscale"], str)
    assert ("zmid" in fig.to_plotly_json()["data"][0]) == (colorscale == figures.DIVERGING)


def test_a_plain_figure_with_a_wrong_property_is_refused_when_validated() -> None:
    """What the checks above rely on: validation still refuses a property Plotly does not know."""
    fig = figures.figure([{"type": "scatter", "y": [1, 2], "colour": "red"}], {})
    with pytest.raises(ValueError, match="colour"):
        assert_same_as_validated(fig)


# --------------------------------------------------------------------------- log axes


@pytest.mark.parametrize(("values", "ticks"), [
    # n = 100: two decades, where Plotly's digits 6..9 would overlap
    (100.0 ** (-np.arange(32) / 32), ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"]),
    (np.array([6.3, 62.8]), ["10", "20", "50"]),
    (10000.0 ** (-np.arange(1024) / 1024), None),  # four decades: Plotly's own ticks are readable
])
def test_log_axes_on_short_ranges_label_only_1_2_5(values: np.ndarray, ticks: list[str] | None) -> None:
    fig = figures.line_figure(np.arange(values.size), {"ω_i": values}, title="t", x_title="pair i",
                              y_title="ω_i", log_y=True)
    assert fig.layout.yaxis.type == "log"
    assert (None if fig.layout.yaxis.ticktext is None else list(fig.layout.yaxis.ticktext)) == ticks
    if ticks:
        np.testing.assert_allclose(fig.layout.yaxis.tickvals, [float(t) for t in ticks])
    assert fig.layout.xaxis.type != "log"
    np.testing.assert_array_equal(fig.data[0].y, values)
    assert fig.layout.legend.orientation == "h" and fig.layout.title.text == "t"


def test_line_figure_is_the_figure_plotly_validates() -> None:
    """line_figure builds its figure without Plotly's validation: built again with it, the figure
    is the same, and a wrong key is caught there."""
    x = np.array([1, 10, 100, 1000])
    series = {"a": np.array([1.0, 2.0, np.nan, 4.0]), "b": np.array([0.5, 0.25, 0.125, 0.0625])}
    fig = figures.line_figure(x, series, title="t", x_title="k", y_title="error", log_x=True, log_y=True,
                              hover_format=".3g", line_styles={"a": {"color": "#1f77b4", "dash": "dot", "width": 2}},
                              legend={"orientation": "h", "y": -0.35}, y_axis={"exponentformat": "power"})
    assert go.Figure(fig.to_dict()).to_dict() == fig.to_dict()
    assert fig.data[0].line.dash == "dot" and fig.data[1].line.dash is None
    assert fig.layout.legend.y == -0.35 and fig.layout.yaxis.exponentformat == "power"
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.type == "log"
    wrong = figures.line_figure(x, series, title="t", x_title="k", y_title="error",
                                line_styles={"a": {"dashes": "dot"}})
    with pytest.raises(ValueError, match="dashes"):
        go.Figure(wrong.to_dict())


# --------------------------------------------------------------------------- long lines


def test_line_xy_sends_short_lines_whole_and_long_ones_as_their_envelope() -> None:
    short = figures.line_xy(np.arange(5.0), x0=-2, dtype=np.float32)
    assert (short["x0"], short["dx"]) == (-2, 1) and short["y"].dtype == np.float32
    assert figures.envelope_note(5) == ""
    t = np.arange(-16383, 16384)
    y = np.cos(0.9 * t)
    long = figures.line_xy(y, x0=-16383)
    assert "x0" not in long and long["x"].size <= figures.LINE_MAX_POINTS
    np.testing.assert_array_equal(long["y"], np.cos(0.9 * long["x"]))  # exact points of the line
    assert long["y"].max() == y.max() and long["y"].min() == y.min()
    note = figures.envelope_note(y.size, "offset")
    assert "32,767 offsets" in note and "min/max envelope" in note and "999 bins" in note


def test_averaging_note_names_the_pairs_faster_than_a_block() -> None:
    w = pe_core.frequencies(2048)
    edges = pe_core.block_edges(16384, 256)
    note = figures.averaging_note(edges[:-1], edges[1:] - 1, w)
    fast = int(np.sum(2 * np.pi / w < 64))
    assert "block of about 64 consecutive positions" in note and f"the {fast:,} fastest pairs" in note
    assert "not an error" in note
    assert figures.averaging_note(np.arange(5), np.arange(5), w) == ""


@pytest.mark.parametrize(
    ("rows", "cols", "transpose"),
    [(4, 4, False), (50, 512, False), (100, 512, False), (100, 512, True), (1000, 32, False)],
)
def test_heatmap_grid_draws_a_matrix_that_fits_whole(rows: int, cols: int, transpose: bool) -> None:
    """Seed figures (and anything within the cell budget and a pixel per row and column) whole."""
    assert figures.heatmap_grid(rows, cols, transpose=transpose) == (rows, cols)


@pytest.mark.parametrize(
    ("rows", "cols", "transpose", "across"),
    [(16384, 2048, False, figures.PLOT_COLS), (16384, 2048, True, figures.PLOT_COLS), (50, 2048, False, 400),
     (16384, 2, False, figures.PLOT_COLS), (3001, 777, False, figures.PLOT_COLS), (1000, 128, True, 400)],
)
def test_heatmap_grid_reduces_a_larger_matrix_to_the_screen(rows: int, cols: int, transpose: bool, across: int) -> None:
    grid_rows, grid_cols = figures.heatmap_grid(rows, cols, transpose=transpose, across=across)
    assert 1 <= grid_rows <= rows and 1 <= grid_cols <= cols and (grid_rows, grid_cols) != (rows, cols)
    assert grid_rows * grid_cols <= figures.BLOCK_AVERAGE_CELLS
    down, wide = (grid_cols, grid_rows) if transpose else (grid_rows, grid_cols)
    assert down <= figures.PLOT_ROWS and wide <= across  # a pixel or more per cell
    # The budget is used, not wasted on an axis that could not take more.
    assert grid_rows * grid_cols >= 0.6 * figures.BLOCK_AVERAGE_CELLS or grid_cols == cols or grid_rows == rows


def test_heatmap_grid_prefers_equal_blocks_of_positions() -> None:
    assert figures.heatmap_grid(16384, 2048)[0] == 128  # blocks of exactly 128 positions
    assert 10000 % figures.heatmap_grid(10000, 512)[0] == 0
    with pytest.raises(ValueError, match="at least one row"):
        figures.heatmap_grid(0, 5)


def test_heatmap_height_gives_rows_a_pixel_or_two() -> None:
    assert figures.heatmap_height(100) == figures.HEATMAP_HEIGHT
    assert figures.heatmap_height(512, transpose=True) == 2 * 512 + 120
    assert figures.heatmap_height(10_000) == figures.MAX_HEATMAP_HEIGHT


# --- in front of a class and on a phone (issue 20) ---------------------------------------


LONG_TITLE = "Largest |P̃[k, j] − P[k, j]| over the 128 columns (L=100, d=128, n=10000, interleaved, paper)"


def test_long_titles_wrap_between_words_to_lines_a_phone_holds() -> None:
    lines = figures.wrapped(LONG_TITLE).split("<br>")
    assert len(lines) == 3
    assert all(len(line) <= figures.TITLE_LINE_CHARS for line in lines)
    assert " ".join(lines) == LONG_TITLE  # broken at spaces only, nothing lost
    assert figures.wrapped("Waves") == "Waves"
    assert figures.wrapped("already<br>two lines") == "already<br>two lines"


def test_fit_title_makes_room_for_the_lines_it_adds_and_keeps_the_plot() -> None:
    # Validated go.Figure, title set and not yet fitted (figures.figure fits it as it builds).
    fig = go.Figure(layout={"title": figures.chart_title(LONG_TITLE), "height": 420, "margin": {"t": 60}})
    height, top, pad = fig.layout.height, fig.layout.margin.t, fig.layout.title.pad.t
    figures.fit_title(fig)
    assert fig.layout.title.text == figures.wrapped(LONG_TITLE)
    added = 2 * figures.TITLE_LINE_PX  # two lines more
    assert (fig.layout.height, fig.layout.margin.t) == (height + added, top + added)
    assert fig.layout.height - fig.layout.margin.t == height - top  # the plot and what is below it keep their size
    assert fig.layout.title.pad.t == pad + added / 2  # Plotly centres the lines on the anchor
    again = (fig.layout.height, fig.layout.margin.t, fig.layout.title.text)
    figures.fit_title(fig)  # already wrapped: unchanged
    assert (fig.layout.height, fig.layout.margin.t, fig.layout.title.text) == again


def relative_luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (0..255 per channel)."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    low, high = sorted((relative_luminance(a), relative_luminance(b)))
    return (high + 0.05) / (low + 0.05)


#: Streamlit's light and dark themes' page backgrounds, on which the charts are drawn.
BACKGROUNDS = {"light": (255, 255, 255), "dark": (14, 17, 23)}


def test_trail_colours_are_seen_on_both_themes() -> None:
    """Every colour of the scale, between its stops too, keeps WCAG's 3:1 for graphics on both
    backgrounds; Viridis, which it replaced, does not (its dark end on the dark theme)."""
    def samples(scale) -> list[tuple[float, ...]]:
        return [tuple(float(c) for c in color.strip("rgb()").split(","))
                for color in plotly.colors.sample_colorscale(scale, np.linspace(0, 1, 41))]

    for background in BACKGROUNDS.values():
        assert min(contrast(color, background) for color in samples(figures.ON_BOTH_THEMES)) >= 3.0
    assert min(contrast(color, BACKGROUNDS["dark"]) for color in samples(figures.SEQUENTIAL)) < 1.5
    # Phase is cyclic: taken whole, the last position would have the first one's colour.
    colours = samples(figures.ON_BOTH_THEMES)
    assert max(abs(a - b) for a, b in zip(colours[0], colours[-1], strict=True)) > 60


# --- figures.Figure: Plotly's dict for less ------------------------------------------------------

ARRAYS = [
    np.linspace(-1, 1, 7), np.linspace(-1, 1, 7).astype(np.float32), np.arange(5, dtype=np.int8),
    np.arange(300, dtype=np.uint16), np.arange(-3, 4, dtype=np.int32), np.arange(5), np.array([-300, 5]),
    np.array([0, 70000]), np.array([0, 2**40]), np.arange(3, dtype=np.uint64), np.array([1, 2**63], dtype=np.uint64),
    np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4).T,
    np.arange(10.0)[::3], np.array([True, False]), np.array(["a", "b"]), np.array(["ab", "c"])[::-1],
    np.zeros(0), np.float64(2.5) * np.ones(()),
]


@pytest.mark.parametrize("array", ARRAYS, ids=range(len(ARRAYS)))
def test_an_encoded_copy_is_what_plotly_writes(array: np.ndarray) -> None:
    """Every kind of array (types Plotly.js reads, 64-bit integers Plotly narrows, 2-D, strided,
    non-numeric, empty, 0-d) as a dict's value, in lists and tuples, directly in a list (left an
    array), under a key Plotly does not encode, and the value left as it was."""
    value = {"x": array, "list": [{"y": array}, array], "tuple": ({"z": array},), "range": array, "n": 1,
             "s": "a", "none": None, "scalar": np.float64(0.5)}
    ours = figures.encoded_copy(value)
    theirs = copy.deepcopy(value)
    convert_to_base64(theirs)
    assert pio.to_json(ours, validate=False) == pio.to_json(theirs, validate=False)
    assert value["x"] is array and value["list"][0]["y"] is array


def test_a_figure_dict_is_plotly_s_and_leaves_the_figure_as_it_was() -> None:
    traces = [go.Heatmap(z=np.arange(6.0).reshape(2, 3).astype(np.float32), x=["a", "b", "c"], y=["p", "q"]),
              go.Scatter(x=np.arange(4), y=np.linspace(0, 1, 4), marker={"size": [0, 10, 0, 10]})]
    layout = {"title": {"text": "t"}, "xaxis": {"range": [0, 3]}}
    frames = [go.Frame(data=[go.Scatter(y=np.ones(4))], traces=[1], name="1")]
    plain, ours = go.Figure(traces, layout, frames), figures.Figure(traces, layout, frames)
    assert json.loads(ours.to_json()) == json.loads(plain.to_json())
    # The arrays are shared, not encoded in place: the figure still holds them.
    ours.to_dict()
    np.testing.assert_array_equal(ours.data[1].y, np.linspace(0, 1, 4))


def test_an_unvalidated_figure_writes_named_colour_scales_as_validation_does() -> None:
    """named_colorscale is worked out once per name (a hit the second time; another name its own)."""
    figures.named_colorscale.cache_clear()
    assert figures.named_colorscale(figures.CYCLIC) is figures.named_colorscale(figures.CYCLIC)
    assert figures.named_colorscale.cache_info().hits == 1
    assert figures.named_colorscale(figures.DIVERGING) != figures.named_colorscale(figures.CYCLIC)
    data = [{"type": "heatmap", "z": np.eye(2), "colorscale": figures.named_colorscale(name)}
            for name in (figures.DIVERGING, figures.CYCLIC)]
    fig = figures.figure(data, {"title": {"text": "t"}})
    checked = go.Figure(data=[{"type": "heatmap", "z": np.eye(2), "colorscale": name}
                              for name in (figures.DIVERGING, figures.CYCLIC)], layout={"title": {"text": "t"}})
    assert json.loads(fig.to_json()) == json.loads(checked.to_json())


def _unvalidated_figures() -> dict[str, object]:
    """Every figure built from plain dicts without Plotly's validation (figures.figure), one each."""
    w = pe_core.frequencies(512)
    reduced = pe_core.encoding_block_average(3000, 512, max_rows=100, max_cols=128)
    labels, ticks = figures.encoding_axis_labels(reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w,
                                                 "interleaved")
    dims = relative.transition_window_dims(512, "concatenated", 40, 128)
    return {
        "heatmap": lambda: figures.heatmap_figure(np.eye(3), row_labels=list("abc"), col_labels=list("xyz"),
                                                  row_ticks=(["a"], ["0"]), title="t", x_title="x", y_title="y"),
        "encoding": lambda: figures.encoding_figure(reduced.values, reduced.row_first, reduced.row_last, labels,
                                                    ticks, title="t", transpose=True),
        "angles": lambda: figures.encoding_figure(np.zeros((2, 3)), np.arange(2), np.arange(2), list("abc"),
                                                  ["0", "1", "2"], title="t", colorscale=figures.CYCLIC,
                                                  zrange=(0.0, 360.0)),
        "transition": lambda: relative.transition_figure(
            relative.transition_window(-10, 512, 1e4, layout="concatenated", convention="paper", dims=dims), dims,
            d=512, layout="concatenated", delta=-10, title="t"),
        "shift play": lambda: relative.shift_play_figure(100, 64, 1e4, layout="interleaved", convention="paper",
                                                         delta=-7),
        "rotation": lambda: relative.rotation_figure(0.5, -2.0, pair=1, k=3, delta=-4, axis_names=("s", "c")),
        "profiles": lambda: waves.position_profile_figure([0, 4, 8, 12, 16], w[:100], title="t"),
        "profile play": lambda: waves.profile_play_figure(w[:100], title="t"),
        "columns": lambda: waves.columns_over_positions_figure(np.ones((300, 2)), ["a", "b"], title="t", first=7),
        "circle": lambda: waves.unit_circle_figure(float(w[2]), 3000, pair=2),
        "circle play": lambda: waves.unit_circle_play_figure(float(w[2]), np.arange(10, 70), pair=2, shown=30),
        "rates": lambda: matrix.rates_figure(w),
        "rates of two pairs": lambda: matrix.rates_figure(w[:2]),
        **{f"attention {name}": build for name, build in _attention_figures().items()},
        **{f"contexts {name}": build for name, build in _contexts_figures().items()},
    }


def _attention_figures() -> dict[str, object]:
    L, d, query = 3000, 64, 40
    view = attention.View(causal=False, heads=4, head=2)
    offsets = np.arange(L, dtype=np.float64)
    scores = attention.offset_scores(L, d, view, sinusoid_from_zero=pe_core.dot_by_offset(offsets, d),
                                     rope_from_zero=pe_core.rope_dot_by_offset(offsets, d, 1e4))
    bits = attention.learned_bits(L, d)
    by_key = attention.query_scores(scores, bits, query, d, view)
    weights = attention.query_weights(by_key, query, view.causal)
    queries = attention.play_queries(L, len(view.schemes))
    return {
        "scores": lambda: attention.scores_figure(scores, view, d, title="t"),
        "weights": lambda: attention.weights_figure(weights, query, view.causal, title="t"),
        "learned": lambda: attention.learned_figure(by_key["learned"], query, view, d, title="t"),
        "play": lambda: attention.play_figure(attention.play_weights(scores, bits, d, view, queries), queries, L,
                                              title="t"),
    }


def _contexts_figures() -> dict[str, object]:
    view = contexts.ContextView(d=64, method="llama3", trained=4096, target=2048)  # L0 beyond the curves: no marks
    return {
        "coverage": lambda: contexts.coverage_figure(view, title="t"),
        "methods": lambda: contexts.methods_figure(view, title="t"),
        "dot": lambda: contexts.dot_figure(view, *contexts.dot_curves(view), title="t"),
        "ramp": lambda: contexts.ramp_figure(view, title="t"),
    }


@pytest.mark.parametrize("name", list(_unvalidated_figures()))
def test_a_plain_figure_serialises_as_the_go_figure_it_becomes(name: str) -> None:
    """A figure kept as its dicts gives the dict that go.Figure's own objects give once Plotly's API
    is asked for (the trace types, the default template): serialising it and fitting its title,
    what a page does with it, leave it plain."""
    fig = _unvalidated_figures()[name]()
    figures.fit_title(fig)
    plain = fig.to_dict()
    assert fig.is_plain
    fig.layout  # noqa: B018 (Plotly's API: the figure becomes go.Figure's objects)
    assert not fig.is_plain
    assert fig.to_dict() == plain


def test_st_plotly_chart_sends_a_plain_figure_without_making_plotlys_objects() -> None:
    # What the plain figure saves holds only while Streamlit asks it for its dict alone.
    fig = figures.figure([{"type": "scatter", "x": np.arange(3), "y": np.arange(3.0)}], {"title": {"text": "t"}})
    st.plotly_chart(fig, width="stretch")
    assert fig.is_plain


def _a_chart_with_slashes_and_a_wrapped_title() -> None:
    """Run by AppTest: blocks.chart draws a line whose base64 values hold "/" under a title it wraps with <br>."""
    import numpy as np

    from explorer import figures
    from explorer.ui import blocks

    y = np.random.default_rng(7).normal(size=512)
    title = "A title long enough to be wrapped onto two lines of a phone's screen"
    blocks.chart(figures.figure([{"type": "scatter", "y": y}], {"title": {"text": title}}))


def test_a_chart_s_json_is_sent_without_plotly_s_html_escapes_and_reads_as_the_figure() -> None:
    """The spec st.plotly_chart sends keeps "/" (one base64 character in 64) and "<br>" as they are, where
    Plotly's JSON for HTML writes "\\u002f" and "\\u003c" (blocks: a pass over the JSON each, a third of a
    chart's cost on the server); JSON.parse, the browser's reading, gives the figure's values and title."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_a_chart_with_slashes_and_a_wrapped_title, default_timeout=30).run()
    assert not at.exception
    spec = at.get("plotly_chart")[0].proto.spec
    figure = json.loads(spec)
    sent, title = figure["data"][0]["y"], figure["layout"]["title"]["text"]
    assert "/" in sent["bdata"] and "<br>" in title, "the figure no longer holds what the escapes would change"
    assert "\\u002f" not in spec and "\\u003c" not in spec and "\\u003e" not in spec
    assert title.replace("<br>", " ") == "A title long enough to be wrapped onto two lines of a phone's screen"
    values = np.frombuffer(base64.b64decode(sent["bdata"]), dtype=sent["dtype"])
    assert np.array_equal(values, np.random.default_rng(7).normal(size=512))


def test_a_plain_figure_keeps_its_own_copy_of_the_callers_dicts() -> None:
    trace = {"x": [0, 1], "y": np.array([1.0, 2.0]), "line": {"dash": "dot"}}  # a scatter, by default
    layout = {"title": {"text": "t"}, "xaxis": {"range": [0, 1]}}
    fig = figures.figure([trace], layout)
    before = fig.to_dict()
    trace["x"].append(2)
    trace["line"]["dash"] = "solid"
    layout["xaxis"]["range"] = [0, 5]
    assert fig.to_dict() == before and fig.is_plain
    assert go.Figure(fig.to_dict()).to_dict() == before


@pytest.mark.parametrize("name", list(_unvalidated_figures()))
def test_every_unvalidated_figure_is_what_validation_makes_of_it(name: str) -> None:
    """figures.figure skips Plotly's validation: built again validated, a figure must raise nothing
    (a misspelt property would) and give the same JSON (a value validation rewrites would not)."""
    fig = _unvalidated_figures()[name]()
    assert isinstance(fig, figures.Figure)
    checked = go.Figure(fig.to_dict())
    assert json.loads(checked.to_json()) == json.loads(fig.to_json())
