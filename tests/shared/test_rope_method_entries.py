"""The explorer's registry of rope methods (explorer.rope_methods): every method pe_core computes has an
entry with every part, each entry's "reproduce this" fragment computes what pe_core computes, and a
method registered from outside (tests/support/toy_rope_method.py) is read from a config.json, reproduced
by its fragment and named by the checker (tests/app/test_a_new_rope_method.py draws it on the pages)."""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
from support.needs_torch import import_or_skip
from support.toy_rope_method import TOY_FACTOR, toy_config, toy_everywhere

import pe_core
from explorer import rope_methods, rope_presets
from explorer.rope_methods import PARAMETERS, MethodEntry
from explorer.topics import contexts, rotary
from pe_core.rope.methods import rope_method_names

D, BASE = 64, 10000.0


def sample_scalings(name: str) -> list[pe_core.RopeScaling]:
    """Scalings of method ``name`` to run its fragment at: its controls' defaults, every preset's own
    of it (gpt-oss's untruncated YaRN, DeepSeek's mscales, Phi-3's lists), and an attention_factor given."""
    scalings = [rope_methods.from_controls(name, {}, D)]
    for key in rope_presets.PRESET_CHOICES[1:]:
        preset = rope_presets.rope_preset(key)
        if preset.scaling is not None and preset.scaling.method == name:
            scalings.append(preset.scaling)
    if "attention_factor" in {key.name for key in pe_core.rope.methods.rope_method(name).config_keys}:
        scalings.append(pe_core.RopeScaling(**{**vars(scalings[-1]), "attention_factor": 1.25}))
    return scalings


def run_fragment(scaling: pe_core.RopeScaling, d: int, base: float, length: int, library: str = "numpy"):
    """θ' and a as the method's fragment computes them, from θ as the snippets compute it."""
    namespace: dict[str, object] = {}
    xp = rope_methods.LIBRARY_NAMES[library]
    exec(f"import math\nimport numpy as np\n{'import torch' if library == 'torch' else ''}\n"
         f"d, base, length = {d}, {base!r}, {length}\n"
         f"theta = base ** -({xp}.arange(0, d, 2, dtype={xp}.float64) / d)\n"
         + rope_methods.fragment(scaling, library)
         + f"\nscaled, a = {rope_methods.method_entry(scaling.method).function}(theta, d, base, length)\n", namespace)
    scaled = namespace["scaled"]
    return np.asarray(scaled.numpy() if library == "torch" else scaled), float(namespace["a"])


