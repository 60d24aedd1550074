"""The checker (Conventions and pitfalls) in a real browser, on files as engineers make them.

One server and one page: the PyTorch tutorial's float32 table (tests/engineer_files.py) is
written to real files with np.save, np.savetxt and pandas, and each goes through the page's
own st.file_uploader in turn. Every file of the same table gets the reading of its .npy, in
the verdict and in the metric boxes alike; the buffer PyTorch keeps, (100, 1, 128), is read;
the table with each pair's cosine first is named as such.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.browser_harness import APP_IDLE_JS
from support.engineer_files import WRITERS, cosine_first, npy, tutorial_encoding
from test_browser import FIRST_LOAD_MS, assert_no_traceback, save_screenshot, wait_until_drawn

pytestmark = pytest.mark.browser

#: What the checker's section shows (the alerts, captions and metric boxes after its heading),
#: as one string; ready when the app is idle, the uploader holds the file named and the
#: section shows a verdict that differs from before the upload (replacing a file first
#: removes the old one: a run without any verdict comes in between).
SECTION_JS = """() => {
    const heading = [...document.querySelectorAll('[data-testid="stMain"] h2')]
        .find((el) => el.textContent.includes('Check your implementation'));
    if (!heading) return '';
    return [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stAlert"], '
        + '[data-testid="stMain"] [data-testid="stCaptionContainer"], [data-testid="stMain"] [data-testid="stMetric"]')]
        .filter((el) => heading.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)
        .map((el) => el.innerText).join(' | ');
}"""
#: The checker's metric boxes whose value is cut off (drawn narrower than its text).
CUT_METRICS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMetric"]')]
    .filter((metric) => [metric, ...metric.querySelectorAll('[data-testid="stMetricValue"] *')]
        .some((el) => el.scrollWidth > el.clientWidth + 1))
    .map((metric) => metric.innerText)"""
READY_JS = f"""([name, before]) => ({APP_IDLE_JS})()
    && [...document.querySelectorAll('[data-testid="stFileChipName"]')].some((el) => el.textContent.trim() === name)
    && ({SECTION_JS})().includes(' layout') && ({SECTION_JS})() !== before"""

TUTORIAL_VERDICT = "Interleaved layout, paper frequencies (w_i = n^(-2i/d)) with n = 10000, start 0: "
#: The metric boxes every file of the tutorial's table shows.
TUTORIAL_METRICS = {
    "shape": "100 x 128", "layout": "interleaved", "convention": "paper", "n": "10000", "start": "0",
    "transposed": "no", "stored as": "float32",
}


def upload(page, path: Path) -> tuple[str, list[str], dict[str, str]]:
    """Put the file into the page's uploader; its verdict, the captions and the metric boxes."""
    before = page.evaluate(SECTION_JS)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    page.wait_for_function(READY_JS, arg=[path.name, before], timeout=FIRST_LOAD_MS)
    main = page.locator('[data-testid="stMain"]')
    verdicts = main.locator('[data-testid="stAlert"]').filter(has_text="layout").all_inner_texts()
    assert len(verdicts) == 1, verdicts
    captions = main.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
    metrics = {
        metric.locator('[data-testid="stMetricLabel"]').inner_text().strip():
            metric.locator('[data-testid="stMetricValue"]').inner_text().strip()
        for metric in main.locator('[data-testid="stMetric"]').all()
    }
    assert page.evaluate(CUT_METRICS_JS) == [], "a metric box shows its value cut off"
    assert_no_traceback(page)
    return verdicts[0], captions, metrics


