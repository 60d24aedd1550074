"""Conventions and pitfalls: variants, their difference, the upload checker and its page."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from support.angle_rounding import angle_rounding_tolerance
from support.app_runs import open_url
from support.engineer_files import WRITERS, cosine_first, tutorial_encoding
from support.seed_code import seed002_positional_encoding
from support.snippets import run_snippet

import pe_core
from explorer import uploads
from explorer.settings import Settings
from explorer.topics import pitfalls
from explorer.ui import blocks

ROOT = Path(__file__).resolve().parents[2]
FULL = 2_000_000


def grid_256(L: int, d: int) -> tuple[int, int]:
    return 256, 256


# --------------------------------------------------------------------------- read_matrix


def npy_bytes(array: np.ndarray, *, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def load_file(path: Path) -> np.ndarray:
    """read_matrix on a real file, as the uploader hands it over (name and bytes)."""
    return uploads.read_matrix(path.name, path.read_bytes()).matrix


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_good_npy_loads_as_float64(tmp_path: Path, dtype) -> None:
    P = pe_core.positional_encoding(20, 8).astype(dtype)
    path = tmp_path / "P.npy"
    np.save(path, P)
    loaded = load_file(path)
    assert loaded.dtype == np.float64
    np.testing.assert_array_equal(loaded, P.astype(np.float64))


@pytest.mark.parametrize("header", [False, True])
def test_good_csv_with_and_without_header(tmp_path: Path, header: bool) -> None:
    P = pe_core.positional_encoding(12, 6)
    path = tmp_path / "P.csv"
    pd.DataFrame(P, columns=[f"d{j}" for j in range(6)]).to_csv(path, index=False, header=header, float_format="%.17g")
    np.testing.assert_array_equal(load_file(path), P)


def test_csv_with_row_labels_as_the_app_downloads_it(tmp_path: Path) -> None:
    P = pe_core.positional_encoding(5, 4)
    path = tmp_path / "P.csv"
    pd.DataFrame(P, index=[f"position k = {k}" for k in range(5)]).to_csv(path, float_format="%.17g")
    np.testing.assert_array_equal(load_file(path), P)


def test_transposed_matrix_loads_as_it_is(tmp_path: Path) -> None:
    P = pe_core.positional_encoding(30, 8)
    path = tmp_path / "PT.npy"
    np.save(path, P.T)
    assert load_file(path).shape == (8, 30)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "make", "message"),
    [
        ("empty.npy", lambda: b"", "empty"),
        ("empty.csv", lambda: b"", "empty"),
        ("blank.csv", lambda: b"\n \n", "no values"),
        ("truncated.npy", lambda: npy_bytes(np.ones((50, 8)))[:-100], "truncated"),
        ("header_only.npy", lambda: npy_bytes(np.ones((50, 8)))[:20], "not a readable .npy"),
        ("garbage.npy", lambda: b"hello world, not numpy", "not a readable .npy"),
        ("pickled.npy", lambda: npy_bytes(np.array([{"a": 1}, None], dtype=object), allow_pickle=True),
         "Python objects"),
        ("ragged.csv", lambda: b"1,2,3\n4,5,6\n7,8,9,10\n", "different numbers of values"),
        ("short_row.csv", lambda: b"1,2,3\n4,5\n7,8,9\n", "empty cell"),
        ("text.csv", lambda: b"a,b\n1,2\n3,oops\n", "text where a number"),
        ("nan.csv", lambda: b"0.5,0.5\n0.1,nan\n", "NaN"),
        ("nan.npy", lambda: npy_bytes(np.array([[0.0, np.nan], [1.0, 0.0]])), "NaN"),
        ("inf.npy", lambda: npy_bytes(np.array([[0.0, np.inf], [1.0, 0.0]])), "infinite"),
        ("cube.npy", lambda: npy_bytes(np.zeros((4, 4, 4))), "3 dimensions"),
        ("line.npy", lambda: npy_bytes(np.zeros(5)), "1 dimension"),
        ("complex.npy", lambda: npy_bytes(np.zeros((3, 3), dtype=np.complex128)), "real numbers"),
        ("zero_rows.npy", lambda: npy_bytes(np.zeros((0, 4))), "empty"),
        ("too_many_cells.npy", lambda: npy_bytes(np.zeros((16385, 2), dtype=np.float16)), "at most"),
        ("too_big.csv", lambda: b"0," * (3 * 2**20), "MB"),
        ("binary.csv", lambda: b"\xff\xfe\x00\x01", "UTF-8"),
        ("matrix.txt", lambda: b"1,2\n3,4\n", "a .csv or a .safetensors file"),
    ],
)
def test_bad_files_get_one_line_messages(tmp_path: Path, name: str, make, message: str) -> None:
    path = write(tmp_path, name, make())
    with pytest.raises(ValueError, match=message) as caught:
        load_file(path)
    assert "\n" not in str(caught.value)


def test_huge_shape_in_a_small_npy_header_is_refused_before_allocating(tmp_path: Path) -> None:
    data = bytearray(npy_bytes(np.zeros((2, 2))))
    header = bytes(data[10:]).split(b"\n")[0].replace(b"(2, 2)", b"(10000000, 100000)")
    fake = bytes(data[:8]) + len(header + b"\n").to_bytes(2, "little") + header + b"\n" + b"\0" * 32
    with pytest.raises(ValueError, match="at most"):
        load_file(write(tmp_path, "huge.npy", fake))


def test_too_many_cells_in_csv(tmp_path: Path) -> None:
    row = ",".join(["0"] * 2049) + "\n"
    with pytest.raises(ValueError, match="at most"):
        load_file(write(tmp_path, "wide.csv", (row * 16384).encode()))


# --------------------------------------------------------------------------- files as engineers make them

#: The line the checker writes about reading each file (none for the others).
DROPPED_AXIS = (
    "The array has shape {shape}: its axis of size 1 (as PyTorch code keeps its table, e.g. pe.unsqueeze(1)) "
    "was dropped, and it is read as 100 x 128."
)
PANDAS_NOTE = (
    "Skipped its header row (column names) and its first column (row labels), as pandas' to_csv() writes them: "
    "the values are 100 x 128."
)
NOTES = {
    "pe_buffer.npy": DROPPED_AXIS.format(shape=(100, 1, 128)),
    "pe_batch_first.npy": DROPPED_AXIS.format(shape=(1, 100, 128)),
    "pandas.csv": PANDAS_NOTE,
    "pandas_float64.csv": PANDAS_NOTE,
    "pandas_no_index.csv": "Skipped its header row (column names): the values are 100 x 128.",
}


@pytest.mark.parametrize("name", list(WRITERS))
def test_tutorial_file_gets_the_reading_of_its_npy(tmp_path: Path, name: str) -> None:
    """The PyTorch tutorial's float32 table written by np.save, np.savetxt or pandas, as a file
    the uploader hands over: one reading, and one line on what reading the file took."""
    path = write(tmp_path, name, WRITERS[name](tutorial_encoding()))
    check = pitfalls.check_upload(path.name, path.read_bytes(), max_cells=FULL, grid=grid_256)
    result = check.result
    assert check.shape == (100, 128)
    assert (result["layout"], result["convention"], result["n"], result["start"]) == (
        "interleaved", "paper", 10000.0, 0
    ), result["verdict"]
    assert result["verdict"].startswith("Interleaved layout, paper frequencies (w_i = n^(-2i/d)) with n = 10000")
    assert check.layout_metric == ("layout", "interleaved") and not result["swapped"]
    assert check.notes == ((NOTES[name],) if name in NOTES else ())
    assert np.abs(check.difference).max() <= 2e-5  # float32 arithmetic, printed or not


def test_pandas_index_of_later_positions_is_skipped_and_the_start_read(tmp_path: Path) -> None:
    pe = tutorial_encoding(120)[20:]
    path = tmp_path / "later.csv"
    pd.DataFrame(pe, index=range(20, 120)).to_csv(path)
    check = pitfalls.check_upload(path.name, path.read_bytes(), max_cells=FULL, grid=grid_256)
    assert check.shape == (100, 128) and check.result["start"] == 20 and check.result["n"] == 10000.0


def test_index_column_without_a_header_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "no_header.csv"
    pd.DataFrame(tutorial_encoding()).to_csv(path, header=False)
    upload = uploads.read_matrix(path.name, path.read_bytes())
    assert upload.matrix.shape == (100, 128)
    assert upload.notes == ("Skipped its first column (row labels): the values are 100 x 128.",)


@pytest.mark.parametrize("d", [2, 4])
def test_an_encodings_own_first_row_is_no_header(tmp_path: Path, d: int) -> None:
    # Row 0 is 0, 1, 0, 1 (sin 0, cos 0): whole numbers, but not counting up as column names do.
    P = pe_core.positional_encoding(6, d)
    path = tmp_path / "P.csv"
    np.savetxt(path, P, delimiter=",", fmt="%.17g")
    upload = uploads.read_matrix(path.name, path.read_bytes())
    np.testing.assert_array_equal(upload.matrix, P)
    assert upload.notes == ()


@pytest.mark.parametrize(
    ("shape", "message"),
    [((1, 1, 5), r"shape \(1, 1, 5\), 1 without its axes of size 1"), ((4, 1, 4, 4), "4 dimensions")],
)
def test_arrays_that_stay_beyond_2d_get_one_line(tmp_path: Path, shape, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_file(write(tmp_path, "x.npy", npy_bytes(np.zeros(shape, dtype=np.float32))))


# --------------------------------------------------------------------------- the limits a visitor can meet


def test_upload_limit_is_the_configs_as_every_browser_counts_it() -> None:
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    # Streamlit's uploader counts 10**6 bytes a megabyte outside Windows; its server 2**20.
    assert server["maxUploadSize"] * 10**6 == uploads.MAX_UPLOAD_BYTES


@pytest.mark.parametrize("kind", ["float32", "float64"])
def test_largest_npy_the_text_names_fits_and_one_more_row_does_not(kind: str) -> None:
    rows = uploads.largest_upload_rows(kind)
    largest = npy_bytes(np.zeros((rows, uploads.EXAMPLE_D), dtype=kind))
    assert len(largest) <= uploads.MAX_UPLOAD_BYTES
    assert uploads.read_matrix("P.npy", largest).matrix.shape == (rows, uploads.EXAMPLE_D)
    assert len(npy_bytes(np.zeros((rows + 1, uploads.EXAMPLE_D), dtype=kind))) > uploads.MAX_UPLOAD_BYTES
    with pytest.raises(ValueError, match="at most 5 MB"):
        uploads.read_matrix("P.npy", npy_bytes(np.zeros((rows + 1, uploads.EXAMPLE_D), dtype=kind)))


def test_largest_csv_the_text_names_fits_with_every_value_negative() -> None:
    rows = uploads.largest_upload_rows("csv")

    def csv(count: int) -> bytes:
        buffer = io.BytesIO()
        np.savetxt(buffer, np.full((count, uploads.EXAMPLE_D), -0.841471), fmt="%.6f", delimiter=",")
        return buffer.getvalue()

    assert len(csv(rows)) <= uploads.MAX_UPLOAD_BYTES < len(csv(rows + 1))


def test_limit_text_names_what_fits() -> None:
    text = uploads.upload_limits()
    assert text.startswith("at most 5 MB (5,000,000 bytes)")
    for kind in ("float32", "float64", "csv"):
        assert f"{uploads.largest_upload_rows(kind):,} " in text
    assert "2,048" not in text and "16,384 positions or dimensions on a side" in text


# --------------------------------------------------------------------------- variants and the difference


def test_variants_are_the_sidebar_with_one_change() -> None:
    s = Settings(d=64, n=10000.0, L=30)
    assert pitfalls.variant("sidebar", s, other_n=100, offset=3) == pitfalls.Variant("interleaved", "paper", 1e4)
    assert pitfalls.variant("concatenated", s, other_n=100, offset=3).layout == "concatenated"
    assert pitfalls.variant("tensor2tensor", s, other_n=100, offset=3).convention == "tensor2tensor"
    assert pitfalls.variant("bug", s, other_n=100, offset=3).n == 1e8
    assert pitfalls.variant("bug", Settings(n=1e8), other_n=100, offset=3).n == 1e16  # beyond the slider: fine
    assert pitfalls.variant("other_base", s, other_n=100, offset=3).n == 100.0
    assert pitfalls.variant("offset", s, other_n=100, offset=3).start == 3
    for key in pitfalls.VARIANTS:
        assert pitfalls.explanation(key, s, pitfalls.variant(key, s, other_n=100, offset=3))


def test_bug_variant_is_seed002s_loop() -> None:
    s = Settings(d=32, L=40)
    v = pitfalls.variant("bug", s, other_n=100, offset=0)
    P = pe_core.positional_encoding(40, 32, v.n, layout=v.layout, convention=v.convention)
    np.testing.assert_allclose(P, seed002_positional_encoding(40, 32), rtol=0, atol=1e-12)


def full(v: pitfalls.Variant, L: int, d: int) -> np.ndarray:
    return pe_core.positional_encoding(L, d, v.n, layout=v.layout, convention=v.convention, start=v.start)


CASES = [
    ("sidebar", "concatenated", Settings(d=16, L=20)),
    ("sidebar", "bug", Settings(d=600, L=700)),  # both axes reduced, same layout
    ("concatenated", "tensor2tensor", Settings(d=600, L=300)),  # layouts differ, columns reduced
    ("offset", "other_base", Settings(d=64, L=500, n=100.0, layout="concatenated")),
    ("sidebar", "sidebar", Settings(d=8, L=5)),
]


@pytest.mark.parametrize(("key_a", "key_b", "s"), CASES)
def test_difference_map_is_the_block_mean_of_the_difference(key_a: str, key_b: str, s: Settings) -> None:
    a = pitfalls.variant(key_a, s, other_n=1e6, offset=7)
    b = pitfalls.variant(key_b, s, other_n=1e6, offset=7)
    comparison = pitfalls.compare(a, b, s.L, s.d, max_rows=256, max_cols=256, max_cells=5000)
    difference = full(a, s.L, s.d) - full(b, s.L, s.d)
    expected = comparison.columns.reduce(pe_core.block_average(difference, comparison.row_edges, np.arange(s.d + 1)))
    np.testing.assert_allclose(comparison.difference, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(comparison.difference, comparison.values_a - comparison.values_b, rtol=0, atol=0)
    assert comparison.difference.shape[0] <= 256 and comparison.difference.shape[1] <= 256
    # The maximum over every cell, found in blocks of rows, and where it is.
    assert comparison.max_abs == pytest.approx(np.abs(difference).max(), abs=1e-12)
    assert abs(difference[comparison.max_row, comparison.max_col]) == pytest.approx(comparison.max_abs, abs=1e-12)



variants = st.builds(
    pitfalls.Variant,
    layout=st.sampled_from(pe_core.LAYOUTS),
    convention=st.sampled_from(pe_core.CONVENTIONS),
    n=st.one_of(st.sampled_from([2.0, 100.0, 10000.0, 1e8]), st.floats(min_value=1.001, max_value=1e9)),
    start=st.one_of(st.integers(-1000, 16384), st.just(0)),
)


@settings(max_examples=150, deadline=None)
@given(a=variants, b=variants, L=st.integers(1, 120), d=st.integers(1, 40), max_cells=st.integers(1, 3000))
def test_max_difference_is_the_first_largest_cell_of_the_full_difference(a, b, L, d, max_cells) -> None:
    # The float32 screen keeps every cell that can be the maximum: the value, bit for bit, and
    # the first such cell in row order, as np.argmax over the full difference finds them.
    gap = np.abs(full(a, L, d) - full(b, L, d))
    row, col = np.unravel_index(int(np.argmax(gap)), gap.shape)
    assert pitfalls.max_difference(a, b, L, d, max_cells) == (float(gap.max()), row, col)


@settings(max_examples=60, deadline=None)
@given(a=variants, L=st.integers(1, 120), d=st.integers(1, 40), max_cells=st.integers(1, 3000))
def test_max_difference_of_one_encoding_in_two_layouts_is_that_of_the_full_matrices(a, L, d, max_cells) -> None:
    # The same angles in the other column order (the page's default comparison): its cells are the first's,
    # moved, and the screen must keep the same cells as with each computed on its own.
    b = pitfalls.Variant(layout=next(x for x in pe_core.LAYOUTS if x != a.layout), convention=a.convention, n=a.n,
                         start=a.start)
    gap = np.abs(full(a, L, d) - full(b, L, d))
    row, col = np.unravel_index(int(np.argmax(gap)), gap.shape)
    assert pitfalls.max_difference(a, b, L, d, max_cells) == (float(gap.max()), row, col)


@settings(max_examples=60, deadline=None)
@given(a=variants, start=st.integers(-1000, 16384), L=st.integers(1, 120), d=st.integers(1, 40),
       max_cells=st.integers(1, 3000))
def test_max_difference_of_one_encoding_from_two_starts_is_that_of_the_full_matrices(a, start, L, d, max_cells) -> None:
    # The offset variant against the sidebar's: screened from its gaps in closed form, it must keep the
    # same cells as with both encodings computed.
    b = pitfalls.Variant(layout=a.layout, convention=a.convention, n=a.n, start=start)
    gap = np.abs(full(a, L, d) - full(b, L, d))
    row, col = np.unravel_index(int(np.argmax(gap)), gap.shape)
    assert pitfalls.max_difference(a, b, L, d, max_cells) == (float(gap.max()), row, col)


@pytest.mark.parametrize(
    ("layout", "convention", "n", "starts", "L", "d"),
    [
        ("interleaved", "paper", 1e4, (0, -1000), 2000, 512),
        ("concatenated", "tensor2tensor", 1e4, (16384, 3), 3000, 256),
        ("interleaved", "paper", 1e8, (7, 16384), 4000, 64),
        ("concatenated", "paper", 2.0, (-999, 15000), 3000, 301),
    ],
)
def test_the_shift_screen_is_within_its_bound_of_the_exact_gaps(layout, convention, n, starts, L, d) -> None:
    # The screen is exact only if its float32 gaps are within the stated bound of the float64 ones, column
    # by column (the bound is nearly reached: its angle term is what float32 rounding can do).
    variant_a, variant_b = (pitfalls.Variant(layout, convention, n, start) for start in starts)
    exact = np.abs(full(variant_a, L, d) - full(variant_b, L, d))
    screened = pitfalls._float32_shift_gaps(variant_a, variant_b, 0, d, np.empty((L, d), dtype=np.float32))
    assert np.all(np.abs(screened - exact) <= pitfalls._shift_screen_error(variant_a, variant_b, L, d))


def test_max_difference_at_the_largest_settings_matches_the_full_matrices() -> None:
    s = Settings(d=2048, L=16384)
    a = pitfalls.variant("sidebar", s, other_n=1e6, offset=1)
    b = pitfalls.variant("offset", s, other_n=1e6, offset=-1000)
    expected = pitfalls._max_difference_in_float64(a, b, s.L, s.d, FULL // s.d)
    assert pitfalls.max_difference(a, b, s.L, s.d, FULL) == expected

def test_same_layout_columns_never_mix_sines_and_cosines() -> None:
    blocks = pitfalls.column_blocks(600, "interleaved", "interleaved", 256)
    for first, last in zip(blocks.edges[:-1], blocks.edges[1:], strict=True):
        assert len({int(j) % 2 for j in blocks.order[first:last]}) == 1


@pytest.mark.parametrize(("key_a", "key_b", "s"), CASES)
def test_snippet_reproduces_the_difference_map(key_a: str, key_b: str, s: Settings) -> None:
    a = pitfalls.variant(key_a, s, other_n=1e6, offset=7)
    b = pitfalls.variant(key_b, s, other_n=1e6, offset=7)
    comparison = pitfalls.compare(a, b, s.L, s.d, max_rows=256, max_cols=256, max_cells=FULL)
    code = pitfalls.difference_code(a, b, s.L, s.d, comparison, (key_a, key_b))
    assert "pe_core" not in code and "explorer" not in code
    namespace = run_snippet(code)
    largest_angle = max(abs(a.start), abs(b.start)) + s.L
    # The snippet's encodings are pe_core's to the bit (reproduce.sin_cos_code); the page's block means
    # are summed in another order: within the rounding of a sum of values bounded by 1.
    np.testing.assert_allclose(
        namespace["result"]["pitfalls_difference"], comparison.difference, rtol=0,
        atol=2 * angle_rounding_tolerance(largest_angle),
    )
    # The largest difference and where it is, as the page shows them: the same numbers.
    every, where, _ = pitfalls.METRIC_LABELS
    assert namespace["numbers"][every] == comparison.max_abs
    assert tuple(namespace["numbers"][where]) == (comparison.max_row, comparison.max_col)


# --------------------------------------------------------------------------- examples and the checker


def test_example_files_are_identified() -> None:
    bug = pitfalls.check_upload("seed002_bug.npy", pitfalls.example_npy(), max_cells=FULL, grid=grid_256)
    assert "`2*i` bug" in bug.result["verdict"]
    assert np.abs(bug.difference).max() == 0.0
    csv = pitfalls.check_upload("f16.csv", pitfalls.example_csv(), max_cells=FULL, grid=grid_256)
    assert (csv.result["layout"], csv.result["convention"], csv.result["dtype_guess"]) == (
        "concatenated", "tensor2tensor", "float16"
    )
    assert np.abs(csv.difference).max() <= 2.0**-11


def test_transposed_upload_difference_is_drawn_with_positions_down() -> None:
    P = pe_core.positional_encoding(300, 32, 100.0, start=5)
    check = pitfalls.check_upload("PT.npy", npy_bytes(P.T.astype(np.float32)), grid=grid_256,
                                  max_cells=1000)
    assert check.result["transposed"] and check.result["start"] == 5
    assert check.difference.shape == (256, 32)
    assert np.abs(check.difference).max() <= 2.0**-23


def test_not_an_encoding_has_no_difference_map() -> None:
    noise = np.random.default_rng(0).uniform(-1, 1, (40, 16))
    check = pitfalls.check_upload("noise.npy", npy_bytes(noise), max_cells=FULL, grid=grid_256)
    assert check.result["convention"] is None and check.difference is None


def fairseq_table(num_embeddings: int, embedding_dim: int, padding_idx: int) -> np.ndarray:
    """fairseq's SinusoidalPositionalEmbedding.get_embedding in NumPy: tensor2tensor frequencies,
    [sin | cos], a zero column appended for an odd width, the padding index's row zeroed."""
    half_dim = embedding_dim // 2
    frequencies = np.exp(np.arange(half_dim) * -(np.log(10000) / (half_dim - 1)))
    angles = np.arange(num_embeddings)[:, None] * frequencies[None, :]
    table = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    if embedding_dim % 2 == 1:
        table = np.concatenate([table, np.zeros((num_embeddings, 1))], axis=1)
    table[padding_idx, :] = 0
    return table


