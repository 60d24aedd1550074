"""Play buttons: the frames of the animated figures (Waves, Relative positions) against
formulas written out here, their controls, and their size at the largest settings."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from support.app_runs import MAX_CHART_BYTES, MAX_PAGE_BYTES, element_bytes, open_url, play_open
from support.independent import encoding, payload, rates

import pe_core
from explorer import animation
from explorer.figures import LINE_MAX_POINTS
from explorer.settings import D_MAX, L_MAX, N_MAX
from explorer.topics import relative, similarity, waves

#: float32 data: 7 significant digits.
F32 = 1e-6


def frames_bytes(fig: go.Figure) -> int:
    """Bytes of a figure's frames in its JSON: what Play costs on top of the still chart."""
    return len(json.dumps(json.loads(fig.to_json())["frames"]))


def slider_steps(fig: go.Figure) -> list[dict]:
    return [step.to_plotly_json() for step in fig.layout.sliders[0].steps]


def assert_play_controls(fig: go.Figure, *, redraw: bool) -> None:
    """Play/Pause buttons animate the frames; the slider has a step per frame, in order."""
    play, pause = fig.layout.updatemenus[0].buttons
    assert (play.method, play.args[0], play.args[1]["frame"]["redraw"]) == ("animate", None, redraw)
    assert (pause.method, list(pause.args[0])) == ("animate", [None])
    assert play.args[1]["frame"]["duration"] > 0 and pause.args[1]["frame"]["duration"] == 0
    names = [frame.name for frame in fig.frames]
    assert [list(step["args"][0]) for step in slider_steps(fig)] == [[name] for name in names]
    assert all(step["args"][1]["frame"]["redraw"] == redraw for step in slider_steps(fig))


# --- the frame budget ------------------------------------------------------------------------


@pytest.mark.parametrize("values", [0, 1, 100, 1024, 768, 10**6])
def test_frame_count_fits_the_budget(values: int) -> None:
    count = animation.frame_count(values)
    assert 1 <= count <= animation.PLAY_MAX_FRAMES
    if count > 1:  # each frame's float32 values as base64, plus its overhead
        assert count * (values * 4 * 4 / 3 + animation.FRAME_OVERHEAD_BYTES) <= animation.PLAY_MAX_BYTES
    if count < animation.PLAY_MAX_FRAMES:  # one more frame would not fit
        assert (count + 1) * (values * 4 * 4 / 3 + animation.FRAME_OVERHEAD_BYTES) > animation.PLAY_MAX_BYTES


def test_frame_count_rejects_negative_sizes() -> None:
    with pytest.raises(ValueError, match="0 or more"):
        animation.frame_count(-1)


def test_add_play_rejects_bad_frames() -> None:
    frame = go.Frame(data=[go.Scatter(y=[0.0])], name="a")
    with pytest.raises(ValueError, match="at least one frame"):
        animation.add_play(go.Figure(), [], label="k", redraw=False)
    with pytest.raises(ValueError, match="must differ"):
        animation.add_play(go.Figure(), [frame, frame], label="k", redraw=False)
    with pytest.raises(ValueError, match="active"):
        animation.add_play(go.Figure(), [frame], label="k", redraw=False, active=1)
    with pytest.raises(ValueError, match="labels"):
        animation.add_play(go.Figure(), [frame], label="k", redraw=False, labels=["x", "y"])


# --- Waves: k sweeping seed 000's profile -------------------------------------------------------


