"""Array helpers that several topics share."""

from __future__ import annotations

import numpy as np


def true_cells(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the True cells of a 2-D mask, in row-major order: what
    ``np.nonzero(mask)`` gives, from ``np.flatnonzero``, whose scan is about 40x faster than the 2-D
    ``np.nonzero`` in NumPy 2.4 (a 244 x 2048 mask with no True: 0.05 ms against 2.2)."""
    return np.divmod(np.flatnonzero(mask), mask.shape[1])
