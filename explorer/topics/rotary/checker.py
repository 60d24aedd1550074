"""Rotary's "Check your RoPE": every array of an uploaded file read by ``pe_core.identify_encoding``
(``check_upload``), what the page says of a reading (the line in the table of a file's arrays, the
metric boxes, the table of the scaling's parameters, the readings no table tells apart), and whether the
page's controls can show it (``opening``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

import pe_core
from explorer import rope_methods, uploads
from explorer.rope_presets import CUSTOM, choice_parameters, scaling_from_choice, scaling_label
from explorer.settings import D_MAX, D_MIN, format_number, nearest_n
from explorer.topics.rotary.view import RotaryView
from pe_core.wording import number

#: The rotary kinds in the few words of a metric box (the verdict names them in full).
KIND_SHORT = {"rope_cos": "cos table", "rope_sin": "sin table", "rope_inv_freq": "inv_freq",
              "rope_complex": "freqs_cis"}


@dataclass(frozen=True)
class ArrayReading:
    """One array of an uploaded file and what identify_encoding reads in it (``result``), or the
    one line saying why it could not (``error``)."""

    name: str | None  # in a .npz file
    shape: tuple[int, ...]
    notes: tuple[str, ...]
    result: dict | None
    error: str | None = None

    @property
    def status(self) -> str:
        """What the array is: "rotary" (what a rotary model holds), "near" (closest to a rotary reading,
        which differs), "sinusoidal", "unknown" (neither) or "error" (not read)."""
        if self.result is None:
            return "error"
        kind = self.result["kind"]
        if kind in uploads.ROTARY_KINDS:
            return "rotary"
        if kind == "sinusoidal":
            return "sinusoidal"
        return "near" if uploads.is_rotary(self.result) else "unknown"

    @property
    def label(self) -> str:
        """The array as the page's choice of arrays names it: its name in the .npz and its shape."""
        shape = " x ".join(f"{size:,}" for size in self.shape)
        return f"{self.name} ({shape})" if self.name is not None else shape


@dataclass(frozen=True)
class RopeCheck:
    """Every array of an uploaded file, read. Only what the page shows is kept, never the upload. A .gguf
    file's metadata is said in ``model_file`` (its summary line, then its notes), and its ``rope_freqs``
    is its one array, as the inv_freq llama.cpp computes; ``refusal`` says why that array was not read."""

    readings: tuple[ArrayReading, ...]
    model_file: tuple[str, ...] = ()
    refusal: str = ""

    @property
    def first_rotary(self) -> int:
        """The array the page shows first: the first that is what a rotary model holds, else the first
        (0 too when there is none)."""
        return next((i for i, r in enumerate(self.readings) if r.status == "rotary"), 0)


def check_upload(name: str, data: bytes) -> RopeCheck:
    """Read every array of an uploaded .npy, .npz, .csv or .safetensors file (``uploads.read_arrays``) and
    identify each (``pe_core.identify_encoding``), or a .gguf file's RoPE (``check_gguf``). Raises
    ValueError for a file that cannot be read, with one line for the visitor; an array
    identify_encoding refuses keeps its line."""
    if name.lower().endswith(".gguf"):
        return check_gguf(name, data)
    readings = []
    for array in uploads.read_arrays(name, data):
        try:
            result, error = pe_core.identify_encoding(array.values), None
        except ValueError as refusal:
            result, error = None, str(refusal)
        readings.append(ArrayReading(array.name, array.values.shape, array.notes, result, error))
    return RopeCheck(tuple(readings))


#: What a GGUF's rope_freqs is read as (the converter writes Llama 3.1's divisors f_i there).
GGUF_ROPE_FREQS = "rope_freqs, as the inv_freq llama.cpp computes, b^(−2i/d) / f_i"


def check_gguf(name: str, data: bytes) -> RopeCheck:
    """A .gguf file's RoPE as the command line reads it (``pe_core.identify.gguf_file``): its metadata
    as the config.json it amounts to, and its ``rope_freqs`` as an inv_freq, identified."""
    gguf = uploads.read_gguf_upload(name, data)
    readings = ()
    if gguf.inv_freq is not None:
        readings = (ArrayReading(GGUF_ROPE_FREQS, gguf.inv_freq.shape, (), pe_core.identify_encoding(gguf.inv_freq)),)
    if gguf.rope is None:  # the summary line says why
        return RopeCheck(readings, (gguf.summary(name),))
    return RopeCheck(readings, (gguf.summary(name), *gguf.rope.notes), gguf.refusal)


