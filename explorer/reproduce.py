"""'Reproduce this' code: standalone NumPy (and PyTorch) snippets for the exact settings.

Each snippet imports only numpy (and torch, in the PyTorch variants), never pe_core, so a
student can paste it in a notebook. Snippets are built from the pieces here and end by
binding ``result`` to what the page shows: for a page, a dict from the key of each of its
downloads to the array that download holds. The tests (tests/test_reproduce.py) execute
them and compare ``result`` with the app's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import pe_core
from explorer import criteria, relation_figures
from explorer.settings import Settings


def _literal(value: float) -> str:
    """A Python literal that round-trips the float exactly."""
    return repr(float(value))


def _rate_line(settings: Settings) -> str:
    if settings.convention == "paper":
        return "w = n ** (-2 * i / d)  # paper: w_i = n^(-2i/d)"
    return "w = n ** (-i / max(len(i) - 1, 1))  # tensor2tensor: w_i = n^(-i/(m-1))"


def _header(settings: Settings, imports: str, library: str = "numpy") -> str:
    """Imports, the settings, the pair indices i and the rates w (rad/position)."""
    pairs = "np.arange((d + 1) // 2)" if library == "numpy" else "torch.arange((d + 1) // 2, dtype=torch.float64)"
    return (
        f"{imports}\n"
        f"L, d, n = {settings.L}, {settings.d}, {_literal(settings.n)}\n"
        f"i = {pairs}\n"
        f"{_rate_line(settings)}\n"
    )


def _fill_lines(layout: str, name: str, rows: str, library: str = "numpy") -> list[str]:
    """Lines that fill ``name`` (``rows`` x d) from the column of positions ``k`` and the rates ``w``."""
    lib = "np" if library == "numpy" else "torch"
    sines, cosines = f"{lib}.sin(k * w)", f"{lib}.cos(k * w[: d // 2])"
    if layout == "concatenated":
        join = "np.concatenate([{}, {}], axis=1)" if library == "numpy" else "torch.cat([{}, {}], dim=1)"
        return [f"{name} = {join.format(sines, cosines)}  # [sin | cos]"]
    empty = f"np.empty(({rows}, d))" if library == "numpy" else f"torch.empty({rows}, d, dtype=torch.float64)"
    return [
        f"{name} = {empty}",
        f"{name}[:, 0::2] = {sines}  # interleaved: sin, cos, sin, cos, ...",
        f"{name}[:, 1::2] = {cosines}",
    ]


def _positions_line(start: int, library: str = "numpy") -> str:
    """``k``: the column of positions start .. start+L-1, as float64."""
    if library == "numpy":
        arange = f"np.arange({start}, {start} + L, dtype=np.float64)" if start else "np.arange(L, dtype=np.float64)"
    else:
        arange = (
            f"torch.arange({start}, {start} + L, dtype=torch.float64)" if start
            else "torch.arange(L, dtype=torch.float64)"
        )
    return f"k = {arange}[:, None]\n"


def encoding_rows_code(settings: Settings, *, start: int = 0, name: str = "P", library: str = "numpy") -> str:
    """Code that builds the L rows of positions start.. into ``name``, after a header
    (``encoding_code`` or ``torch_encoding_code``) has set L, d, n and w."""
    return _positions_line(start, library) + "\n".join(_fill_lines(settings.layout, name, "L", library)) + "\n"


def encoding_code(settings: Settings, *, start: int = 0, name: str = "P") -> str:
    """NumPy code that builds the (L, d) encoding for ``settings`` into ``name``."""
    return _header(settings, "import numpy as np\n") + encoding_rows_code(settings, start=start, name=name)


def torch_encoding_code(settings: Settings, *, start: int = 0, name: str = "P", imports: str = "import torch\n") -> str:
    """PyTorch code that builds the same encoding (float64, so it matches to round-off)."""
    return _header(settings, imports, "torch") + encoding_rows_code(settings, start=start, name=name, library="torch")


def encoding_function_code(settings: Settings) -> str:
    """NumPy code that defines ``encoding(first, count)``: rows first .. first+count-1 of P,
    for snippets that need positions other than 0 .. L-1."""
    fill = "".join(f"    {line}\n" for line in _fill_lines(settings.layout, "P", "count"))
    return (
        _header(settings, "import numpy as np\n")
        + "\n\ndef encoding(first, count):\n"
        + '    """Rows first .. first+count-1 of the encoding (positions as float64)."""\n'
        + "    k = np.arange(first, first + count, dtype=np.float64)[:, None]\n"
        + fill
        + "    return P\n\n\n"
    )


def _edges_line(name: str, edges: np.ndarray) -> str:
    """``name = ...``: the block edges, written with np.linspace so the code stays short
    whatever the size; the rounding matches pe_core.block_edges (checked here)."""
    edges = np.asarray(edges)
    size, count = int(edges[-1]), len(edges)
    if not np.array_equal(edges, np.round(np.linspace(0, size, count)).astype(np.int64)):
        raise ValueError(f"edges {edges[:5]}... are not pe_core.block_edges({size}, {count - 1}).")
    return f"{name} = np.round(np.linspace(0, {size}, {count})).astype(int)\n"


def block_average_code(
    matrix: str | Sequence[str], row_edges: np.ndarray | None, col_edges: np.ndarray | None = None
) -> str:
    """NumPy code that block-averages ``matrix`` (or each of several matrices) as the chart
    does: rows between ``row_edges``, then columns between ``col_edges`` (either may be None)."""
    names = [matrix] if isinstance(matrix, str) else list(matrix)
    code = ""
    for edges_name, edges, axis, counts in (("rows", row_edges, 0, "[:, None]"), ("cols", col_edges, 1, "[None, :]")):
        if edges is not None:
            code += _edges_line(edges_name, edges)
            code += "".join(
                f"{name} = np.add.reduceat({name}, {edges_name}[:-1], axis={axis}) / np.diff({edges_name}){counts}\n"
                for name in names
            )
    return code


def run_snippet(code: str) -> dict[str, object]:
    """Execute a snippet in a fresh namespace and return it (the tests compare ``result``)."""
    namespace: dict[str, object] = {}
    exec(compile(code, "<reproduce-this>", "exec"), namespace)  # our own generated code, never user text
    return namespace


# --------------------------------------------------------------------------------------
# One snippet per page. Each binds ``result`` to a dict: the key of each of the page's
# downloads -> the array that download holds (same rows, same columns, same numbers).
# --------------------------------------------------------------------------------------

#: f(t) = sum_i cos(w_i t) for t = 0 .. L-1: the dot product of any two positions t apart (even d).
_OFFSET_DOT_LINE = (
    "half = np.cos(np.multiply.outer(np.arange(L, dtype=np.float64), w)).sum(axis=1)"
    "  # f(t) = Σ_i cos(ω_i t), t = 0..L-1\n"
)


def _imports(library: str) -> str:
    return "import numpy as np\n" + ("import torch\n" if library == "torch" else "")


def _result_code(entries: dict[str, str]) -> str:
    """``result = {download key: expression, ...}``."""
    return "\nresult = {\n" + "".join(f'    "{key}": {value},\n' for key, value in entries.items()) + "}\n"


def _is_reduced(edges: np.ndarray) -> bool:
    """Whether blocks between ``edges`` hold more than one item each somewhere."""
    return len(edges) - 1 < int(edges[-1])


def _pair_edges(d: int, layout: str, max_cols: int) -> np.ndarray | None:
    """Edges of the runs of pairs that the drawn columns average (``pe_core.column_groups``),
    or None when every column is drawn as it is."""
    is_sine, first, _ = pe_core.column_groups(d, layout, max_cols)
    m = (d + 1) // 2
    if first[is_sine].size == m:
        return None
    if d % 2:
        raise ValueError(f"the snippets average runs of sine/cosine pairs and need an even d, got d={d}.")
    return np.r_[first[is_sine], m]


def encoding_blocks_code(
    source: str, target: str, layout: str, row_edges: np.ndarray, pair_edges: np.ndarray | None
) -> str:
    """NumPy code that averages the encoding ``source`` into ``target`` as the heatmaps draw it:
    blocks of positions between ``row_edges`` and, with ``pair_edges``, runs of pairs whose
    sines are averaged apart from their cosines (``pe_core.column_groups``)."""
    code = f"{target} = {source}\n"
    if _is_reduced(row_edges):
        code += block_average_code(target, row_edges)
    if pair_edges is None:
        return code
    if layout == "interleaved":
        split = f"S, C = {target}[:, 0::2], {target}[:, 1::2]  # the sine and the cosine columns, in pair order\n"
        join = (
            f"{target} = np.empty((S.shape[0], 2 * S.shape[1]))\n"
            f"{target}[:, 0::2], {target}[:, 1::2] = S, C  # sin, cos, sin, cos, ... of the runs\n"
        )
    else:
        split = f"S, C = {target}[:, : d // 2], {target}[:, d // 2 :]  # the sine and the cosine columns\n"
        join = f"{target} = np.concatenate([S, C], axis=1)  # [sin | cos] of the runs\n"
    return (
        code
        + "# A drawn column averages a run of pairs' sines, or their cosines, never both\n"
        + split
        + block_average_code(("S", "C"), None, pair_edges)
        + join
    )


def _title(page: str, settings: Settings, what: str) -> str:
    return (
        f"# {page} (L={settings.L}, d={settings.d}, n={_literal(settings.n)}, {settings.layout}, "
        f"{settings.convention}): {what}\n"
    )


def home_code(settings: Settings) -> str:
    """Home: seed 000's four criteria measured as ``explorer.criteria`` does; ``result`` rows
    are (measured value, passes 1/0) in the page's order."""
    L, d = settings.L, settings.d
    c = criteria
    if L * L * d <= c.DIRECT_PAIRS_CELLS or d % 2:
        unique = (
            "# 1. Unique: the smallest distance between two positions (every pair of rows compared)\n"
            "best = np.inf\n"
            "for offset in range(1, L):\n"
            "    diff = P[offset:] - P[:-offset]\n"
            '    best = min(best, np.einsum("kj,kj->k", diff, diff).min())\n'
            "unique = np.sqrt(best)\n"
        )
    else:
        unique = (
            "# 1. Unique: the smallest distance between two positions, from the closed form\n"
            "#    |P[k] - P[k+t]|² = d - 2 Σ_i cos(ω_i t), the same for every k (even d)\n"
            "offsets = np.arange(1, L, dtype=np.float64)\n"
            "sse = np.maximum(d - 2.0 * np.cos(np.multiply.outer(offsets, w)).sum(axis=-1), 0.0)\n"
            "unique = np.sqrt(sse.min())\n"
        )
    return (
        _title("Home", settings, "seed 000's criteria")
        + encoding_function_code(settings)
        + "P = encoding(0, L)\n\n"
        + unique
        + "\n\n# 2. Consistent distance: |P[k+1] - P[k]| in a sentence of L and in one of 2L positions\n"
        "def steps(start, count):\n"
        '    """|P[k+1] - P[k]| for k = start .. start+count-1."""\n'
        "    diff = np.diff(encoding(start, max(count, 0) + 1), axis=0)\n"
        '    return np.sqrt(np.einsum("kj,kj->k", diff, diff))\n\n\n'
        f"window = {c.WINDOW}\n"
        "longer = max(2 * L, L + 2)  # the longer sentence: at least two pairs, even for L = 1\n"
        "inside = steps(0, min(L - 1, window))  # the sentence of L\n"
        "first = steps(0, min(longer - 1, window))  # the longer one from its start ...\n"
        "added = max(L - 1, first.size)\n"
        "later = steps(added, min(longer - 1 - added, window))  # ... and where it reaches the positions it adds\n"
        "distances = np.concatenate([inside, first, later])\n"
        "consistent = np.ptp(distances) if distances.size >= 2 else np.nan  # NaN: nothing to compare\n"
        f"\n# 3. Bounded: the largest |value| over the L positions and at position {c.FAR_POSITION:,}\n"
        f"largest, far = np.abs(P).max(), np.abs(encoding({c.FAR_POSITION}, 1)).max()\n"
        "bounded = max(largest, far)\n"
        "\n# 4. Deterministic: values that differ in any bit between two computations\n"
        "rows = min(L, window)\n"
        "differing = 0\n"
        f"for start in sorted({{0, max(L - rows, 0), {c.FAR_POSITION}}}):\n"
        "    once, again = encoding(start, rows), encoding(start, rows)\n"
        "    differing += np.count_nonzero(once.view(np.uint64) != again.view(np.uint64))\n"
        "\nvalues = np.array([unique, consistent, bounded, differing], dtype=np.float64)\n"
        f"passes = [unique >= {c.UNIQUE_MIN_DISTANCE!r}, consistent <= {c.CONSISTENT_TOLERANCE!r}, "
        "far <= max(largest, 1.0), differing == 0]\n"
        + _result_code({"home_criteria": "np.column_stack([values, passes])"})
    )


