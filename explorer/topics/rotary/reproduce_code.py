"""Rotary's "reproduce this" code: ``rotary_code``, standalone NumPy (or PyTorch) that computes the page's
numbers and arrays for the exact settings, with the scaling's own fragment (``scaling_code``), and the
labels of the page's metrics that the snippet's ``numbers`` repeats."""

from __future__ import annotations

import numpy as np

import pe_core
from explorer import reproduce, rope_methods
from explorer.topics.rotary.view import LAYOUT_CODE, OTHER_LAYOUT, QK_LABELS, RotaryView, window_positions

#: The labels of the page's metrics, which the snippet's ``numbers`` repeats.
DECAY_LABELS = ("largest |score| ÷ (d·a²·bound)", "relative bound at m − n = L − 1")
MIXING_LABELS = ("largest |error| of a drawn cell", "largest change of |q| (%)", "change along a diagonal")


def pair_labels(pair: int) -> tuple[str, str, str]:
    """The labels of the pair section's metrics: the angle, the pair's score, the same from m - n."""
    return f"m·θ'_{pair} (degrees)", f"pair {pair}: q_m·k_n", f"pair {pair}: g_{pair}(m − n)"


def scaling_code(scaling: pe_core.RopeScaling | None, d: int) -> str:
    """NumPy lines that turn ``theta`` (θ_i) into θ'_i and set ``a``, the attention factor, as
    pe_core.rope_frequencies and rope_attention_factor compute them: the method's own fragment
    (explorer.rope_methods), called at the sequence length L."""
    if scaling is None:
        return "a = 1.0  # no scaling: no attention factor\n"
    function = rope_methods.method_entry(scaling.method).function
    return (f"\n\n{rope_methods.fragment(scaling)}\n\n"
            f"theta, a = {function}(theta, d, b, L)  # {rope_methods.describe(scaling, d)}\n")


#: The snippets' columns of each pair, by layout.
PAIR_COLUMNS_CODE = {"half": "np.arange(d // 2), np.arange(d // 2, d)",
                     "interleaved": "np.arange(0, d, 2), np.arange(1, d, 2)"}


