"""One contract over the page list (explorer/page_list.py) and the presets (explorer/presets.py):

- every page runs at its defaults with its code shown and its downloads offered, and shows
  "reproduce this" code that runs and binds the arrays of its downloads;
- no table writes Python's "None" for a missing value;
- the numbers a page shows (its st.metric values) are the ones its snippet prints: the snippet
  binds ``numbers``, {the label the page shows a number with: the number}, and each displayed
  value is the snippet's, written with the digits the page writes (at the defaults, at every
  preset and at L=1);
- at L=1 (one position) every page still shows something true: no chart with a trace that
  draws nothing (a line of one point), no colour bar over a single value without a range of
  its own, no "1 frames", "0..0" or "−0" in its text.

A page or a preset added to the lists is held to it here with no other line of test (its
layout in tests/app/test_layout.py). Each topic's downloads are compared with its snippet's
in its own tests (tests/topics/test_reproduce.py and the topic's test file).
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterator

import numpy as np
import pytest
from app_runs import assert_page_ran, open_url, page_id
from streamlit.testing.v1 import AppTest

from explorer import page_list, reproduce
from explorer.page_list import PageInfo, address_path
from explorer.presets import PRESETS
from explorer.ui.controls import OFFER_DOWNLOADS

PAGE_BY_KEY = {page.url_path: page for page in page_list.PAGES}

#: A number as the pages write it: a sign (- or −), digits (with thousands commas), decimals, an exponent.
NUMBER = re.compile(r"[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]\d+)?")
#: What a page shows where it has no number ("n/a", "no rows", "none < 10⁷"): the snippet's None, NaN or inf.
NO_NUMBER = re.compile(r"(n/a|no|none)\b")


def open_view(page: PageInfo, query: dict[str, str]) -> AppTest:
    at = open_url(address_path(page), {"code": "true", **query})
    assert_page_ran(at, page)
    return at


def snippet_namespace(at: AppTest) -> dict[str, object]:
    """The page's first snippet (NumPy), run in a fresh namespace."""
    codes = at.get("code")
    assert codes, "the page shows no reproduce-this code"
    return reproduce.run_snippet(codes[0].value)


def written_as(value: float, displayed: str) -> bool:
    """Whether ``value`` written with the digits of ``displayed`` (decimals, or an exponent's) is it."""
    text = displayed.replace(",", "").replace("−", "-")
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return (f"{value:.{decimals}e}" if exponent else f"{value:.{decimals}f}") == text


def assert_shows(value: object, displayed: str, label: str) -> None:
    """One metric: the snippet's ``value`` (a number, numbers, or None) is what the page displays."""
    values = [None] if value is None else list(np.ravel(np.asarray(value, dtype=object)))
    message = f"{label!r}: the page shows {displayed!r}, its snippet prints {values}"
    if any(v is None or not math.isfinite(float(v)) for v in values):
        assert len(values) == 1 and NO_NUMBER.match(displayed), message
        return
    numbers = NUMBER.findall(displayed)
    assert len(numbers) == len(values), message
    assert all(written_as(float(v), shown) for v, shown in zip(values, numbers, strict=True)), message


def assert_prints_the_pages_numbers(at: AppTest, namespace: dict[str, object]) -> None:
    """Every number the page shows as a metric is its snippet's ``numbers[label]``, and no other."""
    metrics = {metric.label: metric.value for metric in at.metric}
    if not metrics and "numbers" not in namespace:
        return
    shown = namespace.get("numbers")
    assert isinstance(shown, dict), "the page shows numbers (metrics) and its snippet binds no `numbers` dict"
    assert set(shown) == set(metrics), (
        f"shown by the page only: {sorted(set(metrics) - set(shown))}; "
        f"printed by the snippet only: {sorted(set(shown) - set(metrics))}"
    )
    for label, displayed in metrics.items():
        assert_shows(shown[label], displayed, label)


def assert_no_table_shows_none(at: AppTest) -> None:
    """A table with missing values says what it shows for them: st.dataframe writes Python's "None"."""
    for table in at.dataframe:
        if table.value.isna().to_numpy().any():
            assert table.proto.placeholder, f"a table writes None for its missing values: {list(table.value.columns)}"


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_the_page_runs_and_its_code_runs_covers_its_downloads_and_prints_its_numbers(page: PageInfo) -> None:
    """AppTest smoke run at the defaults with the code shown and the downloads offered; the
    first snippet shown (NumPy) runs in a fresh namespace and binds ``result``: a dict from
    the key of one or more of the page's downloads to the array that download holds (every
    download, except the Scorecard's distances and Precision's summary and one column); and
    ``numbers``: the page's numbers."""
    at = open_view(page, {})
    at.sidebar.toggle(key=OFFER_DOWNLOADS).set_value(True).run()
    assert_page_ran(at, page)
    downloads = {button.key.rsplit("_", 1)[0] for button in at.get("download_button")} - {"pitfalls_example"}
    assert downloads, "the page offers no download"
    namespace = snippet_namespace(at)
    result = namespace["result"]
    assert isinstance(result, dict) and result, "the snippet's result is not a dict of downloads"
    assert set(result) <= downloads, f"not a download of the page: {sorted(set(result) - downloads)}"
    assert all(np.asarray(value).size for value in result.values())
    assert_prints_the_pages_numbers(at, namespace)
    assert_no_table_shows_none(at)


