"""A class on one server: the caches are warm before the first visitor, and a page control
reruns only its own part of the page (st.fragment) while the URL still follows it.

Both against the real server (``streamlit run app.py``, so through app.py's st.App and its
start-up), spoken to over Streamlit's own WebSocket protocol (tests/st_client.py), with
the cache counters read from Streamlit's own metrics endpoint (``/_stcore/metrics``).
"""

from __future__ import annotations

import asyncio
import os
import re
import resource
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode

import pytest
from streamlit.proto.Delta_pb2 import Delta
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.PageConfig_pb2 import PageConfig
from support.app_runs import play_open
from support.st_client import RunResult, StreamlitServer, StreamlitSession

from explorer.presets import PRESETS
from explorer.topics.rotary import LAYOUT_CODE, QK_LABELS
from explorer.ui import startup
from explorer.ui.navigation import PAGE_FAILED

ROOT = Path(__file__).resolve().parents[2]

LOOKUP = re.compile(
    r'^cache_lookups_total\{cache="([^"]+)",cache_type="st_cache_(?:data|resource)",result="(hit|miss)"\} (\d+)$'
)


#: What a plain ``streamlit run app.py`` prints before the first visitor (headless): its banner.
BANNER = ("You can now view your Streamlit app in your browser.", "URL: http://")


@pytest.fixture(scope="module")
def server() -> Iterator[StreamlitServer]:
    """The app as a newcomer starts it: ``streamlit run app.py`` with the project's own config."""
    with StreamlitServer("app.py", file_watcher=None) as running:
        yield running


def cache_lookups(server: StreamlitServer) -> dict[tuple[str, str], int]:
    """(cached function, "hit" or "miss") -> lookups so far, as Streamlit counts them."""
    with urllib.request.urlopen(f"{server.url}/_stcore/metrics", timeout=10) as response:
        text = response.read().decode()
    return {(m[1], m[2]): int(m[3]) for line in text.splitlines() if (m := LOOKUP.match(line))}


def in_a_fresh_interpreter(script: str, *args: str) -> list[str]:
    """What ``script`` prints, run with ``args`` by a new Python from the repository root, split into
    words: process-wide settings (BLAS threads, malloc's) are then the script's alone."""
    result = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, check=True)
    return result.stdout.split()


async def open_and_close(server: StreamlitServer, page: str, query: str) -> RunResult:
    async with StreamlitSession(server.url) as session:
        return await session.open_page(page, query)


def test_start_up_visits_every_page_and_every_preset() -> None:
    visits = startup.start_up_visits()
    assert {v.page for v in visits if not v.query} == {
        "" if info.url_path == "home" else info.url_path for info in startup.page_list.PAGES
    }
    assert {v.query for v in visits if v.query} == {f"preset={key}" for key in PRESETS}


def test_start_up_holds_blas_to_one_thread() -> None:
    """In a fresh interpreter (the limit lasts for the process): NumPy's BLAS had more threads
    on this machine, and has one after."""
    script = (
        "import numpy, threadpoolctl\n"
        "from explorer.ui import startup\n"
        "before = max(p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas')\n"
        "print(before, startup.single_threaded_blas())\n"
    )
    before, after = map(int, in_a_fresh_interpreter(script))
    assert after == 1
    assert before > 1 or os.cpu_count() == 1


