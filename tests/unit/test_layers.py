"""Dependencies run one way, and the folders show it: core <- llm <- stages <- runner <- cli.

`core/` (with `errors.py` and the package's `__init__.py`) imports only itself; `llm/`
(backends, the generation cache, calls, log-probabilities) imports the core; a stage
(`gen/`, `validate/`, `evaluate/`, `cards/`, `human_eval/`) imports the core, the LLM layer
and itself, never another stage; `runner/` (the spec and the pipeline that runs it) calls
the stages; `cli/` (the root group, one module per stage under `commands/`, the reference
it writes) sits on top. A module's layer is the folder it is in, so a new module needs no
list. The imports are read from the source files, function level ones included, so a lazy
import cannot hide an edge.
"""

from __future__ import annotations

import ast
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
