"""Home: what positional encoding is for, the formula, seed 000's criteria measured live,
the seed presets, and a map of the pages."""

import math

import streamlit as st

from explorer import criteria, page_list
from explorer.presets import PRESETS
from explorer.settings import Settings, format_number
from explorer.topics import home
from explorer.ui import blocks, cached, controls, navigation

# --- this page's cached computations (st.cache_data: shared by every session) ---


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False, hash_funcs=cached.SETTINGS_HASH))
def measured_criteria(settings: Settings) -> tuple[criteria.Measurement, ...]:
    """Seed 000's four criteria measured for the settings (explorer.topics.home; ~0.6 s at the largest)."""
    return home.evaluate(settings)


st.title("Positional Encoding Explorer")
st.markdown(
    "Self-attention is **order-blind**: it compares every token with every other one, and "
    "shuffling the tokens only shuffles its output. *The cat chased the mouse* and *the mouse "
    "chased the cat* hold the same words, so without help a transformer sees the same bag of "
    "vectors. The fix of *Attention Is All You Need* is to add to the embedding of the token at "
    "position k a vector P[k] that depends only on k: the **positional encoding**."
)

st.header("The formula")
# One element for the formula, its symbols and its variants (a page's elements each cost its every rerun).
st.markdown(
    "$$\n"
    r"PE(k, 2i) = \sin\!\left(\frac{k}{n^{2i/d}}\right),\allowbreak\qquad "
    r"PE(k, 2i{+}1) = \cos\!\left(\frac{k}{n^{2i/d}}\right)"
    "\n$$"
    "\n\n"
    "- **k**: the position of a token in the sequence, 0 .. L-1;\n"
    "- **d**: the size of the embedding (the number of columns of P);\n"
    "- **n**: the base, 10000 in the paper; the wavelengths grow from 2π to about 2π·n;\n"
    "- **i**: the index of a sine/cosine pair, 0 .. d/2-1; the pair turns at "
    "ω_i = n^(-2i/d) radians per position.\n\n"
    "Two variants are in use, both in the sidebar. **Frequencies**: *paper* ω_i = n^(-2i/d), or "
    "*tensor2tensor* ω_i = n^(-i/(d/2-1)), whose slowest pair turns at exactly 1/n (the TensorFlow "
    "notebook, fairseq). **Layout**: *interleaved* sin, cos, sin, cos... (the paper), or "
    "*concatenated* all sines then all cosines (tensor2tensor). They hold the same numbers in a "
    "different order, so a model trained with one must not be fed the other."
)


def criteria_section(settings: Settings) -> None:
    st.header("Does it meet seed 000's criteria?")
    shape = (
        f"L={settings.L:,}, d={settings.d:,}, n={format_number(settings.n)}, {settings.layout}, {settings.convention}"
    )
    measurements = measured_criteria(settings)
    # A criterion with nothing to measure (one position has no pair to tell apart) neither passes nor fails.
    measurable = [m for m in measurements if math.isfinite(m.value)]
    passed = sum(m.passed for m in measurable)
    unmeasured = [m.title for m in measurements if not math.isfinite(m.value)]
    summary = (
        f"{passed} of {len(measurable)} {'measurable ' if unmeasured else ''}criteria pass for the current settings "
        f"({shape})" + (f"; not measurable here: {', '.join(unmeasured)}." if unmeasured else ".")
    )
    if passed == len(measurable):
        st.success(summary, icon=":material/check_circle:")
    else:
        st.error(summary, icon=":material/cancel:")
    for column, m in zip(st.columns(len(measurements)), measurements, strict=True):
        with column:
            shown = f"{m.value:.6g}" if math.isfinite(m.value) else "n/a"
            verdict = (
                ":gray[:material/remove: not measured]" if not math.isfinite(m.value)
                else ":green[:material/check_circle: pass]" if m.passed else ":red[:material/cancel: fail]"
            )
            st.metric(m.title, shown, help=m.label)
            st.markdown(f"{verdict} · {m.label}")
            st.caption(m.reason)
    st.caption("Measured live, with the sidebar's settings; change them and the numbers follow.")


def criteria() -> None:
    """The criteria for the sidebar's settings: a move of one reruns this alone, not the presets and the map."""
    settings: Settings = st.session_state["settings"]
    blocks.cached_section("home_criteria", lambda: criteria_section(settings), settings)
    blocks.downloads("the criteria", lambda: home.criteria_table(measured_criteria(settings)), key="home_criteria")
    blocks.reproduce(home.home_code(settings))


navigation.run_settings_part(criteria)

st.header("Reproduce a figure of the sources")
st.markdown("Each button sets every control as the source did and opens the page that draws it.")
preset_columns = st.columns(2)
for index, (key, preset) in enumerate(PRESETS.items()):
    with preset_columns[index % 2]:
        st.button(
            preset.label, key=f"home_preset_{key}", on_click=controls.apply_preset, args=(key,),
            icon=":material/play_arrow:", width="stretch",
        )
        st.caption(preset.source)


def page_map() -> None:
    st.header("Map of the pages")
    section = None
    for info in page_list.ALL_PAGES:
        if info is page_list.HOME:
            continue
        if info.section != section:
            section = info.section
            st.subheader(section)
        st.page_link(navigation.page(info.url_path), label=info.title, icon=info.icon)
        st.caption(info.summary)


blocks.cached_section("home_page_map", page_map)
