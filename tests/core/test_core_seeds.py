"""pe_core reproduces the code and the printed numbers of the five seed documents.

Each seed's code is re-typed here as it is written in the document (only renamed where a
name would clash), then compared with pe_core. The only hard-coded numbers are the ones
the seeds print.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.seed_code import (
    seed000_getPositionEncoding,
    seed001_transition_matrix,
    seed002_positional_encoding,
    seed003_binary_representation,
)

import pe_core

# --------------------------------------------------------------------------------------
# Seed 000: blog post with a loop implementation and a printed 4x4 matrix.
# --------------------------------------------------------------------------------------


#: Printed by seed 000 for getPositionEncoding(seq_len=4, d=4, n=100), copied literally.
SEED000_PRINTED = np.array(
    [
        [0.0, 1.0, 0.0, 1.0],
        [0.84147098, 0.54030231, 0.09983342, 0.99500417],
        [0.90929743, -0.41614684, 0.19866933, 0.98006658],
        [0.14112001, -0.9899925, 0.29552021, 0.95533649],
    ]
)


def test_seed000_printed_matrix():
    P = pe_core.positional_encoding(4, 4, n=100)
    assert P.shape == (4, 4)
    # The print shows 8 decimals: the printed values are within 5e-9 of the true ones.
    np.testing.assert_allclose(P, SEED000_PRINTED, rtol=0, atol=1e-8)


def test_seed000_loop_prints_the_same_matrix():
    np.testing.assert_allclose(seed000_getPositionEncoding(4, 4, n=100), SEED000_PRINTED, rtol=0, atol=1e-8)


@pytest.mark.parametrize(("L", "d", "n"), [(4, 4, 100), (20, 16, 10000), (33, 64, 10000), (7, 10, 2.5), (50, 2, 1e6)])
def test_seed000_loop_equals_pe_core(L, d, n):
    expected = seed000_getPositionEncoding(L, d, n)
    np.testing.assert_allclose(pe_core.positional_encoding(L, d, n=n), expected, rtol=0, atol=1e-13)


def test_seed000_sinusoid_panels():
    # plotSinusoid(k): y = sin(k / n**(2x/d)) for x = 0..99, d=512, n=10000. The panel's x
    # runs over consecutive *pair* exponents, i.e. the sine of pair x.
    d, n = 512, 10000
    x = np.arange(0, 100, 1)
    P = pe_core.positional_encoding(13, d, n=n)
    for k in (0, 4, 8, 12):
        y = np.sin(k / np.power(n, 2 * x / d))
        np.testing.assert_allclose(P[k, 0 : 2 * 100 : 2], y, rtol=0, atol=1e-13)


# --------------------------------------------------------------------------------------
# Seed 001: the TensorFlow "Transformer position encoding" notebook.
# --------------------------------------------------------------------------------------

num_positions = 50
depth = 512
min_rate = 1 / 10000

angle_rate_exponents = np.linspace(0, 1, depth // 2)
angle_rates = min_rate ** (angle_rate_exponents)

positions = np.arange(num_positions)
angle_rads = (positions[:, np.newaxis]) * angle_rates[np.newaxis, :]

sines = np.sin(angle_rads)
cosines = np.cos(angle_rads)
pos_encoding = np.concatenate([sines, cosines], axis=-1)


T2T = {"layout": "concatenated", "convention": "tensor2tensor"}


def test_seed001_angle_rates():
    w = pe_core.frequencies(depth, convention="tensor2tensor")
    assert w.shape == angle_rates.shape
    np.testing.assert_allclose(w, angle_rates, rtol=1e-14, atol=0)
    # The notebook's rates run from exactly 1 down to min_rate = 1/n.
    assert w[0] == 1.0
    np.testing.assert_allclose(w[-1], min_rate, rtol=1e-15)


def test_seed001_angle_map():
    np.testing.assert_allclose(
        pe_core.angles(num_positions, depth, convention="tensor2tensor"), angle_rads, rtol=1e-14, atol=0
    )


def test_seed001_concatenated_encoding():
    P = pe_core.positional_encoding(num_positions, depth, **T2T)
    assert P.shape == pos_encoding.shape
    np.testing.assert_allclose(P, pos_encoding, rtol=0, atol=1e-12)


def test_seed001_paper_frequencies_differ_from_the_notebook():
    # The notebook's linspace(0, 1, d/2) is not the paper's 2i/d: the two conventions differ.
    paper = pe_core.positional_encoding(num_positions, depth, layout="concatenated")
    assert np.abs(paper - pos_encoding).max() > 1e-3


def test_seed001_similarity_to_position_20():
    P = pe_core.positional_encoding(num_positions, depth, **T2T)
    pos_encoding_at_20 = pos_encoding[20]
    dots = np.dot(pos_encoding, pos_encoding_at_20)
    SSE = np.sum((pos_encoding - pos_encoding_at_20) ** 2, axis=1)
    np.testing.assert_allclose(pe_core.dot_similarity(P, 20), dots, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pe_core.sse(P, 20), SSE, rtol=0, atol=1e-10)
    # "most similar at 20, and clearly diverge as you move away"
    assert np.argmax(dots) == 20
    assert np.argmin(SSE) == 20


def test_seed001_transition_matrix():
    update = seed001_transition_matrix(-10, angle_rates)
    M = pe_core.transition_matrix(-10, depth, **T2T)
    assert M.shape == update.shape == (depth, depth)
    np.testing.assert_allclose(M, update, rtol=0, atol=1e-14)
    # Same sparsity: four diagonal blocks.
    np.testing.assert_array_equal(M != 0, update != 0)


def test_seed001_shift_error_to_numerical_precision():
    update = seed001_transition_matrix(-10, angle_rates)
    errors = np.dot(pos_encoding, update)[10:] - pos_encoding[:-10]
    assert abs(errors).max() < 1e-12

    P = pe_core.positional_encoding(num_positions, depth, **T2T)
    shifted = pe_core.shift(P, -10, **T2T)
    assert abs(shifted[10:] - P[:-10]).max() < 1e-12
    # and pe_core's shifted map is the notebook's shifted map
    np.testing.assert_allclose(shifted, np.dot(pos_encoding, update), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------
# Seed 002: introductory blog post whose loop applies 2*i to an index stepping by 2.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("L", "d"), [(50, 128), (30, 7), (20, 2)])
def test_seed002_bug_is_the_base_squared(L, d):
    buggy = seed002_positional_encoding(L, d)
    # i = 2j, so the exponent is 4j/d: 10000**(4j/d) == (10000**2)**(2j/d).
    np.testing.assert_allclose(pe_core.positional_encoding(L, d, n=10000.0**2), buggy, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("L", "d"), [(50, 128), (30, 7)])
def test_seed002_bug_differs_from_the_paper(L, d):
    buggy = seed002_positional_encoding(L, d)
    assert np.abs(pe_core.positional_encoding(L, d) - buggy).max() > 0.1


def test_seed002_dimensions_0_and_1():
    # Dims 0 and 1 use exponent 0: the bug does not show there, sin(k) and cos(k).
    P = pe_core.positional_encoding(50, 128)
    k = np.arange(50)
    np.testing.assert_allclose(P[:, 0], np.sin(k), rtol=0, atol=1e-15)
    np.testing.assert_allclose(P[:, 1], np.cos(k), rtol=0, atol=1e-15)
    np.testing.assert_allclose(P[:, :2], seed002_positional_encoding(50, 128)[:, :2], rtol=0, atol=1e-15)


# --------------------------------------------------------------------------------------
# Seed 003: notebook notes, base 1e6, binary representation, wavelengths.
# --------------------------------------------------------------------------------------


def seed003_encoding(idx, d):
    embedding_values = []
    for i in range(d // 2):
        embedding_values.append(np.sin(idx / (1000000 ** (2 * i / d))))
        embedding_values.append(np.cos(idx / (1000000 ** (2 * i / d))))
    return np.array(embedding_values)


def seed003_final():
    final_embedding = []
    for i in range(100):
        final_embedding.append(seed003_encoding(i, 512))
    return np.array(final_embedding)


def test_seed003_matrix_with_base_one_million():
    x = seed003_final()
    P = pe_core.positional_encoding(100, 512, n=1e6)
    assert P.shape == x.shape == (100, 512)
    np.testing.assert_allclose(P, x, rtol=0, atol=1e-12)
    # The transposed drawing is the same matrix.
    np.testing.assert_array_equal(P.T, pe_core.positional_encoding(100, 512, n=1e6).T)


def test_seed003_binary_representation():
    x = seed003_binary_representation(range(100)).astype(float)
    B = pe_core.binary_encoding(100, 10)
    assert B.shape == x.shape == (100, 10)
    np.testing.assert_array_equal(B, x)
    # Index 0 of the embedding dimension has the highest frequency: it flips every step.
    assert np.all(np.abs(np.diff(B[:, 0])) == 1)


@pytest.mark.parametrize(("d", "n"), [(512, 1e6), (128, 10000), (10, 100)])
def test_seed003_wavelengths(d, n):
    i = np.arange(d // 2)
    np.testing.assert_allclose(pe_core.wavelengths(d, n), 2 * np.pi * n ** (2 * i / d), rtol=1e-14, atol=0)


def test_seed003_first_and_last_pairs():
    # "index i = 0: frequency 1, wavelength 2 pi"; the last pair approaches 1/n.
    d, n = 512, 1e6
    w = pe_core.frequencies(d, n)
    assert w[0] == 1.0
    np.testing.assert_allclose(pe_core.wavelengths(d, n)[0], 2 * np.pi, rtol=1e-15)
    assert 1 / n < w[-1] < 1.1 / n


# --------------------------------------------------------------------------------------
# Seed 004: blog post with a per-column formula and the 2x2 rotation W.
# --------------------------------------------------------------------------------------


def seed004_get_sinusoidal_embedding(position, d_model):
    embedding = np.zeros(d_model)
    for i in range(d_model):
        if i % 2 == 0:  # even indices
            embedding[i] = np.sin(position / (10000 ** (i / d_model)))
        else:  # odd indices
            embedding[i] = np.cos(position / (10000 ** ((i - 1) / d_model)))
    return embedding


def seed004_generate_positional_embeddings(seq_length, d_model):
    embeddings = np.zeros((seq_length, d_model))
    for pos in range(seq_length):
        embeddings[pos] = seed004_get_sinusoidal_embedding(pos, d_model)
    return embeddings


@pytest.mark.parametrize(("L", "d"), [(50, 128), (50, 7), (9, 1), (12, 3)])
def test_seed004_per_column_formula(L, d):
    expected = seed004_generate_positional_embeddings(L, d)
    np.testing.assert_allclose(pe_core.positional_encoding(L, d, layout="interleaved"), expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("theta", [0.0, 0.3, -1.2, np.pi / 2, 2.5, 100.0])
def test_seed004_rotation_W(theta):
    W = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
    np.testing.assert_allclose(pe_core.rotation(theta).T, W, rtol=0, atol=0)
    for t in (0.0, 0.7, -2.0, 5.5):
        column = np.array([np.sin(t), np.cos(t)])
        np.testing.assert_allclose(W @ column, [np.sin(t + theta), np.cos(t + theta)], rtol=0, atol=1e-14)
        # pe_core's W acts on rows: [sin t, cos t] @ rotation(theta)
        np.testing.assert_allclose(column @ pe_core.rotation(theta), W @ column, rtol=0, atol=1e-15)


def test_seed004_W_is_the_pair_block_of_the_transition_matrix():
    # W(lambda_i K) on pair i: block (2i, 2i+1) of M(K), transposed to act on rows.
    d, K = 128, 7
    M = pe_core.transition_matrix(K, d)
    w = pe_core.frequencies(d)
    for i in (0, 1, 30, 63):
        theta = w[i] * K
        W = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
        np.testing.assert_allclose(M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2], W.T, rtol=0, atol=1e-15)
