"""pe_core's M-RoPE (mrope_position_ids, mrope_cache, mrope_pair_axes) and the config reader's M-RoPE keys.

Against transformers 5.18 itself: ``get_rope_index`` of Qwen2-VL and Qwen2.5-VL (and Qwen3-VL's, a video
split per frame) on token sequences built with the models' own special token ids and grids, and the cos
and sin of Qwen2-VL's, Qwen2.5-VL's and Qwen3-VL's text rotary embeddings at the same position ids, built
from the same config.json dicts that ``rope_from_config`` reads. Then formulas written out here, token by
token and column by column, hypothesis properties (text alone is plain RoPE; a score depends only on the
(dt, dh, dw) offset) and every refusal.

Tolerances of the cache against transformers: it computes inv_freq in float32 (its exponent rounded, so
the frequency is off by up to ln(base) x 2**-24 relative), the angle p x inv_freq as a float32 product
(half an ulp, 2**-24 relative) and cos / sin in float32: at position p, |error| <= p |dθ| + 2**-24 p θ
+ 2**-22, as tests/core/test_rope_transformers.py bounds plain RoPE.
"""

from __future__ import annotations

import functools
import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support.angle_rounding import angle_rounding_tolerance
from support.independent import rotate_half
from support.needs_torch import import_or_skip

import pe_core
from explorer.model_configs import load_config
from pe_core.rope.mrope import MAX_SEGMENTS

#: An ordinary text token id (any id below the special ones).
TEXT_TOKEN = 100


# ------------------------------------------------------------------------- independent formulas


