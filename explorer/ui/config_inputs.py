"""The pair of inputs through which a page takes a visitor's config.json (Longer contexts, Your model, layer by
layer): a box to paste it into and a file uploader, side by side, both read by the page's callbacks."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from explorer import config_json


def draw(paste_key: str, upload_key: str, *, on_paste: Callable[[], None], on_upload: Callable[[], None],
         placeholder: str, reads: str) -> None:
    """Both inputs; ``reads`` says in the paste box's help which keys the page reads, as transformers does."""
    paste_col, upload_col = st.columns(2)
    paste_col.text_area(
        # No max_chars: the browser would drop a longer paste without a word; the page refuses it in one line.
        "Or paste a config.json", key=paste_key, height=120, on_change=on_paste, placeholder=placeholder,
        help=f"Read as transformers reads it: {reads}. Ctrl+Enter applies it.",
    )
    upload_col.file_uploader(
        "Or upload one", type=["json"], key=upload_key, on_change=on_upload,
        max_upload_size=config_json.CONFIG_MAX_MB,
        help=f"A JSON file of at most {config_json.CONFIG_MAX_MB} MB. Nothing is stored.",
    )
