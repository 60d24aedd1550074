"""What a one-RoPE page says of a config whose layers run more than one kind of position.

Rotary and Longer contexts show one RoPE, the one ``pe_core.rope_from_config`` reads (a per-layer-type
``rope_parameters``' full-attention entry, Gemma 3's global base and scaling). A model whose layer types differ
(Gemma 3's sliding layers at another base, Command A's global layers without position) is then named, with the
layer type shown, instead of being read as one; the page links to Your model, layer by layer, which opens the
same config (a preset by its key, a pasted config carried in the session under ``CARRIED_CONFIG``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import pe_core
from explorer import rope_methods
from explorer.model_configs import LAYER_PRESETS, load_config
from explorer.settings import format_number
from pe_core.rope.config import language_model_config
from pe_core.rope.layers import layer_rope_config

#: Session key of a pasted config a page hands to Your model, layer by layer.
CARRIED_CONFIG = "_layers_carried_config"
#: The URL value of that page's model key for a carried (or pasted) config.
CARRIED_MODEL = "custom"


def _rope_words(rope: pe_core.RopeConfig) -> str:
    scaling = rope.scaling
    described = "no scaling" if scaling is None else f"{rope_methods.method_short(scaling.method)} ×{scaling.factor:g}"
    return f"base {format_number(rope.base)}, {described}"


def _same(one: pe_core.RopeConfig, other: pe_core.RopeConfig) -> bool:
    return (one.d, one.base, one.scaling) == (other.d, other.base, other.scaling)


def layer_types_note(config: Mapping) -> str | None:
    """The sentence naming a config's layer types and which of them the page's one RoPE is; None when every
    layer does the same with positions (or the config gives no layer count, or cannot be read so)."""
    try:
        shown = pe_core.rope_from_config(config)
    except ValueError:
        return None
    try:
        layers = pe_core.model_layers(config)
    except ValueError:
        return _per_type_without_layers(config)
    counts: dict[tuple[str, bool], int] = {}
    for layer in layers:
        counts[(layer.layer_type, layer.rotary)] = counts.get((layer.layer_type, layer.rotary), 0) + 1
    if len(counts) < 2:
        return None
    parts, matching = [], []
    for (layer_type, rotary), count in counts.items():
        if not rotary:
            parts.append(f"{count} {layer_type} without position")
            continue
        rope = layer_rope_config(config, layer_type)
        parts.append(f"{count} {layer_type} ({_rope_words(rope)})")
        if _same(rope, shown):
            matching.append(layer_type)
    which = (f"the RoPE of its {' and '.join(matching)} layers" if matching
             else "a RoPE none of its layer types runs exactly as read here")
    return (f"This config has {len(counts)} layer types: {'; '.join(parts)}. This page shows one RoPE, {which}; "
            "see every layer on Your model, layer by layer.")


def _per_type_without_layers(config: Mapping) -> str | None:
    """For a config that gives no layer count but one RoPE per layer type (transformers 5's rope_parameters, or
    Gemma 3's rope_local_base_freq): the types, and which one the page shows."""
    text = language_model_config(config)
    parameters = text.get("rope_parameters")
    if isinstance(parameters, Mapping) and parameters and all(isinstance(v, Mapping) for v in parameters.values()):
        kinds = list(parameters)
    elif "rope_local_base_freq" in text:
        kinds = ["full_attention", "sliding_attention"]
    else:
        return None
    return (f"This config gives a RoPE per layer type ({', '.join(kinds)}) but no num_hidden_layers, so which "
            "layer is which is unknown. This page shows one RoPE, the full_attention layers'; add num_hidden_layers "
            "to see every layer on Your model, layer by layer.")


@cache
def preset_note(key: str) -> str | None:
    """``layer_types_note`` of a model preset (its file is read once per process)."""
    return layer_types_note(load_config(key))


def layers_link(key: str | None) -> dict[str, str]:
    """The query of the link to Your model, layer by layer for a preset (its key) or a carried config (None)."""
    return {"layer_model": key if key in LAYER_PRESETS else CARRIED_MODEL}
