"""Conventions and pitfalls: two variants side by side with their difference, and a checker
that says which variant an uploaded matrix is."""

import math

import streamlit as st

from explorer import figures, uploads
from explorer.settings import FULL_MATRIX_CELLS, N_OPTIONS, Settings, format_number
from explorer.topics import pitfalls
from explorer.ui import blocks, cached, controls, navigation

# --- this page's cached computations (shared by every session) ---


@cached.page_cache(st.cache_resource(max_entries=4, show_spinner="Comparing the two variants..."))
def pitfalls_comparison(
    a: pitfalls.Variant, b: pitfalls.Variant, L: int, d: int, max_rows: int, max_cols: int
) -> pitfalls.Comparison:
    """Two variants as drawn, their difference, and the largest |A - B| over the full matrices
    (explorer.topics.pitfalls.compare, in row blocks of at most FULL_MATRIX_CELLS; ~3 s at the largest).
    st.cache_resource: its drawn arrays (read-only, ~1 MB at most) are not pickled when stored and
    unpickled at each read (the section that draws them, the download, the code), as st.cache_data did."""
    return pitfalls.compare(a, b, L, d, max_rows=max_rows, max_cols=max_cols, max_cells=FULL_MATRIX_CELLS)


@cached.page_cache(st.cache_data(max_entries=4, show_spinner="Checking the matrix..."))
def pitfalls_upload(file_id: str, name: str, _data: bytes) -> pitfalls.UploadCheck:
    """Load, identify and compare an uploaded matrix (explorer.topics.pitfalls.check_upload); keeps only
    display-sized results, never the upload itself. Keyed by the upload's id: hashing up to 5 MB on
    every rerun would cost more than the page's warm rerun. Raises ValueError for a bad file."""
    return pitfalls.check_upload(name, _data, max_cells=FULL_MATRIX_CELLS)


settings: Settings = st.session_state["settings"]
L, d = settings.L, settings.d
# Variants a and b are drawn side by side, each at half the page's width.
MAX_ROWS, MAX_COLS = figures.heatmap_grid(L, d, across=figures.HALF_PLOT_COLS)
st.title("Conventions and pitfalls")
st.markdown(
    "Implementations of the sinusoidal encoding differ in small ways that no error message "
    "reveals: column order, frequency formula, base, first position. Choose two variants to see "
    "how far apart they are, then check your own matrix below."
)

# --- two variants -------------------------------------------------------------------------
left, right = st.columns(2)
key_a = controls.choice_control(
    "a", "Variant A", tuple(pitfalls.VARIANTS), default="sidebar", container=left,
    format_func=pitfalls.VARIANTS.get, horizontal=False,
)
key_b = controls.choice_control(
    "b", "Variant B", tuple(pitfalls.VARIANTS), default="concatenated", container=right,
    format_func=pitfalls.VARIANTS.get, horizontal=False,
)
other_n, offset = 1e6, 1
if "other_base" in (key_a, key_b):
    # The decades of the sidebar's base slider: a short radio, and seed 003's 1000000 among them.
    base_options = tuple(format_number(n) for n in N_OPTIONS if math.log10(n).is_integer())
    other_n = float(controls.choice_control(
        "other_n", "Another base n", base_options, default="1000000", format_func=lambda text: f"n = {text}",
    ))
if "offset" in (key_a, key_b):
    offset = controls.int_control(
        "offset", "First position of the offset variant", default=1, low=-1000, high=16384,
        help="Row r of that variant is the encoding of position offset + r.",
    )
variant_a = pitfalls.variant(key_a, settings, other_n=other_n, offset=offset)
variant_b = pitfalls.variant(key_b, settings, other_n=other_n, offset=offset)


