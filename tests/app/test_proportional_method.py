"""Proportional RoPE (Gemma 4's global layers) on the pages, through streamlit.testing: chosen on Rotary from
the URL (its partial_rotary_factor on its slider, clamped with a notice), read from a pasted Gemma 4
config.json on Longer contexts (the whole head as d, its unrotated pairs said), drawn with its colour, and
printed by both pages' snippets."""

from __future__ import annotations

import json

from support.app_runs import PAGE_BY_KEY, assert_page_ran, open_on_request, open_page
from test_pages import assert_prints_what_the_page_shows

import pe_core
from explorer import rope_methods
from explorer.topics import contexts

ROTARY, CONTEXTS = PAGE_BY_KEY["rotary"], PAGE_BY_KEY["contexts"]
ENTRY = rope_methods.method_entry("proportional")
GEMMA4 = {"model_type": "gemma4", "text_config": {
    "model_type": "gemma4_text", "head_dim": 256, "global_head_dim": 512, "max_position_embeddings": 131072,
    "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                           "rope_theta": 1000000.0}}}}


def test_proportional_is_chosen_and_drawn_on_rotary() -> None:
    at = open_page(ROTARY, {"scaling": "proportional", "factor": "1", "partial": "0.25", "d": "512", "n": "1000000",
                            "L": "300", "code": "true"})
    assert_page_ran(at, ROTARY)
    assert ENTRY.label in at.selectbox(key="scaling").options
    assert at.session_state["scaling"] == "proportional" and at.select_slider(key="partial").value == 0.25
    assert not at.warning
    said = " ".join(caption.value for caption in at.caption)
    scaling = pe_core.RopeScaling("proportional", 1.0, partial_rotary_factor=0.25)
    assert f"Scaling: {rope_methods.describe(scaling, 512)}." in said
    assert "pairs 0..63 of the whole head" in said
    assert_prints_what_the_page_shows(at)


def test_a_share_off_the_slider_is_clamped_with_a_notice_on_rotary() -> None:
    at = open_page(ROTARY, {"scaling": "proportional", "partial": "3"})
    assert at.select_slider(key="partial").value == 1.0
    assert [w.value for w in at.warning] == ["URL: partial=`3` is not one of 0.125..1 on the slider's scale; using 1."]
    # A share that rotates no pair of the sidebar's d falls back to no scaling, saying why.
    at = open_page(ROTARY, {"scaling": "proportional", "partial": "0.125", "d": "8"})
    assert_page_ran(at, ROTARY)
    (warning,) = [w.value for w in at.warning]
    assert "rotates int(0.125 * 8 // 2) = 0 pairs of d=8" in warning and "No scaling is applied." in warning


def test_a_pasted_gemma_4_config_is_drawn_as_proportional_on_longer_contexts() -> None:
    at = open_page(CONTEXTS, {"code": "true"})
    open_on_request(at, "contexts_config")
    at.text_area(key="contexts_config_text").input(json.dumps(GEMMA4)).run()
    assert_page_ran(at, CONTEXTS)
    assert at.session_state["method"] == "proportional" and at.session_state["d"] == 512
    assert at.session_state["partial"] == 0.25
    view = contexts.view_from_config(GEMMA4)[0]
    shown = {metric.label: metric.value for metric in at.metric}
    assert shown["proportional ×1"] == f"{int(contexts.coverage(view).unseen.sum())} of 256"
    summary = next(table.value for table in at.dataframe if "method" in table.value.columns)
    assert ENTRY.label in list(summary["method"])
    drawn = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    assert any(trace.get("name") == ENTRY.label and trace["line"]["color"] == ENTRY.colour
               for figure in drawn for trace in figure["data"])
    said = " ".join(caption.value for caption in at.caption)
    assert "The last 192 pairs turn 0 times with proportional ×1 (left unrotated)" in said
    assert "proportional (Gemma 4) leaves 192 pairs unrotated" in said
    assert_prints_what_the_page_shows(at)


def test_a_share_beyond_1_is_clamped_with_a_notice_on_longer_contexts() -> None:
    at = open_page(CONTEXTS, {"method": "proportional", "partial": "5", "parameters": "true"})
    assert_page_ran(at, CONTEXTS)
    assert at.number_input(key="partial").value == 1.0
    assert "URL: partial=`5` is outside 0.001..1; using 1." in [w.value for w in at.warning]
