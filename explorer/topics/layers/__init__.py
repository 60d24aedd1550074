r"""Your model, layer by layer: the positions of a model's decoder layers as its own code runs them (a preset,
or its config.json pasted or uploaded), read by ``pe_core.model_layers``: which layers rotate with which base,
scaling, rotated pairs and window or chunk, what each layer type's pairs meet at a target length, the score by
offset per layer type, and Llama 4's query scale. Analysis, figures and reproduce-this code, without Streamlit
(pages/layers_page.py lays them out).

- ``analysis``: the stack read into layer kinds, the coverage of each kind's pairs, the scores, Play's lengths;
- ``charts``: the figures and the tables of their data;
- ``reproduce_code``: the "reproduce this" snippet.
"""

from explorer.topics.layers.analysis import (
    CUSTOM_MODEL,
    DEFAULT_TARGET,
    DEFAULT_TRAINED,
    TARGET_MAX,
    KindCoverage,
    LayerKind,
    ModelStack,
    coverage,
    curve_offsets,
    layer_runs,
    play_targets,
    preset_stack,
    query_scale_positions,
    query_scale_steps,
    read_stack,
    score_by_offset,
)
from explorer.topics.layers.charts import (
    TABLE_TITLES,
    kinds_table,
    layers_table,
    pairs_table,
    query_scale_figure,
    query_scale_table,
    score_figure,
    scored_kinds,
    scores_table,
    stack_figure,
    turns_figure,
    turns_table,
    wavelength_figure,
)
from explorer.topics.layers.reproduce_code import layers_code

__all__ = [
    "CUSTOM_MODEL",
    "DEFAULT_TARGET",
    "DEFAULT_TRAINED",
    "TABLE_TITLES",
    "TARGET_MAX",
    "KindCoverage",
    "LayerKind",
    "ModelStack",
    "coverage",
    "curve_offsets",
    "kinds_table",
    "layer_runs",
    "layers_code",
    "layers_table",
    "pairs_table",
    "play_targets",
    "preset_stack",
    "query_scale_figure",
    "query_scale_positions",
    "query_scale_steps",
    "query_scale_table",
    "read_stack",
    "score_by_offset",
    "score_figure",
    "scored_kinds",
    "scores_table",
    "stack_figure",
    "turns_figure",
    "turns_table",
    "wavelength_figure",
]
