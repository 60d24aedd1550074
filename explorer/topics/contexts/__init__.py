r"""Longer contexts: a model's RoPE (a preset, or its config.json) run past the length it was
trained on, pair by pair, for every context-extension method. Analysis, figures and
reproduce-this code, without Streamlit (pages/contexts_page.py lays them out).

A model trained on :math:`L_0` tokens has turned pair i of its RoPE through the angles
:math:`[0, L_0\theta_i]`. Run it on L tokens and a pair that never turned a whole circle in
training meets rotations it never saw, unless a scaling lowers its frequency
(``pe_core.angle_coverage``). Every number is pe_core's: the scalings as transformers computes
them (``pe_core.rope``), a config.json read as transformers reads it (``pe_core.rope_config``).

One module per part, each importing the ones it builds on directly; this package re-exports their
public names, so ``contexts.X`` and ``from explorer.topics.contexts import X`` read as before:

- ``view``: ``ContextView``, its defaults, the page's own URL keys and their limits;
- ``analysis``: each method's scaling for a view, the methods it can draw, the angles each pair
  meets, YaRN's ramps, the score by offset, Play's target lengths;
- ``charts``: the figures and the tables of their data;
- ``config``: a config.json read into a view, the model presets, the controls' values, the URL's base;
- ``known_pitfalls``: the pitfalls that bit real users, for the views that meet them;
- ``reproduce_code``: the "reproduce this" snippet.
"""

from explorer.topics.contexts.analysis import (
    CURVE_MAX_OFFSETS,
    CURVE_TERMS,
    ORDERED_KEYS,
    attention_factor,
    available_methods,
    checked_view,
    coverage,
    coverage_frames,
    curve_offsets,
    dot_curves,
    methods,
    methods_summary,
    ordered_pairs,
    pairs_text,
    play_frame_count,
    play_targets,
    scaling,
    unavailable_methods,
    unrotated,
    unseen_text,
    yarn_bounds,
    yarn_ramps,
)
from explorer.topics.contexts.charts import (
    PLAIN_COLOR,
    TABLE_TITLES,
    coverage_figure,
    coverage_table,
    dot_figure,
    dot_table,
    method_colour,
    method_label,
    methods_figure,
    methods_table,
    pairs_table,
    ramp_figure,
    ramp_table,
)
from explorer.topics.contexts.config import (
    CUSTOM_MODEL,
    DEFAULT_FACTOR,
    DEFAULT_TRAINED,
    MODEL_KEYS,
    parse_base,
    preset_view,
    view_from_config,
    view_values,
)
from explorer.topics.contexts.known_pitfalls import (
    META_LLAMA3,
    PITFALLS,
    pitfalls,
)
from explorer.topics.contexts.reproduce_code import (
    contexts_code,
)
from explorer.topics.contexts.view import (
    BASE_MAX,
    DEFAULT_VIEW,
    FACTOR_MAX,
    LENGTH_MAX,
    MSCALE_MAX,
    PAGE_KEYS,
    PARAMETER_MAX,
    ContextView,
)

__all__ = [
    "BASE_MAX",
    "CURVE_MAX_OFFSETS",
    "CURVE_TERMS",
    "CUSTOM_MODEL",
    "DEFAULT_FACTOR",
    "DEFAULT_TRAINED",
    "DEFAULT_VIEW",
    "FACTOR_MAX",
    "LENGTH_MAX",
    "META_LLAMA3",
    "MODEL_KEYS",
    "MSCALE_MAX",
    "ORDERED_KEYS",
    "PAGE_KEYS",
    "PARAMETER_MAX",
    "PITFALLS",
    "PLAIN_COLOR",
    "TABLE_TITLES",
    "ContextView",
    "attention_factor",
    "available_methods",
    "checked_view",
    "contexts_code",
    "coverage",
    "coverage_figure",
    "coverage_frames",
    "coverage_table",
    "curve_offsets",
    "dot_curves",
    "dot_figure",
    "dot_table",
    "method_colour",
    "method_label",
    "methods",
    "methods_figure",
    "methods_summary",
    "methods_table",
    "ordered_pairs",
    "pairs_table",
    "pairs_text",
    "parse_base",
    "pitfalls",
    "play_frame_count",
    "play_targets",
    "preset_view",
    "ramp_figure",
    "ramp_table",
    "scaling",
    "unavailable_methods",
    "unrotated",
    "unseen_text",
    "view_from_config",
    "view_values",
    "yarn_bounds",
    "yarn_ramps",
]