@pytest.mark.parametrize("key", list(PRESETS))
def test_each_preset_shows_the_numbers_its_code_prints(key: str) -> None:
    at = open_view(PAGE_BY_KEY[PRESETS[key].page], {"preset": key})
    assert_prints_the_pages_numbers(at, snippet_namespace(at))
    assert_no_table_shows_none(at)


# --------------------------------------------------------------------------- L = 1


def array(values: object) -> np.ndarray:
    """A trace's array as Plotly's JSON holds it: a list, or a typed array (base64 bytes)."""
    if isinstance(values, dict) and "bdata" in values:
        flat = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
        return flat.reshape([int(side) for side in str(values["shape"]).split(",")]) if "shape" in values else flat
    return np.asarray([] if values is None else values, dtype=object)


def draws_nothing(trace: dict) -> bool:
    """A trace that puts nothing on screen: no value, or a line of one point without markers or text."""
    points = max(array(trace.get(axis)).size for axis in ("x", "y", "z"))
    if trace.get("type", "scatter") not in ("scatter", "scattergl"):
        return points == 0
    mode = trace.get("mode", "lines+markers")
    return not ((("markers" in mode or "text" in mode) and points >= 1) or ("lines" in mode and points >= 2))


def invented_colour_range(trace: dict) -> bool:
    """A colour bar over values that are all one number, with no range of its own: Plotly then
    invents one around it (a "position k" bar from −0.4 to 0.4)."""
    marker = trace.get("marker", {})
    if trace.get("type") == "heatmap":
        colours, given = trace.get("z"), "zmin" in trace and "zmax" in trace
        shown = trace.get("showscale", True)
    else:
        colours, given = marker.get("color"), "cmin" in marker and "cmax" in marker
        shown = marker.get("showscale", "colorbar" in marker)
    if not shown or given or colours is None or isinstance(colours, str):
        return False
    values = array(colours).astype(np.float64)
    return values.size > 0 and float(np.ptp(values)) == 0.0


def strings(value: object) -> Iterator[str]:
    """Every text in a figure's JSON (titles, annotations, trace names, Play's labels), not its data."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("bdata", "dtype", "shape", "x", "y", "z", "customdata"):
                yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


#: "1 frames", "1 bits", "1 positions": a count of one with a plural noun (not "2L − 1 offsets", a formula).
ONE_PLURAL = re.compile(
    r"(?<![\d.,^])(?<![−+-] )\b1 (?:[a-z]+ )?"
    r"(?:positions|frames|bits|pairs|rows|columns|values|tokens|offsets|cells|blocks|points|dimensions|cycles)\b"
)
#: "0..0", "0 .. 0": a range of one number.
ONE_NUMBER_RANGE = re.compile(r"(?<![\d.,])(\d+(?:,\d{3})*) ?\.\. ?\1(?!\d|,\d)")
#: "−0": zero with a sign.
SIGNED_ZERO = re.compile(r"(?:^|[\s=(])[−-]0(?![.,]?\d)")


def page_texts(at: AppTest) -> Iterator[str]:
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "success", "warning", "error"):
        for element in at.get(kind):
            yield element.value
    for metric in at.metric:
        yield from (metric.label, metric.value, metric.proto.help)
    for chart in at.get("plotly_chart"):
        yield from strings(json.loads(chart.proto.spec))


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_a_single_position_shows_something_true_and_the_snippets_numbers(page: PageInfo) -> None:
    """L = 1: nothing drawn empty, no colour bar of an invented range, counts in the singular,
    no one-number ranges or signed zeros; and the numbers the page shows are still its snippet's."""
    at = open_view(page, {"L": "1"})
    for chart in at.get("plotly_chart"):
        figure = json.loads(chart.proto.spec)
        title = str(figure["layout"].get("title", {}).get("text", ""))
        empty = [trace.get("name", trace.get("type", "scatter")) for trace in figure["data"] if draws_nothing(trace)]
        assert not empty, f"chart {title!r}: traces that draw nothing at L=1: {empty}"
        invented = [trace.get("name", trace.get("type")) for trace in figure["data"] if invented_colour_range(trace)]
        assert not invented, f"chart {title!r}: a colour bar over one value, with no range: {invented}"
    for text in page_texts(at):
        for rule, pattern in (("a count of one in the plural", ONE_PLURAL), ("a range of one number", ONE_NUMBER_RANGE),
                              ("a signed zero", SIGNED_ZERO)):
            found = pattern.search(text)
            assert not found, f"{rule}, {found.group(0)!r}, in {text!r}"
    assert_prints_the_pages_numbers(at, snippet_namespace(at))
    assert_no_table_shows_none(at)


#: Frames a Play chart has at least, at its page's defaults: a sweep to watch, not a jump.
MIN_PLAY_FRAMES = 8


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_every_play_chart_has_frames_to_play_at_the_page_defaults(page: PageInfo) -> None:
    """Each Play chart a page draws at its defaults sweeps MIN_PLAY_FRAMES frames or more, its frame
    slider a step per frame (Relative positions' "P @ M(δ), δ = 0..1" had two)."""
    at = open_url(address_path(page))
    assert_page_ran(at, page)
    for chart in at.get("plotly_chart"):
        figure = json.loads(chart.proto.spec)
        frames = figure.get("frames") or []
        sliders = figure["layout"].get("sliders") or []
        if not frames and not sliders:
            continue
        title = figure["layout"].get("title", {}).get("text", "")
        assert len(frames) >= MIN_PLAY_FRAMES, f"/{address_path(page)}: {title!r} has {len(frames)} frames"
        assert len(sliders[0]["steps"]) == len(frames), title
