"""Your model, layer by layer through streamlit.testing: every preset, a config.json pasted and uploaded in both
transformers spellings, hostile pastes and URLs, the largest target, and the links from Rotary and Longer
contexts that name a config's layer types. (tests/app/test_app.py, test_fuzz.py and test_pages.py hold it to
what every page does.)"""

from __future__ import annotations

import json

import pytest
from support.app_runs import (
    MAX_CHART_BYTES,
    MAX_PAGE_BYTES,
    PAGE_BY_KEY,
    assert_page_ran,
    element_bytes,
    open_on_request,
    open_page,
)
from test_pages import assert_prints_what_the_page_shows

from explorer.layer_types import CARRIED_CONFIG
from explorer.model_configs import LAYER_PRESETS, load_config, model_config
from explorer.topics import layers

LAYERS = PAGE_BY_KEY["layers"]
PASTE, UPLOAD = "layers_config_text", "layers_config_file"
#: The expander that holds both (config_inputs.draw, drawn on request).
INPUTS = "layers_config"
GEMMA3_V5 = {
    "model_type": "gemma3_text", "num_hidden_layers": 12, "head_dim": 16, "sliding_window": 8,
    "max_position_embeddings": 64,
    "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
}


def metric(at, label: str) -> str:
    (value,) = [m.value for m in at.metric if m.label == label]
    return value


def table_rows(at) -> dict[str, list]:
    (table,) = at.dataframe
    return {row[0]: list(row[1:]) for row in table.value.itertuples(index=False)}


@pytest.mark.parametrize("key", LAYER_PRESETS)
def test_each_preset_shows_its_layers_and_its_code_prints_them(key: str) -> None:
    at = open_page(LAYERS, {"layer_model": key, "code": "true"})
    stack = layers.preset_stack(key)
    assert metric(at, "decoder layers") == str(len(stack.layers))
    assert metric(at, "layers with RoPE") == str(sum(layer.rotary for layer in stack.layers))
    assert set(table_rows(at)) == {kind.name for kind in stack.kinds}
    assert any(model_config(key).url in text.value for text in at.markdown)
    assert not at.error and not at.warning
    assert_prints_what_the_page_shows(at)


def test_a_pasted_config_in_transformers_5_spelling_shows_both_layer_types() -> None:
    at = open_page(LAYERS)
    open_on_request(at, INPUTS)
    at.text_area(key=PASTE).input(json.dumps(GEMMA3_V5)).run()
    assert_page_ran(at, LAYERS)
    assert "12 layers (10 sliding window, 2 full attention)" in at.success[0].value.replace("\\", "")
    rows = table_rows(at)
    assert rows["sliding window"][:2] == ["10 (0-4, 6-10)", "10000"]
    assert rows["full attention"][:3] == ["2 (5, 11)", "1000000", "linear ×8"]
    assert at.session_state["layer_model"] == layers.CUSTOM_MODEL and at.query_params["layer_model"] == "custom"


def test_an_uploaded_config_is_read_like_a_pasted_one() -> None:
    at = open_page(LAYERS)
    open_on_request(at, INPUTS)
    at.file_uploader(key=UPLOAD).upload("config.json", json.dumps(load_config("gpt-oss-20b")).encode()).run()
    assert_page_ran(at, LAYERS)
    assert "config.json" in at.success[0].value.replace("\\", "") and metric(at, "decoder layers") == "24"


@pytest.mark.parametrize("text, says", [
    (json.dumps(GEMMA3_V5 | {"num_hidden_layers": 10**9}), "num_hidden_layers"),
    (json.dumps(GEMMA3_V5 | {"head_dim": "sixteen"}), "head_dim"),
    (json.dumps(GEMMA3_V5).replace('"head_dim": 16', '"head_dim": NaN'), "head_dim"),
    ("[" * 5000 + "]" * 5000, "nests too deeply"),
    (json.dumps(GEMMA3_V5 | {"sliding_window": -3}), "sliding_window"),
    (json.dumps(GEMMA3_V5 | {"layer_types": ["<b>x</b>"] * 12}), "layer_types"),
    ('{"model_type": "gemma3_text"}', "num_hidden_layers"),
    ("x" * (2 * 1024 * 1024), "at most 1 MB"),
])
def test_a_hostile_paste_gets_one_line_and_the_page_goes_on(text: str, says: str) -> None:
    at = open_page(LAYERS)
    open_on_request(at, INPUTS)
    at.text_area(key=PASTE).input(text).run()
    assert_page_ran(at, LAYERS)
    (error,) = at.error
    assert says in error.value.replace("\\", "") and "\n" not in error.value
    assert "<b>" not in error.value  # quoted text is escaped, never markup
    assert metric(at, "decoder layers") == "34"  # the default model, still shown


