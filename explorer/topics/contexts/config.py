"""Longer contexts from a model's config.json (read by explorer.config_json): turned into a view
(``view_from_config``, through ``pe_core.rope_from_config``), a model preset's view, the controls' values
that show a view, and the URL's exact base."""

from __future__ import annotations

from dataclasses import fields

import pe_core
from explorer import rope_methods
from explorer.model_configs import MODEL_CONFIGS, load_config, model_config
from explorer.rope_methods import NONE
from explorer.settings import D_MAX, N_OPTIONS, echo, format_number, last_value, nearest_n, read_number
from explorer.topics.contexts.analysis import checked_view
from explorer.topics.contexts.view import (
    BASE_MAX,
    FACTOR_MAX,
    LENGTH_MAX,
    MSCALE_MAX,
    PAGE_KEYS,
    PARAMETER_MAX,
    ContextView,
)
from pe_core.rope.methods import ORIGINAL_LENGTH_KEYS, rope_method

#: URL value of the model key when the settings come from no preset.
CUSTOM_MODEL = "custom"
MODEL_KEYS: tuple[str, ...] = (CUSTOM_MODEL, *(model.key for model in MODEL_CONFIGS))

#: What a trained length defaults to when a config says nothing of it (Llama 2's).
DEFAULT_TRAINED = 4096
#: A config with no scaling is shown against the methods at this factor (target = factor x trained).
DEFAULT_FACTOR = 4.0

def _declared_original(config: dict) -> int | None:
    """original_max_position_embeddings where a config gives it (top, text_config, rope_scaling or
    rope_parameters), for the methods whose RopeScaling does not hold it (linear, dynamic)."""
    where = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    for source in (where, where.get("rope_scaling"), where.get("rope_parameters")):
        if isinstance(source, dict) and source.get("original_max_position_embeddings") is not None:
            value = source["original_max_position_embeddings"]
            return pe_core.RopeScaling("yarn", 1.0, value).original_length  # validated as RopeScaling does
    return None


def _clamp(name: str, value: float, low: float, high: float, notices: list[str]) -> float:
    if low <= value <= high:
        return value
    clamped = min(max(value, low), high)
    notices.append(f"The config's {name} {format_number(value)} is outside {format_number(low)}.."
                   f"{format_number(high)}; using {format_number(clamped)}.")
    return clamped


