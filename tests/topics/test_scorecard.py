"""explorer.topics.scorecard and the scheme-generic measurements of explorer.criteria, against
independent formulas written here (all-pairs distances, seed 004's 1/(L-1), popcounts, a
dense least-squares fit), and the reproduce snippet against the app's numbers."""

from __future__ import annotations

import io
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from unittest import mock

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support.angle_rounding import angle_rounding_tolerance, textbook_dot_by_offset, textbook_sin_cos_outer
from support.snippets import run_snippet

import pe_core
from explorer import criteria
from explorer.settings import Settings
from explorer.topics import scorecard as sc


def all_pairs_min_distance(P: np.ndarray) -> float:
    diff = P[:, None, :] - P[None, :, :]
    distance = np.sqrt((diff**2).sum(-1))
    np.fill_diagonal(distance, np.inf)
    return float(distance.min())


def verdicts(card: sc.Scorecard) -> dict[str, str]:
    """Each scheme's pass (1) / fail (0) string over the criteria, in CRITERIA order."""
    return {key: "".join("1" if m.passed else "0" for m in ms) for key, ms in card.results}


# --- the schemes -----------------------------------------------------------------------


def test_scheme_rows_are_what_they_say() -> None:
    assert sc.integer_rows(5, 3, 100)[:, 0].tolist() == [5.0, 6.0, 7.0]
    assert sc.scaled_rows(0, 100, 100)[[0, 1, 99], 0].tolist() == pytest.approx([0.0, 1 / 99, 1.0])
    assert sc.scaled_rows(0, 1, 1)[0, 0] == 0.0  # one position: no division by zero
    np.testing.assert_array_equal(sc.binary_rows(0, 100, 100), pe_core.binary_encoding(100))
    np.testing.assert_array_equal(sc.binary_rows(37, 5, 100), pe_core.binary_encoding(100)[37:42])
    P = sc.sinusoid_rows(Settings(d=8, n=100.0, layout="concatenated"))(3, 4, 10)
    np.testing.assert_array_equal(P, pe_core.positional_encoding(7, 8, 100.0, layout="concatenated")[3:])


@settings(max_examples=40, deadline=None)
@given(reads=st.lists(st.tuples(st.sampled_from([50.0, 60.0]), st.integers(0, 60), st.integers(1, 20)),
                      min_size=1, max_size=8),
       layout=st.sampled_from(["interleaved", "concatenated"]), first_rows=st.integers(1, 40))
def test_sinusoid_rows_read_again_are_the_encodings_rows_and_no_read_can_change_them(
    reads: list[tuple[float, int, int]], layout: str, first_rows: int
) -> None:
    """The scheme keeps the rows it computed (evaluate reads the same positions a dozen times): the
    first ones for every reader of the same settings, the others for the reader. Any sequence of
    reads, of two bases, inside or across the first rows kept (up to ``first_rows`` here), is bit for
    bit the encoding's rows, and no read can be written into."""
    sc._sinusoid_first_rows.cache_clear()
    with mock.patch.object(sc, "FIRST_ROWS_CELLS", first_rows * 6), mock.patch.object(sc, "CHART_OFFSETS", 0):
        readers = {n: sc.sinusoid_rows(Settings(d=6, n=n, layout=layout)) for n in (50.0, 60.0)}
        P = {n: pe_core.positional_encoding(80, 6, n, layout=layout) for n in readers}
        for n, start, count in reads:
            got = readers[n](start, count, 1000)
            np.testing.assert_array_equal(got, P[n][start : start + count])
            with pytest.raises(ValueError, match="read-only"):
                got[:] = np.nan
        for n, start, count in reads:
            np.testing.assert_array_equal(readers[n](start, count, 1000), P[n][start : start + count])