def independent_position_ids(segments: list[tuple], merge: int = 2, tokens_per_second: float | None = None
                             ) -> np.ndarray:
    """Token by token in plain Python, from the models' description: text at s + i on the three axes; a visual
    segment's token (k, r, c) at (s + τ_k, s + r, s + c), the next segment at s + max(h, w) / m.

    τ_k of a Qwen2.5-VL video: transformers multiplies arange(t) by tokens_per_second x second_per_grid_ts, a
    float32 tensor (the processor's), so both products are rounded to float32 before the truncation."""
    rows: list[tuple[int, int, int]] = []
    s = 0
    for kind, *values in segments:
        if kind == "text":
            rows += [(s + i, s + i, s + i) for i in range(values[0])]
            s += values[0]
            continue
        t, h, w = values[:3]
        for k in range(t):
            if kind == "video" and tokens_per_second is not None:
                interval = np.float32(np.float32(tokens_per_second) * np.float32(values[3]))
                tau = int(np.float32(np.float32(k) * interval))
            else:
                tau = k
            rows += [(s + tau, s + r, s + c) for r in range(h // merge) for c in range(w // merge)]
        s += max(h, w) // merge
    return np.array(rows, dtype=np.int64).reshape(-1, 3).T


def independent_axis(j: int, sections: tuple[int, int, int], interleaved: bool) -> int:
    """The axis pair j takes, as PRODUCT.md words it."""
    if interleaved:
        if j % 3 == 1 and j < 3 * sections[1]:
            return 1
        if j % 3 == 2 and j < 3 * sections[2]:
            return 2
        return 0
    return 0 if j < sections[0] else 1 if j < sections[0] + sections[1] else 2


def independent_cache(position_ids: np.ndarray, d: int, base: float, sections: tuple[int, int, int],
                      interleaved: bool) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin column by column with math: column c turns by p[axis(c mod d/2)] b^(-2 (c mod d/2) / d)."""
    length = position_ids.shape[1]
    cos, sin = np.empty((length, d)), np.empty((length, d))
    for m in range(length):
        for c in range(d):
            j = c % (d // 2)
            angle = float(position_ids[independent_axis(j, sections, interleaved), m]) * base ** (-2 * j / d)
            cos[m, c], sin[m, c] = math.cos(angle), math.sin(angle)
    return cos, sin


def test_positions_are_the_formula_on_a_mixed_sequence() -> None:
    segments = [("text", 3), ("image", 1, 4, 6), ("text", 2), ("video", 3, 6, 4, 0.7), ("text", 1),
                ("image", 2, 2, 2), ("video", 2, 4, 4, 1.0), ("text", 2)]
    for tokens_per_second in (None, 2, 25):
        ours = pe_core.mrope_position_ids(segments, tokens_per_second=tokens_per_second)
        np.testing.assert_array_equal(ours, independent_position_ids(segments, 2, tokens_per_second))
        assert ours.dtype == np.int64 and ours.shape == (3, 3 + 6 + 2 + 18 + 1 + 2 + 8 + 2)


def test_the_worked_example() -> None:
    """Two text tokens, a 4 x 4 patch grid (2 x 2 tokens after the merge) at s = 2, text again at 2 + 4/2."""
    ours = pe_core.mrope_position_ids([("text", 2), ("image", 1, 4, 4), ("text", 1)])
    np.testing.assert_array_equal(ours, [[0, 1, 2, 2, 2, 2, 4], [0, 1, 2, 2, 3, 3, 4], [0, 1, 2, 3, 2, 3, 4]])


def test_a_video_s_frame_groups_are_float32_time_and_the_text_after_it_does_not_wait_for_them() -> None:
    """2.1 s per grid at 2 tokens per second: float32(2 x float32(2.1)) = 4.1999998, and frame group 15 sits at
    floor(float32(15 x that)) = 62, where exact (and float64) arithmetic gives 63; at 0.7 s and 25 tokens per
    second, frame group 14 sits at 245 (float32) where float64 gives 244. The text after the video resumes at
    s + max(h, w) / m = 1 + 1, far below the frame groups' temporal positions."""
    ids = pe_core.mrope_position_ids([("text", 1), ("video", 16, 2, 2, 2.1), ("text", 1)], tokens_per_second=2)
    frames = ids[0, 1:-1] - 1
    assert frames[15] == 62 and int(15 * 2 * 2.1) == 63
    assert frames.tolist() == [int(np.float32(k) * np.float32(4.2)) for k in range(16)]
    assert ids[:, -1].tolist() == [2, 2, 2]
    ids = pe_core.mrope_position_ids([("video", 15, 2, 2, 0.7)], tokens_per_second=25)
    assert ids[0, 14] == 245 and int(14 * 25 * 0.7) == 244
    # Qwen2-VL (no tokens_per_second): frame group k at k.
    assert pe_core.mrope_position_ids([("video", 3, 2, 2, 0.7)])[0].tolist() == [0, 1, 2]


def test_the_cache_is_the_formula_blocked_and_interleaved() -> None:
    ids = pe_core.mrope_position_ids([("text", 2), ("image", 1, 4, 6), ("video", 2, 4, 2, 1.5), ("text", 1)],
                                     tokens_per_second=4)
    for d, sections, interleaved in ((16, (2, 3, 3), False), (24, (4, 4, 4), True), (16, (4, 2, 2), True),
                                     (12, (6, 0, 0), False), (12, (0, 2, 4), False)):
        ours = pe_core.mrope_cache(ids, d, 500.0, sections=sections, interleaved=interleaved)
        theirs = independent_cache(ids, d, 500.0, sections, interleaved)
        tolerance = angle_rounding_tolerance(float(ids.max()))
        for mine, formula in zip(ours, theirs, strict=True):
            assert mine.shape == (ids.shape[1], d)
            np.testing.assert_allclose(mine, formula, rtol=0, atol=tolerance)


def test_pair_axes_blocked_and_interleaved() -> None:
    """Qwen2-VL's [16, 24, 24]: 16 temporal pairs, then 24 height, then 24 width. Qwen3-VL's [24, 20, 20]: height on
    pairs 1, 4, ..., 58 and width on 2, 5, ..., 59, the temporal axis on every third pair and the last four."""
    blocked = pe_core.mrope_pair_axes(128, [16, 24, 24])
    assert blocked.tolist() == [0] * 16 + [1] * 24 + [2] * 24
    interleaved = pe_core.mrope_pair_axes(128, [24, 20, 20], interleaved=True)
    assert interleaved.tolist() == [0, 1, 2] * 20 + [0] * 4
    for sections, flag in (((16, 24, 24), False), ((24, 20, 20), True), ((11, 11, 10), True)):
        axes = pe_core.mrope_pair_axes(2 * sum(sections), sections, interleaved=flag)
        assert tuple(np.bincount(axes, minlength=3)) == sections
        assert axes.tolist() == [independent_axis(j, sections, flag) for j in range(sum(sections))]


# --------------------------------------------------------------------------------- properties


def split_text(length: int, cuts: list[int]) -> list[tuple]:
    edges = sorted({min(cut, length) for cut in cuts} | {0, length})
    return [("text", b - a) for a, b in itertools.pairwise(edges)]


@settings(max_examples=60, deadline=None)
@given(length=st.integers(0, 300), cuts=st.lists(st.integers(0, 300), max_size=4),
       merge=st.integers(1, 4), tokens_per_second=st.sampled_from([None, 2, 25]))
def test_text_alone_gives_three_equal_rows_counting_up(length: int, cuts: list[int], merge: int,
                                                       tokens_per_second: int | None) -> None:
    ids = pe_core.mrope_position_ids(split_text(length, cuts), spatial_merge_size=merge,
                                     tokens_per_second=tokens_per_second)
    np.testing.assert_array_equal(ids, np.broadcast_to(np.arange(length), (3, length)))


sections_and_d = st.integers(1, 40).flatmap(
    lambda half: st.tuples(st.just(2 * half), st.integers(0, half).flatmap(
        lambda a: st.integers(0, half - a).map(lambda b: (a, b, half - a - b)))))


@settings(max_examples=80, deadline=None)
@given(d_sections=sections_and_d, length=st.integers(1, 200), start=st.integers(0, 10**6),
       base=st.sampled_from([100.0, 10000.0, 1e6, 5e6]))
def test_text_alone_has_plain_ropes_cache_to_the_bit(d_sections: tuple, length: int, start: int, base: float) -> None:
    """Whatever the sections, a token with three equal positions turns every pair as plain RoPE does; blocked,
    and interleaved where the sections fit."""
    d, sections = d_sections
    ids = np.broadcast_to(np.arange(start, start + length), (3, length))
    plain = pe_core.rope_cache(length, d, base, start=start)
    layouts = [False]
    if 3 * sections[1] <= d // 2 + 1 and 3 * sections[2] <= d // 2:
        layouts.append(True)
    for interleaved in layouts:
        cos, sin = pe_core.mrope_cache(ids, d, base, sections=sections, interleaved=interleaved)
        np.testing.assert_array_equal(cos, plain[0])
        np.testing.assert_array_equal(sin, plain[1])


def score(q: np.ndarray, k: np.ndarray, q_position: np.ndarray, k_position: np.ndarray, d: int, base: float,
          sections: tuple, interleaved: bool) -> float:
    """q . k after each is turned at its three positions, transformers' q cos + rotate_half(q) sin."""
    cos, sin = pe_core.mrope_cache(np.stack([q_position, k_position], axis=1), d, base, sections=sections,
                                   interleaved=interleaved)
    q_rot = q * cos[0] + rotate_half(q) * sin[0]
    k_rot = k * cos[1] + rotate_half(k) * sin[1]
    return float(q_rot @ k_rot)


positions3 = st.lists(st.integers(0, 10**5), min_size=3, max_size=3).map(np.array)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), a=positions3, b=positions3, shift=positions3,
       layout=st.sampled_from([((16, 24, 24), False), ((24, 20, 20), True), ((2, 3, 3), False), ((4, 2, 2), True)]))
