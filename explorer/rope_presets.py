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
from explorer import model_configs, rope_methods
from explorer.settings import format_number, nearest_n

#: The "no preset" choice.
CUSTOM = "custom"
#: The preset choices: no preset, then every model of explorer.model_configs.
PRESET_CHOICES: tuple[str, ...] = (CUSTOM, *(model.key for model in model_configs.MODEL_CONFIGS))
#: The scaling choices besides the methods (explorer.rope_methods): none, or the preset model's own.
MODEL = "model"


def scaling_choices() -> tuple[str, ...]:
    """The page's scaling choices: none, the preset model's own, then every method the app shows."""
    return (rope_methods.NONE, MODEL, *rope_methods.method_names())


def scaling_label(choice: str) -> str:
    """A scaling choice as the page names it (a method as its controls build it)."""
    if choice == rope_methods.NONE:
        return "none"
    if choice == MODEL:
        return "the model's own"
    entry = rope_methods.method_entry(choice)
    return entry.controls_label or entry.label


def choice_parameters(choice: str) -> tuple[str, ...]:
    """The parameters (keys of rope_methods.PARAMETERS) a scaling choice's controls show."""
    return rope_methods.method_entry(choice).controls if choice in rope_methods.method_names() else ()


def ordered_parameters(choice: str, values: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """A scaling choice's control ``values`` with its pairs that must go in order put in order
    (``rope_methods.out_of_order``), and a notice for each."""
    methods = (choice,) if choice in rope_methods.method_names() else ()
    return rope_methods.out_of_order(methods, values)


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
    if preset.scaling is not None:
        for name, value in rope_methods.control_values(preset.scaling).items():
            if value in rope_methods.PARAMETERS[name].stops:
                values[name] = value
    return values


def differences(preset: RopePreset, *, d: int, base: float, layout: str, method: str) -> str:
    """What the current settings change of ``preset`` ("" when nothing): a what-if stays visible."""
    changes = []
    if d != preset.d:
        changes.append(f"d = {d} (the model's {preset.d})")
    if base != nearest_n(preset.base):
        changes.append(f"b = {format_number(base)} (the model's {format_number(preset.base)})")
    if layout != preset.layout:
        changes.append(f"the {layout} layout (the model's {preset.layout})")
    own = rope_methods.NONE if preset.scaling is None else MODEL
    if method != own:
        changes.append(f"scaling {scaling_label(method)} (the model's {scaling_label(own)})")
    return "; ".join(changes)


def scaling_from_choice(
    method: str, *, d: int, model: str = CUSTOM, **values: float
) -> tuple[pe_core.RopeScaling | None, list[str]]:
    """The RopeScaling a page's scaling controls describe (``values``: its controls' values, keys of
    rope_methods.PARAMETERS), and a one-line notice for each value that could not be used as it is
    (the scaling then falls back as the notice says).

    "model" is preset ``model``'s own scaling (None for a model without one); a method is built from
    its controls (``rope_methods.from_controls``), its parameters that must go in order put in order.
    """
    if method == rope_methods.NONE:
        return None, []
    if method == MODEL:
        if model == CUSTOM:
            return None, ["Scaling 'the model's own' needs a model preset; no scaling is applied."]
        preset = rope_preset(model)
        try:
            rope_methods.check_fits(preset.scaling, d)
        except ValueError as refusal:
            return None, [f"{preset.name}'s scaling does not fit d = {d}: {refusal} No scaling is applied."]
        return preset.scaling, []
    ordered, notices = rope_methods.out_of_order(
        (method,), {key: values.get(key, parameter.default) for key, parameter in rope_methods.PARAMETERS.items()})
    try:
        return rope_methods.from_controls(method, ordered, d), notices
    except ValueError as refusal:
        return None, [*notices, f"{scaling_label(method)} scaling cannot be built here: {refusal} "
                                "No scaling is applied."]
