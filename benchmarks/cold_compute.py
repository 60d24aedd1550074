"""Cold computations: what each page computes for a setting nobody asked for yet.

Run from the repository root:

    python -m benchmarks.cold_compute            # every page at every setting, a few minutes on 2 cores
    python -m benchmarks.cold_compute --quick    # defaults and the largest settings only
    python -m benchmarks.cold_compute --page precision --page pitfalls

For each page, the computations its cached wrappers run (the functions behind
``st.cache_data``, called directly: no Streamlit server, every cache empty) are timed together
as one cold step, at the defaults (d=128, n=10000, L=100), at the largest settings (L=16384,
d=2048) and at their extremes (n = 2 and 1e8, the concatenated layout, the tensor2tensor
convention, each page's own controls at their largest). The in-process caches of the topic
modules (functools.lru_cache) are cleared before every call. Computations that do not depend on
the settings (``STARTUP``) are run once before the page rows, as the app runs them at start-up,
and timed in rows of their own.

Budget (PRODUCT.md, "Budgets"): a cold computation costs at most 300 ms at the largest settings
on any page. Each row prints its median and maximum over the repetitions and its ratio to the
budget; a baseline row (``pe_core.positional_encoding(16384, 2048)``, timed the same way) lets a
reader compare machines. The 1-minute load average is recorded before and after: the machine may
be shared, and absolute times then drift by tens of percent. Figures are written as JSON to
benchmarks/results/cold.json. Exit status 1 if any page row misses the budget.

BLAS threads and malloc: the server computes with NumPy's BLAS in one thread and with glibc's
malloc tuned (explorer/ui/startup.py: two arenas, the mmap threshold held at 4 MiB, up to 4 MiB
kept free at the top of a heap), and so does this benchmark, like for like (the same calls).
Before 2026-11-29 it ran with malloc's defaults, whose dynamic thresholds keep a computation's
freed blocks mapped: it measured less than the server paid (``--malloc default`` still does, to
compare).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

import pe_core
from explorer import criteria, figures
from explorer.model_configs import LAYER_PRESETS, MROPE_PRESETS
from explorer.settings import FULL_MATRIX_CELLS, L_MAX, Settings
from explorer.topics import attention as attention_topic
from explorer.topics import contexts as contexts_topic
from explorer.topics import embeddings, pitfalls, scorecard
from explorer.topics import home as home_topic
from explorer.topics import layers as layers_topic
from explorer.topics import mrope as mrope_topic
from explorer.topics import precision as pr
from explorer.topics import relative as relative_topic
from explorer.topics import rotary as rotary_topic
from explorer.topics import similarity as similarity_topic
from explorer.topics import waves as waves_topic
from explorer.topics.matrix import matrix_grid
from explorer.ui import startup

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "benchmarks" / "results" / "cold.json"
BUDGET_S = 0.300

DEFAULTS = Settings()
LARGEST = Settings(d=2048, n=10000.0, L=16384)
#: The settings every page is measured at: defaults, the largest, and the largest with each
#: other shared control at an extreme.
SETTINGS: dict[str, Settings] = {
    "defaults": DEFAULTS,
    "largest": LARGEST,
    "largest n=2": replace(LARGEST, n=2.0),
    "largest n=1e8": replace(LARGEST, n=1e8),
    "largest concatenated": replace(LARGEST, layout="concatenated"),
    "largest tensor2tensor": replace(LARGEST, convention="tensor2tensor"),
}
QUICK_SETTINGS = ("defaults", "largest")


# ------------------------------------------------------------------ start-up (settings-free)


#: The scans start-up computes (their window is 1 whatever L is), by their arguments.
STARTUP_SCANS: dict[tuple, pr.PairScan] = {}


def precision_scan(dtype: str, method: str, w0: float, window: int, start: int, limit: int) -> pr.PairScan:
    """The Precision page's cached precision_scan without Streamlit: the "cast" and "low" scans are kept from
    start-up; a "relative" scan depends on L (its window), so it is cold like the rest."""
    key = (dtype, method, w0, window, start, limit)
    if method == "relative":
        return pr.scan_fastest_pair(*key)
    if key not in STARTUP_SCANS:
        STARTUP_SCANS[key] = pr.scan_fastest_pair(*key)
    return STARTUP_SCANS[key]


def warm_precision_scans() -> None:
    """Every neighbour scan the page can ask for whose window does not depend on L."""
    for dtype in pr.DTYPES:
        for method in ("cast", "low"):
            pr.neighbours(LARGEST, dtype, method, scan=precision_scan)


STARTUP: dict[str, Callable[[], object]] = {
    "precision: fastest-pair scans (cast, low)": warm_precision_scans,
    "scorecard: the learned table's running maximum": lambda: scorecard.learned_largest_abs([(0, 1)], 1),
}
#: Caches those fill, kept between the timed calls.
STARTUP_CACHES = (scorecard._stream_records, pr._sin_cos_table)


# --------------------------------------------------------------------------- the pages


def clear_module_caches() -> None:
    """Empty the functools caches inside the topic modules, so that every call is cold."""
    for module in (criteria, scorecard, pitfalls, similarity_topic, relative_topic, pr, embeddings, contexts_topic,
                   pe_core, pe_core.display):
        for value in vars(module).values():
            if hasattr(value, "cache_clear") and value not in STARTUP_CACHES:
                value.cache_clear()


def home(s: Settings, _: dict) -> None:
    home_topic.evaluate(s)


def matrix(s: Settings, _: dict) -> None:
    kw = {"layout": s.layout, "convention": s.convention}
    rows, cols = matrix_grid(s.L, s.d, "values")
    pe_core.encoding_block_average(s.L, s.d, s.n, max_rows=rows, max_cols=cols, **kw)
    rows, pairs = matrix_grid(s.L, s.d, "angles")
    pe_core.angle_block_mean(s.L, s.d, s.n, convention=s.convention, max_rows=rows, max_pairs=pairs)
    if s.L * s.d <= FULL_MATRIX_CELLS:
        pe_core.positional_encoding(s.L, s.d, s.n, **kw)


def waves(s: Settings, _: dict) -> None:
    """Seed 000's panels, seed 002's columns over every position, one pair's trail."""
    w = pe_core.frequencies(s.d, s.n, s.convention)
    waves_topic.profile_table([0, 4, 8, 12], w[:100])
    waves_topic.encoding_columns(s.L, s.d, s.n, [0, 1], layout=s.layout, convention=s.convention)
    waves_topic.circle_table(float(w[0]), s.L - 1)


