"""The M-RoPE presets (explorer.model_configs.MROPE_MODELS) against transformers 5.18 itself.

Each preset's file is built into its model's own transformers configuration (``AutoConfig.for_model``:
Qwen2VLConfig, Qwen2_5_VLConfig, Qwen3VLConfig), and what the models' code reads of it comes out as
the file says and as the public config.json says (the table below, looked up independently of the
files, each model with where its values were confirmed):

- the text rotary embedding (Qwen2VLRotaryEmbedding, Qwen2_5_VLRotaryEmbedding,
  Qwen3VLTextRotaryEmbedding) reads rope_theta, the head size and mrope_section; which axis each
  frequency pair turns with is read off its own ``recomposition_frequencies``: blocks for Qwen2-VL and
  Qwen2.5-VL, whose files have no mrope_interleaved, interleaved for Qwen3-VL, whose file says
  ``mrope_interleaved: true`` (transformers' Qwen3-VL code interleaves without reading the key);
- ``get_rope_index`` (run as the model's own method on a short text, image, text, video, text
  sequence) reads ``vision_config.spatial_merge_size`` and, for Qwen2.5-VL,
  ``vision_config.tokens_per_second``; the image and video token ids are the config's.
"""

from __future__ import annotations

import functools
import importlib
import json
from types import SimpleNamespace

import numpy as np
import pytest
from support.needs_torch import import_or_skip

import pe_core
from explorer import model_configs
from explorer.model_configs import MODEL_CONFIGS, MROPE_MODELS, MROPE_PRESETS, load_config, model_config

torch = import_or_skip("torch")
transformers = import_or_skip("transformers")

transformers.logging.set_verbosity_error()

#: Each preset's public values (Hugging Face repository config.json), and where they were confirmed.
PUBLIC = {
    "qwen2-vl-7b-instruct": {
        "model_type": "qwen2_vl",
        "head_size": 128,  # hidden_size 3584 / 28 heads: the file gives no head_dim
        "num_hidden_layers": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "mrope_section": [16, 24, 24],
        "mrope_interleaved": False,  # not in the file
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "tokens_per_second": None,  # not in the file; Qwen2-VL's time counts frame pairs
        "image_token_id": 151655,
        "video_token_id": 151656,
        "vision_start_token_id": 151652,
        "vision_end_token_id": 151653,
        "source": "a whole copy of the config.json in PaddleMIX's tests/models/test_qwen2vl.py (7B version); "
        "token ids again in the Triton TensorRT-LLM backend's preprocessing; mrope_section in NVIDIA NeMo's "
        "Qwen2-VL model",
    },
    "qwen2.5-vl-7b-instruct": {
        "model_type": "qwen2_5_vl",
        "head_size": 128,  # hidden_size 3584 / 28 heads
        "num_hidden_layers": 28,
        "max_position_embeddings": 128000,
        "rope_theta": 1000000.0,
        "mrope_section": [16, 24, 24],
        "mrope_interleaved": False,  # not in the file
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "tokens_per_second": 2,
        "image_token_id": 151655,
        "video_token_id": 151656,
        "vision_start_token_id": 151652,
        "vision_end_token_id": 151653,
        "source": "QWEN2_5_VL_7B_CONFIG in TensorRT-LLM's test_modeling_qwen2_5vl.py and a README quoting the "
        "config.json (transformers_version 4.41.2), both whole",
    },
    "qwen3-vl-8b-instruct": {
        "model_type": "qwen3_vl",
        "head_size": 128,  # head_dim
        "num_hidden_layers": 36,
        "max_position_embeddings": 262144,
        "rope_theta": 5000000,
        "mrope_section": [24, 20, 20],
        "mrope_interleaved": True,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "tokens_per_second": None,  # not in the file; Qwen3-VL's videos carry text timestamps
        "image_token_id": 151655,
        "video_token_id": 151656,
        "vision_start_token_id": 151652,
        "vision_end_token_id": 151653,
        "source": "QWEN3_VL_8B_CONFIG in TensorRT-LLM's test_modeling_qwen3vl.py (36 text layers in the model); "
        "the text_config again in nvidia/Cosmos-Reason2-8B's, quoted by a third-party loader",
    },
}

