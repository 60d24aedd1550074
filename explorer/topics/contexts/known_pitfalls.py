"""Longer contexts' pitfalls: what bit real users of a method (transformers #38224 on YaRN's factor,
llama-models #166 on Meta's reference llama3 code, dynamic NTK's lengths, where DeepSeek puts YaRN's
factor), each a paragraph for the views that meet it."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

import pe_core
from explorer.topics.contexts.analysis import attention_factor, coverage, pairs_text
from explorer.topics.contexts.view import ContextView

#: Meta's reference apply_scaling (llama-models, models/llama3/reference_impl/model.py) hard-codes these.
META_LLAMA3 = {"factor": 8.0, "low_freq": 1.0, "high_freq": 4.0, "trained": 8192}


def _yarn_factor_pitfall(view: ContextView) -> str:
    """transformers #38224: a YaRN factor replaced by max_position_embeddings / original."""
    L, L0, s = view.target, view.trained, view.factor
    if not view.max_positions:
        return ""
    ratio = view.max_positions / L0
    if math.isclose(ratio, s):
        return ""
    if ratio >= 1:
        old = coverage(replace(view, factor=ratio, attention_factor=0.0), "yarn")
        then = (f"at L = {L:,} tokens {pairs_text(int(old.unseen.sum()))} would meet angles unseen in "
                f"training, against {int(coverage(view).unseen.sum())} with factor {s:g}")
    else:
        then = "a factor below 1 would shrink the context instead"
    return (
        f"**YaRN's factor and transformers #38224.** transformers releases of 2025 before PR #40320 replaced "
        f"a YaRN factor by max_position_embeddings / original_max_position_embeddings whenever rope_scaling "
        f"holds original_max_position_embeddings: here {view.max_positions:,} / {L0:,} = {ratio:g} instead "
        f"of {s:g}: {then}. Qwen's suggested long-context dict leaves max_position_embeddings at 32,768 and "
        f"so meant factor 1; with such a release, set max_position_embeddings to {round(s * L0):,}."
    )


def _meta_reference_pitfall(view: ContextView) -> str:
    """llama-models #166: Meta's reference apply_scaling hard-codes Llama 3.1's parameters."""
    L, L0, s = view.target, view.trained, view.factor
    meta = (META_LLAMA3["factor"], META_LLAMA3["low_freq"], META_LLAMA3["high_freq"], META_LLAMA3["trained"])
    if (s, view.low_freq, view.high_freq, L0) == meta:
        return ""
    reference = pe_core.RopeScaling("llama3", META_LLAMA3["factor"], META_LLAMA3["trained"])
    theirs = pe_core.angle_coverage(view.d, view.base, L0, L, scaling=reference)
    ours = coverage(view)
    differ = int(np.sum(~np.isclose(theirs.scaled, ours.scaled, rtol=1e-12, atol=0.0)))
    return (
        f"**Meta's reference apply_scaling and llama-models #166.** Meta's reference code hard-codes "
        f"scale_factor 8, low_freq_factor 1, high_freq_factor 4 and old_context_len 8192; this "
        f"configuration says factor {s:g}, {view.low_freq:g}, {view.high_freq:g} and {L0:,} (Llama 3.2's "
        f"config says 32). Code copied from the reference gives {differ} of the {view.pairs} pairs other "
        f"frequencies: at L = {L:,}, angles unseen in training in {pairs_text(int(theirs.unseen.sum()))} "
        f"there, in {int(ours.unseen.sum())} here."
    )


def _dynamic_length_pitfall(view: ContextView) -> str:
    """Dynamic NTK reads max_position_embeddings, and its frequencies follow the sequence length."""
    L0 = view.trained
    start = view.max_positions or L0
    given = f"({start:,})" if view.max_positions else f"(none given here, so this page takes L0, {L0:,})"
    text = (
        f"**Dynamic NTK reads max_position_embeddings.** transformers' dynamic NTK divides by "
        f"max_position_embeddings {given}, never by original_max_position_embeddings, and changes nothing "
        "until the sequence is longer than that"
    )
    if start > L0:
        at = pe_core.angle_coverage(view.d, view.base, L0, start)
        text += (f": this model was trained on {L0:,}, so up to {start:,} tokens it runs plain RoPE, and at "
                 f"{start:,} angles unseen in training in {pairs_text(int(at.unseen.sum()))}")
    return text + (". Its frequencies also follow the sequence length, so keys cached at one length "
                   "were turned with other frequencies than the queries that meet them later.")


def _deepseek_mscale_pitfall(view: ContextView) -> str:
    """DeepSeek-V3 puts YaRN's mscale_all_dim factor in its softmax scale, not in cos and sin."""
    if view.mscale_all_dim <= 0:
        return ""
    s = view.factor
    scale = 0.1 * view.mscale_all_dim * math.log(s) + 1 if s > 1 else 1.0
    return (
        f"**Where DeepSeek puts YaRN's factor.** With mscale and mscale_all_dim both given, cos and sin carry "
        f"a = m(s, mscale) / m(s, mscale_all_dim) = {attention_factor(view, 'yarn'):.6g}; DeepSeek-V3's "
        f"attention (its code, and transformers' yarn_apply_mscale) multiplies its softmax scale by "
        f"m(s, mscale_all_dim)² = {scale * scale:.6g} instead, with m(s, a) = 0.1 a ln s + 1."
    )


#: The pitfalls that bit real users of a method, by method: each returns its paragraph for a view
#: that meets it ("" otherwise).
PITFALLS = {
    "yarn": (_yarn_factor_pitfall, _deepseek_mscale_pitfall),
    "llama3": (_meta_reference_pitfall,),
    "dynamic": (_dynamic_length_pitfall,),
}


def pitfalls(view: ContextView) -> list[str]:
    """The pitfalls that bit real users, for the settings that meet them (one paragraph each)."""
    return [note for pitfall in PITFALLS.get(view.method, ()) if (note := pitfall(view))]
