"""Run a page's "reproduce this" snippet as a student would paste it: in a namespace of its own."""

from __future__ import annotations


def run_snippet(code: str) -> dict[str, object]:
    """Execute a snippet in a fresh namespace and return it (the tests compare its ``result`` and
    ``numbers`` with the page's)."""
    namespace: dict[str, object] = {}
    exec(compile(code, "<reproduce-this>", "exec"), namespace)
    return namespace
