"""The rotary pages' model presets and scaling controls (explorer.rope_presets).

What a preset sets is checked against the JSON data files, read here with json and the
formulas of each model's config class (head size times the rotary fraction, the base key each
family uses), not through pe_core.rope_from_config; the layouts against the models' code as
explorer/model_configs.py records it (GPT-J's rotate_every_two, everything else in
transformers' rotate_half).
"""

from __future__ import annotations

import json
import math

import pytest

import pe_core
from explorer import model_configs, rope_methods, rope_presets
from explorer.rope_methods import PARAMETERS
from explorer.rope_presets import CUSTOM, preset_values, rope_preset, scaling_from_choice
from explorer.settings import N_OPTIONS

#: The brief's models: key -> (rotary d, base, layout, scaling method or None)
REQUIRED = {
    "llama-2-7b": (128, 10000.0, "half", None),
    "llama-3-8b": (128, 500000.0, "half", None),
    "llama-3.1-8b": (128, 500000.0, "half", "llama3"),
    "qwen2.5-7b-instruct": (128, 1e6, "half", None),
    "qwen2.5-7b-instruct-yarn": (128, 1e6, "half", "yarn"),
    "mistral-7b-v0.1": (128, 10000.0, "half", None),
    "gpt-neox-20b": (24, 10000.0, "half", None),
    "gpt-j-6b": (64, 10000.0, "interleaved", None),
}


def from_file(key: str) -> tuple[int, float, dict | None]:
    """d, base and the scaling dict of a model's JSON file, read directly."""
    config = json.loads(model_configs.model_config(key).path.read_text())
    config = config.get("text_config", config)
    rope = config.get("rope_parameters") or {}  # transformers 5's spelling (Qwen3.5): base and fraction inside
    if rope and all(isinstance(value, dict) for value in rope.values()):
        # One dict per layer type (Gemma 4): the rotary pages show the global layers', whose proportional RoPE
        # is computed over the whole global_head_dim (512 when the file leaves it out).
        rope = rope["full_attention"]
        return config.get("global_head_dim", 512), float(rope["rope_theta"]), dict(rope)
    if "rotary_dim" in config:  # GPT-J
        d = config["rotary_dim"]
    elif "qk_rope_head_dim" in config:  # DeepSeek's MLA
        d = config["qk_rope_head_dim"]
    else:
        head = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        d = int(head * config.get("rotary_pct", config.get("partial_rotary_factor",
                                                            rope.get("partial_rotary_factor", 1.0))))
    base = float(config.get("rope_theta", rope.get("rope_theta", config.get("rotary_emb_base", 10000.0))))
    return d, base, config.get("rope_scaling")


@pytest.mark.parametrize("key", list(REQUIRED))
def test_the_required_presets_set_what_their_files_say(key: str) -> None:
    d, base, layout, method = REQUIRED[key]
    file_d, file_base, file_scaling = from_file(key)
    assert (file_d, file_base) == (d, base)
    assert (file_scaling or {}).get("rope_type", (file_scaling or {}).get("type")) == method
    values = preset_values(key)
    assert (values["d"], values["n"], values["rope_layout"]) == (d, base, layout)
    assert values["scaling"] == ("none" if method is None else "model")


@pytest.mark.parametrize("model", model_configs.MODEL_CONFIGS, ids=lambda model: model.key)
def test_every_preset_lands_on_the_sliders_and_keeps_its_scaling(model: model_configs.ModelConfig) -> None:
    preset = rope_preset(model.key)
    file_d, file_base, file_scaling = from_file(model.key)
    assert (preset.d, preset.base, preset.layout) == (file_d, file_base, model.layout)
    values = preset_values(model.key)
    assert values["n"] == preset.base and preset.base in N_OPTIONS, "the base is a stop of the n slider"
    assert 2 <= values["d"] <= 2048 and values["d"] % 2 == 0
    if file_scaling is None:
        assert preset.scaling is None and values["scaling"] == "none"
        return
    assert values["scaling"] == "model"
    # Each parameter the method's controls show starts at the file's value (every one is a stop).
    given = {"factor": file_scaling.get("factor"), "original": file_scaling.get("original_max_position_embeddings"),
             "low_freq": file_scaling.get("low_freq_factor"), "high_freq": file_scaling.get("high_freq_factor"),
             "beta_fast": file_scaling.get("beta_fast"), "beta_slow": file_scaling.get("beta_slow"),
             "partial": file_scaling.get("partial_rotary_factor")}
    for name in rope_presets.choice_parameters(preset.scaling.method):
        if given[name] is not None:
            assert values[name] == float(given[name]) and values[name] in PARAMETERS[name].stops, name
    chosen, notices = scaling_from_choice("model", d=preset.d, model=model.key)
    assert chosen == preset.scaling and not notices


