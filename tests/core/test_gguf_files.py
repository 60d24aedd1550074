"""GGUF files on the command line (``python -m pe_core.identify model.gguf [--config config.json]``),
written with llama.cpp's own ``gguf.GGUFWriter`` as its converter (convert_hf_to_gguf.py) writes
Llama 3.1 (its ``rope_freqs`` divisors), Qwen2.5 with YaRN metadata and Phi-3 (its
``rope_factors_long`` / ``_short``); a conversion with the wrong base; hostile files (issue 39)."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
import pytest
from support.gguf_files import llama31_gguf, write_gguf

import pe_core
from explorer.model_configs import load_config
from explorer.topics import rotary
from pe_core.identify.__main__ import main
from pe_core.identify.gguf_file import read_gguf


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


def test_rotary_s_checker_reads_an_uploaded_gguf(tmp_path) -> None:
    """The page reads what the command line reads: the metadata's summary line and rope_freqs identified."""
    model = llama31_gguf(tmp_path / "llama-3.1-8b.gguf")
    check = rotary.check_upload(model.name, model.read_bytes())
    summary = check.model_file[0]
    assert summary == read_gguf(model).summary(model.name)
    assert summary.startswith("llama-3.1-8b.gguf: GGUF (llama), d = 128, base 500000, context 131072")
    [reading] = check.readings
    assert reading.name == rotary.GGUF_ROPE_FREQS and reading.status == "rotary"
    assert (reading.result["scaling"]["method"], reading.result["scaling"]["factor"]) == ("llama3", 8.0)
    qwen = write_gguf(tmp_path / "qwen.gguf", "qwen2", {
        "rope_freq_base": 1e6, "rope_dimension_count": 128, "rope_scaling_type": gguf.RopeScalingType.YARN,
        "rope_scaling_factor": 4.0, "rope_scaling_orig_ctx_len": 32768}, {})
    check = rotary.check_upload(qwen.name, qwen.read_bytes())
    assert check.readings == () and "scaling in its metadata: yarn ×4 from 32,768" in check.model_file[0]
    with pytest.raises(ValueError, match=r"^The \.gguf file is not a readable \.gguf file"):
        rotary.check_upload("hostile.gguf", b"NOPE" + bytes(60))


def test_the_cli_says_how_much_of_a_gguf_it_read(tmp_path, capsys) -> None:
    """Everything before the tensor data and the rope tensors; not the weights."""
    model = llama31_gguf(tmp_path / "model.gguf")
    reader = gguf.GGUFReader(str(model))
    weights = next(tensor for tensor in reader.tensors if tensor.name == "token_embd.weight")
    expected = reader.data_offset + 64 * 4  # rope_freqs: 64 float32 divisors
    assert read_gguf(model).bytes_read == expected
    assert expected + weights.n_bytes <= model.stat().st_size  # the weights are not counted
    assert main([str(model)]) == 0
    said = capsys.readouterr().out.replace("\n", " ")
    assert f"Read {expected:,} of its {model.stat().st_size:,} bytes from disk" in said
    assert "its metadata and tensor list and its rope tensors" in said
