"""`shiftbench run`: every stage of a release, from one spec, resumable.

The stages run in order (gen for every source, then validate for every source, and so
on), each through the stage function the command calls, with the spec's settings. Each
source gets one folder under the spec's output:

    <output>/<folder>/run/          the run folder (a Hub dataset repository)
    <output>/<folder>/human-eval/   the rating batches and their exports
    <output>/<folder>/results/      evaluate's results folder (the spec's evaluate.models)
    <output>/<folder>/state.json    which stages finished, and on what

The run folder is the one `gen SOURCE -o <output>/<folder>/run` writes, with the same
configs under the same names; the sibling folders keep what the later stages make beside
it (evaluate --faithful human finds the ratings in human-eval/ by that layout).

A stage is skipped when state.json says it finished on the same inputs: the same spec
settings for that stage and the same files it reads. Within gen, finished rows come
from the generation cache, so a run killed midway and started again only makes what is
missing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shiftbench import __version__
from shiftbench.cards.api import ReleaseSettings, publish_release, write_card
from shiftbench.core.data.hubfolder import folder_digest
from shiftbench.core.data.jsonfiles import read_json
from shiftbench.core.data.resultsfolder import RESULTS_FILE
from shiftbench.core.data.runfolder import SPEC_FILE as SPEC_COPY
from shiftbench.core.data.sources import SourceArguments, load_source
from shiftbench.core.messages import counted, differences, report
from shiftbench.core.protocols import DEFAULT_PROTOCOL
from shiftbench.core.ratings import RATINGS_FILE
from shiftbench.core.text.transforms import TARGETED_PROMPT
from shiftbench.errors import InputError, RuntimeFault, ShiftbenchError
from shiftbench.evaluate.settings import EvalSettings
from shiftbench.gen.api import GenSettings, TooManyFailures, generate, plan_generation
from shiftbench.gen.estimate import combine
from shiftbench.human_eval.api import (
    BatchSettings,
    ExportSettings,
    export_batches,
    make_batches,
)
from shiftbench.human_eval.export import EXPORT_DIR
from shiftbench.runner.spec import (
    STAGES,
    TOP_FIELDS,
    Spec,
    folder_name,
    gen_settings,
    stage_settings,
)
from shiftbench.validate.api import table_printer, validate_runs
from shiftbench.validate.settings import ValidateSettings

log = logging.getLogger(__name__)

STATE_FILE = "state.json"
RUN_DIR = "run"
HUMAN_DIR = "human-eval"
RESULTS_DIR = "results"
SHARDS_DIR = "shards"  # the Ray runner's shard run folders, merged into run/


@dataclass
class Unit:
    """One source of the spec and its folders."""

    source: dict[str, Any]
    root: Path

    @property
    def folder(self) -> str:
        return self.root.name

    @property
    def run(self) -> Path:
        return self.root / RUN_DIR

    @property
    def human(self) -> Path:
        return self.root / HUMAN_DIR

    @property
    def results(self) -> Path:
        return self.root / RESULTS_DIR

    def state(self) -> dict[str, Any]:
        path = self.root / STATE_FILE
        if not path.is_file():
            return {}
        state = read_json(path)
        if not isinstance(state, dict) or not all(isinstance(v, str) for v in state.values()):
            raise InputError(
                f"{path}: not the record of finished stages (an object of stage -> "
                "fingerprint); delete it, and every stage runs again"
            )
        return state

    def mark(self, stage: str, fingerprint: str) -> None:
        state = self.state()
        state[stage] = fingerprint
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(self.root / STATE_FILE)


def units(spec: Spec) -> list[Unit]:
    out = Path(spec.values["output"])
    return [Unit(s, out / folder_name(s)) for s in spec.sources]


def stages_for(spec: Spec, until: str | None) -> list[str]:
    chosen = list(STAGES if until is None else STAGES[: STAGES.index(until) + 1])
    if not spec.values["evaluate"]["models"] and "evaluate" in chosen:
        if until == "evaluate":
            raise InputError("--until evaluate: the spec names no evaluate.models to score")
        chosen.remove("evaluate")
    if spec.values["release"]["repo"] is None and "publish" in chosen:
        if until == "publish":
            raise InputError("--until publish: the spec names no release.repo to publish to")
        chosen.remove("publish")
    return chosen


def repo_for(spec: Spec, unit: Unit) -> str | None:
    repo = spec.values["release"]["repo"]
    if repo is None:
        return None
    return str(repo) if len(spec.sources) == 1 else f"{repo}-{unit.folder}"


# -- fingerprints: what each stage depends on --------------------------------------------


def _sha(*parts: Any) -> str:
    digest = hashlib.sha256(__version__.encode())
    for part in parts:
        data = part if isinstance(part, bytes) else json.dumps(part, sort_keys=True).encode()
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _file(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b""


def data_digest(run: Path) -> str:
    """The run folder's data: shiftbench.json and every config's files (not the card,
    the validation reports or the spec copy)."""
    digest = hashlib.sha256()
    if not run.is_dir():
        return ""
    for path in sorted(p for p in run.rglob("*") if p.is_file()):
        rel = path.relative_to(run)
        top = rel.parts[0]
        if top in ("README.md", SPEC_COPY) or top.startswith(("validation", ".")):
            continue
        digest.update(str(rel).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def prompt_path(value: str) -> str:
    """The file of a prompt_file entry (FILE or TRANSFORM[:STEP]=FILE)."""

    found = TARGETED_PROMPT.match(value)
    return found[3] if found else value


def fingerprint(spec: Spec, unit: Unit, stage: str) -> str:
    v = spec.values
    if stage == "gen":
        # where finished rows are cached changes nothing gen writes
        keys = [f.key for f in TOP_FIELDS if f.command == "gen" and f.key != "cache_dir"]
        settings = {k: v[k] for k in keys}
        prompt = b"".join(_file(Path(prompt_path(x))) for x in v["prompt_file"] or ())
        return _sha(stage, unit.source, settings, v["generator"], prompt)
    data = data_digest(unit.run)
    if stage == "validate":
        markers = _file(Path(v["validate"]["markers"])) if v["validate"]["markers"] else b""
        return _sha(stage, v["validate"], data, markers)
    if stage == "human-eval":
        scheme = _file(Path(v["human_eval"]["scheme_file"])) if v["human_eval"]["scheme_file"] \
            else b""  # fmt: skip
        return _sha(stage, v["human_eval"], data, scheme)
    if stage == "evaluate":
        e = v["evaluate"]
        models = [_model_files(m) for m in e["models"]]
        read: tuple[bytes, ...] = ()  # what --faithful reads besides the data
        if e["faithful"] is not None:
            read = (_file(unit.run / "validation.json"), _file(unit.human / "human_eval.json"),
                    _file(unit.human / RATINGS_FILE))  # fmt: skip
        return _sha(stage, e, models, data, *read)
    scores = (_file(unit.results / RESULTS_FILE),) if _scored(spec, unit) else ()
    if stage == "card":
        return _sha(
            stage, v["release"], repo_for(spec, unit), data, spec.sha256,
            _file(unit.run / "validation.json"), _file(unit.human / "human_eval.json"),
            *scores,
        )  # fmt: skip
    return _sha(stage, v["release"], repo_for(spec, unit), folder_digest(unit.run),
                _file(unit.human / "human_eval.json"), *scores)  # fmt: skip


def _model_files(model: str) -> Any:
    """A model as the fingerprint sees it: its name, and for a local folder each file's
    name, size and time, so that new weights under the same path are scored again."""
    from shiftbench.core.models.names import split_named

    folder = Path(split_named(model, "model")[1]) if not Path(model).exists() else Path(model)
    if not folder.is_dir():
        return model
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return [model, [(str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                    for p in files]]  # fmt: skip


def _scored(spec: Spec, unit: Unit) -> bool:
    """Whether the card and release carry the evaluate stage's scores: the spec names
    models and their results are there."""
    return bool(spec.values["evaluate"]["models"]) and (unit.results / RESULTS_FILE).is_file()


def finished(spec: Spec, unit: Unit, stage: str) -> bool:
    """Whether the stage's last run used exactly these inputs, and its output is there."""
    if unit.state().get(stage) != fingerprint(spec, unit, stage):
        return False
    if stage == "gen":
        return (unit.run / "shiftbench.json").is_file()
    if stage == "validate":
        return (unit.run / "validation.json").is_file()
    if stage == "human-eval":
        return (unit.human / "batch.json").is_file()
    if stage == "evaluate":
        return (unit.results / RESULTS_FILE).is_file()
    if stage == "card":
        return (unit.run / "README.md").is_file()
    return True


