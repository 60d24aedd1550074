"""The shared settings, their limits, and how a URL query string becomes settings.

Pure Python: no Streamlit here, so that every rule about bad URLs is unit-tested. A URL
value is never trusted: each parser returns a value inside the limits and, when it had
to change what the URL said, a one-line notice saying what it did.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from pe_core import CONVENTIONS, LAYOUTS

D_MIN, D_MAX, D_DEFAULT = 2, 2048, 128
L_MIN, L_MAX, L_DEFAULT = 1, 16384, 100
N_MIN, N_MAX, N_DEFAULT = 2.0, 1e8, 10000.0
#: The base on a log scale: 1, 1.5, 2, 3, 5, 7 per decade from 2 to 10^8, so that the
#: seeds' 100, 10000 and 1000000 are each one stop of the slider.
N_OPTIONS: tuple[float, ...] = tuple(
    sorted({float(m * 10**e) for e in range(9) for m in (1, 1.5, 2, 3, 5, 7) if N_MIN <= m * 10**e <= N_MAX})
)
#: Largest matrix (cells) a page builds in full, e.g. for a download; larger views are
#: drawn from closed-form block averages and offered as code instead. 500,000 cells (4 MB):
#: Similarity and Relative positions hold two or three such arrays during a run, and with 2M
#: cells (16 MB each) their runs made the server's memory jump 30-45 MB at a time: 50 students
#: with settings of their own peaked 101-112 MB above the start, 84-86 MB with 500,000
#: (benchmarks/JOURNAL.md, "The same measurements on a slower machine (2026-11-28)").
FULL_MATRIX_CELLS = 500_000
#: Longest URL value read at all; longer ones are reset without being parsed.
MAX_RAW_LENGTH = 64

_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Settings:
    """The view every page draws: embedding size d, base n, length L, layout, convention."""

    d: int = D_DEFAULT
    n: float = N_DEFAULT
    L: int = L_DEFAULT
    layout: str = "interleaved"
    convention: str = "paper"


def last_value(key: str, raws: list[str], notices: list[str]) -> str:
    """The URL key's last value, stripped (a notice in ``notices`` when it was given more than once)."""
    if len(raws) > 1:
        notices.append(f"URL key '{key}' was given {len(raws)} times; using the last value.")
    return raws[-1].strip()


#: How much of a URL value a notice repeats.
_ECHO_LENGTH = 24


def echo(raw: str) -> str:
    """A value from a URL as a notice quotes it: as typed, in a Markdown code span, so that
    nothing in it becomes a link, markup, an emoji or a formula (notices are rendered as
    Markdown); control characters as "�", and at most ``_ECHO_LENGTH`` characters."""
    text = raw if len(raw) <= _ECHO_LENGTH else raw[: _ECHO_LENGTH - 1] + "…"
    text = "".join("�" if unicodedata.category(char)[0] == "C" else char for char in text)
    # A code span is fenced by more backticks than any run inside it, and padded where it begins
    # or ends with one (CommonMark).
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def read_number(raw: str) -> float | None:
    """A finite number from text, or None (no eval, no locale, no absurd lengths)."""
    if _INTEGER.fullmatch(raw):
        # A huge whole number is clamped like any other out-of-range one.
        return float(int(raw)) if len(raw) <= 18 else math.copysign(1e18, -1.0 if raw[0] == "-" else 1.0)
    if not raw or len(raw) > MAX_RAW_LENGTH:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_int(
    key: str, raws: list[str], *, default: int, low: int, high: int, even: bool = False
) -> tuple[int, list[str]]:
    """A whole number in [low, high] (even if asked) from URL values, with notices."""
    notices: list[str] = []
    raw = last_value(key, raws, notices)
    value = read_number(raw)
    if value is None or not float(value).is_integer():
        reason = " is empty" if not raw else f"={echo(raw)} is not a whole number"
        notices.append(f"URL: {key}{reason}; using {default}.")
        return default, notices
    number = int(value)
    if number < low or number > high:
        clamped = min(max(number, low), high)
        notices.append(f"URL: {key}={echo(raw)} is outside {low}..{high}; using {clamped}.")
        number = clamped
    if even and number % 2:
        fixed = number - 1 if number - 1 >= low else number + 1
        notices.append(f"URL: {key}={number} must be even (sine/cosine pairs); using {fixed}.")
        number = fixed
    return number, notices


