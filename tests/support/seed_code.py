"""The source documents' own code (shared/seeds), re-typed once for every test that
compares the app with it. Names and bodies follow the documents; only the layout of the
text is repaired where the scrape broke it."""

from __future__ import annotations

import numpy as np


def seed000_getPositionEncoding(seq_len, d, n=10000):
    """Seed 000's loop implementation, as printed in the blog post."""
    P = np.zeros((seq_len, d))
    for k in range(seq_len):
        for i in np.arange(int(d / 2)):
            denominator = np.power(n, 2 * i / d)
            P[k, 2 * i] = np.sin(k / denominator)
            P[k, 2 * i + 1] = np.cos(k / denominator)
    return P


def seed001_transition_matrix(position_delta, angle_rates):
    """Seed 001's transition_matrix (concatenated layout); the notebook's default
    angle_rates is its own d=512 array, so callers pass theirs."""
    # Implement as a matrix multiply:
    #    sin(a+b) = sin(a)*cos(b)+cos(a)*sin(b)
    #    cos(a+b) = cos(a)*cos(b)-sin(a)*sin(b)
    angle_delta = position_delta * angle_rates
    sin_delta = np.sin(angle_delta)
    cos_delta = np.cos(angle_delta)
    I = np.eye(len(angle_rates))  # noqa: E741 (the notebook's name)
    update_sin = np.concatenate([I * cos_delta, I * sin_delta], axis=0)
    update_cos = np.concatenate([-I * sin_delta, I * cos_delta], axis=0)
    return np.concatenate([update_sin, update_cos], axis=-1)


def seed002_positional_encoding(max_position, d_model):
    """Seed 002's loop as written: its i already steps by 2, and it still uses 2*i."""
    pos_enc = np.zeros((max_position, d_model))
    for pos in range(max_position):
        for i in range(0, d_model, 2):
            pos_enc[pos, i] = np.sin(pos / (10000 ** (2 * i / d_model)))
            if i + 1 < d_model:
                pos_enc[pos, i + 1] = np.cos(pos / (10000 ** (2 * i / d_model)))
    return pos_enc


def seed003_binary_representation(x):
    """Seed 003's binary codes, width 10, least significant bit first."""
    all_ = []
    for i in x:
        tmp = list(np.binary_repr(i, width=10))
        tmp = np.array(tmp)
        tmp = tmp[::-1]
        all_.append(tmp)
    return np.array(all_)