def dot_from_zero(s: Settings) -> np.ndarray:
    """cached.dot_from_zero: the closed form for every offset up to L_MAX."""
    return pe_core.dot_by_offset(np.arange(L_MAX, dtype=np.float64), s.d, s.n, s.convention)


def similarity(s: Settings, controls: dict) -> None:
    by_offset = similarity_topic.mirrored_offsets(dot_from_zero(s)[: s.L])
    ref = min(controls.get("ref", 20), s.L - 1)
    if s.L * s.d <= FULL_MATRIX_CELLS:
        P = pe_core.positional_encoding(s.L, s.d, s.n, layout=s.layout, convention=s.convention)
        similarity_topic.similarity_from_matrix(P, ref)
        similarity_topic.closed_form_from_encoding(P, s.layout, np.arange(s.L) - ref)
    else:
        # The page's measured window and its closed form (pages/similarity_page.py, measured_window).
        first, count = similarity_topic.measure_window(s.L, s.d, ref, similarity_topic.MEASURED_CELLS)
        similarity_topic.measured_dots(first, count, s.d, s.n, layout=s.layout, convention=s.convention, ref=ref)
    pe_core.offset_matrix_block_average(by_offset, pe_core.block_edges(s.L, similarity_topic.SIMILARITY_BLOCKS))


