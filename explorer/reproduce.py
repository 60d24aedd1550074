"""The pieces every page's 'reproduce this' code is built from: standalone NumPy (and
PyTorch) for the exact settings. Each page's snippet is in its topic module (home_code in
explorer.criteria, matrix_code in explorer.topics.matrix, ...).

Each snippet imports only numpy (and torch, in the PyTorch variants), never pe_core, so a
student can paste it in a notebook. Snippets are built from the pieces here and end by
binding ``result`` to what the page draws: for a page, a dict from the key of each of its
downloads to the array that download holds; and a page that shows numbers (st.metric) binds
``numbers`` to them, by the label it shows each with, and prints them (``numbers_code``). The
tests execute them and compare ``result`` with the app's numbers (tests/topics/test_reproduce.py),
and ``numbers`` with what the page displays, digit for digit (tests/app/test_pages.py, for every
page of the page list): so a snippet computes what its page does, with the same arithmetic
(``sin_cos_code``) where a number is rounding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import pe_core
from explorer.settings import Settings


def literal(value: float) -> str:
    """A Python literal that round-trips the float exactly."""
    return repr(float(value))


def rate_line(settings: Settings) -> str:
    if settings.convention == "paper":
        return "w = n ** (-2 * i / d)  # paper: w_i = n^(-2i/d)"
    return "w = n ** (-i / max(len(i) - 1, 1))  # tensor2tensor: w_i = n^(-i/(m-1))"


def sin_cos_code(library: str = "numpy") -> str:
    """The definition of ``sin_cos(k, w)``: sin and cos of the angles k·w, bit for bit the values
    of ``pe_core.sin_cos_outer`` (and so of ``pe_core.positional_encoding``) for whole k below 2^24.

    The textbook ``np.sin(k * w)`` first rounds the angle to float64, up to half an ulp of it
    (3.6e-15 rad near 49 rad), which every value then carries: a difference of two encodings
    (seed 001's shift error, say) comes out ten or twenty times the app's. pe_core keeps the
    product's rounding error e (Dekker's exact product) and takes sin(p + e) = sin p + e·cos p;
    the snippets do the same with the simpler exact split of w into its float32 part and the
    rest (each product of a part with a whole k below 2^24 is exact), so that they print the
    numbers the page shows, rounding included (tests/app/test_pages.py).
    """
    lib, to_float32 = ("np", ".astype(np.float32).astype(np.float64)") if library == "numpy" else (
        "torch", ".to(torch.float32).to(torch.float64)")
    return (
        "\n\ndef sin_cos(k, w):\n"
        '    """sin(k·w) and cos(k·w) as the app computes them: with the angle k·w exact, not rounded first.\n\n'
        "    w is split into its float32 part and the rest; each times a whole k below 2^24 is exact, so the\n"
        "    angle is p + e exactly, with p the rounded angle (all that sin(k * w) sees) and e what rounding\n"
        "    lost (up to 3.6e-15 rad near 49 rad), and sin(p + e) = sin p + e·cos p to float64 precision.\n"
        '    """\n'
        f"    w_hi = w{to_float32}\n"
        "    a, b = k * w_hi, k * (w - w_hi)  # both exact: the angle k·w is a + b\n"
        "    p = a + b  # the angle rounded to float64\n"
        "    e = (a - p) + b  # what that rounding lost, exactly\n"
        f"    return {lib}.sin(p) + e * {lib}.cos(p), {lib}.cos(p) - e * {lib}.sin(p)\n\n\n"
    )


def header(settings: Settings, imports: str, library: str = "numpy") -> str:
    """Imports, the settings, the pair indices i, the rates w (rad/position) and ``sin_cos``."""
    pairs = "np.arange((d + 1) // 2)" if library == "numpy" else "torch.arange((d + 1) // 2, dtype=torch.float64)"
    return (
        f"{imports}\n"
        f"L, d, n = {settings.L}, {settings.d}, {literal(settings.n)}\n"
        f"i = {pairs}\n"
        f"{rate_line(settings)}\n"
        + sin_cos_code(library)
    )


def fill_lines(layout: str, name: str, rows: str, library: str = "numpy") -> list[str]:
    """Lines that fill ``name`` (``rows`` x d) from the column of positions ``k`` and the rates ``w``."""
    angles = "sines, cosines = sin_cos(k, w)  # sin(k·ω_i) and cos(k·ω_i), (rows, pairs)"
    if layout == "concatenated":
        join = "np.concatenate([{}, {}], axis=1)" if library == "numpy" else "torch.cat([{}, {}], dim=1)"
        return [angles, f"{name} = {join.format('sines', 'cosines[:, : d // 2]')}  # [sin | cos]"]
    empty = f"np.empty(({rows}, d))" if library == "numpy" else f"torch.empty({rows}, d, dtype=torch.float64)"
    return [
        angles,
        f"{name} = {empty}",
        f"{name}[:, 0::2] = sines  # interleaved: sin, cos, sin, cos, ...",
        f"{name}[:, 1::2] = cosines[:, : d // 2]",
    ]


