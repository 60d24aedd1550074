"""Plotly figure builders: arrays in, Figure out. No Streamlit, so each is unit-tested.

Conventions shared by every chart: signed values use the diverging "RdBu" scale centred
on 0 (as seed 001), angles the cyclic "Twilight" scale, colour bars and axes say their
units, and hover shows the exact value that is drawn. Values are sent as float32, which
halves the payload and still shows 7 significant digits.
"""

from __future__ import annotations

import base64
import functools
import math
import textwrap
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.basevalidators import is_homogeneous_array
from _plotly_utils.utils import plotlyjsShortTypes, to_typed_array_spec

import pe_core

DIVERGING = "RdBu"
CYCLIC = "Twilight"
SEQUENTIAL = "Viridis"
#: Small marks drawn on the page's own background (the unit circle's trail of positions): a
#: scale every colour of which keeps WCAG's 3:1 contrast for graphics with both Streamlit
#: themes' backgrounds, white and #0e1117. Viridis runs from near black to yellow: its first
#: positions vanished on the dark theme (its last would on white). Plotly's "Phase" keeps
#: 3.6:1 and more on both all round; its first four fifths, so that first and last differ.
ON_BOTH_THEMES = [
    [step / 8, color] for step, color in enumerate(plotly.colors.sample_colorscale("Phase", np.linspace(0.0, 0.8, 9)))
]
#: The total cells one heatmap draws. Seed 003's 100 x 512 matrix, the largest seed figure,
#: is drawn whole (0.27 MB of float32).
HEATMAP_CELLS = 100 * 512
#: A larger matrix is drawn as exact block averages with at most this many cells, however they
#: are split between rows and columns (heatmap_grid): as many as the 192 x 192 of before, since
#: the browser's cost of a new heatmap grows with its cells and an L step draws one (measured in
#: benchmarks/latency.py: 51,200 cells made that step about 40 ms slower, 2.9x the trivial app).
BLOCK_AVERAGE_CELLS = 192 * 192
#: Pixel rows of a HEATMAP_HEIGHT chart's plot, and pixel columns of a full-width plot and of
#: one of two plots side by side, in a 1400-pixel window: block averages are sized to these.
PLOT_ROWS, PLOT_COLS, HALF_PLOT_COLS = 400, 850, 400
#: Layered over Streamlit's Plotly template for every chart (ui.py makes it the default): tick
#: labels are never hidden by measurement. Plotly's default for numeric axes and colour bars,
#: "hide past div", measures every tick label against all the others as each one is placed
#: (quadratic in the labels; in the browser, about 8 ms of a Similarity L step's first chart,
#: three stacked panels). The margins below keep every label inside the chart anyway.
TEMPLATE = go.layout.Template(
    layout={"xaxis": {"ticklabeloverflow": "allow"}, "yaxis": {"ticklabeloverflow": "allow"}},
    data={
        "heatmap": [{"colorbar": {"ticklabeloverflow": "allow"}}],
        "scatter": [{"marker": {"colorbar": {"ticklabeloverflow": "allow"}}}],
    },
)
#: Chart margins (pixels) as wide as Streamlit's chart theme needs for axis titles, tick labels
#: and colour bars. Plotly widens a margin that is too narrow by drawing the whole chart a second
#: time as it appears (measured: nearly every chart was drawn three times on mount, not two).
MARGIN = {"l": 85, "r": 20, "t": 60, "b": 70}
HEATMAP_MARGIN = {"l": 95, "r": 120, "t": 60, "b": 80}
HEATMAP_HEIGHT, MAX_HEATMAP_HEIGHT = 520, 1200
#: Height of a chart beyond its plot (title, axis labels and ticks).
_CHART_FRAME = HEATMAP_HEIGHT - PLOT_ROWS
#: Lines longer than this are drawn as their min/max envelope (pe_core.line_envelope): 999
#: bins, more than the ~850 pixel columns of a full-width chart's plot in a 1400-pixel window
#: (and the browser draws 3000-point lines ~15% slower than 2000-point ones).
LINE_MAX_POINTS = 2000


# --------------------------------------------------------------------------------------
# Figures from plain dicts, serialised without copying their arrays
# --------------------------------------------------------------------------------------


