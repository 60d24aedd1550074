"""The whole app through streamlit.testing: every page, at defaults, at the largest
settings, with every seed preset, with hostile URLs, and moving between pages.

Pages are discovered from app.py (the st.Page calls), so a page added there is covered
here without editing this file. Each test opens the app the way a visitor's URL does:
a fresh session, on the page's path, with the query string set before the first run.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash
from support.app_runs import (
    HOME,
    MATRIX,
    MAX_CHART_BYTES,
    MAX_PAGE_BYTES,
    PAGE_BY_KEY,
    PAGES,
    ROOT,
    SIDEBAR_KEYS,
    assert_page_ran,
    element_bytes,
    move_shared,
    open_on_request,
    open_page,
    open_url,
    page_id,
    play_open,
)
from support.engineer_files import npy
from support.independent import encoding

from explorer import criteria, page_list
from explorer import settings as s
from explorer.page_list import PageInfo, address_path
from explorer.presets import CUSTOM, PRESETS
from explorer.topics import home
from explorer.ui import navigation


def sidebar_values(at: AppTest) -> dict[str, object]:
    return {key: at.sidebar.get_by_key(key).value for key in SIDEBAR_KEYS}


def expected_sidebar(settings: s.Settings, preset: str = CUSTOM) -> dict[str, object]:
    return {
        "d": settings.d, "n": settings.n, "L": settings.L, "layout": settings.layout,
        "convention": settings.convention, "preset": preset,
    }


def url_notices(at: AppTest) -> list[str]:
    """The one-line notices about the URL's values (a page's own warnings are not counted)."""
    return [w.value for w in at.warning if w.value.startswith("URL")]


def page_controls(at: AppTest, names: object) -> dict[str, object]:
    return {name: at.session_state.get(name, "(not drawn)") for name in names}


def warnings_naming(at: AppTest, key: str) -> list[str]:
    pattern = re.compile(rf"(?<![\w/]){re.escape(key)}(?![\w])")
    return [w.value for w in at.warning if pattern.search(w.value)]


# --- the pages exist and Home maps them -------------------------------------------------


def test_every_page_file_is_in_the_navigation() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py") if p.name != "__init__.py"}
    assert files == {page.path for page in page_list.ALL_PAGES}


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_no_page_file_is_named_as_its_url_path(page: PageInfo) -> None:
    # A deep link /<name> to a file pages/<name>.py would run that file without app.py (see app.py).
    assert Path(page.path).stem != page.url_path
    assert page.path == f"pages/{page.url_path}_page.py"


@pytest.mark.parametrize("page", [p for p in PAGES if p is not HOME], ids=page_id)
def test_every_chart_keeps_its_tick_labels_and_streamlits_theme(page: PageInfo) -> None:
    """Every chart a page draws takes Streamlit's Plotly template (its colour placeholders,
    which the browser fills with the theme's colours) and, over it, figures.TEMPLATE: no axis
    or colour bar hides tick labels by measuring them ("hide past div", quadratic in labels)."""
    at = open_page(page)
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    assert specs, f"{page.title} drew no chart"
    for spec in specs:
        template = spec["layout"]["template"]
        assert template["layout"]["colorway"][0] == "#000001"  # Streamlit's placeholder
        for axis in ("xaxis", "yaxis"):
            assert template["layout"][axis]["ticklabeloverflow"] == "allow"
        assert template["data"]["heatmap"][-1]["colorbar"]["ticklabeloverflow"] == "allow"


def test_home_links_every_page_with_its_title_and_icon() -> None:
    at = open_page(HOME)
    links = {(link.proto.page, link.proto.label, link.proto.icon) for link in at.get("page_link")}
    expected = {(page.url_path, page.title, page.icon) for page in PAGES if page is not HOME}
    assert expected <= links


def test_home_summary_matches_the_criteria_module() -> None:
    at = open_page(HOME)
    measured = home.evaluate(s.Settings())
    assert len(at.metric) == len(measured)
    for metric, m in zip(at.metric, measured, strict=True):
        assert metric.label.startswith(m.title)
        assert float(metric.value) == pytest.approx(m.value, rel=1e-5, abs=1e-300)
    summary = "4 of 4 criteria pass for the current settings (L=100, d=128, n=10000, interleaved, paper)."
    assert [x.value for x in at.success] == [summary]


def test_home_does_not_count_a_criterion_it_cannot_measure_as_a_pass() -> None:
    """At L=1 there is no pair of positions to tell apart: "Unique per position" is n/a, neither
    passed nor failed, and the summary counts the measurable criteria alone."""
    at = open_page(HOME, {"L": "1"})
    assert [x.value for x in at.success] == [
        "3 of 3 measurable criteria pass for the current settings (L=1, d=128, n=10000, interleaved, paper); "
        "not measurable here: Unique per position."
    ]
    verdicts = [m.value.split(" · ")[0] for m in at.markdown if " · " in m.value]
    assert at.metric[0].value == "n/a" and len(verdicts) == 4
    assert "not measured" in verdicts[0] and all("pass]" in verdict for verdict in verdicts[1:]), verdicts


def test_home_criteria_follow_the_sidebar() -> None:
    at = open_page(HOME)
    move_shared(at, "slider", "d", 2).run()
    move_shared(at, "slider", "L", s.L_MAX)
    unique = at.metric[0]
    # d=2: one pair at w=1; offsets 710 apart come back within 6.03e-05 of each other.
    assert float(unique.value) == pytest.approx(criteria.unique(s.L_MAX, 2, s.N_DEFAULT).value, rel=1e-5)
    assert float(unique.value) < 1e-4


def test_the_page_list_is_built_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """st.Page resolves its file on the disk: built in the first run only, copied after."""
    built: list[str] = []
    real_page = navigation.st.Page

    def counting_page(path: str, **kwargs: object):
        built.append(path)
        return real_page(path, **kwargs)

    monkeypatch.setattr(navigation.st, "Page", counting_page)
    monkeypatch.setattr(navigation, "_BUILT", {})
    monkeypatch.setattr(navigation, "_ALIAS_PAGES", [])
    first = open_page(MATRIX)
    assert sorted(path for path in built if isinstance(path, str)) == sorted(page.path for page in page_list.ALL_PAGES)
    second = open_page(PAGE_BY_KEY["waves"])
    first.sidebar.slider(key="L").set_value(50).run()
    assert_page_ran(first, MATRIX)
    assert_page_ran(second, PAGE_BY_KEY["waves"])
    assert len(built) == len(page_list.ALL_PAGES) + len(navigation.ALIASES), "a later run built the pages again"
    # Each run gets pages of its own: st.navigation marks the one it returns as runnable.
    copies, again = navigation.pages(), navigation.pages()
    assert all(copies[key] is not again[key] and copies[key].url_path == again[key].url_path for key in copies)


@pytest.mark.parametrize("alias", list(navigation.ALIASES))
def test_an_alias_lands_on_its_page_with_the_settings_of_its_url(alias: str) -> None:
    """/home (an old link, or typed): Home, which is served at "/", with the URL's settings."""
    at = open_url(alias, {"d": "64", "L": "300"})
    assert_page_ran(at, PAGE_BY_KEY[navigation.ALIASES[alias]])
    assert sidebar_values(at) == {**expected_sidebar(s.Settings()), "d": 64, "L": 300}
    assert at.query_params == {"d": "64", "L": "300"}


