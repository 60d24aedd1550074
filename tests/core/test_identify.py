"""pe_core.identify_encoding tells which variant a matrix is, from the matrix alone.

Every matrix here is built independently of pe_core: the seed loops re-typed from the
documents (000's per-column loop, 001's angle rates and [sin | cos], 002's `2*i` loop) and
a vectorised formula written from the definitions in PRODUCT.md. Only the round trip of
the property test uses pe_core.positional_encoding, to rebuild what was identified.

Cases avoid bases where two readings are equally round: a tensor2tensor base n' is the
paper base n' ** (d / (2 (m - 1))), and for d = 4, say, tensor2tensor 100 *is* paper 10000.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.engineer_files import WRITERS, cosine_first, read_back, savetxt, tutorial_encoding

import pe_core
from pe_core.value_precision import value_precision

# --------------------------------------------------------------------------------------
# Independent builders.
# --------------------------------------------------------------------------------------


def seed000_loop(L: int, d: int, n: float, start: int = 0) -> np.ndarray:
    """Seed 000's loop, written per column (seed 004) so that an odd d ends with a sine."""
    P = np.zeros((L, d))
    for k in range(L):
        for column in range(d):
            i = column // 2
            denominator = np.power(n, 2 * i / d)
            angle = (start + k) / denominator
            P[k, column] = np.sin(angle) if column % 2 == 0 else np.cos(angle)
    return P


