"""Embeddings + position: what adding PE to token embeddings does to word order.

Pure logic and Plotly builders for pages/embeddings_page.py (no Streamlit, so each piece
is unit-tested). A sentence is split on whitespace into lower-cased tokens; each token
gets a fixed pseudo-random embedding seeded by the SHA-256 of its UTF-8 bytes (not by
Python's ``hash``, which is salted per process), drawn N(0, 1/d) per component as a
trained embedding table is initialised (tensor2tensor: std d^-1/2), so its norm is about
1. The paper's embedding layer multiplies it by sqrt(d) before adding PE.

Typed text is untrusted: control and format characters are removed, the length is
limited, and tokens reach Plotly only HTML-escaped (Plotly reads a subset of HTML in
labels). Notices never repeat typed text (they are rendered as Markdown).
"""

from __future__ import annotations

import hashlib
import html
import inspect
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import reproduce
from explorer.figures import (
    DIVERGING,
    MARGIN,
    chart_title,
    encoding_axis_labels,
    figure,
    group_columns,
    heatmap_figure,
    tick_subset,
)
from explorer.settings import Settings

DEFAULT_SENTENCE = "the cat chased the mouse"
DEFAULT_OTHER = "the mouse chased the cat"
#: Longest sentence read (characters, after cleaning) and most tokens kept: one heatmap
#: row per token, so 32 rows stay readable.
MAX_CHARS = 200
MAX_TOKENS = 32
#: Heatmap columns drawn at most; larger d is drawn as block averages of runs of pairs
#: (sines never averaged with cosines), 32 x 512 cells per chart.
MAX_DRAWN_COLUMNS = 512
#: Characters of a token shown as an axis tick (the hover shows all of it).
TICK_CHARS = 16

#: Whitespace-like control characters become a space (they separate tokens); every other
#: control (Cc), format (Cf: zero-width, bidi overrides) or lone surrogate (Cs, which
#: cannot be encoded as UTF-8) character is removed.
_REMOVED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})


# --------------------------------------------------------------------------------------
# Text in, tokens out
# --------------------------------------------------------------------------------------


def clean_sentence(raw: str, *, key: str, default: str) -> tuple[str, list[str]]:
    """The sentence as the page reads it, and one-line notices about what was changed.

    Control/format characters are removed (whitespace controls become spaces), the text
    is NFC-normalised (so a composed and a decomposed "é" are the same token), cut to
    MAX_CHARS characters and to MAX_TOKENS tokens; an empty result gives ``default``.
    Notices name ``key`` and counts only, never the typed text.
    """
    notices: list[str] = []
    text = str(raw)
    kept: list[str] = []
    removed = 0
    for char in text:
        if char.isspace():
            kept.append(" ")
        elif unicodedata.category(char) in _REMOVED_CATEGORIES:
            removed += 1
        else:
            kept.append(char)
    if removed:
        notices.append(f"{key}: removed {removed} control or invisible character(s).")
    text = unicodedata.normalize("NFC", "".join(kept)).strip()
    if len(text) > MAX_CHARS:
        notices.append(f"{key}: cut to its first {MAX_CHARS} characters.")
        text = text[:MAX_CHARS].rstrip()
    words = text.split()
    if len(words) > MAX_TOKENS:
        notices.append(f"{key}: kept the first {MAX_TOKENS} of {len(words)} tokens.")
        text = " ".join(words[:MAX_TOKENS])
    if not words:
        notices.append(f"{key} is empty; using the default sentence.")
        text = default
    return text, notices


def tokenize(text: str) -> list[str]:
    """Whitespace tokens, lower-cased (an uncased vocabulary: "The" and "the" are one token)."""
    return text.lower().split()


# --------------------------------------------------------------------------------------
# Token embeddings (the reproduce snippet copies these two functions' source verbatim)
# --------------------------------------------------------------------------------------


def token_seed(token: str) -> int:
    """A seed from the token itself: SHA-256 of its UTF-8 bytes, the same in every process."""
    return int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest(), "big")


def token_embedding(token: str, d: int) -> np.ndarray:
    """The token's fixed embedding: d draws of N(0, 1/d), so its norm is about 1."""
    return np.random.default_rng(token_seed(token)).standard_normal(d) / np.sqrt(d)


def embedding_matrix(tokens: Sequence[str], d: int) -> np.ndarray:
    """X: one row per token (tokens x d)."""
    if not tokens:
        return np.zeros((0, d))
    return np.stack([token_embedding(token, d) for token in tokens])


