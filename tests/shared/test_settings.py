"""explorer.settings: how a URL's query string becomes settings, without Streamlit.

Every bad value must come back inside the limits with a one-line notice that names the
key; good values must round-trip through settings_to_query; and no text at all, for any
key, may raise.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.queries import settings_from_query, settings_to_query

from explorer import settings as s
from explorer.settings import parse_int_list
from pe_core import CONVENTIONS, LAYOUTS

DEFAULT = s.Settings()

#: (key, raw values, value expected, words the notice must contain; None: no notice)
CASES = [
    ("d", ["256"], 256, None),
    ("d", [" 64 "], 64, None),
    ("d", ["abc"], 128, ("d", "not a whole number", "128")),
    ("d", ["nan"], 128, ("d", "128")),
    ("d", ["12.5"], 128, ("d", "not a whole number")),
    ("d", ["7"], 6, ("d", "even", "6")),
    ("d", ["1"], 2, ("d", "outside", "2")),
    ("d", ["0"], 2, ("d", "outside")),
    ("d", ["-64"], 2, ("d", "outside")),
    ("d", ["4097"], 2048, ("d", "outside", "2048")),
    ("d", ["9" * 500], 2048, ("d", "outside", "2048")),
    ("d", [""], 128, ("d", "empty", "128")),
    ("d", ["4", "8"], 8, ("d", "2 times", "last")),
    ("d", ["0x10"], 128, ("d",)),
    ("L", ["-5"], 1, ("L", "outside", "1")),
    ("L", [str(10**30)], 16384, ("L", "outside", "16384")),
    ("L", ["1e30"], 16384, ("L", "outside", "16384")),
    ("L", ["1e3"], 1000, None),
    ("L", ["x" * 10240], 100, ("L", "not a whole number", "100")),
    ("n", ["10000"], 10000.0, None),
    ("n", ["1e6"], 1e6, None),
    ("n", ["100"], 100.0, None),
    ("n", ["inf"], 10000.0, ("n", "not a finite number", "10000")),
    ("n", ["-inf"], 10000.0, ("n", "not a finite number")),
    ("n", ["NaN"], 10000.0, ("n", "not a finite number")),
    ("n", ["-3"], 2.0, ("n", "outside", "2")),
    ("n", ["1"], 2.0, ("n", "outside", "2")),
    ("n", ["1e300"], 1e8, ("n", "outside", "100000000")),
    ("n", ["9" * 10240], 1e8, ("n", "outside", "100000000")),
    ("n", ["11000"], 10000.0, ("n", "not on the base scale", "10000")),
    ("n", ["12345"], 15000.0, ("n", "not on the base scale", "15000")),
    ("n", ["1.4e9"], 1e8, ("n", "outside")),
    ("layout", ["concatenated"], "concatenated", None),
    ("layout", ["diagonal"], "interleaved", ("layout", "interleaved, concatenated")),
    ("layout", ["a" * 10240], "interleaved", ("layout",)),
    ("layout", [""], "interleaved", ("layout",)),
    ("convention", ["tensor2tensor"], "tensor2tensor", None),
    ("convention", ["bert"], "paper", ("convention", "paper, tensor2tensor")),
    ("convention", ["PAPER"], "paper", ("convention",)),
]


@pytest.mark.parametrize(("key", "raws", "expected", "words"), CASES,
                         ids=[f"{c[0]}={c[1][0][:12]!r}x{len(c[1])}" for c in CASES])
def test_each_value_is_read_or_clamped_with_a_notice(key, raws, expected, words) -> None:
    value, notices = s.PARSERS[key](raws)
    assert value == expected
    assert type(value) is type(getattr(DEFAULT, key))
    if words is None:
        assert notices == []
    else:
        assert len(notices) >= 1
        text = " ".join(notices)
        for word in words:
            assert word in text
        for notice in notices:
            assert "\n" not in notice and len(notice) <= 200, notice


def test_settings_from_query_keeps_absent_keys_and_notes_each_bad_one() -> None:
    base = s.Settings(d=64, n=100.0, L=7, layout="concatenated", convention="tensor2tensor")
    result, notices = settings_from_query({"d": ["abc"], "L": ["3"], "other": ["x"]}, base)
    assert result == s.Settings(d=128, n=100.0, L=3, layout="concatenated", convention="tensor2tensor")
    assert len(notices) == 1 and "d" in notices[0]


def test_settings_from_query_ignores_empty_lists_and_unknown_keys() -> None:
    assert settings_from_query({"d": [], "zzz": ["1"]}) == (DEFAULT, [])


def test_defaults_make_an_empty_query() -> None:
    assert settings_to_query(DEFAULT) == {}


def test_nearest_n_lands_on_the_seed_bases() -> None:
    for base in (100.0, 10000.0, 1e6, 2.0, 1e8):
        assert base in s.N_OPTIONS
        assert s.nearest_n(base) == base
    assert s.format_number(1e8) == "100000000" and s.format_number(1.5) == "1.5"


valid_settings = st.builds(
    s.Settings,
    d=st.integers(s.D_MIN // 2, s.D_MAX // 2).map(lambda half: 2 * half),
    n=st.sampled_from(s.N_OPTIONS),
    L=st.integers(s.L_MIN, s.L_MAX),
    layout=st.sampled_from(LAYOUTS),
    convention=st.sampled_from(CONVENTIONS),
)


@given(valid_settings)
def test_settings_to_query_round_trips(view: s.Settings) -> None:
    query = settings_to_query(view)
    assert set(query) <= set(asdict(view))
    parsed, notices = settings_from_query({key: [value] for key, value in query.items()})
    assert parsed == view
    assert notices == []


def assert_within_limits(view: s.Settings) -> None:
    assert isinstance(view.d, int) and s.D_MIN <= view.d <= s.D_MAX and view.d % 2 == 0
    assert isinstance(view.L, int) and s.L_MIN <= view.L <= s.L_MAX
    assert isinstance(view.n, float) and math.isfinite(view.n) and view.n in s.N_OPTIONS
    assert view.layout in LAYOUTS and view.convention in CONVENTIONS


number_like = st.one_of(
    st.text(max_size=80),
    st.text(alphabet="0123456789+-.eE infaINFA", max_size=40),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(0, 600).map(lambda k: "9" * k),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([*s.PARSERS, "preset", "zzz"]), st.lists(number_like, max_size=3)))
def test_any_text_for_any_key_never_raises_and_stays_in_limits(query: dict[str, list[str]]) -> None:
    view, notices = settings_from_query(query)
    assert_within_limits(view)
    assert all(isinstance(notice, str) and len(notice) <= 200 for notice in notices)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(s.PARSERS)), st.lists(st.text(), min_size=1, max_size=3))
def test_every_notice_is_one_line(key: str, raws: list[str]) -> None:
    _, notices = s.PARSERS[key](raws)
    for notice in notices:
        assert "\n" not in notice and "\r" not in notice, repr(notice)


#: Texts that st.warning (markdown) would render as a link, an image, formatting or an
#: icon if a notice echoed them as they are.
MARKDOWN_PAYLOADS = ["[x](//ev.il)", "![](//ev.il/a)", "**bold**", "`code`", ":red[x]", "$x^2$", "a\nb", "<b>x</b>"]


def outside_code(text: str) -> str:
    """A notice's Markdown without its code spans (where a value is quoted, and markup is text)."""
    return re.sub(r"(`+).*?\1", "", text)