def test_start_up_tunes_malloc_on_glibc_so_large_arrays_go_back_when_freed() -> None:
    """In a fresh interpreter (the settings last for the process; the CI machine and the image are
    Debian, glibc). Untuned, glibc raises its mmap threshold to a freed 16 MiB block's size, and
    the next such array comes from the heap; tuned, it is mapped again, and unmapped when freed."""
    script = (
        "import ctypes, sys, numpy\n"
        "from explorer.ui import startup\n"
        "class Info(ctypes.Structure):\n"
        "    _fields_ = [(name, ctypes.c_size_t) for name in ('arena', 'ordblks', 'smblks', 'hblks', 'hblkhd',\n"
        "                'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]\n"
        "libc = ctypes.CDLL(None); libc.mallinfo2.restype = Info\n"
        "tuned = startup.tune_malloc() if sys.argv[1] == 'tuned' else None\n"
        "first = numpy.ones(2 * 1024 * 1024); del first\n"
        "second = numpy.ones(2 * 1024 * 1024)\n"
        "mapped_while_held = libc.mallinfo2().hblkhd >= second.nbytes\n"
        "del second\n"
        "print(tuned, mapped_while_held, libc.mallinfo2().hblkhd < 16 * 1024 * 1024)\n"
    )

    assert in_a_fresh_interpreter(script, "untuned") == ["None", "False", "True"]
    assert in_a_fresh_interpreter(script, "tuned") == ["True", "True", "True"]


def test_start_up_keeps_the_heaps_free_top_so_a_block_freed_and_made_again_is_not_faulted_in_again() -> None:
    """In a fresh interpreter: a 1 MiB array (from the heap, below the mmap threshold) made and freed
    100 times, as a computation's blocks are. Tuned, its pages are touched once; with the trim
    threshold glibc holds once the mmap threshold is set (128 KiB), the top of the heap goes back to
    the system at each free and all 256 pages are faulted in again at each make."""
    script = (
        "import resource, sys, numpy\n"
        "from explorer.ui import startup\n"
        "tuned = startup.tune_malloc(trim_threshold=int(sys.argv[1])) if sys.argv[1] else startup.tune_malloc()\n"
        "below = numpy.ones(2**16)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(100):\n"
        "    block = numpy.ones(2**17); del block\n"
        "print(tuned, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"
    )

    def faults(trim_threshold: str) -> int:
        tuned, count = in_a_fresh_interpreter(script, trim_threshold)
        assert tuned == "True"
        return int(count)

    pages = 2**20 // resource.getpagesize()
    assert faults("") < 3 * pages
    assert faults(str(128 * 1024)) > 50 * pages


def test_releasing_the_free_heap_gives_back_the_pages_between_live_arrays() -> None:
    """In a fresh interpreter: 300 arrays of 1 MiB (from the heap, below the mmap threshold), all
    but every tenth freed. malloc keeps the holes' pages (live arrays above them); released, they go."""
    script = (
        "import numpy\n"
        "from explorer.ui import startup\n"
        "def rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096 / 2**20\n"
        "startup.tune_malloc()\n"
        "arrays = [numpy.ones(2**17) for _ in range(300)]\n"
        "kept = arrays[::10]; del arrays\n"
        "before = rss(); released = startup.release_free_heap(); after = rss()\n"
        "print(released, round(before - after))\n"
    )
    released, freed_mib = in_a_fresh_interpreter(script)
    assert released == "True"
    assert int(freed_mib) > 200  # of the 270 MiB freed


def test_start_up_holds_off_full_collections() -> None:
    """In a fresh interpreter (Python's thresholds last for the process): the same garbage made before
    and after hold_full_collections, cycles that live long enough to reach the oldest generation, as a
    session's objects do. After, Python's own full collections are at least five times rarer; the
    young generations' thresholds are Python's."""
    script = (
        "import collections, gc\n"
        "from explorer.ui import startup\n"
        "def full_collections_while_making_cycles():\n"
        "    before = gc.get_stats()[2]['collections']\n"
        "    alive = collections.deque(maxlen=20_000)\n"
        "    for _ in range(1_000_000):\n"
        "        cycle = []; cycle.append(cycle); alive.append(cycle)\n"
        "    return gc.get_stats()[2]['collections'] - before\n"
        "default = gc.get_threshold()\n"
        "untouched = full_collections_while_making_cycles()\n"
        "held = startup.hold_full_collections()\n"
        "print(default[2], held[2], held[:2] == default[:2], untouched, full_collections_while_making_cycles())\n"
    )
    default, held, young_as_before, untouched, after = in_a_fresh_interpreter(script)
    assert (int(default), int(held), young_as_before) == (10, startup.FULL_COLLECTION_AFTER, "True")
    assert int(untouched) >= 5 * max(int(after), 1), (untouched, after)


