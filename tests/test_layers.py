"""Dependencies run one way: core <- llm <- stages <- the command line.

The core modules (the package root: sources, the run folder, languages, checks, transforms,
ratings, encoders, statistics) import only each other; the LLM layer (`llm/`: backends,
the generation cache, calls, log-probabilities) imports the core; a stage (gen, validate,
evaluate, cards, human_eval) imports the core, the LLM layer and itself, never another
stage and never the command line. The imports are read from the source files, function
level ones included, so a lazy import cannot hide an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
STAGES = {"gen", "validate", "evaluate", "cards", "human_eval"}
TOP = {"cli", "commands", "clidoc", "pipeline", "spec", "__main__"}  # command line, spec runner
SKIP = {"tests", "bench", "build", "docs", "sample"}

# Edges still to remove, each named so that removing one fails this test until it is
# struck from the list (and a new one fails it at once).
PENDING: set[tuple[str, str]] = set()
# Modules that may import click: the command line itself (its commands, and clidoc, which
# writes the CLI reference from --help).
CLICK_MODULES = {"cli.py", "clidoc.py"} | {
    f"commands/{p.name}" for p in (PACKAGE / "commands").glob("*.py") if p.name != "__init__.py"
}
CLICK_PENDING: set[str] = set()


def layer(module: str) -> tuple[str, str]:
    parts = module.split(".")
    if len(parts) == 1:
        return "core", ""
    if parts[1] in STAGES:
        return "stage", parts[1]
    if parts[1] == "llm":
        return "llm", ""
    if parts[1] in TOP:
        return "top", parts[1]
    return "core", parts[1]


def package_files() -> list[Path]:
    def inside(f: Path) -> bool:
        folders = f.relative_to(PACKAGE).parts[:-1]
        return not any(p in SKIP or p.startswith(".") or p.endswith(".egg-info") for p in folders)

    return sorted(f for f in PACKAGE.rglob("*.py") if inside(f))


def imports(path: Path) -> list[str]:
    """Every shiftbench module `path` imports, at any depth of its code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "shiftbench":  # `from shiftbench import x`: x may be a module
                found += [f"shiftbench.{a.name}" for a in node.names]
            elif node.module.startswith("shiftbench."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("shiftbench")]
    return found


def allowed(me: tuple[str, str], other: tuple[str, str]) -> bool:
    if me[0] == "core":
        return other[0] == "core"
    if me[0] == "llm":
        return other[0] in {"core", "llm"}
    if me[0] == "stage":
        return other[0] in {"core", "llm"} or other == me
    return True


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
                users.add(path.relative_to(PACKAGE).as_posix())
    assert users == CLICK_MODULES | CLICK_PENDING


def test_the_spec_reader_and_the_runner_need_no_command_line():
    """Reading a spec and running it are library code: they take ranges, choices and
    defaults from the stage settings, never from the options."""
    command_line = ("shiftbench.cli", "shiftbench.commands", "shiftbench.clidoc")
    for name in ("spec.py", "pipeline.py", "settings.py"):
        edges = [t for t in imports(PACKAGE / name) if t.startswith(command_line)]
        assert not edges, f"{name} imports {edges}"


def test_the_walk_sees_lazy_imports(tmp_path):
    """The checker itself: an import inside a function body is found."""
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from shiftbench.gen import rewrite\n", encoding="utf-8")
    assert imports(sample) == ["shiftbench.gen"]
    assert not allowed(layer("shiftbench.validate.report"), layer("shiftbench.gen"))
    assert allowed(layer("shiftbench.gen.rewrite"), layer("shiftbench.llm.calls"))


def test_no_command_runs_another():
    """The spec runner and the Ray runner call stage functions, never a command."""
    callers = [
        path.relative_to(PACKAGE).as_posix()
        for path in package_files()
        if ".invoke(" in path.read_text(encoding="utf-8")
    ]
    assert callers == []


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
