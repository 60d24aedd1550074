"""Longer contexts in a real browser: a model's config.json uploaded through the page's own
uploader (a real file), its settings landing in the sidebar and the URL, and the view that URL
opens. One server, one page load for the upload and its checks."""

from __future__ import annotations

import json
import re

import pytest
from browser_harness import APP_IDLE_JS
from test_browser import FIRST_LOAD_MS, assert_no_traceback, expect_sidebar, query, save_screenshot, wait_until_drawn

from explorer.model_configs import load_config

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
