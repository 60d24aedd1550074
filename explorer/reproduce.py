"""'Reproduce this' code: standalone NumPy (and PyTorch) snippets for the exact settings.

Each snippet imports only numpy (or torch), never pe_core, so a student can paste it in a
notebook. Snippets are built from the pieces here, end by binding ``result`` to what the
page shows, and the tests execute them and compare ``result`` with the app's numbers.
"""

from __future__ import annotations

import numpy as np

from explorer.settings import Settings


def _literal(value: float) -> str:
    """A Python literal that round-trips the float exactly."""
    return repr(float(value))


def encoding_code(settings: Settings, *, start: int = 0, name: str = "P") -> str:
    """NumPy code that builds the (L, d) encoding for ``settings`` into ``name``."""
    if settings.convention == "paper":
        rate = "w = n ** (-2 * i / d)  # paper: w_i = n^(-2i/d)"
    else:
        rate = "w = n ** (-i / max(len(i) - 1, 1))  # tensor2tensor: w_i = n^(-i/(m-1))"
    if settings.layout == "interleaved":
        fill = (
            f"{name} = np.empty((L, d))\n"
            f"{name}[:, 0::2] = np.sin(k * w)  # interleaved: sin, cos, sin, cos, ...\n"
            f"{name}[:, 1::2] = np.cos(k * w[: d // 2])"
        )
    else:
        fill = f"{name} = np.concatenate([np.sin(k * w), np.cos(k * w[: d // 2])], axis=1)  # [sin | cos]"
    positions = f"np.arange({start}, {start} + L, dtype=np.float64)" if start else "np.arange(L, dtype=np.float64)"
    return (
        "import numpy as np\n\n"
        f"L, d, n = {settings.L}, {settings.d}, {_literal(settings.n)}\n"
        "i = np.arange((d + 1) // 2)\n"
        f"{rate}\n"
        f"k = {positions}[:, None]\n"
        f"{fill}\n"
    )


def torch_encoding_code(settings: Settings, *, name: str = "P") -> str:
    """PyTorch code that builds the same encoding (float64, so it matches to round-off)."""
    if settings.convention == "paper":
        rate = "w = n ** (-2 * i / d)"
    else:
        rate = "w = n ** (-i / max(len(i) - 1, 1))"
    if settings.layout == "interleaved":
        fill = (
            f"{name} = torch.empty(L, d, dtype=torch.float64)\n"
            f"{name}[:, 0::2] = torch.sin(k * w)\n"
            f"{name}[:, 1::2] = torch.cos(k * w[: d // 2])"
        )
    else:
        fill = f"{name} = torch.cat([torch.sin(k * w), torch.cos(k * w[: d // 2])], dim=1)"
    return (
        "import torch\n\n"
        f"L, d, n = {settings.L}, {settings.d}, {_literal(settings.n)}\n"
        "i = torch.arange((d + 1) // 2, dtype=torch.float64)\n"
        f"{rate}\n"
        "k = torch.arange(L, dtype=torch.float64)[:, None]\n"
        f"{fill}\n"
    )


def block_average_code(matrix: str, row_edges: np.ndarray, col_edges: np.ndarray | None = None) -> str:
    """NumPy code that block-averages ``matrix`` as the chart does (exact edges inlined).

    Edges are written with np.linspace so the code stays short whatever the size; the
    rounding matches pe_core.block_edges.
    """
    rows = f"np.round(np.linspace(0, {int(row_edges[-1])}, {len(row_edges)})).astype(int)"
    code = f"rows = {rows}\n"
    code += f"{matrix} = np.add.reduceat({matrix}, rows[:-1], axis=0) / np.diff(rows)[:, None]\n"
    if col_edges is not None:
        cols = f"np.round(np.linspace(0, {int(col_edges[-1])}, {len(col_edges)})).astype(int)"
        code += f"cols = {cols}\n"
        code += f"{matrix} = np.add.reduceat({matrix}, cols[:-1], axis=1) / np.diff(cols)[None, :]\n"
    return code


def run_snippet(code: str) -> dict[str, object]:
    """Execute a snippet in a fresh namespace and return it (the tests compare ``result``)."""
    namespace: dict[str, object] = {}
    exec(compile(code, "<reproduce-this>", "exec"), namespace)  # our own generated code, never user text
    return namespace