#: A notice lists the choices of a key up to this many characters (twenty model presets are 380).
MAX_LISTED_CHARS = 200


def parse_choice(key: str, raws: list[str], *, default: str, options: tuple[str, ...]) -> tuple[str, list[str]]:
    """One of ``options`` from URL values, with notices."""
    notices: list[str] = []
    raw = last_value(key, raws, notices)
    if raw in options:
        return raw, notices
    if not raw:
        notices.append(f"URL: {key} is empty; using {default}.")
        return default, notices
    listed = ", ".join(options)
    if len(listed) > MAX_LISTED_CHARS:  # a notice stays one short line: the first few, and how many there are
        listed = f"the {len(options)} choices ({', '.join(options[:3])}, ...)"
    notices.append(f"URL: {key}={echo(raw)} is not one of {listed}; using {default}.")
    return default, notices


def format_number(value: float) -> str:
    """A number as a URL or a notice writes it: whole numbers without a decimal point, others
    with the digits that round-trip (1.5, 0.1, 1234567.25)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def parse_float(key: str, raws: list[str], *, default: float, low: float, high: float) -> tuple[float, list[str]]:
    """A finite number in [low, high] from URL values, with notices (a page's own number keys)."""
    notices: list[str] = []
    raw = last_value(key, raws, notices)
    value = read_number(raw)
    if value is None:
        reason = " is empty" if not raw else f"={echo(raw)} is not a finite number"
        notices.append(f"URL: {key}{reason}; using {format_number(default)}.")
        return default, notices
    if not low <= value <= high:
        clamped = min(max(value, low), high)
        notices.append(
            f"URL: {key}={echo(raw)} is outside {format_number(low)}..{format_number(high)}; "
            f"using {format_number(clamped)}."
        )
        value = clamped
    return float(value), notices


def parse_subset(
    key: str, raws: list[str], *, default: tuple[str, ...], options: tuple[str, ...]
) -> tuple[tuple[str, ...], list[str]]:
    """Several of ``options`` from a URL value written "a,b,c", in the options' order, with notices.

    An empty value is an empty choice (the app writes one when every option is turned off);
    names that are not options are dropped and named (safe characters only); a value with no
    option in it, or an absurdly long one, gives ``default``.
    """
    notices: list[str] = []
    raw = last_value(key, raws, notices)
    if not raw:
        return (), notices
    if len(raw) > MAX_RAW_LENGTH * 4:
        notices.append(f"URL: {key} is too long; using {','.join(default)}.")
        return default, notices
    names = [part.strip() for part in raw.split(",") if part.strip()]
    unknown = [name for name in names if name not in options]
    chosen = tuple(option for option in options if option in names)
    if unknown:
        shown = ", ".join(echo(name) for name in unknown[:3]) + (" ..." if len(unknown) > 3 else "")
        fallback = "" if chosen else f"; using {','.join(default)}"
        notices.append(f"URL: {key} has {shown}, not among {', '.join(options)}{fallback}.")
    return (chosen if chosen or not unknown else default), notices


def nearest_n(value: float) -> float:
    """The stop of the log-scale base slider nearest to ``value`` (in log terms)."""
    logs = np.log10(N_OPTIONS)
    return N_OPTIONS[int(np.argmin(np.abs(logs - math.log10(value))))]


def parse_n(raws: list[str]) -> tuple[float, list[str]]:
    """The base n from URL values: clamped to 2..1e8 and set on the slider's nearest stop."""
    notices: list[str] = []
    raw = last_value("n", raws, notices)
    value = read_number(raw)
    if value is None:
        reason = " is empty" if not raw else f"={echo(raw)} is not a finite number"
        notices.append(f"URL: n{reason}; using {format_number(N_DEFAULT)}.")
        return N_DEFAULT, notices
    clamped = min(max(value, N_MIN), N_MAX)
    if clamped != value:
        notices.append(f"URL: n={echo(raw)} is outside 2..1e8; using {format_number(nearest_n(clamped))}.")
    elif nearest_n(clamped) != value:
        notices.append(f"URL: n={echo(raw)} is not on the base scale; using {format_number(nearest_n(clamped))}.")
    return nearest_n(clamped), notices


def parse_option(key: str, raws: list[str], *, default: float, options: tuple[float, ...]) -> tuple[float, list[str]]:
    """One of a slider's numeric ``options`` (positive, ascending) from URL values: the nearest
    one on a log scale, with a notice when the URL's value was not one of them."""
    notices: list[str] = []
    raw = last_value(key, raws, notices)
    value = read_number(raw)
    if value is None or value <= 0:
        reason = " is empty" if not raw else f"={echo(raw)} is not a positive number"
        notices.append(f"URL: {key}{reason}; using {format_number(default)}.")
        return default, notices
    logs = np.log10(options)
    nearest = options[int(np.argmin(np.abs(logs - math.log10(min(max(value, options[0]), options[-1])))))]
    if nearest != value:
        notices.append(
            f"URL: {key}={echo(raw)} is not one of {format_number(options[0])}..{format_number(options[-1])} on the "
            f"slider's scale; using {format_number(nearest)}."
        )
    return nearest, notices


#: How each shared URL key is read: raw values -> (value, notices).
PARSERS: dict[str, Callable[[list[str]], tuple[object, list[str]]]] = {
    "d": lambda raws: parse_int("d", raws, default=D_DEFAULT, low=D_MIN, high=D_MAX, even=True),
    "n": parse_n,
    "L": lambda raws: parse_int("L", raws, default=L_DEFAULT, low=L_MIN, high=L_MAX),
    "layout": lambda raws: parse_choice("layout", raws, default="interleaved", options=LAYOUTS),
    "convention": lambda raws: parse_choice("convention", raws, default="paper", options=CONVENTIONS),
}


def query_value(key: str, value: object) -> str:
    """How a setting is written in the URL (several choices as "a,b,c"; a float as its shortest
    exact form: 8, 1.5, 0.1)."""
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    if key == "n":
        return format_number(value)
    return format_number(value) if isinstance(value, float) else str(value)


#: Characters of a rejected list entry that a notice may echo back (no markdown, no markup).
_LIST_SEPARATORS = re.compile(r"[,;\s]+")
_WHOLE_NUMBER = re.compile(r"[+-]?\d+")


def parse_int_list(
    key: str, raw: str, *, default: str, low: int, high: int, max_count: int
) -> tuple[str, list[str]]:
    """Whole numbers typed as "0, 4, 8" (or in a URL) -> canonical text "0,4,8", with a notice.

    Entries that are not whole numbers are ignored, out-of-range ones clamped into
    [low, high], repeats dropped, and at most ``max_count`` kept; all of that is said in
    one line. Nothing usable (or an absurdly long text) gives ``default``. Rejected entries
    are echoed back as typed, in code spans (``echo``), so no typed markdown reaches the page.
    """
    raw = str(raw).strip()
    if not raw or len(raw) > MAX_RAW_LENGTH * 4:
        reason = "is empty" if not raw else "is too long"
        return default, [f"{key} {reason}; using {default}."]
    kept: list[int] = []
    junk: list[str] = []
    clamped = repeats = 0
    for token in filter(None, _LIST_SEPARATORS.split(raw)):
        if not _WHOLE_NUMBER.fullmatch(token):
            junk.append(echo(token))
            continue
        number = int(token)  # at most 256 digits: the text's length is capped above
        inside = min(max(number, low), high)
        clamped += inside != number
        if inside in kept:
            repeats += 1
        else:
            kept.append(inside)
    problems = []
    if junk:
        shown = ", ".join(junk[:3]) + (" ..." if len(junk) > 3 else "")
        problems.append(f"ignored {shown} (not whole numbers)")
    if clamped:
        problems.append(f"moved {clamped} value(s) into {low}..{high:,}")
    if repeats:
        problems.append(f"dropped {repeats} repeat(s)")
    if len(kept) > max_count:
        problems.append(f"kept the first {max_count} of {len(kept)}")
        kept = kept[:max_count]
    if not kept:
        return default, [f"{key}: no whole number in it; using {default}."]
    notices = [f"{key}: " + "; ".join(problems) + "."] if problems else []
    return ",".join(map(str, kept)), notices


def even_settings(settings: Settings, why: str) -> tuple[Settings, str | None]:
    """These pages need sine/cosine pairs: an odd d (impossible from the sidebar, which steps
    by 2, but guarded anyway) becomes the even d below it (2 for d = 1), with a one-line notice."""
    if settings.d % 2 == 0:
        return settings, None
    even = settings.d - 1 if settings.d > 1 else 2
    return replace(settings, d=even), f"d = {settings.d} is odd: {why}; this page uses d = {even}."
