"""pe_core.attention_scores: every invalid argument raises ValueError with a message a person can
act on, and no NumPy warning on the way (warnings are errors here). The formulas themselves are
checked against independent ones in tests/topics/test_attention.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pe_core


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def raises(match: str):
    return pytest.raises(ValueError, match=match)


@pytest.mark.parametrize(("args", "match"), [
    (([0, 1], 7), "must be even"),
    (([0, 1], 0), "at least 2"),
    (([0, 1], 8, 1.0), "greater than 1"),
    (([0, 1], 8, float("nan")), "finite"),
    (([0, np.nan], 8), "NaN or infinite"),
    (([0, 1e13], 8), "within"),
    ((np.zeros((2, 2)), 8), "0-D or 1-D"),
    (([], 8), "empty"),
    (("a", 8), "real numbers"),
])
def test_rope_dot_by_offset_refuses_bad_arguments(args, match) -> None:
    with raises(match):
        pe_core.rope_dot_by_offset(*args)


def test_rope_dot_by_offset_refuses_a_scaling_that_is_not_one() -> None:
    with raises("RopeScaling"):
        pe_core.rope_dot_by_offset([0, 1], 8, scaling={"rope_type": "linear"})


@pytest.mark.parametrize(("scores", "query", "causal", "match"), [
    ([0.0, np.inf], 0, False, "NaN or infinite"),
    ([0.0, 1.0], 2, False, "at most 1"),
    ([0.0, 1.0], -1, False, "at least 0"),
    ([0.0, 1.0], 0.5, False, "whole number"),
    ([0.0, 1.0], 0, "yes", "True or False"),
    ([], 0, False, "empty"),
    ([[0.0]], 0, False, "1-D"),
])
def test_attention_weights_refuses_bad_arguments(scores, query, causal, match) -> None:
    with raises(match):
        pe_core.attention_weights(scores, query, causal=causal)


def test_attention_weights_take_any_finite_scale_without_overflow() -> None:
    weights = pe_core.attention_weights([1e300, -1e300, 1e300], 2)
    np.testing.assert_array_equal(weights, [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(pe_core.attention_weights([5.0, 1e300], 0, causal=True), [1.0, 0.0])


@pytest.mark.parametrize(("weights", "match"), [
    ([0.0, 0.0], "all 0"), ([0.5, -0.1], "0 or more"), ([np.nan, 1.0], "NaN or infinite"), ([], "empty"),
])
def test_half_mass_radius_and_effective_keys_refuse_bad_weights(weights, match) -> None:
    with raises(match):
        pe_core.half_mass_radius(weights, 0)
    with raises(match):
        pe_core.effective_keys(weights)


def test_half_mass_radius_refuses_a_query_outside_the_keys() -> None:
    with raises("at most 1"):
        pe_core.half_mass_radius([0.5, 0.5], 2)
