"""The registry of RoPE scaling methods (pe_core.rope.methods): every entry has every part, and a method
registered from outside is read from a config.json, computed and named like the shipped ones."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

import numpy as np
import pytest
from support.toy_rope_method import TOY, TOY_FACTOR, toy_in_pe_core

import pe_core
from pe_core.identify.frequencies import FrequencyReading
from pe_core.identify.verdicts import method_phrase, scaling_sentence
from pe_core.rope.methods import (
    FROM_LENGTHS,
    REQUIRED,
    RopeMethod,
    register_rope_method,
    rope_method,
    rope_method_names,
)

SHIPPED = ("linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")
D, BASE = 16, 10000.0
#: The rope_scaling of a config.json for each shipped method, with the keys it needs and no more.
SAMPLE_SCALING = {
    "linear": {"factor": 4.0},
    "ntk": {"factor": 4.0},
    "dynamic": {"factor": 4.0},
    "yarn": {"factor": 4.0, "original_max_position_embeddings": 1024},
    "llama3": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 1024},
    "longrope": {"short_factor": [1.0 + i / 8 for i in range(D // 2)], "long_factor": [1.0 + i for i in range(D // 2)],
                 "original_max_position_embeddings": 1024},
    "proportional": {"factor": 4.0, "partial_rotary_factor": 0.5},
}
FIELD_DEFAULTS = {field.name: field.default for field in dataclasses.fields(pe_core.RopeScaling)}


def config_with(rope_scaling: dict) -> dict:
    return {"rope_theta": BASE, "head_dim": D, "num_attention_heads": 4, "hidden_size": 4 * D,
            "max_position_embeddings": 4096, "rope_scaling": rope_scaling}


def test_the_shipped_methods_are_registered_in_order() -> None:
    assert pe_core.ROPE_METHODS == SHIPPED
    assert rope_method_names()[: len(SHIPPED)] == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_entry_has_every_part(name: str) -> None:
    method = rope_method(name)
    assert method.name == name
    for part in (method.frequencies, method.attention_factor, method.validate, method.sentence, method.phrase,
                 method.read):
        assert callable(part)
    names = [key.name for key in method.config_keys]
    assert names[0] == "factor" and len(set(names)) == len(names)
    for key in method.config_keys:
        # Each key is a RopeScaling field; an optional one defaults to what RopeScaling does.
        assert key.name in FIELD_DEFAULTS, key
        if key.default not in (REQUIRED, FROM_LENGTHS):
            assert key.default == FIELD_DEFAULTS[key.name], key


@pytest.mark.parametrize("name", SHIPPED)
def test_a_config_reads_into_the_entry_and_the_core_computes_with_it(name: str) -> None:
    """rope_from_config, rope_frequencies and rope_attention_factor all go through the entry."""
    method = rope_method(name)
    scaling = pe_core.rope_from_config(config_with({"rope_type": name, **SAMPLE_SCALING[name]})).scaling
    assert scaling.method == name
    assert (scaling.original_length is None) == (method.original_length is None)
    theta = BASE ** -(np.arange(0, D, 2) / D)
    # Past the trained length, where dynamic NTK's step and LongRoPE's long factors apply.
    length = 8192
    expected = method.frequencies(theta, D, BASE, scaling, length)
    np.testing.assert_array_equal(pe_core.rope_frequencies(D, BASE, scaling=scaling, length=length), expected)
    assert not np.allclose(expected, theta), "the sample leaves the frequencies unscaled"
    assert pe_core.rope_attention_factor(scaling) == method.attention_factor(scaling)


@pytest.mark.parametrize("name", SHIPPED)
def test_a_config_without_a_required_key_is_refused_naming_it(name: str) -> None:
    for key in rope_method(name).config_keys:
        if key.default is not REQUIRED:
            continue
        given = {k: v for k, v in SAMPLE_SCALING[name].items() if k != key.name}
        with pytest.raises(ValueError, match=f"{name} scaling needs rope_scaling.{key.name}"):
            pe_core.rope_from_config(config_with({"rope_type": name, **given}))


@pytest.mark.parametrize(("name", "bad", "match"), [
    ("yarn", {"beta_fast": 1.0, "beta_slow": 32.0}, "beta_fast .* must be greater than beta_slow"),
    ("llama3", {"low_freq_factor": 4.0, "high_freq_factor": 1.0}, "high_freq_factor .* must be at least"),
    ("longrope", {"short_factor": [1.0] * (D // 2 - 1), "long_factor": [1.0] * (D // 2 - 1)},
     "hold 7 numbers each, but d=16 has 8 pairs"),
])
def test_each_constraint_is_checked_by_its_method_s_validator(name: str, bad: dict, match: str) -> None:
    """The validator is the entry's: the same message from a scaling and from a config.json."""
    given = {**SAMPLE_SCALING[name], **bad}
    fields = {k: v for k, v in given.items() if k not in ("factor", "original_max_position_embeddings")}
    with pytest.raises(ValueError, match=match):
        pe_core.rope_frequencies(D, scaling=pe_core.RopeScaling(name, 4.0, 1024, **fields))
    with pytest.raises(ValueError, match=match):
        pe_core.rope_from_config(config_with({"rope_type": name, **given}))


