"""pe_core.line_envelope: the min/max envelope that long lines are drawn with.

The reference is the docstring's formula written as a plain loop over the bins; the
vectorised function must keep exactly the same points, in the same order.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pe_core


def envelope_loop(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """The formula, bin by bin: the first argmin and the first argmax of each bin, with the
    line's first and last points, in order."""
    if y.size <= max_points:
        return x, y
    edges = np.round(np.linspace(0, y.size, (max_points - 2) // 2 + 1)).astype(int)
    kept = {0, y.size - 1}
    for first, stop in itertools.pairwise(edges):
        kept.add(first + int(np.argmin(y[first:stop])))
        kept.add(first + int(np.argmax(y[first:stop])))
    order = sorted(kept)
    return x[order], y[order]


@pytest.mark.parametrize("size", [1, 2, 3, 10, 999, 1000, 1001, 4097, 16384, 32767])
@pytest.mark.parametrize("max_points", [4, 5, 10, 1000, 3000])
def test_envelope_equals_the_loop(size: int, max_points: int) -> None:
    rng = np.random.default_rng(size * 7919 + max_points)
    x = np.arange(size) - size // 2
    y = rng.normal(size=size)
    got_x, got_y = pe_core.line_envelope(x, y, max_points)
    want_x, want_y = envelope_loop(x, y, max_points)
    np.testing.assert_array_equal(got_x, want_x)
    np.testing.assert_array_equal(got_y, want_y)
    assert got_y.size <= max_points


@settings(max_examples=200, deadline=None)
@given(
    y=arrays(np.float64, st.integers(1, 300), elements=st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])),
    max_points=st.integers(4, 50),
)
def test_envelope_equals_the_loop_with_ties(y: np.ndarray, max_points: int) -> None:
    """Few distinct values, so bins hold many equal extremes: the first one is kept."""
    x = np.arange(y.size, dtype=np.float64) * 0.5
    got_x, got_y = pe_core.line_envelope(x, y, max_points)
    want_x, want_y = envelope_loop(x, y, max_points)
    np.testing.assert_array_equal(got_x, want_x)
    np.testing.assert_array_equal(got_y, want_y)


def test_every_extremum_survives_and_points_are_exact() -> None:
    """A fast sine over 32767 offsets: each bin's highest and lowest value is drawn, so the
    envelope reaches +-1 everywhere instead of aliasing into a slow wave."""
    t = np.arange(-16383, 16384)
    y = np.cos(t * 1.0)
    kx, ky = pe_core.line_envelope(t, y, 3000)
    assert ky.size <= 3000 and np.all(np.diff(kx) > 0)
    assert (kx[0], kx[-1]) == (t[0], t[-1])  # the same x range as the full line
    np.testing.assert_array_equal(ky, np.cos(kx * 1.0))  # real points of the line, not averages
    edges = pe_core.block_edges(t.size, 1499)
    bin_of_kept = np.searchsorted(edges, kx - t[0], side="right") - 1
    for b in range(edges.size - 1):
        inside = y[edges[b] : edges[b + 1]]
        assert ky[bin_of_kept == b].max() == inside.max()
        assert ky[bin_of_kept == b].min() == inside.min()
    assert ky.max() == y.max() and ky.min() == y.min()


def test_short_lines_come_back_whole_as_copies() -> None:
    x, y = np.arange(5), np.array([1.0, -1.0, 2.0, 0.0, 3.0])
    kx, ky = pe_core.line_envelope(x, y, 5)
    np.testing.assert_array_equal(kx, x)
    np.testing.assert_array_equal(ky, y)
    ky[0] = 99.0
    assert y[0] == 1.0


@pytest.mark.parametrize(
    ("x", "y", "max_points", "match"),
    [
        (np.arange(3), np.array([1.0, np.nan, 2.0]), 2, "NaN"),
        (np.arange(3), np.array([1.0, np.inf, 2.0]), 2, "infinite"),
        (np.arange(4), np.arange(3.0), 2, "same length"),
        (np.arange(3), np.arange(3.0), 3, "max_points"),
        (np.arange(3), np.arange(3.0), 2.5, "max_points"),
        (np.arange(6).reshape(2, 3), np.ones((2, 3)), 2, "1-D"),
        (np.arange(0), np.ones(0), 2, "empty"),
    ],
)
def test_bad_arguments_raise_value_errors(x: np.ndarray, y: np.ndarray, max_points: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pe_core.line_envelope(x, y, max_points)