def seed001_concatenated(L: int, d: int, n: float, start: int = 0) -> np.ndarray:
    """Seed 001's notebook: angle rates min_rate ** linspace(0, 1, depth // 2), [sin | cos]."""
    min_rate = 1 / n
    angle_rate_exponents = np.linspace(0, 1, d // 2)
    angle_rates = min_rate ** (angle_rate_exponents)
    positions = start + np.arange(L)
    angle_rads = (positions[:, np.newaxis]) * angle_rates[np.newaxis, :]
    return np.concatenate([np.sin(angle_rads), np.cos(angle_rads)], axis=-1)


def seed002_bug(max_position: int, d_model: int, start: int = 0) -> np.ndarray:
    """Seed 002's loop as published: i already steps by 2 and is doubled again."""
    pos_enc = np.zeros((max_position, d_model))
    for row in range(max_position):
        pos = start + row
        for i in range(0, d_model, 2):
            pos_enc[row, i] = np.sin(pos / (10000 ** (2 * i / d_model)))
            if i + 1 < d_model:
                pos_enc[row, i + 1] = np.cos(pos / (10000 ** (2 * i / d_model)))
    return pos_enc


def encoding(L: int, d: int, n: float, start: int, layout: str, convention: str) -> np.ndarray:
    """Any variant, vectorised from the definitions (m = ceil(d/2) frequencies)."""
    m = (d + 1) // 2
    i = np.arange(m)
    if convention == "paper":
        w = 1.0 / n ** (2 * i / d)
    else:
        w = 1.0 / n ** (i / max(m - 1, 1))
    theta = np.outer(start + np.arange(L), w)
    sines, cosines = np.sin(theta), np.cos(theta[:, : d // 2])
    if layout == "concatenated":
        return np.concatenate([sines, cosines], axis=1)
    P = np.empty((L, d))
    P[:, 0::2] = sines
    P[:, 1::2] = cosines
    return P


def to_bfloat16(P: np.ndarray) -> np.ndarray:
    """Round float32 to its top 16 bits, to nearest with ties to even, with integer ops."""
    bits = P.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def float32_arithmetic(L: int, d: int, start: int = 0) -> np.ndarray:
    """The usual PyTorch recipe, every step in float32: exp(2i * -ln(10000)/d), interleaved."""
    position = np.arange(L, dtype=np.float32)[:, None] + np.float32(start)
    div_term = np.exp(np.arange(0, d, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / d))
    P = np.zeros((L, d), dtype=np.float32)
    P[:, 0::2] = np.sin(position * div_term)
    P[:, 1::2] = np.cos(position * div_term)
    return P


def assert_identified(result: dict, *, layout, convention, n, start, transposed=False, rel=1e-9):
    assert result["layout"] == layout, result["verdict"]
    assert result["convention"] == convention, result["verdict"]
    assert result["n"] == pytest.approx(n, rel=rel), result["verdict"]
    assert result["start"] == start, result["verdict"]
    assert result["transposed"] is transposed, result["verdict"]
    assert isinstance(result["n"], float) and isinstance(result["start"], int)


# --------------------------------------------------------------------------------------
# Exact (float64) variants.
# --------------------------------------------------------------------------------------

FLOAT64_CASES = [
    # L, d, n, start, layout, convention
    (50, 128, 10000.0, 0, "interleaved", "paper"),
    (100, 64, 12345.0, 7, "interleaved", "paper"),
    (200, 65, 1e6, 1000, "interleaved", "paper"),
    (500, 33, 100.0, 7, "concatenated", "paper"),
    (300, 96, 12345.0, 1000, "concatenated", "tensor2tensor"),
    (120, 63, 1e6, 7, "interleaved", "tensor2tensor"),
    (80, 128, 100.0, 0, "interleaved", "tensor2tensor"),
    (60, 7, 10000.0, 1000, "concatenated", "paper"),
]


@pytest.mark.parametrize(("L", "d", "n", "start", "layout", "convention"), FLOAT64_CASES)
def test_float64_variants(L, d, n, start, layout, convention):
    result = pe_core.identify_encoding(encoding(L, d, n, start, layout, convention))
    assert_identified(result, layout=layout, convention=convention, n=n, start=start)
    assert result["max_abs_error"] < 1e-11
    assert result["dtype_guess"] == "float64"
    other = "tensor2tensor" if convention == "paper" else "paper"
    assert f"Equivalently {other} frequencies" in result["verdict"]


@pytest.mark.parametrize(("L", "d", "n", "start"), [(4, 4, 100.0, 0), (50, 128, 10000.0, 0), (30, 9, 1e6, 7)])
def test_seed000_loop(L, d, n, start):
    result = pe_core.identify_encoding(seed000_loop(L, d, n, start))
    assert_identified(result, layout="interleaved", convention="paper", n=n, start=start)


@pytest.mark.parametrize(("L", "d", "n", "start"), [(50, 512, 10000.0, 0), (100, 64, 100.0, 1000)])
def test_seed001_notebook(L, d, n, start):
    result = pe_core.identify_encoding(seed001_concatenated(L, d, n, start))
    assert_identified(result, layout="concatenated", convention="tensor2tensor", n=n, start=start)


@pytest.mark.parametrize(("L", "d", "start"), [(50, 128, 0), (100, 127, 7), (60, 64, 1000)])
def test_seed002_bug_is_named(L, d, start):
    result = pe_core.identify_encoding(seed002_bug(L, d, start))
    assert_identified(result, layout="interleaved", convention="paper", n=1e8, start=start)
    assert "`2*i` bug of seed 002" in result["verdict"]
    assert "1e8 = 10000^2" in result["verdict"]
    # The correct loop with the same base is not called a bug.
    correct = pe_core.identify_encoding(seed000_loop(L, d, 10000.0, start))
    assert correct["n"] == pytest.approx(10000.0) and "bug" not in correct["verdict"]


def test_single_pair_has_no_base():
    result = pe_core.identify_encoding(encoding(100, 2, 10000.0, 5, "interleaved", "paper"))
    assert result["convention"] == "paper" and result["n"] is None and result["start"] == 5
    assert "n cannot be told" in result["verdict"]


def test_three_dimensions_use_the_lone_sine():
    result = pe_core.identify_encoding(encoding(100, 3, 100.0, 5, "interleaved", "paper"))
    assert_identified(result, layout="interleaved", convention="paper", n=100.0, start=5, rel=1e-6)


# --------------------------------------------------------------------------------------
# Round-off: float32, float16, bfloat16, CSV decimals, float32 arithmetic.
# --------------------------------------------------------------------------------------

ROUNDED_CASES = [
    # L, d, n, start, layout, convention, cast, dtype_guess, largest cast error
    (300, 64, 12345.0, 1000, "interleaved", "paper", lambda P: P.astype(np.float32), "float32", 2**-25),
    (150, 96, 12345.0, 7, "concatenated", "tensor2tensor", lambda P: P.astype(np.float32), "float32", 2**-25),
    (100, 128, 10000.0, 7, "concatenated", "paper", lambda P: P.astype(np.float16), "float16", 2**-12),
    (250, 64, 1e6, 1000, "interleaved", "tensor2tensor", lambda P: P.astype(np.float16), "float16", 2**-12),
    (500, 32, 100.0, 0, "interleaved", "paper", lambda P: P.astype(np.float16), "float16", 2**-12),
    (60, 33, 10000.0, 1000, "interleaved", "paper", lambda P: P.astype(np.float16), "float16", 2**-12),
    (200, 128, 10000.0, 1000, "interleaved", "paper", to_bfloat16, "bfloat16", 2**-9),
    (100, 48, 1e6, 7, "concatenated", "tensor2tensor", to_bfloat16, "bfloat16", 2**-9),
    (400, 64, 100.0, 0, "concatenated", "paper", to_bfloat16, "bfloat16", 2**-9),
]


@pytest.mark.parametrize(
    ("L", "d", "n", "start", "layout", "convention", "cast", "dtype_guess", "cast_error"), ROUNDED_CASES
)
def test_rounded_variants(L, d, n, start, layout, convention, cast, dtype_guess, cast_error):
    M = cast(encoding(L, d, n, start, layout, convention))
    result = pe_core.identify_encoding(M)
    assert_identified(result, layout=layout, convention=convention, n=n, start=start, rel=0.01)
    assert result["dtype_guess"] == dtype_guess
    assert result["max_abs_error"] <= 1.5 * cast_error
    assert f"{result['max_abs_error']:.1e}" in result["verdict"] and dtype_guess in result["verdict"]


def test_float16_seed002_bug():
    result = pe_core.identify_encoding(seed002_bug(100, 128, 7).astype(np.float16))
    assert_identified(result, layout="interleaved", convention="paper", n=1e8, start=7, rel=0.01)
    assert "`2*i` bug" in result["verdict"]


@pytest.mark.parametrize("start", [0, 1000])
def test_float32_arithmetic_is_the_paper(start):
    result = pe_core.identify_encoding(float32_arithmetic(300, 64, start))
    assert_identified(result, layout="interleaved", convention="paper", n=10000.0, start=start)
    assert result["dtype_guess"] == "float32"


def test_csv_with_six_decimals():
    result = pe_core.identify_encoding(np.round(encoding(60, 32, 10000.0, 5, "interleaved", "paper"), 6))
    assert_identified(result, layout="interleaved", convention="paper", n=10000.0, start=5)
    assert result["dtype_guess"] == "6 decimals"


# --------------------------------------------------------------------------------------
# Transposed matrices.
# --------------------------------------------------------------------------------------


def test_transposed_float64():
    result = pe_core.identify_encoding(encoding(300, 64, 100.0, 0, "interleaved", "tensor2tensor").T)
    assert_identified(
        result, layout="interleaved", convention="tensor2tensor", n=100.0, start=0, transposed=True
    )
    assert "transposed" in result["verdict"]


def test_transposed_float16_concatenated():
    M = encoding(200, 128, 10000.0, 1000, "concatenated", "paper").T.astype(np.float16)
    result = pe_core.identify_encoding(M)
    assert_identified(
        result, layout="concatenated", convention="paper", n=10000.0, start=1000, transposed=True, rel=0.01
    )


# --------------------------------------------------------------------------------------
# Not encodings: a clear verdict, no exception.
# --------------------------------------------------------------------------------------

GARBAGE = {
    "random": np.random.default_rng(0).uniform(-1, 1, (100, 64)),
    "zeros": np.zeros((100, 64)),
    "ones": np.ones((100, 64)),
    "one column": np.random.default_rng(0).uniform(-1, 1, (100, 1)),
    "threes": np.full((100, 64), 3.0),
    "tripled": 3.0 * encoding(100, 64, 10000.0, 0, "interleaved", "paper"),
    "halved": 0.5 * encoding(100, 64, 10000.0, 0, "interleaved", "paper"),
    "reversed": encoding(100, 64, 10000.0, 0, "interleaved", "paper")[::-1],
    "shuffled columns": encoding(100, 64, 10000.0, 0, "interleaved", "paper")[
        :, np.random.default_rng(1).permutation(64)
    ],
}


@pytest.mark.parametrize("name", list(GARBAGE))
def test_garbage_is_rejected(name):
    result = pe_core.identify_encoding(GARBAGE[name])
    assert result["convention"] is None
    assert result["verdict"].startswith("Not a sinusoidal positional encoding: ")
    assert "differs by up to" in result["verdict"] and "row" in result["verdict"]
    assert result["max_abs_error"] > 0.1


def test_garbage_verdicts_say_why():
    verdict = {name: pe_core.identify_encoding(M)["verdict"] for name, M in GARBAGE.items()}
    assert "unit circle" in verdict["random"]
    assert "every value is 0" in verdict["zeros"] and "every value is 1" in verdict["ones"]
    assert "single column" in verdict["one column"]
    assert "every value is 3" in verdict["threes"]
    assert "outside" not in verdict["tripled"] and "within [-1, 1]" in verdict["tripled"]
    assert "scaled by 0.5" in verdict["halved"]
    assert "backwards" in verdict["reversed"]


def test_one_wrong_value_is_located():
    M = encoding(60, 32, 10000.0, 5, "interleaved", "paper")
    M[10, 7] += 0.3
    result = pe_core.identify_encoding(M)
    assert result["convention"] is None
    assert (result["layout"], result["n"], result["start"]) == ("interleaved", 10000.0, 5)
    assert result["max_abs_error"] == pytest.approx(0.3)
    assert "row 10, column 7" in result["verdict"]


def test_location_is_in_the_users_orientation():
    M = encoding(60, 32, 10000.0, 5, "interleaved", "paper")
    M[10, 7] += 0.3
    assert "row 7, column 10" in pe_core.identify_encoding(M.T)["verdict"]


@pytest.mark.parametrize(
    ("M", "message"),
    [
        (np.full((10, 4), np.nan), "NaN"),
        (np.array([[0.0, np.inf], [1.0, 0.0]]), "infinite"),
        (np.zeros((2, 3, 4)), "2-D"),
        (np.zeros((0, 4)), "empty"),
        ([["a", "b"]], "real numbers"),
        (np.broadcast_to(np.float64(0.0), (8193, 4096)), "limit"),
    ],
)
def test_invalid_input_raises(M, message):
    with pytest.raises(ValueError, match=message):
        pe_core.identify_encoding(M)


# --------------------------------------------------------------------------------------
# Round trip over the whole family.
# --------------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(
    half_d=st.integers(min_value=2, max_value=128),
    log10_n=st.floats(min_value=1.0, max_value=8.0),
    L=st.integers(min_value=32, max_value=300),
    start=st.integers(min_value=0, max_value=2000),
    layout=st.sampled_from(pe_core.LAYOUTS),
    convention=st.sampled_from(pe_core.CONVENTIONS),
)
def test_identified_variant_rebuilds_the_matrix(half_d, log10_n, L, start, layout, convention):
    d = 2 * half_d
    M = encoding(L, d, 10.0**log10_n, start, layout, convention)
    result = pe_core.identify_encoding(M)
    assert result["convention"] is not None, result["verdict"]
    assert result["layout"] == layout and result["start"] == start and not result["transposed"]
    rebuilt = pe_core.positional_encoding(
        L, d, result["n"], layout=result["layout"], convention=result["convention"], start=result["start"]
    )
    assert np.max(np.abs(rebuilt - M)) < 1e-9


# --------------------------------------------------------------------------------------
# Tables as libraries export them: fairseq's SinusoidalPositionalEmbedding.
# --------------------------------------------------------------------------------------


def fairseq_get_embedding(num_embeddings: int, embedding_dim: int, padding_idx: int | None) -> np.ndarray:
    """fairseq's SinusoidalPositionalEmbedding.get_embedding, re-typed in NumPy (float64)."""
    half_dim = embedding_dim // 2
    emb = np.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim, dtype=np.float64) * -emb)
    emb = np.arange(num_embeddings, dtype=np.float64)[:, None] * emb[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=1).reshape(num_embeddings, -1)
    if embedding_dim % 2 == 1:
        emb = np.concatenate([emb, np.zeros((num_embeddings, 1))], axis=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb


def assert_fairseq(result: dict, *, padding_idx: int | None, d: int, transposed: bool = False, rel: float = 1e-9):
    assert_identified(
        result, layout="concatenated", convention="tensor2tensor", n=10000.0, start=0, transposed=transposed, rel=rel
    )
    assert result["closest_convention"] == "tensor2tensor"
    padding_rows = [] if padding_idx is None else [padding_idx]
    filler_columns = [d - 1] if d % 2 else []
    if transposed:
        padding_rows, filler_columns = filler_columns, padding_rows
    assert (result["zero_rows"], result["zero_columns"]) == (padding_rows, filler_columns), result["verdict"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("padding_idx", [1, 0, None])
@pytest.mark.parametrize(("L", "d"), [(100, 16), (100, 17), (300, 512), (300, 513)])
def test_fairseq_table_is_named(L, d, padding_idx, dtype):
    result = pe_core.identify_encoding(fairseq_get_embedding(L, d, padding_idx).astype(dtype))
    assert_fairseq(result, padding_idx=padding_idx, d=d)
    assert result["dtype_guess"] == np.dtype(dtype).name
    if padding_idx is not None or d % 2:
        assert "fairseq's SinusoidalPositionalEmbedding" in result["verdict"]
    if padding_idx is not None:
        assert f"row {padding_idx} is all zeros (a padding index's position" in result["verdict"]
        assert f"real positions use rows {padding_idx + 1} onwards" in result["verdict"]
    if d % 2:
        assert f"the last column (column {d - 1}) is a zero filler (d = {d} is odd" in result["verdict"]


def test_transposed_fairseq_table_says_so_in_its_own_rows_and_columns():
    result = pe_core.identify_encoding(fairseq_get_embedding(200, 65, 1).astype(np.float32).T)
    assert_fairseq(result, padding_idx=1, d=65, transposed=True)
    assert "column 1 is all zeros" in result["verdict"] and "the last row (row 64)" in result["verdict"]


def test_small_fairseq_table_is_tensor2tensor_although_paper_1e8_is_as_round():
    # d = 4: tensor2tensor 10000 is paper 10000^2; fairseq's zeros decide the reading.
    result = pe_core.identify_encoding(fairseq_get_embedding(40, 4, 1))
    assert_fairseq(result, padding_idx=1, d=4)
    assert "bug" not in result["verdict"]


@settings(max_examples=60, deadline=None)
@given(
    d=st.integers(min_value=8, max_value=257),
    L=st.integers(min_value=32, max_value=300),
    padding_fraction=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    float32=st.booleans(),
)
# A slowest pair that reaches its phase at no allowed position (a bare numpy error once).
@example(d=39, L=38, padding_fraction=13.5 / 38, float32=False)
# Many wraps to follow at once (37 s once, 0.7 s since MAX_BRANCHES).
@example(d=201, L=33, padding_fraction=3.5 / 33, float32=False)
def test_fairseq_table_with_any_padding_index(d, L, padding_fraction, float32):
    padding_idx = int(padding_fraction * L)
    M = fairseq_get_embedding(L, d, padding_idx)
    result = pe_core.identify_encoding(M.astype(np.float32) if float32 else M)
    assert_fairseq(result, padding_idx=padding_idx, d=d)
    # What is not set aside is the encoding of width d minus the filler, to round-off.
    width = d - d % 2
    rebuilt = pe_core.positional_encoding(L, width, 10000.0, layout="concatenated", convention="tensor2tensor")
    rebuilt[padding_idx] = 0.0
    assert np.max(np.abs(M[:, :width] - rebuilt)) < 1e-12


#: Zeros where fairseq writes none (an index into a fairseq-style table of 100 x 64).
ZEROS_NO_LIBRARY_WRITES = {
    "three zero rows": np.s_[[1, 5, 9]],
    "most rows zero": np.s_[3:],
    "zero column in the middle": np.s_[:, 10],
    "zero last column of an even width": np.s_[:, -1],
}


@pytest.mark.parametrize("name", list(ZEROS_NO_LIBRARY_WRITES))
def test_zeros_no_library_writes_are_not_set_aside(name):
    M = fairseq_get_embedding(100, 64, None)
    M[ZEROS_NO_LIBRARY_WRITES[name]] = 0.0
    result = pe_core.identify_encoding(M)
    assert result["convention"] is None, result["verdict"]
    assert result["verdict"].startswith("Not a sinusoidal positional encoding: ")
    assert result["max_abs_error"] > 0.1


def test_random_values_with_a_zero_row_are_rejected():
    M = np.random.default_rng(0).uniform(-1, 1, (100, 65))
    M[1] = 0.0
    M[:, -1] = 0.0
    result = pe_core.identify_encoding(M)
    assert result["convention"] is None and result["closest_convention"] is None
    assert "unit circle" in result["verdict"]


def test_a_wrong_value_beside_fairseqs_zeros_is_located():
    M = fairseq_get_embedding(100, 65, 1)
    M[10, 7] += 1e-3
    result = pe_core.identify_encoding(M)
    assert result["convention"] is None and result["closest_convention"] == "tensor2tensor"
    assert (result["layout"], result["n"], result["start"]) == ("concatenated", 10000.0, 0)
    assert (result["zero_rows"], result["zero_columns"]) == ([1], [64])
    assert result["max_abs_error"] == pytest.approx(1e-3)
    assert "row 10, column 7" in result["verdict"] and "row 1 is all zeros" in result["verdict"]


# --------------------------------------------------------------------------------------
# closest_convention: the convention of the variant the error is measured against.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("L", "d", "n", "start", "layout", "convention"), FLOAT64_CASES)
def test_closest_convention_of_a_match_is_its_convention(L, d, n, start, layout, convention):
    result = pe_core.identify_encoding(encoding(L, d, n, start, layout, convention))
    assert result["closest_convention"] == result["convention"] == convention
    assert (result["zero_rows"], result["zero_columns"]) == ([], [])


@pytest.mark.parametrize(
    ("layout", "convention", "n"),
    [("interleaved", "paper", 10000.0), ("concatenated", "tensor2tensor", 10000.0), ("concatenated", "paper", 1e6)],
)
def test_closest_convention_of_a_near_miss(layout, convention, n):
    M = encoding(200, 64, n, 3, layout, convention)
    M[40, 9] -= 1e-3
    result = pe_core.identify_encoding(M)
    assert result["convention"] is None
    assert result["closest_convention"] == convention, result["verdict"]
    assert (result["layout"], result["start"]) == (layout, 3) and result["n"] == pytest.approx(n)
    assert result["max_abs_error"] == pytest.approx(1e-3)
    rebuilt = pe_core.positional_encoding(200, 64, result["n"], layout=layout, convention=convention, start=3)
    assert np.max(np.abs(rebuilt - M)) == pytest.approx(result["max_abs_error"])


def test_closest_convention_is_none_when_nothing_was_fitted():
    for M in GARBAGE.values():
        assert pe_core.identify_encoding(M)["closest_convention"] is None


# --------------------------------------------------------------------------------------
# Files as engineers make them: the PyTorch tutorial's float32 table, however it was saved.
# --------------------------------------------------------------------------------------

TUTORIAL_READING = ("interleaved", "paper", 10000.0, 0)
#: What the verdict must lead with for the tutorial's table, whatever file held it.
TUTORIAL_VERDICT = "Interleaved layout, paper frequencies (w_i = n^(-2i/d)) with n = 10000, start 0: "


def reading(result: dict) -> tuple:
    return result["layout"], result["convention"], result["n"], result["start"]


def test_the_tutorial_table_is_torchs():
    """The NumPy re-typing against the tutorial's own torch code: the same float32 steps, so
    the same table up to the last bits of each library's exp, sin and cos (an angle up to 99
    rad moves by 99 ulps of its frequency); and torch's own table reads the same from its
    .npy and from its CSV."""
    import torch

    max_len, d_model = 100, 128
    position = torch.arange(max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, 1, d_model)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)
    ours = tutorial_encoding(max_len, d_model)
    assert pe.dtype == torch.float32 and ours.dtype == np.float32
    np.testing.assert_allclose(pe[:, 0].numpy(), ours, rtol=0, atol=100 * 2.0**-23)
    for name in ("pe_buffer.npy", "savetxt_6f.csv", "pandas.csv"):
        result = pe_core.identify_encoding(read_back(name, WRITERS[name](pe[:, 0].numpy())))
        assert reading(result) == TUTORIAL_READING and result["verdict"].startswith(TUTORIAL_VERDICT), name


@pytest.mark.parametrize("name", list(WRITERS))
def test_tutorial_table_reads_the_same_from_every_file(name):
    """Saved with np.save, np.savetxt at 6 decimals to 18 digits, or pandas' to_csv, and read
    back by NumPy or pandas themselves: one reading, the round base leading."""
    M = read_back(name, WRITERS[name](tutorial_encoding()))
    assert M.shape == (100, 128)
    result = pe_core.identify_encoding(M)
    assert reading(result) == TUTORIAL_READING, result["verdict"]
    assert result["verdict"].startswith(TUTORIAL_VERDICT), result["verdict"]
    # The other reading of the same frequencies is named, not led with (even d: 10000^(-2i/128)
    # = 8659.64^(-i/63)).
    assert "Equivalently tensor2tensor frequencies with n = 8659.64." in result["verdict"]
    # Its error is float32 arithmetic's (6 decimals alone would be within 1e-6), in every file.
    assert result["dtype_guess"] == "float32"
    assert result["max_abs_error"] < 1e-5


@settings(max_examples=25, deadline=None)
@given(
    L=st.integers(min_value=40, max_value=300),
    half_d=st.integers(min_value=2, max_value=64),
    base=st.sampled_from([100.0, 500.0, 1000.0, 10000.0, 20000.0, 1e5, 1e6]),
    start=st.sampled_from([0, 1, 7, 100]),
    layout=st.sampled_from(pe_core.LAYOUTS),
    name=st.sampled_from(list(WRITERS)),
)
def test_any_file_of_a_float32_table_gives_the_reading_of_its_npy(L, half_d, base, start, layout, name):
    """The same float32 matrix, whatever the file: the same reading, with the base written."""
    pe = tutorial_encoding(L, 2 * half_d, base, start=start, layout=layout)
    from_npy = pe_core.identify_encoding(pe.astype(np.float64))
    from_file = pe_core.identify_encoding(read_back(name, WRITERS[name](pe)))
    assert reading(from_npy) == (layout, "paper", base, start), from_npy["verdict"]
    assert reading(from_file) == reading(from_npy), from_file["verdict"]


@pytest.mark.parametrize(
    ("name", "expected", "float32_possible"),
    [
        ("pe.npy", "float32", True),
        ("savetxt_9g.csv", "float32", True),  # 9 digits hold every float32 value
        ("savetxt_18e.csv", "float32", True),
        ("pandas.csv", "float32", True),  # the shortest text that reads back as that float32
        ("savetxt_6f.csv", "6 decimals", True),  # coarser than float32: cannot rule it out
        ("savetxt_7g.csv", "7 significant digits", True),
    ],
)
def test_precision_of_a_float32_table_is_read_from_its_values(name, expected, float32_possible):
    precision = value_precision(read_back(name, WRITERS[name](tutorial_encoding())))
    assert (precision.name, precision.float32_possible) == (expected, float32_possible)


@pytest.mark.parametrize(
    ("fmt", "expected", "float32_possible"),
    [
        ("%.9g", "9 significant digits", False),  # 9 digits of float64 values are no float32 numbers
        ("%.18e", "float64", False),
        ("%.6f", "6 decimals", True),
        ("%.7g", "7 significant digits", True),
    ],
)
def test_precision_of_a_float64_table_printed(fmt, expected, float32_possible):
    P = encoding(100, 128, 10000.0, 0, "interleaved", "paper")
    precision = value_precision(np.loadtxt(io.BytesIO(savetxt(P, fmt)), delimiter=","))
    assert (precision.name, precision.float32_possible) == (expected, float32_possible)
    # Whatever it says, the table reads as itself.
    result = pe_core.identify_encoding(np.loadtxt(io.BytesIO(savetxt(P, fmt)), delimiter=","))
    assert reading(result) == TUTORIAL_READING, result["verdict"]


def test_a_near_miss_in_a_csv_is_still_a_near_miss():
    pe = tutorial_encoding()
    pe[30, 9] += 1e-3
    result = pe_core.identify_encoding(read_back("savetxt_6f.csv", savetxt(pe, "%.6f")))
    assert result["convention"] is None and result["closest_convention"] == "paper"
    assert (result["layout"], result["n"], result["start"]) == ("interleaved", 10000.0, 0)
    assert "row 30, column 9" in result["verdict"]


# --------------------------------------------------------------------------------------
# Each pair's cosine first: a common bug, named as such.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_cosine_first_is_named(layout, transposed):
    swapped = cosine_first(tutorial_encoding(100, 128, layout=layout), layout).astype(np.float64)
    result = pe_core.identify_encoding(swapped.T if transposed else swapped)
    assert reading(result) == (layout, "paper", 10000.0, 0), result["verdict"]
    assert result["swapped"] is True and result["transposed"] is transposed
    assert "swapped" in result["verdict"] and "backwards" not in result["verdict"]
    assert ("(cos, sin, cos, sin, ...)" if layout == "interleaved" else "[cos | sin]") in result["verdict"]
    # What it names rebuilds the table: the variant with its columns traded.
    rebuilt = pe_core.positional_encoding(100, 128, 10000.0, layout=layout)[:, pe_core.swapped_columns(128, layout)]
    assert np.max(np.abs(rebuilt - swapped)) <= result["max_abs_error"] <= 1e-4


@settings(max_examples=15, deadline=None)
@given(
    L=st.integers(min_value=40, max_value=300),
    half_d=st.integers(min_value=2, max_value=64),
    base=st.sampled_from([100.0, 1000.0, 10000.0, 1e5]),
    start=st.sampled_from([0, 3, 100]),
    layout=st.sampled_from(pe_core.LAYOUTS),
)
def test_any_cosine_first_table_gets_the_reading_of_the_table(L, half_d, base, start, layout):
    pe = tutorial_encoding(L, 2 * half_d, base, start=start, layout=layout)
    result = pe_core.identify_encoding(cosine_first(pe, layout).astype(np.float64))
    assert reading(result) == (layout, "paper", base, start) and result["swapped"], result["verdict"]


def test_cosine_first_near_miss_is_drawn_against_the_swapped_variant():
    M = cosine_first(encoding(60, 32, 10000.0, 5, "interleaved", "paper"))
    M[10, 7] += 1e-3
    result = pe_core.identify_encoding(M)
    assert result["convention"] is None and result["closest_convention"] == "paper" and result["swapped"]
    assert "cosine first in each pair" in result["verdict"] and "row 10, column 7" in result["verdict"]


@pytest.mark.parametrize("d", [2, 64])
def test_negated_sines_still_run_backwards(d):
    M = encoding(100, d, 10000.0, 0, "interleaved", "paper")
    M[:, 0::2] *= -1
    result = pe_core.identify_encoding(M)
    assert result["convention"] is None and not result["swapped"]
    assert "backwards" in result["verdict"]


@given(half_d=st.integers(min_value=1, max_value=64), layout=st.sampled_from(pe_core.LAYOUTS))
def test_swapped_columns_trade_each_pairs_sine_and_cosine(half_d, layout):
    d = 2 * half_d
    order = pe_core.swapped_columns(d, layout)
    np.testing.assert_array_equal(order[order], np.arange(d))  # its own inverse
    P = encoding(5, d, 100.0, 3, layout, "paper")
    np.testing.assert_array_equal(P[:, order], cosine_first(P, layout))


def test_swapped_columns_need_an_even_d():
    with pytest.raises(ValueError, match="even"):
        pe_core.swapped_columns(7)