@dataclass(frozen=True)
class SentenceMatrices:
    """E: the embedding rows (X, or X * sqrt(d) if scaled), P: PE rows 0..N-1, E + P."""

    tokens: tuple[str, ...]
    E: np.ndarray
    P: np.ndarray
    scaled: bool

    @property
    def summed(self) -> np.ndarray:
        return self.E + self.P


def sentence_matrices(tokens: Sequence[str], settings: Settings, *, scale: bool) -> SentenceMatrices:
    """Embeddings, PE and their sum for ``tokens``; the sentence length replaces settings.L."""
    d = settings.d
    X = embedding_matrix(tokens, d)
    P = pe_core.positional_encoding(len(tokens), d, settings.n, layout=settings.layout,
                                    convention=settings.convention)
    # Same expression as the reproduce snippet, whose P is pe_core's to the bit: E + P is the same too.
    E = X * np.sqrt(d) if scale else X
    return SentenceMatrices(tuple(tokens), E, P, scale)


# --------------------------------------------------------------------------------------
# Word order: order-free summaries and which token moved
# --------------------------------------------------------------------------------------


def bag_sum(rows: np.ndarray) -> np.ndarray:
    """Sum over tokens, column by column, correctly rounded (math.fsum).

    A correctly rounded sum does not depend on the order of the terms, so two sentences
    with the same tokens in another order get exactly the same bag (difference 0.0, not
    the 1e-16 that the order of a plain float sum would leave).
    """
    rows = np.asarray(rows, dtype=np.float64)
    return np.array([math.fsum(column) for column in rows.T])


def max_pool(rows: np.ndarray) -> np.ndarray:
    """Largest value of each column over the tokens: order-free, but not linear."""
    return np.asarray(rows, dtype=np.float64).max(axis=0)


