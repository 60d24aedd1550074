"""Encoding matrix: P as a heatmap, its angles, its frequencies and wavelengths."""

import numpy as np
import pandas as pd
import streamlit as st

from explorer import compute, controls, figures, reproduce, ui
from explorer.settings import Settings, format_n

MAX_ROWS, MAX_COLS = figures.MATRIX_MAX_ROWS, figures.MATRIX_MAX_COLS

settings: Settings = st.session_state["settings"]
st.title("Encoding matrix")
st.latex(
    r"P[k, 2i] = \sin\!\left(k\,\omega_i\right),\quad P[k, 2i+1] = \cos\!\left(k\,\omega_i\right),"
    r"\quad \omega_i = n^{-2i/d}\ \text{(paper)}\ \text{or}\ n^{-i/(m-1)}\ \text{(tensor2tensor)}"
)
st.markdown(
    "Each row is the encoding of one position k; each pair of columns is a sine and a cosine "
    "turning at its own frequency ω_i. Fast pairs (left) change colour from row to row; slow "
    "pairs (right) barely move, so together they give every position a unique, bounded code."
)

left, right = st.columns(2)
view = controls.choice_control(
    "view", "Show", ("values", "angles"), default="values", container=left,
    format_func={"values": "values P[k, j]", "angles": "angles k·ω_i (degrees, mod 360)"}.get,
)
transpose = controls.bool_control("transpose", "Transpose (dimensions down, as seed 003)", container=right)

w = compute.frequencies(settings)
shape = f"L={settings.L:,}, d={settings.d:,}, n={format_n(settings.n)}, {settings.layout}, {settings.convention}"
if view == "values":
    reduced = compute.reduced_encoding(settings, MAX_ROWS, MAX_COLS)
    labels, ticks = figures.encoding_axis_labels(
        reduced.column_is_sine, reduced.pair_first, reduced.pair_last, w, settings.layout
    )
    fig = figures.encoding_figure(
        reduced.values, reduced.row_first, reduced.row_last, labels, ticks,
        title=f"Positional encoding P ({shape})", transpose=transpose,
    )
    ui.chart(fig, key="matrix_heatmap")
    ui.reduced_note("Encoding", reduced.values.shape, (settings.L, settings.d))
    ui.downloads(
        "the heatmap's values",
        figures.encoding_table(reduced.values, reduced.row_first, reduced.row_last, labels, transpose=transpose),
        key="matrix_heatmap",
    )
else:
    degrees, row_first, row_last, pair_edges = compute.angle_map(settings, MAX_ROWS, MAX_COLS)
    labels = figures.angle_axis_labels(pair_edges, w)
    fig = figures.encoding_figure(
        degrees, row_first, row_last, labels, [str(int(a)) for a in pair_edges[:-1]],
        title=f"Angle k·ω_i in degrees, mod 360 ({shape})", transpose=transpose, value_name="angle (deg)",
        colorscale=figures.CYCLIC, zrange=(0.0, 360.0),
    )
    ui.chart(fig, key="matrix_angles")
    ui.reduced_note("Angles", degrees.shape, (settings.L, len(w)))
    st.caption("Blocks of angles are circular means, atan2(mean sin, mean cos), since 359° and 1° are neighbours.")
    ui.downloads(
        "the angles (degrees)",
        figures.encoding_table(degrees, row_first, row_last, labels, transpose=transpose),
        key="matrix_angles",
    )

st.subheader("Frequencies and wavelengths")
st.markdown(r"Pair i turns at $\omega_i$ rad/position, so it repeats every $\lambda_i = 2\pi/\omega_i$ positions.")
pairs = np.arange(len(w))
freq_col, wave_col = st.columns(2)
with freq_col:
    ui.chart(figures.line_figure(pairs, {"ω_i": w}, title="Angle rate ω_i (seed 001)", x_title="pair i",
                                 y_title="ω_i (rad/position)", log_y=True), key="matrix_rates")
with wave_col:
    ui.chart(figures.line_figure(pairs, {"λ_i": 2 * np.pi / w}, title="Wavelength λ_i = 2π/ω_i (seed 003)",
                                 x_title="pair i", y_title="λ_i (positions)", log_y=True), key="matrix_wavelengths")
ui.downloads("ω_i and λ_i", figures.frequency_table(w), key="matrix_rates")

if settings.L * settings.d <= 64:
    st.subheader("The matrix as numbers")
    P = compute.encoding(settings)
    st.dataframe(pd.DataFrame(P, columns=[f"j={j}" for j in range(settings.d)]).style.format("{:.8f}"))

snippet = {"view": view, "transpose": transpose, "max_rows": MAX_ROWS, "max_cols": MAX_COLS}
ui.reproduce(reproduce.matrix_code(settings, **snippet), reproduce.matrix_code(settings, **snippet, library="torch"))