def binary(s: Settings, _: dict) -> None:
    rows, cols = figures.heatmap_grid(s.L, s.d, power_of_two_columns=True)
    pe_core.encoding_block_average(s.L, s.d, s.n, layout=s.layout, convention=s.convention, max_rows=rows,
                                   max_cols=cols)
    dot_from_zero(s)


def relative(s: Settings, controls: dict) -> None:
    delta = controls.get("delta", 1)
    kw = {"layout": s.layout, "convention": s.convention}
    dims = relative_topic.transition_window_dims(s.d, s.layout, 0, relative_topic.TRANSITION_WINDOW)
    relative_topic.transition_window(delta, s.d, s.n, dims=dims, **kw)
    map_rows, map_cols = figures.heatmap_grid(s.L, s.d, power_of_two_columns=True)
    relative_topic.compare_shift(
        s.L, s.d, s.n, delta=delta, max_rows=map_rows, max_cols=map_cols, full_cells=FULL_MATRIX_CELLS, **kw,
    )


def scorecard_page(s: Settings, controls: dict) -> None:
    scorecard.evaluate(s, controls.get("offset", 1))
    scorecard.distance_by_offset(s)


def pitfalls_page(s: Settings, controls: dict) -> None:
    a = pitfalls.variant(controls.get("a", "sidebar"), s, other_n=controls.get("other_n", 1e6),
                         offset=controls.get("offset", 1))
    b = pitfalls.variant(controls.get("b", "concatenated"), s, other_n=controls.get("other_n", 1e6),
                         offset=controls.get("offset", 1))
    rows, cols = figures.heatmap_grid(s.L, s.d, across=figures.HALF_PLOT_COLS)
    pitfalls.compare(a, b, s.L, s.d, max_rows=rows, max_cols=cols, max_cells=FULL_MATRIX_CELLS)


def precision_page(s: Settings, controls: dict) -> None:
    """The Precision page's precision_errors, precision_neighbours (scans warmed), precision_column, telling_at."""
    fixed = [key for key in pr.SERIES if key[1] != "relative"]
    moving = [key for key in pr.SERIES if key[1] == "relative"]
    pr.errors(replace(s, L=1), series=fixed)
    pr.errors(s, series=moving)
    for dtype in pr.DTYPES:
        for method in pr.METHODS:
            pr.neighbours(s if method == "relative" else replace(s, L=1), dtype, method, scan=precision_scan)
    pr.column_errors(s, controls.get("column", 0))
    wider = replace(s, d=min(2 * s.d, pe_core.MAX_D))
    pr.telling_at(s, "bfloat16"), pr.telling_at(wider, "bfloat16")


def embeddings_page(s: Settings, controls: dict) -> None:
    for sentence in (embeddings.DEFAULT_SENTENCE, embeddings.DEFAULT_OTHER):
        tokens = embeddings.tokenize(sentence)
        m = embeddings.sentence_matrices(tokens, s, scale=controls.get("scale", False))
        embeddings.reduce_columns(m.summed, s)


def rotary(s: Settings, controls: dict) -> None:
    """The Rotary page's cached computations: the score matrix, the decay, both cos tables, the mixing error
    (rotary.analyse), one pair (and its Play frames) and the transition block. ``s.n`` is the base; the
    page's own controls choose the layout, the query and key and the scaling (a model preset's, by its key)."""
    scaling = controls.get("scaling")
    view = rotary_topic.RotaryView(s.d, s.n, s.L, controls.get("layout", "half"), scaling, controls.get("qk", "random"))
    rotary_topic.analyse(view)
    pair, m = controls.get("pair", 0), min(5, s.L - 1)
    rotary_topic.pair_view(view, pair, m, min(2, s.L - 1))
    rotary_topic.pair_play_table(view, pair, min(2, s.L - 1))
    rotary_topic.transition_block(s.d, s.n, pair, m)


