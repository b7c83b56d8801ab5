"""evaluate/ in rooms: each name is imported from the module that defines it (no module
re-exports another's), the task types' evaluators share one call, and the names that once
meant different things in different modules are each defined once."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository root is the package
PACKAGE = "shiftbench"


def _sources(under: Path) -> list[Path]:
    """The repository's Python files under `under`: not those of a hidden folder (.git, a
    .venv made in the clone, as CI makes one) or of a build."""
    return [
        path
        for path in sorted(under.rglob("*.py"))
        if not any(p.startswith(".") or p == "build" for p in path.relative_to(ROOT).parts[:-1])
    ]


def _modules(under: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package (and the tests) under `under`."""
    found = {}
    for path in _sources(under):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join((PACKAGE, *parts))] = path
    return found


def _defined(tree: ast.Module) -> set[str]:
    """The names a module binds itself at its top level (imports left out)."""
    names: set[str] = set()
    nodes = list(tree.body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.If | ast.Try | ast.With):
            nodes.extend(ast.iter_child_nodes(node))
    return names


def _all_names(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant)]
    return []


def test_every_evaluate_name_is_imported_from_the_module_that_defines_it():
    """No module under evaluate/ lists in `__all__` a name it does not define, and nothing
    in the package, its tests or benchmarks imports an evaluate name through a module that
    only imported it (evaluate/run.py once re-exported 24 names of collect and results)."""
    evaluate = _modules(ROOT / "evaluate")
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in evaluate.items()}
    defined = {name: _defined(tree) for name, tree in trees.items()}
    faults = [
        f"{evaluate[name].relative_to(ROOT)}: __all__ lists {n}, defined elsewhere"
        for name, tree in trees.items()
        for n in _all_names(tree)
        if n not in defined[name]
    ]
    for path in _sources(ROOT):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.module not in defined:
                continue
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if alias.name not in defined[node.module] and submodule not in defined:
                    faults.append(
                        f"{path.relative_to(ROOT)}:{node.lineno}: {alias.name} from "
                        f"{node.module}, which does not define it"
                    )
    assert faults == []


def test_an_evaluate_module_imports_before_its_code():
    """A module's imports all come first: none after a statement that is not an import
    (the `if TYPE_CHECKING:` block counts as code, so it comes after them)."""
    faults = []
    for path in _modules(ROOT / "evaluate").values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
        code_seen = None
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                if code_seen is not None:
                    faults.append(f"{path.relative_to(ROOT)}:{node.lineno} after line {code_seen}")
            elif code_seen is None:
                code_seen = node.lineno
    assert faults == []


def test_every_task_type_is_scored_by_one_call_in_evaluators():
    """Each registered task type loads `evaluate(scoring)` from a module of
    evaluate/evaluators/."""
    from shiftbench.evaluate.evaluators import EVALUATORS, evaluator

    shapes = {}
    for task_type in EVALUATORS:
        found = evaluator(task_type)
        package = found.__module__.rsplit(".", 1)[0]
        shapes[task_type] = (package, found.__name__, tuple(inspect.signature(found).parameters))
    one = ("shiftbench.evaluate.evaluators", "evaluate", ("scoring",))
    assert shapes == dict.fromkeys(EVALUATORS, one)


def test_each_of_the_once_shared_names_is_defined_once():
    """`Unit`, `units`, `run_gen`, `Stopped`, `summarise`, `render_markdown`, `pair_scores`
    and `read_results` each meant different things in two or three modules; each is now
    defined in one module at most."""
    where: dict[str, list[str]] = {}
    for name, path in _modules(ROOT).items():
        if name.startswith(f"{PACKAGE}.tests") or name.startswith(f"{PACKAGE}.bench"):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    shared = ("Unit", "units", "run_gen", "Stopped", "summarise", "render_markdown")
    shared += ("pair_scores", "read_results")
    assert {n: where[n] for n in shared if len(where.get(n, [])) > 1} == {}
    assert where["Stopped"] == ["llm/backends/base.py"]
