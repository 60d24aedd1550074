r"""A GGUF file's RoPE, as llama.cpp's converter writes it and llama.cpp runs it.

The converter (``convert_hf_to_gguf.py``) writes a model's RoPE into metadata,
``{arch}.rope.freq_base`` (:math:`b`), ``{arch}.rope.dimension_count`` (d, the rotated coordinates),
``{arch}.context_length`` and ``{arch}.rope.scaling.type / factor / original_context_length``
(with YaRN's betas), and into tensors: ``rope_freqs`` holds one divisor per pair
(:math:`\theta'_i = \theta_i / f_i`: Llama 3.1's llama3 scaling), ``rope_factors_long`` and
``rope_factors_short`` LongRoPE's lists (Phi-3). Those are where conversions go wrong
(ggml-org/llama.cpp #14367). The file is opened with llama.cpp's own ``gguf`` package, which maps it
from disk: a multi-GB model costs its header and these small tensors. The metadata is turned into
the config.json that says the same (``config``), read by ``rope_from_config``; ``rope_freqs`` into
the inv_freq llama.cpp computes, :math:`b^{-2i/d} / f_i`, which the checker then reads. The ``gguf``
package is imported only when such a file is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pe_core.identify.model_files import how_much_read
from pe_core.rope.config import RopeConfig, rope_from_config
from pe_core.rope.scaling import rope_frequencies

#: llama.cpp's scaling types that transformers names alike (its "none" is no scaling).
_SCALING_TYPES = ("linear", "yarn", "longrope")
#: Metadata keys (after "{arch}.rope.scaling.") and the rope_scaling key each becomes.
_SCALING_KEYS = {"factor": "factor", "original_context_length": "original_max_position_embeddings",
                 "yarn_beta_fast": "beta_fast", "yarn_beta_slow": "beta_slow"}


@dataclass(frozen=True)
class GgufRope:
    """What a GGUF file says of its RoPE: its architecture, the config.json its metadata amounts to,
    that config's reading (``rope``, None with ``refusal`` when it cannot be read), and the inv_freq
    its ``rope_freqs`` tensor makes (None without one)."""

    architecture: str
    config: dict
    rope: RopeConfig | None
    refusal: str = ""
    inv_freq: np.ndarray | None = None
    tensors: tuple[str, ...] = field(default=())
    bytes_read: int = 0
    file_bytes: int = 0

    def summary(self, name: str) -> str:
        """One line: the file's architecture and what its metadata says of its RoPE."""
        rope = self.rope
        if rope is None:
            return f"{name}: GGUF ({self.architecture}), its RoPE not read: {self.refusal}"
        return (f"{name}: GGUF ({self.architecture}), d = {rope.d}, base {rope.base:g}, context "
                f"{rope.max_length or '?'}, scaling in its metadata: {_scaling_words(rope.scaling)}"
                + (f"; tensors {', '.join(self.tensors)}" if self.tensors else ""))

    @property
    def how_much_read(self) -> str:
        """How much of the file reading it took (its metadata and rope tensors), in one sentence."""
        return how_much_read(self.bytes_read, self.file_bytes, "its metadata and tensor list"
                             + (" and its rope tensors" if self.tensors else ""))


