"""Numbers, pair lists and intervals as pe_core's sentences write them (the verdicts, the readings' notes, the
sentences of each rope method): one formatter for all of them."""

from __future__ import annotations

import math

import numpy as np


def number(x: float) -> str:
    """10000, 1e6, 32768, 1.25, 9646.6: short and exact enough for a sentence."""
    if x == round(x) and abs(x) < 1e6:
        return str(int(x))
    text = f"{x:.6g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


def pair_span(pairs: list[int] | np.ndarray) -> str:
    """[3, 4, 5, 9] -> '3-5 and 9'."""
    values = sorted(int(p) for p in pairs)
    runs: list[list[int]] = []
    for value in values:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    parts = [f"{run[0]}" if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else ""


def assumed_phrase(scaling: dict) -> str:
    """'beta_fast and beta_slow at 32 and 1 (assumed: the defaults)'."""
    keys = scaling["assumed"]
    return (f"{' and '.join(keys)} at {' and '.join(number(scaling[key]) for key in keys)} (assumed: the "
            f"default{'s' if len(keys) > 1 else ''})")


def interval(bounds: tuple[float, float]) -> str:
    low, high = bounds
    if low == high:
        return f"{low:.6g}"
    return f"[{low:.6g}, {high:.6g})" if math.isfinite(high) else f"at least {low:.6g}"
