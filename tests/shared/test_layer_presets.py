"""The layer page's presets (explorer.model_configs.LAYER_PRESETS) against transformers 5.18 itself.

Each preset's file is read by ``pe_core.model_layers`` and built into the model's own transformers
configuration (``AutoConfig.for_model``, a multimodal one through its ``text_config``), then into
what transformers runs from it:

- its decoder layers, built on the meta device (no weights are allocated), say per layer whether
  q and k are rotated (Llama 4's ``use_rope``, Command A's global layers that skip RoPE, Qwen3.5's
  linear-attention layers that have no ``self_attn``), the window (the attention module's
  ``sliding_window``; Phi-3 passes ``config.sliding_window`` to every layer), Llama 4's chunk
  (``attention_chunk_size`` on its chunked layers) and query scale (temperature tuning on the
  layers without RoPE);
- its rotary embedding class, instantiated from the full config, gives each layer type's
  ``inv_freq`` and attention scaling (Gemma 3 and 4: one of each per layer type).

The layer counts are the models' own, looked up independently of the files.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from support.needs_torch import import_or_skip
from support.transformers_layers import layer_rows

import pe_core
from explorer import model_configs
from explorer.model_configs import LAYER_PRESETS, load_config, model_config

torch = import_or_skip("torch")
transformers = import_or_skip("transformers")

transformers.logging.set_verbosity_error()

#: Decoder layers of each model, as its model card and config.json give them.
LAYER_COUNTS = {
    "gemma-3-4b-it": 34,
    "gemma-4-e2b-it": 35,
    "gpt-oss-20b": 24,
    "llama-4-scout-17b-16e-instruct": 48,
    "qwen3.5-27b": 64,
    "deepseek-v3": 61,
    "command-a-03-2025": 64,
    "llama-3.1-8b": 32,
    "qwen3-8b": 36,
    "phi-4-mini-instruct": 32,
}
#: Each language model type's decoder layer and rotary embedding classes in transformers 5.18.
CLASSES = {
    "gemma3_text": ("gemma3", "Gemma3DecoderLayer", "Gemma3RotaryEmbedding"),
    "gemma4_text": ("gemma4", "Gemma4TextDecoderLayer", "Gemma4TextRotaryEmbedding"),
    "gpt_oss": ("gpt_oss", "GptOssDecoderLayer", "GptOssRotaryEmbedding"),
    "llama4_text": ("llama4", "Llama4TextDecoderLayer", "Llama4TextRotaryEmbedding"),
    "qwen3_5_text": ("qwen3_5", "Qwen3_5DecoderLayer", "Qwen3_5TextRotaryEmbedding"),
    "deepseek_v3": ("deepseek_v3", "DeepseekV3DecoderLayer", "DeepseekV3RotaryEmbedding"),
    "cohere2": ("cohere2", "Cohere2DecoderLayer", "Cohere2RotaryEmbedding"),
    "llama": ("llama", "LlamaDecoderLayer", "LlamaRotaryEmbedding"),
    "qwen3": ("qwen3", "Qwen3DecoderLayer", "Qwen3RotaryEmbedding"),
    "phi3": ("phi3", "Phi3DecoderLayer", "Phi3RotaryEmbedding"),
}


def transformers_config(config: dict):
    """The language model's transformers configuration, built from the file's keys as from_pretrained would."""
    keys = dict(config)
    built = transformers.AutoConfig.for_model(keys.pop("model_type"), **keys)
    return built.get_text_config()


def model_classes(text_config) -> tuple[type, type]:
    module_name, layer_class, rotary_class = CLASSES[text_config.model_type]
    module = importlib.import_module(f"transformers.models.{module_name}.modeling_{module_name}")
    return getattr(module, layer_class), getattr(module, rotary_class)


def what_transformers_runs(text_config) -> list[tuple]:
    """Each decoder layer as the model's code runs it, its layers built on the meta device (no weights)."""
    layer_class, rotary_class = model_classes(text_config)
    with torch.device("meta"):
        layers = [layer_class(text_config, index) for index in range(text_config.num_hidden_layers)]
    return layer_rows(text_config.model_type, text_config, layers, rotary_class(text_config))


def test_the_layer_presets_are_the_issues_ten_in_its_order() -> None:
    assert tuple(LAYER_COUNTS) == LAYER_PRESETS
    assert [model_config(key).name for key in LAYER_PRESETS] == [
        "Gemma 3 4B", "Gemma 4 E2B", "gpt-oss-20b", "Llama 4 Scout (17B, 16 experts) Instruct", "Qwen3.5 27B",
        "DeepSeek-V3", "Command A", "Llama 3.1 8B", "Qwen3 8B", "Phi-4-mini Instruct"]


@pytest.mark.parametrize("key", LAYER_PRESETS)
def test_each_file_names_its_sources(key: str) -> None:
    model = model_config(key)
    assert model.url.startswith("https://huggingface.co/" + model.repo)
    assert model.sources and all(isinstance(source, str) and len(source) > 20 for source in model.sources)
    assert model.note