def assert_fragment_computes_pe_core(scaling: pe_core.RopeScaling, library: str = "numpy") -> None:
    d = 2 * len(scaling.short_factor) if scaling.short_factor else D
    trained = scaling.original_length or 4096
    for length in (trained // 2, trained, 3 * trained + 1):
        scaled, a = run_fragment(scaling, d, BASE, length, library)
        expected = pe_core.rope_frequencies(d, BASE, scaling=scaling, length=length)
        np.testing.assert_allclose(scaled, expected, rtol=1e-13, atol=0, err_msg=f"{scaling} at {length}")
        assert a == pytest.approx(pe_core.rope_attention_factor(scaling, length), rel=1e-14), (scaling, length)


# ----------------------------------------------------------------------------- the contract


def test_every_method_pe_core_computes_is_shown() -> None:
    assert rope_methods.method_names() == rope_method_names()


@pytest.mark.parametrize("name", rope_method_names())
def test_every_entry_has_every_part(name: str) -> None:
    entry = rope_methods.method_entry(name)
    assert isinstance(entry, MethodEntry) and entry.name == name
    assert entry.label and entry.short and re.fullmatch(r"#[0-9a-f]{6}", entry.colour)
    assert entry.controls[0] == "factor" and set(entry.controls) <= set(PARAMETERS)
    for order in entry.orders:
        assert {order.first, order.second} <= set(entry.controls)
        assert order.holds({key: p.default for key, p in PARAMETERS.items()}), "the defaults must be in order"
    for scaling in sample_scalings(name):
        words = rope_methods.describe(scaling, D)
        assert words.startswith(entry.short) and f"×{scaling.factor:g}" in words
        assert f"def {entry.function}(theta, d, base, length):" in rope_methods.fragment(scaling)
    assert len({rope_methods.method_entry(n).colour for n in rope_method_names()}) == len(rope_method_names())


def test_a_parameter_s_default_is_a_stop_and_its_stops_lie_within_its_bound() -> None:
    for parameter in PARAMETERS.values():
        assert parameter.default in parameter.stops, parameter.key
        assert parameter.high is None or max(parameter.stops) <= parameter.high, parameter.key
    assert PARAMETERS["partial"].high == 1.0  # partial_rotary_factor: a share of the head


@pytest.mark.parametrize("name", rope_method_names())
def test_each_fragment_computes_what_pe_core_computes(name: str) -> None:
    for scaling in sample_scalings(name):
        assert_fragment_computes_pe_core(scaling)


@pytest.mark.parametrize("name", rope_method_names())
def test_each_fragment_computes_the_same_with_torch(name: str) -> None:
    import_or_skip("torch")
    for scaling in sample_scalings(name):
        assert_fragment_computes_pe_core(scaling, "torch")


@pytest.mark.parametrize("name", rope_method_names())
def test_a_method_s_controls_build_what_their_values_say(name: str) -> None:
    """Each control's value lands in the RopeScaling field it names; values out of order are put back."""
    entry = rope_methods.method_entry(name)
    values = {key: PARAMETERS[key].stops[-2] for key in entry.controls}
    values |= {order.second: PARAMETERS[order.second].default for order in entry.orders}
    values |= {order.first: PARAMETERS[order.first].default for order in entry.orders}
    scaling = rope_methods.from_controls(name, values, D)
    assert rope_methods.control_values(scaling) == values
    for order in entry.orders:
        swapped = values | {order.first: values[order.second], order.second: values[order.first]}
        fixed, notices = rope_methods.out_of_order((name,), swapped)
        assert fixed == values and len(notices) == 1 and entry.short in notices[0]


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_llama3_takes_equal_frequency_factors_as_llama_4_scout_ships_them(library: str) -> None:
    """low_freq_factor 1 and high_freq_factor 1 (no band between), which pe_core and transformers accept: the
    controls keep them and the fragment computes pe_core's, without dividing by their difference. YaRN's
    betas, which pe_core refuses equal, are still put back."""
    if library == "torch":
        import_or_skip("torch")
    values = {"factor": 16.0, "original": 8192.0, "low_freq": 1.0, "high_freq": 1.0}
    assert rope_methods.out_of_order(("llama3",), values) == (values, [])
    scaling = rope_methods.from_controls("llama3", values, D)
    assert (scaling.low_freq_factor, scaling.high_freq_factor) == (1.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy warns on a division by zero
        assert_fragment_computes_pe_core(scaling, library)
    assert rope_methods.out_of_order(("llama3",), values | {"low_freq": 2.0}) == (
        values | {"high_freq": 4.0}, ["llama3's low_freq_factor (2) must be at most high_freq_factor (1); using Meta's "
                                      "1 and 4."])
    assert rope_methods.out_of_order(("yarn",), {"beta_fast": 4.0, "beta_slow": 4.0}) == (
        {"beta_fast": 32.0, "beta_slow": 1.0},
        ["YaRN's beta_fast (4) must be above beta_slow (4); using YaRN's 32 and 1."])


def test_a_method_the_app_does_not_know_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="method must be one of linear, ntk"):
        rope_methods.method_entry("rope2")
    with pytest.raises(ValueError, match="register it there first"):
        rope_methods.register_method_entry(rope_methods.method_entry("yarn").__class__(
            "rope2", "x", "x", "#000000", ("factor",), lambda scaling, d: "", lambda scaling: ""))
    with pytest.raises(ValueError, match="already shows"):
        rope_methods.register_method_entry(rope_methods.method_entry("yarn"))


# ----------------------------------------------------------------------------- a method added from outside


@pytest.fixture
def toy() -> Iterator[MethodEntry]:
    with toy_everywhere() as entry:
        yield entry


def test_the_toy_is_read_from_a_config_and_its_fragment_computes_it(toy: MethodEntry) -> None:
    view, notices = contexts.view_from_config(toy_config(D, BASE))
    assert (view.method, view.factor, view.d, view.base, view.trained) == ("toy", TOY_FACTOR, D, BASE, 8192)
    assert not notices
    assert "toy" in contexts.available_methods(view)
    assert_fragment_computes_pe_core(contexts.scaling(view, "toy"))


def test_a_table_made_with_the_toy_is_named_by_the_checker(toy: MethodEntry) -> None:
    scaling = pe_core.RopeScaling("toy", TOY_FACTOR)
    cos, _ = pe_core.rope_cache(512, D, BASE, scaling=scaling)
    buffer = io.BytesIO()
    np.save(buffer, cos.astype(np.float32))
    (reading,) = rotary.check_upload("cos.npy", buffer.getvalue()).readings
    assert reading.status == "rotary"
    assert reading.result["scaling"] == {"method": "toy", "factor": TOY_FACTOR}
    assert rotary.reading_summary(reading).endswith("scaling toy ×4")
    assert rotary.reading_metrics(reading.result)["scaling"] == "toy ×4"
    assert math.isclose(rotary.opening(reading.result).scaling.factor, TOY_FACTOR)