def test_every_file_of_the_tutorial_table_gets_the_reading_of_its_npy(app_server: str, page, tmp_path) -> None:
    pe = tutorial_encoding()
    files = {}
    for name in ("pe.npy", "savetxt_6f.csv", "pandas.csv", "pe_buffer.npy"):
        files[name] = tmp_path / name
        files[name].write_bytes(WRITERS[name](pe))
    files["cosine_first.npy"] = tmp_path / "cosine_first.npy"
    files["cosine_first.npy"].write_bytes(npy(cosine_first(pe)))

    page.goto(f"{app_server}/pitfalls", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "pitfalls", timeout=FIRST_LOAD_MS)
    # The limit a visitor can meet, with what fits in it.
    assert "at most 5 MB (5,000,000 bytes): that is 9,765 positions x 128 dimensions" in page.locator(
        '[data-testid="stMain"]'
    ).inner_text()

    verdict, captions, metrics = upload(page, files["pe.npy"])
    assert TUTORIAL_VERDICT in verdict and "Equivalently tensor2tensor frequencies with n = 8659.64." in verdict
    assert {name: metrics[name] for name in TUTORIAL_METRICS} == TUTORIAL_METRICS

    # The same numbers printed with 6 decimals: the same reading, the round base first.
    verdict, captions, metrics = upload(page, files["savetxt_6f.csv"])
    assert TUTORIAL_VERDICT in verdict and "tensor2tensor frequencies (w_i" not in verdict
    assert {name: metrics[name] for name in TUTORIAL_METRICS} == TUTORIAL_METRICS

    # pandas' header row and index column are recognised, and the page says so.
    verdict, captions, metrics = upload(page, files["pandas.csv"])
    assert TUTORIAL_VERDICT in verdict
    assert any(c.startswith("Skipped its header row (column names) and its first column (row labels)")
               for c in captions), captions
    assert {name: metrics[name] for name in TUTORIAL_METRICS} == TUTORIAL_METRICS
    save_screenshot(page, "pitfalls-checker-pandas-csv")

    # The (100, 1, 128) buffer the tutorial registers: its size-1 axis dropped, in one line.
    verdict, captions, metrics = upload(page, files["pe_buffer.npy"])
    assert TUTORIAL_VERDICT in verdict
    assert any(c.startswith("The array has shape (100, 1, 128): its axis of size 1") for c in captions), captions
    assert {name: metrics[name] for name in TUTORIAL_METRICS} == TUTORIAL_METRICS

    # Each pair's cosine first: named as that variant, in the text and in the boxes.
    verdict, captions, metrics = upload(page, files["cosine_first.npy"])
    assert "Interleaved layout with sine and cosine swapped in each pair (cos, sin, cos, sin, ...)" in verdict
    assert "backwards" not in verdict and "n = 10000" in verdict
    # The layout box keeps its value short enough to show whole; its label names the order.
    assert metrics.pop("layout, cosine first") == "interleaved" and "layout" not in metrics
    assert {name: metrics[name] for name in TUTORIAL_METRICS if name != "layout"} == {
        name: value for name, value in TUTORIAL_METRICS.items() if name != "layout"
    }
    save_screenshot(page, "pitfalls-checker-cosine-first")


def test_a_checkpoint_s_table_is_read_and_a_file_over_the_limit_gets_a_sentence(app_server: str, page,
                                                                                  tmp_path) -> None:
    from safetensors.numpy import save_file
    from test_rope_checker import REFUSED_JS

    from explorer import uploads

    # The Annotated Transformer's state_dict: its PositionalEncoding's pe buffer, (1, L, d), beside a weight.
    checkpoint = tmp_path / "pe.safetensors"  # a longer name is shortened in its chip ("ann...ed.safetensors")
    save_file({"src_embed.0.lut.weight": np.ones((50, 128), dtype=np.float32),
               "src_embed.1.pe": tutorial_encoding()[None]}, str(checkpoint))
    page.goto(f"{app_server}/pitfalls", timeout=FIRST_LOAD_MS)
    wait_until_drawn(page, "pitfalls", timeout=FIRST_LOAD_MS)
    verdict, captions, metrics = upload(page, checkpoint)
    assert TUTORIAL_VERDICT in verdict
    assert any(c.startswith("The array has shape (1, 100, 128): its axis of size 1") for c in captions), captions
    assert {name: metrics[name] for name in TUTORIAL_METRICS} == TUTORIAL_METRICS
    save_screenshot(page, "pitfalls-checker-safetensors")
    # Over the limit: the page says why the chip is red, and what reads such a file.
    big = tmp_path / "big.npy"
    big.write_bytes(bytes(uploads.MAX_UPLOAD_BYTES + 1))
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(big))
    page.wait_for_function(REFUSED_JS)
    refused = page.evaluate(REFUSED_JS)
    assert refused["content"] == f'"{uploads.LARGER_FILES}"' and refused["display"] == "block", refused
    assert_no_traceback(page)
