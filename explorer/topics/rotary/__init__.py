r"""Rotary (RoPE): a query and a key turned pair by pair by their positions; the score matrix
:math:`q_m\cdot k_n`, constant along its diagonals, beside its closed form; RoFormer's long-term
decay; the two layouts and the error of mixing them; the rotation as the transition matrix of
the Relative positions page. Analysis, figure builders and reproduce-this code, without
Streamlit (pages/rotary_page.py lays them out).

Every L x L matrix is drawn from closed forms over the offsets m - n (and the sums m + n for
the mixing error) as exact block means, never built; direct computations with pe_core.rotate on
a window of positions check the closed forms on the page.

One module per part, each importing the ones it builds on directly; this package re-exports their
public names, so ``rotary.X`` and ``from explorer.topics.rotary import X`` read as before:

- ``view``: ``RotaryView``, the query and key, the layouts as the code names them, the page's grids;
- ``pair``: one pair turned by its positions, Play, the rotation beside the transition matrix;
- ``matrices``: the score matrix and its closed form, the long-term decay, the cos tables and the
  mixing error; ``analyse``, all of them once per view;
- ``checker``: "Check your RoPE", an uploaded file's arrays read and said;
- ``reproduce_code``: the "reproduce this" snippet.
"""

from explorer.topics.rotary.checker import (
    GGUF_ROPE_FREQS,
    KIND_SHORT,
    SCALING_KEYS,
    ArrayReading,
    Opening,
    RopeCheck,
    alternative_text,
    arrays_table,
    check_gguf,
    check_upload,
    opening,
    reading_metrics,
    reading_summary,
    scaling_short,
    scaling_table,
)
from explorer.topics.rotary.matrices import (
    Analysis,
    Decay,
    Mixing,
    ScoreMatrix,
    analyse,
    closed_form_figure,
    closed_form_table,
    cos_download,
    cos_figure,
    cos_table,
    decay,
    decay_figure,
    decay_table,
    mixing,
    scores,
    square_figure,
    square_table,
)
from explorer.topics.rotary.pair import (
    PLAY_STEP_RAD,
    PairPlay,
    PairView,
    TransitionBlock,
    pair_figure,
    pair_inputs,
    pair_play,
    pair_play_figure,
    pair_play_table,
    pair_table,
    pair_view,
    play_last,
    play_positions,
    transition_block,
)
from explorer.topics.rotary.reproduce_code import (
    DECAY_LABELS,
    MIXING_LABELS,
    PAIR_COLUMNS_CODE,
    pair_labels,
    rotary_code,
    scaling_code,
)
from explorer.topics.rotary.view import (
    LAYOUT_CODE,
    MEASURE_WINDOW,
    OTHER_LAYOUT,
    QK_CHOICES,
    QK_LABELS,
    RotaryView,
    cache_grid,
    lay_out,
    query_key,
    score_blocks,
    span,
    window_positions,
)

__all__ = [
    "DECAY_LABELS",
    "GGUF_ROPE_FREQS",
    "KIND_SHORT",
    "LAYOUT_CODE",
    "MEASURE_WINDOW",
    "MIXING_LABELS",
    "OTHER_LAYOUT",
    "PAIR_COLUMNS_CODE",
    "PLAY_STEP_RAD",
    "QK_CHOICES",
    "QK_LABELS",
    "SCALING_KEYS",
    "Analysis",
    "ArrayReading",
    "Decay",
    "Mixing",
    "Opening",
    "PairPlay",
    "PairView",
    "RopeCheck",
    "RotaryView",
    "ScoreMatrix",
    "TransitionBlock",
    "alternative_text",
    "analyse",
    "arrays_table",
    "cache_grid",
    "check_gguf",
    "check_upload",
    "closed_form_figure",
    "closed_form_table",
    "cos_download",
    "cos_figure",
    "cos_table",
    "decay",
    "decay_figure",
    "decay_table",
    "lay_out",
    "mixing",
    "opening",
    "pair_figure",
    "pair_inputs",
    "pair_labels",
    "pair_play",
    "pair_play_figure",
    "pair_play_table",
    "pair_table",
    "pair_view",
    "play_last",
    "play_positions",
    "query_key",
    "reading_metrics",
    "reading_summary",
    "rotary_code",
    "scaling_code",
    "scaling_short",
    "scaling_table",
    "score_blocks",
    "scores",
    "span",
    "square_figure",
    "square_table",
    "transition_block",
    "window_positions",
]
