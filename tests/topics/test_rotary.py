"""Rotary (explorer.topics.rotary, pages/rotary_page.py) against formulas written here.

The references build what the page draws the long way, from the sources: q and k from the seed's
pairs, every rotated query and key with Hugging Face's ``rotate_half`` on ``cat(freqs, freqs)``
(GPT-J's ``rotate_every_two`` on ``repeat_interleave`` for the interleaved layout), the whole L x L
score matrix, Meta's complex multiplication for the closed form, sum_i 2 cos((m - n) theta_i) for
all-ones q and k, RoFormer's S_j as a loop, and block means by slicing. The page draws all of
it from closed forms over the offsets, never building an L x L matrix.

Then "reproduce this": the NumPy snippet (and the PyTorch one where torch is installed) for
several views gives the page's downloads and prints its metrics; and the page itself in AppTest:
presets, hostile URLs for each of its keys, the link to Relative positions.

Tolerances: the references round each angle once (half an ulp); the page keeps it exact: 1e-10
on scores of size d at these lengths. Block means come from prefix sums of the closed form over
L² cells, whose rounding grows with them: 1e-10 of the largest score (``MEANS_RTOL``).
"""

from __future__ import annotations

import cmath
import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from itertools import pairwise

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import streamlit
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from support.app_runs import PAGE_BY_KEY, open_page
from support.independent import rotate_every_two, rotate_half
from support.snippets import run_snippet
from test_reproduce import assert_same, torch_result

import pe_core
from explorer import rope_presets
from explorer.topics import rotary
from explorer.topics.rotary import RotaryView
from explorer.ui import blocks
from explorer.ui.controls import OFFER_DOWNLOADS

ROTARY = PAGE_BY_KEY["rotary"]
#: The page's downloads (its snippet's result holds each).
DOWNLOADS = ("rotary_pair", "rotary_pair_play", "rotary_scores", "rotary_closed_form", "rotary_decay",
             "rotary_cos_half", "rotary_cos_interleaved", "rotary_mixing")
ATOL = 1e-10
MEANS_RTOL = 1e-10


def assert_means(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, expected, rtol=0, atol=MEANS_RTOL * max(1.0, float(np.abs(expected).max())))
YARN = pe_core.RopeScaling("yarn", 4.0, 64)
VIEWS = {
    "default": RotaryView(128, 10000.0, 100),
    "whole-small": RotaryView(16, 100.0, 40, "interleaved", None, "random", 7),
    "reduced-yarn": RotaryView(32, 10000.0, 600, "half", YARN, "random", 3),
    "ones-llama3": RotaryView(24, 500000.0, 300, "interleaved", pe_core.RopeScaling("llama3", 8.0, 64), "ones"),
    "dynamic": RotaryView(8, 1000.0, 250, "half", pe_core.RopeScaling("dynamic", 2.0, 100), "random", 1),
    "one-position": RotaryView(4, 10000.0, 1),
}


# ------------------------------------------------------------------------------- references


