r"""Attention by offset: what each positional scheme puts into the score of a query and a key that
carry no content, as a function of the offset :math:`\delta` = key - query, and where softmax then
looks. Analysis, figure builders and reproduce-this code, without Streamlit
(pages/attention_page.py lays them out).

The schemes (the score a content-free query at m gives a key at n = m + :math:`\delta`):

- sinusoidal, added to the input (Vaswani et al. 2017): :math:`P[m]\cdot P[n] = \sum_i\cos(\omega_i\delta)`
  (``pe_core.dot_by_offset``), with the identity for the query and key projections;
- RoPE (Su et al. 2021): all-ones q and k turned by their positions,
  :math:`\sum_i 2\cos(\theta_i\delta)`, which is also the expected score of a random q = k
  (``pe_core.rope_dot_by_offset``);
- ALiBi (Press et al. 2022): :math:`-m_h|\delta|` (``pe_core.alibi_bias``);
- T5 (Raffel et al. 2020): a learned scalar per head and bucket of :math:`\delta`
  (``pe_core.t5_relative_bucket``), here a seeded random table;
- a learned absolute table (seeded random): :math:`P[m]\cdot P[n]` depends on m, not on
  :math:`\delta` alone;
- no position: 0.

Every number is exact and nothing of size L x L (or L x d) is built: the scores are closed forms
over the 2L - 1 offsets (a query's scores are a slice of them), and the learned table's rows are
bits whose dot products are counts of differing bits.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import animation, reproduce
from explorer.figures import ENVELOPE_HOVER, MARGIN, chart_title, figure, line_xy
from explorer.settings import Settings

# ------------------------------------------------------------------------- the schemes


@dataclass(frozen=True)
class Scheme:
    """A positional scheme: its short name (panels), its full name, its colour in every chart."""

    short: str
    label: str
    color: str


#: Colours: Okabe and Ito's palette, told apart with any colour vision, the same scheme alike in every chart.
SCHEMES: dict[str, Scheme] = {
    "sinusoidal": Scheme("sinusoidal", "Sinusoidal, added to the input", "#0072b2"),
    "rope": Scheme("RoPE", "RoPE (rotary)", "#56b4e9"),
    "alibi": Scheme("ALiBi", "ALiBi (linear bias)", "#d55e00"),
    "t5": Scheme("T5", "T5 relative buckets", "#009e73"),
    "learned": Scheme("learned", "Learned absolute table", "#cc79a7"),
    "none": Scheme("none", "No position", "#e69f00"),
}
#: ALiBi's other heads, and the dotted line at the query.
MUTED = "#9e9e9e"
SCHEME_KEYS: tuple[str, ...] = tuple(SCHEMES)
#: Schemes whose score is a dot product of two vectors (scaled by 1/√d when asked); the others add a bias.
DOT_PRODUCT_SCHEMES = ("sinusoidal", "rope", "learned")
#: Schemes whose score depends on the offset alone (the chart by offset); "learned" depends on m too.
OFFSET_SCHEMES = tuple(key for key in SCHEME_KEYS if key != "learned")

HEADS_MIN, HEADS_MAX, HEADS_DEFAULT = 1, 128, 8
#: The query position of a fresh page (clamped to L - 1).
QUERY_DEFAULT = 50
#: Shorter titles for the tables' widest columns (the full name is the column's help): at full
#: length the one-query table ran 930 px wide in a 1280 x 720 page's 818.
TABLE_TITLES: dict[str, str] = {
    "weight on its own key": "own key",
    "largest weight": "largest",
    "half the weight within ± r": "half within ± r",
    "that is keys": "those keys",
    "effective keys e^H": "e^H",
    "keys it sees": "keys seen",
    "weight halves every (positions)": "halves every",
    "offsets δ = key − query": "δ = key − query",
    "offsets of this view": "in this view",
}
#: T5's setting (Raffel et al. 2020, section 2.1; every released T5 uses it).
T5_BUCKETS, T5_MAX_DISTANCE = 32, 128
#: Seeds of the random stand-ins for learned values: fixed, as a stored checkpoint is.
T5_BIAS_SEED, LEARNED_SEED = 0, 1
#: Rows of the learned table drawn by one seeded generator: any row is drawn with its block alone.
LEARNED_BLOCK = 256
#: Play: at most this many points per panel and frame (one per key, or one per block of keys).
PLAY_POINTS = 200
#: A Play panel's two traces in a frame's JSON beyond their values (keys, the marker's two floats
#: written in full), as a number of float32 values: about 110 bytes.
PLAY_PANEL_OVERHEAD = 20
#: Play's log-scale panels reach down to this weight at most (eight decades under 1).
PLAY_FLOOR = 1e-8
#: Height of one panel of a stacked chart, and the chart's height beyond its panels.
PANEL_PX, FRAME_PX = 150, 130
#: Between two columns of panels, as a fraction of the chart's width: room for the right one's y axis.
COLUMN_GAP = 0.12


@dataclass(frozen=True)
class View:
    """The page's own controls: the schemes shown, the mask, the 1/√d scaling, the heads and the head shown."""

    schemes: tuple[str, ...] = SCHEME_KEYS
    causal: bool = True
    scaled: bool = True
    heads: int = HEADS_DEFAULT
    head: int = 1

    @property
    def key(self) -> tuple:
        """The view as plain values: what a cached section is keyed by (a tuple hashes in a third
        of the time Streamlit takes for the dataclass, on every rerun)."""
        return (self.schemes, self.causal, self.scaled, self.heads, self.head)

    @property
    def offset_schemes(self) -> tuple[str, ...]:
        return tuple(key for key in self.schemes if key in OFFSET_SCHEMES)


