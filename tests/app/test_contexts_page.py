"""The Longer contexts page through streamlit.testing: its presets, a config.json pasted or
uploaded (good and hostile), its base beside the sidebar's n, hostile URLs for every one of its
keys, and the largest settings. (tests/app/test_app.py, test_fuzz.py and test_pages.py hold it
to what every page does.)"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from support.app_runs import (
    MAX_CHART_BYTES,
    MAX_PAGE_BYTES,
    PAGE_BY_KEY,
    assert_page_ran,
    element_bytes,
    open_on_request,
    open_page,
)
from support.snippets import run_snippet
from test_pages import assert_prints_what_the_page_shows

from explorer.model_configs import MODEL_CONFIGS, load_config
from explorer.settings import N_OPTIONS
from explorer.topics import contexts
from explorer.topics.contexts import DEFAULT_VIEW
from explorer.ui.controls import OFFER_DOWNLOADS

CONTEXTS = PAGE_BY_KEY["contexts"]
TEN_KB = 10 * 1024
PASTE, UPLOAD = "contexts_config_text", "contexts_config_file"
#: The expander that holds both (config_inputs.draw, drawn on request).
INPUTS = "contexts_config"


def page_view(at) -> dict[str, object]:
    """What the page's controls hold, by URL key (the sidebar's d and n too)."""
    keys = ("d", "n", "base", "model", *contexts.PAGE_KEYS)
    return {key: at.session_state[key] for key in keys if key in at.session_state}


def expected_values(view: contexts.ContextView) -> dict[str, object]:
    return contexts.view_values(view)


def url_notices(at) -> list[str]:
    return [w.value for w in at.warning if w.value.startswith("URL")]


def metric(at, label: str) -> str:
    (value,) = [m.value for m in at.metric if m.label == label]
    return value


# ------------------------------------------------------------------------- defaults and budget


def test_defaults_show_llama2_with_yarn_and_say_which_base_is_used() -> None:
    at = open_page(CONTEXTS)
    assert not at.warning and at.query_params == {}
    plain, yarn = contexts.coverage(DEFAULT_VIEW, "none"), contexts.coverage(DEFAULT_VIEW)
    assert metric(at, "plain RoPE") == f"{int(plain.unseen.sum())} of 64"
    assert metric(at, "YaRN ×4") == f"{int(yarn.unseen.sum())} of 64"
    assert float(metric(at, "attention factor a")) == pytest.approx(0.1 * np.log(4) + 1, rel=1e-5)
    said = " ".join(m.value for m in at.markdown)
    assert "**Base b = 10000**: the sidebar's n" in said and "**d = 128**" in said


def test_the_counts_say_the_length_they_are_for_which_play_does_not_move() -> None:
    """Play sweeps a length T in its chart while the counts above it stay those of the target length
    set on the page: the line above the counts names that length and says Play leaves them, and Play's
    slider is not named as the target."""
    at = open_page(CONTEXTS, {"target": "8192"})
    (heading,) = [m.value for m in at.markdown if m.value.startswith("Pairs that meet angles unseen")]
    assert "L = 8,192" in heading and "Play's T below leaves these as they are" in heading, heading
    (play,) = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")
               if json.loads(chart.proto.spec).get("frames")]
    slider_name = play["layout"]["sliders"][0]["currentvalue"]["prefix"]
    assert "target" not in slider_name.lower(), slider_name


@pytest.mark.parametrize("query", [
    {"target": str(contexts.LENGTH_MAX), "method": "dynamic", "trained": "1"},
    {"target": str(contexts.LENGTH_MAX), "method": "yarn", "factor": "1024", "trained": str(contexts.LENGTH_MAX)},
    {"target": "1", "method": "llama3", "trained": str(contexts.LENGTH_MAX), "factor": "1"},
])
@pytest.mark.parametrize("n", ["2", "100000000"])
def test_largest_settings_stay_in_budget(query: dict[str, str], n: str) -> None:
    at = open_page(CONTEXTS, {"d": "2048", "L": "16384", "n": n, "code": "true", **query})
    assert not url_notices(at)
    sizes = [len(chart.proto.spec.encode()) for chart in at.get("plotly_chart")]
    assert len(sizes) == 4 and max(sizes) <= MAX_CHART_BYTES, sizes
    assert element_bytes(at) <= MAX_PAGE_BYTES


# ----------------------------------------------------------------------------------- presets


@pytest.mark.parametrize("key", [model.key for model in MODEL_CONFIGS])
def test_a_preset_url_opens_that_models_view(key: str) -> None:
    at = open_page(CONTEXTS, {"model": key})
    view = contexts.preset_view(key)
    assert page_view(at) == {**expected_values(view), "model": key}
    assert not url_notices(at)
    # The URL holds the keys the preset set (and no blob: LongRoPE's lists stay out of it).
    assert at.query_params.get("model") == key
    assert all(len(value) <= 64 for value in at.query_params.values())
    snippet = run_snippet(at.get("code")[0].value) if at.get("code") else None
    assert snippet is None  # the code is shown on request only


@pytest.mark.parametrize("query", [
    {"model": "llama-3.2-1b"}, {"model": "phi-3-mini-128k-instruct"}, {"model": "deepseek-v3"},
    {"method": "dynamic", "max_positions": "8192", "target": "65536"}, {"method": "none", "d": "2"},
    {"method": "linear", "factor": "1.5", "beta_fast": "3.25", "beta_slow": "3", "truncate": "false"},
])
def test_the_numbers_shown_are_the_snippets(query: dict[str, str]) -> None:
    at = open_page(CONTEXTS, {"code": "true", **query})
    assert_prints_what_the_page_shows(at)


def test_a_preset_url_keeps_what_the_url_says() -> None:
    at = open_page(CONTEXTS, {"model": "llama-3.1-8b", "factor": "16", "d": "64"})
    assert (at.session_state["factor"], at.session_state["d"], at.session_state["method"]) == (16.0, 64, "llama3")
    assert at.session_state["n"] == 500000.0


def test_choosing_a_preset_sets_the_sidebar_and_the_page() -> None:
    at = open_page(CONTEXTS, {"preset": "seed001-notebook"})
    at.selectbox(key="model").set_value("gpt-oss-20b").run()
    assert_page_ran(at, CONTEXTS)
    assert page_view(at) == {**expected_values(contexts.preset_view("gpt-oss-20b")), "model": "gpt-oss-20b"}
    assert at.sidebar.get_by_key("preset").value == "custom"
    assert at.query_params.get("truncate") == "false" and at.query_params.get("n") == "150000"
    assert metric(at, "YaRN ×32")


def test_the_preset_snippet_gives_the_page_numbers() -> None:
    at = open_page(CONTEXTS, {"model": "phi-3-mini-128k-instruct", "code": "true"})
    at.sidebar.toggle(key=OFFER_DOWNLOADS).set_value(True).run()
    view = contexts.preset_view("phi-3-mini-128k-instruct")
    numpy_code = at.get("code")[0].value
    assert numpy_code.strip() == contexts.contexts_code(view).strip()
    result = run_snippet(numpy_code)["result"]
    np.testing.assert_allclose(result["contexts_pairs"], contexts.pairs_table(view).to_numpy(dtype=float), rtol=1e-12)
    keys = {button.key.rsplit("_", 1)[0] for button in at.get("download_button")}
    assert set(result) == keys


# ------------------------------------------------------------------------------ config.json


def test_a_pasted_config_sets_the_keys_and_never_puts_itself_in_the_url() -> None:
    at = open_page(CONTEXTS, {"model": "deepseek-v3"})
    open_on_request(at, INPUTS)
    text = json.dumps(load_config("llama-3.2-1b"))
    at.text_area(key=PASTE).input(text).run()
    assert_page_ran(at, CONTEXTS)
    assert page_view(at) == {**expected_values(contexts.preset_view("llama-3.2-1b")), "model": "custom"}
    assert [s.value for s in at.success] and not at.error
    assert all(len(value) <= 64 for value in at.query_params.values()), "a blob went into the URL"
    assert "rope_scaling" not in json.dumps(dict(at.query_params))
    assert any("#166" in w.value for w in at.warning)


def test_an_uploaded_config_sets_the_keys() -> None:
    at = open_page(CONTEXTS)
    open_on_request(at, INPUTS)
    data = json.dumps(load_config("qwen2.5-7b-instruct-yarn")).encode()
    at.get("file_uploader")[0].set_value(("config.json", data, "application/json"))
    at.run()
    assert_page_ran(at, CONTEXTS)
    assert page_view(at) == {**expected_values(contexts.preset_view("qwen2.5-7b-instruct-yarn")), "model": "custom"}
    assert any("#38224" in w.value for w in at.warning)


def test_a_pasted_longrope_config_keeps_its_lists_in_the_session_only() -> None:
    at = open_page(CONTEXTS)
    open_on_request(at, INPUTS)
    at.text_area(key=PASTE).input(json.dumps(load_config("phi-3-mini-128k-instruct"))).run()
    assert metric(at, "LongRoPE ×32")
    assert not [w.value for w in at.warning if "short_factor and long_factor" in w.value]
    # The same URL in a fresh session has no lists: it says so and shows plain RoPE.
    fresh = open_page(CONTEXTS, dict(at.query_params))
    assert [w.value for w in fresh.warning if "short_factor and long_factor" in w.value]
    assert metric(fresh, "method: none")


def test_a_base_off_the_sliders_scale_is_used_exactly_until_n_moves() -> None:
    at = open_page(CONTEXTS)
    open_on_request(at, INPUTS)
    config = {"rope_theta": 123456.7, "head_dim": 80, "max_position_embeddings": 8192}
    at.get("file_uploader")[0].set_value(("mine.json", json.dumps(config).encode(), "application/json"))
    at.run()
    assert (at.query_params.get("base"), at.query_params.get("n")) == ("123456.7", "150000")
    said = " ".join(m.value for m in at.markdown)
    assert "**Base b = 123456.7**, exactly" in said and "nearest stop, 150000" in said
    # The URL reopens the same view, with the same one base.
    fresh = open_page(CONTEXTS, dict(at.query_params))
    assert "**Base b = 123456.7**, exactly" in " ".join(m.value for m in fresh.markdown)
    at.sidebar.select_slider(key="n").set_value(1e6).run()
    assert "base" not in at.query_params and at.query_params.get("n") == "1000000"
    assert "**Base b = 1000000**: the sidebar's n" in " ".join(m.value for m in at.markdown)


#: Qwen2-VL-7B-Instruct's config.json, its language model's and RoPE keys (transformers 4's spelling: the
#: rope_type "mrope" that the page refused), and Qwen3-VL-8B-Instruct's text_config in transformers 5's.
QWEN2_VL = {"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
            "max_position_embeddings": 32768, "rope_theta": 1000000.0, "image_token_id": 151655,
            "vision_config": {"spatial_merge_size": 2, "temporal_patch_size": 2},
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
QWEN3_VL = {"model_type": "qwen3_vl", "text_config": {
    "model_type": "qwen3_vl_text", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32,
    "max_position_embeddings": 262144,
    "rope_parameters": {"rope_type": "default", "rope_theta": 5000000, "mrope_section": [24, 20, 20],
                        "mrope_interleaved": True}}}


@pytest.mark.parametrize(("config", "base", "layout"), [(QWEN2_VL, 1e6, "blocked"), (QWEN3_VL, 5e6, "interleaved")],
                         ids=["qwen2-vl", "qwen3-vl"])
def test_a_pasted_mrope_config_is_read_for_its_text_positions_and_says_so(config: dict, base: float,
                                                                         layout: str) -> None:
    """A vision-language model's config (M-RoPE) was refused ("rope_type 'mrope' is not one this explorer
    computes"); its text tokens' RoPE is plain RoPE, which the page shows, saying what the sections are for."""
    at = open_page(CONTEXTS, {"model": "llama-3.1-8b"})
    open_on_request(at, INPUTS)
    at.text_area(key=PASTE).input(json.dumps(config)).run()
    assert_page_ran(at, CONTEXTS)
    assert not at.error and [s.value[:5] for s in at.success] == ["Read "]
    assert (at.session_state["d"], at.session_state["method"], at.session_state["model"]) == (128, "none", "custom")
    assert at.session_state["n"] == base and at.session_state["base"] == 0.0  # both bases are on the n scale
    notes = [c.value.replace("\\", "") for c in at.caption if "M\\-RoPE" in c.value]  # one_line escapes Markdown
    assert len(notes) == 1 and f"M-RoPE ({layout}" in notes[0], notes
    assert "plain RoPE" in notes[0] and "M-RoPE splits the pairs into three sections for images and video" in notes[0]


