"""GGUF files as llama.cpp's converter (convert_hf_to_gguf.py) writes them, with llama.cpp's own
``gguf.GGUFWriter``: its RoPE metadata, its rope tensors, and a weight that no reader should need."""

from __future__ import annotations

import math
from pathlib import Path

import gguf
import numpy as np

from explorer.model_configs import load_config


def write_gguf(path: Path, architecture: str, metadata: dict, tensors: dict[str, np.ndarray]) -> Path:
    writer = gguf.GGUFWriter(str(path), architecture)
    for name, value in metadata.items():
        getattr(writer, f"add_{name}")(value)
    for name, values in tensors.items():
        writer.add_tensor(name, values)
    writer.add_tensor("token_embd.weight", np.ones((16, 8), dtype=np.float32))  # a weight, never read
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def llama3_rope_factors(config: dict) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.generate_extra_tensors, re-typed (NumPy for torch)."""
    scaling, base = config["rope_scaling"], config["rope_theta"]
    dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < old / high:
            factors.append(1)
        elif wavelen > old / low:
            factors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def llama31_gguf(path: Path, base: float = 500000.0) -> Path:
    config = load_config("llama-3.1-8b")
    return write_gguf(path, "llama", {
        "context_length": config["max_position_embeddings"], "embedding_length": config["hidden_size"],
        "head_count": config["num_attention_heads"], "rope_freq_base": base, "rope_dimension_count": 128,
    }, {"rope_freqs.weight": llama3_rope_factors(config)})