# -- the stages ---------------------------------------------------------------------------


def _source_name(spec: Spec, source: dict[str, Any]) -> str:
    """A source named by a path relative to the spec is read from there."""
    name = str(source["name"])
    beside = spec.path.resolve().parent / name
    return str(beside) if ("/" in name or name.startswith(".")) and beside.exists() else name


def gen_call(spec: Spec, unit: Unit, quiet: bool) -> tuple[SourceArguments, GenSettings]:
    """What the spec gives gen for one source: `load_source`'s arguments and the settings.
    The protocol's transforms, seeds, sampling and rewritten parts hold wherever the spec
    leaves the key out; a key the spec sets replaces the preset's (and is recorded so)."""

    v, s = spec.values, unit.source
    source = SourceArguments(
        name=_source_name(spec, s), task_type=s["task_type"], data_dir=s["data_dir"],
        subsets=tuple(s["subsets"]), splits=tuple(s["splits"]),
        source_language=s["source_language"],
    )  # fmt: skip
    settings = gen_settings(v, s, output=unit.run, quiet=quiet)
    return source, settings


@dataclass
class Context:
    """What every stage of one `run` shares: the loaded generators (one serves every
    source) and whether progress bars show."""

    quiet: bool
    engines: dict[str, Any] = field(default_factory=dict)