@pytest.mark.parametrize(("text", "words"), [
    ('{"n_embd": 768, "n_head": 12}', "no RoPE"),
    ('{"rope_theta": 1e4, "head_dim": 64,', "not valid JSON"),
    ('{"rope_theta": 1e4, "head_dim": 64, "rope_scaling": {"type": "linear", "factor": -2}}', "factor"),
    ('{"rope_theta": 1e4, "head_dim": 64, "rope_scaling": {"type": "linear", "factor": NaN}}', "factor"),
    ('{"rope_theta": "[x](javascript:alert(1))", "head_dim": 64}', "rope"),
    ('{"rope_theta": 5e5, "head_dim": 128, "max_position_embeddings": 131072, "rope_scaling": {"rope_type": '
     '"llama3", "factor": 8, "high_freq_factor": 4}}', "low_freq_factor"),
    ("[" * 50_000 + "]" * 50_000, "too deeply"),
])
@pytest.mark.parametrize("how", ["paste", "upload"])
def test_a_bad_config_gets_one_line_and_the_page_keeps_working(text: str, words: str, how: str) -> None:
    at = open_page(CONTEXTS, {"model": "llama-3.1-8b"})
    open_on_request(at, INPUTS)
    before = page_view(at)
    if how == "paste":
        at.text_area(key=PASTE).input(text).run()
    else:
        at.get("file_uploader")[0].set_value(("config.json", text.encode(), "application/json"))
        at.run()
    assert_page_ran(at, CONTEXTS)
    (error,) = [e.value for e in at.error]
    assert "\n" not in error and words in error.replace("\\", ""), error
    assert "](" not in error, "Markdown from the config reached the page"
    assert page_view(at) == before, "a refused config changed the view"
    assert len(at.get("plotly_chart")) == 4