def test_a_score_depends_only_on_the_offset(seed: int, a: np.ndarray, b: np.ndarray, shift: np.ndarray,
                                            layout: tuple) -> None:
    """Two tokens at (t, h, w) positions a and b score as at a + c and b + c, for any c: each pair turns by its
    axis's position, so the score is a sum over pairs of rotations by that axis's offset."""
    sections, interleaved = layout
    d = 2 * sum(sections)
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    here = score(q, k, a, b, d, 10000.0, sections, interleaved)
    there = score(q, k, a + shift, b + shift, d, 10000.0, sections, interleaved)
    # Angles up to 2 x 10**5 rad, each to about an ulp: the scores agree to ~1e-10 x |q| |k|.
    assert here == pytest.approx(there, abs=1e-9 * np.linalg.norm(q) * np.linalg.norm(k))


def test_the_score_moves_with_each_axis_s_offset() -> None:
    """The offset is (dt, dh, dw), not one number: moving the key's height alone changes the score (so the
    property above is not that of a constant), while the same move of both tokens does not."""
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal(16), rng.standard_normal(16)
    base_score = score(q, k, np.array([5, 5, 5]), np.array([3, 3, 3]), 16, 100.0, (2, 3, 3), False)
    for axis in range(3):
        moved = np.array([3, 3, 3])
        moved[axis] += 1
        assert abs(score(q, k, np.array([5, 5, 5]), moved, 16, 100.0, (2, 3, 3), False) - base_score) > 1e-3


visual = st.one_of(
    st.tuples(st.just("image"), st.integers(1, 2), st.integers(1, 6).map(lambda x: 2 * x),
              st.integers(1, 6).map(lambda x: 2 * x)),
    st.tuples(st.just("video"), st.integers(1, 4), st.integers(1, 5).map(lambda x: 2 * x),
              st.integers(1, 5).map(lambda x: 2 * x), st.floats(0.0625, 4.0, width=32)),
)
parts = st.lists(st.one_of(st.tuples(st.just("text"), st.integers(0, 6)), visual), max_size=8)


def wrapped(parts_list: list[tuple]) -> list[tuple]:
    """Each visual part between a <|vision_start|> and a <|vision_end|> text token, as the processors write it."""
    segments: list[tuple] = []
    for part in parts_list:
        segments += [part] if part[0] == "text" else [("text", 1), part, ("text", 1)]
    return segments


@settings(max_examples=80, deadline=None)
@given(parts_list=parts, tokens_per_second=st.sampled_from([None, 1, 2, 4.5]))
def test_positions_are_the_formula_on_any_sequence(parts_list: list[tuple], tokens_per_second: float | None) -> None:
    segments = wrapped(parts_list)
    np.testing.assert_array_equal(pe_core.mrope_position_ids(segments, tokens_per_second=tokens_per_second),
                                  independent_position_ids(segments, 2, tokens_per_second))


# ------------------------------------------------------------------------------- transformers


def tiny_text(**extra: object) -> dict:
    """A language model small enough to build in milliseconds; head_dim 128 as in every Qwen-VL."""
    return dict(vocab_size=152064, hidden_size=256, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, **extra)