def run_gen(spec: Spec, unit: Unit, ctx: Context) -> None:

    source, settings = gen_call(spec, unit, ctx.quiet)
    scale = spec.values["scale"]
    if scale["runner"] == "ray":
        from shiftbench.gen.ray_runner import gen_on_ray

        report(log, gen_on_ray(source, settings, unit.root / SHARDS_DIR, unit.run, scale))
        return
    try:
        result = generate(load_source(**source), settings, engines=ctx.engines)
    except TooManyFailures as exc:
        report(log, exc.result.summary())
        raise
    if result.configs:  # a call that made nothing reports its line itself
        report(log, result.summary())


def copy_spec(spec: Spec, unit: Unit) -> None:
    """The spec travels with the run folder (and so into its card and release)."""
    target = unit.run / SPEC_COPY
    if unit.run.is_dir() and _file(target) != spec.text.encode("utf-8"):
        target.write_text(spec.text, encoding="utf-8")


def run_validate(spec: Spec, unit: Unit, ctx: Context) -> None:

    # the judges' cache is the spec's top-level cache_dir, gen's too
    v = spec.values
    settings = stage_settings(
        ValidateSettings, v["validate"], cache_dir=v["cache_dir"], quiet=ctx.quiet
    )
    validate_runs((unit.run,), settings, on_config=table_printer())


def run_human_eval(spec: Spec, unit: Unit, ctx: Context) -> None:

    h = spec.values["human_eval"]
    if unit.human.exists():
        ratings = unit.human / RATINGS_FILE
        if ratings.is_file() and ratings.read_text(encoding="utf-8").strip():
            raise InputError(
                f"{unit.human} already holds ratings and {_batch_changes(unit, h)}; "
                "move it away to make new batches"
            )
        shutil.rmtree(unit.human)
    settings = stage_settings(BatchSettings, h)
    for line in make_batches(unit.run, unit.human, settings).summary().splitlines():
        report(log, line)
    for fmt in dict.fromkeys(h["formats"]):
        # the completion code and submit URL are the prolific format's alone
        alone = {} if fmt == "prolific" else {"completion_code": None, "submit_url": None}
        written = export_batches(unit.human, stage_settings(ExportSettings, h, fmt=fmt, **alone))
        report(log, f"wrote {counted(len(written), 'file')} to {unit.human / EXPORT_DIR / fmt}")


def _batch_changes(unit: Unit, h: dict[str, Any]) -> str:
    """What changed since the batch folder's batches were made: the spec's settings that
    batch.json records (old and new value), else the run folder or the export settings."""
    from shiftbench.core.ratings import read_batch
    from shiftbench.human_eval.batches import load_scheme

    try:
        description, _ = read_batch(unit.human)
    except InputError:  # no readable batch: nothing to compare with
        return "its settings or run folder changed"
    scheme_file = Path(h["scheme_file"]) if h["scheme_file"] else None
    scheme = load_scheme(h["scheme"], scheme_file)
    held = description.get("scheme") or {}
    before = {
        "scheme": held.get("name"),
        "run": description.get("run"),
        "per_stratum": description.get("per_stratum"),
        "raters": description.get("raters"),
        "controls": int(description.get("controls_per_batch", 0)) // 2,
        "tolerance": description.get("tolerance"),
        "seed": description.get("seed"),
    }
    after = {
        "scheme": scheme.get("name"),
        "run": str(unit.run.resolve()),
        **{k: h[k] for k in ("per_stratum", "raters", "controls", "tolerance", "seed")},
    }
    if held != scheme and before["scheme"] == after["scheme"]:
        return "its scheme's text changed"
    changed = differences(
        {f"human_eval.{k}": v for k, v in before.items() if k != "run"},
        {f"human_eval.{k}": v for k, v in after.items() if k != "run"},
    )
    if changed:
        return f"its settings changed ({changed})"
    if before["run"] != after["run"]:
        return f"it rates another run folder ({before['run']} -> {after['run']})"
    return f"the rows of {unit.run} or the export settings changed"


