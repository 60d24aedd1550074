"""pe_core.rope against references written here from the sources, and its identities.

Each reference re-types a source in NumPy, not by calling pe_core: Hugging Face's
``rotate_half`` with ``cat(freqs, freqs)``, Meta's complex ``freqs_cis``, RoFormer's
block-diagonal rotation matrix, GPT-J's ``rotate_every_two``; each scaling from its paper's
equation and from the code models run. Where the paper and the code differ (YaRN's ramp,
dynamic NTK's scale), pe_core follows the code and the test shows the difference.

Tolerances: the references round each angle m*theta once in float64 (half an ulp of the
angle, 2**-53 |m theta|), pe_core keeps it exact; with positions below 2000 and values of
order 1 that is below 1e-12.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pe_core
from pe_core import RopeScaling

TOL = 1e-12
SETTINGS = settings(max_examples=40, deadline=None)
RNG = np.random.default_rng(20240521)

even_ds = st.integers(min_value=1, max_value=64).map(lambda h: 2 * h)
#: d >= 4: NTK-aware scaling divides by d - 2.
scalable_ds = st.integers(min_value=2, max_value=64).map(lambda h: 2 * h)
bases = st.one_of(st.sampled_from([10000.0, 500000.0, 1e6, 100.0]), st.floats(min_value=2.0, max_value=1e7))
factors = st.floats(min_value=1.0, max_value=64.0)
lengths0 = st.sampled_from([512, 2048, 4096, 8192, 32768])
layouts = st.sampled_from(pe_core.ROPE_LAYOUTS)


def inv_freq(d: int, base: float) -> np.ndarray:
    """theta_i = 1 / base**(2i/d), as transformers writes it (RoFormer eq. 15)."""
    return 1.0 / base ** (np.arange(0, d, 2) / d)


# ----------------------------------------------------------------------- the four code forms


def hf_rotate(x: np.ndarray, positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb: cat(freqs, freqs), rotate_half."""
    freqs = np.outer(positions, theta)
    emb = np.concatenate([freqs, freqs], axis=-1)

    def rotate_half(v: np.ndarray) -> np.ndarray:
        half = v.shape[-1] // 2
        return np.concatenate([-v[..., half:], v[..., :half]], axis=-1)

    return x * np.cos(emb) + rotate_half(x) * np.sin(emb)