@pytest.mark.parametrize("transposed", [False, True])
def test_fairseq_upload_is_named_and_its_zeros_are_set_aside(transposed: bool) -> None:
    table = fairseq_table(300, 65, 1).astype(np.float32)
    check = pitfalls.check_upload("fairseq.npy", npy_bytes(table.T if transposed else table), grid=grid_256,
                                  max_cells=1000)
    result = check.result
    assert (result["layout"], result["convention"], result["n"], result["start"]) == (
        "concatenated", "tensor2tensor", 10000.0, 0
    )
    assert "fairseq's SinusoidalPositionalEmbedding" in result["verdict"]
    assert check.set_aside == ([1], [64])
    assert check.set_aside_note == (
        "Set aside, all zeros in your matrix (see the verdict): row r = 1 drawn as 0; column j = 64 left out."
    )
    # Positions down, the filler column left out, the padding row as zero as the library's table.
    assert check.difference.shape == (256, 64) and check.columns.order.size == 64
    assert np.abs(check.difference).max() <= 2.0**-23


def test_near_miss_is_drawn_against_its_closest_variant() -> None:
    P = pe_core.positional_encoding(40, 16, layout="concatenated", convention="tensor2tensor", start=2)
    P[30, 5] += 1e-3
    check = pitfalls.check_upload("near.npy", npy_bytes(P), max_cells=FULL, grid=grid_256)
    assert check.result["convention"] is None and check.result["closest_convention"] == "tensor2tensor"
    assert check.rebuilt == pitfalls.Variant("concatenated", "tensor2tensor", 10000.0, 2)
    assert check.set_aside == ([], []) and check.set_aside_note is None
    expected = np.zeros((40, 16))
    expected[30, 5] = 1e-3
    np.testing.assert_allclose(check.difference, expected, atol=1e-12)


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_cosine_first_upload_is_compared_in_its_own_column_order(layout: str) -> None:
    swapped = cosine_first(tutorial_encoding(layout=layout), layout)
    check = pitfalls.check_upload("swapped.npy", npy_bytes(swapped), max_cells=FULL, grid=grid_256)
    plural = "" if layout == "interleaved" else "s"
    assert check.result["swapped"] and check.layout_metric == (f"layout, cosine{plural} first", layout)
    assert check.rebuilt_description == f"{layout}, paper, n = 10000, cosine first in each pair"
    assert np.abs(check.difference).max() <= 2e-5


