"""explorer.uploads: every array of a file as the Rotary checker reads it (read_arrays), on files
written here the way NumPy and engineers write them: .npy (complex too), .npz (several arrays,
compressed, a complex64 freqs_cis among them), .csv; and every malformed file one line.

The Pitfalls checker's reading of a matrix (read_matrix) is tested with its page, in
tests/topics/test_pitfalls.py.
"""

from __future__ import annotations

import io
import zipfile

import ml_dtypes
import numpy as np
import pytest
from support.engineer_files import npy, savetxt

from explorer import uploads


def npz(compressed: bool = False, **arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return buffer.getvalue()


def freqs_cis(length: int = 40, d: int = 16, base: float = 10000.0) -> np.ndarray:
    """Meta's table in NumPy: exp(i p theta_i), complex64 as torch.polar returns it."""
    theta = base ** -(np.arange(0, d, 2) / d)
    return np.exp(1j * np.outer(np.arange(length), theta)).astype(np.complex64)


def one(name: str, data: bytes) -> uploads.UploadedArray:
    [array] = uploads.read_arrays(name, data)
    return array


# --------------------------------------------------------------------------- what is read


def test_a_complex64_npy_keeps_every_value() -> None:
    table = freqs_cis()
    array = one("freqs_cis.npy", npy(table))
    assert array.values.dtype == np.complex128 and array.name is None and array.notes == ()
    np.testing.assert_array_equal(array.values, table.astype(np.complex128))


def test_an_npz_gives_every_array_by_name_in_the_files_order() -> None:
    table, tokens = freqs_cis(), np.arange(7)
    inv_freq = np.float32(10000.0) ** -(np.arange(0, 16, 2, dtype=np.float32) / 16)
    arrays = uploads.read_arrays("rope.npz", npz(freqs_cis=table, inv_freq=inv_freq, tokens=tokens))
    assert [a.name for a in arrays] == ["freqs_cis", "inv_freq", "tokens"]
    np.testing.assert_array_equal(arrays[0].values, table)
    assert arrays[0].values.dtype == np.complex128
    np.testing.assert_array_equal(arrays[1].values, inv_freq.astype(np.float64))
    np.testing.assert_array_equal(arrays[2].values, tokens.astype(np.float64))


def test_a_compressed_npz_is_read_like_a_plain_one() -> None:
    table = np.cos(np.outer(np.arange(50), [1.0, 0.1]))
    [array] = uploads.read_arrays("rope.npz", npz(True, cos=table))
    np.testing.assert_array_equal(array.values, table)


@pytest.mark.parametrize(
    ("shape", "read_as", "note"),
    [
        ((1, 30, 16), (30, 16), "(batch, positions, d)) was dropped, and it is read as 30 x 16."),
        ((30, 1, 16), (30, 16), "was dropped, and it is read as 30 x 16."),
        ((1, 8), (8,), "was dropped, and it is read as a vector of 8 values."),
        ((30, 8, 2), (30, 8, 2), None),  # the real view of a complex table, as it is
        ((1, 30, 8, 2), (30, 8, 2), "read as 30 x 8 x 2."),
    ],
)
def test_axes_of_size_one_are_dropped_and_said(shape: tuple[int, ...], read_as: tuple[int, ...], note) -> None:
    values = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    array = one("t.npy", npy(values))
    assert array.values.shape == read_as
    np.testing.assert_array_equal(array.values.ravel(), values.ravel())
    if note is None:
        assert array.notes == ()
    else:
        [said] = array.notes
        assert said.startswith(f"The array has shape {shape}: its axis of size 1") and said.endswith(note), said


@pytest.mark.parametrize(
    ("name", "data", "note"),
    [
        # np.savetxt(inv_freq): one value a line
        ("inv_freq.csv", savetxt(np.array([1.0, 0.1, 0.01, 0.001]), "%.17g"),
         "The values are one column: read as a vector of 4 values."),
        # A column with a header of text, as a spreadsheet keeps it
        ("inv_freq.csv", b"inv_freq\n1\n0.1\n0.01\n0.001\n",
         "Skipped its header row (column names): the values are 4 x 1."),
        ("inv_freq.csv", b"1,0.1,0.01,0.001\n", "The values are one row: read as a vector of 4 values."),
    ],
)
def test_a_csv_of_one_column_or_row_is_a_vector(name: str, data: bytes, note: str) -> None:
    array = one(name, data)
    np.testing.assert_array_equal(array.values, [1.0, 0.1, 0.01, 0.001])
    assert note in array.notes


def test_a_pandas_csv_of_a_table_skips_its_header_and_index() -> None:
    import pandas as pd

    table = np.cos(np.outer(np.arange(20), [1.0, 0.5, 1.0, 0.5]))
    array = one("cos.csv", pd.DataFrame(table).to_csv(float_format="%.17g").encode())
    np.testing.assert_array_equal(array.values, table)
    assert array.notes[0].startswith("Skipped its header row (column names) and its first column (row labels)")


# --------------------------------------------------------------------------- what is refused, in one line


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def bfloat16_npy() -> bytes:
    return npy(np.ones((4, 4), dtype=ml_dtypes.bfloat16))


@pytest.mark.parametrize(
    ("name", "make", "message"),
    [
        ("cos.txt", lambda: b"1,2\n", "Upload a .npy, a .npz, a .csv, a .safetensors or a .gguf file."),
        ("empty.npz", lambda: b"", "The file is empty."),
        ("big.npy", lambda: b"\x93NUMPY" + b"\0" * 5_000_001, "at most 5 MB"),
        ("garbage.npy", lambda: b"hello world, not numpy", "not a readable .npy"),
        ("garbage.npz", lambda: b"hello world, not a zip", "not a readable .npz"),
        ("pickled.npy", lambda: npy_pickled(), "Python objects"),
        ("pickled.npz", lambda: npz(tables=np.array([{"cos": 1}], dtype=object)), "Python objects"),
        ("bf16.npy", bfloat16_npy, "bfloat16"),
        ("text.npy", lambda: npy(np.array(["a", "b"])), "real or complex numbers"),
        ("cube.npy", lambda: npy(np.zeros((4, 4, 4))), "real view (positions, d/2, 2)"),
        ("view.npy", lambda: npy(np.zeros((4, 4, 2), dtype=np.complex64)), "shape (4, 4, 2)"),
        ("empty_table.npy", lambda: npy(np.zeros((0, 8))), "empty"),
        ("long.npy", lambda: npy(np.zeros(16385, dtype=np.float32)),
         "The vector has 16,385 values; the checker takes at most 16,384 on a side"),
        ("nan.npy", lambda: npy(np.array([1.0, np.nan])), "NaN"),
        ("nan_complex.npy", lambda: npy(np.array([[1, 1j], [np.nan, 1]] * 2)), "the first at row 1, column 0"),
        ("nan_view.npy", lambda: npy(np.where(np.arange(16).reshape(4, 2, 2) == 14, np.inf, 0.0)),
         "the first at index (3, 1, 0)"),
        ("truncated.npy", lambda: npy(np.ones((50, 8)))[:-100], "truncated"),
        ("no_arrays.npz", lambda: zip_of({}), "holds no arrays"),
        ("not_npy.npz", lambda: zip_of({"readme.txt": b"hello"}), "Array 'readme.txt' of the .npz file is not"),
        ("truncated.npz", lambda: zip_of({"cos.npy": npy(np.ones((50, 8)))[:-100]}), "truncated"),
        ("many.npz", lambda: npz(**{f"a{i}": np.ones(2) for i in range(33)}), "at most 32"),
        ("bomb.npz", lambda: npz(True, a=np.zeros((4000, 1000), np.float32), b=np.zeros((2000, 1000), np.int8)),
         "6,000,000 values together"),
        ("wide.npz", lambda: npz(cos=np.zeros((3, 3, 3))), "Array 'cos' of the .npz file: The array has shape"),
        ("ragged.csv", lambda: b"1,2,3\n4,5\n", "empty cell"),
        ("binary.csv", lambda: b"\xff\xfe\x00\x01", "UTF-8"),
    ],
)
def test_bad_files_get_one_line(name: str, make, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        uploads.read_arrays(name, make())
    text = str(caught.value)
    assert message in text and "\n" not in text and len(text) < 400, text


def npy_pickled() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"inv_freq": 1}, None], dtype=object), allow_pickle=True)
    return buffer.getvalue()