# --- (1) every page at the defaults, (2) at the largest settings --------------------------


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_page_runs_at_defaults(page: PageInfo) -> None:
    at = open_page(page)
    assert sidebar_values(at) == expected_sidebar(s.Settings())
    assert not url_notices(at), "a notice without a bad URL"
    assert at.query_params == {}, "the defaults stay out of the URL"


@pytest.mark.parametrize("n", ["100000000", "2"])
@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_page_at_largest_settings_stays_in_budget(page: PageInfo, n: str) -> None:
    at = open_page(page, {"d": str(s.D_MAX), "L": str(s.L_MAX), "n": n, **play_open(address_path(page))})
    largest = s.Settings(d=s.D_MAX, L=s.L_MAX, n=float(n))
    assert sidebar_values(at) == expected_sidebar(largest)
    sizes = [len(chart.proto.spec.encode()) for chart in at.get("plotly_chart")]
    assert all(size <= MAX_CHART_BYTES for size in sizes), f"chart JSON sizes {sizes}"
    total = element_bytes(at)
    assert total <= MAX_PAGE_BYTES, f"page sends {total:,} bytes (charts {sizes})"


# --- (3) every preset ---------------------------------------------------------------------


def drawn_matrix(spec: str) -> np.ndarray:
    """The matrix a heatmap's figure JSON carries (Plotly sends it as base64 typed array)."""
    z = json.loads(spec)["data"][0]["z"]
    shape = tuple(int(n) for n in z["shape"].split(","))
    return np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"])).reshape(shape)


