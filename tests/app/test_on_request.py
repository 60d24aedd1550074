"""What a whole run leaves out until it is asked for (every whole run cheap, issue 43):

- the tools a page draws on request (blocks.on_request): Rotary's checker and the config.json inputs of
  M-RoPE, Longer contexts and layer by layer. A run sends the expander and none of the tool's widgets
  until the visitor opens it; opened, the tool is there, and the page's charts are the same either way;
- the page's style sheet and scripts (style.apply), drawn once per process and replayed in every run
  after, yet sent with every run.
"""

from __future__ import annotations

from unittest import mock

import pytest
import streamlit as st
from support.app_runs import PAGE_BY_KEY, assert_page_ran, open_on_request, open_page

from explorer.ui import style

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


def test_the_style_sheet_and_scripts_are_replayed_not_drawn_again() -> None:
    """st.html dedents its 14 KB with regular expressions in every call: two runs in one process call it at
    most once (the first, if no run before drew it), and both send it."""
    with mock.patch.object(st, "html", wraps=st.html) as html:
        runs = [open_page(PAGE_BY_KEY["matrix"]) for _ in range(2)]
    assert html.call_count <= 1
    for at in runs:
        assert [element.proto.body for element in at.get("html")][:1] == [style.PAGE_CHROME]
