"""pe_core.model_layers and rope_init against transformers 5.18's own models: for a tiny config shaped like
each family's (Llama 3.1, Qwen3 with sliding windows, Phi-4-mini's partial LongRoPE, Gemma 3 in transformers 4's
spelling, Gemma 4's proportional global layers, gpt-oss, Llama 4's NoPE and chunked layers, Qwen3.5's linear
attention, DeepSeek-V3's MLA, Command A), the model is built and each of its layers read: whether it turns q
and k, its window, its chunk, whether Llama 4's query scale applies, and its rotary embedding's inv_freq and
attention scaling for its layer type (docs/transformers-5.18-layers.md says where each comes from)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.needs_torch import import_or_skip
from support.transformers_layers import layer_rows

import pe_core
from pe_core.rope.layers import layer_head_dim, layer_rope_config

transformers = import_or_skip("transformers")
import_or_skip("torch")

TINY = dict(
    vocab_size=64,
    hidden_size=64,
    intermediate_size=32,
    num_attention_heads=4,
    num_key_value_heads=2,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)
CASES = {
    "llama": (
        transformers.LlamaConfig,
        transformers.LlamaForCausalLM,
        dict(
            num_hidden_layers=2,
            rope_theta=500000.0,
            max_position_embeddings=131072,
            rope_scaling={
                "factor": 8.0,
                "high_freq_factor": 4.0,
                "low_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        ),
    ),
    "qwen3": (
        transformers.Qwen3Config,
        transformers.Qwen3ForCausalLM,
        dict(
            num_hidden_layers=4,
            head_dim=32,
            rope_theta=1e6,
            use_sliding_window=True,
            sliding_window=16,
            max_window_layers=2,
        ),
    ),
    "phi3": (
        transformers.Phi3Config,
        transformers.Phi3ForCausalLM,
        dict(
            num_attention_heads=2,
            num_key_value_heads=1,
            num_hidden_layers=2,
            max_position_embeddings=131072,
            original_max_position_embeddings=4096,
            partial_rotary_factor=0.75,
            rope_theta=10000.0,
            rope_scaling={
                "type": "longrope",
                "short_factor": [1.0] * 12,
                "long_factor": [float(i + 1) for i in range(12)],
            },
            sliding_window=262144,
        ),
    ),
    "gemma3_text": (
        transformers.Gemma3TextConfig,
        transformers.Gemma3ForCausalLM,
        dict(
            num_hidden_layers=6,
            head_dim=32,
            query_pre_attn_scalar=32,
            rope_theta=1e6,
            rope_local_base_freq=1e4,
            rope_scaling={"factor": 8.0, "rope_type": "linear"},
            sliding_window=8,
            sliding_window_pattern=6,
        ),
    ),
    "gemma4_text": (
        transformers.Gemma4TextConfig,
        transformers.Gemma4ForCausalLM,
        dict(
            num_hidden_layers=6,
            head_dim=16,
            global_head_dim=32,
            vocab_size_per_layer_input=64,
            hidden_size_per_layer_input=8,
            sliding_window=8,
        ),
    ),
    "gpt_oss": (
        transformers.GptOssConfig,
        transformers.GptOssForCausalLM,
        dict(
            num_hidden_layers=4,
            head_dim=16,
            num_local_experts=2,
            num_experts_per_tok=1,
            sliding_window=8,
            rope_theta=150000,
            rope_scaling={
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "factor": 32.0,
                "original_max_position_embeddings": 4096,
                "rope_type": "yarn",
                "truncate": False,
            },
        ),
    ),
    "llama4_text": (
        transformers.Llama4TextConfig,
        transformers.Llama4ForCausalLM,
        dict(
            intermediate_size_mlp=32,
            num_hidden_layers=4,
            head_dim=16,
            num_local_experts=2,
            attention_chunk_size=8,
            rope_theta=500000.0,
            max_position_embeddings=10485760,
            rope_scaling={
                "factor": 16.0,
                "high_freq_factor": 1.0,
                "low_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        ),
    ),
    "qwen3_5_text": (
        transformers.Qwen3_5TextConfig,
        transformers.Qwen3_5ForCausalLM,
        dict(
            num_hidden_layers=4,
            head_dim=32,
            linear_key_head_dim=16,
            linear_value_head_dim=16,
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 1e7,
                "partial_rotary_factor": 0.25,
                "mrope_section": [2, 1, 1],
                "mrope_interleaved": True,
            },
        ),
    ),
    "deepseek_v3": (
        transformers.DeepseekV3Config,
        transformers.DeepseekV3ForCausalLM,
        dict(
            num_key_value_heads=4,
            num_hidden_layers=2,
            moe_intermediate_size=16,
            n_routed_experts=4,
            n_group=2,
            topk_group=1,
            num_experts_per_tok=2,
            first_k_dense_replace=1,
            kv_lora_rank=16,
            q_lora_rank=32,
            qk_rope_head_dim=8,
            qk_nope_head_dim=16,
            v_head_dim=16,
            max_position_embeddings=163840,
            rope_theta=10000,
            rope_scaling={
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
        ),
    ),
    "cohere2": (
        transformers.Cohere2Config,
        transformers.Cohere2ForCausalLM,
        dict(num_hidden_layers=4, rope_theta=50000, sliding_window=8, sliding_window_pattern=4),
    ),
}


def what_the_model_does(name: str, model) -> list[tuple]:
    """Each layer of a transformers model as it runs: (type, rotary, window, chunk, query scale, inv_freq, factor)."""
    return layer_rows(name, model.config, model.model.layers, model.model.rotary_emb)


@pytest.mark.parametrize("name", list(CASES))
def test_every_layer_is_read_as_the_model_runs_it(name: str) -> None:
    config_class, model_class, values = CASES[name]
    config = {**TINY, **values}
    expected = what_the_model_does(name, model_class(config_class(**config)))
    layers = pe_core.model_layers({"model_type": name, **config})
    assert len(layers) == len(expected)
    for layer, (kind, rotary, window, chunk, scale, inv_freq, factor) in zip(layers, expected, strict=True):
        assert (layer.layer_type, layer.rotary, layer.window, layer.chunk, layer.query_scale) == (
            kind,
            rotary,
            window,
            chunk,
            scale,
        ), (name, layer.index)
        if rotary:
            np.testing.assert_allclose(layer.inv_freq, inv_freq, rtol=5e-7, atol=0)  # float32: a few ulp
            assert layer.attention_factor == pytest.approx(factor, rel=1e-7)
        else:
            assert layer.inv_freq is None


@pytest.mark.parametrize("name", list(CASES))
def test_a_layer_types_rope_config_and_head_size_are_what_its_layers_run(name: str) -> None:
    """layer_rope_config gives the d, base and scaling whose frequencies are the layer's inv_freq, and
    layer_head_dim the head size of the model's own attention (DeepSeek: the part of it that rotates)."""
    config_class, model_class, values = CASES[name]
    config = {**TINY, **values}
    model = model_class(config_class(**config))
    ours = {"model_type": name, **config}
    for layer, module in zip(pe_core.model_layers(ours), model.model.layers, strict=True):
        attention = getattr(module, "self_attn", None)
        if attention is not None:
            expected = attention.qk_rope_head_dim if name == "deepseek_v3" else attention.head_dim
            assert layer_head_dim(ours, layer.layer_type) == expected, (name, layer.index)
        if layer.rotary:
            rope = layer_rope_config(ours, layer.layer_type)
            theta = pe_core.rope_frequencies(rope.d, rope.base, scaling=rope.scaling).astype(np.float32)
            np.testing.assert_array_equal(theta, layer.inv_freq)


