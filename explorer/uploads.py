"""Reading the files visitors upload to the checkers, without Streamlit: Conventions and
pitfalls' (a sinusoidal encoding matrix) and Rotary's (what a rotary model holds).

A file arrives as its name and bytes (st.file_uploader) and is never stored. Every way it
can be wrong gives a ValueError with one line a visitor can act on, never a traceback: too
large (``MAX_UPLOAD_BYTES``), a shape beyond the limits (``MAX_SIDE`` on a side,
``MAX_UPLOAD_CELLS`` values: a .npy header is read first, so a forged shape allocates
nothing), pickled objects (never loaded: ``allow_pickle=False``), truncated or malformed
files, ragged or textual CSVs, NaN or infinity.

- ``read_matrix``: the 2-D real matrix of a .npy or .csv file, or the first of a .npz's arrays or
  of a checkpoint's .safetensors tables of positions (the Pitfalls checker);
- ``read_arrays``: every array of a .npy, .npz or .csv file, or the rotary buffers of a
  checkpoint's .safetensors, as a rotary model holds it (the Rotary checker): a 1-D inv_freq, a
  2-D cos or sin table, a complex freqs_cis (complex64 as ``np.save(freqs_cis.numpy())`` writes
  it) or its real view (positions, d/2, 2). A torch file (.pt, .pth, .bin) is refused with the
  line that converts it: it is a pickle, never loaded.
- ``read_gguf_upload``: a .gguf file's RoPE (its metadata and rope tensors), for the Rotary checker.

Both drop axes of size 1 and say so (a (L, 1, d) buffer, transformers' (1, L, d) cos), and
skip a CSV's header row and column of row labels (``DataFrame(P).to_csv()`` writes both),
saying so too.
"""

from __future__ import annotations

import functools
import io
import math
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePath

import numpy as np
import pandas as pd

from pe_core.identify.gguf_file import GgufRope, read_gguf
from pe_core.identify.model_files import TORCH_SUFFIXES, read_safetensors, torch_file_refusal

#: .streamlit/config.toml's maxUploadSize (5 MB) in bytes as every browser can send it:
#: Streamlit's uploader counts a megabyte as 10**6 bytes (2**20 only on Windows) and its
#: server as 2**20, so 5 * 10**6 is what a visitor on any platform can meet; checked again here.
MAX_UPLOAD_BYTES = 5 * 10**6
#: The command that reads what a browser does not send: files over the limit, whole checkpoints.
COMMAND_LINE = "python -m pe_core.identify"
#: What reads a file larger than the checkers take.
READS_LARGER_FILES = (f"in a terminal, {COMMAND_LINE} FILE reads it from disk (a checkpoint's shard, a .gguf, a "
                      "checkpoint's folder)")
#: What the checkers say of a file over the limit, which the browser does not send.
LARGER_FILES = f"Over {MAX_UPLOAD_BYTES / 10**6:g} MB, the browser does not send a file: {READS_LARGER_FILES}."
#: Largest number of positions (or dimensions) on a side: the sidebar's L_MAX.
MAX_SIDE = 16384
#: Largest number of values a header may announce: a file of MAX_UPLOAD_BYTES holds at most
#: one value per byte (a .npy of int8), so no real upload is refused by it; it only stops a
#: forged .npy header (or a compressed .npz, all its arrays together) from allocating more.
MAX_UPLOAD_CELLS = MAX_UPLOAD_BYTES
#: Most arrays read from one .npz file (a model's rotary buffers are a handful).
MAX_NPZ_ARRAYS = 32
#: The width the limits are illustrated with (the sidebar's default d), and the bytes of a
#: value of [-1, 1] in a CSV with 6 decimals at most ("-0.841471" and its comma).
EXAMPLE_D = 128
CSV_BYTES_PER_VALUE = 10
_NON_FINITE_TEXT = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}

#: What identify_encoding's ``kind`` names, in words; the rotary kinds are what a rotary model holds.
KIND_NAMES = {
    "sinusoidal": "sinusoidal positional encoding",
    "rope_cos": "RoPE cos table",
    "rope_sin": "RoPE sin table",
    "rope_inv_freq": "RoPE frequency vector (inv_freq)",
    "rope_complex": "RoPE complex table (Meta's freqs_cis)",
}
ROTARY_KINDS = ("rope_cos", "rope_sin", "rope_inv_freq", "rope_complex")


