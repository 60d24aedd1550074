"""The files a model's weights come in, as the checker reads them: a checkpoint's position tensors from a
.safetensors file, and torch's pickled files refused with the line that converts them.

A checkpoint persists its rotary buffers beside its weights (GPT-NeoX and Pythia's
``rotary_emb.inv_freq``, early Llama conversions, GPT-J's ``embed_positions``), and some persist a
sinusoidal table (the Annotated Transformer's ``pe`` buffer, Marian's and Whisper's
``embed_positions.weight``). Only those tensors are read: the file is opened with the ``safetensors``
package (no pickle), whose header says every tensor's name, type and place, and a tensor is read
from disk only when chosen (by its name, or as the one asked for), so a multi-GB shard costs its
header and those tensors, which ``SafetensorsRead.bytes_read`` counts. bfloat16 is read as
``ml_dtypes.bfloat16`` and widened to float32 (exactly: bfloat16 is float32's upper half). The
``safetensors`` package is imported only when such a file is read: the rest of pe_core stays NumPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes  # noqa: F401 - registers bfloat16 with NumPy, which safetensors' NumPy reader needs
import numpy as np

#: The last part of a tensor's name that makes it a rotary buffer (a leading "_" ignored).
ROTARY_BUFFER_NAMES = ("inv_freq", "rope_freqs", "freqs_cis", "embed_positions", "cos_cached", "sin_cached")
#: The module names a position table is kept under, learned or sinusoidal (a ".weight" after them
#: ignored): the Annotated Transformer's PositionalEncoding ``pe`` buffer, Marian's and Whisper's
#: ``embed_positions``, BERT's ``position_embeddings``, GPT-2's ``wpe``, ViT's ``position_embedding(s)``.
POSITION_TABLE_NAMES = ("pe", "embed_positions", "position_embeddings", "position_embedding", "wpe")
#: Every name a tensor is read under (each once).
_CHOSEN_NAMES = tuple(dict.fromkeys(ROTARY_BUFFER_NAMES + POSITION_TABLE_NAMES))
#: torch's own files: a pickle, which the checker never loads.
TORCH_SUFFIXES = (".pt", ".pth", ".bin")
#: safetensors' types of numbers that the checker reads (booleans and 8-bit floats are not tables).
_NUMBER_TYPES = ("F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8")


def _module_name(name: str) -> str:
    parts = name.split(".")
    if len(parts) > 1 and parts[-1] == "weight":
        parts.pop()
    return parts[-1].lstrip("_")


def is_rotary_buffer(name: str) -> bool:
    """Whether a checkpoint's tensor ``name`` names a rotary buffer ("model.layers.0.self_attn.rotary_emb.inv_freq")."""
    return name.rsplit(".", 1)[-1].lstrip("_") in ROTARY_BUFFER_NAMES


def is_position_table(name: str) -> bool:
    """Whether a checkpoint's tensor ``name`` names a table of positions ("model.encoder.embed_positions.weight",
    "src_embed.1.pe"), or a rotary buffer."""
    return _module_name(name) in POSITION_TABLE_NAMES or is_rotary_buffer(name)


def torch_file_refusal(name: str) -> str:
    """The one line that says why a torch file is not read, and how to turn it into one that is."""
    return (f"{name} is a torch file (a pickle, which could run code when loaded): the checker never loads it. "
            "Convert it: torch.load(f, weights_only=True), then np.save a tensor's .float().numpy(), or "
            "safetensors.torch.save_file(state_dict, 'model.safetensors').")


@dataclass(frozen=True)
class SafetensorsRead:
    """The tensors read from a .safetensors file, by name, and the bytes of the file that took."""

    arrays: dict[str, np.ndarray]
    bytes_read: int


def how_much_read(bytes_read: int, file_bytes: int, what: str) -> str:
    """One sentence saying how much of a file was read from disk: ``what`` names the parts read."""
    share = 100 * bytes_read / file_bytes if file_bytes else 100.0
    return (f"Read {bytes_read:,} of its {file_bytes:,} bytes from disk ({share:.2g} %: {what}); the rest was "
            "never loaded.")


def read_safetensors(path: Path, wanted: str | None = None, *, max_cells: int) -> SafetensorsRead:
    """The position tensors of a .safetensors file (``is_position_table``: its rotary buffers and tables
    of positions), or only ``wanted``, by tensor name; each read from disk alone, bfloat16 widened to float32.

    Raises:
        ValueError: a file safetensors cannot read (with its reason), a ``wanted`` it does not hold,
            no tensor chosen in it (naming what it holds), or a chosen tensor of more than
            ``max_cells`` values or of a type that is not numbers.
    """
    try:
        from safetensors import SafetensorError, safe_open
    except ImportError:  # pragma: no cover - a pinned runtime requirement
        raise ValueError("reading .safetensors files needs the safetensors package (pip install safetensors).") \
            from None
    try:
        with safe_open(str(path), framework="numpy") as handle:
            names = list(handle.keys())
            if wanted is not None and wanted not in names:
                raise ValueError(f"{path.name} has no tensor {wanted!r}; {_holding(names)}.")
            chosen = [wanted] if wanted is not None else [name for name in names if is_position_table(name)]
            if not chosen:
                raise ValueError(f"{path.name} holds no table of positions (a tensor named "
                                 f"{', '.join(_CHOSEN_NAMES)}); "
                                 f"{_holding(names)}. Name one with --array.")
            read = {name: _tensor(handle, name, path.name, max_cells) for name in chosen}
    except (SafetensorError, OSError) as error:
        raise ValueError(f"{path.name} is not a readable .safetensors file ({error}).") from None
    return SafetensorsRead({name: array for name, (array, _) in read.items()},
                           header_bytes(path) + sum(stored for _, stored in read.values()))


def header_bytes(path: Path) -> int:
    """Bytes of a .safetensors file's header: its 8-byte length, then that many bytes of JSON."""
    with path.open("rb") as stream:
        return 8 + int.from_bytes(stream.read(8), "little")


def _tensor(handle, name: str, file_name: str, max_cells: int) -> tuple[np.ndarray, int]:
    """One tensor read from disk (float32 where it is stored as bfloat16), and the bytes it took there."""
    tensor = handle.get_slice(name)
    dtype, shape = tensor.get_dtype(), tuple(tensor.get_shape())
    if dtype not in _NUMBER_TYPES:
        raise ValueError(f"{file_name}: {name} holds {dtype} values; the checker needs numbers.")
    if math.prod(shape) > max_cells:
        raise ValueError(f"{file_name}: {name} has {math.prod(shape):,} values, more than the limit of {max_cells:,}.")
    array = handle.get_tensor(name)
    stored = array.nbytes
    return (array.astype(np.float32) if dtype == "BF16" else array), stored


def _holding(names: list[str]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"it holds {shown}" if names else "it holds no tensors"
