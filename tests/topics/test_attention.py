"""Unit tests of explorer.topics.attention (the Attention by offset page) and the formulas under it.

Every expected value is computed here from the schemes' own definitions, written out in this
file: ALiBi's get_slopes and T5's _relative_position_bucket re-typed from their code, the
sinusoid from its matrix, RoPE by turning vectors pair by pair, softmax from its definition, the
learned table from its recipe. The RoPE expectation is checked by a seeded Monte Carlo.
"""

from __future__ import annotations

import itertools
import json
import math
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from support.app_runs import MAX_CHART_BYTES, MAX_PAGE_BYTES, PAGE_BY_KEY, element_bytes, open_page
from support.independent import encoding, rates
from support.snippets import run_snippet

import pe_core
from explorer import animation
from explorer.figures import LINE_MAX_POINTS
from explorer.settings import L_MAX, Settings
from explorer.topics import attention
from explorer.topics.attention import SCHEME_KEYS, View

MB = 1_000_000


# ------------------------------------------------------------------ independent definitions


def get_slopes(heads: int) -> list[float]:
    """ALiBi's slopes, ofirpress/attention_with_linear_biases (fairseq's transformer.py), as written there."""
    def get_slopes_power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(heads).is_integer():
        return get_slopes_power_of_2(heads)
    closest_power_of_2 = 2 ** math.floor(math.log2(heads))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes(2 * closest_power_of_2)[0::2][: heads - closest_power_of_2])


