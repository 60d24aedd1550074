r"""The RoPE scaling methods, one entry each, as transformers' ``ROPE_INIT_FUNCTIONS`` is one function per rope_type.

An entry (``RopeMethod``) is everything a method is: how it turns the plain frequencies
:math:`\theta_i = b^{-2i/d}` into :math:`\theta'_i`, its attention factor, the keys of a
config.json's ``rope_scaling`` it reads (with their defaults, or that the config must give them),
where its trained length :math:`L_0` comes from, the constraints on its parameters (one
validator), how a table's measured frequencies are read back into its parameters (its inverse
reading, on the types of ``pe_core.rope.reading``) and the sentences that name a reading of it.
``RopeScaling``, ``rope_frequencies``, ``rope_attention_factor``, ``rope_from_config`` and the
checker (its ranking of every method's readings, its verdicts) dispatch through ``rope_method(name)``
and ``rope_method_names()``; adding a method is one ``register_rope_method`` call.

The formulas of each method are written out in ``RopeScaling``'s docstring (pe_core.rope.scaling).

One module per part; this package imports them and registers the shipped methods in their order
(linear, ntk, dynamic, yarn, llama3, longrope, proportional: ``rope_method_names()`` lists them so, and
``pe_core.rope.scaling`` reads it when it is imported), and re-exports their public names:

- ``registry``: ``RopeMethod``, ``ConfigKey``, the registry and its lookups;
- ``shared``: pieces two or more methods share (the NTK base change, the checks on d, ...);
- ``linear``, ``ntk`` (NTK-aware and dynamic NTK), ``yarn``, ``llama3``, ``longrope``, ``proportional``: one
  entry each, its frequencies, attention factor, validator, sentences and inverse reading.
"""

from pe_core.rope.methods.linear import LINEAR
from pe_core.rope.methods.llama3 import LLAMA3
from pe_core.rope.methods.longrope import LONGROPE
from pe_core.rope.methods.ntk import DYNAMIC, NTK
from pe_core.rope.methods.proportional import PROPORTIONAL, rotated_pairs
from pe_core.rope.methods.registry import (
    FROM_LENGTHS,
    ORIGINAL_LENGTH_KEYS,
    REQUIRED,
    ConfigKey,
    RopeMethod,
    register_rope_method,
    rope_method,
    rope_method_names,
)
from pe_core.rope.methods.shared import ntk_base
from pe_core.rope.methods.yarn import YARN, yarn_code_ramp

__all__ = [
    "DYNAMIC",
    "FROM_LENGTHS",
    "LINEAR",
    "LLAMA3",
    "LONGROPE",
    "NTK",
    "ORIGINAL_LENGTH_KEYS",
    "PROPORTIONAL",
    "REQUIRED",
    "YARN",
    "ConfigKey",
    "RopeMethod",
    "ntk_base",
    "register_rope_method",
    "rope_method",
    "rope_method_names",
    "rotated_pairs",
    "yarn_code_ramp",
]

for _method in (LINEAR, NTK, DYNAMIC, YARN, LLAMA3, LONGROPE, PROPORTIONAL):
    register_rope_method(_method)