def dot_scale(d: int, scaled: bool) -> float:
    """The factor of the dot-product scores: 1/√d (scaled dot-product attention) or 1."""
    return 1.0 / math.sqrt(d) if scaled else 1.0


def all_offsets(L: int) -> np.ndarray:
    """Every offset key - query of L positions, -(L-1) .. L-1 (the arrays here are indexed δ + L - 1)."""
    return np.arange(-(L - 1), L)


def shown_offsets(L: int, causal: bool) -> np.ndarray:
    """The offsets a query can see: -(L-1) .. 0 with the causal mask, else -(L-1) .. L-1."""
    return np.arange(-(L - 1), 1 if causal else L)


def span(first: int, last: int) -> str:
    """'3 .. 7', or '3' when the range holds one number (a single position: L = 1, or m = 0 causal)."""
    return f"{first:,}" if first == last else f"{first:,} .. {last:,}"


def counted(count: int, noun: str) -> str:
    """'1 key', '5 keys'."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _mode(points: int) -> str:
    """A line of one point draws nothing: a marker then."""
    return "lines" if points > 1 else "markers"


def mirrored(values_from_zero: np.ndarray) -> np.ndarray:
    """f(t) for t = -(L-1)..L-1 from f(0..L-1), for an f even in t."""
    half = np.asarray(values_from_zero, dtype=np.float64)
    return np.r_[half[:0:-1], half]


# ------------------------------------------------------------------------- T5's bias table


def t5_bias_table(heads: int) -> np.ndarray:
    """T5's learned bias per head and bucket, here seeded standard normal values (heads, 32): the
    first H rows of one table, so a head keeps its biases when the number of heads changes."""
    return np.random.default_rng(T5_BIAS_SEED).standard_normal((heads, T5_BUCKETS))


def t5_buckets(offsets: np.ndarray, causal: bool) -> np.ndarray:
    """T5's bucket of each offset: its decoder's (causal) or its encoder's (bidirectional)."""
    return pe_core.t5_relative_bucket(
        offsets, bidirectional=not causal, num_buckets=T5_BUCKETS, max_distance=T5_MAX_DISTANCE
    )


@dataclass(frozen=True)
class BucketRange:
    """The offsets one T5 bucket holds: first .. last, either end None when it is open."""

    bucket: int
    first: int | None
    last: int | None

    @property
    def text(self) -> str:
        if self.first is None:
            return f"δ ≤ {self.last}"
        if self.last is None:
            return f"δ ≥ {self.first}"
        return f"δ = {span(self.first, self.last)}"


@functools.cache
def t5_bucket_ranges(causal: bool) -> tuple[BucketRange, ...]:
    """The offsets of each of T5's buckets (T5's own boundaries: 8 exact distances each side,
    then logarithmic steps up to 128; every farther key shares the last bucket). Fixed for each
    mask: worked out once (a page run asks for them three times)."""
    reach = 4 * T5_MAX_DISTANCE  # every bucket is reached well inside it, the last ones stay open
    offsets = np.arange(-reach, reach + 1)
    buckets = t5_buckets(offsets, causal)
    ranges = []
    for bucket in range(T5_BUCKETS):
        held = offsets[buckets == bucket]
        if held.size == 0:
            continue
        first, last = int(held.min()), int(held.max())
        ranges.append(BucketRange(bucket, None if first == -reach else first, None if last == reach else last))
    return tuple(ranges)


def t5_shared_from(causal: bool) -> int:
    """The distance from which every key before the query shares T5's last bucket (113 causal, 91
    bidirectional: the logarithmic steps reach the last bucket before max_distance 128)."""
    return -next(r.last for r in t5_bucket_ranges(causal) if r.first is None)


def t5_bucket_table(L: int, view: View) -> pd.DataFrame:
    """Each bucket: the offsets it holds, how many of this view's offsets fall in it, and the
    bias of the head shown."""
    counts = np.bincount(t5_buckets(shown_offsets(L, view.causal), view.causal), minlength=T5_BUCKETS)
    bias = t5_bias_table(view.heads)[view.head - 1]
    ranges = t5_bucket_ranges(view.causal)
    return pd.DataFrame({
        "bucket": [r.bucket for r in ranges],
        "offsets δ = key − query": [r.text for r in ranges],
        "offsets of this view": [int(counts[r.bucket]) for r in ranges],
        f"bias of head {view.head} (random)": [float(bias[r.bucket]) for r in ranges],
    })


# ------------------------------------------------------------------------- the learned table


def learned_bytes(first_block: int, blocks: int, d: int) -> np.ndarray:
    """The learned table's rows of blocks first_block .. first_block+blocks-1, as bytes
    (LEARNED_BLOCK rows per block, ceil(d/8) bytes per row; bit j of a row, most significant
    first, is 1 where the table holds -1 in column j)."""
    width = (d + 7) // 8
    return np.concatenate([
        np.random.default_rng([LEARNED_SEED, block]).integers(0, 256, size=(LEARNED_BLOCK, width), dtype=np.uint8)
        for block in range(first_block, first_block + blocks)
    ])