def test_the_server_runs_on_streamlits_performance_extra(server: StreamlitServer) -> None:
    """uvicorn imports uvloop (its event loop) and httptools (its HTTP parser) only to use them
    (its loop and http settings "auto"): both are mapped in the server once a visitor was served."""
    asyncio.run(open_and_close(server, "", ""))
    mapped = Path(f"/proc/{server.pid}/maps").read_text()
    for extension in ("/uvloop/loop.", "/httptools/parser/parser."):
        assert extension in mapped, f"{extension} is not mapped in the server"


#: Put on the server's path as sitecustomize: every script Streamlit compiles is written to the log named
#: by COMPILED_SCRIPTS, one path a line.
COUNT_COMPILES = """
import os
from streamlit.runtime.scriptrunner import script_cache

def _logged_compile(source, filename, *args, **kwargs):
    with open(os.environ["COMPILED_SCRIPTS"], "a") as log:
        log.write(f"{filename}\\n")
    return compile(source, filename, *args, **kwargs)

script_cache.compile = _logged_compile
"""


def test_the_pages_stay_compiled_when_every_visitor_has_left(tmp_path: Path) -> None:
    """Streamlit empties its cache of compiled scripts when its last session closes; start-up keeps one
    session connected (startup.scripts_kept_compiled), so that after a quiet spell a class does not
    compile the pages again: each is compiled once, by start-up's visits, however often visitors come
    and all leave."""
    (tmp_path / "sitecustomize.py").write_text(COUNT_COMPILES)
    log = tmp_path / "compiled.log"
    path = os.pathsep.join(filter(None, (str(tmp_path), os.environ.get("PYTHONPATH"))))
    with StreamlitServer("app.py", env={"PYTHONPATH": path, "COMPILED_SCRIPTS": str(log)}) as running:
        at_start = log.read_text().splitlines()
        for _ in range(2):  # each time the only visitor, who leaves
            asyncio.run(open_and_close(running, "rotary", ""))
            time.sleep(0.5)  # the server's side of the close
        after = log.read_text().splitlines()
    rotary_page = str(ROOT / "pages" / "rotary_page.py")
    assert at_start.count(rotary_page) == 1, at_start
    assert after == at_start, "a page was compiled again after its visitors left"


def test_the_caches_are_warm_before_the_first_visitor(server: StreamlitServer) -> None:
    """Start-up has run every page (misses before anyone came); the default page and a
    preset are then served from those caches: no new miss anywhere, and new hits."""
    before = cache_lookups(server)
    warmed = {name for (name, result), count in before.items() if result == "miss" and count > 0}
    # A page's own cached computations are defined in its script, which runs as __main__.
    assert {"explorer.ui.blocks._drawn_once", "__main__.measured_criteria", "__main__.precision_scan",
            "__main__.measured_scorecard", "__main__.pitfalls_comparison",
            "__main__.shift_comparison", "explorer.ui.cached.reduced_encoding"} <= warmed
    assert "start-up visit" not in server.log_tail(20_000), "a start-up visit failed"
    # Nothing but the banner: no warning a newcomer would read as something broken (the file
    # watcher's "InotifyEmitter.queue_events() called when the thread is inactive", twice to four times).
    printed = [line.strip() for line in server.log_tail(20_000).splitlines() if line.strip()]
    assert [line for line in printed if not line.startswith(BANNER)] == [], "the start printed more than its banner"

    key, preset = "seed001-similarity", PRESETS["seed001-similarity"]
    for page, query in (("", ""), ("precision", ""), ("scorecard", ""), (preset.page, f"preset={key}")):
        run = asyncio.run(open_and_close(server, page, query))
        assert run.finished and not run.exceptions, (page, query, run.status)
    after = cache_lookups(server)
    new_misses = {
        name: after[(name, "miss")] - before.get((name, "miss"), 0)
        for name, result in after if result == "miss" and after[(name, "miss")] != before.get((name, "miss"), 0)
    }
    assert new_misses == {}, f"computed again after start-up: {new_misses}"
    # The finished sections were replayed, and a computation outside them (Similarity's offsets) was a hit.
    for name in ("explorer.ui.blocks._drawn_once", "explorer.ui.cached.dot_from_zero"):
        assert after[(name, "hit")] > before.get((name, "hit"), 0), name


