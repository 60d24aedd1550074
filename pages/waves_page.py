"""Waves: each pair is a wave, seen across pairs (seed 000), across positions (seed 002),
and as a point turning on the unit circle."""

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from explorer import animation
from explorer.figures import positions_text
from explorer.settings import Settings, format_number, parse_int_list
from explorer.topics import waves
from explorer.ui import blocks, cached, controls

MAX_WAVE_POSITIONS, MAX_POSITION_SHOWN = 8, 10**7
MAX_WAVE_COLUMNS = 8
#: URL key of the circle's Play (the profiles' has blocks.PLAY_KEY).
CIRCLE_PLAY_KEY = "circle_play"
SEED002_BUG_BASE = 1e8

settings: Settings = st.session_state["settings"]
d, L = settings.d, settings.L
w = cached.frequencies(settings)
pairs = len(w)
shape = f"d={d:,}, n={format_number(settings.n)}, {settings.convention}"
#: What the profiles and the unit circle are drawn from: the frequencies (an L move replays them).
rates = (d, settings.n, settings.convention)

st.title("Waves")
st.markdown(
    "Every sine/cosine pair i is a wave that turns at ω_i radians per position. Look at it "
    "three ways: one position across all pairs, chosen columns across positions, and one pair "
    "as a point going round the unit circle."
)


def profile_section() -> None:
    """Seed 000's panels: the positions and pairs shown, and their chart (reruns only this)."""
    st.header("One position across the pairs (seed 000)")
    controls_row = blocks.row()
    positions_text = controls.text_control(
        "wave_positions", f"Positions k (up to {MAX_WAVE_POSITIONS}, comma-separated)", default="0,4,8,12",
        container=controls_row,
        parse=lambda raw: parse_int_list(
            "wave_positions", raw, default="0,4,8,12", low=0, high=MAX_POSITION_SHOWN,
            max_count=MAX_WAVE_POSITIONS,
        ),
    )
    wave_dims = controls.int_control(
        "wave_dims", "Pairs x shown (from 0)", default=min(100, pairs), low=1, high=pairs, container=controls_row
    )
    positions = [int(k) for k in positions_text.split(",")]
    blocks.cached_section("waves_profiles", lambda: profiles(positions, wave_dims), rates, positions, wave_dims)
    blocks.downloads("these panels' values", lambda: waves.profile_table(positions, w[:wave_dims]),
                     key="waves_profiles")
    play = blocks.play_on_request("Play: sin(k·ω_x) as k grows")
    if play is not None:
        with play:
            blocks.cached_section("waves_profile_play", lambda: profile_play(wave_dims), rates, wave_dims)
            blocks.downloads("the Play frames' values",
                             lambda: waves.profile_table(waves.profile_play_positions(wave_dims).tolist(),
                                                         w[:wave_dims]),
                             key="waves_profile_play")
    snippet.update(positions=positions, pairs_shown=wave_dims)


def profiles(positions: list[int], wave_dims: int) -> None:
    st.markdown(
        "Seed 000's `plotSinusoid(k)` draws `sin(k / n**(2*x/d))` for x = 0..99. Its x is the **pair "
        "index**, not the column: each panel is sin(k·ω_x), the sine column 2x of the interleaved "
        "matrix. Position 0 is flat at 0; the larger k, the more the fast pairs (small x) oscillate "
        "while the slow pairs stay near sin(0) = 0."
    )
    blocks.chart(
        waves.position_profile_figure(
            positions, w[:wave_dims], title=f"sin(k·ω_x) for pairs x = 0..{wave_dims - 1} ({shape})"
        ),
        key="waves_profiles",
    )
    with st.expander("Values of these panels"):
        st.dataframe(waves.profile_table(positions, w[:wave_dims]), hide_index=True)


