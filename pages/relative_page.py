"""Relative positions: the encoding of k + delta is a fixed linear map M(delta) of the
encoding of k (seed 001's transition matrix and shifted map; seeds 003 and 004's W)."""

import numpy as np
import streamlit as st

import pe_core
from explorer import animation, figures
from explorer.settings import FULL_MATRIX_CELLS, Settings, format_number
from explorer.topics import relative
from explorer.ui import blocks, cached, controls

# --- this page's cached computations (st.cache_data: shared by every session) ---


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def shift_comparison(
    settings: Settings, delta: int, max_rows: int, max_cols: int
) -> relative.ShiftComparison:
    """P @ M(delta) against PE(k + delta) computed directly (explorer.topics.relative.compare_shift)."""
    return relative.compare_shift(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention, delta=delta,
        max_rows=max_rows, max_cols=max_cols, full_cells=FULL_MATRIX_CELLS,
    )


#: Rows and columns of M drawn at once, and row blocks of each shifted map (see explorer.topics.relative).
WINDOW = relative.TRANSITION_WINDOW

settings = blocks.even_d_page("Relative positions", "a lone sine has no cosine partner to rotate with")
d, L = settings.d, settings.L
# One element for the text and its two formulas (a page's elements each cost its every rerun, and these come
# before its first chart).
st.markdown(
    "For any offset δ there is one matrix M(δ), the same for every position, that turns the "
    "encoding of position k into the encoding of position k + δ. This is why the paper chose "
    "sinusoids: a relative position is a linear function of the absolute one (end of section 3.5).\n\n"
    "$$\n"
    r"P[k]\,M(\delta) = P[k{+}\delta]\quad\text{for every position } k"
    "\n$$\n\n$$\n"
    r"\big[\sin\omega_i k,\ \cos\omega_i k\big]\,W(\delta\omega_i) = \big[\sin\omega_i (k{+}\delta),\ "
    r"\cos\omega_i (k{+}\delta)\big],\qquad W(\phi) = \begin{bmatrix}\cos\phi & -\sin\phi\\ \sin\phi & \cos\phi"
    r"\end{bmatrix}"
    "\n$$"
)

span = max(L - 1, 1)
delta = controls.int_control(
    "delta", "Offset δ (positions; negative shifts back)", default=1, low=-span, high=span,
    help=f"A whole number from −{span:,} to {span:,}. Seed 001 uses −10.",
)
shape = f"L={L:,}, d={d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"
w = cached.frequencies(settings)
#: The settings but L: what the transition matrix, the Play window and one pair's rotation depend on
#: (an L move replays them; only the shifted maps are computed again).
without_length = (d, settings.n, settings.layout, settings.convention)


def transition_section() -> None:
    """M(δ) in a window of dimensions: moving the window reruns only this."""
    st.header(f"The transition matrix M({delta})")
    window_start = 0
    if d > WINDOW:
        window_start = controls.int_control(
            "window_start", f"First dimension of the {WINDOW} x {WINDOW} window",
            default=0, low=0, high=relative.transition_window_limit(d, settings.layout, WINDOW),
            help="M is d x d; a window of it is drawn so that each cell stays visible.",
        )
    blocks.cached_section("relative_transition", lambda: transition(window_start), without_length, delta, window_start)
    blocks.downloads("the drawn M", lambda: transition_table(window_start), key="relative_transition")
    snippet["window_start"] = window_start


def transition_window(window_start: int) -> tuple[np.ndarray, np.ndarray]:
    """The dimensions of the window and M(δ) on them."""
    dims = relative.transition_window_dims(d, settings.layout, window_start, WINDOW)
    return dims, relative.transition_window(
        delta, d, settings.n, layout=settings.layout, convention=settings.convention, dims=dims
    )


def transition_table(window_start: int):
    dims, M_window = transition_window(window_start)
    return relative.transition_table(M_window, dims, d=d, layout=settings.layout)


def transition(window_start: int) -> None:
    dims, M_window = transition_window(window_start)
    window = relative.window_text(dims, d)
    blocks.chart(
        relative.transition_figure(
            M_window, dims, d=d, layout=settings.layout, delta=delta,
            title=f"M({delta}), rows and columns: {window}" + (" (window)" if dims.size < d else ""),
        ),
        key="relative_transition",
    )
    if settings.layout == "interleaved":
        structure = "block diagonal: the 2 x 2 block of pair i, in rows and columns 2i and 2i+1, is W(δ·ω_i)"
    else:
        structure = (
            "four diagonal blocks, as in seed 001: [[C, −S], [S, C]] with C = diag(cos δω_i), S = diag(sin δω_i); "
            "the window shows the sines of a run of pairs and their cosine partners d/2 further on"
        )
    st.caption(
        f"M({delta}) is {structure}. Every other entry is 0. M is orthogonal and M(−δ) = M(δ)ᵀ."
        + (f" Only {window} are drawn; move the window with the slider above." if dims.size < d else "")
    )


