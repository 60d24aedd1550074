"""The files a model's weights come in, as the checker reads them: a checkpoint's rotary buffers from a
.safetensors file, and torch's pickled files refused with the line that converts them.

A checkpoint persists its rotary buffers beside its weights (GPT-NeoX and Pythia's
``rotary_emb.inv_freq``, early Llama conversions, GPT-J's ``embed_positions``). Only those tensors
are read: the file is opened with the ``safetensors`` package (no pickle), whose header says every
tensor's name, type and place, and a tensor is read from disk only when its name names a rotary
buffer (or is the one asked for), so a multi-GB shard costs its header and those tensors. The
``safetensors`` package is imported only when such a file is read: the rest of pe_core stays NumPy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

#: The last part of a tensor's name that makes it a rotary buffer (a leading "_" ignored).
ROTARY_BUFFER_NAMES = ("inv_freq", "rope_freqs", "freqs_cis", "embed_positions", "cos_cached", "sin_cached")
#: torch's own files: a pickle, which the checker never loads.
TORCH_SUFFIXES = (".pt", ".pth", ".bin")
#: safetensors' types, as NumPy reads their bytes; BF16 is widened to float32 exactly.
_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
           "U8": "u1", "BF16": "<u2"}


def is_rotary_buffer(name: str) -> bool:
    """Whether a checkpoint's tensor ``name`` names a rotary buffer ("model.layers.0.self_attn.rotary_emb.inv_freq")."""
    return name.rsplit(".", 1)[-1].lstrip("_") in ROTARY_BUFFER_NAMES


def torch_file_refusal(name: str) -> str:
    """The one line that says why a torch file is not read, and how to turn it into one that is."""
    return (f"{name} is a torch file (a pickle, which could run code when loaded): the checker never loads it. "
            "Convert it: torch.load(f, weights_only=True), then np.save a tensor's .float().numpy(), or "
            "safetensors.torch.save_file(state_dict, 'model.safetensors').")


def read_safetensors(path: Path, wanted: str | None = None, *, max_cells: int) -> dict[str, np.ndarray]:
    """The rotary buffers of a .safetensors file (or only ``wanted``), by tensor name.

    Raises:
        ValueError: a file safetensors cannot read (with its reason), a ``wanted`` it does not hold,
            no rotary buffer in it (naming what it holds), or a buffer of more than ``max_cells``
            values or of a type that is not numbers.
    """
    try:
        from safetensors import SafetensorError, safe_open
    except ImportError:  # pragma: no cover - a pinned runtime requirement
        raise ValueError("reading .safetensors files needs the safetensors package (pip install safetensors).") \
            from None
    try:
        with safe_open(str(path), framework="numpy") as handle:
            names = list(handle.keys())
            shapes = {name: tuple(handle.get_slice(name).get_shape()) for name in names}
            types = {name: handle.get_slice(name).get_dtype() for name in names}
    except (SafetensorError, OSError) as error:
        raise ValueError(f"{path.name} is not a readable .safetensors file ({error}).") from None
    if wanted is not None and wanted not in names:
        raise ValueError(f"{path.name} has no tensor {wanted!r}; {_holding(names)}.")
    chosen = [wanted] if wanted is not None else [name for name in names if is_rotary_buffer(name)]
    if not chosen:
        raise ValueError(f"{path.name} holds no rotary buffer (a tensor named {', '.join(ROTARY_BUFFER_NAMES)}); "
                         f"{_holding(names)}. Name one with --array.")
    offsets = _data_offsets(path)
    arrays = {}
    for name in chosen:
        if types[name] not in _DTYPES:
            raise ValueError(f"{path.name}: {name} holds {types[name]} values; the checker needs numbers.")
        if math.prod(shapes[name]) > max_cells:
            raise ValueError(f"{path.name}: {name} has {math.prod(shapes[name]):,} values, more than the limit of "
                             f"{max_cells:,}.")
        start, header_end = offsets[name]
        values = np.fromfile(path, dtype=_DTYPES[types[name]], count=math.prod(shapes[name]), offset=start + header_end)
        if types[name] == "BF16":  # bfloat16 is float32's upper half: exact
            values = (values.astype(np.uint32) << 16).view(np.float32)
        arrays[name] = values.reshape(shapes[name])
    return arrays


def _holding(names: list[str]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"it holds {shown}" if names else "it holds no tensors"


def _data_offsets(path: Path) -> dict[str, tuple[int, int]]:
    """Each tensor's first byte within the data, and where the data start (the header safe_open has
    already checked: an 8-byte little-endian length, then that many bytes of JSON)."""
    with path.open("rb") as stream:
        length = int.from_bytes(stream.read(8), "little")
        header = json.loads(stream.read(length))
    return {name: (int(entry["data_offsets"][0]), 8 + length) for name, entry in header.items()
            if name != "__metadata__"}
