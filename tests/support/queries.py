"""The sidebar's settings to and from a query string, as a copied URL carries them: the app reads
and writes its URL through explorer/ui/controls.py key by key; the tests check the same parsers
(``explorer.settings.PARSERS``) and writer (``query_value``) on whole Settings."""

from __future__ import annotations

from dataclasses import asdict

from explorer.settings import PARSERS, Settings, query_value


def settings_from_query(query: dict[str, list[str]], base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a parsed query string (key -> all its values), starting from ``base``.

    Keys that are absent keep ``base``'s value; every bad value is replaced and noted.
    """
    values = asdict(base or Settings())
    notices: list[str] = []
    for key, parse in PARSERS.items():
        if query.get(key):
            values[key], found = parse(query[key])
            notices += found
    return Settings(**values), notices


def settings_to_query(settings: Settings) -> dict[str, str]:
    """The URL form of the settings that differ from the defaults (a clean, short URL)."""
    default = asdict(Settings())
    return {key: query_value(key, value) for key, value in asdict(settings).items() if value != default[key]}
