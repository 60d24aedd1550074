r"""NTK-aware and dynamic NTK scaling, one base change: :math:`b' = b\,q^{d/(d-2)}` with :math:`q = s`
(NTK-aware) or :math:`q = sL/L_0 - (s - 1)` at a sequence length L past :math:`L_0` (dynamic, reading
max_position_embeddings); their inverse readings offer them for a base read that is not round."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.methods.registry import ConfigKey, RopeMethod
from pe_core.rope.methods.shared import _exponents, _factor_phrase, _needs_d_of_4, _no_attention_factor, ntk_base
from pe_core.rope.reading import AGREEMENT, MAX_FACTOR, FrequencyEvidence, MethodReadings, shortest
from pe_core.wording import number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling


def _ntk_frequencies(theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None) -> np.ndarray:
    return ntk_base(base, scaling.factor, d) ** -_exponents(d)


def _ntk_sentence(reading: dict) -> str:
    return (f"NTK-aware scaling by {number(reading['factor'])}: the base multiplied by "
            f"{number(reading['factor'])}^(d/(d-2)), every pair but the first slowed.")


def _ntk_read(evidence: FrequencyEvidence) -> MethodReadings:
    """Round bases b and round steps q with b q^(d/(d-2)) = the base read: NTK-aware scaling by q of base b,
    offered when the base read is not round (the frequencies cannot tell a base from such a scaling)."""
    d, base = evidence.d, evidence.base
    if evidence.scaled or evidence.base_digits <= 2 or d < 4:
        return MethodReadings()
    offers = []
    for exponent in range(2, 10):
        for mantissa in (1.0, 2.0, 5.0):
            round_base = mantissa * 10.0**exponent
            if round_base >= base * (1 - 1e-9):
                continue
            q = (base / round_base) ** ((d - 2) / d)
            relative = AGREEMENT * evidence.log_error * (d - 2) / d + 1e-9
            snapped, digits = shortest(q, relative)
            if digits <= 2 and 1.0 < snapped <= MAX_FACTOR:
                offers.append((digits, -round_base, {"method": "ntk", "factor": snapped, "base": round_base}))
    return MethodReadings(offers=tuple([offer for *_, offer in sorted(offers, key=lambda o: o[:2])][:2]))


def _ntk_offer_phrase(offer: dict) -> str:
    return (f"NTK-aware scaling by {number(offer['factor'])} of base {number(offer['base'])} (or dynamic NTK at "
            "the sequence length where its step s L / L0 - (s - 1) is that)")


NTK = RopeMethod(
    name="ntk", frequencies=_ntk_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length=None, validate=_needs_d_of_4,
    sentence=_ntk_sentence, phrase=_factor_phrase, read=_ntk_read, offer_phrase=_ntk_offer_phrase,
    outside_transformers=("NTK-aware scaling: the base times factor^(d/(d-2)) at every length, the static form of "
                          "transformers' \"dynamic\", which changes the base only past max_position_embeddings"),
)


def _dynamic_frequencies(
    theta: np.ndarray, d: int, base: float, scaling: RopeScaling, length: int | None
) -> np.ndarray:
    s, L0 = scaling.factor, scaling.original_length
    L = L0 if length is None else max(length, L0)
    return ntk_base(base, s * L / L0 - (s - 1), d) ** -_exponents(d)


def _dynamic_sentence(reading: dict) -> str:
    return (f"Dynamic NTK scaling by {number(reading['factor'])}: the base multiplied by q^(d/(d-2)), "
            "q = s L / L0 - (s - 1) at sequence length L.")


def _dynamic_read(evidence: FrequencyEvidence) -> MethodReadings:
    """Dynamic NTK of the power of ten b below the base read, when that is not round: b' = b q^(d/(d-2)),
    q = s L / L0 - (s - 1) at sequence length L. Only the step q is in the frequencies, not s, L or L0."""
    d, base = evidence.d, evidence.base
    if evidence.scaled or evidence.base_digits <= 2 or d < 4 or base <= 100.0:
        return MethodReadings()
    round_base = 10.0 ** math.floor(math.log10(base * (1 - 1e-9)))  # the power of ten below
    q = (base / round_base) ** ((d - 2) / d)
    step = shortest(q, AGREEMENT * evidence.log_error + 1e-9)[0]
    return MethodReadings(offers=({"method": "dynamic", "base": round_base, "step": step},))


def _dynamic_offer_phrase(offer: dict) -> str:
    return (f"dynamic NTK of base {number(offer['base'])} with step q = {number(offer['step'])} (q = s L / L0 - "
            "(s - 1) at sequence length L: only q is in the frequencies)")


DYNAMIC = RopeMethod(
    name="dynamic", frequencies=_dynamic_frequencies, attention_factor=_no_attention_factor,
    config_keys=(ConfigKey("factor"),), original_length="max_position_embeddings", validate=_needs_d_of_4,
    sentence=_dynamic_sentence, phrase=_factor_phrase, read=_dynamic_read,
    offer_phrase=_dynamic_offer_phrase,
)