#: Each model type's configuration, text rotary embedding and model (get_rope_index) classes in transformers 5.18.
CLASSES = {
    "qwen2_vl": ("qwen2_vl", "Qwen2VLConfig", "Qwen2VLRotaryEmbedding", "Qwen2VLModel"),
    "qwen2_5_vl": ("qwen2_5_vl", "Qwen2_5_VLConfig", "Qwen2_5_VLRotaryEmbedding", "Qwen2_5_VLModel"),
    "qwen3_vl": ("qwen3_vl", "Qwen3VLConfig", "Qwen3VLTextRotaryEmbedding", "Qwen3VLModel"),
}

#: The sequence get_rope_index runs on: 2 text tokens, an image of 4 x 6 patches, 1 text token, a video of
#: 2 frame pairs of 4 x 4 patches (Qwen3-VL: a timestamp token between the pairs), 2 text tokens.
IMAGE_GRID = (1, 4, 6)
VIDEO_GRID = (2, 4, 4)
SECONDS_PER_GRID = 1.0  # 2 frames a pair at 2 frames a second


def public(key: str) -> dict:
    return PUBLIC[key]


def file_keys(key: str) -> tuple[dict, dict, dict]:
    """The file's top level, its text keys (text_config, or the top level of a flat file) and its vision_config."""
    config = json.loads(model_config(key).path.read_text())
    return config, config.get("text_config", config), config["vision_config"]


def transformers_config(key: str):
    """The model's own transformers configuration, built from the file's keys as from_pretrained would."""
    keys = load_config(key)
    return transformers.AutoConfig.for_model(keys.pop("model_type"), **keys)


def model_module(model_type: str):
    module_name = CLASSES[model_type][0]
    return importlib.import_module(f"transformers.models.{module_name}.modeling_{module_name}")


def test_every_mrope_preset_is_listed_names_its_sources_and_stays_off_the_rotary_pages() -> None:
    keys = [model.key for model in MROPE_MODELS]
    assert tuple(keys) == MROPE_PRESETS and len(set(keys)) == 3 and set(keys) == set(PUBLIC)
    assert not set(keys) & {model.key for model in MODEL_CONFIGS}
    assert len({model.name for model in (*MODEL_CONFIGS, *MROPE_MODELS)}) == len(MODEL_CONFIGS) + len(MROPE_MODELS)
    for model in MROPE_MODELS:
        assert model_config(model.key) is model and model.path.is_file()
        assert model.sources and all(len(source) > 40 for source in model.sources)
        assert model.note and model.layout in pe_core.ROPE_LAYOUTS
        assert model.url == f"https://huggingface.co/{model.repo}/blob/main/config.json"
        assert model.repo.startswith("Qwen/")


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_the_file_says_the_public_values(key: str) -> None:
    values = public(key)
    top, text, vision = file_keys(key)
    assert top["model_type"] == values["model_type"]
    head_size = text.get("head_dim") or text["hidden_size"] // text["num_attention_heads"]
    rope = text["rope_scaling"]
    assert (head_size, text["num_hidden_layers"], text["max_position_embeddings"], text["rope_theta"]) == (
        values["head_size"], values["num_hidden_layers"], values["max_position_embeddings"], values["rope_theta"])
    assert rope["mrope_section"] == values["mrope_section"] and sum(rope["mrope_section"]) == head_size // 2
    assert rope.get("mrope_interleaved", False) is values["mrope_interleaved"]
    assert (vision["patch_size"], vision["spatial_merge_size"], vision["temporal_patch_size"]) == (
        values["patch_size"], values["spatial_merge_size"], values["temporal_patch_size"])
    assert vision.get("tokens_per_second") == values["tokens_per_second"]
    for name in ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"):
        assert top[name] == values[name], name


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_transformers_own_config_class_reads_the_file(key: str) -> None:
    values = public(key)
    config = transformers_config(key)
    text = config.get_text_config()
    _, file_text, file_vision = file_keys(key)
    assert type(config).__name__ == CLASSES[values["model_type"]][1]
    assert text.model_type == values["model_type"] + "_text"
    rope = text.rope_parameters
    # rope_scaling becomes rope_parameters, the base joins it; Qwen2's 'mrope' type reads as 'default'.
    assert rope["rope_type"] == "default" and rope["rope_theta"] == file_text["rope_theta"] == values["rope_theta"]
    assert rope["mrope_section"] == file_text["rope_scaling"]["mrope_section"] == values["mrope_section"]
    assert rope.get("mrope_interleaved", False) is values["mrope_interleaved"]
    head_size = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    assert head_size == values["head_size"]
    assert (text.num_hidden_layers, text.max_position_embeddings) == (
        values["num_hidden_layers"], values["max_position_embeddings"])
    vision = config.vision_config
    assert (vision.patch_size, vision.spatial_merge_size, vision.temporal_patch_size) == (
        file_vision["patch_size"], file_vision["spatial_merge_size"], file_vision["temporal_patch_size"])
    assert vision.spatial_merge_size == values["spatial_merge_size"]
    if values["tokens_per_second"] is not None:
        assert vision.tokens_per_second == file_vision["tokens_per_second"] == values["tokens_per_second"]
    for name in ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"):
        assert getattr(config, name) == values[name], name


