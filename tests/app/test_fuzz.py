"""Hypothesis throws arbitrary URLs at every page: nothing may break, nothing may blow up.

A query string here is raw, as a visitor can type it: any text, huge numbers, NaN and
infinities, repeated and unknown keys, very long values, stray '&' '=' '%', and
percent-escapes of bytes that are not UTF-8. It is decoded by Streamlit's own parser
(what the server does with the browser's URL) and the page is opened with the result,
through AppTest, as tests/app/test_app.py opens pages (its helpers, reused). Each page must
run without an exception or the "could not be drawn" message, send at most the page
budget, and write back a URL of bounded length.

Every page of app.py is fuzzed (discovered there); the keys tried are the shared ones
and every key a page reads through explorer.ui.controls (discovered in pages/).

Uploads too: random bytes, truncated and corrupted .npy files, pickled objects, a
header claiming a huge shape, CSV with text and NaN: the checker either reads a finite
2-D matrix or says in one line why not, and its page keeps working.
"""

from __future__ import annotations

import ast
import io
from pathlib import Path
from urllib.parse import quote, urlencode

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

# How the server decodes the browser's query string, and the size limits under which it ignores one.
from streamlit.runtime.state.query_params import _parse_query_string, sanitize_query_string
from support.app_runs import (
    MAX_PAGE_BYTES,
    PAGE_BY_KEY,
    PAGES,
    PLAY_KEYS,
    SIDEBAR_KEYS,
    element_bytes,
    open_page,
    page_id,
)

import pe_core
from explorer import uploads
from explorer.page_list import PageInfo
from explorer.settings import MAX_RAW_LENGTH
from explorer.ui.navigation import PAGE_FAILED

PITFALLS = PAGE_BY_KEY["pitfalls"]

ROOT = Path(__file__).resolve().parents[2]
#: Bounds of this file: (this + 3 explicit examples) x 13 pages runs of AppTest (each CI run draws
#: new ones, and hypothesis replays a failure's example first from its database). 15: about 30 s
#: on the slow 2-core machine of 2026-11-28 since AppTest sessions share their component scan
#: (app_runs.installed_components), where 6 took 60 s before.
EXAMPLES_PER_PAGE = 15
#: The URL the app writes back holds its own keys, each value at most as long as a text
#: control accepts (explorer.ui.controls.text_control), never a visitor's megabyte.
MAX_VALUE_WRITTEN = 4 * MAX_RAW_LENGTH


def page_url_keys() -> list[str]:
    """Every key a page passes to an explorer.ui.controls *_control(...) call, as written in pages/."""
    keys = set()
    for path in sorted((ROOT / "pages").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr.endswith("_control") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            ):
                keys.add(node.args[0].value)
    return sorted(keys)


KNOWN_KEYS = sorted({*SIDEBAR_KEYS, *page_url_keys(), *PLAY_KEYS})
SPECIAL_VALUES = [
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e308", "1e309", "-1e308", "5e-324", "0", "-0", "00008",
    "0x10", "1_000", "+64", " 64 ", "٣٢", "１２８", "true", "None", "[]", "{}", "<b>x</b>", "[x](javascript:1)",
    "0,1,2", "1;2", "\n", "%", "%%", "%G0", "%ZZ", "seed001-notebook", "concatenated", "tensor2tensor",
]


def _percent_bytes(data: bytes) -> str:
    return "".join(f"%{byte:02X}" for byte in data)


#: One raw value, as it stands in the URL (escaped or not).
raw_values = st.one_of(
    st.text(max_size=24).map(lambda text: quote(text, safe="")),
    st.text(alphabet="&=%+;#?/ ,.-eE0123456789", max_size=24),  # bits of URL syntax, unescaped
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(SPECIAL_VALUES).map(lambda text: quote(text, safe="%")),
    st.binary(min_size=1, max_size=12).map(_percent_bytes),  # mostly not UTF-8
    st.builds(lambda unit, count: unit * count, st.sampled_from(["9", "a", "%FF", "%E2%82", ",7"]),
              st.integers(min_value=65, max_value=5_000)),
)
raw_keys = st.one_of(st.sampled_from(KNOWN_KEYS), st.text(max_size=10).map(lambda text: quote(text, safe="")))
raw_query_strings = st.lists(st.tuples(raw_keys, raw_values), max_size=8).map(
    lambda pairs: "&".join(f"{key}={value}" for key, value in pairs)
)


