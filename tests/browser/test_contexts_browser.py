"""Longer contexts in a real browser: a model's config.json uploaded through the page's own
uploader (a real file), its settings landing in the sidebar and the URL, and the view that URL
opens. One server, one page load for the upload and its checks."""

from __future__ import annotations

import ast
import json
import re

import pytest
from support.browser_harness import APP_IDLE_JS, REPO_ROOT, open_on_request
from test_browser import FIRST_LOAD_MS, assert_no_traceback, expect_sidebar, query, save_screenshot, wait_until_drawn

from explorer.model_configs import load_config
from explorer.topics import contexts, layers

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    expect = None

pytestmark = pytest.mark.browser


def test_upload_a_config_json_and_open_its_url(app_server: str, page, tmp_path) -> None:
    """Llama 3.2 1B's config.json through the uploader: d = 64 and n = 500000 in the sidebar, the
    page's keys (never the file) in the URL, Meta's pitfall said; then a config whose base the n
    slider cannot hold, used exactly; and that URL reopens the same view in a new tab."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps(load_config("llama-3.2-1b"), indent=2))
    page.goto(f"{app_server}/contexts", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "contexts", timeout=FIRST_LOAD_MS)
    open_on_request(page, "Your own config.json")
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploader.set_input_files(str(config))
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="Read config.json").first).to_be_visible()
    page.wait_for_function(APP_IDLE_JS)
    expect_sidebar(page, d="64", L="100", n="500000")
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="llama-models #166").first).to_be_visible()
    page.wait_for_function("() => new URLSearchParams(location.search).get('method') === 'llama3'")
    keys = query(page)
    expected = {"d": "64", "n": "500000", "method": "llama3", "factor": "32", "trained": "8192", "target": "131072"}
    assert keys.items() >= expected.items() and "model" not in keys, keys  # custom: the default
    assert max(len(value) for value in keys.values()) <= 64 and "rope_scaling" not in page.url
    assert_no_traceback(page)

    odd = tmp_path / "odd_base.json"
    odd.write_text(json.dumps({"rope_theta": 123456.7, "head_dim": 80, "max_position_embeddings": 8192}))
    uploader.set_input_files(str(odd))
    page.wait_for_function("() => new URLSearchParams(location.search).get('base') === '123456.7'")
    page.wait_for_function(APP_IDLE_JS)
    expect(page.get_by_text(re.compile(r"Base b = 123456\.7"))).to_be_visible()
    expect_sidebar(page, d="80", L="100", n="150000")
    save_screenshot(page, "contexts-uploaded")

    again = page.context.new_page()
    again.goto(page.url, timeout=FIRST_LOAD_MS)
    wait_until_drawn(again, "contexts", timeout=FIRST_LOAD_MS)
    expect(again.get_by_text(re.compile(r"Base b = 123456\.7"))).to_be_visible()
    expect_sidebar(again, d="80", L="100", n="150000")
    assert_no_traceback(again)


def whole_number_boxes() -> set[tuple[str, str]]:
    """Every whole-number box of the app, as (file stem, URL key): each call of
    controls.number_control with whole=True in pages/ and explorer/."""
    boxes = set()
    for path in [*(REPO_ROOT / "pages").glob("*.py"), *(REPO_ROOT / "explorer").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "number_control"
                    and any(k.arg == "whole" and getattr(k.value, "value", None) is True for k in node.keywords)):
                boxes.add((path.stem, node.args[0].value))
    return boxes


#: The whole-number boxes: URL key -> (label, what the page shows of the value used, from the value).
WHOLE_BOXES = {
    "trained": ("Trained length L0 (tokens)", lambda value: f"L0={value:,}, L=16,384"),
    "target": ("Target length L (tokens)", lambda value: f"L0=32,000, L={value:,}"),
    "max_positions": ("max_position_embeddings (0: none)",
                      lambda value: f"L0 = {value}  # where the base starts to grow: max_position_embeddings"),
}


def test_whole_number_boxes_read_scientific_notation(app_server: str, page) -> None:
    """Typed into a whole-number box: "1e5" is 100000, "32e3" 32000, "1.5e4" 15000 (the browser's
    whole-number box read them 1, 32 and 1, silently); "1e9", beyond the limit, is clamped and "1.5"
    rounded, each with a caption under the box saying so. The page uses each value, the URL holds it
    as a whole number. The first box gets every case; the others, the same control
    (controls.number_control), a fraction in scientific notation and the clamp."""
    assert whole_number_boxes() == {("contexts_page", key) for key in WHOLE_BOXES} | {("layers_page", "layer_target")}
    page.goto(f"{app_server}/contexts?parameters=true&code=true", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "contexts", timeout=FIRST_LOAD_MS)
    code = page.locator('[data-testid="stCode"]').first
    limit = contexts.LENGTH_MAX

    def type_into(box, key: str, typed: str, value: int) -> None:
        box.fill(typed)
        box.press("Enter")
        page.wait_for_function(f"() => new URLSearchParams(location.search).get('{key}') === '{value}'")
        page.wait_for_function(APP_IDLE_JS)
        expect(box).to_have_value(str(value))

    def shown(text: str) -> None:
        where = code if "max_position_embeddings" in text else page.locator('[data-testid="stCaptionContainer"]')
        expect(where.filter(has_text=text).first).to_be_visible()

    for index, (key, (label, used)) in enumerate(WHOLE_BOXES.items()):
        box = page.get_by_role("spinbutton", name=label, exact=True)
        low = 0 if key == "max_positions" else 1
        scientific = (("1e5", 100000), ("1.5e4", 15000), ("32e3", 32000)) if index == 0 else (("1.5e4", 15000),)
        for typed, value in scientific:
            type_into(box, key, typed, value)
            shown(used(value))
        type_into(box, key, "1e9", limit)
        shown(used(limit))
        expect(page.get_by_text(f"1000000000 is outside {low}..{limit}: using {limit}.")).to_be_visible()
        save_screenshot(page, f"contexts-{key}-1e9-clamped")
        if index == 0:
            type_into(box, key, "1.5", 2)
            shown(used(2))
            expect(page.get_by_text("1.5 is not a whole number: using 2.")).to_be_visible()
        type_into(box, key, "32e3", 32000)
    assert_no_traceback(page)


def test_the_layer_pages_target_box_reads_scientific_notation(app_server: str, page) -> None:
    """Your model, layer by layer's whole-number box, as Longer contexts' above: "1e5" is 100000 and the table
    is computed at it, "1e9" is clamped to the limit with a caption saying so."""
    page.goto(f"{app_server}/layers", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "layers", timeout=FIRST_LOAD_MS)
    box = page.get_by_role("spinbutton", name="Target length L (tokens)", exact=True)
    for typed, value in (("1e5", 100000), ("1e9", layers.TARGET_MAX)):
        box.fill(typed)
        box.press("Enter")
        page.wait_for_function(f"() => new URLSearchParams(location.search).get('layer_target') === '{value}'")
        page.wait_for_function(APP_IDLE_JS)
        expect(box).to_have_value(str(value))
        caption = page.locator('[data-testid="stCaptionContainer"]').filter(has_text=f"Per layer type at L = {value:,}")
        expect(caption.first).to_be_visible()
    clamped = f"1000000000 is outside 1..{layers.TARGET_MAX}: using {layers.TARGET_MAX}."
    expect(page.get_by_text(clamped)).to_be_visible()
    assert_no_traceback(page)
