"""Your model, layer by layer: the "reproduce this" code, standalone NumPy (or PyTorch) that rebuilds each
layer type's RoPE from the config's values as transformers computes it (each scaling's fragment,
explorer.rope_methods) and prints the page's numbers."""

from __future__ import annotations

from explorer import reproduce, rope_methods
from explorer.topics.layers.analysis import RUNS_SHOWN, ModelStack, curve_offsets, layer_runs, query_scale_positions
from explorer.topics.layers.charts import base_text, reach_text


def _kind_literal(stack: ModelStack, index: int) -> str:
    kind = stack.kinds[index]
    rope = kind.rope
    scaled = "None" if rope is None or rope.scaling is None else rope_methods.method_entry(rope.scaling.method).function
    fields = {
        "layers": repr(list(kind.layers)), "runs": repr(layer_runs(kind.layers, RUNS_SHOWN)),
        "head_dim": str(kind.head_dim), "d": str(rope.d if rope else 0),
        "base": reproduce.literal(rope.base) if rope else "None", "scaled": scaled,
        "base_text": repr(base_text(kind)), "scaling": repr(kind.scaling_text() or "n/a"),
        "reach": repr(kind.window or kind.chunk), "sees": repr(reach_text(kind)),
        "query_scale": str(kind.query_scale),
    }
    return f"    {kind.name!r}: {{\n" + "".join(f"        {k!r}: {v},\n" for k, v in fields.items()) + "    },\n"


