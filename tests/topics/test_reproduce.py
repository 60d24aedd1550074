"""'Reproduce this' (explorer.reproduce): every page's snippet runs on its own and gives the
numbers that the page draws and offers for download, for several settings and page controls.

The app side is computed here through the functions the page calls (the compute wrappers,
pe_core, the figure modules' table builders); the snippet side only by executing the
generated code. A snippet binds ``result`` to {download key: array}, the same rows and
columns as the download table of that key.

Tolerances: where the page draws block means from a closed form and the snippet sums the
full matrix, the two agree to rounding (about 1e-13 for values bounded by 1); elsewhere
the snippet repeats the page's own operations and the numbers are bit for bit the same.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.angle_rounding import angle_rounding_tolerance
from support.app_runs import PAGE_BY_KEY, open_page
from support.snippets import run_snippet

import pe_core
from explorer import figures, reproduce
from explorer.settings import FULL_MATRIX_CELLS, Settings
from explorer.topics import binary, home, matrix, relative, similarity, waves
from explorer.ui import cached
from explorer.ui.controls import OFFER_DOWNLOADS

#: Block means from a closed form against sums of the full matrix (values bounded by 1).
CLOSED_FORM_ATOL = 1e-12
#: PyTorch's pow and sin may differ from NumPy's by an ulp, times angles up to L rad.
TORCH_ATOL = 1e-11

SEED001 = Settings(d=512, n=10000.0, L=50, layout="concatenated", convention="tensor2tensor")
#: Both axes of the heatmaps reduced to block means (the page's own limits).
REDUCED = Settings(L=3000, d=512)
REDUCED_T2T = Settings(L=3000, d=512, n=100.0, layout="concatenated", convention="tensor2tensor")


def run(code: str) -> dict[str, np.ndarray]:
    return run_snippet(code)["result"]


def assert_same(
    result: dict[str, np.ndarray], tables: dict[str, pd.DataFrame], *, atol: float = 0.0, rtol: float = 0.0,
    tolerances: dict[str, tuple[float, float]] | None = None,
) -> None:
    """Each result array equals its download table's numbers (within ``atol``/``rtol``, or
    the (rtol, atol) given for that key)."""
    assert set(result) == set(tables)
    for key, table in tables.items():
        key_rtol, key_atol = (tolerances or {}).get(key, (rtol, atol))
        got = np.asarray(result[key], dtype=np.float64)
        assert got.shape == table.shape, key
        # The NPY download is table.to_numpy() saved without pickle: numbers only.
        assert table.to_numpy().dtype.kind in "fiu", f"{key}: {table.dtypes.tolist()}"
        np.testing.assert_allclose(got, table.to_numpy(dtype=np.float64), rtol=key_rtol, atol=key_atol, err_msg=key)


def torch_result(code: str) -> dict[str, np.ndarray]:
    """Run a PyTorch snippet as a reader would, pasted into a fresh Python with torch's own
    threads (as many as cores).

    The snippet pins torch to one thread itself (explorer.reproduce.TORCH_IMPORTS) because
    of a bug of torch 2.13.0+cpu: with two threads, ``torch.sin`` of a (50, 256) float64
    tensor, whose second half goes to the second thread, was off by up to 6.8e-9 in that half
    in 3 of 16 fresh interpreters (0 of 20 on one thread).
    """
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "result.npz"
        save = f"\nnp.savez({str(saved)!r}, **{{key: np.asarray(value) for key, value in result.items()}})\n"
        completed = subprocess.run(
            [sys.executable, "-c", code + save], capture_output=True, text=True, timeout=120,
            env={key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"},
        )
        assert completed.returncode == 0, completed.stderr
        with np.load(saved) as arrays:
            return {key: arrays[key] for key in arrays.files}


# --------------------------------------------------------------------------- the encoding


@pytest.mark.parametrize(
    "settings", [Settings(), SEED001, Settings(d=6, L=7, n=2.0), Settings(d=7, L=9, layout="concatenated")],
    ids=["default", "seed001", "small", "odd-d"],
)
@pytest.mark.parametrize("start", [0, 13, -10])
def test_encoding_code_is_pe_core_to_the_bit(settings: Settings, start: int) -> None:
    namespace = run_snippet(reproduce.encoding_code(settings, start=start))
    expected = pe_core.positional_encoding(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention, start=start
    )
    # The snippet's sin_cos keeps the angle's rounding error as pe_core does (a textbook sin(k * w)
    # would differ by up to half an ulp of k w): so the numbers the pages print come out the same.
    np.testing.assert_array_equal(namespace["P"], expected)


@pytest.mark.parametrize("start", [0, 9_999_000, -(2**24 - 2000)])
def test_sin_cos_code_is_pe_core_to_the_bit_for_every_position_up_to_2_to_the_24(start: int) -> None:
    """The far positions (Home's 10^7) and pairs of every speed, the bases at both ends."""
    sin_cos = run_snippet("import numpy as np\n" + reproduce.sin_cos_code())["sin_cos"]
    k = np.arange(start, start + 2000, dtype=np.float64)
    for n in (2.0, 1e4, 1e8):
        w = pe_core.frequencies(512, n)
        for got, expected in zip(sin_cos(k[:, None], w), pe_core.sin_cos_of_products(k[:, None], w[None, :]),
                                 strict=True):
            np.testing.assert_array_equal(got, expected)


def test_block_average_code_refuses_edges_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="block_edges"):
        reproduce.block_average_code("A", np.array([0, 1, 5, 10]))


