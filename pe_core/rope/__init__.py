"""Rotary position embeddings (RoPE), as models run them; ``pe_core`` exports the public names.

- ``methods``: the registry of scaling methods, one ``RopeMethod`` entry each (linear, ntk, dynamic,
  yarn, llama3, longrope, proportional): frequencies, attention factor, config keys, validator, inverse reading,
  sentences; ``register_rope_method`` adds one;
- ``reading``: what an inverse reading takes (the measured frequencies, the evidence the checker
  found in them) and gives (candidate readings), shared by the registry and ``pe_core.identify``;
- ``scaling``: the frequencies and ``RopeScaling``, which dispatch to the entries, and YaRN's ramp;
- ``rotation``: the cos/sin tables of a layout (``rope_cache``) and the rotation itself (``rotate``);
- ``config``: a model's RoPE read from its config.json as transformers reads it (``rope_from_config``);
- ``scores``: scores of rotated queries and keys by offset, the scores of a cache and a rotation of
  two different layouts, RoFormer's long-term decay bound;
- ``context``: RoPE past the trained length, the angles each pair meets (``angle_coverage``);
- ``mrope``: the vision-language models' multimodal RoPE: each token's (temporal, height, width)
  positions (``mrope_position_ids``) and the cos/sin of the blocked or interleaved pair sections
  (``mrope_cache``).
"""
