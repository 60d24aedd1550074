"""explorer.ui.cached.page_cache: a page file's cached computations are made once per process,
not again on every run of the page, and still serve every session from one cache."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.caching import cache_utils
from support.app_runs import PAGE_BY_KEY, open_page

from explorer.topics import similarity
from explorer.ui import blocks, cached

SOURCE = '''
def measured(x):
    return x * 2
'''


def defined(source: str) -> object:
    """The function ``measured`` from ``source``, in a namespace of its own (as a page run defines it)."""
    namespace: dict[str, object] = {}
    exec(compile(source, "<page>", "exec"), namespace)
    return namespace["measured"]


def counting_decorator(calls: list[object]):
    def decorate(function):
        calls.append(function)
        return lambda *args: ("cached", function(*args))

    return decorate


def test_the_same_function_of_two_runs_is_cached_once() -> None:
    calls: list[object] = []
    code = compile(SOURCE, "<page>", "exec")
    first_run, second_run = ({}, {})
    exec(code, first_run)  # the same compiled page, run twice
    exec(code, second_run)
    assert first_run["measured"] is not second_run["measured"]
    made = cached.page_cache(counting_decorator(calls))(first_run["measured"])
    again = cached.page_cache(counting_decorator(calls))(second_run["measured"])
    assert again is made and calls == [first_run["measured"]]
    assert again(21) == ("cached", 42)


def test_another_function_gets_a_cache_of_its_own() -> None:
    calls: list[object] = []
    # Not SOURCE itself: code compiled again from the same text is equal to it, and shares its cache.
    one = cached.page_cache(counting_decorator(calls))(defined(SOURCE.replace("x * 2", "x * 4")))
    other = cached.page_cache(counting_decorator(calls))(defined(SOURCE.replace("x * 2", "x * 3")))
    assert other is not one and len(calls) == 2
    assert (one(5), other(5)) == (("cached", 20), ("cached", 15))


def test_a_page_makes_its_cached_functions_once_and_every_session_shares_them(monkeypatch) -> None:
    made: list[str] = []
    make = cache_utils.CachedFunc.__init__

    def recorded(self, info) -> None:
        make(self, info)
        made.append(info.func.__qualname__)

    measured: list[int] = []
    measure = similarity.similarity_from_matrix

    def counted(P, ref):
        measured.append(P.shape[1])
        return measure(P, ref)

    monkeypatch.setattr(cache_utils.CachedFunc, "__init__", recorded)
    monkeypatch.setattr(similarity, "similarity_from_matrix", counted)
    st.cache_data.clear()
    blocks._drawn_once.clear()  # the finished sections, which would replay without asking the page's caches
    page = PAGE_BY_KEY["similarity"]
    first = open_page(page)
    first.run()  # the same session again
    assert not first.exception and measured == [128], measured

    second = open_page(page)  # another session, the same settings: served from the cache
    assert not second.exception and measured == [128]
    third = open_page(page, {"d": "64"})  # new settings: computed, not served stale
    assert not third.exception and measured == [128, 64]
    # Four runs, at most one making (none if an earlier test in this process ran the page).
    assert made.count("reference_curves") <= 1 and made.count("measured_window") <= 1, made