@pytest.mark.parametrize("key", LAYER_PRESETS)
def test_each_preset_has_the_models_layer_count(key: str) -> None:
    config = load_config(key)
    assert len(pe_core.model_layers(config)) == LAYER_COUNTS[key]
    assert transformers_config(config).num_hidden_layers == LAYER_COUNTS[key]


@pytest.mark.parametrize("key", LAYER_PRESETS)
def test_every_layer_is_read_as_transformers_runs_it(key: str) -> None:
    config = load_config(key)
    expected = what_transformers_runs(transformers_config(config))
    layers = pe_core.model_layers(config)
    assert len(layers) == len(expected)
    for layer, (kind, rotary, window, chunk, scale, inv_freq, factor) in zip(layers, expected, strict=True):
        assert (layer.layer_type, layer.rotary, layer.window, layer.chunk, layer.query_scale) == (
            kind, rotary, window, chunk, scale), (key, layer.index)
        if rotary:
            np.testing.assert_allclose(layer.inv_freq, inv_freq, rtol=5e-7, atol=0)  # float32: a few ulp
            assert layer.attention_factor == pytest.approx(factor, rel=1e-7)
        else:
            assert layer.inv_freq is None and layer.attention_factor == 1.0


#: What the layer page shows of each preset, from the models' descriptions (not read from the files):
#: the indices of the layers that see every key before them, the window of the others (Phi-4-mini:
#: of every layer), Llama 4's chunk, and how many layers rotate.
SHAPES = {
    "gemma-3-4b-it": (tuple(range(5, 34, 6)), 1024, None, 34),
    "gemma-4-e2b-it": (tuple(range(4, 35, 5)), 512, None, 35),
    "gpt-oss-20b": (tuple(range(1, 24, 2)), 128, None, 24),
    "llama-4-scout-17b-16e-instruct": (tuple(range(3, 48, 4)), None, 8192, 36),
    "qwen3.5-27b": (tuple(range(64)), None, None, 16),
    "deepseek-v3": (tuple(range(61)), None, None, 61),
    "command-a-03-2025": (tuple(range(3, 64, 4)), 4096, None, 48),
    "llama-3.1-8b": (tuple(range(32)), None, None, 32),
    "qwen3-8b": (tuple(range(36)), None, None, 36),
    "phi-4-mini-instruct": ((), 262144, None, 32),
}


@pytest.mark.parametrize("key", LAYER_PRESETS)
def test_each_preset_has_its_models_shape(key: str) -> None:
    global_layers, window, chunk, rotating = SHAPES[key]
    layers = pe_core.model_layers(load_config(key))
    assert tuple(layer.index for layer in layers if layer.window is None and layer.chunk is None) == global_layers
    assert {layer.window for layer in layers if layer.index not in global_layers} <= {window}
    assert {layer.chunk for layer in layers if layer.index not in global_layers} <= {chunk}
    assert sum(layer.rotary for layer in layers) == rotating


def test_llama4s_published_temperature_tuning_is_refused_and_true_reads_the_same() -> None:
    """The file Meta published has attn_temperature_tuning 4; transformers 5.18 takes only a bool, and
    pe_core reads 4 and true alike (on), so the preset's true changes nothing the page shows."""
    preset = load_config("llama-4-scout-17b-16e-instruct")
    assert preset["text_config"]["attn_temperature_tuning"] is True
    published = {**preset, "text_config": {**preset["text_config"], "attn_temperature_tuning": 4}}
    with pytest.raises(Exception, match="attn_temperature_tuning"):
        transformers_config(published)
    for ours, theirs in zip(pe_core.model_layers(published), pe_core.model_layers(preset), strict=True):
        assert (ours.rotary, ours.window, ours.chunk, ours.query_scale) == (
            theirs.rotary, theirs.window, theirs.chunk, theirs.query_scale)
        assert np.array_equal(ours.inv_freq, theirs.inv_freq) if ours.rotary else theirs.inv_freq is None
    assert sum(layer.query_scale for layer in pe_core.model_layers(published)) == 12


def test_every_layer_preset_is_a_preset_of_the_rotary_pages_too() -> None:
    assert set(LAYER_PRESETS) <= {model.key for model in model_configs.MODEL_CONFIGS}


def test_gemma4s_two_ropes_are_its_published_ones() -> None:
    """Gemma 4 is not among the rotary pages' presets (test_model_configs checks theirs): its sliding layers
    rotate 256-wide heads at base 10000, its global layers the first quarter of 512-wide heads at base
    1000000 with exponents over the whole 512."""
    config = load_config("gemma-4-e2b-it")
    sliding, sliding_factor = pe_core.rope_init(config, layer_type="sliding_attention")
    full, full_factor = pe_core.rope_init(config, layer_type="full_attention")
    np.testing.assert_allclose(sliding, 1e4 ** (-np.arange(0, 256, 2) / 256), rtol=5e-7)
    np.testing.assert_allclose(full[:64], 1e6 ** (-np.arange(0, 128, 2) / 512), rtol=5e-7)
    assert len(full) == 256 and not full[64:].any() and sliding_factor == full_factor == 1.0