def reference_qk(view: RotaryView) -> tuple[np.ndarray, np.ndarray]:
    if view.qk == "ones":
        return np.ones(view.d), np.ones(view.d)
    u_v = np.random.default_rng(view.seed).standard_normal((2, 2, view.d // 2))
    out = []
    for x in u_v:
        v = np.empty(view.d)
        if view.layout == "half":
            v[: view.d // 2], v[view.d // 2 :] = x
        else:
            v[0::2], v[1::2] = x
        out.append(v)
    return out[0], out[1]


def tables(view: RotaryView, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """transformers' cos and sin for positions 0..L-1: cat (half) or repeat_interleave, times a."""
    freqs = np.outer(np.arange(view.L), view.theta())
    emb = np.concatenate([freqs, freqs], axis=1) if layout == "half" else np.repeat(freqs, 2, axis=1)
    a = pe_core.rope_attention_factor(view.scaling, view.L)
    return a * np.cos(emb), a * np.sin(emb)


def embedded(x: np.ndarray, view: RotaryView, rotation: str) -> np.ndarray:
    """Every position's x * cos + rot(x) * sin with this view's cache and ``rotation``'s rotate function."""
    cos, sin = tables(view, view.layout)
    rot = rotate_half if rotation == "half" else rotate_every_two
    X = np.tile(x, (view.L, 1))
    return X * cos + rot(X) * sin


def full_scores(view: RotaryView, rotation: str | None = None) -> np.ndarray:
    q, k = reference_qk(view)
    rotation = rotation or view.layout
    return embedded(q, view, rotation) @ embedded(k, view, rotation).T


def block_means(matrix: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return np.array([[matrix[a:b, c:e].mean() for c, e in pairwise(cols)] for a, b in pairwise(rows)])


# ------------------------------------------------------------------------------- the topic


@pytest.mark.parametrize("name", list(VIEWS))
def test_q_and_k_are_the_seeds_pairs_in_the_layouts_columns(name: str) -> None:
    view = VIEWS[name]
    for got, expected in zip(rotary.query_key(view), reference_qk(view), strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", list(VIEWS))
def test_the_score_matrix_is_the_block_means_of_every_rotated_query_and_key(name: str) -> None:
    view = VIEWS[name]
    s = rotary.scores(view, rotary.score_blocks(view.L))
    S = full_scores(view)
    assert_means(s.block_means, block_means(S, s.edges, s.edges))
    assert s.block_means.size <= 192 * 192 or s.block_means.shape == (view.L, view.L)
    # The closed form, Meta's complex way: g(t) = a² Σ_i Re(z_q conj(z_k) e^{i t θ}).
    q, k = reference_qk(view)
    first, second = (slice(0, view.d // 2), slice(view.d // 2, None)) if view.layout == "half" else \
        (slice(0, None, 2), slice(1, None, 2))
    h = (q[first] + 1j * q[second]) * np.conj(k[first] + 1j * k[second])
    t = np.arange(-(view.L - 1), view.L)
    a2 = pe_core.rope_attention_factor(view.scaling, view.L) ** 2
    np.testing.assert_allclose(s.by_offset, a2 * (np.exp(1j * np.outer(t, view.theta())) @ h).real, rtol=0, atol=ATOL)
    # Constant diagonals: S[m, n] = g(m - n) everywhere.
    np.testing.assert_allclose(S, s.by_offset[np.subtract.outer(np.arange(view.L), np.arange(view.L)) + view.L - 1],
                               rtol=0, atol=ATOL)
    W = s.window
    np.testing.assert_allclose(s.measured, np.r_[S[view.L - W : view.L - 1, -1], S[-1, view.L - W :][::-1]],
                               rtol=0, atol=ATOL)
    assert s.closed_error < ATOL and s.shift_error < ATOL


def test_the_score_of_all_ones_is_the_sum_of_2_cos() -> None:
    view = VIEWS["ones-llama3"]
    s = rotary.scores(view, rotary.score_blocks(view.L))
    expected = [sum(2 * math.cos(t * w) for w in view.theta()) for t in range(-(view.L - 1), view.L)]
    np.testing.assert_allclose(s.by_offset, expected, rtol=0, atol=ATOL)


@pytest.mark.parametrize("name", ["default", "reduced-yarn", "dynamic", "one-position"])
def test_the_decay_is_roformers_bound_and_the_all_ones_score(name: str) -> None:
    view = VIEWS[name]
    dec = rotary.decay(view.d, view.base, view.scaling, view.L)
    th = view.theta()
    bound = []
    for t in range(view.L):
        partial, total = 0j, 0.0
        for w in th:
            partial += cmath.exp(1j * t * w)
            total += abs(partial)
        bound.append(total / th.size)
    a2 = pe_core.rope_attention_factor(view.scaling, view.L) ** 2
    ones = [a2 * sum(2 * math.cos(t * w) for w in th) for t in range(view.L)]
    np.testing.assert_allclose(dec.bound, bound, rtol=0, atol=1e-11)
    np.testing.assert_allclose(dec.ones, ones, rtol=0, atol=ATOL)
    assert dec.worst_ratio <= 1.0
    assert dec.worst_ratio == pytest.approx(np.max(np.abs(ones) / (a2 * view.d * np.array(bound))), rel=1e-9)


@pytest.mark.parametrize("name", ["default", "whole-small", "reduced-yarn", "ones-llama3", "one-position"])
def test_the_mixing_error_is_the_other_rotate_function_on_this_cache_minus_the_right_scores(name: str) -> None:
    view = VIEWS[name]
    mix = rotary.mixing(view, rotary.score_blocks(view.L))
    other = "interleaved" if view.layout == "half" else "half"
    wrong = full_scores(view, other)
    error = wrong - full_scores(view)
    assert_means(mix.error_means, block_means(error, mix.edges, mix.edges))
    W, L = mix.window, view.L
    q, _ = reference_qk(view)
    a = pe_core.rope_attention_factor(view.scaling, L)
    window = np.r_[0:W, L - W : L]
    norms = np.linalg.norm(embedded(q, view, other)[window], axis=1) / (a * np.linalg.norm(q))
    assert mix.norm_change == pytest.approx(np.abs(norms - 1).max(), abs=1e-12)
    assert mix.drift == pytest.approx(np.abs(wrong[:W, :W] - wrong[L - W :, L - W :]).max(), abs=ATOL)
    assert mix.closed_error < ATOL
    if L > 2:
        assert mix.norm_change > 1e-3 and mix.drift > 1e-3, "mixing the layouts is no rotation and not relative"


@pytest.mark.parametrize("layout", pe_core.ROPE_LAYOUTS)
def test_the_cos_tables_are_cat_and_repeat_interleave(layout: str) -> None:
    view = VIEWS["reduced-yarn"]
    rows, cols = rotary.cache_grid(view.L, view.d)
    values, row_edges, col_edges = rotary.cos_table(view.d, view.base, view.scaling, view.L, layout, rows, cols)
    np.testing.assert_allclose(values, block_means(tables(view, layout)[0], row_edges, col_edges), rtol=0, atol=1e-12)
    labels = rotary.cos_download(values, row_edges, col_edges, d=view.d, layout=layout).columns
    assert labels[0].startswith("column 0 (pair 0)") or labels[0].startswith("columns 0..")


@pytest.mark.parametrize(("name", "pair", "m", "n"), [("default", 0, 5, 2), ("whole-small", 3, 39, 0),
                                                      ("reduced-yarn", 15, 599, 17), ("one-position", 1, 0, 0)])
def test_one_pair_is_turned_as_a_complex_number(name: str, pair: int, m: int, n: int) -> None:
    view = VIEWS[name]
    p = rotary.pair_view(view, pair, m, n)
    q, k = reference_qk(view)
    u, v = (pair, pair + view.d // 2) if view.layout == "half" else (2 * pair, 2 * pair + 1)
    w = view.theta()[pair]
    zq, zk = complex(q[u], q[v]) * cmath.exp(1j * m * w), complex(k[u], k[v]) * cmath.exp(1j * n * w)
    np.testing.assert_allclose(p.q_turned, [zq.real, zq.imag], rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.k_turned, [zk.real, zk.imag], rtol=0, atol=1e-12)
    a2 = pe_core.rope_attention_factor(view.scaling, view.L) ** 2
    assert p.score == pytest.approx(a2 * (zq * zk.conjugate()).real, abs=1e-12)
    assert p.from_offset == pytest.approx(p.score, abs=1e-12)
    table = rotary.pair_table(p).to_numpy()
    np.testing.assert_array_equal(table, [p.q, p.q_turned, p.k, p.k_turned])


@pytest.mark.parametrize(("theta", "L"), [(1.0, 100), (1.0, 20), (1e-4, 16384), (0.05, 1000), (0.3, 1)])
def test_play_turns_a_pair_by_at_most_30_degrees_a_frame_from_0(theta: float, L: int) -> None:
    positions = rotary.play_positions(theta, L)
    assert positions[0] == 0 and positions[-1] <= L - 1 and np.all(np.diff(positions) > 0)
    assert positions.size <= 60
    steps = np.diff(positions)
    if steps.size:
        assert steps.min() == 1 or steps.max() * theta <= np.pi / 6 * 1.05 or positions[-1] == L - 1


@pytest.mark.parametrize(("d", "base", "pair", "m"), [(16, 10000.0, 0, 5), (128, 500000.0, 37, 1234),
                                                      (2, 2.0, 0, 99), (64, 1e6, 31, 0)])
def test_ropes_rotation_is_the_transition_matrixs_block(d: int, base: float, pair: int, m: int) -> None:
    block = rotary.transition_block(d, base, pair, m)
    M = pe_core.transition_matrix(m, d, base, layout="interleaved", convention="paper")
    np.testing.assert_array_equal(block.transition, M[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2])
    phi = m * base ** (-2 * pair / d)
    np.testing.assert_allclose(block.rope, [[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]],
                               rtol=0, atol=1e-12)
    assert block.max_difference == np.abs(block.rope - block.transition).max() <= 1e-12


@pytest.mark.parametrize("name", ["default", "reduced-yarn", "one-position"])
def test_every_figure_built_without_validation_is_valid_plotly(name: str) -> None:
    """The page's own figures are built from plain dicts without Plotly's validation (figures.figure):
    each, Play frames included, must pass it (a misspelt property raises here) and mean the same."""
    view = VIEWS[name]
    s = rotary.scores(view, rotary.score_blocks(view.L))
    m, n = min(view.L - 1, 5), min(view.L - 1, 2)
    built = [rotary.pair_figure(rotary.pair_view(view, 0, m, n)), rotary.pair_play_figure(view, 0, n),
             rotary.closed_form_figure(s), rotary.decay_figure(rotary.decay(view.d, view.base, view.scaling, view.L),
                                                               d=view.d)]
    for fig in built:
        checked = go.Figure(fig.to_dict())  # validated: raises on any property Plotly does not know
        assert json.loads(checked.to_json()) == json.loads(fig.to_json())


def test_no_chart_is_larger_than_its_budget_at_the_largest_settings() -> None:
    view = RotaryView(2048, 10000.0, 16384)
    blocks = rotary.score_blocks(view.L)
    s = rotary.scores(view, blocks)
    assert s.block_means.size <= 192 * 192
    figures = [rotary.square_figure(s.block_means, s.edges, title="t", value_name="v"),
               rotary.closed_form_figure(s), rotary.pair_play_figure(view, 0, 3)]
    assert all(len(fig.to_json()) <= 1_500_000 for fig in figures)


# ------------------------------------------------------------------------------- reproduce this


def page_tables(view: RotaryView, pair: int, m: int, n: int) -> dict[str, pd.DataFrame]:
    """The page's downloads, through the functions the page calls."""
    blocks = rotary.score_blocks(view.L)
    rows, cols = rotary.cache_grid(view.L, view.d)
    s = rotary.scores(view, blocks)
    mix = rotary.mixing(view, blocks)
    out = {
        "rotary_pair": rotary.pair_table(rotary.pair_view(view, pair, m, n)),
        "rotary_pair_play": rotary.pair_play_table(view, pair, n),
        "rotary_scores": rotary.square_table(s.block_means, s.edges),
        "rotary_closed_form": rotary.closed_form_table(s),
        "rotary_decay": rotary.decay_table(rotary.decay(view.d, view.base, view.scaling, view.L)),
        "rotary_mixing": rotary.square_table(mix.error_means, mix.edges),
    }
    for layout in pe_core.ROPE_LAYOUTS:
        values, row_edges, col_edges = rotary.cos_table(view.d, view.base, view.scaling, view.L, layout, rows, cols)
        out[f"rotary_cos_{layout}"] = rotary.cos_download(values, row_edges, col_edges, d=view.d, layout=layout)
    return out


def page_numbers(view: RotaryView, pair: int, m: int, n: int) -> dict[str, float]:
    """The page's metrics, as numbers, under their labels."""
    p = rotary.pair_view(view, pair, m, n)
    dec = rotary.decay(view.d, view.base, view.scaling, view.L)
    mix = rotary.mixing(view, rotary.score_blocks(view.L))
    angle, score, from_offset = rotary.pair_labels(pair)
    return {
        angle: np.degrees(m * p.theta), score: p.score,
        from_offset: p.from_offset, rotary.DECAY_LABELS[0]: dec.worst_ratio, rotary.DECAY_LABELS[1]: dec.bound[-1],
        rotary.MIXING_LABELS[0]: np.abs(mix.error_means).max(), rotary.MIXING_LABELS[1]: 100 * mix.norm_change,
        rotary.MIXING_LABELS[2]: mix.drift,
    }


def snippet(view: RotaryView, pair: int, m: int, n: int, library: str = "numpy") -> str:
    return rotary.rotary_code(view, pair=pair, m=m, n=n, blocks=rotary.score_blocks(view.L), library=library)


SNIPPET_CASES = [
    ("default", 0, 5, 2), ("whole-small", 3, 39, 0), ("reduced-yarn", 15, 599, 17), ("ones-llama3", 2, 10, 200),
    ("dynamic", 1, 249, 100), ("one-position", 1, 0, 0),
]
SCALED = [pe_core.RopeScaling("linear", 3.0), pe_core.RopeScaling("ntk", 4.0),
          rope_presets.rope_preset("deepseek-v3").scaling, rope_presets.rope_preset("gpt-oss-20b").scaling,
          rope_presets.rope_preset("qwen2.5-7b-instruct-yarn").scaling,
          pe_core.RopeScaling("longrope", 4.0, 50, short_factor=(1.0, 1.5, 2.0, 3.0), long_factor=(2.0, 3.0, 4.0, 5.0)),
          pe_core.RopeScaling("longrope", 4.0, 200, short_factor=(1.0, 1.5, 2.0, 3.0), long_factor=(2.0, 3.0, 4.0, 5.0),
                              attention_factor=1.25),
          pe_core.RopeScaling("proportional", 2.0, partial_rotary_factor=0.5)]


#: The downloads the snippet reproduces: the charts behind the page's numbers (the pair's, Play's and the cos
#: tables' are the page's own pe_core calls, left out to keep the snippet short).
SNIPPET_DOWNLOADS = ("rotary_scores", "rotary_decay", "rotary_mixing")


def assert_snippet(result: dict, tables: dict[str, pd.DataFrame]) -> None:
    """The snippet's arrays are the downloads; block means of L x L scores to MEANS_RTOL of the largest."""
    tables = {key: tables[key] for key in SNIPPET_DOWNLOADS}
    means = {key: (0.0, MEANS_RTOL * max(1.0, float(np.abs(tables[key].to_numpy()).max())))
             for key in ("rotary_scores", "rotary_mixing")}
    assert_same(result, tables, atol=ATOL, tolerances=means)


def assert_numbers(printed: dict, shown: dict) -> None:
    assert set(printed) == set(shown)
    for label, value in shown.items():
        assert float(printed[label]) == pytest.approx(value, rel=1e-9, abs=1e-9), label


@pytest.mark.parametrize(("name", "pair", "m", "n"), SNIPPET_CASES)
def test_the_numpy_snippet_gives_every_download_and_metric(name: str, pair: int, m: int, n: int) -> None:
    view = VIEWS[name]
    namespace = run_snippet(snippet(view, pair, m, n))
    assert_snippet(namespace["result"], page_tables(view, pair, m, n))
    assert_numbers(namespace["numbers"], page_numbers(view, pair, m, n))


@pytest.mark.parametrize("scaling", SCALED, ids=lambda s: f"{s.method}-{s.factor:g}")
def test_the_snippets_scaling_is_pe_cores(scaling: pe_core.RopeScaling) -> None:
    """Every method's code (and the models' own: DeepSeek's mscales, gpt-oss's untruncated ramp)."""
    view = RotaryView(8, 10000.0, 120, "half", scaling, "random", 5)
    namespace = run_snippet(snippet(view, 1, 100, 3))
    np.testing.assert_allclose(namespace["theta"], view.theta(), rtol=1e-14, atol=0)
    assert namespace["a"] == pytest.approx(view.attention(), rel=1e-15)
    assert_snippet(namespace["result"], page_tables(view, 1, 100, 3))


@pytest.mark.parametrize(("name", "pair", "m", "n"), [SNIPPET_CASES[1], SNIPPET_CASES[2]])
def test_the_torch_snippet_in_rotate_half_style_gives_the_same(name: str, pair: int, m: int, n: int) -> None:
    view = VIEWS[name]
    code = snippet(view, pair, m, n, "torch")
    rotate = "rotate_half" if view.layout == "half" else "rotate_every_two"
    assert f"q_m, k_n = (Q * cos + {rotate}(Q) * sin).numpy()" in code
    assert_snippet(torch_result(code), page_tables(view, pair, m, n))


# ------------------------------------------------------------------------------- the page


def test_the_page_offers_every_download_and_its_code() -> None:
    at = open_page(ROTARY, {"d": "32", "L": "40", "code": "true", "play": "true"})
    assert not at.get("download_button")
    at.sidebar.toggle(key=OFFER_DOWNLOADS).set_value(True).run()
    buttons = {button.key for button in at.get("download_button")}
    assert {f"{key}_{kind}" for key in DOWNLOADS for kind in ("csv", "npy")} <= buttons
    numpy_code, torch_code = (element.value for element in at.get("code"))
    assert "L, d, b = 40, 32, 10000.0" in numpy_code and "rotate_half" in torch_code
    namespace = run_snippet(numpy_code)
    assert set(namespace["result"]) == set(SNIPPET_DOWNLOADS) < set(DOWNLOADS)
    shown = {metric.label: metric.value for metric in at.metric}
    assert set(namespace["numbers"]) == set(shown)
    for label, value in namespace["numbers"].items():
        digits = shown[label].replace(",", "")
        decimals = len(digits.partition(".")[2].partition("e")[0])
        written = f"{float(value):.{decimals}e}" if "e" in digits else f"{float(value):.{decimals}f}"
        assert written == digits, (label, shown[label], value)


@pytest.mark.parametrize("key", ["llama-2-7b", "llama-3-8b", "llama-3.1-8b", "qwen2.5-7b-instruct-yarn",
                                 "mistral-7b-v0.1", "gpt-neox-20b", "gpt-j-6b", "phi-3-mini-128k-instruct"])
def test_a_model_in_the_url_sets_d_n_the_layout_and_the_scaling(key: str) -> None:
    at = open_page(ROTARY, {"model": key})
    values = rope_presets.preset_values(key)
    assert (at.session_state["d"], at.session_state["n"]) == (values["d"], values["n"])
    assert at.session_state["rope_layout"] == values["rope_layout"]
    assert at.session_state["scaling"] == values["scaling"]
    preset = rope_presets.rope_preset(key)
    captions = " ".join(c.value for c in at.caption)
    a = pe_core.rope_attention_factor(preset.scaling, 100)
    assert f"Attention factor a = {a:.6g}" in captions and preset.name in captions
    assert not [w.value for w in at.warning]


def test_a_model_in_the_url_keeps_what_the_url_says() -> None:
    at = open_page(ROTARY, {"model": "llama-3.1-8b", "d": "64", "rope_layout": "interleaved"})
    assert (at.session_state["d"], at.session_state["n"], at.session_state["rope_layout"]) == (64, 500000.0,
                                                                                                "interleaved")
    assert "d = 64 (the model's 128)" in " ".join(c.value for c in at.caption)


def test_choosing_a_model_sets_the_sidebar_and_the_page_and_the_url() -> None:
    at = open_page(ROTARY)
    at.selectbox(key="model").set_value("gpt-j-6b").run()
    assert (at.session_state["d"], at.session_state["rope_layout"]) == (64, "interleaved")
    assert at.sidebar.slider(key="d").value == 64
    at.selectbox(key="model").set_value("llama-3.1-8b").run()
    assert at.session_state["scaling"] == "model" and at.session_state["n"] == 500000.0
    assert {k: at.query_params.get(k) for k in ("model", "n", "scaling")} == {
        "model": "llama-3.1-8b", "n": "500000", "scaling": "model"}
    at.selectbox(key="scaling").set_value("llama3").run()  # the method's controls start at the model's values
    assert (at.session_state["factor"], at.session_state["original"]) == (8.0, 8192.0)
    at.selectbox(key="model").set_value("custom").run()
    assert "model" not in at.selectbox(key="scaling").options


def chart_specs(at: AppTest) -> dict[str, dict]:
    """The parsed JSON of every chart drawn, by its key (an element id ends with its key)."""
    return {chart.proto.id.rpartition("-")[2]: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}


PAIR_CHARTS = ("rotary_pair", "rotary_pair_play")


def test_one_analysis_per_view_and_an_L_move_replays_the_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """The score, decay and layout sections read one rotary.analyse per view (st.cache_resource), a hit
    for a second session; the pair's sections are keyed by rotary.pair_inputs, so that an L move replays
    them, what a session drawing them from nothing draws at that L; the sidebar's convention, which the
    transition's caption names, is in their key."""
    built: Counter[str] = Counter()

    def counting(name: str) -> Callable[..., object]:
        build = getattr(rotary, name)

        def counted(*args: object, **kwargs: object) -> object:
            built[name] += 1
            return build(*args, **kwargs)
        return counted

    for name in ("analyse", "pair_figure", "pair_play_figure"):
        monkeypatch.setattr(rotary, name, counting(name))
    streamlit.cache_resource.clear()  # the analyses and every finished section
    open_page(ROTARY, {"d": "130", "L": "500", "play": "true"})
    assert built == {"analyse": 1, "pair_figure": 1, "pair_play_figure": 1}
    moved = open_page(ROTARY, {"d": "130", "L": "700", "play": "true"})
    assert built == {"analyse": 2, "pair_figure": 1, "pair_play_figure": 1}, "an L move built the pair again"
    blocks._drawn_once.clear()  # every section drawn again, from the analysis of L=700 (a hit)
    fresh = open_page(ROTARY, {"d": "130", "L": "700", "play": "true"})
    assert built == {"analyse": 2, "pair_figure": 2, "pair_play_figure": 2}
    assert chart_specs(moved) == chart_specs(fresh)
    other = open_page(ROTARY, {"d": "130", "L": "700", "convention": "tensor2tensor", "play": "true"})
    assert built["pair_figure"] == 3, "another convention was served the pair's section of the first"
    assert any("choose 'paper' there" in caption.value for caption in other.caption)


def test_the_pairs_inputs_hold_every_way_L_enters_it() -> None:
    """Views that differ in L alone with the same rotary.pair_inputs (and play_last) draw the same pair
    section; a dynamic scaling turns the pairs at another rate past its original length: other inputs."""
    dynamic = pe_core.RopeScaling("dynamic", 2.0, 100)
    for short, long in ((RotaryView(16, 100.0, 80), RotaryView(16, 100.0, 3000)),
                        (RotaryView(8, 1000.0, 60, "half", dynamic), RotaryView(8, 1000.0, 90, "half", dynamic)),
                        (RotaryView(32, 1e4, 200, "interleaved", YARN, "ones"),
                         RotaryView(32, 1e4, 9000, "interleaved", YARN, "ones"))):
        for pair in (0, 3):
            assert rotary.pair_inputs(short, pair) == rotary.pair_inputs(long, pair)
            theta = float(short.theta()[pair])
            assert rotary.pair_figure(rotary.pair_view(short, pair, 7, 2)).to_dict() == \
                rotary.pair_figure(rotary.pair_view(long, pair, 7, 2)).to_dict()
            if rotary.play_last(theta, short.L) == rotary.play_last(theta, long.L):
                plays = [rotary.pair_play_figure(view, pair, 2).to_dict() for view in (short, long)]
                assert plays[0] == plays[1]
    stretched = RotaryView(8, 1000.0, 250, "half", dynamic)
    assert rotary.pair_inputs(stretched, 3) != rotary.pair_inputs(RotaryView(8, 1000.0, 90, "half", dynamic), 3)


#: Hostile URL values: text, NaN, infinities, negative, huge, 500 digits, empty, markup.
HOSTILE = ["abc", "nan", "inf", "-inf", "-5", "1e30", "9" * 500, "", "<b>x</b>"]
#: The page's keys, in groups that one URL can hold (a scaling parameter is read when its method is chosen).
KEY_GROUPS = [
    ({}, ("model", "rope_layout", "qk", "seed", "scaling", "rope_pair", "qpos", "kpos")),
    ({"scaling": "yarn"}, ("factor", "original", "beta_fast", "beta_slow")),
    ({"scaling": "llama3"}, ("low_freq", "high_freq")),
    ({"scaling": "proportional"}, ("partial",)),
]


@pytest.mark.parametrize("value", HOSTILE, ids=lambda value: value[:8] or "empty")
def test_every_page_key_clamps_a_hostile_value_with_a_notice(value: str) -> None:
    for fixed, keys in KEY_GROUPS:
        at = open_page(ROTARY, {**fixed, **dict.fromkeys(keys, value)})
        warnings = [w.value for w in at.warning]
        for key in keys:
            notices = [w for w in warnings if f"{key}=" in w or f"{key} " in w]
            assert notices, f"no notice for {key}={value[:20]!r}: {warnings}"
            assert all("\n" not in notice and len(notice) <= 400 for notice in notices)
            # A value is quoted in a code span, where markup is text: none outside one.
            assert not any("<b>" in re.sub(r"(`+).*?\1", "", notice) for notice in notices), notices


@pytest.mark.parametrize(("query", "notice", "used"), [
    ({"scaling": "llama3", "low_freq": "4", "high_freq": "1"},
     "llama3's low_freq_factor (4) must be at most high_freq_factor (1); using Meta's 1 and 4.",
     {"low_freq": 1.0, "high_freq": 4.0}),
    ({"scaling": "yarn", "beta_fast": "1", "beta_slow": "32"},
     "YaRN's beta_fast (1) must be above beta_slow (32); using YaRN's 32 and 1.",
     {"beta_fast": 32.0, "beta_slow": 1.0}),
])
def test_parameters_out_of_order_are_replaced_in_the_sliders_and_the_url(query, notice, used) -> None:
    """The notice names the two in the order of their sliders; the sliders and the URL then hold the
    values used, not the URL's."""
    at = open_page(ROTARY, query)
    assert notice in [w.value for w in at.warning]
    assert {key: at.select_slider(key=key).value for key in used} == used
    assert dict(at.query_params) == {"scaling": query["scaling"]}


def test_llama3_s_equal_frequency_factors_are_kept() -> None:
    """Llama 4 Scout's low_freq_factor 1 and high_freq_factor 1 are a scaling pe_core takes: no notice, and the
    sliders and the URL keep them."""
    at = open_page(ROTARY, {"scaling": "llama3", "low_freq": "1", "high_freq": "1"})
    assert not at.warning
    assert (at.select_slider(key="low_freq").value, at.select_slider(key="high_freq").value) == (1.0, 1.0)
    assert at.query_params["high_freq"] == "1"


def test_scaling_of_the_model_without_a_model_is_refused_with_a_notice() -> None:
    at = open_page(ROTARY, {"scaling": "model"})
    assert at.session_state["scaling"] == "none" and any("scaling" in w.value for w in at.warning)


def test_the_link_opens_relative_positions_at_m_and_the_pair() -> None:
    at = open_page(ROTARY, {"qpos": "7", "rope_pair": "3"})
    (link,) = at.get("page_link")
    assert link.proto.page == "relative" or link.proto.page.endswith("relative")
    assert "δ = 7" in link.proto.label and "pair 3" in link.proto.label


# ------------------------------------------------------------------------------- check your RoPE, any file
# (files from transformers' and Meta's own code: tests/topics/test_rotary_upload.py)


def _file(kind: str, array: np.ndarray) -> tuple[str, bytes]:
    buffer = io.BytesIO()
    if kind == "npz":
        np.savez(buffer, table=array, twice=array)
    elif kind == "csv" and array.dtype.kind != "c":
        np.savetxt(buffer, np.atleast_2d(array.reshape(array.shape[0], -1)), fmt="%.9g", delimiter=",")
    else:
        np.save(buffer, array)
        kind = "npy"
    return f"upload.{kind}", buffer.getvalue()


ARRAYS = st.tuples(
    st.lists(st.integers(1, 12), min_size=1, max_size=3),
    st.sampled_from(["float32", "float64", "complex64", "int16"]),
    st.sampled_from(["npy", "npz", "csv"]),
    st.floats(-2, 2) | st.sampled_from([np.nan, np.inf, 0.0, 1.0]),
    st.integers(0, 2**16),
)


@settings(max_examples=60, deadline=None)
@given(drawn=ARRAYS)
def test_any_upload_is_read_or_refused_in_one_line(drawn) -> None:
    """Every file: a reading of each array (kind, metrics, the way to open it, in one line each), or one line."""
    shape, dtype, kind, value, seed = drawn
    array = np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)
    if array.dtype.kind in "fc":
        array.flat[seed % array.size] = value
    name, data = _file(kind, array)
    try:
        check = rotary.check_upload(name, data)
    except ValueError as error:
        assert str(error) and "\n" not in str(error) and len(str(error)) < 400, str(error)
        return
    assert len(check.readings) == (2 if kind == "npz" else 1)
    for reading in check.readings:
        if reading.status == "error":
            assert "\n" not in reading.error
            continue
        assert isinstance(reading.result["verdict"], str) and reading.result["verdict"]
        metrics = rotary.reading_metrics(reading.result)
        assert all(isinstance(v, str) and v for v in metrics.values())
        opening = rotary.opening(reading.result)
        assert (opening.values is None) == bool(opening.reason)
        assert rotary.reading_summary(reading)