# --------------------------------------------------------------------------- Home


@pytest.mark.parametrize(
    "settings",
    [Settings(), REDUCED_T2T, Settings(d=2, L=5000), Settings(d=7, L=30), Settings(L=1)],
    ids=["default-direct", "closed-form", "d2-near-repeat", "odd-d", "one-position"],
)
def test_home_snippet_gives_the_criteria_numbers(settings: Settings) -> None:
    table = home.criteria_table(home.evaluate(settings))
    # The snippet's textbook angles differ from pe_core's by rounding (~1e-16 x angle), summed
    # over d columns: the measured values, including rounding-noise ones such as the
    # consistent-distance difference, agree to 1e-11; the pass/fail column exactly.
    result = run(home.home_code(settings))["home_criteria"]
    np.testing.assert_allclose(result[:, 0], table.to_numpy(dtype=np.float64)[:, 0], rtol=0, atol=1e-11)
    np.testing.assert_array_equal(result[:, 1], table.to_numpy(dtype=np.float64)[:, 1])


# --------------------------------------------------------------------------- Encoding matrix


def matrix_tables(
    settings: Settings, view: str, transpose: bool, row_start: int | None = None
) -> dict[str, pd.DataFrame]:
    """What pages/matrix_page.py offers for download (rows: blocks of all positions, or the
    window of as many single positions as the grid has rows, from ``row_start``)."""
    w = cached.frequencies(settings)
    rates = matrix.frequency_table(w)
    start = row_start or 0
    rows, cols = matrix.matrix_grid(settings.L, settings.d, view, transpose=transpose)
    drawn = settings if row_start is None else replace(settings, L=rows)
    if view == "values":
        reduced = cached.reduced_encoding(drawn, rows, cols, start)
        labels, _ = figures.encoding_axis_labels(
            reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w, settings.layout
        )
        table = figures.encoding_table(reduced.values, reduced.row_first, reduced.row_last, labels, transpose=transpose)
        return {"matrix_heatmap": table, "matrix_rates": rates}
    degrees, first, last, pair_edges = pe_core.angle_block_mean(
        drawn.L, drawn.d, drawn.n, convention=drawn.convention, start=start, max_rows=rows, max_pairs=cols,
    )
    labels = matrix.angle_axis_labels(pair_edges, w)
    return {"matrix_angles": figures.encoding_table(degrees, first, last, labels, transpose=transpose),
            "matrix_rates": rates}