class Figure(go.Figure):
    """A go.Figure whose ``to_dict`` (what st.plotly_chart and the JSON writers call) gives
    Plotly's dict for less (``encoded_copy``: Plotly deep-copies every array, then copies it
    again to encode it, and walks the dict twice). Everything else is go.Figure's.

    One made by ``plain`` keeps its trace and layout dicts as they are until Plotly's API is
    asked for (``fig.layout``, ``fig.data``, ``update_layout``...), and is a go.Figure from then
    on. go.Figure's constructor, even unvalidated, makes an object of every trace and property
    and deep-copies the default template into the layout (0.5-0.7 ms a chart on every new
    setting, half of it the template), where what a page does with most figures is serialise
    them, which the dicts give directly. Like any figure here, it belongs to the run that built
    it (none is cached or shared between sessions): its first use of Plotly's API is not locked.
    """

    @classmethod
    def plain(cls, data: list[dict], layout: dict, **attributes: object) -> Figure:
        """A figure of trace dicts and a layout dict, not yet made into Plotly's objects;
        ``attributes`` are set on it as they are (a subclass's own, ``_``-prefixed). Its dicts and
        lists are copied (arrays shared), so that the caller's dicts stay the caller's, as with go.Figure."""
        fig = cls.__new__(cls)
        fig.__dict__.update(attributes, _plain=(structure_copy(data), structure_copy(layout)))
        return fig

    def __getattr__(self, name: str) -> object:
        # Reached only for what the instance lacks: go.Figure's state, which a plain figure makes now.
        plain = self.__dict__.pop("_plain", None)
        if plain is None:
            raise AttributeError(name)
        go.Figure.__init__(self, data=plain[0], layout=plain[1], _validate=False)
        return getattr(self, name)

    @property
    def is_plain(self) -> bool:
        """True while the figure is its dicts (``plain``), before Plotly's API was asked for."""
        return "_plain" in self.__dict__

    def fit_plain_title(self) -> bool:
        """``fit_title`` on a plain figure, keeping it plain; False for one that is Plotly's already."""
        plain = self.__dict__.get("_plain")
        if plain is None:
            return False
        self.__dict__["_plain"] = (plain[0], fitted_title(plain[1]))
        return True

    def to_dict(self) -> dict:
        plain = self.__dict__.get("_plain")
        if plain is not None:
            data, layout = plain
            # What go.Figure adds: each trace's type (scatter unless given) and the default template.
            traces = [trace if "type" in trace else {"type": "scatter", **trace} for trace in data]
            if layout.get("template") is None and pio.templates.default is not None:
                layout = layout | {"template": _template_dict(pio.templates.default)}
            return {"data": encoded_copy(traces), "layout": encoded_copy(layout)}
        result = {"data": encoded_copy(self._data), "layout": encoded_copy(self._layout)}
        if self._frame_objs:
            result["frames"] = encoded_copy([frame._props for frame in self._frame_objs])
        return result


def _template_dict(template: object) -> dict:
    """The default template (a name or a Template) as go.Figure writes it into a layout, made once
    for each template object (a name registered again is another object)."""
    template = pio.templates[template] if isinstance(template, str) else template
    if _TEMPLATE_DICT[0] is not template:
        _TEMPLATE_DICT[:] = [template, template.to_plotly_json()]
    return _TEMPLATE_DICT[1]


#: The last template written (``_template_dict``) and its dict, shared read-only: ``encoded_copy`` copies it.
_TEMPLATE_DICT: list = [None, None]


def figure(data: Sequence[dict], layout: dict) -> Figure:
    """A Figure of plain trace dicts (``"type"``: scatter by default) and a plain layout dict,
    built without Plotly's validation: go.Scatter, go.Figure and update_layout validate every
    property, a few milliseconds a chart on every new setting. What validation would change is
    written as it would write it (a named colour scale as its colours: ``named_colorscale``); the
    tests build each such figure again validated (go.Figure(fig.to_dict())), where a misspelt
    property raises, and compare the two JSONs. Its title is wrapped as ``fit_title`` wraps it
    (which then has nothing left to do): set property by property, that validated them."""
    return Figure.plain(list(data), fitted_title(layout))


def fitted_title(layout: dict) -> dict:
    """``layout`` with its title wrapped and room made for the lines added, as ``fit_title`` does to a figure."""
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else None
    if not text:
        return layout
    lines = wrapped(text)
    added = lines.count("<br>") - text.count("<br>")
    if not added:
        return layout
    pad = title.get("pad") or {}
    margin = layout.get("margin") or {}
    return layout | {
        "title": title | {"text": lines, "pad": pad | {"t": (pad.get("t") or 0) + added * TITLE_LINE_PX / 2}},
        "margin": margin | {"t": (margin.get("t") or PLOTLY_DEFAULT_MARGIN_T) + added * TITLE_LINE_PX},
        "height": (layout.get("height") or PLOTLY_DEFAULT_HEIGHT) + added * TITLE_LINE_PX,
    }


@functools.cache
def named_colorscale(name: str) -> tuple[tuple[float, str], ...]:
    """A named Plotly colour scale as a figure's JSON holds it (validation expands the name)."""
    return go.Heatmap(colorscale=name).colorscale


