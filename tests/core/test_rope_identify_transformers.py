"""identify_encoding on what transformers' and Meta's own code hold: every preset's rotary embedding,
every rope_type's init function, Meta's precompute_freqs_cis with apply_scaling (re-typed below).

The expected readings come from the models' config.json files as pe_core.rope_from_config reads
them (tests/core/test_rope_transformers.py checks that reading against transformers itself). Without
torch or transformers this module skips, except under PE_REQUIRE_TORCH=1 (tests/needs_torch.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.needs_torch import import_or_skip

import pe_core
from explorer.model_configs import load_config

torch = import_or_skip("torch")
transformers = import_or_skip("transformers")
from transformers import CONFIG_MAPPING  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402

transformers.logging.set_verbosity_error()

ROTARY_CLASSES = {
    "llama": "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding",
    "qwen2": "transformers.models.qwen2.modeling_qwen2.Qwen2RotaryEmbedding",
    "mistral": "transformers.models.mistral.modeling_mistral.MistralRotaryEmbedding",
    "gpt_neox": "transformers.models.gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding",
    "deepseek_v3": "transformers.models.deepseek_v3.modeling_deepseek_v3.DeepseekV3RotaryEmbedding",
    "gpt_oss": "transformers.models.gpt_oss.modeling_gpt_oss.GptOssRotaryEmbedding",
    "gemma3_text": "transformers.models.gemma3.modeling_gemma3.Gemma3RotaryEmbedding",
    "phi3": "transformers.models.phi3.modeling_phi3.Phi3RotaryEmbedding",
}
BFLOAT16, FLOAT16, FLOAT32 = torch.bfloat16, torch.float16, torch.float32


def language_model_keys(config: dict) -> dict:
    return dict(config["text_config"]) if "text_config" in config else dict(config)


def hf_config(config: dict):
    keys = language_model_keys(config)
    return CONFIG_MAPPING[keys.pop("model_type")](**keys)


def rotary_tables(config: dict, start: int, length: int, dtype) -> tuple[np.ndarray, np.ndarray, float]:
    """cos, sin (as float64, from ``dtype``) of the model's own rotary embedding, and its attention_scaling."""
    keys = language_model_keys(config)
    module_name, _, class_name = ROTARY_CLASSES[keys["model_type"]].rpartition(".")
    rotary = getattr(__import__(module_name, fromlist=[class_name]), class_name)(hf_config(config))
    extra = {"layer_type": "full_attention"} if keys["model_type"] == "gemma3_text" else {}
    cos, sin = rotary(torch.zeros(1, length, 8, dtype=dtype), torch.arange(start, start + length)[None], **extra)
    scaling = rotary.full_attention_attention_scaling if extra else rotary.attention_scaling
    return cos[0].float().double().numpy(), sin[0].float().double().numpy(), scaling


def assert_reads_config(result: dict, config: dict, *, kind: str, start: int) -> None:
    """The reading names the config's d, base and scaling (method, factor, original length)."""
    rope = pe_core.rope_from_config(config)
    verdict = result["verdict"]
    assert (result["kind"], result["d"], result["start"]) == (kind, rope.d, start), verdict
    assert result["n"] == rope.base, verdict
    if rope.scaling is None:
        assert result["scaling"] is None, verdict
        return
    method = result["scaling"]["method"]
    assert method == rope.scaling.method, verdict
    if method == "longrope":
        return  # divisors: checked by test_phi3s_long_factors_are_read_divisor_by_divisor
    assert result["scaling"]["factor"] == rope.scaling.factor, verdict
    if method in ("yarn", "llama3"):
        assert result["scaling"]["original_length"] == rope.scaling.original_length, verdict
    if method == "yarn":
        assert result["scaling"]["truncate"] == rope.scaling.truncate, verdict


#: Each preset once, in a different dtype, start, kind and orientation (L = 256 rows).
PRESET_CASES = [
    ("llama-2-7b", "cos", BFLOAT16, 0, False),
    ("llama-3-8b", "sin", FLOAT16, 1000, True),
    ("llama-3.1-8b", "cos", BFLOAT16, 0, False),
    ("llama-3.2-1b", "sin", BFLOAT16, 500, False),
    ("qwen2.5-7b-instruct", "cos", FLOAT32, 1000, False),
    ("qwen2.5-7b-instruct-yarn", "cos", BFLOAT16, 0, True),
    ("mistral-7b-v0.1", "sin", FLOAT32, 32000, False),
    ("gpt-neox-20b", "cos", FLOAT16, 7, False),
    ("deepseek-v3", "sin", BFLOAT16, 100, False),
    ("gpt-oss-20b", "cos", FLOAT16, 0, False),
    ("gemma-3-4b-it", "sin", FLOAT32, 4000, False),
    ("phi-3-mini-128k-instruct", "cos", FLOAT32, 0, False),
    ("codellama-7b", "sin", BFLOAT16, 0, True),
]


