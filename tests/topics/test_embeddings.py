"""Embeddings + position (explorer.topics.embeddings and its page).

Expected values are written from the definitions (SHA-256 seed, N(0, 1/d) draws, the PE
formula), independently of the module; the page itself is opened once with a hostile
URL to check that typed text never reaches Markdown.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from support.angle_rounding import HALF_ULP
from support.app_runs import open_url
from support.snippets import run_snippet

import pe_core
from explorer.figures import HEATMAP_CELLS
from explorer.settings import Settings
from explorer.topics import embeddings as emb

ROOT = Path(__file__).resolve().parents[2]
CHART_BUDGET = 1_500_000


def expected_embedding(token: str, d: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest(), "big")
    return np.random.default_rng(seed).standard_normal(d) / math.sqrt(d)


DEFAULTS = Settings()


def matrices(sentence: str, settings: Settings = DEFAULTS, scale: bool = False) -> emb.SentenceMatrices:
    return emb.sentence_matrices(emb.tokenize(sentence), settings, scale=scale)


# --- token embeddings ----------------------------------------------------------------------


def test_token_embedding_is_the_documented_recipe() -> None:
    for token in ("the", "cat", "é", "日本", "<b>x</b>"):
        np.testing.assert_allclose(emb.token_embedding(token, 64), expected_embedding(token, 64), rtol=1e-15)


def test_token_embedding_is_the_same_in_another_process() -> None:
    # Python's hash() of a str changes with PYTHONHASHSEED; the SHA-256 seed must not.
    code = (
        "from explorer.topics.embeddings import token_embedding\n"
        "print(token_embedding('mouse', 512).tobytes().hex())"
    )
    hexes = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                             check=True)
        hexes.append(out.stdout.strip())
    assert hexes[0] == hexes[1] == emb.token_embedding("mouse", 512).tobytes().hex()


def test_token_embeddings_are_scaled_like_an_initialised_table() -> None:
    d = 512
    X = emb.embedding_matrix([f"word{i}" for i in range(200)], d)
    squared = np.sum(X**2, axis=1)
    # E‖x‖² = d · (1/d) = 1; the mean of 200 has standard error sqrt(2/d)/sqrt(200) = 0.0044.
    assert abs(squared.mean() - 1.0) < 0.03
    assert abs(X.std() - 1 / math.sqrt(d)) < 0.01 / math.sqrt(d) * 10
    assert not np.allclose(X[0], X[1])


def test_tokens_are_lower_cased_whitespace_words() -> None:
    assert emb.tokenize("The  cat\tchased THE mouse.") == ["the", "cat", "chased", "the", "mouse."]
    a, b = matrices("The Cat"), matrices("the cat")
    assert np.array_equal(a.E, b.E)


def test_scaling_multiplies_by_sqrt_d() -> None:
    plain, scaled = matrices("the cat", scale=False), matrices("the cat", scale=True)
    np.testing.assert_array_equal(scaled.E, plain.E * np.sqrt(128))
    np.testing.assert_array_equal(scaled.P, plain.P)


# --- word order ------------------------------------------------------------------------------

PERMUTED = [
    ("the cat chased the mouse", "the mouse chased the cat"),
    ("a b c d e f g h", "h g f e d c b a"),
    ("the the the cat", "cat the the the"),
]


@pytest.mark.parametrize("settings", [Settings(), Settings(d=2048, layout="concatenated", convention="tensor2tensor"),
                                      Settings(d=2, n=100.0)], ids=["default", "d2048", "d2"])
@pytest.mark.parametrize(("first", "second"), PERMUTED)
def test_permuted_sentences_have_the_same_bag_without_pe_only(first: str, second: str, settings: Settings) -> None:
    a, b = matrices(first, settings), matrices(second, settings)
    # The correctly rounded sum does not depend on order: exactly the same bag.
    assert np.array_equal(emb.bag_sum(a.E), emb.bag_sum(b.E))
    assert np.array_equal(emb.max_pool(a.E), emb.max_pool(b.E))
    # With PE, the set of vectors differs: an order-free non-linear summary sees it ...
    assert not np.array_equal(emb.max_pool(a.summed), emb.max_pool(b.summed))
    assert sorted(map(tuple, a.summed)) != sorted(map(tuple, b.summed))
    # ... but a plain sum cannot: Σ(e + p) = Σe + Σp and Σp depends on the length only.
    np.testing.assert_allclose(emb.bag_sum(a.summed), emb.bag_sum(b.summed), atol=1e-12)
    assert emb.pe_sum_difference(a, b) == 0.0
    table = emb.order_free_table(a, b)
    assert table.iloc[0, 2] == 0.0 and table.iloc[0, 3] == 0.0
    assert table.iloc[1, 2] < 1e-12 and table.iloc[1, 3] > 1e-3


def test_shuffled_bags_are_exactly_equal() -> None:
    rng = random.Random(0)
    words = ["to", "be", "or", "not", "to", "be", "that", "is", "the", "question", "the", "mind"]
    reference = emb.bag_sum(emb.embedding_matrix(words, 256))
    for _ in range(20):
        rng.shuffle(words)
        assert np.array_equal(emb.bag_sum(emb.embedding_matrix(words, 256)), reference)


def test_different_words_or_lengths_give_different_bags() -> None:
    for first, second in [("the cat", "the cat sat"), ("the cat", "the dog"), ("the cat", "the the cat")]:
        a, b = matrices(first), matrices(second)
        assert np.linalg.norm(emb.bag_sum(a.E) - emb.bag_sum(b.E)) > 0.1
        assert np.linalg.norm(emb.bag_sum(a.summed) - emb.bag_sum(b.summed)) > 0.1


def test_repeated_tokens_are_paired_in_reading_order() -> None:
    matches = emb.match_tokens(["the", "the", "cat"], ["cat", "the", "the", "sat"])
    assert [(m.token, m.occurrence, m.position_a, m.position_b) for m in matches] == [
        ("the", 1, 0, 1), ("the", 2, 1, 2), ("cat", 1, 2, 0), ("sat", 1, None, 3),
    ]
    matches = emb.match_tokens(["the", "the"], ["the"])
    assert [(m.occurrence, m.position_a, m.position_b) for m in matches] == [(1, 0, 0), (2, 1, None)]


@pytest.mark.parametrize("scale", [False, True])
def test_token_moves_are_pe_distances(scale: bool) -> None:
    settings = Settings(d=64, n=100.0)
    a, b = matrices("the cat chased the mouse", settings, scale), matrices("the mouse chased the cat", settings, scale)
    moves = emb.token_moves(a, b)
    assert list(moves["token"]) == ["the", "cat", "chased", "the", "mouse"]
    assert list(moves["moved by (positions)"]) == [0, 3, 0, 0, -3]
    assert (moves["distance without PE"] == 0.0).all()
    # ‖p_{k+δ} − p_k‖² = Σ_i (2 − 2 cos(δ ω_i)) = d − 2 Σ_i cos(δ ω_i), whatever the scale.
    expected = math.sqrt(64 - 2 * float(pe_core.dot_by_offset(np.array([3.0]), 64, 100.0)[0]))
    np.testing.assert_allclose(moves["distance with PE"], [0, expected, 0, 0, expected], atol=1e-12)


def test_token_only_in_one_sentence_has_no_distance() -> None:
    moves = emb.token_moves(matrices("the cat"), matrices("the dog"))
    assert moves["distance with PE"].isna().tolist() == [False, True, True]
    assert moves["position in 2"].isna().tolist() == [False, True, False]


# --- text limits ---------------------------------------------------------------------------


def clean(raw: str) -> tuple[str, list[str]]:
    return emb.clean_sentence(raw, key="sentence", default=emb.DEFAULT_SENTENCE)


def test_plain_sentence_is_kept_without_notice() -> None:
    assert clean("  The cat sat  ") == ("The cat sat", [])


def test_long_text_is_cut_with_one_notice() -> None:
    text, notices = clean("abcdefghi " * 30)
    assert len(text) <= emb.MAX_CHARS and notices == ["sentence: cut to its first 200 characters."]


def test_many_tokens_are_cut_to_the_limit() -> None:
    text, notices = clean(" ".join("x" * 40))
    assert len(emb.tokenize(text)) == emb.MAX_TOKENS
    assert notices == ["sentence: kept the first 32 of 40 tokens."]


@pytest.mark.parametrize("raw", ["", "   ", "\x00\x01\u200b", "\n\t"])
def test_empty_text_gives_the_default(raw: str) -> None:
    text, notices = clean(raw)
    assert text == emb.DEFAULT_SENTENCE and notices and notices[-1] == "sentence is empty; using the default sentence."


def test_control_and_invisible_characters_are_removed() -> None:
    text, notices = clean("a\x00b\x1bc\u202ed\u200be\tf\ng\ud800h")
    assert text == "abcde f gh"
    assert notices == ["sentence: removed 5 control or invisible character(s)."]
    assert emb.token_seed(text) == emb.token_seed("abcde f gh")  # UTF-8 encodable: no lone surrogate left


def test_composed_and_decomposed_accents_are_one_token() -> None:
    composed, _ = clean("caf\u00e9")
    decomposed, _ = clean("cafe\u0301")
    assert composed == decomposed


def test_notices_never_repeat_the_typed_text() -> None:
    hostile = "**bold** [link](javascript:alert(1)) <script>x</script> " * 10 + "\x00"
    _, notices = clean(hostile)
    assert notices
    for notice in notices:
        assert not any(part in notice for part in ("*", "[", "<", "javascript"))


# --- sizes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 4, 128, 512, 2048])
@pytest.mark.parametrize(("layout", "convention"), [("interleaved", "paper"), ("concatenated", "tensor2tensor")])
def test_every_pe_row_has_norm_sqrt_half_d(d: int, layout: str, convention: str) -> None:
    P = pe_core.positional_encoding(32, d, 10000.0, layout=layout, convention=convention, start=10**6)
    np.testing.assert_allclose(np.linalg.norm(P, axis=1), math.sqrt(d / 2), rtol=1e-13)
    assert emb.pe_row_norm(d) == math.sqrt(d // 2)


def test_pe_row_norm_is_exact_and_refuses_odd_d() -> None:
    assert emb.pe_row_norm(128) == 8.0 and emb.pe_row_norm(2048) == 32.0
    with pytest.raises(ValueError, match="even"):
        emb.pe_row_norm(5)


def test_norms_table_with_and_without_scaling() -> None:
    for scale in (False, True):
        m = matrices("the cat chased the mouse", Settings(d=256), scale)
        norms = emb.norms_table(m)
        x = np.linalg.norm(emb.embedding_matrix(m.tokens, 256), axis=1)
        np.testing.assert_allclose(norms["‖x_k‖"], x, rtol=1e-14)
        np.testing.assert_allclose(norms["‖√d·x_k‖"], x * 16, rtol=1e-14)
        np.testing.assert_allclose(norms["‖p_k‖"], math.sqrt(128), rtol=1e-14)


# --- figures -------------------------------------------------------------------------------

LONGEST = " ".join(f"w{i}" for i in range(emb.MAX_TOKENS))


def heatmaps(settings: Settings, sentence: str, scale: bool = True) -> list:
    m = matrices(sentence, settings, scale)
    zrange = emb.symmetric_range(m.E, m.P, m.summed)
    figs = []
    for values in (m.E, m.P, m.summed):
        drawn, columns = emb.reduce_columns(values, settings)
        figs.append(emb.sentence_heatmap(drawn, m.tokens, columns, title="t", value_name="v", zrange=zrange))
    return figs


def test_figures_at_d_2048_stay_in_budget() -> None:
    settings = Settings(d=2048, L=16384)
    figs = heatmaps(settings, LONGEST)
    m = matrices(LONGEST, settings)
    moves = emb.token_moves(m, matrices("w3 w1", settings))
    figs += [emb.norms_figure(emb.norms_table(m), d=2048), emb.moves_figure(moves)]
    sizes = [len(fig.to_json()) for fig in figs]
    assert all(size <= CHART_BUDGET for size in sizes), sizes
    assert sum(sizes) <= 1_500_000, sizes
    for fig in figs[:3]:
        z = np.asarray(fig.data[0].z)
        assert z.shape == (32, emb.MAX_DRAWN_COLUMNS) and z.size <= HEATMAP_CELLS


@pytest.mark.parametrize("d", [8, 7])
def test_bar_charts_are_the_figures_plotly_validates(d: int) -> None:
    # Built without Plotly's validation: built again with it, the same figures.
    settings = Settings(d=d)
    a, b = matrices("<b>the</b> cat sat", settings), matrices("cat <b>the</b> sat on", settings)
    norms, moves = emb.norms_figure(emb.norms_table(a), d=d), emb.moves_figure(emb.token_moves(a, b))
    for fig in (norms, moves):
        assert go.Figure(fig.to_dict()).to_dict() == fig.to_dict()
    assert [trace.name for trace in norms.data] == ["‖x_k‖", "‖√d·x_k‖", "‖p_k‖"]
    assert list(norms.layout.xaxis.ticktext) == ["0: &lt;b&gt;the&lt;/b&gt;", "1: cat", "2: sat"]
    # The exact ‖p_k‖ = √(d/2), marked across the plot, for an even d only.
    assert [shape.y0 for shape in norms.layout.shapes] == ([math.sqrt(d // 2)] if d % 2 == 0 else [])
    assert [note.text for note in norms.layout.annotations] == ([f"√(d/2) = {math.sqrt(d // 2):.6g}"] if d % 2 == 0
                                                                else [])
    assert list(moves.data[0].y) == ["&lt;b&gt;the&lt;/b&gt; #1 (k 0→1)", "cat #1 (k 1→0)", "sat #1 (k 2→2)"]
    np.testing.assert_array_equal(moves.data[0].x, emb.token_moves(a, b)["distance with PE"].to_numpy()[:3])


def test_reduced_columns_are_block_means_of_one_kind() -> None:
    settings = Settings(d=2048)
    m = matrices("the cat", settings)
    drawn, columns = emb.reduce_columns(m.P, settings)
    # Interleaved, 1024 pairs in 256 runs of 4: display column 0 is the sines of pairs 0..3.
    assert columns.is_sine[0] and not columns.is_sine[1]
    np.testing.assert_allclose(drawn[:, 0], m.P[:, [0, 2, 4, 6]].mean(axis=1), rtol=1e-14)
    np.testing.assert_allclose(drawn[:, 1], m.P[:, [1, 3, 5, 7]].mean(axis=1), rtol=1e-14)


def test_small_d_is_drawn_exactly() -> None:
    settings = Settings(d=512, layout="concatenated")
    m = matrices("the cat", settings)
    drawn, columns = emb.reduce_columns(m.summed, settings)
    assert columns.count == 512
    np.testing.assert_array_equal(drawn, m.summed)


def test_typed_text_reaches_plotly_escaped() -> None:
    sentence = "<b>bold</b> <a href='javascript:alert(1)'>x</a> &amp;"
    fig = heatmaps(Settings(d=8), sentence)[0]
    text = json.dumps([list(fig.data[0].y), list(fig.layout.yaxis.ticktext)])
    assert "<b>" not in text and "<a" not in text and "&lt;b&gt;" in text and "&amp;amp;" in text


def test_download_labels_cannot_start_a_spreadsheet_formula() -> None:
    table = emb.summed_table(matrices("=cmd|' /C calc'!A0 +1 -1 @sum"))
    assert all(label[0].isdigit() for label in table.index)
    np.testing.assert_array_equal(table.to_numpy(), matrices("=cmd|' /C calc'!A0 +1 -1 @sum").summed)


# --- reproduce this ------------------------------------------------------------------------

SNIPPET_CASES = [
    (emb.DEFAULT_SENTENCE, Settings(), False),
    (emb.DEFAULT_SENTENCE, Settings(), True),
    ("Café 日本語 'quoted' \"double\" back\\slash", Settings(d=64, n=100.0, layout="concatenated"), True),
    ("x", Settings(d=2, n=2.0), False),
    (LONGEST, Settings(d=2048, n=1e8, convention="tensor2tensor"), True),
    ("the the the", Settings(d=130, n=1e6, layout="concatenated", convention="tensor2tensor"), False),
]


@pytest.mark.parametrize(("sentence", "settings", "scale"), SNIPPET_CASES)
def test_reproduce_snippet_gives_the_apps_numbers(sentence: str, settings: Settings, scale: bool) -> None:
    tokens = emb.tokenize(emb.clean_sentence(sentence, key="s", default="x")[0])
    other = tokens[::-1]
    namespace = run_snippet(emb.reproduce_code(tokens, settings, scale=scale, other=other))
    a, b = (emb.sentence_matrices(words, settings, scale=scale) for words in (tokens, other))
    # The snippet's P has the page's exact angles: E + P, and the rounding left in a sum of them, to the bit.
    np.testing.assert_array_equal(namespace["result"]["embeddings_sum"], a.summed)
    summary = emb.order_free_table(a, b)
    numbers = list(namespace["numbers"].values())
    assert numbers[:3] == [summary.iloc[0, 2], summary.iloc[1, 2], summary.iloc[1, 3]]
    norms = emb.norms_table(a)
    assert numbers[4] == pytest.approx(norms["‖x_k‖"].mean(), rel=4 * HALF_ULP)
    assert numbers[5] == pytest.approx(norms["‖√d·x_k‖"].mean(), rel=4 * HALF_ULP)


def test_reproduce_snippet_is_standalone() -> None:
    code = emb.reproduce_code(["the", "cat"], Settings(), scale=True, other=["cat", "the"])
    imported = {
        alias.name for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Import) for alias in node.names
    } | {node.module for node in ast.walk(ast.parse(code)) if isinstance(node, ast.ImportFrom)}
    assert imported == {"hashlib", "math", "numpy"}
    assert "sha256" in code and "X * np.sqrt(d) + P" in code


# --- the page ------------------------------------------------------------------------------


def test_an_L_step_replays_the_page_and_another_d_draws_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # The sentence's length replaces L: its sections are cached without the sidebar's L.
    computed = []
    real = emb.sentence_matrices
    monkeypatch.setattr(emb, "sentence_matrices", lambda tokens, *args, **kwargs: computed.append(tokens)
                        or real(tokens, *args, **kwargs))
    query = {"sentence": "an L step replays", "other": "replays an L step"}
    first = open_url("embeddings", query | {"L": "100", "d": "24"})
    assert computed and not first.exception
    drawn = len(computed)
    moved = open_url("embeddings", query | {"L": "5000", "d": "24"})
    assert len(computed) == drawn, "an L step drew the page again"
    charts = [[chart.proto.spec for chart in at.get("plotly_chart")] for at in (first, moved)]
    assert charts[0] == charts[1] and len(charts[0]) == 5
    other = open_url("embeddings", query | {"L": "5000", "d": "26"})
    assert len(computed) > drawn and [chart.proto.spec for chart in other.get("plotly_chart")] != charts[0]


def test_page_shows_hostile_text_only_as_data() -> None:
    hostile = "**bold** [x](javascript:alert(1)) <script>alert(1)</script> $x$ :red[red]"
    at = open_url("embeddings", {"sentence": hostile + "\x00", "other": "the mouse", "scale": "true"})
    assert not at.exception
    rendered = [e.value for kind in ("markdown", "caption", "warning", "error", "info", "success")
                for e in at.get(kind)] + [m.label for m in at.metric]
    for text in rendered:
        assert "javascript" not in text and "<script>" not in text and "bold" not in text, text
    shown_tokens = list(at.dataframe[2].value["token"])  # the per-token moves table
    assert "<script>alert(1)</script>" in shown_tokens
