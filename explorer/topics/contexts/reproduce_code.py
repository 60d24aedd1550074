"""Longer contexts' "reproduce this" code: ``contexts_code``, standalone NumPy (or PyTorch) that computes
the page's numbers and downloads at a view, every method as transformers computes it."""

from __future__ import annotations

from explorer import reproduce, rope_methods
from explorer.rope_methods import NONE
from explorer.topics.contexts.analysis import available_methods, coverage_frames, curve_offsets, scaling
from explorer.topics.contexts.charts import method_label
from explorer.topics.contexts.view import ContextView


def contexts_code(view: ContextView, library: str = "numpy") -> str:
    """Standalone NumPy (or PyTorch) code for the page's numbers at ``view``: every method's
    frequencies as transformers computes them (each method's fragment, explorer.rope_methods), the
    angle coverage per pair, the Play frames, the dot products by offset and YaRN's two ramps;
    ``result`` maps each download to its array."""
    torch = library == "torch"
    lib = "torch" if torch else "np"
    axis = "dim" if torch else "axis"

    def arange(args: str) -> str:
        return f"torch.arange({args}, dtype=torch.float64)" if torch else f"np.arange({args}, dtype=np.float64)"

    def columns(items: str) -> str:
        return f"torch.stack({items}, dim=1)" if torch else f"np.column_stack({items})"

    clip = "torch.clamp" if torch else "np.clip"
    index, offsets = arange("d // 2"), arange("count")
    empty = "torch.empty(count, dtype=torch.float64)" if torch else "np.empty(count)"
    as_number = "unseen.to(torch.float64)" if torch else "unseen * 1.0"
    targets = coverage_frames(view)[0]
    count = curve_offsets(view)
    shown = available_methods(view)
    scalings = {method: scaling(view, method) for method in shown if method != NONE}
    code = f"# Longer contexts ({view.describe()})\n" + reproduce.imports(library) + "import math\n\n"
    code += (
        f"d, base = {view.d}, {reproduce.literal(view.base)}  # rotary coordinates (head_dim x partial_rotary_factor), "
        "rope_theta\n"
        f"L0, L = {view.trained}, {view.target}  # trained length (original_max_position_embeddings), target length\n"
        f"s = {reproduce.literal(view.factor)}  # the scaling factor\n"
        f"method = {view.method!r}\n"
        f"beta_fast, beta_slow, truncate = {reproduce.literal(view.beta_fast)}, {reproduce.literal(view.beta_slow)}, "
        f"{view.truncate}  # YaRN's, for its ramp below\n\n"
        f"exponent = {arange('0, d, 2')} / d\n"
        "theta = base ** -exponent  # θ_i = b^(-2i/d)\n"
        "wavelength = 2 * math.pi / theta  # λ_i\n\n\n"
        "# Each method as transformers computes it, with this page's parameters: θ'_i and the attention factor a\n"
        + "\n\n".join(rope_methods.fragment(scaling_of, library) for scaling_of in scalings.values())
        + ("\n\n" if scalings else "")
        + ("" if "yarn" in scalings else rope_methods.in_library(rope_methods.YARN_RAMP_CODE, library))
        + "SCALED = {\n    \"none\": lambda theta, d, base, length: (theta, 1.0),\n"
        + "".join(f"    {method!r}: {rope_methods.method_entry(method).function},\n" for method in scalings)
        + "}\n\n\n"
        "def frequencies(m, length):\n"
        '    """θ\'_i of method m on a sequence of `length` tokens."""\n'
        "    return SCALED[m](theta, d, base, length)[0]\n\n\n"
        "def attention(m):\n"
        '    """The factor transformers multiplies cos and sin by (so every score by its square)."""\n'
        "    return SCALED[m](theta, d, base, L)[1]\n\n\n"
        "def correction(turns):\n"
        '    """YaRN\'s bound c(beta): the (fractional) pair index whose wavelength fits `turns` turns into L0."""\n'
        "    return d * math.log(L0 / (turns * 2 * math.pi)) / (2 * math.log(base))\n\n\n"
        "def coverage(m, length):\n"
        '    """Largest angle met in training (L0 θ_i), at `length` (length θ\'_i), and whether it is new."""\n'
        "    seen, needed = L0 * theta, length * frequencies(m, length)\n"
        "    # (an arc longer by float64 rounding only, as linear interpolation by exactly L/L0 leaves, is covered)\n"
        "    return seen, needed, (seen < 2 * math.pi) & (needed > seen * (1 + 1e-12))\n\n\n"
    )
    code += (
        "# Per pair, the chosen method at the target length\n"
        "seen, needed, unseen = coverage(method, L)\n"
        "ratio = frequencies(method, L) / theta\n"
        f"pairs = {columns(f'[{index}, theta, wavelength, seen / (2 * math.pi), ratio, seen, needed, {as_number}]')}\n"
        "\n# Every method side by side: θ'/θ per pair\n"
        f"methods = {list(shown)!r}\n"
        f"ratios = {columns(f'[{index}, wavelength] + [frequencies(m, L) / theta for m in methods]')}\n"
        "\n# Play: turns per pair over the trained length, and at each target length T, plain and with the method\n"
        f"targets = {[int(T) for T in targets]!r}\n"
        f"play = [{arange('d // 2')}, L0 * theta / (2 * math.pi)]\n"
        "for T in targets:\n"
        "    play += [T * theta / (2 * math.pi), T * frequencies(method, T) / (2 * math.pi)]\n"
        f"play = {columns('play')}\n"
        "\n# The score of q = k = (1, ..., 1) by offset: a² Σ 2cos(δθ'_i), plain and with the method, in blocks\n"
        f"count = {count}  # offsets 0 .. count - 1\n"
        "after_theta, a = frequencies(method, L), attention(method)\n"
        f"before, after = {empty}, {empty}\n"
        "for first in range(0, count, 4096):\n"
        f"    delta = {arange('first, min(count, first + 4096)')}[:, None]\n"
        f"    before[first : first + 4096] = 2 * {lib}.cos(delta * theta).sum({axis}=1)\n"
        f"    after[first : first + 4096] = 2 * a * a * {lib}.cos(delta * after_theta).sum({axis}=1)\n"
        f"dot = {columns(f'[{offsets}, before, after]')}\n"
        "\n# YaRN's ramp, its code against its paper (θ'_i = (1 - w_i) θ_i + w_i θ_i / s)\n"
        "code_w = yarn_ramp(d, base, L0, beta_fast, beta_slow, truncate)  # linear in the pair index i\n"
        f"paper_w = 1 - {clip}((L0 / wavelength - beta_slow) / (beta_fast - beta_slow), 0, 1)  # linear in L0/λ_i\n"
        f"ramp = {columns(f'[{index}, code_w, paper_w, 1 - code_w + code_w / s, 1 - paper_w + paper_w / s]')}\n"
    )
    chosen = method_label(view) if view.method != NONE else "method: none"
    return code + reproduce.result_code({
        "contexts_coverage": "play",
        "contexts_pairs": "pairs",
        "contexts_methods": "ratios",
        "contexts_dot": "dot",
        "contexts_yarn_ramp": "ramp",
    }) + (
        "\n# Pairs meeting unseen angles at L, plain and with the method; YaRN's two ramps apart\n"
        'plain_unseen = coverage("none", L)[2]\n'
        "gap = abs(code_w - paper_w)\n"
    ) + reproduce.numbers_code({
        "plain RoPE": ("(int(plain_unseen.sum()), d // 2)", "d"),
        chosen: ("(int(unseen.sum()), d // 2)", "d"),
        "attention factor a": ("a", ".6g"),
        "scores × a²": ("a * a", ".6g"),
        "bounds c(β_fast), c(β_slow)": ("(correction(beta_fast), correction(beta_slow))", ".2f"),
        "largest |w_code − w_paper|": ("float(gap.max())", ".3g"),
        "pairs where they differ": ("(int((gap > 1e-12).sum()), d // 2)", "d"),
    })