@pytest.mark.parametrize(("d", "n", "pairs"), [(512, 10000.0, 100), (128, 10000.0, 64), (D_MAX, N_MAX, D_MAX // 2)])
def test_profile_frames_are_sin_k_w_for_each_k(d: int, n: float, pairs: int) -> None:
    w = rates(d, n)[:pairs]
    fig = waves.profile_play_figure(w, title="t")
    swept = [int(frame.name) for frame in fig.frames]
    assert swept == list(range(len(swept))) == waves.profile_play_positions(pairs).tolist()
    assert len(swept) == animation.frame_count(pairs) >= 2
    for frame in fig.frames:
        k = int(frame.name)
        np.testing.assert_allclose(np.asarray(frame.data[0].y, dtype=float), np.sin(k * w), atol=F32)
        assert frame.traces == (0,) and frame.data[0].meta == k
    # Before Play the chart shows the first frame, k = 0: flat at sin(0) = 0.
    np.testing.assert_array_equal(np.asarray(fig.data[0].y), np.zeros(pairs))
    assert_play_controls(fig, redraw=False)
    assert payload(fig) <= MAX_CHART_BYTES and frames_bytes(fig) <= animation.PLAY_MAX_BYTES


# --- Waves: a pair turning on the unit circle -------------------------------------------------


@pytest.mark.parametrize(("k", "L"), [(10, 100), (0, 1), (3, 4), (16383, L_MAX), (0, L_MAX), (95, 100)])
def test_circle_play_positions_are_consecutive_and_hold_k(k: int, L: int) -> None:
    swept = waves.circle_play_positions(k, L)
    assert swept[0] >= 0 and swept[-1] <= L - 1 and k in swept
    assert np.all(np.diff(swept) == 1)
    assert swept.size == min(L, animation.PLAY_MAX_FRAMES)
    if swept[-1] < L - 1:  # room left after: the sweep starts at k
        assert swept[0] == k


def test_circle_play_positions_reject_a_k_outside_the_positions() -> None:
    with pytest.raises(ValueError, match=r"position 0\.\.99"):
        waves.circle_play_positions(100, 100)


@pytest.mark.parametrize(("pair", "k", "L"), [(0, 10, 100), (3, 99, 100), (0, 16383, L_MAX)])
def test_circle_frames_turn_the_point_by_w_per_position(pair: int, k: int, L: int) -> None:
    w_i = float(rates(128)[pair])
    swept = waves.circle_play_positions(k, L)
    fig = waves.unit_circle_play_figure(w_i, swept, pair=pair, shown=k)
    assert [int(frame.name) for frame in fig.frames] == swept.tolist()
    for frame in fig.frames:
        position = int(frame.name)
        trail, point, text = frame.data
        trail_positions = np.arange(swept[0], position + 1)
        np.testing.assert_allclose(np.asarray(trail.x, dtype=float), np.cos(trail_positions * w_i), atol=F32)
        np.testing.assert_allclose(np.asarray(trail.y, dtype=float), np.sin(trail_positions * w_i), atol=F32)
        np.testing.assert_array_equal(np.asarray(trail.marker.color), trail_positions)
        np.testing.assert_allclose([point.x[1], point.y[1]], [np.cos(position * w_i), np.sin(position * w_i)])
        degrees = np.degrees(position * w_i)
        assert text.text[0].startswith(f"k = {position}:") and f"{degrees % 360:.2f}°" in text.text[0]
    # Before Play it shows position k, and the slider starts there.
    assert fig.data[2].x[1] == pytest.approx(np.cos(k * w_i))
    assert fig.layout.sliders[0].active == k - swept[0]
    assert_play_controls(fig, redraw=True)
    assert payload(fig) <= MAX_CHART_BYTES and frames_bytes(fig) <= animation.PLAY_MAX_BYTES


def test_circle_play_rejects_bad_positions() -> None:
    with pytest.raises(ValueError, match="consecutive"):
        waves.unit_circle_play_figure(1.0, np.array([0, 2]), pair=0, shown=0)
    with pytest.raises(ValueError, match="shown"):
        waves.unit_circle_play_figure(1.0, np.arange(5), pair=0, shown=7)


# --- Relative positions: delta sweeping the shifted map ---------------------------------------


@pytest.mark.parametrize(("delta", "frames", "expected"), [
    (-10, 60, list(range(0, -11, -1))), (1, 60, [0, 1]), (0, 60, [0]), (5, 3, [0, 2, 5]),
])
def test_shift_play_deltas_go_from_0_to_delta(delta: int, frames: int, expected: list[int]) -> None:
    assert relative.shift_play_deltas(delta, frames).tolist() == expected


def test_shift_play_deltas_spread_a_large_offset_evenly() -> None:
    swept = relative.shift_play_deltas(L_MAX - 1, 60)
    assert swept.size == 60 and swept[0] == 0 and swept[-1] == L_MAX - 1
    steps = np.diff(swept)
    assert steps.min() >= (L_MAX - 1) // 59 - 1 and steps.max() <= (L_MAX - 1) // 59 + 2


@pytest.mark.parametrize(("L", "d", "n", "layout", "convention", "delta"), [
    (50, 512, 10000.0, "concatenated", "tensor2tensor", -10),  # seed 001's shift by -10
    (100, 128, 10000.0, "interleaved", "paper", 7),
    (L_MAX, D_MAX, N_MAX, "interleaved", "paper", L_MAX - 1),
    (L_MAX, D_MAX, 2.0, "concatenated", "paper", -(L_MAX - 1)),
])
def test_shift_frames_are_the_encoding_of_k_plus_delta(
    L: int, d: int, n: float, layout: str, convention: str, delta: int
) -> None:
    fig = relative.shift_play_figure(L, d, n, layout=layout, convention=convention, delta=delta)
    rows = min(L, relative.SHIFT_PLAY_ROWS)
    # The window: the first SHIFT_PLAY_COLS dimensions, sines with their cosines when concatenated.
    half = relative.SHIFT_PLAY_COLS // 2
    dims = np.arange(relative.SHIFT_PLAY_COLS) if layout == "interleaved" else np.r_[0:half, d // 2 : d // 2 + half]
    deltas = [int(frame.name) for frame in fig.frames]
    # To delta, or to SHIFT_PLAY_MIN_SWEEP on its side when delta is nearer 0, delta among the frames.
    end = delta if abs(delta) >= relative.SHIFT_PLAY_MIN_SWEEP else np.sign(delta) * relative.SHIFT_PLAY_MIN_SWEEP
    assert deltas[0] == 0 and deltas[-1] == end and delta in deltas and len(deltas) == len(set(deltas))
    assert len(deltas) <= animation.frame_count(rows * dims.size)
    for frame in fig.frames:
        expected = encoding(rows, d, n, layout, convention, start=int(frame.name))[:, dims]
        assert frame.data[0].type == "heatmap" and frame.traces == (0,) and frame.data[0].meta == int(frame.name)
        np.testing.assert_allclose(np.asarray(frame.data[0].z, dtype=float), expected, atol=1e-6)
    np.testing.assert_allclose(np.asarray(fig.data[0].z, dtype=float),
                               encoding(rows, d, n, layout, convention, start=delta)[:, dims], atol=1e-6)
    assert fig.layout.sliders[0].active == deltas.index(delta)
    # Round, evenly spaced position ticks (they were 0, 4, 8, 12, 16, 19, 23).
    positions = [int(text) for text in fig.layout.yaxis.ticktext]
    assert len(set(np.diff(positions))) == 1 and all(k % 5 == 0 for k in positions), positions
    assert_play_controls(fig, redraw=True)
    assert payload(fig) <= MAX_CHART_BYTES and frames_bytes(fig) <= animation.PLAY_MAX_BYTES


# --- Relative positions: one pair's rotation ----------------------------------------------------


@pytest.mark.parametrize(("theta", "phi"), [(1.0, -10.0), (0.3, 0.5), (2.0, 0.0), (0.7, 1000.25)])
def test_rotation_frames_turn_v_by_growing_angles(theta: float, phi: float) -> None:
    fig = relative.rotation_figure(theta, phi, pair=0, k=1, delta=-10, axis_names=("s", "c"))
    wrapped = (phi + np.pi) % (2 * np.pi) - np.pi  # the shorter way round, in [-pi, pi)
    assert len(fig.frames) == relative.ROTATION_PLAY_FRAMES
    for index, frame in enumerate(fig.frames):
        alpha = wrapped * index / (len(fig.frames) - 1)
        arc, image = frame.data
        assert frame.traces == (1, 3)
        # v W(alpha) for the row vector v = [sin theta, cos theta] is [sin(theta + alpha), cos(theta + alpha)].
        np.testing.assert_allclose([image.x[1], image.y[1]], [np.sin(theta + alpha), np.cos(theta + alpha)],
                                   atol=1e-12)
        np.testing.assert_allclose([arc.x[-1], arc.y[-1]], [0.35 * np.sin(theta + alpha), 0.35 * np.cos(theta + alpha)],
                                   atol=1e-6)  # float32: a drawing
        label = slider_steps(fig)[index]["label"]
        assert label == f"{np.degrees(alpha) + 0.0:.1f}°"
    # Before Play: the image of the page, P[k + delta]'s pair, with the slider at its end.
    np.testing.assert_allclose([fig.data[3].x[1], fig.data[3].y[1]], [np.sin(theta + phi), np.cos(theta + phi)],
                               atol=1e-12)
    assert fig.layout.sliders[0].active == len(fig.frames) - 1
    assert_play_controls(fig, redraw=True)
    assert payload(fig) <= MAX_CHART_BYTES


# --- Similarity: the reference position sweeping ----------------------------------------------


def closed_form_dot(d: int, n: float, L: int) -> np.ndarray:
    """f(t) = Σ_i cos(ω_i t) for t = -(L-1)..L-1."""
    t = np.arange(-(L - 1), L)
    return np.cos(np.multiply.outer(t, rates(d, n))).sum(axis=1)


@pytest.mark.parametrize(("d", "n", "L"), [(512, 10000.0, 50), (128, 10000.0, 100), (D_MAX, N_MAX, L_MAX)])
def test_reference_frames_are_the_dot_products_against_r(d: int, n: float, L: int) -> None:
    f = closed_form_dot(d, n, L)
    fig = similarity.reference_play_figure(f, title="t")
    refs = [int(frame.name) for frame in fig.frames]
    assert refs[0] == 0 and refs[-1] == L - 1 and refs == sorted(set(refs))
    if L <= animation.PLAY_MAX_FRAMES:  # every position (seed 001's 50)
        assert refs == list(range(L))
    else:  # evenly spread whole positions
        assert len(refs) >= 10 and np.ptp(np.diff(refs)) <= 1
    P_small = encoding(min(L, 200), d, n) if L <= 200 else None
    for frame in fig.frames:
        r = int(frame.name)
        line, marker = frame.data
        assert line.meta == r and list(marker.x) == [r, r]
        against_r = f[L - 1 - r : 2 * L - 1 - r]  # P[k]·P[r] = f(k - r) for k = 0..L-1
        if line.x is None:  # drawn whole: x = 0, 1, ...
            assert (line.x0, line.dx) == (0, 1)
            np.testing.assert_allclose(np.asarray(line.y, dtype=float), against_r, rtol=1e-6, atol=1e-4)
            if P_small is not None:  # and the same as measured on the encoding itself
                np.testing.assert_allclose(np.asarray(line.y, dtype=float), P_small @ P_small[r], rtol=1e-6, atol=1e-4)
        else:  # min/max envelope: exact values at the drawn positions, every bin's extremes
            x = np.asarray(line.x).astype(np.int64)
            np.testing.assert_allclose(np.asarray(line.y, dtype=float), against_r[x], rtol=1e-6, atol=1e-3)
            assert x.size <= LINE_MAX_POINTS and against_r.max() == pytest.approx(np.max(line.y), rel=1e-6)
    assert_play_controls(fig, redraw=False)
    assert payload(fig) <= MAX_CHART_BYTES and frames_bytes(fig) <= animation.PLAY_MAX_BYTES


def test_reference_play_rejects_an_even_count_of_offsets() -> None:
    with pytest.raises(ValueError, match="odd count"):
        similarity.reference_play_figure(np.ones(4), title="t")


# --- the Play frames' downloads hold what the frames draw ---------------------------------------


def test_shift_play_table_holds_every_frame() -> None:
    kw = {"layout": "concatenated", "convention": "tensor2tensor", "delta": -10}
    fig = relative.shift_play_figure(50, 512, 10000.0, **kw)
    table = relative.shift_play_table(50, 512, 10000.0, **kw)
    for frame in fig.frames:
        rows = table.xs(int(frame.name), level="offset δ")
        assert rows.index.tolist() == list(range(relative.SHIFT_PLAY_ROWS))
        np.testing.assert_allclose(rows.to_numpy(), np.asarray(frame.data[0].z, dtype=float), atol=1e-6)
    assert table.columns[16] == "dimension 256: cos of pair 0"


def test_rotation_play_table_holds_every_frame() -> None:
    fig = relative.rotation_figure(1.0, -10.0, pair=0, k=1, delta=-10, axis_names=("s", "c"))
    table = relative.rotation_play_table(1.0, -10.0)
    images = np.array([[frame.data[1].x[1], frame.data[1].y[1]] for frame in fig.frames])
    np.testing.assert_allclose(table[["sine component", "cosine component"]].to_numpy(), images, atol=1e-15)
    np.testing.assert_allclose(table["α (rad)"], [frame.data[1].meta for frame in fig.frames])


def test_reference_play_table_holds_every_frame() -> None:
    f = closed_form_dot(128, 10000.0, 100)
    fig = similarity.reference_play_figure(f, title="t")
    table = similarity.reference_play_table(f)
    assert table.columns.tolist() == ["position k", *[f"P[k]·P[{frame.name}]" for frame in fig.frames]]
    for frame in fig.frames:
        np.testing.assert_allclose(table[f"P[k]·P[{frame.name}]"], np.asarray(frame.data[0].y, dtype=float), rtol=1e-6)


# --- whole pages: the largest settings and the longest sweeps ------------------------------------

#: Each page with Play charts at L=16384, d=2048 and the page controls that make its frames largest (its Play open).
LARGEST_PLAY = {
    "waves": {"wave_dims": "1024", "wave_positions": "0,1,2,3,4,5,6,10000000", "k": "16383"},
    "relative": {"delta": "-16383"},
    "similarity": {"ref": "16383"},
}


@pytest.mark.parametrize("path", list(LARGEST_PLAY))
def test_pages_with_play_charts_stay_in_budget_at_the_largest_settings(path: str) -> None:
    at = open_url(path, {"d": str(D_MAX), "L": str(L_MAX), "n": "2", **LARGEST_PLAY[path], **play_open(path)})
    assert not at.exception, [e.value for e in at.exception]
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    animated = [spec for spec in specs if spec.get("frames")]
    assert len(animated) == {"waves": 2, "relative": 2, "similarity": 1}[path]
    sizes = [len(chart.proto.spec.encode()) for chart in at.get("plotly_chart")]
    assert max(sizes) <= MAX_CHART_BYTES and element_bytes(at) <= MAX_PAGE_BYTES, sizes


def _play_figures() -> dict[str, go.Figure]:
    """One of each Play figure, at large settings (frames built unvalidated by animation.frame)."""
    w = pe_core.frequencies(2048)
    offsets = np.arange(-299, 300, dtype=np.float64)
    return {
        "profile": waves.profile_play_figure(w[:1024], title="t"),
        "circle": waves.unit_circle_play_figure(float(w[3]), np.arange(100, 160), pair=3, shown=120),
        "shift": relative.shift_play_figure(16384, 2048, 10000.0, layout="concatenated", convention="paper",
                                            delta=-300),
        "rotation": relative.rotation_figure(float(5 * w[2]), float(-7 * w[2]), pair=2, k=5, delta=-7,
                                             axis_names=("sin", "cos")),
        "reference": similarity.reference_play_figure(pe_core.dot_by_offset(offsets, 64), title="t"),
    }


@pytest.mark.parametrize("name", ["profile", "circle", "shift", "rotation", "reference"])
def test_every_play_figure_is_valid_plotly(name: str) -> None:
    """animation.frame skips Plotly's validation for speed: the whole figure, frames included,
    must still pass it (a misspelt property raises here) and mean the same."""
    fig = _play_figures()[name]
    spec = fig.to_plotly_json()
    checked = go.Figure(spec)  # validated: raises on any property Plotly does not know
    assert len(checked.frames) == len(fig.frames) > 1
    assert json.loads(checked.to_json())["frames"] == json.loads(fig.to_json())["frames"]


def test_an_unvalidated_frame_with_a_wrong_property_is_still_refused() -> None:
    """Plotly checks a frame's property names when the frames are given to the figure."""
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    with pytest.raises(ValueError, match="colour"):
        fig.frames = [animation.frame([{"x": [0, 1], "y": [1, 0], "colour": "red"}], traces=[0], name="0")]
