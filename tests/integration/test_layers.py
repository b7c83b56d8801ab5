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

from support.layers import PACKAGE, package_files


def test_no_command_runs_another():
    """The spec runner and the Ray runner call stage functions, never a command."""
    callers = [
        path.relative_to(PACKAGE).as_posix()
        for path in package_files()
        if ".invoke(" in path.read_text(encoding="utf-8")
    ]
    assert callers == []


def test_the_records_name_every_key_gen_writes(invoke, tmp_path, scripted):
    """core/records.py types shiftbench.json; the writers build some records with a cast
    (a generator's description is spread in), so this reads what gen really writes, a
    variant, a control and the original, and finds every key declared; and the row
    statuses the Literal names are the checks' names and the statuses gen (and hteb import)
    give."""
    import json
    from typing import get_args, get_type_hints

    from shiftbench.core.records import ConfigRecord, RowStatus, RunMeta, SourceRecord
    from shiftbench.core.text.checks import CHECKS
    from shiftbench.gen.hteb import FALLBACK
    from shiftbench.gen.rewrite import EMPTY_INPUT, NOT_APPLICABLE

    out = tmp_path / "run"
    for transforms in ("paraphrase", "word-jumble-1"):
        made = invoke("gen", "sample", "--limit", "3", "-b", "scripted", "-t", transforms,
                      "-q", "-o", out)  # fmt: skip
        assert made.exit_code == 0, made.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert set(meta) <= set(get_type_hints(RunMeta))
    assert set(meta["source"]) <= set(get_type_hints(SourceRecord))
    kinds = set()
    for info in meta["configs"].values():
        assert set(info) <= set(get_type_hints(ConfigRecord)), set(info) - set(
            get_type_hints(ConfigRecord)
        )
        kinds.add(info["kind"])
    assert kinds == {"original", "transform", "control"}
    assert set(get_args(RowStatus)) == {"ok", EMPTY_INPUT, NOT_APPLICABLE, FALLBACK, *CHECKS}
