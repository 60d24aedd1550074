"""Every invalid argument of the rotary and attention-bias functions raises ValueError with a message
a person can act on (checked loosely: the words that name the problem). Warnings are errors here:
no NumPy warning on the way to a ValueError."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import pe_core
from pe_core import RopeConfig, RopeScaling

LLAMA = {"rope_theta": 500000.0, "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 8192}


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def raises(match: str):
    return pytest.raises(ValueError, match=match)


# --------------------------------------------------------------------------- d, base, layout


@pytest.mark.parametrize(("d", "match"), [
    (7, "must be even"), (1, "at least 2"), (0, "at least 2"), (-4, "at least 2"), (2**15, "at most"),
    (8.5, "whole number"), ("8", "whole number"), (None, "whole number"), (True, "whole number"),
    (float("nan"), "finite"),
])
@pytest.mark.parametrize("call", [
    lambda d: pe_core.rope_frequencies(d),
    lambda d: pe_core.rope_cache(4, d),
    lambda d: pe_core.yarn_ramp(d, scaling=RopeScaling("yarn", 2.0, 64)),
    lambda d: RopeConfig(d, 10000.0),
], ids=["rope_frequencies", "rope_cache", "yarn_ramp", "RopeConfig"])
def test_bad_d(call, d, match) -> None:
    with raises(rf"d \(the rotary dimension\).*{match}"):
        call(d)


@pytest.mark.parametrize(("base", "match"), [
    (1.0, "greater than 1"), (0.5, "greater than 1"), (-10000, "greater than 1"), (float("nan"), "finite"),
    (float("inf"), "finite"), ("10000", "real number"), (None, "real number"), (True, "real number"),
])
@pytest.mark.parametrize("call", [
    lambda b: pe_core.rope_frequencies(8, b),
    lambda b: pe_core.rope_cache(4, 8, b),
    lambda b: pe_core.rotate(np.ones((1, 8)), [0], b),
    lambda b: RopeConfig(8, b),
], ids=["rope_frequencies", "rope_cache", "rotate", "RopeConfig"])
def test_bad_base(call, base, match) -> None:
    with raises(rf"base \(rope_theta\) must.*{match}"):
        call(base)


@pytest.mark.parametrize("layout", ["concatenated", "HALF", "", None, 1])
def test_bad_layout(layout) -> None:
    with raises("layout must be one of 'half', 'interleaved'"):
        pe_core.rope_cache(4, 8, layout=layout)
    with raises("layout must be one of 'half', 'interleaved'"):
        pe_core.rotate(np.ones((1, 8)), [0], layout=layout)


# --------------------------------------------------------------------------- RopeScaling


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"method": "ntk-by-parts"}, "scaling method must be one of 'linear', 'ntk', 'dynamic', 'yarn'"),
    ({"method": None}, "scaling method must be one of"),
    ({"method": "linear", "factor": 0.5}, r"factor \(the scaling factor\) must be at least 1, got 0.5"),
    ({"method": "linear", "factor": -2.0}, "must be at least 1, got -2.0"),
    ({"method": "linear", "factor": float("nan")}, "must be finite"),
    ({"method": "linear", "factor": float("inf")}, "must be finite"),
    ({"method": "linear", "factor": "8"}, "must be a real number"),
    ({"method": "yarn", "factor": 4.0}, "yarn scaling needs original_length"),
    ({"method": "llama3", "factor": 8.0}, "llama3 scaling needs original_length"),
    ({"method": "dynamic", "factor": 2.0}, "transformers uses max_position_embeddings"),
    ({"method": "longrope", "factor": 2.0, "short_factor": [1.0], "long_factor": [1.0]}, "longrope scaling needs"),
    ({"method": "yarn", "factor": 4.0, "original_length": 0}, "original_length.*at least 1"),
    ({"method": "yarn", "factor": 4.0, "original_length": 40.5}, "original_length.*whole number"),
    ({"method": "llama3", "factor": 8.0, "original_length": 8192, "low_freq_factor": 4.0, "high_freq_factor": 1.0},
     "high_freq_factor .* must be at least low_freq_factor"),
    ({"method": "llama3", "factor": 8.0, "original_length": 8192, "low_freq_factor": 0.0}, "low_freq_factor must be"),
    ({"method": "yarn", "factor": 4.0, "original_length": 64, "beta_fast": 1.0, "beta_slow": 32.0},
     "beta_fast .* must be greater than beta_slow"),
    ({"method": "yarn", "factor": 4.0, "original_length": 64, "beta_slow": 0}, "beta_slow must be greater than 0"),
    ({"method": "yarn", "factor": 4.0, "original_length": 64, "truncate": "no"}, "truncate must be True or False"),
    ({"method": "yarn", "factor": 4.0, "original_length": 64, "attention_factor": 0.0},
     "attention_factor must be greater than 0"),
    ({"method": "yarn", "factor": 4.0, "original_length": 64, "mscale": -1.0}, "mscale must be 0 or more"),
    ({"method": "longrope", "factor": 2.0, "original_length": 64, "short_factor": [1.0]}, "needs long_factor"),
    ({"method": "longrope", "factor": 2.0, "original_length": 64, "short_factor": [1.0, 2.0], "long_factor": [1.0]},
     "same length"),
    ({"method": "longrope", "factor": 2.0, "original_length": 64, "short_factor": [1.0, -2.0],
      "long_factor": [1.0, 1.0]}, r"short_factor\[1\] must be a finite number greater than 0"),
    ({"method": "longrope", "factor": 2.0, "original_length": 64, "short_factor": "1.0", "long_factor": [1.0]},
     "short_factor must be a list of numbers"),
    ({"method": "longrope", "factor": 2.0, "original_length": 64, "short_factor": [], "long_factor": []},
     "must hold 1 to"),
])
def test_bad_scaling(kwargs, match) -> None:
    with raises(match):
        RopeScaling(**kwargs)


@pytest.mark.parametrize("scaling", [{"method": "linear", "factor": 2.0}, "linear", 2.0])
def test_scaling_must_be_a_rope_scaling(scaling) -> None:
    with raises("scaling must be a RopeScaling"):
        pe_core.rope_frequencies(8, scaling=scaling)
    with raises("scaling must be a RopeScaling"):
        pe_core.rope_attention_factor(scaling)


def test_ntk_and_dynamic_need_d_of_4() -> None:
    for scaling in (RopeScaling("ntk", 2.0), RopeScaling("dynamic", 2.0, 64)):
        with raises("needs d >= 4, got d=2"):
            pe_core.rope_frequencies(2, scaling=scaling)


def test_longrope_lists_must_match_the_pairs() -> None:
    scaling = RopeScaling("longrope", 2.0, 64, short_factor=[1.0] * 3, long_factor=[2.0] * 3)
    with raises("hold 3 numbers each, but d=8 has 4 pairs"):
        pe_core.rope_frequencies(8, scaling=scaling)
    with raises("hold 3 numbers each, but d=8 has 4 pairs"):
        RopeConfig(8, 10000.0, scaling)


@pytest.mark.parametrize(("length", "match"), [(0, "at least 1"), (-5, "at least 1"), (2.5, "whole number"),
                                               ("10", "whole number")])
def test_bad_sequence_length(length, match) -> None:
    with raises(rf"length \(the sequence length\).*{match}"):
        pe_core.rope_frequencies(8, length=length)
    with raises(rf"length \(the sequence length\).*{match}"):
        pe_core.rope_attention_factor(None, length)


def test_yarn_ramp_needs_a_yarn_scaling_and_a_form() -> None:
    with raises("yarn_ramp needs a yarn RopeScaling"):
        pe_core.yarn_ramp(8, scaling=RopeScaling("linear", 2.0))
    with raises("form must be one of 'code', 'paper'"):
        pe_core.yarn_ramp(8, scaling=RopeScaling("yarn", 2.0, 64), form="both")


# --------------------------------------------------------------------------- rope_cache and rotate


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"length": -1}, r"length \(the number of positions\) must be at least 0"),
    ({"length": 3.5}, "whole number"),
    ({"length": 2**21}, "at most"),
    ({"length": 16384, "d": 4096}, "cells is more than the limit"),
    ({"start": -1}, "start must be at least 0"),
    ({"start": 10**13}, "start must be at most"),
])
def test_bad_cache(kwargs, match) -> None:
    arguments = {"length": 4, "d": 8} | kwargs
    with raises(match):
        pe_core.rope_cache(**arguments)


@pytest.mark.parametrize(("x", "positions", "match"), [
    (np.ones((3, 7)), [0, 1, 2], "must be even"),
    (np.ones(8), [0], r"x must be \(\.\.\., L, d\): rows of d coordinates, got shape \(8,\)"),
    (np.broadcast_to(1.0, (2, 2**24 + 2)), [0, 1], "x has 33,554,436 values, more than the limit"),
    (np.ones((2, 8)) * np.nan, [0, 1], "NaN or infinite"),
    (np.ones((2, 8)) + 1j, [0, 1], "complex"),
    (np.ones((2, 8)), [0], "positions has 1 values but x has 2 rows"),
    (np.ones((2, 8)), [0, 0.5], "positions must be whole numbers"),
    (np.ones((2, 8)), [0, np.nan], "positions contains 1 NaN"),
    (np.ones((2, 8)), ["a", "b"], "positions must be a 1-D array of whole numbers"),
    (np.ones((2, 8)), [[0, 1]], "positions must be a 1-D array"),
    (np.ones((2, 8)), [0, 10**13], "positions must lie within"),
])
def test_bad_rotate(x, positions, match) -> None:
    with raises(match):
        pe_core.rotate(x, positions)


# --------------------------------------------------------------------------- rope_from_config


@pytest.mark.parametrize(("config", "match"), [
    ([1, 2], "config must be a JSON object"),
    ({"hidden_size": 768, "num_attention_heads": 12, "n_positions": 1024}, "This config has no RoPE settings"),
    ({"rope_theta": 10000.0, "max_position_embeddings": 2048},
     "no head size.*missing: hidden_size, num_attention_heads"),
    ({"rope_theta": 10000.0, "hidden_size": 4096}, "missing: num_attention_heads"),
    (LLAMA | {"rope_theta": "10000"},
     r"rope_theta \(the RoPE base\) must be a real number greater than 1, got '10000'"),
    (LLAMA | {"rope_theta": float("nan")}, r"rope_theta \(the RoPE base\) must be finite"),
    (LLAMA | {"rope_theta": 0.5}, "must be greater than 1"),
    (LLAMA | {"rope_parameters": {"rope_type": "default", "rope_theta": -1}}, r"rope_parameters.rope_theta"),
    (LLAMA | {"hidden_size": 4000, "num_attention_heads": 48}, "not a multiple of num_attention_heads"),
    (LLAMA | {"num_attention_heads": 0}, "num_attention_heads must be at least 1"),
    (LLAMA | {"head_dim": 127}, "gives 127 rotated coordinates; RoPE needs an even number"),
    (LLAMA | {"partial_rotary_factor": 1.5}, r"must lie in \(0, 1\]"),
    (LLAMA | {"partial_rotary_factor": "half"}, "partial_rotary_factor .or rotary_pct. must be a real number"),
    (LLAMA | {"head_dim": 96, "partial_rotary_factor": 0.01}, "gives 0 rotated coordinates"),
    (LLAMA | {"rope_scaling": "llama3"}, r"rope_scaling must be an object \(\{\.\.\.\}\) or null"),
    (LLAMA | {"rope_scaling": {"rope_type": "mrope", "factor": 2.0}}, "rope_type 'mrope' is not one this explorer"),
    (LLAMA | {"rope_scaling": {"type": "linear"}}, "linear scaling needs rope_scaling.factor"),
    (LLAMA | {"rope_scaling": {"type": "linear", "factor": -2.0}}, "must be at least 1, got -2.0"),
    (LLAMA | {"rope_scaling": {"type": "linear", "factor": float("nan")}}, "must be finite"),
    (LLAMA | {"rope_scaling": {"type": "linear", "factor": "8"}}, "must be a real number"),
    (LLAMA | {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0}},
     "llama3 scaling needs rope_scaling.low_freq_factor"),
    (LLAMA | {"rope_scaling": {"rope_type": "longrope", "long_factor": [1.0] * 64}},
     "longrope scaling needs rope_scaling.short_factor"),
    (LLAMA | {"rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 60, "long_factor": [1.0] * 60}},
     "hold 60 numbers each, but d=128 has 64 pairs"),
    ({"rope_theta": 1e4, "hidden_size": 64, "num_attention_heads": 1, "rope_scaling": {"type": "dynamic", "factor": 2}},
     "dynamic scaling needs max_position_embeddings"),
    ({"rope_theta": 1e4, "hidden_size": 64, "num_attention_heads": 1, "rope_scaling": {"type": "yarn", "factor": 2}},
     "yarn scaling needs original_max_position_embeddings"),
    (LLAMA | {"rope_scaling": {"type": "yarn", "original_max_position_embeddings": 1024}},
     "yarn scaling needs rope_scaling.factor .transformers 5 refuses"),
    ({"rope_theta": 1e4, "hidden_size": 64, "num_attention_heads": 1,
      "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 32, "long_factor": [1.0] * 32,
                       "original_max_position_embeddings": 1024}},
     "longrope scaling without a factor needs max_position_embeddings"),
    (LLAMA | {"rope_scaling": {"type": "yarn", "original_max_position_embeddings": "4096", "factor": 4.0}},
     "original_max_position_embeddings must be a whole number"),
    (LLAMA | {"max_position_embeddings": -1}, "max_position_embeddings must be at least 1"),
    (LLAMA | {"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
     "one dict per layer type .'sliding_attention'. and none for 'full_attention'"),
])
def test_bad_config(config, match) -> None:
    with raises(match):
        pe_core.rope_from_config(config)


def test_layer_type_on_a_config_with_one_rope() -> None:
    with raises("layer_type='sliding_attention' given, but this config has one RoPE for every layer"):
        pe_core.rope_from_config(LLAMA, layer_type="sliding_attention")


# --------------------------------------------------------------------------- ALiBi and T5


@pytest.mark.parametrize(("heads", "match"), [(0, "at least 1"), (-3, "at least 1"), (1.5, "whole number"),
                                              ("8", "whole number"), (10**6, "at most")])
def test_bad_heads(heads, match) -> None:
    with raises(rf"heads \(the number of attention heads\).*{match}"):
        pe_core.alibi_slopes(heads)
    with raises(rf"heads \(the number of attention heads\).*{match}"):
        pe_core.alibi_bias([0, 1], heads)


@pytest.mark.parametrize(("offsets", "match"), [
    ([0.5], "offsets must be whole numbers"), ([np.nan], "offsets contains 1 NaN"), (["a"], "offsets must be whole"),
    ([10**13], "offsets must lie within"), ([[0, 1]], "offsets must be 1-D"),
])
def test_bad_alibi_offsets(offsets, match) -> None:
    with raises(match):
        pe_core.alibi_bias(offsets, 4)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"num_buckets": 31}, "num_buckets must be even, got 31"),
    ({"num_buckets": 2}, "num_buckets must be at least 4"),
    ({"num_buckets": 0, "bidirectional": False}, "num_buckets must be at least 2"),
    ({"num_buckets": 4096}, "num_buckets must be at most 1,024"),
    ({"max_distance": 8}, "max_distance must be at least 9"),
    ({"max_distance": 0}, "max_distance must be at least"),
    ({"bidirectional": "yes"}, "bidirectional must be True or False"),
])
def test_bad_t5_arguments(kwargs, match) -> None:
    with raises(match):
        pe_core.t5_relative_bucket([0, 1, -1], **kwargs)


@pytest.mark.parametrize(("offsets", "match"), [([1.5], "whole numbers"), ([math.inf], "NaN or infinite")])
def test_bad_t5_offsets(offsets, match) -> None:
    with raises(match):
        pe_core.t5_relative_bucket(offsets)
