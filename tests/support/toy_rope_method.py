"""A rope method added from outside, as the next real one will be: a constant factor on the slow half
of the pairs. Its pe_core entry (frequencies, config keys, validator, inverse reading, sentences) and
its explorer entry (label, colour, controls, description, fragment), each registered by a fixture
and removed after: "adding a method is one entry in each registry" is what the tests that use it show.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

import pe_core
from explorer import rope_methods
from pe_core.rope.methods import ConfigKey, RopeMethod, register_rope_method
from pe_core.rope.reading import FrequencyEvidence, MethodReadings

TOY_FACTOR = 4.0


def toy_frequencies(theta: np.ndarray, d: int, base: float, scaling: pe_core.RopeScaling,
                    length: int | None) -> np.ndarray:
    """The slow half of the pairs divided by the factor, the fast half unchanged."""
    gains = np.where(np.arange(theta.size) >= theta.size // 2, 1.0 / scaling.factor, 1.0)
    return theta * gains


def toy_validate(scaling: pe_core.RopeScaling, d: int | None) -> None:
    if d is not None and d < 4:
        raise ValueError(f"toy scaling needs two pairs at least, got d={d}.")


def toy_read(evidence: FrequencyEvidence) -> MethodReadings:
    """The toy's inverse: the fast half unchanged, a plateau of divided pairs from the middle pair on."""
    s, gains = evidence.plateau_factor, evidence.gains
    half = evidence.measured.theta.size // 2
    if not (evidence.scaled and s is not None and s > 1.0 and gains.prefix_last == half - 1
            and gains.tail_first == half):
        return MethodReadings()
    return MethodReadings(from_plateau=tuple(evidence.scaled_reading("toy", s, None, {"method": "toy", "factor": s})))


TOY = RopeMethod(
    name="toy", frequencies=toy_frequencies, attention_factor=lambda scaling: 1.0,
    config_keys=(ConfigKey("factor"),), original_length=None, validate=toy_validate,
    sentence=lambda reading: f"Toy scaling by {reading['factor']:g}: the slow half of the pairs divided by it.",
    phrase=lambda reading: f"toy scaling by {reading['factor']:g}", read=toy_read,
)


def toy_fragment(scaling: pe_core.RopeScaling) -> str:
    return (
        "def scaled_toy(theta, d, base, length):\n"
        '    """The toy: the slow half of the pairs divided by s."""\n'
        f"    s = {scaling.factor!r}\n"
        "    slow = {xp}.arange(d // 2) >= d // 4\n"
        "    return {xp}.where(slow, theta / s, theta), 1.0\n"
    )


TOY_ENTRY = rope_methods.MethodEntry(
    "toy", "toy (slow half ÷ s)", "toy", "#7f3c8d", ("factor",),
    lambda scaling, d: f"toy ×{scaling.factor:g}: the slow half of the pairs divided by {scaling.factor:g}",
    toy_fragment,
)


def toy_config(head_dim: int, base: float) -> dict:
    """A config.json whose rope_scaling is the toy's, by TOY_FACTOR, trained on 8192 tokens."""
    return {"rope_theta": base, "head_dim": head_dim, "num_attention_heads": 4, "hidden_size": 4 * head_dim,
            "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "toy", "factor": TOY_FACTOR}}


@contextmanager
def toy_in_pe_core() -> Iterator[RopeMethod]:
    unregister = register_rope_method(TOY)
    try:
        yield TOY
    finally:
        unregister()


@contextmanager
def toy_everywhere() -> Iterator[rope_methods.MethodEntry]:
    """The toy in pe_core's registry and in the explorer's."""
    with toy_in_pe_core():
        unregister = rope_methods.register_method_entry(TOY_ENTRY)
        try:
            yield TOY_ENTRY
        finally:
            unregister()