def meta_rotate(x: np.ndarray, positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Meta's llama model.py: freqs_cis = polar(1, outer(t, freqs)); view_as_complex pairs (2i, 2i+1)."""
    freqs_cis = np.exp(1j * np.outer(positions, theta))
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    turned = (pairs[..., 0] + 1j * pairs[..., 1]) * freqs_cis
    return np.stack([turned.real, turned.imag], axis=-1).reshape(x.shape)


def roformer_rotate(x: np.ndarray, positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """RoFormer eq. 15: f(x, m) = R^d_{Theta,m} x, R block-diagonal with 2x2 rotations by m theta_i."""
    d = x.shape[-1]
    out = np.empty_like(x)
    for row, m in enumerate(positions):
        R = np.zeros((d, d))
        for i, t in enumerate(theta):
            c, s = math.cos(m * t), math.sin(m * t)
            R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
        out[..., row, :] = x[..., row, :] @ R.T
    return out


def gptj_rotate(x: np.ndarray, positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """GPT-J: create_sinusoidal_positions, repeat_interleave(sin/cos, 2), rotate_every_two."""
    angles = np.outer(positions, theta)
    sin, cos = np.repeat(np.sin(angles), 2, axis=-1), np.repeat(np.cos(angles), 2, axis=-1)
    rotated = np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    return x * cos + rotated * sin


@pytest.mark.parametrize(("d", "base"), [(8, 10000.0), (64, 500000.0), (128, 1e6), (6, 2.0)])
def test_rotate_half_layout_is_hugging_face_rotate_half(d: int, base: float) -> None:
    x = RNG.standard_normal((3, 17, d))
    positions = np.arange(17) * 97
    np.testing.assert_allclose(pe_core.rotate(x, positions, base), hf_rotate(x, positions, inv_freq(d, base)),
                               rtol=0, atol=TOL)


@pytest.mark.parametrize(("d", "base"), [(8, 10000.0), (64, 500000.0), (6, 2.0)])
def test_rotate_interleaved_is_meta_complex_roformer_matrix_and_gptj(d: int, base: float) -> None:
    x = RNG.standard_normal((2, 11, d))
    positions = np.arange(11) * 131 + 5
    theta = inv_freq(d, base)
    ours = pe_core.rotate(x, positions, base, layout="interleaved")
    for reference in (meta_rotate, roformer_rotate, gptj_rotate):
        np.testing.assert_allclose(ours, reference(x, positions, theta), rtol=0, atol=TOL, err_msg=reference.__name__)


def test_rope_cache_is_cat_freqs_and_repeat_interleave() -> None:
    d, base, start, length = 16, 10000.0, 40, 30
    theta = inv_freq(d, base)
    freqs = np.outer(np.arange(start, start + length), theta)
    cos, sin = pe_core.rope_cache(length, d, base, start=start)
    np.testing.assert_allclose(cos, np.cos(np.concatenate([freqs, freqs], -1)), rtol=0, atol=TOL)
    np.testing.assert_allclose(sin, np.sin(np.concatenate([freqs, freqs], -1)), rtol=0, atol=TOL)
    cos, sin = pe_core.rope_cache(length, d, base, layout="interleaved", start=start)
    np.testing.assert_allclose(cos, np.repeat(np.cos(freqs), 2, -1), rtol=0, atol=TOL)
    np.testing.assert_allclose(sin, np.repeat(np.sin(freqs), 2, -1), rtol=0, atol=TOL)


def test_large_inputs_are_computed_in_row_blocks_alike() -> None:
    """rotate and rope_cache work in blocks of rows (2**18 angles each): 300 rows of d = 2048 span several."""
    d, base, count = 2048, 500000.0, 300
    x = RNG.standard_normal((2, count, d))
    positions = np.arange(count) + 3
    theta = inv_freq(d, base)
    np.testing.assert_allclose(pe_core.rotate(x, positions, base), hf_rotate(x, positions, theta), rtol=0, atol=TOL)
    np.testing.assert_allclose(pe_core.rotate(x, positions, base, layout="interleaved"),
                               meta_rotate(x, positions, theta), rtol=0, atol=TOL)
    cos, sin = pe_core.rope_cache(count, d, base, start=3)
    freqs = np.outer(positions, theta)
    np.testing.assert_allclose(cos, np.cos(np.concatenate([freqs, freqs], -1)), rtol=0, atol=TOL)
    np.testing.assert_allclose(sin, np.sin(np.concatenate([freqs, freqs], -1)), rtol=0, atol=TOL)


def test_rope_cache_carries_the_attention_factor_and_rotate_does_not() -> None:
    scaling = RopeScaling("yarn", 4.0, 64)
    cos, sin = pe_core.rope_cache(20, 8, 10000.0, scaling=scaling)
    factor = 0.1 * math.log(4.0) + 1
    np.testing.assert_allclose(np.hypot(cos[:, :4], sin[:, :4]), factor, rtol=1e-15)
    x = RNG.standard_normal((20, 8))
    np.testing.assert_allclose(np.linalg.norm(pe_core.rotate(x, np.arange(20), scaling=scaling), axis=-1),
                               np.linalg.norm(x, axis=-1), rtol=1e-14)


# ----------------------------------------------------------------------- scalings: paper and code


def test_linear_is_position_interpolation() -> None:
    """Chen et al. 2023, eq. 4: f'(x, m) = f(x, m L / L'), i.e. every angle m theta_i / s."""
    d, base, s = 64, 10000.0, 4.0
    m = np.arange(0, 4096, 7, dtype=np.float64)
    paper = np.outer(m / s, inv_freq(d, base))
    code = np.outer(m, inv_freq(d, base) / s)  # transformers: inv_freq /= factor
    ours = np.outer(m, pe_core.rope_frequencies(d, base, scaling=RopeScaling("linear", s)))
    np.testing.assert_allclose(ours, paper, rtol=1e-15)
    np.testing.assert_allclose(ours, code, rtol=1e-15)


@pytest.mark.parametrize(("d", "s"), [(128, 4.0), (64, 8.0), (4, 2.0)])
def test_ntk_is_the_yarn_papers_and_bloc97s_base_change(d: int, s: float) -> None:
    base = 10000.0
    # YaRN paper eq. 16-17: b' = b s^{|D|/(|D|-2)}, theta'_d = b'^{-2d/|D|}.
    paper = (base * s ** (d / (d - 2))) ** (-2 * np.arange(d // 2) / d)
    # bloc97's NTK-aware code: base = base * a ** (dim / (dim - 2)); inv_freq = 1 / base ** (arange(0, dim, 2) / dim).
    code = 1.0 / (base * s ** (d / (d - 2))) ** (np.arange(0, d, 2) / d)
    ours = pe_core.rope_frequencies(d, base, scaling=RopeScaling("ntk", s))
    np.testing.assert_allclose(ours, paper, rtol=1e-14)
    np.testing.assert_allclose(ours, code, rtol=1e-14)


def test_dynamic_follows_the_code_where_the_yarn_paper_differs() -> None:
    """Code (emozilla; transformers): b (s L/L0 - (s - 1))^{d/(d-2)} with L raised to L0.
    YaRN paper section 3.3: NTK-aware with s = max(1, L/L0): the same only when the factor is 1."""
    d, base, L0, s = 128, 10000.0, 4096, 2.0
    scaling = RopeScaling("dynamic", s, L0)
    exponents = np.arange(0, d, 2) / d

    def code(L: int) -> np.ndarray:
        L = max(L, L0)
        return 1.0 / (base * (s * L / L0 - (s - 1)) ** (d / (d - 2))) ** exponents

    def paper(L: int) -> np.ndarray:
        return 1.0 / (base * max(1.0, L / L0) ** (d / (d - 2))) ** exponents

    for L in (None, 100, L0, L0 + 1, 2 * L0, 5 * L0):
        np.testing.assert_allclose(pe_core.rope_frequencies(d, base, scaling=scaling, length=L),
                                   code(L0 if L is None else L), rtol=1e-14)
    np.testing.assert_allclose(code(L0), paper(L0), rtol=1e-14)
    # At twice the trained length the code's effective scale is 2*2 - 1 = 3, the paper's 2.
    assert code(2 * L0)[-1] / paper(2 * L0)[-1] == pytest.approx(2 / 3, rel=1e-12)
    unit = RopeScaling("dynamic", 1.0, L0)
    np.testing.assert_allclose(pe_core.rope_frequencies(d, base, scaling=unit, length=3 * L0), paper(3 * L0),
                               rtol=1e-14)


def yarn_code(d: int, base: float, s: float, L0: int, beta_fast: float = 32, beta_slow: float = 1,
              truncate: bool = True) -> np.ndarray:
    """YaRN's own code (jquesnelle/yarn scaled_rope, transformers' _compute_yarn_parameters)."""
    def find_correction_dim(num_rotations: float) -> float:
        return (d * math.log(L0 / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
    pos_freqs = base ** (np.arange(0, d, 2) / d)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (s * pos_freqs)
    mask = 1 - ramp
    return interpolation * (1 - mask) + extrapolation * mask


def yarn_paper(d: int, base: float, s: float, L0: int, alpha: float = 1, beta: float = 32) -> np.ndarray:
    """YaRN paper eq. 18-19: h(theta_d) = (1 - gamma(r)) theta_d / s + gamma(r) theta_d, r = L / lambda_d."""
    theta = base ** (-2 * np.arange(d // 2) / d)
    r = L0 / (2 * math.pi / theta)
    gamma = np.where(r < alpha, 0.0, np.where(r > beta, 1.0, (r - alpha) / (beta - alpha)))
    return (1 - gamma) * theta / s + gamma * theta


@pytest.mark.parametrize(("d", "base", "s", "L0", "truncate"), [
    (128, 10000.0, 4.0, 4096, True),  # Llama 2 shape
    (128, 1e6, 4.0, 32768, True),  # Qwen2.5's long-context dict
    (64, 10000.0, 40.0, 4096, True),  # DeepSeek-V3
    (64, 150000.0, 32.0, 4096, False),  # gpt-oss
    (8, 2.0, 4.0, 10**6, True),  # the fast bound past the last pair: the code's clamp turns the ramp over
])
def test_yarn_follows_its_code_and_says_where_the_paper_differs(d, base, s, L0, truncate) -> None:
    scaling = RopeScaling("yarn", s, L0, truncate=truncate)
    ours = pe_core.rope_frequencies(d, base, scaling=scaling)
    np.testing.assert_allclose(ours, yarn_code(d, base, s, L0, truncate=truncate), rtol=1e-14)
    theta = base ** (-2 * np.arange(d // 2) / d)
    code_weight = pe_core.yarn_ramp(d, base, scaling=scaling)
    paper_weight = pe_core.yarn_ramp(d, base, scaling=scaling, form="paper")
    np.testing.assert_allclose(theta * (1 - code_weight) + theta / s * code_weight, ours, rtol=1e-14)
    np.testing.assert_allclose(theta * (1 - paper_weight) + theta / s * paper_weight, yarn_paper(d, base, s, L0),
                               rtol=1e-14)


def test_yarn_paper_and_code_differ_between_the_bounds_only() -> None:
    """Llama 2 x4: the bounds are pairs 20.94 and 45.03; the ramps agree outside [20, 46] and differ by
    up to 0.37 of the interpolation share inside (pair 30: 0.38 in the code, 0.75 in the paper)."""
    scaling = RopeScaling("yarn", 4.0, 4096)
    code = pe_core.yarn_ramp(128, 10000.0, scaling=scaling)
    paper = pe_core.yarn_ramp(128, 10000.0, scaling=scaling, form="paper")
    outside = np.r_[0:20, 47:64]
    np.testing.assert_array_equal(code[outside], paper[outside])
    difference = np.abs(code - paper)
    assert int(np.argmax(difference)) == 30
    assert difference[30] == pytest.approx(0.3672166, abs=1e-6)
    assert code[30] == pytest.approx(5 / 13) and paper[30] == pytest.approx(0.7518320, abs=1e-6)


def test_yarn_code_turns_over_when_its_fast_bound_passes_the_head() -> None:
    """d = 8, b = 2, L0 = 10**6: the fast bound is pair 49.1 > d - 1 = 7, the code's upper bound min(.., d - 1)
    falls below it, and the clipped ramp is 1 everywhere: every pair divided by s. The paper's r_i are all
    above beta_fast, so it keeps every pair."""
    scaling = RopeScaling("yarn", 4.0, 10**6)
    np.testing.assert_array_equal(pe_core.yarn_ramp(8, 2.0, scaling=scaling), 1.0)
    np.testing.assert_array_equal(pe_core.yarn_ramp(8, 2.0, scaling=scaling, form="paper"), 0.0)
    np.testing.assert_allclose(pe_core.rope_frequencies(8, 2.0, scaling=scaling), inv_freq(8, 2.0) / 4, rtol=1e-15)


def test_yarn_attention_factor_paper_deepseek_and_override() -> None:
    assert pe_core.rope_attention_factor(RopeScaling("yarn", 4.0, 4096)) == pytest.approx(0.1 * math.log(4) + 1)
    deepseek = RopeScaling("yarn", 40.0, 4096, mscale=1.0, mscale_all_dim=1.0)
    assert pe_core.rope_attention_factor(deepseek) == 1.0
    uneven = RopeScaling("yarn", 40.0, 4096, mscale=0.707, mscale_all_dim=1.0)
    expected = (0.1 * 0.707 * math.log(40) + 1) / (0.1 * math.log(40) + 1)
    assert pe_core.rope_attention_factor(uneven) == pytest.approx(expected, rel=1e-15)
    only_one = RopeScaling("yarn", 40.0, 4096, mscale=0.707)
    assert pe_core.rope_attention_factor(only_one) == pytest.approx(0.1 * math.log(40) + 1, rel=1e-15)
    assert pe_core.rope_attention_factor(RopeScaling("yarn", 4.0, 4096, attention_factor=0.5)) == 0.5
    assert pe_core.rope_attention_factor(RopeScaling("yarn", 1.0, 4096)) == 1.0


def meta_apply_scaling(freqs: np.ndarray, scale_factor: float, low_freq_factor: float, high_freq_factor: float,
                       old_context_len: int) -> np.ndarray:
    """Meta's llama-models apply_scaling (Llama 3.1), the loop as written there."""
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return np.array(new_freqs)


@pytest.mark.parametrize(("d", "base", "s", "L0", "low", "high"), [
    (128, 500000.0, 8.0, 8192, 1.0, 4.0),  # Llama 3.1
    (64, 500000.0, 32.0, 8192, 1.0, 4.0),  # Llama 3.2 1B
    (128, 10000.0, 4.0, 2048, 2.0, 8.0),
])
def test_llama3_is_metas_apply_scaling(d, base, s, L0, low, high) -> None:
    scaling = RopeScaling("llama3", s, L0, low_freq_factor=low, high_freq_factor=high)
    np.testing.assert_allclose(pe_core.rope_frequencies(d, base, scaling=scaling),
                               meta_apply_scaling(inv_freq(d, base), s, low, high, L0), rtol=1e-15)


def test_longrope_is_phi3s_code() -> None:
    """Phi-3's Phi3LongRoPEScaledRotaryEmbedding: inv_freq = 1 / (ext_factors * base**(arange(0, d, 2) / d)),
    ext = long_factor when seq_len > original_max_position_embeddings; scaling_factor
    sqrt(1 + log(scale) / log(original)) with scale = max_position_embeddings / original."""
    d, base, L0, L = 16, 10000.0, 4096, 131072
    short = tuple(1.0 + 0.1 * i for i in range(d // 2))
    long = tuple(1.0 + 8.0 * i for i in range(d // 2))
    scaling = RopeScaling("longrope", L / L0, L0, short_factor=short, long_factor=long)
    shape = np.arange(0, d, 2) / d
    for length, ext in ((None, short), (100, short), (L0, short), (L0 + 1, long), (L, long)):
        np.testing.assert_allclose(pe_core.rope_frequencies(d, base, scaling=scaling, length=length),
                                   1.0 / (np.array(ext) * base**shape), rtol=1e-15)
    expected = math.sqrt(1 + math.log(L / L0) / math.log(L0))
    assert pe_core.rope_attention_factor(scaling) == pytest.approx(expected, rel=1e-15)
    assert pe_core.rope_attention_factor(scaling, length=10) == pytest.approx(expected, rel=1e-15)


def test_other_methods_have_no_attention_factor() -> None:
    for scaling in (None, RopeScaling("linear", 8.0), RopeScaling("ntk", 8.0), RopeScaling("dynamic", 8.0, 512),
                    RopeScaling("llama3", 8.0, 8192)):
        assert pe_core.rope_attention_factor(scaling) == 1.0


# ----------------------------------------------------------------------- identities


def vectors(d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((1, d)), rng.standard_normal((1, d))


scalings = st.sampled_from([None, RopeScaling("linear", 4.0), RopeScaling("ntk", 8.0),
                            RopeScaling("yarn", 16.0, 2048), RopeScaling("llama3", 8.0, 8192)])


@SETTINGS
@given(even_ds, bases, layouts, st.integers(-(10**6), 10**6), st.integers(0, 2**32 - 1))
def test_rotate_keeps_norms(d, base, layout, position, seed) -> None:
    x = np.random.default_rng(seed).standard_normal((3, d))
    turned = pe_core.rotate(x, [position] * 3, base, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(turned, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13)


@SETTINGS
@given(scalable_ds, bases, layouts, scalings, st.integers(0, 10**4), st.integers(0, 10**4),
       st.integers(0, 10**4), st.integers(0, 2**32 - 1))
def test_scores_depend_only_on_the_offset(d, base, layout, scaling, m, n, t, seed) -> None:
    q, k = vectors(d, seed)

    def score(a: int, b: int) -> float:
        return float(pe_core.rotate(q, [a], base, layout=layout, scaling=scaling)[0]
                     @ pe_core.rotate(k, [b], base, layout=layout, scaling=scaling)[0])

    # Each side rotates exactly to about an ulp, whatever the position: a few ulps of |q||k|.
    bound = 16 * np.finfo(float).eps * np.linalg.norm(q) * np.linalg.norm(k) * d
    assert abs(score(m, n) - score(m + t, n + t)) <= bound


@SETTINGS
@given(scalable_ds, bases, layouts, scalings, st.integers(0, 2**32 - 1))
def test_rotating_by_zero_is_the_identity(d, base, layout, scaling, seed) -> None:
    x = np.random.default_rng(seed).standard_normal((2, 5, d))
    np.testing.assert_array_equal(pe_core.rotate(x, np.zeros(5, dtype=int), base, layout=layout, scaling=scaling), x)


@SETTINGS
@given(even_ds, bases, layouts, st.integers(0, 3000), st.integers(0, 3000))
def test_all_ones_score_is_the_sum_of_twice_the_cosines(d, base, layout, m, n) -> None:
    ones = np.ones((1, d))
    score = pe_core.rotate(ones, [m], base, layout=layout)[0] @ pe_core.rotate(ones, [n], base, layout=layout)[0]
    expected = np.sum(2 * np.cos((m - n) * inv_freq(d, base)))
    assert score == pytest.approx(expected, abs=1e-11 * d)


@SETTINGS
@given(scalable_ds, bases, scalings, st.integers(0, 5000), st.integers(0, 5000), st.integers(0, 2**32 - 1))
def test_the_two_layouts_give_the_same_scores_when_q_and_k_are_permuted_alike(d, base, scaling, m, n, seed) -> None:
    q, k = vectors(d, seed)
    half = d // 2
    # Interleaved column 2i holds half-layout column i, column 2i + 1 column i + d/2.
    to_interleaved = np.ravel(np.column_stack([np.arange(half), np.arange(half) + half]))
    q_int, k_int = q[:, to_interleaved], k[:, to_interleaved]
    turned_half = pe_core.rotate(q, [m], base, scaling=scaling)
    turned_int = pe_core.rotate(q_int, [m], base, layout="interleaved", scaling=scaling)
    np.testing.assert_array_equal(turned_int, turned_half[:, to_interleaved])
    score_half = turned_half[0] @ pe_core.rotate(k, [n], base, scaling=scaling)[0]
    score_int = turned_int[0] @ pe_core.rotate(k_int, [n], base, layout="interleaved", scaling=scaling)[0]
    assert score_half == pytest.approx(score_int, rel=1e-12, abs=1e-12)


@SETTINGS
@given(even_ds, bases, factors, st.integers(0, 10**5))
def test_linear_interpolation_maps_position_k_s_to_k(d, base, s, k) -> None:
    scaled = pe_core.rope_frequencies(d, base, scaling=RopeScaling("linear", s))
    np.testing.assert_allclose((k * s) * scaled, k * pe_core.rope_frequencies(d, base), rtol=1e-14)


@SETTINGS
@given(scalable_ds, bases, factors)
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_s(d, base, s) -> None:
    plain = pe_core.rope_frequencies(d, base)
    ntk = pe_core.rope_frequencies(d, base, scaling=RopeScaling("ntk", s))
    assert ntk[0] == plain[0] == 1.0
    # b'^{-(d-2)/d} = b^{-(d-2)/d} / s: exactly s, to rounding.
    assert plain[-1] / ntk[-1] == pytest.approx(s, rel=1e-12)
    assert np.all(ntk <= plain * (1 + 1e-15))


@SETTINGS
@given(even_ds, bases, factors.filter(lambda s: s > 1.001), lengths0, st.booleans(),
       st.sampled_from([(32.0, 1.0), (16.0, 2.0), (64.0, 0.5)]))
def test_yarn_keeps_pairs_below_its_fast_bound_and_divides_those_past_its_slow_bound(
    d, base, s, L0, truncate, betas
) -> None:
    beta_fast, beta_slow = betas

    def bound(beta: float) -> float:  # the pair whose wavelength fits beta turns into L0
        return d * math.log(L0 / (2 * math.pi * beta)) / (2 * math.log(base))

    fast, slow = bound(beta_fast), bound(beta_slow)
    if truncate:
        fast, slow = math.floor(fast), math.ceil(slow)
    assume(fast >= 0 and slow <= d - 1)  # inside the head: the code's clamps do not move them
    scaling = RopeScaling("yarn", s, L0, beta_fast=beta_fast, beta_slow=beta_slow, truncate=truncate)
    plain = pe_core.rope_frequencies(d, base)
    yarn = pe_core.rope_frequencies(d, base, scaling=scaling)
    i = np.arange(d // 2)
    np.testing.assert_array_equal(yarn[i <= fast], plain[i <= fast])
    np.testing.assert_allclose(yarn[i >= slow], plain[i >= slow] / s, rtol=1e-15)
    between = (i > fast) & (i < slow)
    assert np.all((yarn[between] < plain[between]) & (yarn[between] > plain[between] / s))


@SETTINGS
@given(even_ds, bases, factors.filter(lambda s: s > 1.001), lengths0,
       st.sampled_from([(1.0, 4.0), (2.0, 8.0), (0.5, 1.0)]))
def test_llama3_keeps_short_wavelengths_and_divides_long_ones(d, base, s, L0, bounds) -> None:
    low, high = bounds
    scaling = RopeScaling("llama3", s, L0, low_freq_factor=low, high_freq_factor=high)
    plain = pe_core.rope_frequencies(d, base)
    ours = pe_core.rope_frequencies(d, base, scaling=scaling)
    wavelength = 2 * math.pi / plain
    short, long = wavelength < L0 / high, wavelength > L0 / low
    np.testing.assert_array_equal(ours[short], plain[short])
    np.testing.assert_allclose(ours[long], plain[long] / s, rtol=1e-15)
    middle = ~short & ~long
    assert np.all((ours[middle] <= plain[middle] * (1 + 1e-15)) & (ours[middle] >= plain[middle] / s * (1 - 1e-15)))