def test_cosine_first_near_miss_is_drawn_where_the_value_is_wrong() -> None:
    swapped = cosine_first(pe_core.positional_encoding(40, 16, start=2))
    swapped[30, 5] += 1e-3
    check = pitfalls.check_upload("near.npy", npy_bytes(swapped), max_cells=FULL, grid=grid_256)
    assert check.result["convention"] is None and check.result["swapped"]
    expected = np.zeros((40, 16))
    expected[30, 5] = 1e-3
    np.testing.assert_allclose(check.difference, expected, atol=1e-12)


def test_cosine_first_columns_are_labelled_where_they_are() -> None:
    # Reduced to 16 drawn columns: each run of sines is labelled with the upload's own columns.
    swapped = cosine_first(tutorial_encoding(100, 256))
    check = pitfalls.check_upload("swapped.npy", npy_bytes(swapped), max_cells=FULL, grid=lambda L, d: (256, 16))
    first_sines = check.columns.order[: check.columns.edges[1]]
    assert np.all(first_sines % 2 == 1), "the sines of a cosine-first table are its odd columns"
    assert check.columns.labels[0].startswith(f"columns j = {first_sines[0]}..") and "sin of pairs 0.." in (
        check.columns.labels[0]
    )
    assert np.abs(check.difference).max() <= 2e-5


