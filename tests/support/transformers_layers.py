"""What transformers' own decoder layers do with positions, read off the modules: shared by the tests that hold
pe_core.model_layers to it (tests/core/test_model_layers.py on tiny models, tests/shared/test_layer_presets.py on
the presets' full-size layers built without weights)."""

from __future__ import annotations

from collections.abc import Sequence


def layer_rows(family: str, config, layers: Sequence, rotary_embedding) -> list[tuple]:
    """Each decoder layer as the model's code runs it: (type, rotary, window, chunk, query scale, inv_freq, factor).

    ``family``: the language model's model_type (``llama4_text``, ``cohere2``, ...); ``config``: its
    transformers configuration; ``layers``: its decoder layers, in order; ``rotary_embedding``: its rotary
    embedding module (one RoPE, or one per layer type as Gemma 3's and 4's)."""
    kinds = list(getattr(config, "layer_types", None) or ["full_attention"] * len(layers))
    rows = []
    for kind, layer in zip(kinds, layers, strict=True):
        attention = getattr(layer, "self_attn", None)
        if attention is None:  # Qwen3.5's linear attention: no positions at all
            rotary = False
        elif family == "cohere2":  # RoPE only where there is a window
            rotary = attention.sliding_window is not None
        elif family == "llama4_text":
            rotary = bool(attention.use_rope)
        else:
            rotary = True
        # Phi-3 passes config.sliding_window to every layer's attention call; the others keep it on the module.
        window = config.sliding_window if family == "phi3" else getattr(attention, "sliding_window", None)
        chunk = config.attention_chunk_size if kind == "chunked_attention" else None
        scale = family == "llama4_text" and bool(attention.attn_temperature_tuning and not attention.use_rope)
        inv_freq, factor = None, 1.0
        if rotary:
            prefix = f"{kind}_" if isinstance(rotary_embedding.rope_type, dict) else ""
            inv_freq = getattr(rotary_embedding, f"{prefix}inv_freq").double().numpy()
            factor = float(getattr(rotary_embedding, f"{prefix}attention_scaling"))
        rows.append((kind, rotary, window, chunk, scale, inv_freq, factor))
    return rows
