"""Model presets and scalings for the rotary pages, without Streamlit.

A preset is a real model's RoPE (explorer/model_configs.py, read by
``pe_core.rope_from_config``): choosing it sets the sidebar's d (the rotary dimension) and n
(the base, rope_theta), the page's layout and its scaling ("model": exactly the config's, with
every parameter it gives). A page's scaling controls describe the others: a method and its
main parameters (``scaling_from_choice``), each on a scale of the values real configs use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pe_core
from explorer import model_configs
from explorer.settings import format_n, nearest_n

#: The "no preset" choice.
CUSTOM = "custom"
#: The preset choices: no preset, then every model of explorer.model_configs.
PRESET_CHOICES: tuple[str, ...] = (CUSTOM, *(model.key for model in model_configs.MODEL_CONFIGS))
#: The scaling choices: none, the preset model's own, or a method with its main parameters.
SCALING_CHOICES: tuple[str, ...] = ("none", "model", *pe_core.ROPE_METHODS)
SCALING_LABELS = {
    "none": "none",
    "model": "the model's own",
    "linear": "linear (position interpolation)",
    "ntk": "NTK-aware",
    "dynamic": "dynamic NTK",
    "yarn": "YaRN",
    "llama3": "llama3 (Llama 3.1)",
    "longrope": "LongRoPE, uniform factors",
}
#: The stops of each scaling parameter's slider: every value the real configs use is one.
FACTOR_OPTIONS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 16.0, 20.0, 32.0, 40.0, 64.0, 100.0, 128.0)
ORIGINAL_OPTIONS = tuple(float(2**e) for e in range(4, 18))  # 16 .. 131072 positions
FREQ_FACTOR_OPTIONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
BETA_OPTIONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
#: Each parameter's URL key, slider options and default (transformers' defaults where it has one).
PARAMETERS: dict[str, tuple[tuple[float, ...], float]] = {
    "factor": (FACTOR_OPTIONS, 8.0),
    "original": (ORIGINAL_OPTIONS, 4096.0),
    "low_freq": (FREQ_FACTOR_OPTIONS, 1.0),
    "high_freq": (FREQ_FACTOR_OPTIONS, 4.0),
    "beta_fast": (BETA_OPTIONS, 32.0),
    "beta_slow": (BETA_OPTIONS, 1.0),
}
PARAMETER_LABELS = {
    "factor": "factor s",
    "original": "original length L0",
    "low_freq": "low_freq_factor",
    "high_freq": "high_freq_factor",
    "beta_fast": "β_fast",
    "beta_slow": "β_slow",
}
#: The parameters each method's controls show.
METHOD_PARAMETERS: dict[str, tuple[str, ...]] = {
    "none": (),
    "model": (),
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor", "original"),
    "yarn": ("factor", "original", "beta_fast", "beta_slow"),
    "llama3": ("factor", "original", "low_freq", "high_freq"),
    "longrope": ("factor", "original"),
}


@dataclass(frozen=True)
class RopePreset:
    """A model's RoPE as a preset: its rotary dimension, base, layout and scaling (or None)."""

    key: str
    name: str
    d: int
    base: float
    layout: str
    scaling: pe_core.RopeScaling | None
    max_length: int | None
    note: str
    url: str


@cache
def rope_preset(key: str) -> RopePreset:
    """The preset of model ``key`` (one of explorer.model_configs), from its config.json."""
    model = model_configs.model_config(key)
    config = pe_core.rope_from_config(model_configs.load_config(key))
    return RopePreset(key, model.name, config.d, config.base, model.layout, config.scaling, config.max_length,
                      model.note, model.url)


def preset_label(key: str) -> str:
    return "Custom" if key == CUSTOM else rope_preset(key).name


