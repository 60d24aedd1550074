"""pe_core.llama4_query_scale: the factor Llama 4 multiplies the queries of its NoPE layers by, against
transformers' own Llama4TextAttention (the queries it hands to attention, with the tuning on and off),
a formula written out here, hypothesis properties and bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.needs_torch import import_or_skip

import pe_core


def independent_scale(p: int, floor_scale: int, attn_scale: float) -> float:
    """Llama 4's temperature, position by position in plain Python: 1 + a ln(1 + floor((p + 1) / F))."""
    return 1.0 + attn_scale * math.log(1 + (p + 1) // floor_scale)


def test_the_queries_transformers_hands_to_attention_are_scaled_so() -> None:
    """A NoPE layer (the fourth) of a tiny Llama 4, run with temperature tuning on and off: the ratio of the
    queries its attention function receives is the scale of each position."""
    torch = import_or_skip("torch")
    transformers = import_or_skip("transformers")
    from transformers.modeling_utils import AttentionInterface
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention

    received = {}

    def receive(module, query, key, value, attention_mask, **kwargs):
        received["query"] = query.detach().double()
        batch, heads, length, size = query.shape
        return torch.zeros(batch, length, heads, size), None

    AttentionInterface.register("pe_core_receive", receive)
    floor_scale, attn_scale, length = 4, 0.3, 40

    def queries(tuning: bool):
        config = transformers.Llama4TextConfig(
            vocab_size=64, hidden_size=32, intermediate_size=32, intermediate_size_mlp=32, num_hidden_layers=4,
            num_attention_heads=2, num_key_value_heads=2, head_dim=16, num_local_experts=2,
            attn_temperature_tuning=tuning, floor_scale=floor_scale, attn_scale=attn_scale, use_qk_norm=False)
        config._attn_implementation = "pe_core_receive"
        torch.manual_seed(0)
        layer = Llama4TextAttention(config, layer_idx=3)
        assert not layer.use_rope  # every fourth layer has no position
        layer(torch.randn(1, length, 32), position_embeddings=None, attention_mask=None)
        return received["query"].numpy()

    ratio = queries(True) / queries(False)
    expected = pe_core.llama4_query_scale(np.arange(length), floor_scale=floor_scale, attn_scale=attn_scale)
    np.testing.assert_allclose(ratio, np.broadcast_to(expected[None, None, :, None], ratio.shape), rtol=2e-6)


@given(st.integers(0, 10**12), st.integers(1, 10**6), st.floats(0, 2))
def test_the_formula_position_by_position(p: int, floor_scale: int, attn_scale: float) -> None:
    [scale] = pe_core.llama4_query_scale([p], floor_scale=floor_scale, attn_scale=attn_scale)
    assert scale == pytest.approx(independent_scale(p, floor_scale, attn_scale), rel=1e-15)


@given(st.integers(2, 10**6), st.floats(1e-6, 2))
def test_one_below_floor_scale_and_a_step_every_floor_scale_positions(floor_scale: int, attn_scale: float) -> None:
    first = np.arange(floor_scale - 1)
    assert np.all(pe_core.llama4_query_scale(first, floor_scale=floor_scale, attn_scale=attn_scale) == 1.0)
    edges = np.arange(1, 6) * floor_scale - 1  # p + 1 a multiple of F: where it steps
    before, at = (pe_core.llama4_query_scale(edges + shift, floor_scale=floor_scale, attn_scale=attn_scale)
                  for shift in (-1, 0))
    assert np.all(at > before)


def test_llama4_s_defaults_and_any_shape() -> None:
    grid = np.arange(12).reshape(3, 4) * 9000
    scale = pe_core.llama4_query_scale(grid)
    assert scale.shape == (3, 4) and scale.dtype == np.float64
    assert scale[0, 0] == 1.0 and scale[2, 3] == independent_scale(99000, 8192, 0.1)


@pytest.mark.parametrize(("positions", "options", "words"), [
    ([-1], {}, "0 .. "),
    ([1.5], {}, "whole numbers"),
    ([float("nan")], {}, "whole numbers"),
    (["a"], {}, "whole numbers"),
    ([[1, 2], [3]], {}, "whole numbers"),
    ([10**13], {}, "0 .. "),
    ([1], {"floor_scale": 0}, "floor_scale"),
    ([1], {"attn_scale": -0.1}, "attn_scale must be >= 0"),
    ([1], {"attn_scale": float("inf")}, "attn_scale must be finite"),
    (np.zeros(2**20 + 1, dtype=np.int64), {}, "at most"),
])
def test_bad_input_gets_a_message(positions, options, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pe_core.llama4_query_scale(positions, **options)