def matrix_code(
    settings: Settings,
    view: str,
    *,
    transpose: bool = False,
    max_rows: int,
    max_cols: int,
    row_start: int | None = None,
    library: str = "numpy",
) -> str:
    """Encoding matrix: the heatmap of P (view "values") or of its angles in degrees ("angles"),
    averaged as drawn with at most ``max_rows`` x ``max_cols`` cells, and the rates chart.

    Rows are blocks of all L positions, or with ``row_start`` the window of ``max_rows``
    single positions row_start .. row_start + max_rows - 1 that the page then draws.
    """
    if view not in ("values", "angles"):
        raise ValueError(f"view must be 'values' or 'angles', got {view!r}.")
    L, d, layout = settings.L, settings.d, settings.layout
    rows = L if row_start is None else min(max_rows, L)
    row_edges = pe_core.block_edges(rows, max_rows)
    where = "" if row_start is None else f" on positions {row_start}..{row_start + rows - 1}"
    code = _title("Encoding matrix", settings, f"the {view} heatmap as drawn{where}, and the rates")
    code += _header(settings, _imports(library), library)
    if row_start is None:
        positions = _positions_line(0, library)
    else:
        arange = "np.arange" if library == "numpy" else "torch.arange"
        dtype = "np.float64" if library == "numpy" else "torch.float64"
        positions = (
            f"first, rows = {row_start}, {rows}  # the window: positions first .. first+rows-1, one row each\n"
            f"k = {arange}(first, first + rows, dtype={dtype})[:, None]\n"
        )
    if view == "values":
        key = "matrix_heatmap"
        code += positions + "\n".join(_fill_lines(layout, "P", "L" if row_start is None else "rows", library)) + "\n"
        if library == "torch":
            code += "P, w = P.numpy(), w.numpy()  # from here on NumPy: the averages the chart draws\n"
        code += "\n" + encoding_blocks_code("P", "shown", layout, row_edges, _pair_edges(d, layout, max_cols))
    else:
        key = "matrix_angles"
        pair_edges = _pair_edges(2 * ((d + 1) // 2), "concatenated", 2 * max_cols)
        code += positions + "theta = k * w  # the angle k·ω_i of every position and pair (rad)\n"
        if library == "torch":
            code += "theta, w = theta.numpy(), w.numpy()  # from here on NumPy: the averages the chart draws\n"
        code += (
            "\n# A block of angles is drawn as its circular mean atan2(mean sin, mean cos): 359° and 1° are close\n"
            "S, C = np.sin(theta), np.cos(theta)\n"
        )
        code += block_average_code(("S", "C"), row_edges if _is_reduced(row_edges) else None, pair_edges)
        code += "shown = np.degrees(np.arctan2(S, C)) % 360.0\n"
    code += (
        "\n# The rate and wavelength charts: pair i, ω_i (rad/position), λ_i = 2π/ω_i (positions)\n"
        "rates = np.column_stack([np.arange(len(w)), w, 2 * np.pi / w])\n"
    )
    return code + _result_code({key: "shown.T" if transpose else "shown", "matrix_rates": "rates"})


def waves_code(
    settings: Settings,
    *,
    positions: Sequence[int],
    pairs_shown: int,
    columns: Sequence[int],
    pair: int,
    position: int,
    max_trail: int,
) -> str:
    """Waves: sin(k·ω_x) of the first ``pairs_shown`` pairs at ``positions``, the chosen
    ``columns`` of P over every position, and ``pair``'s trail on the unit circle up to ``position``."""
    positions, columns = [int(k) for k in positions], [int(j) for j in columns]
    trail_first = max(0, position - max_trail + 1)
    return (
        _title("Waves", settings, "the three charts' data")
        + encoding_code(settings)
        + f"\n# (a) sin(k·ω_x) of pairs x = 0..{pairs_shown - 1}: the pair index x, then one column per position k\n"
        f"positions = {positions}\n"
        f"profiles = np.column_stack([np.arange({pairs_shown}), "
        f"np.sin(np.multiply.outer(w[:{pairs_shown}], positions))])\n"
        "\n# (b) chosen columns of P over every position: the position k, then one column per j\n"
        f"columns = {columns}\n"
        "lines = np.column_stack([np.arange(L), P[:, columns]])\n"
        f"\n# (c) pair {pair} on the unit circle: positions {trail_first}..{position} and their (cos, sin)\n"
        f"pair, last = {pair}, {position}\n"
        f"trail = np.arange({trail_first}, last + 1)\n"
        "theta = trail * w[pair]\n"
        "circle = np.column_stack([trail, np.cos(theta), np.sin(theta)])\n"
        + _result_code({"waves_profiles": "profiles", "waves_columns": "lines", "waves_circle": "circle"})
    )


def similarity_code(settings: Settings, ref: int, *, blocks: int, full_cells: int, measured_cells: int) -> str:
    """Similarity: the curves against ``ref`` (measured on P up to ``full_cells`` cells, else
    the closed form), the dot-product matrix in ``blocks`` x ``blocks`` block means, and the
    closed form with the dot products measured as the page measures them."""
    L, d = settings.L, settings.d
    edges = pe_core.block_edges(L, blocks)
    code = _title("Similarity", settings, f"every position against position {ref}") + encoding_function_code(settings)
    code += "# f(t) = P[k]·P[k+t] for every k (even d), mirrored to t = -(L-1)..L-1 since cos is even\n"
    code += _OFFSET_DOT_LINE + "f = np.r_[half[:0:-1], half]\n"
    code += f"\nref = {ref}\n"
    if L * d <= full_cells:
        code += (
            "# The curves, measured on P (seed 001's computation)\n"
            "P = encoding(0, L)\n"
            "dot = P @ P[ref]\n"
            'sse = np.einsum("kj,kj->k", P - P[ref], P - P[ref])\n'
            "cosine = dot / (np.linalg.norm(P, axis=1) * np.linalg.norm(P[ref]))\n"
            "first, measured = 0, dot\n"
        )
    else:
        first, count = relation_figures.measure_window(L, d, ref, measured_cells)
        code += (
            f"# L x d = {L * d:,} cells: the page draws the curves from the closed form (|P[k]|² = d/2)\n"
            "dot = f[np.arange(L) - ref + L - 1]\n"
            "sse = d - 2.0 * dot\n"
            "cosine = dot / (d / 2)\n"
            "# ... and measures the dot products on a window of positions around the reference\n"
            f"first, count = {first}, {count}\n"
            "measured = encoding(first, count) @ encoding(ref, 1)[0]\n"
        )
    code += "\n# The L x L dot-product matrix G[k, k′] = f(k′ - k)" + (
        ", averaged over blocks of positions as drawn\n" if _is_reduced(edges) else "\n"
    )
    size = f"  # {L * L * 8 / 1e9:.1f} GB: block by block if that is too much\n" if L * L * 8 > 5e8 else "\n"
    code += "t = np.arange(L)\nG = f[t[None, :] - t[:, None] + L - 1]" + size
    if _is_reduced(edges):
        code += block_average_code("G", edges, edges)
    code += (
        "\n# The closed form at every offset δ, and the measured P[ref+δ]·P[ref] (NaN where not measured)\n"
        "measured_at = np.full(2 * L - 1, np.nan)\n"
        "measured_at[first - ref + L - 1 : first - ref + L - 1 + measured.size] = measured\n"
    )
    return code + _result_code({
        "similarity_lines": "np.column_stack([np.arange(L), dot, sse, cosine])",
        "similarity_matrix": "G",
        "similarity_closed_form": "np.column_stack([np.arange(-(L - 1), L), f, measured_at])",
    })


def binary_code(
    settings: Settings, *, bits: int, ref: int, transpose: bool = False, max_rows: int, max_cols: int
) -> str:
    """Binary vs sinusoid: the binary codes and the encoding averaged over the same blocks of
    positions, bit periods against wavelengths, and Hamming distance against SSE to ``ref``."""
    row_edges = pe_core.block_edges(settings.L, max_rows)
    code = _title("Binary vs sinusoid", settings, "the four charts' data") + encoding_code(settings)
    code += (
        f"\n# Binary codes of positions 0..L-1 with {bits} bits, least significant first\n"
        f"bits = {bits}\n"
        "B = ((np.arange(L)[:, None] >> np.arange(bits)) & 1).astype(np.float64)\n"
        "codes = B\n"
    )
    if _is_reduced(row_edges):
        code += "# A block of positions is drawn as the fraction of ones in it\n"
        code += block_average_code("codes", row_edges)
    code += "\n# The sinusoidal encoding over the same blocks of positions\n"
    code += encoding_blocks_code(
        "P", "sinusoid", settings.layout, row_edges, _pair_edges(settings.d, settings.layout, max_cols)
    )
    code += (
        "\n# Bit period 2^(j+1) and wavelength 2π/ω_i, row j = i (NaN past the end of the shorter list)\n"
        "count = max(bits, len(w))\n"
        "periods = np.full((count, 3), np.nan)\n"
        "periods[:, 0] = np.arange(count)\n"
        "periods[:bits, 1] = 2.0 ** np.arange(1, bits + 1)\n"
        "periods[: len(w), 2] = 2 * np.pi / w\n"
        "\n# Hamming distance and SSE of every position to the reference (SSE = d - 2 f(k - ref))\n"
        f"ref = {ref}\n"
        "hamming = np.abs(B - B[ref]).sum(axis=1)\n"
        + _OFFSET_DOT_LINE
        + "sse = d - 2.0 * half[np.abs(np.arange(L) - ref)]\n"
        "distances = np.column_stack([np.arange(L), np.arange(L) - ref, hamming, sse])\n"
    )
    return code + _result_code({
        "binary_codes": "codes.T" if transpose else "codes",
        "binary_sinusoid": "sinusoid.T" if transpose else "sinusoid",
        "binary_periods": "periods",
        "binary_distances": "distances",
    })


def _index_runs(dims: np.ndarray) -> str:
    """``np.r_[0:64, 256:320]`` for the indices 0..63 and 256..319."""
    dims = np.asarray(dims)
    runs = np.split(dims, np.flatnonzero(np.diff(dims) != 1) + 1)
    return "np.r_[" + ", ".join(f"{int(r[0])}:{int(r[-1]) + 1}" for r in runs) + "]"


def relative_code(
    settings: Settings,
    *,
    delta: int,
    window_start: int,
    window: int,
    pair: int,
    position: int,
    map_rows: int,
    map_cols: int,
    library: str = "numpy",
) -> str:
    """Relative positions: the drawn window of M(delta), the shifted map P M(delta) beside
    PE(k + delta) computed directly (block means as drawn), and one pair's rotation.

    NumPy multiplies by the dense M, as seed 001 does; PyTorch rotates each pair as a complex
    multiply z * exp(-i delta w), the O(L d) way the app computes it.
    """
    L, d, layout = settings.L, settings.d, settings.layout
    dims = relation_figures.transition_window_dims(d, layout, window_start, window)
    row_edges = pe_core.block_edges(L, map_rows)
    pair_edges = _pair_edges(d, layout, max(2, map_cols))
    lib = "np" if library == "numpy" else "torch"
    columns = (
        f"{lib}.arange(0, d, 2), {lib}.arange(1, d, 2)" if layout == "interleaved"
        else f"{lib}.arange(d // 2), {lib}.arange(d // 2, d)"
    )
    zeros = "np.zeros((d, d))" if library == "numpy" else "torch.zeros(d, d, dtype=torch.float64)"
    code = _title("Relative positions", settings, f"the shift by δ = {delta}")
    code += _header(settings, _imports(library), library) + encoding_rows_code(settings, library=library)
    code += (
        f"\ndelta = {delta}\n"
        "phi = delta * w  # pair i turns by φ_i = δ·ω_i\n"
        "# M(δ): the row [sin, cos] of pair i times W(φ_i) = [[cos φ_i, -sin φ_i], [sin φ_i, cos φ_i]]\n"
        f"s, c = {columns}  # the sine and the cosine column of each pair\n"
        f"M = {zeros}\n"
        f"M[s, s], M[c, s], M[s, c], M[c, c] = {lib}.cos(phi), {lib}.sin(phi), -{lib}.sin(phi), {lib}.cos(phi)\n"
    )
    if library == "numpy":
        code += "shifted = P @ M  # row k becomes P[k + δ] (seed 001's P @ M)\n"
    else:
        code += "# The same shift pair by pair: z_i = sin + i·cos of pair i, times e^(-iφ_i)\n"
        code += "turn = torch.polar(torch.ones_like(phi), -phi)\n"
        if layout == "interleaved":
            code += (
                "z = torch.view_as_complex(P.reshape(L, d // 2, 2).contiguous()) * turn\n"
                "shifted = torch.view_as_real(z).reshape(L, d)\n"
            )
        else:
            code += (
                "z = torch.complex(P[:, : d // 2], P[:, d // 2 :]) * turn\n"
                "shifted = torch.cat([z.real, z.imag], dim=1)\n"
            )
    code += "# PE(k + δ) computed directly\n"
    code += encoding_rows_code(settings, start=delta, name="direct", library=library)
    if library == "torch":
        code += (
            "# From here on NumPy: what the page draws\n"
            "P, M, shifted, direct, w = (x.numpy() for x in (P, M, shifted, direct, w))\n"
        )
    code += (
        f"window = M[np.ix_({_index_runs(dims)}, {_index_runs(dims)})]  # the rows and columns of M drawn\n"
        "error = np.abs(shifted - direct).max()  # max |P M(δ) - PE(k + δ)|: rounding only\n\n"
        + encoding_blocks_code("shifted", "shifted_shown", layout, row_edges, pair_edges)
        + encoding_blocks_code("direct", "direct_shown", layout, row_edges, pair_edges)
        + f"\n# Pair {pair} at position {position}: v = [sin θ, cos θ] with θ = k·ω_i, and v W(δ·ω_i)\n"
        f"pair, position = {pair}, {position}\n"
        "theta, angle = position * w[pair], delta * w[pair]\n"
        "v = np.array([np.sin(theta), np.cos(theta)])\n"
        "W = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])\n"
        "rotation = np.array([v, v @ W])  # [sin(θ + φ), cos(θ + φ)] in the second row\n"
    )
    return code + _result_code({
        "relative_transition": "window",
        "relative_shifted": "shifted_shown",
        "relative_direct": "direct_shown",
        "relative_rotation": "rotation",
    })
