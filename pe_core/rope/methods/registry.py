"""The registry of RoPE scaling methods: what an entry is (``RopeMethod``, with the config keys it reads,
``ConfigKey``), where a method's trained length comes from in a config.json, and ``register_rope_method``,
``rope_method`` and ``rope_method_names``, through which ``RopeScaling``, ``rope_frequencies``,
``rope_from_config`` and the checker dispatch. The shipped entries are the package's other modules,
registered in order by its ``__init__``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pe_core.rope.reading import FrequencyEvidence, MethodReadings

if TYPE_CHECKING:
    from pe_core.rope.scaling import RopeScaling

#: A config key the method needs: rope_from_config raises when the config does not give it.
REQUIRED = "required"
#: The factor of a config that gives none: max_position_embeddings / original_max_position_embeddings.
FROM_LENGTHS = "max_position_embeddings / original_max_position_embeddings"
#: Where a method's trained length L0 comes from in a config.json.
ORIGINAL_LENGTH_KEYS = ("original_max_position_embeddings", "max_position_embeddings")


@dataclass(frozen=True)
class ConfigKey:
    """A key of a config's rope_scaling (rope_parameters) a method reads, as a RopeScaling field of the same name.

    ``default``: the value when the config gives none or null (RopeScaling's own default), ``REQUIRED``,
    or ``FROM_LENGTHS`` (the factor only); ``present``: the config must hold the key, even as null
    (transformers 5 refuses a yarn config without ``factor``).
    """

    name: str
    default: object = REQUIRED
    present: bool = False


@dataclass(frozen=True)
class RopeMethod:
    r"""One RoPE scaling method.

    - ``frequencies(theta, d, base, scaling, length)``: :math:`\theta'` from the plain :math:`\theta`
      (float64, (d/2,)); ``length`` is the sequence length or None;
    - ``attention_factor(scaling)``: what transformers multiplies cos and sin by;
    - ``config_keys``: the rope_scaling keys it reads, in the order rope_from_config checks them; a method
      that reads ``partial_rotary_factor`` applies it itself over the whole head (``whole_head``);
    - ``original_length``: the config key its :math:`L_0` is read from (one of
      ``ORIGINAL_LENGTH_KEYS``), or None when the method needs none;
    - ``validate(scaling, d)``: raises ValueError for parameters the method cannot take (d None:
      before the rotary dimension is known);
    - ``sentence(reading)``: the checker's sentence on a reading of the method (the reading's
      scaling dict: "method", "factor" and what the frequencies determined); ``phrase(reading)``
      its short name;
    - ``read(evidence)``: its inverse, the candidate readings of measured frequencies as this method
      (``MethodReadings``; empty when the evidence shows none), which the checker ranks with every
      other method's;
    - ``offer_phrase(offer)``: for a method that changes only the base, how an offer of it (a dict
      of ``MethodReadings.offers``) is named; None for the others;
    - ``attention_reading(amplitude, error, reading)``: for a method with an attention factor, the
      factor a table's amplitude is read as (within ``error``) and the sentence that says it;
    - ``table_note(reading, start)``: what a table read as this method may also be, or None;
    - ``outside_transformers``: for a method that is no transformers rope_type (a config naming
      it would not load there), what the config reader reads it as; None for transformers' own.
    """

    name: str
    frequencies: Callable[[np.ndarray, int, float, RopeScaling, int | None], np.ndarray]
    attention_factor: Callable[[RopeScaling], float]
    config_keys: tuple[ConfigKey, ...]
    original_length: str | None
    validate: Callable[[RopeScaling, int | None], None]
    sentence: Callable[[dict], str]
    phrase: Callable[[dict], str]
    read: Callable[[FrequencyEvidence], MethodReadings]
    offer_phrase: Callable[[dict], str] | None = None
    attention_reading: Callable[[float, float, dict], tuple[float, str]] | None = None
    table_note: Callable[[dict, int], str] | None = None
    outside_transformers: str | None = None

    def __post_init__(self) -> None:
        if self.original_length not in (None, *ORIGINAL_LENGTH_KEYS):
            raise ValueError(f"original_length must be one of {ORIGINAL_LENGTH_KEYS} or None, "
                             f"got {self.original_length!r}.")
        if not any(key.name == "factor" for key in self.config_keys):
            raise ValueError(f"{self.name} must read the factor (a ConfigKey named 'factor').")

    @property
    def whole_head(self) -> bool:
        """Whether the method applies partial_rotary_factor itself, over the whole head (proportional): a config's
        rotary dimension d is then the whole head, where for the others it is int(head_dim * partial_rotary_factor)
        and their scaling's partial_rotary_factor stays 1."""
        return any(key.name == "partial_rotary_factor" for key in self.config_keys)


_METHODS: dict[str, RopeMethod] = {}


def register_rope_method(method: RopeMethod) -> Callable[[], None]:
    """Add a method to the registry; returns the function that removes it again (for a test's fixture)."""
    if not isinstance(method, RopeMethod):
        raise ValueError(f"register_rope_method takes a RopeMethod, got {type(method).__name__}.")
    if method.name in _METHODS:
        raise ValueError(f"A rope method named {method.name!r} is already registered.")
    _METHODS[method.name] = method

    def unregister() -> None:
        if _METHODS.get(method.name) is method:
            del _METHODS[method.name]

    return unregister


def rope_method_names() -> tuple[str, ...]:
    """The registered methods' names, in the order they were registered."""
    return tuple(_METHODS)


def rope_method(name: str) -> RopeMethod:
    """The registered method of this name (ValueError naming the registered ones otherwise)."""
    if name not in _METHODS:
        raise ValueError(f"No rope method {name!r}; the registered ones are {', '.join(_METHODS)}.")
    return _METHODS[name]