def _human_dirs(unit: Unit) -> tuple[Path, ...]:
    """The batch folder, once its report exists (after ratings are imported)."""
    return (unit.human,) if (unit.human / "human_eval.json").is_file() else ()


def _release(spec: Spec, unit: Unit) -> ReleaseSettings:
    """The spec's release settings for one source: its own repository, batch folder and
    results folder."""
    scored = (str(unit.results),) if _scored(spec, unit) else ()
    return stage_settings(
        ReleaseSettings, spec.values["release"], repo=repo_for(spec, unit),
        human_dirs=_human_dirs(unit), results=scored,
    )  # fmt: skip


def evaluate_settings(spec: Spec, unit: Unit, quiet: bool) -> EvalSettings:
    """What the spec gives evaluate for one source: its results go to <folder>/results."""
    return stage_settings(EvalSettings, spec.values["evaluate"], output=unit.results, quiet=quiet)


def run_evaluate(spec: Spec, unit: Unit, ctx: Context) -> None:
    """Score the spec's models as `shiftbench evaluate RUN -o RESULTS` does, and report its
    tables. The results folder is made anew: its inputs changed (the stage would be
    skipped otherwise), and it is to hold the spec's models on this data, nothing older."""
    from shiftbench.core.tables import plain_table
    from shiftbench.evaluate.api import Evaluation
    from shiftbench.evaluate.report.tables import axis_rows
    from shiftbench.evaluate.results import format_table

    if unit.results.exists():
        shutil.rmtree(unit.results)
    evaluation = Evaluation(unit.run, evaluate_settings(spec, unit, ctx.quiet))
    controls = evaluation.controls
    if controls:
        more = ", ..." if len(controls) > 3 else ""
        report(
            log,
            f"{counted(len(controls), 'control config')} ({', '.join(controls[:3])}"
            f"{more}) {'is' if len(controls) == 1 else 'are'} left to 'shiftbench probe'",
        )
    main_score = evaluation.collection.source["main_score"]

    def show(model: str, records: list[Any]) -> None:
        table = format_table(model, main_score, records, evaluation.scoring.name)
        for line in [*table.splitlines(), ""]:
            report(log, line)

    result = evaluation.score(spec.values["evaluate"]["models"], on_model=show)
    if any(m["transforms"] for m in result.summary["models"].values()):
        for line in [*plain_table(*axis_rows(result.summary)).splitlines(), ""]:
            report(log, line)
    report(log, f"results: {result.folder}")


def run_card(spec: Spec, unit: Unit, ctx: Context) -> None:
    """The card in the run folder describes its own JSON Lines files; the release's
    (Parquet by default) is made when it is published."""
    import dataclasses

    settings = dataclasses.replace(_release(spec, unit), data_format="jsonl", rai=(),
                                   date_published=None)  # fmt: skip
    report(log, f"card: {write_card(unit.run, settings)}")


def run_publish(spec: Spec, unit: Unit, ctx: Context) -> None:

    # what was published, and how to load it, always shows
    publish_release(unit.run, _release(spec, unit))


RUNNERS = {
    "gen": run_gen,
    "validate": run_validate,
    "human-eval": run_human_eval,
    "evaluate": run_evaluate,
    "card": run_card,
    "publish": run_publish,
}


def execute(spec: Spec, until: str | None = None, *, quiet: bool = False) -> None:
    """Run every stage for every source, skipping finished ones; stop at a failed gate.

    Args:
        spec: The checked spec (`shiftbench.runner.spec.read_spec`).
        until: The last stage to run; None: every stage the spec has.
        quiet: No progress bars.

    Each stage's progress and summary lines are reported (core/messages.py).
    """
    ctx = Context(quiet)
    chosen = stages_for(spec, until)
    if "publish" in chosen:
        from shiftbench.core.hub import require_token

        require_token()  # before hours of generation, not after
    todo = units(spec)
    for stage in chosen:
        gate: list[str] = []
        for unit in todo:
            label = f"[{stage}] {unit.folder}"
            copy_spec(spec, unit)
            if finished(spec, unit, stage):
                report(log, f"{label}: finished earlier, skipped")
                continue
            report(log, f"{label}: running")
            try:
                RUNNERS[stage](spec, unit, ctx)
            except RuntimeFault as exc:
                if stage != "validate":
                    raise RuntimeFault(f"{label}: {exc}") from None
                gate.append(f"{unit.folder}: {exc}")
                continue
            except ShiftbenchError as exc:
                raise type(exc)(f"{label}: {exc}") from None
            copy_spec(spec, unit)
            unit.mark(stage, fingerprint(spec, unit, stage))
        if gate:
            raise RuntimeFault(
                f"stopped at the validation gate (validate.max_error_rate "
                f"{spec.values['validate']['max_error_rate']:g}): {'; '.join(gate)}; the "
                "reports are in each run folder's validation.md"
            )
    report(
        log,
        f"done: {', '.join(chosen)} for {counted(len(todo), 'source')} in {spec.values['output']}",
    )


