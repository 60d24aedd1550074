"""Every invalid argument of pe_core raises ValueError with a message a person can act on.

Warnings are errors in this file: a function that lets NumPy print a bare RuntimeWarning
(or any other warning) on the way to its ValueError fails here.

Each case here that once found a pe_core bug (float d, unvalidated d and arguments,
NumPy warnings on the way to a ValueError, complex input, empty edges, messages naming
the wrong argument) now guards its fix.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import pe_core
from pe_core import MAX_CELLS, MAX_D, MAX_LENGTH, MAX_POSITION


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def raises(match: str):
    return pytest.raises(ValueError, match=match)


def literal(text: str) -> str:
    return re.escape(text)


P8 = pe_core.positional_encoding(10, 8)

# --------------------------------------------------------------------------------------
# d, the embedding size
# --------------------------------------------------------------------------------------

#: Every public function that takes d, as a call with d left open.
D_CALLS = {
    "frequencies": lambda d: pe_core.frequencies(d),
    "wavelengths": lambda d: pe_core.wavelengths(d),
    "pair_count": lambda d: pe_core.pair_count(d),
    "angles": lambda d: pe_core.angles(4, d),
    "column_pairs": lambda d: pe_core.column_pairs(d),
    "positional_encoding": lambda d: pe_core.positional_encoding(4, d),
    "transition_matrix": lambda d: pe_core.transition_matrix(1, d),
    "dot_by_offset": lambda d: pe_core.dot_by_offset(1, d),
    "sse_by_offset": lambda d: pe_core.sse_by_offset(1, d),
    "column_groups": lambda d: pe_core.column_groups(d, "interleaved", 8),
    "encoding_block_average": lambda d: pe_core.encoding_block_average(4, d),
    "angle_block_mean": lambda d: pe_core.angle_block_mean(4, d),
}

D_NAME = r"d \(the embedding size\) must be "
BAD_D = [
    (0, D_NAME + "at least 1, got 0"),
    (-2, D_NAME + "at least 1, got -2"),
    (2.5, D_NAME + r"a whole number, got 2\.5"),
    ("8", D_NAME + "a whole number, got str '8'"),
    (True, D_NAME + "a whole number, got True"),
    (None, D_NAME + "a whole number, got None"),
    ([8], D_NAME + r"a whole number, got list \[8\]"),
    (float("nan"), D_NAME + "a finite whole number, got nan"),
    (float("inf"), D_NAME + "a finite whole number, got inf"),
    (MAX_D + 2, D_NAME + "at most 16,384, got 16,386"),
]


@pytest.mark.parametrize("name", D_CALLS)
@pytest.mark.parametrize(("d", "match"), BAD_D, ids=[repr(d) for d, _ in BAD_D])
def test_bad_d(name, d, match):
    with raises(match):
        D_CALLS[name](d)


@pytest.mark.parametrize("name", D_CALLS)
def test_numpy_integer_d_is_accepted(name):
    assert D_CALLS[name](np.int64(8)) is not None
    assert D_CALLS[name](np.int32(8)) is not None


def test_the_largest_d_is_accepted():
    assert pe_core.pair_count(MAX_D) == MAX_D // 2
    assert pe_core.frequencies(np.int64(MAX_D)).shape == (MAX_D // 2,)
    assert pe_core.positional_encoding(2, MAX_D).shape == (2, MAX_D)


@pytest.mark.parametrize("name", list(D_CALLS))
@pytest.mark.parametrize("d", [8.0, np.float64(8.0)], ids=["float", "float64"])
def test_whole_float_d_is_accepted(name, d):
    # check_int accepts a float holding a whole number; every function must then use the int.
    assert D_CALLS[name](d) is not None


@pytest.mark.parametrize(("d", "match"), BAD_D, ids=[repr(d) for d, _ in BAD_D])
def test_bad_d_sine_cosine_columns(d, match):
    with raises(match):
        pe_core.sine_cosine_columns(d)


ODD_D_CALLS = {
    "transition_matrix": lambda: pe_core.transition_matrix(1, 7),
    "shift": lambda: pe_core.shift(pe_core.positional_encoding(3, 7), 1),
    "shift one row": lambda: pe_core.shift(np.zeros(5), 1),
    "dot_by_offset": lambda: pe_core.dot_by_offset(1, 7),
    "sse_by_offset": lambda: pe_core.sse_by_offset(1, 7),
}


@pytest.mark.parametrize("name", ODD_D_CALLS)
def test_odd_d_where_pairs_are_needed(name):
    with raises(r"needs an even d, got d=[57]: the last sine column has no cosine partner"):
        ODD_D_CALLS[name]()


def test_shift_of_too_wide_a_matrix():
    with raises(literal("P has 16,386 columns, more than the limit d <= 16,384")):
        pe_core.shift(np.zeros((1, MAX_D + 2)), 1)


# --------------------------------------------------------------------------------------
# length and the size limits
# --------------------------------------------------------------------------------------

LENGTH_CALLS = {
    "positions": lambda L: pe_core.positions(L),
    "angles": lambda L: pe_core.angles(L, 8),
    "positional_encoding": lambda L: pe_core.positional_encoding(L, 8),
    "binary_encoding": lambda L: pe_core.binary_encoding(L),
    "encoding_block_average": lambda L: pe_core.encoding_block_average(L, 8),
    "angle_block_mean": lambda L: pe_core.angle_block_mean(L, 8),
}
LENGTH_NAME = r"length \(the number of positions\) must be "
BAD_LENGTH = [
    (-1, LENGTH_NAME + "at least 0, got -1"),
    (2.5, LENGTH_NAME + r"a whole number, got 2\.5"),
    ("4", LENGTH_NAME + "a whole number, got str '4'"),
    (None, LENGTH_NAME + "a whole number, got None"),
    (float("nan"), LENGTH_NAME + "a finite whole number, got nan"),
    (MAX_LENGTH + 1, LENGTH_NAME + "at most 1,048,576, got 1,048,577"),
    (10**18, LENGTH_NAME + "at most 1,048,576"),
]


@pytest.mark.parametrize("name", LENGTH_CALLS)
@pytest.mark.parametrize(("length", "match"), BAD_LENGTH, ids=[repr(v) for v, _ in BAD_LENGTH])
def test_bad_length(name, length, match):
    with raises(match):
        LENGTH_CALLS[name](length)


@pytest.mark.parametrize("name", ["encoding_block_average", "angle_block_mean"])
def test_nothing_to_draw(name):
    with raises(literal("length must be at least 1 to draw the encoding")):
        LENGTH_CALLS[name](0)


@pytest.mark.parametrize(
    "call", [lambda: pe_core.positional_encoding(MAX_LENGTH, 2048), lambda: pe_core.angles(MAX_LENGTH, 2048)]
)
def test_far_over_the_cell_limit(call):
    with raises(r"cells is more than the limit of 33,554,432 \(16384 x 2048\); ask for fewer positions"):
        call()


def test_exactly_at_the_cell_limit_is_allowed():
    # The app's largest view: 16384 x 2048 = MAX_CELLS.
    assert MAX_CELLS == 16384 * 2048
    assert pe_core.positional_encoding(16384, 2048, dtype=np.float16).shape == (16384, 2048)


def test_just_over_the_cell_limit():
    with raises(r"length x d = 16,385 x 2,048 = 33,556,480 cells is more than the limit"):
        pe_core.positional_encoding(MAX_CELLS // 2048 + 1, 2048)


# --------------------------------------------------------------------------------------
# n, the base
# --------------------------------------------------------------------------------------

N_CALLS = {
    "frequencies": lambda n: pe_core.frequencies(8, n),
    "wavelengths": lambda n: pe_core.wavelengths(8, n),
    "angles": lambda n: pe_core.angles(4, 8, n),
    "positional_encoding": lambda n: pe_core.positional_encoding(4, 8, n),
    "transition_matrix": lambda n: pe_core.transition_matrix(1, 8, n),
    "shift": lambda n: pe_core.shift(P8, 1, n),
    "dot_by_offset": lambda n: pe_core.dot_by_offset(1, 8, n),
    "sse_by_offset": lambda n: pe_core.sse_by_offset(1, 8, n),
    "encoding_block_average": lambda n: pe_core.encoding_block_average(4, 8, n),
    "angle_block_mean": lambda n: pe_core.angle_block_mean(4, 8, n),
}
BAD_N = [
    (1, r"n \(the base\) must be greater than 1, got 1: with n <= 1 the wavelengths do not grow"),
    (1.0, r"n \(the base\) must be greater than 1, got 1\.0"),
    (0.5, r"n \(the base\) must be greater than 1, got 0\.5"),
    (0, r"n \(the base\) must be greater than 1, got 0"),
    (-10000, r"n \(the base\) must be greater than 1, got -10000"),
    (float("nan"), r"n \(the base\) must be finite, got nan; the paper uses 10000"),
    (float("inf"), r"n \(the base\) must be finite, got inf"),
    (float("-inf"), r"n \(the base\) must be finite, got -inf"),
    ("10000", r"n \(the base\) must be a real number greater than 1, got '10000'"),
    (None, r"n \(the base\) must be a real number greater than 1, got None"),
    (True, r"n \(the base\) must be a real number greater than 1, got True"),
    (2 + 0j, r"n \(the base\) must be a real number greater than 1, got \(2\+0j\)"),
]


@pytest.mark.parametrize("name", N_CALLS)
@pytest.mark.parametrize(("n", "match"), BAD_N, ids=[repr(v) for v, _ in BAD_N])
def test_bad_n(name, n, match):
    with raises(match):
        N_CALLS[name](n)


# --------------------------------------------------------------------------------------
# layout and convention
# --------------------------------------------------------------------------------------

LAYOUT_CALLS = {
    "column_pairs": lambda v: pe_core.column_pairs(8, v),
    "sine_cosine_columns": lambda v: pe_core.sine_cosine_columns(8, v),
    "positional_encoding": lambda v: pe_core.positional_encoding(4, 8, layout=v),
    "transition_matrix": lambda v: pe_core.transition_matrix(1, 8, layout=v),
    "shift": lambda v: pe_core.shift(P8, 1, layout=v),
    "column_groups": lambda v: pe_core.column_groups(8, v, 8),
    "encoding_block_average": lambda v: pe_core.encoding_block_average(4, 8, layout=v),
}
CONVENTION_CALLS = {
    "frequencies": lambda v: pe_core.frequencies(8, convention=v),
    "wavelengths": lambda v: pe_core.wavelengths(8, convention=v),
    "angles": lambda v: pe_core.angles(4, 8, convention=v),
    "positional_encoding": lambda v: pe_core.positional_encoding(4, 8, convention=v),
    "transition_matrix": lambda v: pe_core.transition_matrix(1, 8, convention=v),
    "shift": lambda v: pe_core.shift(P8, 1, convention=v),
    "dot_by_offset": lambda v: pe_core.dot_by_offset(1, 8, convention=v),
    "sse_by_offset": lambda v: pe_core.sse_by_offset(1, 8, convention=v),
    "encoding_block_average": lambda v: pe_core.encoding_block_average(4, 8, convention=v),
    "angle_block_mean": lambda v: pe_core.angle_block_mean(4, 8, convention=v),
}


@pytest.mark.parametrize("name", LAYOUT_CALLS)
@pytest.mark.parametrize("value", ["sideways", "Interleaved", "", None, 0])
def test_unknown_layout(name, value):
    with raises(literal(f"layout must be one of 'interleaved', 'concatenated', got {value!r}")):
        LAYOUT_CALLS[name](value)


@pytest.mark.parametrize("name", CONVENTION_CALLS)
@pytest.mark.parametrize("value", ["t2t", "Paper", "", None])
def test_unknown_convention(name, value):
    with raises(literal(f"convention must be one of 'paper', 'tensor2tensor', got {value!r}")):
        CONVENTION_CALLS[name](value)


# --------------------------------------------------------------------------------------
# delta, start, ref
# --------------------------------------------------------------------------------------

DELTA_CALLS = {
    "transition_matrix": lambda v: pe_core.transition_matrix(v, 8),
    "shift": lambda v: pe_core.shift(P8, v),
    "shift concatenated": lambda v: pe_core.shift(P8, v, layout="concatenated"),
}
DELTA_NAME = r"delta \(the offset\) must be "
BAD_DELTA = [
    (1.5, DELTA_NAME + r"a whole number, got 1\.5"),
    (-0.25, DELTA_NAME + r"a whole number, got -0\.25"),
    ("3", DELTA_NAME + "a whole number, got str '3'"),
    (None, DELTA_NAME + "a whole number, got None"),
    (True, DELTA_NAME + "a whole number, got True"),
    (float("nan"), DELTA_NAME + "a finite whole number, got nan"),
    (float("inf"), DELTA_NAME + "a finite whole number, got inf"),
    (float("-inf"), DELTA_NAME + "a finite whole number, got -inf"),
    (MAX_POSITION + 1, DELTA_NAME + "at most 1,000,000,000,000, got 1,000,000,000,001"),
    (-(10**30), DELTA_NAME + "at least -1,000,000,000,000"),
    (1e300, DELTA_NAME + "at most 1,000,000,000,000"),
]


@pytest.mark.parametrize("name", DELTA_CALLS)
@pytest.mark.parametrize(("delta", "match"), BAD_DELTA, ids=[repr(v) for v, _ in BAD_DELTA])
def test_bad_delta(name, delta, match):
    with raises(match):
        DELTA_CALLS[name](delta)


@pytest.mark.parametrize("name", DELTA_CALLS)
def test_whole_float_delta_and_the_largest_delta_are_accepted(name):
    assert DELTA_CALLS[name](2.0).shape in ((8, 8), (10, 8))
    assert np.all(np.isfinite(DELTA_CALLS[name](-MAX_POSITION)))


@pytest.mark.parametrize(
    ("name", "call"), [("dot_by_offset", pe_core.dot_by_offset), ("sse_by_offset", pe_core.sse_by_offset)]
)
@pytest.mark.parametrize("delta", [float("nan"), float("inf"), [0.0, float("-inf")]])
def test_non_finite_offsets_for_the_closed_forms(name, call, delta):
    with raises(r"delta contains 1 NaN or infinite value\(s\); every value must be finite"):
        call(delta, 8)


def test_too_many_offsets():
    with raises(literal("2,097,153 offsets is more than the limit of 2,097,152; ask for fewer")):
        pe_core.dot_by_offset(np.zeros(2 * MAX_LENGTH + 1), 8)


@pytest.mark.parametrize("call", [pe_core.dot_by_offset, pe_core.sse_by_offset])
def test_offsets_beyond_the_position_limit(call):
    with raises(literal("offsets must lie within +-1,000,000,000,000, got one of size 1,000,000,000,064")):
        call([0.0, -(MAX_POSITION + 64.0)], 8)


def test_transition_matrix_larger_than_the_cell_limit():
    message = "transition_matrix(d=5,794) would hold d x d = 33,570,436 values, more than the limit of 33,554,432"
    with raises(literal(message) + ".*" + literal("shift(P, delta) applies it without building it")):
        pe_core.transition_matrix(1, 5794)
    assert pe_core.transition_matrix(1, 5792).shape == (5792, 5792)


START_CALLS = {
    "positions": lambda s: pe_core.positions(4, s),
    "angles": lambda s: pe_core.angles(4, 8, start=s),
    "positional_encoding": lambda s: pe_core.positional_encoding(4, 8, start=s),
    "encoding_block_average": lambda s: pe_core.encoding_block_average(4, 8, start=s),
    "angle_block_mean": lambda s: pe_core.angle_block_mean(4, 8, start=s),
}
BAD_START = [
    (1.5, r"start must be a whole number, got 1\.5"),
    ("0", "start must be a whole number, got str '0'"),
    (None, "start must be a whole number, got None"),
    (True, "start must be a whole number, got True"),
    (float("nan"), "start must be a finite whole number, got nan"),
    (-MAX_POSITION - 1, "start must be at least -1,000,000,000,000"),
    (
        MAX_POSITION - 1,
        literal("the last position start + length - 1 must be at most 1,000,000,000,000, got 1,000,000,000,002"),
    ),
]


@pytest.mark.parametrize("name", START_CALLS)
@pytest.mark.parametrize(("start", "match"), BAD_START, ids=[repr(v) for v, _ in BAD_START])
def test_bad_start(name, start, match):
    with raises(match):
        START_CALLS[name](start)


REF_CALLS = {
    "dot_similarity": lambda r: pe_core.dot_similarity(P8, r),
    "sse": lambda r: pe_core.sse(P8, r),
    "cosine_similarity": lambda r: pe_core.cosine_similarity(P8, r),
    "hamming_distance": lambda r: pe_core.hamming_distance(pe_core.binary_encoding(10), r),
}
REF_NAME = r"ref \(the reference position's row\) must be "
BAD_REF = [
    (-1, REF_NAME + "at least 0, got -1"),
    (10, REF_NAME + "at most 9, got 10"),
    (10**6, REF_NAME + "at most 9, got 1,000,000"),
    (2.5, REF_NAME + r"a whole number, got 2\.5"),
    ("0", REF_NAME + "a whole number, got str '0'"),
    (None, REF_NAME + "a whole number, got None"),
    (float("nan"), REF_NAME + "a finite whole number, got nan"),
]


@pytest.mark.parametrize("name", REF_CALLS)
@pytest.mark.parametrize(("ref", "match"), BAD_REF, ids=[repr(v) for v, _ in BAD_REF])
def test_bad_ref(name, ref, match):
    with raises(match):
        REF_CALLS[name](ref)


# --------------------------------------------------------------------------------------
# Matrices given by the user: P for shift and the similarities, B for Hamming
# --------------------------------------------------------------------------------------

MATRIX_CALLS = {
    "shift": lambda P: pe_core.shift(P, 1),
    "shift concatenated": lambda P: pe_core.shift(P, 1, layout="concatenated"),
    "dot_similarity": lambda P: pe_core.dot_similarity(P, 0),
    "sse": lambda P: pe_core.sse(P, 0),
    "cosine_similarity": lambda P: pe_core.cosine_similarity(P, 0),
}


@pytest.mark.parametrize("name", MATRIX_CALLS)
@pytest.mark.parametrize("count", [1, 3])
def test_nan_in_P(name, count):
    P = P8.copy()
    P.flat[[5, 17, 42][:count]] = np.nan
    with raises(rf"P contains {count} NaN or infinite value\(s\); every value must be finite"):
        MATRIX_CALLS[name](P)


@pytest.mark.parametrize("name", ["dot_similarity", "sse", "cosine_similarity"])
@pytest.mark.parametrize("bad", [float("inf"), float("-inf")])
def test_inf_in_P_for_the_similarities(name, bad):
    P = P8.copy()
    P[4, 2] = bad
    with raises(r"P contains 1 NaN or infinite value\(s\)"):
        MATRIX_CALLS[name](P)


def _inf_cases():
    """An infinity in a sine and in a cosine column, of either sign, for both layouts."""
    for layout in pe_core.LAYOUTS:
        sines, cosines = pe_core.sine_cosine_columns(8, layout)
        for kind, columns in (("sine", sines), ("cosine", cosines)):
            for bad in (np.inf, -np.inf):
                for delta in (1, -1):
                    P = P8.copy()
                    P[3, np.arange(8)[columns][1]] = bad
                    yield layout, kind, bad, delta, P


def test_inf_in_P_for_shift_raises_value_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for _layout, _kind, _bad, _delta, P in _inf_cases():
            with raises(r"P contains 1 NaN or infinite value\(s\)"):
                pe_core.shift(P, _delta, layout=_layout)


def test_inf_in_P_for_shift_without_a_numpy_warning():
    failures = []
    for layout, kind, bad, delta, P in _inf_cases():
        try:
            with raises(r"P contains 1 NaN or infinite value\(s\)"):
                pe_core.shift(P, delta, layout=layout)
        except RuntimeWarning as warning:
            failures.append((layout, kind, bad, delta, str(warning)))
    assert not failures


@pytest.mark.parametrize(
    ("name", "shape", "match"),
    [
        ("shift", (), r"P must be 1-D or 2-D, got an array of shape \(\)"),
        ("shift", (2, 3, 4), r"P must be 1-D or 2-D, got an array of shape \(2, 3, 4\)"),
        ("dot_similarity", (8,), r"P must be 2-D, got an array of shape \(8,\)"),
        ("sse", (2, 2, 2), r"P must be 2-D, got an array of shape \(2, 2, 2\)"),
        ("cosine_similarity", (), r"P must be 2-D, got an array of shape \(\)"),
    ],
)
def test_P_of_the_wrong_ndim(name, shape, match):
    with raises(match):
        MATRIX_CALLS[name](np.zeros(shape))


@pytest.mark.parametrize("name", MATRIX_CALLS)
@pytest.mark.parametrize("shape", [(0, 8), (3, 0)])
def test_empty_P(name, shape):
    with raises(rf"P is empty \(shape {re.escape(str(shape))}\); it needs at least one value"):
        MATRIX_CALLS[name](np.zeros(shape))


def test_empty_row_for_shift():
    with raises(r"P is empty \(shape \(0,\)\)"):
        pe_core.shift(np.zeros(0), 1)


@pytest.mark.parametrize("name", MATRIX_CALLS)
@pytest.mark.parametrize("P", [[["a", "b"]], [[1.0, 2.0], [3.0]]], ids=["text", "ragged"])
def test_P_that_is_not_numbers(name, P):
    with raises("P must be an array of real numbers"):
        MATRIX_CALLS[name](P)


@pytest.mark.parametrize("name", MATRIX_CALLS)
def test_complex_P(name):
    with raises("P must be an array of real numbers"):
        MATRIX_CALLS[name](P8 + 1j)


def test_hamming_distance_bad_matrices():
    with raises(r"B must be 2-D"):
        pe_core.hamming_distance(np.zeros(4), 0)
    with raises(r"B is empty"):
        pe_core.hamming_distance(np.zeros((0, 4)), 0)
    with raises(r"B contains 1 NaN or infinite value\(s\)"):
        pe_core.hamming_distance(np.array([[0.0, np.nan]]), 0)


# --------------------------------------------------------------------------------------
# binary codes, dtype
# --------------------------------------------------------------------------------------

WIDTH_NAME = r"width \(the number of bits\) must be "


@pytest.mark.parametrize(
    ("length", "width", "match"),
    [
        (100, 6, literal("width=6 bits cannot hold position 99; it needs at least 7 bits")),
        (1025, 10, literal("width=10 bits cannot hold position 1024; it needs at least 11 bits")),
        (1, 0, WIDTH_NAME + "at least 1, got 0"),
        (1, -3, WIDTH_NAME + "at least 1, got -3"),
        (1, 63, WIDTH_NAME + "at most 62, got 63"),
        (4, 2.5, WIDTH_NAME + r"a whole number, got 2\.5"),
        (4, "3", WIDTH_NAME + "a whole number, got str '3'"),
        (4, float("inf"), WIDTH_NAME + "a finite whole number, got inf"),
    ],
)
def test_bad_binary_width(length, width, match):
    with raises(match):
        pe_core.binary_encoding(length, width)


@pytest.mark.parametrize(
    ("width", "match"),
    [(0, WIDTH_NAME + "at least 1"), (63, WIDTH_NAME + "at most 62"), (None, WIDTH_NAME + "a whole number")],
)
def test_bad_bit_periods(width, match):
    with raises(match):
        pe_core.bit_periods(width)


@pytest.mark.parametrize("largest", [-5, 2.5, float("nan"), "8", None])
def test_bad_bits_needed(largest):
    with raises(r"must be a (finite )?whole number|must be at least 0"):
        pe_core.bits_needed(largest)


@pytest.mark.parametrize(
    ("dtype", "match"),
    [
        (int, r"dtype must be a floating type \(float16, float32, float64, bfloat16, float8_e4m3fn, float8_e5m2\), "
              "got int64"),
        ("int32", "dtype must be a floating type .* got int32"),
        (bool, "dtype must be a floating type .* got bool"),
        (complex, "dtype must be a floating type .* got complex128"),
        (object, "dtype must be a floating type .* got object"),
        ("banana", r"dtype must be a floating type \(float16, .*, float8_e5m2\), got 'banana'"),
        ("float8_e4m3", "dtype must be a floating type .* got float8_e4m3"),  # ml_dtypes' IEEE variant: not offered
    ],
)
def test_bad_dtype(dtype, match):
    with raises(match):
        pe_core.positional_encoding(4, 8, dtype=dtype)


# --------------------------------------------------------------------------------------
# rotation and the display reductions
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("phi", [float("nan"), float("inf"), float("-inf")])
def test_rotation_of_a_non_finite_angle(phi):
    with raises(r"the rotation angle must be finite, got (nan|inf|-inf)"):
        pe_core.rotation(phi)


@pytest.mark.parametrize("phi", [None, "abc", [1.0, 2.0]])
def test_rotation_of_a_non_number(phi):
    with raises("the rotation angle must be"):
        pe_core.rotation(phi)


@pytest.mark.parametrize(
    ("size", "max_blocks", "match"),
    [
        (0, 3, "size must be at least 1, got 0"),
        (5, 0, "max_blocks must be at least 1, got 0"),
        (2 * MAX_LENGTH + 1, 3, "size must be at most 2,097,152"),
        (5.5, 3, r"size must be a whole number, got 5\.5"),
    ],
)
def test_bad_block_edges(size, max_blocks, match):
    with raises(match):
        pe_core.block_edges(size, max_blocks)


@pytest.mark.parametrize(
    ("rows", "cols", "match"),
    [
        ([0, 2], None, r"row edges must rise strictly from 0 to 3, got \[0 2\]"),
        ([1, 3], None, "row edges must rise strictly from 0 to 3"),
        ([0, 2, 2, 3], None, "row edges must rise strictly from 0 to 3"),
        ([0, 3], [0, 1], r"column edges must rise strictly from 0 to 4, got \[0 1\]"),
        ([0, 3], [0, 3, 2, 4], "column edges must rise strictly from 0 to 4"),
    ],
)
def test_bad_block_average_edges(rows, cols, match):
    with raises(match):
        pe_core.block_average(np.ones((3, 4)), rows, cols)


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([0, 1.5, 3], "row edges must be whole numbers, got 1.5"),
        ([0.0, float("nan"), 3.0], "row edges must be whole numbers, got nan"),
        (["0", "3"], "row edges must be whole numbers, got <U1 values"),
    ],
)
def test_block_average_edges_that_are_not_whole_numbers(rows, match):
    with raises(literal(match)):
        pe_core.block_average(np.ones((3, 4)), rows)
    assert pe_core.block_average(np.ones((3, 4)), [0.0, 2.0, 3.0]).shape == (2, 1)


def test_offset_matrix_edges_that_are_not_whole_numbers():
    with raises(literal("edges must be whole numbers, got 0.5")):
        pe_core.offset_matrix_block_average(np.ones(5), [0, 0.5, 3])


def test_empty_block_average_edges():
    with raises("edges must rise strictly"):
        pe_core.block_average(np.ones((3, 4)), [])


def test_bad_block_average_matrix():
    with raises(r"matrix must be 2-D, got an array of shape \(3,\)"):
        pe_core.block_average(np.ones(3), [0, 3])
    with raises(r"matrix contains 1 NaN or infinite value\(s\)"):
        pe_core.block_average(np.array([[1.0, np.inf]]), [0, 1])


def test_bad_column_groups():
    with raises("max_cols must be at least 2, got 1"):
        pe_core.column_groups(8, "interleaved", 1)


def test_bad_max_rows_is_named():
    with raises("max_rows must be at least 1, got 0"):
        pe_core.encoding_block_average(4, 8, max_rows=0)


def test_bad_max_pairs_is_named():
    with raises("max_pairs must be at least 1, got 0"):
        pe_core.angle_block_mean(4, 8, max_pairs=0)


@pytest.mark.parametrize(
    ("values", "edges", "match"),
    [
        (np.ones(4), [0, 2], literal("values_by_offset must hold f(t) for t = -(L-1) .. L-1 (an odd count)")),
        (np.ones(5), [0, 2], literal("edges must rise strictly from 0 to L=3")),
        (np.ones(5), [0, 3, 3], literal("edges must rise strictly from 0 to L=3")),
        (np.array([1.0, np.nan, 1.0]), [0, 2], r"values_by_offset contains 1 NaN or infinite value\(s\)"),
        (np.ones((3, 3)), [0, 2], r"values_by_offset must be 1-D, got an array of shape \(3, 3\)"),
        (np.ones(0), [0], r"values_by_offset is empty"),
    ],
)
def test_bad_offset_matrix_block_average(values, edges, match):
    with raises(match):
        pe_core.offset_matrix_block_average(values, edges)


# --------------------------------------------------------------------------------------
# shift's out= and its overflow check
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make_out", "match"),
    [
        (lambda: P8.tolist(), r"out must be a NumPy array, got list"),
        (lambda: P8.astype(np.float32), r"out must be a float64 array of P's shape \(10, 8\), got float32"),
        (
            lambda: np.empty((10, 6)),
            r"out must be a float64 array of P's shape \(10, 8\), got float64 of shape \(10, 6\)",
        ),
        (lambda: np.empty((8, 10)).T, r"out must be C-contiguous and writeable"),
        (lambda: _read_only(np.empty((10, 8))), r"out must be C-contiguous and writeable"),
    ],
    ids=["list", "float32", "shape", "fortran", "read-only"],
)
def test_shift_with_a_wrong_out(make_out, match):
    for layout in pe_core.LAYOUTS:
        with raises(match):
            pe_core.shift(P8, 1, layout=layout, out=make_out())


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def test_shift_into_an_out_that_overlaps_P():
    memory = np.zeros((11, 8))
    with raises(r"out overlaps P without being P itself; pass P to rotate in place"):
        pe_core.shift(memory[:-1], 1, out=memory[1:])


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_shift_in_place_of_a_P_with_nan(layout):
    P = P8.copy()
    P[2, 3] = np.nan
    message = "P contains NaN or infinite values, or values too large to rotate (near 1e308); it was rotated in place"
    with raises(literal(message)):
        pe_core.shift(P, 1, layout=layout, out=P)


@pytest.mark.parametrize("layout", pe_core.LAYOUTS)
def test_shift_that_overflows(layout):
    # Pair 0 (w = 1) turned by 1 radian: sin' = 1.5e308 (cos 1 + sin 1) = 2.07e308 > max float.
    P = np.zeros((4, 8))
    sines, cosines = pe_core.sine_cosine_columns(8, layout)
    P[:, np.arange(8)[sines][0]] = 1.5e308
    P[:, np.arange(8)[cosines][0]] = 1.5e308
    with raises(literal("P has values too large to rotate without overflow (near 1e308).")):
        pe_core.shift(P, 1, layout=layout)


# --------------------------------------------------------------------------------------
# Similarities of huge and tiny values: right where float64 can hold the result, a
# ValueError where it cannot, and never a NumPy warning (warnings are errors here)
# --------------------------------------------------------------------------------------

#: Row 0's square overflows; the squares of row 2's values underflow.
EXTREME = np.array([[1e300, 1e300], [1e100, -1e100], [3e-200, 4e-200]])


def test_dot_similarity_beyond_the_float64_range():
    np.testing.assert_allclose(pe_core.dot_similarity(EXTREME[1:], 0), [2e200, -1e-100], rtol=1e-15, atol=0)
    with raises(literal("The dot products exceed the float64 range (about 1.8e308): P's values reach 1e+300")):
        pe_core.dot_similarity(EXTREME, 0)


def test_cosine_similarity_of_extreme_rows():
    # The cosine is the same at any scale: right for huge and for tiny rows alike.
    root2 = 2**0.5
    for ref, expected in enumerate([[1.0, 0.0, 7 / (5 * root2)], [0.0, 1.0, -1 / (5 * root2)]]):
        np.testing.assert_allclose(pe_core.cosine_similarity(EXTREME, ref), expected, rtol=0, atol=4e-16)
    np.testing.assert_allclose(pe_core.cosine_similarity(EXTREME, 2), [7 / (5 * root2), -1 / (5 * root2), 1.0])


def test_sse_beyond_the_float64_range():
    np.testing.assert_allclose(pe_core.sse(EXTREME[1:], 1), [1e200 + 1e200, 0.0], rtol=1e-15)
    message = "The sums of squared differences exceed the float64 range (about 1.8e308): P's values reach 1e+300"
    with raises(literal(message)):
        pe_core.sse(EXTREME, 2)