def attention_page(s: Settings, controls: dict) -> None:
    """Attention by offset: the two closed forms (the sinusoid's shared with other pages), the scores by
    offset, the learned table's bits, one query's scores and weights, and the Play frames."""
    view = attention_topic.View(causal=controls.get("causal", True), heads=controls.get("heads", 8),
                                head=controls.get("heads", 8))
    rope = pe_core.rope_dot_by_offset(np.arange(L_MAX, dtype=np.float64), s.d, s.n)
    scores = attention_topic.offset_scores(s.L, s.d, view, sinusoid_from_zero=dot_from_zero(s), rope_from_zero=rope)
    bits = attention_topic.learned_bits(s.L, s.d)
    query = min(controls.get("query", attention_topic.QUERY_DEFAULT), s.L - 1)
    weights = attention_topic.query_weights(attention_topic.query_scores(scores, bits, query, s.d, view), query,
                                            view.causal)
    attention_topic.where_table(weights, query, view.causal)
    attention_topic.play_weights(scores, bits, s.d, view, attention_topic.play_queries(s.L, len(view.schemes)))


def contexts_page(s: Settings, controls: dict) -> None:
    """The Longer contexts page's computations for a view nobody asked for yet: both curves by offset
    (its dot_curves cache), every figure and table its cached sections build, and its snippets. The
    sidebar's d and n are the rotary dimension and the base; L does not enter."""
    view = replace(contexts_topic.DEFAULT_VIEW, **({"d": s.d, "base": s.n} | controls))
    view, _ = contexts_topic.checked_view(view)
    before, after = contexts_topic.dot_curves(view)
    contexts_topic.coverage_figure(view, title="t")
    contexts_topic.pairs_table(view)
    contexts_topic.methods_figure(view, title="t")
    contexts_topic.methods_summary(view)
    contexts_topic.dot_figure(view, before, after, title="t")
    contexts_topic.ramp_figure(view, title="t")
    contexts_topic.pitfalls(view)
    contexts_topic.contexts_code(view), contexts_topic.contexts_code(view, "torch")


def layers_page(_: Settings, controls: dict) -> None:
    """Your model, layer by layer, for a preset and target nobody asked for yet: the stack read from its file,
    every figure and table its cached sections build, and its snippets. The sidebar's settings do not enter."""
    stack = layers_topic.preset_stack(controls.get("model", "gemma-3-4b-it"))
    target = controls.get("target", layers_topic.DEFAULT_TARGET)
    count = layers_topic.curve_offsets(stack, target)
    layers_topic.stack_figure(stack, title="t")
    layers_topic.kinds_table(stack, target)
    layers_topic.wavelength_figure(stack, target, title="t")
    layers_topic.turns_figure(stack, target, title="t")
    layers_topic.score_figure(stack, count, target, title="t")
    if stack.floor_scale is not None:
        layers_topic.query_scale_figure(stack, layers_topic.query_scale_positions(stack, target), title="t")
    layers_topic.layers_code(stack, target), layers_topic.layers_code(stack, target, "torch")


def mrope_page(_: Settings, controls: dict) -> None:
    """Images and video (M-RoPE) for a sequence nobody asked for yet: the positions, every figure and table its
    cached sections build (the scores' Play frames included), and its snippets."""
    view = mrope_topic.with_sequence(mrope_topic.preset_view(controls.get("model", mrope_topic.DEFAULT_MODEL)),
                                     **controls.get("sequence", {}))
    ids = mrope_topic.positions(view)
    mrope_topic.image_axes_figure(view, ids, title="t")
    mrope_topic.rows_figure(view, ids, title="t")
    mrope_topic.axes_figure(view, title="t")
    mrope_topic.score_figure(view, ids, title="t")
    mrope_topic.wrong_reading_figure(view, ids, title="t")
    mrope_topic.text_misread(view, ids)
    mrope_topic.mrope_code(view), mrope_topic.mrope_code(view, "torch")


@dataclass(frozen=True)
class Page:
    name: str
    run: Callable[[Settings, dict], None]
    #: Extra rows: the page's own controls at their largest (label -> control values), at LARGEST.
    controls: dict[str, dict]
    #: Extra rows at other settings where this page's work peaks (label -> settings).
    settings: dict[str, Settings] = field(default_factory=dict)


