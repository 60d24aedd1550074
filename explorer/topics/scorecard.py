"""Criteria scorecard: the sinusoid against the alternatives of seed 004, every criterion measured.

Five schemes give each position k a code: the sinusoid of the settings; the integer k; k
scaled to [0, 1] as k / (L - 1); the binary code of k (seed 003); and a learned table,
here a freshly initialised one (seeded standard normal values, as nn.Embedding starts),
with one row per position of the trained length L. Each is measured with the functions
of explorer.criteria: unique, bounded, the same distance for the same offset at any
length, deterministic, defined beyond the trained length, and a shift that is a fixed
linear map. Seed 004's arguments (integers are unbounded, scaled positions have a step
that depends on the length, a learned table cannot extrapolate) come out as numbers.

Integer and scaled positions are one column: broadcasting them to d columns multiplies
every distance by sqrt(d) and changes no verdict. Work is bounded at any settings: the
sinusoid's uniqueness uses the closed form, and the other checks read bounded samples of
positions, which ``Plan`` records and the page states. No Streamlit here.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pe_core
from explorer import criteria, reproduce
from explorer.criteria import Measurement, Rows
from explorer.figures import count_text, line_figure, positions_text
from explorer.settings import Settings

SCHEMES: dict[str, str] = {
    "sinusoid": "Sinusoid (this encoding)",
    "integer": "Integer position k",
    "scaled": "Scaled to [0, 1]: k/(L−1)",
    "binary": "Binary code of k",
    "learned": "Learned table (random init)",
}
#: Column titles of the scorecard, in the order of the measurements.
CRITERIA: dict[str, str] = {
    "unique": "Unique",
    "bounded": "Bounded",
    "consistent": "Same distance at any length",
    "deterministic": "Deterministic",
    "defined": "Defined beyond L",
    "shift": "Shift is a fixed linear map",
}
#: Shorter titles of the scorecard table's widest columns (the full criterion is their help):
#: with the full ones the table was wider than the page at 1280 x 720 and its last column cut.
TABLE_TITLES: dict[str, str] = {
    CRITERIA["consistent"]: "Same distance",
    CRITERIA["defined"]: "Beyond L",
    CRITERIA["shift"]: "Linear shift",
}
#: Seed of the learned table: the same table at every run, as a trained checkpoint is.
LEARNED_SEED = 0
#: "Far beyond the sentence" is this many times the length L.
FAR_FACTOR = 10
#: Uniqueness of a sampled scheme: every pair among S positions, S^2 x width <= this.
PAIRS_CELLS = 2**25
MAX_SAMPLE = 4096
#: Boundedness reads all L positions up to this many cells, else the first and last rows.
SAMPLE_CELLS = 2**22
#: The shift map is fitted on at most this many cells of rows (and tested on as many).
SHIFT_CELLS = 2**17
MAX_SHIFT_ROWS = 1024
#: Largest offset delta offered on the page (and rows the offset chart draws).
MAX_OFFSET = 256
CHART_OFFSETS = 512
#: Entries of each cache of measurements that do not depend on the length L (a few hundred bytes each).
MEASUREMENT_CACHE = 64

#: Seed 004's arguments, said where the measurement shows them.
_NOTES: dict[tuple[str, str], str] = {
    ("integer", "bounded"): "Seed 004: integer positions are unbounded; longer sentences bring ever larger values.",
    ("scaled", "consistent"): "Seed 004: scaled to [0, 1], the step between neighbours depends on the length.",
    ("learned", "defined"): "Seed 004: learned embeddings cannot extrapolate to sentences longer than in training.",
    ("integer", "shift"): "k + δ is affine, not linear: every matrix maps P[0] = 0 to 0, never to δ.",
    ("scaled", "shift"): "k/(L−1) + δ/(L−1) is affine, not linear: every matrix maps P[0] = 0 to 0.",
}


# ------------------------------------------------------------------------------ schemes


def read_only(rows: np.ndarray) -> np.ndarray:
    """A read-only view of kept rows, for a scheme's reader: the readers only read, and a copy per
    read was a fresh array each time, faulted in page by page (at L=16384, d=2048 and offset 256 the
    copies were 10,400 of ``evaluate``'s 24,000 page faults)."""
    view = rows.view()
    view.flags.writeable = False
    return view


class _FirstRows:
    """The first rows of a scheme whose rows do not depend on the sentence's length, computed as far
    as asked, each once, for every read of the scheme at any L (``more(start, count)`` gives rows
    start..start+count-1, called for the rows after those kept). A lock: the sessions' runs are
    threads, and two extending the rows at once would compute them twice, or interleave a random
    stream.
    """

    def __init__(self, width: int, more: Callable[[int, int], np.ndarray]) -> None:
        self._rows = np.empty((0, width))
        self._more = more
        self._lock = threading.Lock()

    def reaches(self, start: int) -> bool:
        """Whether a read from ``start`` begins inside the rows kept or right after them."""
        return start <= self._rows.shape[0]

    def first(self, count: int) -> np.ndarray:
        """A read-only view of the first ``count`` rows."""
        with self._lock:
            rows = self._rows
            if count > rows.shape[0]:
                self._rows = rows = np.concatenate([rows, self._more(rows.shape[0], count - rows.shape[0])])
        return read_only(rows[:count])


#: Schemes' first rows kept (``_FirstRows``): for the last two settings of each. The learned table's
#: reads stay within about 2^20 values (8 MB) at any settings; the sinusoid's first rows are kept up
#: to ``FIRST_ROWS_CELLS`` values, or the offset chart's rows if more (reads beyond are kept per reader).
FIRST_ROWS_KEPT = 2
FIRST_ROWS_CELLS = 2**20


def _sinusoid_encoding(d: int, n: float, layout: str, convention: str) -> Callable[[int, int], np.ndarray]:
    """``encoding(start, count)``: rows start..start+count-1 of the sinusoidal encoding."""
    return lambda start, count: pe_core.positional_encoding(count, d, n, layout=layout, convention=convention,
                                                            start=start)


@functools.lru_cache(maxsize=FIRST_ROWS_KEPT)
def _sinusoid_first_rows(d: int, n: float, layout: str, convention: str) -> _FirstRows:
    return _FirstRows(d, _sinusoid_encoding(d, n, layout, convention))


def sinusoid_rows(settings: Settings, *, keep: bool = True) -> Rows:
    """The sinusoidal encoding of the settings (independent of the sentence length).

    With ``keep``, the rows computed are kept and a later read inside them is a read-only view
    (``read_only``): the first positions, which the scorecard's shift, its criteria and its offset
    chart read at every L, for the settings' d, n, layout and convention (``_FirstRows``); the
    positions near L, for this reader. At L=16384, d=2048 and offset 256, ``evaluate`` and the
    offset chart compute 1,538 rows where each reader keeping its own computed 2,434; the
    determinism criterion's second reading, 512 rows, is computed anew. Each row is bit for bit
    what ``pe_core.positional_encoding`` gives for it in any block (it is computed position by
    position).
    """
    s = settings
    encoding = _sinusoid_encoding(s.d, s.n, s.layout, s.convention)
    if not keep:
        return lambda start, count, length: encoding(start, count)
    first_rows = _sinusoid_first_rows(s.d, s.n, s.layout, s.convention)
    first_rows_end = max(FIRST_ROWS_CELLS // s.d, CHART_OFFSETS + 1)
    kept: list[tuple[int, np.ndarray]] = []  # (first position, its rows), away from the first rows

    def rows(start: int, count: int, length: int) -> np.ndarray:
        if start + count <= first_rows_end and first_rows.reaches(start):
            return first_rows.first(start + count)[start:]
        for first, block in kept:
            if first <= start and start + count <= first + len(block):
                return read_only(block[start - first : start - first + count])
        kept.append((start, encoding(start, count)))
        return read_only(kept[-1][1])

    return rows


def integer_rows(start: int, count: int, length: int) -> np.ndarray:
    """PE[k] = k, one column."""
    return (start + np.arange(count, dtype=np.float64))[:, None]


def scaled_rows(start: int, count: int, length: int) -> np.ndarray:
    """PE[k] = k / (length - 1), one column: 0 for the first position, 1 for the last."""
    return ((start + np.arange(count, dtype=np.float64)) / max(length - 1, 1))[:, None]


def binary_rows(start: int, count: int, length: int) -> np.ndarray:
    """Bits of k, least significant first, as many as the sentence's last position needs."""
    k = start + np.arange(count, dtype=np.int64)
    return ((k[:, None] >> np.arange(pe_core.bits_needed(length - 1))) & 1).astype(np.float64)


@functools.lru_cache(maxsize=FIRST_ROWS_KEPT)
def _learned_stream(d: int, seed: int) -> _FirstRows:
    # A Generator's normals drawn in parts are the values drawn at once: the rows after those drawn
    # come from the same generator.
    generator = np.random.default_rng(seed)
    return _FirstRows(d, lambda start, count: generator.standard_normal((count, d)))


def learned_rows(trained: int, d: int, seed: int = LEARNED_SEED) -> Rows:
    """Rows of the table ``default_rng(seed).standard_normal((trained, d))``; none beyond it.

    Its first rows are the first values of the same random stream, so only the rows up to
    the last one asked for are drawn, never the whole table; they are kept for the table's d
    and seed, whatever its length (``_FirstRows``), so the scorecard's dozen reads of it
    (the closest pair, the shift, the seed note and the criteria, each with its own length)
    draw it once: at L=16384, d=2048 and offset 256, 513 rows instead of 2,049.
    """
    stream = _learned_stream(d, seed)

    def rows(start: int, count: int, length: int) -> np.ndarray:
        if start + count > trained:
            raise criteria.NoCodeError(f"the table has {trained:,} rows; position {start + count - 1:,} has none")
        return stream.first(start + count)[start:]

    return rows


@functools.lru_cache(maxsize=2)
def _stream_records(seed: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Where the running maximum of |z| grows along the first ``size`` values z of
    ``default_rng(seed).standard_normal``, and its value there (a few dozen records)."""
    running = np.maximum.accumulate(np.abs(np.random.default_rng(seed).standard_normal(size)))
    grows = np.flatnonzero(np.r_[True, running[1:] != running[:-1]])
    return grows, running[grows]


def learned_largest_abs(ranges: Sequence[tuple[int, int]], d: int, seed: int = LEARNED_SEED) -> float:
    r"""max |value| of the learned table over the rows of ``ranges`` (``bounded_of``'s ``largest_abs``).

    ``standard_normal((rows, d))`` fills its rows in order from one stream :math:`z_0, z_1, \dots`,
    whatever d is: row r is :math:`z_{rd} .. z_{rd+d-1}`. So the maximum over rows 0..R-1 is
    :math:`\max_{t < Rd} |z_t|`, read from the records of that running maximum, drawn once for
    SAMPLE_CELLS values and shared by every d and L (the plan reads at most that many).
    """
    if len(ranges) == 1 and ranges[0][0] == 0 and ranges[0][1] * d <= SAMPLE_CELLS:
        grows, values = _stream_records(seed, SAMPLE_CELLS)
        return float(values[np.searchsorted(grows, ranges[0][1] * d - 1, side="right") - 1])
    last = max(first + count for first, count in ranges)
    table = learned_rows(last, d, seed)(0, last, last)
    return max(float(np.abs(table[first : first + count]).max()) for first, count in ranges)


@functools.lru_cache(maxsize=MEASUREMENT_CACHE)
def learned_closest_pair(d: int, count: int, seed: int = LEARNED_SEED) -> tuple[float, int]:
    """``criteria.closest_pair_of`` the learned table's first ``count`` rows: the first values
    of one random stream whatever the table's length L, so an L step reads it from here."""
    return criteria.closest_pair_of(learned_rows(count, d, seed), count, count)


def binary_closest_pair(count: int) -> tuple[float, int]:
    r"""``criteria.closest_pair_of`` the binary codes of 0..count-1, for every d and L, in closed form:

    .. math:: \min_{k \ne k'} \lVert b(k) - b(k') \rVert = 1, \text{ first at offset } 1

    Two distinct codes differ in at least one bit, each difference 0 or ±1, and b(0), b(1) differ in
    their lowest bit alone; a longer sentence only adds high bits, 0 at these positions. The walk over
    every offset found the same (1.0, 1) in 34 ms at L=16384; a test compares the two.
    """
    if count < 2:
        return criteria.closest_pair_of(binary_rows, count, count)
    return 1.0, 1


def scheme_rows(settings: Settings) -> dict[str, Rows]:
    """Every scheme's ``rows(start, count, length)`` for the settings."""
    return {
        "sinusoid": sinusoid_rows(settings),
        "integer": integer_rows,
        "scaled": scaled_rows,
        "binary": binary_rows,
        "learned": learned_rows(settings.L, settings.d),
    }


# ------------------------------------------------------------------------ what is read


@dataclass(frozen=True)
class Plan:
    """The positions one scheme is measured on: bounded work at any settings."""

    width: int
    unique_sample: int | None  # every pair among positions 0..sample-1; None: exact closed form
    bounded_ranges: tuple[tuple[int, int], ...]  # (first, count) ranges of positions
    deterministic_starts: tuple[int, ...]
    deterministic_count: int
    shift_length: int  # sentence the shift is measured in (longer than L if L is tiny)
    shift_fit: int
    shift_test: int


def plan(settings: Settings, offset: int) -> dict[str, Plan]:
    """How much of each scheme the scorecard reads for ``settings`` and the offset."""
    L, d = settings.L, settings.d
    widths = {"sinusoid": d, "integer": 1, "scaled": 1, "binary": pe_core.bits_needed(L - 1), "learned": d}
    count = min(L, criteria.WINDOW)
    plans = {}
    for key, width in widths.items():
        stream = key == "learned"  # drawn from the start: read only its first rows
        if stream:
            ranges = ((0, min(L, max(1, SAMPLE_CELLS // width))),)
        elif L * width <= SAMPLE_CELLS:
            ranges = ((0, L),)
        else:
            half = max(1, SAMPLE_CELLS // width // 2)
            ranges = ((0, half), (L - half, half))
        # The other schemes exist at every position, so a tiny L borrows a longer sentence.
        length = L if stream else max(L, 2 * offset + 2)
        pairs = length - offset
        fit = min(pairs // 2, max(1, min(MAX_SHIFT_ROWS, SHIFT_CELLS // width)))
        plans[key] = Plan(
            width=width,
            unique_sample=None if key == "sinusoid" else min(L, MAX_SAMPLE, max(2, math.isqrt(PAIRS_CELLS // width))),
            bounded_ranges=ranges,
            deterministic_starts=(0,) if stream else tuple(sorted({0, L - count})),
            deterministic_count=count,
            shift_length=length,
            shift_fit=max(fit, 0),
            shift_test=max(0, min(fit, pairs - fit)),
        )
    return plans


def clamp_offset(offset: int, L: int) -> int:
    """The offset delta the page allows: 1 .. min(L - 1, MAX_OFFSET), at least 1."""
    return int(min(max(int(offset), 1), max(1, min(L - 1, MAX_OFFSET))))


# ------------------------------------------------------------------------ the scorecard


@dataclass(frozen=True)
class Scorecard:
    """Each scheme's six measurements, in CRITERIA order."""

    settings: Settings
    offset: int
    results: tuple[tuple[str, tuple[Measurement, ...]], ...]

    def get(self, scheme: str, criterion: str) -> Measurement:
        measurements = dict(self.results)[scheme]
        return measurements[list(CRITERIA).index(criterion)]


def _with_note(m: Measurement, note: str | None) -> Measurement:
    return m if not note else Measurement(m.key, m.title, m.label, m.value, m.passed, f"{m.reason} {note}")


@functools.lru_cache(maxsize=MEASUREMENT_CACHE)
def _learned_seed_note(d: int, count: int) -> str:
    """How much of the table's first ``count`` rows another initialisation (another training run) changes."""
    ours = learned_rows(count, d)(0, count, count)
    other = learned_rows(count, d, LEARNED_SEED + 1)(0, count, count)
    share = float(np.mean(ours != other))
    return (
        f"Identical because the seed is fixed, as a stored checkpoint is; another initialisation "
        f"(seed {LEARNED_SEED + 1}) changes {share:.0%} of these values, and training changes them again."
    )


def _linear_shift(key: str, rows: Rows, settings: Settings, offset: int, *, length: int, fit: int, test: int
                  ) -> Measurement:
    """``criteria.linear_shift_of`` of one scheme in a sentence of ``length``; the sinusoid's with its known M(δ)."""
    s = settings
    known_map: Callable[[np.ndarray], np.ndarray] | None = None
    if key == "sinusoid" and s.d % 2 == 0:
        def known_map(X: np.ndarray) -> np.ndarray:
            return pe_core.shift(X, offset, s.n, layout=s.layout, convention=s.convention)
    return criteria.linear_shift_of(
        rows, length, offset=offset, fit=fit, test=test, known_map=known_map,
        map_name="M(δ) rotating every sine/cosine pair by δ·ω_i (pe_core.shift)",
    )


#: Schemes whose first rows do not depend on the sentence's length (the learned table's
#: length only ends it): their shift is measured once for every L.
_LENGTH_FREE_SHIFT = ("sinusoid", "learned")


@functools.lru_cache(maxsize=MEASUREMENT_CACHE)
def _length_free_shift(key: str, settings: Settings, offset: int, fit: int, test: int) -> Measurement:
    """``_linear_shift`` of a scheme of ``_LENGTH_FREE_SHIFT`` in the shortest sentence that holds its
    pairs, ``settings.L`` = offset + 2 fit: ``linear_shift_of`` reads positions 0..fit+test+offset-1
    only, and with the plan's fit <= (L - offset) / 2 and test <= fit it measures those same pairs,
    and says the same, at every L (the learned table's rows are the first of one random stream).
    The SVD of the learned table's least-squares fit is then paid once per d and offset, not per L."""
    rows = scheme_rows(settings)[key]
    return _linear_shift(key, rows, settings, offset, length=settings.L, fit=fit, test=test)


def evaluate(settings: Settings, offset: int = 1) -> Scorecard:
    """Measure every criterion for every scheme (about 0.2 s at L=16384, d=2048).

    What does not depend on L (the sinusoid's closest pair, the learned table's closest pair,
    both schemes' shift, the learned table's seed note) is cached by what it depends on.
    """
    offset = clamp_offset(offset, settings.L)
    L, s = settings.L, settings
    plans = plan(settings, offset)
    far = FAR_FACTOR * L
    # Exact maxima without reading every value (see each function).
    largest_abs: dict[str, Callable[[Sequence[tuple[int, int]]], float]] = {
        "sinusoid": lambda ranges: criteria.sinusoid_largest_abs(ranges, s.d, s.n, s.convention),
        "learned": lambda ranges: learned_largest_abs(ranges, s.d),
    }
    closest_pairs: dict[str, Callable[[int], tuple[float, int]]] = {
        "binary": binary_closest_pair,
        "learned": functools.partial(learned_closest_pair, s.d),
    }
    results = []
    for key, rows in scheme_rows(settings).items():
        p = plans[key]
        if key == "sinusoid":
            unique = criteria.unique(L, s.d, s.n, s.layout, s.convention)
        else:
            unique = criteria.unique_of(rows, L, sample=p.unique_sample, closest_pair=closest_pairs.get(key))
        if key in _LENGTH_FREE_SHIFT and p.shift_fit >= 1 and p.shift_test >= 1:
            shortest = replace(settings, L=offset + 2 * p.shift_fit)
            shift = _length_free_shift(key, shortest, offset, p.shift_fit, p.shift_test)
        else:
            shift = _linear_shift(key, rows, settings, offset, length=p.shift_length, fit=p.shift_fit,
                                  test=p.shift_test)
        measurements = [
            unique,
            criteria.bounded_of(rows, L, p.width, far=far, ranges=p.bounded_ranges, largest_abs=largest_abs.get(key)),
            criteria.consistent_of(rows, L, offset=offset),
            criteria.deterministic_of(rows, L, starts=p.deterministic_starts, count=p.deterministic_count,
                                      again=sinusoid_rows(s, keep=False) if key == "sinusoid" else None),
            criteria.defined_beyond_of(rows, L, probes=(L, far), width=p.width),
            shift,
        ]
        notes = {c: _NOTES.get((key, c)) for c in CRITERIA}
        if key == "learned":
            notes["deterministic"] = _learned_seed_note(s.d, p.deterministic_count)
        results.append((key, tuple(_with_note(m, notes[c]) for m, c in zip(measurements, CRITERIA, strict=True))))
    return Scorecard(settings=settings, offset=offset, results=tuple(results))


def format_value(criterion: str, value: float) -> str:
    """A measured value as the table shows it."""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "none" if criterion == "defined" else "∞"
    if criterion in ("deterministic", "defined"):
        return f"{int(value):,}"
    if criterion == "shift":
        return f"{value:.2e}"
    return f"{value:.4g}"


def display_table(card: Scorecard) -> pd.DataFrame:
    """Scheme x criterion: ✓ or ✗ and the measured number."""
    rows = {
        SCHEMES[key]: [f"{'✓' if m.passed else '✗'} {format_value(c, m.value)}" for m, c in zip(ms, CRITERIA,
                                                                                               strict=True)]
        for key, ms in card.results
    }
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(CRITERIA.values())).rename_axis("scheme")


def reasons_markdown(measurements: Sequence[Measurement]) -> str:
    """One scheme's criteria as one Markdown text: each criterion in bold with its verdict, and the
    reason below it in small grey type (as a caption). One element instead of two per criterion:
    a rerun of the page replays 60 fewer."""
    return "\n\n".join(
        f"**{criterion}** {':green[✓ pass]' if m.passed else ':red[✗ fail]'}  \n:small[:gray[{_label(m.reason)}]]"
        for criterion, m in zip(CRITERIA.values(), measurements, strict=True)
    )


def _label(text: str) -> str:
    """``text`` as the [label] of a Markdown directive (``:small[...]``): its brackets escaped, so
    that none ends the label early."""
    return text.replace("[", r"\[").replace("]", r"\]")


def numbers_table(card: Scorecard) -> pd.DataFrame:
    """The same numbers for download: each criterion's value, then whether it passes (1/0)."""
    values = {f"{c}: {m.label}": [] for c, m in zip(CRITERIA, card.results[0][1], strict=True)}
    passes = {f"{c} passes (1/0)": [] for c in CRITERIA}
    for _, ms in card.results:
        for column, m in zip(values, ms, strict=True):
            values[column].append(float(m.value))
        for column, m in zip(passes, ms, strict=True):
            passes[column].append(float(m.passed))
    index = pd.Index([SCHEMES[key] for key, _ in card.results], name="scheme")
    return pd.DataFrame({**values, **passes}, index=index)


def seed004_facts(card: Scorecard) -> list[str]:
    """Seed 004's three arguments against the alternatives, as the numbers measured them."""
    L = card.settings.L
    far = FAR_FACTOR * L
    integer = card.get("integer", "bounded")
    scaled_step = [scaled_rows(0, 2, length)[1, 0] for length in (max(L, 2), 2 * max(L, 2))]
    learned = card.get("learned", "defined")
    return [
        f"**Integer positions are unbounded**: the largest value is {integer.value:,.0f} at position "
        f"{far:,} (10 × L), against at most 1 for the sinusoid.",
        f"**Scaled positions have a step that depends on the length**: offset 1 is {scaled_step[0]:.4g} at "
        f"L={max(L, 2):,} but {scaled_step[1]:.4g} at L={2 * max(L, 2):,}; the sinusoid's is the same at both.",
        f"**A learned table cannot extrapolate**: it has rows for {positions_text(0, int(learned.value) - 1)} and "
        f"none for position {int(learned.value):,}; the sinusoid is defined at every position.",
    ]


def sampling_notes(settings: Settings, offset: int) -> list[str]:
    """What each check read, in words, for the page."""
    L = settings.L
    plans = plan(settings, clamp_offset(offset, L))
    learned, binary, sinusoid = plans["learned"], plans["binary"], plans["sinusoid"]

    def ranges(p: Plan) -> str:
        if p.bounded_ranges == ((0, L),):
            return "all positions"
        return " and ".join(positions_text(a, a + c - 1) for a, c in p.bounded_ranges)

    def sample(p: Plan) -> str:
        return "all positions" if (p.unique_sample or L) >= L else positions_text(0, p.unique_sample - 1)

    def k_range(first: int, count: int) -> str:
        return f"k = {first:,}" if count == 1 else f"k = {first:,}..{first + count - 1:,}"

    every = "its one position" if L == 1 else f"all {L:,} positions"
    return [
        f"Unique: the sinusoid over {every} (every pair, or the closed form by offset); every pair "
        f"among {sample(binary)} (binary), {sample(learned)} (learned table) and {sample(plans['integer'])} "
        "(integer, scaled).",
        f"Bounded: {ranges(sinusoid)} (sinusoid), {ranges(learned)} (learned table), all positions (the "
        f"others); then position {FAR_FACTOR * L:,}.",
        f"Same distance: up to {criteria.WINDOW} pairs from k = 0 at L={L:,}, and from k = 0 and "
        f"k = L−δ in a longer sentence (L={max(2 * L, L + 2 * offset):,}).",
        (
            f"Shift: fitted on {k_range(0, learned.shift_fit)} and tested on the next "
            f"{count_text(learned.shift_test, 'pair')} (learned table, {learned.width:,} columns)"
            if learned.shift_test else
            "Shift: the learned table has too few rows to fit a map and test it"
        )
        + f"; {binary.shift_fit:,} + {binary.shift_test:,} pairs for binary; the sinusoid's known M(δ) on "
        f"{k_range(0, sinusoid.shift_fit + sinusoid.shift_test)}.",
    ]


# --------------------------------------------------------------- distance by offset chart


def distance_by_offset(settings: Settings, max_offset: int = CHART_OFFSETS) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """||P[delta] - P[0]|| / ||P[1] - P[0]|| for delta = 1..min(L-1, max_offset), per scheme.

    Scaled positions are also drawn in a sentence of 2L, divided by the same offset-1
    distance at L: the curve that moves is the length dependence of seed 004.
    """
    L = settings.L
    count = min(L - 1, max_offset)
    offsets = np.arange(1, count + 1)
    if count < 1:
        return offsets, {}
    free_of_length = _distances_free_of_length(replace(settings, L=count + 1))
    series: dict[str, np.ndarray] = {}
    for key, rows in scheme_rows(settings).items():
        if key != "scaled":
            series[SCHEMES[key]] = free_of_length[key].copy()
            continue
        P = rows(0, count + 1, L)
        distance = np.linalg.norm(P[1:] - P[0], axis=1)
        series[SCHEMES[key]] = distance / distance[0]
        longer = rows(0, count + 1, 2 * L)
        series[f"{SCHEMES[key]}, in a sentence of 2L = {2 * L:,}"] = (
            np.linalg.norm(longer[1:] - longer[0], axis=1) / distance[0]
        )
    return offsets, series


@functools.lru_cache(maxsize=16)
def _distances_free_of_length(settings: Settings) -> dict[str, np.ndarray]:
    """``distance_by_offset``'s series of every scheme but scaled positions (k / (L - 1) changes with
    L), over offsets 1..settings.L - 1: the same in any longer sentence (the binary codes' extra high
    bits are 0 here, and squares of 0 and ±1 add up exactly), so cached without it."""
    series = {}
    for key, rows in scheme_rows(settings).items():
        if key != "scaled":
            P = rows(0, settings.L, settings.L)
            distance = np.linalg.norm(P[1:] - P[0], axis=1)
            series[key] = distance / distance[0]
    return series


def chart_dashes(series: dict[str, np.ndarray]) -> dict[str, str]:
    """Scaled positions at L draw exactly over integer ones (both are delta times their step):
    dashed, so that the integer line shows through; the scaled line at 2L dotted."""
    dashes = {SCHEMES["scaled"]: "dash"}
    dashes.update({name: "dot" for name in series if name.startswith(SCHEMES["scaled"] + ",")})
    return dashes


# ------------------------------------------------------------------------ reproduce this


_SNIPPET = '''import numpy as np

# Criteria scorecard: five positional encodings, six criteria, measured as the page does.
L, d, n, delta = {L}, {d}, {n}, {offset}
layout, convention = {layout!r}, {convention!r}
FAR, SEED, WINDOW = {far}, {seed}, {window}
i = np.arange((d + 1) // 2)
{rate}


def sinusoid(start, count, length):
    theta = np.arange(start, start + count, dtype=np.float64)[:, None] * w
    P = np.empty((count, d))
    sines, cosines = (slice(0, d, 2), slice(1, d, 2)) if layout == "interleaved" else (
        slice(0, len(w)), slice(len(w), d))
    np.sin(theta, out=P[:, sines])
    np.cos(theta[:, : d // 2], out=P[:, cosines])
    return P


def integer(start, count, length):  # PE[k] = k
    return (start + np.arange(count, dtype=np.float64))[:, None]


def scaled(start, count, length):  # PE[k] = k / (length - 1)
    return ((start + np.arange(count, dtype=np.float64)) / max(length - 1, 1))[:, None]


def binary(start, count, length):  # bits of k, least significant first
    k = start + np.arange(count)
    return ((k[:, None] >> np.arange(max(1, int(length - 1).bit_length()))) & 1).astype(np.float64)


def learned(start, count, length):  # rows of default_rng(SEED).standard_normal((L, d))
    if start + count > L:
        raise LookupError("the table has no row for position %d" % (start + count - 1))
    return np.random.default_rng(SEED).standard_normal((start + count, d))[start:]


def closest(P):  # smallest distance between two rows, walking the offsets
    best = np.inf
    for o in range(1, len(P)):
        diff = P[o:] - P[:-o]
        best = min(best, np.einsum("kj,kj->k", diff, diff).min())
    return np.sqrt(best)


def unique_sinusoid():
    if L < 2:
        return np.inf
    if L * L * d <= 2**22 or d % 2:
        return closest(sinusoid(0, L, L))
    # |P[k] - P[k+t]|^2 = d - 2 sum_i cos(w_i t) for every k: the closest pair by offset.
    t = np.arange(1, L, dtype=np.float64)
    sse = np.concatenate([d - 2.0 * np.cos(np.multiply.outer(t[a:a + 1024], w)).sum(-1)
                          for a in range(0, len(t), 1024)])
    return np.sqrt(np.maximum(sse, 0.0).min())


def distances(f, start, pairs, length):  # |P[k + delta] - P[k]| for `pairs` k from start
    if pairs <= 0:
        return np.zeros(0)
    P = f(start, pairs + delta, length)
    diff = P[delta:] - P[:-delta]
    return np.sqrt(np.einsum("kj,kj->k", diff, diff))


def consistent(f):  # spread of the offset-delta distance in a sentence of L and a longer one
    longer = max(2 * L, L + 2 * delta)
    groups = [distances(f, 0, min(L - delta, WINDOW), L)]
    try:
        first = distances(f, 0, min(longer - delta, WINDOW), longer)
        a = max(L - delta, len(first))
        groups += [first, distances(f, a, min(longer - delta - a, WINDOW), longer)]
    except LookupError:  # no longer sentence for the learned table
        pass
    x = np.concatenate(groups)
    return (np.ptp(x), np.ptp(x) <= 1e-9) if x.size >= 2 else (np.nan, False)


def bounded(f, ranges, width):  # largest |value| on the ranges and at position FAR
    chunk, largest = max(1, 2**21 // width), 0.0
    for first, count in ranges:
        for a in range(first, first + count, chunk):
            largest = max(largest, np.abs(f(a, min(chunk, first + count - a), L)).max())
    try:
        far = np.abs(f(FAR, 1, FAR + 1)).max()
    except LookupError:
        return largest, np.isfinite(largest)
    return max(largest, far), far <= max(largest, 1.0)


def deterministic(f, starts, count):  # values that differ in any bit between two builds
    differ = 0
    for a in starts:
        first, second = f(a, count, max(L, a + count)), f(a, count, max(L, a + count))
        differ += np.count_nonzero(np.ascontiguousarray(first).view(np.uint64)
                                   != np.ascontiguousarray(second).view(np.uint64))
    return differ, differ == 0


def defined(f):  # first of the positions L and FAR without a code
    for k in (L, FAR):
        try:
            f(k, 1, k + 1)
        except LookupError:
            return k, False
    return np.inf, True


def rotate(X):  # X @ M(delta) pair by pair, in the app's own arithmetic
    m = d // 2
    c, s = np.cos(delta * w), np.sin(delta * w)
    if layout == "interleaved":  # z = sin + i cos turns by -delta * w
        z = np.empty((len(X), m), dtype=np.complex128)
        z.real, z.imag = X[:, 0::2], X[:, 1::2]
        z *= c - 1j * s
        out = np.empty_like(X)
        out[:, 0::2], out[:, 1::2] = z.real, z.imag
        return out
    # [sin | cos]: row k as a (2, m) array; out[k, b, i] = sum over a of X[k, a, i] * W_i[a, b]
    W_transposed = np.array([[c, s], [-s, c]])  # [b, a, i]
    return np.einsum("kai,bai->kbi", X.reshape(len(X), 2, m), W_transposed).reshape(X.shape)


def shift(f, length, fit, test, known):  # max |P[k] M - P[k + delta]|, M known or fitted on `fit` pairs
    if fit < 1 or test < 1:
        return np.nan, False
    P = f(0, fit + test + delta, length)
    X, Y = P[:fit + test], P[delta:delta + fit + test]
    if known:
        image = rotate(X)
    else:  # least squares: M = pinv(X[:fit]) Y[:fit], formed only if it is the smaller side
        pinv = np.linalg.pinv(X[:fit])
        image = X @ (pinv @ Y[:fit]) if fit >= X.shape[1] else (X @ pinv) @ Y[:fit]
    error = np.abs(image - Y).max()
    return error, error <= 1e-9 * max(1.0, np.abs(Y).max())


# What each check reads (the page's bounded samples): scheme -> plan.
plans = {{
{plans}
}}
values, passed = np.zeros((5, 6)), np.zeros((5, 6), dtype=bool)
for row, (f, p) in enumerate(zip((sinusoid, integer, scaled, binary, learned), plans.values())):
    u = unique_sinusoid() if f is sinusoid else (np.inf if L < 2 else closest(f(0, p["unique"], L)))
    checks = [
        (u, u >= 1e-6),
        bounded(f, p["bounded"], p["width"]),
        consistent(f),
        deterministic(f, p["det_starts"], p["det_count"]),
        defined(f),
        shift(f, p["shift_length"], p["fit"], p["test"], known=f is sinusoid and d % 2 == 0),
    ]
    values[row], passed[row] = [c[0] for c in checks], [bool(c[1]) for c in checks]
# Rows: sinusoid, integer, scaled, binary, learned. Columns: unique, bounded, same distance, deterministic,
# first position without a code, shift error; then whether each of the six passes (1) or not (0).
result = {{"scorecard_table": np.column_stack([values, passed.astype(np.float64)])}}  # the downloaded table
'''


def snippet(settings: Settings, offset: int = 1) -> str:
    """Standalone NumPy code whose ``result["scorecard_table"]`` is ``numbers_table(evaluate(settings, offset))``."""
    offset = clamp_offset(offset, settings.L)
    if settings.convention == "paper":
        rate = "w = n ** (-2 * i / d)  # paper: w_i = n^(-2i/d)"
    else:
        rate = "w = n ** (-i / max(len(i) - 1, 1))  # tensor2tensor: w_i = n^(-i/(m-1))"
    lines = []
    for key, p in plan(settings, offset).items():
        lines.append(
            f"    {key!r}: dict(width={p.width}, unique={p.unique_sample}, bounded={list(p.bounded_ranges)}, "
            f"det_starts={list(p.deterministic_starts)}, det_count={p.deterministic_count},\n"
            f"        shift_length={p.shift_length}, fit={p.shift_fit}, test={p.shift_test}),"
        )
    return _SNIPPET.format(
        L=settings.L, d=settings.d, n=repr(float(settings.n)), offset=offset, layout=settings.layout,
        convention=settings.convention, far=FAR_FACTOR * settings.L, seed=LEARNED_SEED, window=criteria.WINDOW,
        rate=rate, plans="\n".join(lines),
    ) + reproduce.numbers_code({  # the criteria each scheme passes, of six
        name: (f"(int(passed[{row}].sum()), passed.shape[1])", "d") for row, name in enumerate(SCHEMES.values())
    })


def scheme_distance_figure(
    offsets: np.ndarray, series: dict[str, np.ndarray], *, title: str, dashes: dict[str, str] | None = None
) -> go.Figure:
    """The scorecard's distance by offset, one line per scheme, log-log; ``dashes`` tells
    apart lines that coincide (integer and scaled positions grow alike within one length)."""
    return line_figure(
        np.asarray(offsets), series, title=title, x_title="offset δ (positions)",
        y_title="distance ÷ distance at δ = 1", log_x=True, log_y=True, hover_format=".4g",
        line_styles={name: {"dash": dash, "width": 3} for name, dash in (dashes or {}).items()},
        legend={"orientation": "h", "y": -0.25},
    )