@pytest.mark.parametrize("key", list(s.PARSERS))
def test_notices_quote_a_value_as_typed_and_render_none_of_it(key: str) -> None:
    """A value is quoted whole, in a code span (shown as typed: no link, markup, emoji or formula);
    outside code spans a notice holds no markup, and a newline is never echoed."""
    echoed = []
    for payload in MARKDOWN_PAYLOADS:
        _, notices = s.PARSERS[key]([payload])
        text = " ".join(notices)
        assert "\n" not in text and s.echo(payload) in text, text
        markers = ("[", "**", "`", "$", "<", ":red")
        echoed += [(payload, text) for marker in markers if marker in payload and marker in outside_code(text)]
    assert not echoed, f"notices echo markdown: {echoed}"


@pytest.mark.parametrize(("raw", "shown"), [
    ("../../etc", "`../../etc`"), ("`code`", "`` `code` ``"), ("a\nb", "`a\ufffdb`"), ("", "``"),
    ("x" * 30, "`" + "x" * 23 + "\u2026`"), ("<b>x</b>", "`<b>x</b>`"),
])
def test_echo_quotes_a_value_as_typed(raw: str, shown: str) -> None:
    assert s.echo(raw) == shown


# --------------------------------------------------------------------------------------
# The text boxes: lists of whole numbers
# --------------------------------------------------------------------------------------


def parse(raw, **limits):
    kwargs = {"default": "0,4,8,12", "low": 0, "high": 10**7, "max_count": 8} | limits
    return parse_int_list("wave_positions", raw, **kwargs)


def test_parse_int_list_keeps_clean_lists_silently():
    assert parse("0,4,8,12") == ("0,4,8,12", [])
    assert parse(" 1; 2  3 ") == ("1,2,3", [])


@pytest.mark.parametrize("raw", ["", "   ", "abc", ",,,", "x" * 300])
def test_parse_int_list_falls_back_to_the_default(raw):
    value, notices = parse(raw)
    assert value == "0,4,8,12" and len(notices) == 1


def test_parse_int_list_clamps_drops_and_caps_in_one_line():
    value, notices = parse("-3, 99999999999999999999999, 5, 5, 1.5, nan, [a](javascript:alert(1))")
    assert value == "0,10000000,5"
    assert len(notices) == 1
    for part in ("`1.5`", "`nan`", "moved 2", "dropped 1 repeat"):
        assert part in notices[0]
    assert "`[a](javascript:alert(1))`" in notices[0] and "](" not in outside_code(notices[0])  # quoted, inert
    value, notices = parse(",".join(map(str, range(20))))
    assert value == "0,1,2,3,4,5,6,7" and "first 8 of 20" in notices[0]
    clamped = ("127,2", ["wave_positions: moved 1 value(s) into 0..127."])
    assert parse("300,2", high=127, default="0,1") == clamped