def shifted_maps() -> None:
    st.header("The shifted map")
    comparison = shift_comparison(settings, delta, *map_grid)
    labels, ticks = figures.encoding_axis_labels(
        comparison.column_is_sine, comparison.pair_first, comparison.pair_last, w, settings.layout
    )
    # One above the other at the page's width, so that seed 001's 512 columns get a pixel each.
    blocks.chart(
        figures.encoding_figure(
            comparison.shifted, comparison.row_first, comparison.row_last, labels, ticks,
            title=f"P @ M({delta}): row k is P[k]·M({delta})", value_name="(P M)[k, j]",
        ),
        key="relative_shifted",
    )
    blocks.chart(
        figures.encoding_figure(
            comparison.direct, comparison.row_first, comparison.row_last, labels, ticks,
            title=f"PE(k{delta:+d}) computed directly", value_name=f"PE(k{delta:+d}, j)",
        ),
        key="relative_direct",
    )
    blocks.reduced_note("Both maps", comparison.shifted.shape, (L, d))
    averaging = figures.averaging_note(comparison.row_first, comparison.row_last, w)
    if averaging:
        st.caption(averaging)
    st.caption(f"{shape}. The shifted map is computed pair by pair with pe_core.shift, which equals P @ M in O(L·d).")
    numbers = blocks.row()
    labels = relative.metric_labels(delta, 0)
    numbers.metric(
        labels["error"], f"{comparison.max_error:.2e}",
        help=f"Over every cell of {figures.positions_text(comparison.checked_first, comparison.checked_last)}.",
    )
    if comparison.seed_error is None:
        numbers.metric(
            labels["seed"], "no rows",
            help=f"|δ| ≥ L: for no position k of P ({figures.positions_text(0, L - 1)}) is k{delta:+d} one too.",
        )
    else:
        numbers.metric(
            labels["seed"], f"{comparison.seed_error:.2e}",
            help=f"Over the {comparison.seed_rows:,} rows k whose k{delta:+d} is also a position of P "
            "(seed 001: errors = (P @ M)[10:] − P[:−10] for δ = −10).",
        )
    if not comparison.whole_matrix:
        st.caption(
            f"L x d = {L * d:,} cells is more than this page builds ({FULL_MATRIX_CELLS:,}), so the error "
            f"is measured on positions {comparison.checked_first:,}..{comparison.checked_last:,}, the last ones, "
            "where the angles and their rounding are largest. The maps are exact block means from the closed form."
        )
    verdict = (
        f"largest error {max(comparison.max_error, comparison.seed_error or 0.0):.2e}, tolerance "
        f"{comparison.tolerance:.2e} = {relative.PRECISION_EPS_FACTOR:g}·ε·(1 + largest angle in rad)"
    )
    if comparison.accurate:
        st.success(f"Seed 001: \"This is accurate to numerical precision.\" Checked live: {verdict}.")
    else:
        st.error(f"Not within numerical precision: {verdict}.")


def shift_play() -> None:
    blocks.chart(
        relative.shift_play_figure(L, d, settings.n, layout=settings.layout, convention=settings.convention,
                                   delta=delta),
        key="relative_shift_play",
    )
    rows, dims = relative.shift_play_window(L, d, settings.layout)
    st.caption(
        f"{figures.positions_text(0, rows - 1).capitalize()}, {relative.window_text(dims, d)}. "
        f"Press Play: the offset δ goes from 0 to the δ above (to ±{relative.SHIFT_PLAY_MIN_SWEEP} at least; the "
        "chart opens on the δ above), a frame per offset (evenly spread whole offsets "
        "when there are more than fit), drawn by your browser (no server run per frame). Row k of each frame is "
        "P[k]·M(δ) = PE(k + δ): every row slides up (δ > 0) or down (δ < 0) the encoding. Exact values of the "
        "first positions and the fastest pairs, no block means. "
        + animation.KEYBOARD_NOTE
    )


def shifted_table(which: str):
    comparison = shift_comparison(settings, delta, *map_grid)
    labels, _ = figures.encoding_axis_labels(
        comparison.column_is_sine, comparison.pair_first, comparison.pair_last, w, settings.layout
    )
    return figures.encoding_table(getattr(comparison, which), comparison.row_first, comparison.row_last, labels)