def test_the_sinusoids_first_rows_are_computed_once_for_every_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another L (another student, the offset chart's shorter sentence) reads the first rows already
    computed for the same d, n, layout and convention, and computes only the rows after them; other
    settings compute their own."""
    sc._sinusoid_first_rows.cache_clear()
    computed: list[tuple[float, int, int]] = []
    encoding = pe_core.positional_encoding

    def counted(count: int, d: int, n: float, **kwargs: object) -> np.ndarray:
        computed.append((n, kwargs["start"], count))
        return encoding(count, d, n, **kwargs)

    monkeypatch.setattr(pe_core, "positional_encoding", counted)
    sc.sinusoid_rows(Settings(d=64, n=100.0, L=5000))(0, 300, 5000)
    sc.sinusoid_rows(Settings(d=64, n=100.0, L=40))(0, 41, 40)
    assert computed == [(100.0, 0, 300)]
    sc.sinusoid_rows(Settings(d=64, n=100.0, L=700))(200, 200, 700)
    assert computed[1:] == [(100.0, 300, 100)]
    sc.sinusoid_rows(Settings(d=64, n=1000.0, L=5000))(0, 10, 5000)
    assert computed[2:] == [(1000.0, 0, 10)]
    np.testing.assert_array_equal(sc.sinusoid_rows(Settings(d=64, n=100.0, L=9))(0, 400, 9),
                                  encoding(400, 64, 100.0))


def test_the_sinusoids_determinism_is_two_computations_not_a_kept_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheme keeps the rows it computed, but the determinism criterion computes them again:
    an encoding that changed between two calls must fail it."""
    calls = iter(range(1_000_000))
    encoding = pe_core.positional_encoding

    def drifting(*args: object, **kwargs: object) -> np.ndarray:
        return encoding(*args, **kwargs) + next(calls) * 1e-12

    monkeypatch.setattr(pe_core, "positional_encoding", drifting)
    card = sc.evaluate(Settings(d=16, L=40))
    deterministic = dict(card.results)["sinusoid"][list(sc.CRITERIA).index("deterministic")]
    assert not deterministic.passed and deterministic.value > 0


def test_learned_table_rows_are_the_seeded_table_and_stop_at_its_length() -> None:
    rows = sc.learned_rows(50, 16)
    table = np.random.default_rng(sc.LEARNED_SEED).standard_normal((50, 16))
    np.testing.assert_array_equal(rows(10, 20, 50), table[10:30])
    np.testing.assert_array_equal(rows(0, 50, 999), table)  # the sentence length does not matter
    with pytest.raises(criteria.NoCodeError):
        rows(45, 6, 100)


@settings(max_examples=60, deadline=None)
@given(reads=st.lists(st.tuples(st.integers(1, 80), st.integers(0, 79), st.integers(1, 80)), min_size=1, max_size=6),
       d=st.integers(1, 9))
def test_learned_table_rows_read_in_any_order_are_the_table_drawn_at_once(reads, d) -> None:
    # Tables of any length share the rows drawn for their d; drawn in parts as reads reach further
    # (the rows after those drawn), they are the table's.
    sc._learned_stream.cache_clear()
    table = np.random.default_rng(sc.LEARNED_SEED).standard_normal((80, d))
    for trained, start, count in reads:
        rows = sc.learned_rows(trained, d)
        if start >= trained:
            with pytest.raises(criteria.NoCodeError):
                rows(start, 1, trained)
            continue
        count = min(count, trained - start)
        got = rows(start, count, trained)
        np.testing.assert_array_equal(got, table[start : start + count])
        with pytest.raises(ValueError, match="read-only"):
            got[:] = np.nan
    np.testing.assert_array_equal(sc.learned_rows(80, d)(0, 80, 80), table)


def test_learned_rows_read_by_many_threads_at_once_are_the_table() -> None:
    # A class's runs are threads: each extending the shared rows at once must not interleave the stream.
    sc._learned_stream.cache_clear()
    d, trained = 64, 4000
    table = np.random.default_rng(sc.LEARNED_SEED).standard_normal((trained, d))
    reaches = [1 + 97 * thread for thread in range(8)]
    start = threading.Barrier(len(reaches), timeout=60)

    def read(reach: int) -> np.ndarray:
        start.wait()
        rows = sc.learned_rows(trained, d)
        return np.concatenate([rows(0, count, trained) for count in range(reach, trained + 1, 8 * 97)])

    with ThreadPoolExecutor(len(reaches)) as pool:
        reads = list(pool.map(read, reaches))
    for reach, got in zip(reaches, reads, strict=True):
        expected = np.concatenate([table[:count] for count in range(reach, trained + 1, 8 * 97)])
        np.testing.assert_array_equal(got, expected)


# --- the scorecard at the defaults: seed 004's verdicts ---------------------------------


@pytest.fixture(scope="module")
def default_card() -> sc.Scorecard:
    return sc.evaluate(Settings(), 1)


def test_verdicts_at_the_defaults(default_card: sc.Scorecard) -> None:
    # unique, bounded, same distance, deterministic, defined beyond L, linear shift
    assert verdicts(default_card) == {
        "sinusoid": "111111",
        "integer": "101110",  # unbounded; k + 1 is affine, not linear
        "scaled": "110110",  # the step depends on the length
        "binary": "110110",  # Hamming steps vary; no linear +1
        "learned": "110100",  # random steps; no row at L; no map beyond the fitted rows
    }


def test_numbers_at_the_defaults_match_independent_formulas(default_card: sc.Scorecard) -> None:
    L, d = 100, 128
    get = default_card.get
    P = pe_core.positional_encoding(L, d)
    assert get("sinusoid", "unique").value == pytest.approx(all_pairs_min_distance(P), rel=1e-12)
    assert get("integer", "unique").value == 1.0
    assert get("scaled", "unique").value == pytest.approx(1 / (L - 1), rel=1e-12)
    assert get("binary", "unique").value == 1.0
    table = np.random.default_rng(0).standard_normal((L, d))
    assert get("learned", "unique").value == pytest.approx(all_pairs_min_distance(table), rel=1e-12)
    assert get("integer", "bounded").value == 10 * L  # seed 004: unbounded
    assert get("sinusoid", "bounded").value == 1.0
    assert get("learned", "bounded").value == pytest.approx(np.abs(table).max())
    # seed 004: offset 1 is 1/(L-1) in a sentence of L and 1/(2L-1) in one of 2L.
    assert get("scaled", "consistent").value == pytest.approx(1 / (L - 1) - 1 / (2 * L - 1), rel=1e-9)
    assert "0.0101010101 at L=100" in get("scaled", "consistent").reason
    assert "0.005025125628 at L=200" in get("scaled", "consistent").reason
    assert get("integer", "consistent").value == 0.0
    assert get("learned", "defined").value == L and "No code for position 100" in get("learned", "defined").reason
    assert math.isinf(get("binary", "defined").value)
    assert "needs 10 columns where positions 0..99 need 7" in get("binary", "defined").reason
    assert get("sinusoid", "shift").value < 1e-13
    assert all(get(key, "deterministic").value == 0.0 for key in sc.SCHEMES)
    assert "seed 1" in get("learned", "deterministic").reason


def test_shift_residuals_match_a_dense_least_squares_fit(default_card: sc.Scorecard) -> None:
    # Binary: fit M on k = 0..48 (dense lstsq), test on k = 49..97.
    B = pe_core.binary_encoding(100)
    M = np.linalg.lstsq(B[:49], B[1:50], rcond=None)[0]
    expected = np.abs(B[:98] @ M - B[1:99]).max()
    assert default_card.get("binary", "shift").value == pytest.approx(expected, rel=1e-9)
    # Integer: the best c with c k = k + 1 on k = 0..48, tested on 0..97.
    k = np.arange(98.0)
    c = (k[:49] @ (k[:49] + 1)) / (k[:49] @ k[:49])
    assert default_card.get("integer", "shift").value == pytest.approx(np.abs(c * k - (k + 1)).max(), rel=1e-9)
    # Learned: fewer rows than columns, so the fit is exact on its rows and fails on the others.
    reason = default_card.get("learned", "shift").reason
    assert "on those pairs and" in reason and "which it was not fitted on" in reason


def test_least_squares_image_is_the_dense_fit_either_way() -> None:
    rng = np.random.default_rng(3)
    for rows, width, fit in [(40, 6, 20), (40, 30, 10)]:
        X, Y = rng.standard_normal((rows, width)), rng.standard_normal((rows, width))
        M = np.linalg.lstsq(X[:fit], Y[:fit], rcond=None)[0]
        np.testing.assert_allclose(criteria.least_squares_image(X, Y, fit), X @ M, atol=1e-10)


def test_seed004_facts_say_it_with_numbers(default_card: sc.Scorecard) -> None:
    facts = " ".join(sc.seed004_facts(default_card))
    assert "1,000 at position 1,000" in facts
    assert "offset 1 is 0.0101 at L=100 but 0.005025 at L=200" in facts
    assert "positions 0..99 and none for position 100" in facts


def test_tables_for_display_and_download(default_card: sc.Scorecard) -> None:
    shown = sc.display_table(default_card)
    assert list(shown.columns) == list(sc.CRITERIA.values()) and list(shown.index) == list(sc.SCHEMES.values())
    assert shown.loc[sc.SCHEMES["integer"], "Bounded"] == "✗ 1000"
    assert shown.loc[sc.SCHEMES["learned"], "Defined beyond L"] == "✗ 100"
    assert shown.loc[sc.SCHEMES["sinusoid"], "Defined beyond L"] == "✓ none"
    numbers = sc.numbers_table(default_card)
    assert numbers.shape == (5, 12) and numbers.to_numpy().dtype == np.float64
    np.save(io.BytesIO(), numbers.to_numpy(), allow_pickle=False)  # the NPY download works


def test_reasons_are_one_markdown_text_per_scheme(default_card: sc.Scorecard) -> None:
    measurements = dict(default_card.results)["learned"]
    text = sc.reasons_markdown(measurements)
    blocks = text.split("\n\n")
    assert len(blocks) == len(sc.CRITERIA)
    for block, criterion, m in zip(blocks, sc.CRITERIA.values(), measurements, strict=True):
        verdict, reason = block.split("  \n")
        assert verdict == f"**{criterion}** " + (":green[✓ pass]" if m.passed else ":red[✗ fail]")
        # The reason in small grey type, its brackets escaped: none can close the directive's label.
        assert reason.startswith(":small[:gray[") and reason.endswith("]]")
        label = reason.removeprefix(":small[:gray[").removesuffix("]]")
        assert label.replace("\\[", "").replace("\\]", "").count("[") == 0
        assert label.replace("\\[", "[").replace("\\]", "]") == m.reason
    assert "\\[" in sc.reasons_markdown(dict(default_card.results)["sinusoid"])  # ||P[k+1] - P[k]||


# --- bounded work ------------------------------------------------------------------------


def test_plan_bounds_the_work_at_the_largest_settings() -> None:
    plans = sc.plan(Settings(d=2048, L=16384), sc.MAX_OFFSET)
    for key, p in plans.items():
        if p.unique_sample is not None:
            assert p.unique_sample**2 * p.width <= sc.PAIRS_CELLS
        assert sum(count for _, count in p.bounded_ranges) * p.width <= sc.SAMPLE_CELLS, key
        assert p.shift_fit * p.width <= sc.SHIFT_CELLS and p.shift_test <= p.shift_fit
    learned = plans["learned"]
    assert learned.bounded_ranges == ((0, sc.SAMPLE_CELLS // 2048),) and learned.deterministic_starts == (0,)
    assert plans["sinusoid"].bounded_ranges == ((0, 1024), (16384 - 1024, 1024))


def test_offset_is_clamped() -> None:
    assert [sc.clamp_offset(x, 100) for x in (-5, 0, 1, 50, 99, 10**9)] == [1, 1, 1, 50, 99, 99]
    assert sc.clamp_offset(7, 1) == 1 and sc.clamp_offset(10**9, 16384) == sc.MAX_OFFSET


def test_one_position_is_handled() -> None:
    card = sc.evaluate(Settings(L=1), 1)
    assert math.isinf(card.get("sinusoid", "unique").value)
    assert card.get("sinusoid", "consistent").passed  # measured in a longer sentence
    assert math.isnan(card.get("learned", "consistent").value) and not card.get("learned", "consistent").passed
    assert math.isnan(card.get("learned", "shift").value)
    assert sc.distance_by_offset(Settings(L=1))[0].size == 0


# --- what does not depend on L, measured once ---------------------------------------------

L_FREE_CACHES = (sc.learned_closest_pair, sc._length_free_shift, sc._learned_seed_note)


def clear_l_free_caches() -> None:
    for cache in L_FREE_CACHES:
        cache.cache_clear()


def test_measurements_that_do_not_depend_on_L_are_measured_once() -> None:
    clear_l_free_caches()
    first = sc.evaluate(Settings(d=64, L=3000), 1)
    misses = [cache.cache_info().misses for cache in L_FREE_CACHES]
    moved = sc.evaluate(Settings(d=64, L=3100), 1)  # an L step (binary codes keep 12 bits)
    assert [cache.cache_info().misses for cache in L_FREE_CACHES] == misses
    assert all(cache.cache_info().hits >= 1 for cache in L_FREE_CACHES)
    other = sc.evaluate(Settings(d=66, L=3100), 1)  # another d: all again
    assert [cache.cache_info().misses - before for cache, before in zip(L_FREE_CACHES, misses, strict=True)] == [
        1, 2, 1]
    assert other.get("learned", "unique").value != moved.get("learned", "unique").value
    assert other.get("learned", "shift").value != moved.get("learned", "shift").value
    # Not served stale: each card is the one measured from empty caches.
    for card in (first, moved, other):
        clear_l_free_caches()
        assert repr(sc.evaluate(card.settings, card.offset)) == repr(card)


@pytest.mark.parametrize("count", [1, 2, 3, 100, 257, 1024, 1548])
def test_binary_closest_pair_is_the_same_in_any_longer_sentence(count: int) -> None:
    # The closed form against the walk over every offset, in sentences of every length from the count's own.
    for length in (count, count + 1, 5000, 2**20):
        assert sc.binary_closest_pair(count) == criteria.closest_pair_of(sc.binary_rows, count, length)


def test_learned_closest_pair_is_the_same_for_any_table_length() -> None:
    for d, count in ((1, 50), (16, 200), (300, 334)):
        for trained in (count, count + 7, 4000):
            assert sc.learned_closest_pair(d, count) == criteria.closest_pair_of(sc.learned_rows(trained, d), count,
                                                                                 trained)


@pytest.mark.parametrize(
    ("settings", "offset"),
    [
        (Settings(), 1), (Settings(d=64, L=3000), 3), (Settings(d=300, L=2100), 1), (Settings(d=31, L=2100), 2),
        (Settings(d=512, L=9000, n=100.0, layout="concatenated"), 256), (Settings(d=8, L=5), 2),
        (Settings(d=7, L=30, convention="tensor2tensor"), 5), (Settings(d=128, L=1030), 4),
    ],
)
def test_shift_in_the_shortest_sentence_is_the_shift_at_L(settings: Settings, offset: int) -> None:
    plans = sc.plan(settings, offset)
    for key in sc._LENGTH_FREE_SHIFT:
        p = plans[key]
        at_l = sc._linear_shift(key, sc.scheme_rows(settings)[key], settings, offset, length=p.shift_length,
                                fit=p.shift_fit, test=p.shift_test)
        if p.shift_fit >= 1 and p.shift_test >= 1:
            shortest = sc._length_free_shift.__wrapped__(key, replace(settings, L=offset + 2 * p.shift_fit), offset,
                                                         p.shift_fit, p.shift_test)
            assert repr(shortest) == repr(at_l), key


def test_distances_that_do_not_depend_on_L_are_computed_once() -> None:
    sc._distances_free_of_length.cache_clear()
    cards = {(d, L): sc.distance_by_offset(Settings(d=d, L=L)) for d, L in ((64, 3000), (64, 3100), (66, 3100))}
    info = sc._distances_free_of_length.cache_info()
    assert (info.hits, info.misses) == (1, 2)  # the L step was a hit, the other d a miss
    for (d, L), (offsets, series) in cards.items():  # not stale: each series as computed at its own L
        settings = Settings(d=d, L=L)
        for key, rows in sc.scheme_rows(settings).items():
            P = rows(0, offsets.size + 1, L)
            distance = np.linalg.norm(P[1:] - P[0], axis=1)
            np.testing.assert_array_equal(series[sc.SCHEMES[key]], distance / distance[0])
    assert not np.array_equal(cards[64, 3100][1][sc.SCHEMES["learned"]], cards[66, 3100][1][sc.SCHEMES["learned"]])


# --- the chart --------------------------------------------------------------------------


def test_distance_by_offset_matches_independent_formulas() -> None:
    settings = Settings(d=64, L=40)
    offsets, series = sc.distance_by_offset(settings)
    assert offsets.tolist() == list(range(1, 40))
    np.testing.assert_allclose(series[sc.SCHEMES["integer"]], offsets, rtol=1e-12)
    np.testing.assert_allclose(series[sc.SCHEMES["scaled"]], offsets, rtol=1e-12)
    longer = next(v for name, v in series.items() if "2L" in name)
    np.testing.assert_allclose(longer, offsets * 39 / 79, rtol=1e-12)
    popcount = np.array([bin(int(t)).count("1") for t in offsets])
    np.testing.assert_allclose(series[sc.SCHEMES["binary"]], np.sqrt(popcount), rtol=1e-12)
    sse = pe_core.sse_by_offset(offsets.astype(float), 64)
    np.testing.assert_allclose(series[sc.SCHEMES["sinusoid"]], np.sqrt(sse / sse[0]), rtol=1e-9)
    assert set(sc.chart_dashes(series)) == {sc.SCHEMES["scaled"], next(n for n in series if "2L" in n)}
    fig = sc.scheme_distance_figure(offsets, series, title="t", dashes=sc.chart_dashes(series))
    assert go.Figure(fig.to_dict()).to_dict() == fig.to_dict()  # built without validation: what Plotly validates
    assert [trace.line.dash for trace in fig.data] == [None, None, "dash", "dot", None, None]


# --- reproduce this ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "offset"),
    [
        (Settings(), 1),
        (Settings(L=1), 1),
        (Settings(d=64, n=100.0, L=300, layout="concatenated", convention="tensor2tensor"), 7),
        # Sampled paths: closed-form uniqueness, first/last rows, fewer fit rows than columns.
        (Settings(d=1024, n=1e8, L=4500), 3),
    ],
    ids=["defaults", "one-position", "t2t-concatenated", "sampled"],
)
def test_snippet_reproduces_the_table_up_to_the_angles_rounding(
    settings: Settings, offset: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = sc.snippet(settings, offset)
    assert "pe_core" not in code and "explorer" not in code
    result = run_snippet(code)["result"]["scorecard_table"]
    app = sc.numbers_table(sc.evaluate(settings, offset)).to_numpy()
    # Every check's logic, bit for bit: the app run with the snippet's textbook angles fl(k w).
    monkeypatch.setattr(pe_core.encoding, "sin_cos_outer", textbook_sin_cos_outer)
    monkeypatch.setattr(pe_core.relative, "sin_cos_outer", textbook_sin_cos_outer)
    monkeypatch.setattr(pe_core.similarity, "dot_by_offset", textbook_dot_by_offset)
    criteria._sse_by_offset_up_to_max.cache_clear()
    sc._length_free_shift.cache_clear()  # the sinusoid's shift, measured with pe_core's angles
    sc._sinusoid_first_rows.cache_clear()  # and its first rows, computed with them
    np.testing.assert_array_equal(result, sc.numbers_table(sc.evaluate(settings, offset)).to_numpy())
    monkeypatch.undo()
    criteria._sse_by_offset_up_to_max.cache_clear()
    sc._length_free_shift.cache_clear()
    sc._sinusoid_first_rows.cache_clear()
    # The app's own numbers: only the sinusoid's measured values move, and by no more than the rounding
    # of angles up to FAR = 10 L rad (w_0 = 1) allows: t per value, 2 t sqrt(d) per distance between two
    # rows, twice that for a spread of distances, (1 + sqrt(2)) t for a rotated row minus a row.
    sinusoid, count = list(sc.SCHEMES).index("sinusoid"), len(sc.CRITERIA)
    np.testing.assert_array_equal(np.delete(app, sinusoid, axis=0), np.delete(result, sinusoid, axis=0))
    np.testing.assert_array_equal(app[sinusoid, count:], result[sinusoid, count:])  # passes (1/0)
    t = angle_rounding_tolerance(sc.FAR_FACTOR * settings.L)
    distance = 2 * t * math.sqrt(settings.d)
    bound = {"unique": distance, "bounded": t, "consistent": 2 * distance, "deterministic": 0.0, "defined": 0.0,
             "shift": (1 + math.sqrt(2)) * t}
    assert list(bound) == list(sc.CRITERIA)
    # Plus each side's own rounding of a sum over the d columns.
    ours, theirs = app[sinusoid, :count], result[sinusoid, :count]
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(ours[~finite], theirs[~finite])
    allowed = np.array(list(bound.values())) + settings.d * np.finfo(float).eps * np.abs(theirs)
    np.testing.assert_array_less(np.abs(ours[finite] - theirs[finite]), allowed[finite] + np.finfo(float).tiny)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 600), d=st.integers(1, 3000))
def test_learned_largest_abs_is_the_maximum_of_the_drawn_table(rows: int, d: int) -> None:
    # Rows of any width are consecutive values of one random stream: its running maximum
    # gives the table's, bit for bit.
    assume(rows * d <= sc.SAMPLE_CELLS)
    table = np.random.default_rng(sc.LEARNED_SEED).standard_normal((rows, d))
    assert sc.learned_largest_abs([(0, rows)], d) == float(np.abs(table).max())
    assert sc.learned_largest_abs([(0, rows), (rows // 2, 1)], d) == float(np.abs(table).max())