MATRIX_CASES = [
    (Settings(), False),
    (Settings(d=4, n=100.0, L=4), False),
    (SEED001, True),
    (REDUCED, False),
    (REDUCED_T2T, True),
]


def matrix_snippet(
    settings: Settings, view: str, transpose: bool, library: str = "numpy", row_start: int | None = None
) -> str:
    rows, cols = matrix.matrix_grid(settings.L, settings.d, view, transpose=transpose)
    return matrix.matrix_code(
        settings, view, transpose=transpose, max_rows=rows, max_cols=cols, row_start=row_start, library=library
    )


@pytest.mark.parametrize(("settings", "transpose"), MATRIX_CASES)
def test_matrix_snippet_gives_the_drawn_heatmap(settings: Settings, transpose: bool) -> None:
    tables = matrix_tables(settings, "values", transpose)
    assert_same(run(matrix_snippet(settings, "values", transpose)), tables, atol=CLOSED_FORM_ATOL)
    if settings == REDUCED:
        heatmap = tables["matrix_heatmap"]
        rows, cols = matrix.matrix_grid(REDUCED.L, REDUCED.d, "values")
        # Columns come in runs of pairs of one kind, sines and cosines apart: an even count.
        assert heatmap.shape[0] == rows and heatmap.shape[1] in (cols - 1, cols)
        assert heatmap.size <= figures.HEATMAP_CELLS < REDUCED.L * REDUCED.d
        assert heatmap.index[0].startswith("position k = 0..") and "(mean of" in heatmap.index[0]


#: (settings, view, transpose, first position of the window of single positions)
MATRIX_WINDOW_CASES = [
    (REDUCED, "values", False, 0),
    (REDUCED_T2T, "values", True, 3000 - matrix.matrix_grid(3000, REDUCED_T2T.d, "values", transpose=True)[0]),
    (Settings(L=16384, d=2048), "values", False, 12345),
    (Settings(L=5000, d=64, layout="concatenated"), "angles", True, 777),
]


@pytest.mark.parametrize(("settings", "view", "transpose", "row_start"), MATRIX_WINDOW_CASES)
def test_matrix_snippet_follows_the_window_of_positions(
    settings: Settings, view: str, transpose: bool, row_start: int
) -> None:
    tables = matrix_tables(settings, view, transpose, row_start)
    result = run(matrix_snippet(settings, view, transpose, row_start=row_start))
    key = f"matrix_{'heatmap' if view == 'values' else 'angles'}"
    rows = tables[key].T if transpose else tables[key]
    # One row per position of the window, exact: no block of positions is averaged.
    assert list(rows.index[:2]) == [f"position k = {row_start}", f"position k = {row_start + 1}"]
    assert rows.shape[0] == matrix.matrix_grid(settings.L, settings.d, view, transpose=transpose)[0]
    if view == "values":
        assert_same(result, tables, atol=CLOSED_FORM_ATOL)
    else:
        assert_same_angles(result[key], tables[key].to_numpy(), settings, transpose, row_start)


def test_matrix_page_draws_and_offers_the_window_the_url_names() -> None:
    """?rows=window&row_start=777: the chart, the download and the code all hold positions
    777 .. 777 + rows - 1, one row each."""
    settings = Settings(L=3000, d=64)
    rows = matrix.matrix_grid(settings.L, settings.d, "values")[0]
    at = open_page(PAGE_BY_KEY["matrix"], {"L": "3000", "d": "64", "rows": "window", "row_start": "777",
                                           "code": "true"})
    assert at.session_state["rows"] == "window" and at.session_state["row_start"] == 777
    spec = at.get("plotly_chart")[0].proto.spec
    title = json.loads(spec)["layout"]["title"]["text"].replace("<br>", " ")  # a long title is wrapped
    assert f"positions 777..{777 + rows - 1:,}" in title and "position k = 777" in spec
    assert "position k = 776" not in spec and "mean of" not in spec  # d = 64: no column is averaged either
    code = at.get("code")[0].value
    assert f"first, rows = 777, {rows}" in code
    result = run(code)["matrix_heatmap"]
    np.testing.assert_allclose(result, matrix_tables(settings, "values", False, 777)["matrix_heatmap"].to_numpy(),
                               atol=CLOSED_FORM_ATOL)