def proportional(base: float, head_dim: int, fraction: float, factor: float = 1.0) -> np.ndarray:
    """Gemma 4's global layers, written out: the first int(p D / 2) pairs at base^(-2i/D) / s, zeros after."""
    rotated = int(fraction * head_dim // 2)
    return np.array([base ** (-2 * i / head_dim) / factor if i < rotated else 0.0 for i in range(head_dim // 2)])


@given(
    st.sampled_from([64, 256, 512]), st.sampled_from([0.125, 0.25, 0.5, 1.0]), st.floats(1e3, 1e7), st.floats(1.0, 16.0)
)
def test_a_proportional_head_rotates_its_first_pairs_and_leaves_the_rest(
    head_dim: int, fraction: float, base: float, factor: float
) -> None:
    config = {
        "model_type": "gemma4_text",
        "num_hidden_layers": 2,
        "layer_types": ["sliding_attention", "full_attention"],
        "head_dim": 16,
        "global_head_dim": head_dim,
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {
                "rope_type": "proportional",
                "partial_rotary_factor": fraction,
                "rope_theta": base,
                "factor": factor,
            },
        },
    }
    inv_freq, attention_factor = pe_core.rope_init(config, layer_type="full_attention")
    np.testing.assert_allclose(inv_freq, proportional(base, head_dim, fraction, factor), rtol=1e-7)
    assert np.all(inv_freq[int(fraction * head_dim // 2) :] == 0) and attention_factor == 1.0


@given(st.sampled_from([0.25, 0.5, 0.75]), st.sampled_from([64, 128, 256]), st.floats(1e3, 1e7))
def test_partial_rotary_is_the_first_pairs_of_a_smaller_head(fraction: float, head_dim: int, base: float) -> None:
    """Phi-3 and Qwen3.5 rotate int(head_dim p) coordinates: plain RoPE of that size, re-based on it."""
    config = {
        "model_type": "qwen3_5_text",
        "num_hidden_layers": 4,
        "head_dim": head_dim,
        "rope_parameters": {"rope_type": "default", "rope_theta": base, "partial_rotary_factor": fraction},
    }
    inv_freq, _ = pe_core.rope_init(config)
    d = int(head_dim * fraction)
    np.testing.assert_allclose(inv_freq, pe_core.rope_frequencies(d, base), rtol=1e-7)


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (
            {"model_type": "gpt_oss", "num_hidden_layers": 3, "layer_types": ["full_attention"] * 2},
            "one type per layer",
        ),
        ({"model_type": "llama", "num_hidden_layers": 2, "layer_types": ["full_attention", "windowed"]}, "'windowed'"),
        (
            {
                "model_type": "gemma3_text",
                "num_hidden_layers": 2,
                "layer_types": ["sliding_attention", "full_attention"],
                "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6}},
            },
            "none for 'sliding_attention'",
        ),
        ({"model_type": "gpt_oss", "num_hidden_layers": 2, "sliding_window": 0}, "sliding_window"),
        (
            {"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "rope_scaling": {"rope_type": "spiral"}},
            "rope_type 'spiral'",
        ),
        ({"model_type": "llama", "num_hidden_layers": 10**9, "head_dim": 64}, "num_hidden_layers"),
        ({"model_type": "llama", "num_hidden_layers": "12", "head_dim": 64}, "num_hidden_layers"),
        ({"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": float("nan")}, "rope_theta"),
        (
            {"model_type": "llama4_text", "num_hidden_layers": 2, "head_dim": 64, "no_rope_layers": [1, 2]},
            "no_rope_layers",
        ),
        ({"model_type": "llama", "head_dim": 64}, "num_hidden_layers"),
    ],
)
def test_a_malformed_config_gets_a_message(config: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pe_core.model_layers(config)


def test_a_layer_type_the_model_does_not_have_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of this model's"):
        pe_core.rope_init(
            {"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64}, layer_type="sliding_attention"
        )
