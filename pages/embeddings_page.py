"""Embeddings + position: a sentence's token embeddings, its PE, their sum, and why the sum
is needed to tell "the cat chased the mouse" from "the mouse chased the cat"."""

from dataclasses import replace

import streamlit as st

from explorer.settings import Settings, format_number
from explorer.topics import embeddings as emb
from explorer.ui import blocks, controls

settings: Settings = st.session_state["settings"]
d = settings.d

st.title("Embeddings + position")
st.markdown(
    "A transformer reads a sentence as a set of vectors, one per token. Self-attention treats that "
    "set the same whatever its order, so the model adds the positional encoding to each token's "
    "embedding: the same word at another position becomes another vector."
)
st.latex(r"\text{input}_k = e(\text{token}_k)\,[\times\sqrt{d}] + P[k]")


def _sentence_parser(key: str, default: str):
    return lambda raw: emb.clean_sentence(raw, key=key, default=default)


left, right = st.columns(2)
sentence = controls.text_control(
    "sentence", f"Sentence 1 (up to {emb.MAX_CHARS} characters, {emb.MAX_TOKENS} tokens)",
    default=emb.DEFAULT_SENTENCE, parse=_sentence_parser("sentence", emb.DEFAULT_SENTENCE), container=left,
)
other = controls.text_control(
    "other", "Sentence 2 (to compare word order)", default=emb.DEFAULT_OTHER,
    parse=_sentence_parser("other", emb.DEFAULT_OTHER), container=right,
)
scale = controls.bool_control("scale", "Multiply embeddings by √d (the paper's embedding layer, section 3.4)")
tokens_a, tokens_b = emb.tokenize(sentence), emb.tokenize(other)
N = len(tokens_a)
e_name = "√d·X" if scale else "X"
# The sentence's length replaces the sidebar's L on this page: with L = N in the settings that
# key its sections, moving the sidebar's L replays them instead of drawing them again.
settings = replace(settings, L=N)


def sentence_one() -> None:
    st.caption(
        "Tokens: the text split on whitespace and lower-cased (\"The\" and \"the\" are one token; punctuation "
        "stays part of its word). Each token's embedding is fixed: d draws of N(0, 1/d), seeded by the "
        "SHA-256 of the token, so its norm is about 1, as a trained table is initialised. "
        f"The sentence's length replaces the sidebar's L on this page: PE has rows k = 0..{N - 1}."
    )
    a = emb.sentence_matrices(tokens_a, settings, scale=scale)

    # (a) ---------------------------------------------------------------------------------
    st.header("Embeddings, positional encoding, and their sum (sentence 1)")
    shape = f"N={N} tokens, d={d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"
    zrange = emb.symmetric_range(a.E, a.P, a.summed)
    for values, name, title, key in (
        (a.E, e_name, f"Token embeddings {e_name}", "embeddings_x"),
        (a.P, "P", "Positional encoding P (rows k = 0..N−1)", "embeddings_pe"),
        (a.summed, f"{e_name} + P", f"What the first layer receives: {e_name} + P", "embeddings_sum"),
    ):
        drawn, columns = emb.reduce_columns(values, settings)
        blocks.chart(emb.sentence_heatmap(drawn, tokens_a, columns, title=f"{title} ({shape})", value_name=name,
                                      zrange=zrange), key=key)
    blocks.reduced_note("Each chart", (N, columns.count), (N, d))
    st.caption(
        f"The three charts share one colour scale (±{zrange[1]:.3g}), so their sizes compare at a glance"
        + ("." if scale else ": without √d the embeddings are faint next to PE, whose entries reach ±1.")
    )
    with st.expander(f"Values of {e_name} + P (every token, every column j, one row per j)"):
        # Dimensions down, a column per token: d = 2048 columns took ~0.3 s to convert on every step.
        st.dataframe(emb.summed_table(a).T)


blocks.cached_section("embeddings_sentence", sentence_one, settings, tokens_a, scale)
blocks.downloads(f"{e_name} + P", lambda: emb.summed_table(emb.sentence_matrices(tokens_a, settings, scale=scale)),
                 key="embeddings_sum")
blocks.reproduce(lambda: emb.reproduce_code(tokens_a, settings, scale=scale, other=tokens_b))


