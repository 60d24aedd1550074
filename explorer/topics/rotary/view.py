"""Rotary's view: what the page draws (``RotaryView``: rotary dimension d, base b, length L, layout,
scaling, query and key), the query and key themselves, the two layouts as the code names them, and the
grids and the window of measured positions every section reads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core
from explorer import rope_methods
from explorer.figures import HALF_PLOT_COLS, heatmap_grid
from explorer.settings import format_number

#: The query and key: seeded random numbers, or all ones (the score is then the rotation alone).
QK_CHOICES = ("random", "ones")
QK_LABELS = {"random": "seeded random", "ones": "all ones"}
#: Positions measured directly at each end of the sequence (pe_core.rotate on 2 x 64 rows).
MEASURE_WINDOW = 64
#: The other layout, whose rotate function the mixing error applies to this layout's cache.
OTHER_LAYOUT = {"half": "interleaved", "interleaved": "half"}
#: How each layout builds its cache and turns a pair, as the code names it.
LAYOUT_CODE = {
    "half": ("cat(freqs, freqs)", "rotate_half", "columns i and i + d/2"),
    "interleaved": ("repeat_interleave(freqs, 2)", "rotate_every_two", "columns 2i and 2i + 1"),
}


@dataclass(frozen=True)
class RotaryView:
    """What the page draws: rotary dimension d, base b, length L, the layout of q and k (and of
    the cache), the scaling, and the query and key (``qk``, with ``seed``)."""

    d: int
    base: float
    L: int
    layout: str = "half"
    scaling: pe_core.RopeScaling | None = None
    qk: str = "random"
    seed: int = 0

    def theta(self) -> np.ndarray:
        """θ'_i of every pair, at the sequence length L (as a model runs a sequence of L tokens)."""
        return pe_core.rope_frequencies(self.d, self.base, scaling=self.scaling, length=self.L)

    def attention(self) -> float:
        """The attention factor a (cos and sin carry it, so scores carry a²)."""
        return pe_core.rope_attention_factor(self.scaling, self.L)

    def key(self) -> tuple:
        """The view as plain values, for the page's cached sections (hashed on every run: a tuple of
        numbers and strings costs a third of the dataclass)."""
        return (self.d, self.base, self.L, self.layout, repr(self.scaling), self.qk, self.seed)

    def describe(self) -> str:
        return (f"L={self.L:,}, d={self.d:,}, b={format_number(self.base)}, {self.layout}, "
                f"{rope_methods.describe(self.scaling, self.d)}")


def lay_out(pairs: np.ndarray, layout: str) -> np.ndarray:
    """A vector from its pairs' coordinates (2, d/2): u_i and v_i in the layout's two columns of pair i."""
    d = 2 * pairs.shape[1]
    first, second = pe_core.rope_pair_columns(d, layout)
    x = np.empty(d)
    x[first], x[second] = pairs
    return x


def query_key(view: RotaryView) -> tuple[np.ndarray, np.ndarray]:
    """q and k in the view's layout: all ones, or standard normal pairs from ``seed`` (the same
    pairs in either layout, so the two layouts give the same scores)."""
    if view.qk == "ones":
        return np.ones(view.d), np.ones(view.d)
    pairs = np.random.default_rng(view.seed).standard_normal((2, 2, view.d // 2))
    return lay_out(pairs[0], view.layout), lay_out(pairs[1], view.layout)


def score_blocks(L: int) -> int:
    """Blocks of positions per axis of the L x L heatmaps (square, half the page's width)."""
    return min(heatmap_grid(L, L, across=HALF_PLOT_COLS))


def cache_grid(L: int, d: int) -> tuple[int, int]:
    """Rows and columns drawn of an L x d cos table (half the page's width)."""
    return heatmap_grid(L, d, across=HALF_PLOT_COLS, power_of_two_columns=True)


def window_positions(L: int) -> tuple[int, np.ndarray]:
    """W and the positions measured directly: 0 .. W-1, then L-W .. L-1, apart when L >= 2 (their
    largest is L - 1, so pe_core.rotate reads the sequence length L, as the closed forms do)."""
    W = max(1, min(L // 2, MEASURE_WINDOW))
    return W, np.r_[np.arange(W), np.arange(L - W, L)]


def span(first: int, last: int) -> str:
    """'position 5' or 'positions 0..63'."""
    return f"position {first:,}" if first == last else f"positions {first:,}..{last:,}"