async def move_in_fragment(server: StreamlitServer, page: str, key: str, value: int) -> tuple[RunResult, RunResult]:
    async with StreamlitSession(server.url) as session:
        first = await session.open_page(page, urlencode(play_open(page)))
        return first, await session.set_slider(key, value, first)


@pytest.mark.parametrize(
    ("page", "control", "value", "rerun_charts", "kept_charts"),
    [
        ("similarity", "ref", 7, {"similarity_lines", "similarity_closed_form"},
         {"similarity_matrix", "similarity_reference_play"}),
        ("waves", "k", 3, {"waves_circle", "waves_circle_play"},
         {"waves_profiles", "waves_profile_play", "waves_columns"}),
        ("relative", "pair", 2, {"relative_rotation"},
         {"relative_transition", "relative_shifted", "relative_direct", "relative_shift_play"}),
        ("attention", "query", 7, {"attention_weights", "attention_learned"}, {"attention_scores", "attention_play"}),
    ],
)
def test_a_page_control_reruns_only_its_fragment(
    server: StreamlitServer, page: str, control: str, value: int, rerun_charts: set[str], kept_charts: set[str]
) -> None:
    first, moved = asyncio.run(move_in_fragment(server, page, control, value))
    assert control in first.fragment_ids, f"{control} is not drawn inside an st.fragment"
    assert rerun_charts | kept_charts <= set(first.widget_ids), "the page did not draw its charts"
    assert moved.finished and not moved.exceptions, moved.status
    # The URL follows the control, and keeps nothing else but the open Play charts.
    assert parse_qs(moved.query_string) == {control: [str(value)], **{key: ["true"] for key in play_open(page)}}
    # Only the fragment's elements come again: its charts, not the page's other charts nor the sidebar.
    sent = set(moved.widget_ids)
    assert rerun_charts <= sent
    assert not sent & kept_charts, f"unchanged charts re-sent: {sent & kept_charts}"
    assert not sent & {"d", "n", "L", "layout", "convention", "preset"}, "the sidebar ran again"


def forward_messages(run: RunResult) -> list[ForwardMsg]:
    """What a run sent (a session with keep_payloads), decoded."""
    return [ForwardMsg.FromString(payload) for payload in run.payloads]


def new_elements(run: RunResult) -> list[Delta]:
    """The deltas of a run that draw an element (not a block)."""
    return [m.delta for m in forward_messages(run)
            if m.WhichOneof("type") == "delta" and m.delta.WhichOneof("type") == "new_element"]


async def page_configs_of_a_step(server: StreamlitServer, query: str) -> tuple[list[PageConfig], list[PageConfig]]:
    """The page configs a first run and then a d step send."""
    async with StreamlitSession(server.url, keep_payloads=True) as session:
        first = await session.open_page("matrix", query)
        step = await session.set_slider("d", 126, first)

    def configs(run: RunResult) -> list[PageConfig]:
        return [m.page_config_changed for m in forward_messages(run) if m.WhichOneof("type") == "page_config_changed"]

    return configs(first), configs(step)


@pytest.mark.parametrize(("query", "sidebar"), [("", PageConfig.AUTO), ("present=true", PageConfig.COLLAPSED)])
def test_a_run_sends_one_page_config_with_the_app_title_and_the_sidebar_of_its_mode(
    server: StreamlitServer, query: str, sidebar: int
) -> None:
    # Every message of a whole run goes out on every whole run: presentation mode's sidebar is in
    # the app's one page config. A d step reruns the page alone, and the config stays as it is.
    first, step = asyncio.run(page_configs_of_a_step(server, query))
    assert len(first) == 1, first
    (config,) = first
    assert config.title == "Positional Encoding Explorer"
    assert config.layout == PageConfig.WIDE
    assert config.initial_sidebar_state == sidebar
    assert step == []


