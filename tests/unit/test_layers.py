"""Dependencies run one way, and the folders show it: core <- llm <- stages <- runner <- cli.

`core/` (with `errors.py` and the package's `__init__.py`) imports only itself; `llm/`
(backends, the generation cache, calls, log-probabilities) imports the core; a stage
(`gen/`, `validate/`, `evaluate/`, `cards/`, `human_eval/`) imports the core, the LLM layer
and itself, never another stage; `runner/` (the spec and the pipeline that runs it) calls
the stages; `cli/` (the root group, one module per stage under `commands/`, the reference
it writes) sits on top. A module's layer is the folder it is in, so a new module needs no
list. The imports are read from the source files, function level ones included, so a lazy
import cannot hide an edge: nor a cycle, which no two modules may make. And no module is
over 600 lines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from support.layers import PACKAGE, package_files

STAGES = {"gen", "validate", "evaluate", "cards", "human_eval"}
# The only modules the package root holds; everything else lives in a layer's folder.
ROOT_MODULES = {"__init__.py", "__main__.py", "errors.py"}
RANK = {"core": 0, "llm": 1, "stage": 2, "runner": 3, "cli": 4}

# Edges still to remove, each named so that removing one fails this test until it is
# struck from the list (and a new one fails it at once).
PENDING: set[tuple[str, str]] = set()


def layer(module: str) -> tuple[str, str]:
    """(layer, stage name or "") of a dotted shiftbench module, from its first folder."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top in STAGES:
        return "stage", top
    if top in {"llm", "runner", "cli"}:
        return top, ""
    if top == "__main__":
        return "cli", ""
    return "core", ""  # core/, errors, the package root (and its __version__)


def imports(path: Path) -> list[str]:
    """Every shiftbench module `path` imports, at any depth of its code. The package root's
    `if TYPE_CHECKING:` block is left out: it names, for type checkers only (it never
    runs), the module behind each public name its `__getattr__` loads by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path == PACKAGE / "__init__.py":
        tree.body = [n for n in tree.body if not _type_checking(n)]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "shiftbench":  # `from shiftbench import x`: x may be a module
                found += [f"shiftbench.{a.name}" for a in node.names]
            elif node.module.startswith("shiftbench."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("shiftbench")]
    return found


def _type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in {
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    }


def allowed(me: tuple[str, str], other: tuple[str, str]) -> bool:
    """A module imports its own layer or one below; a stage, of the stages, only itself."""
    if me[0] == "stage" and other[0] == "stage":
        return other == me
    return RANK[other[0]] <= RANK[me[0]]


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at `path` in the package whose folder is `root` (the
    package is shiftbench, whatever a clone's folder is called)."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("shiftbench", *parts))


def module_edges(path: Path, root: Path, known: set[str]) -> set[str]:
    """The modules of `known` that the module at `path` imports, at any depth of its code:
    relative names resolved, `from a import b` read as module a.b when there is one, and a
    name inside a module read as that module. A top-level `if TYPE_CHECKING:` block is
    left out: it never runs, so it cannot take part in a cycle."""
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    targets = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    tree.body = [n for n in tree.body if not _type_checking(n)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            targets += [f"{base}.{a.name}" for a in node.names]
    found = set()
    for target in targets:
        while target and target not in known:  # a name in a module: that module
            target = target.rpartition(".")[0]
        if target and target != me:
            found.add(target)
    return found


def import_cycles(root: Path, files: Iterable[Path]) -> list[list[str]]:
    """The import cycles among the modules `files` of the package at `root`: each strongly
    connected group of two or more modules, sorted (Tarjan's algorithm)."""
    paths = {module_name(f, root): f for f in files}
    graph = {m: module_edges(f, root, set(paths)) for m, f in paths.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(groups)


def test_no_import_cycle():
    """No two modules import each other, however indirectly, lazy imports counted: a
    cycle means a piece both need lives in the wrong one of them."""
    assert import_cycles(PACKAGE, package_files()) == []


def test_the_cycle_check_finds_a_planted_cycle(tmp_path):
    """The checker itself: two modules that import each other, one of them only inside a
    function and by a relative name, are one cycle; a third that imports one is outside it."""
    root = tmp_path / "planted"
    (root / "core").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "core" / "__init__.py").write_text("", encoding="utf-8")
    a = root / "core" / "a.py"
    a.write_text("from shiftbench.core.b import helper\n", encoding="utf-8")
    b = root / "core" / "b.py"
    b.write_text("def helper():\n    from . import a\n    return a\n", encoding="utf-8")
    c = root / "c.py"
    c.write_text("import shiftbench.core.a\n", encoding="utf-8")
    files = [a, b, c, root / "__init__.py", root / "core" / "__init__.py"]
    assert import_cycles(root, files) == [["shiftbench.core.a", "shiftbench.core.b"]]
    b.write_text("def helper():\n    return 1\n", encoding="utf-8")
    assert import_cycles(root, files) == []


LIMIT = 600  # lines a module may hold
# Modules still over the limit, each with its length when the limit came in: every one is
# to be split by its cohesive pieces. A ceiling only comes down (a module that grows past
# its own fails), and a module back under the limit leaves the list.
CEILINGS: dict[str, int] = {}


def too_long(root: Path, files: Iterable[Path], ceilings: dict[str, int]) -> list[str]:
    """The modules of `files` (in the package at `root`) longer than the limit or their
    own ceiling, and the ceilings no longer needed, each as a line saying which."""
    faults = []
    lengths = {
        f.relative_to(root).as_posix(): len(f.read_text(encoding="utf-8").splitlines())
        for f in files
    }
    for name, length in sorted(lengths.items()):
        ceiling = ceilings.get(name, LIMIT)
        if length > ceiling:
            what = f"its ceiling {ceiling} (to be split)" if name in ceilings else f"{LIMIT} lines"
            faults.append(f"{name}: {length} lines, over {what}")
    for name, ceiling in sorted(ceilings.items()):
        if lengths.get(name, 0) <= LIMIT:
            faults.append(f"{name}: within {LIMIT} lines now; strike its ceiling {ceiling}")
    return faults


def test_no_module_is_over_600_lines():
    """A module holds one cohesive piece; past 600 lines it holds several. The modules not
    yet split may not grow."""
    assert too_long(PACKAGE, package_files(), CEILINGS) == []


def test_the_length_check_finds_a_planted_long_module(tmp_path):
    """The checker itself: a new module of 601 lines fails, one of 600 passes; a listed
    module may not pass its ceiling, and a ceiling it no longer needs is named."""
    (tmp_path / "core").mkdir()
    short, long = tmp_path / "core" / "short.py", tmp_path / "core" / "long.py"
    short.write_text("x = 1\n" * 600, encoding="utf-8")
    long.write_text("x = 1\n" * 601, encoding="utf-8")
    assert too_long(tmp_path, [short, long], {}) == ["core/long.py: 601 lines, over 600 lines"]
    assert too_long(tmp_path, [short, long], {"core/long.py": 601}) == []
    assert too_long(tmp_path, [short, long], {"core/long.py": 650, "core/short.py": 610}) == [
        "core/short.py: within 600 lines now; strike its ceiling 610"
    ]
    long.write_text("x = 1\n" * 700, encoding="utf-8")
    assert too_long(tmp_path, [short, long], {"core/long.py": 650}) == [
        "core/long.py: 700 lines, over its ceiling 650 (to be split)"
    ]


def test_layers_import_one_way():
    wrong = set()
    for path in package_files():
        name = path.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
        me = layer(f"shiftbench.{name}".removesuffix(".__init__"))
        for target in imports(path):
            if not allowed(me, layer(target)):
                wrong.add((path.relative_to(PACKAGE).as_posix(), target))
    assert wrong == PENDING


def test_gen_and_validate_never_import_each_other():
    for stage, other in (("gen", "validate"), ("validate", "gen")):
        for path in (PACKAGE / stage).rglob("*.py"):
            edges = [t for t in imports(path) if t.startswith(f"shiftbench.{other}")]
            assert not edges, f"{path.relative_to(PACKAGE)} imports {edges}"


def test_only_the_command_line_imports_click():
    users = set()
    for path in package_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "click" or n.startswith("click.") for n in names):
                users.add(path.relative_to(PACKAGE).parts[0])
    assert users == {"cli"}