def layers_code(stack: ModelStack, target: int, library: str = "numpy") -> str:
    """Code that computes, for ``stack`` at ``target``: each layer type's inv_freq and attention factor, the
    per-pair coverage, the score by offset, Llama 4's query scale; binds ``result`` (the downloads) and prints
    the page's metrics and the rows of its table of layer types."""
    torch = library == "torch"
    lib = "torch" if torch else "np"

    def arange(args: str) -> str:
        return f"torch.arange({args}, dtype=torch.float64)" if torch else f"np.arange({args}, dtype=np.float64)"

    f32 = ".to(torch.float32).to(torch.float64)" if torch else ".astype(np.float32).astype(np.float64)"
    zeros = "torch.zeros" if torch else "np.zeros"
    concatenate = "torch.cat" if torch else "np.concatenate"
    full = "torch.full" if torch else "np.full"
    count_nonzero = "int(torch.count_nonzero(theta))" if torch else "int(np.count_nonzero(theta))"
    stack_columns = "torch.stack({}, dim=1)" if torch else "np.column_stack({})"
    scalings = {kind.rope.scaling.method: kind.rope.scaling for kind in stack.kinds
                if kind.rope is not None and kind.rope.scaling is not None}
    count = curve_offsets(stack, target)
    pair_index = arange("kind['head_dim'] // 2")
    code = (
        f"# Your model, layer by layer ({stack.name}), at a target length of {target:,} tokens\n"
        + reproduce.imports(library) + "import math\n\n"
        f"L0, L = {stack.trained}, {target}  # trained length (max_position_embeddings), target length\n"
        f"count = {count}  # offsets of the score curves: 0 .. count - 1\n\n"
    )
    if scalings:
        code += ("# Each scaling the model's layer types use, as transformers computes it: θ'_i and the attention "
                 "factor a\n" + "\n\n".join(rope_methods.fragment(s, library) for s in scalings.values()) + "\n\n")
    code += (
        "# Each layer type as the model runs it: the layers, the head size, the rotated coordinates d and base "
        "(d 0: no position), its scaling, the keys a query sees (window or chunk; None: all)\n"
        "KINDS = {\n" + "".join(_kind_literal(stack, i) for i in range(len(stack.kinds))) + "}\n"
        f"LAYERS = {len(stack.layers)}\n\n\n"
        "def rope(kind, length):\n"
        '    """θ\'_i of the kind\'s rotary pairs on a text of `length` tokens (dynamic NTK and LongRoPE depend '
        'on it), in float32 as the model holds them, and its attention factor."""\n'
        "    d, base = kind['d'], kind['base']\n"
        "    if d == 0:\n"
        "        return None, 1.0\n"
        f"    theta = base ** -({arange('0, d, 2')} / d)  # θ_i = b^(-2i/d)\n"
        "    inv_freq, a = (theta, 1.0) if kind['scaled'] is None else kind['scaled'](theta, d, base, length)\n"
        f"    return inv_freq{f32}, a\n\n\n"
        "def head_theta(kind, inv_freq):\n"
        '    """θ\'_i over the whole head: 0 for the pairs past the rotary part."""\n'
        f"    theta = {zeros}(kind['head_dim'] // 2, dtype={lib}.float64)\n"
        "    if inv_freq is not None:\n"
        "        theta[: inv_freq.shape[0]] = inv_freq\n"
        "    return theta\n\n\n"
        "def span(kind, length):\n"
        '    """Offsets a query of this kind meets over `length` tokens: its window or chunk at most."""\n'
        "    return length if kind['reach'] is None else min(length, kind['reach'])\n\n\n"
        "rows, pairs, scores, per_layer = {}, [], [], []\n"
        "for name, kind in KINDS.items():\n"
        "    inv_freq, a = rope(kind, L)\n"
        "    theta, trained_theta = head_theta(kind, inv_freq), head_theta(kind, rope(kind, L0)[0])\n"
        "    rotated = theta > 0\n"
        "    trained_turns = span(kind, L0) * trained_theta / (2 * math.pi)\n"
        "    target_turns = span(kind, L) * theta / (2 * math.pi)\n"
        "    # λ_i > W (W θ_i < 2π): the pair never completes a turn inside the window\n"
        "    no_turn = rotated & (kind['reach'] * theta < 2 * math.pi) if kind['reach'] else rotated & False\n"
        "    # never a whole turn in training, and further at L (an arc longer by float64 rounding alone is covered)\n"
        "    unseen = rotated & (trained_turns < 1) & (target_turns > trained_turns * (1 + 1e-12))\n"
        f"    rotating = {count_nonzero}\n"
        "    rows[name] = (f\"{len(kind['layers'])} ({kind['runs']})\", kind['base_text'], kind['scaling'],\n"
        "                  f\"{rotating} of {kind['head_dim'] // 2}\", kind['sees'], f'{a:.6g}',\n"
        "                  str(int(no_turn.sum())) if kind['reach'] and inv_freq is not None else 'n/a',\n"
        "                  str(int(unseen.sum())) if inv_freq is not None else 'n/a')\n"
        "    if inv_freq is not None:  # the table of pairs (download): pair, θ', λ, turns, flags\n"
        f"        index = {pair_index}\n"
        f"        wavelength = {lib}.where(rotated, 2 * math.pi / {lib}.where(rotated, theta, 1.0), math.inf)\n"
        "        pairs.append(" + stack_columns.format(
            "[index, theta, wavelength, trained_turns, target_turns, no_turn * 1.0, unseen * 1.0]") + ")\n"
        "    if not name.startswith('linear attention'):  # the score by offset, all-ones q and k\n"
        "        shown = span(kind, count)\n"
        f"        curve = {full}((count,), math.nan, dtype={lib}.float64)\n"
        "        rest = kind['head_dim'] - (0 if inv_freq is None else 2 * inv_freq.shape[0])\n"
        "        for first in range(0, shown, 4096):\n"
        f"            delta = {arange('first, min(shown, first + 4096)')}[:, None]\n"
        "            curve[first : first + delta.shape[0]] = (\n"
        f"                float(kind['head_dim']) if inv_freq is None else 2 * a * a * {lib}.cos(delta * inv_freq)"
        ".sum(" + ("dim" if torch else "axis") + "=1) + rest)\n"
        "        scores.append(curve)\n"
        "    for layer in kind['layers']:  # one row per layer (download): rotary, base, pairs, window, chunk, ...\n"
        "        per_layer.append((layer, inv_freq is not None, math.nan if kind['base'] is None else kind['base'],\n"
        "                          rotating, kind['head_dim'] // 2, kind['reach'] if 'window' in kind['sees'] else 0,\n"
        "                          kind['reach'] if 'chunk' in kind['sees'] else 0, kind['query_scale'], a))\n"
        "per_layer.sort()\n"
    )
    entries = {
        "layers_stack": f"{lib}.asarray([row[1:] for row in per_layer], dtype={lib}.float64)",
        "layers_pairs": f"{concatenate}(pairs)",
        "layers_scores": stack_columns.format(f"[{arange('count')}] + scores"),
    }
    numbers = {
        "decoder layers": ("LAYERS", "d"),
        "layers with RoPE": ("sum(len(k['layers']) for k in KINDS.values() if k['d'])", "d"),
        "layer types": ("len(KINDS)", "d"),
    }
    if stack.floor_scale is not None:
        positions = query_scale_positions(stack, target)
        code += (
            "\n# Llama 4's query scale on its NoPE layers: 1 + attn_scale ln(1 + floor((p + 1) / floor_scale))\n"
            f"floor_scale, attn_scale = {stack.floor_scale}, {reproduce.literal(stack.attn_scale)}\n"
            f"length = {positions}  # positions 0 .. length - 1, in steps: from 0, then from k floor_scale - 1\n"
            f"steps = {arange('1, length // floor_scale + 1')} * floor_scale - 1\n"
            f"starts = {lib}.unique({concatenate}([{zeros}(1, dtype={lib}.float64), steps]))  # F = 1: two 0s\n"
            f"query_scale = {lib}.log1p({lib}.floor((starts + 1) / floor_scale)) * attn_scale + 1\n"
        )
        entries["layers_query_scale"] = stack_columns.format("[starts, query_scale]")
        numbers["query scale at the target"] = (
            "math.log1p(math.floor(L / floor_scale)) * attn_scale + 1", ".6g")
    return code + reproduce.result_code(entries) + (
        "\n# The table of layer types, row by row\n"
        "for name, cells in rows.items():\n"
        "    print(f\"{name}:\", *cells)\n"
    ) + reproduce.numbers_code(numbers)