#: What a whole run draws around the page: the sidebar's controls and the Share bar's.
CHROME_WIDGETS = {"preset", "d", "n", "L", "layout", "convention", "offer_downloads", "share_view", "present"}


async def steps_of_d(
    server: StreamlitServer, query: str, values: tuple[int, ...], page: str = "matrix"
) -> list[RunResult]:
    """A first run of ``page`` (Encoding matrix) with ``query``, then the sidebar's d moved to each value in turn."""
    async with StreamlitSession(server.url, keep_payloads=True) as session:
        runs = [await session.open_page(page, query)]
        for value in values:
            runs.append(await session.set_slider("d", value, runs[-1]))
    return runs


def element_kinds(run: RunResult) -> set[str]:
    """The kinds of message a run sent, and of the elements it drew."""
    return {m.WhichOneof("type") for m in forward_messages(run)} | {
        delta.new_element.WhichOneof("type") for delta in new_elements(run)
    }


def test_a_shared_control_reruns_the_page_alone(server: StreamlitServer) -> None:
    """A move of the sidebar's d reruns the page's fragment (controls.PAGE_FRAGMENT): its charts and the
    URL follow; the navigation, the style sheet, the sidebar and the Share bar are not sent again."""
    first, step, back = asyncio.run(steps_of_d(server, "L=300", (64, 128)))
    assert set(first.widget_ids) >= CHROME_WIDGETS
    assert {"navigation", "html", "page_config_changed"} <= element_kinds(first)
    for run, d in ((step, 64), (back, 128)):
        assert run.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" and not run.exceptions, run.status
        assert {"matrix_heatmap", "matrix_rates"} <= set(run.widget_ids), "the page did not draw its charts"
        assert not set(run.widget_ids) & CHROME_WIDGETS, "the app ran whole"
        assert not {"navigation", "html", "page_config_changed"} & element_kinds(run)
        expected = {"L": ["300"]} | ({} if d == 128 else {"d": [str(d)]})
        assert parse_qs(run.query_string) == expected


def test_a_move_away_from_a_preset_runs_the_app_whole_once(server: StreamlitServer) -> None:
    """The sidebar still shows the preset's name after its values are moved, so the first move runs the
    app whole (the preset box then reads "custom"); the next one reruns the page alone."""
    first, leaving, after = asyncio.run(steps_of_d(server, "preset=seed004-heatmap", (64, 66)))
    assert first.widget_ids.keys() >= CHROME_WIDGETS and "preset=seed004-heatmap" in first.query_string
    assert leaving.status == "FINISHED_SUCCESSFULLY" and set(leaving.widget_ids) >= CHROME_WIDGETS, leaving.status
    assert "preset" not in parse_qs(leaving.query_string) and parse_qs(leaving.query_string)["d"] == ["64"]
    assert after.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" and not set(after.widget_ids) & CHROME_WIDGETS
    assert parse_qs(after.query_string)["d"] == ["66"]


async def rotary_seed_then_ones(server: StreamlitServer) -> tuple[RunResult, RunResult]:
    async with StreamlitSession(server.url) as session:
        first = await session.open_page("rotary", "seed=5")
        return first, await session.set_choice("qk", QK_LABELS["ones"], first)


def test_a_page_control_the_page_no_longer_draws_leaves_the_url(server: StreamlitServer) -> None:
    """Rotary draws its seed only for seeded random q and k: choosing all ones reruns the page alone,
    and the seed leaves the URL as in a whole run (controls.begin_page_rerun)."""
    first, ones = asyncio.run(rotary_seed_then_ones(server))
    assert parse_qs(first.query_string) == {"seed": ["5"]} and "seed" in first.widget_ids
    assert ones.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" and not ones.exceptions, ones.status
    assert "seed" not in ones.widget_ids
    assert parse_qs(ones.query_string) == {"qk": ["ones"]}


