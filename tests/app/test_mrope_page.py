"""Images and video (M-RoPE) through streamlit.testing: each preset, the sequence's controls at their largest
(byte budgets), hostile URLs for every key, and the numbers its code prints. (tests/app/test_app.py, test_fuzz.py
and test_pages.py hold it to what every page does.)"""

from __future__ import annotations

import json

import pytest
from support.app_runs import MAX_CHART_BYTES, MAX_PAGE_BYTES, PAGE_BY_KEY, element_bytes, open_on_request, open_page
from test_pages import assert_prints_what_the_page_shows

from explorer.model_configs import MROPE_PRESETS, model_config
from explorer.topics import mrope

MROPE = PAGE_BY_KEY["mrope"]
KEYS = ("vl_model", "text_before", "text_between", "text_after", "image_rows", "image_cols", "video_frames",
        "video_rows", "video_cols", "video_seconds", "query_row", "query_col")
LARGEST = {"text_before": mrope.TEXT_MAX, "text_between": mrope.TEXT_MAX, "text_after": mrope.TEXT_MAX,
           "image_rows": mrope.SIDE_MAX, "image_cols": mrope.SIDE_MAX, "video_frames": mrope.FRAMES_MAX,
           "video_rows": mrope.SIDE_MAX, "video_cols": mrope.SIDE_MAX, "video_seconds": 8.0}


def metric(at, label: str) -> str:
    (value,) = [m.value for m in at.metric if m.label == label]
    return value


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_each_preset_shows_its_sections_and_its_code_prints_its_numbers(key: str) -> None:
    at = open_page(MROPE, {"vl_model": key, "code": "true"})
    view = mrope.preset_view(key)
    said = " ".join(text.value for text in at.markdown)
    assert f"sections {list(view.sections)} {mrope.layout_name(view.interleaved)}" in said
    assert model_config(key).url in said
    assert metric(at, "text tokens' |score − misread|") in ("0", "-0") or float(
        metric(at, "text tokens' |score − misread|")) < 1e-9
    assert float(metric(at, "largest |score − misread| on the image")) > 1
    assert not at.warning and not at.error
    assert_prints_what_the_page_shows(at)


def test_the_largest_sequence_stays_within_the_byte_budgets_and_prints_its_numbers() -> None:
    at = open_page(MROPE, {**{key: str(value) for key, value in LARGEST.items()}, "code": "true",
                           "query_row": "63", "query_col": "63"})
    assert element_bytes(at) <= MAX_PAGE_BYTES
    for chart in at.get("plotly_chart"):
        assert len(chart.proto.spec) <= MAX_CHART_BYTES
    tokens = 3 * mrope.TEXT_MAX + mrope.SIDE_MAX**2 * (1 + mrope.FRAMES_MAX)
    assert metric(at, "tokens") == f"{tokens:,}"
    assert_prints_what_the_page_shows(at)


@pytest.mark.parametrize("value", ["abc", "nan", "-5", "1e30", "9" * 500, "", "<b>x</b>", "[x](javascript:1)"])
def test_every_key_clamps_a_hostile_value_with_a_notice(value: str) -> None:
    at = open_page(MROPE, dict.fromkeys(KEYS, value))
    warnings = [w.value for w in at.warning]
    for key in KEYS:
        notices = [w for w in warnings if f"{key}=" in w or f"{key} " in w]
        assert notices, f"no notice for {key}={value[:20]!r}: {warnings}"
        assert all("\n" not in notice and len(notice) <= 400 for notice in notices)
    assert at.session_state["vl_model"] in MROPE_PRESETS
    assert 1 <= at.session_state["image_rows"] <= mrope.SIDE_MAX


AROUND = ("text_before", "text_between", "text_after", "video_frames", "video_rows", "video_cols", "video_seconds")


def tokens_of(values: dict[str, float]) -> int:
    """The sequence's length, counted here from its parts (text runs, the image's and the video's grids)."""
    return int(values["text_before"] + values["image_rows"] * values["image_cols"] + values["text_between"]
               + values["video_frames"] * values["video_rows"] * values["video_cols"] + values["text_after"])


DEFAULTS = {"text_before": 6, "image_rows": 8, "image_cols": 12, "text_between": 4, "video_frames": 4,
            "video_rows": 4, "video_cols": 6, "text_after": 3}