def profile_play(wave_dims: int) -> None:
    swept = waves.profile_play_positions(wave_dims)
    blocks.chart(
        waves.profile_play_figure(w[:wave_dims], title=f"Play: sin(k·ω_x), k = {swept[0]}..{swept[-1]}"),
        key="waves_profile_play",
    )
    st.caption(
        f"Pairs x = 0..{wave_dims - 1}. Press Play: k steps through {swept[0]}..{swept[-1]}, one frame per "
        "position, drawn by your browser (no server run per frame). "
        + animation.KEYBOARD_NOTE
    )


def columns_section() -> None:
    """Seed 002's lines: the columns chosen, the window of positions, and their chart (reruns only this)."""
    st.header("Chosen columns across positions (seed 002)")
    columns_text = controls.text_control(
        "wave_columns", f"Matrix columns j (0..{d - 1}, up to {MAX_WAVE_COLUMNS})", default="0,1",
        parse=lambda raw: parse_int_list("wave_columns", raw, default="0,1", low=0, high=d - 1,
                                         max_count=MAX_WAVE_COLUMNS),
    )
    chosen = [int(c) for c in columns_text.split(",")]
    # Thousands of positions of a fast column would be a solid block: show a window the user moves.
    window_first, window_size = 0, min(L, waves.COLUMNS_WINDOW)
    if window_size < L:
        window_first = controls.int_control(
            "wave_start", f"First position of the window ({window_size} positions)", default=0, low=0,
            high=L - window_size, help=f"The chart shows positions from here to here + {window_size - 1}.",
        )
    # The chart and the table show the window alone: keyed by it, not by L (an L move replays them).
    window = (d, settings.n, settings.layout, settings.convention, tuple(chosen), window_first, window_size)
    blocks.cached_section("waves_columns", lambda: column_lines(chosen, window_first, window_size), window)
    column_caption(chosen, window_first, window_size)
    blocks.cached_section("waves_columns_table", lambda: column_table(chosen, window_first, window_size), window)
    blocks.downloads("these lines' values", lambda: column_values(chosen, 0, L)[2], key="waves_columns")
    snippet["columns"] = chosen


def column_values(chosen: list[int], first: int, size: int) -> tuple[np.ndarray, list[str], pd.DataFrame]:
    """The chosen columns over positions first .. first + size - 1, their names, and their table."""
    values = waves.encoding_columns(size, d, settings.n, chosen, layout=settings.layout,
                                    convention=settings.convention, start=first)
    names = waves.column_names(chosen, d, w, settings.layout)
    return values, names, waves.columns_table(values, names, first)


def column_lines(chosen: list[int], window_first: int, window_size: int) -> None:
    window_last = window_first + window_size - 1
    values, names, _ = column_values(chosen, window_first, window_size)
    listed = ",".join(str(c) for c in chosen)
    blocks.chart(
        waves.columns_over_positions_figure(
            values, names, first=window_first,
            title=f"Columns {listed} over {positions_text(window_first, window_last)} ({shape}, {settings.layout})",
        ),
        key="waves_columns",
    )


def column_caption(chosen: list[int], window_first: int, window_size: int) -> None:
    window_last = window_first + window_size - 1
    names = waves.column_names(chosen, d, w, settings.layout)
    if window_size < L:
        st.caption(
            f"Positions {window_first:,}..{window_last:,} of 0..{L - 1:,}, one point each: move the window with the "
            f"slider above. The table below shows the same positions; the download holds all {L:,}. "
            f"Lines: {'; '.join(names)}."
        )
    else:
        drawn = "The one position is drawn" if L == 1 else f"All {L:,} positions are drawn, one point each"
        st.caption(f"{drawn} ({settings.layout} layout): {'; '.join(names)}.")


def column_table(chosen: list[int], window_first: int, window_size: int) -> None:
    with st.expander("Values of these lines"):
        st.dataframe(column_values(chosen, window_first, window_size)[2], hide_index=True)
    if settings.n == SEED002_BUG_BASE and pairs > 1:
        paper_w1 = pe_core.frequencies(d, SEED002_BUG_BASE**0.5, settings.convention)[1]
        st.caption(
            "n = 10^8 = (10^4)²: seed 002's loop `for i in range(0, d_model, 2)` with "
            "`10000 ** (2 * i / d_model)` gives pair j = i/2 the exponent 4j/d, so its 10000^(4j/d) is the "
            "paper's formula with base n² = 10^8. Columns 0 and 1 (pair 0, ω = 1) are the same with or "
            "without the bug; every slower pair turns slower: choose columns 2,3 to see pair 1 with "
            f"ω_1 = {w[1]:.6g} here against {paper_w1:.6g} with n = 10^4."
        )


