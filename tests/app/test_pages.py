"""One contract over the page list (explorer/page_list.py) and the presets (explorer/presets.py):

- every page runs at its defaults with its code shown and its downloads offered, and shows
  "reproduce this" code that runs and binds the arrays of its downloads;
- no table writes Python's "None" for a missing value;
- each snippet (NumPy, and PyTorch where the page offers it) prints the numbers the page shows, under
  the page's labels and written as the page writes them: every metric, and no number the page does
  not show (a metric's, a table row's, or one of its text's); a page that shows numbers and whose
  snippet prints nothing fails (at the defaults, at a copied link's settings, at every preset and at
  L=1);
- at L=1 (one position) every page still shows something true: no chart with a trace that
  draws nothing (a line of one point), no colour bar over a single value without a range of
  its own, no "1 frames", "0..0" or "−0" in its text.

A page or a preset added to the lists is held to it here with no other line of test (its
layout in tests/app/test_layout.py). Each topic's downloads are compared with its snippet's
in its own tests (tests/topics/test_reproduce.py and the topic's test file).
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from support.app_runs import DEEP_LINKS, assert_page_ran, open_url, page_id, play_open
from support.snippets import run_snippet

from explorer import page_list
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
    return run_snippet(codes[0].value)


def printed(code: str) -> list[tuple[str, str]]:
    """What a snippet prints, line by line, as (label, what follows the label's last ": ")."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        run_snippet(code)
    return [(label, rest) for label, _, rest in (line.rpartition(": ") for line in output.getvalue().splitlines())]


def numbers_in(text: str) -> list[str]:
    return NUMBER.findall(text.replace("−", "-"))


def written_as(value: float, displayed: str) -> bool:
    """Whether ``value`` written with the digits of ``displayed`` (decimals, or an exponent's) is it."""
    text = displayed.replace(",", "").replace("−", "-")
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return (f"{value:.{decimals}e}" if exponent else f"{value:.{decimals}f}") == text


def table_rows(at: AppTest) -> dict[str, list[object]]:
    """Each row of the page's tables by the label it is shown with (its first cell, or its index when the
    index is shown): the cells as the page writes them (a column's printf format, a text) or, for a number
    written by Streamlit's own rules (no format, or one Python's % does not read: "%,d"), the number itself,
    which a snippet must print to the digits it prints."""
    rows = {}
    for table in at.dataframe:
        config = json.loads(table.proto.columns or "{}")
        frame = table.value
        if config.get("_index", {}).get("hidden"):
            frame = frame.set_index(frame.columns[0])
        for label, row in frame.iterrows():
            cells = []
            for column, cell in row.items():
                cells.append(printf(config.get(column, {}).get("type_config", {}).get("format"), cell))
            rows[str(label)] = cells
    return rows


def printf(number_format: str | None, cell: object) -> object:
    try:
        return number_format % cell if number_format else cell
    except (TypeError, ValueError):
        return cell


def shown_texts(at: AppTest) -> list[str]:
    return [element.value for kind in ("markdown", "caption", "info", "success", "warning", "error")
            for element in at.get(kind)]


def assert_row_shows(cells: list[object], printed_numbers: list[str], message: str) -> None:
    """A table row's numbers, in order, are the printed ones: text as written, a bare number to its digits."""
    expected: list[object] = []
    for cell in cells:
        expected.extend(numbers_in(cell) if isinstance(cell, str) else [cell])
    assert len(expected) == len(printed_numbers), message
    for cell, shown in zip(expected, printed_numbers, strict=True):
        if isinstance(cell, str):  # thousands separators aside: a table's text writes them, a format spec may not
            assert cell.replace(",", "") == shown.replace(",", ""), message
        else:
            assert written_as(float(cell), shown), message


#: Below this, a number the page shows is a rounding error (Relative positions' max |P M − PE|), whose digits
#: another library's sin (torch's) does not repeat.
ROUNDING = 1e-12


def is_rounding(numbers: list[str]) -> bool:
    return bool(numbers) and all(abs(float(number.replace(",", ""))) < ROUNDING for number in numbers)


def assert_prints_what_the_page_shows(at: AppTest, *, tables_need_printing: bool = True) -> None:
    """Each snippet (NumPy, and PyTorch where the page offers it) prints the numbers the page shows, written
    as the page writes them, under the page's labels: every metric, and no number the page does not show.

    A printed line "label: numbers" is a metric's (its numbers are the metric's, digit for digit; "n/a"
    where the metric shows none), a table row's (the row shown with that label: its numbers in order), or
    a number of the page's text (a caption or paragraph holding the label and each number). A page that
    shows numbers (a metric, a table; a metric only, without ``tables_need_printing``) and whose snippet
    prints nothing fails. A PyTorch variant may write a rounding error (below ROUNDING) with other digits
    than the page's NumPy does."""
    metrics = {metric.label: metric.value for metric in at.metric}
    rows, texts = table_rows(at), shown_texts(at)
    codes = [element.value for element in at.get("code")]
    assert codes, "the page shows no reproduce-this code"
    for variant, code in zip(("NumPy", "PyTorch"), codes, strict=False):
        lines = printed(code)
        shows_numbers = bool(metrics or (rows and tables_need_printing))
        assert lines or not shows_numbers, f"{variant}: the page shows numbers and its snippet prints nothing"
        unprinted = set(metrics) - {label for label, _ in lines}
        assert not unprinted, f"{variant}: shown by the page, not printed: {sorted(unprinted)}"
        for label, rest in lines:
            numbers = numbers_in(rest)
            message = f"{variant} prints {label!r}: {rest!r}"
            if label in metrics:
                message += f"; the page shows {metrics[label]!r}"
                if not numbers:
                    assert rest == "n/a" and NO_NUMBER.match(metrics[label]), message
                elif variant == "PyTorch" and is_rounding(numbers) and is_rounding(numbers_in(metrics[label])):
                    pass  # a rounding error measured with torch's sin: its own digits (the snippet says so)
                else:
                    assert numbers == numbers_in(metrics[label]), message
            elif label in rows:
                assert_row_shows(rows[label], numbers, message + f"; the page's row shows {rows[label]}")
            else:
                assert numbers and any(label in text and set(numbers) <= set(numbers_in(text)) for text in texts), (
                    message + ": no metric, table row or text of the page shows it"
                )


def assert_no_table_shows_none(at: AppTest) -> None:
    """A table with missing values says what it shows for them: st.dataframe writes Python's "None"."""
    for table in at.dataframe:
        if table.value.isna().to_numpy().any():
            assert table.proto.placeholder, f"a table writes None for its missing values: {list(table.value.columns)}"


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_the_page_runs_and_its_code_runs_covers_its_downloads_and_prints_its_numbers(page: PageInfo) -> None:
    """AppTest smoke run at the defaults with the code shown, the downloads offered and Play open; the
    first snippet shown (NumPy) runs in a fresh namespace and binds ``result``: a dict from
    the key of one or more of the page's downloads to the array that download holds (every
    download, except the Scorecard's distances and Precision's summary and one column); and
    ``numbers``: the page's numbers."""
    at = open_view(page, play_open(address_path(page)))
    at.sidebar.toggle(key=OFFER_DOWNLOADS).set_value(True).run()
    assert_page_ran(at, page)
    downloads = {button.key.rsplit("_", 1)[0] for button in at.get("download_button")} - {"pitfalls_example"}
    assert downloads, "the page offers no download"
    namespace = snippet_namespace(at)
    result = namespace["result"]
    assert isinstance(result, dict) and result, "the snippet's result is not a dict of downloads"
    assert set(result) <= downloads, f"not a download of the page: {sorted(set(result) - downloads)}"
    assert all(np.asarray(value).size for value in result.values())
    assert_prints_what_the_page_shows(at)
    assert_no_table_shows_none(at)


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_the_code_prints_what_the_page_shows_at_other_settings(page: PageInfo) -> None:
    """A copied link's settings (d=64, L=300, n=100 and a page control: tests/app_runs.py's DEEP_LINKS)."""
    query = dict(parse_qsl(DEEP_LINKS[address_path(page)]))
    assert_prints_what_the_page_shows(open_view(page, query))


@pytest.mark.parametrize("key", list(PRESETS))
def test_each_preset_shows_the_numbers_its_code_prints(key: str) -> None:
    at = open_view(PAGE_BY_KEY[PRESETS[key].page], {"preset": key})
    assert_prints_what_the_page_shows(at)
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
    # At L = 1 a page may keep only its tables of data (Binary's periods): its numbers need two positions.
    assert_prints_what_the_page_shows(at, tables_need_printing=False)
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