def test_the_text_and_video_sliders_wait_closed_yet_a_link_s_values_shape_the_sequence_and_stay_in_it() -> None:
    asked = {"text_before": "20", "video_frames": "9", "video_cols": "3", "video_seconds": "2"}
    at = open_page(MROPE, asked)
    drawn = {slider.key for slider in at.slider} | {slider.key for slider in at.select_slider}
    assert not drawn & set(AROUND), drawn & set(AROUND)
    assert {"image_rows", "image_cols"} <= drawn
    assert metric(at, "tokens") == f"{tokens_of({**DEFAULTS, **{k: float(v) for k, v in asked.items()}}):,}"
    assert "20 text tokens, the image (8 × 12 tokens)" in " ".join(caption.value for caption in at.caption)
    assert {key: at.query_params[key] for key in asked} == asked
    assert "sequence" not in at.query_params


def test_sequence_true_opens_them_and_a_moved_slider_keeps_its_value_once_closed() -> None:
    at = open_page(MROPE, {"sequence": "true", "text_between": "7"})
    assert {slider.key for slider in at.slider} >= {"text_before", "text_between", "video_frames"}
    assert at.slider(key="text_between").value == 7 and at.select_slider(key="video_seconds").value == 1.0
    assert at.query_params["sequence"] == "true"
    at.slider(key="video_rows").set_value(10).run()
    at.select_slider(key="video_seconds").set_value(4.0).run()
    at.session_state["sequence"] = False
    at.run()
    at.run()  # Streamlit forgets an undrawn widget's value as the run that left it out ends, unless kept
    assert not {"video_rows", "video_seconds"} & {slider.key for slider in [*at.slider, *at.select_slider]}
    assert metric(at, "tokens") == f"{tokens_of({**DEFAULTS, 'text_between': 7, 'video_rows': 10}):,}"
    assert "4 s each" in " ".join(caption.value for caption in at.caption)
    assert at.query_params["video_rows"] == "10" and at.query_params["video_seconds"] == "4"
    assert "sequence" not in at.query_params


def test_moving_the_query_reruns_its_section_and_changes_the_code() -> None:
    at = open_page(MROPE, {"code": "true"})
    at.slider(key="query_row").set_value(0).run()
    assert not at.exception
    assert "query = (0, " in at.get("code")[0].value


CUSTOM = {"model_type": "qwen2_5_vl", "hidden_size": 1024, "num_attention_heads": 16, "rope_theta": 10000.0,
          "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]},
          "vision_config": {"spatial_merge_size": 2, "tokens_per_second": 4}}


def test_a_pasted_config_of_ones_own_is_read_and_its_code_prints_its_numbers() -> None:
    at = open_page(MROPE, {"code": "true"})
    open_on_request(at, "mrope_config")
    at.text_area(key="mrope_config_text").input(json.dumps(CUSTOM)).run()
    assert not at.exception and not at.error
    assert "sections [8, 12, 12] blocked" in at.success[0].value.replace("\\", "")
    assert at.session_state["vl_model"] == mrope.CUSTOM_MODEL
    assert "tokens_per_second 4" in " ".join(text.value for text in at.markdown)
    assert "d, base = 64, 10000.0" in at.get("code")[0].value
    assert_prints_what_the_page_shows(at)


@pytest.mark.parametrize("config, says", [
    ({"rope_theta": 1e6, "head_dim": 128}, "no mrope_section"),
    ({**CUSTOM, "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 13]}}, "mrope_section"),
    ({**CUSTOM, "vision_config": {"spatial_merge_size": "two"}}, "spatial_merge_size"),
    ({**CUSTOM, "vision_config": {"tokens_per_second": -1}}, "tokens_per_second"),
])
def test_a_config_without_usable_sections_gets_one_line_and_the_page_goes_on(config: dict, says: str) -> None:
    at = open_page(MROPE)
    open_on_request(at, "mrope_config")
    at.text_area(key="mrope_config_text").input(json.dumps(config)).run()
    assert not at.exception
    (error,) = at.error
    assert says in error.value.replace("\\", "") and "\n" not in error.value
    assert at.session_state["vl_model"] == mrope.DEFAULT_MODEL


def test_custom_in_a_link_without_a_config_shows_the_default_and_says_so() -> None:
    at = open_page(MROPE, {"vl_model": "custom"})
    assert at.session_state["vl_model"] == mrope.DEFAULT_MODEL
    assert any("No config of yours" in caption.value for caption in at.caption)
