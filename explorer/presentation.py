"""Presentation mode's sizes, for the screen it is shown on, without Streamlit.

Presentation mode is laid out for a 1280 x 720 projector, the smallest a class meets, and grows
with a larger screen as one picture: at 1920 x 1080 every text and chart is 1.5 times as large,
so the back row reads it as well as on the smaller screen (text 17 px at both sizes was too
small on the larger). A chart is never taller than the screen under Streamlit's toolbar, so
that a chart and its Play controls are seen together (Attention's Play chart was 1529 px tall
on a 720 px screen, Rotary's Play button and its circle's bottom never on the screen at once).

The browser reports its window's size (explorer/ui/screen_size.py); until it has, the screen
is ``PROJECTOR``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Screen:
    """A browser window's inner size in CSS pixels."""

    width: int
    height: int


#: The screen presentation mode is designed for, and assumed until the browser reports its own.
PROJECTOR = Screen(1280, 720)
#: A reported side is held within these (a window being dragged smaller, a bad report).
SIDE_LIMITS_PX = (240, 8192)
#: The page's root font size on ``PROJECTOR`` (Streamlit sizes its text in rem; its default is 16 px).
ROOT_FONT_PX = 21
#: A chart's base text and title on ``PROJECTOR`` (figures.FONT_PX and TITLE_FONT_PX in normal mode), and how much
#: taller a chart is drawn than in normal mode, before it is fitted to the screen.
CHART_FONT_PX, CHART_TITLE_FONT_PX = 17, 20
CHART_HEIGHT_FACTOR = 1.25
#: Streamlit's toolbar, fixed over the top of the page, in rem; and the room kept under a chart.
HEADER_REM = 3.75
CHART_GAP_PX = 8
#: How many columns a chart of stacked panels is laid out in: the projector is wide, not tall.
PANEL_COLUMNS = 2
#: Grow with the screen up to this (a 4K screen at 100 %: twice the projector's).
MAX_SCALE = 2.0


def screen_from_report(report: object) -> Screen | None:
    """The screen a browser reported (``{"width": w, "height": h}`` in CSS pixels), each side
    held within SIDE_LIMITS_PX; None for anything else.

    >>> screen_from_report({"width": 1920, "height": 1080})
    Screen(width=1920, height=1080)
    >>> screen_from_report({"width": "wide"}) is None
    True
    """
    if not isinstance(report, dict):
        return None
    sides = [report.get("width"), report.get("height")]
    if not all(isinstance(side, (int, float)) and not isinstance(side, bool) and math.isfinite(side) for side in sides):
        return None
    low, high = SIDE_LIMITS_PX
    width, height = (min(max(round(side), low), high) for side in sides)
    return Screen(width, height)


def scale(screen: Screen) -> float:
    """How much larger than on ``PROJECTOR`` presentation mode draws on ``screen``: the smaller of
    its width's and height's ratios, so the layout keeps its shape, between 1 and MAX_SCALE
    (a smaller window keeps the projector's text, and its charts are fitted to its height).

    s = min(W / 1280, H / 720), held within [1, 2]

    >>> scale(Screen(1920, 1080)), scale(Screen(1920, 720)), scale(Screen(800, 600))
    (1.5, 1.0, 1.0)
    """
    return min(max(min(screen.width / PROJECTOR.width, screen.height / PROJECTOR.height), 1.0), MAX_SCALE)


def chart_font_px(screen: Screen) -> tuple[int, int]:
    """A chart's base text and its title's on ``screen``: CHART_FONT_PX and CHART_TITLE_FONT_PX
    times its scale, rounded.

    >>> chart_font_px(PROJECTOR), chart_font_px(Screen(1920, 1080))
    ((17, 20), (26, 30))
    """
    grow = scale(screen)
    return round(CHART_FONT_PX * grow), round(CHART_TITLE_FONT_PX * grow)


def chart_max_height_px(screen: Screen) -> int:
    """The tallest a chart may be on ``screen``: the window's height less Streamlit's toolbar
    (HEADER_REM of the page's root font, which grows with the screen) and CHART_GAP_PX.

    >>> chart_max_height_px(PROJECTOR), chart_max_height_px(Screen(1920, 1080))
    (633, 953)
    """
    return screen.height - math.ceil(HEADER_REM * ROOT_FONT_PX * scale(screen)) - CHART_GAP_PX
