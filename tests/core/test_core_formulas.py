"""pe_core against independent re-implementations written from the formulas.

Nothing in the reference functions here calls pe_core: each is the formula as a paper,
a tutorial or a library writes it. pe_core must match each one wherever the two
conventions are defined the same way.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

import numpy as np
import pytest

import pe_core

# --------------------------------------------------------------------------------------
# Reference implementations
# --------------------------------------------------------------------------------------


def paper_per_column(positions, d, n):
    """PE(k, 2i) = sin(k / n^(2i/d)), PE(k, 2i+1) = cos(k / n^(2i/d)), one cell at a time."""
    P = np.zeros((len(positions), d))
    for r, k in enumerate(positions):
        for c in range(d):
            i = c // 2
            angle = k / n ** (2 * i / d)
            P[r, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return P


def pytorch_tutorial(positions, d, n):
    """The PyTorch tutorial's PositionalEncoding buffer (even d), in NumPy."""
    position = np.asarray(positions, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(0, d, 2) * (-math.log(n) / d))
    pe = np.zeros((len(positions), d))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def tensor2tensor_timing_signal(positions, d, n):
    """tensor2tensor get_timing_signal_1d / fairseq (even d, min_timescale 1): [sin | cos]."""
    num_timescales = d // 2
    log_timescale_increment = math.log(n) / max(num_timescales - 1, 1)
    inv_timescales = np.exp(np.arange(num_timescales) * -log_timescale_increment)
    scaled_time = np.asarray(positions, dtype=np.float64)[:, None] * inv_timescales[None, :]
    return np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)