def axes_of_the_pairs(mrope_section: list[int], interleaved: bool) -> list[int]:
    """Which axis (0 time, 1 height, 2 width) each frequency pair turns with, fastest first, as the public
    sections say: in blocks of the sections' sizes, or cycling time, height, width while each of height and
    width has pairs left (the rest: time)."""
    if not interleaved:
        return [axis for axis, size in enumerate(mrope_section) for _ in range(size)]
    cycled = 3 * min(mrope_section[1:])
    return [i % 3 for i in range(cycled)] + [0] * (sum(mrope_section) - cycled)


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_the_text_rotary_embedding_reads_base_head_size_and_sections(key: str) -> None:
    values = public(key)
    text = transformers_config(key).get_text_config()
    rotary = getattr(model_module(values["model_type"]), CLASSES[values["model_type"]][2])(text)
    d, base = values["head_size"], values["rope_theta"]
    inv_freq = rotary.inv_freq.double().numpy()
    np.testing.assert_allclose(inv_freq, float(base) ** (-np.arange(0, d, 2) / d), rtol=(np.log(base) + 4) * 2.0**-23)
    assert rotary.attention_scaling == 1.0 and list(rotary.mrope_section) == values["mrope_section"]
    # The model's own recomposition, fed each axis's index as its "frequencies": the axis of every pair.
    axis_index = torch.arange(3, dtype=torch.float32).view(3, 1, 1, 1).expand(3, 1, 1, d // 2).clone()
    recomposed = rotary.recomposition_frequencies(axis_index)[0, 0].long().tolist()
    expected = axes_of_the_pairs(values["mrope_section"], values["mrope_interleaved"])
    assert recomposed == expected + expected  # the half layout: each pair's two coordinates, d / 2 apart
    assert [expected.count(axis) for axis in range(3)] == values["mrope_section"]


def rope_index_inputs(key: str) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """input_ids, mm_token_type_ids and grids of the sequence get_rope_index runs on (IMAGE_GRID, VIDEO_GRID)."""
    values = public(key)
    merge = values["spatial_merge_size"]
    image_tokens = IMAGE_GRID[0] * IMAGE_GRID[1] * IMAGE_GRID[2] // merge**2
    frame_tokens = VIDEO_GRID[1] * VIDEO_GRID[2] // merge**2
    text, image, video = (1, 0), (values["image_token_id"], 1), (values["video_token_id"], 2)
    if values["model_type"] == "qwen3_vl":  # a timestamp between the frame pairs
        video_part = [video] * frame_tokens + [text] + [video] * frame_tokens
    else:
        video_part = [video] * (VIDEO_GRID[0] * frame_tokens)
    tokens = [text] * 2 + [image] * image_tokens + [text] + video_part + [text] * 2
    grids = {"image_grid_thw": torch.tensor([IMAGE_GRID]), "video_grid_thw": torch.tensor([VIDEO_GRID])}
    if values["tokens_per_second"] is not None:
        grids["second_per_grid_ts"] = torch.tensor([SECONDS_PER_GRID])
    ids = torch.tensor([[token for token, _ in tokens]])
    kinds = torch.tensor([[kind for _, kind in tokens]], dtype=torch.int32)
    return ids, kinds, grids


def expected_positions(key: str) -> np.ndarray:
    """The (time, height, width) position of each token of rope_index_inputs, from the public values alone:
    text one step on all three axes; a grid's tokens start where the text stopped, count merged cells in height
    and width, and step time by tokens_per_second x its seconds (Qwen2.5-VL) or by one; after a grid the text goes
    on at the start plus its larger merged side."""
    values = public(key)
    merge, per_second = values["spatial_merge_size"], values["tokens_per_second"]
    columns: list[tuple[int, int, int]] = []
    position = 0

    def text(count: int) -> None:
        nonlocal position
        columns.extend((position + i,) * 3 for i in range(count))
        position += count

    def grid(t: int, h: int, w: int, step: float) -> None:
        nonlocal position
        rows, cols = h // merge, w // merge
        columns.extend(
            (position + int(frame * step), position + row, position + col)
            for frame in range(t) for row in range(rows) for col in range(cols)
        )
        position += max(rows, cols)

    text(2)
    grid(*IMAGE_GRID, step=1)
    text(1)
    if values["model_type"] == "qwen3_vl":
        grid(1, *VIDEO_GRID[1:], step=1)
        text(1)
        grid(1, *VIDEO_GRID[1:], step=1)
    else:
        grid(*VIDEO_GRID, step=per_second * SECONDS_PER_GRID if per_second else 1)
    text(2)
    return np.array(columns).T


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_get_rope_index_reads_the_merge_size_and_the_seconds(key: str) -> None:
    values = public(key)
    config = transformers_config(key)
    model_class = getattr(model_module(values["model_type"]), CLASSES[values["model_type"]][3])
    # The model's own get_rope_index and get_vision_position_ids, without building the model: they read
    # only self.config and each other.
    model = SimpleNamespace(config=config)
    model.get_vision_position_ids = functools.partial(model_class.get_vision_position_ids, model)
    ids, kinds, grids = rope_index_inputs(key)
    positions, deltas = model_class.get_rope_index(model, ids, mm_token_type_ids=kinds, **grids)
    expected = expected_positions(key)
    np.testing.assert_array_equal(positions[:, 0].numpy(), expected)
    assert int(deltas[0, 0]) == expected.max() + 1 - ids.shape[1]
    # The image's tokens count 2 x 2 patch cells, from position 2: 4 x 6 patches make 2 x 3 positions.
    image = slice(2, 2 + 6)
    assert positions[1, 0, image].tolist() == [2, 2, 2, 3, 3, 3] and positions[2, 0, image].tolist() == [2, 3, 4] * 2
    # The video's frame pairs, from position 6: one apart (Qwen2-VL), tokens_per_second x 1 s apart (Qwen2.5-VL),
    # or one grid each with the timestamp token between (Qwen3-VL).
    video_times = sorted(set(positions[0, 0][kinds[0] == 2].tolist()))
    assert video_times == {"qwen2_vl": [6, 7], "qwen2_5_vl": [6, 8], "qwen3_vl": [6, 9]}[values["model_type"]]


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_rope_from_config_reads_each_presets_sections_and_layout(key: str) -> None:
    """The config reader takes the text positions as plain RoPE and keeps the sections, in the layout the
    model's code uses (blocked for Qwen2-VL and Qwen2.5-VL, interleaved for Qwen3-VL)."""
    rope = pe_core.rope_from_config(load_config(key))
    assert rope.scaling is None and rope.d == 128
    assert (rope.mrope_section, rope.mrope_interleaved) == {
        "qwen2-vl-7b-instruct": ((16, 24, 24), False), "qwen2.5-vl-7b-instruct": ((16, 24, 24), False),
        "qwen3-vl-8b-instruct": ((24, 20, 20), True)}[key]


def test_load_config_gives_fresh_nested_dicts() -> None:
    """transformers writes rope_theta and rope_type into the rope_scaling dict it is given: the preset's file stays."""
    transformers_config("qwen2-vl-7b-instruct")
    assert load_config("qwen2-vl-7b-instruct")["rope_scaling"] == {"type": "mrope", "mrope_section": [16, 24, 24]}
    assert model_configs.MROPE_PRESETS == MROPE_PRESETS