#: Seed figures drawn as heatmaps: (preset, extra URL keys, chart key, the seed's matrix as
#: drawn: positions down unless the seed draws it transposed).
SEED_HEATMAPS = [
    ("seed000-matrix", {}, "matrix_heatmap", encoding(4, 4, 100.0)),
    ("seed001-notebook", {}, "matrix_heatmap", encoding(50, 512, layout="concatenated", convention="tensor2tensor")),
    ("seed001-notebook", {"view": "angles"}, "matrix_angles",
     np.degrees(np.arange(50)[:, None] * (1e-4 ** np.linspace(0, 1, 256)))[None] % 360.0),
    ("seed001-shift", {}, "relative_direct",
     encoding(50, 512, layout="concatenated", convention="tensor2tensor", start=-10)),
    ("seed003-matrix", {}, "matrix_heatmap", encoding(100, 512, 1e6).T),
    ("seed003-binary", {}, "binary_sinusoid", encoding(100, 512, 1e6).T),
    ("seed003-binary", {}, "binary_codes",
     ((np.arange(100)[:, None] >> np.arange(10)) & 1).T.astype(float)),
    ("seed004-heatmap", {}, "matrix_heatmap", encoding(50, 128)),
]


@pytest.mark.parametrize(("key", "extra", "chart", "expected"), SEED_HEATMAPS,
                         ids=[f"{key}-{chart}" for key, _, chart, _ in SEED_HEATMAPS])
def test_seed_heatmaps_carry_their_full_matrix(key: str, extra: dict, chart: str, expected: np.ndarray) -> None:
    """Every seed figure is drawn at its full resolution: the figure JSON holds the seed's whole
    matrix, cell for cell (as float32), not block averages."""
    preset = PRESETS[key]
    at = open_page(PAGE_BY_KEY[preset.page], {"preset": key, **extra})
    (spec,) = [c.proto.spec for c in at.get("plotly_chart") if chart in c.proto.id]
    assert "mean of" not in spec  # no row or column of the figure stands for a block
    expected = np.squeeze(expected)
    got = drawn_matrix(spec)
    assert got.shape == expected.shape
    tolerance = 360.0 * 4e-7 if "angles" in chart else 1e-6  # float32, and degrees near 360 wrap
    difference = np.abs(got - expected)
    if "angles" in chart:
        difference = np.minimum(difference, 360.0 - difference)
    assert float(difference.max()) <= tolerance


@pytest.mark.parametrize("where", ["target", "home"])
@pytest.mark.parametrize("key", list(PRESETS))
def test_preset_url_sets_the_sidebar(key: str, where: str) -> None:
    preset = PRESETS[key]
    page = PAGE_BY_KEY[preset.page] if where == "target" else HOME
    at = open_page(page, {"preset": key})
    assert sidebar_values(at) == expected_sidebar(preset.settings, key)
    assert not url_notices(at)