def is_rotary(result: dict) -> bool:
    """Whether identify_encoding's ``result`` reads a rotary table: a match, or a near miss whose
    closest reading is a rotary one (only rotary readings name a rotary dimension d without a kind)."""
    return result["kind"] in ROTARY_KINDS or (result["kind"] is None and result["d"] is not None)


# ----------------------------------------------------------------------------------------
# The limits a visitor can meet
# ----------------------------------------------------------------------------------------


def _npy_header_bytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """Bytes of a .npy file's magic and header for an array of this shape and dtype (format 1.0)."""
    buffer = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.tell()


def largest_upload_rows(kind: str, d: int = EXAMPLE_D) -> int:
    """Most rows of d values that fit in MAX_UPLOAD_BYTES: as .npy of dtype ``kind`` ("float32",
    "float64", "complex64", ...), or as "csv" with 6 decimals (CSV_BYTES_PER_VALUE bytes a value at most)."""
    if kind == "csv":
        return MAX_UPLOAD_BYTES // (CSV_BYTES_PER_VALUE * d)
    itemsize = np.dtype(kind).itemsize
    rows = MAX_UPLOAD_BYTES // (itemsize * d)
    while rows > 0 and _npy_header_bytes((rows, d), np.dtype(kind)) + rows * d * itemsize > MAX_UPLOAD_BYTES:
        rows -= 1
    return rows


def _limit(text: str) -> str:
    return f"at most {MAX_UPLOAD_BYTES / 10**6:g} MB ({MAX_UPLOAD_BYTES:,} bytes): that is {text}"


@functools.cache  # constants: written once, not on every run of the page
def upload_limits() -> str:
    """The Pitfalls checker's limits as a visitor can meet them, in one sentence (Markdown, no user text)."""
    float32, float64, csv = (largest_upload_rows(kind) for kind in ("float32", "float64", "csv"))
    return _limit(
        f"{float32:,} positions x {EXAMPLE_D} dimensions as a float32 .npy ({float32 * EXAMPLE_D:,} values), "
        f"{float64:,} x {EXAMPLE_D} as a float64 .npy, or {csv:,} x {EXAMPLE_D} as a CSV with 6 decimals; at most "
        f"{MAX_SIDE:,} positions or dimensions on a side"
    )


