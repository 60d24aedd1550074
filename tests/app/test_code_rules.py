"""Rules of the code base that a reviewer would otherwise check by eye."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP_CODE = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "explorer").rglob("*.py"))]
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


#: The one module allowed to send raw HTML: its static CSS and the page's scripts, string constants.
STYLE_MODULE = ROOT / "explorer" / "ui" / "style.py"
#: The modules whose ``SCRIPT`` constant the style module sends with its CSS.
SCRIPT_MODULES = ("keyboard", "browser_navigation")


def _module_string_constants(tree: ast.Module) -> set[str]:
    """Names assigned a literal string at module level (and nowhere else in the module)."""
    literal = {
        target.id for node in tree.body if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets if isinstance(target, ast.Name)
    }
    assigned = [
        target.id for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    ]
    return {name for name in literal if assigned.count(name) == 1}


def _static_joins(tree: ast.Module, constants: set[str]) -> set[str]:
    """Names assigned once at module level a sum of the module's ``constants`` and the script modules'
    ``SCRIPT`` (``PAGE_CHROME = CSS + keyboard.SCRIPT + ...``): text no run can change."""

    def static(node: ast.expr) -> bool:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return static(node.left) and static(node.right)
        if isinstance(node, ast.Name):
            return node.id in constants
        return (isinstance(node, ast.Attribute) and node.attr == "SCRIPT"
                and isinstance(node.value, ast.Name) and node.value.id in SCRIPT_MODULES)

    return {
        node.targets[0].id for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.BinOp) and static(node.value)
    }


@pytest.mark.parametrize("path", APP_CODE, ids=lambda p: p.name)
def test_no_raw_html_anywhere(path: Path) -> None:
    """No page renders raw HTML, so no user text (URL, upload, typed) can reach it; the
    style module alone sends its static CSS and scripts, literal strings."""
    tree = ast.parse(path.read_text())
    constants = _module_string_constants(tree) if path == STYLE_MODULE else set()
    constants |= _static_joins(tree, constants)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "unsafe_allow_html":
            pytest.fail(f"{path.name}:{node.value.lineno} passes unsafe_allow_html")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "html":
            static = (
                len(node.args) == 1
                and all(keyword.arg == "unsafe_allow_javascript" for keyword in node.keywords)
                and isinstance(node.args[0], ast.Name) and node.args[0].id in constants
            )
            if not static:
                pytest.fail(f"{path.name}:{node.lineno} calls .html with something else than a constant of its own")
        elif isinstance(node, ast.Attribute) and node.attr == "html" and path != STYLE_MODULE:
            pytest.fail(f"{path.name}:{node.lineno} refers to .html")


def test_the_style_constants_are_only_styles_and_the_scripts_only_scripts() -> None:
    """What st.html may send: style constants hold one <style> block each, no markup, script or URL;
    the scripts one <script> block each, loading and sending nothing; the page's chrome is the two."""
    from explorer.ui import browser_navigation, keyboard, style

    sent = _module_string_constants(ast.parse(STYLE_MODULE.read_text()))
    assert {"CSS", "PRESENT_STYLE"} <= sent
    for name in sent:
        value = getattr(style, name)
        assert value.startswith("<style>") and value.endswith("</style>") and value.count("<") == 2, name
        assert not any(word in value.lower() for word in ("<script", "url(", "@import", "javascript:")), name
    scripts = {"keyboard": keyboard.SCRIPT, "browser_navigation": browser_navigation.SCRIPT}
    assert set(scripts) == set(SCRIPT_MODULES)
    for name, script in scripts.items():
        assert script.startswith("<script>") and script.endswith("</script>") and script.count("<") == 2, name
        assert not any(word in script for word in ("import", "fetch(", "XMLHttpRequest", "WebSocket", "eval(",
                                                   "http", "innerHTML", "document.write")), name
    assert style.PAGE_CHROME == style.CSS + keyboard.SCRIPT + browser_navigation.SCRIPT


PAGE_FILES = sorted((ROOT / "pages").glob("*.py"))


def _bound_at_module_level(tree: ast.Module) -> set[str]:
    """Names a page file assigns a value outside its functions: what a run sets (imports and
    ``def`` names are not assignments; constants are, and are told apart by their UPPER_CASE)."""
    bound: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        pending.extend(ast.iter_child_nodes(node))
    return bound


def _is_page_cache(decorator: ast.expr) -> bool:
    """The decorator is ``cached.page_cache(...)``."""
    return isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "cached.page_cache"


def _run_values_read_by_page_caches(source: str) -> list[str]:
    """"function reads name" for every value of a run that a ``cached.page_cache`` function reads:
    such a function keeps the namespace of the run that made it (explorer.ui.cached.page_cache)."""
    tree = ast.parse(source)
    run_values = {name for name in _bound_at_module_level(tree) if not name.isupper()}
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not any(map(_is_page_cache, node.decorator_list)):
            continue
        own = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        own |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        found += [f"{node.name} reads {name}" for name in sorted((read - own) & run_values)]
    return found


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.name)
def test_page_files_make_their_caches_once(path: Path) -> None:
    """A page file's cached function is made through cached.page_cache, never by a bare
    st.cache_data or st.cache_resource, which Streamlit would make again on every run."""
    bare = [
        f"{node.name} (line {node.lineno})" for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for decorator in node.decorator_list
        if "cache_data" in ast.unparse(decorator) or "cache_resource" in ast.unparse(decorator)
        if not _is_page_cache(decorator)
    ]
    assert bare == []


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.name)
def test_page_caches_read_nothing_a_run_sets(path: Path) -> None:
    assert _run_values_read_by_page_caches(path.read_text()) == []


def test_the_page_cache_rule_sees_a_run_value() -> None:
    page = (
        "import streamlit as st\nfrom explorer.ui import cached\nLIMIT = 3\nsettings = st.session_state['settings']\n"
        "@cached.page_cache(st.cache_data())\ndef curves(ref):\n    step = ref + LIMIT\n    return settings.L * step\n"
        "@cached.page_cache(st.cache_data())\ndef fine(settings):\n    return settings.L + LIMIT\n"
    )
    assert _run_values_read_by_page_caches(page) == ["curves reads settings"]


def test_test_files_have_names_of_their_own() -> None:
    # The test folders are not packages (pytest's rootdir import mode): two test files of one name
    # in two folders stop the whole suite at collection ("import file mismatch"), as CI once did.
    names: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {name: paths for name, paths in names.items() if len(paths) > 1}
