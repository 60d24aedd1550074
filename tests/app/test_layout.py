"""The package's layout, held by its folders rather than by a list of names:

- only app.py, pages/ and explorer/ui/ import streamlit; explorer/topics/ and the shared
  modules at explorer/'s top level never do, directly or through another module;
- a topic imports no other topic and nothing in ui/; a shared module imports no topic and
  nothing in ui/ (what two topics share lives there);
- a page is its page file in pages/ and its topic, explorer/topics/<url path>.py or a package
  explorer/topics/<url path>/ (whose modules import each other, not names from its __init__),
  and the page file lays out no other topic.

Adding a page is a page file, a topic module and one line in explorer/page_list.py; this
file and tests/app/test_pages.py then hold it to the rest.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import page_list
from explorer.page_list import PageInfo

ROOT = Path(__file__).resolve().parents[2]
EXPLORER = ROOT / "explorer"


def module_name(path: Path) -> str:
    """explorer/topics/waves.py -> explorer.topics.waves; a package's __init__ -> the package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: Every module of the explorer package, by dotted name.
MODULES: dict[str, Path] = {module_name(path): path for path in sorted(EXPLORER.rglob("*.py"))}


def topic_of(name: str) -> str | None:
    """The topic a dotted name belongs to: explorer.topics.rotary.checker (a module of a topic's
    package) -> explorer.topics.rotary; None outside explorer/topics/ (explorer.topics itself too)."""
    parts = name.split(".")
    return ".".join(parts[:3]) if len(parts) > 2 and parts[:2] == ["explorer", "topics"] else None


#: The topics, one per page: a module or a package in explorer/topics/.
TOPICS = {topic for name in MODULES if (topic := topic_of(name))}
#: Every module of a topic: the topics themselves and the modules of their packages.
TOPIC_MODULES = {name for name in MODULES if topic_of(name)}
UI = {name for name in MODULES if name.startswith("explorer.ui.")}
#: The Streamlit-free pieces several topics share: the modules at the package's top level.
SHARED = {name for name, path in MODULES.items() if path.parent == EXPLORER and path.stem != "__init__"}


def imported_names(path: Path) -> set[str]:
    """Every module a file imports, as dotted names; ``from a import b`` gives a.b and a
    (b may be a module or a name in a), ``import a.b`` gives a.b."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def explorer_imports(path: Path) -> set[str]:
    """The explorer modules a file imports."""
    return imported_names(path) & set(MODULES)


def imports_streamlit(path: Path) -> bool:
    return any(name == "streamlit" or name.startswith("streamlit.") for name in imported_names(path))


def reached_from(name: str) -> set[str]:
    """The explorer modules ``name`` imports, directly or through one another."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        for imported in explorer_imports(MODULES[current]) - seen:
            seen.add(imported)
            todo.append(imported)
    return seen


def other_topics(name: str, path: Path) -> set[str]:
    """The topics the module ``name`` (at ``path``) imports besides its own."""
    return {topic for imported in explorer_imports(path) if (topic := topic_of(imported))} - {topic_of(name)}


def test_the_three_kinds_are_in_the_tree() -> None:
    assert TOPICS and UI and SHARED
    assert (EXPLORER / "topics" / "__init__.py").is_file() and (EXPLORER / "ui" / "__init__.py").is_file()
    packages = {EXPLORER / "topics" / topic.rsplit(".", 1)[1] for topic in TOPICS}
    assert {path.parent for path in MODULES.values()} - packages == {EXPLORER, EXPLORER / "topics", EXPLORER / "ui"}


def test_streamlit_is_imported_only_by_the_app_the_pages_and_ui() -> None:
    direct = {name for name, path in MODULES.items() if imports_streamlit(path)}
    assert direct <= UI, f"Streamlit imported outside explorer/ui/: {sorted(direct - UI)}"


@pytest.mark.parametrize("name", sorted(TOPIC_MODULES | SHARED))
def test_no_topic_or_shared_module_reaches_streamlit_through_another_module(name: str) -> None:
    reached = reached_from(name)
    through = sorted(module for module in reached if imports_streamlit(MODULES[module]))
    assert not through, f"{name} imports {through}, which import streamlit"
    assert not reached & UI, f"{name} imports {sorted(reached & UI)} from explorer/ui/"


def test_importing_every_topic_and_shared_module_loads_no_streamlit() -> None:
    """The same rule as Python sees it: third-party imports included, in a fresh interpreter."""
    names = sorted(TOPIC_MODULES | SHARED)
    script = "import sys\n" + "".join(f"import {name}\n" for name in names) + "print('streamlit' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False", "importing the topics and shared modules loaded streamlit"


@pytest.mark.parametrize("name", sorted(TOPIC_MODULES))
def test_a_topic_imports_no_other_topic(name: str) -> None:
    others = other_topics(name, MODULES[name])
    assert not others, f"{name} imports the topics {sorted(others)}: move what they share to explorer/"


@pytest.mark.parametrize("name", sorted(TOPIC_MODULES - TOPICS))
def test_a_topic_s_modules_import_each_other_not_their_package(name: str) -> None:
    """A module of a topic's package takes names from the modules it builds on, never from the package's
    __init__, which imports every module of the package (a name it has not reached yet is not there)."""
    assert topic_of(name) not in explorer_imports(MODULES[name]), f"{name} imports its own package {topic_of(name)}"


@pytest.mark.parametrize("name", sorted(SHARED))
def test_a_shared_module_imports_no_topic(name: str) -> None:
    topics = {topic for imported in explorer_imports(MODULES[name]) if (topic := topic_of(imported))}
    assert not topics, f"{name} imports the topics {sorted(topics)}"


