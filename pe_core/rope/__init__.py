"""Rotary position embeddings (RoPE), as models run them; ``pe_core`` exports the public names.

- ``scaling``: the frequencies, the context-length scalings (``RopeScaling``), YaRN's ramp and
  the attention factor;
- ``rotation``: the cos/sin tables of a layout (``rope_cache``) and the rotation itself (``rotate``);
- ``config``: a model's RoPE read from its config.json as transformers reads it (``rope_from_config``);
- ``scores``: scores of rotated queries and keys by offset, the scores of a cache and a rotation of
  two different layouts, RoFormer's long-term decay bound;
- ``context``: RoPE past the trained length, the angles each pair meets (``angle_coverage``).
"""
