"""Cold runs do only what changed: a page's cached sections are keyed by what they draw from,
not by all the settings, so that an L move replays the sections that do not depend on L. Here,
for each such section: a second session at another L is served it without building it (a hit),
what it is served is what a session starting from nothing draws at that L (nothing stale), and
a session at another d builds it again (a miss)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest
from support.app_runs import open_url, play_open

from explorer.topics import relative, waves
from explorer.ui import blocks

#: page -> (its charts drawn by sections that do not depend on L, the builders of those charts)
LENGTH_FREE = {
    "relative": (
        {"relative_transition", "relative_rotation", "relative_shift_play"},
        [(relative, "transition_figure"), (relative, "rotation_figure"), (relative, "shift_play_figure")],
    ),
    "waves": (
        {"waves_profiles", "waves_profile_play", "waves_columns", "waves_circle", "waves_circle_play"},
        [(waves, "position_profile_figure"), (waves, "profile_play_figure"), (waves, "columns_over_positions_figure"),
         (waves, "unit_circle_figure"), (waves, "unit_circle_play_figure")],
    ),
}


def chart_specs(at: AppTest) -> dict[str, dict]:
    """The parsed JSON of every chart, by key (an element id ends with its key)."""
    return {chart.proto.id.rpartition("-")[2]: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}


def shown(at: AppTest) -> dict[str, object]:
    """What a visitor reads: every chart, text, number and table of the page."""
    return {
        "charts": chart_specs(at),
        "text": [element.value for kind in ("title", "header", "markdown", "caption", "latex", "warning", "info",
                                            "success", "error") for element in at.get(kind)],
        "metrics": [(metric.label, metric.value) for metric in at.metric],
        "tables": [table.value.to_dict("split") for table in at.dataframe],
    }


def opened(page: str, d: int, L: int) -> AppTest:
    """The page at d and L, its Play charts open."""
    at = open_url(page, {"d": str(d), "L": str(L), **play_open(page)})
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page", list(LENGTH_FREE))
def test_an_L_move_replays_the_sections_that_do_not_depend_on_L(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    charts, builders = LENGTH_FREE[page]
    built: Counter[str] = Counter()

    def counting(name: str, build: Callable[..., object]) -> Callable[..., object]:
        def counted(*args: object, **kwargs: object) -> object:
            built[name] += 1
            return build(*args, **kwargs)
        return counted

    for module, name in builders:
        monkeypatch.setattr(module, name, counting(name, getattr(module, name)))
    blocks._drawn_once.clear()
    opened(page, 130, 500)
    assert set(built) == {name for _, name in builders}
    first = built.copy()
    moved = opened(page, 130, 700)
    assert built == first, "an L move built again what does not depend on L"
    assert charts <= set(chart_specs(moved)), "the page did not draw them"
    blocks._drawn_once.clear()
    fresh = opened(page, 130, 700)
    assert shown(moved) == shown(fresh)
    again = built.copy()
    opened(page, 132, 700)
    assert all(built[name] > again[name] for _, name in builders), "another d was served the sections of the first"
