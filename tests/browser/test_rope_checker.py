"""Rotary's "Check your RoPE" in a real browser, on files made by transformers' and Meta's own code.

One server and one page load of /rotary: Llama 3.1 8B's bfloat16 cos (``cos.float().numpy()``,
shape (1, L, 128)) goes through the page's own st.file_uploader, then "Open this reading on the
page" sets the sidebar and the URL; then an .npz holding Meta's complex64 freqs_cis beside
Llama 3.1's inv_freq; then a garbage file. The verdicts and metric boxes are those the checker's
topic function gives for the same bytes; no metric box or label is cut off; no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from layout_checks import LABELS_CUT_JS
from support.browser_harness import APP_IDLE_JS, open_on_request
from support.engineer_files import npy
from support.needs_torch import import_or_skip
from test_browser import FIRST_LOAD_MS, assert_no_traceback, expect_sidebar, query, save_screenshot, wait_until_drawn
from test_checker import CUT_METRICS_JS

from explorer import uploads
from explorer.topics import rotary

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails where PE_REQUIRE_BROWSER=1
    expect = None

pytestmark = pytest.mark.browser

import_or_skip("torch")
import_or_skip("transformers")
from support.rope_files import llama31_cos, llama31_inv_freq, meta_freqs_cis, npz  # noqa: E402

#: What the checker's section shows (its alerts, captions and metric boxes after its heading) as one
#: string: ready when the app is idle, the uploader holds the file named and the section differs
#: from before the upload (replacing a file first removes the old one, and a run without any
#: verdict comes in between).
SECTION_JS = """(selector) => {
    const heading = [...document.querySelectorAll('[data-testid="stMain"] h2')]
        .find((el) => el.textContent.includes('Check your RoPE'));
    if (!heading) return [];
    return [...document.querySelectorAll(selector || '[data-testid="stMain"] [data-testid="stAlert"], '
        + '[data-testid="stMain"] [data-testid="stMetric"]')]
        .filter((el) => heading.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)
        .map((el) => el.innerText);
}"""
#: The section's alerts, each its text without its icon's name (a Material Symbols ligature).
ALERTS = '[data-testid="stMain"] [data-testid="stAlert"] [data-testid="stMarkdownContainer"]'
READY_JS = f"""([name, before]) => ({APP_IDLE_JS})()
    && [...document.querySelectorAll('[data-testid="stFileChipName"]')].some((el) => el.textContent.trim() === name)
    && ({SECTION_JS})().length > 0 && ({SECTION_JS})().join(' | ') !== before"""
#: The checker's metric labels (the page's other metrics come before it, under other labels).
LABELS = ("kind", "d", "layout", "base", "start", "scaling", "attention factor", "pairs read")


def upload(page, path: Path) -> tuple[list[str], dict[str, str]]:
    """Put the file into the checker's uploader: the section's alerts and its metric boxes."""
    before = " | ".join(page.evaluate(SECTION_JS))
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    page.wait_for_function(READY_JS, arg=[path.name, before], timeout=FIRST_LOAD_MS)
    alerts = [text.strip() for text in page.evaluate(SECTION_JS, ALERTS)]
    metrics = {
        metric.locator('[data-testid="stMetricLabel"]').inner_text().strip():
            metric.locator('[data-testid="stMetricValue"]').inner_text().strip()
        for metric in page.locator('[data-testid="stMain"] [data-testid="stMetric"]').all()
    }
    assert page.evaluate(CUT_METRICS_JS) == [], "a metric box shows its value cut off"
    assert page.evaluate(LABELS_CUT_JS, True) == [], "a label or a table is cut off"
    assert_no_traceback(page)
    return alerts, {label: value for label, value in metrics.items() if label in LABELS}


def test_check_your_rope_reads_what_a_model_holds(app_server: str, page, tmp_path) -> None:
    import torch
    from safetensors.torch import save_file

    files = {"cos.npy": npy(llama31_cos(2048)), "garbage.npy": bytes(range(256)) * 8,
             "rope.npz": npz(freqs_cis=meta_freqs_cis(end=512), inv_freq=llama31_inv_freq())}
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / name
        paths[name].write_bytes(data)
    # A shard as a checkpoint persists its rotary buffer beside its weights, and a torch.save file.
    paths["model.safetensors"] = tmp_path / "model.safetensors"
    save_file({"model.layers.0.self_attn.rotary_emb.inv_freq": torch.from_numpy(llama31_inv_freq()).float(),
               "model.layers.0.mlp.up_proj.weight": torch.randn(64, 64)}, str(paths["model.safetensors"]))
    files["model.safetensors"] = paths["model.safetensors"].read_bytes()
    paths["model.pt"] = tmp_path / "model.pt"
    torch.save({"inv_freq": torch.ones(4)}, str(paths["model.pt"]))
    expected = {name: rotary.check_upload(name, files[name]) for name in ("cos.npy", "rope.npz", "model.safetensors")}

    page.goto(f"{app_server}/rotary", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "rotary", timeout=FIRST_LOAD_MS)
    open_on_request(page, "Upload what your model holds")
    main = page.locator('[data-testid="stMain"]')
    assert "at most 5 MB (5,000,000 bytes): that is a float32 cos table of 9,765 positions x 128" in main.inner_text()

    # Llama 3.1's bfloat16 cos: the verdict, the boxes in its words, the batch axis dropped and said.
    alerts, metrics = upload(page, paths["cos.npy"])
    [reading] = expected["cos.npy"].readings
    assert alerts == [reading.result["verdict"]]
    assert metrics == rotary.reading_metrics(reading.result)
    assert (metrics["kind"], metrics["base"], metrics["scaling"], metrics["layout"]) == (
        "cos table", "500000", "llama3 ×8", "half")
    expect(page.get_by_text(reading.notes[0])).to_be_visible()
    expect(page.get_by_role("heading", name="The scaling's parameters")).to_be_visible()
    save_screenshot(page, "rotary-checker-llama31-cos")

    # Open it on the page: the sidebar's d and n, the layout and the scaling, in the URL too.
    page.get_by_role("button", name="Open this reading on the page").click()
    page.wait_for_function("() => new URLSearchParams(location.search).get('scaling') === 'llama3'")
    page.wait_for_function(APP_IDLE_JS)
    expect_sidebar(page, d="128", L="100", n="500000")
    assert {"n": "500000", "scaling": "llama3", "original": "8192"}.items() <= query(page).items()
    expect(page.get_by_text("The charts above show this reading: its d, base, layout and scaling.")).to_be_visible()
    assert_no_traceback(page)

    # An .npz: a table of its arrays, and Meta's freqs_cis shown first, read as it is (complex64).
    alerts, metrics = upload(page, paths["rope.npz"])
    freqs_cis = expected["rope.npz"].readings[0]
    assert alerts == [freqs_cis.result["verdict"]]
    assert metrics == rotary.reading_metrics(freqs_cis.result)
    assert (metrics["kind"], metrics["start"], metrics["scaling"]) == ("freqs_cis", "0", "none")
    expect(page.get_by_text("Array shown below")).to_be_visible()
    save_screenshot(page, "rotary-checker-npz")

    # Not a file the checker can read: one line, nothing else.
    alerts, metrics = upload(page, paths["garbage.npy"])
    assert len(alerts) == 1 and alerts[0].startswith("This is not a readable .npy file (") and not metrics

    # A checkpoint's shard: its rotary buffer read, its weights not (issue 39).
    alerts, metrics = upload(page, paths["model.safetensors"])
    [shard] = expected["model.safetensors"].readings
    assert alerts == [shard.result["verdict"]] and metrics == rotary.reading_metrics(shard.result)
    assert (metrics["kind"], metrics["base"], metrics["scaling"]) == ("inv_freq", "500000", "llama3 ×8")
    # A torch file: refused on the page with the line that converts it, not only in a tooltip.
    alerts, metrics = upload(page, paths["model.pt"])
    assert len(alerts) == 1 and "torch.load(f, weights_only=True)" in alerts[0] and not metrics
    assert_no_traceback(page)


#: The sentence under an uploader whose file Streamlit's uploader refused (its red chip): the CSS
#: text of its container's ::after, and whether it is drawn (display block, some height).
REFUSED_JS = """() => {
    const chip = document.querySelector('[data-testid="stFileChip"][aria-invalid="true"]');
    if (!chip) return null;
    const container = chip.closest('[class*="st-key-"]');
    const after = getComputedStyle(container, '::after');
    return {content: after.content, display: after.display, height: parseFloat(after.height) || 0};
}"""


def test_a_gguf_is_read_and_a_file_over_the_limit_gets_a_sentence(app_server: str, page, tmp_path) -> None:
    from support.gguf_files import llama31_gguf

    model = llama31_gguf(tmp_path / "llama-3.1-8b.gguf")
    expected = rotary.check_upload(model.name, model.read_bytes())
    page.goto(f"{app_server}/rotary", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "rotary", timeout=FIRST_LOAD_MS)
    open_on_request(page, "Upload what your model holds")
    # A .gguf as llama.cpp's converter writes Llama 3.1: its metadata's line, its rope_freqs read as llama3 x8.
    alerts, metrics = upload(page, model)
    [reading] = expected.readings
    assert alerts == [expected.model_file[0], reading.result["verdict"]]
    assert (metrics["kind"], metrics["base"], metrics["scaling"]) == ("inv_freq", "500000", "llama3 ×8")
    save_screenshot(page, "rotary-checker-gguf")
    # A file of a type the checker does not read reaches the page, which says so in a sentence.
    notes = tmp_path / "notes.txt"
    notes.write_text("0.1, 0.2")
    alerts, metrics = upload(page, notes)
    assert alerts == ["Upload a .npy, a .npz, a .csv, a .safetensors or a .gguf file."] and not metrics
    assert page.evaluate(REFUSED_JS) is None
    # Over the limit: Streamlit's uploader keeps the file (a red chip); the page says why and what reads it.
    big = tmp_path / "model-00001-of-00004.safetensors"
    big.write_bytes(bytes(uploads.MAX_UPLOAD_BYTES + 1))
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(big))
    page.wait_for_function(REFUSED_JS)
    refused = page.evaluate(REFUSED_JS)
    assert refused["content"] == f'"{uploads.LARGER_FILES}"' and refused["display"] == "block"
    assert refused["height"] > 10, refused
    page.locator('[data-testid="stFileUploader"]').scroll_into_view_if_needed()
    save_screenshot(page, "rotary-checker-over-the-limit")
    assert_no_traceback(page)
