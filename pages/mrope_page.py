"""Images and video (M-RoPE): each token's temporal, height and width positions in a sequence of text, an image and
a video, as Qwen's vision-language models compute them, and what their sections make of them."""

import numpy as np
import streamlit as st

from explorer import animation, config_json
from explorer.model_configs import model_config
from explorer.topics import mrope
from explorer.topics.mrope import MropeView
from explorer.ui import blocks, cached, config_inputs, controls, navigation

#: Session-only state: a pasted config's text and an uploaded file (never in the URL), the view read from the
#: visitor's config, and what reading it said.
CONFIG_TEXT, CONFIG_FILE = "mrope_config_text", "mrope_config_file"
VISITOR_VIEW, CONFIG_MESSAGE = "_mrope_view", "_mrope_config_message"
#: URL key of the expander that holds the text runs' and the video's sliders.
SEQUENCE_KEY = "sequence"


@cached.page_cache(st.cache_data(max_entries=8, show_spinner=False))
def positions(key: str, _view: MropeView) -> np.ndarray:
    """The sequence's (3, L) position ids, once per model and sequence."""
    return mrope.positions(_view)


@cached.page_cache(st.cache_data(max_entries=8, show_spinner=False))
def preset_view(key: str) -> MropeView:
    """A preset's M-RoPE, read from its config.json once."""
    return mrope.preset_view(key)


@cached.page_cache(st.cache_data(max_entries=8, show_spinner=False))
def snippets(key: str, _view: MropeView) -> tuple[str, str]:
    """The reproduce-this code, NumPy and PyTorch."""
    return mrope.mrope_code(_view), mrope.mrope_code(_view, "torch")


def apply_config(data: str | bytes, source: str) -> None:
    try:
        view = mrope.view_from_config(config_json.read_config(data))
    except ValueError as error:
        st.session_state[CONFIG_MESSAGE] = ("error", config_json.one_line(f"{source}: {error}"), [])
        return
    st.session_state[VISITOR_VIEW] = view
    controls.queue_values({"vl_model": mrope.CUSTOM_MODEL})
    st.session_state[CONFIG_MESSAGE] = ("success", config_json.one_line(
        f"Read {source}: d = {view.d}, base {view.base:g}, sections {list(view.sections)} "
        f"{mrope.layout_name(view.interleaved)}."), [])



st.title("Images and video (M-RoPE)")
st.markdown(
    "A vision-language model gives each token three positions: temporal, height and width. Text tokens get the "
    "same number three times, so for text M-RoPE is plain RoPE; an image's tokens get their row and column, a "
    "video's also its frame's time. Each rotary pair takes one of the three (its section), so the score between "
    "two tokens depends on their offsets (δt, δh, δw). Qwen2-VL and Qwen2.5-VL give the pairs in blocks, "
    "Qwen3-VL interleaves them.\n\n"
    "$$\n"
    # Groups KaTeX does not break, each short enough for a phone, with breaks allowed between them.
    r"{s(m, n) = \sum_j 2\cos(\delta_{a(j)}\,\theta_j)},\quad\allowbreak"
    r"{\delta_a = p_a(m) - p_a(n)},\quad\allowbreak{a(j) \in \{t, h, w\}}\,"
    "\n$$"
)

# The sidebar's settings do not reach this page: a step of one reruns this line alone (its settings part).
navigation.run_settings_part(lambda: st.caption(
    "The sidebar's d, n, L, layout and frequencies do not change this page: "
    "every number here comes from the model's config and the sequence below."))
st.header("The model and the sequence")
model = config_inputs.choose_model("vl_model", mrope.MODEL_KEYS, default=mrope.DEFAULT_MODEL,
                                   custom=mrope.CUSTOM_MODEL, own_config=VISITOR_VIEW, format_func=mrope.model_name)
config_inputs.draw(
    CONFIG_TEXT, CONFIG_FILE, key="mrope_config", apply=apply_config,
    placeholder='{"model_type": "qwen2_5_vl", "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, ...}',
    reads="model_type, rope_theta, head_dim (or hidden_size / num_attention_heads), rope_scaling or rope_parameters "
    "with mrope_section, and vision_config's spatial_merge_size and tokens_per_second",
)
config_inputs.show_message(CONFIG_MESSAGE)
preset = st.session_state[VISITOR_VIEW] if model == mrope.CUSTOM_MODEL else preset_view(model)
source_line = "" if model == mrope.CUSTOM_MODEL else (
    f" {model_config(model).note} [Source]({model_config(model).url}).")