PAGES: tuple[Page, ...] = (
    Page("home", home, {}),
    Page("matrix", matrix, {}),
    Page("waves", waves, {}),
    Page("similarity", similarity, {"ref=L-1": {"ref": L_MAX - 1}}),
    Page("binary", binary, {}),
    Page("relative", relative, {"delta=-(L-1)": {"delta": -(L_MAX - 1)}, "delta=L-1": {"delta": L_MAX - 1}}),
    Page("scorecard", scorecard_page, {f"offset={scorecard.MAX_OFFSET}": {"offset": scorecard.MAX_OFFSET}}),
    Page("pitfalls", pitfalls_page, {
        "t2t vs bug": {"a": "tensor2tensor", "b": "bug"},
        "other_n=1e8 vs offset=16384": {"a": "other_base", "b": "offset", "other_n": 1e8, "offset": 16384},
        "sidebar vs offset=-1000": {"a": "sidebar", "b": "offset", "offset": -1000},
    }),
    # The relative scan computes offsets r >= 1016 of each window in float16: most work near L = 2000; the
    # 8-bit formats scan every offset to 10^5 where no early match is certain (L = 17 in e4m3, 9 in e5m2).
    Page("precision", precision_page, {"column=d-1": {"column": 2047}},
         {"d=2048, L=2000": replace(LARGEST, L=2000), "d=2048, L=200": replace(LARGEST, L=200),
          "d=2048, L=17": replace(LARGEST, L=17), "d=2048, L=9": replace(LARGEST, L=9)}),
    Page("embeddings", embeddings_page, {"scale": {"scale": True}}),
    Page("rotary", rotary, {
        "interleaved, all ones": {"layout": "interleaved", "qk": "ones"},
        "yarn x32 (gpt-oss), pair d/2-1": {"scaling": pe_core.RopeScaling("yarn", 32.0, 4096, truncate=False),
                                          "pair": 1023},
        "longrope x32, uniform": {"scaling": pe_core.RopeScaling("longrope", 32.0, 4096, short_factor=(1.0,) * 1024,
                                                                 long_factor=(32.0,) * 1024)},
    }),
    Page("attention", attention_page, {
        "128 heads, bidirectional, query=L-1": {"heads": 128, "causal": False, "query": L_MAX - 1},
    }),
    # The curves sum min(target, 2**20, 2**27 / (d/2)) offsets: 131,072 at d = 2048, 2**20 at d = 128.
    Page("contexts", contexts_page, {
        "target=2^24, dynamic": {"target": contexts_topic.LENGTH_MAX, "method": "dynamic", "max_positions": 4096},
        "target=2^24, yarn x1024": {"target": contexts_topic.LENGTH_MAX, "factor": 1024.0},
        "d=128, target=2^24": {"d": 128, "target": contexts_topic.LENGTH_MAX},
    }),
    # Each preset at the largest target: the widest stacks (DeepSeek-V3's 61 layers, Gemma 4's 512-wide heads).
    Page("layers", layers_page, {f"{key}, target=2^24": {"model": key, "target": layers_topic.TARGET_MAX}
                                 for key in LAYER_PRESETS}),
    # The longest sequence: three text runs of 512, a 64 x 64 image, 32 frames of 64 x 64 (136,704 tokens).
    Page("mrope", mrope_page, {f"{key}, longest": {"model": key, "sequence": {
        "text_before": mrope_topic.TEXT_MAX, "text_between": mrope_topic.TEXT_MAX, "text_after": mrope_topic.TEXT_MAX,
        "image_rows": mrope_topic.SIDE_MAX, "image_cols": mrope_topic.SIDE_MAX, "video_frames": mrope_topic.FRAMES_MAX,
        "video_rows": mrope_topic.SIDE_MAX, "video_cols": mrope_topic.SIDE_MAX}} for key in MROPE_PRESETS}),
)


