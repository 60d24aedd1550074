"""How far textbook ``np.sin(k * w)`` may be from pe_core, which computes sin/cos of k·w to about one ulp.

pe_core keeps the rounding error of the product k·w (pe_core.encoding.sin_cos_outer); the
textbook formula rounds the angle first, an error of up to half an ulp of the angle,
2**-53 |k w|, which sin and cos pass on unchanged (|derivative| <= 1), plus an ulp or so
of the value on each side. The "reproduce this" snippets take the angles as pe_core does
(explorer.reproduce.sin_cos_code), except Precision's and the Scorecard's, which keep the
textbook formula: tests compare those with the app within this bound (or run the app with
textbook angles when the point is the snippet's own logic), and a few compare textbook
references of their own with pe_core.
"""

from __future__ import annotations

import numpy as np

import pe_core

#: Half an ulp, relative: float64 rounds x to within 2**-53 |x|.
HALF_ULP = 2.0**-53


def angle_rounding_tolerance(max_angle: float) -> float:
    """Largest |textbook - pe_core| of one sin or cos value whose angle is at most ``max_angle`` rad.

    2**-53 |angle| for the rounded angle, plus 2**-53 for the value (|sin| <= 1), with a factor
    4 for the ulp or two that each side's sin/cos may be off.
    """
    return 4 * HALF_ULP * (abs(float(max_angle)) + 1)


def textbook_sin_cos_outer(k: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of the rounded angles fl(k w): what the snippets compute (for monkeypatching pe_core)."""
    theta = np.multiply.outer(np.asarray(k, dtype=np.float64), np.asarray(w, dtype=np.float64))
    return np.sin(theta), np.cos(theta)


def textbook_dot_by_offset(delta: object, d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    """sum_i cos(fl(delta w_i)), the closed form as the snippets write it (for monkeypatching pe_core)."""
    w = pe_core.frequencies(d, n, convention)
    return np.cos(np.multiply.outer(np.asarray(delta, dtype=np.float64), w)).sum(axis=-1)