@pytest.mark.parametrize("name", ["linear", "yarn", "llama3", "longrope", "proportional"])
def test_the_checker_names_each_method_with_its_entry_s_sentence(name: str) -> None:
    scaling = pe_core.rope_from_config(config_with({"rope_type": name, **SAMPLE_SCALING[name]})).scaling
    frequencies = pe_core.rope_frequencies(D, BASE, scaling=scaling).astype(np.float32)
    result = pe_core.identify_encoding(frequencies)
    assert result["scaling"]["method"] == name
    assert rope_method(name).sentence(result["scaling"]) in result["verdict"]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_entry_s_inverse_reading_reads_its_own_frequencies(name: str) -> None:
    """The checker reads an inv_freq made with each method back into that method: named as the scaling, or,
    for the methods that change only the base, offered as what the base may be."""
    scaling = pe_core.rope_from_config(config_with({"rope_type": name, **SAMPLE_SCALING[name]})).scaling
    # Past the trained length, where dynamic NTK's step shows; an odd length, so that its step q is no round
    # NTK-aware factor (which the checker would offer in its place).
    frequencies = pe_core.rope_frequencies(D, BASE, scaling=scaling, length=5000).astype(np.float32)
    result = pe_core.identify_encoding(frequencies)
    assert result["kind"] == "rope_inv_freq"
    named = [result["scaling"]] if result["scaling"] else []
    assert name in [reading["method"] for reading in named + result["alternatives"]]


def test_a_base_change_two_methods_offer_is_offered_once() -> None:
    """NTK-aware scaling by 5 of base 10000 is also dynamic NTK of base 10000 at step 5: ntk's entry offers it
    (its phrase says the dynamic reading), dynamic's offer of the same base is left out."""
    theta = pe_core.rope_frequencies(D, BASE, scaling=pe_core.RopeScaling("ntk", 5.0)).astype(np.float32)
    result = pe_core.identify_encoding(theta)
    assert result["scaling"] is None
    assert result["alternatives"] == [{"method": "ntk", "factor": 5.0, "base": BASE}]
    assert rope_method("ntk").offer_phrase(result["alternatives"][0]) in result["verdict"]


# --------------------------------------------------------------------------- a method added from outside


@pytest.fixture
def toy() -> Iterator[RopeMethod]:
    with toy_in_pe_core() as method:
        yield method


