r"""Images and video (M-RoPE): the (t, h, w) positions of a sequence of text, an image and a video as Qwen's
vision-language models compute them (``pe_core.mrope_position_ids``), which pairs take which axis, blocked and
interleaved (``pe_core.mrope_cache``), the score between two image tokens and what misreading the sections does.
Analysis, figures and reproduce-this code, without Streamlit (pages/mrope_page.py lays them out).

- ``analysis``: the view (model and sequence), the positions, the pairs' axes, the scores;
- ``charts``: the figures and the tables of their data;
- ``reproduce_code``: the "reproduce this" snippet.
"""

from explorer.topics.mrope.analysis import (
    AXES,
    CUSTOM_MODEL,
    DEFAULT_MODEL,
    FRAMES_MAX,
    MODEL_KEYS,
    SECONDS_STOPS,
    SIDE_MAX,
    TEXT_MAX,
    MropeView,
    image_grid,
    image_scores,
    layout_name,
    misread_axes,
    model_name,
    pair_axes,
    play_path,
    positions,
    preset_view,
    scores_from,
    sequence_words,
    sliced_axes,
    text_misread,
    text_resumes,
    view_from_config,
    with_query,
    with_sequence,
)
from explorer.topics.mrope.charts import (
    CACHE_TOKENS,
    axes_figure,
    axes_table,
    axis_counts,
    cache_table,
    image_axes_figure,
    positions_table,
    rows_figure,
    score_figure,
    scores_table,
    wrong_reading_figure,
)
from explorer.topics.mrope.reproduce_code import mrope_code

__all__ = [
    "AXES",
    "CACHE_TOKENS",
    "CUSTOM_MODEL",
    "DEFAULT_MODEL",
    "FRAMES_MAX",
    "MODEL_KEYS",
    "SECONDS_STOPS",
    "SIDE_MAX",
    "TEXT_MAX",
    "MropeView",
    "axes_figure",
    "axes_table",
    "axis_counts",
    "cache_table",
    "image_axes_figure",
    "image_grid",
    "image_scores",
    "layout_name",
    "misread_axes",
    "model_name",
    "mrope_code",
    "pair_axes",
    "play_path",
    "positions",
    "positions_table",
    "preset_view",
    "rows_figure",
    "score_figure",
    "scores_from",
    "scores_table",
    "sequence_words",
    "sliced_axes",
    "text_misread",
    "text_resumes",
    "view_from_config",
    "with_query",
    "with_sequence",
    "wrong_reading_figure",
]
