"""Longer contexts: a model's RoPE (a preset, or its config.json pasted or uploaded) run past the
length it was trained on, pair by pair, for every context-extension method."""

import numpy as np
import streamlit as st

from explorer import animation, config_json, figures, layer_types, rope_methods
from explorer.model_configs import model_config
from explorer.presets import CUSTOM
from explorer.settings import D_MAX, D_MIN, N_OPTIONS, format_number, nearest_n, parse_choice
from explorer.topics import contexts
from explorer.topics.contexts import DEFAULT_VIEW, ContextView
from explorer.ui import blocks, cached, config_inputs, controls, layer_link, model_carry, navigation
from pe_core.rope.methods import rope_method

#: Session-only state: a pasted config's text and an uploaded file (never in the URL), what
#: reading them said, a pasted config's LongRoPE lists, and the exact base last shown.
CONFIG_TEXT, CONFIG_FILE = "contexts_config_text", "contexts_config_file"
CONFIG_MESSAGE, PASTED_LISTS, BASE_ANCHOR = "_contexts_config_message", "_contexts_lists", "_contexts_base_anchor"
#: A pasted config's layer types in a sentence (None: one kind of layer) and the config, for the link.
PASTED_LAYERS = "_contexts_layers"

# --- this page's cached computations (st.cache_data: shared by every session) ---
# Each is keyed by the view's repr (``key``): Streamlit hashes a string at once, and a dataclass
# field by field (a few ms of every rerun over this page's cached parts).


@cached.page_cache(st.cache_data(max_entries=4, show_spinner=False))
def dot_curves(key: str, _view: ContextView) -> tuple[np.ndarray, np.ndarray]:
    """The all-ones score by offset, plain and with the method (at most 8 MB each)."""
    return contexts.dot_curves(_view)


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False))
def preset_view(key: str) -> ContextView:
    """A model preset's view, read from its config.json file once."""
    return contexts.preset_view(key)


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False))
def snippets(key: str, _view: ContextView) -> tuple[str, str]:
    """The reproduce-this code, NumPy and PyTorch (built once per view: it sweeps Play's targets)."""
    return contexts.contexts_code(_view), contexts.contexts_code(_view, "torch")


# --- presets and configs: widget callbacks, which run before any widget is drawn ---


def show(view: ContextView, model: str | None) -> None:
    """Set the sidebar's d and n and every page key to ``view`` (and the model key, if given)."""
    values = contexts.view_values(view) | {"preset": CUSTOM}
    controls.queue_values(values if model is None else values | {"model": model})


def apply_model() -> None:
    key = st.session_state["model"]
    st.session_state[CONFIG_MESSAGE] = None
    if key != contexts.CUSTOM_MODEL:
        show(preset_view(key), None)


def apply_config(data: str | bytes, source: str) -> None:
    try:
        config = config_json.read_config(data)
        view, notices = contexts.view_from_config(config)
    except ValueError as error:
        st.session_state[CONFIG_MESSAGE] = ("error", config_json.one_line(f"{source}: {error}"), [])
        return
    show(view, contexts.CUSTOM_MODEL)
    st.session_state[PASTED_LISTS] = (view.short_factor, view.long_factor) if view.has_lists else None
    st.session_state[CONFIG_MESSAGE] = (
        "success", config_json.one_line(f"Read {source}: {view.describe()}."),
        [config_json.one_line(notice) for notice in notices],
    )
    st.session_state[PASTED_LAYERS] = (layer_types.layer_types_note(config), config)



def parse_model(raws: list[str]) -> tuple[str, list[str]]:
    """The model key from the URL; a preset sets what the URL does not say itself (as the
    sidebar's seed presets do), the sidebar's d and n included (not drawn yet on this run)."""
    key, notices = parse_choice("model", raws, default=contexts.CUSTOM_MODEL, options=contexts.MODEL_KEYS)
    if key != contexts.CUSTOM_MODEL:
        values = {k: v for k, v in contexts.view_values(preset_view(key)).items() if not st.query_params.get_all(k)}
        for name in ("d", "n"):
            if name in values:
                st.session_state[name] = values.pop(name)
                st.session_state["preset"] = CUSTOM
        controls.queue_values(values)
    return key, notices


# --- the page ---

