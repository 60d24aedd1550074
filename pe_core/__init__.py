"""pe_core: positional encodings in NumPy, the sinusoid of "Attention Is All You Need" and the rotary one.

The maths lives in one module per idea, each function next to the formula it computes:

- ``encoding``: frequencies, angles, wavelengths and the sinusoidal matrix P itself;
- ``relative``: the rotation W, the transition matrix M(delta) and ``shift``;
- ``similarity``: dot product, cosine, SSE, and their closed forms by offset;
- ``binary``: binary codes of positions and Hamming distance (seed 003);
- ``display``: block averages that reduce a large matrix to a screen without aliasing;
- ``attention_bias``: ALiBi's slopes and bias, T5's relative-position buckets;
- ``attention_scores``: RoPE's score by offset, softmax weights of one query over its keys,
  and where they sit;
- ``value_precision``: the storage format and arithmetic a table's values may come from;
- ``rope/``: rotary position embeddings: the frequencies and their scalings (linear, NTK,
  dynamic, YaRN, llama3, LongRoPE: one registry entry each, ``rope/methods/``), cos/sin
  caches and the rotation, a model's RoPE read from its config.json, scores of rotated
  queries and keys, RoPE past the trained length, a model's positions layer by layer (rope_init,
  model_layers), Llama 4's query scale on its NoPE layers, and the vision-language models' M-RoPE
  (each token's temporal, height and width positions and the cos/sin of their pair sections);
- ``identify/``: which encoding a matrix is, a sinusoidal variant or what a rotary model holds,
  with the sentences that say so; ``python -m pe_core.identify FILE`` in a terminal;
- ``wording``: numbers and pair lists as those sentences write them.

No Streamlit here: every function is pure, vectorised, and raises ValueError with an
actionable message for any invalid argument. Limits: d <= 16384, length <= 2**20,
length x d <= 2**25 cells (so a d x d transition matrix has d <= 5792; ``shift`` applies
it at any d), |positions| and |offsets| <= 10**12.
"""

from pe_core._validate import CONVENTIONS, LAYOUTS, MAX_CELLS, MAX_D, MAX_LENGTH, MAX_POSITION
from pe_core.attention_bias import alibi_bias, alibi_slopes, t5_relative_bucket
from pe_core.attention_scores import attention_weights, effective_keys, half_mass_radius, rope_dot_by_offset
from pe_core.binary import binary_encoding, bit_periods, bits_needed, hamming_distance
from pe_core.display import (
    ReducedEncoding,
    angle_block_mean,
    block_average,
    block_edges,
    column_groups,
    encoding_block_average,
    line_envelope,
    offset_matrix_block_average,
    rope_cache_block_average,
)
from pe_core.encoding import (
    angles,
    column_pairs,
    frequencies,
    pair_count,
    positional_encoding,
    positions,
    sin_cos_of_products,
    sin_cos_outer,
    sine_cosine_columns,
    swapped_columns,
    wavelengths,
)
from pe_core.identify import identify_encoding
from pe_core.relative import rotation, shift, transition_matrix
from pe_core.rope.config import RopeConfig, rope_from_config
from pe_core.rope.context import AngleCoverage, angle_coverage
from pe_core.rope.layers import LayerPositions, model_layers, rope_init
from pe_core.rope.mrope import mrope_cache, mrope_pair_axes, mrope_position_ids
from pe_core.rope.query_scale import llama4_query_scale
from pe_core.rope.rotation import ROPE_LAYOUTS, rope_cache, rotate
from pe_core.rope.scaling import (
    ROPE_METHODS,
    YARN_RAMP_FORMS,
    RopeScaling,
    rope_attention_factor,
    rope_frequencies,
    yarn_ramp,
)
from pe_core.rope.scores import (
    rope_apply_cache,
    rope_decay_bound,
    rope_mixed_scores,
    rope_pair_columns,
    rope_rotated_block_average,
    rope_score_by_offset,
)
from pe_core.similarity import cosine_similarity, dot_by_offset, dot_similarity, sse, sse_by_offset

__all__ = [
    "CONVENTIONS",
    "LAYOUTS",
    "MAX_CELLS",
    "MAX_D",
    "MAX_LENGTH",
    "MAX_POSITION",
    "ROPE_LAYOUTS",
    "ROPE_METHODS",
    "YARN_RAMP_FORMS",
    "AngleCoverage",
    "LayerPositions",
    "ReducedEncoding",
    "RopeConfig",
    "RopeScaling",
    "alibi_bias",
    "alibi_slopes",
    "angle_block_mean",
    "angle_coverage",
    "angles",
    "attention_weights",
    "binary_encoding",
    "bit_periods",
    "bits_needed",
    "block_average",
    "block_edges",
    "column_groups",
    "column_pairs",
    "cosine_similarity",
    "dot_by_offset",
    "dot_similarity",
    "effective_keys",
    "encoding_block_average",
    "frequencies",
    "half_mass_radius",
    "hamming_distance",
    "identify_encoding",
    "line_envelope",
    "llama4_query_scale",
    "model_layers",
    "mrope_cache",
    "mrope_pair_axes",
    "mrope_position_ids",
    "offset_matrix_block_average",
    "pair_count",
    "positional_encoding",
    "positions",
    "rope_apply_cache",
    "rope_attention_factor",
    "rope_cache",
    "rope_cache_block_average",
    "rope_decay_bound",
    "rope_dot_by_offset",
    "rope_frequencies",
    "rope_from_config",
    "rope_init",
    "rope_mixed_scores",
    "rope_pair_columns",
    "rope_rotated_block_average",
    "rope_score_by_offset",
    "rotate",
    "rotation",
    "shift",
    "sin_cos_of_products",
    "sin_cos_outer",
    "sine_cosine_columns",
    "sse",
    "sse_by_offset",
    "swapped_columns",
    "t5_relative_bucket",
    "transition_matrix",
    "wavelengths",
    "yarn_ramp",
]

