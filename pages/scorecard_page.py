"""Criteria scorecard: the sinusoid against integer positions, positions scaled to [0, 1],
binary codes and a learned table, each criterion of seed 000 (and two more) measured live."""

import numpy as np
import pandas as pd
import streamlit as st

from explorer.settings import Settings, format_number
from explorer.topics import scorecard as sc
from explorer.ui import blocks, cached, controls

# --- this page's cached computations (st.cache_data: shared by every session) ---


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def measured_scorecard(settings: Settings, offset: int) -> sc.Scorecard:
    """Every scheme x criterion of the Criteria scorecard (explorer.topics.scorecard; ~1 s at the largest)."""
    return sc.evaluate(settings, offset)


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def scorecard_distances(settings: Settings) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Distance by offset of every scheme, relative to offset 1 (the scorecard's chart)."""
    return sc.distance_by_offset(settings)


settings: Settings = st.session_state["settings"]
L = settings.L

st.title("Criteria scorecard")
# One element for the text and the schemes (a page's elements each cost its every rerun).
st.markdown(
    "Seed 000 asks a positional encoding to be **unique** for each position, to keep the **same distance "
    "for the same offset** whatever the sentence's length, to be **bounded** and work for longer sentences, "
    "and to be **deterministic**. Seed 004 explains why the simpler ideas fail. Here five schemes are "
    "measured against those criteria, and two more: whether the scheme is **defined beyond the trained "
    "length** L, and whether moving by δ positions is **one fixed linear map** (the paper's reason for "
    "sinusoids). Every number is computed now, for the sidebar's settings.\n\n"
    "- **Integer position**: P[k] = k (one column; broadcasting it to d columns only multiplies the "
    "distances by √d).\n"
    "- **Scaled to [0, 1]**: P[k] = k / (L − 1) in a sentence of L positions.\n"
    "- **Binary code**: the bits of k, least significant first (seed 003).\n"
    f"- **Learned table**: an L × d table of standard normal values with seed {sc.LEARNED_SEED}, as a "
    "learned embedding starts before training: one row per position of the trained length."
)

offset = controls.int_control(
    "offset", "Offset δ (positions) for the distance and shift checks", default=1, low=1,
    high=sc.clamp_offset(sc.MAX_OFFSET, L),
    help=f"1 to min(L − 1, {sc.MAX_OFFSET}). Seed 004's example uses neighbours, δ = 1.",
)
shape = f"L={L:,}, d={settings.d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"


def scorecard_table() -> None:
    st.header("The scorecard")
    card = measured_scorecard(settings, offset)
    blocks.table(sc.display_table(card), titles=sc.TABLE_TITLES)
    st.caption(
        f"{shape}, δ = {card.offset}. ✓ passes, ✗ fails; the number is what was measured: the smallest distance "
        "between two positions; the largest |value| (up to position 10·L); the largest change of the offset-δ "
        "distance between sentences of different lengths; values that differ between two builds; the first "
        "position without a code; the largest error of the best fixed linear map P[k] → P[k+δ]."
    )
    columns = st.columns(len(card.results))
    for column, (key, measurements) in zip(columns, card.results, strict=True):
        column.metric(sc.SCHEMES[key], f"{sum(m.passed for m in measurements)} of {len(measurements)}",
                      help="criteria that pass")

    st.header("Seed 004's arguments, measured")
    for fact in sc.seed004_facts(card):
        st.markdown(f"- {fact}")

    st.header("Why each verdict")
    tabs = st.tabs([sc.SCHEMES[key] for key, _ in card.results])
    for tab, (_, measurements) in zip(tabs, card.results, strict=True):
        tab.markdown(sc.reasons_markdown(measurements))

    with st.expander("What was measured, and on which positions", icon=":material/info:"):
        st.markdown("\n".join(f"- {line}" for line in sc.sampling_notes(settings, card.offset)))
        st.caption(
            "Samples keep every check bounded at the largest settings (L=16384, d=2048). The learned table is drawn "
            "from the start of its random stream, so only its first rows are read."
        )


blocks.cached_section("scorecard_table", scorecard_table, settings, offset)
blocks.downloads("the scorecard", lambda: sc.numbers_table(measured_scorecard(settings, offset)), key="scorecard_table")


def distances() -> None:
    st.header("Distance by offset")
    offsets, series = scorecard_distances(settings)
    if offsets.size:
        blocks.chart(
            sc.scheme_distance_figure(
                offsets, series, title=f"‖P[δ] − P[0]‖ relative to offset 1 ({shape})", dashes=sc.chart_dashes(series),
            ),
            key="scorecard_distances",
        )
        st.caption(
            f"Offsets 1..{offsets[-1]:,}"
            + (f" of {L - 1:,} (the first {sc.CHART_OFFSETS})" if offsets[-1] < L - 1 else "")
            + ". Integer and scaled positions (one line: both are δ times their step) grow without limit with the "
            "offset; scaled positions in a sentence of "
            "2L take half the step (seed 004); binary codes jump; a learned table is noise around one value; the "
            "sinusoid grows smoothly and then stays bounded."
        )
    else:
        st.info("One position only: there is no offset to draw. Increase L in the sidebar.", icon=":material/info:")


blocks.cached_section("scorecard_distances", distances, settings)


def distances_table() -> pd.DataFrame:
    offsets, series = scorecard_distances(settings)
    return pd.DataFrame(series, index=pd.Index(offsets, name="offset δ"))


blocks.downloads("the distances", distances_table, key="scorecard_distances")
blocks.reproduce(lambda: sc.snippet(settings, sc.clamp_offset(offset, L)))