@pytest.mark.parametrize("key", list(PRESETS))
def test_preset_url_sets_the_page_controls(key: str) -> None:
    preset = PRESETS[key]
    at = open_page(PAGE_BY_KEY[preset.page], {"preset": key})
    assert page_controls(at, preset.page_values) == preset.page_values


def test_preset_url_keeps_what_the_url_says() -> None:
    at = open_page(MATRIX, {"preset": "seed001-notebook", "d": "64"})
    expected = expected_sidebar(PRESETS["seed001-notebook"].settings, "seed001-notebook")
    assert sidebar_values(at) == {**expected, "d": 64}


@pytest.mark.parametrize("key", list(PRESETS))
def test_home_preset_button_applies_it_and_opens_its_page(key: str) -> None:
    preset = PRESETS[key]
    at = open_page(HOME)
    at.button(key=f"home_preset_{key}").click().run()
    assert_page_ran(at, PAGE_BY_KEY[preset.page])
    assert sidebar_values(at) == expected_sidebar(preset.settings, key)
    assert page_controls(at, preset.page_values) == preset.page_values
    assert at.query_params.get("preset") == key


def test_sidebar_preset_selectbox_applies_it_and_opens_its_page() -> None:
    at = open_page(HOME)
    at.sidebar.get_by_key("preset").set_value("seed003-binary").run()
    assert_page_ran(at, PAGE_BY_KEY["binary"])
    assert sidebar_values(at) == expected_sidebar(PRESETS["seed003-binary"].settings, "seed003-binary")


# --- (4) hostile URLs ---------------------------------------------------------------------

TEN_KB = 10 * 1024
#: (id, query, sidebar values expected instead of the defaults, the key a notice names)
BAD_QUERIES: list[tuple[str, dict[str, str | list[str]], dict[str, object], str | None]] = [
    ("text-d", {"d": "abc"}, {}, "d"),
    ("nan-d", {"d": "nan"}, {}, "d"),
    ("fraction-d", {"d": "12.5"}, {}, "d"),
    ("inf-n", {"n": "inf"}, {}, "n"),
    ("minus-inf-n", {"n": "-inf"}, {}, "n"),
    ("nan-n", {"n": "NaN"}, {}, "n"),
    ("negative-L", {"L": "-5"}, {"L": s.L_MIN}, "L"),
    ("negative-n", {"n": "-3"}, {"n": s.N_MIN}, "n"),
    ("zero-d", {"d": "0"}, {"d": s.D_MIN}, "d"),
    ("huge-L", {"L": str(10**30)}, {"L": s.L_MAX}, "L"),
    ("huge-float-L", {"L": "1e30"}, {"L": s.L_MAX}, "L"),
    ("huge-n", {"n": "1e300"}, {"n": s.N_MAX}, "n"),
    ("500-digits-d", {"d": "7" * 500}, {"d": s.D_MAX}, "d"),
    ("odd-d", {"d": "7"}, {"d": 6}, "d"),
    ("empty-L", {"L": ""}, {}, "L"),
    ("repeated-d", {"d": ["4", "8"]}, {"d": 8}, "d"),
    ("unknown-key", {"foo": "bar", "zzz": "x" * TEN_KB}, {}, None),
    ("unknown-layout", {"layout": "diagonal"}, {}, "layout"),
    ("unknown-convention", {"convention": "bert"}, {}, "convention"),
    ("unknown-preset", {"preset": "seed999"}, {}, "preset"),
    ("10kB-text-layout", {"layout": "a" * TEN_KB}, {}, "layout"),
    ("10kB-digits-n", {"n": "9" * TEN_KB}, {"n": s.N_MAX}, "n"),
    ("10kB-text-L", {"L": "x" * TEN_KB}, {}, "L"),
    ("markup-convention", {"convention": "<script>alert(1)</script>"}, {}, "convention"),
]
#: Home (no chart) and a page of charts; test_every_page_clamps_the_same_bad_url_with_a_notice_per_key
#: checks the notices on every page (they are app.py's, the same everywhere).
BAD_QUERY_PAGES = [HOME, MATRIX]