def preset_values(key: str) -> dict[str, object]:
    """What choosing preset ``key`` sets: the sidebar's ``d`` and ``n`` (the base, on the slider's
    scale), the page's ``rope_layout`` and ``scaling``, and, for a scaling, the parameters of the
    method's controls that it gives and that are stops of their sliders (so that switching from
    "model" to the method starts from the model's values)."""
    preset = rope_preset(key)
    values: dict[str, object] = {
        "d": preset.d, "n": nearest_n(preset.base), "rope_layout": preset.layout,
        "scaling": "none" if preset.scaling is None else "model",
    }
    scaling = preset.scaling
    if scaling is not None:
        given = {
            "factor": scaling.factor, "original": scaling.original_length,
            "low_freq": scaling.low_freq_factor, "high_freq": scaling.high_freq_factor,
            "beta_fast": scaling.beta_fast, "beta_slow": scaling.beta_slow,
        }
        for name in METHOD_PARAMETERS[scaling.method]:
            options, _ = PARAMETERS[name]
            if given[name] is not None and float(given[name]) in options:
                values[name] = float(given[name])
    return values


def differences(preset: RopePreset, *, d: int, base: float, layout: str, method: str) -> str:
    """What the current settings change of ``preset`` ("" when nothing): a what-if stays visible."""
    changes = []
    if d != preset.d:
        changes.append(f"d = {d} (the model's {preset.d})")
    if base != nearest_n(preset.base):
        changes.append(f"b = {format_n(base)} (the model's {format_n(preset.base)})")
    if layout != preset.layout:
        changes.append(f"the {layout} layout (the model's {preset.layout})")
    own = "none" if preset.scaling is None else "model"
    if method != own:
        changes.append(f"scaling {SCALING_LABELS[method]} (the model's {SCALING_LABELS[own]})")
    return "; ".join(changes)