def decoded(raw_query: str) -> dict[str, str | list[str]]:
    """The query string as st.query_params holds it (one value: str; repeated key: list)."""
    return {key: values[-1] if len(values) == 1 else values for key, values in _parse_query_string(raw_query).items()}


@pytest.mark.parametrize("page", PAGES, ids=page_id)
@settings(max_examples=EXAMPLES_PER_PAGE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw_query=raw_query_strings)
@example(raw_query="d=nan&d=1e400&L=%FF%FE&n=inf&n=-inf&layout=%C3%28&convention=&preset=%00&x=" + "9" * 20_000)
@example(raw_query="&".join(f"{key}={'%FF' * 300}" for key in KNOWN_KEYS))
@example(raw_query="d=2048&L=16384&n=2&" + "&".join(f"{key}=99999999999999999999" for key in KNOWN_KEYS[:8]))
def test_any_url_opens_every_page(page: PageInfo, raw_query: str) -> None:
    query = decoded(raw_query)
    at = open_page(page, query)  # asserts: no exception, no PAGE_FAILED, the right page
    charts = sum(len(chart.proto.spec.encode()) for chart in at.get("plotly_chart"))
    assert charts < MAX_PAGE_BYTES, f"chart JSON {charts:,} bytes"
    assert element_bytes(at) <= MAX_PAGE_BYTES
    # AppTest re-encodes the query; past Streamlit's size limits the app never sees it, writes
    # nothing, and AppTest reports the visitor's own URL back: only what the app writes is bounded.
    if sanitize_query_string(urlencode(query, doseq=True)):
        for key, values in at.query_params.items():
            assert key in KNOWN_KEYS, f"the app wrote the unknown key {key!r} into the URL"
            longest = max(len(value) for value in ([values] if isinstance(values, str) else values))
            assert longest <= MAX_VALUE_WRITTEN, f"the app wrote {longest:,} characters under {key!r}"


# --------------------------------------------------------------------------- uploads

def _npy(array: np.ndarray, *, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def _huge_shape_header() -> bytes:
    """A valid .npy header that claims 10^6 x 10^6 float64 values, with no data after it."""
    header = _npy(np.zeros((1, 1)))
    return header.replace(b"(1, 1)", b"(1000000, 1000000)")


upload_files = st.one_of(
    st.tuples(st.sampled_from(["m.npy", "m.csv", "m.txt", "", "m.NPY"]), st.binary(max_size=4096)),
    st.tuples(st.just("m.npy"), st.binary(max_size=400).map(lambda tail: _npy(np.eye(8))[:64] + tail)),
    st.tuples(
        st.just("m.npy"),
        st.integers(1, 300).map(lambda cut: _npy(pe_core.positional_encoding(20, 16))[:cut]),
    ),
    st.tuples(st.just("m.npy"), st.just(_npy(np.array([{"a": 1}], dtype=object), allow_pickle=True))),
    st.tuples(st.just("m.npy"), st.just(_huge_shape_header())),
    st.tuples(
        st.just("m.csv"),
        st.lists(st.lists(st.one_of(st.floats(allow_nan=True), st.text(max_size=5)), max_size=6), max_size=6).map(
            lambda rows: "\n".join(",".join(str(cell) for cell in row) for row in rows).encode()
        ),
    ),
    st.tuples(st.just("m.csv"), st.text(max_size=2000).map(lambda text: text.encode("utf-8", "surrogatepass"))),
)


@settings(max_examples=150, deadline=None)
@given(upload=upload_files)
def test_any_upload_is_a_matrix_or_a_one_line_message(upload: tuple[str, bytes]) -> None:
    name, data = upload
    try:
        matrix = uploads.read_matrix(name, data).matrix
    except ValueError as error:
        message = str(error)
        assert message and "\n" not in message and len(message) < 300, message
        return
    assert matrix.ndim == 2 and matrix.dtype == np.float64
    assert matrix.size <= pe_core.MAX_CELLS and np.all(np.isfinite(matrix))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(upload=upload_files)
def test_any_upload_leaves_the_checker_page_working(upload: tuple[str, bytes]) -> None:
    name, data = upload
    # Other extensions never reach the page: the uploader accepts .npy and .csv only (the
    # browser enforces it, and Streamlit refuses the rest with its own generic message).
    if not name.lower().endswith((".npy", ".csv")):
        name = "m.npy"
    at = open_page(PITFALLS)
    at.get("file_uploader")[0].set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert PAGE_FAILED not in [e.value for e in at.error]