@pytest.mark.parametrize(("query", "changed", "key"), [case[1:] for case in BAD_QUERIES],
                         ids=[case[0] for case in BAD_QUERIES])
@pytest.mark.parametrize("page", BAD_QUERY_PAGES, ids=page_id)
def test_bad_url_is_clamped_with_a_notice(
    page: PageInfo, query: dict[str, str | list[str]], changed: dict[str, object], key: str | None
) -> None:
    at = open_page(page, query)
    assert sidebar_values(at) == {**expected_sidebar(s.Settings()), **changed}
    if key is not None:
        notices = warnings_naming(at, key)
        assert notices, f"no notice names {key!r}: {[w.value for w in at.warning]}"
        for notice in notices:
            assert "\n" not in notice and len(notice) <= 400, notice
    assert all(len(value) <= 64 for values in at.query_params.values() for value in
               ([values] if isinstance(values, str) else values)), "a bad value stays in the URL"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_page_clamps_the_same_bad_url_with_a_notice_per_key(page: PageInfo) -> None:
    """The three shared keys at once, bad, on every page (the browser shows the same on a few:
    tests/browser/test_browser.py): the defaults, L at its least, one one-line notice per key,
    and the bad values gone from the URL."""
    at = open_page(page, {"d": "abc", "L": "-5", "n": "nan"})
    assert sidebar_values(at) == {**expected_sidebar(s.Settings()), "L": s.L_MIN}
    for key in ("d", "L", "n"):
        notices = warnings_naming(at, key)
        assert notices, f"no notice names {key!r} on {page.url_path}: {[w.value for w in at.warning]}"
        assert all("\n" not in notice for notice in notices), notices
    assert not {"d", "n"} & at.query_params.keys() and at.query_params.get("L") == str(s.L_MIN), at.query_params


@pytest.mark.parametrize(("path", "query", "notices"), [
    # Keys of controls these settings do not draw (a row per position at L=100; d=128 is one window).
    ("matrix", {"rows": "-1", "row_start": "1e20"}, [
        "URL: `rows=-1` is not used by this view at these settings; it was left out.",
        "URL: `row_start=1e20` is not used by this view at these settings; it was left out."]),
    ("relative", {"window_start": "-10"},
     ["URL: `window_start=-10` is not used by this view at these settings; it was left out."]),
    ("", {"code": "2"}, ["URL: code=`2` is not one of true, false; using false."]),
    ("pitfalls", {"b": ""}, ["URL: b is empty; using concatenated."]),
    ("contexts", {"base": "1e400"}, ["URL: base=`1e400` is not a finite number; using the sidebar's n."]),
    ("contexts", {"base": "0.5"}, ["URL: base=`0.5` must be greater than 1; using the sidebar's n."]),
    ("rotary", {"model": "../../etc"}, ["URL: model=`../../etc` is not one of the 21 choices (custom, llama-2-7b, "]),
    ("contexts", {"model": "[x](//ev.il) " + "y" * 40}, ["URL: model=`[x](//ev.il) yyyyyyyyyy…` is not one of "]),
])
def test_a_url_value_the_view_does_not_use_is_named_with_what_is_used(path: str, query, notices) -> None:
    """Each gets its one-line notice: the key, the value as typed (quoted in a code span, shortened if
    long) and what the view uses instead; the URL then holds none of it."""
    at = open_page(PAGE_BY_KEY[path] if path else HOME, query)
    shown = url_notices(at)
    for notice in notices:
        assert any(text.startswith(notice) for text in shown), (notice, shown)
    assert not set(query) & set(at.query_params), at.query_params