def view_from_config(config: dict) -> tuple[ContextView, list[str]]:
    """A view of a model's config.json (read by pe_core.rope_from_config), and one-line notices of
    what the page had to assume or clamp.

    trained: the scaling's original length; for linear and dynamic, original_max_position_embeddings
    where the config gives it, else max_position_embeddings / factor (linear) or
    max_position_embeddings (dynamic, and no scaling). target: max_position_embeddings when it is
    longer, else factor x trained (4 x trained with no scaling, shown against every method at
    factor 4). A vision-language model's M-RoPE config is read for its text positions, with a notice
    saying so. Raises ValueError (one line, naming the key) for a config that lacks what is needed.
    """
    rope = pe_core.rope_from_config(config)
    notices: list[str] = list(rope.notes)
    if rope.mrope_section is not None:
        # This page shows one position per token; say what the three-axis config means here and what it leaves.
        layout = "interleaved" if rope.mrope_interleaved else "blocked"
        notices.append(
            f"M-RoPE ({layout}, sections {list(rope.mrope_section)}): a text token has the same position on the "
            "three axes, so its RoPE is the plain RoPE shown here. M-RoPE splits the pairs into three sections "
            "for images and video."
        )
    rope_scaling, max_length = rope.scaling, rope.max_length
    method = NONE if rope_scaling is None else rope_scaling.method
    factor = DEFAULT_FACTOR if rope_scaling is None else rope_scaling.factor
    declared = _declared_original(config)
    if method != NONE and rope_method(method).original_length == ORIGINAL_LENGTH_KEYS[0]:
        trained = rope_scaling.original_length
    elif declared is not None:
        trained = declared
    elif method != NONE and rope_methods.method_entry(method).stretched_max_length and max_length is not None:
        trained = max(1, round(max_length / factor))
        notices.append(
            f"The config gives no original_max_position_embeddings: trained length taken as "
            f"max_position_embeddings / factor = {trained:,}; set it if the model was trained longer."
        )
    elif max_length is not None:
        trained = max_length
    else:
        trained = DEFAULT_TRAINED
        notices.append(f"The config gives no max_position_embeddings: trained length {DEFAULT_TRAINED:,} assumed.")
    if max_length is not None and max_length > trained:
        target = max_length
    else:
        target = round(factor * trained)
    values = {
        "d": int(_clamp("rotary dimension", rope.d, 2, D_MAX, notices)),
        "base": _clamp("rope_theta", rope.base, 1.0, BASE_MAX, notices),
        "method": method,
        "factor": _clamp("factor", factor, 1.0, FACTOR_MAX, notices),
        "trained": int(_clamp("trained length", trained, 1, LENGTH_MAX, notices)),
        "target": int(_clamp("target length", target, 1, LENGTH_MAX, notices)),
        "max_positions": 0 if max_length is None else int(_clamp("max_position_embeddings", max_length, 0,
                                                                   LENGTH_MAX, notices)),
    }
    if rope_scaling is not None:
        s = rope_scaling
        values |= {
            "low_freq": _clamp("low_freq_factor", s.low_freq_factor, 0.0, PARAMETER_MAX, notices),
            "high_freq": _clamp("high_freq_factor", s.high_freq_factor, 0.0, PARAMETER_MAX, notices),
            "beta_fast": _clamp("beta_fast", s.beta_fast, 0.0, PARAMETER_MAX, notices),
            "beta_slow": _clamp("beta_slow", s.beta_slow, 0.0, PARAMETER_MAX, notices),
            "truncate": bool(s.truncate),
            "mscale": _clamp("mscale", s.mscale or 0.0, 0.0, MSCALE_MAX, notices),
            "mscale_all_dim": _clamp("mscale_all_dim", s.mscale_all_dim or 0.0, 0.0, MSCALE_MAX, notices),
            "attention_factor": _clamp("attention_factor", s.attention_factor or 0.0, 0.0, MSCALE_MAX, notices),
            "short_factor": s.short_factor, "long_factor": s.long_factor,
        }
        if rope_method(method).whole_head:  # the others' partial_rotary_factor is 1, not the page's default
            values["partial"] = s.partial_rotary_factor
    view, more = checked_view(ContextView(**values))
    return view, notices + more


def preset_view(key: str) -> ContextView:
    """The view of a model preset (explorer.model_configs), from its config.json file."""
    return view_from_config(load_config(model_config(key).key))[0]


def view_values(view: ContextView) -> dict[str, object]:
    """The controls' values that show ``view``: the sidebar's d and n (the nearest stop of its
    base scale), the exact base (0 when n holds it), and every page key."""
    on_scale = view.base in N_OPTIONS
    values: dict[str, object] = {
        "d": view.d, "n": view.base if on_scale else nearest_n(min(max(view.base, N_OPTIONS[0]), N_OPTIONS[-1])),
        "base": 0.0 if on_scale else float(view.base),
    }
    for field in fields(ContextView):
        if field.name in PAGE_KEYS:
            value = getattr(view, field.name)
            values[field.name] = float(value) if isinstance(value, float) else value
    return values


def parse_base(raws: list[str]) -> tuple[float, list[str]]:
    """The URL's exact base: a number in (1, BASE_MAX], or 0 (the sidebar's n) with a notice."""
    notices: list[str] = []
    raw = last_value("base", raws, notices)
    value = read_number(raw)
    if value == 0.0 or (value is not None and 1.0 < value <= BASE_MAX):  # 0: the sidebar's n
        return value, notices
    if value is not None and value > BASE_MAX:
        notices.append(f"URL: base={echo(raw)} is above {format_number(BASE_MAX)}; using {format_number(BASE_MAX)}.")
        return BASE_MAX, notices
    if not raw:
        problem = "base is empty"
    elif value is None:
        problem = f"base={echo(raw)} is not a finite number"
    else:
        problem = f"base={echo(raw)} must be greater than 1"
    notices.append(f"URL: {problem}; using the sidebar's n.")
    return 0.0, notices