def test_the_package_root_holds_only_its_entry_points():
    """Every module lives in a layer's folder; the root keeps the package's face alone.
    (setup.py is the build's, not the package's: the wheel leaves it out.)"""
    loose = {p.name for p in PACKAGE.glob("*.py")} - {"setup.py"}
    assert loose == ROOT_MODULES


def test_the_spec_reader_and_the_runner_need_no_command_line():
    """Reading a spec and running it are library code: they take ranges, choices and
    defaults from the stage settings, never from the options."""
    for path in [*(PACKAGE / "runner").glob("*.py"), PACKAGE / "core" / "settings.py"]:
        edges = [t for t in imports(path) if t.startswith("shiftbench.cli")]
        assert not edges, f"{path.relative_to(PACKAGE)} imports {edges}"


def test_the_walk_sees_lazy_imports(tmp_path):
    """The checker itself: an import inside a function body is found."""
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from shiftbench.gen import rewrite\n", encoding="utf-8")
    assert imports(sample) == ["shiftbench.gen"]
    assert not allowed(layer("shiftbench.validate.report"), layer("shiftbench.gen"))
    assert allowed(layer("shiftbench.gen.rewrite"), layer("shiftbench.llm.calls"))
    assert not allowed(layer("shiftbench.core.data.sources"), layer("shiftbench.llm.cache"))
    assert not allowed(layer("shiftbench.gen.api"), layer("shiftbench.runner.spec"))
    assert allowed(layer("shiftbench.runner.pipeline"), layer("shiftbench.cards.api"))
    assert not allowed(layer("shiftbench.runner.pipeline"), layer("shiftbench.cli.commands"))


def test_a_deprecation_raised_at_a_shiftbench_call_fails_the_tests():
    """pyproject's filters turn a deprecation attributed to shiftbench's code (or the
    tests') into an error, while other libraries' internal ones stay quiet."""
    import warnings

    import pytest

    for module in ("shiftbench.gen.api", "shiftbench", "test_api"):
        for category in (DeprecationWarning, FutureWarning):
            with pytest.raises(category):
                warnings.warn_explicit("old", category, "x.py", 1, module=module)
    warnings.warn_explicit("old", DeprecationWarning, "x.py", 1, module="transformers.utils")
