"""explorer/url_keys.py, the registry of each page's URL keys, held in step with the pages.

Every control registers its key only when a run draws it (explorer.ui.controls: the run's
``_url_defaults``), so the registry is checked against runs, each a fresh AppTest session
opened on a view's address as a copied link opens it (tests/support/app_runs.py):

- sound: over the page at its defaults, every seed preset of its page, its copied link
  (DEEP_LINKS) and the views below, every key the run draws is one of ``page_keys(page)``;
- complete: the views below (``REACHING``), chosen so that each key drawn only at some settings
  is drawn by one of them, together draw exactly the page's own keys: a key no control reads
  any more fails too;
- the shared keys, the lessons' reserved ones aside, are drawn on every page at its defaults.

A view runs once per process (``drawn_keys`` is cached), about 50 runs for the whole file.
"""

from __future__ import annotations

import functools
from urllib.parse import parse_qsl

import pytest
from support.app_runs import DEEP_LINKS, PAGE_BY_KEY, PAGES, open_page, page_id

from explorer import layer_types, rope_presets
from explorer.page_list import PageInfo, address_path
from explorer.presets import PRESETS
from explorer.topics import contexts
from explorer.ui import controls
from explorer.url_keys import LESSON_KEYS, PAGE_KEYS, SHARED_KEYS, page_keys

#: Views (query strings, as a URL carries them) that together draw every key of their page's
#: PAGE_KEYS: "" is the page at its defaults; the others reach the keys drawn only at some settings.
REACHING: dict[str, list[str]] = {
    "home": [""],
    "matrix": ["L=1000&rows=window"],  # more positions than the heatmap's rows: rows; a window: row_start
    "waves": ["L=301"],  # longer than the columns' window of 300 positions: wave_start
    "similarity": [""],
    "binary": [""],
    "relative": ["d=256"],  # larger than the transition matrix's window of 128: window_start
    "scorecard": [""],
    "pitfalls": ["a=other_base&b=offset"],  # other_n and offset
    "precision": [""],
    "embeddings": [""],
    # qk=random (the default) draws seed; each method its own parameters (rope_methods.MethodEntry.controls).
    "rotary": ["scaling=yarn", "scaling=llama3", "scaling=proportional"],
    "attention": [""],
    "contexts": [""],  # every method's parameters are read with their boxes hidden
    "layers": [""],
    "mrope": [""],
}


def views(page: PageInfo) -> list[str]:
    """Every view of the page the registry is checked over, each once: its defaults, the seed presets
    that open it, its copied link and the views of ``REACHING``."""
    presets = [f"preset={key}" for key, preset in PRESETS.items() if preset.page == page.url_path]
    return list(dict.fromkeys(["", *presets, DEEP_LINKS[address_path(page)], *REACHING[page.url_path]]))


@functools.cache
def drawn_keys(url_path: str, query: str) -> frozenset[str]:
    """The URL keys of every control drawn in a fresh session's run of ``/<page>?<query>``."""
    at = open_page(PAGE_BY_KEY[url_path], dict(parse_qsl(query, keep_blank_values=True)))
    return frozenset(at.session_state[controls._KEPT].defaults)  # no public name: the run's key -> default


def address(url_path: str, query: str) -> str:
    """A view as an address: /waves, /waves?L=301."""
    return f"/{url_path}" + (f"?{query}" if query else "")


def unregistered(url_path: str, drawn: dict[str, frozenset[str]],
                 registry: dict[str, frozenset[str]] = PAGE_KEYS) -> list[str]:
    """One line per key a view of the page drew (``drawn``: query -> keys) that ``registry`` (with
    SHARED_KEYS) does not give it."""
    known = SHARED_KEYS | registry[url_path]
    return [f"{address(url_path, query)} draws {key!r}, which url_keys.PAGE_KEYS[{url_path!r}] lacks"
            for query, keys in drawn.items() for key in sorted(keys - known)]


