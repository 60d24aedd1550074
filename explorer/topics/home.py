"""Home: seed 000's four criteria measured live for the sidebar's settings, as a table for
download and as "reproduce this" code. The measurements themselves are explorer.criteria's,
shared with the Criteria scorecard."""

from __future__ import annotations

import pandas as pd

from explorer import reproduce
from explorer.criteria import (
    CONSISTENT_TOLERANCE,
    DIRECT_PAIRS_CELLS,
    FAR_POSITION,
    TITLES,
    UNIQUE_MIN_DISTANCE,
    WINDOW,
    Measurement,
    bounded,
    consistent_distance,
    deterministic,
    unique,
)
from explorer.settings import Settings


def evaluate(settings: Settings) -> tuple[Measurement, ...]:
    """All four criteria of seed 000 for the settings, in seed 000's order."""
    args = (settings.L, settings.d, settings.n, settings.layout, settings.convention)
    return unique(*args), consistent_distance(*args), bounded(*args), deterministic(*args)


def criteria_table(measurements: tuple[Measurement, ...]) -> pd.DataFrame:
    """The criteria as a small numeric table (for download): what is measured, its value, and
    whether it passes (1) or not (0)."""
    return pd.DataFrame(
        {
            "measured value": [m.value for m in measurements],
            "passes (1 = yes, 0 = no)": [float(m.passed) for m in measurements],
        },
        index=pd.Index([f"{m.title}: {m.label}" for m in measurements], name="criterion"),
    )


def home_code(settings: Settings) -> str:
    """Home: seed 000's four criteria measured as ``explorer.criteria`` does; ``result`` rows
    are (measured value, passes 1/0) in the page's order, ``numbers`` the values by their titles."""
    L, d = settings.L, settings.d
    if L * L * d <= DIRECT_PAIRS_CELLS or d % 2:
        unique = (
            "# 1. Unique: the smallest distance between two positions (every pair of rows compared)\n"
            "best = np.inf\n"
            "for offset in range(1, L):\n"
            "    diff = P[offset:] - P[:-offset]\n"
            '    best = min(best, np.einsum("kj,kj->k", diff, diff).min())\n'
            "unique = np.sqrt(best)\n"
        )
    else:
        unique = (
            "# 1. Unique: the smallest distance between two positions, from the closed form\n"
            "#    |P[k] - P[k+t]|² = d - 2 Σ_i cos(ω_i t), the same for every k (even d)\n"
            "offsets = np.arange(1, L, dtype=np.float64)\n"
            "sse = np.maximum(d - 2.0 * np.cos(np.multiply.outer(offsets, w)).sum(axis=-1), 0.0)\n"
            "unique = np.sqrt(sse.min())\n"
        )
    return (
        reproduce.title("Home", settings, "seed 000's criteria")
        + reproduce.encoding_function_code(settings)
        + "P = encoding(0, L)\n\n"
        + unique
        + "\n\n# 2. Consistent distance: |P[k+1] - P[k]| in a sentence of L and in one of 2L positions\n"
        "def steps(start, count):\n"
        '    """|P[k+1] - P[k]| for k = start .. start+count-1."""\n'
        "    diff = np.diff(encoding(start, max(count, 0) + 1), axis=0)\n"
        '    return np.sqrt(np.einsum("kj,kj->k", diff, diff))\n\n\n'
        f"window = {WINDOW}\n"
        "longer = max(2 * L, L + 2)  # the longer sentence: at least two pairs, even for L = 1\n"
        "inside = steps(0, min(L - 1, window))  # the sentence of L\n"
        "first = steps(0, min(longer - 1, window))  # the longer one from its start ...\n"
        "added = max(L - 1, first.size)\n"
        "later = steps(added, min(longer - 1 - added, window))  # ... and where it reaches the positions it adds\n"
        "distances = np.concatenate([inside, first, later])\n"
        "consistent = np.ptp(distances) if distances.size >= 2 else np.nan  # NaN: nothing to compare\n"
        f"\n# 3. Bounded: the largest |value| over the L positions and at position {FAR_POSITION:,}\n"
        f"largest, far = np.abs(P).max(), np.abs(encoding({FAR_POSITION}, 1)).max()\n"
        "bounded = max(largest, far)\n"
        "\n# 4. Deterministic: values that differ in any bit between two computations\n"
        "rows = min(L, window)\n"
        "differing = 0\n"
        f"for start in sorted({{0, max(L - rows, 0), {FAR_POSITION}}}):\n"
        "    once, again = encoding(start, rows), encoding(start, rows)\n"
        "    differing += np.count_nonzero(once.view(np.uint64) != again.view(np.uint64))\n"
        "\nvalues = np.array([unique, consistent, bounded, differing], dtype=np.float64)\n"
        f"passes = [unique >= {UNIQUE_MIN_DISTANCE!r}, consistent <= {CONSISTENT_TOLERANCE!r}, "
        "far <= max(largest, 1.0), differing == 0]\n"
        + reproduce.result_code({"home_criteria": "np.column_stack([values, passes])"})
        + reproduce.numbers_code({title: (name, ".6g") for title, name in zip(TITLES.values(), NAMES, strict=True)})
    )


#: The snippet's name for each criterion's number, in TITLES' order.
NAMES = ("unique", "consistent", "bounded", "differing")