def reading_summary(reading: ArrayReading) -> str:
    """One line for the table of a file's arrays: what the array is, in the verdict's terms."""
    result = reading.result
    status = reading.status
    if status == "error":
        return f"not read: {reading.error}"
    if status == "unknown":
        return "not recognised"
    if status == "sinusoidal":
        also = f"; also {result['rotary_buffer']}" if result["rotary_buffer"] else ""
        return f"{uploads.KIND_NAMES['sinusoidal']}, {result['layout']} layout, n = {format_number(result['n'])}{also}"
    facts = [f"d = {result['d']:,}"] + ([f"{result['layout']} layout"] if result["layout"] else [])
    facts += [] if result["n"] is None else [f"base {number(result['n'])}"]
    if status == "near":
        return f"no reading fits; the closest: {', '.join(facts)}"
    return ", ".join([uploads.KIND_NAMES[result["kind"]], *facts, f"scaling {scaling_short(result['scaling'])}"])


def arrays_table(check: RopeCheck) -> pd.DataFrame:
    """The arrays of a file, their shapes (as read) and what each is."""
    return pd.DataFrame(
        {"shape": [" x ".join(f"{size:,}" for size in r.shape) for r in check.readings],
         "what it is": [reading_summary(r) for r in check.readings]},
        index=pd.Index([r.name or "-" for r in check.readings], name="array"),
    )


def scaling_short(scaling: dict | None) -> str:
    """'none', 'llama3 ×8', 'YaRN ×4', 'LongRoPE': the scaling in the verdict's terms, short enough for a box."""
    if scaling is None:
        return "none"
    name = rope_methods.method_short(scaling["method"])
    return name if scaling.get("factor") is None else f"{name} ×{number(scaling['factor'])}"


def _cell(cell: list[int]) -> str:
    return f"index {cell[0]:,}" if len(cell) == 1 else f"row {cell[0]:,}, column {cell[1]:,}"


def reading_metrics(result: dict) -> dict[str, str]:
    """The page's metric boxes for a reading, label -> value, in the verdict's own numbers: for what a
    rotary model holds its kind, d, layout, base, start, scaling, attention factor and the pairs read;
    for a near miss the closest reading's d, layout, base and start (those it names), and where and
    by how much it differs; nothing for other readings (the verdict says them)."""
    if not uploads.is_rotary(result):
        return {}
    d, n, start = result["d"], result["n"], result["start"]
    facts = {
        "d": f"{d:,}",
        "layout": result["layout"] or "-",
        "base": "-" if n is None else number(n),
        "start": "-" if start is None else f"{start:,}",
    }
    if result["kind"] is None:
        if result["worst_cell"] is None:
            return {}  # not read far enough to name a cell: the verdict says why
        return {label: value for label, value in facts.items() if value != "-"} | {
            "differs most at": _cell(result["worst_cell"]), "by up to": f"{result['max_abs_error']:.3g}"}
    a = result["attention_factor"]
    pairs = d // 2
    return {"kind": KIND_SHORT[result["kind"]]} | facts | {
        "scaling": scaling_short(result["scaling"]),
        "attention factor": "-" if a is None else f"{a:.6g}",
        "pairs read": f"{pairs - len(result['unreadable_pairs']):,} of {pairs:,}",
    }


def _interval(bounds: tuple[float, float]) -> str:
    low, high = bounds
    if low == high:
        return f"{low:.6g}"
    return f"[{low:.6g}, {high:.6g})" if np.isfinite(high) else f"at least {low:.6g}"


def _wavelength(value: float | tuple[float, float]) -> str:
    """A llama3 wavelength bound: a value read, or the interval it lies in when no pair lies between the bounds."""
    return f"{number(round(value, 1))} positions" if np.isscalar(value) else f"{_interval(value)} positions"


def _divisors(values: tuple[float | None, ...]) -> str:
    shown = ", ".join("?" if v is None else number(v) for v in values[:8])
    return f"{shown}{', ...' if len(values) > 8 else ''} ({len(values)} pairs; ? too slow to read)"


#: The scaling's keys as the table of parameters names them, and how it writes their values.
SCALING_KEYS: dict[str, tuple[str, object]] = {
    "factor": ("factor s", number),
    "ramp": ("YaRN's ramp: from pair, to pair", lambda r: f"{r[0]:g}, {r[1]:g}"),
    "truncate": ("truncate (the ramp's bounds rounded)", lambda t: "true" if t else "false"),
    "original_length_over_beta_fast": ("original_max_position_embeddings / beta_fast", _interval),
    "original_length_over_beta_slow": ("original_max_position_embeddings / beta_slow", _interval),
    "low_freq_wavelength": ("wavelength bound: original / low_freq_factor", _wavelength),
    "high_freq_wavelength": ("wavelength bound: original / high_freq_factor", _wavelength),
    "original_length": ("original_max_position_embeddings", number),
    "beta_fast": ("beta_fast", number),
    "beta_slow": ("beta_slow", number),
    "low_freq_factor": ("low_freq_factor", number),
    "high_freq_factor": ("high_freq_factor", number),
    "divisors": ("divisors e_i, pair by pair", _divisors),
    "partial_rotary_factor": ("partial_rotary_factor (the rotated pairs' share)", number),
    "rotated_pairs": ("pairs rotated (the others turn 0)", number),
}


