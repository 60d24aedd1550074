"""pe_core's rotary and attention-bias functions against transformers 5.18 and PyTorch themselves.

Every preset of explorer/model_configs is built into its model's own transformers configuration
class and rotary embedding: ``rope_from_config`` + ``rope_frequencies`` + ``rope_attention_factor``
must give its ``inv_freq`` and ``attention_scaling``, and ``rope_cache`` its cos and sin, with
transformers' float32 rounding as the only difference. Without torch or transformers this module
skips, except under PE_REQUIRE_TORCH=1 (tests/needs_torch.py).

Tolerances. transformers computes ``base ** (arange(0, d, 2) / d)`` in float32: the exponent x
is rounded (relative 2**-24), so the frequency is off by up to ln(base) x 2**-24 relative, plus
an ulp or two: float32_rtol. Its angle m * theta is then a float32 product, and its cos and sin
float32 values: at position m the angle is off by m |delta theta| plus half an ulp of the angle.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.needs_torch import import_or_skip

import pe_core
from explorer.model_configs import MODEL_CONFIGS, load_config

torch = import_or_skip("torch")
transformers = import_or_skip("transformers")
from transformers import CONFIG_MAPPING  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402

transformers.logging.set_verbosity_error()

#: Each model type's rotary embedding class in transformers 5.18.
ROTARY_CLASSES = {
    "llama": "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding",
    "qwen2": "transformers.models.qwen2.modeling_qwen2.Qwen2RotaryEmbedding",
    "mistral": "transformers.models.mistral.modeling_mistral.MistralRotaryEmbedding",
    "gpt_neox": "transformers.models.gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding",
    "deepseek_v3": "transformers.models.deepseek_v3.modeling_deepseek_v3.DeepseekV3RotaryEmbedding",
    "gpt_oss": "transformers.models.gpt_oss.modeling_gpt_oss.GptOssRotaryEmbedding",
    "gemma3_text": "transformers.models.gemma3.modeling_gemma3.Gemma3RotaryEmbedding",
    "gemma4_text": "transformers.models.gemma4.modeling_gemma4.Gemma4TextRotaryEmbedding",
    "phi3": "transformers.models.phi3.modeling_phi3.Phi3RotaryEmbedding",
    "llama4_text": "transformers.models.llama4.modeling_llama4.Llama4TextRotaryEmbedding",
    "qwen3": "transformers.models.qwen3.modeling_qwen3.Qwen3RotaryEmbedding",
    "qwen3_5_text": "transformers.models.qwen3_5.modeling_qwen3_5.Qwen3_5TextRotaryEmbedding",
    "cohere2": "transformers.models.cohere2.modeling_cohere2.Cohere2RotaryEmbedding",
}
ROPE_PRESETS = [model.key for model in MODEL_CONFIGS if model.key != "gpt-j-6b"]


def language_model_keys(config: dict) -> dict:
    return dict(config["text_config"]) if "text_config" in config else dict(config)


def hf_config(config: dict):
    """The model's own transformers configuration, built from a config.json's keys."""
    keys = language_model_keys(config)
    return CONFIG_MAPPING[keys.pop("model_type")](**keys)


def rotary_embedding(config: dict):
    keys = language_model_keys(config)
    module_name, _, class_name = ROTARY_CLASSES[keys["model_type"]].rpartition(".")
    module = __import__(module_name, fromlist=[class_name])
    return getattr(module, class_name)(hf_config(config))


def layer_arguments(config: dict) -> dict:
    """Gemma 3's and 4's embeddings hold one RoPE per layer type; the preset's is the global layers'."""
    per_type = ("gemma3_text", "gemma4_text")
    return {"layer_type": "full_attention"} if language_model_keys(config)["model_type"] in per_type else {}


def float32_rtol(base: float) -> float:
    return (math.log(base) + 4) * 2.0**-23


def torch_cos_sin(rotary, config: dict, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """The embedding's cos and sin at these positions: one column per coordinate (half layout), or one
    per pair where the model's code pairs otherwise (gpt-oss; Llama 4's complex freqs_cis; Command A's
    repeat_interleave, each pair's value twice side by side)."""
    model_type = language_model_keys(config)["model_type"]
    positions = torch.arange(start, start + length)[None, :]
    if model_type == "qwen3_5_text":  # MRoPE: a text token has the same position on the three axes
        positions = positions[None].expand(3, 1, length)
    out = rotary(torch.zeros(1, length, 8), positions, **layer_arguments(config))
    if model_type == "llama4_text":
        return out[0].real.double().numpy(), out[0].imag.double().numpy()
    cos, sin = out[0][0].double().numpy(), out[1][0].double().numpy()
    if model_type == "cohere2":
        cos, sin = cos[:, ::2], sin[:, ::2]
    return cos, sin


