r"""Multimodal RoPE (M-RoPE): three positions per token, and which rotary pairs take which.

Vision-language models of the Qwen family (Qwen2-VL, Qwen2.5-VL, Qwen3-VL) give each token of a sequence
of text, images and videos three positions, temporal, height and width, :math:`(p^t, p^h, p^w)`:

- a text token: the same position on the three axes, one more than the token before it, so that a
  sequence of text alone is plain RoPE;
- a visual segment (an image, or a video's frame groups) that starts at position :math:`s`: the token
  of frame group :math:`k`, row :math:`r` and column :math:`c` of its merged grid sits at
  :math:`(s + \tau_k,\; s + r,\; s + c)`, and the text after it resumes at :math:`s + \max(h, w)/m` on
  all three axes (:math:`h, w` the patch grid, :math:`m` the spatial merge size).

The rotary pairs are split into three sections :math:`(n_t, n_h, n_w)`, :math:`n_t + n_h + n_w = d/2`:
pair :math:`j` turns by :math:`p^{a(j)}\,\theta_j` with :math:`\theta_j = b^{-2j/d}` and :math:`a(j)`
its axis, blocked (Qwen2-VL, Qwen2.5-VL: the first :math:`n_t` pairs temporal, the next :math:`n_h`
height, the rest width) or interleaved (Qwen3-VL: height and width on every third pair, so each axis
has fast and slow pairs). Because every pair still turns by (its position) x (its frequency), the
score of two tokens depends only on their offset :math:`(\Delta t, \Delta h, \Delta w)`.

Limits: a sequence of at most ``MAX_LENGTH`` (2**20) tokens in at most ``MAX_SEGMENTS`` (65,536)
segments, positions within ``MAX_POSITION`` (10**12); a cache of at most ``MAX_CELLS`` (2**25) values.

Reference: Wang et al. 2024, "Qwen2-VL", section 2.1 (M-RoPE); Bai et al. 2025, "Qwen2.5-VL", section 2.2
(absolute time); transformers 5.18 ``models/qwen2_vl/modeling_qwen2_vl.py`` and
``models/qwen2_5_vl/modeling_qwen2_5_vl.py`` (``get_vision_position_ids``, ``get_rope_index``, the
``Qwen2VLRotaryEmbedding`` and ``Qwen2_5_VLRotaryEmbedding``), ``models/qwen3_vl/modeling_qwen3_vl.py``
(``Qwen3VLTextRotaryEmbedding.recomposition_frequencies``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pe_core._validate import (
    MAX_LENGTH,
    MAX_POSITION,
    check_cells,
    check_int,
    check_real,
    check_whole_positions,
)
from pe_core.encoding import sin_cos_of_products
from pe_core.rope.scaling import check_rope_base, check_rope_d, rope_frequencies

#: Most segments one sequence holds (each is a Python-level step; a long video split per frame, as
#: Qwen3-VL does, with a timestamp before each frame, is two per frame).
MAX_SEGMENTS = 65_536
#: The kinds of segment and the values each holds after its kind.
SEGMENT_FIELDS = {"text": ("n",), "image": ("t", "h", "w"), "video": ("t", "h", "w", "seconds_per_grid")}
_SEGMENT_FORMS = '("text", n), ("image", t, h, w) or ("video", t, h, w, seconds_per_grid)'
#: Rows of a cache computed at once (keeps the temporaries to a few MB, as rope_cache does).
_BLOCK_CELLS = 1 << 16


def _is_sequence(value: object) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, Mapping))


def check_mrope_section(sections: object, d: int, *, interleaved: bool = False) -> tuple[int, int, int]:
    r"""Return M-RoPE's sections as three ints :math:`(n_t, n_h, n_w)`, or raise saying what to fix.

    They must be whole numbers >= 0 summing to d/2 (transformers' blocked ``freq.split(mrope_section)``
    fails, or with a shorter sum gives the rest to the temporal axis, silently). Interleaved, the height
    takes pairs :math:`j \equiv 1 \pmod 3`, :math:`j < 3n_h`, and the width :math:`j \equiv 2`,
    :math:`j < 3n_w`: those must fit below d/2 (:math:`3n_h \le d/2 + 1`, :math:`3n_w \le d/2`), or
    transformers' slices silently give the axes fewer pairs than the sections say.

    Raises:
        ValueError: not three whole numbers, a negative one, a sum other than d/2, interleaved sections
            that do not fit.
    """
    d = check_rope_d(d)
    if not _is_sequence(sections) or len(sections) != 3:
        raise ValueError(
            f"mrope_section must be three pair counts (temporal, height, width), got {sections!r} "
            "(Qwen2-VL: [16, 24, 24], Qwen3-VL: [24, 20, 20] for d = 128)."
        )
    counts = tuple(check_int(f"mrope_section[{i}]", value, low=0, high=d) for i, value in enumerate(sections))
    half = d // 2
    if sum(counts) != half:
        raise ValueError(
            f"mrope_section {list(counts)} sums to {sum(counts)} pairs, but d = {d} has {half}: give three pair "
            f"counts (temporal, height, width) summing to d/2 = {half} (Qwen2-VL: [16, 24, 24] for d = 128)."
        )
    if interleaved:
        axes = _pair_axes(half, counts, interleaved=True)
        got = (int(np.count_nonzero(axes == 1)), int(np.count_nonzero(axes == 2)))
        if got != counts[1:]:
            raise ValueError(
                f"interleaved mrope_section {list(counts)} does not fit d/2 = {half} pairs: the height takes pairs "
                f"1, 4, 7, ... below 3 x {counts[1]} and the width pairs 2, 5, 8, ... below 3 x {counts[2]}, "
                f"which gives {got[0]} height and {got[1]} width pairs here. Use 3 x height <= d/2 + 1 and "
                f"3 x width <= d/2 (Qwen3-VL: [24, 20, 20] for d = 128)."
            )
    temporal, height, width = counts
    return temporal, height, width


def _pair_axes(half: int, sections: tuple[int, ...], *, interleaved: bool) -> np.ndarray:
    """The axis (0 temporal, 1 height, 2 width) of each of the d/2 pairs, for checked sections."""
    if not interleaved:
        return np.repeat(np.arange(3), sections)
    j = np.arange(half)
    axes = np.zeros(half, dtype=np.int64)
    # transformers' freqs_thw[..., slice(offset, 3 * sections[dim], 3)] = freq[dim, ...]: height, then width.
    axes[(j % 3 == 1) & (j < 3 * sections[1])] = 1
    axes[(j % 3 == 2) & (j < 3 * sections[2])] = 2
    return axes


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {type(value).__name__} {value!r}.")
    return bool(value)


def mrope_pair_axes(d: int, sections: object, *, interleaved: bool = False) -> np.ndarray:
    r"""The axis :math:`a(j)` each rotary pair j takes its position from: 0 temporal, 1 height, 2 width.

    Blocked (Qwen2-VL, Qwen2.5-VL):

    .. math:: a(j) = 0 \text{ for } j < n_t,\quad 1 \text{ for } n_t \le j < n_t + n_h,\quad 2 \text{ after}

    Interleaved (Qwen3-VL):

    .. math:: a(j) = 1 \text{ if } j \bmod 3 = 1,\ j < 3n_h;\quad 2 \text{ if } j \bmod 3 = 2,\ j < 3n_w;
              \quad 0 \text{ otherwise}

    Args:
        d: even rotary dimension (pairs 0 .. d/2 - 1).
        sections: :math:`(n_t, n_h, n_w)`, whole numbers >= 0 summing to d/2 (the config's ``mrope_section``).
        interleaved: False blocked, True interleaved (``mrope_interleaved``).

    Returns:
        int64 array (d/2,) of 0, 1, 2.

    Raises:
        ValueError: as ``check_mrope_section``; an odd d.

    Example:
        >>> mrope_pair_axes(12, (2, 2, 2)).tolist()
        [0, 0, 1, 1, 2, 2]
        >>> mrope_pair_axes(12, (2, 2, 2), interleaved=True).tolist()
        [0, 1, 2, 0, 1, 2]

    Reference: transformers 5.18 ``Qwen2VLRotaryEmbedding.recomposition_frequencies`` (blocked),
    ``Qwen3VLTextRotaryEmbedding.recomposition_frequencies`` (interleaved).
    """
    interleaved = _check_flag("interleaved", interleaved)
    counts = check_mrope_section(sections, d, interleaved=interleaved)
    return _pair_axes(int(d) // 2, counts, interleaved=interleaved)


# ------------------------------------------------------------------------------------ positions


def _segment_values(index: int, segment: object) -> tuple[str, tuple]:
    """A segment's kind and its values, checked for form (not yet for range)."""
    if not _is_sequence(segment) or not segment:
        raise ValueError(f"segments[{index}] must be a tuple {_SEGMENT_FORMS}, got {segment!r}.")
    kind = segment[0]
    if not isinstance(kind, str) or kind not in SEGMENT_FIELDS:
        raise ValueError(f"segments[{index}] has kind {kind!r}; a segment is {_SEGMENT_FORMS}.")
    names = SEGMENT_FIELDS[kind]
    if len(segment) != 1 + len(names):
        raise ValueError(
            f"segments[{index}] ({kind}) must be ({kind!r}, {', '.join(names)}): {len(names)} value(s) after the "
            f"kind, got {len(segment) - 1}."
        )
    return kind, tuple(segment[1:])


def _frame_temporal(index: int, frames: int, seconds_per_grid: float, tokens_per_second: float | None) -> np.ndarray:
    r""":math:`\tau_k` of a video's frame groups k = 0 .. frames - 1, as transformers computes it.

    Qwen2.5-VL: ``(arange(t) * (tokens_per_second * second_per_grid_ts[i])).long()``, with
    ``second_per_grid_ts`` the processor's float32 tensor: the interval and each product are rounded to
    float32, then truncated: at 2.1 s per grid and 2 tokens per second frame group 15 sits at 62, not at
    15 x 4.2 = 63 (float32(2.1) is below 2.1). Qwen2-VL: k.
    """
    k = np.arange(frames, dtype=np.int64)
    if tokens_per_second is None:
        return k
    with np.errstate(over="ignore"):  # an overflow to inf is refused below, in words
        interval = np.float32(tokens_per_second) * np.float32(seconds_per_grid)
        if not np.isfinite(interval):
            raise ValueError(
                f"segments[{index}] (video): tokens_per_second x seconds_per_grid = {tokens_per_second:g} x "
                f"{seconds_per_grid:g} overflows float32, in which transformers spaces the frame groups; lower "
                "seconds_per_grid or tokens_per_second."
            )
        temporal = k.astype(np.float32) * interval
    top = float(temporal[-1])
    if not np.isfinite(top) or top > MAX_POSITION:
        raise ValueError(
            f"segments[{index}] (video): its last frame group sits at temporal position {top:.3g} "
            f"({frames - 1} x {seconds_per_grid:g} s x {tokens_per_second:g} tokens per second), beyond "
            f"{MAX_POSITION:,}; lower seconds_per_grid or tokens_per_second."
        )
    return temporal.astype(np.int64)  # truncation, as torch's .long(); the values are >= 0


def mrope_position_ids(
    segments: object, *, spatial_merge_size: int = 2, tokens_per_second: float | None = None
) -> np.ndarray:
    r"""The (temporal, height, width) position of each token of one sequence of text, images and videos.

    Segments are laid out in order from :math:`s = 0`:

    - ``("text", n)``: n tokens at :math:`(s + i, s + i, s + i)`, i = 0 .. n-1; then :math:`s \mathrel{+}= n`;
    - ``("image", t, h, w)`` and ``("video", t, h, w, seconds_per_grid)``, (t, h, w) the patch grid before
      the spatial merge (the processor's ``image_grid_thw`` / ``video_grid_thw``): :math:`t \cdot (h/m)
      \cdot (w/m)` tokens, frame group by frame group, row by row, at

      .. math:: (s + \tau_k,\; s + r,\; s + c), \qquad k < t,\ r < h/m,\ c < w/m,

      with :math:`\tau_k = k` for an image and for Qwen2-VL's videos (``tokens_per_second`` None), and
      :math:`\tau_k = \lfloor k \cdot g \cdot \mathrm{tps} \rfloor` for Qwen2.5-VL's videos (g =
      ``seconds_per_grid``, computed in float32 as transformers does); then
      :math:`s \mathrel{+}= \max(h, w)/m`, on all three axes: the text after a video resumes after its grid's
      rows and columns, not after its largest temporal position (which may be further on). transformers 4
      (and vLLM) resumed at the segment's largest position + 1 instead: the same for an image, not for a
      video whose frame groups run past its grid's side.

    transformers groups a sequence's tokens by type, so two images (or two videos) with no text between
    would be read as one: the models' processors put ``<|vision_start|>`` before each, and this function
    asks for a text segment between them. Qwen3-VL splits a video into one segment per frame, each after
    its timestamp's text: write it as such segments with t = 1.

    Args:
        segments: a sequence of ``("text", n)`` (n >= 0), ``("image", t, h, w)`` and ``("video", t, h, w,
            seconds_per_grid)`` (t, h, w >= 1, h and w multiples of the merge size, seconds_per_grid > 0:
            the processor's ``second_per_grid_ts``, temporal_patch_size / fps). At most 65,536 segments
            and 2**20 tokens.
        spatial_merge_size: m, the vision config's ``spatial_merge_size`` (2 in every Qwen-VL), >= 1.
        tokens_per_second: Qwen2.5-VL's ``vision_config.tokens_per_second`` (2 in its released models),
            > 0; None for Qwen2-VL (and Qwen3-VL), whose frame groups are 1 apart.

    Returns:
        int64 array (3, L): rows temporal, height, width; L the number of tokens.

    Raises:
        ValueError: segments not a sequence, an unknown kind, a wrong number of values, a negative or
            fractional count, a grid not divisible by the merge size, two images (or videos) with no text
            between, a sequence over 2**20 tokens or 65,536 segments, a temporal position over 10**12.

    Example:
        >>> mrope_position_ids([("text", 2), ("image", 1, 4, 4), ("text", 1)])
        array([[0, 1, 2, 2, 2, 2, 4],
               [0, 1, 2, 2, 3, 3, 4],
               [0, 1, 2, 3, 2, 3, 4]])

    Reference: transformers 5.18 ``Qwen2VLModel.get_rope_index`` and ``get_vision_position_ids``;
    ``Qwen2_5_VLModel.get_rope_index`` (its videos' ``time_interval``).
    """
    merge = check_int("spatial_merge_size", spatial_merge_size, low=1, high=MAX_LENGTH)
    if tokens_per_second is not None:
        tokens_per_second = check_real("tokens_per_second", tokens_per_second)
        if tokens_per_second <= 0:
            raise ValueError(f"tokens_per_second must be > 0 (Qwen2.5-VL uses 2), got {tokens_per_second!r}.")
    if not _is_sequence(segments):
        raise ValueError(f"segments must be a list of tuples {_SEGMENT_FORMS}, got {type(segments).__name__}.")
    if len(segments) > MAX_SEGMENTS:
        raise ValueError(f"segments holds {len(segments):,} segments; at most {MAX_SEGMENTS:,} are laid out at once.")

    # First pass: check every segment and count the tokens, before any array is made.
    plan: list[tuple[str, tuple]] = []
    total = 0
    previous_visual: tuple[int, str] | None = None
    for index, segment in enumerate(segments):
        kind, values = _segment_values(index, segment)
        where = f"segments[{index}] ({kind})"
        if kind == "text":
            n = check_int(f"{where}: n, its number of tokens,", values[0], low=0, high=MAX_LENGTH)
            if n:
                previous_visual = None  # any text token separates two visual segments
            plan.append((kind, (n,)))
            total += n
        else:
            t, h, w = (check_int(f"{where}: {name}", value, low=1, high=MAX_LENGTH * merge)
                       for name, value in zip("thw", values[:3], strict=True))
            for name, size in (("h", h), ("w", w)):
                if size % merge:
                    raise ValueError(
                        f"{where}: its grid {name} = {size} is not a multiple of spatial_merge_size {merge}: "
                        f"(t, h, w) is the patch grid before the merge (image_grid_thw), whose {merge} x {merge} "
                        f"patches make one token; give {name} as a multiple of {merge}."
                    )
            seconds = None
            if kind == "video":
                seconds = check_real(f"{where}: seconds_per_grid", values[3])
                if seconds <= 0:
                    raise ValueError(
                        f"{where}: seconds_per_grid must be > 0 (the processor's temporal_patch_size / fps, "
                        f"e.g. 2 / 2 = 1.0), got {seconds!r}."
                    )
            if previous_visual is not None and previous_visual[1] == kind:
                raise ValueError(
                    f"segments[{previous_visual[0]}] and segments[{index}] are two {kind}s with no text between: "
                    f"transformers reads consecutive {kind} tokens as one {kind} (get_rope_index groups tokens by "
                    f"type); the processors put <|vision_start|> before each {kind}: add ('text', 1) between them."
                )
            previous_visual = (index, kind)
            plan.append((kind, (t, h, w, seconds)))
            total += t * (h // merge) * (w // merge)
        if total > MAX_LENGTH:
            raise ValueError(
                f"The sequence reaches {total:,} tokens at segments[{index}]; at most {MAX_LENGTH:,} (2**20) are "
                "laid out at once: use fewer or smaller segments."
            )

    out = np.empty((3, total), dtype=np.int64)
    start, filled = 0, 0
    for index, (kind, values) in enumerate(plan):
        if kind == "text":
            (n,) = values
            out[:, filled:filled + n] = np.arange(start, start + n)
            start += n
            filled += n
            continue
        t, h, w, seconds = values
        rows, cols = h // merge, w // merge
        temporal = (_frame_temporal(index, t, seconds, tokens_per_second) if kind == "video"
                    else np.arange(t, dtype=np.int64))
        count = t * rows * cols
        block = out[:, filled:filled + count].reshape(3, t, rows, cols)  # a view: written in place
        block[0] = start + temporal[:, None, None]
        block[1] = start + np.arange(rows)[None, :, None]
        block[2] = start + np.arange(cols)[None, None, :]
        start += max(h, w) // merge
        filled += count
    return out


# ---------------------------------------------------------------------------------------- cache


def _check_position_ids(position_ids: object) -> np.ndarray:
    """position_ids as float64 (3, L): whole numbers within +-MAX_POSITION, L <= MAX_LENGTH."""
    try:
        array = np.asarray(position_ids)
    except (ValueError, TypeError) as error:  # ragged lists
        raise ValueError(f"position_ids must be a (3, L) array of whole numbers ({error}).") from None
    if array.dtype.kind not in "iuf" or array.ndim != 2 or array.shape[0] != 3:
        raise ValueError(
            "position_ids must be a (3, L) array of whole numbers (rows temporal, height, width, as "
            f"mrope_position_ids gives), got {array.dtype} values of shape {array.shape}."
        )
    if array.shape[1] > MAX_LENGTH:
        raise ValueError(f"position_ids holds {array.shape[1]:,} tokens; at most {MAX_LENGTH:,} are computed at once.")
    return check_whole_positions("position_ids", array)


def mrope_cache(
    position_ids: object, d: int, base: float = 10000.0, *, sections: object, interleaved: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    r"""The cos and sin of M-RoPE at each token's three positions, as the models' rotary embeddings return them.

    .. math::

        \cos[m, c] = \cos\!\big(p^{a(j)}_m\,\theta_j\big), \qquad \sin[m, c] = \sin\!\big(p^{a(j)}_m\,\theta_j\big),
        \qquad j = c \bmod d/2,\ \theta_j = b^{-2j/d}

    with :math:`a(j)` the pair's axis (``mrope_pair_axes``): blocked (Qwen2-VL, Qwen2.5-VL: the first
    :math:`n_t` pairs temporal, the next :math:`n_h` height, the rest width) or interleaved (Qwen3-VL:
    height where :math:`j \bmod 3 = 1,\ j < 3n_h`, width where :math:`j \bmod 3 = 2,\ j < 3n_w`, temporal
    elsewhere). Layout "half": column c and c + d/2 share pair c (transformers' ``cat((freq, freq))`` with
    ``rotate_half``). A token whose three positions are equal (any text token) gets plain RoPE's row
    (``rope_cache``). Angles in float64 to about one ulp (``sin_cos_of_products``); transformers computes
    them in float32, within its rounding.

    Args:
        position_ids: (3, L) whole numbers, rows temporal, height, width (``mrope_position_ids``), within
            +-10**12, L <= 2**20 and L x d <= 2**25.
        d: even rotary dimension (the head size; 128 in Qwen2-VL and Qwen3-VL).
        base: b, the config's ``rope_theta`` (Qwen2-VL 1000000, Qwen3-VL 5000000).
        sections: :math:`(n_t, n_h, n_w)`, the config's ``mrope_section``, summing to d/2.
        interleaved: False blocked (Qwen2-VL, Qwen2.5-VL), True interleaved (Qwen3-VL).

    Returns:
        (cos, sin), float64 arrays of shape (L, d).

    Raises:
        ValueError: position_ids not (3, L) whole numbers or too many; odd d; a base <= 1; sections as
            ``check_mrope_section`` refuses them.

    Example:
        >>> cos, sin = mrope_cache([[1], [0], [0]], 4, 100.0, sections=(1, 1, 0))
        >>> cos.round(4)  # pair 0 turns by the temporal position 1, pair 1 by the height 0
        array([[0.5403, 1.    , 0.5403, 1.    ]])

    Reference: transformers 5.18 ``Qwen2_5_VLRotaryEmbedding.forward`` (blocked) and
    ``Qwen3VLTextRotaryEmbedding.forward`` (interleaved).
    """
    d = check_rope_d(d)
    base = check_rope_base(base)
    axes = mrope_pair_axes(d, sections, interleaved=interleaved)
    positions = _check_position_ids(position_ids)
    length = positions.shape[1]
    check_cells(length, d)
    theta = rope_frequencies(d, base)
    half = d // 2
    cos = np.empty((length, d), dtype=np.float64)
    sin = np.empty((length, d), dtype=np.float64)
    block = max(1, _BLOCK_CELLS // half)
    for first in range(0, length, block):
        rows = slice(first, first + block)
        # The position each pair of each token turns by: its axis's row, (rows, d/2).
        taken = positions[:, rows][axes].T
        sin_block, cos_block = sin_cos_of_products(taken, theta[None, :])
        cos[rows, :half] = cos[rows, half:] = cos_block
        sin[rows, :half] = sin[rows, half:] = sin_block
    return cos, sin

