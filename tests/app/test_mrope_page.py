"""Images and video (M-RoPE) through streamlit.testing: each preset, the sequence's controls at their largest
(byte budgets), hostile URLs for every key, and the numbers its code prints. (tests/app/test_app.py, test_fuzz.py
and test_pages.py hold it to what every page does.)"""

from __future__ import annotations

import pytest
from support.app_runs import MAX_CHART_BYTES, MAX_PAGE_BYTES, PAGE_BY_KEY, element_bytes, open_page
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


def test_moving_the_query_reruns_its_section_and_changes_the_code() -> None:
    at = open_page(MROPE, {"code": "true"})
    at.slider(key="query_row").set_value(0).run()
    assert not at.exception
    assert "query = (0, " in at.get("code")[0].value
