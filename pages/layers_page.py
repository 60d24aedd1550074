"""Your model, layer by layer: a model's decoder layers (a preset, or its config.json pasted or uploaded) as its
own code runs them: which layers rotate, with which base, scaling, pairs and window or chunk."""

import hashlib
import json

import streamlit as st

from explorer import animation, config_json, figures, layer_types
from explorer.model_configs import LAYER_PRESETS, model_config
from explorer.topics import layers
from explorer.topics.layers import ModelStack
from explorer.ui import blocks, cached, config_inputs, controls, navigation

#: Session-only state: a pasted config's text and an uploaded file (never in the URL), the stack read from
#: the visitor's config, and what reading it said.
CONFIG_TEXT, CONFIG_FILE = "layers_config_text", "layers_config_file"
VISITOR_STACK, CONFIG_MESSAGE = "_layers_stack", "_layers_config_message"  # the stack: (ModelStack, digest)
MODEL_KEYS = (layers.CUSTOM_MODEL, *LAYER_PRESETS)
DEFAULT_MODEL = "gemma-3-4b-it"


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False))
def preset_stack(key: str) -> ModelStack:
    """A preset's stack, read from its config.json file once (for every session)."""
    return layers.preset_stack(key)


@cached.page_cache(st.cache_data(max_entries=16, show_spinner=False))
def snippets(key: str, _stack: ModelStack, target: int) -> tuple[str, str]:
    """The reproduce-this code, NumPy and PyTorch, once per model and target."""
    return layers.layers_code(_stack, target), layers.layers_code(_stack, target, "torch")


def apply_config(data: str | bytes, source: str) -> None:
    try:
        use_config(config_json.read_config(data), source)
    except ValueError as error:
        st.session_state[CONFIG_MESSAGE] = ("error", config_json.one_line(f"{source}: {error}"), [])


def use_config(config: dict, source: str) -> None:
    """Show ``config``'s stack, or say in one line what to fix in it."""
    try:
        stack = layers.read_stack(config)  # named "your config": a file name is text a visitor chose, not for a chart
    except ValueError as error:
        st.session_state[CONFIG_MESSAGE] = ("error", config_json.one_line(f"{source}: {error}"), [])
        return
    # The cached sections are every session's: keyed by the config's content, not by this session.
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    st.session_state[VISITOR_STACK] = (stack, digest)
    controls.queue_values({"layer_model": layers.CUSTOM_MODEL})
    kinds = ", ".join(f"{len(kind.layers)} {kind.name}" for kind in stack.kinds)
    st.session_state[CONFIG_MESSAGE] = (
        "success", config_json.one_line(f"Read {source}: {len(stack.layers)} layers ({kinds})."), []
    )




def model_name(key: str) -> str:
    return "Your config (pasted or uploaded)" if key == layers.CUSTOM_MODEL else model_config(key).name


st.title("Your model, layer by layer")
st.markdown(
    "Open models since 2024 rarely run one RoPE. Gemma 3 gives five sliding-window layers base 10000 for each "
    "global layer at base 10⁶ with linear ×8; gpt-oss alternates 128-token windows with full layers; Llama 4 "
    "leaves every fourth layer without any position; Gemma 4 rotates a quarter of its global heads. Here is a "
    "model's stack as its own code (transformers 5.18) runs it: which layers rotate, with which base, scaling "
    "and window, and what each kind of layer meets at a length you choose."
)

# The sidebar's settings do not reach this page: a step of one reruns this line alone (its settings part).
navigation.run_settings_part(lambda: st.caption(
    "The sidebar's d, n, L, layout and frequencies do not change this page: "
    "every number here comes from the model's config, its head sizes, bases and lengths."))
st.header("The model")


def carried_here() -> None:
    """A config Rotary's or Longer contexts' link carried here."""
    carried = st.session_state.pop(layer_types.CARRIED_CONFIG, None)
    if carried is not None:
        use_config(carried, "the config of the page before")


model = config_inputs.choose_model("layer_model", MODEL_KEYS, default=DEFAULT_MODEL, custom=layers.CUSTOM_MODEL,
                                   own_config=VISITOR_STACK, format_func=model_name, arriving=carried_here)
config_inputs.draw(
    CONFIG_TEXT, CONFIG_FILE, key="layers_config", apply=apply_config,
    placeholder='{"model_type": "gemma3_text", "num_hidden_layers": 34, ...}',
    reads="model_type, num_hidden_layers, layer_types, sliding_window, head_dim, rope_parameters (flat or per "
    "layer type) or rope_theta and rope_scaling, and each family's own keys",
)
config_inputs.show_message(CONFIG_MESSAGE)
stack, key = st.session_state[VISITOR_STACK] if model == layers.CUSTOM_MODEL else (preset_stack(model), model)
target = int(controls.number_control(
    "layer_target", "Target length L (tokens)", default=layers.DEFAULT_TARGET, low=1, high=layers.TARGET_MAX,
    step=4096, whole=True, help="The length to run the model at: what each layer type meets there.",
))
if model != layers.CUSTOM_MODEL:
    source = model_config(model)
    # Markdown, not a caption: a link in a caption's grey falls below WCAG's contrast (axe, 4.1:1).
    st.markdown(f"Preset: **{source.name}**. {source.note} [Source]({source.url}).")
trained_note = (f"trained length {stack.trained:,} (max_position_embeddings)" if stack.trained_given else
                f"no max_position_embeddings in the config: taken as {stack.trained:,}")