def circle_section() -> None:
    """One pair on the unit circle: the pair and position chosen, and the circle (reruns only this)."""
    st.header("One pair on the unit circle")
    sliders = blocks.row()
    pair = controls.int_control("pair", "Pair i", default=0, low=0, high=pairs - 1, container=sliders)
    k = controls.int_control("k", "Position k", default=min(L - 1, 10), low=0, high=L - 1, container=sliders)
    blocks.cached_section("waves_circle", lambda: circle(pair, k), rates, pair, k)
    blocks.downloads("the trail's points", lambda: waves.circle_table(float(w[pair]), k), key="waves_circle")
    snippet.update(pair=pair, position=k)
    if L == 1:
        st.caption("With one position the pair stays at its angle for k = 0: there is no turn for Play to show. "
                   "Raise L in the sidebar to see it turn.")
        return
    play = blocks.play_on_request("Play: the pair going round", key=CIRCLE_PLAY_KEY)
    if play is None:
        return
    with play:
        swept = waves.circle_play_positions(k, L)
        # L decides only where the sweep starts and ends (it stops at the last position).
        blocks.cached_section("waves_circle_play", lambda: circle_play(pair, k), rates, pair, k, int(swept[0]),
                              int(swept[-1]))
        blocks.downloads("the Play frames' points",
                         lambda: waves.circle_table(float(w[pair]), int(swept[-1]), max_trail=swept.size),
                         key="waves_circle_play")


def circle(pair: int, k: int) -> None:
    angle = k * w[pair]
    circle_row = blocks.row()
    with circle_row:
        blocks.chart(waves.unit_circle_figure(float(w[pair]), k, pair=pair), key="waves_circle")
    with circle_row.container():
        trail_first = max(0, k - waves.MAX_TRAIL + 1)
        st.markdown(
            f"Each position k puts pair {pair} at the angle k·ω_{pair} on the circle; its two columns are the "
            "point's (cos, sin). Going from k to k + δ turns the point by δ·ω_i, whatever k: that is why a "
            "shift is a fixed linear map (a rotation per pair)."
        )
        st.caption(
            f"The trail shows {positions_text(trail_first, k)}"
            + (f", the last {waves.MAX_TRAIL:,}: a picture of the turning, not a data series."
               if trail_first > 0 else ".")
        )
        rate, angle_label, wrapped, point = waves.circle_labels(pair)
        st.metric(rate, f"{w[pair]:.10g}")
        st.metric(angle_label, f"{np.degrees(angle):,.4f}°", help="In degrees; mod 360 below.")
        st.metric(wrapped, f"{np.degrees(angle) % 360.0:.4f}°")
        st.metric(point, f"({np.sin(angle):.6f}, {np.cos(angle):.6f})")


def circle_play(pair: int, k: int) -> None:
    swept = waves.circle_play_positions(k, L)
    blocks.chart(waves.unit_circle_play_figure(float(w[pair]), swept, pair=pair, shown=k), key="waves_circle_play")
    st.caption(
        f"Press Play: pair {pair} turns by ω_{pair} = {w[pair]:.6g} rad per position through positions "
        f"{swept[0]:,}..{swept[-1]:,}, one frame each, drawn by your browser (no server run per frame). "
        + animation.KEYBOARD_NOTE
    )


#: The reproduce-this code's arguments, set by the sections' controls.
snippet: dict[str, object] = {}
blocks.fragment(profile_section)
blocks.fragment(columns_section)
blocks.fragment(circle_section)
blocks.reproduce(lambda: waves.waves_code(settings, **snippet, max_trail=waves.MAX_TRAIL))