def test_a_huge_upload_is_refused_in_one_line() -> None:
    at = open_page(CONTEXTS)
    open_on_request(at, INPUTS)
    at.get("file_uploader")[0].set_value(("config.json", b'{"pad": "' + b"x" * (1100 * 1024) + b'"}',
                                          "application/json"))
    at.run()
    (error,) = [e.value for e in at.error]
    assert "at most 1 MB" in error.replace("\\", "")


def padded_config(kilobytes: int) -> str:
    """Llama 3.1 8B's config.json with a comment that makes it ``kilobytes`` KB long."""
    config = load_config("llama-3.1-8b")
    return json.dumps({**config, "_comment": "x" * (kilobytes * 1024 - len(json.dumps(config)) - 16)})


@pytest.mark.parametrize("how", ["paste", "upload"])
def test_the_text_box_and_the_uploader_read_the_same_sizes(how: str) -> None:
    """The uploader says "1MB per file": a 293 KB config is read by either (the text box dropped a paste
    over 256 KB without a word, and the page refused such a file); over 1 MB either says so in one line,
    and the text box, which has no limit of its own that would drop a paste silently, is emptied."""
    at = open_page(CONTEXTS)
    open_on_request(at, INPUTS)
    box = at.text_area(key=PASTE)
    assert box.proto.max_chars == 0, "the browser drops a paste over max_chars without a word"
    for kilobytes, read in ((293, True), (1100, False)):
        text = padded_config(kilobytes)
        if how == "paste":
            at.text_area(key=PASTE).input(text).run()
        else:
            at.get("file_uploader")[0].set_value(("config.json", text.encode(), "application/json"))
            at.run()
        if read:
            assert [s.value[:5] for s in at.success] == ["Read "], [e.value for e in at.error]
            assert at.session_state["method"] == "llama3"
        else:
            (error,) = [e.value for e in at.error]
            assert f"That is {kilobytes:,} KB; this page reads a config.json of at most 1 MB" in error.replace("\\", "")
            assert how == "upload" or at.text_area(key=PASTE).value == ""


