"""A visitor's config.json, pasted or uploaded: read at the edge (``read_config``: size, encoding, JSON, an
object) and quoted back in one line made safe for Markdown (``one_line``). Longer contexts and Your model, layer
by layer read configs alike through it."""

from __future__ import annotations

import json
import re

#: A pasted or uploaded config.json, at most (Phi-3 mini 128k's, with its factor lists, is 3.6 KB): the
#: uploader's limit (in MB, as Streamlit counts them) and the text box's alike.
CONFIG_MAX_MB = 1
CONFIG_MAX_BYTES = CONFIG_MAX_MB * 1024 * 1024


def config_size(data: str | bytes) -> int:
    """The size in bytes of a pasted or uploaded config.json."""
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))


def read_config(data: str | bytes) -> dict:
    """The dict of a pasted or uploaded config.json; ValueError with one line for anything else
    (too large, not UTF-8, not JSON, nested too deeply, not an object)."""
    size = config_size(data)
    if size > CONFIG_MAX_BYTES:
        raise ValueError(
            f"That is {size / 1024:,.0f} KB; this page reads a config.json of at most {CONFIG_MAX_MB} MB "
            "(a model's is a few KB)."
        )
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError("The file is not UTF-8 text; a config.json is JSON text.") from None
    else:
        text = data
    if not text.strip():
        raise ValueError("The config is empty: paste the text of a config.json, or upload the file.")
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"This is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno}).") from None
    except RecursionError:
        raise ValueError("This JSON nests too deeply to be a config.json.") from None
    except ValueError:  # a whole number of more than 4300 digits
        raise ValueError("This JSON holds a number too long to read.") from None
    if not isinstance(config, dict):
        raise ValueError(f"A config.json is a JSON object ({{...}}); this is a JSON {type(config).__name__}.")
    return config



#: Characters a message from a config may not carry into Streamlit's Markdown as they are.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def one_line(message: str, limit: int = 300) -> str:
    """A message about a visitor's config for st.error: one line, at most ``limit`` characters,
    every Markdown character escaped (the message quotes the config's values)."""
    flat = " ".join(str(message).split())
    if len(flat) > limit:
        flat = flat[: limit - 3] + "..."
    return _MARKDOWN.sub(r"\\\1", flat)