def never_drawn(url_path: str, drawn: dict[str, frozenset[str]],
                registry: dict[str, frozenset[str]] = PAGE_KEYS) -> list[str]:
    """One line per key of ``registry``'s page that none of the views (``drawn``) drew."""
    union = frozenset().union(*drawn.values())
    shown = ", ".join(address(url_path, query) for query in drawn)
    return [f"url_keys.PAGE_KEYS[{url_path!r}] holds {key!r}, which none of {shown} draws"
            for key in sorted(registry[url_path] - union)]


def test_the_registry_names_every_page_and_no_page_key_is_shared() -> None:
    assert list(PAGE_KEYS) == [page.url_path for page in PAGES]
    for url_path, keys in PAGE_KEYS.items():
        assert not keys & SHARED_KEYS, f"{url_path}: {sorted(keys & SHARED_KEYS)} are shared keys"
        assert page_keys(url_path) == SHARED_KEYS | keys
    assert LESSON_KEYS <= SHARED_KEYS
    with pytest.raises(ValueError, match=r"No page 'nowhere'; the pages are home, matrix, .*, mrope\."):
        page_keys("nowhere")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_key_a_page_draws_is_in_the_registry(page: PageInfo) -> None:
    drawn = {query: drawn_keys(page.url_path, query) for query in views(page)}
    assert not (missing := unregistered(page.url_path, drawn)), "\n".join(missing)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_the_page_s_views_draw_every_key_of_the_registry(page: PageInfo) -> None:
    drawn = {query: drawn_keys(page.url_path, query) for query in REACHING[page.url_path]}
    problems = unregistered(page.url_path, drawn) + never_drawn(page.url_path, drawn)
    assert not problems, "\n".join(problems)
    assert frozenset().union(*drawn.values()) - SHARED_KEYS == PAGE_KEYS[page.url_path]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_page_draws_the_shared_keys_at_its_defaults(page: PageInfo) -> None:
    """The lessons' keys aside: reserved for that feature, nothing draws them yet."""
    missing = SHARED_KEYS - LESSON_KEYS - drawn_keys(page.url_path, "")
    assert not missing, f"/{page.url_path} at its defaults draws none of {sorted(missing)}"


def test_every_key_the_app_sets_for_a_page_is_one_of_its_keys() -> None:
    """What a preset, a model preset or a link sets on a page (the controls take it when drawn) is a
    key of that page: one it never reads would be dropped without a word."""
    for key, preset in PRESETS.items():
        assert set(preset.page_values) <= page_keys(preset.page), key
    for model in rope_presets.PRESET_CHOICES[1:]:
        assert set(rope_presets.preset_values(model)) <= page_keys("rotary"), model
    assert set(contexts.view_values(contexts.DEFAULT_VIEW)) <= page_keys("contexts")
    assert set(contexts.PAGE_KEYS) <= page_keys("contexts")
    assert set(layer_types.layers_link(None)) <= page_keys("layers")


def test_the_comparison_catches_a_key_missing_from_the_registry_and_one_no_view_draws() -> None:
    drawn = {"": drawn_keys("waves", "")}
    assert not unregistered("waves", drawn) and not never_drawn("waves", {"L=301": drawn_keys("waves", "L=301")})
    without_pair = PAGE_KEYS | {"waves": PAGE_KEYS["waves"] - {"pair"}}
    assert unregistered("waves", drawn, without_pair) == [
        "/waves draws 'pair', which url_keys.PAGE_KEYS['waves'] lacks"]
    with_stale = PAGE_KEYS | {"waves": PAGE_KEYS["waves"] | {"wave_speed"}}
    assert never_drawn("waves", drawn, with_stale) == [
        "url_keys.PAGE_KEYS['waves'] holds 'wave_speed', which none of /waves draws",
        "url_keys.PAGE_KEYS['waves'] holds 'wave_start', which none of /waves draws",
    ]
