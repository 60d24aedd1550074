"""pe_core.attention_bias against ALiBi's and T5's own functions, re-typed here in NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pe_core


def get_slopes(n: int) -> list[float]:
    """ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, as written there."""
    def get_slopes_power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2])


@pytest.mark.parametrize("heads", [1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 112, 128, 255, 1000])
def test_alibi_slopes_are_the_official_get_slopes(heads: int) -> None:
    np.testing.assert_allclose(pe_core.alibi_slopes(heads), get_slopes(heads), rtol=1e-12, atol=0)


def test_alibi_slopes_of_the_paper() -> None:
    """Press et al. 2022, section 3: for 8 heads, 1/2, 1/4, ..., 1/256."""
    np.testing.assert_array_equal(pe_core.alibi_slopes(8), 0.5 ** np.arange(1, 9))


def test_alibi_bias_is_minus_slope_times_distance() -> None:
    offsets = np.arange(-40, 41)
    bias = pe_core.alibi_bias(offsets, 12)
    slopes = np.array(get_slopes(12))
    assert bias.shape == (12, offsets.size)
    np.testing.assert_allclose(bias, -slopes[:, None] * np.abs(offsets)[None, :], rtol=1e-12, atol=0)
    assert not np.signbit(bias[:, 40]).any()  # offset 0 gives 0, not -0


def t5_relative_position_bucket(relative_position: np.ndarray, bidirectional: bool = True, num_buckets: int = 32,
                                max_distance: int = 128) -> np.ndarray:
    """T5's _relative_position_bucket (Mesh TensorFlow; transformers' T5Attention), line for line in NumPy."""
    relative_buckets = np.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).astype(np.int64) * num_buckets
        relative_position = np.abs(relative_position)
    else:
        relative_position = -np.minimum(relative_position, np.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) at offset 0, masked by is_small as in T5
        relative_position_if_large = max_exact + (
            np.log(relative_position.astype(np.float32) / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).astype(np.int64)
    relative_position_if_large = np.minimum(relative_position_if_large, np.full_like(relative_position_if_large,
                                                                                     num_buckets - 1))
    relative_buckets += np.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (16, 64), (64, 256), (8, 20), (32, 1000)])
def test_t5_bucket_is_t5s_function(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    # Key minus query (memory_position - context_position), as T5Attention.compute_bias forms it.
    context, memory = np.arange(300)[:, None], np.arange(300)[None, :]
    offsets = memory - context
    np.testing.assert_array_equal(
        pe_core.t5_relative_bucket(offsets, bidirectional=bidirectional, num_buckets=num_buckets,
                                   max_distance=max_distance),
        t5_relative_position_bucket(offsets, bidirectional, num_buckets, max_distance),
    )


def test_t5_bucket_structure() -> None:
    offsets = np.arange(-500, 501)
    both = pe_core.t5_relative_bucket(offsets)
    causal = pe_core.t5_relative_bucket(offsets, bidirectional=False)
    np.testing.assert_array_equal(both[493:501][::-1], np.arange(8))  # offsets 0 .. -7: buckets 0 .. 7
    np.testing.assert_array_equal(both[501:509], 16 + np.arange(1, 9))  # keys after the query: upper half
    assert both[500 + 128:].tolist() == [31] * 373 and both[: 500 - 127].tolist() == [15] * 373
    np.testing.assert_array_equal(causal[500:], 0)  # causal: every key after the query with the query itself
    np.testing.assert_array_equal(causal[500 - 15 : 501][::-1], np.arange(16))
    assert causal[: 500 - 127].tolist() == [31] * 373
    assert np.all(np.diff(causal[::-1][500:]) >= 0)  # non-decreasing with distance


def test_t5_bucket_is_exact_where_the_steps_are_a_whole_number() -> None:
    """num_buckets=34, max_distance=27, |offset| 18: 9 ln(18/8) / ln(27/8) = 9 * 2/3 = 6 steps exactly
    ((18/8)**9 == (27/8)**6), so bucket 8 + 6. transformers' float32 gives 13 (test_rope_transformers)."""
    assert 18**9 * 8**6 == 27**6 * 8**9
    assert pe_core.t5_relative_bucket(-18, num_buckets=34, max_distance=27) == 8 + 6
    assert pe_core.t5_relative_bucket([-17, -18], num_buckets=34, max_distance=27).tolist() == [8 + 5, 8 + 6]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=50), st.booleans())
def test_t5_buckets_are_in_range_and_monotone_in_distance(offsets, bidirectional) -> None:
    values = np.array(offsets)
    buckets = pe_core.t5_relative_bucket(values, bidirectional=bidirectional)
    assert buckets.shape == values.shape and buckets.dtype == np.int64
    assert np.all((buckets >= 0) & (buckets < 32))
    order = np.argsort(np.abs(values[values <= 0]), kind="stable")
    assert np.all(np.diff(buckets[values <= 0][order]) >= 0)