def positions_line(start: int, library: str = "numpy") -> str:
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
    return positions_line(start, library) + "\n".join(fill_lines(settings.layout, name, "L", library)) + "\n"


def encoding_code(settings: Settings, *, start: int = 0, name: str = "P") -> str:
    """NumPy code that builds the (L, d) encoding for ``settings`` into ``name``."""
    return header(settings, "import numpy as np\n") + encoding_rows_code(settings, start=start, name=name)


#: PyTorch snippets pin torch to one thread: torch 2.13's float64 sin, split over threads,
#: was off by up to 7e-9 in the rows it handed to its second thread (3 of 16 runs on two
#: cores; exact with one), and a snippet is only worth pasting if it gives the app's numbers.
TORCH_IMPORTS = (
    "import torch\n\n"
    "torch.set_num_threads(1)  # torch 2.13's float64 sin on several threads can be off by ~1e-8\n"
)


def torch_encoding_code(settings: Settings, *, start: int = 0, name: str = "P", imports: str = TORCH_IMPORTS) -> str:
    """PyTorch code that builds the same encoding (float64, so it matches to round-off)."""
    return header(settings, imports, "torch") + encoding_rows_code(settings, start=start, name=name, library="torch")


def encoding_function_code(settings: Settings) -> str:
    """NumPy code that defines ``encoding(first, count)``: rows first .. first+count-1 of P,
    for snippets that need positions other than 0 .. L-1."""
    fill = "".join(f"    {line}\n" for line in fill_lines(settings.layout, "P", "count"))
    return (
        header(settings, "import numpy as np\n")
        + "def encoding(first, count):\n"
        + '    """Rows first .. first+count-1 of the encoding (positions as float64)."""\n'
        + "    k = np.arange(first, first + count, dtype=np.float64)[:, None]\n"
        + fill
        + "    return P\n\n\n"
    )


def edges_line(name: str, edges: np.ndarray) -> str:
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
            code += edges_line(edges_name, edges)
            code += "".join(
                f"{name} = np.add.reduceat({name}, {edges_name}[:-1], axis={axis}) / np.diff({edges_name}){counts}\n"
                for name in names
            )
    return code


# --------------------------------------------------------------------------------------
# Pieces of the pages' snippets (each in its topic module). A snippet binds ``result`` to a
# dict: the key of each of the page's downloads -> the array that download holds (same rows,
# same columns, same numbers).
# --------------------------------------------------------------------------------------

#: f(t) = sum_i cos(w_i t) for t = 0 .. L-1: the dot product of any two positions t apart (even d).
OFFSET_DOT_LINE = (
    "half = sin_cos(np.arange(L, dtype=np.float64)[:, None], w)[1].sum(axis=1)"
    "  # f(t) = Σ_i cos(ω_i t), t = 0..L-1\n"
)


def imports(library: str) -> str:
    return "import numpy as np\n" + (TORCH_IMPORTS if library == "torch" else "")


def result_code(entries: dict[str, str]) -> str:
    """``result = {download key: expression, ...}``."""
    return "\nresult = {\n" + "".join(f'    "{key}": {value},\n' for key, value in entries.items()) + "}\n"


def numbers_code(entries: dict[str, tuple[str, str]]) -> str:
    """``numbers = {label: expression, ...}`` and a loop that prints them as the page writes them:
    the numbers the page shows (its metrics, or its tables' rows), each under the label the page shows
    it with, each written with the page's format spec (``entries``: label -> (expression, spec)). A
    value is a number, a tuple of the numbers one label shows, or None (or NaN, inf) where the page
    shows none ("n/a", "no rows")."""
    return (
        "\n# The numbers the page shows, under its labels, written with its digits\n"
        "numbers = {\n" + "".join(f"    {label!r}: {value},\n" for label, (value, _) in entries.items()) + "}\n"
        "written = {  # how the page writes each (a format spec)\n"
        + "".join(f"    {label!r}: {spec!r},\n" for label, (_, spec) in entries.items()) + "}\n"
        "for label, value in numbers.items():\n"
        '    shown = ("n/a" if x is None or not np.isfinite(x) else format(x, written[label])'
        " for x in np.ravel(value))\n"
        '    print(f"{label}:", *shown)\n'
    )


def is_reduced(edges: np.ndarray) -> bool:
    """Whether blocks between ``edges`` hold more than one item each somewhere."""
    return len(edges) - 1 < int(edges[-1])


def pair_edges(d: int, layout: str, max_cols: int) -> np.ndarray | None:
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
    if is_reduced(row_edges):
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


def title(page: str, settings: Settings, what: str) -> str:
    return (
        f"# {page} (L={settings.L}, d={settings.d}, n={literal(settings.n)}, {settings.layout}, "
        f"{settings.convention}): {what}\n"
    )