def structure_copy(value: object) -> object:
    """``value`` with its dicts and lists (and tuples, as lists) copied and everything else
    (arrays, numbers, strings) shared."""
    if isinstance(value, dict):
        return {key: structure_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [structure_copy(item) for item in value]
    return value


#: Values Plotly's convert_to_base64 leaves as they are (and their keys, whose values it does not enter).
_SCALARS = frozenset((str, int, float, bool, type(None)))
_NOT_ENCODED = frozenset(("geojson", "layer", "layers", "range"))


def encoded_copy(value: object) -> object:
    """``value`` as Plotly's ``to_dict`` makes it, ``convert_to_base64(deepcopy(value))``, in one pass:
    its dicts and lists copied, each array that is a dict's value as Plotly.js's typed-array spec
    (base64 bytes) and any other array shared (Plotly copied it), numeric NumPy arrays encoded
    here (Plotly passes each through narwhals and copies it, about 0.1 ms an array; a Play chart
    holds hundreds)."""
    if isinstance(value, dict):
        copy = {}
        for key, item in value.items():
            if type(item) in _SCALARS:
                copy[key] = item
            elif key in _NOT_ENCODED:
                copy[key] = structure_copy(item)
            elif isinstance(item, np.ndarray):
                copy[key] = _typed_array(item)
            elif isinstance(item, (dict, list, tuple)):
                copy[key] = encoded_copy(item)
            elif is_homogeneous_array(item):
                copy[key] = to_typed_array_spec(item)
            else:
                copy[key] = item
        return copy
    if isinstance(value, (list, tuple)):
        return [encoded_copy(item) if isinstance(item, (dict, list, tuple)) else item for item in value]
    return value


def _typed_array(array: np.ndarray) -> object:
    """Plotly's ``to_typed_array_spec`` of a NumPy array: the spec of a non-empty array of a type
    Plotly.js reads as it is, 64-bit integers narrowed first as Plotly narrows them, and an array of
    booleans or strings left an array (Plotly copies each, through narwhals, to leave it so: about
    0.1 ms an array, 12 % of Precision's first run); anything else (objects, 64-bit integers no
    narrower type holds) by Plotly itself."""
    if array.dtype.kind in "bU":
        return array
    if array.dtype in _NARROWED and array.size:
        array = _narrowed(array)
    short = _SHORT_TYPES.get(array.dtype)
    if short is None or array.size == 0:
        return to_typed_array_spec(array)
    spec = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(array)).decode("ascii")}
    if array.ndim > 1:
        spec["shape"] = str(array.shape)[1:-1]
    return spec


#: Plotly's names of the types Plotly.js reads, by NumPy dtype (str of a dtype takes 3 µs, and a Play chart
#: encodes hundreds of arrays).
_SHORT_TYPES = {np.dtype(name): short for name, short in plotlyjsShortTypes.items()}
#: Plotly.js has no 64-bit integers: Plotly writes such an array in the narrowest of these that holds it.
_NARROWED = {np.dtype(np.int64): (np.int8, np.int16, np.int32), np.dtype(np.uint64): (np.uint8, np.uint16, np.uint32)}


def _narrowed(array: np.ndarray) -> np.ndarray:
    low, high = array.min(), array.max()
    for narrower in _NARROWED[array.dtype]:
        limits = np.iinfo(narrower)
        if limits.min <= low and high <= limits.max:
            return array.astype(narrower)
    return array


