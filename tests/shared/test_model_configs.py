"""The model presets: every file is listed and read, and reads as the public configs say.

The table below is what each model's public config.json (and its model card, for Qwen2.5's
YaRN dict) gives, looked up independently of the JSON files; tests/core/test_rope_transformers.py
builds every file into transformers' own configuration and rotary embedding.
"""

from __future__ import annotations

import json

import pytest

import pe_core
from explorer import model_configs
from explorer.model_configs import MODEL_CONFIGS, MROPE_MODELS, load_config, model_config

#: key: (d, base, method, factor, original length, max_position_embeddings)
PUBLIC = {
    "llama-2-7b": (128, 10000.0, None, None, None, 4096),
    "llama-3-8b": (128, 500000.0, None, None, None, 8192),
    "llama-3.1-8b": (128, 500000.0, "llama3", 8.0, 8192, 131072),
    "llama-3.2-1b": (64, 500000.0, "llama3", 32.0, 8192, 131072),
    "qwen2.5-7b-instruct": (128, 1e6, None, None, None, 32768),
    "qwen2.5-7b-instruct-yarn": (128, 1e6, "yarn", 4.0, 32768, 32768),
    "mistral-7b-v0.1": (128, 10000.0, None, None, None, 32768),
    "gpt-neox-20b": (24, 10000.0, None, None, None, 2048),
    "gpt-j-6b": (64, 10000.0, None, None, None, 2048),
    "deepseek-v3": (64, 10000.0, "yarn", 40.0, 4096, 163840),
    "gpt-oss-20b": (64, 150000.0, "yarn", 32.0, 4096, 131072),
    "gemma-3-4b-it": (256, 1e6, "linear", 8.0, None, 131072),
    "phi-3-mini-128k-instruct": (96, 10000.0, "longrope", 32.0, 4096, 131072),
    "codellama-7b": (128, 1e6, None, None, None, 16384),
    "llama-4-scout-17b-16e-instruct": (128, 500000.0, "llama3", 16.0, 8192, 10485760),
    "qwen3.5-27b": (64, 1e7, None, None, None, 262144),
    "command-a-03-2025": (128, 50000.0, None, None, None, 131072),
    "qwen3-8b": (128, 1e6, None, None, None, 40960),
    # the global layers' RoPE: a quarter of a 512-wide head, the exponent over all 512
    "gemma-4-e2b-it": (512, 1e6, "proportional", 1.0, None, 131072),
    "phi-4-mini-instruct": (96, 10000.0, "longrope", 32.0, 4096, 131072),
}


def test_every_file_is_a_preset_and_every_preset_a_file() -> None:
    """A file is a rotary pages' preset or an M-RoPE one (tests/shared/test_mrope_presets.py checks those)."""
    files = {path.stem for path in model_configs.CONFIG_FOLDER.glob("*.json")}
    models = [*MODEL_CONFIGS, *MROPE_MODELS]
    keys = [model.key for model in models]
    assert len(keys) == len(set(keys)) and set(keys) == files
    assert {model.key for model in MODEL_CONFIGS} == set(PUBLIC)
    assert len({model.name for model in models}) == len(models)
    assert all(model_config(model.key) is model for model in models)


@pytest.mark.parametrize("model", MODEL_CONFIGS, ids=lambda model: model.key)
def test_preset_reads_as_its_public_config(model: model_configs.ModelConfig) -> None:
    rope = pe_core.rope_from_config(load_config(model.key))
    d, base, method, factor, original, max_length = PUBLIC[model.key]
    assert (rope.d, rope.base, rope.max_length) == (d, base, max_length)
    if method is None:
        assert rope.scaling is None
    else:
        assert (rope.scaling.method, rope.scaling.factor, rope.scaling.original_length) == (method, factor, original)
    assert model.layout in pe_core.ROPE_LAYOUTS
    assert model.url.startswith("https://huggingface.co/" + model.repo)


def test_the_special_cases_are_kept() -> None:
    gptoss = pe_core.rope_from_config(load_config("gpt-oss-20b")).scaling
    assert gptoss.truncate is False and (gptoss.beta_fast, gptoss.beta_slow) == (32.0, 1.0)
    deepseek = pe_core.rope_from_config(load_config("deepseek-v3")).scaling
    assert (deepseek.mscale, deepseek.mscale_all_dim) == (1.0, 1.0)
    assert pe_core.rope_attention_factor(deepseek) == 1.0
    phi3 = pe_core.rope_from_config(load_config("phi-3-mini-128k-instruct")).scaling
    assert len(phi3.short_factor) == len(phi3.long_factor) == 48
    assert (phi3.short_factor[0], phi3.long_factor[-1]) == (1.1, 64.76000213623047)
    assert pe_core.rope_attention_factor(phi3) == pytest.approx(1.1902380714238083, rel=1e-15)
    assert [model_config(key).layout for key in ("gpt-j-6b", "deepseek-v3", "llama-3.1-8b")] == [
        "interleaved", "interleaved", "half"]


def test_load_config_gives_a_fresh_dict() -> None:
    first = load_config("llama-3.1-8b")
    first["rope_theta"] = 1.0
    assert load_config("llama-3.1-8b")["rope_theta"] == 500000.0
    assert json.loads(model_config("llama-3.1-8b").path.read_text()) == load_config("llama-3.1-8b")


def test_unknown_key() -> None:
    with pytest.raises(ValueError, match="No model preset 'llama-9'; the presets are llama-2-7b, "):
        model_config("llama-9")
