"""explorer.arrays: the shared array helpers, against NumPy's own functions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.arrays import true_cells


@settings(max_examples=80, deadline=None)
@given(rows=st.integers(0, 40), cols=st.integers(1, 40), density=st.floats(0.0, 1.0), seed=st.integers(0, 2**32 - 1))
def test_true_cells_are_np_nonzero_of_the_mask(rows: int, cols: int, density: float, seed: int) -> None:
    mask = np.random.default_rng(seed).random((rows, cols)) < density
    got_rows, got_cols = true_cells(mask)
    expected_rows, expected_cols = np.nonzero(mask)
    np.testing.assert_array_equal(got_rows, expected_rows)
    np.testing.assert_array_equal(got_cols, expected_cols)