def test_even_settings_guards_an_odd_d():
    same, notice = s.even_settings(s.Settings(d=64), "why")
    assert same == s.Settings(d=64) and notice is None
    fixed, notice = s.even_settings(s.Settings(d=7, L=9), "pairs")
    assert fixed == s.Settings(d=6, L=9) and notice == "d = 7 is odd: pairs; this page uses d = 6."
    assert s.even_settings(s.Settings(d=1), "pairs")[0].d == 2


# --- several choices in one key (explorer.ui.controls.multi_control) ---------------------

OPTIONS = ("sinusoidal", "rope", "alibi", "t5")


@pytest.mark.parametrize(("raw", "expected", "noticed"), [
    ("rope,alibi", ("rope", "alibi"), False),
    ("alibi,rope,rope", ("rope", "alibi"), False),  # the options' order, each once
    (" t5 , rope ", ("rope", "t5"), False),
    ("", (), False),  # what the app writes when every option is off
    ("rope,<b>x</b>", ("rope",), True),
    ("nothing,known", OPTIONS, True),  # no option at all: the default
    ("rope," * 300, OPTIONS, True),  # absurdly long
])
def test_parse_subset(raw: str, expected: tuple[str, ...], noticed: bool) -> None:
    value, notices = s.parse_subset("schemes", [raw], default=OPTIONS, options=OPTIONS)
    assert value == expected
    assert bool(notices) == noticed
    for notice in notices:
        assert "\n" not in notice and "<" not in outside_code(notice) and "schemes" in notice


def test_several_choices_are_written_as_a_comma_list() -> None:
    assert s.query_value("schemes", ["rope", "t5"]) == "rope,t5"
    assert s.query_value("schemes", []) == ""
    value, _ = s.parse_subset("schemes", [s.query_value("schemes", ["t5", "rope"])], default=(), options=OPTIONS)
    assert value == ("rope", "t5")


FACTORS = (1.0, 2.0, 8.0, 40.0, 128.0)


@pytest.mark.parametrize(("raw", "expected", "words"), [
    ("8", 8.0, None),
    ("8.0", 8.0, None),
    ("40", 40.0, None),
    ("7", 8.0, ("factor=`7`", "8")),
    ("30", 40.0, ("factor=`30`", "40")),
    ("1e30", 128.0, ("128",)),
    ("0.001", 1.0, ("1",)),
    ("-3", 8.0, ("not a positive number", "8")),
    ("0", 8.0, ("not a positive number",)),
    ("nan", 8.0, ("not a positive number",)),
    ("inf", 8.0, ("not a positive number",)),
    ("", 8.0, ("empty",)),
    ("x" * 10240, 8.0, ("not a positive number",)),
    ("[x](javascript:1)", 8.0, ("factor",)),
])
def test_parse_option_snaps_to_a_stop_with_a_notice(raw: str, expected: float, words) -> None:
    value, notices = s.parse_option("factor", [raw], default=8.0, options=FACTORS)
    assert value == expected and type(value) is float
    if words is None:
        assert notices == []
    else:
        assert len(notices) == 1 and "\n" not in notices[0] and len(notices[0]) <= 200
        assert all(word in notices[0] for word in words), notices
        assert "[" not in outside_code(notices[0]), "no markdown echoed"


def test_floats_are_written_in_the_url_as_a_person_writes_them() -> None:
    assert s.query_value("factor", 8.0) == "8"
    assert s.query_value("beta_slow", 0.25) == "0.25"
    assert s.query_value("seed", 7) == "7"


@pytest.mark.parametrize(("raws", "value", "words"), [
    (["8"], 8.0, None), (["1.5"], 1.5, None), ([" 32 "], 32.0, None), (["1e3"], 1000.0, None),
    (["abc"], 4.0, ("factor", "not a finite number", "4")), (["nan"], 4.0, ("factor",)), (["inf"], 4.0, ("factor",)),
    ([""], 4.0, ("factor", "empty")), (["0.5"], 1.0, ("factor", "outside 1..1024", "using 1")),
    (["1e300"], 1024.0, ("factor", "outside", "1024")), (["9" * 500], 1024.0, ("factor", "outside")),
    (["2", "3"], 3.0, ("factor", "2 times")), (["x" * 10240], 4.0, ("factor",)),
])
def test_parse_float(raws: list[str], value: float, words: tuple[str, ...] | None) -> None:
    got, notices = s.parse_float("factor", raws, default=4.0, low=1.0, high=1024.0)
    assert got == value and isinstance(got, float)
    if words is None:
        assert not notices
    else:
        assert notices and all(word in " ".join(notices) for word in words), notices
        assert all("\n" not in notice and len(notice) < 200 for notice in notices)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_number_round_trips(value: float) -> None:
    text = s.format_number(value)
    assert float(text) == value and (text.lstrip("-").isdigit() or not float(value).is_integer() or abs(value) >= 1e15)
    assert s.query_value("factor", value) == text