#: The parameters a reading completes (yarn's and llama3's): the table fixes only ratios of them.
_COMPLETED = ("original_length", "beta_fast", "beta_slow", "low_freq_factor", "high_freq_factor")


def scaling_table(scaling: dict) -> pd.DataFrame:
    """What the reading says of the scaling's parameters: each value and how the table gives it
    (read from its frequencies, following from them with the assumed values, or assumed: the
    method's default), in the order of ``SCALING_KEYS``."""
    assumed = tuple(scaling.get("assumed", ()))
    rows = []
    for key, (label, write) in SCALING_KEYS.items():
        if key not in scaling or scaling[key] is None:
            continue
        if key in assumed:
            how = "assumed: the method's default"
        elif key in _COMPLETED and assumed:
            how = "follows from the table with the assumed values"
        else:
            how = "read from the table"
        rows.append((label, write(scaling[key]), how))
    method = rope_methods.method_short(scaling["method"])
    return pd.DataFrame([("method", method, "read from the table"), *rows],
                        columns=["parameter", "value", "how the table tells it"]).set_index("parameter")


def alternative_text(alternative: dict) -> str:
    """A reading no table tells from the one shown (``result["alternatives"]``), in a few words."""
    text = rope_methods.method_short(alternative["method"])
    if "factor" in alternative:
        text += f" ×{number(alternative['factor'])}"
    if "base" in alternative:
        text += f" of base {number(alternative['base'])}"
    if "step" in alternative:
        text += f", step q = {number(alternative['step'])}"
    if "original_length" in alternative:
        text += f" from {alternative['original_length']:,} positions"
    return text


@dataclass(frozen=True)
class Opening:
    """The page's controls that show a reading: ``values`` for the sidebar's d and n, the model
    (none), the layout, the scaling and its parameters, and the scaling they build; or None and
    the ``reason`` the controls cannot hold the reading exactly."""

    values: dict[str, object] | None
    scaling: pe_core.RopeScaling | None = None
    reason: str = ""

    def shown_by(self, view: RotaryView) -> bool:
        """Whether the page already shows this reading (its d, base, layout and scaling)."""
        v = self.values
        return v is not None and (view.d, view.base, view.scaling) == (v["d"], v["n"], self.scaling) and (
            "rope_layout" not in v or view.layout == v["rope_layout"])


def opening(result: dict) -> Opening:
    """How the page's controls show ``result`` (as a model preset sets them), when they can: a
    reading of what a rotary model holds, with a base on the n slider's stops, d within the
    sidebar's, a scaling the page's controls build with the same frequencies and attention factor."""
    kind = result["kind"]
    if kind not in uploads.ROTARY_KINDS:
        return Opening(None, reason="only a reading of what a rotary model holds opens here")
    d, base = result["d"], result["n"]
    if base is None:
        return Opening(None, reason="the table does not tell the base")
    if not D_MIN <= d <= D_MAX:
        return Opening(None, reason=f"d = {d:,} is beyond the sidebar's d (at most {D_MAX:,})")
    if nearest_n(base) != base:
        return Opening(None, reason=f"the base {number(base)} is not a stop of the sidebar's n slider")
    values: dict[str, object] = {"d": d, "n": base, "model": CUSTOM}
    if result["layout"] is not None or kind == "rope_complex":
        values["rope_layout"] = result["layout"] or "interleaved"  # freqs_cis pairs neighbours: Meta's layout
    scaling = result["scaling"]
    method = rope_methods.NONE if scaling is None else scaling["method"]
    if scaling is not None:
        beyond = rope_methods.method_entry(method).beyond_controls
        reason = beyond(scaling) if beyond is not None else ""
        if reason:
            return Opening(None, reason=reason)
    for name in choice_parameters(method):
        parameter = rope_methods.PARAMETERS[name]
        value = float(scaling[parameter.field])
        if value not in parameter.stops:
            return Opening(None, reason=f"{parameter.label} = {number(value)} is not a stop of its slider")
        values[name] = value
    values["scaling"] = method
    built, notices = scaling_from_choice(method, d=d, **{name: values[name] for name in choice_parameters(method)})
    a, given_a = result["attention_factor"], pe_core.rope_attention_factor(built)
    if notices:
        return Opening(None, reason=notices[0])
    if a is not None and not math.isclose(a, given_a, rel_tol=1e-9):
        return Opening(None, reason=f"the attention factor {a:.6g}, where the page's scaling "
                                    f"({scaling_label(method)}) gives {given_a:.6g}")
    return Opening(values, built)