st.title("Longer contexts")
# One element for the text and its formula (a page's elements each cost its every rerun).
st.markdown(
    "A model trained on texts of L0 tokens has turned each pair of its RoPE through the angles δθ_i of the "
    "offsets it met. Run it on longer texts and the fast pairs have nothing new to show, since they turned "
    "through whole circles long ago; a slow pair that never completed a turn in training now meets angles it "
    "never saw. The context-extension methods lower the frequencies θ_i so that it does not. Choose a model, "
    "or paste its config.json, a target length and a method.\n\n"
    "$$\n"
    # Each equation a group, which KaTeX does not break (it may break after ⟺ and ∧, and at
    # \allowbreak): on a phone "λ_i = 2π/θ_i" was split after its "=". The closing thin space: a
    # formula that ends in a subscript overhangs KaTeX's box by 2 px, which then scrolls (axe:
    # scrollable-region-focusable).
    r"{\theta_i = b^{-2i/d}},\quad\allowbreak {\lambda_i = 2\pi/\theta_i},\qquad\allowbreak"
    r"\text{unseen}_i \iff {L_0\theta_i < 2\pi} \,\wedge\, {L\theta'_i > L_0\theta_i}\,"
    "\n$$"
)

st.header("The model")
carried = model_carry.arriving("contexts")
if carried is not None and carried.key in contexts.MODEL_KEYS and not st.query_params.get_all("model"):
    # Reached from Rotary with its model's d and n: the model whole, not Rotary's scaling keys with it.
    st.session_state["model"] = carried.key
    controls.queue_values({k: v for k, v in contexts.view_values(preset_view(carried.key)).items() if k not in "dn"})
model = controls.seed_value("model", contexts.CUSTOM_MODEL, parse_model)
if model == contexts.CUSTOM_MODEL:
    model_carry.forget("contexts")
else:
    model_values = contexts.view_values(preset_view(model))
    model_carry.remember(model, model_config(model).name, "contexts", model_values["d"], model_values["n"])
st.selectbox(
    "Model preset (its public config.json)", contexts.MODEL_KEYS, key="model", on_change=apply_model,
    format_func=lambda key: "Custom: the settings below" if key == contexts.CUSTOM_MODEL else model_config(key).name,
)
config_inputs.draw(
    CONFIG_TEXT, CONFIG_FILE, key="contexts_config", apply=apply_config,
    placeholder='{"rope_theta": 500000.0, "head_dim": 128, ...}',
    reads="rope_theta, head_dim (or hidden_size / num_attention_heads), partial_rotary_factor, "
    "max_position_embeddings, rope_scaling or rope_parameters",
)
if config_inputs.show_message(CONFIG_MESSAGE) == "success" and model == contexts.CUSTOM_MODEL:
    note, config = st.session_state.get(PASTED_LAYERS, (None, None))
    layer_link.show(note, config=config)

