"""What a whole run leaves out until it is asked for (every whole run cheap, issue 43):

- the tools a page draws on request (blocks.on_request): Rotary's checker and the config.json inputs of
  M-RoPE, Longer contexts and layer by layer. A run sends the expander and none of the tool's widgets
  until the visitor opens it; opened, the tool is there, and the page's charts are the same either way;
- the Play charts that animate a chart drawn above them (blocks.play_on_request): closed, neither the chart
  nor its downloads are sent; opened by a click, they are, the URL keeps it open, and a link with it open
  draws the same chart;
- the page's style sheet and scripts (style.apply), drawn once per process and replayed in every run
  after, yet sent with every run.
"""

from __future__ import annotations

from unittest import mock

import pytest
import streamlit as st
from support.app_runs import PAGE_BY_KEY, PLAY_KEYS, assert_page_ran, open_on_request, open_page, play_open

from explorer import url_keys
from explorer.ui import blocks, controls, style

#: Each page's tool drawn on request: its expander's key and label, and the widgets it holds.
TOOLS = {
    "rotary": ("rotary_checker", "Upload what your model holds", {"rotary_upload"}),
    "mrope": ("mrope_config", "Your own config.json: paste or upload it", {"mrope_config_text", "mrope_config_file"}),
    "contexts": ("contexts_config", "Your own config.json: paste or upload it",
                 {"contexts_config_text", "contexts_config_file"}),
    "layers": ("layers_config", "Your own config.json: paste or upload it",
               {"layers_config_text", "layers_config_file"}),
}


def input_keys(at) -> set[str]:
    return {widget.key for kind in ("file_uploader", "text_area") for widget in at.get(kind)}


@pytest.mark.parametrize("page", TOOLS)
def test_a_tool_is_sent_only_once_the_visitor_opens_it(page: str) -> None:
    key, label, widgets = TOOLS[page]
    at = open_page(PAGE_BY_KEY[page])
    assert label in [expander.label for expander in at.expander]
    assert not input_keys(at) & widgets, "a closed tool's widgets were sent"
    charts = [chart.proto.spec for chart in at.get("plotly_chart")]
    open_on_request(at, key)
    assert_page_ran(at, PAGE_BY_KEY[page])
    assert widgets <= input_keys(at), "the opened tool is not there"
    assert [chart.proto.spec for chart in at.get("plotly_chart")] == charts


#: Each Play chart drawn on request: its page, its expander's URL key and label, and the chart's key (its downloads'
#: too). The charts whose only form is animated (Longer contexts' and layer by layer's turns, M-RoPE's query,
#: Relative's pair) stay on the page.
PLAYS = [
    ("waves", "play", "Play: sin(k·ω_x) as k grows", "waves_profile_play"),
    ("waves", "circle_play", "Play: the pair going round", "waves_circle_play"),
    ("similarity", "play", "Play: P[k]·P[r] as r moves", "similarity_reference_play"),
    ("relative", "play", "Play: P @ M(δ) as δ grows", "relative_shift_play"),
    ("rotary", "play", "Play: the pair of q turning", "rotary_pair_play"),
    ("attention", "play", "Play: the weights as the query moves", "attention_play"),
]


def chart_specs(at) -> list[tuple[str, str]]:
    """Each chart's key (an element id ends with it) and its JSON, in page order."""
    return [(chart.proto.id.rpartition("-")[2], chart.proto.spec) for chart in at.get("plotly_chart")]


def chart_keys(at) -> list[str]:
    return [key for key, _ in chart_specs(at)]


def download_keys(at) -> set[str]:
    return {button.key.rsplit("_", 1)[0] for button in at.get("download_button")}


def test_every_play_key_is_a_page_s_and_every_play_chart_is_listed() -> None:
    """The registry of URL keys holds each expander's key on its page, and no page has a Play key not tested here."""
    assert {(page, key) for page, key, _, _ in PLAYS} == {
        (page, key) for page, keys in url_keys.PAGE_KEYS.items() for key in keys & PLAY_KEYS
    }


@pytest.mark.parametrize(("page", "key", "label", "chart"), PLAYS, ids=[chart for *_, chart in PLAYS])
def test_a_play_chart_is_sent_only_once_the_visitor_opens_it(page: str, key: str, label: str, chart: str) -> None:
    at = open_page(PAGE_BY_KEY[page])
    at.sidebar.toggle(key=controls.OFFER_DOWNLOADS).set_value(True).run()
    assert label in [expander.label for expander in at.expander]
    others = chart_specs(at)
    assert chart not in chart_keys(at) and chart not in download_keys(at), "a closed Play was sent"

    open_on_request(at, key)
    assert_page_ran(at, PAGE_BY_KEY[page])
    assert chart in chart_keys(at) and chart in download_keys(at), "the opened Play is not there"
    opened = chart_specs(at)
    assert [item for item in opened if item[0] != chart] == others, "opening Play changed the page's other charts"
    assert at.query_params.get(key) == "true", "the URL does not keep Play open"
    clicked = [item for item in opened if item[0] == chart]

    linked = open_page(PAGE_BY_KEY[page], {key: "true"})
    linked_play = [item for item in chart_specs(linked) if item[0] == chart]
    assert linked_play == clicked, "a link with Play open draws another chart"

    at.session_state[key] = False  # a click that closes it
    at.run()
    assert chart not in chart_keys(at) and key not in at.query_params, "closed again, Play stays"


def test_play_opened_on_one_page_is_open_on_the_next() -> None:
    """As the code toggle: a visitor who asked for the animations finds those of the page opened next open too."""
    at = open_page(PAGE_BY_KEY["similarity"], play_open("similarity"))
    assert "similarity_reference_play" in chart_keys(at)
    at.switch_page("pages/attention_page.py").run()
    assert_page_ran(at, PAGE_BY_KEY["attention"])
    assert "attention_play" in chart_keys(at) and at.session_state[blocks.PLAY_KEY]


def test_the_style_sheet_and_scripts_are_replayed_not_drawn_again() -> None:
    """st.html dedents its 14 KB with regular expressions in every call: two runs in one process call it at
    most once (the first, if no run before drew it), and both send it."""
    with mock.patch.object(st, "html", wraps=st.html) as html:
        runs = [open_page(PAGE_BY_KEY["matrix"]) for _ in range(2)]
    assert html.call_count <= 1
    for at in runs:
        assert [element.proto.body for element in at.get("html")][:1] == [style.PAGE_CHROME]
