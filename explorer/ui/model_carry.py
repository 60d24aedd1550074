"""A model preset's settings on the pages after the one it was chosen on.

Rotary and Longer contexts have the same model presets (the ``model`` URL key): choosing one sets
the sidebar's d and n, which every page shares, and the page's own keys. A visitor who leaves
the page takes d and n along. So that nothing is carried half and unsaid: the page a model was
chosen on remembers it here; Longer contexts, reached with a model from Rotary while d and n are
still the model's, opens that model whole (its lengths and scaling too, not Rotary's leftovers),
and every other page says in one line which of d and n come from which model on which page.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from explorer import page_list
from explorer.settings import format_number

_CARRIED = "_model_carried"


@dataclass(frozen=True)
class CarriedModel:
    """A model preset chosen on the page at ``url_path``, which set the sidebar's d and n."""

    key: str
    name: str
    url_path: str
    d: int
    n: float
    #: The pages that have opened the model whole on arrival (``arriving``), once each.
    opened_on: frozenset[str] = frozenset()

    def page_title(self) -> str:
        return next(info.title for info in page_list.PAGES if info.url_path == self.url_path)

    def kept(self) -> dict[str, str]:
        """Which of d and n still hold the model's values (URL key -> shown value)."""
        state = st.session_state
        kept = {"d": str(self.d), "n": format_number(self.n)}
        return {key: shown for key, shown in kept.items() if state.get(key) == getattr(self, key)}


def remember(key: str, name: str, url_path: str, d: int, n: float) -> None:
    """The page at ``url_path`` shows model ``key``, whose d and n are these: unless the model came
    from another page with the same d and n (it was carried here), this page is where it is from."""
    carried = st.session_state.get(_CARRIED)
    if carried is None or (carried.key, carried.d, carried.n) != (key, d, n):
        st.session_state[_CARRIED] = CarriedModel(key, name, url_path, d, n)


def forget(url_path: str) -> None:
    """The page at ``url_path`` shows no model any more: forget a model chosen there."""
    carried = st.session_state.get(_CARRIED)
    if carried is not None and carried.url_path == url_path:
        del st.session_state[_CARRIED]


def arriving(url_path: str) -> CarriedModel | None:
    """A model chosen on another page than ``url_path`` whose d and n the sidebar still holds, for
    that page to open whole: once (a visitor who then chooses another model there keeps it)."""
    carried = st.session_state.get(_CARRIED)
    if carried is None or carried.url_path == url_path or url_path in carried.opened_on or len(carried.kept()) < 2:
        return None
    st.session_state[_CARRIED] = replace(carried, opened_on=carried.opened_on | {url_path})
    return carried


def note(url_path: str) -> str | None:
    """One line on the page at ``url_path``: which of the sidebar's d and n come from a model chosen
    on another page (None when neither does, or the model is this page's own)."""
    carried = st.session_state.get(_CARRIED)
    if carried is None or carried.url_path == url_path:
        return None
    kept = carried.kept()
    if not kept:
        return None
    if url_path in carried.opened_on and st.session_state.get("model") == carried.key:
        return f"{carried.name} comes from {carried.page_title()}, whole: its d, n, lengths and scaling."
    values = " and ".join(f"{key} = {shown}" for key, shown in kept.items())
    verb = "come" if len(kept) > 1 else "comes"
    return f"{values} {verb} from {carried.name} on {carried.page_title()}."