def rotary_code(
    view: RotaryView,
    *,
    pair: int,
    m: int,
    n: int,
    blocks: int,
    library: str = "numpy",
) -> str:
    """Rotary: the page's numbers for the exact settings, and the score matrix, the decay and the mixing
    error as drawn. NumPy applies the cache as transformers does (``rotate_half``, or GPT-J's
    ``rotate_every_two`` for the interleaved layout); PyTorch the same with torch's tensors. Binds
    ``result`` (download key -> array) and ``numbers`` (the page's metrics), and prints them."""
    d, L, layout = view.d, view.L, view.layout
    rotate, other = LAYOUT_CODE[layout][1], LAYOUT_CODE[OTHER_LAYOUT[layout]][1]
    edges = pe_core.block_edges(L, blocks)
    torch = library == "torch"
    code = (
        f"# Rotary (RoPE), {view.describe()}, query and key {QK_LABELS[view.qk]}"
        + (f" (seed {view.seed})" if view.qk == "random" else "") + "\n"
        "import math\n\nimport numpy as np\n" + (reproduce.TORCH_IMPORTS if torch else "")
        + f"\nL, d, b = {L}, {d}, {reproduce.literal(view.base)}\n"
        "theta = b ** -(np.arange(0, d, 2, dtype=np.float64) / d)  # θ_i = b^(-2i/d), in float64 "
        "(transformers: float32)\n"
        + scaling_code(view.scaling, d)
        + f"first, second = {PAIR_COLUMNS_CODE[layout]}  # {layout}: pair i is {LAYOUT_CODE[layout][2]}\n"
    )
    if view.qk == "ones":
        code += "q, k = np.ones(d), np.ones(d)\n"
    else:
        code += (
            f"pairs = np.random.default_rng({view.seed}).standard_normal((2, 2, d // 2))  # (q, k) x (u, v) x pair\n"
            "q, k = np.empty(d), np.empty(d)\n"
            "q[first], q[second] = pairs[0]\n"
            "k[first], k[second] = pairs[1]\n"
        )
    if torch:
        emb = "torch.cat((freqs, freqs), dim=-1)" if layout == "half" else "freqs.repeat_interleave(2, dim=-1)"
        code += (
            "\n# transformers' cos and sin cache (times a) and apply_rotary_pos_emb, in float64\n"
            "freqs = torch.outer(torch.arange(L, dtype=torch.float64), torch.from_numpy(theta))\n"
            f"emb = {emb}\n"
            "cos, sin = a * emb.cos(), a * emb.sin()\n\n\n"
            "def rotate_half(x):\n"
            "    return torch.cat((-x[..., d // 2 :], x[..., : d // 2]), dim=-1)\n\n\n"
            "def rotate_every_two(x):  # GPT-J\n"
            "    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)\n\n\n"
            "Q, K = torch.from_numpy(q).expand(L, d), torch.from_numpy(k).expand(L, d)\n"
            f"q_m, k_n = (Q * cos + {rotate}(Q) * sin).numpy(), (K * cos + {rotate}(K) * sin).numpy()\n"
            f"wrong_q, wrong_k = (Q * cos + {other}(Q) * sin).numpy(), (K * cos + {other}(K) * sin).numpy()\n"
        )
    else:
        emb = "np.concatenate([freqs, freqs], axis=1)" if layout == "half" else "np.repeat(freqs, 2, axis=1)"
        code += (
            "\n# transformers' cos and sin cache (times a) and apply_rotary_pos_emb\n"
            "freqs = np.outer(np.arange(L, dtype=np.float64), theta)  # m θ'_i\n"
            f"emb = {emb}\n"
            "cos, sin = a * np.cos(emb), a * np.sin(emb)\n\n\n"
            "def rotate_half(x):\n"
            "    return np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], axis=-1)\n\n\n"
            "def rotate_every_two(x):  # GPT-J\n"
            "    return np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)\n\n\n"
            "Q, K = np.tile(q, (L, 1)), np.tile(k, (L, 1))\n"
            f"q_m, k_n = Q * cos + {rotate}(Q) * sin, K * cos + {rotate}(K) * sin  # each position's turned q and k\n"
            f"wrong_q, wrong_k = Q * cos + {other}(Q) * sin, K * cos + {other}(K) * sin\n"
        )
    size = f"  # {L * L * 8 / 1e9:.1f} GB here: in blocks of rows if that is too much" if L * L * 8 > 5e8 else ""
    W = window_positions(L)[0]
    angle, pair_score, pair_offset = pair_labels(pair)
    code += (
        f"S = q_m @ k_n.T  # the scores q_m·k_n, L x L{size}\n"
        "scores = S.copy()\n" + _averaged("scores", edges, edges)
        + "wrong = wrong_q @ wrong_k.T  # the scores with the other layout's rotate: the bug\n"
        "error = wrong - S\n" + _averaged("error", edges, edges)
        + f"W = {W}  # the page measures the first and the last W positions\n"
        "norms = np.linalg.norm(wrong_q[np.r_[0:W, L - W : L]], axis=1) / (a * np.linalg.norm(q))  # 1 if rotated\n"
        "\n# RoFormer's long-term decay: bound = mean_j |Σ_{i<j} e^(i t θ'_i)|; the all-ones score Σ_i 2 cos(t θ'_i)\n"
        "distance = np.arange(L)\n"
        "bound = np.abs(np.cumsum(np.exp(1j * np.outer(distance, theta)), axis=1)).mean(axis=1)\n"
        "ones = a**2 * 2 * np.cos(np.outer(distance, theta)).sum(axis=1)\n"
        f"\n# Pair {pair} of q at m = {m} and of k at n = {n}, as complex numbers u + iv turned by e^(i m θ')\n"
        f"pair, m, n = {pair}, {m}, {n}\n"
        "zq, zk = q[first[pair]] + 1j * q[second[pair]], k[first[pair]] + 1j * k[second[pair]]\n"
        "turned_q, turned_k = zq * np.exp(1j * m * theta[pair]), zk * np.exp(1j * n * theta[pair])\n"
        + reproduce.numbers_code({
            angle: ("np.degrees(m * theta[pair])", ",.4f"),
            pair_score: ("a**2 * (turned_q * turned_k.conjugate()).real", ".6g"),
            pair_offset: ("a**2 * (zq * zk.conjugate() * np.exp(1j * (m - n) * theta[pair])).real", ".6g"),
            DECAY_LABELS[0]: ("np.max(np.abs(ones) / (a**2 * d * bound))", ".4f"),
            DECAY_LABELS[1]: ("bound[-1]", ".6g"),
            MIXING_LABELS[0]: ("np.abs(error).max()", ".4g"),
            MIXING_LABELS[1]: ("100 * np.abs(norms - 1).max()", ".3g"),
            MIXING_LABELS[2]: ("np.abs(wrong[:W, :W] - wrong[L - W :, L - W :]).max()", ".4g"),
        })
    )
    return code + reproduce.result_code({
        "rotary_scores": "scores",
        "rotary_decay": "np.column_stack([distance, bound, ones])",
        "rotary_mixing": "error",
    })


def _averaged(names: str | tuple[str, ...], row_edges: np.ndarray, col_edges: np.ndarray) -> str:
    """Block-average code for the axes the charts reduce (none when every cell is drawn)."""
    return reproduce.block_average_code(
        names, row_edges if reproduce.is_reduced(row_edges) else None,
        col_edges if reproduce.is_reduced(col_edges) else None,
    )