@pytest.mark.parametrize(("key", "kind", "dtype", "start", "transposed"), PRESET_CASES)
def test_every_presets_rotary_embedding_is_read(key, kind, dtype, start, transposed):
    config = load_config(key)
    cos, sin, attention = rotary_tables(config, start, 256, dtype)
    table = cos if kind == "cos" else sin
    result = pe_core.identify_encoding(table.T if transposed else table)
    assert_reads_config(result, config, kind=f"rope_{kind}", start=start)
    assert result["layout"] == "half" and result["transposed"] is transposed
    assert result["attention_factor"] == pytest.approx(attention, rel=2e-3), result["verdict"]
    assert result["dtype_guess"] == str(dtype).removeprefix("torch.")
    if key == "gpt-oss-20b":
        assert "one column per pair" in result["verdict"] and cos.shape[1] == result["d"] // 2


def test_llama31_bfloat16_cos_names_what_it_assumed():
    cos, _, _ = rotary_tables(load_config("llama-3.1-8b"), 0, 512, BFLOAT16)
    result = pe_core.identify_encoding(cos)
    scaling = result["scaling"]
    assert scaling["method"] == "llama3" and scaling["low_freq_factor"] == 1.0 and scaling["high_freq_factor"] == 4.0
    assert "low_freq_factor" in scaling["assumed"], result["verdict"]
    assert result["unreadable_pairs"] and result["unreadable_pairs"][-1] == 63


def test_phi3s_long_factors_are_read_divisor_by_divisor():
    """Past 4096 positions Phi-3 switches to long_factor: its table then holds those divisors."""
    config = load_config("phi-3-mini-128k-instruct")
    _, sin, attention = rotary_tables(config, 4000, 200, FLOAT32)
    result = pe_core.identify_encoding(sin)
    assert result["kind"] == "rope_sin" and result["scaling"]["method"] == "longrope", result["verdict"]
    long_factor = config["rope_scaling"]["long_factor"]
    read = result["scaling"]["divisors"]
    known = [i for i, value in enumerate(read) if value is not None]
    assert len(known) > 30
    np.testing.assert_allclose([read[i] for i in known], [long_factor[i] for i in known], rtol=1e-3)
    assert result["attention_factor"] == pytest.approx(attention, rel=1e-5)
    assert "ln s / ln L0 = 0.4167, e.g. factor 32 from 4096 positions" in result["verdict"]


LLAMA2 = load_config("llama-2-7b")


@pytest.mark.parametrize(("rope_scaling", "seq_len", "method", "factor"), [
    ({"type": "linear", "factor": 4.0}, None, "linear", 4.0),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}, None, "yarn", 4.0),
    ({"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 512, "truncate": False,
      "beta_fast": 16.0, "beta_slow": 2.0}, None, "yarn", 8.0),
    ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 1024}, None, "llama3", 8.0),
    # Divisors in runs of two, as LongRoPE's search leaves them (Phi-3's hold runs of equal values).
    ({"rope_type": "longrope", "short_factor": [1.0 + (i // 4) / 64 for i in range(64)],
      "long_factor": [1.0 + (i // 2) / 4 for i in range(64)], "original_max_position_embeddings": 1024}, 5000,
     "longrope", None),
])
def test_every_rope_types_inv_freq_is_read(rope_scaling, seq_len, method, factor):
    config = LLAMA2 | {"rope_scaling": rope_scaling}
    hf = hf_config(config)
    inv_freq, _ = ROPE_INIT_FUNCTIONS[hf.rope_parameters["rope_type"]](hf, None, seq_len=seq_len)
    result = pe_core.identify_encoding(inv_freq.numpy())
    assert (result["kind"], result["n"], result["d"]) == ("rope_inv_freq", 10000.0, 128), result["verdict"]
    assert result["scaling"]["method"] == method and result["scaling"]["factor"] == factor, result["verdict"]
    rope = pe_core.rope_from_config(config)
    if method == "yarn":
        # The ramp's bounds in pairs are what the frequencies fix: the same as pe_core's ramp.
        ramp = pe_core.yarn_ramp(rope.d, rope.base, scaling=rope.scaling)
        first, last = (int(np.flatnonzero(ramp > 0)[0]), int(np.flatnonzero(ramp < 1)[-1]))
        low, high = result["scaling"]["ramp"]
        assert low < first <= low + 1 and high - 1 <= last < high
    if method == "longrope":
        np.testing.assert_allclose(result["scaling"]["divisors"], rope_scaling["long_factor"], rtol=1e-6)


def test_dynamic_ntk_is_read_as_the_base_it_changes_to():
    config = LLAMA2 | {"rope_scaling": {"type": "dynamic", "factor": 2.0}}
    hf = hf_config(config)
    inv_freq, _ = ROPE_INIT_FUNCTIONS["dynamic"](hf, None, seq_len=10000)
    step = 2.0 * 10000 / 4096 - 1.0  # s L / L0 - (s - 1)
    result = pe_core.identify_encoding(inv_freq.numpy())
    assert result["kind"] == "rope_inv_freq" and result["scaling"] is None
    assert result["n"] == pytest.approx(10000.0 * step ** (128 / 126), rel=1e-5)
    offer = next(a for a in result["alternatives"] if a["method"] == "dynamic")
    assert offer["base"] == 10000.0 and offer["step"] == pytest.approx(step, rel=1e-4)


def test_ntk_aware_base_change_is_offered_as_ntk():
    d, base, s = 128, 10000.0, 4.0
    changed = base * s ** (d / (d - 2))
    inv_freq = 1.0 / (changed ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))  # transformers' recipe
    result = pe_core.identify_encoding(inv_freq.numpy())
    assert {"method": "ntk", "factor": 4.0, "base": 10000.0} in result["alternatives"], result["verdict"]


# --------------------------------------------------------------------------------------
# Meta's reference code (llama-models, models/llama3/model.py), re-typed.
# --------------------------------------------------------------------------------------


def apply_scaling(freqs, scale_factor=8, low_freq_factor=1, high_freq_factor=4, old_context_len=8192):
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return torch.tensor(new_freqs, dtype=freqs.dtype, device=freqs.device)


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0, use_scaled: bool = False):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device, dtype=torch.float32)
    if use_scaled:
        freqs = apply_scaling(freqs)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