def pair_section() -> None:
    """One pair turned by M(δ): choosing the pair and the position reruns only this."""
    st.header("One pair, in the plane")
    sliders = blocks.row()
    pair = controls.int_control("pair", "Pair i", default=0, low=0, high=d // 2 - 1, container=sliders)
    k = controls.int_control("k", "Position k", default=min(1, L - 1), low=0, high=L - 1, container=sliders)
    blocks.cached_section("relative_rotation", lambda: rotation(pair, k), without_length, delta, pair, k)
    blocks.downloads("the two points", lambda: relative.rotation_table(k * w[pair], delta * w[pair]),
                     key="relative_rotation")
    blocks.downloads("the Play frames' points", lambda: relative.rotation_play_table(k * w[pair], delta * w[pair]),
                     key="relative_rotation_play")
    snippet.update(pair=pair, position=k)


def rotation(pair: int, k: int) -> None:
    m = d // 2
    theta, phi = k * w[pair], delta * w[pair]
    if settings.layout == "interleaved":
        axis_names = (f"column {2 * pair} = sin(k·ω_{pair})", f"column {2 * pair + 1} = cos(k·ω_{pair})")
    else:
        axis_names = (f"column {pair} = sin(k·ω_{pair})", f"column {m + pair} = cos(k·ω_{pair})")
    blocks.chart(
        relative.rotation_figure(theta, phi, pair=pair, k=k, delta=delta, axis_names=axis_names),
        key="relative_rotation",
    )
    W = pe_core.rotation(phi)
    c, s = W[0, 0], W[1, 0]
    image = np.array([np.sin(theta), np.cos(theta)]) @ W
    expected = np.array([np.sin((k + delta) * w[pair]), np.cos((k + delta) * w[pair])])
    numbers = blocks.row()
    labels = relative.metric_labels(delta, pair)
    numbers.metric(
        labels["angle"], f"{np.degrees(phi):.6g}°", help=f"δ = {delta}, ω_{pair} = {w[pair]:.10g} rad/position"
    )
    numbers.metric(labels["wrapped"], f"{np.degrees(phi) % 360:.6g}°")
    numbers.metric(
        labels["rotation"], f"{np.abs(image - expected).max():.2e}",
        help="The rotated point against the pair of P[k + δ] computed directly.",
    )
    st.latex(
        rf"W(\delta\omega_{{{pair}}}) = \begin{{bmatrix}} {c:.6f} & {-s:.6f} \\ {s:.6f} & {c:.6f} \end{{bmatrix}},"
        rf"\allowbreak\qquad [\,{np.sin(theta):.6f},\ {np.cos(theta):.6f}\,]\;W = [\,{image[0]:.6f},\ {image[1]:.6f}\,]"
    )
    st.caption(
        "Press Play: the red arrow turns from P[k] by angles α growing to δ·ω (the shorter way round), "
        "v·W(α) for each, drawn by your browser (no server run per frame). "
        + animation.KEYBOARD_NOTE
    )
    st.markdown(
        "Seeds 003 and 004 write the same rotation as "
        r"$\begin{bmatrix}\cos\theta & \sin\theta\\ -\sin\theta & \cos\theta\end{bmatrix}$ "
        r"acting on a **column** vector $[\sin t;\ \cos t]$ from the left. Here each row of P is a **row** vector "
        r"multiplied from the right, $v\,W$, so W is that matrix transposed: the same map. "
        "The point turns clockwise in this (sin, cos) plane as the angle grows."
    )


map_grid = figures.heatmap_grid(L, d, power_of_two_columns=True)
#: The reproduce-this code's arguments; the sections' controls add theirs.
snippet: dict[str, object] = {
    "delta": delta, "window": WINDOW, "map_rows": map_grid[0], "map_cols": map_grid[1],
    "full_cells": FULL_MATRIX_CELLS,
}
blocks.fragment(transition_section)
blocks.cached_section("relative_shifted", shifted_maps, settings, delta)
blocks.downloads(f"P @ M({delta})", lambda: shifted_table("shifted"), key="relative_shifted")
blocks.downloads(f"PE(k{delta:+d})", lambda: shifted_table("direct"), key="relative_direct")
play = blocks.play_on_request("Play: P @ M(δ) as δ grows")
if play is not None:
    with play:
        # Play's window is the first positions: L changes it only below SHIFT_PLAY_ROWS positions.
        play_rows = relative.shift_play_window(L, d, settings.layout)[0]
        blocks.cached_section("relative_shift_play", shift_play, without_length, delta, play_rows)
        blocks.downloads("the Play frames", lambda: relative.shift_play_table(
            L, d, settings.n, layout=settings.layout, convention=settings.convention, delta=delta),
            key="relative_shift_play")
blocks.fragment(pair_section)
blocks.reproduce(
    lambda: relative.relative_code(settings, **snippet),
    lambda: relative.relative_code(settings, **snippet, library="torch"),
)
