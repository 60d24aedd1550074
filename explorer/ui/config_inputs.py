"""How a page takes a visitor's config.json (Longer contexts, Your model, layer by layer, M-RoPE): a box to paste
it into and a file uploader, side by side in an expander the visitor opens, each handing what it holds to the
page's reading of a config; the line that says what the reading made of it; and, for the pages whose model select
offers the visitor's own config beside the presets, that select."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from explorer import config_json
from explorer.settings import parse_choice
from explorer.ui import blocks, controls


def draw(paste_key: str, upload_key: str, *, key: str, apply: Callable[[str | bytes, str], None], placeholder: str,
         reads: str) -> None:
    """Both inputs, in an expander (under ``key``) drawn on request (blocks.on_request), each handing what it holds
    to ``apply(data, source)`` (the page's reading of a config, which says what it made of it) when it changes;
    ``reads`` says in the paste box's help which keys the page reads."""
    inputs = blocks.on_request("Your own config.json: paste or upload it", key=key, icon=":material/data_object:")
    if inputs is None:
        return

    def pasted() -> None:
        text = st.session_state.get(paste_key) or ""
        if text.strip():
            apply(text, "your config")
        if config_json.config_size(text) > config_json.CONFIG_MAX_BYTES:
            st.session_state[paste_key] = ""  # refused (apply says why): not sent back with every rerun

    def uploaded() -> None:
        upload = st.session_state.get(upload_key)
        if upload is not None:
            apply(upload.getvalue(), upload.name)

    with inputs:
        paste_and_upload = blocks.row()
    paste_and_upload.text_area(
        # No max_chars: the browser would drop a longer paste without a word; the page refuses it in one line.
        "Paste a config.json", key=paste_key, height=120, on_change=pasted, placeholder=placeholder,
        help=f"Read as transformers reads it: {reads}. Ctrl+Enter applies it.",
    )
    paste_and_upload.file_uploader(
        "Or upload one", type=["json"], key=upload_key, on_change=uploaded,
        max_upload_size=config_json.CONFIG_MAX_MB,
        help=f"A JSON file of at most {config_json.CONFIG_MAX_MB} MB. Nothing is stored.",
    )


def show_message(message_key: str) -> str | None:
    """What the page said of the last config it read, held in session state under ``message_key`` as (kind
    "error" or "success", one line, notices): the line, and each notice beneath it. Returns the kind (None: no
    config read yet)."""
    message = st.session_state.get(message_key)
    if not message:
        return None
    kind, text, notices = message
    (st.error if kind == "error" else st.success)(text, icon=":material/block:" if kind == "error" else None)
    for notice in notices:
        st.caption(notice)
    return kind


def choose_model(key: str, options: tuple[str, ...], *, default: str, custom: str, own_config: str,
                 format_func: Callable[[str], str], arriving: Callable[[], None] | None = None) -> str:
    """The model select, kept in the URL under ``key``: the presets and ``custom``, the visitor's own config (kept
    in session state under ``own_config``). ``arriving`` runs first when the URL asks for ``custom`` (a config
    another page carried here); a link or a Back to ``custom`` in a session with no config of its own shows
    ``default``, and says so."""
    model = controls.seed_value(key, default, lambda raws: parse_choice(key, raws, default=default, options=options))
    if model == custom and arriving is not None:
        arriving()
    if model == custom and own_config not in st.session_state:
        st.session_state[key] = model = default
        st.caption("No config of yours in this session yet: showing the default model. Paste or upload one under "
                   "'Your own config.json' below.")
    st.selectbox("Model preset (its public config.json)", options, key=key, format_func=format_func)
    return model