# ------------------------------------------------------------------------------ hostile URLs

#: Every key of the page, and the values a hostile URL gives it.
PAGE_URL_KEYS = ["model", "base", "parameters", *contexts.PAGE_KEYS]
HOSTILE = ["abc", "nan", "inf", "-inf", "-5", "1e300", "9" * 500, "", "x" * TEN_KB, "<script>alert(1)</script>",
           "[x](javascript:alert(1))"]


@pytest.mark.parametrize("value", HOSTILE, ids=lambda value: value[:12] or "empty")
def test_hostile_url_values_are_clamped_with_a_notice(value: str) -> None:
    """Every key of the page given the same hostile value, in one URL: each gets a one-line notice
    naming it, and a value inside its limits; the page draws its charts."""
    at = open_page(CONTEXTS, dict.fromkeys(PAGE_URL_KEYS, value))
    for key in PAGE_URL_KEYS:
        notices = [w for w in url_notices(at) if re.search(rf"(?<![\w/]){re.escape(key)}(?![\w])", w)]
        assert notices, f"{key}={value[:20]!r}: no notice naming it ({url_notices(at)})"
        # A value is quoted in a code span, where a link is text: no link outside one.
        outside_code = [re.sub(r"(`+).*?\1", "", notice) for notice in notices]
        assert all("\n" not in notice and len(notice) <= 400 for notice in notices)
        assert not any("](" in text or "<" in text for text in outside_code), notices
        held = at.session_state[key]
        if isinstance(held, float):
            assert np.isfinite(held), key
    assert all(len(v) <= 64 for v in at.query_params.values()), f"{value[:20]!r} stayed in the URL"
    assert len(at.get("plotly_chart")) == 4


