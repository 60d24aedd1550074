r"""The RoPE scaling methods as the app shows them: one entry each, keyed by pe_core's names.

pe_core's registry (``pe_core.rope.methods``) holds what a method *is*: its frequencies, attention
factor, config keys, constraints and inverse reading. This one holds how the app *shows* it: its
names, its colour, the parameters its controls set (each on a scale of the values real configs
use), the pairs of parameters that must go in order, the sentence that describes a scaling of it,
and its "reproduce this" fragment, a NumPy function that tests/shared/test_rope_methods.py runs
against pe_core. Rotary, Longer contexts, the model presets and the code generators take their
method lists, labels, parameters and fragments from here; adding a method is one
``pe_core.register_rope_method`` and one ``register_method_entry``.

A fragment defines ``scaled_<name>(theta, d, base, length)``, returning :math:`\theta'_i` (from
:math:`\theta_i = b^{-2i/d}`, a NumPy array or a torch tensor as the fragment was written for) and
the attention factor a that transformers multiplies cos and sin by, for a sequence of ``length``
tokens. Fragments are written once for both libraries: ``{xp}`` in their text is ``np`` or ``torch``
(``where``, ``clip``, ``arange`` and ``asarray`` are spelt alike in both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

import pe_core
from explorer.reproduce import literal
from pe_core.rope.methods import ORIGINAL_LENGTH_KEYS, rope_method, rope_method_names, rotated_pairs

#: The choice "no scaling" (plain RoPE): not a method, the absence of one.
NONE = "none"


def literal_list(values: object) -> str:
    return "[" + ", ".join(literal(v) for v in np.ravel(values)) + "]"


# ----------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Parameter:
    """A scaling parameter the app's controls set: its URL (and widget) key, the RopeScaling field
    (transformers' config key) it sets, its label on a slider, the slider's stops (every value
    the real configs use is one), its default (transformers' or the method's authors'), what
    it does, in a control's help, and the largest value it can take (None: only a page's limit
    bounds it), for a box that takes any number."""

    key: str
    field: str
    label: str
    stops: tuple[float, ...]
    default: float
    help: str | None = None
    high: float | None = None


FACTOR_STOPS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 16.0, 20.0, 32.0, 40.0, 64.0, 100.0, 128.0)
ORIGINAL_STOPS = tuple(float(2**e) for e in range(4, 18))  # 16 .. 131072 positions
FREQ_FACTOR_STOPS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
BETA_STOPS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
PARTIAL_STOPS = (0.125, 0.25, 0.375, 0.5, 0.75, 1.0)

PARAMETERS: dict[str, Parameter] = {p.key: p for p in (
    Parameter("factor", "factor", "factor s", FACTOR_STOPS, 8.0),
    Parameter("original", "original_length", "original length L0", ORIGINAL_STOPS, 4096.0),
    Parameter("low_freq", "low_freq_factor", "low_freq_factor", FREQ_FACTOR_STOPS, 1.0),
    Parameter("high_freq", "high_freq_factor", "high_freq_factor", FREQ_FACTOR_STOPS, 4.0),
    Parameter("beta_fast", "beta_fast", "β_fast", BETA_STOPS, 32.0,
              "Pairs turning more than this many times over L0 keep θ_i."),
    Parameter("beta_slow", "beta_slow", "β_slow", BETA_STOPS, 1.0,
              "Pairs turning fewer times than this over L0 get θ_i / s."),
    Parameter("partial", "partial_rotary_factor", "partial_rotary_factor p", PARTIAL_STOPS, 0.25,
              "The share of the head that rotates: the first ⌊p d / 2⌋ pairs turn at θ_i / s, θ_i over the "
              "whole head (Gemma 4's global layers: 0.25 of 512); the other pairs are left unrotated.", high=1.0),
)}


@dataclass(frozen=True)
class Order:
    """Two parameters of a method that must go in order: ``first`` above ``second`` (or below, when
    ``above`` is False), or equal to it where ``equal`` allows, as pe_core's validator of the method
    does; otherwise both take their defaults, the values of ``whose`` ("YaRN's", "Meta's")."""

    first: str
    second: str
    above: bool
    whose: str
    equal: bool = False

    def holds(self, values: Mapping[str, float]) -> bool:
        a, b = values[self.first], values[self.second]
        return (a > b if self.above else a < b) or (self.equal and a == b)

    def notice(self, method_label: str, values: Mapping[str, float]) -> str:
        first, second = PARAMETERS[self.first], PARAMETERS[self.second]
        relation = ("at least" if self.above else "at most") if self.equal else ("above" if self.above else "below")
        return (f"{method_label}'s {first.field} ({values[self.first]:g}) must be "
                f"{relation} {second.field} ({values[self.second]:g}); "
                f"using {self.whose} {first.default:g} and {second.default:g}.")


# ----------------------------------------------------------------------------- the entry


@dataclass(frozen=True)
class MethodEntry:
    """How the app shows one rope method (``name``: its name in pe_core's registry).

    - ``label``: its name in a choice of methods ("llama3 (Llama 3.1)"); ``short``: in a legend or
      a metric box ("llama3"); ``colour``: its line in the charts that draw every method;
    - ``controls``: the parameters (keys of ``PARAMETERS``) its controls set, the factor first;
    - ``orders``: its parameters that must go in order;
    - ``describe(scaling, d)``: a scaling of it in words, with the parameters that set it;
    - ``fragment(scaling)``: NumPy source defining ``scaled_<name>(theta, d, base, length)``;
    - ``attention_words``: where its attention factor comes from, for a method that has one;
    - ``completed(values, d)``: what its controls cannot set, filled in (LongRoPE's per-pair
      lists, made uniform), with ``controls_label`` naming what the controls then build;
    - ``beyond_controls(reading)``: why the controls cannot show a table's reading of it ("" when
      they can);
    - ``stretched_max_length``: whether a config's max_position_embeddings is the stretched length
      (linear interpolation's), so that without original_max_position_embeddings the trained
      length is it divided by the factor.
    """

    name: str
    label: str
    short: str
    colour: str
    controls: tuple[str, ...]
    describe: Callable[[pe_core.RopeScaling, int], str]
    fragment: Callable[[pe_core.RopeScaling], str]  # its text, with {xp} for the library
    orders: tuple[Order, ...] = ()
    attention_words: str | None = None
    completed: Callable[[dict[str, object], int], dict[str, object]] | None = None
    controls_label: str | None = None
    beyond_controls: Callable[[dict], str] | None = None
    stretched_max_length: bool = False

    def __post_init__(self) -> None:
        if not self.controls or self.controls[0] != "factor" or not set(self.controls) <= set(PARAMETERS):
            raise ValueError(f"{self.name}'s controls must start with 'factor' and name parameters of "
                             f"{', '.join(PARAMETERS)}; got {self.controls}.")

    @property
    def function(self) -> str:
        """The name of the function its fragment defines."""
        return f"scaled_{self.name}"


_ENTRIES: dict[str, MethodEntry] = {}


def register_method_entry(entry: MethodEntry) -> Callable[[], None]:
    """Add how the app shows a method pe_core has registered; returns the function that removes it."""
    if entry.name not in rope_method_names():
        raise ValueError(f"{entry.name!r} is not a method of pe_core's registry "
                         f"({', '.join(rope_method_names())}): register it there first.")
    if entry.name in _ENTRIES:
        raise ValueError(f"The app already shows a rope method named {entry.name!r}.")
    _ENTRIES[entry.name] = entry

    def unregister() -> None:
        if _ENTRIES.get(entry.name) is entry:
            del _ENTRIES[entry.name]

    return unregister


def method_names() -> tuple[str, ...]:
    """The methods the app shows, in pe_core's order."""
    return tuple(name for name in rope_method_names() if name in _ENTRIES)


def method_entry(name: str) -> MethodEntry:
    """The entry of method ``name`` (ValueError naming the methods the app shows otherwise)."""
    if name not in _ENTRIES:
        raise ValueError(f"method must be one of {', '.join(method_names())}, got {name!r}.")
    return _ENTRIES[name]


def method_label(name: str) -> str:
    return "none (plain RoPE)" if name == NONE else method_entry(name).label


def method_short(name: str) -> str:
    return "plain RoPE" if name == NONE else method_entry(name).short


#: The parameters every method's controls begin with, which a page may draw once for all methods.
COMMON = ("factor", "original")


def own_parameters() -> list[tuple[MethodEntry, Parameter]]:
    """Each method's parameters beyond the factor and L0, with their method, in the registry's order
    (a page that shows every method's parameters at once draws these)."""
    return [(method_entry(name), PARAMETERS[key]) for name in method_names()
            for key in method_entry(name).controls if key not in COMMON]


def out_of_order(names: tuple[str, ...], values: Mapping[str, float]) -> tuple[dict[str, float], list[str]]:
    """``values`` (named as PARAMETERS) with each pair of the methods ``names`` that must go in order
    and does not replaced by its defaults, and a one-line notice for each."""
    fixed = dict(values)
    notices = []
    for name in names:
        entry = method_entry(name)
        for order in entry.orders:
            if not order.holds(fixed):
                notices.append(order.notice(entry.short, fixed))
                fixed.update({order.first: PARAMETERS[order.first].default,
                              order.second: PARAMETERS[order.second].default})
    return fixed, notices


def build_scaling(name: str, given: Mapping[str, object], *, d: int, trained: int,
                  max_positions: int | None = None) -> pe_core.RopeScaling:
    """The RopeScaling of method ``name`` from the values ``given`` (by RopeScaling field; a None
    is "not given"): every config key the method reads, its trained length from ``trained`` (or,
    for a method whose L0 is max_position_embeddings as transformers reads it, ``max_positions``
    when given), validated for rotary dimension ``d``. Raises ValueError where it cannot be built."""
    method = rope_method(name)
    fields = {key.name: given[key.name] for key in method.config_keys
              if key.name != "factor" and given.get(key.name) is not None}
    if method.original_length == ORIGINAL_LENGTH_KEYS[1]:
        fields["original_length"] = max_positions or trained
    elif method.original_length is not None:
        fields["original_length"] = trained
    scaling = pe_core.RopeScaling(name, float(given["factor"]), **fields)
    method.validate(scaling, d)
    return scaling


def check_fits(scaling: pe_core.RopeScaling | None, d: int) -> None:
    """Raises ValueError, saying why, where ``scaling`` cannot run at rotary dimension ``d``."""
    if scaling is not None:
        rope_method(scaling.method).validate(scaling, d)


def from_controls(name: str, values: Mapping[str, float], d: int) -> pe_core.RopeScaling:
    """The scaling a page's controls describe: method ``name`` with its controls' ``values`` (keys of
    PARAMETERS; the others at their defaults), what its controls cannot set filled in."""
    entry = method_entry(name)
    given: dict[str, object] = {p.field: values.get(key, p.default) for key, p in PARAMETERS.items()
                                if key in entry.controls}
    if entry.completed is not None:
        given |= entry.completed(given, d)
    original = given.pop("original_length", PARAMETERS["original"].default)
    return build_scaling(name, given, d=d, trained=int(original))


def control_values(scaling: pe_core.RopeScaling) -> dict[str, float]:
    """The values of a scaling's controls (keys of PARAMETERS) that it gives."""
    values = {}
    for key in method_entry(scaling.method).controls:
        value = getattr(scaling, PARAMETERS[key].field)
        if value is not None:
            values[key] = float(value)
    return values


def describe(scaling: pe_core.RopeScaling | None, d: int) -> str:
    """The scaling in words, with the parameters that set it."""
    return "no scaling" if scaling is None else method_entry(scaling.method).describe(scaling, d)


#: The name each library goes by in the snippets.
LIBRARY_NAMES = {"numpy": "np", "torch": "torch"}


def in_library(text: str, library: str) -> str:
    """A fragment's text written for ``library`` ("numpy" or "torch")."""
    return text.replace("{xp}", LIBRARY_NAMES[library])


def fragment(scaling: pe_core.RopeScaling, library: str = "numpy") -> str:
    """Source defining the function that scales ``theta`` as ``scaling`` does, with NumPy or torch."""
    return in_library(method_entry(scaling.method).fragment(scaling), library)


# ----------------------------------------------------------------------------- the methods


def _from_length(scaling: pe_core.RopeScaling) -> str:
    L0 = scaling.original_length
    return f" from {L0:,} positions" if L0 is not None else ""


def _head(scaling: pe_core.RopeScaling, doc: str, *lines: str, original: str = "the trained length") -> str:
    """A fragment's first lines: its def, its docstring, its factor and its length L0 (``original``
    says which length that is)."""
    s, L0 = literal(scaling.factor), scaling.original_length
    body = [f"s = {s}"] + ([f"L0 = {L0}  # {original}"] if L0 is not None else []) + list(lines)
    return (f"def scaled_{scaling.method}(theta, d, base, length):\n    \"\"\"{doc}\"\"\"\n"
            + "".join(f"    {line}\n" for line in body))


def _exponents() -> str:
    return "{xp}.arange(0, d, 2, dtype={xp}.float64) / d"


def _linear_fragment(scaling: pe_core.RopeScaling) -> str:
    return _head(scaling, "Linear (position interpolation): every θ_i divided by s.",
                 "return theta / s, 1.0")


def _ntk_fragment(scaling: pe_core.RopeScaling) -> str:
    return _head(scaling, "NTK-aware: the base times s^(d/(d-2)).",
                 f"return (base * s ** (d / (d - 2))) ** -({_exponents()}), 1.0")


def _dynamic_fragment(scaling: pe_core.RopeScaling) -> str:
    return _head(
        scaling, "Dynamic NTK: the base grows with the sequence length past L0 (max_position_embeddings).",
        "grown = s * max(length, L0) / L0 - (s - 1)",
        f"return (base * grown ** (d / (d - 2))) ** -({_exponents()}), 1.0",
        original="where the base starts to grow: max_position_embeddings, as transformers reads it",
    )


def _yarn_attention(scaling: pe_core.RopeScaling) -> str:
    if scaling.attention_factor is not None:
        return f"a = {literal(scaling.attention_factor)}  # the config's attention_factor"
    if scaling.mscale and scaling.mscale_all_dim:
        return (f"a = (0.1 * {literal(scaling.mscale)} * math.log(s) + 1) / "
                f"(0.1 * {literal(scaling.mscale_all_dim)} * math.log(s) + 1) if s > 1 else 1.0"
                "  # mscale / mscale_all_dim")
    return "a = 0.1 * math.log(s) + 1 if s > 1 else 1.0  # YaRN's attention factor"


YARN_RAMP_CODE = (
    "def yarn_ramp(d, base, L0, beta_fast, beta_slow, truncate):\n"
    '    """YaRN\'s share of interpolation per pair, as its code computes it: 0 up to the pair whose\n'
    '    wavelength fits beta_fast turns into L0, 1 from the one that fits beta_slow, linear between."""\n'
    "    low = d * math.log(L0 / (beta_fast * 2 * math.pi)) / (2 * math.log(base))\n"
    "    high = d * math.log(L0 / (beta_slow * 2 * math.pi)) / (2 * math.log(base))\n"
    "    if truncate:\n"
    "        low, high = math.floor(low), math.ceil(high)\n"
    "    low, high = max(low, 0), min(high, d - 1)\n"
    "    if low == high:\n"
    "        high += 0.001\n"
    "    return {xp}.clip(({xp}.arange(d // 2, dtype={xp}.float64) - low) / (high - low), 0.0, 1.0)\n\n\n"
)


def _yarn_fragment(scaling: pe_core.RopeScaling) -> str:
    return YARN_RAMP_CODE + _head(
        scaling, "YaRN: the fast pairs kept, the slow ones divided by s, a ramp between; a from s.",
        f"ramp = yarn_ramp(d, base, L0, {literal(scaling.beta_fast)}, {literal(scaling.beta_slow)}, "
        f"{scaling.truncate})  # beta_fast, beta_slow, truncate",
        _yarn_attention(scaling),
        "return (theta / s) * ramp + theta * (1.0 - ramp), a",
    )


def _llama3_fragment(scaling: pe_core.RopeScaling) -> str:
    return _head(
        scaling, "llama3: wavelengths past L0/low_freq divided by s, below L0/high_freq kept, smooth between.",
        f"low_freq, high_freq = {literal(scaling.low_freq_factor)}, {literal(scaling.high_freq_factor)}",
        "wavelength = 2 * math.pi / theta",
        "scaled = {xp}.where(wavelength > L0 / low_freq, theta / s, theta)",
        "if high_freq == low_freq:  # Llama 4 Scout's 1 and 1: no band between",
        "    return scaled, 1.0",
        "smooth = (L0 / wavelength - low_freq) / (high_freq - low_freq)",
        "medium = (wavelength >= L0 / high_freq) & (wavelength <= L0 / low_freq)",
        "return {xp}.where(medium, (1 - smooth) * scaled / s + smooth * scaled, scaled), 1.0",
    )


def _longrope_fragment(scaling: pe_core.RopeScaling) -> str:
    attention = (f"a = {literal(scaling.attention_factor)}  # the config's attention_factor"
                 if scaling.attention_factor is not None
                 else "a = math.sqrt(1 + math.log(s) / math.log(L0)) if s > 1 else 1.0")
    return _head(
        scaling, "LongRoPE: θ_i divided by short_factor up to L0, by long_factor beyond.",
        f"short_factor = {{xp}}.asarray({literal_list(scaling.short_factor)}, dtype={{xp}}.float64)",
        f"long_factor = {{xp}}.asarray({literal_list(scaling.long_factor)}, dtype={{xp}}.float64)",
        attention,
        "return theta / (long_factor if length > L0 else short_factor), a",
    )


def _proportional_fragment(scaling: pe_core.RopeScaling) -> str:
    return _head(
        scaling, "Proportional (Gemma 4's global layers): the first pairs divided by s, the rest unrotated.",
        f"p = {literal(scaling.partial_rotary_factor)}  # partial_rotary_factor",
        "rotated = int(p * d // 2)  # as transformers counts them; θ_i runs over the whole head",
        "return {xp}.where({xp}.arange(d // 2) < rotated, theta / s, 0.0), 1.0",
    )


def _describe_proportional(scaling: pe_core.RopeScaling, d: int) -> str:
    p = scaling.partial_rotary_factor
    rotated = rotated_pairs(d, p)
    return (f"proportional ×{scaling.factor:g}, partial_rotary_factor {p:g}: pairs 0..{rotated - 1} of the whole "
            f"head turn at θ_i / {scaling.factor:g}, the other {d // 2 - rotated} are left unrotated")


def _describe_yarn(scaling: pe_core.RopeScaling, d: int) -> str:
    extras = [f"β_fast {scaling.beta_fast:g}", f"β_slow {scaling.beta_slow:g}"]
    if not scaling.truncate:
        extras.append("bounds not rounded (truncate false)")
    extras += [f"{name} {value:g}" for name, value in (("mscale", scaling.mscale),
                                                        ("mscale_all_dim", scaling.mscale_all_dim))
               if value is not None]
    if scaling.attention_factor is not None:
        extras.append(f"attention_factor {scaling.attention_factor:g}")
    return f"YaRN ×{scaling.factor:g}{_from_length(scaling)} ({', '.join(extras)})"


def _describe_longrope(scaling: pe_core.RopeScaling, d: int) -> str:
    uniform = len(set(scaling.short_factor)) == 1 and len(set(scaling.long_factor)) == 1
    lists = ("uniform factors: 1 up to L0, then the factor" if uniform
             else f"per-pair short_factor and long_factor, {len(scaling.short_factor)} each")
    return f"LongRoPE ×{scaling.factor:g}{_from_length(scaling)} ({lists})"


def _uniform_lists(given: dict[str, object], d: int) -> dict[str, object]:
    """LongRoPE's per-pair lists, which a search finds for each model, made uniform: every pair divided
    by 1 up to the original length and by the factor beyond it (Phi-3's own come with its preset)."""
    return {"short_factor": (1.0,) * (d // 2), "long_factor": (float(given["factor"]),) * (d // 2)}


def _longrope_beyond_controls(reading: dict) -> str:
    return "per-pair divisors (LongRoPE): the page's LongRoPE control divides all pairs alike"


def _yarn_beyond_controls(reading: dict) -> str:
    if reading.get("truncate", True):
        return ""
    return "YaRN with unrounded ramp bounds (truncate false): the page's YaRN rounds them"


for _entry in (
    MethodEntry(
        "linear", "linear (position interpolation)", "linear", "#e69f00", ("factor",),
        lambda scaling, d: f"linear ×{scaling.factor:g}: every θ_i divided by {scaling.factor:g}",
        _linear_fragment, stretched_max_length=True,
    ),
    MethodEntry(
        "ntk", "NTK-aware", "NTK-aware", "#0072b2", ("factor",),
        lambda scaling, d: (f"NTK-aware ×{scaling.factor:g}: the base times {scaling.factor:g}^(d/(d−2)) = "
                            f"{scaling.factor ** (d / (d - 2)):.6g}"),
        _ntk_fragment,
    ),
    MethodEntry(
        "dynamic", "dynamic NTK", "dynamic NTK", "#2ca02c", ("factor", "original"),
        lambda scaling, d: (f"dynamic NTK ×{scaling.factor:g}{_from_length(scaling)}: the base grows with the "
                            f"sequence length past {scaling.original_length:,}"),
        _dynamic_fragment,
    ),
    MethodEntry(
        "yarn", "YaRN", "YaRN", "#d62728", ("factor", "original", "beta_fast", "beta_slow"),
        _describe_yarn, _yarn_fragment,
        orders=(Order("beta_fast", "beta_slow", above=True, whose="YaRN's"),),
        attention_words="YaRN's 0.1 ln s + 1 (or its mscale ratio, or the config's attention_factor)",
        beyond_controls=_yarn_beyond_controls,
    ),
    MethodEntry(
        "llama3", "llama3 (Llama 3.1)", "llama3", "#17becf", ("factor", "original", "low_freq", "high_freq"),
        lambda scaling, d: (f"llama3 ×{scaling.factor:g}{_from_length(scaling)} (low_freq_factor "
                            f"{scaling.low_freq_factor:g}, high_freq_factor {scaling.high_freq_factor:g})"),
        _llama3_fragment,
        # Llama 4 Scout ships 1 and 1 (no band between), which pe_core and transformers accept.
        orders=(Order("low_freq", "high_freq", above=False, whose="Meta's", equal=True),),
    ),
    MethodEntry(
        "longrope", "LongRoPE (Phi-3)", "LongRoPE", "#c51b7d", ("factor", "original"),
        _describe_longrope, _longrope_fragment,
        attention_words="LongRoPE's √(1 + ln s / ln L0) (or the config's attention_factor)",
        completed=_uniform_lists, controls_label="LongRoPE, uniform factors",
        beyond_controls=_longrope_beyond_controls,
    ),
    MethodEntry(
        "proportional", "proportional (Gemma 4)", "proportional", "#9467bd", ("factor", "partial"),
        _describe_proportional, _proportional_fragment,
    ),
):
    register_method_entry(_entry)


def attention_note(scaling: pe_core.RopeScaling | None, length: int) -> str:
    """What the attention factor a is for this scaling and what it does to the scores."""
    a = pe_core.rope_attention_factor(scaling, length)
    if a == 1.0:
        return "Attention factor a = 1: the cos and sin tables are not scaled."
    words = method_entry(scaling.method).attention_words
    origin = f" ({words})" if words else ""
    return (f"Attention factor a = {a:.6g}{origin}: transformers multiplies the cos and sin tables by it, so "
            f"every score here is multiplied by a² = {a * a:.6g}.")

