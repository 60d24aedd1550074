r"""Images and video (M-RoPE): a sequence of text, an image and a video, the (t, h, w) position of each of its
tokens as Qwen2-VL's and Qwen2.5-VL's ``get_rope_index`` give them (``pe_core.mrope_position_ids``), and what the
model's sections make of them (``pe_core.mrope_cache``).

Each rotary pair j of a head takes one of a token's three positions (its axis): the pairs' angle between a query
at token m and a key at token n is :math:`(p_{a(j)}(m) - p_{a(j)}(n))\,\theta_j`, so with all-ones q and k

.. math::

    s(m, n) = \sum_j 2\cos\big((p_{a(j)}(m) - p_{a(j)}(n))\,\theta_j\big)
            = \sum_j 2\big(C_{mj} C_{nj} + S_{mj} S_{nj}\big),

C and S the cache's cos and sin (its first d/2 columns: half layout). It depends on the three offsets
:math:`(\delta t, \delta h, \delta w)` alone. Reading the sections the wrong way (Qwen3-VL's interleaved ones as
Qwen2.5-VL's blocks, alibaba/MNN #4133) gives the pairs other axes: a text token, whose three positions are equal,
does not notice; an image token does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

import pe_core
from explorer.model_configs import MROPE_PRESETS, load_config, model_config

#: The three axes, in the position ids' order.
AXES = ("temporal", "height", "width")
#: The sequence's limits on this page: tokens per text run, merged tokens per image or video side, video frames.
TEXT_MAX, SIDE_MAX, FRAMES_MAX = 512, 64, 32
SECONDS_MAX = 60.0


@dataclass(frozen=True)
class MropeView:
    """A model's M-RoPE (head size d, base, sections, their layout, the vision encoder's spatial merge, Qwen2.5-VL's
    tokens_per_second) and a sequence: text, one image (rows x cols merged tokens), text, a video (frames of
    rows x cols tokens, seconds_per_grid apart), text; and the image token whose scores the page draws."""

    model: str
    d: int
    base: float
    sections: tuple[int, int, int]
    interleaved: bool
    merge: int
    tokens_per_second: float | None
    text_before: int = 6
    image_rows: int = 8
    image_cols: int = 12
    text_between: int = 4
    video_frames: int = 4
    video_rows: int = 4
    video_cols: int = 6
    seconds: float = 1.0
    text_after: int = 3
    query_row: int = 3
    query_col: int = 5

    def segments(self) -> list[tuple]:
        """pe_core's segments: the grids before the spatial merge (image_grid_thw), text runs of 0 left out."""
        m = self.merge
        parts: list[tuple] = [("text", self.text_before), ("image", 1, self.image_rows * m, self.image_cols * m),
                              ("text", self.text_between),
                              ("video", self.video_frames, self.video_rows * m, self.video_cols * m, self.seconds),
                              ("text", self.text_after)]
        return [part for part in parts if part[0] != "text" or part[1] > 0]

    def spans(self) -> list[tuple[str, int, int]]:
        """Each segment's kind and its tokens' index range [start, stop)."""
        spans, start = [], 0
        for part in self.segments():
            count = part[1] if part[0] == "text" else part[1] * (part[2] // self.merge) * (part[3] // self.merge)
            spans.append((part[0], start, start + count))
            start += count
        return spans

    @property
    def length(self) -> int:
        return self.spans()[-1][2]

    def image_span(self) -> tuple[int, int]:
        return next((start, stop) for kind, start, stop in self.spans() if kind == "image")


def layout_name(interleaved: bool) -> str:
    return "interleaved" if interleaved else "blocked"


def positions(view: MropeView) -> np.ndarray:
    """(3, L): each token's temporal, height and width position (``pe_core.mrope_position_ids``)."""
    return pe_core.mrope_position_ids(view.segments(), spatial_merge_size=view.merge,
                                      tokens_per_second=view.tokens_per_second)


def pair_axes(view: MropeView) -> np.ndarray:
    """Which axis (0 temporal, 1 height, 2 width) each of the d/2 pairs takes (``pe_core.mrope_pair_axes``)."""
    return pe_core.mrope_pair_axes(view.d, view.sections, interleaved=view.interleaved)


def sliced_axes(d: int, sections: tuple[int, int, int], interleaved: bool) -> np.ndarray:
    """Each pair's axis as the models' code slices the sections (Qwen2-VL's blocks, Qwen3-VL's
    apply_interleaved_mrope), also for sections that layout cannot hold, which it then slices silently: Qwen2.5-VL's
    [16, 24, 24] read interleaved gives 21 height and 21 width pairs of 64. Blocked: the first sections[0] pairs
    temporal, the next sections[1] height, the rest width; interleaved: height where j % 3 == 1 and j < 3 s_h,
    width where j % 3 == 2 and j < 3 s_w, else temporal."""
    j = np.arange(d // 2)
    if not interleaved:
        return np.where(j < sections[0], 0, np.where(j < sections[0] + sections[1], 1, 2))
    height = (j % 3 == 1) & (j < 3 * sections[1])
    width = (j % 3 == 2) & (j < 3 * sections[2])
    return np.where(height, 1, np.where(width, 2, 0))


def misread_axes(view: MropeView) -> np.ndarray:
    """The pairs' axes with the sections read in the other layout (alibaba/MNN #4133: Qwen3-VL's interleaved
    sections read as blocks; ohdearquant/lattice #96: a flag taken for the layout)."""
    return sliced_axes(view.d, view.sections, not view.interleaved)


def image_grid(view: MropeView, ids: np.ndarray) -> np.ndarray:
    """(3, rows, cols): the image's tokens' three positions, as the grid they are."""
    start, stop = view.image_span()
    return ids[:, start:stop].reshape(3, view.image_rows, view.image_cols)


def scores_from(view: MropeView, ids: np.ndarray, query: int, keys: np.ndarray | slice,
                misread: bool = False) -> np.ndarray:
    r"""s(query, n) for the tokens n in ``keys``: all-ones q and k,
    :math:`\sum_j 2\cos((p_{a(j)}(q) - p_{a(j)}(n))\theta_j)` with the pairs' axes as the model reads its sections
    (or, ``misread``, as the other layout slices them)."""
    axes = misread_axes(view) if misread else pair_axes(view)
    theta = view.base ** -(np.arange(0, view.d, 2, dtype=np.float64) / view.d)
    chosen = ids[axes]  # (d/2, L): each pair's position on its axis
    offsets = chosen[:, keys] - chosen[:, [query]]
    return 2 * np.cos(offsets.T * theta).sum(axis=1)


def image_scores(view: MropeView, ids: np.ndarray, query_row: int | None = None, query_col: int | None = None,
                 misread: bool = False) -> np.ndarray:
    """(rows, cols): the score between an image token (the view's query, or the one given) and every token of
    the image."""
    start, stop = view.image_span()
    row = view.query_row if query_row is None else query_row
    col = view.query_col if query_col is None else query_col
    query = start + row * view.image_cols + col
    return scores_from(view, ids, query, slice(start, stop), misread).reshape(view.image_rows, view.image_cols)


def text_resumes(view: MropeView, ids: np.ndarray) -> list[tuple[int, int]]:
    """For each text run after a visual segment: its first token's index and its position (on all three axes)."""
    spans = view.spans()
    return [(start, int(ids[0, start])) for (kind, start, _), (before, *_) in zip(spans[1:], spans, strict=False)
            if kind == "text" and before != "text"]


def play_path(view: MropeView, frames: int) -> list[tuple[int, int]]:
    """The query's positions as Play moves it across the image: along its middle row, then down its middle
    column, at most ``frames`` stops."""
    middle_row, middle_col = view.image_rows // 2, view.image_cols // 2
    path = [(middle_row, col) for col in range(view.image_cols)] + [
        (row, middle_col) for row in range(view.image_rows) if row != middle_row]
    if len(path) > frames:
        path = [path[i] for i in np.unique(np.linspace(0, len(path) - 1, frames).round().astype(int))]
    return path


#: Seconds between a video's frames (after the temporal patch): Qwen2.5-VL's processor gives 2 / fps.
SECONDS_STOPS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_MODEL = "qwen2.5-vl-7b-instruct"
#: URL value of the model key when the config is the visitor's (pasted or uploaded, kept in the session).
CUSTOM_MODEL = "custom"
MODEL_KEYS: tuple[str, ...] = (CUSTOM_MODEL, *MROPE_PRESETS)


def view_from_config(config: Mapping, key: str = CUSTOM_MODEL) -> MropeView:
    """A vision-language model's M-RoPE from its config.json (``pe_core.rope_from_config`` for the head size, base,
    sections and layout; its vision_config's spatial_merge_size, and tokens_per_second where the model's
    get_rope_index reads it: Qwen2.5-VL's), at this page's default sequence. ValueError for a config without
    M-RoPE sections, or with values pe_core refuses."""
    rope = pe_core.rope_from_config(config)
    if rope.mrope_section is None:
        raise ValueError("This config has no mrope_section: it is not a vision-language model's M-RoPE (Qwen2-VL's "
                         'config has "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}).')
    vision = config.get("vision_config") if isinstance(config.get("vision_config"), Mapping) else {}
    merge = _vision_number("spatial_merge_size", vision.get("spatial_merge_size", 2), 16, whole=True)
    per_second = vision.get("tokens_per_second") if config.get("model_type") == "qwen2_5_vl" else None
    return MropeView(model=key, d=rope.d, base=rope.base, sections=tuple(rope.mrope_section),
                     interleaved=rope.mrope_interleaved, merge=int(merge),
                     tokens_per_second=None if per_second is None else _vision_number("tokens_per_second", per_second,
                                                                                       1000, whole=False))


def _vision_number(name: str, value: object, high: float, *, whole: bool) -> float:
    """A vision_config number: a (whole) number above 0 and at most ``high``; ValueError naming it otherwise."""
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not 0 < value <= high:
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"vision_config.{name} must be {kind} above 0 and at most {high:g}, got {value!r:.40}.")
    return float(value)


def model_name(key: str) -> str:
    return "Your config (pasted or uploaded)" if key == CUSTOM_MODEL else model_config(key).name


def preset_view(key: str) -> MropeView:
    """A preset's M-RoPE from its config.json (explorer.model_configs), at this page's default sequence."""
    return view_from_config(load_config(key), key)


def with_sequence(view: MropeView, **sequence: int | float) -> MropeView:
    """The view with another sequence (text runs, image and video sizes, seconds per frame); the query kept inside
    the image."""
    changed = replace(view, **sequence)
    return with_query(changed, view.query_row, view.query_col)


def sequence_words(view: MropeView) -> str:
    """The sequence in words, in its order, as the page's sliders set it."""
    frames = "frame" if view.video_frames == 1 else "frames"
    return (f"{view.text_before:,} text tokens, the image ({view.image_rows} × {view.image_cols} tokens), "
            f"{view.text_between:,} text tokens, the video ({view.video_frames} {frames} of {view.video_rows} × "
            f"{view.video_cols} tokens, {view.seconds:g} s each), {view.text_after:,} text tokens")


def with_query(view: MropeView, query_row: int, query_col: int) -> MropeView:
    """The view with the query at this row and column of the image (clamped to it)."""
    return replace(view, query_row=min(max(query_row, 0), view.image_rows - 1),
                   query_col=min(max(query_col, 0), view.image_cols - 1))


def text_misread(view: MropeView, ids: np.ndarray) -> float:
    """The largest change misreading the sections makes to a score between two text tokens (the first text
    token against every text token): 0 up to rounding, as their three positions are equal."""
    runs = [np.arange(start, stop) for kind, start, stop in view.spans() if kind == "text"]
    if not runs:
        return 0.0
    text = np.concatenate(runs)
    right = scores_from(view, ids, int(text[0]), text)
    wrong = scores_from(view, ids, int(text[0]), text, misread=True)
    return float(np.abs(right - wrong).max())