def stack_section() -> None:
    st.header("The stack at a glance")
    metrics = blocks.row()
    metrics.metric("decoder layers", f"{len(stack.layers)}")
    metrics.metric("layers with RoPE", f"{sum(layer.rotary for layer in stack.layers)}")
    metrics.metric("layer types", f"{len(stack.kinds)}")
    blocks.chart(layers.stack_figure(stack, title=f"{stack.name}: one mark per layer"), key="layers_stack")
    st.caption("A filled mark rotates its queries and keys; a hollow one adds no position to them. Hover a mark "
               "for its layer's base, scaling, rotating pairs and window.")


def kinds_section() -> None:
    blocks.table(layers.kinds_table(stack, target), titles=layers.TABLE_TITLES, hide_index=True)
    notes = []
    for kind in stack.kinds:
        if kind.rotary and kind.unrotated_pairs:
            notes.append(f"{kind.name}: {kind.rotated_pairs} of the head's {kind.head_pairs} pairs rotate; the other "
                         f"{kind.unrotated_pairs} carry no position"
                         + (" (proportional RoPE: frequency 0, the exponent over the whole head)"
                            if kind.rope is not None and kind.rope.scaling is not None
                            and kind.rope.scaling.method == "proportional" else
                            f" (partial rotary: RoPE turns {2 * kind.rotated_pairs} of {kind.head_dim} coordinates)"))
        if kind.query_scale:
            notes.append(f"{kind.name}: Llama 4 scales these layers' queries by position instead (below).")
    st.caption(
        f"Per layer type at L = {target:,}, {trained_note}. a: the attention factor cos and sin are multiplied by. "
        "\"no turn in W\": pairs whose wavelength is longer than the window (or chunk) W, which never complete a "
        "turn inside what a query sees. \"unseen at L\": "
        "pairs that meet angles they never met in training; a window caps the offsets a layer meets, so a sliding "
        "layer meets none. " + " ".join(f"{note}." for note in notes)
    )


def pairs_section() -> None:
    st.header("Pair by pair, per layer type")
    blocks.chart(layers.wavelength_figure(stack, target, title="Wavelength per pair, against the windows and lengths"),
                 key="layers_wavelengths")
    st.caption(
        "Each layer type's wavelengths λ_i = 2π/θ'_i (log axis) against its window or chunk, the trained length and "
        "the target. A pair above its window's line never completes a turn inside the window: it tells near keys "
        "apart only by a small angle. Pairs a proportional or partial head leaves unrotated have no wavelength: a "
        "band marks them."
    )
    blocks.chart(layers.turns_figure(stack, target, title="Turns per pair over the offsets each layer sees"),
                 key="layers_turns")
    st.caption(
        "Turns each pair makes over the offsets its layers meet, min(T, window)·θ'_i/2π: dotted in training, solid "
        "at a length T; ✕ marks a pair meeting angles unseen in training. Press Play: T grows, and the sliding "
        "layers stop growing at their window while the full layers go on. Drawn by your browser (no server run per "
        "frame). " + animation.KEYBOARD_NOTE
    )


def score_section(count: int) -> None:
    st.header("The score by offset, per layer type")
    blocks.chart(layers.score_figure(stack, count, target, title="q·k of all-ones q and k, by offset"),
                 key="layers_scores")
    skipped = [kind.name for kind in stack.kinds if kind not in layers.scored_kinds(stack)]
    st.caption(
        "a² Σ_i 2cos(δθ'_i) over the rotating pairs, plus 1 per coordinate RoPE leaves alone; a layer without "
        "position scores every offset alike. A sliding or chunked layer's curve stops at its edge (dashed): its "
        "query sees no key further. "
        + (f"Offsets 0..{count - 1:,} of the target's {target - 1:,}. " if count < target else "")
        + figures.envelope_note(count, "offset")
        + (f" Not drawn: {', '.join(skipped)} (linear attention has no query·key score by offset)." if skipped else "")
    )


def query_scale_section(count: int) -> None:
    scale = float(layers.query_scale_steps(stack, target)[1][-1])  # the last step reached by position L - 1
    st.header("Llama 4's query scale on its NoPE layers")
    st.metric("query scale at the target", f"{scale:.6g}")
    blocks.chart(layers.query_scale_figure(stack, count, title="Factor the queries of NoPE layers are multiplied by"),
                 key="layers_query_scale")
    st.caption(
        f"1 + {stack.attn_scale:g}·ln(1 + floor((p + 1)/{stack.floor_scale:,})) (attn_temperature_tuning): 1 up to "
        f"position {stack.floor_scale - 2:,}, then a step every {stack.floor_scale:,} positions. Without a position, "
        "these layers sharpen their attention as the text grows instead."
    )


def page() -> None:
    rotating = any(kind.rotary for kind in stack.kinds)
    count = layers.curve_offsets(stack, target)
    blocks.cached_section("layers_stack", stack_section, key)
    blocks.first_chart_sent()
    blocks.downloads("every layer", lambda: layers.layers_table(stack, target), key="layers_stack")
    blocks.cached_section("layers_kinds", kinds_section, key, target)
    if rotating:
        blocks.cached_section("layers_pairs", pairs_section, key, target)
        blocks.downloads("every pair", lambda: layers.pairs_table(stack, target), key="layers_pairs")
        blocks.downloads("the Play frames' turns", lambda: layers.turns_table(stack, target), key="layers_turns")
    blocks.cached_section("layers_scores", lambda: score_section(count), key, target)
    blocks.downloads("the scores", lambda: layers.scores_table(stack, count, target), key="layers_scores")
    if stack.floor_scale is not None:
        positions = layers.query_scale_positions(stack, target)
        blocks.cached_section("layers_query_scale", lambda: query_scale_section(positions), key, target)
        blocks.downloads("the query scale", lambda: layers.query_scale_table(stack, positions),
                         key="layers_query_scale")
    blocks.reproduce(lambda: snippets(key, stack, target)[0], lambda: snippets(key, stack, target)[1])


page()
