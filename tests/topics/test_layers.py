"""Your model, layer by layer's topic: a stack read from real and hostile configs, each kind's coverage and
score against formulas written out here, the query scale's steps against pe_core's per-position values, the
reproduce-this code (NumPy and PyTorch) against the page's downloads, and the note Rotary and Longer contexts
show for a config of several layer types."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.snippets import run_snippet

import pe_core
from explorer.layer_types import layer_types_note, preset_note
from explorer.model_configs import LAYER_PRESETS, load_config
from explorer.topics import layers

GEMMA3_V5 = {  # transformers 5's spelling: one rope_parameters dict per layer type
    "model_type": "gemma3_text", "num_hidden_layers": 12, "head_dim": 16, "sliding_window": 8,
    "max_position_embeddings": 64,
    "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
}
LLAMA4 = {"model_type": "llama4_text", "num_hidden_layers": 8, "head_dim": 16, "attention_chunk_size": 32,
          "rope_theta": 500000.0, "max_position_embeddings": 256, "floor_scale": 16, "attn_scale": 0.1}
QWEN35 = {"model_type": "qwen3_5_text", "num_hidden_layers": 8, "head_dim": 32, "rope_theta": 10000000.0,
          "max_position_embeddings": 1024}
COHERE2 = {"model_type": "cohere2", "num_hidden_layers": 8, "hidden_size": 64, "num_attention_heads": 4,
           "rope_theta": 50000.0, "sliding_window": 16, "max_position_embeddings": 512}
GEMMA4 = {"model_type": "gemma4_text", "num_hidden_layers": 6, "head_dim": 16, "global_head_dim": 32,
          "sliding_window": 8, "max_position_embeddings": 128}
DYNAMIC = {"num_hidden_layers": 4, "head_dim": 32, "rope_theta": 10000.0, "max_position_embeddings": 2048,
           "rope_scaling": {"rope_type": "dynamic", "factor": 4.0}}
CONFIGS = {"dynamic": DYNAMIC, "gemma3": GEMMA3_V5, "llama4": LLAMA4, "qwen3_5": QWEN35, "cohere2": COHERE2,
           "gemma4": GEMMA4}


def kind_named(stack: layers.ModelStack, layer_type: str, rotary: bool = True) -> layers.LayerKind:
    return next(k for k in stack.kinds if k.layer_type == layer_type and k.rotary == rotary)


# ------------------------------------------------------------------------------- the stack


def test_gemma3_in_transformers_5_spelling_reads_both_layer_types_with_their_own_rope() -> None:
    stack = layers.read_stack(GEMMA3_V5)
    sliding, full = kind_named(stack, "sliding_attention"), kind_named(stack, "full_attention")
    assert full.layers == (5, 11) and len(sliding.layers) == 10
    assert (sliding.rope.base, sliding.rope.scaling, sliding.window) == (10000.0, None, 8)
    assert (full.rope.base, full.rope.scaling.method, full.rope.scaling.factor, full.window) == (1e6, "linear", 8.0,
                                                                                                   None)
    np.testing.assert_allclose(full.inv_freq, 1e6 ** -(np.arange(0, 16, 2) / 16) / 8, rtol=1e-7)
    assert layers.layer_runs(sliding.layers) == "0-4, 6-10"


def test_llama4_and_command_a_and_qwen35_layers_without_position_are_their_own_kind() -> None:
    llama4 = layers.read_stack(LLAMA4)
    nope = kind_named(llama4, "full_attention", rotary=False)
    assert nope.layers == (3, 7) and nope.query_scale and nope.inv_freq is None
    assert kind_named(llama4, "chunked_attention").chunk == 32 and llama4.floor_scale == 16
    cohere = layers.read_stack(COHERE2)
    assert kind_named(cohere, "full_attention", rotary=False).layers == (3, 7)
    qwen = layers.read_stack(QWEN35)
    full = kind_named(qwen, "full_attention")
    # a quarter of a 32-wide head rotates: 4 of its 16 pairs, the other 12 carry no position
    assert (full.rotated_pairs, full.unrotated_pairs) == (4, 12)
    assert kind_named(qwen, "linear_attention", rotary=False) not in layers.scored_kinds(qwen)


def test_gemma4_global_heads_rotate_a_quarter_and_keep_the_rest_at_frequency_zero() -> None:
    full = kind_named(layers.read_stack(GEMMA4), "full_attention")
    assert (full.head_dim, full.rotated_pairs, full.unrotated_pairs) == (32, 4, 12)
    theta = layers.analysis.head_frequencies(full)
    np.testing.assert_allclose(theta[:4], 1e6 ** -(np.arange(0, 8, 2) / 32), rtol=1e-7)
    assert not theta[4:].any()


@pytest.mark.parametrize("key", LAYER_PRESETS)
def test_every_preset_reads_into_a_stack_of_its_layer_count(key: str) -> None:
    config = load_config(key)
    stack = layers.preset_stack(key)
    count = config.get("text_config", config)["num_hidden_layers"]
    assert len(stack.layers) == count == sum(len(kind.layers) for kind in stack.kinds)
    assert stack.trained_given


@pytest.mark.parametrize("change, key", [
    ({"num_hidden_layers": 10**9}, "num_hidden_layers"),
    ({"sliding_window": 0}, "sliding_window"),
    ({"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0}}}, "sliding_attention"),
    ({"head_dim": float("nan")}, "head_dim"),
    ({"head_dim": "sixteen"}, "head_dim"),
    ({"layer_types": ["full_attention"] * 3}, "num_hidden_layers"),
    ({"head_dim": 8192}, "head_dim"),
])
def test_a_malformed_config_gets_one_line_that_names_what_to_fix(change: dict, key: str) -> None:
    with pytest.raises(ValueError, match=key) as raised:
        layers.read_stack(GEMMA3_V5 | change)
    assert "\n" not in str(raised.value)


# ------------------------------------------------------------------------- formulas written out


def unseen_written_out(kind: layers.LayerKind, trained: int, target: int) -> np.ndarray:
    """A pair meets unseen angles when it never turned a whole circle over the offsets its layer saw in training
    and turns further over those it sees at the target (each at its frequencies on a text of that length)."""
    reach = lambda n: n if kind.seen is None else min(n, kind.seen)  # noqa: E731
    before = np.zeros(kind.head_pairs)
    after = np.zeros(kind.head_pairs)
    if kind.rope is not None:
        rotary = kind.rope.d // 2
        before[:rotary] = pe_core.rope_frequencies(kind.rope.d, kind.rope.base, scaling=kind.rope.scaling,
                                                   length=trained).astype(np.float32)
        after[:rotary] = pe_core.rope_frequencies(kind.rope.d, kind.rope.base, scaling=kind.rope.scaling,
                                                  length=target).astype(np.float32)
    return np.array([t > 0 and reach(trained) * b < 2 * math.pi and reach(target) * t > reach(trained) * b * (1 + 1e-12)
                     for b, t in zip(before, after, strict=True)])


@settings(max_examples=60, deadline=None)
@given(target=st.integers(1, 1 << 20), window=st.sampled_from([None, 8, 128, 4096]),
       source=st.sampled_from(["gemma3", "dynamic", "phi-4-mini-instruct"]))
def test_coverage_is_the_written_out_definition(target: int, window: int | None, source: str) -> None:
    if source == "gemma3":
        stack = layers.read_stack(GEMMA3_V5 | {"sliding_window": window or 8})
    else:
        stack = layers.preset_stack(source) if source in LAYER_PRESETS else layers.read_stack(DYNAMIC)
    for kind in stack.kinds:
        seen = layers.coverage(kind, stack.trained, target)
        np.testing.assert_array_equal(seen.unseen, unseen_written_out(kind, stack.trained, target))
        if kind.seen is not None:
            theta = layers.analysis.head_frequencies(kind, target)
            np.testing.assert_array_equal(seen.beyond_window, (theta > 0) & (2 * math.pi / np.where(
                theta > 0, theta, 1) > kind.seen))


@pytest.mark.parametrize("source", [*LAYER_PRESETS, "dynamic"])
def test_a_kinds_frequencies_at_no_length_are_what_model_layers_holds(source: str) -> None:
    stack = layers.preset_stack(source) if source in LAYER_PRESETS else layers.read_stack(DYNAMIC)
    for kind in stack.kinds:
        if kind.rotary:
            np.testing.assert_array_equal(kind.frequencies(None), kind.inv_freq)


def rotated_dot(head_dim: int, inv_freq: np.ndarray, a: float, offset: int) -> float:
    """q = k = ones(head_dim), RoPE (half layout) on the first 2 len(inv_freq) coordinates, the rest untouched,
    q at position offset, k at 0, cos and sin multiplied by a as transformers does."""
    rotary = 2 * inv_freq.size
    q, k = np.ones(head_dim), np.ones(head_dim)
    angle = offset * np.concatenate([inv_freq, inv_freq])
    rotate_half = lambda x: np.concatenate([-x[rotary // 2: rotary], x[: rotary // 2]])  # noqa: E731
    q_rot = q[:rotary] * np.cos(angle) * a + rotate_half(q) * np.sin(angle) * a
    k_rot = k[:rotary] * a  # angle 0: cos 1, sin 0
    return float(q_rot @ k_rot + q[rotary:] @ k[rotary:])


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_score_by_offset_is_the_dot_product_of_rotated_all_ones_vectors(name: str) -> None:
    stack = layers.read_stack(CONFIGS[name])
    for kind in layers.scored_kinds(stack):
        scores = layers.score_by_offset(kind, 100, 700)
        assert scores.size == kind.span(100)  # nothing past the window's or chunk's edge
        for offset in (0, 1, 5, scores.size - 1):
            expected = float(kind.head_dim) if kind.inv_freq is None else rotated_dot(
                kind.head_dim, kind.frequencies(700), kind.attention(700), offset)
            assert scores[offset] == pytest.approx(expected, rel=1e-12, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(length=st.integers(1, 200_000), floor_scale=st.integers(1, 9000), attn_scale=st.floats(0.01, 2.0))
def test_the_query_scale_steps_give_pe_cores_value_at_every_position(length: int, floor_scale: int,
                                                                      attn_scale: float) -> None:
    stack = layers.read_stack(LLAMA4 | {"floor_scale": floor_scale, "attn_scale": attn_scale})
    starts, scales = layers.query_scale_steps(stack, length)
    every = pe_core.llama4_query_scale(np.arange(length), floor_scale=floor_scale, attn_scale=attn_scale)
    step_of = np.searchsorted(starts, np.arange(length), side="right") - 1
    np.testing.assert_array_equal(scales[step_of], every)
    assert starts[0] == 0 and np.all(np.diff(scales) > 0)


# ------------------------------------------------------------------------- reproduce this


@pytest.mark.parametrize("library", ["numpy", "torch"])
@pytest.mark.parametrize("source", [*LAYER_PRESETS, *CONFIGS])
def test_the_snippet_computes_every_download(source: str, library: str) -> None:
    stack = layers.preset_stack(source) if source in LAYER_PRESETS else layers.read_stack(CONFIGS[source], source)
    target = 300_000 if source in LAYER_PRESETS else 700
    result = run_snippet(layers.layers_code(stack, target, library))["result"]
    arrays = {key: np.asarray(value) for key, value in result.items()}
    count = layers.curve_offsets(stack, target)
    np.testing.assert_allclose(arrays["layers_stack"], layers.layers_table(stack, target).to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(arrays["layers_scores"], layers.scores_table(stack, count, target).to_numpy(), rtol=1e-9,
                               atol=1e-9)
    if any(kind.rotary for kind in stack.kinds):
        np.testing.assert_allclose(arrays["layers_pairs"], layers.pairs_table(stack, target).to_numpy(), rtol=1e-12)
    if stack.floor_scale is not None:
        shown = layers.query_scale_table(stack, layers.query_scale_positions(stack, target)).to_numpy()
        np.testing.assert_allclose(arrays["layers_query_scale"], shown, rtol=1e-12)
    else:
        assert "layers_query_scale" not in arrays


# ------------------------------------------------------------------------- the one-RoPE pages' note


def test_the_note_names_each_layer_type_and_the_one_a_page_shows() -> None:
    note = layer_types_note(GEMMA3_V5)
    assert "10 sliding_attention (base 10000, no scaling)" in note
    assert "2 full_attention (base 1000000, linear ×8)" in note
    assert "the RoPE of its full_attention layers" in note
    assert "without position" in layer_types_note(COHERE2)
    assert layer_types_note({"rope_theta": 500000.0, "head_dim": 128, "num_hidden_layers": 32}) is None
    assert layer_types_note({"rope_theta": 500000.0, "head_dim": 128}) is None  # no layer count: one RoPE
    without_count = {key: value for key, value in GEMMA3_V5.items() if key != "num_hidden_layers"}
    assert "(full_attention, sliding_attention) but no num_hidden_layers" in layer_types_note(without_count)
    gemma3_v4 = {"model_type": "gemma3_text", "head_dim": 16, "rope_theta": 1e6, "rope_local_base_freq": 1e4,
                 "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    assert "no num_hidden_layers" in layer_types_note(gemma3_v4)


def test_a_preset_of_one_kind_of_layer_gets_no_note() -> None:
    assert preset_note("llama-3.1-8b") is None
    assert preset_note("gemma-3-4b-it") is not None
