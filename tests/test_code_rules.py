"""Rules of the code base that a reviewer would otherwise check by eye."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP_CODE = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "explorer").glob("*.py"))]
CORE_CODE = sorted((ROOT / "pe_core").glob("*.py"))


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff")
    command = [ruff] if ruff else [sys.executable, "-m", "ruff"]
    result = subprocess.run([*command, "check", "--quiet", str(ROOT)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", CORE_CODE, ids=lambda p: p.name)
def test_pe_core_imports_no_streamlit(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    } | {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"streamlit", "plotly", "pandas"}, f"{path.name} imports {imported}"


def _constant_strings(module: str) -> set[tuple[str, str]]:
    """(module, name) of the module-level names bound once to a string literal in ``module``."""
    tree = ast.parse((ROOT / "explorer" / f"{module}.py").read_text())
    return {
        (module, target.id)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


#: The only HTML the app sends: presentation mode's style, a constant of explorer/share.py.
CONSTANT_HTML = _constant_strings("share")


@pytest.mark.parametrize("path", APP_CODE, ids=lambda p: p.name)
def test_no_raw_html_anywhere(path: Path) -> None:
    """No page renders raw HTML, so no user text (URL, upload, typed) can reach it. The one
    exception is st.html of a string constant of explorer/share.py (static CSS), written
    as ``share.NAME``: no variable, no expression, nothing built at run time."""
    tree = ast.parse(path.read_text())
    constant_calls = {
        id(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "html"
        and not node.keywords and len(node.args) == 1 and isinstance(node.args[0], ast.Attribute)
        and isinstance(node.args[0].value, ast.Name)
        and (node.args[0].value.id, node.args[0].attr) in CONSTANT_HTML
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "unsafe_allow_html":
            pytest.fail(f"{path.name}:{node.value.lineno} passes unsafe_allow_html")
        if isinstance(node, ast.Attribute) and node.attr == "html" and id(node) not in constant_calls:
            pytest.fail(f"{path.name}:{node.lineno} calls .html with something else than a constant of share.py")


def test_the_constant_html_is_only_a_style() -> None:
    """What st.html may send holds one <style> block and no markup, script or URL."""
    from explorer import share

    for _, name in CONSTANT_HTML:
        value = getattr(share, name)
        if "<" not in value:
            continue
        assert value.startswith("<style>") and value.endswith("</style>") and value.count("<") == 2, name
        assert not any(word in value.lower() for word in ("script", "url(", "@import", "javascript")), name
