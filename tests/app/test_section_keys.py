"""Cold runs do only what changed: a page's cached sections are keyed by what they draw from,
not by all the settings, so that an L move replays the sections that do not depend on L. Here,
for each such section: a second session at another L is served it without building it (a hit),
what it is served is what a session starting from nothing draws at that L (nothing stale), and
a session at another d builds it again (a miss)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from app_runs import open_url
from streamlit.testing.v1 import AppTest

from explorer.topics import relative
from explorer.ui import blocks

#: page -> (its charts drawn by sections that do not depend on L, the builders of those charts)
LENGTH_FREE = {
    "relative": (
        {"relative_transition", "relative_rotation", "relative_shift_play"},
        [(relative, "transition_figure"), (relative, "rotation_figure"), (relative, "shift_play_figure")],
    ),
}


def chart_specs(at: AppTest, keys: set[str]) -> dict[str, dict]:
    """The parsed JSON of the charts of ``keys`` (an element id ends with its key)."""
    specs = {chart.proto.id.rpartition("-")[2]: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}
    assert keys <= set(specs), f"not drawn: {keys - set(specs)}"
    return {key: specs[key] for key in keys}


def opened(page: str, d: int, L: int) -> AppTest:
    at = open_url(page, {"d": str(d), "L": str(L)})
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page", list(LENGTH_FREE))
def test_an_L_move_replays_the_sections_that_do_not_depend_on_L(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    charts, builders = LENGTH_FREE[page]
    built: Counter[str] = Counter()
    for module, name in builders:
        def counted(*args: object, _build=getattr(module, name), _name=name, **kwargs: object) -> object:
            built[_name] += 1
            return _build(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)
    blocks._drawn_once.clear()
    opened(page, 130, 500)
    assert set(built) == {name for _, name in builders}
    first = built.copy()
    moved = opened(page, 130, 700)
    assert built == first, "an L move built again what does not depend on L"
    blocks._drawn_once.clear()
    fresh = opened(page, 130, 700)
    assert chart_specs(moved, charts) == chart_specs(fresh, charts)
    again = built.copy()
    opened(page, 132, 700)
    assert all(built[name] > again[name] for _, name in builders), "another d was served the sections of the first"
