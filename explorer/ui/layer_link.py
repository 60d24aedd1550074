"""The note and link Rotary and Longer contexts show under a config whose layers run more than one kind of
position (explorer.layer_types)."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from explorer.layer_types import CARRIED_CONFIG, layers_link
from explorer.model_configs import LAYER_PRESETS, load_config
from explorer.ui import navigation


def show(note: str | None, *, preset: str | None = None, config: Mapping | None = None) -> None:
    """Name the layer types (``note``) and link to Your model, layer by layer: a preset of its list by its key;
    any other (a pasted ``config``, a preset of the rotary pages alone) carried in the session, which that page
    then opens."""
    if note is None:
        return
    if preset not in LAYER_PRESETS:
        st.session_state[CARRIED_CONFIG] = dict(config if preset is None else load_config(preset))
    st.info(note, icon=":material/stacks:")
    st.page_link(navigation.page("layers"), label="See them layer by layer", icon=":material/stacks:",
                 query_params=layers_link(preset))
