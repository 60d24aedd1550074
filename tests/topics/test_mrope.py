"""Images and video (M-RoPE)'s topic: each preset's view from its config.json, the pairs' axes against the
sections written out, the image grid's positions, the scores against rotated all-ones vectors and their
dependence on the offsets alone (hypothesis), text untouched by a misreading, and the reproduce-this code (NumPy
and PyTorch) against the page's downloads and numbers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.snippets import run_snippet

import pe_core
from explorer.model_configs import MROPE_PRESETS
from explorer.topics import mrope

#: Each preset's public values (explorer/data/model_configs; tests/shared/test_mrope_presets.py has their sources).
PUBLIC = {
    "qwen2-vl-7b-instruct": (128, 1e6, (16, 24, 24), False, 2, None),
    "qwen2.5-vl-7b-instruct": (128, 1e6, (16, 24, 24), False, 2, 2),
    "qwen3-vl-8b-instruct": (128, 5e6, (24, 20, 20), True, 2, None),
}


def view_of(key: str, **sequence) -> mrope.MropeView:
    return mrope.with_sequence(mrope.preset_view(key), **sequence)


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_each_preset_is_read_from_its_config(key: str) -> None:
    view = mrope.preset_view(key)
    assert (view.d, view.base, view.sections, view.interleaved, view.merge, view.tokens_per_second) == PUBLIC[key]


def axes_written_out(sections: tuple[int, int, int], interleaved: bool) -> list[int]:
    """PRODUCT.md's rule: blocked, sections[0] pairs temporal, sections[1] height, the rest width; interleaved,
    height where j % 3 == 1 and j < 3 sections[1], width where j % 3 == 2 and j < 3 sections[2], else temporal."""
    pairs = sum(sections)
    if not interleaved:
        return [0] * sections[0] + [1] * sections[1] + [2] * sections[2]
    return [1 if j % 3 == 1 and j < 3 * sections[1] else 2 if j % 3 == 2 and j < 3 * sections[2] else 0
            for j in range(pairs)]


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_the_pairs_axes_are_the_sections_written_out_and_pe_cores_for_the_models_layout(key: str) -> None:
    view = mrope.preset_view(key)
    assert mrope.pair_axes(view).tolist() == axes_written_out(view.sections, view.interleaved)
    for interleaved in (False, True):
        assert mrope.sliced_axes(view.d, view.sections, interleaved).tolist() == axes_written_out(
            view.sections, interleaved)
    assert mrope.misread_axes(view).tolist() == axes_written_out(view.sections, not view.interleaved)


def test_the_image_sits_at_its_start_and_text_resumes_after_its_longer_side() -> None:
    view = view_of("qwen2-vl-7b-instruct", text_before=5, image_rows=3, image_cols=7, text_between=2)
    ids = mrope.positions(view)
    grid = mrope.image_grid(view, ids)
    assert (grid[0] == 5).all()
    assert (grid[1] == 5 + np.arange(3)[:, None]).all() and (grid[2] == 5 + np.arange(7)[None, :]).all()
    index, position = mrope.text_resumes(view, ids)[0]
    assert index == 5 + 21 and position == 5 + 7 and (ids[:, index] == position).all()


def cache_score(view: mrope.MropeView, ids: np.ndarray, m: int, n: int) -> float:
    """The same score from pe_core.mrope_cache's cos and sin (half layout): sum over pairs of 2 (C_m C_n + S_m S_n)."""
    cos, sin = pe_core.mrope_cache(ids[:, [m, n]], view.d, view.base, sections=view.sections,
                                   interleaved=view.interleaved)
    half = view.d // 2
    return float(2 * (cos[0, :half] @ cos[1, :half] + sin[0, :half] @ sin[1, :half]))


