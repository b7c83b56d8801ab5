"""The command line starts light: `shiftbench --help` (and any command's) loads none of the
heavy libraries a stage needs (they are imported when a stage runs), and its whole module
count stays within a budget. Modules are counted, not seconds, so a busy machine cannot
make the test flaky; a new top-level import of a heavy library fails it at once.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Libraries that take seconds (or hundreds of megabytes) to import: only a running stage
# may load them.
HEAVY = {
    "torch", "transformers", "vllm", "mteb", "datasets", "sentence_transformers", "sklearn",
    "matplotlib", "ray", "numpy", "scipy", "pandas", "pyarrow", "huggingface_hub", "lingua",
    "llama_cpp", "ollama", "openai", "httpx", "rapidfuzz", "langdetect", "nltk",
}  # fmt: skip
# Every module `shiftbench --help` may load, the interpreter's own and click's included
# (about 235 today; click alone brings the interpreter to about 105). 298 before the import
# cycles were broken by moving shared pieces into modules of their own (the run folder's
# file readers and safe writes, the release settings): each such piece is one module more
# and no weight, hence 305.
BUDGET = 305


def loaded(args: list[str]) -> list[str]:
    """The modules a fresh interpreter holds after running the CLI with `args`."""
    code = (
        "import json, sys\n"
        "from shiftbench.cli import cli\n"
        f"try:\n    cli({args!r})\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "args", [["--help"], ["gen", "--help"], ["evaluate", "--help"], ["run", "--help"]]
)
def test_help_loads_no_heavy_library_and_few_modules(args):
    modules = loaded(args)
    heavy = sorted({m.split(".")[0] for m in modules} & HEAVY)
    assert heavy == [], f"shiftbench {' '.join(args)} imports {heavy}"
    assert len(modules) <= BUDGET, f"{len(modules)} modules loaded; the budget is {BUDGET}"


@pytest.mark.parametrize("engine", ["transformers", "llama.cpp"])
def test_a_dry_run_names_the_engine_without_loading_it(engine, tmp_path):
    """gen --dry-run describes the embedded backend (its library's version goes into the
    plan's settings) from the installed packages' metadata: no engine library is imported,
    so the plan prints in a fraction of a second instead of after torch's import."""
    if engine == "llama.cpp":
        pytest.importorskip("llama_cpp")
    args = ["gen", "sample", "-t", "paraphrase", "--limit", "2", "--dry-run", "--engine", engine,
            "-q", "-o", str(tmp_path / "run")]  # fmt: skip
    engines = sorted(
        {m.split(".")[0] for m in loaded(args)} & {"torch", "transformers", "llama_cpp"}
    )
    assert engines == []
