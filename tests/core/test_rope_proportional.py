"""Proportional RoPE (Gemma 4's global layers), pe_core's "proportional" entry: its frequencies against the
formula written out, its properties (hypothesis), its config reading (the whole head as d), its bad inputs,
and the checker's reading of its inv_freq back into it (tests/core/test_rope_transformers.py compares it with
transformers' own ROPE_INIT_FUNCTIONS["proportional"])."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pe_core
from pe_core import RopeScaling
from pe_core.identify.__main__ import main
from pe_core.rope.methods import rope_method

GEMMA4_GLOBAL = {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6}


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def written_out(d: int, base: float, fraction: float, factor: float) -> np.ndarray:
    """transformers' _compute_proportional_rope_parameters in float64: int(p * d // 2) pairs at
    1 / base^(2i/d), zeros for the rest, all divided by the factor."""
    rotated = int(fraction * d // 2)
    return np.array([1.0 / base ** (2 * i / d) / factor if i < rotated else 0.0 for i in range(d // 2)])


def proportional(fraction: float, factor: float = 1.0) -> RopeScaling:
    return RopeScaling("proportional", factor, partial_rotary_factor=fraction)


heads = st.integers(2, 1024).map(lambda half: 2 * half)
fractions = st.sampled_from([0.125, 0.25, 0.375, 0.5, 0.75, 1.0]) | st.floats(0.01, 1.0)
bases = st.floats(2.0, 1e8)
factors = st.sampled_from([1.0, 2.0, 8.0]) | st.floats(1.0, 64.0)


# --------------------------------------------------------------------------- the formula


@pytest.mark.parametrize(("d", "base", "fraction", "factor"), [
    (512, 1e6, 0.25, 1.0),  # Gemma 4's global layers
    (512, 1e6, 0.25, 8.0),
    (256, 10000.0, 0.5, 2.0),
    (16, 100.0, 0.75, 1.5),
    (64, 500000.0, 1.0, 4.0),
])
def test_the_frequencies_are_the_formula_written_out(d: int, base: float, fraction: float, factor: float) -> None:
    ours = pe_core.rope_frequencies(d, base, scaling=proportional(fraction, factor))
    np.testing.assert_allclose(ours, written_out(d, base, fraction, factor), rtol=1e-14, atol=0)
    assert pe_core.rope_attention_factor(proportional(fraction, factor)) == 1.0


def test_gemma_4_s_global_layers_rotate_64_of_their_256_pairs() -> None:
    theta = pe_core.rope_frequencies(512, 1e6, scaling=proportional(0.25))
    assert np.count_nonzero(theta) == 64 and theta.size == 256
    # The exponent runs over the whole head: pair 63 turns at 1e6^(-126/512), not 1e6^(-126/128).
    assert theta[63] == pytest.approx(1e6 ** (-126 / 512), rel=1e-14)


@given(heads, bases, fractions, factors)
@settings(deadline=None)
def test_the_unrotated_pairs_turn_exactly_zero(d: int, base: float, fraction: float, factor: float) -> None:
    rotated = int(fraction * d // 2)
    assume(rotated >= 1)  # else refused: test_a_share_that_rotates_no_pair_is_refused
    theta = pe_core.rope_frequencies(d, base, scaling=proportional(fraction, factor))
    assert np.all(theta[rotated:] == 0.0)
    assert np.all(theta[:rotated] > 0.0)


@given(heads, bases, fractions, factors)
@settings(deadline=None)
def test_the_rotated_pairs_are_the_whole_head_s_first_pairs_divided_by_the_factor(
    d: int, base: float, fraction: float, factor: float
) -> None:
    rotated = int(fraction * d // 2)
    assume(rotated >= 1)
    theta = pe_core.rope_frequencies(d, base, scaling=proportional(fraction, factor))
    plain = pe_core.rope_frequencies(d, base)
    np.testing.assert_array_equal(theta[:rotated], plain[:rotated] / factor)


@given(heads, bases, st.floats(0.01, 1.0), st.floats(0.01, 1.0))
@settings(deadline=None)
def test_a_larger_share_rotates_at_least_as_many_pairs(d: int, base: float, p: float, q: float) -> None:
    low, high = sorted((p, q))
    assume(int(low * d // 2) >= 1)

    def count(fraction: float) -> int:
        return int(np.count_nonzero(pe_core.rope_frequencies(d, base, scaling=proportional(fraction))))

    assert count(low) <= count(high)


# --------------------------------------------------------------------------- a config.json


def test_a_flat_config_is_read_with_the_whole_head_as_d() -> None:
    config = {"head_dim": 256, "max_position_embeddings": 8192,
              "rope_parameters": GEMMA4_GLOBAL | {"factor": 2.0}}
    rope = pe_core.rope_from_config(config)
    assert (rope.d, rope.base, rope.scaling) == (256, 1e6, proportional(0.25, 2.0))
    # Every other rope_type rotates a smaller head of int(head_dim * p) coordinates instead.
    linear = pe_core.rope_from_config(
        config | {"rope_parameters": GEMMA4_GLOBAL | {"rope_type": "linear", "factor": 2.0}})
    assert (linear.d, linear.scaling) == (64, RopeScaling("linear", 2.0))


def test_factor_and_partial_rotary_factor_default_to_1_as_in_transformers() -> None:
    rope = pe_core.rope_from_config({"head_dim": 128, "rope_parameters": {"rope_type": "proportional",
                                                                           "rope_theta": 10000.0}})
    assert (rope.d, rope.scaling) == (128, proportional(1.0, 1.0))
    # A top-level partial_rotary_factor goes into the rope parameters, as transformers' standardize_rope_params does.
    rope = pe_core.rope_from_config({"head_dim": 128, "partial_rotary_factor": 0.5,
                                     "rope_parameters": {"rope_type": "proportional", "rope_theta": 10000.0}})
    assert (rope.d, rope.scaling) == (128, proportional(0.5))


def test_a_gemma_4_config_is_read_per_layer_type_with_the_global_head() -> None:
    text = {"model_type": "gemma4_text", "num_hidden_layers": 6, "head_dim": 256, "global_head_dim": 512,
            "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                "full_attention": GEMMA4_GLOBAL}}
    config = {"model_type": "gemma4", "text_config": text}
    full = pe_core.rope_from_config(config, layer_type="full_attention")
    assert (full.d, full.base, full.scaling) == (512, 1e6, proportional(0.25))
    assert pe_core.rope_from_config(config) == full
    sliding = pe_core.rope_from_config(config, layer_type="sliding_attention")
    assert (sliding.d, sliding.base, sliding.scaling) == (256, 10000.0, None)
    inv_freq, attention = pe_core.rope_init(config, layer_type="full_attention")
    np.testing.assert_array_equal(
        inv_freq, pe_core.rope_frequencies(512, 1e6, scaling=full.scaling).astype(np.float32).astype(np.float64))
    assert attention == 1.0


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(("fraction", "words"), [
    (0.0, r"partial_rotary_factor .* must lie in \(0, 1\]"),
    (-0.25, r"partial_rotary_factor .* must lie in \(0, 1\]"),
    (1.5, r"partial_rotary_factor .* must lie in \(0, 1\]"),
    (float("nan"), "partial_rotary_factor .* must be finite"),
    (float("inf"), "partial_rotary_factor .* must be finite"),
    ("0.25", "partial_rotary_factor .* must be a real number"),
    (None, "partial_rotary_factor .* must be a real number"),
])
def test_a_bad_partial_rotary_factor_is_refused_naming_it(fraction: object, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        RopeScaling("proportional", 1.0, partial_rotary_factor=fraction)
    if fraction is not None:
        with pytest.raises(ValueError, match="partial_rotary_factor"):
            pe_core.rope_from_config({"head_dim": 128, "rope_parameters": GEMMA4_GLOBAL | {
                "partial_rotary_factor": fraction}})


@pytest.mark.parametrize(("factor", "words"), [
    (0.0, "factor .* must be at least 1"),
    (-2.0, "factor .* must be at least 1"),
    (float("nan"), "factor .* must be finite"),
    ("2", "factor .* must be a real number"),
])
def test_a_bad_factor_is_refused_naming_it(factor: object, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        RopeScaling("proportional", factor, partial_rotary_factor=0.25)
    with pytest.raises(ValueError, match=words):
        pe_core.rope_from_config({"head_dim": 128, "rope_parameters": GEMMA4_GLOBAL | {"factor": factor}})
    gemma4 = {"model_type": "gemma4_text", "num_hidden_layers": 2, "layer_types": ["sliding_attention",
              "full_attention"], "head_dim": 16, "global_head_dim": 64,
              "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                  "full_attention": GEMMA4_GLOBAL | {"factor": factor}}}
    with pytest.raises(ValueError, match=words):
        pe_core.rope_init(gemma4)


def test_a_share_that_rotates_no_pair_is_refused() -> None:
    with pytest.raises(ValueError, match=r"rotates int\(0.125 \* 8 // 2\) = 0 pairs of d=8.*at least 0.25"):
        pe_core.rope_frequencies(8, scaling=proportional(0.125))
    with pytest.raises(ValueError, match="0 pairs"):
        pe_core.rope_from_config({"head_dim": 8, "rope_parameters": GEMMA4_GLOBAL | {"partial_rotary_factor": 0.1}})


@pytest.mark.parametrize("method", ["linear", "ntk", "yarn", "llama3"])
def test_a_method_that_would_ignore_partial_rotary_factor_refuses_it(method: str) -> None:
    with pytest.raises(ValueError, match=f"{method} scaling does not read partial_rotary_factor"):
        RopeScaling(method, 2.0, 4096, partial_rotary_factor=0.5)
    assert RopeScaling(method, 2.0, 4096, partial_rotary_factor=1.0).partial_rotary_factor == 1.0
    assert not rope_method(method).whole_head and rope_method("proportional").whole_head


# --------------------------------------------------------------------------- the checker


def reading_of(d: int, base: float, fraction: float, factor: float, dtype: type = np.float32) -> dict:
    inv_freq = pe_core.rope_frequencies(d, base, scaling=proportional(fraction, factor)).astype(dtype)
    return pe_core.identify_encoding(inv_freq)


@pytest.mark.parametrize(("d", "base", "fraction", "factor"), [
    (512, 1e6, 0.25, 1.0),  # Gemma 4's global layers
    (512, 1e6, 0.25, 8.0),
    (256, 500000.0, 0.125, 2.0),
    (128, 10000.0, 0.5, 1.0),
    (64, 10000.0, 0.75, 4.0),
])
def test_a_proportional_inv_freq_is_read_back_as_proportional(d: int, base: float, fraction: float,
                                                             factor: float) -> None:
    result = reading_of(d, base, fraction, factor)
    rotated = int(fraction * d // 2)
    assert result["kind"] == "rope_inv_freq", result["verdict"]
    assert (result["d"], result["n"]) == (d, base)
    assert result["scaling"] == {"method": "proportional", "factor": factor, "partial_rotary_factor": fraction,
                                 "rotated_pairs": rotated}
    assert rope_method("proportional").sentence(result["scaling"]) in result["verdict"]
    assert f"pairs from {rotated} on are left unrotated" in result["verdict"]


@given(st.integers(3, 256).map(lambda half: 2 * half), st.sampled_from([1e4, 5e5, 1e6, 1e7]),
       st.floats(0.05, 0.95), st.sampled_from([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]))
@settings(max_examples=60, deadline=None)
def test_any_proportional_inv_freq_is_read_back_with_its_base_factor_and_rotated_pairs(
    d: int, base: float, fraction: float, factor: float
) -> None:
    rotated = int(fraction * d // 2)
    assume(2 <= rotated < d // 2)  # one pair tells no base; without a zero pair it is plain RoPE or linear
    result = reading_of(d, base, fraction, factor)
    assert result["kind"] == "rope_inv_freq", result["verdict"]
    assert result["n"] == base
    scaling = result["scaling"]
    assert (scaling["method"], scaling["factor"], scaling["rotated_pairs"]) == ("proportional", factor, rotated)
    # The share read is the smallest that rotates those pairs: it gives back the same frequencies.
    assert int(scaling["partial_rotary_factor"] * d // 2) == rotated
    assert math.isclose(scaling["partial_rotary_factor"], rotated / (d // 2), rel_tol=1e-12)


def test_a_bfloat16_proportional_inv_freq_is_read_too() -> None:
    import ml_dtypes

    result = reading_of(512, 1e6, 0.25, 1.0, dtype=ml_dtypes.bfloat16)
    assert result["kind"] == "rope_inv_freq" and result["scaling"]["partial_rotary_factor"] == 0.25


def test_the_command_line_says_proportional_with_its_share(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "inv_freq.npy"
    np.save(path, pe_core.rope_frequencies(512, 1e6, scaling=proportional(0.25)).astype(np.float32))
    assert main([str(path)]) == 0
    said = capsys.readouterr().out
    assert said.splitlines()[0] == ("inv_freq.npy: RoPE frequency vector (inv_freq), d = 512, base 1e+06, "
                                    "proportional scaling by 1, partial_rotary_factor 0.25")
    assert "Proportional RoPE (Gemma 4's global layers), partial_rotary_factor 0.25" in " ".join(said.split())


@pytest.mark.parametrize(("values", "verdict"), [
    # The refusals a proportional reading must not take over, with their messages.
    ([0.0] * 8, "value 0 is 0, but every frequency is positive"),
    ([1.0, 0.1, -0.01, 0.0], "value 2 is -0.01, but every frequency is positive"),
    ([1.0, 0.1, 0.0, 0.001], "value 2 is 0, but every frequency is positive"),
    # Zeros after frequencies no base gives as proportional: per-pair divisors would only bound the zero pair.
    ([1.0, 0.5, 0.1, 0.0], "value 3 is 0, but every frequency is positive"),
])
def test_other_zeros_and_negatives_are_refused_as_before(values: list[float], verdict: str) -> None:
    result = pe_core.identify_encoding(np.array(values, dtype=np.float32))
    assert result["kind"] is None and result["scaling"] is None
    assert result["verdict"] == f"Not a RoPE frequency vector (inv_freq): {verdict} (inv_freq = 1 / base ** (2i / d))."


def test_a_csv_whose_slow_pairs_round_to_zero_is_not_read_as_proportional() -> None:
    """Four decimals turn plain RoPE's slow pairs into 0: a zero the decimals cannot tell from the plain
    frequency is no unrotated pair."""
    rounded = np.round(pe_core.rope_frequencies(64, 1e6), 4)
    assert rounded[-1] == 0.0
    result = pe_core.identify_encoding(rounded)
    assert result["kind"] is None and "is 0, but every frequency is positive" in result["verdict"]
    # Where the plain frequency would be clearly above what the decimals hold, the zeros are read.
    kept = np.round(pe_core.rope_frequencies(64, 1000.0, scaling=proportional(0.5)), 4)
    result = pe_core.identify_encoding(kept)
    assert result["kind"] == "rope_inv_freq" and result["scaling"]["rotated_pairs"] == 16


# --------------------------------------------------------------------------- tables of it


def test_block_averages_of_a_proportional_cache_are_its_blocks_means() -> None:
    """An unrotated pair's block mean is its constant (cos 1, sin 0), not the 0/0 of the Dirichlet factor at
    θ' = 0 (warnings are errors here)."""
    scaling = proportional(0.25, 2.0)
    cos, sin = pe_core.rope_cache(300, 64, 10000.0, scaling=scaling)
    for table, full in (("cos", cos), ("sin", sin)):
        values, rows, cols = pe_core.rope_cache_block_average(300, 64, 10000.0, scaling=scaling, table=table,
                                                              max_rows=7, max_cols=64)
        sums = np.add.reduceat(np.add.reduceat(full, rows[:-1], axis=0), cols[:-1], axis=1)
        np.testing.assert_allclose(values, sums / np.outer(np.diff(rows), np.diff(cols)), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(cos[:, 8:32], 1.0)
    np.testing.assert_array_equal(sin[:, 8:32], 0.0)


@pytest.mark.parametrize(("d", "base", "fraction", "factor", "length", "start", "dtype"), [
    (512, 1e6, 0.25, 1.0, 2048, 0, np.float32),  # Gemma 4's global layers
    (512, 1e6, 0.25, 8.0, 1024, 0, "bfloat16"),
    (256, 10000.0, 0.5, 2.0, 300, 1000, np.float32),
    (64, 10000.0, 0.5, 1.0, 512, 0, np.float32),
])
def test_a_proportional_cos_or_sin_table_is_read_back_as_proportional(
    d: int, base: float, fraction: float, factor: float, length: int, start: int, dtype: object
) -> None:
    """The unrotated pairs hold a and 0 in every row: constant columns, whose frequency the table bounds far below
    the plain one the pair would otherwise have."""
    import ml_dtypes

    stored = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    rotated = int(fraction * d // 2)
    for kind, table in zip(("rope_cos", "rope_sin"), pe_core.rope_cache(length, d, base, scaling=proportional(
            fraction, factor), start=start), strict=True):
        result = pe_core.identify_encoding(table.astype(stored).astype(np.float32))
        assert result["kind"] == kind, result["verdict"]
        assert (result["d"], result["n"], result["start"]) == (d, base, start)
        assert result["scaling"] == {"method": "proportional", "factor": factor, "partial_rotary_factor": fraction,
                                     "rotated_pairs": rotated}
        # The unrotated pairs are said by the method's sentence, not named as too slow to read.
        assert result["unreadable_pairs"] == [] and "too slowly" not in result["verdict"]
        assert f"pairs from {rotated} on are left unrotated" in result["verdict"]


def test_a_plain_table_whose_slow_pairs_do_not_change_stays_plain() -> None:
    """bfloat16 at 64 positions: 30 slow pairs of plain RoPE hold 1 in every row, as unrotated ones would; their
    plain frequencies are within what such a column allows, so they are read as too slow, not as unrotated."""
    import ml_dtypes

    cos, _ = pe_core.rope_cache(64, 128, 500000.0)
    table = cos.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert np.count_nonzero(np.ptp(table[:, :64], axis=0) == 0) == 30
    result = pe_core.identify_encoding(table)
    assert (result["kind"], result["n"], result["scaling"]) == ("rope_cos", 500000.0, None)
    assert result["unreadable_pairs"] == list(range(26, 64))