# --------------------------------------------------------------------------- the page (AppTest uploads)


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = open_url("pitfalls", query)
    assert not at.exception
    return at


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    uploader = at.get("file_uploader")[0]
    uploader.set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception
    assert not [e for e in at.error if "could not be drawn" in e.value]
    return at


def test_page_identifies_an_uploaded_npy() -> None:
    at = upload(open_page(), "mine.npy", npy_bytes(pe_core.positional_encoding(64, 32, start=3)))
    assert any("Interleaved layout, paper frequencies" in s.value and "n = 10000" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["start"] == "3" and metrics["layout"] == "interleaved"
    assert len(at.get("plotly_chart")) == 4, "A, B, A - B and the upload's difference map"


def test_page_names_a_fairseq_table() -> None:
    at = upload(open_page(), "fairseq.npy", npy_bytes(fairseq_table(64, 33, 1).astype(np.float32)))
    assert any("fairseq's SinusoidalPositionalEmbedding" in s.value and "row 1 is all zeros" in s.value
               for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["layout"], metrics["convention"], metrics["n"]) == ("concatenated", "tensor2tensor", "10000")
    # Under its difference map the page says which rows and columns were set aside.
    assert any(c.value.startswith("Set aside, all zeros in your matrix") and "row r = 1" in c.value for c in at.caption)


def test_page_draws_a_near_miss_against_its_closest_variant() -> None:
    P = pe_core.positional_encoding(64, 32)
    P[10, 7] += 1e-3
    at = upload(open_page(), "near.npy", npy_bytes(P))
    assert any("row 10, column 7" in w.value for w in at.warning) and not at.success
    assert len(at.get("plotly_chart")) == 4, "A, B, A - B and the difference from the closest variant"


def test_every_type_reaches_the_page_which_names_what_it_reads() -> None:
    """The uploader filters no type (it would only show a red chip and a tooltip): the page says it in a line."""
    at = open_page()
    assert not at.get("file_uploader")[0].allowed_type
    at = upload(at, "matrix.txt", b"1,2\n3,4\n")
    assert [e.value for e in at.error] == ["Upload a .npy, a .npz, a .csv or a .safetensors file."]


def test_page_warns_for_a_matrix_that_is_no_encoding() -> None:
    noise = np.random.default_rng(1).uniform(-1, 1, (40, 16))
    at = upload(open_page(), "noise.csv", pd.DataFrame(noise).to_csv(index=False).encode())
    assert any("Not a sinusoidal positional encoding" in w.value for w in at.warning)
    assert not at.success


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("pickled.npy", npy_bytes(np.array([1, None], dtype=object), allow_pickle=True), "Python objects"),
        ("truncated.npy", npy_bytes(np.ones((50, 8)))[:-10], "truncated"),
        ("ragged.csv", b"1,2\n3,4,5\n", "different numbers"),
        ("empty.csv", b"", "empty"),
    ],
)
def test_page_shows_a_one_line_message_for_a_bad_file(name: str, data: bytes, message: str) -> None:
    at = upload(open_page(), name, data)
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not at.success


