"""The test suite's own layout: every test in the folder that says what it needs, every
fixture defined once, every stub server on the one HTTP base."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FOLDERS = ("unit", "integration", "real")


def fixtures_in(path: Path) -> list[str]:
    """The names of the pytest fixtures a module defines."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and any(
            "fixture" in ast.unparse(d) for d in node.decorator_list
        ):
            found.append(node.name)
    return found


def fixtures_asked(path: Path) -> set[str]:
    """The argument names of a module's functions, less those its parametrize marks fill."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        filled = set()
        for mark in node.decorator_list:
            if isinstance(mark, ast.Call) and ast.unparse(mark.func).endswith("parametrize"):
                first = mark.args[0] if mark.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    filled |= {n.strip() for n in first.value.split(",")}
        names |= {a.arg for a in node.args.args} - filled
    return names


def test_every_test_module_is_in_a_folder_of_what_it_needs():
    stray = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")]
    stray = [p for p in stray if p.split("/")[0] not in FOLDERS]
    assert stray == []


def test_each_fixture_is_defined_once():
    names = Counter(n for p in TESTS.rglob("*.py") for n in fixtures_in(p))
    assert [n for n, count in names.items() if count > 1] == []


def test_fixtures_shared_by_modules_live_in_the_plugins():
    """A fixture a test module defines is used in that module only; one used by two
    modules belongs in tests/fixtures/."""
    modules = sorted(TESTS.glob("*/test_*.py"))
    asked = {p: fixtures_asked(p) for p in modules}
    shared = [
        f"{name} ({home.relative_to(TESTS)}) is asked for in {other.relative_to(TESTS)}"
        for home in modules
        for name in fixtures_in(home)
        for other in modules
        if other != home and name in asked[other]
    ]
    assert shared == []


def test_the_stub_servers_share_one_http_base():
    """No test module or helper builds an HTTP server of its own: they are routes on
    tests/support/http_stub.py's base."""
    own = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*.py")
        if p.name != "http_stub.py" and "HTTPServer" + "(" in p.read_text(encoding="utf-8")
    ]
    assert own == []