# --- (5) the URL follows the controls, and the settings follow the visitor ---------------


def test_moving_controls_updates_the_url_and_survives_every_page() -> None:
    at = open_page(HOME)
    move_shared(at, "slider", "d", 256)
    assert at.query_params.get("d") == "256"
    move_shared(at.run(), "select_slider", "n", 100.0)
    move_shared(at.run(), "radio", "layout", "concatenated").run()
    expected_query = {"d": "256", "n": "100", "layout": "concatenated"}
    assert {k: at.query_params.get(k) for k in expected_query} == expected_query
    moved = s.Settings(d=256, n=100.0, layout="concatenated")
    for page in [*PAGES[1:], HOME]:
        at.switch_page(page.path).run()
        assert_page_ran(at, page)
        assert sidebar_values(at) == expected_sidebar(moved), page.path
        assert {k: at.query_params.get(k) for k in expected_query} == expected_query, page.path


def test_a_rotary_reading_on_screen_follows_a_step_of_the_sidebar() -> None:
    """Rotary's checker is drawn below the page's settings part, and compares a reading with the view
    above it: while a file is loaded a step reruns the page (controls.steps_rerun_page), so that the
    comparison follows the new d; before, a step reruns the part alone."""
    at = open_page(PAGE_BY_KEY["rotary"])
    move_shared(at, "slider", "d", 126)
    assert "model" not in [box.key for box in at.selectbox], "a step without a file ran more than the part"
    at.run()
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, 126, 2) / 126)  # the reading of d = 126, b = 10^4, no scaling
    open_on_request(at, "rotary_checker")
    at.file_uploader(key="rotary_upload").upload("inv_freq.npy", npy(inv_freq)).run()
    at.run()
    assert any("The charts above show this reading" in caption.value for caption in at.caption)
    at.sidebar.slider(key="d").set_value(128).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "model" in [box.key for box in at.selectbox], "the step with a reading on screen ran the part alone"
    assert [button.key for button in at.button if button.key == "rotary_open_reading"], "the reading did not follow"


def test_rotarys_link_opens_relative_positions_at_its_query_position_and_pair() -> None:
    """The rotation of pair i by m·θ_i is Relative positions' transition matrix at δ = m: the link goes to
    that page's own address with δ and the pair (a link to the page itself, navigation.page)."""
    at = open_page(PAGE_BY_KEY["rotary"])
    [link] = [element.proto for element in at.get("page_link") if element.proto.page == "relative"]
    assert link.page_script_hash == calc_hash(PAGE_BY_KEY["relative"].url_path)  # st.Page's hash of its address
    assert link.query_string == "delta=5&pair=0" and link.label == "Relative positions at δ = 5, pair 0"


@pytest.mark.parametrize("present", [True, False], ids=["presenting", "normal"])
def test_presentation_mode_says_where_the_closed_sidebar_is(present: bool) -> None:
    """Rotary's text names "the sidebar's n": presentation mode closes the sidebar, and a line above
    the page says how to open it (in normal mode the sidebar is there, and the line is not)."""
    at = open_page(PAGE_BY_KEY["rotary"], {"present": "true"} if present else {})
    assert any("the sidebar's n" in m.value for m in at.markdown)
    where = [c.value for c in at.caption if "open it with » at the top left" in c.value]
    assert len(where) == (1 if present else 0), where


def test_rotary_says_which_layout_is_whose() -> None:
    """Rotary shows two layouts, the sidebar's (interleaved) and its own (half): each label says
    whose it is, so that "interleaved" beside "half" is no riddle."""
    at = open_page(PAGE_BY_KEY["rotary"])
    sidebar_layout = at.sidebar.radio(key="layout")
    assert sidebar_layout.label == "Sinusoid's layout" and "Rotary" in sidebar_layout.help
    assert at.radio(key="rope_layout").label.startswith("RoPE's layout")