# --------------------------------------------------------------------------- timing


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def time_cold(run: Callable[[], object], repeats: int) -> list[float]:
    """Seconds of each of ``repeats`` calls, every module cache emptied before each."""
    times = []
    for _ in range(repeats):
        clear_module_caches()
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def yardstick(repeats: int) -> float:
    """Median seconds of a small fixed computation, ``positional_encoding(4096, 1024)``, timed just before
    a page's rows: this machine's speed moves by tens of percent within minutes (the baseline row took
    706 and 1,276 ms in two runs 20 minutes apart), so each row is also given in these units, which
    runs minutes or days apart can compare."""
    return statistics.median(time_cold(lambda: pe_core.positional_encoding(4096, 1024), repeats))


def row(page: str, label: str, times: list[float], yard_s: float, budget: bool = True) -> dict:
    median = statistics.median(times)
    return {
        "page": page, "settings": label, "times_s": times, "median_s": median, "max_s": max(times),
        "yardstick_s": yard_s, "in_yardsticks": median / yard_s,
        "ratio_to_budget": median / BUDGET_S if budget else None, "within_budget": median <= BUDGET_S or not budget,
    }


def print_row(r: dict) -> None:
    ratio = "" if r["ratio_to_budget"] is None else f"{r['ratio_to_budget']:6.2f}"
    flag = "" if r["within_budget"] else "  OVER"
    print(f"{r['page']:<44} {r['settings']:<30} {r['median_s'] * 1e3:9.1f} {r['max_s'] * 1e3:9.1f} "
          f"{r['in_yardsticks']:8.2f} {ratio:>7}{flag}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="defaults and the largest settings only")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per row (default 3)")
    parser.add_argument("--page", action="append", choices=[p.name for p in PAGES], help="only these pages")
    parser.add_argument("--malloc", choices=("server", "default"), default="server",
                        help="glibc's malloc tuned as the server's (default) or left at its defaults")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    startup.single_threaded_blas()
    tuned = args.malloc == "server" and startup.tune_malloc()
    load_before = load_average()
    allocator = "malloc tuned, as the server's" if tuned else "malloc at glibc's defaults, unlike the server's"
    print(f"1-minute load average before: {load_before}; BLAS in one thread, as the server; {allocator}", flush=True)
    print(f"{'page / computation':<44} {'settings':<30} {'median ms':>9} {'max ms':>9} {'x yard':>8} {'/300ms':>7}")
    rows = []
    yard_s = yardstick(args.repeats)
    baseline = row("baseline: positional_encoding(16384, 2048)", "largest",
                   time_cold(lambda: pe_core.positional_encoding(16384, 2048), args.repeats), yard_s, budget=False)
    print_row(baseline)
    for name, warm in STARTUP.items():
        start = time.perf_counter()
        warm()
        r = row(f"start-up: {name}", "once", [time.perf_counter() - start], yard_s, budget=False)
        print_row(r)
        rows.append(r)
    labels = QUICK_SETTINGS if args.quick else tuple(SETTINGS)
    for page in PAGES:
        if args.page and page.name not in args.page:
            continue
        cases = [(label, SETTINGS[label], {}) for label in labels]
        cases += [(f"largest, {label}", LARGEST, controls) for label, controls in page.controls.items()]
        cases += [(label, settings, {}) for label, settings in page.settings.items()]
        yard_s = yardstick(args.repeats)
        for label, settings, controls in cases:
            r = row(page.name, label, time_cold(lambda: page.run(settings, controls), args.repeats), yard_s)  # noqa: B023
            print_row(r)
            rows.append(r)
    load_after = load_average()
    print(f"1-minute load average after: {load_after}")
    missed = [r for r in rows if not r["within_budget"]]
    print(f"{len(missed)} row(s) over the {BUDGET_S * 1e3:.0f} ms budget." if missed else "Every row within budget.")

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "numpy": np.__version__},
        "load_average_1min": {"before": load_before, "after": load_after},
        "blas_threads": 1,
        "budget_s": BUDGET_S,
        "repeats": args.repeats,
        "malloc": "server" if tuned else "default",
        "baseline": baseline,
        "rows": rows,
    }, indent=1))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