async def home_preset_clicked(server: StreamlitServer, key: str) -> tuple[RunResult, RunResult, RunResult]:
    """Home, its preset ``key`` clicked, then Home again (the settings kept) and the same preset clicked again."""
    async with StreamlitSession(server.url) as session:
        home = await session.open_page("", "")
        opened = await session.click(f"home_preset_{key}", home)
        home_again = await session.open_page("", "")
        return home, opened, await session.click(f"home_preset_{key}", home_again)


def test_a_preset_button_inside_the_page_opens_its_page(server: StreamlitServer) -> None:
    """Home's preset buttons are drawn in the page's fragment, so a click first reruns the page alone;
    the preset must still set the sidebar and open its page, which only a whole run does: also when
    the sidebar already holds the preset's values (a second click), so that nothing looks stale."""
    key = "seed001-shift"
    preset = PRESETS[key]
    home, *clicks = asyncio.run(home_preset_clicked(server, key))
    assert f"home_preset_{key}" in home.fragment_ids, "the button is not in the page's fragment"
    for opened in clicks:
        assert opened.status == "FINISHED_SUCCESSFULLY" and not opened.exceptions, opened.status
        assert opened.page_url_path == preset.page
        assert opened.slider_values["d"] == [preset.settings.d] and opened.slider_values["L"] == [preset.settings.L]
        assert parse_qs(opened.query_string)["preset"] == [key]


def test_the_notices_of_the_url_are_the_pages_and_the_next_step_clears_them(server: StreamlitServer) -> None:
    """A link's value out of range gets a one-line notice above the page, drawn in the page's fragment,
    so that a step, which reruns that fragment alone, clears it as a whole rerun would."""
    first, step = asyncio.run(steps_of_d(server, "L=99999", (64,)))
    notices = [delta for delta in new_elements(first) if delta.new_element.WhichOneof("type") == "alert"]
    assert len(notices) == 1 and "L" in notices[0].new_element.alert.body, first.alerts
    assert notices[0].fragment_id, "the notice is drawn outside the page's fragment: a step would leave it"
    assert step.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" and step.alerts == []
    assert parse_qs(step.query_string) == {"L": ["16384"], "d": ["64"]}


#: Pages whose charts read the shared settings in a part of their own, below their own controls
#: (navigation.run_settings_part): those controls, and keyed charts of the part.
PAGE_CONTROLS = {
    "rotary": {"model", "rope_layout", "qk", "seed", "scaling"},
    "contexts": {"model", "trained", "target", "factor", "method"},
    "attention": {"schemes", "causal", "scaled", "heads", "head"},
    "": {f"home_preset_{key}" for key in PRESETS},
    "layers": {"layer_model", "layer_target"},
    "mrope": {"vl_model", "image_rows", "query_row"},
}
PART_DRAWS = {
    "rotary": {"rotary_scores", "rotary_decay", "rotary_pair"},
    "contexts": {"contexts_coverage", "contexts_dot"},
    "attention": {"attention_scores", "attention_weights", "query"},
    "": set(),  # Home's part: the criteria, four metrics
    "layers": set(),  # a caption: the sidebar does not reach these two pages
    "mrope": set(),
}


@pytest.mark.parametrize("page", PAGE_CONTROLS)
def test_a_shared_control_reruns_a_pages_settings_part_alone(server: StreamlitServer, page: str) -> None:
    """On Rotary, Longer contexts, Attention and Home a d step reruns the part below the page's own controls:
    its charts and numbers follow, and so does the URL; the controls, and Home's presets, are not sent again."""
    first, step, back = asyncio.run(steps_of_d(server, "", (254, 256), page=page))
    assert PAGE_CONTROLS[page] | CHROME_WIDGETS <= set(first.widget_ids)
    for run, d in ((step, 254), (back, 256)):
        assert run.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" and not run.exceptions, run.status
        assert PAGE_FAILED not in run.alerts, "the part failed"
        assert not set(run.widget_ids) & (PAGE_CONTROLS[page] | CHROME_WIDGETS), "more than the part ran"
        assert PART_DRAWS[page] <= set(run.widget_ids), "the part did not draw its charts"
        assert page or run.element_types.count("metric") == 4, "Home's part did not draw its criteria"
        assert page not in ("layers", "mrope") or run.element_types == ["markdown"], run.element_types
        assert parse_qs(run.query_string) == {"d": [str(d)]}