@pytest.mark.parametrize(("dim", "theta", "scaled", "start"), [
    (128, 500000.0, True, 0), (64, 10000.0, False, 1000), (128, 500000.0, True, 5000),
])
def test_metas_freqs_cis_its_real_view_and_interleaved_cos(dim, theta, scaled, start):
    freqs_cis = precompute_freqs_cis(dim, start + 256, theta, scaled)[start:]
    views = {
        "rope_complex": freqs_cis.numpy(),
        "real view": torch.view_as_real(freqs_cis).numpy(),
        "rope_cos": torch.view_as_real(freqs_cis)[..., 0].repeat_interleave(2, dim=-1).numpy(),
    }
    for name, M in views.items():
        result = pe_core.identify_encoding(M)
        kind = "rope_cos" if name == "rope_cos" else "rope_complex"
        assert (result["kind"], result["n"], result["start"], result["d"]) == (kind, theta, start, dim), name
        assert result["layout"] == "interleaved", name  # Meta pairs adjacent coordinates, complex or not
        if scaled:
            scaling = result["scaling"]
            assert (scaling["method"], scaling["factor"], scaling["original_length"]) == ("llama3", 8.0, 8192), name
        else:
            assert result["scaling"] is None


def test_gptjs_table_is_the_sinusoid_it_is():
    """GPT-J's embed_positions is cat(sin, cos) of the rotary frequencies: the concatenated sinusoid."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    result = pe_core.identify_encoding(create_sinusoidal_positions(256, 64).double().numpy())
    assert (result["kind"], result["layout"], result["convention"], result["n"]) == (
        "sinusoidal", "concatenated", "paper", 10000.0)


@pytest.mark.parametrize(("num_pos", "rotary_dim"), [(2048, 64), (2048, 32), (512, 96)])
def test_gptj_s_rotary_buffer_is_named_as_such(num_pos: int, rotary_dim: int) -> None:
    """Issue 39: GPT-J's embed_positions, from transformers' own create_sinusoidal_positions, was called
    "a sinusoidal positional encoding, not what a rotary model holds"; it is both, and said so. A table
    that is not one (started past 0, or interleaved) is not named so."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    buffer = create_sinusoidal_positions(num_pos, rotary_dim).numpy()
    result = pe_core.identify_encoding(buffer)
    assert (result["kind"], result["layout"], result["convention"], result["n"], result["start"]) == (
        "sinusoidal", "concatenated", "paper", 10000.0, 0)
    assert result["rotary_buffer"] and "GPT-J" in result["rotary_buffer"]
    assert f"interleaved pairs (rotate_every_two) of its first rotary_dim = {rotary_dim} coordinates" in (
        result["verdict"])
    assert pe_core.identify_encoding(buffer[5:])["rotary_buffer"] is None
    interleaved = pe_core.positional_encoding(num_pos, rotary_dim, layout="interleaved")
    assert pe_core.identify_encoding(interleaved)["rotary_buffer"] is None


@pytest.mark.parametrize(("seq_len", "factors"), [(None, "short_factor"), (8192, "long_factor")])
def test_phi3s_own_inv_freq_is_read_as_longrope(seq_len, factors) -> None:
    """Issue 39: a Phi-3 inv_freq (its short factors, as transformers' longrope init returns it up to
    4096 tokens) was "not recognised" while the cos table of the same model was read as longrope."""
    config = load_config("phi-3-mini-128k-instruct")
    hf = hf_config(config)
    inv_freq, _ = ROPE_INIT_FUNCTIONS["longrope"](hf, None, seq_len=seq_len)
    result = pe_core.identify_encoding(inv_freq.numpy())
    assert (result["kind"], result["n"], result["d"]) == ("rope_inv_freq", 10000.0, 96), result["verdict"]
    assert result["scaling"]["method"] == "longrope", result["verdict"]
    np.testing.assert_allclose(result["scaling"]["divisors"], config["rope_scaling"][factors], rtol=1e-5)