def test_custom_in_a_link_without_a_config_shows_the_default_and_says_so() -> None:
    at = open_page(LAYERS, {"layer_model": "custom"})
    assert at.session_state["layer_model"] == "gemma-3-4b-it"
    assert any("No config of yours" in caption.value for caption in at.caption)


@pytest.mark.parametrize("query, notice", [
    ({"layer_model": "[x](//ev.il)"}, "layer_model"),
    ({"layer_target": "0"}, None),
    ({"layer_target": "1e400"}, None),
    ({"layer_target": "-5"}, None),
])
def test_hostile_urls_get_a_notice_and_a_clamped_view(query: dict, notice: str | None) -> None:
    at = open_page(LAYERS, query)
    assert at.session_state["layer_model"] in LAYER_PRESETS
    assert 1 <= int(at.session_state["layer_target"]) <= layers.TARGET_MAX
    if notice:
        assert any(notice in warning.value for warning in at.warning)


@pytest.mark.parametrize("key", LAYER_PRESETS)
def test_the_largest_target_stays_within_the_byte_budgets(key: str) -> None:
    at = open_page(LAYERS, {"layer_model": key, "layer_target": str(layers.TARGET_MAX)})
    assert element_bytes(at) <= MAX_PAGE_BYTES
    for chart in at.get("plotly_chart"):
        assert len(chart.proto.spec) <= MAX_CHART_BYTES


# ------------------------------------------------------------------------- Rotary and Longer contexts


def test_longer_contexts_names_a_pasted_configs_layer_types_and_carries_it_here() -> None:
    at = open_page(PAGE_BY_KEY["contexts"])
    open_on_request(at, "contexts_config")
    at.text_area(key="contexts_config_text").input(json.dumps(GEMMA3_V5)).run()
    assert_page_ran(at, PAGE_BY_KEY["contexts"])
    (note,) = [info.value for info in at.info if "layer types" in info.value]
    assert "10 sliding_attention (base 10000, no scaling)" in note and "full_attention layers" in note
    (link,) = [link for link in at.get("page_link") if "layer by layer" in link.proto.label]
    assert "layer_model=custom" in link.proto.page or link.proto.query_string == "layer_model=custom"
    assert at.session_state[CARRIED_CONFIG] == GEMMA3_V5
    at.query_params.clear()
    at.query_params["layer_model"] = "custom"
    at.switch_page(LAYERS.path).run()
    assert_page_ran(at, LAYERS)
    assert metric(at, "decoder layers") == "12" and "the config of the page before" in at.success[0].value


@pytest.mark.parametrize("url_path", ["rotary", "contexts"])
def test_the_rotary_pages_name_the_layer_type_of_a_preset_with_several(url_path: str) -> None:
    at = open_page(PAGE_BY_KEY[url_path], {"model": "gemma-3-4b-it"})
    (note,) = [info.value for info in at.info if "layer types" in info.value]
    assert "29 sliding_attention (base 10000, no scaling)" in note and "the RoPE of its full_attention layers" in note
    at = open_page(PAGE_BY_KEY[url_path], {"model": "llama-3.1-8b"})
    assert not [info for info in at.info if "layer types" in info.value]


def test_an_uploaded_files_name_reaches_no_chart() -> None:
    """Plotly renders a subset of HTML in its titles: a file name, text a visitor chose, stays in the escaped
    message line alone."""
    at = open_page(LAYERS)
    open_on_request(at, INPUTS)
    name = '<a href="javascript:alert(1)">x</a>.json'
    at.file_uploader(key=UPLOAD).upload(name, json.dumps(GEMMA3_V5).encode()).run()
    assert_page_ran(at, LAYERS)
    assert "javascript" not in "".join(chart.proto.spec for chart in at.get("plotly_chart"))
    assert metric(at, "decoder layers") == "12"
