r"""Pieces two or more methods share: the exponents 2i/d, the NTK-aware base change
:math:`b\,s^{d/(d-2)}`, no attention factor, the checks on d, the phrase "<method> scaling by s", and
the misfit of a straight line through the pairs' shares of the divided frequency (YaRN's ramp, linear
in the pair index, and llama3's blend, linear in the frequency). The method modules import them; all
but ``ntk_base`` keep the underscore of helpers no caller outside the package reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.reading import Gains
from pe_core.wording import number

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling


def _exponents(d: int) -> np.ndarray:
    return np.arange(0, d, 2, dtype=np.float64) / d


def ntk_base(base: float, scale: float, d: int) -> float:
    """b * scale**(d/(d-2)), the NTK-aware base change."""
    return base * scale ** (d / (d - 2))


def _no_attention_factor(scaling: RopeScaling) -> float:
    return 1.0


def _nothing_to_check(scaling: RopeScaling, d: int | None) -> None:
    return None


def _needs_d_of_4(scaling: RopeScaling, d: int | None) -> None:
    if d is not None and d < 4:
        raise ValueError(
            f"{scaling.method} scaling needs d >= 4, got d={d}: its base change b * s**(d/(d-2)) divides by d - 2."
        )


def _factor_phrase(reading: dict) -> str:
    return f"{reading['method']} scaling by {number(reading['factor'])}"


def _line_misfit(x: np.ndarray, gains: Gains, s: float) -> float | None:
    """The residual of a straight line through the pairs between's shares of the divided frequency, in x;
    None with fewer than three pairs between (any two lie on a line)."""
    middle = gains.middle
    if middle.size < 3:
        return None
    share = (1.0 - gains.gains[middle]) / (1.0 - 1.0 / s)
    residual = np.polyfit(x, share, 1, full=True)[1]
    return float(residual[0]) if residual.size else None
