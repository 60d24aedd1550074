r"""A model's stack read layer by layer (``read_stack``, through ``pe_core.model_layers``), grouped into its
layer types, and what each type does with positions at a target length.

A layer that sees W keys (a sliding window; Llama 4's chunk, at most) meets offsets up to W - 1 whatever the
text's length, so over a text of L tokens it turns pair i through the angles up to
:math:`\min(L, W)\,\theta'_i(L)` (:math:`\theta'_i(L)`: its frequencies on a text of L tokens, which only
dynamic NTK and LongRoPE change with L). Trained on :math:`L_0` tokens (the config's
``max_position_embeddings``, the length the model as shipped was trained to), the pair meets angles it never
met when

.. math::

    \text{unseen}_i = \big(\min(L_0, W)\,\theta'_i(L_0) < 2\pi\big) \wedge
    \big(\min(L, W)\,\theta'_i(L) > \min(L_0, W)\,\theta'_i(L_0)\big)

(``pe_core.angle_coverage``'s reading, with the layer's reach). A pair whose wavelength :math:`2\pi/\theta'_i`
exceeds W never completes a turn inside the window. An unrotated pair (frequency 0: a proportional head's last
pairs; the coordinates past a partial head's rotary part) carries no position.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

import pe_core
from explorer import rope_methods
from explorer.model_configs import load_config, model_config
from pe_core.rope.config import language_model_config
from pe_core.rope.context import COVERAGE_RTOL
from pe_core.rope.layers import layer_head_dim, layer_rope_config

#: URL value of the model key when the config is the visitor's (pasted or uploaded).
CUSTOM_MODEL = "custom"
#: The widest head this page draws (the sidebar's largest d elsewhere): a chart's pairs stay within its budget.
HEAD_DIM_MAX = 2048
#: The target length's limits: Llama 4 Scout runs to 10,485,760 tokens.
TARGET_MAX = 1 << 24
DEFAULT_TARGET = 262_144
#: A config that gives no max_position_embeddings is read as trained to this many tokens (Llama 2's).
DEFAULT_TRAINED = 4096
#: The score-by-offset curves sum at most this many offsets x pairs per layer type, and cover at most
#: this many offsets (beyond, the windows' edges are all drawn: the largest window shipped is 4096).
CURVE_TERMS, CURVE_MAX_OFFSETS = 2_000_000, 16_384
#: How much of a kind's layer runs its table cell shows (the stack's chart shows every layer).
RUNS_SHOWN = 20
#: The layer types in words.
LAYER_TYPE_NAMES = {
    "full_attention": "full attention",
    "sliding_attention": "sliding window",
    "chunked_attention": "chunked attention",
    "linear_attention": "linear attention",
}


@dataclass(frozen=True)
class LayerKind:
    """The layers of one type that do the same with positions: their indices, and what their RoPE is.

    ``head_dim``: the head coordinates a query meets a key on (the part that rotates and the rest);
    ``inv_freq``: :math:`\\theta'_i` as model_layers holds it, as the model's rotary embedding starts (None: no
    position; a proportional head's unrotated pairs are 0); ``rope``: its d, base and scaling as the config
    reader reads them, from which ``frequencies`` and ``attention`` give them at any length (None: no position)."""

    layer_type: str
    rotary: bool
    layers: tuple[int, ...]
    head_dim: int
    inv_freq: np.ndarray | None
    rope: pe_core.RopeConfig | None
    window: int | None
    chunk: int | None
    query_scale: bool

    @property
    def name(self) -> str:
        """'sliding window', or 'full attention (NoPE)' where the type carries no position."""
        base = LAYER_TYPE_NAMES.get(self.layer_type, self.layer_type)
        return base if self.rotary else f"{base} (no position)"

    @property
    def seen(self) -> int | None:
        """Keys a query of this type sees at most: its window or its chunk (None: every earlier key)."""
        return self.window or self.chunk

    @property
    def head_pairs(self) -> int:
        return self.head_dim // 2

    def frequencies(self, length: int | None) -> np.ndarray:
        """:math:`\theta'_i` of the rotary pairs on a text of ``length`` tokens, in float32 as the model holds them
        (``inv_freq`` at None); empty for a kind without position."""
        if self.rope is None:
            return np.zeros(0)
        theta = pe_core.rope_frequencies(self.rope.d, self.rope.base, scaling=self.rope.scaling, length=length)
        return theta.astype(np.float32).astype(np.float64)

    def attention(self, length: int | None) -> float:
        """The attention factor cos and sin are multiplied by on a text of ``length`` tokens."""
        return 1.0 if self.rope is None else pe_core.rope_attention_factor(self.rope.scaling, length)

    @property
    def rotated_pairs(self) -> int:
        """Pairs that turn with position (non-zero frequency)."""
        return 0 if self.inv_freq is None else int(np.count_nonzero(self.inv_freq))

    @property
    def unrotated_pairs(self) -> int:
        """Pairs of the head that carry no position: zero-frequency pairs and those past the rotary part."""
        return self.head_pairs - self.rotated_pairs

    def span(self, length: int) -> int:
        """The offsets this type meets over a text of ``length`` tokens: min(length, window or chunk)."""
        return length if self.seen is None else min(length, self.seen)

    def scaling_text(self) -> str:
        """'linear ×8', 'none', or '' where the type carries no position."""
        if self.rope is None:
            return ""
        scaling = self.rope.scaling
        return "none" if scaling is None else f"{rope_methods.method_short(scaling.method)} ×{scaling.factor:g}"


@dataclass(frozen=True)
class ModelStack:
    """A model's decoder layers (``pe_core.model_layers``) grouped into kinds, its trained length, and Llama 4's
    query-scale parameters (None where no layer scales its queries)."""

    name: str
    layers: tuple[pe_core.LayerPositions, ...]
    kinds: tuple[LayerKind, ...]
    trained: int
    trained_given: bool
    floor_scale: int | None
    attn_scale: float | None

    def kind_of(self, index: int) -> LayerKind:
        return next(kind for kind in self.kinds if index in kind.layers)


def read_stack(config: Mapping, name: str = "your config") -> ModelStack:
    """The stack of ``config`` (a config.json dict); ValueError (what to fix) for anything pe_core refuses."""
    layers = pe_core.model_layers(config)
    groups: dict[tuple[str, bool], list[int]] = {}
    for layer in layers:
        groups.setdefault((layer.layer_type, layer.rotary), []).append(layer.index)
    kinds = []
    for (layer_type, rotary), indices in groups.items():
        first = layers[indices[0]]
        kinds.append(LayerKind(
            layer_type=layer_type, rotary=rotary, layers=tuple(indices),
            head_dim=layer_head_dim(config, layer_type),
            inv_freq=first.inv_freq,
            rope=layer_rope_config(config, layer_type) if rotary else None,
            window=first.window, chunk=first.chunk, query_scale=first.query_scale,
        ))
    widest = max(kind.head_dim for kind in kinds)
    if widest > HEAD_DIM_MAX:
        raise ValueError(f"A head of {widest:,} coordinates: this page draws heads of at most {HEAD_DIM_MAX:,} (the "
                         "widest shipped, Gemma 4's global heads, have 512); check head_dim.")
    text = language_model_config(config)
    given = text.get("max_position_embeddings")
    trained = int(given) if isinstance(given, int | float) and not isinstance(given, bool) and given >= 1 else None
    scaled = any(layer.query_scale for layer in layers)
    return ModelStack(
        name=name, layers=layers, kinds=tuple(kinds),
        trained=min(trained or DEFAULT_TRAINED, TARGET_MAX), trained_given=trained is not None,
        floor_scale=int(text.get("floor_scale", 8192)) if scaled else None,
        attn_scale=float(text.get("attn_scale", 0.1)) if scaled else None,
    )


def preset_stack(key: str) -> ModelStack:
    """A model preset's stack (explorer.model_configs)."""
    return read_stack(load_config(key), model_config(key).name)


