"""Encoding matrix, the page as drawn (its numbers are compared with its snippet's in
tests/topics/test_reproduce.py): the angle map's axis names what its columns are, and its
caption speaks of circular means only when something is averaged."""

from __future__ import annotations

import json

import pytest
from support.app_runs import MATRIX, open_page

CIRCULAR_MEANS = "Blocks of angles are circular means"


def angle_map(query: dict[str, str]) -> tuple[dict, list[str]]:
    """The angle map's layout and the page's captions."""
    at = open_page(MATRIX, {"view": "angles", **query})
    layouts = [json.loads(chart.proto.spec)["layout"] for chart in at.get("plotly_chart")]
    (layout,) = [layout for layout in layouts if "Angle k·ω_i" in layout.get("title", {}).get("text", "")]
    return layout, [caption.value for caption in at.caption]


@pytest.mark.parametrize(("query", "averaged"), [
    ({}, False),  # seed 004's size: every angle drawn as it is
    ({"L": "3000", "d": "512"}, True),  # block means of positions and of pairs
    ({"L": "3000", "d": "512", "rows": "window", "transpose": "true"}, True),  # single positions, runs of pairs
    ({"L": "3000", "d": "64", "rows": "window"}, False),  # single positions, every pair
])
def test_the_angle_maps_columns_are_pairs_and_its_means_are_said_only_when_taken(
    query: dict[str, str], averaged: bool
) -> None:
    layout, captions = angle_map(query)
    pairs_axis = "yaxis" if query.get("transpose") else "xaxis"
    assert layout[pairs_axis]["title"]["text"] == "pair i"
    assert any(CIRCULAR_MEANS in caption for caption in captions) == averaged