def test_a_forged_npz_header_is_refused_before_its_values_are_read() -> None:
    # A member announcing 10^12 float64 values in a file of a few hundred bytes.
    data = bytearray(npy(np.zeros((2, 2))))
    header = bytes(data[10:]).split(b"\n")[0].replace(b"(2, 2)", b"(1000000, 1000000)")
    forged = bytes(data[:8]) + len(header + b"\n").to_bytes(2, "little") + header + b"\n" + b"\0" * 32
    with pytest.raises(ValueError, match="at most 16,384 on a side"):
        uploads.read_arrays("rope.npz", zip_of({"cos.npy": forged}))


def test_the_matrix_reading_still_refuses_what_only_rotary_reads() -> None:
    # Pitfalls' checker: a 2-D real matrix (its own messages, tests/topics/test_pitfalls.py).
    with pytest.raises(ValueError, match="real numbers"):
        uploads.read_matrix("fc.npy", npy(freqs_cis()))
    with pytest.raises(ValueError, match=r"holds no 2-D matrix"):
        uploads.read_matrix("rope.npz", npz(inv_freq=np.ones(4)))
    assert uploads.read_matrix("rope.npz", npz(cos=np.ones((4, 4)))).matrix.shape == (4, 4)
    assert uploads.read_arrays("fc.npy", npy(freqs_cis()), suffixes=(".npy", ".csv"))[0].values.dtype.kind == "c"