def layer_runs(indices: tuple[int, ...], limit: int | None = None) -> str:
    """Layer indices as runs: '0-4, 6-10, 12'; with ``limit``, the runs that fit in about that many characters
    and '...' (a table's cell on a projector)."""
    runs: list[str] = []
    start = previous = indices[0]
    for index in (*indices[1:], None):
        if index is not None and index == previous + 1:
            previous = index
            continue
        runs.append(str(start) if start == previous else f"{start}-{previous}")
        if index is not None:
            start = previous = index
    text = ", ".join(runs)
    if limit is None or len(text) <= limit:
        return text
    return text[: text.rfind(", ", 0, limit)] + ", ..."


@dataclass(frozen=True)
class KindCoverage:
    r"""Per pair of a kind's head (``head_pairs`` of them): wavelength :math:`2\pi/\theta'_i` (inf for an
    unrotated pair), turns over the offsets seen in training and at the target, whether the pair never
    completes a turn inside the window (or chunk), and whether it meets angles unseen in training."""

    wavelength: np.ndarray
    turns_trained: np.ndarray
    turns_target: np.ndarray
    beyond_window: np.ndarray
    unseen: np.ndarray


def head_frequencies(kind: LayerKind, length: int | None = None) -> np.ndarray:
    """:math:`\theta'_i` over the whole head on a text of ``length`` tokens (dynamic NTK and LongRoPE depend on
    it; None: as the model's rotary embedding starts): the kind's, then 0 for the pairs past its rotary part."""
    theta = np.zeros(kind.head_pairs)
    if kind.rope is not None:
        rotary = kind.frequencies(length)
        theta[: rotary.size] = rotary
    return theta