def heatmap_grid(
    rows: int,
    cols: int,
    *,
    transpose: bool = False,
    across: int = PLOT_COLS,
    cells: int = HEATMAP_CELLS,
    averaged_cells: int = BLOCK_AVERAGE_CELLS,
    power_of_two_columns: bool = False,
) -> tuple[int, int]:
    """How many rows and columns a heatmap of a ``rows`` x ``cols`` matrix draws.

    All of them when they fit in ``cells`` and on the screen (a pixel or more per row of a chart
    at most MAX_HEATMAP_HEIGHT tall, see heatmap_height; a pixel or more per column of ``across``
    pixels): every seed figure is drawn whole. A larger matrix is drawn as block averages within
    ``averaged_cells``, sized to a HEATMAP_HEIGHT plot ``across`` pixels wide: cells about as tall as they
    are wide and at least a pixel, and an axis with few values keeps them all and leaves its
    share of the budget to the other; rows in blocks of equal size when a few fewer make them
    so (_equal_blocks). With ``transpose`` the matrix's rows go across.
    ``power_of_two_columns`` rounds reduced columns down to a power of two: for d a power of
    two the runs of pairs are then equal and the axis ticks land on round columns.

    Example:
        >>> heatmap_grid(100, 512)      # seed 003: whole
        (100, 512)
        >>> heatmap_grid(16384, 2048)   # blocks of 128 positions x 7 or 8 columns
        (128, 288)
    """
    rows, cols = int(rows), int(cols)
    if rows < 1 or cols < 1:
        raise ValueError(f"a heatmap needs at least one row and one column, got {rows} x {cols}.")
    down, wide = (cols, rows) if transpose else (rows, cols)
    most_down = (MAX_HEATMAP_HEIGHT - _CHART_FRAME) // _pixels_per_row(transpose)
    if down * wide <= cells and down <= most_down and wide <= across:
        return rows, cols
    budget = min(cells, averaged_cells)
    side = math.sqrt(PLOT_ROWS * across / budget)  # pixels per cell side when the budget fills the plot
    down_limit, wide_limit = (across, PLOT_ROWS) if transpose else (PLOT_ROWS, across)  # matrix rows, columns
    if transpose:
        grid_cols = min(cols, PLOT_ROWS, max(1, int(PLOT_ROWS / side)))
        grid_rows = min(rows, across, budget // grid_cols)
    else:
        grid_rows = min(rows, PLOT_ROWS, max(1, int(PLOT_ROWS / side)))
    grid_rows = _equal_blocks(rows, grid_rows)
    grid_cols = min(cols, wide_limit, budget // grid_rows)
    grid_rows = _equal_blocks(rows, min(rows, down_limit, budget // grid_cols))
    if power_of_two_columns and grid_cols < cols:
        grid_cols = 1 << (grid_cols.bit_length() - 1)
    return grid_rows, grid_cols


def _equal_blocks(size: int, count: int) -> int:
    """``count`` blocks of ``size`` positions, or a few fewer if that makes them all equal: a
    divisor of ``size`` down to 80 % of ``count`` (16384 positions: 128 blocks of 128, not 155
    of 105 or 106), so that block starts, and the axis ticks on them, are round numbers."""
    if count >= size:
        return size
    for blocks in range(count, max(1, math.ceil(0.8 * count)) - 1, -1):
        if size % blocks == 0:
            return blocks
    return count


def _pixels_per_row(transpose: bool) -> int:
    # Dimensions drawn down alternate sine and cosine rows, which alias into bands below two pixels.
    return 2 if transpose else 1


def heatmap_height(rows_down: int, *, transpose: bool = False) -> int:
    """Chart height for a heatmap with ``rows_down`` rows on screen: HEATMAP_HEIGHT, taller when
    the rows need a pixel each (two for dimensions drawn down, ``transpose``), at most
    MAX_HEATMAP_HEIGHT."""
    needed = _pixels_per_row(transpose) * int(rows_down) + _CHART_FRAME
    return int(np.clip(needed, HEATMAP_HEIGHT, MAX_HEATMAP_HEIGHT))


#: Plotly draws its mode bar over the top right corner of a chart, 2 to ~28 px from its top;
#: a title centred in the top margin ran under it wherever the title is long for the width
#: (on a phone, nearly every title). Titles hang from the top, below the bar.
MODEBAR_CLEARANCE_PX = 36


def chart_title(text: str) -> dict:
    """The layout's title for ``text``: left-aligned, below the mode bar (within a top margin
    of 60 px, which every chart here keeps at least; ``fit_title`` wraps it when it is long)."""
    return {
        "text": text, "x": 0.0, "xanchor": "left",
        "yref": "container", "y": 1.0, "yanchor": "top", "pad": {"t": MODEBAR_CLEARANCE_PX},
    }


#: Plotly's height, top and bottom margins for a figure that sets none.
PLOTLY_DEFAULT_HEIGHT, PLOTLY_DEFAULT_MARGIN_T, PLOTLY_DEFAULT_MARGIN_B = 450, 100, 80
#: Plotly's base font size: Streamlit's chart theme draws axis titles, tick labels, legends and
#: the Play controls at 12 px, chart titles at 16 px (presentation mode enlarges both:
#: explorer/presentation.py).
FONT_PX, TITLE_FONT_PX = 12, 16
#: Characters on a line of a chart title. Plotly never wraps a title; on a phone (a chart 358
#: px wide) a line of 16 px type holds about 48 of them, so longer titles are wrapped.
TITLE_LINE_CHARS = 44
#: Height of a line of a chart title: Plotly spaces lines 1.3 em apart.
TITLE_LINE_PX = round(1.3 * TITLE_FONT_PX)


def wrapped(text: str, width: int = TITLE_LINE_CHARS) -> str:
    """``text`` in lines of at most ``width`` characters (broken between words), joined by
    Plotly's ``<br>``; text that already has line breaks is left as it is."""
    if "<br>" in text or len(text) <= width:
        return text
    return "<br>".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False))


def fit_title(fig: go.Figure) -> go.Figure:
    """``fig`` with its title wrapped to lines that fit a phone's chart (``wrapped``), and room
    for the lines added: the top margin and the height grow by a line each, so the plot keeps
    its size and what is above it (subplot titles, Play controls) keeps its place. Plotly
    centres a title's lines on its anchor, so the pad above it grows by half a line each, or
    the first line would rise into the mode bar."""
    if isinstance(fig, Figure) and fig.fit_plain_title():
        return fig
    text = fig.layout.title.text
    if not text:
        return fig
    lines = wrapped(text)
    added = lines.count("<br>") - text.count("<br>")
    if added:  # property by property: update_layout validated the whole layout again (5 ms, not 0.5)
        layout = fig.layout
        layout.title.text = lines
        layout.title.pad.t = (layout.title.pad.t or 0) + added * TITLE_LINE_PX / 2
        layout.margin.t = (layout.margin.t or PLOTLY_DEFAULT_MARGIN_T) + added * TITLE_LINE_PX
        layout.height = (layout.height or PLOTLY_DEFAULT_HEIGHT) + added * TITLE_LINE_PX
    return fig


def _layout(title: str, x_title: str, y_title: str, height: int) -> dict:
    """The layout every chart here shares, as a plain dict: a figure is built in one
    go.Figure(data, layout) call, because each update_layout costs milliseconds of
    validation on every slider step."""
    return {
        "title": chart_title(title),
        "height": height,
        "margin": dict(MARGIN),
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "hoverlabel": {"namelength": -1},
    }


def heatmap_figure(
    values: np.ndarray,
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    row_ticks: tuple[Sequence[str], Sequence[str]] | None = None,
    col_ticks: tuple[Sequence[str], Sequence[str]] | None = None,
    title: str,
    x_title: str,
    y_title: str,
    value_name: str = "value",
    colorscale: str = DIVERGING,
    zrange: tuple[float, float] | None = (-1.0, 1.0),
    transpose: bool = False,
    height: int | None = None,
    reversed_rows: bool = True,
) -> go.Figure:
    """A heatmap of ``values`` (rows x columns) with a label per row and column for hover,
    ``height`` pixels tall (by default as its rows on screen need: heatmap_height).

    Rows and columns are categories whose labels say exactly what a drawn cell stands
    for (a position or a block of positions, a column or a run of pairs); ``*_ticks``
    are (labels to tick, text to show) so the axes stay readable.
    """
    values = np.asarray(values)
    if values.size > HEATMAP_CELLS:
        raise ValueError(
            f"{values.shape} is more than {HEATMAP_CELLS:,} cells; reduce it with heatmap_grid before drawing."
        )
    if values.shape != (len(row_labels), len(col_labels)):
        raise ValueError(f"values {values.shape} do not match {len(row_labels)} x {len(col_labels)} labels.")
    z, x, y = values.astype(np.float32), list(col_labels), list(row_labels)
    x_ticks, y_ticks = col_ticks, row_ticks
    if transpose:
        z, x, y = z.T, y, x
        x_title, y_title = y_title, x_title
        x_ticks, y_ticks = y_ticks, x_ticks
    heatmap = {
        "type": "heatmap", "z": z, "x": x, "y": y, "colorscale": named_colorscale(colorscale),
        "colorbar": {"title": {"text": value_name, "side": "right"}},
        "hovertemplate": f"%{{y}}<br>%{{x}}<br>{value_name} = %{{z:.7g}}<extra></extra>",
        "hoverongaps": False,
    }
    if colorscale == DIVERGING:
        heatmap["zmid"] = 0.0
    if zrange is not None:
        heatmap["zmin"], heatmap["zmax"] = zrange
    if height is None:
        height = heatmap_height(z.shape[0], transpose=transpose)
    layout = _layout(title, x_title, y_title, height) | {"margin": dict(HEATMAP_MARGIN)}
    for axis, ticks in (("xaxis", x_ticks), ("yaxis", y_ticks)):
        layout[axis] |= {"type": "category", "showgrid": False}
        if ticks is not None:
            layout[axis] |= {"tickmode": "array", "tickvals": list(ticks[0]), "ticktext": list(ticks[1])}
    layout["yaxis"]["autorange"] = "reversed" if reversed_rows else True
    return figure([heatmap], layout)


def tick_subset(labels: Sequence[str], texts: Sequence[str], count: int = 8) -> tuple[list[str], list[str]]:
    """About ``count`` evenly spaced (label, text) ticks out of many categories."""
    if len(labels) == 0:
        return [], []
    index = np.unique(np.linspace(0, len(labels) - 1, min(count, len(labels))).round().astype(int))
    return [labels[i] for i in index], [texts[i] for i in index]


#: Steps of round ticks: 1, 2, 2.5 and 5 times a power of ten (whole numbers only).
_DECIMAL_STEPS = tuple(sorted({m * 10**e for e in range(8) for m in (1, 2, 5)} | {25 * 10**e for e in range(7)}))


def round_ticks(
    labels: Sequence[str], starts: Sequence[int], count: int = 8
) -> tuple[list[str], list[str]]:
    """About ``count`` ticks near round numbers, for categories that stand for runs of whole
    numbers (positions, columns) beginning at ``starts`` (ascending).

    A tick sits on the category whose first number is nearest a multiple of a step and shows
    that first number, so every tick text is exact. Preferred steps: 1, 2, 2.5 or 5 x 10^e
    that land exactly on first numbers (0, 50, 100 ...), then powers of two that do (blocks of
    64 positions: 0, 2048, 4096 ...), then 1, 2, 2.5 or 5 x 10^e at the nearest first numbers.
    """
    first = np.asarray(starts, dtype=np.int64)
    if first.size != len(labels):
        raise ValueError(f"{first.size} starts for {len(labels)} labels.")
    if first.size <= 3:
        return list(labels), [str(int(a)) for a in first]
    low, high = int(first[0]), int(first[-1])
    fewest, most = max(3, count // 2), count + count // 2
    best: tuple[tuple[bool, bool, int, int], np.ndarray] | None = None
    powers_of_two = tuple(2**e for e in range(1, max(high - low, 1).bit_length() + 1))
    for step, decimal in [(s, True) for s in _DECIMAL_STEPS] + [(s, False) for s in powers_of_two]:
        lowest_multiple = -(-low // step) * step
        if not fewest <= (high - lowest_multiple) // step + 1 <= most:
            continue
        multiples = np.arange(lowest_multiple, high + 1, step)
        right = np.clip(np.searchsorted(first, multiples), 0, first.size - 1)
        left = np.clip(right - 1, 0, first.size - 1)
        nearest = np.where(np.abs(first[left] - multiples) < np.abs(first[right] - multiples), left, right)
        exact = bool(np.all(first[nearest] == multiples))
        if not (exact or decimal):
            continue
        rank = (not exact, not decimal, abs(multiples.size - count), multiples.size)
        if best is None or rank < best[0]:
            best = (rank, np.unique(nearest))
    if best is None:
        return tick_subset(labels, [str(int(a)) for a in first], count)
    index = best[1]
    return [labels[i] for i in index], [str(int(first[i])) for i in index]


#: Up to this many decades a log axis is labelled at every power of ten (``log_axis``); over more,
#: Plotly spaces its labels itself (a power of ten every few, no smaller labels between them).
MINOR_TICK_MAX_DECADES = 12


def log_axis(values: np.ndarray) -> dict:
    """Log-axis settings that keep tick labels apart and whole. Over fewer than three decades
    Plotly labels every digit 1..9 of a decade (6, 7, 8, 9 overlap) by its digit alone; here
    such an axis gets ticks at 1, 2 and 5 times powers of ten, written in full (0.02, 50)."""
    values = np.asarray(values, dtype=np.float64)
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size == 0:
        return {"type": "log"}
    low, high = float(positive.min()), float(positive.max())
    if np.log10(high / low) > MINOR_TICK_MAX_DECADES:
        return {"type": "log"}
    if np.log10(high / low) >= 3:
        # Powers of ten only: Plotly labels the 2s and 5s between them at three quarters of the
        # text's size (9 px), too small to read.
        return {"type": "log", "dtick": 1}
    decades = range(int(np.floor(np.log10(low))) - 1, int(np.ceil(np.log10(high))) + 1)
    ticks = [m * 10.0**e for e in decades for m in (1, 2, 5) if low / 1.2 <= m * 10.0**e <= high * 1.2]
    return {"type": "log", "tickmode": "array", "tickvals": ticks, "ticktext": [f"{v:g}" for v in ticks]}


def line_xy(y: np.ndarray, *, x0: int = 0, dtype: type = np.float64) -> dict[str, object]:
    """Scatter arguments (x0/dx or x, and y) of a line over x = x0, x0 + 1, ...: short lines
    whole (x as x0/dx, half the payload), long ones as their min/max envelope
    (``pe_core.line_envelope``: every bin's lowest and highest point, exact values in order)."""
    y = np.asarray(y, dtype=np.float64)
    if y.size <= LINE_MAX_POINTS:
        return {"x0": x0, "dx": 1, "y": y.astype(dtype)}
    x, kept = pe_core.line_envelope(np.arange(x0, x0 + y.size), y, LINE_MAX_POINTS)
    return {"x": x, "y": kept.astype(dtype)}


def envelope_note(points: int, what: str = "point") -> str:
    """A caption for a line drawn by ``line_xy``: empty when it is drawn whole."""
    if points <= LINE_MAX_POINTS:
        return ""
    bins = (LINE_MAX_POINTS - 2) // 2
    return (
        f"Lines of {points:,} {what}s are drawn as their min/max envelope: for each of {bins:,} bins of about "
        f"{points / bins:.0f} consecutive {what}s, the lowest and the highest {what}, in order. No peak or dip "
        "is lost and nothing is aliased; hover shows the exact values of those points; the download holds all of them."
    )


ENVELOPE_HOVER = "<br>(a bin's lowest or highest point: min/max envelope)"


def line_figure(
    x: np.ndarray,
    series: dict[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    height: int = 420,
    mode: str = "lines",
    hover_format: str = ".7g",
    line_styles: dict[str, dict] | None = None,
    legend: dict | None = None,
    y_axis: dict | None = None,
) -> go.Figure:
    """Lines (one per named series) over a shared x, hover with exact values; ``line_styles``
    (series name -> the trace's ``line``), ``legend`` and ``y_axis`` (more y-axis settings)
    replace or add to the defaults.

    Built as plain dicts (``figure``: a Scatter and a Figure of them validated every value
    twice, 6 ms for 15 lines, 0.3 ms now).
    """
    x = np.asarray(x)
    traces = [
        {
            "type": "scatter",
            "x": x,
            "y": np.asarray(y, dtype=np.float64),
            "name": name,
            "mode": mode,
            "hovertemplate": f"{x_title} = %{{x}}<br>{name} = %{{y:{hover_format}}}<extra></extra>",
        }
        | ({"line": line_styles[name]} if line_styles and name in line_styles else {})
        for name, y in series.items()
    ]
    layout = _layout(title, x_title, y_title, height) | {"legend": legend or {"orientation": "h", "y": -0.2}}
    if log_x:
        layout["xaxis"] |= log_axis(x)
    if log_y:
        layout["yaxis"] |= log_axis(np.concatenate([np.ravel(y) for y in series.values()] or [np.ones(1)]))
    layout["yaxis"] |= y_axis or {}
    return figure(traces, layout)




def averaging_note(row_first: np.ndarray, row_last: np.ndarray, w: np.ndarray) -> str:
    """Why a heatmap of block averages of positions is pale where the pairs are fast: empty
    when every row is one position."""
    sizes = np.asarray(row_last) - np.asarray(row_first) + 1
    if sizes.size == 0 or sizes.max() <= 1:
        return ""
    block = float(np.median(sizes))
    fast = int(np.sum(2 * np.pi / np.asarray(w, dtype=np.float64) < block))
    if fast == 0:  # blocks shorter than every wavelength (2π at least): nothing averages away
        return ""
    return (
        f"Each row is the mean of a block of about {block:,.0f} consecutive positions. A pair whose wavelength "
        f"λ_i = 2π/ω_i is shorter than the block (here the {fast:,} fastest pairs, i < {fast:,}) turns through "
        "whole cycles inside it, so its sine and cosine average to nearly 0 (pale), and pairs with λ_i near the "
        "block length leave slow bands. That is the truth about the average, not an error."
    )




def count_text(count: int, noun: str) -> str:
    """'1 frame', '37 frames': a count with its noun, singular for one."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def positions_text(first: int, last: int) -> str:
    """'position 7' or 'positions 0..99': consecutive positions, in the singular when there is one."""
    return f"position {first:,}" if first == last else f"positions {first:,}..{last:,}"


def range_label(first: int, last: int, name: str) -> str:
    """'k = 12' or 'k = 32..63 (mean of 32)': what one drawn row or column stands for."""
    if first == last:
        return f"{name} = {first}"
    return f"{name} = {first}..{last} (mean of {last - first + 1})"


def pair_text(first: int, last: int, w: np.ndarray) -> str:
    if first == last:
        return f"pair i = {first}, ω = {w[first]:.6g} rad/pos, λ = {2 * np.pi / w[first]:.6g} pos"
    return (
        f"pairs i = {first}..{last} (mean of {last - first + 1}), ω = {w[first]:.3g}..{w[last]:.3g} rad/pos, "
        f"λ = {2 * np.pi / w[first]:.4g}..{2 * np.pi / w[last]:.4g} pos"
    )


def encoding_axis_labels(
    column_is_sine: np.ndarray, pair_first: np.ndarray, pair_last: np.ndarray, w: np.ndarray, layout: str
) -> tuple[list[str], list[str]]:
    """Hover label and tick text for each drawn column of an encoding.

    The hover label names the matrix column (or columns), whether it is a sine or a
    cosine, its pair index, frequency ω and wavelength λ = 2π/ω.
    """
    m = len(w)
    labels, ticks = [], []
    for is_sine, first, last in zip(column_is_sine, pair_first, pair_last, strict=True):
        if layout == "interleaved":
            columns = (2 * first + (0 if is_sine else 1), 2 * last + (0 if is_sine else 1))
        else:
            columns = (first, last) if is_sine else (m + first, m + last)
        kind = "sin" if is_sine else "cos"
        where = f"column {columns[0]}" if first == last else f"columns {columns[0]}..{columns[1]} ({kind} only)"
        labels.append(f"{where}: {kind}, {pair_text(int(first), int(last), w)}")
        ticks.append(str(columns[0]))
    return labels, ticks


def encoding_figure(
    values: np.ndarray,
    row_first: np.ndarray,
    row_last: np.ndarray,
    column_labels: list[str],
    column_ticks: list[str],
    *,
    title: str,
    transpose: bool = False,
    value_name: str = "P[k, j]",
    colorscale: str = DIVERGING,
    zrange: tuple[float, float] | None = (-1.0, 1.0),
    x_title: str = "dimension j (column)",
) -> go.Figure:
    """Heatmap of an encoding (or its angles): positions down, dimensions (or pairs: ``x_title``) across."""
    row_labels = [range_label(int(a), int(b), "position k") for a, b in zip(row_first, row_last, strict=True)]
    row_ticks = round_ticks(row_labels, row_first)
    col_ticks = round_ticks(column_labels, [int(c) for c in column_ticks], count=10)
    return heatmap_figure(
        values,
        row_labels=row_labels,
        col_labels=column_labels,
        row_ticks=row_ticks,
        col_ticks=col_ticks,
        title=title,
        x_title=x_title,
        y_title="position k",
        value_name=value_name,
        colorscale=colorscale,
        zrange=zrange,
        transpose=transpose,
    )


# --------------------------------------------------------------------------------------
# Download tables: the numbers a chart draws, labelled as its hover labels them
# --------------------------------------------------------------------------------------

def heatmap_table(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    rows_name: str,
    cols_name: str,
    transpose: bool = False,
) -> pd.DataFrame:
    """The values a heatmap draws, one row and one column per drawn row and column, labelled
    with what each stands for (a position or a block of them, a column or a run of pairs)."""
    table = pd.DataFrame(
        np.asarray(values, dtype=np.float64),
        index=pd.Index(list(row_labels), name=rows_name),
        columns=pd.Index(list(col_labels), name=cols_name),
    )
    return table.T if transpose else table


def encoding_table(
    values: np.ndarray,
    row_first: np.ndarray,
    row_last: np.ndarray,
    column_labels: Sequence[str],
    *,
    transpose: bool = False,
) -> pd.DataFrame:
    """What ``encoding_figure`` draws (values or angles), with the positions each row averages
    and, per column, the hover label of ``encoding_axis_labels`` (or of the angle map)."""
    rows = [range_label(int(a), int(b), "position k") for a, b in zip(row_first, row_last, strict=True)]
    return heatmap_table(
        values, rows, column_labels, rows_name="position k", cols_name="dimension j", transpose=transpose
    )






#: Above this many points a line is drawn without markers (they would only blur it).
MARKER_LIMIT = 200


#: Room above a plot for a row of subplot titles (make_subplots' annotations), below the chart's title.
SUBPLOT_TITLES_PX = 22
#: Right margin of a chart with a colour bar: the bar, its tick labels and its title beside it
#: (a margin too narrow for them makes Plotly draw the chart again, wider).
COLORBAR_MARGIN_R = HEATMAP_MARGIN["r"]


def frame_layout(title: str, height: int, *, above_plot: int = 0) -> dict:
    """The title, height, margins and hover labels every line chart of the pages shares, as a
    plain layout dict (for ``figure``); ``above_plot`` pixels more between the title and the plot
    (``SUBPLOT_TITLES_PX`` for subplot titles), added to the height."""
    return {
        "title": chart_title(title),
        "height": height + above_plot,
        "margin": MARGIN | {"t": 70 + above_plot},
        "hoverlabel": {"namelength": -1},
    }


def line_mode(points: int) -> str:
    """Markers on a line only while there are few enough points to tell them apart."""
    return "lines+markers" if points <= MARKER_LIMIT else "lines"


def group_columns(values: np.ndarray, layout: str, max_cols: int) -> tuple[np.ndarray, ...]:
    """Average the d columns of ``values`` into ``pe_core.column_groups`` (runs of pairs of
    one kind, never a sine with a cosine). Returns (means, is_sine, pair_first, pair_last)."""
    values = np.asarray(values, dtype=np.float64)
    d = values.shape[1]
    is_sine, first, last = pe_core.column_groups(d, layout, max(2, max_cols))
    pair, col_is_sine = pe_core.column_pairs(d, layout)
    group = np.empty(d, dtype=np.int64)
    for kind in (True, False):
        ids = np.flatnonzero(is_sine == kind)
        cols = col_is_sine == kind
        group[cols] = ids[np.searchsorted(first[ids], pair[cols], side="right") - 1]
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(is_sine.size))
    sums = np.add.reduceat(values[:, order], starts, axis=1)
    counts = np.diff(np.r_[starts, d])
    return sums / counts, is_sine, first, last