def assert_same_angles(
    got: np.ndarray, expected: np.ndarray, settings: Settings, transpose: bool, row_start: int | None = None
) -> None:
    """Degrees mod 360 agree as points on the circle: the angle of a mean vector of length r
    is known to rounding / r, so compare arc lengths r * |difference| (radians)."""
    m = (settings.d + 1) // 2
    rows, pairs = matrix.matrix_grid(settings.L, settings.d, "angles", transpose=transpose)
    means = pe_core.encoding_block_average(
        settings.L if row_start is None else rows, 2 * m, settings.n,
        layout="concatenated", convention=settings.convention, start=row_start or 0, max_rows=rows,
        max_cols=2 * pairs,
    ).values
    half = means.shape[1] // 2
    radius = np.hypot(means[:, :half], means[:, half:])
    radius = radius.T if transpose else radius
    difference = (got - expected + 180.0) % 360.0 - 180.0
    assert got.shape == expected.shape
    assert np.max(np.abs(np.radians(difference)) * radius) <= CLOSED_FORM_ATOL


@pytest.mark.parametrize(
    ("settings", "transpose"), [(SEED001, False), (REDUCED, True), (Settings(L=3000, d=1024, n=1e6), False)]
)
def test_matrix_snippet_gives_the_drawn_angle_map(settings: Settings, transpose: bool) -> None:
    tables = matrix_tables(settings, "angles", transpose)
    result = run(matrix_snippet(settings, "angles", transpose))
    assert set(result) == set(tables)
    assert_same_angles(result["matrix_angles"], tables["matrix_angles"].to_numpy(), settings, transpose)
    np.testing.assert_array_equal(result["matrix_rates"], tables["matrix_rates"].to_numpy(dtype=np.float64))


@pytest.mark.parametrize(("settings", "transpose"), [(SEED001, True), (REDUCED, False)])
def test_matrix_torch_snippet_gives_the_drawn_heatmap(settings: Settings, transpose: bool) -> None:
    result = torch_result(matrix_snippet(settings, "values", transpose, "torch"))
    assert_same(result, matrix_tables(settings, "values", transpose), atol=TORCH_ATOL, rtol=1e-12)


# --------------------------------------------------------------------------- Waves


def waves_tables(settings: Settings, positions: list[int], pairs_shown: int, columns: list[int], pair: int,
                 position: int) -> dict[str, pd.DataFrame]:
    """What pages/waves_page.py offers for download."""
    w = cached.frequencies(settings)
    values = waves.encoding_columns(settings.L, settings.d, settings.n, columns, layout=settings.layout,
                                 convention=settings.convention)
    return {
        "waves_profiles": waves.profile_table(positions, w[:pairs_shown]),
        "waves_columns": waves.columns_table(values, waves.column_names(columns, settings.d, w, settings.layout)),
        "waves_circle": waves.circle_table(float(w[pair]), position),
    }


@pytest.mark.parametrize(
    ("settings", "positions", "pairs_shown", "columns", "pair", "position"),
    [
        (Settings(), [0, 4, 8, 12], 64, [0, 1], 0, 10),
        (Settings(d=128, n=1e8, L=50), [3], 1, [2, 3, 127], 63, 49),
        (REDUCED_T2T, [10**7, 1, 5], 256, [0, 255, 256, 511], 255, 2999),
        (Settings(d=2, L=1), [0], 1, [1], 0, 0),
    ],
    ids=["default", "seed002-bug", "long-trail", "one-position"],
)
def test_waves_snippet_gives_the_three_charts(
    settings: Settings, positions: list[int], pairs_shown: int, columns: list[int], pair: int, position: int
) -> None:
    code = waves.waves_code(settings, positions=positions, pairs_shown=pairs_shown, columns=columns, pair=pair,
                                position=position, max_trail=waves.MAX_TRAIL)
    assert_same(run(code), waves_tables(settings, positions, pairs_shown, columns, pair, position))