def test_a_registered_method_is_read_from_a_config_and_computed(toy: RopeMethod) -> None:
    config = pe_core.rope_from_config(config_with({"rope_type": "toy", "factor": TOY_FACTOR}))
    assert config.scaling == pe_core.RopeScaling("toy", TOY_FACTOR)
    theta = pe_core.rope_frequencies(D, BASE)
    scaled = pe_core.rope_frequencies(config.d, config.base, scaling=config.scaling)
    np.testing.assert_array_equal(scaled[: D // 4], theta[: D // 4])
    np.testing.assert_allclose(scaled[D // 4:], theta[D // 4:] / TOY_FACTOR, rtol=1e-15)
    cos, sin = pe_core.rope_cache(64, config.d, config.base, scaling=config.scaling)
    positions = np.arange(64)[:, None]
    np.testing.assert_allclose(cos, np.cos(positions * np.concatenate([scaled, scaled])), atol=1e-13)
    np.testing.assert_allclose(sin, np.sin(positions * np.concatenate([scaled, scaled])), atol=1e-13)
    assert pe_core.rope_attention_factor(config.scaling) == 1.0
    with pytest.raises(ValueError, match="toy scaling needs two pairs at least, got d=2"):
        pe_core.rope_frequencies(2, scaling=config.scaling)


def test_a_registered_method_is_named_in_the_checker_s_sentences(toy: RopeMethod) -> None:
    reading = FrequencyReading(BASE, pe_core.rope_frequencies(D, BASE), {"method": "toy", "factor": TOY_FACTOR})
    assert scaling_sentence(reading, d=D, table=True) == "Toy scaling by 4: the slow half of the pairs divided by it."
    assert method_phrase(reading) == "toy scaling by 4"


def test_a_table_made_with_a_registered_method_is_named_by_the_checker(toy: RopeMethod) -> None:
    """One entry is the whole method: its inv_freq and its cos table, made by pe_core, are read back as it."""
    scaling = pe_core.RopeScaling("toy", TOY_FACTOR)
    inv_freq = pe_core.rope_frequencies(D, BASE, scaling=scaling).astype(np.float32)
    cos, _ = pe_core.rope_cache(512, D, BASE, scaling=scaling)
    for table in (inv_freq, cos.astype(np.float32)):
        result = pe_core.identify_encoding(table)
        assert result["kind"] in ("rope_inv_freq", "rope_cos"), result["verdict"]
        assert result["n"] == BASE
        assert result["scaling"] == {"method": "toy", "factor": TOY_FACTOR}
        assert "Toy scaling by 4: the slow half of the pairs divided by it." in result["verdict"]


def test_a_method_is_registered_once_and_unregistered_cleanly() -> None:
    unregister = register_rope_method(TOY)
    try:
        assert rope_method_names()[-1] == "toy"
        with pytest.raises(ValueError, match="already registered"):
            register_rope_method(TOY)
    finally:
        unregister()
    assert "toy" not in rope_method_names()
    with pytest.raises(ValueError, match="scaling method must be one of"):
        pe_core.RopeScaling("toy", 2.0)
    with pytest.raises(ValueError, match="rope_type 'toy' is not one this explorer computes"):
        pe_core.rope_from_config(config_with({"rope_type": "toy", "factor": 2.0}))
    assert not math.isnan(pe_core.rope_frequencies(8)[0])


def test_a_rope_type_transformers_does_not_have_is_read_with_a_note() -> None:
    """Issue 39: a config with "rope_type": "ntk" was read as if transformers had such a type (it would
    not load there); the reader says what it reads it as. transformers' own types get no note."""
    read = pe_core.rope_from_config(config_with({"rope_type": "ntk", "factor": 4.0}))
    assert read.scaling == pe_core.RopeScaling("ntk", 4.0)
    (note,) = read.notes
    assert note.startswith("rope_type 'ntk' is not one of transformers' rope types") and "NTK-aware" in note
    for name in ("linear", "dynamic", "yarn", "llama3", "longrope", "proportional"):
        assert pe_core.rope_from_config(config_with(SAMPLE_SCALING[name] | {"rope_type": name})).notes == ()
    assert rope_method("ntk").outside_transformers and not rope_method("dynamic").outside_transformers

