"""Cached computations that several pages share: pe_core calls behind st.cache_data.

A page's own cached computations are in its page file, beside the layout that uses them,
made once per process by ``page_cache``; these are the ones two or more topics ask for (the
encoding and its block averages, the frequencies, the dot product by offset). Every cache
has max_entries, so a hundred students moving sliders keep the server's memory bounded;
arrays kept here are at most display-sized, except ``encoding`` whose callers only ask for
what is downloaded or small enough to draw whole.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from types import CodeType
from typing import TypeVar

import numpy as np
import streamlit as st

import pe_core
from explorer.settings import FULL_MATRIX_CELLS, L_MAX, Settings
from explorer.topics.similarity import mirrored_offsets

Function = TypeVar("Function", bound=Callable)
#: ``hash_funcs`` of a cache whose arguments hold Settings: Streamlit hashes a dataclass as dataclasses.asdict's
#: deep copy of it, its fields' tuple in less than half the time (0.11 against 0.26 ms a call).
SETTINGS_HASH = {Settings: dataclasses.astuple}
#: The page files' cached functions, by the code of the function each was made from (see ``page_cache``).
_PAGE_CACHES: dict[CodeType, Callable] = {}
_PAGE_CACHES_LOCK = threading.Lock()


def page_cache(cache: Callable[[Function], Function]) -> Callable[[Function], Function]:
    """A page file's cached computation, made once per process: ``cache`` (``st.cache_data(...)``
    or ``st.cache_resource(...)``) is applied to the function the first time its page runs, and
    every later run, of every session, gets that same cached function back.

    Streamlit runs a page file from the top on every rerun, and applying a cache decorator reads
    and tokenises the function's source for the cache's key: 0.6-2.8 ms of every run on the
    pages that define such functions (one to three each; benchmarks/JOURNAL.md, "Night of
    2026-11-28"). Keyed by the function's code, which Streamlit compiles once per page file: an
    edited file is a new one.

    The function keeps the module namespace of the run that made it (start-up's visit at the
    defaults: 0.2-4.5 KiB of values a page), so it may read only its arguments, modules,
    constants and other functions, never a value a run sets (a cached result is shared by
    every session anyway); tests/app/test_code_rules.py checks it.

    Example::

        @cached.page_cache(st.cache_data(max_entries=16, show_spinner=False))
        def angle_map(settings: Settings, max_rows: int, max_pairs: int): ...
    """

    def made_once(function: Function) -> Function:
        code = function.__code__
        if code not in _PAGE_CACHES:
            with _PAGE_CACHES_LOCK:  # two sessions' first runs at once make it once
                if code not in _PAGE_CACHES:
                    _PAGE_CACHES[code] = cache(function)
        return _PAGE_CACHES[code]

    return made_once


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=SETTINGS_HASH)
def reduced_encoding(settings: Settings, max_rows: int, max_cols: int, start: int = 0) -> pe_core.ReducedEncoding:
    """Block averages of the encoding for drawing (closed form, never the full matrix)."""
    return pe_core.encoding_block_average(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention,
        start=start, max_rows=max_rows, max_cols=max_cols,
    )


@st.cache_data(max_entries=8, show_spinner=False, hash_funcs=SETTINGS_HASH)
def encoding(settings: Settings, start: int = 0) -> np.ndarray:
    """The full (L, d) encoding; only for views of at most FULL_MATRIX_CELLS cells."""
    if settings.L * settings.d > FULL_MATRIX_CELLS:
        raise ValueError(
            f"L x d = {settings.L * settings.d:,} cells is more than this page builds in full "
            f"({FULL_MATRIX_CELLS:,})."
        )
    return pe_core.positional_encoding(
        settings.L, settings.d, settings.n, layout=settings.layout, convention=settings.convention, start=start
    )


def frequencies(settings: Settings) -> np.ndarray:
    """ω_i of every pair (cached by what they depend on: an L step computes nothing)."""
    return pair_frequencies(settings.d, settings.n, settings.convention)


@st.cache_data(max_entries=32, show_spinner=False)
def pair_frequencies(d: int, n: float, convention: str) -> np.ndarray:
    """ω_i of every pair."""
    return pe_core.frequencies(d, n, convention)


#: Entries of the per-(d, n, convention) tables (128 KB each): a class exploring with its own
#: settings (benchmarks/load_test.py's own scenario: about 25 sessions on the pages that read
#: dot_from_zero, each its own d) keeps every session's table from its first run to its L moves.
#: 16 were evicted by the other sessions' first runs, and every move computed its table again.
OFFSET_TABLE_ENTRIES = 32


@st.cache_data(max_entries=OFFSET_TABLE_ENTRIES, show_spinner=False)
def dot_from_zero(d: int, n: float, convention: str) -> np.ndarray:
    """f(t) = sum_i cos(w_i t) for t = 0 .. L_MAX-1 (128 KB), once per (d, n, convention):
    every length is a prefix of it (1024 x 16384 cosines, ~0.2 s, at the largest d)."""
    return pe_core.dot_by_offset(np.arange(L_MAX, dtype=np.float64), d, n, convention)


def sse_by_abs_offset(settings: Settings) -> np.ndarray:
    """SSE of two positions |delta| = 0 .. L-1 apart, closed form d - 2 sum_i cos(w_i delta).

    The SSE is even in delta, so one array serves every reference position. Derived from the
    cached ``dot_from_zero`` (as pe_core.sse_by_offset is), so the pages share one computation.
    """
    return settings.d - 2.0 * dot_from_zero(settings.d, settings.n, settings.convention)[: settings.L]


def dot_by_offset(settings: Settings) -> np.ndarray:
    """Dot product of two positions t apart, closed form sum_i cos(w_i t), for t = -(L-1) .. L-1.

    ``values[t + L - 1] = f(t)`` (the layout of pe_core.offset_matrix_block_average). f is
    even and does not depend on L, so it is a slice of the cached ``dot_from_zero``: moving L
    or the reference position computes nothing.
    """
    half = dot_from_zero(settings.d, settings.n, settings.convention)[: settings.L]
    return mirrored_offsets(half)