@functools.cache  # constants: written once, not on every run of the page
def rotary_limits() -> str:
    """The Rotary checker's limits as a visitor can meet them, in one sentence (Markdown, no user text)."""
    cos, complex64, csv = (largest_upload_rows(kind, d) for kind, d in (
        ("float32", EXAMPLE_D), ("complex64", EXAMPLE_D // 2), ("csv", EXAMPLE_D)))
    return _limit(
        f"a float32 cos table of {cos:,} positions x {EXAMPLE_D} (d = {EXAMPLE_D}), a complex64 freqs_cis of "
        f"{complex64:,} positions x {EXAMPLE_D // 2} pairs, or {csv:,} x {EXAMPLE_D} as a CSV with 6 decimals; at "
        f"most {MAX_SIDE:,} on a side and {MAX_UPLOAD_CELLS:,} values (in a .npz, all its arrays together)"
    )


# ----------------------------------------------------------------------------------------
# What each checker reads
# ----------------------------------------------------------------------------------------


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    """An array of more than 2 axes without its axes of size 1 (PyTorch's ``pe.unsqueeze(1)``)."""
    return tuple(size for size in shape if size != 1) if len(shape) > 2 else shape


def _all_squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Without any axis of size 1 (transformers' (1, L, d) cos, a (1, d/2) inv_freq), one axis kept at least."""
    return tuple(size for size in shape if size != 1) or shape[-1:]


def _check_size(rows: int, cols: int, what: str) -> None:
    if rows > MAX_SIDE or cols > MAX_SIDE or rows * cols > MAX_UPLOAD_CELLS:
        size = f"has {rows:,} values" if what == "vector" else f"is {rows:,} x {cols:,}"
        raise ValueError(
            f"The {what} {size}; the checker takes at most {MAX_SIDE:,} on a side and "
            f"{MAX_UPLOAD_CELLS:,} values (what a {MAX_UPLOAD_BYTES / 10**6:g} MB file can hold)."
        )


def _matrix_shape(shape: tuple[int, ...], is_complex: bool) -> tuple[int, ...]:
    """The shape a 2-D encoding matrix is read as; ValueError for any other."""
    squeezed = _squeezed(shape)
    if len(squeezed) != 2:
        dropped = f", {len(squeezed)} without its axes of size 1" if squeezed != shape else ""
        raise ValueError(
            f"The array has {len(shape)} dimension{'s' if len(shape) != 1 else ''} (shape {tuple(shape)}{dropped}); "
            "the checker needs a 2-D matrix, positions x dimensions."
        )
    rows, cols = squeezed
    if rows == 0 or cols == 0:
        raise ValueError(f"The matrix is empty (shape {rows} x {cols}).")
    _check_size(rows, cols, "matrix")
    return squeezed


def _rotary_shape(shape: tuple[int, ...], is_complex: bool) -> tuple[int, ...]:
    """The shape a rotary array is read as (inv_freq, a table, a complex table's real view); ValueError
    for any other."""
    if 0 in shape:
        raise ValueError(f"The array is empty (shape {tuple(shape)}).")
    squeezed = _all_squeezed(shape)
    if not (len(squeezed) in (1, 2) or (len(squeezed) == 3 and squeezed[-1] == 2 and not is_complex)):
        dropped = f", {squeezed} without its axes of size 1" if squeezed != shape else ""
        raise ValueError(
            f"The array has shape {tuple(shape)}{dropped}; the checker reads a 1-D inv_freq, a 2-D table (positions x "
            "dimensions, real or complex) or a complex table's real view (positions, d/2, 2)."
        )
    rows, cols = squeezed[0], math.prod(squeezed[1:])
    _check_size(rows, cols, "vector" if len(squeezed) == 1 else "table")
    return squeezed


@dataclass(frozen=True)
class _Reader:
    """What a checker reads: the file types, the values (dtype kinds) and shapes it takes, and
    how it explains the axes of size 1 it drops."""

    suffixes: tuple[str, ...]
    kinds: str
    numbers: str
    shape: Callable[[tuple[int, ...], bool], tuple[int, ...]]
    size_one: str
    finite: str


_MATRIX = _Reader((".npy", ".npz", ".csv", ".safetensors"), "fiu", "real numbers", _matrix_shape,
                  "as PyTorch code keeps its table, e.g. pe.unsqueeze(1)", "an encoding")
_ROTARY = _Reader((".npy", ".npz", ".csv", ".safetensors", ".gguf"), "fiuc", "real or complex numbers", _rotary_shape,
                  "as transformers returns cos and sin, (batch, positions, d)", "a rotary table")


def _shape_text(shape: tuple[int, ...]) -> str:
    if len(shape) == 1:
        return f"a vector of {shape[0]:,} values"
    return " x ".join(f"{size:,}" for size in shape)


def _dropped_note(shape: tuple[int, ...], read_as: tuple[int, ...], reader: _Reader) -> tuple[str, ...]:
    """One sentence when reading dropped axes of size 1, else none."""
    if read_as == shape:
        return ()
    size_one = len(shape) - len(read_as)
    return (
        f"The array has shape {shape}: its {'axis' if size_one == 1 else f'{size_one} axes'} of size 1 "
        f"({reader.size_one}) {'was' if size_one == 1 else 'were'} dropped, and it is read as {_shape_text(read_as)}.",
    )


def _finite(values: np.ndarray, reader: _Reader) -> np.ndarray:
    bad = ~np.isfinite(values)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        place = f"row {where[0]}, column {where[1]}" if len(where) == 2 else f"index {where}"
        what = "matrix" if reader is _MATRIX else "array"
        raise ValueError(
            f"The {what} holds {int(bad.sum()):,} NaN or infinite value(s), the first at {place}; "
            f"{reader.finite} has only finite values."
        )
    return values


def _short(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 120 else text[:117] + "..."


# ----------------------------------------------------------------------------------------
# .npy, and the .npy files a .npz holds
# ----------------------------------------------------------------------------------------


def _npy_header(stream: io.IOBase, unreadable: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype a .npy header announces (nothing else is read)."""
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unsupported version {version}")
    except Exception as error:  # any malformed header: one line for the visitor
        raise ValueError(f"{unreadable} ({_short(error)}).") from None
    return tuple(int(s) for s in shape), dtype


def _check_dtype(dtype: np.dtype, subject: str, reader: _Reader) -> None:
    if dtype.hasobject:
        raise ValueError(
            f"{subject} holds Python objects (a pickled array), which the checker never loads; "
            "save a numeric array, e.g. np.save('P.npy', P.astype(np.float32))."
        )
    if dtype.kind == "V" and dtype.itemsize == 2:
        raise ValueError(
            f"{subject} holds 2-byte values of a type numpy does not know (a bfloat16 array saved by np.save): save it "
            "as float32 (tensor.float().numpy(), or array.astype(np.float32)); every value is kept exactly."
        )
    if dtype.kind not in reader.kinds:
        raise ValueError(f"The array's values are of type {dtype}; the checker needs {reader.numbers}.")


def _as_numbers(array: np.ndarray) -> np.ndarray:
    return np.asarray(array, dtype=np.complex128 if array.dtype.kind == "c" else np.float64)


@dataclass(frozen=True)
class UploadedArray:
    """One array of an uploaded file, as float64 (complex128 for complex values), with its
    name in a .npz file (None otherwise) and one sentence for each thing reading it took."""

    name: str | None
    values: np.ndarray
    notes: tuple[str, ...] = ()


def _load_npy(data: bytes, reader: _Reader) -> UploadedArray:
    stream = io.BytesIO(data)
    # Read the header first: its shape and dtype are checked before any array is allocated.
    shape, dtype = _npy_header(stream, "This is not a readable .npy file")
    _check_dtype(dtype, "This .npy file", reader)
    read_as = reader.shape(shape, dtype.kind == "c")
    expected = math.prod(shape) * dtype.itemsize
    if len(data) - stream.tell() < expected:
        raise ValueError(
            f"The .npy file is truncated: its header announces {expected:,} bytes of values, "
            f"it holds {len(data) - stream.tell():,}."
        )
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as error:
        raise ValueError(f"This .npy file could not be read ({_short(error)}).") from None
    return UploadedArray(None, _as_numbers(array).reshape(read_as), _dropped_note(shape, read_as, reader))


def _load_npz(data: bytes, reader: _Reader) -> list[UploadedArray]:
    """Every array of a .npz file (np.savez, np.savez_compressed): each member's header is read
    and checked first, the values of all of them together within MAX_UPLOAD_CELLS (a compressed
    file may announce more than its bytes), and only then are they read, without pickle."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except Exception as error:
        raise ValueError(f"This is not a readable .npz file ({_short(error)}).") from None
    with archive:
        if not members:
            raise ValueError("The .npz file holds no arrays.")
        if len(members) > MAX_NPZ_ARRAYS:
            raise ValueError(
                f"The .npz file holds {len(members):,} arrays; the checker reads at most {MAX_NPZ_ARRAYS} (save the "
                "ones to check, e.g. np.savez('rope.npz', cos=cos, inv_freq=inv_freq))."
            )
        headers = []
        for member in members:
            name = member.filename.removesuffix(".npy")
            subject = f"Array {name!r} of the .npz file"
            try:
                stream = archive.open(member)
            except Exception as error:  # an encrypted member, an unknown compression
                raise ValueError(f"{subject} could not be read ({_short(error)}).") from None
            with stream:
                shape, dtype = _npy_header(stream, f"{subject} is not a readable .npy")
                offset = stream.tell()
            _check_dtype(dtype, subject, reader)
            try:
                read_as = reader.shape(shape, dtype.kind == "c")
            except ValueError as error:
                raise ValueError(f"{subject}: {error}") from None
            expected = math.prod(shape) * dtype.itemsize
            if member.file_size - offset < expected:
                raise ValueError(f"{subject} is truncated: its header announces {expected:,} bytes of values, it holds "
                                 f"{max(member.file_size - offset, 0):,}.")
            headers.append((member, name, subject, shape, read_as))
        total = sum(math.prod(shape) for *_, shape, _ in headers)
        if total > MAX_UPLOAD_CELLS:
            raise ValueError(
                f"The .npz file's arrays hold {total:,} values together; the checker takes at most "
                f"{MAX_UPLOAD_CELLS:,} (what a {MAX_UPLOAD_BYTES / 10**6:g} MB file can hold uncompressed)."
            )
        arrays = []
        for member, name, subject, shape, read_as in headers:
            try:
                with archive.open(member) as stream:
                    array = np.lib.format.read_array(stream, allow_pickle=False)
            except Exception as error:
                raise ValueError(f"{subject} could not be read ({_short(error)}).") from None
            values = _as_numbers(array).reshape(read_as)
            arrays.append(UploadedArray(name, values, _dropped_note(shape, read_as, reader)))
    return arrays


# ----------------------------------------------------------------------------------------
# .safetensors
# ----------------------------------------------------------------------------------------


def _load_safetensors(data: bytes, reader: _Reader) -> list[UploadedArray]:
    """A checkpoint's rotary buffers (pe_core.identify.model_files: read with the safetensors package,
    no pickle, only the tensors that name a rotary buffer), each checked as a .npz member is."""
    with tempfile.NamedTemporaryFile(suffix=".safetensors") as file:  # safe_open reads a path
        file.write(data)
        file.flush()
        try:
            tensors = read_safetensors(Path(file.name), max_cells=MAX_UPLOAD_CELLS).arrays
        except ValueError as refusal:
            said = str(refusal).replace(Path(file.name).name, "The .safetensors file")
            raise ValueError(said.replace("Name one with --array.", f"Any one is read by {COMMAND_LINE} "
                                          "model.safetensors --array NAME.")) from None
    arrays = []
    for name, array in tensors.items():
        subject = f"Tensor {name!r} of the .safetensors file"
        _check_dtype(array.dtype, subject, reader)
        try:
            read_as = reader.shape(array.shape, array.dtype.kind == "c")
        except ValueError as error:
            raise ValueError(f"{subject}: {error}") from None
        arrays.append(UploadedArray(name, _as_numbers(array).reshape(read_as),
                                    _dropped_note(array.shape, read_as, reader)))
    return arrays


# ----------------------------------------------------------------------------------------
# .csv
# ----------------------------------------------------------------------------------------


def _delimiter(text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    for candidate in (",", ";", "\t"):
        if candidate in first:
            return candidate
    return r"\s+"


def _numbers(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float values of text cells and a mask of cells that are not numbers at all."""
    stripped = pd.Series(cells.ravel(), dtype=object).astype(str).str.strip().str.strip('"').str.strip("'")
    values = pd.to_numeric(stripped, errors="coerce").to_numpy(dtype=np.float64)
    literal_non_finite = stripped.str.lower().isin(_NON_FINITE_TEXT).to_numpy()
    text = np.isnan(values) & ~literal_non_finite
    return values.reshape(cells.shape), text.reshape(cells.shape)


def _counts_up(numbers: np.ndarray) -> bool:
    """Whether numbers are 3 or more consecutive whole numbers (k, k+1, ...) beyond [-1, 1]:
    an index or column names, as pandas writes them, and never a column of an encoding."""
    return (
        numbers.size >= 3
        and bool(np.all(np.diff(numbers) == 1.0))
        and float(numbers[0]).is_integer()
        and float(np.max(np.abs(numbers))) > 1.0
    )


def _header_and_labels(values: np.ndarray, is_text: np.ndarray, missing: np.ndarray) -> tuple[bool, bool]:
    """Whether the CSV's first row is a header (column names) and its first column row labels.

    A header is a row of text, or of counting numbers (pandas names a DataFrame's columns 0, 1,
    2, ...); row labels are a column of text (as the app's own downloads have), or of counting
    numbers (pandas' index). ``DataFrame(P).to_csv()`` writes both, with the corner cell empty.
    A single column (an inv_freq written one value a line) may have a header of text.
    """
    rows, cols = values.shape
    if rows < 2:
        return False, False
    if cols < 2:
        return bool(is_text[0, 0]) and not is_text[1:].any(), False
    corner_empty = bool(missing[0, 0]) and not missing[0, 1:].any() and not missing[1:, 0].any()
    # The corner cell may name the index, so the names may count up from the second cell on.
    header = corner_empty or bool(is_text[0].any()) or _counts_up(values[0]) or _counts_up(values[0, 1:])
    below = slice(1, None) if header else slice(None)
    first_column, first_text = values[below, 0], is_text[below, 0]
    labels = corner_empty or bool(first_text.all()) or (not first_text.any() and _counts_up(first_column))
    return header, labels


def _load_csv(data: bytes, reader: _Reader) -> UploadedArray:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("This .csv file is not UTF-8 text.") from None
    if not text.strip():
        raise ValueError("The .csv file holds no values.")
    try:
        frame = pd.read_csv(
            io.StringIO(text), header=None, sep=_delimiter(text), dtype=str, skip_blank_lines=True,
            keep_default_na=False, engine="c" if _delimiter(text) != r"\s+" else "python",
        )
    except pd.errors.ParserError as error:
        raise ValueError(f"The rows of the .csv file have different numbers of values ({_short(error)}).") from None
    except Exception as error:
        raise ValueError(f"This .csv file could not be read ({_short(error)}).") from None
    cells = frame.to_numpy(dtype=object)
    missing = (frame.isna() | (frame == "")).to_numpy()
    values, is_text = _numbers(np.where(missing, "0", cells))
    header, labels = _header_and_labels(values, is_text, missing)
    values, is_text, missing = (array[int(header):, int(labels):] for array in (values, is_text, missing))
    if missing.any():
        row, col = np.argwhere(missing)[0]
        raise ValueError(
            f"Row {row} of the values has an empty cell at column {col} (or fewer values than the others); "
            "every row needs the same number of values."
        )
    if is_text.any():
        row, col = np.argwhere(is_text)[0]
        raise ValueError(f"The .csv file has text where a number should be (row {row}, column {col} of the values).")
    read_as = reader.shape(values.shape, False)
    skipped = [
        part for part, found in (("its header row (column names)", header), ("its first column (row labels)", labels))
        if found
    ]
    pandas = ", as pandas' to_csv() writes them" if header and labels else ""
    notes = (
        (f"Skipped {' and '.join(skipped)}{pandas}: the values are {values.shape[0]:,} x {values.shape[1]:,}.",)
        if skipped else ()
    )
    if read_as != values.shape:
        notes += (f"The values are one {'column' if values.shape[1] == 1 else 'row'}: read as "
                  f"{_shape_text(read_as)}.",)
    return UploadedArray(None, values.reshape(read_as), notes)


# ----------------------------------------------------------------------------------------
# The two checkers' readings
# ----------------------------------------------------------------------------------------


def _over_the_limit(data: bytes) -> str:
    return (f"The file has {len(data):,} bytes; the checker takes at most {MAX_UPLOAD_BYTES / 10**6:g} MB "
            f"({MAX_UPLOAD_BYTES:,} bytes).")


def _read(name: str, data: bytes, reader: _Reader) -> list[UploadedArray]:
    suffix = PurePath(name or "").suffix.lower()
    if suffix in TORCH_SUFFIXES:
        raise ValueError(torch_file_refusal(PurePath(name).name))
    if suffix == ".gguf":  # a rotary model's RoPE in metadata, not an array: read_gguf_upload reads it
        raise ValueError("A .gguf file holds a rotary model's RoPE: the Rotary page's checker reads it (its last "
                         "section).")
    if suffix not in reader.suffixes:
        kinds = ", ".join(f"a {s}" for s in reader.suffixes[:-1]) + f" or a {reader.suffixes[-1]}"
        raise ValueError(f"Upload {kinds} file.")
    if len(data) == 0:
        raise ValueError("The file is empty.")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"{_over_the_limit(data)} Save float32 .npy or fewer positions, or {READS_LARGER_FILES}.")
    if suffix == ".npy":
        arrays = [_load_npy(data, reader)]
    elif suffix == ".npz":
        arrays = _load_npz(data, reader)
    elif suffix == ".safetensors":
        arrays = _load_safetensors(data, reader)
    else:
        arrays = [_load_csv(data, reader)]
    return [UploadedArray(a.name, _finite(a.values, reader), a.notes) for a in arrays]


@dataclass(frozen=True)
class Upload:
    """An uploaded matrix, and one sentence for each thing reading it took (axes dropped, a
    header row or row labels skipped)."""

    matrix: np.ndarray
    notes: tuple[str, ...] = ()


def read_matrix(name: str, data: bytes) -> Upload:
    """The 2-D float64 matrix of an uploaded .npy or .csv file, or the first 2-D array of a .npz or of
    a .safetensors file's tables of positions (the Annotated Transformer's ``pe`` buffer, Marian's and
    Whisper's ``embed_positions.weight``), and what reading it took.

    A .npy array of more than 2 axes loses its axes of size 1 (PyTorch keeps its table as
    ``pe.unsqueeze(1)``, shape (L, 1, d)); a .csv file's header row and first column of row
    labels (``DataFrame(P).to_csv()`` writes both) are skipped; a file of several arrays names
    the others and how to read them. Each says so in ``notes``.

    Raises:
        ValueError: with a one-line message a visitor can act on (empty, too large, not
            2-D, pickled objects, truncated, ragged, text cells, NaN or infinite values).
    """
    if PurePath(name or "").suffix.lower() not in (".npz", ".safetensors"):
        [array] = _read(name, data, _MATRIX)
        return Upload(array.values, array.notes)
    arrays = _read(name, data, replace(_MATRIX, shape=_any_shape))
    matrices = [array for array in arrays if array.values.ndim == 2]
    if not matrices:
        held = ", ".join(f"{array.name} ({_shape_text(array.values.shape)})" for array in arrays)
        raise ValueError(f"The file holds no 2-D matrix (positions x dimensions): it holds {held}.")
    chosen = matrices[0]
    others = [array.name for array in arrays if array is not chosen]
    read = f"Read {chosen.name}" + (f"; the file also holds {', '.join(others)}, each read by {COMMAND_LINE} "
                                     "FILE --array NAME (or on the Rotary page's checker)." if others else ".")
    return Upload(chosen.values, (read, *chosen.notes))


def _any_shape(shape: tuple[int, ...], is_complex: bool) -> tuple[int, ...]:
    """Any array of a file holding several, without its axes of size 1 (read_matrix keeps its 2-D ones)."""
    squeezed = _all_squeezed(shape)
    if 0 in squeezed:
        raise ValueError(f"The array is empty (shape {tuple(shape)}).")
    if max(squeezed) > MAX_SIDE or math.prod(squeezed) > MAX_UPLOAD_CELLS:
        _check_size(squeezed[0], math.prod(squeezed[1:]), "matrix")
    return squeezed


def read_gguf_upload(name: str, data: bytes) -> GgufRope:
    """The RoPE of an uploaded .gguf file (``pe_core.identify.gguf_file.read_gguf``: its metadata and rope
    tensors, read by llama.cpp's gguf package). Raises ValueError with one line for the visitor."""
    if len(data) > MAX_UPLOAD_BYTES:  # Streamlit's uploader stops these first; checked again here
        raise ValueError(f"{_over_the_limit(data)} Larger files: {READS_LARGER_FILES}.")
    with tempfile.NamedTemporaryFile(suffix=".gguf") as file:  # GGUFReader maps a path
        file.write(data)
        file.flush()
        try:
            return read_gguf(Path(file.name))
        except ValueError as refusal:
            raise ValueError(str(refusal).replace(Path(file.name).name, "The .gguf file")) from None


def read_arrays(name: str, data: bytes, *, suffixes: tuple[str, ...] = _ROTARY.suffixes) -> list[UploadedArray]:
    """Every array of an uploaded .npy, .npz or .csv file (those of ``suffixes``) as what a
    rotary model holds: a 1-D vector (inv_freq), a 2-D table, real or complex (freqs_cis), or a
    complex table's real view (positions, d/2, 2). Axes of size 1 are dropped and a CSV's
    header row and row labels skipped, each said in the array's ``notes``; a .npz gives each of
    its arrays, by name, in the file's order.

    Raises:
        ValueError: with a one-line message a visitor can act on (as ``read_matrix``, and for
            a .npz: not a zip of .npy files, too many arrays, too many values together).
    """
    return _read(name, data, replace(_ROTARY, suffixes=suffixes))