# --------------------------------------------------------------------------- the limits a visitor meets


def test_the_rotary_limits_name_files_that_fit_and_one_row_more_does_not() -> None:
    text = uploads.rotary_limits()
    cos_rows = uploads.largest_upload_rows("float32", uploads.EXAMPLE_D)
    cis_rows = uploads.largest_upload_rows("complex64", uploads.EXAMPLE_D // 2)
    assert text.startswith("at most 5 MB (5,000,000 bytes)")
    assert f"a float32 cos table of {cos_rows:,} positions x 128" in text
    assert f"a complex64 freqs_cis of {cis_rows:,} positions x 64 pairs" in text
    for dtype, rows, width in (("float32", cos_rows, 128), ("complex64", cis_rows, 64)):
        largest = npy(np.zeros((rows, width), dtype=dtype))
        assert len(largest) <= uploads.MAX_UPLOAD_BYTES
        assert one("t.npy", largest).values.shape == (rows, width)
        with pytest.raises(ValueError, match="at most 5 MB"):
            uploads.read_arrays("t.npy", npy(np.zeros((rows + 1, width), dtype=dtype)))


def test_is_rotary_reads_the_kind_or_a_rotary_near_miss() -> None:
    base = {"kind": None, "d": None}
    assert not uploads.is_rotary(base) and not uploads.is_rotary(base | {"kind": "sinusoidal", "d": 64})
    assert uploads.is_rotary(base | {"d": 64})  # the closest reading is a rotary one
    assert all(uploads.is_rotary(base | {"kind": kind, "d": 8}) for kind in uploads.ROTARY_KINDS)


def test_the_sentence_under_a_refused_upload_is_the_checkers_own() -> None:
    """The CSS that shows it (a literal: st.html sends only constants) says what the messages say."""
    from explorer.ui import style

    assert style.CSS.count(f'content: "{uploads.LARGER_FILES}";') == 1
    assert uploads.COMMAND_LINE in uploads.LARGER_FILES and "5 MB" in uploads.LARGER_FILES