# --------------------------------------------------------------------------- Similarity


def similarity_tables(settings: Settings, ref: int) -> dict[str, pd.DataFrame]:
    """What pages/similarity_page.py offers for download."""
    L, d = settings.L, settings.d
    by_offset = cached.dot_by_offset(settings)
    if L * d <= FULL_MATRIX_CELLS:
        curves = similarity.similarity_from_matrix(cached.encoding(settings), ref)
        first, measured = 0, curves.dot
    else:
        curves = similarity.similarity_from_offsets(by_offset, ref, d)
        first, measured = similarity.measure_around(
            L, d, settings.n, layout=settings.layout, convention=settings.convention,
            ref=ref, max_cells=similarity.MEASURED_CELLS,
        )
    edges = pe_core.block_edges(L, similarity.SIMILARITY_BLOCKS)
    blocks = pe_core.offset_matrix_block_average(by_offset, edges)
    return {
        "similarity_lines": similarity.similarity_table(curves),
        "similarity_matrix": similarity.offset_matrix_table(blocks, edges),
        "similarity_closed_form": similarity.closed_form_table(
            by_offset, measured=measured, measured_first_offset=first - ref
        ),
    }


@pytest.mark.parametrize(
    ("settings", "ref"),
    [(Settings(), 20), (SEED001, 20), (REDUCED, 0), (Settings(L=2100, d=1024, n=1e6, layout="concatenated"), 2099)],
    ids=["default", "seed001", "reduced", "closed-form-branch"],
)
def test_similarity_snippet_gives_the_three_charts(settings: Settings, ref: int) -> None:
    code = similarity.similarity_code(
        settings, ref, blocks=similarity.SIMILARITY_BLOCKS, full_cells=FULL_MATRIX_CELLS,
        measured_cells=similarity.MEASURED_CELLS,
    )
    L, d = settings.L, settings.d
    # The page's dot-product matrix takes block sums as differences of double prefix sums of
    # f, which reach about L^2 d/2: their rounding, over the smallest block, bounds the error.
    area = np.diff(pe_core.block_edges(L, similarity.SIMILARITY_BLOCKS)).min() ** 2
    matrix_atol = 8 * np.finfo(np.float64).eps * L * L * d / 2 / area
    # BLAS may sum a matrix-vector product in another order for another number of rows.
    measured = (1e-13, 1e-12 * d)
    assert_same(
        run(code), similarity_tables(settings, ref),
        tolerances={"similarity_lines": measured, "similarity_matrix": (0.0, matrix_atol),
                    "similarity_closed_form": measured},
    )


# --------------------------------------------------------------------------- Binary vs sinusoid


def binary_tables(settings: Settings, bits: int, ref: int, transpose: bool) -> dict[str, pd.DataFrame]:
    """What pages/binary_page.py offers for download."""
    L, d = settings.L, settings.d
    w = cached.frequencies(settings)
    rows, cols = figures.heatmap_grid(L, d, transpose=transpose, power_of_two_columns=True)
    row_edges = pe_core.block_edges(L, rows)
    B = pe_core.binary_encoding(L, bits)
    codes = pe_core.block_average(B, row_edges, np.arange(bits + 1))
    reduced = cached.reduced_encoding(settings, rows, cols)
    labels, _ = figures.encoding_axis_labels(reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w,
                                             settings.layout)
    sse = cached.sse_by_abs_offset(settings)[np.abs(np.arange(L) - ref)]
    return {
        "binary_codes": binary.binary_table(codes, row_edges[:-1], row_edges[1:] - 1, transpose=transpose),
        "binary_sinusoid": figures.encoding_table(reduced.values, reduced.row_first, reduced.row_last, labels,
                                                  transpose=transpose),
        "binary_periods": binary.periods_table(pe_core.bit_periods(bits), pe_core.wavelengths(d, settings.n,
                                                                                           settings.convention)),
        "binary_distances": binary.distance_table(pe_core.hamming_distance(B, ref), sse, ref=ref),
    }