st.markdown(f"**{mrope.model_name(model)}**: d = {preset.d} per head, base {preset.base:g}, sections "
            f"{list(preset.sections)} {mrope.layout_name(preset.interleaved)}, spatial merge {preset.merge}"
            + (f", tokens_per_second {preset.tokens_per_second:g}" if preset.tokens_per_second else "")
            + f".{source_line}")
image_row = blocks.row()
image_rows = controls.int_control("image_rows", "Image: rows of tokens", default=8, low=1, high=mrope.SIDE_MAX,
                                  container=image_row)
image_cols = controls.int_control("image_cols", "Image: columns of tokens", default=12, low=1, high=mrope.SIDE_MAX,
                                  container=image_row)
# The text runs and the video, on request: seven more sliders would cost every whole run of this page about a
# tenth of its server time (benchmarks/JOURNAL.md, "2026-12-07, 15:35"). Hidden, they keep their values (URL,
# session), and the sequence's caption below says what they are.
around = blocks.kept_on_request("The text around the image, and the video", key=SEQUENCE_KEY,
                                icon=":material/movie:")
shown = around is not None
text_row = video_row = None
if shown:
    with around:
        text_row, video_row = blocks.row(), blocks.row()
text_before = controls.int_control("text_before", "Text before the image (tokens)", default=6, low=0,
                                   high=mrope.TEXT_MAX, container=text_row, drawn=shown, persist=True)
text_between = controls.int_control("text_between", "Text between (tokens)", default=4, low=0, high=mrope.TEXT_MAX,
                                    container=text_row, drawn=shown, persist=True)
text_after = controls.int_control("text_after", "Text after the video (tokens)", default=3, low=0,
                                  high=mrope.TEXT_MAX, container=text_row, drawn=shown, persist=True)
video_frames = controls.int_control("video_frames", "Video: frames (after the temporal patch)", default=4, low=1,
                                    high=mrope.FRAMES_MAX, container=video_row, drawn=shown, persist=True)
video_rows = controls.int_control("video_rows", "Video: rows", default=4, low=1, high=mrope.SIDE_MAX,
                                  container=video_row, drawn=shown, persist=True)
video_cols = controls.int_control("video_cols", "Video: columns", default=6, low=1, high=mrope.SIDE_MAX,
                                  container=video_row, drawn=shown, persist=True)
seconds = controls.option_control("video_seconds", "Video: seconds per frame", mrope.SECONDS_STOPS, default=1.0,
                                  container=video_row, drawn=shown, persist=True)
sequence = mrope.with_sequence(preset, text_before=text_before, image_rows=image_rows, image_cols=image_cols,
                               text_between=text_between, video_frames=video_frames, video_rows=video_rows,
                               video_cols=video_cols, seconds=seconds, text_after=text_after)


def grid_section(view: MropeView, key: str) -> None:
    ids = positions(key, view)
    resumes = mrope.text_resumes(view, ids)
    st.header("Where an image's tokens sit")
    metrics = blocks.row()
    metrics.metric("tokens", f"{view.length:,}")
    metrics.metric("image tokens", f"{view.image_rows * view.image_cols:,}")
    metrics.metric("text after the image resumes at", f"{resumes[0][1]:,}" if resumes else "n/a")
    metrics.metric("largest position", f"{int(ids.max()):,}")
    blocks.chart(mrope.image_axes_figure(view, ids, title="The image's tokens, coloured by each of their positions"),
                 key="mrope_image")
    st.caption(
        f"{view.image_rows} × {view.image_cols} tokens, each {view.merge} × {view.merge} patches merged. All share "
        "one temporal position; the height position is the row, the width position the column, both counted from "
        "where the image starts."
    )
    st.header("The sequence's three positions")
    blocks.chart(mrope.rows_figure(view, ids, title="Temporal, height and width position of every token"),
                 key="mrope_rows")
    st.caption(
        f"The sequence: {mrope.sequence_words(view)}. "
        "Text runs climb on all three rows together. An image or a video spreads its tokens over its grid, and the "
        "text after it resumes at its start plus max(rows, columns), on all three axes, not after its largest "
        "temporal position. "
        + ("Qwen2.5-VL spaces a video's frames by tokens_per_second × seconds per frame."
           if view.tokens_per_second else "Here a video's frames are one temporal step apart.")
    )


