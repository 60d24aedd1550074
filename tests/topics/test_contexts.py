"""Unit tests of explorer.topics.contexts (the Longer contexts page) and of pe_core.rope_context.

Every expected frequency is computed here from the papers' formulas and the reference code,
re-typed in NumPy (YaRN's repository, Meta's apply_scaling, transformers' dynamic NTK and
LongRoPE), never from pe_core, so that a mistake shared with the code under test cannot hide.
tests/topics/test_contexts_transformers.py compares the same with transformers itself.
"""

from __future__ import annotations

import doctest
import itertools
import json
import math
import re
import warnings
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support.independent import payload
from support.snippets import run_snippet

import pe_core
import pe_core.rope.context
from explorer import animation, config_json, rope_methods
from explorer.model_configs import MODEL_CONFIGS, load_config
from explorer.topics import contexts
from explorer.topics.contexts import DEFAULT_VIEW, ContextView
from pe_core.similarity import cos_sum_by_offset

MB = 1_000_000

# ------------------------------------------------------------------ independent references


def ref_theta(d: int, base: float) -> np.ndarray:
    """RoFormer eq. 15: theta_i = base^(-2i/d)."""
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def ref_yarn_code(d: int, base: float, s: float, L0: int, beta_fast: float = 32.0, beta_slow: float = 1.0,
                  truncate: bool = True) -> np.ndarray:
    """YaRN's repository (jquesnelle/yarn, scaled_rope: _yarn_find_correction_range and
    _yarn_linear_ramp_mask), re-typed: the mask is linear in the pair index."""
    def find_correction_dim(rotations: float) -> float:
        return (d * math.log(L0 / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    linear = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
    extrapolation_mask = 1 - linear
    pos_freqs = base ** (np.arange(0, d, 2) / d)
    interpolation, extrapolation = 1.0 / (s * pos_freqs), 1.0 / pos_freqs
    return interpolation * (1 - extrapolation_mask) + extrapolation * extrapolation_mask


def ref_yarn_paper_ramp(d: int, base: float, L0: int, alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    """Peng et al. 2023, eq. 17-19: r = L/lambda, gamma(r) = 0 below alpha, 1 above beta, linear
    between; h(theta) = (1 - gamma) theta/s + gamma theta: the share of theta/s is 1 - gamma."""
    r = L0 / (2 * math.pi / ref_theta(d, base))
    gamma = np.where(r < alpha, 0.0, np.where(r > beta, 1.0, (r - alpha) / (beta - alpha)))
    return 1 - gamma


def ref_llama3(d: int, base: float, s: float, L0: int, low_freq: float = 1.0, high_freq: float = 4.0) -> np.ndarray:
    """Meta's apply_scaling (llama-models, reference_impl/model.py), with its constants as arguments."""
    low_freq_wavelen, high_freq_wavelen = L0 / low_freq, L0 / high_freq
    new = []
    for freq in ref_theta(d, base):
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new.append(freq)
        elif wavelen > low_freq_wavelen:
            new.append(freq / s)
        else:
            smooth = (L0 / wavelen - low_freq) / (high_freq - low_freq)
            new.append((1 - smooth) * freq / s + smooth * freq)
    return np.array(new)


def ref_ntk(d: int, base: float, s: float) -> np.ndarray:
    """NTK-aware (bloc97; YaRN paper eq. 16): b' = b s^(d/(d-2))."""
    return ref_theta(d, base * s ** (d / (d - 2)))


def ref_dynamic(d: int, base: float, s: float, max_positions: int, length: int) -> np.ndarray:
    """transformers' _compute_dynamic_ntk_parameters: seq_len raised to max_position_embeddings."""
    seq = max(length, max_positions)
    return ref_theta(d, base * ((s * seq / max_positions) - (s - 1)) ** (d / (d - 2)))


def ref_frequencies(view: ContextView, method: str) -> np.ndarray:
    d, b, s, L0 = view.d, view.base, view.factor, view.trained
    if method == "none":
        return ref_theta(d, b)
    if method == "linear":  # Chen et al. 2023: f'(x, m) = f(x, m L / L'), i.e. theta / s
        return ref_theta(d, b) / s
    if method == "ntk":
        return ref_ntk(d, b, s)
    if method == "dynamic":
        return ref_dynamic(d, b, s, view.max_positions or L0, view.target)
    if method == "yarn":
        return ref_yarn_code(d, b, s, L0, view.beta_fast, view.beta_slow, view.truncate)
    if method == "llama3":
        return ref_llama3(d, b, s, L0, view.low_freq, view.high_freq)
    if method == "proportional":  # transformers' _compute_proportional_rope_parameters: the whole head's first pairs
        rotated = int(view.partial * d // 2)
        return np.where(np.arange(d // 2) < rotated, ref_theta(d, b) / s, 0.0)
    factors = view.long_factor if view.target > L0 else view.short_factor
    return ref_theta(d, b) / np.asarray(factors)


def ref_attention(view: ContextView, method: str) -> float:
    s = view.factor
    if method == "yarn":  # YaRN section 3.4: sqrt(1/t) = 0.1 ln s + 1; DeepSeek: the mscale ratio
        def m(a: float) -> float:
            return 0.1 * a * math.log(s) + 1 if s > 1 else 1.0

        if view.attention_factor:
            return view.attention_factor
        if view.mscale and view.mscale_all_dim:
            return m(view.mscale) / m(view.mscale_all_dim)
        return m(1.0)
    if method == "longrope":  # Phi-3: sqrt(1 + ln s / ln L0)
        return view.attention_factor or (math.sqrt(1 + math.log(s) / math.log(view.trained)) if s > 1 else 1.0)
    return 1.0


def ref_unseen(d: int, base: float, L0: int, L: int, scaled: np.ndarray) -> np.ndarray:
    """A pair meets new angles if it never turned a whole circle over L0 positions and turns
    further over L positions with its new frequency (by more than float64's rounding of
    L theta / s against L0 theta, which is what linear interpolation by exactly L/L0 leaves)."""
    seen = L0 * ref_theta(d, base)
    return (seen < 2 * math.pi) & (L * scaled > seen * (1 + 1e-12))


#: Views covering every method: the presets (linear, yarn with mscale and truncate false, llama3
#: at 8 and 32, longrope) and custom NTK and dynamic ones.
VIEWS = {
    **{model.key: contexts.preset_view(model.key) for model in MODEL_CONFIGS},
    "default": DEFAULT_VIEW,
    "ntk": replace(DEFAULT_VIEW, method="ntk", factor=8.0, target=32768),
    "dynamic-longer": replace(DEFAULT_VIEW, method="dynamic", factor=2.0, max_positions=8192, target=65536),
    "dynamic-shorter": replace(DEFAULT_VIEW, method="dynamic", factor=2.0, target=2048),
    "yarn-odd": replace(DEFAULT_VIEW, beta_fast=20.5, beta_slow=2.25, truncate=False, factor=6.5, base=123456.7),
    "phi-short": replace(contexts.preset_view("phi-3-mini-128k-instruct"), target=4096),
    "gemma-4-global": replace(DEFAULT_VIEW, method="proportional", d=512, base=1e6, factor=1.0, partial=0.25,
                              trained=32768, target=131072),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_method_is_its_reference_formula(name: str) -> None:
    view = VIEWS[name]
    for method in contexts.available_methods(view):
        c = contexts.coverage(view, method)
        expected = ref_frequencies(view, method)
        np.testing.assert_allclose(c.scaled, expected, rtol=1e-13, err_msg=method)
        np.testing.assert_allclose(c.theta, ref_theta(view.d, view.base), rtol=1e-15)
        np.testing.assert_array_equal(c.unseen, ref_unseen(view.d, view.base, view.trained, view.target, expected))
        assert contexts.attention_factor(view, method) == pytest.approx(ref_attention(view, method), rel=1e-14)
    assert "longrope" in contexts.available_methods(view) or not view.has_lists


def test_the_views_cover_every_method() -> None:
    assert {view.method for view in VIEWS.values()} == set(contexts.methods())


def test_methods_summary_rows_are_the_references() -> None:
    view = VIEWS["llama-3.1-8b"]
    table = contexts.methods_summary(view)
    assert list(table["method"]) == [rope_methods.method_label(m) for m in contexts.available_methods(view)]
    for (_, row), method in zip(table.iterrows(), contexts.available_methods(view), strict=True):
        expected = ref_frequencies(view, method)
        unseen = ref_unseen(view.d, view.base, view.trained, view.target, expected)
        assert row["pairs meeting unseen angles"] == unseen.sum()
        assert row["slowest pair θ'/θ"] == pytest.approx(expected[-1] / ref_theta(view.d, view.base)[-1])
        assert row["scores × a²"] == pytest.approx(ref_attention(view, method) ** 2)
    # Llama 3.1 at 131072 = 16 x 8192: its x8 takes every pair that never turned in 8192 tokens
    # (lambda > 8192, all divided by 8) twice as far (it was trained further on long texts, which
    # this count leaves out); llama3 x16 covers them all.
    by_method = dict(zip(table["method"], table["pairs meeting unseen angles"], strict=True))
    assert by_method["llama3 (Llama 3.1)"] == by_method["none (plain RoPE)"] > 0
    assert not contexts.coverage(replace(view, factor=16.0)).unseen.any()


# ------------------------------------------------------------------------------ properties


views = st.builds(
    ContextView,
    d=st.sampled_from([4, 8, 24, 64, 96, 128, 256]),
    base=st.sampled_from([10000.0, 500000.0, 1e6, 150000.0, 2.0, 77777.7]),
    factor=st.floats(1.0, 64.0),
    trained=st.integers(16, 65536),
    target=st.integers(1, 2**22),
)


@settings(max_examples=60, deadline=None)
@given(view=views, k=st.integers(0, 10**6))
def test_linear_maps_the_angles_of_position_k_s_to_those_of_k(view: ContextView, k: int) -> None:
    linear = contexts.coverage(view, "linear")
    np.testing.assert_allclose((k * view.factor) * linear.scaled, k * linear.theta, rtol=1e-14)


@settings(max_examples=60, deadline=None)
@given(view=views)
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_s(view: ContextView) -> None:
    ntk = contexts.coverage(view, "ntk")
    assert ntk.scaled[0] == ntk.theta[0] == 1.0
    # (b s^(d/(d-2)))^(-(d-2)/d) = b^(-(d-2)/d) / s: the slowest pair, exactly by s.
    assert ntk.ratio[-1] == pytest.approx(1 / view.factor, rel=1e-12)
    assert np.all(np.diff(ntk.ratio) <= 1e-15)  # ever more divided, fast to slow


@settings(max_examples=80, deadline=None)
@given(view=views, truncate=st.booleans(), beta=st.sampled_from([(32.0, 1.0), (16.0, 2.0), (64.0, 0.5)]))
def test_yarn_keeps_pairs_below_its_fast_bound_and_divides_those_past_its_slow_bound(
    view: ContextView, truncate: bool, beta: tuple[float, float]
) -> None:
    view = replace(view, truncate=truncate, beta_fast=beta[0], beta_slow=beta[1])
    yarn = contexts.coverage(view, "yarn")
    fast, slow = contexts.yarn_bounds(view)
    low, high = (math.floor(fast), math.ceil(slow)) if truncate else (fast, slow)
    low, high = max(low, 0), min(high, view.d - 1)
    assume(low < high)  # otherwise the code's ramp turns over (pe_core.yarn_ramp says so)
    i = np.arange(view.pairs)
    np.testing.assert_allclose(yarn.ratio[i <= low], 1.0, rtol=1e-15)
    np.testing.assert_allclose(yarn.ratio[i >= high], 1 / view.factor, rtol=1e-13)
    # The bounds in turns over L0: fast pairs turn more than beta_fast times, slow ones fewer than beta_slow.
    turns = yarn.turns_seen
    np.testing.assert_allclose(yarn.ratio[turns > beta[0] * view.base ** (2 / view.d)], 1.0, rtol=1e-15)


@settings(max_examples=80, deadline=None)
@given(view=views, freq=st.sampled_from([(1.0, 4.0), (2.0, 8.0), (0.5, 3.0)]))
def test_llama3_keeps_short_wavelengths_and_divides_long_ones(view: ContextView, freq: tuple[float, float]) -> None:
    view = replace(view, low_freq=freq[0], high_freq=freq[1])
    llama = contexts.coverage(view, "llama3")
    short = llama.wavelength < view.trained / freq[1]
    long = llama.wavelength > view.trained / freq[0]
    np.testing.assert_array_equal(llama.ratio[short], 1.0)
    np.testing.assert_allclose(llama.ratio[long], 1 / view.factor, rtol=1e-15)
    between = ~short & ~long
    assert np.all((llama.ratio[between] >= 1 / view.factor - 1e-15) & (llama.ratio[between] <= 1 + 1e-15))


@settings(max_examples=80, deadline=None)
@given(view=views)
def test_no_scaling_within_the_trained_length_meets_no_unseen_angle(view: ContextView) -> None:
    view = replace(view, target=min(view.target, view.trained))
    for method in contexts.available_methods(view):  # every method here lowers the frequencies
        assert not contexts.coverage(view, method).unseen.any(), method


@settings(max_examples=60, deadline=None)
@given(view=views)
def test_plain_rope_past_the_trained_length_meets_new_angles_in_every_slow_pair(view: ContextView) -> None:
    plain = contexts.coverage(view, "none")
    slow = plain.seen < 2 * math.pi
    expected = slow if view.target > view.trained else np.zeros_like(slow)
    np.testing.assert_array_equal(plain.unseen, expected)


@settings(max_examples=60, deadline=None)
@given(view=views)
def test_linear_by_at_least_target_over_trained_covers_every_pair(view: ContextView) -> None:
    view = replace(view, factor=max(1.0, view.target / view.trained))
    assert not contexts.coverage(view, "linear").unseen.any()


@pytest.mark.parametrize(("d", "base", "L0", "L", "method", "s"), [
    (16, 10000.0, 64, 512, "none", 1.0), (16, 10000.0, 64, 512, "linear", 4.0), (32, 500.0, 100, 900, "ntk", 3.0),
    (16, 10000.0, 200, 2000, "linear", 6.0), (24, 1000.0, 300, 300, "none", 1.0),
])
def test_angle_coverage_is_what_the_offsets_meet(d: int, base: float, L0: int, L: int, method: str, s: float) -> None:
    """Brute force: the angles delta theta_i (mod 2 pi) for delta = 0..L0 in training, delta theta'_i
    for delta = 0..L at the target; a pair meets new ones if some target angle lies outside the
    arc of the trained ones (for pairs whose angles step more finely than the arc's gap)."""
    scaling = None if method == "none" else pe_core.RopeScaling(method, s)
    c = pe_core.angle_coverage(d, base, L0, L, scaling=scaling)
    for i in range(d // 2):
        trained = np.arange(L0 + 1) * c.theta[i]
        if trained[-1] >= 2 * math.pi:
            assert not c.unseen[i]
            continue
        gap = 2 * math.pi - trained[-1]
        if c.scaled[i] >= gap:  # steps could jump over the gap: the sampled check cannot tell
            continue
        reached = np.mod(np.arange(L + 1) * c.scaled[i], 2 * math.pi)
        assert c.unseen[i] == bool(np.any(reached > trained[-1] * (1 + 1e-12))), i


def test_angle_coverage_checks_its_lengths() -> None:
    for bad in (0, -5, 1.5, float("nan"), "4096", None, 10**13):
        with pytest.raises(ValueError, match="length"):
            pe_core.angle_coverage(8, 10000.0, bad, 100)
        with pytest.raises(ValueError, match="length"):
            pe_core.angle_coverage(8, 10000.0, 100, bad)
    with pytest.raises(ValueError, match="even"):
        pe_core.angle_coverage(7, 10000.0, 100, 100)
    with pytest.raises(ValueError, match="RopeScaling"):
        pe_core.angle_coverage(8, 10000.0, 100, 100, scaling="yarn")


# ------------------------------------------------------------------- the score by offset


def ref_ones_score(offsets: np.ndarray, theta: np.ndarray, a: float) -> np.ndarray:
    """Rotate q = k = ones pair by pair (explicit 2x2 rotations, times a as transformers' cos and
    sin carry it) and take the dot product of the key at 0 with the query at delta."""
    scores = []
    for delta in offsets:
        total = 0.0
        for t in theta:
            q = a * np.array([[math.cos(delta * t), -math.sin(delta * t)], [math.sin(delta * t), math.cos(delta * t)]])
            total += float((q @ np.ones(2)) @ (a * np.ones(2)))
        scores.append(total)
    return np.array(scores)


@pytest.mark.parametrize("name", ["default", "deepseek-v3", "phi-3-mini-128k-instruct", "dynamic-longer", "ntk",
                                  "yarn-odd"])
def test_the_page_curves_are_rotated_all_ones_vectors_times_a_squared(name: str) -> None:
    view = replace(VIEWS[name], target=max(VIEWS[name].target, 3000))
    before, after = contexts.dot_curves(view)
    picks = np.r_[0, 1, 2, 57, 1000, 2999]
    a = ref_attention(view, view.method)
    np.testing.assert_allclose(after[picks], ref_ones_score(picks, ref_frequencies(view, view.method), a),
                               rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(before[picks], ref_ones_score(picks, ref_theta(view.d, view.base), 1.0),
                               rtol=1e-12, atol=1e-9)
    assert after[0] == pytest.approx(a * a * view.d, rel=1e-14) and before[0] == pytest.approx(view.d, rel=1e-14)


def test_a_million_offsets_keep_their_angles_exact() -> None:
    view = replace(DEFAULT_VIEW, method="none", target=2**20)
    before, after = contexts.dot_curves(view)
    assert before.size == 2**20
    picks = np.array([2**20 - 1, 999_983, 524_287, 3])
    # Reference in extended precision: each angle reduced exactly before its cosine.
    exact = np.array([2 * sum(math.cos(float(np.longdouble(k) * np.longdouble(t) % np.longdouble(2 * math.pi)))
                               for t in ref_theta(128, 10000.0)) for k in picks])
    np.testing.assert_allclose(before[picks], exact, atol=1e-9)
    np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize(("first", "count", "d"), [(0, 16384, 128), (-2500, 5001, 64), (10**12 - 3000, 3000, 8),
                                                   (7, 70_001, 24)])
def test_a_run_of_offsets_sums_as_any_offsets_do(first: int, count: int, d: int) -> None:
    """pe_core.cos_sum_by_offset reads a run of consecutive offsets straight from its table: the
    same sums as for the same offsets in another order (the general path), and as the direct sum."""
    w = ref_theta(d, 10000.0)
    run = np.arange(first, first + count, dtype=np.float64)
    shuffled = np.random.default_rng(0).permutation(run)
    ours = cos_sum_by_offset(run, w)
    np.testing.assert_allclose(ours[np.argsort(np.argsort(shuffled))], cos_sum_by_offset(shuffled, w),
                               rtol=0, atol=1e-12)
    picks = np.r_[0, count // 3, count - 1]
    direct = [sum(math.cos(math.fmod(float(np.longdouble(run[k]) * np.longdouble(t)), 2 * math.pi)) for t in w)
              for k in picks]
    np.testing.assert_allclose(ours[picks], direct, atol=1e-9 * max(1.0, abs(first) / 1e6))


def test_page_curves_cover_the_target_within_the_budget() -> None:
    for view in (DEFAULT_VIEW, replace(DEFAULT_VIEW, d=2048, target=2**24), replace(DEFAULT_VIEW, d=24, target=2**24)):
        count = contexts.curve_offsets(view)
        assert count <= contexts.CURVE_MAX_OFFSETS and count * view.pairs <= contexts.CURVE_TERMS
        assert count == min(view.target, contexts.CURVE_MAX_OFFSETS, contexts.CURVE_TERMS // view.pairs)
    before, after = contexts.dot_curves(VIEWS["llama-3.2-1b"])
    assert before.size == after.size == 131072
    np.testing.assert_allclose(before[[0, 5000]], ref_ones_score([0, 5000], ref_theta(64, 500000.0), 1.0), atol=1e-9)


# ------------------------------------------------------------------------------ YaRN's ramp


@pytest.mark.parametrize("name", ["default", "qwen2.5-7b-instruct-yarn", "deepseek-v3", "gpt-oss-20b", "yarn-odd"])
def test_yarn_ramps_are_its_code_and_its_paper(name: str) -> None:
    view = VIEWS[name]
    code, paper = contexts.yarn_ramps(view)
    reference = ref_yarn_code(view.d, view.base, view.factor, view.trained, view.beta_fast, view.beta_slow,
                              view.truncate)
    theta = ref_theta(view.d, view.base)
    np.testing.assert_allclose(theta / view.factor * code + theta * (1 - code), reference, rtol=1e-14)
    np.testing.assert_allclose(paper, ref_yarn_paper_ramp(view.d, view.base, view.trained, view.beta_slow,
                                                           view.beta_fast), atol=1e-15)
    table = contexts.ramp_table(view)
    np.testing.assert_allclose(table["θ'/θ, code"], reference / theta, rtol=1e-14)


def test_yarn_ramps_differ_where_the_docstring_says() -> None:
    # Llama 2 (d=128, b=10000, L0=4096): bounds 20.94 and 45.03, the largest gap near pair 30.
    view = replace(DEFAULT_VIEW, factor=16.0)
    fast, slow = contexts.yarn_bounds(view)
    assert (round(fast, 2), round(slow, 2)) == (20.94, 45.03)
    code, paper = contexts.yarn_ramps(view)
    assert abs(int(np.argmax(paper - code)) - 30) <= 3
    assert np.all(code[:20] == 0) and np.all(paper[:20] == 0) and np.all(code[46:] == 1) and np.all(paper[46:] == 1)


# ------------------------------------------------------------------------- Play and figures


def test_play_targets_sweep_from_the_shorter_length_to_the_longer() -> None:
    for view in (DEFAULT_VIEW, replace(DEFAULT_VIEW, target=1000), replace(DEFAULT_VIEW, target=4096),
                 replace(DEFAULT_VIEW, trained=contexts.LENGTH_MAX, target=contexts.LENGTH_MAX)):
        targets = contexts.play_targets(view, 30)
        assert view.target in targets and np.all(np.diff(targets) > 0) and len(targets) <= 31
        assert targets[0] == min(view.trained, view.target)
        assert targets[-1] == max(view.trained, view.target) or view.trained == view.target
        assert targets[-1] <= contexts.LENGTH_MAX


@pytest.mark.parametrize("name", ["default", "phi-3-mini-128k-instruct", "dynamic-longer"])
def test_coverage_frames_are_turns_at_each_target(name: str) -> None:
    view = VIEWS[name]
    fig = contexts.coverage_figure(view, title="t")
    targets, plain, scaled, unseen = contexts.coverage_frames(view)
    assert [frame.name for frame in fig.frames] == [str(int(T)) for T in targets]
    for frame, T, row in zip(fig.frames, targets, range(len(targets)), strict=True):
        at_T = replace(view, target=int(T))
        expected = ref_frequencies(at_T, view.method) * T / (2 * math.pi)
        np.testing.assert_allclose(np.asarray(frame.data[1].y, dtype=float), expected, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(frame.data[0].y, dtype=float), ref_theta(view.d, view.base) * T
                                   / (2 * math.pi), rtol=1e-6)
        marked = ref_unseen(view.d, view.base, view.trained, int(T), ref_frequencies(at_T, view.method))
        np.testing.assert_array_equal(np.asarray(frame.data[1].marker.size) > 0, marked)
        np.testing.assert_array_equal(unseen[row], marked)
    table = contexts.coverage_table(view)
    np.testing.assert_allclose(table.iloc[:, 2::2].to_numpy().T, plain)
    np.testing.assert_allclose(table.iloc[:, 3::2].to_numpy().T, scaled)
    # The still figure is the view's target, and the slider starts there.
    active = int(np.flatnonzero(targets == view.target)[0])
    assert fig.layout.sliders[0].active == active
    np.testing.assert_allclose(np.asarray(fig.data[2].y, dtype=float), scaled[active], rtol=1e-6)


def test_figures_are_valid_plotly_and_small_at_the_largest_settings() -> None:
    view = replace(DEFAULT_VIEW, d=2048, base=2.0, target=contexts.LENGTH_MAX, method="dynamic")
    before, after = contexts.dot_curves(view)
    figs = [contexts.coverage_figure(view, title="t"), contexts.methods_figure(view, title="t"),
            contexts.dot_figure(view, before, after, title="t"), contexts.ramp_figure(view, title="t")]
    sizes = [payload(fig) for fig in figs]
    assert max(sizes) <= 1.5 * MB and sum(sizes) <= 3 * MB, sizes
    play = json.loads(figs[0].to_json())["frames"]
    assert len(json.dumps(play)) <= animation.PLAY_MAX_BYTES * 1.1
    checked = go.Figure(figs[0].to_plotly_json())  # validated, frames and all
    assert len(checked.frames) == len(figs[0].frames) > 1


def test_tables_are_numbers_for_npy() -> None:
    view = VIEWS["phi-3-mini-128k-instruct"]
    before, after = contexts.dot_curves(view)
    for table in (contexts.pairs_table(view), contexts.methods_table(view), contexts.coverage_table(view),
                  contexts.dot_table(view, before, after), contexts.ramp_table(view)):
        assert table.to_numpy().dtype == np.float64 or table.to_numpy().dtype.kind in "if"
    pairs = contexts.pairs_table(view)
    assert set(pairs["meets unseen angles (1 = yes)"]) <= {0, 1}
    assert list(contexts.methods_table(view).columns[2:]) == [f"θ'/θ, {m}" for m in contexts.available_methods(view)]


# --------------------------------------------------------------------------- config.json

#: Each preset's file read as the page reads it, written out here from the public configs:
#: (d, base, method, factor, trained, target, max_position_embeddings).
PRESET_VIEWS = {
    "llama-2-7b": (128, 10000.0, "none", 4.0, 4096, 16384, 4096),
    "llama-3-8b": (128, 500000.0, "none", 4.0, 8192, 32768, 8192),
    "llama-3.1-8b": (128, 500000.0, "llama3", 8.0, 8192, 131072, 131072),
    "llama-3.2-1b": (64, 500000.0, "llama3", 32.0, 8192, 131072, 131072),
    "qwen2.5-7b-instruct": (128, 1e6, "none", 4.0, 32768, 131072, 32768),
    "qwen2.5-7b-instruct-yarn": (128, 1e6, "yarn", 4.0, 32768, 131072, 32768),
    "mistral-7b-v0.1": (128, 10000.0, "none", 4.0, 32768, 131072, 32768),
    "gpt-neox-20b": (24, 10000.0, "none", 4.0, 2048, 8192, 2048),
    "gpt-j-6b": (64, 10000.0, "none", 4.0, 2048, 8192, 2048),
    "deepseek-v3": (64, 10000.0, "yarn", 40.0, 4096, 163840, 163840),
    "gpt-oss-20b": (64, 150000.0, "yarn", 32.0, 4096, 131072, 131072),
    "gemma-3-4b-it": (256, 1e6, "linear", 8.0, 16384, 131072, 131072),
    "phi-3-mini-128k-instruct": (96, 10000.0, "longrope", 32.0, 4096, 131072, 131072),
    "codellama-7b": (128, 1e6, "none", 4.0, 16384, 65536, 16384),
}


@pytest.mark.parametrize("key", list(PRESET_VIEWS))
def test_each_preset_reads_as_its_data_file(key: str) -> None:
    view, notices = contexts.view_from_config(load_config(key))
    d, base, method, factor, trained, target, max_positions = PRESET_VIEWS[key]
    got = (view.d, view.base, view.method, view.factor, view.trained, view.target, view.max_positions)
    assert got == (d, base, method, factor, trained, target, max_positions)
    # Only Gemma's trained length is derived (linear: max_position_embeddings / factor), and said.
    assert bool(notices) == (key == "gemma-3-4b-it")
    assert view == contexts.preset_view(key)


def test_preset_parameters_are_the_files() -> None:
    deepseek = contexts.preset_view("deepseek-v3")
    assert (deepseek.mscale, deepseek.mscale_all_dim, deepseek.beta_fast, deepseek.beta_slow) == (1.0, 1.0, 32.0, 1.0)
    assert contexts.preset_view("gpt-oss-20b").truncate is False
    phi = contexts.preset_view("phi-3-mini-128k-instruct")
    raw = load_config("phi-3-mini-128k-instruct")["rope_scaling"]
    assert phi.short_factor == tuple(raw["short_factor"]) and phi.long_factor == tuple(raw["long_factor"])
    assert phi.has_lists and "longrope" in contexts.available_methods(phi)
    assert contexts.attention_factor(phi, "longrope") == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))


def transformers5(config: dict) -> dict:
    """A transformers 4 config.json in transformers 5's spelling: rope_parameters with rope_theta inside."""
    config = dict(config)
    parameters = dict(config.pop("rope_scaling", None) or {"rope_type": "default"})
    if "type" in parameters:
        parameters["rope_type"] = parameters.pop("type")
    parameters["rope_theta"] = config.pop("rope_theta", 10000.0)
    return config | {"rope_parameters": parameters}


@pytest.mark.parametrize("key", ["llama-3.1-8b", "qwen2.5-7b-instruct-yarn", "deepseek-v3", "phi-3-mini-128k-instruct",
                                 "llama-2-7b", "gemma-3-4b-it"])
def test_transformers_4_and_5_spellings_read_alike(key: str) -> None:
    config = load_config(key)
    if "text_config" in config:
        config = config["text_config"]
        assert "rope_parameters" in config or "rope_scaling" in config
    as_text = json.dumps(config if "rope_parameters" in config else transformers5(config))
    assert contexts.view_from_config(config_json.read_config(as_text)) == contexts.view_from_config(config)


#: (name, text or bytes, words the one-line message must hold)
BAD_CONFIGS = [
    ("no RoPE (GPT-2)", '{"n_embd": 768, "n_head": 12, "n_positions": 1024}', "no RoPE"),
    ("malformed", '{"rope_theta": 10000, "head_dim": 128,', "not valid JSON"),
    ("not an object", "[1, 2, 3]", "JSON object"),
    ("empty", "   ", "empty"),
    ("negative factor", '{"rope_theta": 1e4, "head_dim": 64, "rope_scaling": {"type": "linear", "factor": -2}}',
     "factor"),
    ("NaN factor", '{"rope_theta": 1e4, "head_dim": 64, "rope_scaling": {"type": "linear", "factor": NaN}}', "factor"),
    ("string base", '{"rope_theta": "abc", "head_dim": 64}', "rope_theta"),
    ("infinite base", '{"rope_theta": Infinity, "head_dim": 64}', "rope_theta"),
    ("no head size", '{"rope_theta": 1e4, "hidden_size": 4096}', "num_attention_heads"),
    ("llama3 without low_freq_factor", '{"rope_theta": 5e5, "head_dim": 128, "max_position_embeddings": 131072, '
     '"rope_scaling": {"rope_type": "llama3", "factor": 8, "high_freq_factor": 4, '
     '"original_max_position_embeddings": 8192}}', "low_freq_factor"),
    ("yarn without factor", '{"rope_theta": 1e4, "head_dim": 64, "rope_scaling": {"type": "yarn", '
     '"original_max_position_embeddings": 4096}}', "factor"),
    ("unknown method", '{"rope_theta": 1e4, "head_dim": 64, "rope_scaling": {"type": "su-per", "factor": 2}}',
     "rope_type"),
    ("short lists", '{"rope_theta": 1e4, "head_dim": 8, "original_max_position_embeddings": 64, '
     '"max_position_embeddings": 256, "rope_scaling": {"type": "longrope", "short_factor": [1, 1, 1], '
     '"long_factor": [2, 2, 2]}}', "pairs"),
    ("odd rotary dims", '{"rope_theta": 1e4, "head_dim": 7}', "even"),
    ("huge number", '{"rope_theta": ' + "9" * 5000 + ', "head_dim": 64}', "number too long"),
    ("deep nesting", "[" * 100_000 + "]" * 100_000, "too deeply"),
    ("huge file", '{"pad": "' + "x" * (1100 * 1024) + '"}', "at most 1 MB"),
    ("not UTF-8", b'{"rope_theta": "\xff\xfe"}', "UTF-8"),
]


@pytest.mark.parametrize(("text", "words"), [case[1:] for case in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS])
def test_a_bad_config_gets_one_line_naming_what_is_wrong(text: str | bytes, words: str) -> None:
    with pytest.raises(ValueError) as raised:
        contexts.view_from_config(config_json.read_config(text))
    message = str(raised.value)
    assert words in message and "\n" not in message, message
    shown = config_json.one_line(message)
    assert "\n" not in shown and len(shown) <= 2 * 300


def test_a_config_past_the_page_limits_is_clamped_with_notices() -> None:
    config = {"rope_theta": 5e13, "head_dim": 4096, "max_position_embeddings": 2**26,
              "rope_scaling": {"rope_type": "yarn", "factor": 5000.0, "original_max_position_embeddings": 2**25,
                               "beta_fast": 4000}}
    view, notices = contexts.view_from_config(config)
    assert (view.d, view.base, view.factor, view.trained, view.target, view.max_positions) == (
        2048, contexts.BASE_MAX, contexts.FACTOR_MAX, contexts.LENGTH_MAX, contexts.LENGTH_MAX, contexts.LENGTH_MAX)
    assert view.beta_fast == contexts.PARAMETER_MAX
    assert len(notices) == 7 and all("\n" not in notice for notice in notices)


def test_one_line_escapes_markdown_from_the_config() -> None:
    hostile = '{"rope_theta": "[click](javascript:alert(1)) $x$ **b** <b>", "head_dim": 64}'
    with pytest.raises(ValueError) as raised:
        contexts.view_from_config(config_json.read_config(hostile))
    shown = config_json.one_line(str(raised.value) + "\nsecond line")
    assert "\n" not in shown
    # Every character Markdown, LaTeX or HTML would act on comes escaped.
    assert re.search(r"(?<!\\)[\[\]()$*<>`_]", shown) is None, shown
    assert r"\[click\]\(javascript" in shown and r"\$x\$" in shown


def test_view_values_put_the_base_on_the_sidebar_or_exactly_in_base() -> None:
    on_scale = contexts.view_values(contexts.preset_view("gpt-oss-20b"))
    assert (on_scale["n"], on_scale["base"], on_scale["d"]) == (150000.0, 0.0, 64)
    off_scale = contexts.view_values(replace(DEFAULT_VIEW, base=123456.7))
    assert (off_scale["n"], off_scale["base"]) == (150000.0, 123456.7)
    assert set(contexts.PAGE_KEYS) <= set(off_scale)
    assert contexts.view_values(replace(DEFAULT_VIEW, base=1e11))["n"] == 1e8


@pytest.mark.parametrize(("raw", "value", "noticed"), [
    ("123456.7", 123456.7, False), ("0", 0.0, False), ("1", 0.0, True), ("0.5", 0.0, True), ("-3", 0.0, True),
    ("nan", 0.0, True), ("abc", 0.0, True), ("1e300", contexts.BASE_MAX, True), ("", 0.0, True), ("1e400", 0.0, True),
])
def test_parse_base(raw: str, value: float, noticed: bool) -> None:
    """A base the page cannot use says so in one wording: the sidebar's n is used (never "using 0")."""
    got, notices = contexts.parse_base([raw])
    assert got == value and bool(notices) == noticed
    assert all("\n" not in notice and "base" in notice for notice in notices)
    if notices and value == 0.0:
        assert notices[-1].endswith("; using the sidebar's n.") and "using 0" not in notices[-1], notices


def test_checked_view_puts_impossible_combinations_right() -> None:
    view, notices = contexts.checked_view(replace(DEFAULT_VIEW, beta_fast=1.0, beta_slow=2.0, low_freq=5.0))
    assert (view.beta_fast, view.beta_slow, view.low_freq, view.high_freq) == (32.0, 1.0, 1.0, 4.0)
    assert len(notices) == 2
    view, notices = contexts.checked_view(replace(DEFAULT_VIEW, method="longrope"))
    assert view.method == "none" and "needs short_factor and long_factor" in notices[0]
    phi = contexts.preset_view("phi-3-mini-128k-instruct")
    view, notices = contexts.checked_view(replace(phi, d=128))
    assert view.method == "none" and "48 numbers each" in notices[0]
    view, notices = contexts.checked_view(replace(DEFAULT_VIEW, d=2, method="ntk"))
    assert view.method == "none" and "d >= 4" in notices[0]
    assert contexts.checked_view(DEFAULT_VIEW) == (DEFAULT_VIEW, [])


# ------------------------------------------------------------------------------- pitfalls


def test_pitfalls_are_said_where_a_config_meets_them() -> None:
    qwen = " ".join(contexts.pitfalls(contexts.preset_view("qwen2.5-7b-instruct-yarn")))
    assert "#38224" in qwen and "#40320" in qwen and "32,768 / 32,768 = 1 instead of 4" in qwen
    llama32 = " ".join(contexts.pitfalls(contexts.preset_view("llama-3.2-1b")))
    assert "#166" in llama32 and "factor 32" in llama32
    # Meta's x8 divides the slow pairs by 8, the config by 32: every pair past the smooth band differs.
    view = contexts.preset_view("llama-3.2-1b")
    reference = ref_llama3(64, 500000.0, 8.0, 8192)
    assert f"gives {int(np.sum(reference != ref_llama3(64, 500000.0, 32.0, 8192)))} of the 32 pairs" in llama32
    assert not contexts.pitfalls(contexts.preset_view("llama-3.1-8b"))
    assert not contexts.pitfalls(contexts.preset_view("gpt-oss-20b"))
    deepseek = " ".join(contexts.pitfalls(contexts.preset_view("deepseek-v3")))
    assert f"{(0.1 * math.log(40) + 1) ** 2:.6g}" in deepseek
    assert "a = m(s, mscale) / m(s, mscale_all_dim) = 1" in deepseek
    dynamic = " ".join(contexts.pitfalls(VIEWS["dynamic-longer"]))
    assert "max_position_embeddings (8,192)" in dynamic and "trained on 4,096" in dynamic
    unseen_at_8192 = ref_unseen(128, 10000.0, 4096, 8192, ref_theta(128, 10000.0)).sum()
    assert f"at 8,192 angles unseen in training in {unseen_at_8192} pairs" in dynamic
    assert "none given here" in " ".join(contexts.pitfalls(VIEWS["dynamic-shorter"]))
    del view


# ---------------------------------------------------------------------------- reproduce


@pytest.mark.parametrize("name", ["default", "llama-3.2-1b", "phi-3-mini-128k-instruct", "deepseek-v3", "gpt-oss-20b",
                                  "dynamic-longer", "ntk", "yarn-odd", "gpt-neox-20b", "gemma-4-global"])
def test_snippet_gives_the_pages_numbers(name: str) -> None:
    view = VIEWS[name]
    result = run_snippet(contexts.contexts_code(view))["result"]
    before, after = contexts.dot_curves(view)
    tables = {
        "contexts_coverage": contexts.coverage_table(view), "contexts_pairs": contexts.pairs_table(view),
        "contexts_methods": contexts.methods_table(view), "contexts_dot": contexts.dot_table(view, before, after),
        "contexts_yarn_ramp": contexts.ramp_table(view),
    }
    assert set(result) == set(tables)
    for key, table in tables.items():
        got = np.asarray(result[key], dtype=np.float64)
        assert got.shape == table.shape, key
        # The snippet rounds each angle k θ'_i to float64 before its cosine (pe_core keeps it exact).
        atol = 1e-13 * view.target * view.pairs if key == "contexts_dot" else 0.0
        np.testing.assert_allclose(got, table.to_numpy(dtype=np.float64), rtol=1e-12, atol=atol, err_msg=key)


def test_the_docstring_examples_hold() -> None:
    failed, tried = doctest.testmod(pe_core.rope.context, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 3 and failed == 0


def _lab(hex_color: str) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour '#rrggbb'."""
    rgb = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255.0
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    f = np.cbrt(xyz / np.array([0.95047, 1.0, 1.08883]))
    f = np.where(f ** 3 > 216 / 24389, f, (24389 / 27 * xyz / np.array([0.95047, 1.0, 1.08883]) + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


#: Two methods' lines differ by at least this much (CIE76 ΔE), and two coloured ones (chroma 20 or
#: more) by at least MIN_METHOD_HUE_DEGREES of hue: lightness alone did not tell YaRN's and llama3's two
#: greens apart (#29b09d and #7defa1: ΔE 37, hues 25 degrees apart).
MIN_METHOD_DELTA_E, MIN_METHOD_HUE_DEGREES = 20, 30


@pytest.mark.parametrize("view", [replace(DEFAULT_VIEW, d=2048), contexts.preset_view("phi-3-mini-128k-instruct")],
                         ids=["d=2048", "phi-3 (every method)"])
def test_every_method_line_has_a_colour_of_its_own_far_from_every_other(view: ContextView) -> None:
    """At d=2048 (where the issue met YaRN and llama3 as two similar greens), and on Phi-3's preset
    (LongRoPE too), every method's line in methods_figure sets its colour, and every pair of them
    differs in colour and, both coloured, in hue."""
    traces = contexts.methods_figure(view, title="t").to_dict()["data"]
    colors = {trace["name"]: (trace.get("line") or {}).get("color") for trace in traces}
    assert len(colors) == len(contexts.available_methods(view)) >= 6, colors
    assert all(colors.values()), f"a line left to the theme's colours: {colors}"
    for first, second in itertools.combinations(colors, 2):
        (_, *ab_first), (_, *ab_second) = _lab(colors[first]), _lab(colors[second])
        pair = f"{first} {colors[first]} and {second} {colors[second]}"
        difference = float(np.linalg.norm(_lab(colors[first]) - _lab(colors[second])))
        assert difference >= MIN_METHOD_DELTA_E, f"{pair}: ΔE {difference:.1f}"
        if min(math.hypot(*ab_first), math.hypot(*ab_second)) >= 20:
            hues = [math.degrees(math.atan2(b, a)) for a, b in (ab_first, ab_second)]
            apart = abs((hues[0] - hues[1] + 180) % 360 - 180)
            assert apart >= MIN_METHOD_HUE_DEGREES, f"{pair}: hues {apart:.0f} degrees apart"


GEMMA4 = {"model_type": "gemma4", "text_config": {
    "model_type": "gemma4_text", "head_dim": 256, "global_head_dim": 512, "max_position_embeddings": 131072,
    "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                           "rope_theta": 1000000.0}}}}


def test_gemma_4_s_global_layers_are_read_as_proportional_over_the_whole_head() -> None:
    view, notices = contexts.view_from_config(GEMMA4)
    assert (view.d, view.base, view.method, view.factor, view.partial) == (512, 1e6, "proportional", 1.0, 0.25)
    assert view.trained == view.target == 131072 and not notices
    assert contexts.unrotated(view) == {"proportional": 192}
    c = contexts.coverage(view)
    np.testing.assert_array_equal(c.scaled[64:], 0.0)
    np.testing.assert_allclose(c.scaled[:64], ref_theta(512, 1e6)[:64], rtol=1e-15)
    assert not c.unseen[64:].any()
    # A config of another rope_type leaves the page's proportional at its own default share.
    assert contexts.view_from_config(load_config("llama-3.1-8b"))[0].partial == DEFAULT_VIEW.partial == 0.25


def test_unrotated_pairs_leave_the_log_axes_without_a_warning() -> None:
    """θ' = 0 has no logarithm: the methods chart's axis is set from the pairs that turn, with no division by
    zero, and the zeros stay in the chart's data (Plotly leaves them out of a log axis)."""
    view = VIEWS["gemma-4-global"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = contexts.methods_figure(view, title="t")
        contexts.coverage_figure(view, title="t")
    assert figure.layout.yaxis.type == "log"
    proportional = next(trace for trace in figure.data if trace.name == "proportional (Gemma 4)")
    assert np.count_nonzero(np.asarray(proportional.y) == 0) == 192
    assert contexts.unrotated(DEFAULT_VIEW) == {"proportional": 48}


def test_llama_4_scout_s_equal_frequency_factors_are_read_as_they_are() -> None:
    """Its low_freq_factor and high_freq_factor are both 1: no band between, which pe_core takes; the view keeps
    them, where the page used to put Meta's 1 and 4 back."""
    config = {"rope_theta": 500000.0, "head_dim": 128, "max_position_embeddings": 10485760,
              "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                               "original_max_position_embeddings": 8192}}
    view, notices = contexts.view_from_config(config)
    assert (view.method, view.low_freq, view.high_freq) == ("llama3", 1.0, 1.0) and not notices
    np.testing.assert_allclose(contexts.coverage(view).scaled, ref_llama3(128, 500000.0, 16.0, 8192, 1.0, 1.0),
                               rtol=1e-15)


def test_a_config_s_rope_type_transformers_does_not_have_is_said() -> None:
    """Issue 39: Longer contexts passes on what the config reader says of a rope_type transformers lacks."""
    config = json.loads(json.dumps(load_config("llama-2-7b")))
    config["rope_scaling"] = {"rope_type": "ntk", "factor": 4.0}
    view, notices = contexts.view_from_config(config)
    assert view.method == "ntk"
    assert any("not one of transformers' rope types" in notice for notice in notices), notices