@functools.cache
def qwen_vl_model(family: str, tokens_per_second: int = 2):
    """The model class whose get_rope_index transformers runs, built on the meta device (no weights are made:
    get_rope_index reads only its config's spatial_merge_size and tokens_per_second)."""
    torch = import_or_skip("torch")
    transformers = import_or_skip("transformers")
    vision = dict(depth=1, hidden_size=16, num_heads=2, spatial_merge_size=2)
    if family == "qwen2_vl":
        config = transformers.Qwen2VLConfig(text_config=tiny_text(), vision_config=vision | {"embed_dim": 16})
        model_class = transformers.Qwen2VLModel
    elif family == "qwen2_5_vl":
        config = transformers.Qwen2_5_VLConfig(
            text_config=tiny_text(), vision_config=vision | {"intermediate_size": 16, "out_hidden_size": 16,
                                                             "tokens_per_second": tokens_per_second})
        model_class = transformers.Qwen2_5_VLModel
    else:
        config = transformers.Qwen3VLConfig(
            text_config=tiny_text(head_dim=128), vision_config=vision | {
                "intermediate_size": 16, "out_hidden_size": 16, "deepstack_visual_indexes": [0]})
        model_class = transformers.Qwen3VLModel
    with torch.device("meta"):
        return model_class(config)


