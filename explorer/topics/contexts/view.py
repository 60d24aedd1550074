"""Longer contexts' view: what the page shows (``ContextView``: a model's RoPE, the length it was
trained on and the length to reach, a method and every method's parameters), its defaults, and the
page's own URL keys with their limits."""

from __future__ import annotations

from dataclasses import dataclass

from explorer import rope_methods
from explorer.rope_methods import NONE
from explorer.settings import format_number

#: Limits of the page's own keys. Lengths up to 2**24 tokens (Llama 4 Scout's 10M fits).
LENGTH_MAX = 2**24
FACTOR_MAX = 1024.0
BASE_MAX = 1e12
#: YaRN's beta_fast and beta_slow, llama3's low and high frequency factors, in turns or ratios.
PARAMETER_MAX = 1024.0
#: mscale, mscale_all_dim and an attention factor given by a config (0: not given).
MSCALE_MAX = 100.0


@dataclass(frozen=True)
class ContextView:
    """What the page shows: a model's RoPE, its lengths and a method with every method's parameters.

    ``d`` is the rotary dimension (the sidebar's d), ``base`` the RoPE base; ``trained`` the
    length the model was trained on (L0, a config's ``original_max_position_embeddings``),
    ``target`` the length to reach (L); ``max_positions`` a config's ``max_position_embeddings``
    (0: not given), which dynamic NTK takes as its original length, as transformers does.
    ``mscale``, ``mscale_all_dim`` and ``attention_factor`` of 0 mean "not given"; they and the
    LongRoPE lists belong to the chosen method only. ``low_freq`` .. ``beta_slow`` and ``partial`` are the
    methods' own parameters (``explorer.rope_methods.own_parameters``), named as its PARAMETERS: the page
    draws a box for each, and a method with a parameter of its own adds a field here of its key.
    """

    d: int = 128
    base: float = 10000.0
    method: str = "yarn"
    factor: float = 4.0
    trained: int = 4096
    target: int = 16384
    max_positions: int = 0
    low_freq: float = 1.0
    high_freq: float = 4.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    partial: float = 0.25
    truncate: bool = True
    mscale: float = 0.0
    mscale_all_dim: float = 0.0
    attention_factor: float = 0.0
    short_factor: tuple[float, ...] | None = None
    long_factor: tuple[float, ...] | None = None

    @property
    def pairs(self) -> int:
        return self.d // 2

    @property
    def has_lists(self) -> bool:
        """Whether LongRoPE's factor lists are here, one number per pair."""
        return (
            self.short_factor is not None and self.long_factor is not None
            and len(self.short_factor) == len(self.long_factor) == self.pairs
        )

    def describe(self) -> str:
        how = "plain RoPE" if self.method == NONE else f"{rope_methods.method_label(self.method)} x{self.factor:g}"
        return (
            f"d={self.d}, base {format_number(self.base)}, trained on {self.trained:,}, "
            f"run at {self.target:,}, {how}"
        )


DEFAULT_VIEW = ContextView()
#: The URL keys of the page's own settings (the sidebar's d and n hold d and the base).
PAGE_KEYS = (
    "method", "factor", "trained", "target", "max_positions", "low_freq", "high_freq",
    "beta_fast", "beta_slow", "partial", "truncate", "mscale", "mscale_all_dim", "attention_factor",
)