def axes_section(view: MropeView) -> None:
    st.header("Which pairs take which axis")
    blocks.chart(mrope.axes_figure(view, title=f"Sections {list(view.sections)}: each pair's axis"),
                 key="mrope_axes")
    misread = mrope.misread_axes(view)
    st.caption(
        "Blocked: the first sections[0] pairs take the temporal position, the next sections[1] the height, the rest "
        "the width. Interleaved: height and width every third pair within their counts, the rest temporal: every "
        f"axis keeps fast and slow pairs. Read the other way, these sections give {mrope.axis_counts(misread)}"
        + ("." if sorted(np.bincount(misread, minlength=3)) == sorted(view.sections) else
           f" instead of {', '.join(map(str, view.sections))}: the slices silently drop pairs.")
    )


def score_section(view: MropeView, key: str) -> None:
    """The query's scores over the image and Play (moving the query reruns only this)."""
    st.header("The score between two image tokens")
    sliders = blocks.row()
    row = controls.int_control("query_row", "Query token: row", default=min(3, view.image_rows - 1), low=0,
                               high=view.image_rows - 1, container=sliders)
    col = controls.int_control("query_col", "Query token: column", default=min(5, view.image_cols - 1), low=0,
                               high=view.image_cols - 1, container=sliders)
    queried = mrope.with_query(view, row, col)
    blocks.cached_section("mrope_scores", lambda: scores(queried, key), key, row, col)
    blocks.downloads("the scores", lambda: mrope.scores_table(queried, positions(key, queried)),
                     key="mrope_scores")
    snippet.update(query_row=row, query_col=col)


def scores(view: MropeView, key: str) -> None:
    ids = positions(key, view)
    blocks.chart(mrope.score_figure(view, ids, title="q·k of all-ones q and k: the ✕ against every image token"),
                 key="mrope_scores")
    st.caption(
        "Each cell: the score between the query (✕) and that token. It depends on (δh, δw) alone: the same pattern "
        "moves with the ✕. Press Play: the query moves along the middle row, then down the middle column, drawn by "
        "your browser (no server run per frame). " + animation.KEYBOARD_NOTE
    )
    right, wrong = mrope.image_scores(view, ids), mrope.image_scores(view, ids, misread=True)
    st.header("Reading the sections the wrong way")
    blocks.chart(mrope.wrong_reading_figure(view, ids, title="The same scores with the sections misread"),
                 key="mrope_misread")
    metrics = blocks.row()
    metrics.metric("largest |score − misread| on the image", f"{float(np.abs(right - wrong).max()):.4g}")
    metrics.metric("text tokens' |score − misread|", f"{mrope.text_misread(view, ids):.4g}")
    st.caption(
        f"Read in the {mrope.layout_name(not view.interleaved)} layout, the pairs take other axes. Text tokens, whose "
        "three positions are equal, score exactly as before, so a model whose sections are misread still writes "
        "good text; its images break (alibaba/MNN #4133: Qwen3-VL's interleaved sections read as Qwen2.5-VL's "
        "blocks). "
        + ("Read as blocks, the height and width take only the slowest pairs, which hardly turn over a few rows: the "
           "image's tokens look alike." if view.interleaved else
           "Read interleaved, the height and width take every third pair, fast ones included: near tokens look "
           "far apart.")
    )


def page() -> None:
    key = repr(sequence)
    blocks.cached_section("mrope_grid", lambda: grid_section(sequence, key), key)
    blocks.first_chart_sent()
    blocks.downloads("every token's positions", lambda: mrope.positions_table(sequence, positions(key, sequence)),
                     key="mrope_rows")
    shown = min(sequence.length, mrope.CACHE_TOKENS)
    tokens = "every token" if shown == sequence.length else f"the first {shown:,} tokens"
    blocks.downloads(f"the cos and sin of {tokens}", lambda: mrope.cache_table(sequence, positions(key, sequence)),
                     key="mrope_cache")
    blocks.cached_section("mrope_axes", lambda: axes_section(sequence), repr(preset))
    blocks.downloads("each pair's axis", lambda: mrope.axes_table(sequence), key="mrope_axes")
    blocks.fragment(score_section, sequence, key)
    blocks.reproduce(lambda: code()[0], lambda: code()[1])


def code() -> tuple[str, str]:
    """The snippets for the sequence and the query the score section's sliders chose (read once they ran)."""
    queried = mrope.with_query(sequence, **snippet)
    return snippets(repr(queried), queried)


#: The reproduce-this code's query, set by the score section's sliders.
snippet: dict[str, int] = {}
page()