def test_url_values_that_cannot_go_together_are_put_right_with_a_notice() -> None:
    """Each pair named in the order of its boxes, and the values used replace the URL's (and the boxes')."""
    at = open_page(CONTEXTS, {"beta_fast": "2", "beta_slow": "5", "low_freq": "8", "method": "longrope"})
    shown = " ".join(w.value for w in at.warning)
    assert "YaRN's beta_fast (2) must be above beta_slow (5); using YaRN's 32 and 1." in shown
    assert "low_freq_factor (8) must be at most high_freq_factor (4); using Meta's 1 and 4." in shown
    assert "LongRoPE (Phi-3) cannot be drawn here: longrope scaling needs short_factor and long_factor" in shown
    assert metric(at, "method: none")
    assert {key: at.session_state[key] for key in contexts.ORDERED_KEYS} == {
        "beta_fast": 32.0, "beta_slow": 1.0, "low_freq": 1.0, "high_freq": 4.0}
    assert not {"beta_fast", "beta_slow", "low_freq", "high_freq"} & set(at.query_params)
    at = open_page(CONTEXTS, {"method": "llama3", "low_freq": "4", "high_freq": "1", "parameters": "true"})
    assert [w.value for w in at.warning if w.value.startswith("llama3")] == [
        "llama3's low_freq_factor (4) must be at most high_freq_factor (1); using Meta's 1 and 4."]
    assert (at.number_input(key="low_freq").value, at.number_input(key="high_freq").value) == (1.0, 4.0)
    assert dict(at.query_params) == {"method": "llama3", "parameters": "true"}
    # Llama 4 Scout's 1 and 1 go together (no band between), as in pe_core and transformers.
    at = open_page(CONTEXTS, {"method": "llama3", "low_freq": "1", "high_freq": "1", "parameters": "true"})
    assert not [w.value for w in at.warning if w.value.startswith("llama3")]
    assert (at.number_input(key="low_freq").value, at.number_input(key="high_freq").value) == (1.0, 1.0)