def test_page_controls_are_in_the_url() -> None:
    at = open_page({"a": "bug", "b": "offset", "offset": "5"})
    assert at.session_state["a"] == "bug" and at.session_state["b"] == "offset" and at.session_state["offset"] == 5
    metrics = {m.label: m.value for m in at.metric}
    a = pitfalls.variant("bug", Settings(), other_n=1e6, offset=5)
    b = pitfalls.variant("offset", Settings(), other_n=1e6, offset=5)
    expected = np.abs(full(a, 100, 128) - full(b, 100, 128)).max()
    assert float(metrics["max |A - B| (every cell)"]) == pytest.approx(expected, rel=1e-5)


def test_page_names_the_cosine_first_table_in_its_text_and_its_metrics() -> None:
    at = upload(open_page(), "swapped.npy", npy_bytes(cosine_first(tutorial_encoding())))
    assert any("swapped in each pair" in s.value and "n = 10000" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["layout, cosine first"], metrics["convention"], metrics["n"], metrics["start"]) == (
        "interleaved", "paper", "10000", "0"
    )


@pytest.mark.parametrize("name", ["pandas.csv", "pe_buffer.npy"])
def test_page_says_what_reading_the_file_took(name: str) -> None:
    at = upload(open_page(), name, WRITERS[name](tutorial_encoding()))
    assert NOTES[name] in [c.value for c in at.caption]
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["shape"], metrics["layout"], metrics["convention"], metrics["n"], metrics["stored as"]) == (
        "100 x 128", "interleaved", "paper", "10000", "float32"
    )