def test_the_models_own_scaling_is_the_config_exactly() -> None:
    """gpt-oss's untruncated ramp and DeepSeek's mscales come with "model", not with the method's controls."""
    oss, _ = scaling_from_choice("model", d=64, model="gpt-oss-20b")
    assert (oss.method, oss.factor, oss.original_length, oss.truncate) == ("yarn", 32.0, 4096, False)
    deepseek, _ = scaling_from_choice("model", d=64, model="deepseek-v3")
    assert (deepseek.mscale, deepseek.mscale_all_dim) == (1.0, 1.0)
    assert pe_core.rope_attention_factor(deepseek) == 1.0
    yarn, _ = scaling_from_choice("yarn", d=64, factor=40.0, original=4096.0)
    assert pe_core.rope_attention_factor(yarn) == pytest.approx(0.1 * math.log(40) + 1)


@pytest.mark.parametrize(("method", "options", "expected"), [
    ("linear", {"factor": 4.0}, pe_core.RopeScaling("linear", 4.0)),
    ("ntk", {"factor": 2.0}, pe_core.RopeScaling("ntk", 2.0)),
    ("dynamic", {"factor": 2.0, "original": 2048.0}, pe_core.RopeScaling("dynamic", 2.0, 2048)),
    ("yarn", {"factor": 16.0, "original": 4096.0, "beta_fast": 64.0, "beta_slow": 2.0},
     pe_core.RopeScaling("yarn", 16.0, 4096, beta_fast=64.0, beta_slow=2.0)),
    ("llama3", {"factor": 8.0, "original": 8192.0, "low_freq": 1.0, "high_freq": 4.0},
     pe_core.RopeScaling("llama3", 8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0)),
    ("longrope", {"factor": 4.0, "original": 64.0},
     pe_core.RopeScaling("longrope", 4.0, 64, short_factor=(1.0,) * 4, long_factor=(4.0,) * 4)),
])
def test_each_method_with_its_main_parameters(method: str, options: dict, expected: pe_core.RopeScaling) -> None:
    scaling, notices = scaling_from_choice(method, d=8, **options)
    assert scaling == expected and not notices


@pytest.mark.parametrize(("method", "options", "expected", "words"), [
    ("llama3", {"low_freq": 4.0, "high_freq": 2.0}, pe_core.RopeScaling("llama3", 8.0, 4096), "high_freq_factor"),
    ("yarn", {"beta_fast": 1.0, "beta_slow": 1.0}, pe_core.RopeScaling("yarn", 8.0, 4096), "beta_fast"),
    ("ntk", {}, None, "d >= 4"),
    ("model", {}, None, "needs a model preset"),
])
def test_what_cannot_be_used_falls_back_with_a_notice(method: str, options: dict, expected, words: str) -> None:
    scaling, notices = scaling_from_choice(method, d=2, **options)
    assert scaling == expected
    assert len(notices) == 1 and words in notices[0] and "\n" not in notices[0]


def test_phi3s_lists_need_its_d() -> None:
    scaling, notices = scaling_from_choice("model", d=64, model="phi-3-mini-128k-instruct")
    assert scaling is None and "48 numbers each" in notices[0]


def test_a_preset_says_what_the_view_changed_of_it() -> None:
    preset = rope_preset("llama-3.1-8b")
    assert rope_presets.differences(preset, d=128, base=500000.0, layout="half", method="model") == ""
    changed = rope_presets.differences(preset, d=64, base=10000.0, layout="interleaved", method="none")
    assert all(word in changed for word in ("d = 64", "b = 10000", "interleaved", "scaling none"))


def test_descriptions_name_the_parameters() -> None:
    assert rope_methods.describe(None, 8) == "no scaling"
    assert "8,192" in rope_methods.describe(rope_preset("llama-3.1-8b").scaling, 128)
    assert "not rounded" in rope_methods.describe(rope_preset("gpt-oss-20b").scaling, 64)
    assert "48 each" in rope_methods.describe(rope_preset("phi-3-mini-128k-instruct").scaling, 96)
    assert "a² = " in rope_methods.attention_note(rope_preset("phi-3-mini-128k-instruct").scaling, 100)
    assert rope_presets.preset_label(CUSTOM) == "Custom"