def comparison_maps() -> None:
    text_a, text_b = st.columns(2)
    text_a.markdown(f"**A: {variant_a.describe()}.** {pitfalls.explanation(key_a, settings, variant_a)}")
    text_b.markdown(f"**B: {variant_b.describe()}.** {pitfalls.explanation(key_b, settings, variant_b)}")

    comparison = pitfalls_comparison(variant_a, variant_b, L, d, MAX_ROWS, MAX_COLS)
    rows, cols = comparison.row_labels, comparison.columns.labels
    row_ticks = figures.round_ticks(rows, [int(r) for r in comparison.row_edges[:-1]])
    col_ticks = figures.round_ticks(cols, comparison.columns.ticks, count=10)


    def heatmap(values, title: str, value_name: str, zrange: tuple[float, float]):
        return figures.heatmap_figure(
            values, row_labels=rows, col_labels=cols, row_ticks=row_ticks, col_ticks=col_ticks, title=title,
            x_title="dimension j (column)", y_title="row r of the matrix", value_name=value_name, zrange=zrange,
        )


    chart_a, chart_b = st.columns(2)
    with chart_a:
        blocks.chart(heatmap(comparison.values_a, f"A: {variant_a.describe()}", "A[r, j]", (-1.0, 1.0)),
                     key="pitfalls_a")
    with chart_b:
        blocks.chart(heatmap(comparison.values_b, f"B: {variant_b.describe()}", "B[r, j]", (-1.0, 1.0)),
                     key="pitfalls_b")
    drawn_max = float(abs(comparison.difference).max())
    span = drawn_max if drawn_max > 0 else 1.0
    blocks.chart(
        heatmap(comparison.difference, f"Difference A - B (L={L:,}, d={d:,})", "A - B", (-span, span)),
        key="pitfalls_difference",
    )
    blocks.reduced_note("Each map", comparison.difference.shape, (L, d))
    if comparison.is_reduced and comparison.columns.col_edges is not None:
        st.caption(
            "The two layouts disagree on which columns are sines, so a drawn column averages a run of raw "
            "columns (sines and cosines together), the same run in A and in B."
        )
    metric_full, metric_where, metric_drawn = st.columns(3)
    every, where, drawn = pitfalls.METRIC_LABELS
    metric_full.metric(every, f"{comparison.max_abs:.6g}")
    metric_where.metric(where, f"row {comparison.max_row:,}, column {comparison.max_col:,}")
    metric_drawn.metric(drawn, f"{drawn_max:.6g}")
    st.caption(
        f"The maximum is measured over all {L:,} x {d:,} cells, in blocks of rows; row r is position "
        f"{variant_a.start} + r of A and {variant_b.start} + r of B. Values lie in [-1, 1], so 2 is as far "
        "apart as two encodings can be."
        + (" The two variants are identical here." if comparison.max_abs == 0 else "")
    )


blocks.cached_section("pitfalls_comparison", comparison_maps, settings, key_a, key_b, other_n, offset)



def difference_table():
    comparison = pitfalls_comparison(variant_a, variant_b, L, d, MAX_ROWS, MAX_COLS)
    return figures.heatmap_table(comparison.difference, comparison.row_labels, comparison.columns.labels,
                                 rows_name="row r", cols_name="column j")


blocks.downloads("the difference map", difference_table, key="pitfalls_difference")
# Written only when shown: its comparison is a cache hit, but an unpickled one (~0.3-0.9 MB) on every run.
blocks.reproduce(lambda: pitfalls.difference_code(
    variant_a, variant_b, L, d, pitfalls_comparison(variant_a, variant_b, L, d, MAX_ROWS, MAX_COLS),
    (pitfalls.VARIANTS[key_a], pitfalls.VARIANTS[key_b]),
))

