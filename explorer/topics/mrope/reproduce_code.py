"""Images and video (M-RoPE): the "reproduce this" code, standalone NumPy (or PyTorch) that computes the position
ids as the models' get_rope_index does, the cos and sin of both section layouts, the scores, and prints the page's
numbers. Written once for both libraries: ``{xp}`` is ``np`` or ``torch`` (every call used is spelt alike)."""

from __future__ import annotations

from explorer import reproduce, rope_methods
from explorer.topics.mrope.analysis import MropeView, model_name
from explorer.topics.mrope.charts import CACHE_TOKENS

BODY = '''

def position_ids(segments):
    """(3, L) each token's temporal, height and width position as get_rope_index computes them, and the
    segments' token ranges."""
    rows, start, spans, first = [], 0, [], 0
    for kind, *size in segments:
        if kind == "text":
            run = {xp}.arange(start, start + size[0], dtype={xp}.int64)
            rows.append({xp}.stack([run, run, run]))
            start += size[0]
        else:
            t, h, w = size[0], size[1] // merge, size[2] // merge
            # a video's frames tokens_per_second x seconds apart, in float32, truncated (Qwen2.5-VL); else 1 apart
            step = 1.0 if kind == "image" or tokens_per_second is None else tokens_per_second * size[3]
            temporal = {xp}.asarray({xp}.arange(t, dtype={xp}.float32) * {xp}.asarray(step, dtype={xp}.float32),
                                    dtype={xp}.int64)
            grid = {xp}.meshgrid(temporal, {xp}.arange(h, dtype={xp}.int64), {xp}.arange(w, dtype={xp}.int64),
                                 indexing="ij")
            rows.append({xp}.stack([axis.reshape(-1) for axis in grid]) + start)
            start += max(h, w)  # the text after resumes here, on all three axes
        spans.append((kind, first, first + rows[-1].shape[1]))
        first += rows[-1].shape[1]
    return {xp}.concatenate(rows, 1), spans


def pair_axes(interleaved):
    """Each pair's axis: 0 temporal, 1 height, 2 width."""
    j = {xp}.arange(d // 2)
    if not interleaved:  # blocked: the first sections[0] pairs, the next sections[1], the rest
        return {xp}.where(j < sections[0], 0, {xp}.where(j < sections[0] + sections[1], 1, 2))
    # interleaved (Qwen3-VL): height on j % 3 == 1 below 3 sections[1], width on j % 3 == 2 below 3 sections[2]
    height = (j % 3 == 1) & (j < 3 * sections[1])
    width = (j % 3 == 2) & (j < 3 * sections[2])
    return {xp}.where(height, 1, {xp}.where(width, 2, 0))


def cache(ids, interleaved):
    """cos and sin (L, d), half layout: pair j turned by its axis's position times θ_j = base^(-2j/d)."""
    theta = base ** -({xp}.arange(0, d, 2, dtype={xp}.float64) / d)
    chosen = ids[pair_axes(interleaved)]  # (d/2, L): each pair's position on its axis
    angle = {xp}.concatenate([chosen.T * theta, chosen.T * theta], 1)
    return {xp}.cos(angle), {xp}.sin(angle)


def scores(ids, query, keys, interleaved):
    """q·k of all-ones q and k: sum over pairs of 2 cos(angle difference) = 2 (C_q C_k + S_q S_k)."""
    cos, sin = cache(ids[:, keys], interleaved)
    query_cos, query_sin = cache(ids[:, query : query + 1], interleaved)
    half = d // 2
    return 2 * (cos[:, :half] @ query_cos[0, :half] + sin[:, :half] @ query_sin[0, :half])


ids, spans = position_ids(segments)
image = next((start, stop) for kind, start, stop in spans if kind == "image")
image_segment = next(segment for segment in segments if segment[0] == "image")
rows, cols = image_segment[2] // merge, image_segment[3] // merge
query_index = image[0] + query[0] * cols + query[1]
image_keys = {xp}.arange(image[0], image[1])
right = scores(ids, query_index, image_keys, interleaved)
wrong = scores(ids, query_index, image_keys, not interleaved)  # the sections read the other way
texts = [{xp}.arange(start, stop) for kind, start, stop in spans if kind == "text"]
text = {xp}.concatenate(texts) if texts else None  # text tokens: their three positions are equal
text_change = 0.0 if text is None else abs(
    scores(ids, text[0], text, interleaved) - scores(ids, text[0], text, not interleaved)).max()
resumes = [int(ids[0, start]) for (kind, start, _), (before, _, _) in zip(spans[1:], spans) if kind == "text"
           and before != "text"]
grid_rows, grid_cols = {xp}.meshgrid({xp}.arange(rows), {xp}.arange(cols), indexing="ij")
cos, sin = cache(ids[:, :shown], interleaved)  # what the model's rotary embedding returns, first `shown` tokens
'''


def mrope_code(view: MropeView, library: str = "numpy") -> str:
    """Code for ``view``: ``result`` maps each download to its array, and the page's metrics are printed."""
    tps = "None" if view.tokens_per_second is None else reproduce.literal(view.tokens_per_second)
    segments = [tuple(float(v) if isinstance(v, float) else v for v in part) for part in view.segments()]
    head = (
        f"# Images and video (M-RoPE): {model_name(view.model)}\n" + reproduce.imports(library)
        + "import math\n\n"
        f"d, base = {view.d}, {reproduce.literal(view.base)}  # head size, rope_theta\n"
        f"sections, interleaved = {list(view.sections)}, {view.interleaved}  # mrope_section, mrope_interleaved\n"
        f"merge, tokens_per_second = {view.merge}, {tps}  # vision_config (tokens_per_second: Qwen2.5-VL's)\n"
        "# The sequence: (kind, n) for text, (kind, t, h, w) for an image, (kind, t, h, w, seconds per frame) for a\n"
        "# video: the grids before the spatial merge (image_grid_thw, video_grid_thw)\n"
        f"segments = {segments!r}\n"
        f"query = ({view.query_row}, {view.query_col})  # the query token: row and column of the image\n"
        f"shown = {CACHE_TOKENS}  # the cos and sin below: of the first tokens (any number works)\n"
    )
    body = rope_methods.in_library(BODY, library)
    as_float = ".to(torch.float64)" if library == "torch" else ".astype(np.float64)"
    columns = "torch.stack({}, dim=1)" if library == "torch" else "np.column_stack({})"
    return head + body + reproduce.result_code({
        "mrope_rows": columns.format(f"[{'torch' if library == 'torch' else 'np'}.arange(ids.shape[1]), ids[0], "
                                     "ids[1], ids[2]]"),
        "mrope_axes": columns.format(f"[{'torch' if library == 'torch' else 'np'}.arange(d // 2), pair_axes(False), "
                                     "pair_axes(True)]"),
        "mrope_cache": "torch.cat([cos, sin], 1)" if library == "torch" else "np.concatenate([cos, sin], 1)",
        "mrope_scores": columns.format(f"[grid_rows.reshape(-1){as_float}, grid_cols.reshape(-1){as_float}, right, "
                                       "wrong]"),
    }) + reproduce.numbers_code({
        "tokens": ("ids.shape[1]", ",d"),
        "image tokens": ("rows * cols", ",d"),
        "text after the image resumes at": ("resumes[0] if resumes else None", ",d"),
        "largest position": ("int(ids.max())", ",d"),
        "largest |score − misread| on the image": ("float(abs(right - wrong).max())", ".4g"),
        "text tokens' |score − misread|": ("float(text_change)", ".4g"),
    })
