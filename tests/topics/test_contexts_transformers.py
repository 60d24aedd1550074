"""The Longer contexts page against transformers 5.18 and PyTorch themselves.

Each method the page draws, built from the page's own settings (a view), is given to
transformers as a Llama configuration with those rope_parameters: its ROPE_INIT_FUNCTIONS must
give the page's frequencies and attention factor, its LlamaRotaryEmbedding and
apply_rotary_pos_emb the page's all-ones score by offset, and the page's PyTorch snippet its
numbers. transformers has no static NTK-aware rope_type (pe_core's "ntk"): that one is checked
against its formula in tests/topics/test_contexts.py. Without torch or transformers this module
skips, except under PE_REQUIRE_TORCH=1 (tests/needs_torch.py).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from support.needs_torch import import_or_skip
from support.snippets import run_snippet

from explorer.model_configs import MODEL_CONFIGS
from explorer.topics import contexts
from explorer.topics.contexts import DEFAULT_VIEW, ContextView

torch = import_or_skip("torch")
transformers = import_or_skip("transformers")
from transformers import LlamaConfig  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb  # noqa: E402

transformers.logging.set_verbosity_error()

VIEWS = {
    **{model.key: contexts.preset_view(model.key) for model in MODEL_CONFIGS},
    "default": DEFAULT_VIEW,
    "dynamic-longer": replace(DEFAULT_VIEW, method="dynamic", factor=2.0, max_positions=8192, target=65536),
    "yarn-odd": replace(DEFAULT_VIEW, beta_fast=20.5, beta_slow=2.25, truncate=False, factor=6.5, base=123456.7),
    "yarn-given-factor": replace(DEFAULT_VIEW, attention_factor=1.5),
    "phi-short": replace(contexts.preset_view("phi-3-mini-128k-instruct"), target=4096),
    "gemma-4-global": replace(DEFAULT_VIEW, method="proportional", d=512, base=1e6, factor=2.0, partial=0.25),
}


def rope_parameters(view: ContextView, method: str) -> dict:
    """The rope_parameters of a config.json that asks transformers for ``method`` as the page sets it."""
    own = method == view.method
    parameters = {"rope_type": "default" if method == "none" else method, "rope_theta": view.base}
    if method != "none":
        parameters["factor"] = view.factor
    if method in ("yarn", "llama3", "longrope"):
        parameters["original_max_position_embeddings"] = view.trained
    if method == "yarn":
        parameters |= {"beta_fast": view.beta_fast, "beta_slow": view.beta_slow, "truncate": view.truncate}
        if own and view.mscale and view.mscale_all_dim:
            parameters |= {"mscale": view.mscale, "mscale_all_dim": view.mscale_all_dim}
    if method == "llama3":
        parameters |= {"low_freq_factor": view.low_freq, "high_freq_factor": view.high_freq}
    if method == "longrope":
        parameters |= {"short_factor": list(view.short_factor), "long_factor": list(view.long_factor)}
    if method == "proportional":
        parameters["partial_rotary_factor"] = view.partial
    if own and view.attention_factor and method in ("yarn", "longrope"):
        parameters["attention_factor"] = view.attention_factor
    return parameters


def hf_config(view: ContextView, method: str) -> LlamaConfig:
    # dynamic divides by max_position_embeddings: the page's max_positions, else its trained length.
    max_positions = (view.max_positions or view.trained) if method == "dynamic" else max(view.target, view.trained)
    return LlamaConfig(hidden_size=2 * view.d, num_attention_heads=2, head_dim=view.d,
                       max_position_embeddings=max_positions, rope_parameters=rope_parameters(view, method))


def float32_rtol(base: float) -> float:
    """transformers computes base ** (2i/d) in float32: the exponent's rounding, times ln(base)."""
    return (math.log(base) + 4) * 2.0**-23


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_method_is_what_transformers_computes(name: str) -> None:
    view = VIEWS[name]
    for method in contexts.available_methods(view):
        if method in ("none", "ntk"):  # no init function: default is base ** -(2i/d); ntk is not a rope_type
            continue
        inv_freq, attention = ROPE_INIT_FUNCTIONS[method](hf_config(view, method), "cpu", seq_len=view.target)
        c = contexts.coverage(view, method)
        np.testing.assert_allclose(c.scaled, inv_freq.double().numpy(), rtol=float32_rtol(view.base), err_msg=method)
        assert contexts.attention_factor(view, method) == pytest.approx(attention, rel=1e-12), method


@pytest.mark.parametrize("name", ["default", "deepseek-v3", "phi-3-mini-128k-instruct", "llama-3.2-1b",
                                  "dynamic-longer", "yarn-given-factor", "gemma-4-global"])
def test_the_score_by_offset_is_transformers_rotated_all_ones(name: str) -> None:
    """q = k = ones, rotated by transformers' own embedding and apply_rotary_pos_emb (its cos and
    sin carry the attention factor): q at position m against k at position 0."""
    view = VIEWS[name]
    count = 1500
    config = hf_config(view, view.method)
    rotary = LlamaRotaryEmbedding(config)
    # The embedding picks its frequencies for the sequence it is given; the page's are those of the target.
    positions = torch.arange(count)[None, :]
    if view.method in ("dynamic", "longrope"):
        inv_freq, attention = ROPE_INIT_FUNCTIONS[view.method](config, "cpu", seq_len=view.target)
        rotary.inv_freq, rotary.attention_scaling = inv_freq, attention
        rotary.original_inv_freq = inv_freq
        rotary.rope_type = "default"  # hold these frequencies whatever the length of this call
    cos, sin = rotary(torch.zeros(1, count, view.d, dtype=torch.float64), positions)
    ones = torch.ones(1, 1, count, view.d, dtype=torch.float64)
    q, k = apply_rotary_pos_emb(ones, ones, cos.double(), sin.double())
    theirs = (q[0, 0] @ k[0, 0, 0]).numpy()
    ours = contexts.dot_curves(view)[1][:count]
    # transformers' float32 frequencies and angles: 2e-4 to 7e-4 apart here, out of scores up to a^2 d.
    np.testing.assert_allclose(theirs, ours, atol=4e-3)
    assert ours[0] == pytest.approx(contexts.attention_factor(view, view.method) ** 2 * view.d)


@pytest.mark.parametrize("name", ["default", "phi-3-mini-128k-instruct", "deepseek-v3", "dynamic-longer",
                                  "gemma-4-global"])
def test_torch_snippet_gives_the_pages_numbers(name: str) -> None:
    view = VIEWS[name]
    result = run_snippet(contexts.contexts_code(view, "torch"))["result"]
    before, after = contexts.dot_curves(view)
    tables = {
        "contexts_coverage": contexts.coverage_table(view), "contexts_pairs": contexts.pairs_table(view),
        "contexts_methods": contexts.methods_table(view), "contexts_dot": contexts.dot_table(view, before, after),
        "contexts_yarn_ramp": contexts.ramp_table(view),
    }
    assert set(result) == set(tables)
    for key, table in tables.items():
        got = result[key].numpy() if hasattr(result[key], "numpy") else np.asarray(result[key])
        atol = 1e-13 * view.target * view.pairs if key == "contexts_dot" else 0.0
        np.testing.assert_allclose(got, table.to_numpy(dtype=np.float64), rtol=1e-12, atol=atol, err_msg=key)
