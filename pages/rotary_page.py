"""Rotary (RoPE): a query and a key turned pair by pair by their positions, the score matrix that
depends on m - n alone, RoFormer's long-term decay, the two layouts and the error of mixing them,
and the rotation as the transition matrix of Relative positions."""

import numpy as np
import streamlit as st

import pe_core
from explorer import animation, figures, layer_types, presets, rope_methods, rope_presets, uploads
from explorer.rope_presets import CUSTOM
from explorer.settings import format_number
from explorer.topics import rotary
from explorer.topics.rotary import RotaryView
from explorer.ui import blocks, cached, controls, layer_link, model_carry, navigation

# --- this page's cached computations (shared by every session) ---


@cached.page_cache(st.cache_resource(max_entries=4, show_spinner=False))
def analysis(view_key: tuple, _view: RotaryView) -> rotary.Analysis:
    """Everything the score, decay and layout sections draw for ``_view`` (rotary.analyse), computed once.
    st.cache_resource: its arrays (read-only, at most ~2 MB at the largest settings) are neither pickled
    when stored nor unpickled when read, as st.cache_data would on every section and download that reads
    them. Keyed by ``view_key``, _view's plain key (a tuple hashes in a fifth of the dataclass's time)."""
    return rotary.analyse(_view)


@cached.page_cache(st.cache_data(max_entries=4, show_spinner="Reading what your model holds..."))
def rope_upload(file_id: str, name: str, _data: bytes) -> rotary.RopeCheck:
    """Every array of an uploaded file, read (rotary.check_upload); keeps only what the page shows, never
    the upload. Keyed by the upload's id: hashing up to 5 MB on every rerun would cost more than the
    page's warm rerun. Raises ValueError for a file that cannot be read."""
    return rotary.check_upload(name, _data)


WHY_EVEN = "RoPE turns coordinates in pairs"
st.title("Rotary (RoPE)")
# One element for the text and its two formulas (a page's elements each cost its every rerun).
st.markdown(
    "RoPE turns each pair i of a query's coordinates by the angle m·θ_i, m its position, and each pair of a "
    "key's by n·θ_i, with the sinusoid's frequencies θ_i = b^(−2i/d) (b, the base, is the sidebar's n: a "
    "config's rope_theta). Two turns by m·θ_i and n·θ_i leave (m − n)·θ_i between query and key, so the score "
    "depends on m − n alone: the sinusoid's shift-is-a-rotation (Relative positions), moved into attention.\n\n"
    "$$\n"
    r"\theta_i = b^{-2i/d},\allowbreak\qquad R_m = \operatorname{diag}_i \begin{bmatrix}\cos m\theta_i & "
    r"-\sin m\theta_i\\ \sin m\theta_i & \cos m\theta_i\end{bmatrix}"
    "\n$$\n\n$$\n"
    r"z_{x,i} = x_{u_i} + \mathrm{i}\,x_{v_i}:\allowbreak\quad (R_m q)\cdot(R_n k) = q^\top R_{n-m}\,k "
    r"\allowbreak = \sum_i \mathrm{Re}\,\left(z_{q,i}\, z_{k,i}^{*}\, e^{\mathrm{i}(m-n)\theta_i}\right)"
    "\n$$"
)

# --- the model, its layout and scaling, the query and the key ---------------------------------
model_row = blocks.row()
model = controls.preset_control(
    "model", "Model preset (sets d, n, the layout and the scaling)", rope_presets.PRESET_CHOICES, default=CUSTOM,
    values=rope_presets.preset_values, format_func=rope_presets.preset_label, container=model_row,
    help="Real models' RoPE, read from their config.json (explorer/data/model_configs).",
)
layout = controls.choice_control(
    "rope_layout", "RoPE's layout: which columns pair up", pe_core.ROPE_LAYOUTS, default="half", container=model_row,
    format_func=lambda name: f"{name} ({rotary.LAYOUT_CODE[name][2]})",
)
if model == CUSTOM:
    model_carry.forget("rotary")
else:
    preset_settings = rope_presets.preset_values(model)
    model_carry.remember(model, rope_presets.rope_preset(model).name, "rotary", preset_settings["d"],
                         preset_settings["n"])
if model == CUSTOM and st.session_state.get("scaling") == "model":
    st.session_state["scaling"] = "none"  # no model, no model's scaling (before its select box is drawn)
