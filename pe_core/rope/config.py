r"""A model's RoPE, read from its config.json as transformers reads it.

``rope_from_config`` takes the dict ``json.load`` gives for a Hugging Face config.json and
returns the four things the rotary functions need: the rotary dimension d, the base, the
scaling and the model's maximum length. It follows transformers 5.18
(``modeling_rope_utils``: ``RotaryEmbeddingConfigMixin.standardize_rope_params`` and the
``_compute_*_parameters`` functions), in both spellings a config.json is found in:

- transformers 4: ``rope_theta`` at the top, ``rope_scaling`` a dict with ``"type"`` (older)
  or ``"rope_type"``, or null;
- transformers 5: ``rope_parameters``, with ``rope_theta`` (and ``partial_rotary_factor``)
  inside it, possibly one dict per layer type (Gemma 3: ``"full_attention"`` and
  ``"sliding_attention"``).

The vision-language models' M-RoPE (Qwen2-VL to Qwen3.5) keeps its pair sections in the same dict
(``mrope_section``, ``mrope_interleaved``): a text token has the same position on its three axes, so
its RoPE is the plain RoPE read here; the sections are kept in ``RopeConfig.mrope_section`` for
``mrope_cache``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pe_core._validate import MAX_POSITION, check_base, check_int, check_real
from pe_core.rope.methods import FROM_LENGTHS, REQUIRED, rope_method, rope_method_names
from pe_core.rope.mrope import check_mrope_section
from pe_core.rope.scaling import RopeScaling, _check_scaling, check_rope_base, check_rope_d

#: Keys whose presence says a config describes a rotary model (even with a null value:
#: Llama 2's config.json has "rope_scaling": null and no rope_theta).
ROTARY_KEYS = (
    "rope_theta", "rope_scaling", "rope_parameters", "rotary_dim", "rotary_pct", "rotary_emb_base",
    "partial_rotary_factor", "qk_rope_head_dim",
)
#: transformers' default_theta, used when a rotary config names no base (Llama 2, GPT-J).
DEFAULT_ROPE_BASE = 10000.0
#: Phi-3's first checkpoints call LongRoPE "su" (their remote code); transformers 5 calls it "longrope".
_METHOD_ALIASES = {"su": "longrope"}
_BASE_USUAL = "Llama 2 uses 10000, Llama 3 500000."
#: The M-RoPE families of transformers 5.18 and whether their rotary embedding interleaves the sections:
#: its code decides, not the config's mrope_interleaved (which no model of transformers reads).
_MROPE_INTERLEAVED = {"qwen2_vl": False, "qwen2_5_vl": False, "qwen3_vl": True, "qwen3_vl_moe": True,
                      "qwen3_5": True, "qwen3_5_moe": True}
#: The families whose config class reads rope_type "mrope" (as "default"), and the sections their rotary
#: embedding takes when the config names none.
_MROPE_TYPE_SECTION = {"qwen2_vl": (16, 24, 24), "qwen2_5_vl": (16, 24, 24)}


@dataclass(frozen=True)
class RopeConfig:
    """A model's RoPE: rotary dimension, base, scaling (or None) and maximum length (or None), and
    ``notes``: what the config reader said of the config beyond its values (a rope_type that is
    not transformers', and what it was read as).

    ``d`` is the number of rotated coordinates of a head (head_dim times partial_rotary_factor,
    GPT-J's rotary_dim, DeepSeek's qk_rope_head_dim), even; ``max_length`` is the config's
    max_position_embeddings (GPT-J: n_positions). ``mrope_section``: a vision-language model's M-RoPE
    sections (temporal, height, width pair counts summing to d/2), or None; ``mrope_interleaved``:
    whether they interleave (Qwen3-VL) rather than follow each other (Qwen2-VL). Text positions are
    plain RoPE whatever they are; ``mrope_cache`` takes them for images and video.

    Example:
        >>> RopeConfig(128, 500000.0).d
        128
    """

    d: int
    base: float
    scaling: RopeScaling | None = None
    max_length: int | None = None
    notes: tuple[str, ...] = ()
    mrope_section: tuple[int, int, int] | None = None
    mrope_interleaved: bool = False

    def __post_init__(self) -> None:
        d = check_rope_d(self.d)
        scaling = _check_scaling(self.scaling)
        if scaling is not None:
            rope_method(scaling.method).validate(scaling, d)
        max_length = self.max_length
        if max_length is not None:
            max_length = check_int("max_length (max_position_embeddings)", max_length, low=1, high=MAX_POSITION)
        interleaved = self.mrope_interleaved
        if not isinstance(interleaved, bool):
            raise ValueError(f"mrope_interleaved must be true or false, got {type(interleaved).__name__} "
                             f"{interleaved!r}.")
        section = self.mrope_section
        if section is not None:
            section = check_mrope_section(section, d, interleaved=interleaved)
        elif interleaved:
            raise ValueError("mrope_interleaved is true but there is no mrope_section to interleave: give the "
                             "sections (Qwen3-VL: [24, 20, 20] for d = 128), or drop mrope_interleaved.")
        object.__setattr__(self, "mrope_section", section)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "base", check_rope_base(self.base))
        object.__setattr__(self, "max_length", max_length)


def _dict_or_none(name: str, value: object) -> Mapping | None:
    if value is None or isinstance(value, Mapping):
        return value
    raise ValueError(f"{name} must be an object ({{...}}) or null, got {type(value).__name__} {value!r}.")


def language_model_config(config: Mapping) -> Mapping:
    """The language model's own config of a multimodal one (Gemma 3, Llama 4: "text_config"), else the config: the
    keys the config reader and model_layers read."""
    text = config.get("text_config")
    if isinstance(text, Mapping) and not any(key in config for key in ("head_dim", "hidden_size", "n_embd")):
        return text
    return config


def _model_family(config: Mapping, text: Mapping) -> str:
    """The model type of a config (its language model's), without the "_text" of gemma4_text; "llama" when none."""
    name = str(text.get("model_type") or config.get("model_type") or "llama")
    return name.removesuffix("_text")


def _global_head_dim(text: Mapping) -> int:
    """Gemma 4's full-attention head size: global_head_dim (transformers' default 512), not its head_dim."""
    return check_int("global_head_dim", text.get("global_head_dim", 512), low=2, high=10**6)


def _rope_parameters(config: Mapping, layer_type: str | None) -> dict:
    """The dict of RoPE parameters, as transformers picks it: rope_scaling if it has anything, else rope_parameters."""
    scaling = _dict_or_none("rope_scaling", config.get("rope_scaling"))
    parameters = _dict_or_none("rope_parameters", config.get("rope_parameters"))
    chosen = scaling or parameters or {}
    nested = {key: value for key, value in chosen.items() if isinstance(value, Mapping) or value is None}
    if len(nested) == len(chosen) and any(isinstance(value, Mapping) for value in nested.values()):
        # One dict per layer type (transformers 5's Gemma 3, gpt-oss with layer_types...).
        wanted = layer_type or "full_attention"
        if not isinstance(nested.get(wanted), Mapping):
            raise ValueError(
                f"rope_parameters holds one dict per layer type ({', '.join(map(repr, nested))}) "
                f"and none for {wanted!r}; pass layer_type= one of them."
            )
        return dict(nested[wanted])
    if layer_type not in (None, "full_attention"):
        raise ValueError(
            f"layer_type={layer_type!r} given, but this config has one RoPE for every layer "
            "(a transformers 4 Gemma 3 config keeps its sliding layers' base in rope_local_base_freq)."
        )
    return dict(chosen)


def _base(config: Mapping, parameters: Mapping) -> float:
    for where, source, key in (
        ("rope_parameters.rope_theta", parameters, "rope_theta"),
        ("rope_theta", config, "rope_theta"),
        ("rotary_emb_base", config, "rotary_emb_base"),
    ):
        if source.get(key) is not None:
            return check_base(source[key], f"{where} (the RoPE base)", "the base", _BASE_USUAL)
    return DEFAULT_ROPE_BASE


def _head_dim(config: Mapping) -> int:
    if config.get("head_dim"):
        return check_int("head_dim", config["head_dim"], low=1, high=10**6)
    hidden_key = next((key for key in ("hidden_size", "n_embd") if config.get(key) is not None), None)
    heads_key = next((key for key in ("num_attention_heads", "n_head") if config.get(key) is not None), None)
    if hidden_key is None or heads_key is None:
        found = (("hidden_size", hidden_key), ("num_attention_heads", heads_key))
        missing = [name for name, key in found if key is None]
        raise ValueError(
            "The config gives no head size: it needs head_dim, or hidden_size and num_attention_heads "
            f"(missing: {', '.join(missing)})."
        )
    hidden = check_int(hidden_key, config[hidden_key], low=1, high=10**7)
    heads = check_int(heads_key, config[heads_key], low=1, high=10**5)
    if hidden % heads:
        raise ValueError(
            f"{hidden_key} ({hidden}) is not a multiple of {heads_key} ({heads}); give head_dim explicitly."
        )
    return hidden // heads


def _rotary_fraction(config: Mapping, parameters: Mapping) -> float:
    """partial_rotary_factor as transformers takes it: inside the rope parameters, else at the top of the
    config (GPT-NeoX's rotary_pct too), else 1."""
    fraction = next(
        (source[key] for source, key in (
            (parameters, "partial_rotary_factor"), (config, "partial_rotary_factor"), (config, "rotary_pct"),
        ) if source.get(key) is not None),
        1.0,
    )
    fraction = check_real("partial_rotary_factor (or rotary_pct)", fraction)
    if not 0 < fraction <= 1:
        raise ValueError(f"partial_rotary_factor (or rotary_pct) must lie in (0, 1], got {fraction!r}.")
    return fraction


def _rotary_dim(config: Mapping, parameters: Mapping, *, whole_head: bool, head_dim: int | None) -> int:
    """The number of rotated coordinates of a head (of ``head_dim`` when the family sets it, else the config's),
    as transformers' int(head_dim * partial_rotary_factor); the whole head for a method that applies
    partial_rotary_factor itself (proportional)."""
    for key in ("qk_rope_head_dim", "rotary_dim"):
        if config.get(key) is not None:
            return check_rope_d(check_int(key, config[key], low=1, high=10**6))
    head_dim = head_dim or _head_dim(config)
    fraction = 1.0 if whole_head else _rotary_fraction(config, parameters)
    d = int(head_dim * fraction)
    if d < 2 or d % 2:
        raise ValueError(
            f"head_dim {head_dim} x partial_rotary_factor {fraction:g} gives {d} rotated coordinates; RoPE needs "
            "an even number, at least 2."
        )
    return check_rope_d(d)


def _max_length(config: Mapping) -> int | None:
    for key in ("max_position_embeddings", "n_positions"):
        if config.get(key) is not None:
            return check_int(key, config[key], low=1, high=MAX_POSITION)
    return None


def _original_length(method: str, source: str | None, config: Mapping, parameters: Mapping,
                     max_length: int | None) -> int | None:
    """The method's trained length L0, from the config key its entry names."""
    if source is None:
        return None
    if source == "max_position_embeddings":
        # transformers' dynamic NTK divides by max_position_embeddings, never by the original length.
        if max_length is None:
            raise ValueError(f"{method} scaling needs max_position_embeddings, which this config does not give.")
        return max_length
    # transformers gives a top-level original_max_position_embeddings priority (Phi-3 keeps it
    # there), then the one inside rope_scaling, then max_position_embeddings.
    original = next(
        (value for value in (config.get("original_max_position_embeddings"),
                             parameters.get("original_max_position_embeddings"), max_length)
         if value is not None),
        None,
    )
    if original is None:
        raise ValueError(
            f"{method} scaling needs original_max_position_embeddings (or max_position_embeddings), "
            "which this config does not give."
        )
    return check_int("original_max_position_embeddings", original, low=1, high=MAX_POSITION)


def _mrope(family: str, parameters: Mapping) -> tuple[object, bool, tuple[str, ...]]:
    """M-RoPE's sections (unchecked: RopeConfig checks them against d), whether they interleave, and notes.

    The sections are the config's ``mrope_section``; a rope_type "mrope" without them takes the ones
    transformers' Qwen2-VL and Qwen2.5-VL take (the only families whose config reads "mrope"); interleaving
    is the family's where transformers knows it (its code ignores ``mrope_interleaved``), else the flag.
    """
    name = parameters.get("rope_type", parameters.get("type"))
    section = parameters.get("mrope_section")
    flag = parameters.get("mrope_interleaved")
    if flag is not None and not isinstance(flag, bool):
        raise ValueError(f"mrope_interleaved must be true or false, got {type(flag).__name__} {flag!r}.")
    if section is None and name == "mrope":
        if family not in _MROPE_TYPE_SECTION:
            raise ValueError(
                "rope_type 'mrope' is not one this explorer computes without mrope_section: M-RoPE gives its pair "
                "sections (temporal, height, width) in rope_scaling.mrope_section, e.g. [16, 24, 24] for d = 128 "
                "(transformers takes 'mrope' with default sections in Qwen2-VL and Qwen2.5-VL only)."
            )
        section = _MROPE_TYPE_SECTION[family]
    if section is None:
        return None, False, ()
    notes: list[str] = []
    if name == "mrope" and family not in _MROPE_TYPE_SECTION:
        notes.append("rope_type 'mrope' is read by transformers' Qwen2-VL and Qwen2.5-VL configs only (as "
                     "'default'); read here as 'default' with its mrope_section.")
    if family in _MROPE_INTERLEAVED:
        interleaved = _MROPE_INTERLEAVED[family]
        if flag is not None and flag != interleaved:
            notes.append(f"mrope_interleaved is {str(flag).lower()}, but transformers' {family} runs "
                         f"{'interleaved' if interleaved else 'blocked'} sections whatever it says; read as it runs.")
    else:
        interleaved = bool(flag)
    return section, interleaved, tuple(notes)


def _scaling(config: Mapping, parameters: Mapping, max_length: int | None) -> RopeScaling | None:
    name = parameters.get("rope_type", parameters.get("type", "default"))
    if name is None or name in ("default", "mrope"):  # "mrope": _mrope has read its sections
        return None
    name = _METHOD_ALIASES.get(name, name)
    if name not in rope_method_names():
        raise ValueError(
            f"rope_type {name!r} is not one this explorer computes; it reads default, "
            + ", ".join(rope_method_names()) + "."
        )
    method = rope_method(name)
    original = _original_length(name, method.original_length, config, parameters, max_length)
    options: dict[str, object] = {}
    for key in method.config_keys:
        if key.present and key.name not in parameters:
            raise ValueError(
                f"{name} scaling needs rope_scaling.{key.name} (transformers 5 refuses a {name} config without the "
                "key; null lets it derive max_position_embeddings / original_max_position_embeddings)."
            )
        value = parameters.get(key.name)
        if key.name == "partial_rotary_factor":
            # transformers moves a top-level partial_rotary_factor into the rope parameters (standardize_rope_params).
            value = _rotary_fraction(config, parameters)
        if value is not None:
            options[key.name] = value
        elif key.default is REQUIRED:
            raise ValueError(f"{name} scaling needs rope_scaling.{key.name}, which this config does not give.")
        elif key.default is FROM_LENGTHS:
            # transformers: factor = max_position_embeddings / original_max_position_embeddings.
            if max_length is None:
                raise ValueError(f"{name} scaling without a factor needs max_position_embeddings to derive it.")
            options[key.name] = max_length / original
    # A factor with a default of its own (proportional's 1) is absent from options when the config gives none.
    return RopeScaling(name, original_length=original, **options)


def rope_from_config(config: Mapping, *, layer_type: str | None = None) -> RopeConfig:
    r"""A model's RoPE from its config.json (the dict ``json.load`` returns), as transformers reads it.

    - base: ``rope_theta`` (inside ``rope_parameters`` in transformers 5, at the top in 4),
      GPT-NeoX's ``rotary_emb_base``; a rotary config with none (Llama 2, GPT-J) gets
      transformers' default 10000. A config with none of ``ROTARY_KEYS`` is not a RoPE model
      (GPT-2, BERT) and raises.
    - d: DeepSeek's ``qk_rope_head_dim`` (MLA rotates 64 of its 192 query/key coordinates) or
      GPT-J's ``rotary_dim`` (64 of 256) when given; else ``head_dim`` (or ``hidden_size //
      num_attention_heads``; GPT-J's ``n_embd // n_head``) times ``partial_rotary_factor``
      (GPT-NeoX's ``rotary_pct``: 20B rotates 24 of 96), truncated to an integer as
      transformers does. rotary_dim and rotary_pct are read because GPT-J's and GPT-NeoX's
      public configs use them and no other key. A "proportional" rope (Gemma 4's global layers)
      applies partial_rotary_factor itself over the whole head: its d is ``head_dim`` and the
      share goes into its scaling's ``partial_rotary_factor`` (1 when the config gives none, as in
      transformers). Gemma 4's full-attention layers (the default layer type) have a head of
      ``global_head_dim`` (512 when absent), not ``head_dim``.
    - max_length: ``max_position_embeddings`` (GPT-J: ``n_positions``), or None.
    - scaling: ``rope_scaling`` when it is a non-empty dict, else ``rope_parameters``
      (transformers' own order); its ``rope_type`` (or older ``type``; Phi-3's first "su" is
      read as "longrope"); ``"default"`` or none gives None. Then, as transformers does:
      "dynamic" divides by ``max_position_embeddings`` (its original_length here);
      "yarn", "llama3" and "longrope" take ``original_max_position_embeddings`` from the top
      of the config first (Phi-3 keeps it there), then from ``rope_scaling``, then
      ``max_position_embeddings``; "yarn" and "longrope" without a factor take
      ``max_position_embeddings / original_max_position_embeddings`` (Phi-3 mini 128k: 32);
      a yarn ``rope_scaling`` must hold the key ``factor`` (null derives it as above),
      llama3's ``low_freq_factor`` and ``high_freq_factor`` and LongRoPE's factor lists are
      required, as in transformers. YaRN's ``beta_fast`` or ``beta_slow`` of 0 is refused here,
      where transformers' ``or`` would silently use 32 or 1.
    - a multimodal config whose language model sits in ``text_config`` (Gemma 3 4B and up,
      Llama 4) is read there.
    - M-RoPE (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5): rope_type ``"mrope"`` (transformers 4's Qwen2-VL,
      ``{"type": "mrope", "mrope_section": [16, 24, 24]}``) or ``"default"`` with ``mrope_section`` (and
      transformers 5's ``mrope_interleaved``) reads as plain RoPE, the RoPE of text tokens, and keeps the
      sections in ``mrope_section`` (checked to sum to d/2) and ``mrope_interleaved``: the family's own
      (blocked for qwen2_vl and qwen2_5_vl, interleaved for qwen3_vl and qwen3_5, their code ignoring the
      flag, a note saying so where the flag disagrees), else the flag. "mrope" without sections takes
      Qwen2-VL's [16, 24, 24] in the two families whose config reads "mrope", and raises elsewhere.

    Args:
        config: the config as a dict.
        layer_type: for a transformers 5 ``rope_parameters`` with one dict per layer type, which
            one (default ``"full_attention"``: Gemma 3's global layers, where its linear x8
            applies). A config with one RoPE for every layer accepts only None or
            ``"full_attention"``.

    Returns:
        RopeConfig(d, base, scaling, max_length).

    Raises:
        ValueError: naming the missing or wrong key (no RoPE at all, no head size, a factor
            below 1, NaN, a string where a number belongs, factor lists of the wrong length...).

    Example:
        >>> rope_from_config({"rope_theta": 500000.0, "hidden_size": 4096, "num_attention_heads": 32,
        ...                   "max_position_embeddings": 8192})
        RopeConfig(d=128, base=500000.0, scaling=None, max_length=8192)

    Reference: transformers 5.18 ``modeling_rope_utils`` and each model's configuration class.
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a JSON object (a dict), got {type(config).__name__}.")
    outer, config = config, language_model_config(config)
    if not any(key in config for key in ROTARY_KEYS):
        raise ValueError(
            "This config has no RoPE settings: none of " + ", ".join(ROTARY_KEYS) + " is present (a model "
            "with learned or sinusoidal positions, such as GPT-2 or BERT, has none). If the model does use "
            'RoPE, add "rope_theta": 10000.0.'
        )
    parameters = _rope_parameters(config, layer_type)
    family = _model_family(outer, config)
    section, interleaved, mrope_notes = _mrope(family, parameters)
    max_length = _max_length(config)
    scaling = _scaling(config, parameters, max_length)
    whole_head = scaling is not None and rope_method(scaling.method).whole_head
    global_layer = family == "gemma4" and layer_type in (None, "full_attention")
    outside = None if scaling is None else rope_method(scaling.method).outside_transformers
    notes = () if outside is None else (
        f"rope_type {parameters.get('rope_type', parameters.get('type'))!r} is not one of transformers' rope "
        f"types (transformers would not load this config); read here as {outside}.",)
    return RopeConfig(
        d=_rotary_dim(config, parameters, whole_head=whole_head,
                      head_dim=_global_head_dim(config) if global_layer else None),
        base=_base(config, parameters),
        scaling=scaling,
        max_length=max_length,
        notes=notes + mrope_notes,
        mrope_section=section,
        mrope_interleaved=interleaved,
    )
