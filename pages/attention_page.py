"""Attention by offset: what each positional scheme adds to the score of a query and a key with no
content, as the key moves away, and where one query's softmax then looks."""

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from explorer import animation, figures
from explorer.settings import Settings, format_number
from explorer.topics import attention
from explorer.topics.attention import SCHEME_KEYS, SCHEMES, View
from explorer.ui import blocks, cached, controls, navigation

# --- this page's cached computations (st.cache_data: shared by every session) ---


def rope_from_zero(d: int, n: float) -> np.ndarray:
    """RoPE's all-ones score Σ 2 cos(θ_i t) for t = 0 .. L_MAX-1: θ_i = n^(-2i/d) are the sinusoid's
    paper frequencies, so it is exactly twice cached.dot_from_zero with them (pe_core.rope_dot_by_offset
    computes it so), which the sinusoid already asked for when the sidebar's frequencies are the paper's."""
    return 2.0 * cached.dot_from_zero(d, n, "paper")


#: This page's caches hash the settings and the view as their plain values (not dataclasses.asdict's copies).
HASH_AS_VALUES = {**cached.SETTINGS_HASH, View: lambda view: view.key}


@cached.page_cache(st.cache_data(max_entries=8, show_spinner=False, hash_funcs=HASH_AS_VALUES))
def scores_and_bits(settings: Settings, view: View) -> tuple[attention.OffsetScores, np.ndarray]:
    """Every offset scheme's score by offset (attention.offset_scores, whatever schemes are shown), and
    the learned table's rows as bits (4 MB at L=16384, d=2048; attention.learned_bits)."""
    scores = attention.offset_scores(
        settings.L, settings.d, view,
        sinusoid_from_zero=cached.dot_from_zero(settings.d, settings.n, settings.convention),
        rope_from_zero=rope_from_zero(settings.d, settings.n),
    )
    return scores, attention.learned_bits(settings.L, settings.d)


def offset_scores(settings: Settings, view: View) -> attention.OffsetScores:
    """This view's scores by offset (the cache is shared by any choice of schemes)."""
    return scores_and_bits(settings, replace(view, schemes=SCHEME_KEYS))[0]