def read_gguf(path: Path) -> GgufRope:
    """The RoPE of a .gguf file. Raises ValueError for a file the gguf package cannot read."""
    try:
        from gguf import GGUFReader
    except ImportError:  # pragma: no cover - a pinned runtime requirement
        raise ValueError("reading .gguf files needs llama.cpp's gguf package (pip install gguf).") from None
    try:
        reader = GGUFReader(str(path), "r")
    except Exception as error:  # the package raises ValueError, KeyError, struct errors on a bad file
        raise ValueError(f"{path.name} is not a readable .gguf file ({type(error).__name__}: {error}).") from None
    values = {name: _value(entry) for name, entry in reader.fields.items() if not name.startswith("tokenizer.")}
    architecture = str(values.get("general.architecture", "?"))
    tensors = {tensor.name: tensor for tensor in reader.tensors
               if tensor.name.split(".")[0] in ("rope_freqs", "rope_factors_long", "rope_factors_short")}

    def meta(key: str) -> object:
        return values.get(f"{architecture}.{key}")

    config: dict = {}
    for key, name in (("rope.freq_base", "rope_theta"), ("context_length", "max_position_embeddings"),
                      ("rope.dimension_count", "head_dim")):
        if meta(key) is not None:
            config[name] = meta(key)
    if "head_dim" not in config and meta("embedding_length") and meta("attention.head_count"):
        config["head_dim"] = int(meta("embedding_length")) // int(meta("attention.head_count"))
    config.setdefault("rope_theta", 10000.0)  # llama.cpp's default when the converter writes none
    kind = str(meta("rope.scaling.type") or "none")
    kind = kind if kind in _SCALING_TYPES else None
    scaling = {"rope_type": kind} if kind else {}
    for key, name in _SCALING_KEYS.items():
        if kind and meta(f"rope.scaling.{key}") is not None:
            scaling[name] = meta(f"rope.scaling.{key}")
    long, short = (tensors.get(f"rope_factors_{which}.weight") for which in ("long", "short"))
    if long is not None and short is not None:
        scaling |= {"rope_type": "longrope", "long_factor": _floats(long), "short_factor": _floats(short)}
        scaling.setdefault("original_max_position_embeddings", meta("rope.scaling.original_context_length"))
    if scaling:
        config["rope_scaling"] = scaling
    try:
        rope, refusal = rope_from_config(config), ""
    except ValueError as error:
        rope, refusal = None, str(error)
    inv_freq = None
    freqs = tensors.get("rope_freqs.weight")
    if freqs is not None and rope is not None:
        divisors = np.asarray(freqs.data, dtype=np.float64).ravel()
        if divisors.size == rope.d // 2:
            inv_freq = rope_frequencies(rope.d, rope.base) / divisors
        else:
            refusal = (f"rope_freqs holds {divisors.size} divisors; d = {rope.d} (rope.dimension_count) has "
                       f"{rope.d // 2} pairs.")
    # What was read: everything before the tensor data (metadata, tensor list), then the rope tensors.
    bytes_read = reader.data_offset + sum(int(tensor.n_bytes) for tensor in tensors.values())
    return GgufRope(architecture, config, rope, refusal, inv_freq, tuple(tensors), bytes_read, path.stat().st_size)


def _value(entry) -> object:
    """A metadata field's value: a number, a string, or a list of them."""
    try:
        return entry.contents()
    except Exception:
        return None


def _floats(tensor) -> list[float]:
    return [float(v) for v in np.asarray(tensor.data, dtype=np.float64).ravel()]


def differences(gguf: GgufRope, config: RopeConfig) -> list[str]:
    """Where a GGUF's RoPE differs from a config.json's reading, one sentence each (none: they agree).
    Compared: d, the base, the maximum length, the scaling method, factor and trained length, and the
    frequencies themselves where the GGUF holds its own (``rope_freqs``)."""
    found = []
    rope = gguf.rope
    if rope is None:
        return [f"The GGUF's RoPE could not be read: {gguf.refusal}"]
    if rope.d != config.d:
        found.append(f"d: {rope.d} in the GGUF (rope.dimension_count), {config.d} in config.json.")
    if rope.base != config.base:
        found.append(f"base: {rope.base:g} in the GGUF (rope.freq_base), {config.base:g} in config.json (rope_theta).")
    if config.max_length is not None and rope.max_length != config.max_length:
        found.append(f"context length: {rope.max_length} in the GGUF, {config.max_length} in config.json "
                     "(max_position_embeddings).")
    if gguf.inv_freq is not None:
        expected = rope_frequencies(config.d, config.base, scaling=config.scaling)
        if expected.shape == gguf.inv_freq.shape:
            off = np.flatnonzero(~np.isclose(gguf.inv_freq, expected, rtol=1e-5, atol=0.0))
            if off.size:
                found.append(f"frequencies: rope_freqs makes {off.size} of the {expected.size} pairs' θ'_i differ from "
                             f"config.json's by more than 1e-5 (first at pair {off[0]}).")
        return found
    mine, theirs = _scaling_words(rope.scaling), _scaling_words(config.scaling)
    if mine != theirs:
        found.append(f"scaling: {mine} in the GGUF, {theirs} in config.json.")
    return found


def _scaling_words(scaling) -> str:
    if scaling is None:
        return "none"
    return f"{scaling.method} ×{scaling.factor:g}" + (f" from {scaling.original_length:,}"
                                                       if scaling.original_length else "")