# -- the dry run ----------------------------------------------------------------------------


def _columns(figures: tuple[int, ...], known: bool) -> str:
    configs, texts, calls, cached, shared, to_make = figures
    shown = str(cached) if known else "?"
    return f"{configs:>7} {texts:>7} {calls:>7} {shown:>7} {shared:>7} {to_make:>8}"


def plan(spec: Spec, until: str | None) -> str:
    """What `run` would do: per source, the configs gen would write and the generator calls
    they need (as `gen --dry-run` counts them: the protocol, the rewritten parts, each
    field's language, the cache and greedy sharing across seeds all taken into account),
    and which stages are finished already. Reads the sources; loads no model; writes
    nothing."""

    v = spec.values
    chosen = stages_for(spec, until)
    given = [
        f"{key} {', '.join(str(x) for x in v[key])}"
        for key in ("transforms", "seeds", "rewrite")
        if v[key]
    ]
    lines = [
        f"spec {spec.path} (sha256 {spec.sha256[:16]}): stages {', '.join(chosen)}",
        f"generator: {v['generator']['backend']} {v['generator']['model'] or '(default model)'}; "
        f"protocol {v['protocol'] or DEFAULT_PROTOCOL}" + "".join(f"; {g}" for g in given),
        "",
        f"{'source':<28} {'configs':>7} {'texts':>7} {'calls':>7} {'cached':>7} {'shared':>7} "
        f"{'to make':>8}  stages finished",
    ]
    totals = [0, 0, 0, 0, 0, 0]
    known = True
    estimates = []
    for unit in units(spec):
        source, settings = gen_call(spec, unit, quiet=True)
        planned = plan_generation(load_source(**source), settings)
        known = known and planned.model_known
        estimates += [planned.estimate] if planned.estimate else []
        cached = sum(c.cached or 0 for c in planned.configs)
        figures = (
            len(planned.configs), sum(c.texts for c in planned.configs), planned.calls,
            cached, sum(c.shared for c in planned.configs), planned.to_make,
        )  # fmt: skip
        done = [stage for stage in chosen if finished(spec, unit, stage)]
        lines.append(
            f"{unit.folder:<28} {_columns(figures, planned.model_known)}  {', '.join(done) or '-'}"
        )
        totals = [a + b for a, b in zip(totals, figures, strict=True)]
    lines.append(f"{'all':<28} {_columns(tuple(totals), known)}")
    lines += [
        "",
        "configs: those gen would write (finished ones are left out); texts: unique texts sent;",
        "calls: first attempts, one per text and step (retries and larger budgets come on "
        "top); cached: answered by the cache;",
        "shared: made once for an earlier config (greedy decoding shares calls across seeds).",
        f"output: {v['output']}/<source>/{{{RUN_DIR},{HUMAN_DIR},"
        + (f"{RESULTS_DIR}," if "evaluate" in chosen else "")
        + f"{STATE_FILE}}}",
    ]
    if not known:
        lines.append(
            "cached: unknown (?), since the model's precision is known only once it is "
            "loaded; finished configs were not checked."
        )
    estimate = combine(estimates)
    if estimate is not None:
        lines += estimate.lines(
            "'shiftbench gen SOURCE --dry-run --calibrate' with this generator measures one, "
            "and every gen run records what it measured"
        )
        later = [stage for stage in chosen if stage != "gen"]
        if later and estimate.seconds is not None:
            comes = "comes" if len(later) == 1 else "come"
            lines.append(f"that time is gen's alone; {', '.join(later)} {comes} on top")
    repo = v["release"]["repo"]
    if repo and "publish" in chosen:
        lines.append(
            "publish: "
            + ", ".join(f"{repo_for(spec, u)}@v{v['release']['version']}" for u in units(spec))
        )
    return "\n".join(lines)