choices = tuple(c for c in rope_presets.scaling_choices() if model != CUSTOM or c != rope_presets.MODEL)
# Beside the model and the layout; its parameters, when it has any, in a row of their own under them.
method = controls.select_control("scaling", "Scaling", choices, default="none", container=model_row,
                                 format_func=rope_presets.scaling_label)
parameter_names = rope_presets.choice_parameters(method)
parameter_row = blocks.row() if parameter_names else None
parameters = {}
for name in parameter_names:
    parameter = rope_methods.PARAMETERS[name]
    parameters[name] = controls.option_control(name, parameter.label, parameter.stops, default=parameter.default,
                                               container=parameter_row)
ordered, fixes = rope_presets.ordered_parameters(method, parameters)
if fixes:
    controls.correct_controls(ordered, fixes)
qk_row = blocks.row()
qk = controls.choice_control("qk", "Query and key", rotary.QK_CHOICES, default="random", container=qk_row,
                             format_func=rotary.QK_LABELS.get)
seed = controls.int_control("seed", "Seed", default=0, low=0, high=99, container=qk_row) if qk == "random" else 0


def the_view() -> RotaryView:
    """The view of the shared settings and the controls above, with the notices and captions that say what it is."""
    settings = blocks.even_d_settings(WHY_EVEN)
    d, L, base = settings.d, settings.L, settings.n
    scaling, scaling_notices = rope_presets.scaling_from_choice(method, d=d, model=model, **parameters)
    for notice in scaling_notices:
        st.warning(notice, icon=":material/tune:")
    if model != CUSTOM:
        preset = rope_presets.rope_preset(model)
        edited = rope_presets.differences(preset, d=d, base=base, layout=layout, method=method)
        st.caption(
            f"**{preset.name}**: d = {preset.d} rotated coordinates, b = {format_number(preset.base)}, "
            f"{preset.layout}, "
            f"{rope_methods.describe(preset.scaling, preset.d)}. {preset.note} [Source]({preset.url})."
            + (f" Changed here: {edited}." if edited else "")
        )
        layer_link.show(layer_types.preset_note(model), preset=model)
    st.caption(
        f"Scaling: {rope_methods.describe(scaling, d)}. {rope_methods.attention_note(scaling, L)} Every "
        f"chart uses θ'_i at the sequence length L = {L:,}. The sidebar's layout and frequencies are the "
        "sinusoid's; here θ_i = b^(−2i/d) and the layout is the one above."
    )
    return RotaryView(d, base, L, layout, scaling, qk, seed)


# --- one pair ------------------------------------------------------------------------------------


