"""The pair of inputs through which a page takes a visitor's config.json (Longer contexts, Your model, layer by
layer, M-RoPE): a box to paste it into and a file uploader, side by side, each handing what it holds to the
page's reading of a config."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from explorer import config_json


def draw(paste_key: str, upload_key: str, *, apply: Callable[[str | bytes, str], None], placeholder: str,
         reads: str) -> None:
    """Both inputs, each handing what it holds to ``apply(data, source)`` (the page's reading of a config, which
    says what it made of it) when it changes; ``reads`` says in the paste box's help which keys the page reads."""

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

    paste_col, upload_col = st.columns(2)
    paste_col.text_area(
        # No max_chars: the browser would drop a longer paste without a word; the page refuses it in one line.
        "Or paste a config.json", key=paste_key, height=120, on_change=pasted, placeholder=placeholder,
        help=f"Read as transformers reads it: {reads}. Ctrl+Enter applies it.",
    )
    upload_col.file_uploader(
        "Or upload one", type=["json"], key=upload_key, on_change=uploaded,
        max_upload_size=config_json.CONFIG_MAX_MB,
        help=f"A JSON file of at most {config_json.CONFIG_MAX_MB} MB. Nothing is stored.",
    )