@pytest.mark.parametrize(
    ("settings", "bits", "ref", "transpose"),
    [(Settings(d=512, n=1e6, L=100), 10, 0, True), (REDUCED_T2T, 14, 1234, False), (Settings(d=2, L=5), 3, 4, False)],
    ids=["seed003", "reduced", "fewer-pairs-than-bits"],
)
def test_binary_snippet_gives_the_four_charts(settings: Settings, bits: int, ref: int, transpose: bool) -> None:
    rows, cols = figures.heatmap_grid(settings.L, settings.d, transpose=transpose, power_of_two_columns=True)
    code = binary.binary_code(settings, bits=bits, ref=ref, transpose=transpose, max_rows=rows, max_cols=cols)
    tables = binary_tables(settings, bits, ref, transpose)
    # The SSE column is d - 2 sum_i cos(delta w_i) over d/2 textbook angles of at most L rad.
    sse_atol = settings.d * angle_rounding_tolerance(settings.L)
    assert_same(run(code), tables, tolerances={"binary_sinusoid": (0.0, CLOSED_FORM_ATOL),
                                               "binary_distances": (0.0, sse_atol)})


# --------------------------------------------------------------------------- Relative positions


def relative_tables(settings: Settings, delta: int, window_start: int, pair: int,
                    position: int) -> dict[str, pd.DataFrame]:
    """What pages/relative_page.py offers for download."""
    d, layout = settings.d, settings.layout
    dims = relative.transition_window_dims(d, layout, window_start, relative.TRANSITION_WINDOW)
    window = relative.transition_window(delta, d, settings.n, layout=layout, convention=settings.convention, dims=dims)
    map_rows, map_cols = figures.heatmap_grid(settings.L, d, power_of_two_columns=True)
    comparison = relative.compare_shift(
        settings.L, d, settings.n, layout=layout, convention=settings.convention, delta=delta,
        max_rows=map_rows, max_cols=map_cols, full_cells=FULL_MATRIX_CELLS,
    )
    w = cached.frequencies(settings)
    labels, _ = figures.encoding_axis_labels(comparison.column_is_sine, comparison.pair_first, comparison.pair_last,
                                             w, layout)
    return {
        "relative_transition": relative.transition_table(window, dims, d=d, layout=layout),
        "relative_shifted": figures.encoding_table(comparison.shifted, comparison.row_first, comparison.row_last,
                                                   labels),
        "relative_direct": figures.encoding_table(comparison.direct, comparison.row_first, comparison.row_last,
                                                  labels),
        "relative_rotation": relative.rotation_table(position * w[pair], delta * w[pair]),
    }


RELATIVE_CASES = [
    pytest.param(Settings(), 1, 0, 0, 1, id="default"),
    pytest.param(SEED001, -10, 0, 0, 1, id="seed001"),
    pytest.param(REDUCED, -2999, 200, 255, 2999, id="reduced"),
    pytest.param(Settings(L=4100, d=512, layout="concatenated"), 4000, 100, 3, 7, id="closed-form-branch"),
    pytest.param(Settings(L=10, d=2048, n=1e8), 9, 1920, 1023, 9, id="last-window"),
]