def scaling_from_choice(
    method: str,
    *,
    d: int,
    model: str = CUSTOM,
    factor: float = 8.0,
    original: float = 4096.0,
    low_freq: float = 1.0,
    high_freq: float = 4.0,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> tuple[pe_core.RopeScaling | None, list[str]]:
    """The RopeScaling a page's scaling controls describe, and a one-line notice for each value
    that could not be used as it is (the scaling then falls back as the notice says).

    "model" is preset ``model``'s own scaling (None for a model without one); "longrope" with
    main parameters alone divides every pair by 1 up to the original length and by the factor
    beyond it (LongRoPE's per-pair lists, which a search finds, made uniform: Phi-3's own lists
    come with its preset).
    """
    notices: list[str] = []
    if method == "none":
        return None, notices
    if method == "model":
        if model == CUSTOM:
            return None, ["Scaling 'the model's own' needs a model preset; no scaling is applied."]
        scaling = rope_preset(model).scaling
        if scaling is not None and scaling.method == "longrope" and len(scaling.short_factor) != d // 2:
            return None, [
                f"{rope_preset(model).name}'s LongRoPE lists hold {len(scaling.short_factor)} factors, one per pair of "
                f"d = {2 * len(scaling.short_factor)}; d = {d} has {d // 2} pairs, so no scaling is applied."
            ]
        return scaling, notices
    if method in ("ntk", "dynamic") and d < 4:
        return None, [f"{SCALING_LABELS[method]} scaling needs d >= 4 (its base change divides by d - 2); "
                      "no scaling is applied."]
    pairs = {"low_freq": low_freq, "high_freq": high_freq, "beta_fast": beta_fast, "beta_slow": beta_slow}
    ordered, notices = ordered_parameters(method, pairs)
    low_freq, high_freq, beta_fast, beta_slow = (ordered[name] for name in pairs)
    original_length = int(original)
    if method == "linear" or method == "ntk":
        return pe_core.RopeScaling(method, factor), notices
    if method == "dynamic":
        return pe_core.RopeScaling(method, factor, original_length), notices
    if method == "yarn":
        return pe_core.RopeScaling(method, factor, original_length, beta_fast=beta_fast, beta_slow=beta_slow), notices
    if method == "llama3":
        return pe_core.RopeScaling(method, factor, original_length, low_freq_factor=low_freq,
                                   high_freq_factor=high_freq), notices
    pairs = d // 2
    return pe_core.RopeScaling(method, factor, original_length, short_factor=(1.0,) * pairs,
                               long_factor=(float(factor),) * pairs), notices


def ordered_parameters(method: str, parameters: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """``parameters`` (named as PARAMETERS) with each pair of ``method``'s that must go in order and
    does not (llama3's low_freq_factor < high_freq_factor, YaRN's beta_fast > beta_slow) replaced by
    its authors' values, and a notice for each, naming the two in the order the controls show them."""
    fixed = dict(parameters)
    notices = []
    if method == "llama3" and fixed["high_freq"] <= fixed["low_freq"]:
        notices.append(f"llama3 needs low_freq_factor < high_freq_factor, got {fixed['low_freq']:g} and "
                       f"{fixed['high_freq']:g}; using Meta's 1 and 4.")
        fixed.update(low_freq=1.0, high_freq=4.0)
    if method == "yarn" and fixed["beta_fast"] <= fixed["beta_slow"]:
        notices.append(f"YaRN needs beta_fast > beta_slow, got {fixed['beta_fast']:g} and {fixed['beta_slow']:g}; "
                       "using YaRN's 32 and 1.")
        fixed.update(beta_fast=32.0, beta_slow=1.0)
    return fixed, notices


def describe_scaling(scaling: pe_core.RopeScaling | None, d: int) -> str:
    """The scaling in words, with the parameters that set it."""
    if scaling is None:
        return "no scaling"
    s, L0 = scaling.factor, scaling.original_length
    from_length = f" from {L0:,} positions" if L0 is not None else ""
    if scaling.method == "linear":
        return f"linear ×{s:g}: every θ_i divided by {s:g}"
    if scaling.method == "ntk":
        return f"NTK-aware ×{s:g}: the base times {s:g}^(d/(d−2)) = {s ** (d / (d - 2)):.6g}"
    if scaling.method == "dynamic":
        return f"dynamic NTK ×{s:g}{from_length}: the base grows with the sequence length past {L0:,}"
    if scaling.method == "yarn":
        extras = [f"β_fast {scaling.beta_fast:g}", f"β_slow {scaling.beta_slow:g}"]
        if not scaling.truncate:
            extras.append("bounds not rounded (truncate false)")
        extras += [f"{name} {value:g}" for name, value in (("mscale", scaling.mscale),
                                                            ("mscale_all_dim", scaling.mscale_all_dim))
                   if value is not None]
        if scaling.attention_factor is not None:
            extras.append(f"attention_factor {scaling.attention_factor:g}")
        return f"YaRN ×{s:g}{from_length} ({', '.join(extras)})"
    if scaling.method == "llama3":
        return (f"llama3 ×{s:g}{from_length} (low_freq_factor {scaling.low_freq_factor:g}, "
                f"high_freq_factor {scaling.high_freq_factor:g})")
    uniform = len(set(scaling.short_factor)) == 1 and len(set(scaling.long_factor)) == 1
    lists = ("uniform factors: 1 up to L0, then the factor" if uniform
             else f"per-pair short_factor and long_factor, {len(scaling.short_factor)} each")
    return f"LongRoPE ×{s:g}{from_length} ({lists})"


def attention_note(scaling: pe_core.RopeScaling | None, length: int) -> str:
    """What the attention factor a is for this scaling and what it does to the scores."""
    a = pe_core.rope_attention_factor(scaling, length)
    if a == 1.0:
        return "Attention factor a = 1: the cos and sin tables are not scaled."
    origin = {
        "yarn": "YaRN's 0.1 ln s + 1 (or its mscale ratio, or the config's attention_factor)",
        "longrope": "LongRoPE's √(1 + ln s / ln L0) (or the config's attention_factor)",
    }[scaling.method]
    return (f"Attention factor a = {a:.6g} ({origin}): transformers multiplies the cos and sin tables by it, so "
            f"every score here is multiplied by a² = {a * a:.6g}.")
