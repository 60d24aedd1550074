"""Files as engineers make them: the PyTorch tutorial's encoding in float32, saved the usual ways.

The table is the tutorial's ``PositionalEncoding`` buffer (pytorch.org, "Language Modeling
with nn.Transformer and torchtext"), re-typed in NumPy with torch's float32 arithmetic:

    position = torch.arange(max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, 1, d_model)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)

torch multiplies the integer range by the Python float as float32, so every step below is
float32 (tests/core/test_identify.py checks this against torch itself). The writers are
the real ``np.save``, ``np.savetxt`` and pandas ``to_csv``, called as people call them.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable

import numpy as np
import pandas as pd


def tutorial_encoding(
    max_len: int = 100, d_model: int = 128, base: float = 10000.0, *, start: int = 0, layout: str = "interleaved"
) -> np.ndarray:
    """The tutorial's table (max_len, d_model) in float32; ``layout="concatenated"`` puts the
    same sines first and the cosines after them, ``start`` shifts the positions."""
    position = np.arange(start, start + max_len, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * np.float32(-math.log(base) / d_model))
    angle = position * div_term
    if layout == "concatenated":
        return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def cosine_first(pe: np.ndarray, layout: str = "interleaved") -> np.ndarray:
    """The common bug: each pair's cosine where the sine belongs (cos, sin, ...; [cos | sin])."""
    swapped = pe.copy()
    if layout == "interleaved":
        swapped[:, 0::2], swapped[:, 1::2] = pe[:, 1::2], pe[:, 0::2]
    else:
        half = pe.shape[1] // 2
        swapped[:, :half], swapped[:, half:] = pe[:, half:], pe[:, :half]
    return swapped


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def savetxt(array: np.ndarray, fmt: str) -> bytes:
    buffer = io.BytesIO()
    np.savetxt(buffer, array, fmt=fmt, delimiter=",")
    return buffer.getvalue()


#: File name -> how the bytes of that file are made from a 2-D table.
WRITERS: dict[str, Callable[[np.ndarray], bytes]] = {
    "pe.npy": npy,
    "pe_buffer.npy": lambda pe: npy(pe[:, None, :]),  # the tutorial's register_buffer: (max_len, 1, d)
    "pe_batch_first.npy": lambda pe: npy(pe[None]),  # (1, max_len, d), as pe.unsqueeze(0) keeps it
    "savetxt_6f.csv": lambda pe: savetxt(pe, "%.6f"),
    "savetxt_9g.csv": lambda pe: savetxt(pe, "%.9g"),
    "savetxt_18e.csv": lambda pe: savetxt(pe, "%.18e"),
    "savetxt_7g.csv": lambda pe: savetxt(pe, "%.7g"),
    "pandas.csv": lambda pe: pd.DataFrame(pe).to_csv().encode(),
    "pandas_no_index.csv": lambda pe: pd.DataFrame(pe).to_csv(index=False).encode(),
    "pandas_float64.csv": lambda pe: pd.DataFrame(pe.astype(np.float64)).to_csv().encode(),
}


def read_back(name: str, data: bytes) -> np.ndarray:
    """The 2-D float64 table as NumPy and pandas read such a file themselves (not the app's loader)."""
    if name.endswith(".npy"):
        return np.load(io.BytesIO(data), allow_pickle=False).astype(np.float64).squeeze()
    if name.startswith("pandas"):
        index_col = None if "no_index" in name else 0
        return pd.read_csv(io.StringIO(data.decode()), index_col=index_col).to_numpy(np.float64)
    return np.loadtxt(io.BytesIO(data), delimiter=",", ndmin=2)
