r"""A model's positions layer by layer, as transformers 5.18's own model code runs them.

Open models since 2024 rarely run one RoPE: Gemma 3 gives its sliding layers base 10000 and its global
ones base :math:`10^6` with linear x8; gpt-oss alternates 128-token windows with full layers; Llama 4
leaves every fourth layer without a position and scales its queries instead; Command A's global layers
are NoPE; Qwen3.5's linear-attention layers have no position at all; Gemma 4's global layers rotate a
quarter of a 512-wide head ("proportional"). Each family's rules are those of its
``configuration_<model>.py`` and ``modeling_<model>.py`` (docs/transformers-5.18-layers.md names the
lines); any other model type is read as Llama reads it.

- ``rope_init(config, layer_type=, length=)``: what the rotary embedding holds for a layer type,
  :math:`\theta'_i` (transformers' float32 values, as float64) and the attention factor;
- ``model_layers(config)``: one ``LayerPositions`` per decoder layer.

Sliding windows count the query itself: a window of W keys is the keys :math:`q - W + 1 \dots q`
(transformers' mask ``0 <= q - kv < W``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pe_core._validate import MAX_POSITION, check_int
from pe_core.rope.config import RopeConfig, _global_head_dim, language_model_config, rope_from_config
from pe_core.rope.config import _head_dim as _config_head_dim
from pe_core.rope.config import _model_family as _family
from pe_core.rope.scaling import rope_attention_factor, rope_frequencies

#: The layer types transformers names (configuration_utils.ALLOWED_ATTN_LAYER_TYPES, those of these families).
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")
#: Older spellings transformers reads as these.
_LAYER_TYPE_ALIASES = {"attention": "full_attention", "mamba": "linear_attention"}
#: Most decoder layers read (DeepSeek-V3 has 61, Llama 3.1 405B 126).
MAX_LAYERS = 1024
#: Families whose default rope honours partial_rotary_factor (the others' "default" rotate the whole head).
_PARTIAL_DEFAULT = ("phi3", "qwen3_5", "qwen3_5_moe", "qwen3_next")
#: A family's base when its config names none (its config class's default_theta).
_DEFAULT_BASE = {"gpt_oss": 150000.0, "llama4": 500000.0}
#: A family's head size when its config gives none (its config class's default; else hidden // heads).
_DEFAULT_HEAD_DIM = {"qwen3": 128, "gpt_oss": 64, "llama4": 128, "gemma3": 256, "gemma4": 256, "qwen3_5": 256,
                     "qwen3_5_moe": 256, "qwen3_next": 256}


@dataclass(frozen=True)
class LayerPositions:
    """What one decoder layer does with positions.

    ``rotary``: whether it turns q and k (False: Llama 4's NoPE layers, Command A's global layers,
    Qwen3.5's linear-attention layers); ``inv_freq`` and ``attention_factor``: ``rope_init``'s for its
    type (None and 1.0 where it does not rotate); ``window``: the keys a query sees, itself included
    (None: all before it); ``chunk``: Llama 4's attention_chunk_size on its chunked layers;
    ``query_scale``: Llama 4's attention temperature tuning (``llama4_query_scale``) applies.
    """

    index: int
    layer_type: str
    rotary: bool
    inv_freq: np.ndarray | None
    attention_factor: float
    window: int | None
    chunk: int | None
    query_scale: bool


def _int(config: Mapping, key: str, default: int | None, low: int = 1) -> int | None:
    value = config.get(key, default)
    return None if value is None else check_int(key, value, low=low, high=MAX_POSITION)


def layer_types(config: Mapping) -> tuple[str, ...]:
    """Each decoder layer's type, as the config gives it (``layer_types``) or as its family derives it.

    Raises:
        ValueError: no num_hidden_layers, layer_types of another length, a type transformers does not name.
    """
    text = language_model_config(config)
    family = _family(config, text)
    count = check_int("num_hidden_layers", text.get("num_hidden_layers"), low=1, high=MAX_LAYERS) \
        if text.get("num_hidden_layers") is not None else None
    given = text.get("layer_types")
    if given is not None:
        if not isinstance(given, list | tuple) or not all(isinstance(kind, str) for kind in given):
            raise ValueError("layer_types must be a list of layer type names.")
        kinds = tuple(_LAYER_TYPE_ALIASES.get(kind, kind) for kind in given)
        unknown = sorted(set(kinds) - set(LAYER_TYPES))
        if unknown:
            raise ValueError(f"layer_types holds {', '.join(map(repr, unknown))}; transformers names "
                             + ", ".join(LAYER_TYPES) + ".")
        if count is not None and len(kinds) != count:
            raise ValueError(f"layer_types has {len(kinds)} entries and num_hidden_layers is {count}: one type per "
                             "layer.")
        if not 1 <= len(kinds) <= MAX_LAYERS:
            raise ValueError(f"layer_types must hold 1 .. {MAX_LAYERS} entries, got {len(kinds)}.")
        return kinds
    if count is None:
        raise ValueError("The config gives neither num_hidden_layers nor layer_types: how many layers the model has.")
    index = range(count)
    if family == "qwen3":
        window = text.get("sliding_window", 4096) if text.get("use_sliding_window", False) else None
        first = _int(text, "max_window_layers", 28, low=0)
        return tuple("sliding_attention" if window is not None and i >= first else "full_attention" for i in index)
    if family in ("gemma3", "gemma4", "cohere2", "gpt_oss"):
        pattern = _int(text, "sliding_window_pattern", {"gemma3": 6, "gemma4": 6, "cohere2": 4, "gpt_oss": 2}[family])
        kinds = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in index]
        if family == "gemma4":
            kinds[-1] = "full_attention"  # Gemma 4 makes its last layer global
        return tuple(kinds)
    if family == "llama4":
        rope_layers = _llama4_rope_layers(text, count)
        return tuple("chunked_attention" if rotates else "full_attention" for rotates in rope_layers)
    if family in ("qwen3_5", "qwen3_5_moe", "qwen3_next"):
        interval = _int(text, "full_attention_interval", 4)
        return tuple("linear_attention" if (i + 1) % interval else "full_attention" for i in index)
    return ("full_attention",) * count


def _llama4_rope_layers(text: Mapping, count: int) -> tuple[bool, ...]:
    """Llama 4's no_rope_layers (1: the layer uses RoPE, despite the name); empty or absent: every
    no_rope_layer_interval-th layer without."""
    given = text.get("no_rope_layers")
    if not given:
        interval = _int(text, "no_rope_layer_interval", 4)
        return tuple((i + 1) % interval != 0 for i in range(count))
    if not isinstance(given, list | tuple) or len(given) != count or any(flag not in (0, 1) for flag in given):
        raise ValueError(f"no_rope_layers must hold one 0 or 1 per layer ({count}), got {given!r:.80}.")
    return tuple(flag == 1 for flag in given)


def _rope_parameters(text: Mapping, family: str, kind: str) -> dict:
    """The layer type's rope parameters as the family's config class builds them (rope_type, rope_theta...)."""
    parameters = text.get("rope_parameters")
    legacy = text.get("rope_scaling")
    for name, value in (("rope_parameters", parameters), ("rope_scaling", legacy)):
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"{name} must be an object ({{...}}) or null.")
    nested = isinstance(parameters, Mapping) and parameters and all(
        isinstance(value, Mapping) for value in parameters.values())
    if family == "gemma4" and not parameters:
        parameters, nested = {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                              "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                                 "rope_theta": 1000000.0}}, True
    if family == "gemma3" and not nested:
        # transformers 4's spelling: rope_scaling for the global layers only (and only with "rope_type"),
        # rope_theta and rope_local_base_freq for the bases.
        full = {"rope_type": "default", "rope_theta": text.get("rope_theta", 1000000.0)}
        if isinstance(legacy or parameters, Mapping) and "rope_type" in (legacy or parameters):
            full |= dict(legacy or parameters)
        parameters, nested = {"full_attention": full, "sliding_attention": {
            "rope_type": "default", "rope_theta": text.get("rope_local_base_freq", 10000.0)}}, True
    if nested:
        if kind not in parameters:
            raise ValueError(f"rope_parameters holds one dict per layer type ({', '.join(map(repr, parameters))}) "
                             f"and none for {kind!r}; give that layer type its parameters.")
        chosen = dict(parameters[kind])
    else:
        chosen = dict(legacy or parameters or {})
        if family == "gpt_oss" and not chosen:
            chosen = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                      "original_max_position_embeddings": 4096}
        if family != "gemma4":
            chosen.setdefault("rope_theta", text.get("rope_theta", _DEFAULT_BASE.get(family, 10000.0)))
        if text.get("partial_rotary_factor") is not None:
            chosen.setdefault("partial_rotary_factor", text["partial_rotary_factor"])
    if family in ("qwen3_5", "qwen3_5_moe", "qwen3_next"):
        chosen.setdefault("partial_rotary_factor", 0.25)
    chosen.setdefault("rope_type", chosen.get("type", "default"))  # Phi-3's "su": rope_from_config's alias
    if family in ("qwen2_vl", "qwen2_5_vl") and chosen["rope_type"] == "mrope":
        chosen["rope_type"] = "default"  # their config classes' convert_rope_params_to_dict (M-RoPE's sections stay)
    return chosen


def _head_dim(text: Mapping, family: str, kind: str) -> int:
    """The head size a layer type's rope is computed on: the family's own key or default, else as the config
    reader takes it (head_dim, or hidden_size // num_attention_heads)."""
    if family == "deepseek_v3":
        return check_int("qk_rope_head_dim", text.get("qk_rope_head_dim", 64), low=2, high=10**6)
    if family == "gemma4" and kind == "full_attention":
        return _global_head_dim(text)
    if not text.get("head_dim") and family in _DEFAULT_HEAD_DIM:
        return _DEFAULT_HEAD_DIM[family]
    return _config_head_dim(text)


def rope_init(config: Mapping, *, layer_type: str | None = None, length: int | None = None
              ) -> tuple[np.ndarray, float]:
    r"""What the model's rotary embedding holds for this config and layer type: :math:`\theta'_i` and the
    attention factor (cos and sin are multiplied by it).

    The rope parameters of the layer type as the family's config class builds them (both spellings:
    transformers 4's ``rope_theta`` / ``rope_scaling`` / Gemma 3's ``rope_local_base_freq``, and 5's
    ``rope_parameters``, flat or one dict per layer type), then transformers' init function of its
    rope_type with the family's dimension:

    - "default": :math:`\theta_i = b^{-2i/D}`, D the head size (Phi-3, Qwen3.5: ``int(head_dim * p)``,
      p = ``partial_rotary_factor``; the other families' default rotates the whole head);
    - "linear", "dynamic", "yarn", "llama3", "longrope": ``rope_frequencies`` on D = ``int(head_dim * p)``;
    - "proportional" (Gemma 4's global layers, D = ``global_head_dim``): ``rope_frequencies`` on the whole
      head, :math:`\theta_i = b^{-2i/D} / s` for :math:`i < r = \lfloor p D / 2\rfloor`, 0 for the other
      pairs (left unrotated): the exponent runs over the whole head (``pe_core.rope.methods.proportional``).

    DeepSeek rotates ``qk_rope_head_dim`` coordinates; Gemma 4's global layers ``global_head_dim`` (512).

    Args:
        config: a config.json as a dict (a multimodal one is read through its ``text_config``).
        layer_type: one of the model's layer types (``layer_types``); None: "full_attention" when the
            model has such layers, else its first type.
        length: the sequence length, for the methods that depend on it (dynamic, longrope).

    Returns:
        (inv_freq float64 of float32 values, (D/2,); attention factor).

    Raises:
        ValueError: a layer type the model does not have, or one without rope parameters; a rope_type
            transformers does not have; a missing or wrong key (what to fix is named).

    Example:
        >>> inv_freq, factor = rope_init({"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 8},
        ...                              layer_type="sliding_attention")
        >>> inv_freq.round(4).tolist(), factor
        ([1.0, 0.1, 0.01, 0.001], 1.0)

    Reference: transformers 5.18 ``modeling_rope_utils.ROPE_INIT_FUNCTIONS`` and each family's
    configuration and modeling code (docs/transformers-5.18-layers.md).
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a JSON object (a dict), got {type(config).__name__}.")
    text = language_model_config(config)
    family = _family(config, text)
    kinds = layer_types(config) if (text.get("num_hidden_layers") is not None or text.get("layer_types")) else (
        "full_attention",)
    if layer_type is None:
        layer_type = "full_attention" if "full_attention" in kinds else kinds[0]
    if layer_type not in kinds:
        raise ValueError(f"layer_type {layer_type!r} is not one of this model's: {', '.join(sorted(set(kinds)))}.")
    return _layer_rope(text, family, layer_type, length)


def _layer_rope_config(text: Mapping, family: str, layer_type: str) -> RopeConfig:
    """The layer type's RoPE (d, base, scaling) for a layer type known to be the model's: its parameters as the
    family builds them, read by rope_from_config over the family's head size."""
    parameters = _rope_parameters(text, family, layer_type)
    if parameters["rope_type"] == "default" and family not in _PARTIAL_DEFAULT:
        parameters.pop("partial_rotary_factor", None)
    reading = {"head_dim": _head_dim(text, family, layer_type), "rope_parameters": parameters,
               "max_position_embeddings": text.get("max_position_embeddings")}
    if family == "phi3" and text.get("original_max_position_embeddings") is not None:
        reading["original_max_position_embeddings"] = text["original_max_position_embeddings"]
    return rope_from_config(reading)


def _layer_rope(text: Mapping, family: str, layer_type: str, length: int | None) -> tuple[np.ndarray, float]:
    """rope_init for a layer type known to be the model's."""
    rope = _layer_rope_config(text, family, layer_type)
    inv_freq = rope_frequencies(rope.d, rope.base, scaling=rope.scaling, length=length)
    return inv_freq.astype(np.float32).astype(np.float64), rope_attention_factor(rope.scaling, length)


def model_layers(config: Mapping) -> tuple[LayerPositions, ...]:
    """One ``LayerPositions`` per decoder layer, in order, as the family's modeling code runs it.

    - which layers rotate: all, but Llama 4's ``no_rope_layers`` zeros, Command A's (cohere2) full
      layers and Qwen3.5's linear-attention layers;
    - window: ``sliding_window`` on sliding layers (Phi-3: on every layer when set); chunk: Llama 4's
      ``attention_chunk_size`` on its chunked layers; query scale: Llama 4's NoPE layers when
      ``attn_temperature_tuning`` is on.

    Raises:
        ValueError: as ``layer_types`` and ``rope_init``; a window or chunk below 1.

    Example:
        >>> [layer.rotary for layer in model_layers({"model_type": "cohere2", "num_hidden_layers": 4,
        ...                                          "head_dim": 8, "rope_theta": 50000.0})]
        [True, True, True, False]
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a JSON object (a dict), got {type(config).__name__}.")
    text = language_model_config(config)
    family = _family(config, text)
    kinds = layer_types(config)
    window = _int(text, "sliding_window", None)
    if family == "qwen3" and not text.get("use_sliding_window", False):
        window = None
    chunk = _int(text, "attention_chunk_size", 8192) if family == "llama4" else None
    rope_layers = _llama4_rope_layers(text, len(kinds)) if family == "llama4" else None
    tuning = bool(text.get("attn_temperature_tuning", True)) if family == "llama4" else False
    ropes = {kind: _layer_rope(text, family, kind, None) for kind in dict.fromkeys(kinds) if kind != "linear_attention"}
    layers = []
    for index, kind in enumerate(kinds):
        if rope_layers is not None:
            rotary = rope_layers[index]
        elif family == "cohere2":
            rotary = kind == "sliding_attention"
        else:
            rotary = kind != "linear_attention"
        inv_freq, factor = ropes[kind] if rotary else (None, 1.0)
        seen = window if kind == "sliding_attention" or family == "phi3" else None  # Phi-3: every layer
        layers.append(LayerPositions(index, kind, rotary, inv_freq, factor, seen,
                                     chunk if kind == "chunked_attention" else None, tuning and not rotary))
    return tuple(layers)


def layer_rope_config(config: Mapping, layer_type: str) -> RopeConfig:
    """The RoPE a layer type runs, as ``rope_from_config`` reads it: d (the rotated coordinates; a proportional
    head's whole head), base, scaling. Its frequencies are ``rope_init``'s.

    Raises:
        ValueError: as ``rope_init``.
    """
    text = language_model_config(config)
    kinds = layer_types(config)
    if layer_type not in kinds:
        raise ValueError(f"layer_type {layer_type!r} is not one of this model's: {', '.join(sorted(set(kinds)))}.")
    return _layer_rope_config(text, _family(config, text), layer_type)


def layer_head_dim(config: Mapping, layer_type: str) -> int:
    """The head size of a layer type's queries and keys on which its RoPE runs (Gemma 4's global layers:
    ``global_head_dim``; DeepSeek's MLA: ``qk_rope_head_dim``, the part of its head that rotates)."""
    text = language_model_config(config)
    return _head_dim(text, _family(config, text), layer_type)
