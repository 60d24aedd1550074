"""GGUF files on the command line (``python -m pe_core.identify model.gguf [--config config.json]``),
written with llama.cpp's own ``gguf.GGUFWriter`` as its converter (convert_hf_to_gguf.py) writes
Llama 3.1 (its ``rope_freqs`` divisors), Qwen2.5 with YaRN metadata and Phi-3 (its
``rope_factors_long`` / ``_short``); a conversion with the wrong base; hostile files (issue 39)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import gguf
import numpy as np
import pytest

import pe_core
from explorer import uploads
from explorer.model_configs import load_config
from pe_core.identify.__main__ import main
from pe_core.identify.gguf_file import read_gguf


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


def config_file(tmp_path: Path, key: str) -> Path:
    path = tmp_path / f"{key}.json"
    path.write_text(json.dumps(load_config(key)))
    return path


def test_llama31_s_rope_freqs_read_as_llama3_and_agreeing_with_its_config(tmp_path, capsys) -> None:
    model = llama31_gguf(tmp_path / "llama-3.1-8b.Q4_K_M.gguf")
    read = read_gguf(model)
    assert (read.architecture, read.rope.d, read.rope.base, read.rope.scaling) == ("llama", 128, 500000.0, None)
    result = pe_core.identify_encoding(read.inv_freq)
    assert result["kind"] == "rope_inv_freq" and result["scaling"]["method"] == "llama3"
    assert result["scaling"]["factor"] == 8.0
    assert main([str(model), "--config", str(config_file(tmp_path, "llama-3.1-8b"))]) == 0
    said = capsys.readouterr().out
    assert "rope_freqs" in said and "llama3" in said and "they agree" in said


def test_a_conversion_with_the_wrong_base_is_named_against_its_config(tmp_path, capsys) -> None:
    """As in ggml-org/llama.cpp #14367: the GGUF's base is not the config's."""
    model = llama31_gguf(tmp_path / "wrong.gguf", base=10000.0)
    assert main([str(model), "--config", str(config_file(tmp_path, "llama-3.1-8b"))]) == 1
    said = capsys.readouterr().out.replace("\n", " ")
    assert "base: 10000 in the GGUF (rope.freq_base), 500000 in config.json (rope_theta)." in said


def test_qwen25_s_yarn_metadata_reads_as_its_config(tmp_path, capsys) -> None:
    config = load_config("qwen2.5-7b-instruct-yarn")
    model = write_gguf(tmp_path / "qwen2.5.gguf", "qwen2", {
        "context_length": config["max_position_embeddings"], "embedding_length": 3584, "head_count": 28,
        "rope_freq_base": config["rope_theta"], "rope_dimension_count": 128,
        "rope_scaling_type": gguf.RopeScalingType.YARN, "rope_scaling_factor": 4.0,
        "rope_scaling_orig_ctx_len": 32768,
    }, {})
    read = read_gguf(model)
    assert read.rope == pe_core.rope_from_config(config)
    assert main([str(model), "--config", str(config_file(tmp_path, "qwen2.5-7b-instruct-yarn"))]) == 0
    assert "yarn ×4" in capsys.readouterr().out


def test_phi3_s_factor_tensors_read_as_longrope(tmp_path, capsys) -> None:
    config = load_config("phi-3-mini-128k-instruct")
    scaling = config["rope_scaling"]
    model = write_gguf(tmp_path / "phi-3.gguf", "phi3", {
        "context_length": 131072, "embedding_length": 3072, "head_count": 32, "rope_freq_base": 10000.0,
        "rope_dimension_count": 96, "rope_scaling_orig_ctx_len": 4096,
    }, {"rope_factors_long.weight": np.array(scaling["long_factor"], dtype=np.float32),
        "rope_factors_short.weight": np.array(scaling["short_factor"], dtype=np.float32)})
    read = read_gguf(model)
    expected = pe_core.rope_from_config(config)
    assert (read.rope.d, read.rope.scaling.method, read.rope.scaling.factor) == (96, "longrope", 32.0)
    np.testing.assert_allclose(read.rope.scaling.long_factor, expected.scaling.long_factor, rtol=1e-6)
    assert main([str(model), "--config", str(config_file(tmp_path, "phi-3-mini-128k-instruct"))]) == 0
    assert "they agree" in capsys.readouterr().out


@pytest.mark.parametrize(("data", "words"), [
    (b"NOPE" + bytes(60), "not a readable .gguf file"),
    (b"GGUF" + (3).to_bytes(4, "little") + (2**60).to_bytes(8, "little") + (2**60).to_bytes(8, "little"),
     "not a readable .gguf file"),
    (b"GG", "not a readable .gguf file"),
])
def test_hostile_gguf_files_get_a_clear_message(tmp_path, capsys, data: bytes, words: str) -> None:
    path = tmp_path / "hostile.gguf"
    path.write_bytes(data)
    assert main([str(path)]) == 2
    assert words in capsys.readouterr().err


def test_rotary_s_checker_sends_a_gguf_to_the_command_line(tmp_path) -> None:
    model = llama31_gguf(tmp_path / "model.gguf")
    with pytest.raises(ValueError, match=r"python -m pe_core\.identify model\.gguf --config config\.json"):
        uploads.read_arrays(model.name, model.read_bytes())