def keras_hub_sine_position_encoding(positions, d, max_wavelength):
    """keras_hub SinePositionEncoding: per column c, timescale (1/n)^(2 (c//2) / d),
    sine on even columns and cosine on odd ones (any d, odd included)."""
    hidden = np.arange(d)
    timescales = (1 / max_wavelength) ** ((2 * (hidden // 2)) / d)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * timescales[None, :]
    cos_mask = (hidden % 2).astype(np.float64)
    sin_mask = 1 - cos_mask
    return np.sin(angles) * sin_mask + np.cos(angles) * cos_mask


EPS64 = np.finfo(np.float64).eps  # 2**-52


def angle_tolerance(positions):
    """Two float64 computations of k*w (w <= 1) differ by a few ulps of the angle: allow
    1e-15 per unit of the largest |position| plus a constant for sin/cos themselves."""
    return 1e-15 * max(1.0, float(np.max(np.abs(positions)))) + 1e-14


CASES = [
    # (length, d, n, start)
    (12, 8, 10000.0, 0),
    (30, 64, 10000.0, 0),
    (17, 10, 100.0, 5),
    (25, 32, 1e6, -12),
    (8, 2, 10000.0, 1000),
    (40, 128, 2.0, 0),
    (10, 16, 1e8, 123456),
]
ODD_CASES = [(12, 7, 10000.0, 0), (9, 1, 100.0, 3), (20, 33, 1e6, -4), (6, 5, 2.0, 99)]


# --------------------------------------------------------------------------------------
# positional_encoding against each reference
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("L", "d", "n", "start"), CASES + ODD_CASES)
def test_paper_per_column(L, d, n, start):
    k = np.arange(start, start + L)
    np.testing.assert_allclose(
        pe_core.positional_encoding(L, d, n, start=start), paper_per_column(k, d, n), rtol=0, atol=angle_tolerance(k)
    )


@pytest.mark.parametrize(("L", "d", "n", "start"), CASES)
def test_pytorch_tutorial(L, d, n, start):
    k = np.arange(start, start + L)
    np.testing.assert_allclose(
        pe_core.positional_encoding(L, d, n, start=start), pytorch_tutorial(k, d, n), rtol=0, atol=angle_tolerance(k)
    )


@pytest.mark.parametrize(("L", "d", "n", "start"), CASES)
def test_tensor2tensor_fairseq(L, d, n, start):
    k = np.arange(start, start + L)
    P = pe_core.positional_encoding(L, d, n, layout="concatenated", convention="tensor2tensor", start=start)
    np.testing.assert_allclose(P, tensor2tensor_timing_signal(k, d, n), rtol=0, atol=angle_tolerance(k))


@pytest.mark.parametrize(("L", "d", "n", "start"), CASES + ODD_CASES)
def test_keras_hub(L, d, n, start):
    k = np.arange(start, start + L)
    np.testing.assert_allclose(
        pe_core.positional_encoding(L, d, n, start=start),
        keras_hub_sine_position_encoding(k, d, n),
        rtol=0,
        atol=angle_tolerance(k),
    )


@pytest.mark.parametrize(("L", "d", "n", "start"), CASES + ODD_CASES)
def test_concatenated_is_a_column_permutation_of_interleaved(L, d, n, start):
    # Concatenated: sines of pairs 0..m-1 (the extra sine of an odd d ends the first half),
    # then the cosines of pairs 0..d//2-1.
    inter = paper_per_column(np.arange(start, start + L), d, n)
    order = list(range(0, d, 2)) + list(range(1, d, 2))
    P = pe_core.positional_encoding(L, d, n, layout="concatenated", start=start)
    np.testing.assert_allclose(P, inter[:, order], rtol=0, atol=angle_tolerance(np.arange(start, start + L)))


def test_references_agree_with_each_other():
    # Guard against a reference being wrong in the same way as pe_core.
    k = np.arange(0, 20)
    a = paper_per_column(k, 16, 10000.0)
    np.testing.assert_allclose(pytorch_tutorial(k, 16, 10000.0), a, atol=1e-13)
    np.testing.assert_allclose(keras_hub_sine_position_encoding(k, 16, 10000.0), a, atol=1e-13)
    t2t = tensor2tensor_timing_signal(k, 16, 10000.0)
    assert np.abs(t2t - a[:, list(range(0, 16, 2)) + list(range(1, 16, 2))]).max() > 1e-3


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
@pytest.mark.parametrize("convention", pe_core.CONVENTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, "float32", np.dtype("float16")])
@pytest.mark.parametrize(("L", "d", "start"), [(20, 16, 0), (9, 7, 300), (33, 64, -50)])
def test_dtype_is_the_cast_of_float64(layout, convention, dtype, L, d, start):
    kwargs = {"layout": layout, "convention": convention, "start": start}
    exact = pe_core.positional_encoding(L, d, **kwargs)
    P = pe_core.positional_encoding(L, d, dtype=dtype, **kwargs)
    assert P.dtype == np.dtype(dtype)
    assert P.shape == (L, d)
    np.testing.assert_array_equal(P, exact.astype(dtype))
    if layout == "interleaved" and convention == "paper":
        # and within one rounding of that dtype of the independent reference
        reference = paper_per_column(np.arange(start, start + L), d, 10000.0)
        np.testing.assert_allclose(P.astype(np.float64), reference, rtol=0, atol=np.finfo(dtype).eps)


def test_default_dtype_is_float64():
    assert pe_core.positional_encoding(3, 4).dtype == np.float64


@pytest.mark.parametrize("d", [1, 2, 7, 64])
def test_empty_length(d):
    P = pe_core.positional_encoding(0, d)
    assert P.shape == (0, d)


@pytest.mark.parametrize(("L", "d", "n"), [(5, 12, 10000.0), (3, 9, 77.0)])
def test_start_continues_a_sequence(L, d, n):
    whole = pe_core.positional_encoding(2 * L, d, n)
    np.testing.assert_allclose(pe_core.positional_encoding(L, d, n, start=L), whole[L:], rtol=0, atol=1e-14)
    # negative start: sin is odd, cos is even
    back = pe_core.positional_encoding(L, d, n, start=-(L - 1))[::-1]
    sines, cosines = pe_core.sine_cosine_columns(d)
    np.testing.assert_allclose(back[:, sines], -whole[:L, sines], rtol=0, atol=1e-14)
    np.testing.assert_allclose(back[:, cosines], whole[:L, cosines], rtol=0, atol=1e-14)


# --------------------------------------------------------------------------------------
# Exactness: against sin and cos computed with 60 decimal digits
# --------------------------------------------------------------------------------------

DIGITS = 60


def _decimal_pi() -> Decimal:
    """pi to DIGITS digits (the recipe of the decimal module's documentation)."""
    with localcontext() as context:
        context.prec = DIGITS + 2
        lasts, t, s, n, na, d, da = 0, Decimal(3), Decimal(3), 1, 0, 0, 24
        while s != lasts:
            lasts = s
            n, na = n + na, na + 8
            d, da = d + da, da + 32
            t = (t * n) / d
            s += t
        return +s


PI = _decimal_pi()


def exact_sin_cos(k: int, w: float) -> tuple[float, float]:
    """sin and cos of the exact product k * w (w a float64), correct to DIGITS digits, rounded once."""
    with localcontext() as context:
        context.prec = DIGITS
        x = Decimal(int(k)) * Decimal(float(w))  # Decimal(float) is exact
        x -= 2 * PI * (x / (2 * PI)).to_integral_value(rounding=ROUND_HALF_EVEN)  # into [-pi, pi]
        sine, cosine, term, i = Decimal(0), Decimal(0), Decimal(1), 0  # term = x**i / i!
        while abs(term) > Decimal(10) ** (5 - DIGITS):
            if i % 2:
                sine += term if i % 4 == 1 else -term
            else:
                cosine += term if i % 4 == 0 else -term
            i += 1
            term = term * x / i
        return float(sine), float(cosine)


def test_exact_reference_itself():
    assert float(PI) == math.pi
    for x in (0, 1, -7, 10**6):
        assert exact_sin_cos(x, 1.0) == pytest.approx((math.sin(x), math.cos(x)), abs=2**-53)


def _exact_cases():
    """(position, d, n, convention, pair) over every scale of position up to MAX_POSITION."""
    rng = np.random.default_rng(20261121)
    cases = [(pe_core.MAX_POSITION, 2048, 10000.0, "paper", 1023), (-pe_core.MAX_POSITION, 2, 10000.0, "paper", 0)]
    for scale in range(13):
        for _ in range(8):
            k = int(rng.integers(-(10**scale), 10**scale + 1))
            d = int(rng.integers(1, 2049))
            n = float(rng.choice([100.0, 10000.0, 1e6, float(np.exp(rng.uniform(0.1, 18)))]))
            convention = str(rng.choice(pe_core.CONVENTIONS))
            cases.append((k, d, n, convention, int(rng.integers(0, (d + 1) // 2))))
    return cases


EXACT_CASES = _exact_cases()


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_encoding_is_exact_to_an_ulp_at_every_position(layout):
    # The reference uses pe_core's own w (checked against the formula to 1e-14 elsewhere):
    # at k = 1e12 one ulp of w moves the angle by 1e-4, so only the same w can be compared.
    worst = 0.0
    for k, d, n, convention, i in EXACT_CASES:
        w = pe_core.frequencies(d, n, convention)[i]
        row = pe_core.positional_encoding(1, d, n, layout=layout, convention=convention, start=k)[0]
        pair, is_sine = pe_core.column_pairs(d, layout)
        sine, cosine = exact_sin_cos(k, w)
        worst = max(worst, abs(row[(pair == i) & is_sine][0] - sine))
        if i < d // 2:
            worst = max(worst, abs(row[(pair == i) & ~is_sine][0] - cosine))
    # Rounding the angle k*w once would be off by up to 2**-53 * |k| (1e-4 at 1e12).
    assert worst <= 2 * EPS64, worst


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_transition_matrix_and_shift_are_exact_to_ulps(layout):
    for delta, d, n, convention, i in EXACT_CASES[::5]:
        d += d % 2
        w = pe_core.frequencies(d, n, convention)[i]
        cos_phi = exact_sin_cos(delta, w)[1]
        sin_phi = exact_sin_cos(delta, w)[0]
        M = pe_core.transition_matrix(delta, d, n, layout=layout, convention=convention)
        sines, cosines = pe_core.sine_cosine_columns(d, layout)
        s, c = np.arange(d)[sines][i], np.arange(d)[cosines][i]
        assert abs(M[s, s] - cos_phi) <= 2 * EPS64
        assert abs(M[c, s] - sin_phi) <= 2 * EPS64
        start = -delta // 2
        P = pe_core.positional_encoding(1, d, n, layout=layout, convention=convention, start=start)
        shifted = pe_core.shift(P, delta, n, layout=layout, convention=convention)[0]
        sine, cosine = exact_sin_cos(start + delta, w)
        assert abs(shifted[s] - sine) <= 4 * EPS64
        assert abs(shifted[c] - cosine) <= 4 * EPS64


# --------------------------------------------------------------------------------------
# frequencies, wavelengths, angles, column maps
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 8, 9, 512, 513])
@pytest.mark.parametrize("n", [2.0, 100.0, 10000.0, 1e6])
def test_frequencies_from_the_formula(d, n):
    m = math.ceil(d / 2)
    paper = [n ** (-2 * i / d) for i in range(m)]
    t2t = [n ** (-i / max(m - 1, 1)) for i in range(m)]
    np.testing.assert_allclose(pe_core.frequencies(d, n), paper, rtol=1e-14, atol=0)
    np.testing.assert_allclose(pe_core.frequencies(d, n, convention="tensor2tensor"), t2t, rtol=1e-14, atol=0)
    np.testing.assert_allclose(pe_core.wavelengths(d, n), [2 * math.pi / w for w in paper], rtol=1e-14)
    if m > 1:
        # tensor2tensor ends exactly at 1/n; the paper stops short of it.
        np.testing.assert_allclose(pe_core.frequencies(d, n, convention="tensor2tensor")[-1], 1 / n, rtol=1e-14)
        assert pe_core.frequencies(d, n)[-1] > 1 / n


@pytest.mark.parametrize(("L", "d", "n", "start"), CASES + ODD_CASES)
@pytest.mark.parametrize("convention", pe_core.CONVENTIONS)
def test_angles(L, d, n, start, convention):
    w = pe_core.frequencies(d, n, convention)
    theta = pe_core.angles(L, d, n, convention=convention, start=start)
    assert theta.shape == (L, math.ceil(d / 2))
    for r in range(L):
        for i in range(w.size):
            assert theta[r, i] == (start + r) * w[i]
    np.testing.assert_array_equal(pe_core.positions(L, start), np.arange(start, start + L, dtype=np.float64))


@pytest.mark.parametrize("d", [1, 2, 3, 4, 7, 10])
def test_column_pairs(d):
    pair, is_sine = pe_core.column_pairs(d, "interleaved")
    assert list(pair) == [c // 2 for c in range(d)]
    assert list(is_sine) == [c % 2 == 0 for c in range(d)]
    m = (d + 1) // 2
    pair, is_sine = pe_core.column_pairs(d, "concatenated")
    assert list(pair) == list(range(m)) + list(range(d // 2))
    assert list(is_sine) == [True] * m + [False] * (d // 2)


@pytest.mark.parametrize("d", [1, 2, 5, 8, 33])
@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
@pytest.mark.parametrize("convention", pe_core.CONVENTIONS)
def test_every_column_is_the_sine_or_cosine_of_its_pair(d, layout, convention):
    L, n, start = 11, 500.0, 7
    P = pe_core.positional_encoding(L, d, n, layout=layout, convention=convention, start=start)
    w = pe_core.frequencies(d, n, convention)
    pair, is_sine = pe_core.column_pairs(d, layout)
    k = np.arange(start, start + L)
    for c in range(d):
        f = np.sin if is_sine[c] else np.cos
        np.testing.assert_allclose(P[:, c], f(k * w[pair[c]]), rtol=0, atol=1e-14)


@pytest.mark.parametrize("d", [1, 2, 5, 8, 33])
@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_sine_cosine_columns(d, layout):
    sines, cosines = pe_core.sine_cosine_columns(d, layout)
    columns = np.arange(d)
    pair, is_sine = pe_core.column_pairs(d, layout)
    # the slices select the sine (cosine) columns, in pair order
    assert list(columns[sines]) == list(np.flatnonzero(is_sine))
    assert list(columns[cosines]) == list(np.flatnonzero(~is_sine))
    assert list(pair[sines]) == list(range((d + 1) // 2))
    assert list(pair[cosines]) == list(range(d // 2))
    theta = pe_core.angles(6, d, start=3)
    P = pe_core.positional_encoding(6, d, layout=layout, start=3)
    # P keeps each angle's rounding error, so it may differ from sin(fl(k w)) by an ulp.
    np.testing.assert_allclose(P[:, sines], np.sin(theta), rtol=0, atol=1e-15)
    np.testing.assert_allclose(P[:, cosines], np.cos(theta[:, : d // 2]), rtol=0, atol=1e-15)


@pytest.mark.parametrize("d", [1, 2, 3, 4, 511, 512, 16384])
def test_pair_count(d):
    assert pe_core.pair_count(d) == math.ceil(d / 2) == pe_core.frequencies(d).size


# --------------------------------------------------------------------------------------
# binary codes
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("largest", [0, 1, 2, 3, 4, 7, 8, 99, 100, 1023, 1024, 2**40 - 1, 2**40])
def test_bits_needed(largest):
    expected = max(1, len(bin(largest)) - 2)
    assert pe_core.bits_needed(largest) == expected
    assert largest < 2 ** pe_core.bits_needed(largest)


@pytest.mark.parametrize(("length", "width"), [(1, None), (2, None), (5, None), (100, None), (100, 12), (64, 6)])
def test_binary_encoding_from_the_formula(length, width):
    B = pe_core.binary_encoding(length, width)
    w = width if width is not None else max(1, (length - 1).bit_length())
    assert B.shape == (length, w)
    assert B.dtype == np.float64
    for k in range(length):
        assert list(B[k]) == [float((k >> j) & 1) for j in range(w)]


@pytest.mark.parametrize("width", [1, 3, 8])
def test_bit_periods(width):
    periods = pe_core.bit_periods(width)
    assert list(periods) == [2.0 ** (j + 1) for j in range(width)]
    # and bit j of binary_encoding really repeats with that period, not with half of it
    B = pe_core.binary_encoding(2 ** (width + 1))
    for j, p in enumerate(periods.astype(int)):
        column = B[:, j]
        np.testing.assert_array_equal(column[p:], column[:-p])
        assert np.any(column[p // 2 :] != column[: -(p // 2)])


@pytest.mark.parametrize("ref", [0, 5, 99])
def test_hamming_distance(ref):
    B = pe_core.binary_encoding(100, 10)
    h = pe_core.hamming_distance(B, ref)
    expected = [bin(k ^ ref).count("1") for k in range(100)]
    np.testing.assert_array_equal(h, expected)


# --------------------------------------------------------------------------------------
# similarity
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
@pytest.mark.parametrize(("L", "d", "ref"), [(30, 16, 20), (12, 7, 0), (25, 64, 24)])
def test_dot_sse_cosine_against_loops(layout, L, d, ref):
    P = pe_core.positional_encoding(L, d, layout=layout)
    dots = pe_core.dot_similarity(P, ref)
    errors = pe_core.sse(P, ref)
    cosines = pe_core.cosine_similarity(P, ref)
    for k in range(L):
        dot = sum(P[k, j] * P[ref, j] for j in range(d))
        e = sum((P[k, j] - P[ref, j]) ** 2 for j in range(d))
        norm = math.sqrt(sum(x * x for x in P[k])) * math.sqrt(sum(x * x for x in P[ref]))
        assert dots[k] == pytest.approx(dot, abs=1e-12)
        assert errors[k] == pytest.approx(e, abs=1e-12)
        assert cosines[k] == pytest.approx(dot / norm, abs=1e-12)
    assert cosines[ref] == pytest.approx(1.0, abs=1e-15)


def test_cosine_similarity_of_a_zero_row_is_zero():
    P = np.array([[0.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
    np.testing.assert_allclose(pe_core.cosine_similarity(P, 1), [0.0, 1.0, 0.6], atol=1e-15)
    np.testing.assert_allclose(pe_core.cosine_similarity(P, 0), [0.0, 0.0, 0.0], atol=0)


@pytest.mark.parametrize("convention", pe_core.CONVENTIONS)
@pytest.mark.parametrize(("d", "n"), [(2, 10000.0), (16, 10000.0), (64, 100.0), (128, 1e6)])
def test_dot_and_sse_by_offset(convention, d, n):
    offsets = np.arange(-40, 41)
    w = [n ** (-2 * i / d) if convention == "paper" else n ** (-i / max(d // 2 - 1, 1)) for i in range(d // 2)]
    f = [sum(math.cos(wi * t) for wi in w) for t in offsets]
    np.testing.assert_allclose(pe_core.dot_by_offset(offsets, d, n, convention), f, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        pe_core.sse_by_offset(offsets, d, n, convention), [d - 2 * x for x in f], rtol=0, atol=2e-12
    )
    # scalar in, scalar out; f(0) = d/2; non-integer offsets are fine (f is smooth)
    assert pe_core.dot_by_offset(0, d, n, convention) == pytest.approx(d / 2, abs=1e-12)
    assert np.shape(pe_core.dot_by_offset(3, d, n, convention)) == ()
    assert pe_core.dot_by_offset(2.5, d, n, convention) == pytest.approx(sum(math.cos(wi * 2.5) for wi in w))
    # and the closed forms equal the measured curves of an encoding (both layouts)
    for layout in pe_core.LAYOUTS:
        P = pe_core.positional_encoding(41, d, n, layout=layout, convention=convention)
        np.testing.assert_allclose(pe_core.dot_similarity(P, 20), f[20:61], rtol=0, atol=1e-12)
        np.testing.assert_allclose(pe_core.sse(P, 20), [d - 2 * x for x in f[20:61]], rtol=0, atol=1e-11)


@pytest.mark.parametrize(("d", "count"), [(2048, 3001), (512, 4097), (8, 5)])
def test_dot_by_offset_over_many_offsets(d, count):
    # Many offsets at once (pe_core may work through them in blocks): every one of them is
    # sum_j cos(w_j t), in the order given, whatever the block boundaries.
    offsets = np.random.default_rng(count).integers(-(10**5), 10**5, size=count).astype(np.float64)
    w = 10000.0 ** (-2 * np.arange(d // 2) / d)
    expected = np.cos(offsets[:, None] * w[None, :]).sum(axis=1)
    got = pe_core.dot_by_offset(offsets, d)
    assert got.shape == (count,)
    # each of the d/2 terms may round its angle (|t| <= 1e5) differently: half an ulp of 1e5
    np.testing.assert_allclose(got, expected, rtol=0, atol=(d // 2) * (2.0**-53 * 10**5 + 4e-16))


@pytest.mark.parametrize("convention", pe_core.CONVENTIONS)
def test_dot_by_offset_is_exact_at_every_scale(convention):
    # Whole offsets go through delta = 64 q + j (pe_core.similarity): offsets on both sides
    # of multiples of 64, negative ones, and up to MAX_POSITION, each against the 60-digit
    # cosines of the exact angles, summed exactly. Rounding delta*w once would be off by up
    # to 1e-4 per term at 1e12.
    d = 128
    w = pe_core.frequencies(d, 10000.0, convention)
    offsets = [0, 1, 63, 64, 65, -1, -64, -65, 12_345, -98_765, 10**9 + 7, pe_core.MAX_POSITION]
    expected = [math.fsum(exact_sin_cos(t, wi)[1] for wi in w) for t in offsets]
    got = pe_core.dot_by_offset(np.array(offsets, dtype=np.float64), d, convention=convention)
    np.testing.assert_allclose(got, expected, rtol=0, atol=(d // 2) * 4 * EPS64)
    # and an offset that is not a whole number takes the direct exact sum
    direct = sum(math.cos(2.5 * x) for x in pe_core.frequencies(8))
    assert pe_core.dot_by_offset(2.5, 8) == pytest.approx(direct, abs=1e-15)


# --------------------------------------------------------------------------------------
# display: block reductions
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "max_blocks"), [(1, 1), (1, 5), (10, 4), (10, 10), (10, 30), (16384, 512), (1000, 7)])
def test_block_edges(size, max_blocks):
    edges = pe_core.block_edges(size, max_blocks)
    count = min(size, max_blocks)
    assert edges.size == count + 1
    assert edges[0] == 0
    assert edges[-1] == size
    sizes = np.diff(edges)
    assert sizes.min() >= 1
    assert sizes.max() - sizes.min() <= 1
    assert np.issubdtype(edges.dtype, np.integer)


def loop_block_average(matrix, row_edges, col_edges):
    out = np.zeros((len(row_edges) - 1, len(col_edges) - 1))
    for r in range(len(row_edges) - 1):
        for c in range(len(col_edges) - 1):
            cells = [
                matrix[i, j]
                for i in range(row_edges[r], row_edges[r + 1])
                for j in range(col_edges[c], col_edges[c + 1])
            ]
            out[r, c] = sum(cells) / len(cells)
    return out


@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (20, 13), (64, 3)])
@pytest.mark.parametrize(("max_rows", "max_cols"), [(1, 1), (3, 2), (6, 100), (100, 4)])
def test_block_average_against_a_loop(shape, max_rows, max_cols):
    rng = np.random.default_rng(sum(shape) * 31 + max_rows)
    matrix = rng.normal(size=shape)
    rows = pe_core.block_edges(shape[0], max_rows)
    cols = pe_core.block_edges(shape[1], max_cols)
    np.testing.assert_allclose(
        pe_core.block_average(matrix, rows, cols), loop_block_average(matrix, rows, cols), rtol=1e-13, atol=1e-14
    )
    # without column edges: one block over all columns
    np.testing.assert_allclose(
        pe_core.block_average(matrix, rows), loop_block_average(matrix, rows, [0, shape[1]]), rtol=1e-13, atol=1e-14
    )


def reference_encoding_blocks(reduced, L, d, n, layout, convention, start, max_rows):
    """Block means of the full positional_encoding, using column_pairs to pick the columns
    each display column stands for."""
    P = pe_core.positional_encoding(L, d, n, layout=layout, convention=convention, start=start)
    pair, is_sine = pe_core.column_pairs(d, layout)
    rows = pe_core.block_edges(L, max_rows)
    out = np.empty((rows.size - 1, reduced.column_is_sine.size))
    for c in range(reduced.column_is_sine.size):
        mask = (pair >= reduced.pair_first[c]) & (pair <= reduced.pair_last[c]) & (is_sine == reduced.column_is_sine[c])
        assert mask.any()
        for r in range(rows.size - 1):
            out[r, c] = P[rows[r] : rows[r + 1]][:, mask].mean()
    return out, rows


ENCODING_BLOCK_CASES = [
    # (L, d, n, start, max_rows, max_cols)
    (40, 16, 10000.0, 0, 8, 6),
    (40, 16, 10000.0, 0, 40, 16),  # blocks of one: exact cells
    (37, 17, 100.0, 5, 10, 7),  # odd d
    (37, 17, 100.0, -20, 37, 64),  # odd d, blocks of one
    (100, 64, 10000.0, 1000, 7, 10),
    (64, 6, 2.0, 3, 5, 2),
    (9, 1, 10.0, 0, 4, 2),
    (50, 128, 1e6, 123456, 13, 20),
]


@pytest.mark.parametrize(("L", "d", "n", "start", "max_rows", "max_cols"), ENCODING_BLOCK_CASES)
@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
@pytest.mark.parametrize("convention", pe_core.CONVENTIONS)
def test_encoding_block_average(L, d, n, start, max_rows, max_cols, layout, convention):
    reduced = pe_core.encoding_block_average(
        L, d, n, layout=layout, convention=convention, start=start, max_rows=max_rows, max_cols=max_cols
    )
    expected, rows = reference_encoding_blocks(reduced, L, d, n, layout, convention, start, max_rows)
    assert reduced.values.shape == expected.shape
    assert reduced.values.shape[1] <= max(max_cols, 2)
    # Both sides round angles of size ~|position|: measured <= 2e-17 per unit position.
    np.testing.assert_allclose(reduced.values, expected, rtol=0, atol=2e-16 * (abs(start) + L) + 1e-14)
    np.testing.assert_array_equal(reduced.row_first, start + rows[:-1])
    np.testing.assert_array_equal(reduced.row_last, start + rows[1:] - 1)
    # every column of P is in exactly one display column, sines and cosines never mixed
    counts = np.zeros(d, dtype=int)
    pair, is_sine = pe_core.column_pairs(d, layout)
    for c in range(reduced.column_is_sine.size):
        counts += (
            (pair >= reduced.pair_first[c]) & (pair <= reduced.pair_last[c]) & (is_sine == reduced.column_is_sine[c])
        )
    np.testing.assert_array_equal(counts, 1)
    if max_rows >= L and max_cols >= d:
        # blocks of one are the exact cells, in the layout's column order
        assert not reduced.is_reduced
        P = pe_core.positional_encoding(L, d, n, layout=layout, convention=convention, start=start)
        np.testing.assert_allclose(reduced.values, P, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(reduced.column_is_sine, is_sine)
        np.testing.assert_array_equal(reduced.pair_first, pair)
        np.testing.assert_array_equal(reduced.pair_last, pair)
    else:
        assert reduced.is_reduced


def test_encoding_block_average_does_not_alias():
    # Skipping rows would show the fastest sine (wavelength 2 pi) sampled every 32
    # positions as a slow wave of amplitude ~1; the block mean of many cycles is near 0.
    reduced = pe_core.encoding_block_average(16384, 2048, max_rows=512, max_cols=256)
    assert reduced.values.shape == (512, 256)
    assert np.abs(reduced.values[:, 0]).max() < 0.1
    assert np.abs(pe_core.positional_encoding(16384, 2, start=0)[::32, 0]).max() > 0.5


@pytest.mark.parametrize(
    ("L", "d", "n", "start", "max_rows", "max_pairs"),
    [
        (50, 512, 10000.0, 0, 50, 256),  # seed 001's angle map: exact
        (40, 16, 100.0, 3, 10, 3),
        (33, 9, 10000.0, -7, 5, 2),  # odd d
        (6, 9, 10000.0, 0, 6, 5),  # odd d, blocks of one
        (200, 64, 1e6, 1000, 7, 8),
    ],
)
@pytest.mark.parametrize("convention", pe_core.CONVENTIONS)
def test_angle_block_mean(L, d, n, start, max_rows, max_pairs, convention):
    degrees, row_first, row_last, pair_edges = pe_core.angle_block_mean(
        L, d, n, convention=convention, start=start, max_rows=max_rows, max_pairs=max_pairs
    )
    m = math.ceil(d / 2)
    theta = pe_core.angles(L, d, n, convention=convention, start=start)
    rows = pe_core.block_edges(L, max_rows)
    assert pair_edges[0] == 0
    assert pair_edges[-1] == m
    assert degrees.shape == (rows.size - 1, pair_edges.size - 1)
    np.testing.assert_array_equal(row_first, start + rows[:-1])
    np.testing.assert_array_equal(row_last, start + rows[1:] - 1)
    assert np.all((degrees >= 0) & (degrees < 360))
    for r in range(rows.size - 1):
        for c in range(pair_edges.size - 1):
            block = theta[rows[r] : rows[r + 1], pair_edges[c] : pair_edges[c + 1]]
            mean_sin, mean_cos = np.sin(block).mean(), np.cos(block).mean()
            if math.hypot(mean_sin, mean_cos) < 1e-6:
                continue  # the circular mean of a block spread all round the circle is undefined
            expected = math.degrees(math.atan2(mean_sin, mean_cos)) % 360
            gap = (degrees[r, c] - expected + 180) % 360 - 180
            assert abs(gap) < 1e-8, (r, c, degrees[r, c], expected)
    if max_rows >= L and max_pairs >= m:
        # blocks of one: the angle map itself, in degrees modulo 360 (seed 001)
        gap = (degrees - np.degrees(theta) % 360 + 180) % 360 - 180
        assert np.abs(gap).max() < 1e-9


def test_angle_block_mean_is_circular():
    # a block of angles near 350 and 10 degrees has mean ~0, not 180
    degrees, *_ = pe_core.angle_block_mean(2, 2, start=-1, max_rows=1, max_pairs=1)  # angles -1 rad and 0 rad
    expected = math.degrees(math.atan2(math.sin(-1) / 2, (math.cos(-1) + 1) / 2)) % 360
    assert degrees.shape == (1, 1)
    assert degrees[0, 0] == pytest.approx(expected, abs=1e-9)
    assert degrees[0, 0] > 300


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
@pytest.mark.parametrize(("L", "d", "max_blocks"), [(30, 16, 7), (30, 16, 30), (64, 64, 5), (1, 8, 1), (45, 2, 9)])
def test_offset_matrix_block_average_of_the_encoding(layout, L, d, max_blocks):
    P = pe_core.positional_encoding(L, d, layout=layout)
    f = pe_core.dot_by_offset(np.arange(-(L - 1), L), d)
    edges = pe_core.block_edges(L, max_blocks)
    expected = pe_core.block_average(P @ P.T, edges, edges)
    got = pe_core.offset_matrix_block_average(f, edges)
    assert got.shape == expected.shape
    # The closed form differences prefix sums as large as ~L*L*d/2: allow a few ulps of that.
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15 * L * L * d)


@pytest.mark.parametrize(("L", "max_blocks"), [(1, 1), (5, 2), (17, 17), (40, 6)])
def test_offset_matrix_block_average_of_any_function(L, max_blocks):
    # G[a, b] = f(b - a) for an arbitrary f, not only the encoding's
    rng = np.random.default_rng(L)
    f = rng.normal(size=2 * L - 1)
    G = np.array([[f[b - a + L - 1] for b in range(L)] for a in range(L)])
    edges = pe_core.block_edges(L, max_blocks)
    np.testing.assert_allclose(
        pe_core.offset_matrix_block_average(f, edges), loop_block_average(G, edges, edges), rtol=0, atol=1e-12
    )


# --------------------------------------------------------------------------------------
# shift on arrays large enough for its two threads and many cache blocks
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
@pytest.mark.parametrize("where", ["new array", "out", "in place"])
def test_large_shift_is_the_dense_product(layout, where):
    # 1536 x 2048 = 3.1M values: split over two threads, 24 blocks each.
    X = np.random.default_rng(7).normal(size=(1536, 2048))
    expected = X @ pe_core.transition_matrix(-10, 2048, layout=layout)
    scale = np.abs(X).max()
    target = {"new array": None, "out": np.empty_like(X), "in place": X}[where]
    shifted = pe_core.shift(X, -10, layout=layout, out=target)
    assert target is None or shifted is target
    np.testing.assert_allclose(shifted, expected, rtol=0, atol=8 * EPS64 * scale)


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_shift_of_finite_values_whose_sum_overflows(layout):
    # Each block's sum is inf, yet every rotated value is finite: not an error.
    X = np.full((256, 2048), 1e305)
    shifted = pe_core.shift(X, 3, layout=layout)
    expected = X @ pe_core.transition_matrix(3, 2048, layout=layout)
    np.testing.assert_allclose(shifted, expected, rtol=0, atol=8 * EPS64 * 1e305)