def learned_table(L: int, d: int) -> np.ndarray:
    r"""The learned absolute table's rows 0 .. L-1 (L, d): each value +1 or -1 with equal chance
    (mean 0, variance 1, as the standard normal an nn.Embedding starts from), seeded, one
    generator per block of LEARNED_BLOCK rows. For small tables (tests, downloads of rows)."""
    blocks = -(-L // LEARNED_BLOCK)
    bits = np.unpackbits(learned_bytes(0, blocks, d)[:L], axis=1)[:, :d]
    return 1.0 - 2.0 * bits


def learned_bits(L: int, d: int) -> np.ndarray:
    r"""The same rows as learned_table, packed: (L, ceil(d/64)) uint64 words, the bits past d cleared.

    :math:`P[m]\cdot P[n] = d - 2\,\mathrm{popcount}(b_m \oplus b_n)`: a value pair agrees (+1)
    or differs (-1) as its bits do. At L=16384, d=2048 that is 4 MB instead of 256."""
    blocks = -(-L // LEARNED_BLOCK)
    rows = learned_bytes(0, blocks, d)[:L]
    if d % 8:
        rows[:, -1] &= np.uint8((0xFF << (8 - d % 8)) & 0xFF)
    words = -(-rows.shape[1] // 8)
    padded = np.zeros((L, 8 * words), dtype=np.uint8)
    padded[:, : rows.shape[1]] = rows
    return padded.view(np.uint64)


def learned_scores(bits: np.ndarray, query: int, d: int) -> np.ndarray:
    """P[query]·P[n] for every row n of the packed table (d - 2 x the number of differing bits)."""
    return d - 2.0 * learned_differing(bits, np.array([query]))[0]


def learned_differing(bits: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """How many bits of row m differ from row n's, for each query m of ``queries`` (rows) and every
    row n of the packed table (columns), in 16 bits (at most d <= 2048 of them). Counted word by
    word: a sum along rows of at most 32 words is numpy's slow case (twice the time)."""
    differing = np.zeros((queries.size, bits.shape[0]), dtype=np.uint16)
    pairs = np.empty(differing.shape, dtype=np.uint64)
    for word in np.ascontiguousarray(bits.T):
        differing += np.bitwise_count(np.bitwise_xor(word, word[queries][:, None], out=pairs))
    return differing


# ------------------------------------------------------------------------- scores and weights


@dataclass(frozen=True)
class OffsetScores:
    """Each chosen offset scheme's score s(δ) for δ = -(L-1) .. L-1 (``values[key][δ + L - 1]``),
    scaled as the view asks, and ALiBi's slopes."""

    L: int
    values: dict[str, np.ndarray]
    slopes: np.ndarray

    def at_query(self, key: str, query: int) -> np.ndarray:
        """s(n - query) for every key n = 0 .. L-1."""
        return self.values[key][self.L - 1 - query : 2 * self.L - 1 - query]


def offset_scores(
    L: int, d: int, view: View, *, sinusoid_from_zero: np.ndarray, rope_from_zero: np.ndarray
) -> OffsetScores:
    r"""The scores by offset of the view's offset schemes (every one, whatever the view shows, for
    the Play and the snippet alike), from the closed forms :math:`f(t)` for t = 0 .. L-1 (or more):
    the sinusoid's ``dot_by_offset`` and RoPE's ``rope_dot_by_offset``, both even in t."""
    offsets = all_offsets(L)
    scale = dot_scale(d, view.scaled)
    values = {
        "sinusoidal": scale * mirrored(sinusoid_from_zero[:L]),
        "rope": scale * mirrored(rope_from_zero[:L]),
        "alibi": pe_core.alibi_bias(offsets, view.heads)[view.head - 1],
        "t5": t5_bias_table(view.heads)[view.head - 1][t5_buckets(offsets, view.causal)],
        "none": np.zeros(offsets.size),
    }
    return OffsetScores(L=L, values=values, slopes=pe_core.alibi_slopes(view.heads))


def query_scores(scores: OffsetScores, bits: np.ndarray, query: int, d: int, view: View) -> dict[str, np.ndarray]:
    """Every chosen scheme's scores of the query at ``query`` against each key n = 0 .. L-1."""
    by_key = {}
    for key in view.schemes:
        if key == "learned":
            by_key[key] = dot_scale(d, view.scaled) * learned_scores(bits, query, d)
        else:
            by_key[key] = scores.at_query(key, query)
    return by_key


def query_weights(scores_by_key: dict[str, np.ndarray], query: int, causal: bool) -> dict[str, np.ndarray]:
    """Softmax weights of the query over its keys, scheme by scheme (``pe_core.attention_weights``)."""
    return {key: pe_core.attention_weights(s, query, causal=causal) for key, s in scores_by_key.items()}


@dataclass(frozen=True)
class WhereItLooks:
    """Where one scheme's weights sit: on the query's own key, at their largest, within ±r (half)."""

    own: float
    largest: float
    largest_at: int
    half_radius: int
    effective: float
    seen: int


def where_it_looks(weights: np.ndarray, query: int, causal: bool) -> WhereItLooks:
    return WhereItLooks(
        own=float(weights[query]),
        largest=float(weights.max()),
        largest_at=int(np.argmax(weights)),
        half_radius=pe_core.half_mass_radius(weights, query),
        effective=pe_core.effective_keys(weights),
        seen=query + 1 if causal else weights.size,
    )


def where_table(weights: dict[str, np.ndarray], query: int, causal: bool) -> pd.DataFrame:
    """One row per scheme: the numbers of ``where_it_looks``."""
    rows = []
    for key, w in weights.items():
        found = where_it_looks(w, query, causal)
        low, high = max(0, query - found.half_radius), min(w.size - 1, query + found.half_radius)
        rows.append({
            "scheme": SCHEMES[key].label,
            "weight on its own key": found.own,
            "largest weight": found.largest,
            "at key": found.largest_at,
            "half the weight within ± r": found.half_radius,
            "that is keys": span(low, min(high, query) if causal else high),
            "effective keys e^H": found.effective,
            "keys it sees": found.seen,
        })
    return pd.DataFrame(rows)


def alibi_table(slopes: np.ndarray, L: int) -> pd.DataFrame:
    """ALiBi's heads: slope, its power of two, the distance over which a weight halves, the farthest bias."""
    heads = np.arange(1, slopes.size + 1)
    return pd.DataFrame({
        "head": heads,
        "slope m_h": slopes,
        "log2 m_h": np.log2(slopes),
        "weight halves every (positions)": math.log(2) / slopes,
        f"bias at δ = {1 - L:,}".replace("-", "−"): 0.0 - slopes * (L - 1),
    })


# ------------------------------------------------------------------------- Play: the query moving


def play_edges(L: int) -> np.ndarray:
    """The blocks of keys one Play point stands for: every key when L <= PLAY_POINTS."""
    return pe_core.block_edges(L, PLAY_POINTS)


def play_queries(L: int, panels: int) -> np.ndarray:
    """The query positions Play sweeps: as many as ``animation.frame_count`` allows for ``panels``
    lines of at most PLAY_POINTS values (and a two-point marker each, and their JSON's keys), evenly
    spread over 0 .. L-1."""
    points = play_edges(L).size - 1
    count = min(L, animation.frame_count(panels * (points + 2 + PLAY_PANEL_OVERHEAD)))
    return np.unique(np.round(np.linspace(0, L - 1, max(1, count))).astype(np.int64))


def play_weights(
    scores: OffsetScores, bits: np.ndarray, d: int, view: View, queries: np.ndarray
) -> dict[str, np.ndarray]:
    """Each chosen scheme's mean weight per key over each Play block of keys, for each query: (queries, blocks).
    Means, not sums: blocks of uneven sizes (1 or 2 keys for L = 300) would draw a flat weight as a zigzag.

    The weights are ``query_weights``' (``pe_core.attention_weights``) bit for bit: the same
    exponentials, each query's sum over the keys it sees, the same quotients; without pe_core's
    checks of each query's scores (made here, finite), and with exponentials shared by queries."""
    edges = play_edges(scores.L)
    weights = np.empty(scores.L)  # one query's at a time
    frames = {}
    for key in view.schemes:
        exps_by_query = (learned_play_exps(bits, queries, d, view) if key == "learned"
                         else offset_play_exps(scores.values[key], queries, view.causal))
        sums = np.empty((queries.size, edges.size - 1))
        for row, (query, exps) in enumerate(zip(queries.tolist(), exps_by_query, strict=True)):
            np.divide(exps, exps[: query + 1 if view.causal else scores.L].sum(), out=weights)
            np.add.reduceat(weights, edges[:-1], out=sums[row])
        frames[key] = sums / np.diff(edges)
    return frames


def learned_play_exps(bits: np.ndarray, queries: np.ndarray, d: int, view: View) -> Iterator[np.ndarray]:
    r"""For each query m of ``queries``, :math:`e^{s_n - \max s}` of the learned table's scores
    (``query_scores``) over the keys n it sees, 0 over the masked ones (``pe_core.attention_weights``)."""
    scale, L = dot_scale(d, view.scaled), bits.shape[0]
    for query, differing in zip(queries.tolist(), learned_differing(bits, queries), strict=True):
        seen = (scale * (d - 2.0 * differing))[: query + 1 if view.causal else L]
        exps = np.zeros(L)
        exps[: seen.size] = np.exp(seen - seen.max())
        yield exps


def offset_play_exps(values: np.ndarray, queries: np.ndarray, causal: bool) -> Iterator[np.ndarray]:
    r"""``learned_play_exps`` of a score by offset, ``values[δ + L - 1]``. Query m's scores are the
    window values[L-1-m : 2L-1-m] (``OffsetScores.at_query``), so the queries that see the same
    largest score share one array of exponentials (exp is taken value by value), each reading its
    window (causal: its offsets -m .. 0, then zeros); over the span of their windows alone, where no
    score exceeds that largest one."""
    L = (values.size + 1) // 2
    # The largest score each query sees: over the offsets -m .. 0 (causal), else over its window.
    tops = (np.maximum.accumulate(values[L - 1 :: -1])[queries] if causal
            else np.array([values[L - 1 - query : 2 * L - 1 - query].max() for query in queries.tolist()]))
    spans: dict[float, tuple[np.ndarray, int]] = {}
    for query, top in zip(queries.tolist(), tops.tolist(), strict=True):
        if top not in spans:
            sharing = queries[tops == top]
            low = L - 1 - int(sharing.max())
            span = np.exp(values[low : L if causal else 2 * L - 1 - int(sharing.min())] - top)
            spans[top] = (np.r_[span, np.zeros(L - 1)] if causal else span, low)
        span, low = spans[top]
        yield span[L - 1 - query - low : 2 * L - 1 - query - low]


# ------------------------------------------------------------------------- figures


def _stacked_layout(
    count: int, *, title: str, x_title: str, x_range: list[float], y_titles: Sequence[str], columns: int = 1,
) -> dict:
    """A layout of ``count`` panels, one under the other in each of ``columns`` columns (filled a
    row at a time: presentation mode's wide screen takes two), sharing one x range (the lowest
    panel of each column labels it), each with its own y axis. Plain dicts, as similarity's
    figure: make_subplots costs milliseconds of validation."""
    columns = max(1, min(columns, count))
    rows = math.ceil(count / columns) if count else 0
    gap = 0.35 / max(rows, 1) if rows > 1 else 0.0
    height = (1.0 - gap * (rows - 1)) / max(rows, 1)
    column_gap = COLUMN_GAP if columns > 1 else 0.0
    width = (1.0 - column_gap * (columns - 1)) / columns
    layout: dict = {}
    for panel in range(count):
        row, column = divmod(panel, columns)
        suffix = "" if panel == 0 else str(panel + 1)
        top = 1.0 - row * (height + gap)
        left = column * (width + column_gap)
        lowest = panel + columns >= count
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": [left, min(left + width, 1.0)],
                                    "range": x_range} | (
            {"title": {"text": x_title}} if lowest else {"showticklabels": False}
        )
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": [max(top - height, 0.0), top],
                                    "title": {"text": y_titles[panel]}}
    return layout | {
        "title": chart_title(title),
        "height": FRAME_PX + PANEL_PX * rows,
        "margin": dict(MARGIN),
        "showlegend": False,
        "hoverlabel": {"namelength": -1},
    }


def _axes(row: int) -> dict:
    suffix = "" if row == 0 else str(row + 1)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def _score_name(key: str, view: View, d: int) -> str:
    scale = "/√d" if view.scaled and key in DOT_PRODUCT_SCHEMES else ""
    return {
        "sinusoidal": f"Σ cos(ω_i δ){scale}",
        "rope": f"Σ 2 cos(θ_i δ){scale}",
        "alibi": f"−m_{view.head} |δ|",
        "t5": f"b_{view.head}[bucket(δ)]",
        "learned": f"P[m]·P[n]{scale}",
        "none": "0",
    }[key]


def scores_figure(scores: OffsetScores, view: View, d: int, *, title: str, columns: int = 1) -> go.Figure:
    """The score of each chosen offset scheme against δ, a panel each, in ``columns`` columns.
    ALiBi's panel draws every head (straight lines: their two ends and δ = 0 are exact), the
    head shown in bold."""
    keys = view.offset_schemes
    L = scores.L
    offsets = shown_offsets(L, view.causal)
    first = offsets[0]
    traces = []
    for row, key in enumerate(keys):
        values = scores.values[key][: offsets.size]
        if key == "alibi":
            ends = np.unique([first, 0, offsets[-1]])
            for head, slope in enumerate(scores.slopes, start=1):
                chosen = head == view.head
                traces.append({
                    "type": "scatter", "x": ends, "y": 0.0 - slope * np.abs(ends), "mode": _mode(ends.size),
                    "name": f"ALiBi head {head}",
                    "line": {"width": 3 if chosen else 1, "color": SCHEMES["alibi"].color if chosen else MUTED},
                    "opacity": 1.0 if chosen else 0.6,
                    "hovertemplate": f"head {head}, slope m = {slope:.6g}<br>δ = %{{x}}<br>bias = %{{y:.10g}}"
                    "<extra></extra>",
                    **_axes(row),
                })
            continue
        line = line_xy(values, x0=int(first))
        traces.append({
            "type": "scatter", **line, "mode": _mode(offsets.size), "name": SCHEMES[key].label,
            "line": {"color": SCHEMES[key].color},
            "hovertemplate": f"δ = %{{x}}<br>{_score_name(key, view, d)} = %{{y:.10g}}"
            + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
            **_axes(row),
        })
    layout = _stacked_layout(
        len(keys), title=title, x_title="offset δ = key − query (positions)",
        x_range=[float(first) - 0.5, float(offsets[-1]) + 0.5], y_titles=[SCHEMES[key].short for key in keys],
        columns=columns,
    )
    return figure(traces, layout)


def scores_table(scores: OffsetScores, view: View, d: int) -> pd.DataFrame:
    """``scores_figure``'s data: every shown offset, then each chosen offset scheme's score
    (ALiBi and T5 for the head shown; every ALiBi head is -m_h |δ| with the slopes listed)."""
    offsets = shown_offsets(scores.L, view.causal)
    return pd.DataFrame(
        {"offset δ": offsets}
        | {f"{SCHEMES[key].short}: {_score_name(key, view, d)}": scores.values[key][: offsets.size]
           for key in view.offset_schemes}
    )


def learned_keys(L: int, query: int, causal: bool) -> np.ndarray:
    """The keys a query sees: 0 .. query with the causal mask, else 0 .. L-1."""
    return np.arange(query + 1 if causal else L)


def learned_figure(scores_by_key: np.ndarray, query: int, view: View, d: int, *, title: str) -> go.Figure:
    """The learned table's score P[m]·P[n] of the query m against each key it sees, by offset n - m."""
    keys = learned_keys(scores_by_key.size, query, view.causal)
    values = scores_by_key[keys]
    line = line_xy(values, x0=-query)
    name = _score_name("learned", view, d)
    own = float(values[query])
    traces = [
        {"type": "scatter", **line, "mode": _mode(keys.size), "name": "learned table",
         "line": {"color": SCHEMES["learned"].color},
         "hovertemplate": f"δ = n − m = %{{x}}<br>{name} = %{{y:.10g}}"
         + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>"},
        {"type": "scatter", "x": [0], "y": [own], "mode": "markers", "name": "the query's own key",
         "marker": {"size": 9, "color": SCHEMES["learned"].color},
         "hovertemplate": f"δ = 0 (n = m = {query})<br>{name} = %{{y:.10g}}<extra></extra>"},
    ]
    return figure(traces, {
        "title": chart_title(title), "height": 360, "margin": dict(MARGIN), "showlegend": False,
        "hoverlabel": {"namelength": -1},
        "xaxis": {"title": {"text": "offset δ = key − query (positions)"},
                  "range": [-query - 0.5, float(keys[-1] - query) + 0.5]},
        "yaxis": {"title": {"text": name}},
    })


def learned_table_data(scores_by_key: np.ndarray, query: int, causal: bool) -> pd.DataFrame:
    """``learned_figure``'s data: each key the query sees, its offset and its score."""
    keys = learned_keys(scores_by_key.size, query, causal)
    return pd.DataFrame({"key n": keys, "offset δ = n − m": keys - query, "score": scores_by_key[keys]})


def weights_figure(
    weights: dict[str, np.ndarray], query: int, causal: bool, *, title: str, columns: int = 1,
) -> go.Figure:
    """Each chosen scheme's softmax weight on every key n the query sees (causal: 0 .. query; the
    masked keys, of weight 0, are not drawn), a panel each in ``columns`` columns, a dotted line
    at the query."""
    keys = list(weights)
    seen = query + 1 if causal else next(iter(weights.values())).size
    traces, shapes = [], []
    for row, key in enumerate(keys):
        line = line_xy(weights[key][:seen])
        traces.append({
            "type": "scatter", **line, "mode": _mode(seen), "name": SCHEMES[key].label,
            "line": {"color": SCHEMES[key].color},
            "hovertemplate": f"key n = %{{x}}<br>{SCHEMES[key].short} weight = %{{y:.7g}}"
            + (ENVELOPE_HOVER if "x" in line else "") + "<extra></extra>",
            **_axes(row),
        })
        axes = _axes(row)
        shapes.append({"type": "line", "x0": query, "x1": query, "xref": axes["xaxis"], "y0": 0, "y1": 1,
                       "yref": f"{axes['yaxis']} domain", "line": {"dash": "dot", "color": MUTED}})
    layout = _stacked_layout(len(keys), title=title, x_title="key position n", x_range=[-0.5, seen - 0.5],
                             y_titles=[SCHEMES[key].short for key in keys], columns=columns)
    for row, key in enumerate(keys):
        suffix = "" if row == 0 else str(row + 1)
        layout[f"yaxis{suffix}"]["range"] = [0.0, 1.08 * float(weights[key].max())]
    return figure(traces, layout | {"shapes": shapes})


def weights_table(weights: dict[str, np.ndarray], query: int) -> pd.DataFrame:
    """``weights_figure``'s data: every key, its offset from the query, each scheme's weight."""
    L = next(iter(weights.values())).size
    keys = np.arange(L)
    return pd.DataFrame(
        {"key n": keys, "offset δ = n − m": keys - query}
        | {f"{SCHEMES[key].short} weight": w for key, w in weights.items()}
    )


def play_range(values: np.ndarray) -> tuple[float, float]:
    """A Play panel's fixed y range (log scale): from its smallest positive weight (at least
    PLAY_FLOOR) to its largest, over every frame, with a margin."""
    positive = values[values > 0]
    return max(PLAY_FLOOR, float(positive.min())) / 1.5, 1.5 * float(positive.max())


def play_figure(
    frames: dict[str, np.ndarray], queries: np.ndarray, L: int, *, title: str, columns: int = 1,
) -> go.Figure:
    """Play: the weights of the query at m over the keys, one frame per m (``play_queries``), a panel
    per scheme (in ``columns`` columns) with a fixed log-scale y range (``play_range``: a causal
    query at 0 puts all its weight on one key, which a linear range would make every later frame
    look flat by), a dotted line at m.
    Each point is one key's weight, or the mean weight of the keys of a block (``play_edges``); masked
    keys (weight 0) are left out by the log scale. Frames carry y only (x stays)."""
    keys = list(frames)
    edges = play_edges(L)
    centres = (edges[:-1] + edges[1:] - 1) / 2.0
    per_key = edges.size - 1 == L
    ranges = {key: play_range(frames[key]) for key in keys}
    what = "weight" if per_key else "mean weight of the block's keys"
    hover = "key n = %{x}" if per_key else "keys around %{x}"

    def frame_data(index: int) -> list[dict]:
        query = int(queries[index])
        lines = [{"y": frames[key][index].astype(np.float32), "meta": query} for key in keys]
        markers = [{"x": [query, query], "y": list(ranges[key])} for key in keys]
        return lines + markers

    by_frame = [frame_data(index) for index in range(queries.size)]
    first = by_frame[0]
    traces = [
        {"type": "scatter", "x": centres, "mode": _mode(centres.size), "name": SCHEMES[key].label,
         "line": {"color": SCHEMES[key].color},
         "hovertemplate": f"{hover}<br>{SCHEMES[key].short} {what} = %{{y:.7g}}, m = %{{meta}}<extra></extra>",
         **_axes(row), **first[row]}
        for row, key in enumerate(keys)
    ] + [
        {"type": "scatter", "mode": "lines", "name": f"query m ({SCHEMES[key].short})",
         "line": {"dash": "dot", "color": MUTED}, "hoverinfo": "skip", **_axes(row), **first[len(keys) + row]}
        for row, key in enumerate(keys)
    ]
    layout = _stacked_layout(len(keys), title=title, x_title="key position n", x_range=[-0.5, L - 0.5],
                             y_titles=[SCHEMES[key].short for key in keys], columns=columns)
    for row, key in enumerate(keys):
        suffix = "" if row == 0 else str(row + 1)
        low, high = ranges[key]
        decades = math.log10(high) - math.log10(low)
        # Ticks on whole decades only (short ranges would label 2 and 5 of each too, crowding a panel).
        layout[f"yaxis{suffix}"] |= {"type": "log", "range": [math.log10(low), math.log10(high)],
                                     "dtick": max(1, math.ceil(decades / 4)), "exponentformat": "power"}
    moving = list(range(2 * len(keys)))
    play = [animation.frame(data, traces=moving, name=str(int(q))) for data, q in zip(by_frame, queries, strict=True)]
    return animation.play_figure(traces, layout, play, label="query position m", redraw=False)


def play_table(frames: dict[str, np.ndarray], queries: np.ndarray, L: int) -> pd.DataFrame:
    """``play_figure``'s frames: each block of keys (first, last), then each scheme's mean weight
    for each query m it sweeps."""
    edges = play_edges(L)
    columns = {"first key": edges[:-1], "last key": edges[1:] - 1}
    for index, query in enumerate(queries):
        for key, rows in frames.items():
            columns[f"{SCHEMES[key].short} @ m={int(query)}"] = rows[index]
    return pd.DataFrame(columns)


def play_note(L: int, queries: np.ndarray) -> str:
    """What the Play chart's points and frames are."""
    edges = play_edges(L)
    points = (
        "Each point is one key's weight"
        if edges.size - 1 == L else
        f"Each point is the mean weight of the keys of a block of about {L / (edges.size - 1):.0f} consecutive "
        f"keys ({edges.size - 1} blocks, exact means)"
    )
    sweep = ("there is one position, m = 0, and one frame" if queries.size == 1 else
             f"m goes from {int(queries[0]):,} to {int(queries[-1]):,} in {queries.size} frames") + (
        f" (evenly spread positions of 0..{L - 1:,})" if queries.size < L else "")
    return (f"{points}, on a log scale (masked keys, of weight 0, are left out). Press Play: {sweep}, drawn by "
            "your browser (no server run per frame).")


# ------------------------------------------------------------------------- reproduce this


_GET_SLOPES = '''def get_slopes(heads):
    """ALiBi's slopes, as ofirpress/attention_with_linear_biases writes them."""
    def power_of_2(h):
        start = 2 ** (-(2 ** -(math.log2(h) - 3)))
        return [start * start**i for i in range(h)]
    if math.log2(heads).is_integer():
        return power_of_2(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_2(closest) + get_slopes(2 * closest)[0::2][: heads - closest]


'''

_T5_BUCKET = {
    "numpy": '''def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's _relative_position_bucket (transformers' T5Attention), in NumPy, float32 as in T5."""
    relative_buckets = np.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).astype(np.int64) * num_buckets
        relative_position = np.abs(relative_position)
    else:
        relative_position = -np.minimum(relative_position, np.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) where is_small, as in T5
        if_large = max_exact + (
            np.log(relative_position.astype(np.float32) / max_exact)
            / math.log(max_distance / max_exact) * (num_buckets - max_exact)
        ).astype(np.int64)
    if_large = np.minimum(if_large, num_buckets - 1)
    return relative_buckets + np.where(is_small, relative_position, if_large)


''',
    "torch": '''def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's _relative_position_bucket, as transformers' T5Attention writes it."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, if_large)


''',
}

_LEARNED = '''def learned_table(L, d):
    """The learned table's rows 0..L-1, each value +1 or -1: the bits of seeded random bytes,
    one generator per block of {block} rows (so any row can be drawn with its block alone)."""
    blocks = [np.random.default_rng([{seed}, b]).integers(0, 256, size=({block}, (d + 7) // 8), dtype=np.uint8)
              for b in range((L + {block} - 1) // {block})]
    bits = np.unpackbits(np.concatenate(blocks)[:L], axis=1)[:, :d]
    return 1.0 - 2.0 * bits.astype(np.float32)  # ±1 sums are exact in float32


'''


def attention_code(settings: Settings, view: View, query: int, library: str = "numpy") -> str:
    """NumPy (or PyTorch) code for the page's four charts at these settings: the scores by offset,
    the learned table's scores, the weights of the query at ``query`` and the Play frames."""
    L, d = settings.L, settings.d
    torch = library == "torch"
    lib = "torch" if torch else "np"
    code = reproduce.title("Attention by offset", settings, f"the query at m = {query}")
    code += "import math\n\n" + reproduce.imports(library)
    code += (
        f"\nL, d, n = {L}, {d}, {reproduce.literal(settings.n)}\n"
        + ("i = torch.arange((d + 1) // 2, dtype=torch.float64)\n" if torch else "i = np.arange((d + 1) // 2)\n")
        + reproduce.rate_line(settings) + "  (the sinusoid; RoPE's θ_i below)\n"
        + f"heads, head, m = {view.heads}, {view.head}, {query}\n"
        + f"causal, scaled = {view.causal}, {view.scaled}\n"
        + f"schemes = {list(view.schemes)!r}  # the ones the page shows\n"
        + "scale = 1 / math.sqrt(d) if scaled else 1.0  # on the dot products, not on ALiBi's or T5's bias\n\n"
    )
    if torch:
        code += "delta = torch.arange(-(L - 1), L)  # every offset key - query\n"
        code += "theta = n ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # RoPE: θ_i = n^(-2i/d)\n"
        code += (
            "def sum_cos(rates):\n"
            "    return torch.cos(torch.outer(delta.to(torch.float64), rates)).sum(dim=1)\n\n\n"
        )
    else:
        code += "delta = np.arange(-(L - 1), L)  # every offset key - query\n"
        code += "theta = n ** (-np.arange(0, d, 2) / d)  # RoPE: θ_i = n^(-2i/d)\n"
        code += "def sum_cos(rates):\n    return np.cos(np.multiply.outer(delta, rates)).sum(axis=1)\n\n\n"
    code += (
        "by_offset = {\n"
        "    \"sinusoidal\": scale * sum_cos(w),  # P[k]·P[k+δ] = Σ cos(ω_i δ)\n"
        "    \"rope\": scale * 2 * sum_cos(theta),  # all-ones q = k (and the mean for random q = k)\n"
        "}\n\n"
    )
    code += _GET_SLOPES + _T5_BUCKET[library]
    zeros = "torch.zeros(delta.shape[0], dtype=torch.float64)" if torch else "np.zeros(delta.size)"
    if torch:
        code += (
            "slopes = torch.tensor(get_slopes(heads), dtype=torch.float64)\n"
            "t5_bias = torch.from_numpy(np.random.default_rng("
            f"{T5_BIAS_SEED}).standard_normal((heads, 32)))  # stands in for learned values\n"
            "by_offset[\"alibi\"] = -slopes[head - 1] * delta.abs()\n"
        )
    else:
        code += (
            "slopes = np.array(get_slopes(heads))\n"
            f"t5_bias = np.random.default_rng({T5_BIAS_SEED}).standard_normal((heads, 32))"
            "  # stands in for learned values\n"
            "by_offset[\"alibi\"] = -slopes[head - 1] * np.abs(delta)\n"
        )
    code += (
        "by_offset[\"t5\"] = t5_bias[head - 1][relative_position_bucket(delta, bidirectional=not causal)]\n"
        f"by_offset[\"none\"] = {zeros}\n\n"
    )
    learned = "learned" in view.schemes
    if learned:
        code += _LEARNED.format(seed=LEARNED_SEED, block=LEARNED_BLOCK)
        size = L * d * 4
        memory = f"  # {size / 1e9:.1f} GB: in blocks of rows if that is too much" if size > 5e8 else ""
        code += f"P = {'torch.from_numpy(learned_table(L, d))' if torch else 'learned_table(L, d)'}{memory}\n"
    cast = ".to(torch.float64)" if torch else ".astype(np.float64)"
    code += (
        f"keys = {lib}.arange(L)\n\n\n"
        "def weights_at(q):\n"
        '    """Each scheme\'s softmax weights of the query at q over the keys n = 0..L-1."""\n'
        "    scores = {key: by_offset[key][keys - q + L - 1] for key in by_offset}\n"
        + (f"    scores[\"learned\"] = scale * (P @ P[q]){cast}\n" if learned else "")
        + "    visible = q + 1 if causal else L\n"
        "    weights = {}\n"
        "    for key in schemes:\n"
    )
    if torch:
        code += (
            "        a = torch.zeros(L, dtype=torch.float64)\n"
            "        a[:visible] = torch.softmax(scores[key][:visible], dim=0)\n"
            "        weights[key] = a\n"
        )
    else:
        code += (
            "        e = np.exp(scores[key][:visible] - scores[key][:visible].max())\n"
            "        weights[key] = np.r_[e / e.sum(), np.zeros(L - visible)]\n"
        )
    code += "    return weights\n\n\n"
    edges = play_edges(L)
    queries = play_queries(L, len(view.schemes))
    stack = "torch.column_stack" if torch else "np.column_stack"
    code += (
        "shown = delta <= (0 if causal else L - 1)  # the offsets a query can see\n"
        "weights = weights_at(m)\n"
        + (f"seen = keys[: m + 1] if causal else keys\nlearned = scale * (P @ P[m]){cast}\n" if learned else "")
        + "\n# Play: the mean weight per key over blocks of keys, for each query position it sweeps\n"
    )
    if torch:
        code += (
            f"edges = torch.round(torch.linspace(0, L, {edges.size})).to(torch.long)\n"
            f"frames = torch.unique(torch.round(torch.linspace(0, L - 1, {queries.size})).to(torch.long)).tolist()\n"
            "block_of = torch.repeat_interleave(torch.arange(edges.numel() - 1), torch.diff(edges))\n"
            "play = [edges[:-1], edges[1:] - 1]\n"
            "for q in frames:\n"
            "    at_q = weights_at(q)\n"
            "    play += [torch.zeros(edges.numel() - 1, dtype=torch.float64).index_add(0, block_of, at_q[key])\n"
            "             / torch.diff(edges) for key in schemes]\n"
        )
    else:
        code += (
            f"edges = np.round(np.linspace(0, L, {edges.size})).astype(int)\n"
            f"frames = np.unique(np.round(np.linspace(0, L - 1, {queries.size})).astype(int))\n"
            "play = [edges[:-1], edges[1:] - 1]\n"
            "for q in frames:\n"
            "    at_q = weights_at(q)\n"
            "    play += [np.add.reduceat(at_q[key], edges[:-1]) / np.diff(edges) for key in schemes]\n"
        )
    entries = {}
    offset_keys = [key for key in view.schemes if key in OFFSET_SCHEMES]
    if offset_keys:
        entries["attention_scores"] = (
            f"{stack}([delta[shown]] + [by_offset[key][shown] for key in schemes if key != \"learned\"])"
        )
    if learned:
        entries["attention_learned"] = f"{stack}([seen, seen - m, learned[seen]])"
    entries["attention_weights"] = f"{stack}([keys, keys - m] + [weights[key] for key in schemes])"
    entries["attention_play"] = f"{stack}(play)"
    return code + reproduce.result_code(entries) + _numbers_code(view)


def _numbers_code(view: View) -> str:
    """The numbers the page shows: the scores at δ = 0 its caption names, and its table of where the
    query looks, a row per scheme (as ``where_it_looks``)."""
    numbers = {f"{SCHEME_S0[key]} s(0)": (f'by_offset["{key}"][L - 1]', ".6g")
               for key in SCHEME_S0 if key in view.schemes}
    numbers |= {SCHEMES[key].label: (f'where_it_looks(weights["{key}"])', ".6g") for key in view.schemes}
    return (
        "\n\ndef where_it_looks(a):\n"
        '    """The page\'s table: the weight on the query\'s own key, the largest weight and its key, the\n'
        "    smallest r whose keys m - r .. m + r hold half the weight, those keys, e^H (H the entropy of the\n"
        '    weights) and the keys the query sees."""\n'
        "    a = np.asarray(a)\n"
        "    mass_by_distance = np.bincount(np.abs(np.arange(L) - m), weights=a)\n"
        "    r = int(np.argmax(np.cumsum(mass_by_distance) >= 0.5 * a.sum() * (1 - 1e-12)))\n"
        "    low, high = max(0, m - r), min(L - 1, m + r, m if causal else L - 1)\n"
        "    p = a[a > 0] / a.sum()\n"
        "    keys_of_r = (low,) if low == high else (low, high)\n"
        "    effective = np.exp(-np.sum(p * np.log(p)))\n"
        "    return (a[m], a.max(), a.argmax(), r, *keys_of_r, effective, m + 1 if causal else L)\n\n"
        + reproduce.numbers_code(numbers)
    )


#: The schemes whose score at δ = 0 the page's caption gives, by the name it gives them.
SCHEME_S0 = {"sinusoidal": "sinusoid", "rope": "RoPE"}
