"""One contract over the page list (explorer/page_list.py): every page is two files, a thin
page file in pages/ and its topic module in explorer/ without Streamlit, and the page runs
and shows "reproduce this" code that runs. A page added to the list is held to it here with
no other line of test.

Each topic's numbers are compared with its snippet's in its own tests (test_reproduce.py and
the topic's test file); this file checks what every page must have in common.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from deep_link import open_url
from test_app import assert_page_ran

from explorer import page_list, reproduce
from explorer.controls import OFFER_DOWNLOADS
from explorer.page_list import PageInfo

ROOT = Path(__file__).resolve().parents[1]
#: The modules of explorer/ that may use Streamlit: the controls and shared UI pieces (the
#: CSS, the Play controls' keyboard component), the shared cached computations, and the
#: start-up. Everything else (the topics, the shared figure builders, settings, presets, the
#: page list) is tested without a server.
UI_MODULES = {
    "explorer.controls", "explorer.ui", "explorer.cached", "explorer.startup", "explorer.style", "explorer.keyboard",
}


def page_id(page: PageInfo) -> str:
    return page.url_path


def explorer_imports(path: Path) -> set[str]:
    """The explorer modules a file imports (``from explorer import x``, ``from explorer.x import ...``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "explorer":
            found |= {f"explorer.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("explorer."):
            found.add(node.module)
    return found


def imports_streamlit(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        if any(name == "streamlit" or name.startswith("streamlit.") for name in names):
            return True
    return False


MODULES = {
    f"explorer.{path.stem}": path for path in sorted((ROOT / "explorer").glob("*.py")) if path.stem != "__init__"
}


def test_only_the_ui_modules_use_streamlit_even_through_their_imports() -> None:
    direct = {name for name, path in MODULES.items() if imports_streamlit(path)}
    assert direct <= UI_MODULES, f"Streamlit in {sorted(direct - UI_MODULES)}"
    # No topic reaches Streamlit through another module either.
    for name in MODULES:
        if name in UI_MODULES:
            continue
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            seen.add(current)
            todo += [m for m in explorer_imports(MODULES[current]) if m in MODULES and m not in seen]
        assert not seen & UI_MODULES, f"{name} imports {sorted(seen & UI_MODULES)}, which use Streamlit"


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_a_page_is_a_page_file_and_its_topic_module(page: PageInfo) -> None:
    path = ROOT / page.path
    assert path.is_file(), f"no page file {page.path}"
    assert path.stem != page.url_path, "a deep link to the page would run its file without app.py"
    assert page.topic in MODULES, f"no topic module {page.topic}"
    assert page.topic not in UI_MODULES
    assert page.topic in explorer_imports(path), f"{page.path} does not use {page.topic}"


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_the_page_runs_and_its_code_runs_and_covers_its_downloads(page: PageInfo) -> None:
    """AppTest smoke run at the defaults with the code shown and the downloads offered; the
    first snippet shown (NumPy) runs in a fresh namespace and binds ``result``: a dict from
    the key of one or more of the page's downloads to the array that download holds (every
    download, except the Scorecard's distances and Precision's summary and one column)."""
    at = open_url("" if page is page_list.HOME else page.url_path, {"code": "true"})
    assert_page_ran(at, page)
    at.sidebar.toggle(key=OFFER_DOWNLOADS).set_value(True).run()
    assert_page_ran(at, page)
    downloads = {button.key.rsplit("_", 1)[0] for button in at.get("download_button")} - {"pitfalls_example"}
    assert downloads, "the page offers no download"
    codes = at.get("code")
    assert codes, "the page shows no reproduce-this code"
    result = reproduce.run_snippet(codes[0].value)["result"]
    assert isinstance(result, dict) and result, "the snippet's result is not a dict of downloads"
    assert set(result) <= downloads, f"not a download of the page: {sorted(set(result) - downloads)}"
    assert all(np.asarray(value).size for value in result.values())
