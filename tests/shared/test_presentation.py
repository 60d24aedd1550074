"""Presentation mode's sizes for the screen (explorer/presentation.py), the style sheet that grows
the page's text with them, and the charts drawn for a screen (blocks._fit_to_screen). The browser
test that every chart fits a 1280 x 720 and a 1920 x 1080 projector is
tests/browser/test_classroom.py, test_no_chart_text_over_text_and_no_label_cut_off_on_a_projector."""

from __future__ import annotations

import math
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer import presentation
from explorer.presentation import Screen
from explorer.topics import attention
from explorer.ui import blocks, style

sides = st.integers(min_value=presentation.SIDE_LIMITS_PX[0], max_value=presentation.SIDE_LIMITS_PX[1])
screens = st.builds(Screen, sides, sides)


@pytest.mark.parametrize(("screen", "text", "title", "tallest"), [
    # 720 - 3.75 rem of 21 px (78.75, a whole pixel up) - 8; at 1.5 times: 1080 - 118.125 up - 8.
    (Screen(1280, 720), 17, 20, 633),
    (Screen(1920, 1080), 26, 30, 953),
    # A wide but short window grows by its height only; a small one keeps the projector's text.
    (Screen(2560, 720), 17, 20, 633),
    (Screen(1024, 600), 17, 20, 513),
    # A 4K screen: twice the projector's, no more.
    (Screen(3840, 2160), 34, 40, 2160 - 158 - 8),
    (Screen(7680, 4320), 34, 40, 4320 - 158 - 8),
])
def test_sizes_on_known_screens(screen: Screen, text: int, title: int, tallest: int) -> None:
    assert presentation.chart_font_px(screen) == (text, title)
    assert presentation.chart_max_height_px(screen) == tallest


@given(screens, screens)
def test_a_larger_screen_never_draws_smaller(small: Screen, large: Screen) -> None:
    if large.width >= small.width and large.height >= small.height:
        assert presentation.scale(large) >= presentation.scale(small)
        assert presentation.chart_font_px(large) >= presentation.chart_font_px(small)


@given(screens)
def test_a_chart_leaves_the_toolbar_its_room(screen: Screen) -> None:
    toolbar = presentation.HEADER_REM * presentation.ROOT_FONT_PX * presentation.scale(screen)
    assert presentation.chart_max_height_px(screen) <= screen.height - toolbar - presentation.CHART_GAP_PX
    assert 1.0 <= presentation.scale(screen) <= presentation.MAX_SCALE


@pytest.mark.parametrize(("report", "screen"), [
    ({"width": 1920, "height": 1080}, Screen(1920, 1080)),
    ({"width": 1919.6, "height": 1080.2}, Screen(1920, 1080)),
    ({"width": 10, "height": 100_000}, Screen(240, 8192)),
    ({"width": 1920}, None), ({"width": "1920", "height": 1080}, None), ({"width": True, "height": 1080}, None),
    ({"width": math.inf, "height": 1080}, None), ({"width": math.nan, "height": 1080}, None),
    (None, None), ([1920, 1080], None),
])
def test_a_report_is_read_within_limits_or_not_at_all(report: object, screen: Screen | None) -> None:
    assert presentation.screen_from_report(report) == screen


def test_the_style_grows_the_page_text_as_the_charts_grow() -> None:
    """The root font's clamp: ROOT_FONT_PX on the projector, times min(W/1280, H/720), up to MAX_SCALE."""
    clamp = re.search(r"html \{ font-size: clamp\(([\d.]+)px, min\(([\d.]+)vw, ([\d.]+)vh\), ([\d.]+)px\); \}",
                      style.PRESENT_STYLE)
    assert clamp, style.PRESENT_STYLE
    least, per_vw, per_vh, most = map(float, clamp.groups())
    assert least == presentation.ROOT_FONT_PX and most == presentation.ROOT_FONT_PX * presentation.MAX_SCALE
    assert per_vw == pytest.approx(100 * presentation.ROOT_FONT_PX / presentation.PROJECTOR.width, abs=1e-6)
    assert per_vh == pytest.approx(100 * presentation.ROOT_FONT_PX / presentation.PROJECTOR.height, abs=1e-6)


def stacked(columns: int, count: int) -> go.Figure:
    weights = {key: np.array([1.0, 2.0, 3.0]) for key in attention.SCHEME_KEYS[:count]}
    return attention.weights_figure(weights, 1, False, title="t", columns=columns)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("columns", [1, 2])
def test_stacked_panels_in_columns_do_not_overlap_and_each_column_is_labelled(count: int, columns: int) -> None:
    layout = stacked(columns, count).layout
    boxes = []
    for panel in range(count):
        suffix = "" if panel == 0 else str(panel + 1)
        x, y = layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"]
        assert 0 <= x.domain[0] < x.domain[1] <= 1 and 0 <= y.domain[0] < y.domain[1] <= 1
        boxes.append((x.domain, y.domain, x))
    for a in range(count):
        for b in range(a + 1, count):
            (ax, ay, _), (bx, by, _) = boxes[a], boxes[b]
            assert ax[1] <= bx[0] or bx[1] <= ax[0] or ay[1] <= by[0] or by[1] <= ay[0], (a, b)
    used = min(columns, count)
    lowest = {}
    for x_domain, y_domain, axis in boxes:
        lowest.setdefault(x_domain, (y_domain, axis))
        if y_domain[0] < lowest[x_domain][0][0]:
            lowest[x_domain] = (y_domain, axis)
    assert len(lowest) == used
    for _, axis in lowest.values():
        assert axis.title.text == "key position n" and axis.showticklabels is not False
    assert layout.height == attention.FRAME_PX + attention.PANEL_PX * math.ceil(count / used)


@pytest.mark.parametrize("screen", [Screen(1280, 720), Screen(1920, 1080), Screen(1024, 600)])
def test_a_chart_drawn_for_a_screen_is_within_it_with_its_legend_under_its_axis(screen: Screen) -> None:
    tall = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], name="line"), layout={
        "height": 900, "margin": {"t": 60, "b": 115}, "legend": {"orientation": "h", "y": -0.2},
    })
    blocks._fit_to_screen(tall, screen)
    layout = tall.layout
    assert layout.height <= presentation.chart_max_height_px(screen)
    assert layout.font.size == presentation.chart_font_px(screen)[0]
    # The legend stays as far under the plot, in pixels, as in normal mode times the text's growth.
    grow = layout.font.size / 12
    plot = layout.height - layout.margin.t - layout.margin.b
    assert -layout.legend.y * plot == pytest.approx(0.2 * (900 - 60 - 115) * grow, rel=1e-9)
