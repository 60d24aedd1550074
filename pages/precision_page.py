"""Precision: how float32, float16, bfloat16 and the 8-bit floats (ml_dtypes' float8_e4m3fn and
float8_e5m2) hold the encoding as the position grows, from which position two neighbours can no
longer be told apart, and what helps with each."""

import functools
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from explorer.settings import Settings, format_number
from explorer.topics import precision
from explorer.topics import precision as pr
from explorer.ui import blocks, cached, controls

# --- this page's cached computations (st.cache_data: shared by every session) ---


@cached.page_cache(st.cache_data(max_entries=32, show_spinner=False))
def precision_scan(
    dtype: str, method: str, w0: float, window: int, start: int, limit: int
) -> pr.PairScan:
    """The fastest pair's neighbour scan up to 10^7 (independent of d, n and layout: cached once)."""
    return pr.scan_fastest_pair(dtype, method, w0, window, start, limit)


@cached.page_cache(st.cache_data(max_entries=32, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def precision_series(settings: Settings, relative: bool) -> pr.Results:
    """Errors against float64 on ~200 positions up to 10^7 and the exact search for the first k with
    P[k] = P[k+1] after rounding (below ``pr.search_limit``) of the "relative" series, or of all the others.

    Only the "relative" series depend on L (their window): the others are asked for with L=1, so
    an L step computes five series again, not fifteen.
    """
    series = [key for key in pr.SERIES if (key[1] == "relative") == relative]
    return pr.results(settings, series, scan=precision_scan)


@functools.cache  # the page script runs afresh each run: once a run at most, and only if a section draws
def precision_results() -> pr.Results:
    """Every series (``pr.SERIES``) for the settings."""
    return pr.merged(precision_series(replace(settings, L=1), False), precision_series(settings, True))


@functools.cache
def summary_table() -> pd.DataFrame:
    """The summary of every series (numbers), once a run."""
    result = precision_results()
    return pr.summary_table(result.errors, result.neighbours)


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def precision_column(settings: Settings, column: int) -> dict[str, np.ndarray]:
    """The same errors for one column of P."""
    return pr.column_errors(settings, column)


settings: Settings = st.session_state["settings"]
d, L = settings.d, settings.L
shape = f"d={d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"

st.title("Precision")
# One element for the text and the three ways (a page's elements each cost its every rerun).
st.markdown(
    "Models rarely keep the encoding in float64. **float32** keeps 24 significant bits, **float16** 11, "
    "**bfloat16** (the top half of a float32) 8, and the 8-bit floats of today's training and inference only "
    "4 (**float8_e4m3fn**) or 3 (**float8_e5m2**): a format holds every whole number up to 2^bits, and beyond "
    "it the spacing between its numbers grows with the number. The values of P stay in [−1, 1], where the wider "
    "formats are fine; the trouble is the **angle k·ω_i**, which grows with the position k. Three ways to get P[k]:"
    "\n\n"
    "- **float64, then cast**: compute in float64 and round each value to the format;\n"
    "- **computed in the dtype**: k and ω_i rounded to the format, their product rounded, sin and cos taken in "
    "float32 (as frameworks do for float16 and bfloat16; for the 8-bit formats it shows what their every step "
    "would cost) and rounded;\n"
    f"- **from a relative offset**: k = k0 + r with k0 a multiple of L = {L:,} and r < L; the phase k0·ω_i mod 2π "
    "is computed once in float64, only r·ω_i and the sum in the format."
)


def formats() -> None:
    blocks.table(pr.formats_table(), titles=pr.TABLE_TITLES)
    st.caption(
        "bfloat16, float8_e4m3fn and float8_e5m2 are real NumPy dtypes from ml_dtypes (the package JAX uses); "
        "rounding to a format is a cast, which ml_dtypes makes through float32 (as PyTorch casts a float64 to "
        "bfloat16). The e4m3 variant shown is **float8_e4m3fn**, \"fn\" for finite: no infinity, one NaN, "
        "largest 448. It is the e4m3 of NVIDIA's Hopper GPUs and of the OCP 8-bit float specification; anything "
        "beyond 464 becomes NaN, where float8_e5m2 (largest 57,344) goes to infinity. A float16 cannot hold any "
        "position above 65,504, a float8_e4m3fn none above 464."
    )


blocks.cached_section("precision_formats", formats)



def errors() -> None:
    st.header("Error against float64, up to position 10⁷")
    result = precision_results().errors
    lines = {key: result.max_error[pr.NAMES[key]] for key in pr.SERIES}
    blocks.chart(
        precision.precision_figure(
            result.positions, lines, pr.NAMES, title=f"Largest |P̃[k, j] − P[k, j]| over the {d:,} columns ({shape})",
            y_title="absolute error (log scale)",
        ),
        key="precision_errors",
    )
    st.caption(
        f"{result.positions.size} log-spaced positions from 1 to 10⁷; colour: the format, line: the method. "
        "A gap is a "
        "position the format cannot hold (computing k itself, float16 overflows above 65,504, float8_e4m3fn "
        "above 464, float8_e5m2 above 57,344). "
        "Errors of 2 mean the value "
        "is unrelated to the true one."
    )

    found = precision_results().neighbours
    blocks.table(pr.display_summary(summary_table()), titles=pr.TABLE_TITLES, names_px=pr.SUMMARY_NAMES_PX,
                 height="content")  # all fifteen rows, no inner scroll

    st.header("From which position are two neighbours the same?")
    st.markdown(
        "P[k] and P[k+1] are indistinguishable when all their d values round to the same numbers. The fastest pair "
        "turns by 1 rad per position, so it keeps neighbours apart as long as k itself is exact: computed in the "
        "format, they collapse as soon as k + 1 rounds to k. Searched exactly for every k below 10⁷ (the fastest pair "
        "for all k, the slower pairs only where it matched), except the 8-bit formats from a relative offset "
        f"while L ≤ 2^bits + 1 (17 and 9): below {pr.power_text(pr.SHORT_SCAN_LIMIT)} there, where every offset is "
        "exact and no early collapse is certain."
    )
    st.markdown("Computed in each format, neighbours are equal from:")
    for column, dtype in zip(st.columns(len(pr.DTYPES)), pr.DTYPES, strict=True):
        low = found[pr.NAMES[(dtype, "low")]]
        cast = found[pr.NAMES[(dtype, "cast")]]
        column.metric(
            dtype,
            f"none < {pr.power_text(low.limit)}" if low.first_equal is None else f"k = {low.first_equal:,}",
            help=f"2^{pr.MANTISSA_BITS[dtype]} = {2 ** pr.MANTISSA_BITS[dtype]:,} is the last whole number with exact "
            "neighbours in this format.",
        )
        column.caption(
            "float64 then cast: "
            + (f"none below {pr.power_text(cast.limit)}" if cast.first_equal is None
               else f"from k = {cast.first_equal:,}")
            + (f". Computed in it, not finite from k = {low.first_nonfinite:,}." if low.first_nonfinite is not None
               else ".")
        )
    blocks.chart(
        precision.precision_figure(
            result.positions, {key: result.telling[pr.NAMES[key]] for key in pr.SERIES}, pr.NAMES,
            title=f"Columns in which P̃[k] and P̃[k+1] differ, of d = {d:,}", y_title="columns (of d)", log_y=False,
            hover_format=",.0f",
        ),
        key="precision_telling",
    )
    st.caption(
        "Slow pairs change by ω_i per position, less than the spacing of their numbers: they stop telling neighbours "
        "apart first. At 0 columns the two positions have the same code."
    )


blocks.cached_section("precision_errors", errors, settings)



def column_section() -> None:
    """One column's errors: choosing the column reruns only this."""
    st.header("One column")
    column_index = controls.int_control(
        "column", "Column j of P", default=0, low=0, high=d - 1,
        help="0 is the fastest sine (ω = 1 rad per position); the last columns are the slowest pairs.",
    )
    blocks.cached_section("precision_column", lambda: column_errors(column_index), settings, column_index)
    blocks.downloads(
        f"column {column_index}'s errors",
        lambda: pd.DataFrame(precision_column(settings, column_index), index=pd.Index(pr.grid(), name="position k")),
        key="precision_column",
    )


def column_errors(column_index: int) -> None:
    positions = pr.grid()  # pr.column_errors' positions
    pair_of, is_sine = pe_core.column_pairs(d, settings.layout)
    w = cached.frequencies(settings)
    pair = int(pair_of[column_index])
    by_column = precision_column(settings, column_index)
    blocks.chart(
        precision.precision_figure(
            positions, {key: by_column[pr.NAMES[key]] for key in pr.SERIES}, pr.NAMES,
            title=f"|P̃[k, {column_index}] − P[k, {column_index}]|: {'sin' if is_sine[column_index] else 'cos'} of "
            f"pair {pair}, ω = {w[pair]:.4g} rad/position",
            y_title="absolute error (log scale)",
        ),
        key="precision_column",
    )
    st.caption("An error of exactly 0 is not drawn on the log scale.")


blocks.downloads("the summary", summary_table, key="precision_summary")
blocks.downloads("the errors by position", lambda: pr.errors_table(precision_results().errors),
                 key="precision_errors")
blocks.fragment(column_section)


def what_helps() -> None:
    st.header("What helps")
    summary = summary_table()
    worst_by_name = summary[pr.largest_error_column(pr.LAST_POSITION)].to_dict()  # one column, not 15 .loc reads
    worst = {key: worst_by_name[pr.NAMES[key]] for key in pr.SERIES}
    st.markdown("\n".join(f"- **{dtype}.** {text}" for dtype, text in pr.what_helps(summary, L).items()))
    wider = replace(settings, d=min(2 * d, pe_core.MAX_D))
    telling, telling_wider = pr.telling_at(settings, "bfloat16"), pr.telling_at(wider, "bfloat16")
    st.markdown(
        "- **Significant bits, not range.** Values in [−1, 1] need no range: cast from float64, float16 keeps "
        f"them to {worst[('float16', 'cast')]:.2g} and bfloat16, with its far larger range, only to "
        f"{worst[('bfloat16', 'cast')]:.2g}; of the 8-bit formats float8_e4m3fn "
        f"({worst[('float8_e4m3fn', 'cast')]:.2g}) beats float8_e5m2 ({worst[('float8_e5m2', 'cast')]:.2g}).\n"
        f"- **A larger d.** At k = {pr.PROBE_POSITION} (exact in float32, float16 and bfloat16), computed in "
        f"bfloat16, {telling:,} of d = {d:,} columns tell k from k + 1; with d = {wider.d:,}, {telling_wider:,}. "
        "More columns keep neighbours further apart, but none helps once k + 1 rounds to k itself."
    )


blocks.cached_section("precision_what_helps", what_helps, settings)
blocks.reproduce(pr.snippet(settings))