def embedding_state(rotary, config: dict) -> tuple[np.ndarray, float]:
    """inv_freq and attention_scaling, as the embedding holds them now."""
    if layer_arguments(config):
        return (rotary.full_attention_inv_freq.double().numpy(), rotary.full_attention_attention_scaling)
    return rotary.inv_freq.double().numpy(), rotary.attention_scaling


def assert_cache_matches(rotary, config: dict, start: int, length: int) -> None:
    rope = pe_core.rope_from_config(config)
    sequence_length = start + length
    ours_cos, ours_sin = pe_core.rope_cache(length, rope.d, rope.base, scaling=rope.scaling, start=start)
    their_cos, their_sin = torch_cos_sin(rotary, config, start, length)
    if their_cos.shape[-1] == rope.d // 2:
        # One column per pair (torch_cos_sin): the first half of ours.
        ours_cos, ours_sin = ours_cos[:, : rope.d // 2], ours_sin[:, : rope.d // 2]
    inv_freq, attention = embedding_state(rotary, config)
    ours_freq = pe_core.rope_frequencies(rope.d, rope.base, scaling=rope.scaling, length=sequence_length)
    # Same frequencies first (else the bound below would hide a wrong choice of them).
    np.testing.assert_allclose(inv_freq, ours_freq, rtol=float32_rtol(rope.base))
    assert attention == pytest.approx(pe_core.rope_attention_factor(rope.scaling, sequence_length), rel=1e-12)
    m = np.arange(start, start + length, dtype=np.float64)[:, None]
    angle_error = m * np.max(np.abs(inv_freq - ours_freq)) + 2.0**-24 * m * np.max(ours_freq)
    bound = attention * (angle_error + 2.0**-22)
    assert np.all(np.abs(their_cos - ours_cos) <= bound)
    assert np.all(np.abs(their_sin - ours_sin) <= bound)


@pytest.mark.parametrize("key", ROPE_PRESETS)
def test_preset_frequencies_and_attention_factor_are_transformers(key: str) -> None:
    config = load_config(key)
    rope = pe_core.rope_from_config(config)
    inv_freq, attention = embedding_state(rotary_embedding(config), config)
    np.testing.assert_allclose(pe_core.rope_frequencies(rope.d, rope.base, scaling=rope.scaling), inv_freq,
                               rtol=float32_rtol(rope.base))
    assert pe_core.rope_attention_factor(rope.scaling) == pytest.approx(attention, rel=1e-12)


@pytest.mark.parametrize("key", ROPE_PRESETS)
def test_preset_cache_is_the_rotary_embeddings_cos_and_sin(key: str) -> None:
    config = load_config(key)
    assert_cache_matches(rotary_embedding(config), config, start=0, length=64)
    assert_cache_matches(rotary_embedding(config), config, start=1000, length=40)


def test_longrope_switches_to_the_long_factors_past_the_trained_length() -> None:
    config = load_config("phi-3-mini-128k-instruct")
    assert_cache_matches(rotary_embedding(config), config, start=4000, length=96)  # up to 4095: short
    assert_cache_matches(rotary_embedding(config), config, start=4001, length=96)  # up to 4096: long


LLAMA2 = load_config("llama-2-7b")


@pytest.mark.parametrize(("start", "length"), [(0, 32), (4000, 96), (8000, 50), (12000, 7)])
def test_dynamic_ntk_is_transformers_at_every_length(start: int, length: int) -> None:
    config = LLAMA2 | {"rope_scaling": {"type": "dynamic", "factor": 2.0}}
    assert_cache_matches(rotary_embedding(config), config, start=start, length=length)


@pytest.mark.parametrize("rope_scaling", [
    {"type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 3.0},
    {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024},
    {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 512, "truncate": False,
     "beta_fast": 16.0, "beta_slow": 2.0, "attention_factor": 0.9},
    # factor null: transformers derives max_position_embeddings / original_max_position_embeddings = 4.
    {"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 1024, "mscale": 0.707,
     "mscale_all_dim": 1.0},
    {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
     "original_max_position_embeddings": 1024},
    {"rope_type": "longrope", "short_factor": [1.0 + i / 64 for i in range(64)],
     "long_factor": [1.0 + i / 2 for i in range(64)], "original_max_position_embeddings": 1024},
])
@pytest.mark.parametrize("seq_len", [None, 1000, 9000])
def test_every_method_is_transformers_init_function(rope_scaling: dict, seq_len: int | None) -> None:
    """Each rope_type on a Llama 2 shaped config (4096 positions), at init and at a sequence length."""
    config = LLAMA2 | {"rope_scaling": rope_scaling}
    rope = pe_core.rope_from_config(config)
    hf = hf_config(config)
    inv_freq, attention = ROPE_INIT_FUNCTIONS[hf.rope_parameters["rope_type"]](hf, None, seq_len=seq_len)
    np.testing.assert_allclose(pe_core.rope_frequencies(rope.d, rope.base, scaling=rope.scaling, length=seq_len),
                               inv_freq.double().numpy(), rtol=float32_rtol(rope.base))
    assert pe_core.rope_attention_factor(rope.scaling, seq_len) == pytest.approx(attention, rel=1e-12)


def test_yarn_turned_over_ramp_is_transformers_too() -> None:
    """d = 8, base 2, trained on 10**6 positions: the fast bound passes the head and transformers, like
    YaRN's code, divides every pair by the factor (pe_core.yarn_ramp's docstring)."""
    config = {"model_type": "llama", "hidden_size": 8, "num_attention_heads": 1, "rope_theta": 2.0,
              "max_position_embeddings": 4 * 10**6,
              "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 10**6}}
    rope = pe_core.rope_from_config(config)
    hf = hf_config(config)
    inv_freq, _ = ROPE_INIT_FUNCTIONS["yarn"](hf, None)
    ours = pe_core.rope_frequencies(rope.d, rope.base, scaling=rope.scaling)
    np.testing.assert_allclose(ours, inv_freq.double().numpy(), rtol=float32_rtol(2.0))
    np.testing.assert_allclose(ours, pe_core.rope_frequencies(8, 2.0) / 4, rtol=1e-15)


def gemma4_text(global_head_dim: int, full_attention: dict) -> dict:
    """A tiny Gemma 4 text config whose global (full-attention) layers run ``full_attention``'s rope."""
    return {"model_type": "gemma4_text", "vocab_size": 64, "hidden_size": 64, "intermediate_size": 32,
            "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
            "layer_types": ["sliding_attention", "full_attention"], "head_dim": 16,
            "global_head_dim": global_head_dim, "vocab_size_per_layer_input": 64, "hidden_size_per_layer_input": 8,
            "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                "full_attention": full_attention}}


@pytest.mark.parametrize(("head_dim", "fraction", "base", "factor"), [
    (512, 0.25, 1e6, 1.0),  # Gemma 4's global layers
    (512, 0.25, 1e6, 8.0),
    (256, 0.5, 10000.0, 2.0),
    (256, 0.125, 500000.0, 1.0),
    (128, 0.75, 1e6, 4.0),
    (64, 1.0, 10000.0, 1.5),
    (512, 0.3, 1e6, 1.0),  # int(0.3 * 512 // 2) = 76 pairs
])
def test_proportional_is_transformers_init_function(head_dim: int, fraction: float, base: float,
                                                    factor: float) -> None:
    """ROPE_INIT_FUNCTIONS["proportional"] on a Gemma 4 config: the frequencies rope_from_config's scaling gives
    on the whole head (and rope_init for the global layer type), within float32's rounding of
    1 / base ** (2i / d) (a power-of-two d keeps the exponent exact: a few ulp)."""
    config = gemma4_text(head_dim, {"rope_type": "proportional", "partial_rotary_factor": fraction,
                                    "rope_theta": base, "factor": factor})
    keys = {key: value for key, value in config.items() if key != "model_type"}
    theirs, attention = ROPE_INIT_FUNCTIONS["proportional"](transformers.Gemma4TextConfig(**keys), None,
                                                            layer_type="full_attention")
    theirs = theirs.double().numpy()
    rope = pe_core.rope_from_config(config, layer_type="full_attention")
    assert rope.d == head_dim and rope.scaling.partial_rotary_factor == fraction
    ours = pe_core.rope_frequencies(rope.d, rope.base, scaling=rope.scaling)
    assert np.array_equal(ours == 0, theirs == 0), "the same pairs left unrotated"
    np.testing.assert_allclose(ours, theirs, rtol=5e-7, atol=0)
    assert pe_core.rope_attention_factor(rope.scaling) == attention == 1.0
    inv_freq, rope_init_attention = pe_core.rope_init(config, layer_type="full_attention")
    np.testing.assert_allclose(inv_freq, theirs, rtol=5e-7, atol=0)
    assert rope_init_attention == attention


def test_proportional_reads_factor_and_partial_rotary_factor_as_transformers_when_absent() -> None:
    """Neither key given: transformers takes 1.0 for both (every pair rotated, none divided)."""
    config = gemma4_text(128, {"rope_type": "proportional", "rope_theta": 10000.0})
    keys = {key: value for key, value in config.items() if key != "model_type"}
    theirs, _ = ROPE_INIT_FUNCTIONS["proportional"](transformers.Gemma4TextConfig(**keys), None,
                                                    layer_type="full_attention")
    rope = pe_core.rope_from_config(config, layer_type="full_attention")
    assert rope.scaling == pe_core.RopeScaling("proportional", 1.0, partial_rotary_factor=1.0)
    np.testing.assert_allclose(pe_core.rope_frequencies(rope.d, rope.base, scaling=rope.scaling),
                               theirs.double().numpy(), rtol=5e-7, atol=0)


@pytest.mark.parametrize("key", ROPE_PRESETS)
def test_transformers_5_spelling_reads_the_same(key: str) -> None:
    """A config as transformers 5 writes it (rope_parameters, rope_theta inside, per layer type for
    Gemma 3) gives the same RoPE as the public transformers 4 one."""
    config = load_config(key)
    written = hf_config(config).to_dict()
    assert "rope_parameters" in written and "rope_scaling" not in written
    assert pe_core.rope_from_config(written) == pe_core.rope_from_config(config)


def test_rotate_is_apply_rotary_pos_emb_times_the_attention_factor() -> None:
    from transformers.models.qwen2.modeling_qwen2 import apply_rotary_pos_emb

    config = load_config("qwen2.5-7b-instruct-yarn")
    rope = pe_core.rope_from_config(config)
    q = np.random.default_rng(3).standard_normal((1, 2, 30, rope.d))
    cos, sin = torch_cos_sin(rotary_embedding(config), config, 0, 30)
    q_t = torch.from_numpy(q)
    turned, _ = apply_rotary_pos_emb(q_t, q_t, torch.from_numpy(cos)[None], torch.from_numpy(sin)[None])
    factor = pe_core.rope_attention_factor(rope.scaling)
    ours = pe_core.rotate(q, np.arange(30), rope.base, scaling=rope.scaling) * factor
    np.testing.assert_allclose(turned.numpy(), ours, atol=1e-5)


def test_deepseek_interleaved_rotation_is_apply_rotary_pos_emb_interleave() -> None:
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import apply_rotary_pos_emb_interleave

    config = load_config("deepseek-v3")
    rope = pe_core.rope_from_config(config)
    q = np.random.default_rng(4).standard_normal((1, 1, 25, rope.d))
    cos, sin = torch_cos_sin(rotary_embedding(config), config, 100, 25)
    q_t = torch.from_numpy(q)
    turned, _ = apply_rotary_pos_emb_interleave(q_t, q_t, torch.from_numpy(cos)[None], torch.from_numpy(sin)[None])
    ours = pe_core.rotate(q, np.arange(100, 125), rope.base, layout="interleaved", scaling=rope.scaling)
    half = rope.d // 2  # transformers returns the turned pairs' first coordinates, then their second ones
    np.testing.assert_allclose(turned.numpy()[..., :half], ours[..., 0::2], atol=1e-5)
    np.testing.assert_allclose(turned.numpy()[..., half:], ours[..., 1::2], atol=1e-5)


def test_gptj_table_and_rotation() -> None:
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb, create_sinusoidal_positions

    config = load_config("gpt-j-6b")
    rope = pe_core.rope_from_config(config)
    assert (rope.d, rope.base, rope.max_length) == (64, 10000.0, 2048)
    table = create_sinusoidal_positions(2048, rope.d).double().numpy()  # cat(sin, cos) per pair
    cos, sin = pe_core.rope_cache(2048, rope.d, rope.base, layout="interleaved")
    bound = np.arange(2048)[:, None] * 2.0**-23 * 2 + 2.0**-22
    assert np.all(np.abs(table[:, : rope.d // 2] - sin[:, 0::2]) <= bound)
    assert np.all(np.abs(table[:, rope.d // 2 :] - cos[:, 0::2]) <= bound)
    x = np.random.default_rng(5).standard_normal((1, 20, 1, rope.d))
    positions = np.arange(300, 320)
    gathered = torch.from_numpy(table[positions][None])
    sin_t, cos_t = torch.split(gathered, rope.d // 2, dim=-1)
    turned = apply_rotary_pos_emb(torch.from_numpy(x), sin_t, cos_t).numpy()
    ours = pe_core.rotate(x[:, :, 0, :], positions, layout="interleaved")
    np.testing.assert_allclose(turned[:, :, 0, :], ours, atol=1e-4)


# --------------------------------------------------------------------------- ALiBi and T5


@pytest.mark.parametrize("heads", [1, 3, 8, 12, 16, 20, 32, 40, 64, 112])
def test_alibi_slopes_are_blooms(heads: int) -> None:
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    alibi = build_alibi_tensor(torch.ones(1, 5), heads, torch.float32).double().numpy()  # slope * position
    np.testing.assert_allclose(alibi[:, 0, 1], pe_core.alibi_slopes(heads), rtol=1e-6)
    np.testing.assert_allclose(alibi[:, 0, :], -pe_core.alibi_bias(np.arange(5), heads), rtol=1e-6)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (64, 256), (16, 64)])
def test_t5_bucket_is_transformers_t5(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    from transformers.models.t5.modeling_t5 import T5Attention

    offsets = torch.arange(-5000, 5001)
    theirs = T5Attention._relative_position_bucket(offsets, bidirectional, num_buckets, max_distance).numpy()
    ours = pe_core.t5_relative_bucket(offsets.numpy(), bidirectional=bidirectional, num_buckets=num_buckets,
                                      max_distance=max_distance)
    np.testing.assert_array_equal(ours, theirs)


def test_t5_float32_misses_a_whole_number_of_steps() -> None:
    """Where the exact step count is a whole number, T5's float32 logarithm can land below it."""
    from transformers.models.t5.modeling_t5 import T5Attention

    theirs = int(T5Attention._relative_position_bucket(torch.tensor(-18), True, 34, 27))
    assert (theirs, int(pe_core.t5_relative_bucket(-18, num_buckets=34, max_distance=27))) == (13, 14)