def order_free_table(a: SentenceMatrices, b: SentenceMatrices) -> pd.DataFrame:
    """Norms of two order-free summaries of each sentence, without and with PE."""
    rows = {}
    for name, rows_a, rows_b in (
        ("embeddings only (no PE)", a.E, b.E),
        ("embeddings + PE", a.summed, b.summed),
    ):
        sum_a, sum_b = bag_sum(rows_a), bag_sum(rows_b)
        rows[name] = {
            "‖Σ sentence 1‖": float(np.linalg.norm(sum_a)),
            "‖Σ sentence 2‖": float(np.linalg.norm(sum_b)),
            "‖Σ1 − Σ2‖ (sum over tokens)": float(np.linalg.norm(sum_a - sum_b)),
            "‖max1 − max2‖ (max-pool)": float(np.linalg.norm(max_pool(rows_a) - max_pool(rows_b))),
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("rows summed")


def pe_sum_difference(a: SentenceMatrices, b: SentenceMatrices) -> float:
    """‖Σ_k p_k (sentence 1) − Σ_k p_k (sentence 2)‖: 0 for two sentences of the same length."""
    return float(np.linalg.norm(bag_sum(a.P) - bag_sum(b.P)))


@dataclass(frozen=True)
class TokenMatch:
    """The ``occurrence``-th (from 1) copy of ``token`` at position_a / position_b (None: absent)."""

    token: str
    occurrence: int
    position_a: int | None
    position_b: int | None


def match_tokens(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> list[TokenMatch]:
    """Pair the k-th copy of each token in sentence 1 with its k-th copy in sentence 2.

    Repeated tokens ("the" twice) are paired in reading order; a copy with no partner is
    listed with position None on the other side. Order: sentence 1's tokens, then the
    tokens that only sentence 2 has.
    """
    positions_b: dict[str, list[int]] = {}
    for k, token in enumerate(tokens_b):
        positions_b.setdefault(token, []).append(k)
    seen: dict[str, int] = {}
    matches = []
    for k, token in enumerate(tokens_a):
        occurrence = seen.get(token, 0)
        seen[token] = occurrence + 1
        partners = positions_b.get(token, [])
        partner = partners[occurrence] if occurrence < len(partners) else None
        matches.append(TokenMatch(token, occurrence + 1, k, partner))
    for token, partners in positions_b.items():
        for occurrence in range(seen.get(token, 0), len(partners)):
            matches.append(TokenMatch(token, occurrence + 1, None, partners[occurrence]))
    return matches


def token_moves(a: SentenceMatrices, b: SentenceMatrices) -> pd.DataFrame:
    """Per token copy: where it sits in each sentence and how far its vector moved.

    Without PE a token's vector is its embedding wherever it sits (distance exactly 0);
    with PE it is e + p_k, so moving from position k to k' moves it by ‖p_k' − p_k‖.
    """
    records = []
    for match in match_tokens(a.tokens, b.tokens):
        both = match.position_a is not None and match.position_b is not None
        without = with_pe = math.nan
        if both:
            ka, kb = match.position_a, match.position_b
            without = float(np.linalg.norm(b.E[kb] - a.E[ka]))
            with_pe = float(np.linalg.norm(b.summed[kb] - a.summed[ka]))
        records.append(
            {
                "token": match.token,
                "copy": match.occurrence,
                "position in 1": match.position_a,
                "position in 2": match.position_b,
                "moved by (positions)": match.position_b - match.position_a if both else None,
                "distance without PE": without,
                "distance with PE": with_pe,
            }
        )
    table = pd.DataFrame.from_records(records)
    for column in ("position in 1", "position in 2", "moved by (positions)"):
        table[column] = table[column].astype("Int64")
    return table


# --------------------------------------------------------------------------------------
# Sizes
# --------------------------------------------------------------------------------------


def pe_row_norm(d: int) -> float:
    """‖p_k‖ for every k when d is even: each pair adds sin² + cos² = 1, so √(d/2)."""
    if d % 2:
        raise ValueError("‖p_k‖ is the same for every k only for an even d (a lone sine varies with k).")
    return math.sqrt(d // 2)


def norms_table(m: SentenceMatrices) -> pd.DataFrame:
    """Per token: ‖x_k‖ (N(0, 1/d) embedding), ‖√d·x_k‖, and ‖p_k‖."""
    d = m.E.shape[1]
    X = m.E / np.sqrt(d) if m.scaled else m.E
    return pd.DataFrame(
        {
            "token": list(m.tokens),
            "‖x_k‖": np.linalg.norm(X, axis=1),
            "‖√d·x_k‖": np.linalg.norm(X * np.sqrt(d), axis=1),
            "‖p_k‖": np.linalg.norm(m.P, axis=1),
        },
        index=pd.RangeIndex(len(m.tokens), name="position k"),
    )


# --------------------------------------------------------------------------------------
# Figures and tables
# --------------------------------------------------------------------------------------


def plotly_text(text: str) -> str:
    """Text as Plotly must receive it to show it literally (it reads <b>, <a href> ...)."""
    return html.escape(text, quote=False)


def short_token(token: str) -> str:
    """``token`` for a tick label: at most TICK_CHARS characters (cut with '…'), as Plotly shows it."""
    return plotly_text(token if len(token) <= TICK_CHARS else token[: TICK_CHARS - 1] + "…")


def row_labels(tokens: Sequence[str]) -> tuple[list[str], list[str]]:
    """(hover label, short tick text) per token; the position makes every label unique."""
    labels = [f"k={k}: {plotly_text(token)}" for k, token in enumerate(tokens)]
    ticks = [f"{k}: {short_token(token)}" for k, token in enumerate(tokens)]
    return labels, ticks


@dataclass(frozen=True)
class DrawnColumns:
    """How the d columns are drawn: exact (d <= MAX_DRAWN_COLUMNS) or runs of pairs averaged."""

    is_sine: np.ndarray
    pair_first: np.ndarray
    pair_last: np.ndarray
    labels: list[str]
    ticks: list[str]

    @property
    def count(self) -> int:
        return int(self.is_sine.size)


def reduce_columns(values: np.ndarray, settings: Settings, max_cols: int = MAX_DRAWN_COLUMNS
                   ) -> tuple[np.ndarray, DrawnColumns]:
    """Block averages of the columns (never a sine with a cosine) and their labels."""
    means, is_sine, first, last = group_columns(values, settings.layout, max_cols)
    w = pe_core.frequencies(settings.d, settings.n, settings.convention)
    labels, ticks = encoding_axis_labels(is_sine, first, last, w, settings.layout)
    return means, DrawnColumns(is_sine, first, last, labels, ticks)


def symmetric_range(*matrices: np.ndarray) -> tuple[float, float]:
    """One colour range centred on 0 for charts that are compared with each other."""
    top = max((float(np.max(np.abs(m))) for m in matrices if m.size), default=1.0)
    return (-top, top) if top > 0 else (-1.0, 1.0)


def sentence_heatmap(
    values: np.ndarray, tokens: Sequence[str], columns: DrawnColumns, *, title: str, value_name: str,
    zrange: tuple[float, float],
) -> go.Figure:
    """Tokens down, dimensions across, diverging colours centred on 0."""
    labels, ticks = row_labels(tokens)
    return heatmap_figure(
        values, row_labels=labels, col_labels=columns.labels, row_ticks=(labels, ticks),
        col_ticks=tick_subset(columns.labels, columns.ticks, count=10), title=title,
        x_title="dimension j (column)", y_title="token at position k", value_name=value_name,
        colorscale=DIVERGING, zrange=zrange, height=max(260, 130 + 22 * len(labels)),
    )


def norms_figure(norms: pd.DataFrame, *, d: int) -> go.Figure:
    """Per token: bars of ‖x_k‖, ‖√d·x_k‖ and ‖p_k‖, with the exact √(d/2) marked.

    Built as plain dicts (``figures.figure``: add_hline and the update_ calls validated the
    whole figure again, ~15 ms).
    """
    labels, ticks = row_labels(list(norms["token"]))
    bars = [
        {"type": "bar", "x": labels, "y": norms[column].to_numpy(dtype=np.float64), "name": column,
         "hovertemplate": f"%{{x}}<br>{column} = %{{y:.10g}}<extra></extra>"}
        for column in ("‖x_k‖", "‖√d·x_k‖", "‖p_k‖")
    ]
    layout = {
        "title": chart_title(f"Sizes per token (d={d})"), "barmode": "group", "height": 360,
        "margin": MARGIN | {"b": 105},  # the legend below
        "yaxis": {"title": {"text": "Euclidean norm"}},
        "xaxis": {"title": {"text": "token"}, "type": "category", "tickmode": "array", "tickvals": labels,
                  "ticktext": ticks},
        "legend": {"orientation": "h", "y": -0.3}, "hoverlabel": {"namelength": -1},
    }
    if d % 2 == 0:  # a dotted line across the plot at √(d/2), labelled above its left end
        norm = pe_row_norm(d)
        layout["shapes"] = [{"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": norm,
                             "y1": norm, "line": {"dash": "dot"}}]
        layout["annotations"] = [{"text": f"√(d/2) = {norm:.6g}", "showarrow": False, "xref": "x domain", "x": 0,
                                  "xanchor": "left", "yref": "y", "y": norm, "yanchor": "bottom"}]
    return figure(bars, layout)


def moves_figure(moves: pd.DataFrame) -> go.Figure:
    """How far each token copy's vector moved between the sentences, with PE (0 without).

    Built as plain dicts, as ``norms_figure``.
    """
    both = moves.dropna(subset=["distance with PE"])
    copies = list(zip(both["token"], both["copy"], both["position in 1"], both["position in 2"], strict=True))
    labels = [f"{plotly_text(str(t))} #{c} (k {a}→{b})" for t, c, a, b in copies]
    # Tick labels with the token cut as on the other charts: a long token's label pushed the
    # axis title off the chart ("token cop"); hover shows it whole.
    ticks = [f"{short_token(str(t))} #{c} (k {a}→{b})" for t, c, a, b in copies]
    bar = {
        "type": "bar", "x": both["distance with PE"].to_numpy(dtype=np.float64), "y": labels, "orientation": "h",
        "name": "with PE", "hovertemplate": "%{y}<br>‖row in 2 − row in 1‖ = %{x:.10g}<extra></extra>",
    }
    layout = {
        "title": chart_title("How far each token's vector moved (with PE; exactly 0 without)"),
        "height": max(240, 100 + 22 * len(labels)), "margin": dict(MARGIN),
        "xaxis": {"title": {"text": "‖(e + p_k′) − (e + p_k)‖ = ‖p_k′ − p_k‖"}},
        "yaxis": {"title": {"text": "token copy"}, "type": "category", "autorange": "reversed", "tickmode": "array",
                  "tickvals": labels, "ticktext": ticks},
        "hoverlabel": {"namelength": -1},
    }
    return figure([bar], layout)


def summed_table(m: SentenceMatrices) -> pd.DataFrame:
    """E + P as downloaded: one row per token, labelled "k: token" (never starts with =, +, -, @)."""
    return pd.DataFrame(
        m.summed,
        index=pd.Index([f"{k}: {token}" for k, token in enumerate(m.tokens)], name="position: token"),
        columns=[f"j={j}" for j in range(m.summed.shape[1])],
    )


# --------------------------------------------------------------------------------------
# Reproduce this
# --------------------------------------------------------------------------------------

#: The exact source of the two functions above, so the snippet cannot drift from the app.
TOKEN_EMBEDDING_SOURCE = inspect.getsource(token_seed) + "\n\n" + inspect.getsource(token_embedding)


def metric_labels(scale: bool) -> tuple[str, ...]:
    """The labels of the page's numbers (its metrics, and its snippet's printed numbers): the two
    sentences' order-free summaries, then the sizes of sentence 1's vectors."""
    return (
        "‖Σ1 − Σ2‖ without PE", "‖Σ1 − Σ2‖ with PE", "‖max1 − max2‖ with PE",
        "‖p_k‖ = √(d/2), every k", "mean ‖x_k‖ (expected ≈ 1)", "mean ‖√d·x_k‖ (expected ≈ √d)",
        f"‖p_k‖ / ‖{'√d·X' if scale else 'X'} row‖ (mean)",
    )


def reproduce_code(tokens: Sequence[str], settings: Settings, *, scale: bool, other: Sequence[str]) -> str:
    """Standalone NumPy (+ hashlib, math) code that binds ``result`` to E + P of ``tokens`` as the
    page does, and ``numbers`` to the page's numbers: the order-free summaries of ``tokens``
    against ``other`` (sums correctly rounded, as ``bag_sum``) and the sizes of the vectors.

    Its P has the page's exact angles (``reproduce.sin_cos_code``): a sum of e + p over two
    sentences of the same words is the same up to a rounding that the page shows (~1e-15), and
    that the snippet prints only if its P is the page's to the last bit.
    """
    pe = reproduce.encoding_function_code(replace(settings, L=len(tokens)))
    scaled = "X * np.sqrt(d)" if scale else "X"
    labels = metric_labels(scale)
    return (
        "import hashlib\n"
        "import math\n"
        + pe
        + TOKEN_EMBEDDING_SOURCE
        + "\n\n"
        + "# Whitespace tokens, lower-cased; sentence 1's length is L. (Same numbers with NumPy 2.x:\n"
        + "# numpy does not promise the same random stream across all future versions.)\n"
        + f"tokens = {list(tokens)!r}\n"
        + f"other = {list(other)!r}  # sentence 2, to compare word order\n"
        + "assert len(tokens) == L\n"
        + "X = np.stack([token_embedding(token, d) for token in tokens])\n"
        + "P = encoding(0, L)\n"
        + ("summed = X * np.sqrt(d) + P  # the paper's embedding layer: embeddings times sqrt(d), plus PE\n"
           if scale else "summed = X + P  # embeddings plus PE\n")
        + '\nresult = {"embeddings_sum": summed}  # the download of the sum\n'
        + "\n# Word order: order-free summaries of both sentences, without and with PE\n"
        + "X2 = np.stack([token_embedding(token, d) for token in other])\n"
        + f"summed2 = {scaled.replace('X', 'X2')} + encoding(0, len(other))\n\n\n"
        + "def bag_sum(rows):\n"
        + '    """The sum over the tokens, column by column, correctly rounded: the same in any order."""\n'
        + "    return np.array([math.fsum(column) for column in rows.T])\n\n\n"
        + "def pool(rows):\n"
        + '    """The max-pool: the largest value of each column over the tokens."""\n'
        + "    return rows.max(axis=0)\n\n\n"
        + "norms = np.linalg.norm(X, axis=1), np.linalg.norm(X * np.sqrt(d), axis=1)  # ‖x_k‖, ‖√d·x_k‖\n"
        + reproduce.numbers_code(dict(zip(labels, (
            (f"np.linalg.norm(bag_sum({scaled}) - bag_sum({scaled.replace('X', 'X2')}))", ".3g"),
            ("np.linalg.norm(bag_sum(summed) - bag_sum(summed2))", ".3g"),
            ("np.linalg.norm(pool(summed) - pool(summed2))", ".3g"),
            ("(d // 2, math.sqrt(d // 2))", ".10g"),
            ("norms[0].mean()", ".4f"),
            ("norms[1].mean()", ".4f"),
            (f"math.sqrt(d // 2) / norms[{int(scale)}].mean()", ".3g"),
        ), strict=True)))
    )
