"""A rope method added from outside (tests/support/toy_rope_method.py: one entry in pe_core's registry,
one in the explorer's) on the pages, through streamlit.testing: read from a pasted config.json, listed
and drawn on Longer contexts, chosen and drawn on Rotary, and printed by both pages' snippets."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from support.app_runs import PAGE_BY_KEY, assert_page_ran, open_on_request, open_page
from support.toy_rope_method import toy_config, toy_everywhere
from test_pages import assert_prints_what_the_page_shows

from explorer.rope_methods import MethodEntry
from explorer.topics import contexts

D, BASE = 64, 10000.0


@pytest.fixture
def toy() -> Iterator[MethodEntry]:
    with toy_everywhere() as entry:
        yield entry


def test_the_toy_is_listed_and_drawn_on_longer_contexts(toy: MethodEntry) -> None:
    page = PAGE_BY_KEY["contexts"]
    at = open_page(page, {"code": "true"})
    open_on_request(at, "contexts_config")
    at.text_area(key="contexts_config_text").input(json.dumps(toy_config(D, BASE))).run()
    assert_page_ran(at, page)
    assert at.session_state["method"] == "toy"
    assert toy.label in at.radio(key="method").options
    coverage = contexts.coverage(contexts.view_from_config(toy_config(D, BASE))[0])
    shown = {metric.label: metric.value for metric in at.metric}
    assert shown["toy ×4"] == f"{int(coverage.unseen.sum())} of {D // 2}"
    summary = next(table.value for table in at.dataframe if "method" in table.value.columns)
    assert toy.label in list(summary["method"])
    drawn = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    assert any(trace.get("name") == toy.label and trace["line"]["color"] == toy.colour
               for figure in drawn for trace in figure["data"])
    assert_prints_what_the_page_shows(at)


def test_the_toy_is_listed_and_drawn_on_rotary(toy: MethodEntry) -> None:
    page = PAGE_BY_KEY["rotary"]
    at = open_page(page, {"scaling": "toy", "factor": "4", "d": "64", "L": "300", "code": "true"})
    assert toy.label in at.selectbox(key="scaling").options
    assert at.session_state["scaling"] == "toy" and not at.warning
    said = " ".join(caption.value for caption in at.caption)
    assert "Scaling: toy ×4: the slow half of the pairs divided by 4." in said
    assert_prints_what_the_page_shows(at)
    plain = open_page(page, {"d": "64", "L": "300", "code": "true"})
    assert [m.value for m in at.metric] != [m.value for m in plain.metric], "the toy changes nothing drawn"