def rotated_ones_score(view: mrope.MropeView, ids: np.ndarray, m: int, n: int) -> float:
    """All-ones q at token m and k at token n, each pair turned by its axis's position (half layout), dotted."""
    theta = view.base ** -(np.arange(0, view.d, 2) / view.d)
    axes = np.array(axes_written_out(view.sections, view.interleaved))
    angle_m, angle_n = ids[axes, m] * theta, ids[axes, n] * theta
    q = np.concatenate([np.cos(angle_m) - np.sin(angle_m), np.sin(angle_m) + np.cos(angle_m)])
    k = np.concatenate([np.cos(angle_n) - np.sin(angle_n), np.sin(angle_n) + np.cos(angle_n)])
    return float(q @ k)


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_the_scores_are_rotated_all_ones_vectors_dotted(key: str) -> None:
    view = view_of(key, image_rows=4, image_cols=5)
    ids = mrope.positions(view)
    scores = mrope.image_scores(view, ids, 1, 2)
    start = view.image_span()[0]
    for row, col in ((0, 0), (1, 2), (3, 4), (2, 0)):
        expected = rotated_ones_score(view, ids, start + 1 * 5 + 2, start + row * 5 + col)
        assert scores[row, col] == pytest.approx(expected, rel=1e-10, abs=1e-9)
        assert scores[row, col] == pytest.approx(cache_score(view, ids, start + 7, start + row * 5 + col), abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(key=st.sampled_from(MROPE_PRESETS), row=st.integers(0, 5), col=st.integers(0, 6),
       shift_row=st.integers(-2, 2), shift_col=st.integers(-3, 3))
def test_a_score_depends_on_the_offsets_alone(key: str, row: int, col: int, shift_row: int, shift_col: int) -> None:
    view = view_of(key, image_rows=6, image_cols=7)
    ids = mrope.positions(view)
    before = mrope.image_scores(view, ids, row, col)
    moved_row, moved_col = (row + shift_row) % 6, (col + shift_col) % 7
    after = mrope.image_scores(view, ids, moved_row, moved_col)
    # the key the same (δh, δw) from the moved query as a key from the query, where both are inside the image
    for key_row in range(6):
        for key_col in range(7):
            other_row, other_col = key_row + moved_row - row, key_col + moved_col - col
            if 0 <= other_row < 6 and 0 <= other_col < 7:
                assert after[other_row, other_col] == pytest.approx(before[key_row, key_col], abs=1e-9)


@pytest.mark.parametrize("key", MROPE_PRESETS)
def test_misreading_the_sections_leaves_text_alone_and_changes_the_image(key: str) -> None:
    view = mrope.preset_view(key)
    ids = mrope.positions(view)
    assert mrope.text_misread(view, ids) < 1e-9
    assert np.abs(mrope.image_scores(view, ids) - mrope.image_scores(view, ids, misread=True)).max() > 1.0


@pytest.mark.parametrize("library", ["numpy", "torch"])
@pytest.mark.parametrize("key", MROPE_PRESETS)
@pytest.mark.parametrize("sequence", [{}, {"text_before": 0, "text_between": 0, "text_after": 0, "seconds": 0.5}])
def test_the_snippet_computes_every_download(key: str, library: str, sequence: dict) -> None:
    view = mrope.with_query(view_of(key, **sequence), 2, 7)
    ids = mrope.positions(view)
    namespace = run_snippet(mrope.mrope_code(view, library))
    result = {name: np.asarray(value) for name, value in namespace["result"].items()}
    np.testing.assert_array_equal(result["mrope_rows"], mrope.positions_table(view, ids).to_numpy())
    np.testing.assert_array_equal(result["mrope_axes"], mrope.axes_table(view).to_numpy())
    np.testing.assert_allclose(result["mrope_scores"], mrope.scores_table(view, ids).to_numpy(), rtol=1e-12,
                               atol=1e-9)
    # the snippet's cos and sin (written out there) are pe_core's mrope_cache, as the download holds them
    np.testing.assert_allclose(result["mrope_cache"], mrope.cache_table(view, ids).to_numpy(), rtol=0, atol=1e-12)


def test_play_moves_the_query_within_the_image_and_keeps_to_its_budget() -> None:
    view = view_of("qwen3-vl-8b-instruct", image_rows=64, image_cols=64)
    path = mrope.play_path(view, 13)
    assert 2 <= len(path) <= 13 and all(0 <= r < 64 and 0 <= c < 64 for r, c in path)
    figure = mrope.score_figure(view, mrope.positions(view), title="t")
    assert len(figure.frame_names) <= 14


def test_a_view_keeps_its_query_inside_a_smaller_image() -> None:
    view = replace(mrope.preset_view("qwen2-vl-7b-instruct"), query_row=7, query_col=11)
    smaller = mrope.with_sequence(view, image_rows=2, image_cols=3)
    assert (smaller.query_row, smaller.query_col) == (1, 2)
