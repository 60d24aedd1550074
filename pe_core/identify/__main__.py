"""``python -m pe_core.identify FILE``: identify_encoding's verdict on a saved table, in a terminal or a CI job.

FILE is a .npy (``np.save``), a .npz (``np.savez``: every array in it, or the one ``--array``
names), a .csv of plain numbers (comma, semicolon, tab or spaces between them; one header
row of names is skipped) or a checkpoint's .safetensors (its rotary buffers and position tables,
``inv_freq``, ``freqs_cis``, ``embed_positions``, ``pe``..., read from disk alone, or the tensor
``--array`` names; the command says how many bytes that took). A torch file (.pt, .pth, .bin) is
refused with the line that converts it: it is a pickle, never loaded. Arrays are read without
pickle (``allow_pickle=False``); axes of length 1 are dropped, so a transformers cos of shape
(1, L, d) or a (L, 1, d) buffer is read as (L, d). Each array gets the verdict the app shows,
after a one-line summary.

A .gguf is read with llama.cpp's gguf package: its RoPE metadata as the config.json it amounts
to, its rope tensors as llama.cpp runs them; ``--config config.json`` names each difference from
the model's config (exit 1 when there is one). A downloaded checkpoint's folder is read as a
whole: its config.json beside the rotary buffers its shards hold.

Exit status: 0 when every array read is recognised (a sinusoidal or rotary variant), 1 when
one is not, 2 when the file cannot be read (with a message saying why).

Example:
    $ python -m pe_core.identify cos.npy
    cos.npy: RoPE cos table, d = 128, half layout, base 500000, start 0, llama3 scaling by 8
    RoPE cos table, half layout (...), d = 128, base 500000, positions 0 to 8191. llama3 scaling ...
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import textwrap
import zipfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from pe_core._validate import MAX_CELLS
from pe_core.identify.gguf_file import differences, read_gguf
from pe_core.identify.model_files import (
    TORCH_SUFFIXES,
    header_bytes,
    how_much_read,
    read_safetensors,
    torch_file_refusal,
)
from pe_core.identify.sinusoidal import identify_encoding
from pe_core.rope.config import rope_from_config

#: Exit statuses.
RECOGNISED, NOT_RECOGNISED, UNREADABLE = 0, 1, 2

_KIND_NAMES = {
    "sinusoidal": "sinusoidal encoding",
    "rope_cos": "RoPE cos table",
    "rope_sin": "RoPE sin table",
    "rope_inv_freq": "RoPE frequency vector (inv_freq)",
    "rope_complex": "RoPE complex table (freqs_cis)",
}


class UnreadableFileError(Exception):
    """The file cannot be read as numbers; the message says why, for a person."""


def _check_array(name: str, array: np.ndarray) -> np.ndarray:
    if array.dtype.kind == "V" and array.dtype.itemsize == 2:
        raise UnreadableFileError(
            f"{name} holds 2-byte values without a type numpy knows (a bfloat16 array saved by np.save): save it "
            "as float32 (tensor.float().numpy(), or array.astype(np.float32)); its values are kept exactly."
        )
    if array.dtype.kind not in "iufc":
        raise UnreadableFileError(f"{name} holds {array.dtype} values; the checker needs real or complex numbers.")
    if array.size == 0:
        raise UnreadableFileError(f"{name} is empty (shape {array.shape}).")
    if array.size > MAX_CELLS:
        raise UnreadableFileError(f"{name} has {array.size:,} values, more than the limit of {MAX_CELLS:,}.")
    return array


def _squeezed(array: np.ndarray) -> np.ndarray:
    """Drop axes of length 1 (a batch axis, PyTorch's (L, 1, d) buffer), keeping at least one axis."""
    shape = tuple(n for n in array.shape if n != 1) or (1,)
    return array.reshape(shape)


def _load_npy(path: Path) -> dict[str, np.ndarray]:
    try:
        with path.open("rb") as stream:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
            else:
                shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    except (OSError, ValueError, EOFError) as error:
        raise UnreadableFileError(f"{path.name} is not a readable .npy file ({_short(error)}).") from None
    if dtype.hasobject:
        raise UnreadableFileError(
            f"{path.name} holds Python objects (a pickled array), which the checker never loads; save a numeric "
            "array, e.g. np.save('cos.npy', cos.astype(np.float32))."
        )
    if math.prod(shape) > MAX_CELLS:
        raise UnreadableFileError(f"{path.name} has {math.prod(shape):,} values, more than the limit of {MAX_CELLS:,}.")
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise UnreadableFileError(f"{path.name} could not be read ({_short(error)}).") from None
    return {path.name: _check_array(path.name, array)}


def _load_npz(path: Path, wanted: str | None) -> dict[str, np.ndarray]:
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise UnreadableFileError(f"{path.name} is not a readable .npz file ({_short(error)}).") from None
    with archive:
        names = list(archive.files)
        if wanted is not None and wanted not in names:
            raise UnreadableFileError(f"{path.name} has no array {wanted!r}; it holds {', '.join(names) or 'none'}.")
        if not names:
            raise UnreadableFileError(f"{path.name} holds no arrays.")
        arrays = {}
        for name in [wanted] if wanted is not None else names:
            try:
                array = archive[name]
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
                raise UnreadableFileError(f"{path.name}: array {name!r} could not be read ({_short(error)}).") from None
            arrays[f"{path.name}[{name}]"] = _check_array(f"{path.name}[{name}]", array)
        return arrays


def _load_csv(path: Path) -> dict[str, np.ndarray]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableFileError(f"{path.name} is not UTF-8 text.") from None
    except OSError as error:
        raise UnreadableFileError(f"{path.name} could not be read ({_short(error)}).") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise UnreadableFileError(f"{path.name} holds no values.")
    delimiter = next((c for c in (",", ";", "\t") if c in lines[0]), None)
    header = 0
    try:
        [float(cell) for cell in lines[0].split(delimiter) if cell.strip()]
    except ValueError:
        header = 1  # a row of column names
    try:
        array = np.loadtxt(lines[header:], delimiter=delimiter, ndmin=2, dtype=np.float64)
    except ValueError as error:
        raise UnreadableFileError(
            f"{path.name} is not a table of plain numbers ({_short(error)}); the command line reads numbers "
            "separated by commas, semicolons, tabs or spaces, with at most one header row and no row labels."
        ) from None
    if array.size == 0:
        raise UnreadableFileError(f"{path.name} holds no values.")
    return {path.name: _check_array(path.name, array)}


def load_arrays(path: Path, array_name: str | None = None) -> tuple[dict[str, np.ndarray], int]:
    """The arrays of a .npy, .npz, .csv or .safetensors file (its rotary buffers or position tables,
    each read from disk alone), by display name, with axes of length 1 dropped; and the bytes of the
    file that took (all of them but for a .safetensors file).

    Raises:
        UnreadableFileError: with a message a person can act on.
    """
    if not path.is_file():
        raise UnreadableFileError(f"{path} is not a file.")
    suffix = path.suffix.lower()
    if suffix in TORCH_SUFFIXES:
        raise UnreadableFileError(torch_file_refusal(path.name))
    if array_name is not None and suffix not in (".npz", ".safetensors"):
        raise UnreadableFileError(f"--array names an array of a .npz or .safetensors file; {path.name} is a "
                                  f"{suffix or 'file'}.")
    bytes_read = path.stat().st_size
    if suffix == ".npy":
        arrays = _load_npy(path)
    elif suffix == ".npz":
        arrays = _load_npz(path, array_name)
    elif suffix == ".csv":
        arrays = _load_csv(path)
    elif suffix == ".safetensors":
        try:
            read = read_safetensors(path, array_name, max_cells=MAX_CELLS)
        except ValueError as refusal:
            raise UnreadableFileError(str(refusal)) from None
        arrays = {f"{path.name}[{name}]": _check_array(f"{path.name}[{name}]", array)
                  for name, array in read.arrays.items()}
        bytes_read = read.bytes_read
    else:
        raise UnreadableFileError(f"{path.name}: the checker reads .npy, .npz, .csv and .safetensors files (a torch "
                                  ".pt, .pth or .bin file is refused with the line that converts it).")
    return {name: _squeezed(array) for name, array in arrays.items()}, bytes_read


def summary(name: str, result: dict) -> str:
    """One line: what the array is, in the result's own terms."""
    kind = result["kind"]
    if kind is None:
        return f"{name}: not recognised"
    parts = [_KIND_NAMES[kind]]
    if result.get("d") is not None:
        parts.append(f"d = {result['d']}")
    if result["layout"] is not None:
        parts.append(f"{result['layout']} layout")
    if kind == "sinusoidal":
        parts.append(f"{result['convention']} frequencies")
    if result["n"] is not None:
        parts.append(f"base {result['n']:g}")
    if result["start"] is not None:
        parts.append(f"start {result['start']}")
    scaling = result.get("scaling")
    if scaling is not None:
        factor = "" if scaling.get("factor") is None else f" by {scaling['factor']:g}"
        parts.append(f"{scaling['method']} scaling{factor}")
        if scaling.get("partial_rotary_factor") is not None:
            parts.append(f"partial_rotary_factor {scaling['partial_rotary_factor']:g}")
    if result.get("attention_factor") not in (None, 1.0):
        parts.append(f"attention factor {result['attention_factor']:.6g}")
    return f"{name}: " + ", ".join(parts)


def _json_ready(value: object) -> object:
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def _short(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def main(argv: list[str] | None = None) -> int:
    """Identify the arrays of FILE; print a summary line and the verdict of each. Returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m pe_core.identify",
        description="Say which positional encoding a saved table is: a sinusoidal variant, or what a rotary "
        "model holds (inv_freq, cos or sin table, freqs_cis), with its layout, base, start, scaling and "
        "attention factor.",
        epilog="Exit status: 0 every array recognised, 1 some array not recognised, 2 the file cannot be read.",
    )
    parser.add_argument("file", type=Path, help="a .npy, .npz, .csv, .safetensors or .gguf file, or a downloaded "
                        "checkpoint's folder (its config.json and .safetensors shards)")
    parser.add_argument("--config", type=Path, help="with a .gguf file, the model's config.json: each difference "
                        "between the two is named (exit 1 when there is one)")
    parser.add_argument("--array", help="in a .npz or .safetensors file, the one array to read (default: every "
                        "array of a .npz; a .safetensors file's rotary buffers and position tables)")
    parser.add_argument("--json", action="store_true", help="print each result dict as JSON instead of text")
    arguments = parser.parse_args(argv)
    if arguments.file.is_dir():
        return _checkpoint_main(arguments.file, as_json=arguments.json)
    if arguments.file.suffix.lower() == ".gguf":
        return _gguf_main(arguments.file, arguments.config, as_json=arguments.json)
    if arguments.config is not None:
        print("error: --config compares a .gguf file with its config.json; this is not a .gguf file.", file=sys.stderr)
        return UNREADABLE
    try:
        arrays, bytes_read = load_arrays(arguments.file, arguments.array)
    except UnreadableFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return UNREADABLE
    status = RECOGNISED
    outputs = {}
    for name, array in arrays.items():
        try:
            result = identify_encoding(array)
        except ValueError as error:
            print(f"error: {name}: {error}", file=sys.stderr)
            status = max(status, UNREADABLE)
            continue
        if result["kind"] is None:
            status = max(status, NOT_RECOGNISED)
        outputs[name] = result
        if not arguments.json:
            width = max(40, min(120, _terminal_width()))
            print(summary(name, result))
            print(textwrap.fill(result["verdict"], width=width))
    if arguments.json:
        print(json.dumps(_json_ready(outputs), indent=2))
    elif arguments.file.suffix.lower() == ".safetensors":
        print(how_much_read(bytes_read, arguments.file.stat().st_size, "its header and the tensors named above"))
    return status


def _gguf_main(path: Path, config_path: Path | None, *, as_json: bool) -> int:
    """A .gguf file's RoPE: its metadata read as the config.json it amounts to, its rope_freqs as the
    inv_freq llama.cpp computes (identified like any inv_freq), and, given its config.json, where the
    two differ."""
    try:
        if not path.is_file():
            raise ValueError(f"{path} is not a file.")
        gguf = read_gguf(path)
        config = None if config_path is None else rope_from_config(json.loads(config_path.read_text()))
    except (ValueError, OSError) as error:  # json.JSONDecodeError is a ValueError
        print(f"error: {error}", file=sys.stderr)
        return UNREADABLE
    rope = gguf.rope
    result = identify_encoding(gguf.inv_freq) if gguf.inv_freq is not None else None
    found = differences(gguf, config) if config is not None else []
    if as_json:
        print(json.dumps(_json_ready({"architecture": gguf.architecture, "config": gguf.config,
                                      "rope_freqs": result, "differences": found, "refusal": gguf.refusal}), indent=2))
    else:
        width = max(40, min(120, _terminal_width()))
        print(textwrap.fill(gguf.summary(path.name), width=width))
        for note in () if rope is None else rope.notes:
            print(textwrap.fill(note, width=width))
        if result is not None:
            print(textwrap.fill("rope_freqs, as the inv_freq llama.cpp computes (b^(-2i/d) / f_i): "
                                + result["verdict"], width=width))
        if config is not None:
            print(textwrap.fill(f"Against {config_path.name}: " + (" ".join(found) if found else "they agree."),
                                width=width))
        print(textwrap.fill(gguf.how_much_read, width=width))
    if rope is None:
        return UNREADABLE
    return NOT_RECOGNISED if found or (result is not None and result["kind"] is None) else RECOGNISED


def _checkpoint_main(folder: Path, *, as_json: bool) -> int:
    """A downloaded checkpoint's folder as a whole: its config.json's RoPE beside the rotary buffers its
    .safetensors shards hold (each read from disk alone), and whether each buffer's frequencies are the
    config's."""
    config_path = folder / "config.json"
    try:
        config = rope_from_config(json.loads(config_path.read_text())) if config_path.is_file() else None
    except ValueError as error:  # json.JSONDecodeError is a ValueError
        print(f"error: {config_path}: {error}", file=sys.stderr)
        return UNREADABLE
    shards = sorted(folder.glob("*.safetensors"))
    if config is None and not shards:
        print(f"error: {folder} holds neither a config.json nor .safetensors files.", file=sys.stderr)
        return UNREADABLE
    outputs: dict[str, dict] = {}
    without = []
    bytes_read = 0
    for shard in shards:
        try:
            arrays, shard_bytes_read = load_arrays(shard)
        except UnreadableFileError as error:
            if "holds no table of positions" not in str(error):
                print(f"error: {error}", file=sys.stderr)
                return UNREADABLE
            without.append(shard.name)
            bytes_read += header_bytes(shard)
            continue
        bytes_read += shard_bytes_read
        outputs |= {name: identify_encoding(array) for name, array in arrays.items()}
    lines = []
    if config is not None:
        scaling = "none" if config.scaling is None else f"{config.scaling.method} ×{config.scaling.factor:g}"
        lines.append(f"config.json: d = {config.d}, base {config.base:g}, scaling {scaling}, max positions "
                     f"{config.max_length or '?'}")
    status = RECOGNISED
    for name, result in outputs.items():
        agreement = ""
        if config is not None and result["kind"] == "rope_inv_freq":
            agrees = result["d"] == config.d and result["n"] == config.base and (
                result["scaling"] is None) == (config.scaling is None)
            agreement = " It agrees with config.json." if agrees else " It differs from config.json's RoPE."
            status = max(status, RECOGNISED if agrees else NOT_RECOGNISED)
        if result["kind"] is None:
            status = max(status, NOT_RECOGNISED)
        lines.append(f"{summary(name, result)}\n{result['verdict']}{agreement}")
    if without:
        lines.append(f"{len(without)} of {len(shards)} shards hold no rotary buffer (read: their headers only).")
    if shards:
        lines.append(how_much_read(bytes_read, sum(shard.stat().st_size for shard in shards),
                                   "the shards' headers and the tensors named above"))
    if as_json:
        print(json.dumps(_json_ready({"config": None if config is None else asdict(config), "buffers": outputs,
                                      "shards_without_buffers": without}), indent=2))
    else:
        width = max(40, min(120, _terminal_width()))
        for line in lines:
            print("\n".join(textwrap.fill(part, width=width) for part in line.split("\n")))
    return status


def _terminal_width() -> int:
    return shutil.get_terminal_size((100, 24)).columns


if __name__ == "__main__":
    raise SystemExit(main())