# --- check your implementation ---------------------------------------------------------
st.header("Check your implementation")
st.markdown(
    "Upload your encoding matrix (positions x dimensions, or transposed) as .npy, .npz or .csv, or a "
    "checkpoint's .safetensors holding one (the Annotated Transformer's `pe` buffer, Marian's or Whisper's "
    f"`embed_positions`), {uploads.upload_limits()}. The checker "
    "finds the layout, the frequency convention, the base n and the first position, and says whether "
    "round-off explains what is left. Nothing is stored. Larger files are read from disk by "
    f"`{uploads.COMMAND_LINE} FILE`."
)
example_npy, example_csv = st.columns(2)
example_npy.download_button(
    "Example: seed 002's buggy matrix (.npy)", data=pitfalls.example_npy, file_name="seed002_bug.npy",
    mime="application/octet-stream", on_click="ignore", icon=":material/download:", key="pitfalls_example_npy",
)
example_csv.download_button(
    "Example: float16 concatenated matrix (.csv)", data=pitfalls.example_csv, file_name="float16_concatenated.csv",
    mime="text/csv", on_click="ignore", icon=":material/download:", key="pitfalls_example_csv",
)
# Every type reaches the page, where a file it does not read gets a sentence, not only a red chip.
upload = st.file_uploader("Your matrix (.npy, .npz, .csv or .safetensors)", key="pitfalls_upload")
if upload is not None:
    try:
        check = pitfalls_upload(upload.file_id, upload.name, upload.getvalue())
    except ValueError as error:
        st.error(str(error), icon=":material/block:")
    else:
        result = check.result
        for note in check.notes:
            st.caption(note)
        if check.rotary:
            # What a rotary model holds: named here, read whole by the Rotary page's checker.
            (st.warning if result["kind"] is None else st.info)(check.rotary_note, icon=":material/rotate_right:")
            st.page_link(navigation.page("rotary"), label="Check your RoPE on the Rotary page (its last section)",
                         icon=":material/arrow_forward:")
        else:
            if result["convention"] is not None:
                st.success(result["verdict"], icon=":material/check_circle:")
            else:
                st.warning(result["verdict"], icon=":material/help:")
            layout_label, layout = check.layout_metric
            shown = {
                "shape": f"{check.shape[0]:,} x {check.shape[1]:,}",
                layout_label: layout,
                "convention": result["convention"] or "-",
                "n": "-" if result["n"] is None else format_number(result["n"]),
                "start": "-" if result["start"] is None else f"{result['start']:,}",
                "transposed": "yes" if result["transposed"] else "no",
                "stored as": result["dtype_guess"] or "-",
                "max |error|": f"{result['max_abs_error']:.3g}",
            }
            for column, (name, value) in zip(st.columns(4) + st.columns(4), shown.items(), strict=True):
                column.metric(name, value)
            if check.difference is not None and check.rebuilt is not None:
                up_rows = [
                    figures.range_label(int(a), int(b) - 1, "row r") for a, b in zip(
                        check.row_edges[:-1], check.row_edges[1:], strict=True
                    )
                ]
                span = float(abs(check.difference).max()) or 1.0
                blocks.chart(
                    figures.heatmap_figure(
                        check.difference, row_labels=up_rows, col_labels=check.columns.labels,
                        row_ticks=figures.round_ticks(up_rows, [int(r) for r in check.row_edges[:-1]]),
                        col_ticks=figures.round_ticks(check.columns.labels, check.columns.ticks, count=10),
                        title=f"Your matrix minus the rebuilt encoding ({check.rebuilt_description})",
                        x_title="dimension j (column)", y_title="row r (position start + r)",
                        value_name="upload - rebuilt", zrange=(-span, span),
                    ),
                    key="pitfalls_upload_difference",
                )
                length = check.shape[1] if result["transposed"] else check.shape[0]
                blocks.reduced_note("Difference", check.difference.shape, (length, check.columns.order.size))
                if check.set_aside_note:
                    st.caption(check.set_aside_note)
                if result["transposed"]:
                    st.caption("Your matrix is transposed (dimensions down); it is drawn with positions down.")
                blocks.downloads(
                    "this difference map",
                    figures.heatmap_table(
                        check.difference, up_rows, check.columns.labels, rows_name="row r", cols_name="column j"
                    ),
                    key="pitfalls_upload_difference",
                )