def texts(run: RunResult, kind: str) -> list[str]:
    """The texts of the headings (``kind`` "heading") or code blocks ("code") a run drew."""
    field = {"heading": "body", "code": "code_text"}[kind]
    return [getattr(getattr(delta.new_element, kind), field) for delta in new_elements(run)
            if delta.new_element.WhichOneof("type") == kind]


async def rotary_layout_and_steps(server: StreamlitServer) -> list[RunResult]:
    """Rotary in the interleaved layout, a d step, the half layout chosen, another d step."""
    async with StreamlitSession(server.url, keep_payloads=True) as session:
        first = await session.open_page("rotary", "rope_layout=interleaved")
        step = await session.set_slider("d", 254, first)
        half = await session.set_choice("rope_layout", f"half ({LAYOUT_CODE['half'][2]})", step)
        return [first, step, half, await session.set_slider("d", 256, half)]


def test_the_settings_part_draws_with_the_page_controls_of_its_last_run(server: StreamlitServer) -> None:
    """The part's rerun reads the page's controls from the page's last run (Streamlit keeps the part's
    function of that run): after the layout changes, the next d step draws the new one, not the first."""
    _, step, half, step_again = asyncio.run(rotary_layout_and_steps(server))
    mixing = [heading for heading in texts(step, "heading") if heading.startswith("Mixing them")]
    assert mixing and "the interleaved cache" in mixing[0], texts(step, "heading")
    assert half.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" and "model" in half.widget_ids, "not the page's run"
    assert "model" not in step_again.widget_ids, "the step after the layout ran more than the part"
    mixing = [heading for heading in texts(step_again, "heading") if heading.startswith("Mixing them")]
    assert mixing and "the half cache" in mixing[0], texts(step_again, "heading")
    assert parse_qs(step_again.query_string) == {"d": ["256"]}


def test_a_step_reruns_the_page_while_it_shows_a_notice_or_code_that_read_the_settings(
    server: StreamlitServer
) -> None:
    """The page's notices of the URL's values are above the part, and Rotary's code below it holds the
    settings: while either is shown, a step reruns the page (clearing the notice, rewriting the code);
    once the notice is gone, the next step reruns the part alone."""
    first, cleared, alone = asyncio.run(steps_of_d(server, "L=99999", (254, 256), page="rotary"))
    assert any("L" in alert for alert in first.alerts), first.alerts
    assert "model" in cleared.widget_ids and cleared.alerts == [], "the notice stayed"
    assert "model" not in alone.widget_ids and alone.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"
    first, step = asyncio.run(steps_of_d(server, "code=true", (254,), page="rotary"))
    assert "model" in step.widget_ids and step.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY", step.status
    assert any("254" in code for code in texts(step, "code"))
    assert not any("254" in code for code in texts(first, "code"))


def test_the_client_keeps_the_browsers_message_cache(server: StreamlitServer) -> None:
    """Like a browser tab, the test client lists the large messages it holds, and the server sends a short
    reference for a chart the tab already has (what a warm step costs in a browser): a step back to the first
    d receives the Encoding matrix's charts as references, which the client reads as the charts."""
    first, step, back = asyncio.run(steps_of_d(server, "L=1000", (64, 128)))
    for run in (first, step, back):
        assert {"matrix_heatmap", "matrix_rates"} <= set(run.widget_ids), run.widget_ids
    assert first.bytes_received > 50_000 and step.bytes_received > 50_000, "the charts are smaller than the cache's"
    assert back.bytes_received < step.bytes_received / 5, (back.bytes_received, step.bytes_received)
    decoded = [ForwardMsg.FromString(payload) for payload in back.payloads]
    assert not [m for m in decoded if m.WhichOneof("type") == "ref_hash"], "a reference was kept unread"