def test_page_states_the_limits_a_visitor_can_meet() -> None:
    at = open_page()
    assert any(uploads.upload_limits() in m.value for m in at.markdown)


def test_one_comparison_per_setting_shared_by_sessions_and_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """pitfalls_comparison (st.cache_resource): a second session at the same settings is served it, its code
    included (a hit); another L is computed again, not served the first's; what is shared cannot be written."""
    made: list[pitfalls.Comparison] = []

    def counted(*args: object, _compare=pitfalls.compare, **kwargs: object) -> pitfalls.Comparison:
        made.append(_compare(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(pitfalls, "compare", counted)
    streamlit.cache_resource.clear()  # the comparisons and every finished section
    first = open_page({"d": "40", "L": "30", "code": "true"})
    assert len(made) == 1
    blocks._drawn_once.clear()  # the maps drawn again, from the comparison (a hit)
    again = open_page({"d": "40", "L": "30", "code": "true"})
    assert len(made) == 1, "a second session at the same settings compared again"
    assert [c.proto.spec for c in first.get("plotly_chart")] == [c.proto.spec for c in again.get("plotly_chart")]
    assert first.code[0].value == again.code[0].value
    other = open_page({"d": "40", "L": "31"})
    assert len(made) == 2, "another L was served the first comparison"
    assert any("L=31" in str(chart.proto.spec) for chart in other.get("plotly_chart"))
    with pytest.raises(ValueError, match="read-only"):
        made[0].difference[0, 0] = 1.0


def test_the_screens_per_block_inputs_are_made_once_and_not_served_stale() -> None:
    # A screen reads the float32 frequencies and the shift's amplitudes for each of its blocks: the same
    # inputs are a hit (the same read-only array), other inputs their own values.
    w = pitfalls._float32_frequencies(64, 1e4, "paper")
    assert pitfalls._float32_frequencies(64, 1e4, "paper") is w and not w.flags.writeable
    np.testing.assert_array_equal(w, pe_core.frequencies(64, 1e4, "paper").astype(np.float32))
    np.testing.assert_array_equal(pitfalls._float32_frequencies(64, 100.0, "paper"),
                                  pe_core.frequencies(64, 100.0, "paper").astype(np.float32))
    a, b, c = (pitfalls.Variant("interleaved", "paper", 1e4, start) for start in (0, -1000, 7))
    amplitudes = pitfalls._shift_amplitudes(a, b, 64)
    assert pitfalls._shift_amplitudes(a, b, 64) is amplitudes and not amplitudes.flags.writeable
    np.testing.assert_allclose(amplitudes, 2 * np.abs(np.sin(1000 * pe_core.frequencies(64) / 2)), rtol=0, atol=0)
    other = 2 * np.abs(np.sin(-7 * pe_core.frequencies(64) / 2))
    np.testing.assert_allclose(pitfalls._shift_amplitudes(a, c, 64), other, rtol=0, atol=0)