def transformers_rope_index(family: str, parts_list: list[tuple], tokens_per_second: int = 2) -> np.ndarray:
    """get_rope_index of the token sequence the processor would make: text tokens, and each image or video as
    <|vision_start|>, its image_token_id / video_token_id tokens (t x h/2 x w/2), <|vision_end|>; its grids,
    seconds per grid (float32, as the processor's tensor) and mm_token_type_ids as the processor builds them."""
    torch = import_or_skip("torch")
    from transformers.processing_utils import ProcessorMixin

    model = qwen_vl_model(family, tokens_per_second)
    config = model.config
    merge = config.vision_config.spatial_merge_size
    ids: list[int] = []
    grids: dict[str, list[list[int]]] = {"image": [], "video": []}
    seconds: list[float] = []
    for kind, *values in parts_list:
        if kind == "text":
            ids += [TEXT_TOKEN] * values[0]
            continue
        t, h, w = values[:3]
        token = config.image_token_id if kind == "image" else config.video_token_id
        ids += [config.vision_start_token_id, *[token] * (t * (h // merge) * (w // merge)), config.vision_end_token_id]
        grids[kind].append([t, h, w])
        if kind == "video":
            seconds.append(values[3])
    processor = SimpleNamespace(image_token_ids=[config.image_token_id], video_token_ids=[config.video_token_id],
                                audio_token_ids=[])
    input_ids = torch.tensor([ids])
    arguments = dict(
        mm_token_type_ids=torch.tensor(ProcessorMixin.create_mm_token_type_ids(processor, [ids])),
        image_grid_thw=torch.tensor(grids["image"]) if grids["image"] else None,
        video_grid_thw=torch.tensor(grids["video"]) if grids["video"] else None,
        attention_mask=torch.ones_like(input_ids))
    if family == "qwen2_5_vl":
        arguments["second_per_grid_ts"] = torch.tensor(seconds, dtype=torch.float32) if seconds else None
    positions, _ = model.get_rope_index(input_ids, **arguments)
    return positions[:, 0].numpy()


#: Text, several images and videos, the processors' special tokens around each.
MIXED = [
    [("text", 5), ("image", 1, 4, 6), ("text", 3), ("image", 1, 8, 4), ("text", 2), ("video", 4, 6, 4, 1.0),
     ("text", 4)],
    [("image", 1, 2, 2), ("image", 1, 6, 6), ("video", 3, 4, 8, 0.7), ("text", 1), ("video", 6, 2, 4, 0.5)],
    [("text", 2), ("video", 8, 4, 4, 2 / 3), ("image", 1, 12, 2), ("text", 7)],
    # Frame group 15 at 2.1 s per grid: 62 in float32 (Qwen2.5-VL at 2 tokens per second), 63 in exact arithmetic.
    [("text", 1), ("video", 16, 2, 2, 2.1), ("text", 1), ("video", 15, 2, 4, 0.7), ("text", 1)],
]


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl"])
@pytest.mark.parametrize("parts_list", MIXED, ids=["text-images-video", "images-videos", "video-image", "float32"])
def test_positions_are_transformers_get_rope_index(family: str, parts_list: list[tuple]) -> None:
    tokens_per_second = 2 if family == "qwen2_5_vl" else None
    ours = pe_core.mrope_position_ids(wrapped(parts_list), tokens_per_second=tokens_per_second)
    np.testing.assert_array_equal(ours, transformers_rope_index(family, parts_list))


@settings(max_examples=40, deadline=None)
@given(parts_list=parts, tokens_per_second=st.sampled_from([1, 2, 4, 25]))
def test_positions_are_qwen2_5_vls_on_any_sequence(parts_list: list[tuple], tokens_per_second: int) -> None:
    assume(any(part[0] != "text" or part[1] for part in parts_list))  # transformers fails on no token at all
    ours = pe_core.mrope_position_ids(wrapped(parts_list), tokens_per_second=tokens_per_second)
    np.testing.assert_array_equal(ours, transformers_rope_index("qwen2_5_vl", parts_list, tokens_per_second))


def test_qwen3_vl_s_video_is_one_segment_per_frame() -> None:
    """Qwen3-VL splits a video's grid into frames (t = 1 each), each after its timestamp's text: the same
    positions as those frames written as video segments with t = 1 (and Qwen2-VL's frame groups k)."""
    frames, h, w = 3, 4, 6
    torch = import_or_skip("torch")
    from transformers.processing_utils import ProcessorMixin

    model = qwen_vl_model("qwen3_vl")
    config = model.config
    # Two text tokens, then per frame its timestamp (two tokens), <|vision_start|>, its tokens, <|vision_end|>.
    ids = [TEXT_TOKEN] * 2
    per_frame: list[tuple] = [("text", 2)]
    for _ in range(frames):
        ids += [TEXT_TOKEN] * 2 + [config.vision_start_token_id] + [config.video_token_id] * (h // 2 * w // 2) + [
            config.vision_end_token_id]
        per_frame += [("text", 3), ("video", 1, h, w, 1.0), ("text", 1)]
    processor = SimpleNamespace(image_token_ids=[config.image_token_id], video_token_ids=[config.video_token_id],
                                audio_token_ids=[])
    input_ids = torch.tensor([ids])
    # transformers is given the video's whole grid once, as Qwen3-VL's processor gives it.
    theirs, _ = model.get_rope_index(
        input_ids, torch.tensor(ProcessorMixin.create_mm_token_type_ids(processor, [ids])),
        video_grid_thw=torch.tensor([[frames, h, w]]), attention_mask=torch.ones_like(input_ids))
    np.testing.assert_array_equal(pe_core.mrope_position_ids(per_frame), theirs[:, 0].numpy())


def float32_rtol(base: float) -> float:
    return (math.log(base) + 4) * 2.0**-23


#: Config.json dicts in both spellings: Qwen2-VL-7B-Instruct's (transformers 4: rope_scaling "type": "mrope"),
#: Qwen2.5-VL-7B-Instruct's (rope_type and type "default"), Qwen3-VL-8B-Instruct's text_config (transformers 5's
#: rope_parameters with mrope_interleaved); the language model shrunk to one layer, its head_dim 128 kept.
ROTARY_CONFIGS = {
    "qwen2_vl": ({"model_type": "qwen2_vl", "rope_theta": 1000000.0, "max_position_embeddings": 32768,
                  **tiny_text(), "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}},
                 "transformers.models.qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding"),
    "qwen2_5_vl": ({"model_type": "qwen2_5_vl", "rope_theta": 1000000.0, "max_position_embeddings": 128000,
                    **tiny_text(), "rope_scaling": {"type": "default", "rope_type": "default",
                                                    "mrope_section": [16, 24, 24]}},
                   "transformers.models.qwen2_5_vl.modeling_qwen2_5_vl.Qwen2_5_VLRotaryEmbedding"),
    "qwen3_vl": ({"model_type": "qwen3_vl", "text_config": {
        "model_type": "qwen3_vl_text", **tiny_text(head_dim=128), "max_position_embeddings": 262144,
        "rope_parameters": {"rope_type": "default", "rope_theta": 5000000, "mrope_section": [24, 20, 20],
                            "mrope_interleaved": True}}},
        "transformers.models.qwen3_vl.modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding"),
}


def transformers_rotary(family: str):
    """The family's text rotary embedding, built from its configuration class as from_pretrained builds it."""
    transformers = import_or_skip("transformers")
    config, path = ROTARY_CONFIGS[family]
    keys = dict(config)
    hf = transformers.CONFIG_MAPPING[keys.pop("model_type")](**keys)
    module_name, _, class_name = path.rpartition(".")
    module = __import__(module_name, fromlist=[class_name])
    return getattr(module, class_name)(hf.text_config)


@pytest.mark.parametrize("family", list(ROTARY_CONFIGS))
def test_cache_is_the_text_rotary_embeddings_cos_and_sin(family: str) -> None:
    """Position ids of a sequence of text, images and a video 200 positions in (temporal positions up to ~300),
    and of random (t, h, w) triples up to 10**4 (every axis far from the others, so that a pair reading the
    wrong axis is off by far more than the bound); d, base and sections as rope_from_config reads the dict."""
    torch = import_or_skip("torch")
    rotary = transformers_rotary(family)
    rope = pe_core.rope_from_config(ROTARY_CONFIGS[family][0])
    assert (rope.d, rope.scaling, rope.mrope_interleaved) == (128, None, family == "qwen3_vl")
    assert list(rope.mrope_section) == list(rotary.mrope_section)
    ours_freq = pe_core.rope_frequencies(rope.d, rope.base)
    inv_freq = rotary.inv_freq.double().numpy()
    np.testing.assert_allclose(inv_freq, ours_freq, rtol=float32_rtol(rope.base))  # else the bound hides it
    sequence = pe_core.mrope_position_ids(
        [("text", 200), ("image", 1, 8, 12), ("text", 3), ("video", 5, 4, 6, 1.5), ("image", 1, 4, 4), ("text", 5)],
        tokens_per_second=25)
    rng = np.random.default_rng(41)
    for ids in (sequence, rng.integers(0, 10**4, size=(3, 64))):
        their_cos, their_sin = rotary(torch.zeros(1, ids.shape[1], 8), torch.tensor(ids)[:, None, :])
        cos, sin = pe_core.mrope_cache(ids, rope.d, rope.base, sections=rope.mrope_section,
                                       interleaved=rope.mrope_interleaved)
        axes = pe_core.mrope_pair_axes(rope.d, rope.mrope_section, interleaved=rope.mrope_interleaved)
        taken = np.tile(ids[axes].T.astype(np.float64), 2)  # the position each column turns by
        theta = np.tile(ours_freq, 2)
        bound = taken * np.abs(np.tile(inv_freq, 2) - theta) + 2.0**-24 * taken * theta + 2.0**-22
        assert np.all(np.abs(their_cos[0].double().numpy() - cos) <= bound)
        assert np.all(np.abs(their_sin[0].double().numpy() - sin) <= bound)
        # The other layout is far off: the comparison tells blocked from interleaved.
        other = pe_core.mrope_cache(ids, rope.d, rope.base, sections=(24, 20, 20),
                                    interleaved=not rope.mrope_interleaved)[0]
        assert np.max(np.abs(their_cos[0].double().numpy() - other)) > 0.1


def test_model_layers_read_qwen2_vl_s_mrope_config_as_transformers() -> None:
    """Layer by layer, a Qwen2-VL config (rope_type "mrope", refused before) rotates every layer with its rotary
    embedding's inv_freq; its config class reads "mrope" as "default", so no note says otherwise."""
    config = ROTARY_CONFIGS["qwen2_vl"][0]
    rotary = transformers_rotary("qwen2_vl")
    layers = pe_core.model_layers(config)
    assert len(layers) == 1 and layers[0].rotary and layers[0].attention_factor == 1.0
    np.testing.assert_allclose(layers[0].inv_freq, rotary.inv_freq.double().numpy(), rtol=float32_rtol(1e6))
    from pe_core.rope.layers import layer_rope_config

    rope = layer_rope_config(config, "full_attention")
    assert (rope.notes, rope.mrope_section, rope.mrope_interleaved) == ((), (16, 24, 24), False)


# ----------------------------------------------------------------------------- config reader


QWEN2_VL_TRANSFORMERS4 = {"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
                          "max_position_embeddings": 32768, "rope_theta": 1000000.0,
                          "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}


def test_the_config_reader_reads_transformers_4_s_mrope_as_plain_rope_with_its_sections() -> None:
    rope = pe_core.rope_from_config(QWEN2_VL_TRANSFORMERS4)
    assert (rope.d, rope.base, rope.scaling, rope.max_length) == (128, 1e6, None, 32768)
    assert (rope.mrope_section, rope.mrope_interleaved, rope.notes) == ((16, 24, 24), False, ())
    # Qwen2.5-VL's hub spelling: rope_type and type "default" beside the sections.
    qwen2_5 = QWEN2_VL_TRANSFORMERS4 | {"model_type": "qwen2_5_vl", "rope_scaling": {
        "type": "default", "rope_type": "default", "mrope_section": [16, 24, 24]}}
    assert pe_core.rope_from_config(qwen2_5) == rope
    # "mrope" without sections: Qwen2-VL's config reads it, and its rotary embedding takes [16, 24, 24].
    assert pe_core.rope_from_config(QWEN2_VL_TRANSFORMERS4 | {"rope_scaling": {"type": "mrope"}}) == rope


def test_the_config_reader_reads_transformers_5_s_interleaved_sections() -> None:
    config = {"model_type": "qwen3_vl", "text_config": {
        "model_type": "qwen3_vl_text", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32,
        "rope_parameters": {"rope_type": "default", "rope_theta": 5e6, "mrope_section": [24, 20, 20],
                            "mrope_interleaved": True}}}
    rope = pe_core.rope_from_config(config)
    assert (rope.d, rope.base, rope.scaling, rope.mrope_section, rope.mrope_interleaved) == (
        128, 5e6, None, (24, 20, 20), True)
    # The same keys under transformers 4's rope_scaling with rope_theta at the top read alike.
    text = dict(config["text_config"])
    parameters = dict(text.pop("rope_parameters"))
    text |= {"rope_theta": parameters.pop("rope_theta"), "rope_scaling": parameters}
    assert pe_core.rope_from_config({"model_type": "qwen3_vl", "text_config": text}) == rope


def test_the_family_decides_the_interleaving_as_in_transformers() -> None:
    """No model of transformers reads mrope_interleaved: Qwen2-VL's code runs blocked sections, Qwen3-VL's
    interleaved, whatever the flag says (and a note says so); a config of no known family follows its flag."""
    flagged = QWEN2_VL_TRANSFORMERS4 | {"rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24],
                                                         "mrope_interleaved": True}}
    rope = pe_core.rope_from_config(flagged)
    assert rope.mrope_interleaved is False and any("blocked" in note for note in rope.notes)
    unflagged_qwen3 = {"model_type": "qwen3_vl_text", "head_dim": 128, "rope_parameters": {
        "rope_type": "default", "rope_theta": 5e6, "mrope_section": [24, 20, 20]}}
    assert pe_core.rope_from_config(unflagged_qwen3).mrope_interleaved is True
    anonymous = {"head_dim": 128, "rope_parameters": {"rope_type": "default", "rope_theta": 5e6,
                                                      "mrope_section": [24, 20, 20], "mrope_interleaved": True}}
    assert pe_core.rope_from_config(anonymous).mrope_interleaved is True
    assert pe_core.rope_from_config({**anonymous, "rope_parameters": {
        "rope_type": "default", "rope_theta": 5e6, "mrope_section": [24, 20, 20]}}).mrope_interleaved is False


def test_qwen3_5_s_preset_reads_as_before_with_its_sections() -> None:
    """Its rope_parameters held mrope_section and mrope_interleaved all along, read past: d, base, scaling and
    length are unchanged, and the sections (32 pairs of its 64 rotated coordinates) are now kept."""
    rope = pe_core.rope_from_config(load_config("qwen3.5-27b"))
    assert (rope.d, rope.base, rope.scaling, rope.max_length, rope.notes) == (64, 1e7, None, 262144, ())
    assert (rope.mrope_section, rope.mrope_interleaved) == ((11, 11, 10), True)


def test_a_config_without_sections_has_none() -> None:
    rope = pe_core.rope_from_config(load_config("llama-3.1-8b"))
    assert (rope.mrope_section, rope.mrope_interleaved) == (None, False)


# ------------------------------------------------------------------------------------ refusals


POSITION_ERRORS = [
    ("text", {}, "segments must be a list"),
    (5, {}, "segments must be a list"),
    ([("text",)], {}, r"segments\[0\] \(text\) must be \('text', n\)"),
    ([("text", 1, 2)], {}, "1 value.s. after the kind, got 2"),
    ([("audio", 3)], {}, "has kind 'audio'"),
    ([(3, "text")], {}, "has kind 3"),
    (["text"], {}, r"segments\[0\] must be a tuple"),
    ([()], {}, r"segments\[0\] must be a tuple"),
    ([("text", -1)], {}, "must be at least 0, got -1"),
    ([("text", 1.5)], {}, "must be a whole number"),
    ([("text", True)], {}, "must be a whole number"),
    ([("image", 0, 2, 2)], {}, r"segments\[0\] \(image\): t must be at least 1"),
    ([("image", 1, -2, 2)], {}, "h must be at least 1"),
    ([("video", 2, 2, -4, 1.0)], {}, "w must be at least 1"),
    ([("image", 1, 4)], {}, r"must be \('image', t, h, w\)"),
    ([("image", 1, 5, 4)], {}, "grid h = 5 is not a multiple of spatial_merge_size 2"),
    ([("video", 2, 4, 6, 1.0)], {"spatial_merge_size": 4}, "grid w = 6 is not a multiple of spatial_merge_size 4"),
    ([("video", 2, 4, 4)], {}, "seconds_per_grid"),
    ([("video", 2, 4, 4, 0.0)], {}, "seconds_per_grid must be > 0"),
    ([("video", 2, 4, 4, float("nan"))], {}, "seconds_per_grid must be finite"),
    ([("video", 2, 4, 4, "1s")], {}, "seconds_per_grid must be a real number"),
    ([("image", 1, 2, 2), ("image", 1, 2, 2)], {}, r"two images with no text between.*\('text', 1\)"),
    ([("video", 1, 2, 2, 1.0), ("text", 0), ("video", 1, 2, 2, 1.0)], {}, "two videos with no text between"),
    ([("text", 1)], {"spatial_merge_size": 0}, "spatial_merge_size must be at least 1"),
    ([("text", 1)], {"tokens_per_second": 0}, "tokens_per_second must be > 0"),
    ([("text", 1)], {"tokens_per_second": float("inf")}, "tokens_per_second must be finite"),
    ([("text", 2**20 + 1)], {}, "must be at most 1,048,576"),
    ([("text", 2**19), ("image", 1, 2048, 2048)], {}, "reaches 1,572,864 tokens at segments.1.; at most 1,048,576"),
    ([("image", 1, 2**21, 2**21)], {}, "at most"),
    ([("text", 0)] * (MAX_SEGMENTS + 1), {}, "at most 65,536"),
    ([("video", 3, 2, 2, 1e12)], {"tokens_per_second": 2}, "beyond 1,000,000,000,000; lower seconds_per_grid"),
    ([("video", 1, 2, 2, 1e300)], {"tokens_per_second": 2}, "overflows float32.*lower seconds_per_grid"),
    ([("video", 3, 2, 2, 3e38)], {"tokens_per_second": 2}, "overflows float32"),
    ([("video", 3, 2, 2, 1e37)], {"tokens_per_second": 25}, "temporal position inf"),
]


@pytest.mark.parametrize(("segments", "options", "words"), POSITION_ERRORS)
def test_bad_segments_get_a_message(segments: object, options: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pe_core.mrope_position_ids(segments, **options)


IDS = np.zeros((3, 4), dtype=np.int64)
CACHE_ERRORS = [
    (IDS, 8, {"sections": (1, 1, 1)}, r"mrope_section \[1, 1, 1\] sums to 3 pairs, but d = 8 has 4"),
    (IDS, 8, {"sections": (2, 2, 2)}, "summing to d/2 = 4"),
    (IDS, 7, {"sections": (1, 1, 1)}, "must be even"),
    (IDS, 0, {"sections": (0, 0, 0)}, "at least 2"),
    (IDS, 8, {"sections": (4, 0)}, "three pair counts"),
    (IDS, 8, {"sections": "444"}, "three pair counts"),
    (IDS, 8, {"sections": (5, -1, 0)}, r"mrope_section\[1\] must be at least 0"),
    (IDS, 8, {"sections": (2, 1.5, 0.5)}, "whole number"),
    (IDS, 12, {"sections": (0, 3, 3), "interleaved": True}, "does not fit d/2 = 6 pairs"),
    (IDS, 8, {"sections": (2, 1, 1), "interleaved": "yes"}, "interleaved must be True or False"),
    (IDS, 8, {"sections": (2, 1, 1), "base": 1.0}, "greater than 1"),
    (IDS[:2], 8, {"sections": (2, 1, 1)}, r"must be a \(3, L\) array"),
    (IDS[0], 8, {"sections": (2, 1, 1)}, r"must be a \(3, L\) array"),
    (IDS + 0.5, 8, {"sections": (2, 1, 1)}, "whole numbers"),
    (IDS * np.nan, 8, {"sections": (2, 1, 1)}, "NaN or infinite"),
    (IDS.astype(str), 8, {"sections": (2, 1, 1)}, r"must be a \(3, L\) array"),
    (IDS + 10**13, 8, {"sections": (2, 1, 1)}, "within"),
    (np.zeros((3, 2**20 + 1), dtype=np.int8), 2, {"sections": (1, 0, 0)}, "at most 1,048,576"),
    (np.zeros((3, 2**19), dtype=np.int8), 128, {"sections": (16, 24, 24)}, "cells is more than the limit"),
]


@pytest.mark.parametrize(("ids", "d", "options", "words"), CACHE_ERRORS)
def test_bad_cache_arguments_get_a_message(ids: np.ndarray, d: int, options: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pe_core.mrope_cache(ids, d, **options)


def test_pair_axes_refuse_as_the_cache_does() -> None:
    with pytest.raises(ValueError, match="sums to 3 pairs"):
        pe_core.mrope_pair_axes(8, (1, 1, 1))
    with pytest.raises(ValueError, match="11 height and 10 width pairs"):
        pe_core.mrope_pair_axes(64, (10, 11, 11), interleaved=True)


LLAMA = {"rope_theta": 10000.0, "head_dim": 128, "max_position_embeddings": 4096}
CONFIG_ERRORS = [
    (LLAMA | {"rope_scaling": {"type": "mrope"}}, "not one this explorer computes without mrope_section"),
    (QWEN2_VL_TRANSFORMERS4 | {"rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 20]}},
     r"sums to 60 pairs, but d = 128 has 64"),
    # Qwen2-VL's default sections fit a head of 128 only.
    (QWEN2_VL_TRANSFORMERS4 | {"head_dim": 64, "rope_scaling": {"type": "mrope"}}, "sums to 64 pairs, but d = 64"),
    (LLAMA | {"rope_parameters": {"rope_type": "default", "mrope_section": [16, 24, 24], "mrope_interleaved": 1}},
     "mrope_interleaved must be true or false"),
    (LLAMA | {"rope_parameters": {"rope_type": "default", "mrope_section": [30, 34, 0], "mrope_interleaved": True}},
     "does not fit d/2 = 64 pairs"),
    (LLAMA | {"rope_parameters": {"rope_type": "default", "mrope_section": 64}}, "three pair counts"),
]


@pytest.mark.parametrize(("config", "words"), CONFIG_ERRORS)
def test_bad_mrope_configs_get_a_message(config: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pe_core.rope_from_config(config)


def test_rope_config_checks_its_sections() -> None:
    assert pe_core.RopeConfig(8, 100.0, mrope_section=[2, 1, 1]).mrope_section == (2, 1, 1)
    with pytest.raises(ValueError, match="sums to 3 pairs, but d = 8 has 4"):
        pe_core.RopeConfig(8, 100.0, mrope_section=(1, 1, 1))
    with pytest.raises(ValueError, match="no mrope_section to interleave"):
        pe_core.RopeConfig(8, 100.0, mrope_interleaved=True)
    with pytest.raises(ValueError, match="mrope_interleaved must be true or false"):
        pe_core.RopeConfig(8, 100.0, mrope_section=(2, 1, 1), mrope_interleaved="no")