def pair_section(view: RotaryView, convention: str, snippet: dict[str, int]) -> None:
    """One pair of q and k in its plane, Play, and the transition matrix: moving these reruns only this."""
    d, L = view.d, view.L
    st.header("One pair, turned in its plane")
    sliders = blocks.row()
    pair = controls.int_control("rope_pair", "Pair i", default=0, low=0, high=d // 2 - 1, container=sliders)
    m = controls.int_control("qpos", "Query position m", default=min(L - 1, 5), low=0, high=L - 1, container=sliders)
    n = controls.int_control("kpos", "Key position n", default=min(L - 1, 2), low=0, high=L - 1, container=sliders)
    # Keyed by what they depend on (rotary.pair_inputs): an L step replays them, unless it changes θ'_i or a.
    inputs = rotary.pair_inputs(view, pair)
    blocks.cached_section("rotary_pair", lambda: pair_chart(view, convention, pair, m, n), inputs,
                          convention, pair, m, n)
    blocks.downloads("the four points", lambda: rotary.pair_table(rotary.pair_view(view, pair, m, n)),
                     key="rotary_pair")
    play = blocks.play_on_request("Play: the pair of q turning")
    if play is not None:
        with play:
            blocks.cached_section("rotary_pair_play", lambda: pair_play(view, pair, n), inputs, pair, n,
                                  rotary.play_last(float(view.theta()[pair]), L))
            blocks.downloads("the Play frames", lambda: rotary.pair_play_table(view, pair, n), key="rotary_pair_play")
    controls.reseed(("delta", "pair"))
    st.page_link(
        navigation.page("relative"), label=f"Relative positions at δ = {m}, pair {pair}",
        icon=":material/rotate_right:", query_params={"delta": m, "pair": pair},
    )
    snippet.update(pair=pair, m=m, n=n)


def pair_chart(view: RotaryView, convention: str, pair: int, m: int, n: int) -> None:
    """The pair in its plane and its numbers, then the same rotation as the transition matrix's block."""
    p = rotary.pair_view(view, pair, m, n)
    chart_row = blocks.row()
    with chart_row:
        blocks.chart(rotary.pair_figure(p), key="rotary_pair")
    numbers_col = chart_row.container()
    angle, score, from_offset = rotary.pair_labels(pair)
    numbers_col.metric(angle, f"{np.degrees(m * p.theta):,.4f}")
    numbers_col.metric(score, f"{p.score:.6g}", help="a² times the dot product of the two turned arrows.")
    numbers_col.metric(from_offset, f"{p.from_offset:.6g}",
                       help="a² Re(z_q conj(z_k) e^(i(m−n)θ')) for this pair: the offset alone.")
    numbers_col.caption(
        f"Pair {pair} is columns {p.columns[0]} and {p.columns[1]} ({view.layout}); θ'_{pair} = {p.theta:.10g} rad per "
        f"position. Both arrows turn counterclockwise; the angle between them changes by (m − n)·θ', so their dot "
        "product, this pair's part of the score, is the same for every m, n with the same m − n."
    )
    transition(view, convention, pair, m)


def pair_play(view: RotaryView, pair: int, n: int) -> None:
    figure = rotary.pair_play_figure(view, pair, n)
    blocks.chart(figure, key="rotary_pair_play")
    swept = [int(name) for name in figure.frame_names]
    if len(swept) == 1:
        sweep = "m stays at 0, the only position"
    else:
        step = round((swept[-1] - swept[0]) / (len(swept) - 1))
        sweep = f"m goes from {swept[0]:,} to {swept[-1]:,}, " + (
            "one position a frame" if step == 1 else f"about {step:,} positions a frame")
    st.caption(
        f"Press Play: {sweep}, and q's pair turns by θ'_{pair} per position while k stays at n = {n:,}; drawn by "
        "your browser (no server run per frame). " + animation.KEYBOARD_NOTE
    )


def transition(view: RotaryView, convention: str, pair: int, m: int) -> None:
    block = rotary.transition_block(view.d, view.base, pair, m)

    def matrix(values: np.ndarray) -> str:
        return (r"\begin{bmatrix}" + " & ".join(f"{v:.6f}" for v in values[0]) + r"\\"
                + " & ".join(f"{v:.6f}" for v in values[1]) + r"\end{bmatrix}")

    st.subheader("The same rotation as Relative positions' transition matrix")
    st.latex(
        rf"R(m\theta_{{{pair}}}) = {matrix(block.rope)},\qquad M({m})_{{\text{{pair }}{pair}}} = "
        rf"{matrix(block.transition)}"
    )
    st.caption(
        f"Left: RoPE's rotation of pair {pair} at m = {m} (pe_core.rotate of the pair's two unit vectors, without "
        f"the scaling). Right: the 2 x 2 block of pair {pair} of the sinusoid's transition matrix M(δ = {m}) for "
        f"d = {view.d}, n = {format_number(view.base)} (pe_core.transition_matrix's block, rows and columns "
        f"{2 * pair} and "
        f"{2 * pair + 1} in the interleaved layout, read from pe_core.shift). Largest difference: "
        f"{block.max_difference:.2e}. The same matrix: RoPE applies it to the column (u, v)ᵀ from the left, the "
        "sinusoid to the row (sin, cos) from the right."
        + (" A scaling changes only the angle: R(mθ'_i)." if view.scaling is not None else "")
        + (" The link opens Relative positions with the sidebar's frequencies; choose 'paper' there for these θ_i."
           if convention != "paper" else "")
    )


# --- the score matrix ----------------------------------------------------------------------------


def score_section(view: RotaryView) -> None:
    s, L = analysis(view.key(), view).scores, view.L
    st.header("The score matrix q_m·k_n")
    with blocks.row():
        blocks.chart(rotary.square_figure(s.block_means, s.edges, title="q_m·k_n: constant along each diagonal",
                                          value_name="q_m·k_n"), key="rotary_scores")
        blocks.chart(rotary.closed_form_figure(s), key="rotary_closed_form")
    blocks.reduced_note("The score matrix", s.block_means.shape, (L, L))
    last = L - s.window
    if L > 1:
        measured = (
            f"the line is g at the {2 * L - 1:,} offsets m − n. Measured with pe_core.rotate on "
            f"{rotary.span(0, s.window - 1)} and {rotary.span(last, L - 1)}: largest |q_m·k_n − g(m − n)| = "
            f"{s.closed_error:.2e}, and the scores of the last positions equal those of the first ones {last:,} "
            f"positions earlier to {s.shift_error:.2e}."
        )
    else:
        measured = f"the line is g(0). Measured with pe_core.rotate: |q_0·k_0 − g(0)| = {s.closed_error:.2e}."
    st.caption(
        "Never built as an L x L matrix: each drawn cell is the product of the block means of the turned q and k "
        f"(closed form), and {measured} {figures.envelope_note(2 * L - 1, 'offset')}"
    )


# --- long-term decay -----------------------------------------------------------------------------


def decay_section(view: RotaryView) -> None:
    dec, d, L = analysis(view.key(), view).decay, view.d, view.L
    st.header("Long-term decay")
    blocks.chart(rotary.decay_figure(dec, d=d), key="rotary_decay")
    numbers = blocks.row()
    numbers.metric(rotary.DECAY_LABELS[0], f"{dec.worst_ratio:.4f}",
                   help="RoFormer's inequality for all-ones q and k: at most 1 at every distance.")
    numbers.metric(rotary.DECAY_LABELS[1], f"{dec.bound[-1]:.6g}", help=f"At distance 0 it is (d/2 + 1)/2 = "
                   f"{(d // 2 + 1) / 2:g}.")
    st.caption(
        "RoFormer 3.4.3: with S_j = Σ_{k<j} e^{i(m−n)θ_k} and h_i = z_q,i conj(z_k,i), summation by parts gives "
        "|q_m·k_n| ≤ max_i |h_{i+1} − h_i| · Σ_j |S_j|; the top panel is the mean of the |S_j| (its Figure 2), "
        "which depends on θ alone. All-ones q and k have every h_i = 2, so their score Σ_i 2 cos((m − n)θ_i) "
        f"(bottom, times a²) stays within d·a²·bound. {figures.envelope_note(L, 'distance')}"
    )


# --- the two layouts -----------------------------------------------------------------------------


def layouts_section(view: RotaryView) -> None:
    tables, d, L = analysis(view.key(), view).cos_tables, view.d, view.L
    st.header("Two layouts: half and interleaved")
    with blocks.row():
        for layout_name in pe_core.ROPE_LAYOUTS:
            values, row_edges, col_edges = tables[layout_name]
            blocks.chart(rotary.cos_figure(values, row_edges, col_edges, d=d, layout=layout_name,
                                            a=view.attention()),
                         key=f"rotary_cos_{layout_name}")
    values, row_edges, col_edges = tables[view.layout]
    blocks.reduced_note("Each cos table", values.shape, (L, d))
    st.caption(
        "The same angles m·θ'_i in two orders: half (GPT-NeoX, Llama and most models in transformers: "
        "cat(freqs, freqs) with rotate_half) repeats the d/2 pairs' columns as two halves; interleaved (RoFormer, "
        "GPT-J's rotate_every_two, Meta's complex freqs_cis) puts each pair's two columns side by side. With q and "
        "k laid out to match, both give the same scores."
    )


def mixing_section(view: RotaryView) -> None:
    mix, layout, L = analysis(view.key(), view).mixing, view.layout, view.L
    other = rotary.OTHER_LAYOUT[layout]
    cache, _, _ = rotary.LAYOUT_CODE[layout]
    wrong = rotary.LAYOUT_CODE[other][1]
    st.subheader(f"Mixing them: the {layout} cache with {wrong}")
    map_row = blocks.row()
    with map_row:
        blocks.chart(rotary.square_figure(mix.error_means, mix.edges, title=f"{cache} + {wrong} − the right scores",
                                          value_name="error"), key="rotary_mixing")
    numbers_col = map_row.container()
    numbers_col.metric(rotary.MIXING_LABELS[0], f"{np.abs(mix.error_means).max():.4g}")
    numbers_col.metric(rotary.MIXING_LABELS[1], f"{100 * mix.norm_change:.3g}",
                       help="max over the measured positions of | |x'_m| / (a |x|) − 1 | for the query x = q.")
    numbers_col.metric(rotary.MIXING_LABELS[2], f"{mix.drift:.4g}",
                       help=f"max |S'[m, n] − S'[m + {L - mix.window:,}, n + {L - mix.window:,}]| over the first "
                       "positions: zero for a relative score.")
    numbers_col.caption(
        f"A common real bug (transformers #40462, rasbt/LLMs-from-scratch PR #802): {wrong} pairs columns whose "
        f"angles in {'an' if layout == 'interleaved' else 'a'} {layout} cache differ, so it turns no pair rigidly: "
        "norms change and the score depends on m + n as well as m − n: U(m − n) + V(m + n) "
        f"(pe_core.rope_mixed_scores), checked on the measured positions to {mix.closed_error:.2e}. Each drawn "
        "cell is the product of the block means of the turned q and k, in closed form."
    )


def layouts_and_mixing(view: RotaryView) -> None:
    """One cached section (one hash of its inputs, one replay on a warm run): the mixing map needs the view."""
    layouts_section(view)
    mixing_section(view)


# --- check your RoPE -------------------------------------------------------------------------------


def check_section(view: RotaryView) -> None:
    """The checker, drawn once the visitor opens it: an upload reruns only this section."""
    st.markdown(
        "Its `inv_freq`, a cos or sin table, or a complex `freqs_cis` (.npy, .npz, .csv, .safetensors or .gguf), "
        f"{uploads.rotary_limits()}. The checker reads its kind, d, layout, base, "
        "start, scaling and attention factor, and says what no table can tell apart; for a table no reading "
        "rebuilds, it names the closest reading and where it differs most. Nothing is stored."
    )
    st.caption(
        "From PyTorch: `np.save('cos.npy', cos.float().numpy())` (bfloat16 has no NumPy type; `.float()` keeps "
        "every value), `np.save('inv_freq.npy', rotary_emb.inv_freq.numpy())`, `np.save('freqs_cis.npy', "
        "freqs_cis.numpy())` (complex64), or several at once: `np.savez('rope.npz', cos=cos, inv_freq=inv_freq)`. "
        "A checkpoint's .safetensors is read for its rotary buffers (inv_freq, freqs_cis, embed_positions, "
        "cos_cached...), a .gguf for the RoPE llama.cpp's converter wrote into it (its metadata, rope_freqs). "
        f"Up to 5 MB here; larger files, whole checkpoints, in a terminal or a CI job: `{uploads.COMMAND_LINE} "
        "model.safetensors` (or model.gguf --config config.json, or a checkpoint's folder) reads them from disk."
    )
    # Every type reaches the page, where a file it does not read gets a sentence, not only a red chip.
    upload = st.file_uploader("What your model holds (.npy, .npz, .csv, .safetensors or .gguf)", key="rotary_upload")
    if upload is None:
        return
    controls.steps_rerun_page()  # a reading is compared with the view above
    try:
        check = rope_upload(upload.file_id, upload.name, upload.getvalue())
    except ValueError as error:
        st.error(str(error), icon=":material/block:")
        return
    if check.model_file:
        summary, *notes = check.model_file
        st.info(summary, icon=":material/description:")
        for note in notes:
            st.caption(note)
    if check.refusal:
        st.warning(check.refusal, icon=":material/block:")
    if not check.readings:
        return
    readings = check.readings
    index = 0
    if len(readings) > 1:
        blocks.table(rotary.arrays_table(check), width="stretch")
        index = st.selectbox("Array shown below", range(len(readings)), index=check.first_rotary,
                             format_func=lambda i: readings[i].label, key=f"rotary_array_{upload.file_id}")
    show_reading(view, readings[index])


def show_reading(view: RotaryView, reading: rotary.ArrayReading) -> None:
    """One array's verdict, its metric boxes, the scaling's parameters and the way to open it on the page."""
    for note in reading.notes:
        st.caption(note)
    status, result = reading.status, reading.result
    if status == "error":
        st.error(reading.error, icon=":material/block:")
        return
    if status == "rotary":
        st.success(result["verdict"], icon=":material/check_circle:")
    elif status == "sinusoidal":
        what = ("A sinusoidal positional encoding that a rotary model holds too." if result["rotary_buffer"]
                else "A sinusoidal positional encoding, not what a rotary model holds.")
        st.info(f"{what} {result['verdict']}", icon=":material/waves:")
        st.page_link(navigation.page("pitfalls"), label="Check it on Conventions and pitfalls (its checker)",
                     icon=":material/arrow_forward:")
        return
    else:
        st.warning(result["verdict"], icon=":material/help:")
    metrics = rotary.reading_metrics(result)
    if not metrics:
        return
    if status == "near":
        st.caption("The closest reading, which differs from the table by more than round-off explains:")
    boxes = [box for _ in range(0, len(metrics), 4) for box in st.columns(4)]
    for box, (label, value) in zip(boxes, metrics.items(), strict=False):
        box.metric(label, value)
    if status != "rotary":
        return
    if result["scaling"] is not None:
        st.subheader("The scaling's parameters")
        blocks.table(rotary.scaling_table(result["scaling"]), width="stretch")
    if result["alternatives"]:
        st.caption("No table tells this reading from: "
                   + "; ".join(rotary.alternative_text(a) for a in result["alternatives"]) + ".")
    opening = rotary.opening(result)
    if opening.values is None:
        st.caption(f"The page's controls cannot show this reading exactly: {opening.reason}.")
    elif opening.shown_by(view):
        shown = "d, base, layout and scaling" if "rope_layout" in opening.values else "d, base and scaling"
        st.caption(f"The charts above show this reading: its {shown}.")
    elif st.button("Open this reading on the page", icon=":material/open_in_browser:", key="rotary_open_reading",
                   help="Sets the sidebar's d and n, the layout and the scaling above to the reading's, as a model "
                   "preset does."):
        controls.queue_values(opening.values | {"preset": presets.CUSTOM})
        st.rerun(scope="app")


# --- the part that reads the shared settings -----------------------------------------------------


def charts() -> tuple[RotaryView, dict[str, int]]:
    """The charts below the controls, which read the sidebar's d, n and L: a move of one reruns this alone.
    Returns the view and the reproduce-this code's arguments, for the checker and the code below it."""
    view = the_view()
    #: The reproduce-this code's arguments (the pair section's controls add theirs).
    snippet = {"blocks": rotary.score_blocks(view.L)}
    blocks.fragment(pair_section, view, st.session_state["settings"].convention, snippet)
    blocks.cached_section("rotary_scores", lambda: score_section(view), view.key())
    blocks.downloads("the score matrix", lambda: rotary.square_table(
        analysis(view.key(), view).scores.block_means, analysis(view.key(), view).scores.edges), key="rotary_scores")
    blocks.downloads("the closed form and the measured scores",
                     lambda: rotary.closed_form_table(analysis(view.key(), view).scores), key="rotary_closed_form")
    blocks.cached_section("rotary_decay", lambda: decay_section(view), view.d, view.base, repr(view.scaling),
                          view.L)
    blocks.downloads("the bound and the all-ones scores", lambda: rotary.decay_table(analysis(view.key(), view).decay),
                     key="rotary_decay")

    blocks.cached_section("rotary_layouts", lambda: layouts_and_mixing(view), view.key())
    for name in pe_core.ROPE_LAYOUTS:
        blocks.downloads(f"the {name} cos table", lambda name=name: rotary.cos_download(
            *analysis(view.key(), view).cos_tables[name], d=view.d, layout=name), key=f"rotary_cos_{name}")
    blocks.downloads("the error map", lambda: rotary.square_table(
        analysis(view.key(), view).mixing.error_means, analysis(view.key(), view).mixing.edges), key="rotary_mixing")
    return view, snippet


drawn = navigation.run_settings_part(charts)
if drawn is not None:
    view, snippet = drawn
    st.header("Check your RoPE")
    checker = blocks.on_request("Upload what your model holds", key="rotary_checker",
                                icon=":material/upload_file:")
    if checker is not None:
        with checker:
            blocks.fragment(check_section, view)
    if blocks.reproduce(lambda: rotary.rotary_code(view, **snippet),
                        lambda: rotary.rotary_code(view, **snippet, library="torch")):
        controls.steps_rerun_page()  # the code holds the settings