def relative_snippet(settings: Settings, delta: int, window_start: int, pair: int, position: int,
                     library: str = "numpy") -> str:
    map_rows, map_cols = figures.heatmap_grid(settings.L, settings.d, power_of_two_columns=True)
    return relative.relative_code(
        settings, delta=delta, window_start=window_start, window=relative.TRANSITION_WINDOW, pair=pair,
        position=position,
        map_rows=map_rows, map_cols=map_cols, full_cells=FULL_MATRIX_CELLS, library=library,
    )


@pytest.mark.parametrize(("settings", "delta", "window_start", "pair", "position"), RELATIVE_CASES)
def test_relative_snippet_gives_the_four_charts_and_the_pages_errors(
    settings: Settings, delta: int, window_start: int, pair: int, position: int
) -> None:
    namespace = run_snippet(relative_snippet(settings, delta, window_start, pair, position))
    tables = relative_tables(settings, delta, window_start, pair, position)
    # Block means of the whole matrix (the snippet) against the closed form's (the page, large L x d): rounding.
    maps = (0.0, CLOSED_FORM_ATOL)
    assert_same(namespace["result"], tables, tolerances={"relative_shifted": maps, "relative_direct": maps})
    # The errors the page shows are rounding itself: the snippet repeats the page's arithmetic to the bit.
    comparison = relative.compare_shift(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention, delta=delta,
        max_rows=1, max_cols=2, full_cells=FULL_MATRIX_CELLS,
    )
    labels = relative.metric_labels(delta, pair)
    assert namespace["numbers"][labels["error"]] == comparison.max_error
    assert namespace["numbers"][labels["seed"]] == comparison.seed_error


@pytest.mark.parametrize(("settings", "delta", "window_start", "pair", "position"), RELATIVE_CASES[1:4])
def test_relative_torch_snippet_gives_the_four_charts(
    settings: Settings, delta: int, window_start: int, pair: int, position: int
) -> None:
    result = torch_result(relative_snippet(settings, delta, window_start, pair, position, "torch"))
    tables = relative_tables(settings, delta, window_start, pair, position)
    assert_same(result, tables, atol=TORCH_ATOL, rtol=1e-12)


# --------------------------------------------------------------------------- the pages show them

#: page -> (URL query, download keys the page offers there)
PAGE_DOWNLOADS = {
    "home": ({}, ["home_criteria"]),
    "matrix": ({}, ["matrix_heatmap", "matrix_rates"]),
    "waves": ({}, ["waves_profiles", "waves_columns", "waves_circle"]),
    "similarity": ({}, ["similarity_lines", "similarity_matrix", "similarity_closed_form"]),
    "binary": ({}, ["binary_codes", "binary_sinusoid", "binary_periods", "binary_distances"]),
    "relative": ({}, ["relative_transition", "relative_shifted", "relative_direct", "relative_rotation"]),
}


@pytest.mark.parametrize("page", list(PAGE_DOWNLOADS))
def test_page_offers_downloads_and_code_for_the_current_settings(page: str) -> None:
    query, keys = PAGE_DOWNLOADS[page]
    at = open_page(PAGE_BY_KEY[page], {"d": "64", "L": "30", "code": "true", **query})
    # Downloads cost nothing until asked: no button (and no file registered) before the sidebar's toggle.
    assert not at.get("download_button")
    at.sidebar.toggle(key=OFFER_DOWNLOADS).set_value(True).run()
    buttons = {button.key for button in at.get("download_button")}
    assert {f"{key}_{kind}" for key in keys for kind in ("csv", "npy")} <= buttons
    codes = [element.value for element in at.get("code")]
    assert codes, "no 'reproduce this' code on the page"
    assert all(re.search(r"^L, d, n = 30, 64, 10000\.0$", code, re.MULTILINE) for code in codes)
    assert all(f'"{key}"' in codes[0] for key in keys), "the snippet's result names every download"
    # Hidden by default (the browser would highlight it again on every step), in the URL when shown.
    assert not open_page(PAGE_BY_KEY[page], {"d": "64", "L": "30", **query}).get("code")
    assert at.query_params.get("code") == "true"
