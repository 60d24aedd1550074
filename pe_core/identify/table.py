"""What a rotary table is read as: its kind, layout, start, amplitude, frequencies and how well it rebuilds."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pe_core.rope.reading import FrequencyReading, MeasuredFrequencies

#: The layout of a table with one column per pair (gpt-oss's cos and sin: the half layout's first half).
ONE_COLUMN = "one column per pair"


@dataclass
class TableReading:
    """What a table is read as, and how well it rebuilds."""

    kind: str
    layout: str
    transposed: bool
    d: int
    start: int
    amplitude: float
    reading: FrequencyReading
    measured: MeasuredFrequencies
    amplitude_error: float = 0.0
    error: float = math.inf  # max |M - rebuilt|
    excess: float = math.inf  # max |M - rebuilt| / allowed
    where: tuple = ()  # (row, column, value, expected) in the orientation read
    mismatches: int = -1
    cells: int = 0
    arithmetic: str = "float32"
    informative: float = 1.0  # share of the cells where round-off allows less than a tenth of the amplitude
    problem: str | None = None
    start_ambiguous: bool = False
    left_out: tuple[int, ...] = ()  # pairs whose two columns disagree
