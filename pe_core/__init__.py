"""pe_core: the sinusoidal positional encoding of "Attention Is All You Need", in NumPy.

The maths lives in one module per idea, each function next to the formula it computes:

- ``encoding``: frequencies, angles, wavelengths and the matrix P itself;
- ``relative``: the rotation W, the transition matrix M(delta) and ``shift``;
- ``similarity``: dot product, cosine, SSE, and their closed forms by offset;
- ``binary``: binary codes of positions and Hamming distance (seed 003);
- ``display``: block averages that reduce a large matrix to a screen without aliasing;
- ``rope``: rotary position embeddings, their scalings (linear, NTK, dynamic, YaRN, llama3,
  LongRoPE), cos/sin caches and the rotation itself;
- ``rope_config``: a model's RoPE read from its config.json as transformers reads it;
- ``rope_scores``: scores of rotated queries and keys by offset, the scores of a cache and a
  rotation of two different layouts, RoFormer's long-term decay bound;
- ``attention_bias``: ALiBi's slopes and bias, T5's relative-position buckets;
- ``attention_scores``: RoPE's score by offset, softmax weights of one query over its keys,
  and where they sit;
- ``rope_context``: RoPE past the trained length: the angles each pair meets (``angle_coverage``).
- ``identify`` (with ``rope_identify`` and ``rope_frequency_reading``): which variant a matrix is,
  sinusoidal or what a rotary model holds; ``python -m pe_core.identify FILE`` in a terminal.

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
from pe_core.relative import rotation, shift, transition_matrix
from pe_core.rope import (
    ROPE_LAYOUTS,
    ROPE_METHODS,
    YARN_RAMP_FORMS,
    RopeScaling,
    rope_attention_factor,
    rope_cache,
    rope_frequencies,
    rotate,
    yarn_ramp,
)
from pe_core.rope_config import RopeConfig, rope_from_config
from pe_core.rope_context import AngleCoverage, angle_coverage
from pe_core.rope_scores import (
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


def __getattr__(name: str) -> object:
    """identify_encoding loads on first use, so that ``python -m pe_core.identify FILE`` runs that module
    once, as __main__, rather than after the package has already imported it (runpy warns then)."""
    if name == "identify_encoding":
        from pe_core.identify import identify_encoding

        return identify_encoding
    raise AttributeError(f"module 'pe_core' has no attribute {name!r}")