def coverage(kind: LayerKind, trained: int, target: int) -> KindCoverage:
    """Each pair of the kind's head at the trained and the target lengths (see the module's docstring)."""
    at_trained, at_target = head_frequencies(kind, trained), head_frequencies(kind, target)
    rotated = at_target > 0
    with np.errstate(divide="ignore"):
        wavelength = np.where(rotated, 2 * math.pi / np.where(rotated, at_target, 1.0), np.inf)
    turns_trained = kind.span(trained) * at_trained / (2 * math.pi)
    turns_target = kind.span(target) * at_target / (2 * math.pi)
    # λ_i > W, written as W θ'_i < 2π: no division, as the reproduce-this code writes it.
    beyond = rotated & (kind.seen * at_target < 2 * math.pi) if kind.seen is not None else np.zeros_like(rotated)
    # (an arc longer by float64 rounding alone is covered, as pe_core.angle_coverage reads it)
    unseen = rotated & (turns_trained < 1) & (turns_target > turns_trained * (1 + COVERAGE_RTOL))
    return KindCoverage(wavelength, turns_trained, turns_target, beyond, unseen)


def curve_offsets(stack: ModelStack, target: int) -> int:
    """Offsets 0 .. count - 1 the score curves cover: the target's, within CURVE_TERMS and CURVE_MAX_OFFSETS."""
    widest = max(kind.head_pairs for kind in stack.kinds)
    return max(1, min(target, CURVE_MAX_OFFSETS, CURVE_TERMS // widest))


def score_by_offset(kind: LayerKind, count: int, length: int) -> np.ndarray:
    r"""The score of all-ones q and k at offsets 0 .. count - 1 on this kind's layers, on a text of ``length``
    tokens, as the model computes it: :math:`a^2 \sum_i 2\cos(\delta\theta'_i)` over the rotary pairs plus 1 for
    each coordinate RoPE leaves alone (``head_dim`` for a layer without position); only the offsets inside the
    window or chunk (a query sees no key further)."""
    count = kind.span(count)
    if kind.rope is None:
        return np.full(count, float(kind.head_dim))
    theta, a = kind.frequencies(length), kind.attention(length)
    rest = kind.head_dim - 2 * theta.size
    offsets = np.arange(count, dtype=np.float64)
    scores = np.empty(count)
    for first in range(0, count, 4096):  # blocks of offsets x pairs, a few MB at most
        delta = offsets[first: first + 4096, None]
        scores[first: first + 4096] = a * a * 2 * np.cos(delta * theta).sum(axis=1) + rest
    return scores


def query_scale_steps(stack: ModelStack, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Llama 4's query scale over positions 0 .. length - 1 (``pe_core.llama4_query_scale``), as its steps: the
    first position of each (0, then k floor_scale - 1) and the scale from there on."""
    # (floor_scale 1 steps at position 0 already: unique)
    starts = np.unique(np.r_[0, np.arange(1, length // stack.floor_scale + 1) * stack.floor_scale - 1])
    return starts, pe_core.llama4_query_scale(starts, floor_scale=stack.floor_scale, attn_scale=stack.attn_scale)


def query_scale_positions(stack: ModelStack, target: int) -> int:
    """How many positions the query-scale curve shows: the target's, at least four steps of floor_scale."""
    return int(min(max(target, 4 * (stack.floor_scale or 1)), TARGET_MAX))


def play_targets(stack: ModelStack, target: int, frames: int) -> np.ndarray:
    """Play's target lengths: from the smallest window (or 64) geometrically to the larger of the target and
    the trained length, the view's target among them."""
    seen = [kind.seen for kind in stack.kinds if kind.seen]
    low = max(1, min([*seen, 64]) // 2)
    high = max(target, stack.trained, low + 1)
    sweep = np.round(np.geomspace(low, high, max(2, frames))).astype(np.int64)
    return np.unique(np.r_[sweep, target])