def t5_bucket(relative_position: np.ndarray, bidirectional: bool = True, num_buckets: int = 32,
              max_distance: int = 128) -> np.ndarray:
    """T5's _relative_position_bucket (transformers' T5Attention), line for line in NumPy, float32 as T5."""
    relative_buckets = np.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).astype(np.int64) * num_buckets
        relative_position = np.abs(relative_position)
    else:
        relative_position = -np.minimum(relative_position, np.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    with np.errstate(divide="ignore", invalid="ignore"):
        relative_position_if_large = max_exact + (
            np.log(relative_position.astype(np.float32) / max_exact)
            / math.log(max_distance / max_exact) * (num_buckets - max_exact)
        ).astype(np.int64)
    relative_position_if_large = np.minimum(relative_position_if_large, num_buckets - 1)
    return relative_buckets + np.where(is_small, relative_position, relative_position_if_large)


def softmax(scores: list[float], query: int, causal: bool) -> np.ndarray:
    """Softmax over the visible keys, from its definition, in plain Python."""
    visible = range(query + 1) if causal else range(len(scores))
    top = max(scores[n] for n in visible)
    exps = [math.exp(scores[n] - top) if n in visible else 0.0 for n in range(len(scores))]
    total = math.fsum(exps)
    return np.array([e / total for e in exps])


def turn(x: np.ndarray, position: int, theta: np.ndarray) -> np.ndarray:
    """RoPE on interleaved pairs: each (x[2i], x[2i+1]) times the 2 x 2 rotation by position·θ_i."""
    out = np.empty_like(x)
    for i, rate in enumerate(theta):
        c, s = math.cos(position * rate), math.sin(position * rate)
        out[..., 2 * i] = c * x[..., 2 * i] - s * x[..., 2 * i + 1]
        out[..., 2 * i + 1] = s * x[..., 2 * i] + c * x[..., 2 * i + 1]
    return out


def learned_rows(L: int, d: int) -> np.ndarray:
    """The learned table's recipe: row r from the generator of its block of 256 rows, bytes unpacked
    most significant bit first, bit 1 -> -1, bit 0 -> +1."""
    rows = []
    for r in range(L):
        block, within = divmod(r, 256)
        data = np.random.default_rng([attention.LEARNED_SEED, block]).integers(
            0, 256, size=(256, (d + 7) // 8), dtype=np.uint8)
        bits = [(int(byte) >> (7 - k)) & 1 for byte in data[within] for k in range(8)][:d]
        rows.append([1.0 - 2.0 * b for b in bits])
    return np.array(rows)


def closed_forms(settings: Settings) -> dict[str, np.ndarray]:
    """The two closed forms the page reads, from zero to L-1 (as its caches hold them)."""
    t = np.arange(settings.L, dtype=np.float64)
    return {
        "sinusoid_from_zero": pe_core.dot_by_offset(t, settings.d, settings.n, settings.convention),
        "rope_from_zero": pe_core.rope_dot_by_offset(t, settings.d, settings.n),
    }


def page_numbers(settings: Settings, view: View, query: int) -> dict:
    """What the page computes, through the functions its cached wrappers call."""
    scores = attention.offset_scores(settings.L, settings.d, view, **closed_forms(settings))
    bits = attention.learned_bits(settings.L, settings.d)
    by_key = attention.query_scores(scores, bits, query, settings.d, view)
    weights = attention.query_weights(by_key, query, view.causal)
    queries = attention.play_queries(settings.L, len(view.schemes))
    frames = attention.play_weights(scores, bits, settings.d, view, queries)
    return {"scores": scores, "bits": bits, "by_key": by_key, "weights": weights, "queries": queries,
            "frames": frames}


# ------------------------------------------------------------------ each scheme against its definition


@pytest.mark.parametrize("convention", ["paper", "tensor2tensor"])
@pytest.mark.parametrize(("L", "d", "n", "query"), [(40, 16, 100.0, 13), (300, 64, 10000.0, 299), (7, 2, 2.0, 0)])
def test_sinusoid_scores_are_the_dot_products_of_the_encoding(convention, L, d, n, query) -> None:
    settings = Settings(d=d, n=n, L=L, convention=convention)
    for scaled in (False, True):
        view = View(causal=False, scaled=scaled)
        scores = attention.offset_scores(L, d, view, **closed_forms(settings))
        P = encoding(L, d, n, convention=convention)
        scale = 1 / math.sqrt(d) if scaled else 1.0
        np.testing.assert_allclose(scores.at_query("sinusoidal", query), scale * (P @ P[query]), rtol=0, atol=1e-10)
        # And the closed form itself: f(δ) = Σ cos(ω_i δ).
        delta = attention.all_offsets(L)
        np.testing.assert_allclose(scores.values["sinusoidal"],
                                   scale * np.cos(np.outer(delta, rates(d, n, convention))).sum(axis=1), atol=1e-10)


@pytest.mark.parametrize(("d", "n"), [(2, 100.0), (16, 10000.0), (64, 500000.0)])
def test_rope_score_of_all_ones_turned_vectors(d: int, n: float) -> None:
    """all-ones q and k turned by their positions, pair by pair, against rope_dot_by_offset and the topic."""
    theta = n ** (-np.arange(0, d, 2) / d)
    ones = np.ones(d)
    L, query = 50, 20
    measured = np.array([turn(ones, query, theta) @ turn(ones, key, theta) for key in range(L)])
    np.testing.assert_allclose(pe_core.rope_dot_by_offset(np.arange(L) - query, d, n), measured, atol=1e-12)
    scores = attention.offset_scores(L, d, View(causal=False, scaled=False), **closed_forms(Settings(d=d, n=n, L=L)))
    np.testing.assert_allclose(scores.at_query("rope", query), measured, atol=1e-12)
    # pe_core.rotate (either layout) says the same.
    for layout in ("half", "interleaved"):
        q = pe_core.rotate(np.ones((1, d)), [query], n, layout=layout)[0]
        k = pe_core.rotate(np.ones((L, d)), np.arange(L), n, layout=layout)
        np.testing.assert_allclose(k @ q, measured, atol=1e-12)


def test_rope_score_is_exactly_twice_the_paper_sinusoid() -> None:
    """The page takes RoPE's curve as twice the paper sinusoid's (computed once for both): the same to the bit."""
    for t in (np.arange(-3000, 3001, dtype=np.float64), np.arange(L_MAX, dtype=np.float64)):
        for d, n in ((128, 10000.0), (2048, 2.0), (6, 1e8), (302, 12345.0)):
            np.testing.assert_array_equal(pe_core.rope_dot_by_offset(t, d, n), 2 * pe_core.dot_by_offset(t, d, n))


def test_rope_with_a_scaling_is_the_scaled_rotation() -> None:
    scaling = pe_core.RopeScaling("linear", 4.0)
    d, L = 32, 40
    q = pe_core.rotate(np.ones((1, d)), [7], 10000.0, scaling=scaling)[0]
    k = pe_core.rotate(np.ones((L, d)), np.arange(L), 10000.0, scaling=scaling)
    np.testing.assert_allclose(pe_core.rope_dot_by_offset(np.arange(L) - 7, d, scaling=scaling), k @ q, atol=1e-12)


@pytest.mark.parametrize(("distribution", "fourth_moment"), [("normal", 3.0), ("uniform", 9 / 5), ("rademacher", 1.0)])
def test_rope_expectation_for_a_random_query_equal_to_its_key_monte_carlo(distribution: str, fourth_moment: float):
    r"""q = k with i.i.d. entries of mean 0 and variance 1, turned by positions m and n: over many
    seeded draws the mean score is Σ 2 cos(δθ_i) (rope_dot_by_offset) and its variance
    2 (μ4 - 1) Σ cos²(δθ_i), within 5 standard errors; and every single draw is exactly
    Σ_i |q_(i)|² cos(δθ_i)."""
    d, n, draws = 16, 100.0, 40_000
    rng = np.random.default_rng(2021)
    q = {
        "normal": lambda: rng.standard_normal((draws, d)),
        "uniform": lambda: rng.uniform(-math.sqrt(3), math.sqrt(3), (draws, d)),
        "rademacher": lambda: rng.choice([-1.0, 1.0], (draws, d)),
    }[distribution]()
    theta = n ** (-np.arange(0, d, 2) / d)
    m = 5
    keys = np.arange(0, 60, 3)
    turned_q = turn(q, m, theta)
    scores = np.stack([np.einsum("sd,sd->s", turned_q, turn(q, key, theta)) for key in keys], axis=1)
    delta = keys - m
    expected = pe_core.rope_dot_by_offset(delta, d, n)
    cos2 = (np.cos(np.outer(delta, theta)) ** 2).sum(axis=1)
    variance = 2 * (fourth_moment - 1) * cos2
    standard_error = np.sqrt(variance / draws)
    assert np.all(np.abs(scores.mean(axis=0) - expected) <= 5 * standard_error + 1e-9), (
        scores.mean(axis=0) - expected, standard_error)
    if fourth_moment > 1:  # Rademacher: |q_(i)|² = 2 always, no variance at all
        np.testing.assert_allclose(scores.var(axis=0), variance, rtol=0.06)
    else:
        np.testing.assert_allclose(scores, np.broadcast_to(expected, scores.shape), atol=1e-9)
    pair_norms = q[:, 0::2] ** 2 + q[:, 1::2] ** 2
    np.testing.assert_allclose(scores, pair_norms @ np.cos(np.outer(delta, theta)).T, atol=1e-9)
    # Independent q and k: mean 0 at every offset.
    k = rng.standard_normal((draws, d))
    independent = np.stack([np.einsum("sd,sd->s", turned_q, turn(k, key, theta)) for key in keys], axis=1)
    assert np.all(np.abs(independent.mean(axis=0)) <= 5 * np.sqrt(d / draws) * np.sqrt(fourth_moment))


@pytest.mark.parametrize("heads", [1, 3, 8, 12, 112, 128])
@pytest.mark.parametrize("causal", [True, False])
def test_alibi_scores_are_minus_slope_times_distance(heads: int, causal: bool) -> None:
    L, d = 60, 8
    slopes = np.array(get_slopes(heads))
    for head in sorted({1, (heads + 1) // 2, heads}):
        view = View(causal=causal, heads=heads, head=head)
        scores = attention.offset_scores(L, d, view, **closed_forms(Settings(d=d, L=L)))
        np.testing.assert_allclose(scores.slopes, slopes, rtol=1e-12)
        np.testing.assert_allclose(scores.values["alibi"], -slopes[head - 1] * np.abs(np.arange(-(L - 1), L)),
                                   rtol=1e-12, atol=0)
    table = attention.alibi_table(scores.slopes, L)
    np.testing.assert_allclose(table["weight halves every (positions)"], np.log(2) / slopes)
    np.testing.assert_allclose(table[f"bias at δ = −{L - 1}"], -slopes * (L - 1))


@pytest.mark.parametrize("causal", [True, False])
def test_t5_scores_are_the_bias_of_t5s_bucket(causal: bool) -> None:
    """Both directions: the buckets are T5's function's, for every offset of 16384 positions, and the
    score of head h is the seeded table's value for that bucket."""
    L = 16384
    offsets = np.arange(-(L - 1), L)
    expected_buckets = t5_bucket(offsets, bidirectional=not causal)
    np.testing.assert_array_equal(attention.t5_buckets(offsets, causal), expected_buckets)
    table = np.random.default_rng(attention.T5_BIAS_SEED).standard_normal((12, 32))
    view = View(causal=causal, heads=12, head=5)
    scores = attention.offset_scores(L, 4, view, **closed_forms(Settings(d=4, L=L)))
    np.testing.assert_array_equal(scores.values["t5"], table[4][expected_buckets])
    # A head keeps its biases when the number of heads changes.
    np.testing.assert_array_equal(attention.t5_bias_table(3), table[:3])


@pytest.mark.parametrize("causal", [True, False])
def test_t5_bucket_boundaries(causal: bool) -> None:
    ranges = attention.t5_bucket_ranges(causal)
    # Bidirectional, bucket 16 would be offset 0 on the keys' side: no key after the query is there.
    assert [r.bucket for r in ranges] == [b for b in range(32) if causal or b != 16]
    for r in ranges:
        first = -10_000 if r.first is None else r.first
        last = 10_000 if r.last is None else r.last
        inside = np.arange(first, last + 1)
        assert np.all(t5_bucket(inside, bidirectional=not causal) == r.bucket), r
        for outside in (first - 1, last + 1):
            if abs(outside) < 10_000:
                assert t5_bucket(np.array([outside]), bidirectional=not causal)[0] != r.bucket, (r, outside)
    text = {r.bucket: r.text for r in ranges}
    if causal:
        assert text[0] == "δ ≥ 0" and text[15] == "δ = -15" and text[31].startswith("δ ≤ ")
    else:
        assert text[0] == "δ = 0" and text[7] == "δ = -7" and text[17] == "δ = 1"
        assert text[15].startswith("δ ≤ ") and text[31].startswith("δ ≥ ")
    # From this distance on, every key before the query is in the last bucket, and not one closer.
    far, last = attention.t5_shared_from(causal), 31 if causal else 15
    assert t5_bucket(np.array([-far]), bidirectional=not causal)[0] == last
    assert t5_bucket(np.array([1 - far]), bidirectional=not causal)[0] == last - 1
    counts = attention.t5_bucket_table(100, View(causal=causal))["offsets of this view"]
    assert counts.sum() == (100 if causal else 199)


@pytest.mark.parametrize(("L", "d"), [(1, 2), (5, 10), (300, 66), (513, 128)])
def test_learned_scores_are_the_dot_products_of_the_table(L: int, d: int) -> None:
    """The packed bits give P[m]·P[n] of the ±1 table exactly (d not a multiple of 8 or 64, rows past
    a block of 256), and the table is the recipe's; a longer table starts with the shorter one."""
    P = learned_rows(L, d)
    np.testing.assert_array_equal(attention.learned_table(L, d), P)
    bits = attention.learned_bits(L, d)
    for query in sorted({0, L // 2, L - 1}):
        np.testing.assert_array_equal(attention.learned_scores(bits, query, d), P @ P[query])
    np.testing.assert_array_equal(attention.learned_table(L + 300, d)[:L], P)
    assert abs(P.mean()) < 0.2 or P.size < 100


# ------------------------------------------------------------------ softmax weights and where they sit


WEIGHT_CASES = [
    (Settings(d=16, n=100.0, L=40), View(causal=True, scaled=True), 13),
    (Settings(d=16, n=100.0, L=40), View(causal=False, scaled=False, heads=3, head=2), 0),
    (Settings(d=64, L=300, convention="tensor2tensor"), View(causal=False, heads=12, head=12), 299),
    (Settings(d=8, L=1), View(), 0),
]


@pytest.mark.parametrize(("settings", "view", "query"), WEIGHT_CASES)
def test_softmax_weights_of_each_scheme(settings: Settings, view: View, query: int) -> None:
    """Scores from each scheme's definition (the encoding's dot products, turned all-ones vectors,
    get_slopes, T5's buckets, the learned table's rows), softmax from its definition."""
    L, d, n = settings.L, settings.d, settings.n
    scale = 1 / math.sqrt(d) if view.scaled else 1.0
    keys = np.arange(L)
    P = encoding(L, d, n, convention=settings.convention)
    theta = n ** (-np.arange(0, d, 2) / d)
    turned = np.array([turn(np.ones(d), key, theta) for key in keys])
    table = np.random.default_rng(attention.T5_BIAS_SEED).standard_normal((view.heads, 32))
    learned = learned_rows(L, d)
    expected_scores = {
        "sinusoidal": scale * (P @ P[query]),
        "rope": scale * (turned @ turned[query]),
        "alibi": -get_slopes(view.heads)[view.head - 1] * np.abs(keys - query),
        "t5": table[view.head - 1][t5_bucket(keys - query, bidirectional=not view.causal)],
        "learned": scale * (learned @ learned[query]),
        "none": np.zeros(L),
    }
    numbers = page_numbers(settings, view, query)
    for key in SCHEME_KEYS:
        np.testing.assert_allclose(numbers["by_key"][key], expected_scores[key], atol=1e-10, err_msg=key)
        expected = softmax(list(expected_scores[key]), query, view.causal)
        np.testing.assert_allclose(numbers["weights"][key], expected, rtol=1e-9, atol=1e-15, err_msg=key)
        assert math.isclose(numbers["weights"][key].sum(), 1.0, rel_tol=1e-12)
    # No position: every visible key the same weight.
    seen = query + 1 if view.causal else L
    np.testing.assert_allclose(numbers["weights"]["none"][:seen], 1 / seen)
    table = attention.where_table(numbers["weights"], query, view.causal)
    none = table.iloc[-1]
    assert none["effective keys e^H"] == pytest.approx(seen) and none["keys it sees"] == seen


def test_pe_core_attention_weights_half_mass_and_effective_keys_by_brute_force() -> None:
    rng = np.random.default_rng(7)
    for _ in range(30):
        L = int(rng.integers(1, 40))
        scores = rng.normal(0, 3, L)
        query = int(rng.integers(0, L))
        for causal in (True, False):
            weights = pe_core.attention_weights(scores, query, causal=causal)
            np.testing.assert_allclose(weights, softmax(list(scores), query, causal), rtol=1e-12, atol=1e-300)
            # The smallest r whose window m-r .. m+r holds half, found by trying every r.
            r = next(r for r in range(L) if math.fsum(weights[max(0, query - r): query + r + 1]) >= 0.5 - 1e-12)
            assert pe_core.half_mass_radius(weights, query) == r
            p = weights[weights > 0]
            assert pe_core.effective_keys(weights) == pytest.approx(math.exp(-math.fsum(p * np.log(p))), rel=1e-12)
    assert pe_core.half_mass_radius([0.5, 0.5], 1) == 0  # exactly half on the query's own key
    assert pe_core.effective_keys([0, 0.25, 0.25, 0.25, 0.25]) == pytest.approx(4.0)


def test_alibi_weights_halve_every_ln2_over_slope() -> None:
    """ALiBi's causal weights fall by e^(-m) per position: the page's 'halves every ln 2 / m'."""
    view = View(schemes=("alibi",), heads=8, head=3)
    numbers = page_numbers(Settings(d=8, L=200), view, 199)
    w = numbers["weights"]["alibi"]
    np.testing.assert_allclose(w[:-1] / w[1:], np.exp(-1 / 8), rtol=1e-12)


# ------------------------------------------------------------------ Play


def test_play_frames_are_the_mean_weights_over_blocks() -> None:
    settings, view = Settings(d=32, L=1000), View(causal=False, heads=4, head=2)
    numbers = page_numbers(settings, view, 0)
    edges = attention.play_edges(1000)
    assert edges.size - 1 == attention.PLAY_POINTS
    queries = numbers["queries"]
    assert queries[0] == 0 and queries[-1] == 999 and 2 <= queries.size <= animation.PLAY_MAX_FRAMES
    for index in (0, queries.size // 2, queries.size - 1):
        q = int(queries[index])
        weights = page_numbers(settings, view, q)["weights"]
        for key in SCHEME_KEYS:
            means = [math.fsum(weights[key][a:b]) / (b - a) for a, b in itertools.pairwise(edges)]
            np.testing.assert_allclose(numbers["frames"][key][index], means, atol=1e-14)
    fig = attention.play_figure(numbers["frames"], queries, 1000, title="Play")
    assert len(fig.frames) == queries.size
    assert len(fig.to_json()) <= animation.PLAY_MAX_BYTES + 150_000
    # Log-scale panels from the smallest positive weight (or 1e-8) to the largest, the same in every frame.
    low, high = 10 ** np.array(fig.layout.yaxis3.range)
    positive = numbers["frames"]["alibi"][numbers["frames"]["alibi"] > 0]
    assert fig.layout.yaxis3.type == "log"
    assert low == pytest.approx(max(1e-8, positive.min()) / 1.5) and high == pytest.approx(1.5 * positive.max())
    # Every frame's first trace is the sinusoid's weights of that frame's query.
    last = fig.frames[-1].data[0]
    assert last.meta == 999
    np.testing.assert_allclose(np.asarray(last.y, dtype=float), numbers["frames"]["sinusoidal"][-1], rtol=1e-6)


@pytest.mark.parametrize(("L", "causal", "scaled"),
                         [(700, True, True), (700, False, False), (2300, True, False), (1, True, True)])
def test_play_frames_are_the_block_means_of_each_querys_weights_bit_for_bit(L: int, causal: bool, scaled: bool) -> None:
    """play_weights shares exponentials between queries and skips pe_core's checks: the same numbers to the
    last bit as query_weights (pe_core.attention_weights) query by query."""
    settings, view = Settings(d=66, L=L), View(causal=causal, scaled=scaled, heads=5, head=3)
    numbers = page_numbers(settings, view, 0)
    edges = attention.play_edges(L)
    for index, query in enumerate(numbers["queries"].tolist()):
        by_key = attention.query_scores(numbers["scores"], numbers["bits"], query, settings.d, view)
        for key, weights in attention.query_weights(by_key, query, causal).items():
            np.testing.assert_array_equal(numbers["frames"][key][index],
                                          np.add.reduceat(weights, edges[:-1]) / np.diff(edges), err_msg=key)


# ------------------------------------------------------------------ the largest settings


def test_largest_settings_stay_within_the_chart_budgets() -> None:
    """L=16384, d=2048, 128 heads, bidirectional: every line within LINE_MAX_POINTS, every chart within 1.5 MB."""
    settings = Settings(d=2048, L=16384)
    view = View(causal=False, heads=attention.HEADS_MAX, head=attention.HEADS_MAX)
    query = 16383
    numbers = page_numbers(settings, view, query)
    charts = [
        attention.scores_figure(numbers["scores"], view, 2048, title="s"),
        attention.learned_figure(numbers["by_key"]["learned"], query, view, 2048, title="l"),
        attention.weights_figure(numbers["weights"], query, view.causal, title="w"),
        attention.play_figure(numbers["frames"], numbers["queries"], 16384, title="p"),
    ]
    for fig in charts:
        assert len(fig.to_json()) <= 1.5 * MB
        for trace in fig.data:
            assert len(trace.y) <= LINE_MAX_POINTS
    # The scores figure: one panel per offset scheme, ALiBi with a straight line per head.
    assert len(charts[0].data) == len(attention.OFFSET_SCHEMES) - 1 + attention.HEADS_MAX
    # The envelope keeps the peak of each weight curve exactly.
    for trace, key in zip(charts[2].data, SCHEME_KEYS, strict=True):
        assert float(np.max(np.asarray(trace.y, dtype=float))) == numbers["weights"][key].max()


# ------------------------------------------------------------------ reproduce this


def snippet_tables(settings: Settings, view: View, query: int) -> dict:
    """What the page offers for download, keyed as its snippet's result."""
    numbers = page_numbers(settings, view, query)
    tables = {
        "attention_weights": attention.weights_table(numbers["weights"], query),
        "attention_play": attention.play_table(numbers["frames"], numbers["queries"], settings.L),
    }
    if view.offset_schemes:
        tables["attention_scores"] = attention.scores_table(numbers["scores"], view, settings.d)
    if "learned" in view.schemes:
        tables["attention_learned"] = attention.learned_table_data(numbers["by_key"]["learned"], query, view.causal)
    return tables


SNIPPET_CASES = [
    (Settings(), View(), 50),
    (Settings(d=64, n=100.0, L=300, convention="tensor2tensor"), View(causal=False, scaled=False, heads=12, head=7), 3),
    (Settings(d=10, L=700), View(schemes=("rope", "learned", "t5"), heads=5, head=5), 699),
    (Settings(d=4, L=1), View(schemes=("learned",)), 0),
]


def assert_same(result: dict, tables: dict, atol: float) -> None:
    assert set(result) == set(tables)
    for key, table in tables.items():
        got = np.asarray(result[key], dtype=np.float64)
        assert got.shape == table.shape, key
        np.testing.assert_allclose(got, table.to_numpy(dtype=np.float64), rtol=1e-9, atol=atol, err_msg=key)


@pytest.mark.parametrize(("settings", "view", "query"), SNIPPET_CASES)
def test_numpy_snippet_gives_the_page_numbers(settings: Settings, view: View, query: int) -> None:
    result = run_snippet(attention.attention_code(settings, view, query))["result"]
    # The snippet sums cosines of rounded angles; the page keeps the angles exact.
    assert_same(result, snippet_tables(settings, view, query), atol=1e-9)


@pytest.mark.parametrize(("settings", "view", "query"), SNIPPET_CASES[:2])
def test_torch_snippet_gives_the_page_numbers(settings: Settings, view: View, query: int) -> None:
    from test_reproduce import torch_result

    result = torch_result(attention.attention_code(settings, view, query, library="torch"))
    assert_same(result, snippet_tables(settings, view, query), atol=1e-9)


def test_the_snippet_names_the_exact_settings() -> None:
    code = attention.attention_code(Settings(d=64, L=30, n=100.0), View(causal=False, heads=3, head=2), 7)
    assert "L, d, n = 30, 64, 100.0" in code and "heads, head, m = 3, 2, 7" in code
    assert "causal, scaled = False, True" in code
    assert json.dumps(list(SCHEME_KEYS)).replace('"', "'") in code


# ------------------------------------------------------------------ the page (AppTest)


PAGE = PAGE_BY_KEY["attention"]
#: The page's own URL keys and a value of each kind a hostile URL may hold.
PAGE_KEYS = ("schemes", "causal", "scaled", "heads", "head", "query")
HOSTILE = {
    "text": dict.fromkeys(PAGE_KEYS, "abc"),
    "nan": dict.fromkeys(PAGE_KEYS, "NaN"),
    "inf": dict.fromkeys(PAGE_KEYS, "inf"),
    "negative": dict.fromkeys(PAGE_KEYS, "-5"),
    "huge": {**dict.fromkeys(PAGE_KEYS, "9" * 40), "schemes": "rope," * 400},
}


def notices_naming(at, key: str) -> list[str]:
    return [w.value for w in at.warning if re.search(rf"(?<![\w/]){key}(?![\w])", w.value)]


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_urls_for_every_page_key_get_a_notice_and_a_clamped_value(kind: str) -> None:
    at = open_page(PAGE, HOSTILE[kind])
    for key in PAGE_KEYS:
        notices = notices_naming(at, key)
        assert notices, f"no notice names {key!r}: {[w.value for w in at.warning]}"
        assert all("\n" not in notice and len(notice) <= 400 for notice in notices)
    state = at.session_state
    assert attention.HEADS_MIN <= state["heads"] <= attention.HEADS_MAX
    assert 1 <= state["head"] <= state["heads"]
    assert 0 <= state["query"] <= 99
    assert state["schemes"] and set(state["schemes"]) <= set(SCHEME_KEYS)
    assert isinstance(state["causal"], bool) and isinstance(state["scaled"], bool)
    if kind == "huge":
        assert (state["heads"], state["head"], state["query"]) == (attention.HEADS_MAX, attention.HEADS_MAX, 99)
    if kind == "negative":
        assert (state["heads"], state["head"], state["query"]) == (1, 1, 0)
    assert at.get("plotly_chart"), "the page drew no chart"
    assert all(len(value) <= 64 for value in at.query_params.values() for value in
               ([value] if isinstance(value, str) else value)), "a bad value stays in the URL"


def test_the_url_chooses_the_schemes_and_an_empty_choice_draws_nothing() -> None:
    at = open_page(PAGE, {"schemes": "t5,alibi,zzz", "causal": "false"})
    assert at.session_state["schemes"] == ["alibi", "t5"]
    assert notices_naming(at, "schemes")  # zzz is named as dropped
    spec = json.loads(next(c.proto.spec for c in at.get("plotly_chart") if "attention_scores" in c.proto.id))
    assert [spec["layout"]["yaxis"]["title"]["text"], spec["layout"]["yaxis2"]["title"]["text"]] == ["ALiBi", "T5"]
    assert "yaxis3" not in spec["layout"]
    empty = open_page(PAGE, {"schemes": ""})
    assert not empty.get("plotly_chart") and not notices_naming(empty, "schemes")
    assert any("at least one scheme" in info.value for info in empty.info)


def test_the_page_shows_the_numbers_of_its_snippet_and_follows_the_query() -> None:
    """At a URL's settings, the where-it-looks table on the page is what the page's own NumPy snippet
    gives; moving the query reruns it, and the URL follows."""
    query = {"d": "64", "L": "300", "n": "100", "convention": "tensor2tensor", "causal": "false", "heads": "12",
             "head": "7", "query": "3", "code": "true"}
    at = open_page(PAGE, query)
    for moved in (None, 250):
        if moved is not None:
            at.slider(key="query").set_value(moved).run()
            assert at.query_params.get("query") == str(moved)
        m = 3 if moved is None else moved
        result = run_snippet(at.get("code")[0].value)["result"]
        weights = np.asarray(result["attention_weights"])[:, 2:]
        (table,) = [frame.value for frame in at.dataframe if "effective keys e^H" in frame.value.columns]
        np.testing.assert_allclose(table["weight on its own key"], weights[m], rtol=1e-9)
        np.testing.assert_allclose(table["largest weight"], weights.max(axis=0), rtol=1e-9)
        np.testing.assert_array_equal(table["at key"], weights.argmax(axis=0))
        np.testing.assert_array_equal(table["half the weight within ± r"],
                                      [pe_core.half_mass_radius(w, m) for w in weights.T])


def test_the_play_figure_is_valid_plotly_and_its_frames_fit_the_budget() -> None:
    """animation.frame skips Plotly's validation: the whole figure, frames included, still passes it;
    the frames stay within animation's budget at the largest settings."""
    numbers = page_numbers(Settings(d=2048, L=16384), View(causal=False), 16383)
    fig = attention.play_figure(numbers["frames"], numbers["queries"], 16384, title="Play")
    checked = go.Figure(fig.to_plotly_json())  # raises on any property Plotly does not know
    assert len(checked.frames) == len(fig.frames) > 10
    frames = json.loads(fig.to_json())["frames"]
    assert len(json.dumps(frames)) <= animation.PLAY_MAX_BYTES


def test_the_page_at_its_largest_stays_in_budget() -> None:
    """L=16384, d=2048, 128 heads, bidirectional, the last query, Play open: every chart within 1.5 MB, the page
    within 3 MB."""
    at = open_page(PAGE, {"d": "2048", "L": "16384", "n": "2", "heads": "128", "head": "128", "causal": "false",
                          "query": "16383", "play": "true"})
    sizes = [len(chart.proto.spec.encode()) for chart in at.get("plotly_chart")]
    assert len(sizes) == 4 and max(sizes) <= MAX_CHART_BYTES, sizes
    assert element_bytes(at) <= MAX_PAGE_BYTES


def test_choosing_schemes_keeps_the_url_in_the_options_order() -> None:
    at = open_page(PAGE)
    pills = at.button_group(key="schemes")
    pills.set_value(["none", "rope"]).run()
    assert at.session_state["schemes"] == ["rope", "none"]
    assert at.query_params.get("schemes") == "rope,none"
    at.button_group(key="schemes").set_value(list(reversed(SCHEME_KEYS))).run()
    assert "schemes" not in at.query_params  # every scheme, in any order: the default, out of the URL


def test_the_weights_chart_draws_the_keys_the_query_sees() -> None:
    numbers = page_numbers(Settings(d=16, L=500), View(), 30)
    causal = attention.weights_figure(numbers["weights"], 30, True, title="w")
    assert list(causal.layout.xaxis.range) == [-0.5, 30.5]
    assert all(len(trace.y) == 31 for trace in causal.data)  # keys 0..30, the masked ones left out
    np.testing.assert_allclose(np.asarray(causal.data[2].y, dtype=float), numbers["weights"]["alibi"][:31])
    both = attention.weights_figure(numbers["weights"], 30, False, title="w")
    assert list(both.layout.xaxis.range) == [-0.5, 499.5] and len(both.data[0].y) == 500


def test_t5_bucket_ranges_are_worked_out_once_per_mask() -> None:
    """Cached by the mask alone: asked again, the same ranges (a hit); the other mask's are its own."""
    attention.t5_bucket_ranges.cache_clear()
    causal = attention.t5_bucket_ranges(True)
    assert attention.t5_bucket_ranges(True) is causal and attention.t5_bucket_ranges.cache_info().hits == 1
    bidirectional = attention.t5_bucket_ranges(False)
    assert bidirectional != causal and attention.t5_bucket_ranges.cache_info().misses == 2
    assert {r.bucket for r in bidirectional} == set(range(32)) - {16}  # bucket 16 holds no offset