@cached.page_cache(st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH_AS_VALUES))
def query_scores_and_weights(
    settings: Settings, view: View, query: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The chosen schemes' scores of the query against every key, and its softmax weights."""
    scores, bits = scores_and_bits(settings, replace(view, schemes=SCHEME_KEYS))
    by_key = attention.query_scores(scores, bits, query, settings.d, view)
    return by_key, attention.query_weights(by_key, query, view.causal)


@cached.page_cache(st.cache_data(max_entries=8, show_spinner=False, hash_funcs=HASH_AS_VALUES))
def play_frames(settings: Settings, view: View) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The query positions Play sweeps and each scheme's weights per block of keys there."""
    scores, bits = scores_and_bits(settings, replace(view, schemes=SCHEME_KEYS))
    queries = attention.play_queries(settings.L, len(view.schemes))
    return queries, attention.play_weights(scores, bits, settings.d, view, queries)


WHY_EVEN = "the sinusoid and RoPE turn sine/cosine pairs"
st.title("Attention by offset")
# One element for the text, the schemes and the softmax (a page's elements each cost its every rerun).
st.markdown(
    "A query at position m and a key at position n = m + δ, with **no content at all**: no token, only "
    "positions. What does each way of encoding position put into their attention score as the key moves "
    "away, and where does the query's softmax then look? This is the prior a scheme brings before any "
    "token has a say.\n\n"
    "- **Sinusoidal**, added to the input (Vaswani et al. 2017): with the identity for the query and key "
    r"projections, $s(\delta) = P[m]\cdot P[m{+}\delta] = \sum_i \cos(\omega_i\delta)$, the sidebar's frequencies."
    "\n- **RoPE** (Su et al. 2021, RoFormer): q and k turned by their positions; for all-ones q = k, "
    r"$s(\delta) = \sum_i 2\cos(\theta_i\delta)$, $\theta_i = n^{-2i/d}$ with the sidebar's n as the base. "
    "The same curve is the expected score of a random q = k (entries of mean 0 and variance 1)."
    "\n- **ALiBi** (Press et al. 2022): a fixed bias $-m_h|\\delta|$ with a slope $m_h$ per head. Its §2.2 "
    "measures a sinusoidal model trained on 512 tokens degrading after about 50 more."
    "\n- **T5** (Raffel et al. 2020): a learned bias per head and *bucket* of δ (32 buckets, the last at a "
    "distance of 128); the buckets are T5's, the biases here a seeded random table."
    "\n- **Learned absolute table**: a row per position (here seeded random values, each +1 or −1); "
    r"$s = P[m]\cdot P[n]$ depends on m, not on δ alone."
    "\n- **No position**: s = 0.\n\n"
    "$$\n"
    r"a_n = \frac{e^{s_n}}{\sum_{n'} e^{s_{n'}}}\quad\text{over the keys } n' \text{ the query sees}"
    "\n$$"
)

# --- the page's controls (the query position is the section's own, below) ---
schemes = controls.multi_control(
    "schemes", "Schemes", SCHEME_KEYS, default=SCHEME_KEYS, format_func=lambda key: SCHEMES[key].short,
    help="Which schemes to draw; each gets a panel.",
)
mask_row = blocks.row()
causal = controls.bool_control("causal", "Causal (keys up to the query)", default=True, container=mask_row)
scaled = controls.bool_control("scaled", "Scale dot products by 1/√d", default=True, container=mask_row)
heads_row = blocks.row()
heads = controls.int_control(
    "heads", "Heads (ALiBi's slopes, T5's biases)", default=attention.HEADS_DEFAULT, low=attention.HEADS_MIN,
    high=attention.HEADS_MAX, container=heads_row,
)
head = controls.int_control("head", "Head shown", default=1, low=1, high=heads, container=heads_row)
view = View(schemes=schemes, causal=causal, scaled=scaled, heads=heads, head=head)


def describe(settings: Settings, view: View) -> str:
    """The settings and the view in a line, for the charts' titles."""
    return (f"L={settings.L:,}, d={settings.d:,}, n={format_number(settings.n)}, "
            f"{'causal' if view.causal else 'bidirectional'}" + (", scaled by 1/√d" if view.scaled else ""))


def scores_section(settings: Settings, view: View) -> None:
    d, L, schemes, causal, scaled, head = settings.d, settings.L, view.schemes, view.causal, view.scaled, view.head
    st.header("The score by offset")
    scores = offset_scores(settings, view)
    title = f"Content-free score s(δ) ({describe(settings, view)})"
    blocks.chart(attention.scores_figure(scores, view, d, title=title, columns=blocks.panel_columns()),
                 key="attention_scores")
    offsets = attention.shown_offsets(L, causal)
    scale = attention.dot_scale(d, scaled)
    notes = []
    if "sinusoidal" in schemes:
        notes.append(f"sinusoid s(0) = d/2·{scale:.4g} = {scores.values['sinusoidal'][L - 1]:.6g}")
    if "rope" in schemes:
        notes.append(f"RoPE s(0) = d·{scale:.4g} = {scores.values['rope'][L - 1]:.6g} (exactly twice the sinusoid "
                     "when its frequencies are the paper's)")
    if "alibi" in schemes:
        notes.append(f"ALiBi every head in grey, head {head} (slope {scores.slopes[head - 1]:.6g}) in colour")
    if "t5" in schemes:
        notes.append(f"T5 head {head}: every key {attention.t5_shared_from(causal)} or more positions away "
                     f"{'before the query ' if causal else 'on one side '}shares one bias (T5's last bucket)")
    st.caption(
        f"Offsets δ = {attention.span(int(offsets[0]), int(offsets[-1]))}"
        + (" (the keys after the query are masked)" if causal else "")
        + ". " + "; ".join(notes) + ". " + ("The 1/√d scaling applies to the dot products (sinusoid, RoPE, learned); "
        "ALiBi and T5 add their bias to the scaled product, which is 0 here without content. " if scaled else "")
        + figures.envelope_note(offsets.size, "offset")
    )
    if "rope" in schemes:
        st.caption(
            "RoPE: for q = k every pair turns by the same angle δθ_i, and uᵀR(φ)u = |u|² cos φ for any pair u, so "
            r"the score is Σ_i |q_i|² cos(δθ_i) for every q: 2 Σ cos(δθ_i) for all-ones q, and the same on average "
            f"for random q = k with variance-1 entries. One Gaussian draw scatters around it by 2·(Σ_i cos²(δθ_i))^½ "
            f"(√(2d) = {np.sqrt(2 * d):.4g} at δ = 0, about √d far away), times the scaling; independent q and k "
            "average 0 at every offset (pe_core.rope_dot_by_offset)."
        )


def tables_section(settings: Settings, view: View) -> None:
    """ALiBi's slopes and T5's buckets, for the schemes shown."""
    if "alibi" in view.schemes:
        alibi_table(settings, view)
    if "t5" in view.schemes:
        t5_table(settings, view)


def alibi_table(settings: Settings, view: View) -> None:
    heads, L = view.heads, settings.L
    st.header("ALiBi's slopes")
    slopes = pe_core.alibi_slopes(heads)
    power = heads & (heads - 1) == 0
    blocks.table(attention.alibi_table(slopes, L), titles=attention.TABLE_TITLES, formats={"slope m_h": "%.8g"},
                 hide_index=True)
    st.caption(
        (f"{heads} heads, a power of two: m_h = 2^(−8h/{heads}), from {slopes[0]:.6g} down to {slopes[-1]:.6g}. "
         if power else
         f"{heads} heads, not a power of two: the {1 << (heads.bit_length() - 1)} slopes of the largest power of two "
         "below, then every other slope of the series for twice as many (the authors' get_slopes). ")
        + "A key δ further away has its weight multiplied by e^(−m_h|δ|): halved every ln 2 / m_h positions "
        "(Press et al. 2022, section 3)."
    )


def t5_table(settings: Settings, view: View) -> None:
    L, causal = settings.L, view.causal
    st.header("T5's buckets")
    blocks.table(attention.t5_bucket_table(L, view), titles=attention.TABLE_TITLES, hide_index=True)
    st.caption(
        ("Causal (T5's decoder): 32 buckets for the keys before the query; every key after it falls in bucket 0 "
         "with the query itself, and is masked. " if causal else
         "Bidirectional (T5's encoder): buckets 0-15 for the keys at or before the query, 17-31 for those after "
         "(bucket 16 would hold offset 0 on the keys' side, where no key after the query can be: it is never "
         "used). ")
        + "On each side half the buckets hold one distance each (0 .. 7, or 0 .. 15 causal), the rest grow "
        f"logarithmically toward max_distance {attention.T5_MAX_DISTANCE}, and the last one holds every key "
        f"{attention.t5_shared_from(causal)} or more positions away: position tells those keys apart no more "
        "(Raffel et al. 2020, section 2.1). Buckets computed as T5's _relative_position_bucket does. The biases, one "
        "per head "
        f"and bucket, are learned in T5; here they are seeded standard normal values (seed {attention.T5_BIAS_SEED})."
    )


def query_section(settings: Settings, view: View, snippet: dict[str, int]) -> None:
    """One query's scores and weights: moving the query reruns only this."""
    L, schemes, causal = settings.L, view.schemes, view.causal
    st.header("Where one query looks")
    query = controls.int_control(
        "query", "Query position m", default=min(attention.QUERY_DEFAULT, L - 1), low=0, high=L - 1,
        help="The position of the query whose weights are drawn.",
    )
    snippet["query"] = query
    if not schemes:
        return
    blocks.cached_section("attention_query", lambda: query_charts(settings, view, query), settings, view.key, query)
    blocks.downloads("the weights", lambda: attention.weights_table(query_scores_and_weights(
        settings, view, query)[1], query), key="attention_weights")
    if "learned" in schemes:
        blocks.downloads("the learned table's scores", lambda: attention.learned_table_data(
            query_scores_and_weights(settings, view, query)[0]["learned"], query, causal), key="attention_learned")


def query_charts(settings: Settings, view: View, query: int) -> None:
    by_key, weights = query_scores_and_weights(settings, view, query)
    weights_chart(settings, view, query, weights)
    if "learned" in view.schemes:
        learned_chart(settings, view, query, by_key["learned"])


def weights_chart(settings: Settings, view: View, query: int, weights: dict[str, np.ndarray]) -> None:
    L, causal = settings.L, view.causal
    title = f"Softmax weights of the query at m = {query} ({describe(settings, view)})"
    blocks.chart(attention.weights_figure(weights, query, causal, title=title, columns=blocks.panel_columns()),
                 key="attention_weights")
    seen = query + 1 if causal else L
    st.caption(
        f"The query sees {attention.counted(seen, 'key')} ({attention.span(0, query) if causal else 'every position'}"
        + (f"; the {L - seen:,} after it are masked, weight 0, not drawn" if causal and seen < L else "")
        + "); the dotted line is the query's own key. Exact: softmax of the closed forms over the keys, no L x L "
        "matrix. " + figures.envelope_note(seen, "key")
    )
    blocks.table(attention.where_table(weights, query, causal), titles=attention.TABLE_TITLES, hide_index=True,
                 formats=dict.fromkeys(("weight on its own key", "largest weight", "effective keys e^H"), "%.6g"))
    st.caption(
        "Half the weight within ± r: the smallest r for which the keys m − r .. m + r hold half of the weight "
        "(pe_core.half_mass_radius). Effective keys: e^H, H the entropy of the weights (pe_core.effective_keys): "
        "1 when one key takes everything, k when k keys share it equally."
    )


def learned_chart(settings: Settings, view: View, query: int, scores: np.ndarray) -> None:
    d, L, causal = settings.d, settings.L, view.causal
    blocks.chart(attention.learned_figure(scores, query, view, d,
                                          title=f"Learned table: P[{query}]·P[n] by offset "
                                                f"({describe(settings, view)})"),
                 key="attention_learned")
    own = scores[query]
    others = np.delete(scores[: query + 1 if causal else L], query)
    spread = f"; the other keys' scores have mean {others.mean():.4g} and standard deviation {others.std():.4g}" \
        if others.size > 1 else ""
    st.caption(
        f"A learned table has one row per position, here {attention.counted(L, 'row')} of {d:,} seeded random "
        "values, each +1 or −1 (mean 0, variance 1, as an nn.Embedding's standard normal start). "
        f"The score P[m]·P[n] is {own:.6g} on the query's own key (d·scale){spread}: it depends on m and n, not "
        "on the offset alone. Move m and the curve changes shape; the offset schemes' curves only slide. "
        "Training would shape the table; nothing makes it translation invariant."
    )


def play_section(settings: Settings, view: View) -> None:
    L, causal = settings.L, view.causal
    queries, frames = play_frames(settings, view)
    blocks.chart(attention.play_figure(frames, queries, L, title="Play: the weights as the query moves",
                                       columns=blocks.panel_columns()), key="attention_play")
    st.caption(
        f"{describe(settings, view)}. {attention.play_note(L, queries)} The offset schemes' weights slide with "
        "the query, cut off at the ends" + (" and by the mask: the first queries see few keys" if causal else "")
        + "; the learned table's jump about. " + animation.KEYBOARD_NOTE
    )


# --- the part that reads the shared settings ---


def charts() -> None:
    """Everything below the page's controls, which reads the sidebar's settings: a move of one reruns this alone."""
    settings = blocks.even_d_settings(WHY_EVEN)
    d, L = settings.d, settings.L
    # The reproduce-this code's query position (set by its control's fragment).
    snippet: dict[str, int] = {}
    if not schemes:
        st.info("Choose at least one scheme above to draw it.", icon=":material/info:")
    if view.offset_schemes:
        blocks.cached_section("attention_scores", lambda: scores_section(settings, view), settings, view.key)
        blocks.first_chart_sent()
        blocks.downloads("the scores by offset", lambda: attention.scores_table(offset_scores(settings, view), view, d),
                         key="attention_scores")
    elif schemes:
        st.info("Only the learned table is chosen: its scores depend on the query's position, drawn below.",
                icon=":material/info:")
    if {"alibi", "t5"} & set(schemes):
        blocks.cached_section("attention_tables", lambda: tables_section(settings, view), L, view.key)
    blocks.fragment(query_section, settings, view, snippet)
    if schemes:
        st.header("The query moving")
        play = blocks.play_on_request("Play: the weights as the query moves")
        if play is not None:
            with play:
                blocks.cached_section("attention_play", lambda: play_section(settings, view), settings, view.key)

                def play_download() -> pd.DataFrame:
                    queries, frames = play_frames(settings, view)
                    return attention.play_table(frames, queries, L)

                blocks.downloads("the Play frames' weights", play_download, key="attention_play")
        blocks.reproduce(
            lambda: attention.attention_code(settings, view, snippet["query"]),
            lambda: attention.attention_code(settings, view, snippet["query"], library="torch"),
        )


navigation.run_settings_part(charts)