def test_the_rule_catches_what_it_forbids(tmp_path: Path) -> None:
    """The checks above on files that break them: they must see it."""
    topic = tmp_path / "bad_topic.py"
    topic.write_text("from explorer.topics import waves\nfrom explorer.ui import blocks\n")
    assert {"explorer.topics.waves", "explorer.ui.blocks"} <= explorer_imports(topic)
    part = tmp_path / "part.py"  # a module of the rotary package: its own package's modules are not another topic
    part.write_text("from explorer.topics.rotary.view import RotaryView\n"
                    "from explorer.topics.waves import position_profile_figure\n")
    assert other_topics("explorer.topics.rotary.checker", part) == {"explorer.topics.waves"}
    part.write_text("from explorer.topics.contexts.view import ContextView\n")
    assert other_topics("explorer.topics.rotary.checker", part) == {"explorer.topics.contexts"}
    assert other_topics("explorer.topics.contexts.charts", part) == set()
    streamlit_user = tmp_path / "bad_shared.py"
    streamlit_user.write_text("import streamlit.components.v2 as components\n")
    assert imports_streamlit(streamlit_user)
    assert "explorer.ui.controls" in reached_from("explorer.ui.blocks")


def page_id(page: PageInfo) -> str:
    return page.url_path


@pytest.mark.parametrize("page", page_list.PAGES, ids=page_id)
def test_a_page_is_its_page_file_and_its_topic_module(page: PageInfo) -> None:
    path = ROOT / page.path
    assert path.is_file(), f"no page file {page.path}"
    assert path.parent == ROOT / "pages" and path.stem == f"{page.url_path}_page"
    assert path.stem != page.url_path, "a deep link to the page would run its file without app.py"
    assert page.topic == f"explorer.topics.{page.url_path}", "a topic is named after its page's URL path"
    assert page.topic in MODULES, f"no topic module {page.topic}"
    topic_path = MODULES[page.topic].relative_to(ROOT).as_posix()
    assert topic_path in (f"explorer/topics/{page.url_path}.py", f"explorer/topics/{page.url_path}/__init__.py")
    used_topics = {topic for imported in explorer_imports(path) if (topic := topic_of(imported))}
    assert used_topics == {page.topic}, f"{page.path} lays out {sorted(used_topics)}, not its topic alone"


def test_every_topic_module_is_a_page_s() -> None:
    assert {page.topic for page in page_list.PAGES} == TOPICS


# --------------------------------------------------------------------------- pe_core

PE_CORE = ROOT / "pe_core"
#: Every module of pe_core, by dotted name.
CORE_MODULES: dict[str, Path] = {module_name(path): path for path in sorted(PE_CORE.rglob("*.py"))}
#: pe_core's rooms: the rotary maths and the reading of a matrix, each a package.
CORE_PACKAGES = ("pe_core.rope", "pe_core.identify")


def core_imports(path: Path) -> set[str]:
    """The pe_core modules a file imports when it runs (a package's __init__ counted only when imported
    itself; an ``if TYPE_CHECKING:`` block, read by type checkers alone, left out)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            node.body = [ast.Pass()]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found & set(CORE_MODULES)


def import_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as the list of its modules, or [] when it has none."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = "open"
        stack.append(name)
        for imported in sorted(graph[name]):
            if state.get(imported) == "open":
                return [*stack[stack.index(imported):], imported]
            if imported not in state and (cycle := visit(imported)):
                return cycle
        stack.pop()
        state[name] = "done"
        return []

    for name in sorted(graph):
        if name not in state and (cycle := visit(name)):
            return cycle
    return []


def test_pe_core_is_rooms_not_prefixes() -> None:
    """The rotary maths and the readings are packages; no flat module is named after a room it belongs in."""
    for package in CORE_PACKAGES:
        assert package in CORE_MODULES, f"no package {package}"
    flat = [name for name, path in CORE_MODULES.items() if path.parent == PE_CORE]
    prefixed = [name for name in flat if name.split(".")[-1].startswith(("rope_", "identify_"))]
    assert not prefixed, f"{prefixed} belong in {CORE_PACKAGES}"


def test_pe_core_has_no_import_cycle() -> None:
    graph = {name: core_imports(path) - {name} for name, path in CORE_MODULES.items()}
    assert not (cycle := import_cycle(graph)), f"pe_core's modules import each other: {' -> '.join(cycle)}"
    # The formulas never need the reading of a table: identify/ builds on rope/, not the reverse.
    rope = {name for name in CORE_MODULES if name.startswith("pe_core.rope.")}
    for name in rope:
        assert not {m for m in graph[name] if m.startswith("pe_core.identify")}, f"{name} imports pe_core.identify"


def test_pe_core_imports_neither_the_app_nor_streamlit_and_loads_eagerly() -> None:
    for name, path in CORE_MODULES.items():
        names = imported_names(path)
        assert not {n for n in names if n.split(".")[0] in ("explorer", "streamlit")}, f"{name} imports the app"
    tree = ast.parse((PE_CORE / "__init__.py").read_text())
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "__getattr__" not in defined, "pe_core loads a name lazily: import it in pe_core/__init__.py"


def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    at_run_time = tmp_path / "a.py"
    at_run_time.write_text("from typing import TYPE_CHECKING\nimport pe_core.rope.scaling\n"
                           "if TYPE_CHECKING:\n    from pe_core.identify import sinusoidal\n")
    assert core_imports(at_run_time) == {"pe_core.rope.scaling"}
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": set()}) == []