def test_a_base_on_the_sliders_scale_goes_to_the_sidebar() -> None:
    at = open_page(CONTEXTS, {"base": "500000"})
    assert at.session_state["n"] == 500000.0 and "base" not in at.query_params
    at = open_page(CONTEXTS, {"base": "77777.5", "n": "100"})
    assert at.session_state["n"] == min(N_OPTIONS, key=lambda n: abs(np.log10(n / 77777.5)))
    assert at.query_params.get("base") == "77777.5"


def test_the_parameters_keep_their_values_hidden_or_shown() -> None:
    """Each method's parameters are drawn on request; hidden, they keep their values and the URL."""
    at = open_page(CONTEXTS, {"beta_fast": "20", "truncate": "false"})
    assert {box.key for box in at.number_input} == {"trained", "target", "factor"}
    assert at.session_state["beta_fast"] == 20.0
    assert "beta_fast 20, beta_slow 1, truncate off" in " ".join(c.value for c in at.caption)
    at.toggle(key="parameters").set_value(True).run()
    assert at.number_input(key="beta_fast").value == 20.0 and at.toggle(key="truncate").value is False
    at.number_input(key="beta_slow").set_value(2.5).run()
    at.toggle(key="truncate").set_value(True).run()
    at.toggle(key="parameters").set_value(False).run()
    assert (at.session_state["beta_fast"], at.session_state["beta_slow"], at.session_state["truncate"]) == (
        20.0, 2.5, True)
    assert at.query_params.get("beta_slow") == "2.5" and "truncate" not in at.query_params
    # The side-by-side uses them: YaRN's bounds in the ramp section are those of beta 20 and 2.5.
    fast, slow = contexts.yarn_bounds(contexts.ContextView(beta_fast=20.0, beta_slow=2.5))
    assert f"{fast:.2f}, {slow:.2f}" in [m.value for m in at.metric]


# ------------------------------------------------------------------ a model carried from Rotary


def leave_for(at, url_path: str):
    """Choose the page at ``url_path`` in the sidebar: the browser drops the query string on a page
    change (AppTest's switch_page keeps it), and the app writes the view's back."""
    at.query_params.clear()
    return at.switch_page(PAGE_BY_KEY[url_path].path).run()


def test_a_rotary_model_opens_on_longer_contexts_whole_and_says_so() -> None:
    """From Llama 3.1's Rotary link, Longer contexts opens Llama 3.1 whole, as its own link opens it
    (it opened as "Custom" with Rotary's base and factor and L0 4096), and says where it came from."""
    at = leave_for(open_page(PAGE_BY_KEY["rotary"], {"model": "llama-3.1-8b"}), "contexts")
    assert_page_ran(at, CONTEXTS)
    direct = open_page(CONTEXTS, {"model": "llama-3.1-8b"})
    assert page_view(at) == page_view(direct)
    assert dict(at.query_params) == dict(direct.query_params)
    assert "Llama 3.1 8B comes from Rotary (RoPE), whole" in at.caption[0].value
    # Chosen again here, another model stays.
    at.selectbox(key="model").set_value("custom").run()
    assert at.session_state["model"] == "custom"


def test_a_rotary_model_on_another_page_says_which_settings_it_set() -> None:
    """Similarity keeps the sidebar's d and n of Rotary's model and says so in one line (it used
    n = 500000 silently); a d moved there is the visitor's own, and the line names n alone."""
    at = leave_for(open_page(PAGE_BY_KEY["rotary"], {"model": "llama-3.1-8b"}), "similarity")
    notes = [c.value for c in at.caption if "come" in c.value]
    assert notes == ["d = 128 and n = 500000 come from Llama 3.1 8B on Rotary (RoPE)."], notes
    at.sidebar.slider(key="d").set_value(64).run()
    assert [c.value for c in at.caption if "from Llama" in c.value] == [
        "n = 500000 comes from Llama 3.1 8B on Rotary (RoPE)."
    ]