st.header("Lengths and method")
lengths = blocks.row()
trained = int(controls.number_control(
    "trained", "Trained length L0 (tokens)", default=DEFAULT_VIEW.trained, low=1, high=contexts.LENGTH_MAX,
    step=1024, whole=True, container=lengths,
    help="original_max_position_embeddings: the length the model was trained on.",
))
target = int(controls.number_control(
    "target", "Target length L (tokens)", default=DEFAULT_VIEW.target, low=1, high=contexts.LENGTH_MAX,
    step=1024, whole=True, container=lengths, help="The length to run the model at.",
))
factor = controls.number_control(
    "factor", "Factor s", default=DEFAULT_VIEW.factor, low=1.0, high=contexts.FACTOR_MAX, step=1.0,
    container=lengths, help="The scaling factor (rope_scaling.factor); every method below uses it.",
)
method = controls.choice_control(
    "method", "Method", contexts.methods(), default=DEFAULT_VIEW.method, format_func=rope_methods.method_label,
)
# Each method's parameters, shown on request: nine boxes would cost every rerun about 2.5 ms of
# server CPU; hidden, they keep their values (URL, session), and the side-by-side uses them.
show_parameters = controls.bool_control(
    "parameters", "Show each method's parameters (transformers' names and defaults)",
)
owned = rope_methods.own_parameters()
cells = [column for _ in range(-(-(len(owned) + 5) // 3)) for column in st.columns(3)] if show_parameters else None


def box_place(index: int):
    """The column of the index-th parameter box, or None while the boxes are hidden."""
    return cells[index] if cells else None


# The methods' own parameters (explorer.rope_methods), then what a config gives beside them.
method_values = {
    parameter.key: controls.number_control(
        parameter.key, f"{entry.short} {parameter.field}", default=getattr(DEFAULT_VIEW, parameter.key), low=0.001,
        high=contexts.PARAMETER_MAX if parameter.high is None else parameter.high, container=box_place(index),
        drawn=show_parameters, help=parameter.help,
    )
    for index, (entry, parameter) in enumerate(owned)
}
truncate = controls.bool_control(
    "truncate", "YaRN truncate (floor and ceil its bounds)", default=True, container=box_place(len(owned)),
    drawn=show_parameters, persist=True,
)
mscale = controls.number_control(
    "mscale", "YaRN mscale (0: none)", default=0.0, low=0.0, high=contexts.MSCALE_MAX,
    container=box_place(len(owned) + 1), drawn=show_parameters,
)
mscale_all_dim = controls.number_control(
    "mscale_all_dim", "YaRN mscale_all_dim (0: none)", default=0.0, low=0.0, high=contexts.MSCALE_MAX,
    container=box_place(len(owned) + 2), drawn=show_parameters,
)
attention_given = controls.number_control(
    "attention_factor", "attention_factor (0: the method's own)", default=0.0, low=0.0, high=contexts.MSCALE_MAX,
    container=box_place(len(owned) + 3), drawn=show_parameters, help="YaRN's and LongRoPE's, when a config gives it.",
)
max_positions = int(controls.number_control(
    "max_positions", "max_position_embeddings (0: none)", default=0, low=0, high=contexts.LENGTH_MAX, whole=True,
    step=1024, container=box_place(len(owned) + 4), drawn=show_parameters,
    help="Dynamic NTK divides by it (else by L0), as transformers does; also read for YaRN's pitfall below.",
))
if not show_parameters:
    # Each method's values, and the config's own keys beside the methods that read them.
    given = {"truncate": "on" if truncate else "off"} | (
        {"mscale": f"{mscale:g}", "mscale_all_dim": f"{mscale_all_dim:g}"} if mscale or mscale_all_dim else {})
    by_method: dict[str, list[str]] = {}
    for name in rope_methods.method_names():
        reads = {key.name for key in rope_method(name).config_keys}
        values = [f"{parameter.field} {method_values[parameter.key]:g}" for entry, parameter in owned
                  if entry.name == name] + [f"{key} {value}" for key, value in given.items() if key in reads]
        if values:
            by_method[rope_methods.method_short(name)] = values
    st.caption(
        "; ".join(f"{name}: {', '.join(values)}" for name, values in by_method.items())
        + (f"; attention_factor {attention_given:g}" if attention_given else "")
        + ". max_position_embeddings: "
        + (f"{max_positions:,}." if max_positions else "none (dynamic NTK takes L0).")
    )


def shape(view: ContextView) -> str:
    """The view in a line, for the captions."""
    return (f"d={view.d}, b={format_number(view.base)}, L0={view.trained:,}, L={view.target:,}, "
            f"{contexts.method_label(view)}")


def pair_sections(view: ContextView) -> None:
    """The view's pitfalls, then the pairs' turns (one cached section: each costs a whole run a cache lookup)."""
    for note in contexts.pitfalls(view):
        st.warning(note, icon=":material/report:")
    label = contexts.method_label(view)
    plain, scaled = contexts.coverage(view, "none"), contexts.coverage(view)
    a = contexts.attention_factor(view, view.method)
    st.header("Pair by pair")
    st.markdown(f"Pairs that meet angles unseen in training, at the target length L = {view.target:,} tokens set "
                "above (Play's T below leaves these as they are):")
    metrics = blocks.row()
    metrics.metric("plain RoPE", f"{int(plain.unseen.sum())} of {view.pairs}")
    chosen = label if view.method != rope_methods.NONE else "method: none"
    metrics.metric(chosen, f"{int(scaled.unseen.sum())} of {view.pairs}")
    metrics.metric("attention factor a", f"{a:.6g}", help="transformers multiplies cos and sin by a.")
    metrics.metric("scores × a²", f"{a * a:.6g}", help="The rotated q and k each carry a.")
    blocks.chart(contexts.coverage_figure(view, title="Turns per pair, in training and at T"),
                 key="contexts_coverage")
    still = contexts.unrotated(view).get(view.method, 0)
    st.caption(
        f"{shape(view)}. A pair below the dashed line never turned a whole circle in training: it met only the "
        "angles up to L0·θ_i. Where the blue line (its turns at T with the method) rises above the grey one (its "
        "turns in training), it meets angles it never met: marked ✕. "
        + (f"The last {contexts.pairs_text(still)} turn 0 times with {label} (left unrotated): the blue line stops "
           "where they begin, as a log axis has no 0. " if still else "")
        + "Press Play: a length T grows from "
        f"{min(view.trained, view.target):,}, drawn by your browser (no server run per frame). "
        + animation.KEYBOARD_NOTE
        # One caption, two paragraphs: each element costs a whole run about what a block does (blocks.row).
        + "\n\nThe count compares with pretraining at L0 alone. A model trained further on long texts after its "
        "scaling (Llama 3.1 and DeepSeek-V3 were, up to 128K tokens) met those angles there: what is counted here "
        "is what that training, or the method alone, has to make up for."
    )


def pair_table(view: ContextView) -> None:
    blocks.table(contexts.pairs_table(view), titles=contexts.TABLE_TITLES, hide_index=True, height=300)
    st.caption(
        f"Every pair at L = {view.target:,} with {contexts.method_label(view)}; θ'_i/θ_i = 1 leaves a pair alone, "
        "1/s divides it by s" + (", 0 leaves it unrotated." if view.method in contexts.unrotated(view) else ".")
    )


def methods_section(view: ContextView) -> None:
    st.header("Every method side by side")
    blocks.chart(contexts.methods_figure(view, title=f"θ'_i/θ_i by wavelength, s = {view.factor:g}"),
                 key="contexts_methods")
    blocks.table(contexts.methods_summary(view), titles=contexts.TABLE_TITLES, hide_index=True)
    st.caption(
        f"Each method with factor s = {view.factor:g}, L0 = {view.trained:,}, at L = {view.target:,}; YaRN and "
        "llama3 with the parameters above, dynamic NTK at the target length. A pair right of the dotted line "
        "(λ_i > L0) never turned a whole circle in training. "
        + "".join(f"{rope_methods.method_label(method)} leaves {contexts.pairs_text(count)} unrotated (θ'_i = 0), "
                  "which a log axis has no place for: its line stops where they begin. "
                  for method, count in contexts.unrotated(view).items())
        + " ".join(f"Not drawn: {rope_methods.method_label(method)}, as {reason[0].lower()}{reason[1:]}"
                   for method, reason in contexts.unavailable_methods(view).items())
    )


def dot_section(view: ContextView) -> None:
    before, after = dot_curves(repr(view), view)
    a = contexts.attention_factor(view, view.method)
    st.header("Attention by offset, before and after")
    blocks.chart(contexts.dot_figure(view, before, after, title="q·k of all-ones q and k, by offset"),
                 key="contexts_dot")
    reach = "" if before.size == view.target else (
        f" Offsets 0..{before.size - 1:,} of {view.target - 1:,}: the page sums at most "
        f"{contexts.CURVE_TERMS:,} offsets × pairs (the code computes any range)."
    )
    st.caption(
        f"{shape(view)}. q_m·k_n = a² Σ_i 2cos((m − n)θ'_i) for q = k = (1, …, 1): transformers multiplies cos and sin "
        f"by the attention factor a (here {a:.6g}), so the rotated q and k each carry a and every score "
        f"a² = {a * a:.6g}. "
        "This is the rotary embedding alone; the attention then multiplies by its softmax scale 1/√head_dim. "
        f"{figures.envelope_note(before.size, 'offset')}{reach}"
    )


def ramp_section(view: ContextView) -> None:
    code, paper = contexts.yarn_ramps(view)
    fast, slow = contexts.yarn_bounds(view)
    st.header("YaRN's ramp: its code against its paper")
    blocks.chart(contexts.ramp_figure(view, title="YaRN's share of interpolation, per pair"),
                 key="contexts_yarn_ramp")
    gap = np.abs(code - paper)
    metrics = blocks.row()
    metrics.metric("bounds c(β_fast), c(β_slow)", f"{fast:.2f}, {slow:.2f}")
    metrics.metric("largest |w_code − w_paper|", f"{gap.max():.3g}",
                   help=f"at pair {int(gap.argmax())}" if gap.max() > 0 else None)
    metrics.metric("pairs where they differ", f"{int(np.sum(gap > 1e-12))} of {view.pairs}")
    st.caption(
        f"d={view.d}, b={format_number(view.base)}, L0={view.trained:,}, s={view.factor:g}, β_fast={view.beta_fast:g}, "
        f"β_slow={view.beta_slow:g}, truncate={'on' if view.truncate else 'off'}. "
        "θ'_i = (1 − w_i)θ_i + w_i θ_i/s. Models run the code's ramp (YaRN's repository, transformers, DeepSeek, "
        "gpt-oss): linear in the pair index between floor(c(β_fast)) and ceil(c(β_slow)). The paper's equation "
        "ramps linearly in r_i = L0/λ_i, which falls geometrically with i: it rises steeply past the fast bound. "
        f"Drawn with this page's factor, L0 and betas{'' if view.method == 'yarn' else ', whatever the method'}."
    )


# --- the part that reads the shared settings ---


def charts() -> None:
    """Everything below the page's controls, which reads the sidebar's d and n: a move of one reruns
    this alone (the model, lengths and method above stay as they are in the browser)."""
    # One base on this page: the sidebar's n, unless a config (or the URL's base key) gives one its
    # log-scale slider cannot hold, which is then used exactly until the visitor moves n.
    exact = float(controls.seed_value("base", 0.0, contexts.parse_base))
    anchor = st.session_state.get(BASE_ANCHOR)
    if exact in N_OPTIONS:
        st.session_state["n"], st.session_state["base"], exact = exact, 0.0, 0.0
    elif exact and (anchor is None or anchor[0] != exact):
        st.session_state["n"] = nearest_n(min(max(exact, N_OPTIONS[0]), N_OPTIONS[-1]))
        st.session_state[BASE_ANCHOR] = (exact, st.session_state["n"])
    elif exact and st.session_state["n"] != anchor[1]:
        st.session_state["base"], exact = 0.0, 0.0
    raw_d = int(st.session_state["d"])
    d = max(D_MIN, min(D_MAX, raw_d - raw_d % 2))
    base = exact or float(st.session_state["n"])
    st.markdown(
        f"**d = {d}** coordinates per head: the sidebar's d (a config's head_dim × partial_rotary_factor, the rotated "
        "ones; for proportional the whole head, whose first ⌊p·d/2⌋ pairs it rotates). "
        + (f"**Base b = {format_number(base)}**, exactly, from the config (rope_theta): the sidebar's n slider cannot "
           f"hold it and shows the nearest stop, {format_number(float(st.session_state['n']))}; moving n replaces it."
           if exact else f"**Base b = {format_number(base)}**: the sidebar's n (rope_theta).")
    )
    st.caption(
        "The sidebar's L, layout and frequencies do not change this page: its lengths are the trained and target "
        "lengths above, and every number here is per pair, the same whichever columns hold the pair."
    )
    if model != contexts.CUSTOM_MODEL:
        preset = preset_view(model)
        lists = (preset.short_factor, preset.long_factor)
    else:
        lists = st.session_state.get(PASTED_LISTS) or (None, None)
    asked, fixes = contexts.ordered_pairs(ContextView(
        d=d, base=base, method=method, factor=factor, trained=trained, target=target, max_positions=max_positions,
        truncate=truncate, mscale=mscale, mscale_all_dim=mscale_all_dim, attention_factor=attention_given,
        short_factor=lists[0], long_factor=lists[1], **method_values,
    ))
    if fixes:
        controls.correct_controls({key: getattr(asked, key) for key in contexts.ORDERED_KEYS}, fixes)
    view, view_notices = contexts.checked_view(asked)
    key = repr(view)
    for notice in view_notices:
        st.warning(notice, icon=":material/warning:")
    if model != contexts.CUSTOM_MODEL:
        source = model_config(model)
        st.caption(f"Preset: {source.name}. {source.note} Source: {source.url}")
        layer_link.show(layer_types.preset_note(model), preset=model)
    blocks.cached_section("contexts_pairs_section", lambda: pair_sections(view), key)
    blocks.first_chart_sent()
    blocks.downloads("the Play frames' turns", lambda: contexts.coverage_table(view), key="contexts_coverage")
    blocks.cached_section("contexts_pair_table", lambda: pair_table(view), key)
    blocks.downloads("the table of pairs", lambda: contexts.pairs_table(view), key="contexts_pairs")
    blocks.cached_section("contexts_methods", lambda: methods_section(view), key)
    blocks.downloads("every method's θ'/θ", lambda: contexts.methods_table(view), key="contexts_methods")
    blocks.cached_section("contexts_dot", lambda: dot_section(view), key)
    blocks.downloads("both curves", lambda: contexts.dot_table(view, *dot_curves(key, view)), key="contexts_dot")
    blocks.cached_section("contexts_yarn_ramp", lambda: ramp_section(view), key)
    blocks.downloads("both ramps", lambda: contexts.ramp_table(view), key="contexts_yarn_ramp")
    blocks.reproduce(lambda: snippets(key, view)[0], lambda: snippets(key, view)[1])


navigation.run_settings_part(charts)
