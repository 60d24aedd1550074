"""Formulas and measures written out independently of pe_core and explorer, shared by the
topic tests (so that a mistake shared with the code under test cannot hide)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go


def payload(fig) -> int:
    """Bytes of a figure's JSON: what a chart sends to the browser."""
    return len(fig.to_json())


def assert_same_as_validated(fig: go.Figure) -> None:
    """A figure built without Plotly's validation (explorer.figures.figure) is the one
    validation builds: go.Figure raises on a property Plotly does not know, and the JSON
    (parsed: key order aside) is the same, so no value is left as validation would not leave it."""
    checked = go.Figure(fig.to_dict())
    assert json.loads(checked.to_json()) == json.loads(fig.to_json())


def encoding(L: int, d: int, n: float = 10000.0, layout: str = "interleaved", convention: str = "paper",
             start: int = 0) -> np.ndarray:
    """PE(k, 2i) = sin(k w_i), PE(k, 2i+1) = cos(k w_i), written out independently (even d)."""
    m = d // 2
    i = np.arange(m)
    w = n ** (-2.0 * i / d) if convention == "paper" else (1.0 / n) ** np.linspace(0, 1, m)
    angle = np.arange(start, start + L)[:, None] * w[None, :]
    if layout == "concatenated":
        return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1)
    P = np.empty((L, d))
    P[:, 0::2], P[:, 1::2] = np.sin(angle), np.cos(angle)
    return P


def rates(d: int, n: float = 10000.0, convention: str = "paper") -> np.ndarray:
    m = d // 2
    return n ** (-2.0 * np.arange(m) / d) if convention == "paper" else (1.0 / n) ** np.linspace(0, 1, m)


def y_of(trace) -> np.ndarray:
    return np.asarray(trace.y, dtype=np.float64)


def rotate_half(x: np.ndarray) -> np.ndarray:
    """transformers' rotate_half (Llama, the "half" layout): (-x2, x1) of the two halves."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rotate_every_two(x: np.ndarray) -> np.ndarray:
    """GPT-J's rotate_every_two (the "interleaved" layout): (-x_odd, x_even) in each pair."""
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return out