def word_order_and_sizes() -> None:
    a = emb.sentence_matrices(tokens_a, settings, scale=scale)
    b = emb.sentence_matrices(tokens_b, settings, scale=scale)
    # (b) ---------------------------------------------------------------------------------
    st.header("Word order: a bag of embeddings cannot see it")
    st.markdown(
        "An order-free summary (a sum, a mean, a max over the tokens) of two sentences with the same "
        "words in another order is the same, unless the vectors themselves carry the position."
    )
    moves = emb.token_moves(a, b)
    summary = emb.order_free_table(a, b)
    same_words = sorted(tokens_a) == sorted(tokens_b)
    same_vocabulary = set(tokens_a) == set(tokens_b)
    without, with_pe = summary.iloc[0], summary.iloc[1]
    col1, col2, col3 = st.columns(3)
    labels = emb.metric_labels(scale)
    col1.metric(labels[0], f"{without.iloc[2]:.3g}", help="Sum over tokens of the embedding rows.")
    col2.metric(labels[1], f"{with_pe.iloc[2]:.3g}", help="Sum over tokens of the rows e + p.")
    col3.metric(labels[2], f"{with_pe.iloc[3]:.3g}", help="Max over tokens, column by column.")
    blocks.table(summary, formats=dict.fromkeys(summary.columns, "%.6g"))
    if same_words:
        st.markdown(
            "The two sentences hold the same tokens, so **without PE** their bags are identical: the sum "
            "(computed correctly rounded, so independent of order) differs by exactly "
            f"{without.iloc[2]:.3g}, and so does the max-pool. **With PE**, each token's vector depends on "
            "where it sits, so the *set* of vectors differs (the max-pool above, and the table below). A plain "
            "sum of e + p, however, is still the same, up to rounding: Σ(e_k + p_k) = Σe_k + Σp_k, and "
            "Σp_k depends only on the length. Position helps a model that mixes the vectors non-linearly, "
            "as attention does, not a bag that adds them up."
        )
    elif same_vocabulary:
        st.markdown("The same words, but not as many times each: the bags differ with and without PE.")
    else:
        st.markdown(
            "The sentences hold different tokens (or different numbers of them), so their bags differ "
            "with and without PE. Try the same words in another order to see the bag stay the same."
        )
    st.caption(
        f"‖Σp (sentence 1) − Σp (sentence 2)‖ = {emb.pe_sum_difference(a, b):.3g} "
        f"({len(tokens_a)} and {len(tokens_b)} tokens)."
    )
    st.markdown("**Which token moved, and how far.** The k-th copy of a token in sentence 1 is paired with "
                "its k-th copy in sentence 2; a copy without partner has an empty position.")
    st.dataframe(moves, hide_index=True, placeholder="")  # a copy without partner: its position is empty
    if moves["distance with PE"].notna().any():
        blocks.chart(emb.moves_figure(moves), key="embeddings_moves")

    # (c) ---------------------------------------------------------------------------------
    st.header("Sizes: embedding against positional encoding")
    norms = emb.norms_table(a)
    mean_x = float(norms["‖x_k‖"].mean())
    pe_norm = emb.pe_row_norm(d)
    col1, col2, col3, col4 = st.columns(4)
    col1.metric(labels[3], f"√{d // 2} = {pe_norm:.10g}", help="Each sine/cosine pair adds sin² + cos² = 1.")
    col2.metric(labels[4], f"{mean_x:.4f}")
    col3.metric(labels[5], f"{float(norms['‖√d·x_k‖'].mean()):.4f}")
    col4.metric(labels[6], f"{pe_norm / float(norms['‖√d·x_k‖' if scale else '‖x_k‖'].mean()):.3g}")
    blocks.chart(emb.norms_figure(norms, d=d), key="embeddings_norms")
    st.dataframe(norms, column_config={
        "‖x_k‖": st.column_config.NumberColumn(format="%.8f"),
        "‖√d·x_k‖": st.column_config.NumberColumn(format="%.8f"),
        "‖p_k‖": st.column_config.NumberColumn(format="%.12f"),
    })
    st.caption(
        f"Largest |‖p_k‖ − √(d/2)| measured over these rows: {float(abs(norms['‖p_k‖'] - pe_norm).max()):.2g}. "
        "Without the √d factor an embedding of norm ≈ 1 is added to a PE of norm "
        f"{pe_norm:.3g}: position drowns the word. With it the embedding has norm ≈ √d = {d ** 0.5:.3g}, "
        "a little more than PE's √(d/2), so both are heard."
    )


blocks.cached_section("embeddings_order", word_order_and_sizes, settings, tokens_a, tokens_b, scale)
