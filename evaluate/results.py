"""evaluate's results on disk: the results document, results.json with its Markdown
report, the per-(model, config) files in mteb's layout with the model's metadata, the
terminal table, and the reader of an earlier results folder."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from shiftbench import __version__
from shiftbench.core.data.resultsfolder import RESULTS_FILE, read_results
from shiftbench.core.data.writes import writing
from shiftbench.core.evidence import flagged_notes
from shiftbench.core.messages import option, report
from shiftbench.core.models.encoders import Encoder
from shiftbench.core.records import (
    ModelResults,
    ReportSummary,
    ResultsDocument,
    ScoreRecord,
    SourceRecord,
)
from shiftbench.core.tables import plain_table
from shiftbench.errors import InputError, RuntimeFault, lock_wait
from shiftbench.evaluate.collect import Collection
from shiftbench.evaluate.report.summary import summarise_results
from shiftbench.evaluate.report.tables import (
    HTEB_NOTE,
    HTEB_POINTS,
    SCORES,
    Figures,
    figures_for,
    markdown_blocks,
    report_blocks,
)
from shiftbench.evaluate.sides import (
    config_label,
)

if TYPE_CHECKING:
    from shiftbench.evaluate.report.summary import ReportSettings

log = logging.getLogger(__name__)
PLOTS = ("bars.png", "heatmap.png", "scatter.png")  # what plots.write_plots draws
HTML_REPORT = "report.html"  # report --html: the report as one page that opens offline
STAGING = ".shiftbench-staging-"  # + pid: a write's files before they move into place


def results_document(
    collection: Collection, per_model: list[tuple[Encoder, list[ScoreRecord]]]
) -> ResultsDocument:
    from importlib.metadata import version

    return {
        "shiftbench_version": __version__,
        "mteb_version": version("mteb"),
        "target": collection.label,
        "source": cast(SourceRecord, collection.source),
        "task_type": collection.source["task_type"],
        "main_score": collection.source["main_score"],
        "models": [{"model": enc.describe(), "results": recs} for enc, recs in per_model],
    }


def named_results(path: Path, name: str | None, item: str) -> ResultsDocument:
    """The results document of a folder (or its results.json), its one model shown as
    `name` when one is given (`item`: the argument as given, for the messages)."""
    document = read_results(path)
    if name is not None:
        models = document["models"]
        if len(models) != 1:
            raise InputError(f"{item}: NAME= names one model, the folder holds {len(models)}")
        models[0]["model"] = {**models[0]["model"], "id": name}
    return document


def model_folder_name(model: str) -> str:
    """A model id as a folder name, the way mteb's results name them (`org__name`): one
    path component that is neither `.`, `..` nor hidden, so no id, revision or source name
    leads out of the results folder."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip("/").replace("/", "__"))
    return name if name and not name.startswith(".") else f"_{name}"


COMMAND_RESULTS = Path("shiftbench-results")  # the commands' results folders, in the current one


def default_output(label: str, root: Path | None = None) -> Path:
    """A target's results folder when none is named: `<root>/<label>`, where `root` is
    None for the Python API's default, `<cache>/results` under $SHIFTBENCH_CACHE_DIR or
    ~/.cache/shiftbench (nothing written into the current folder unasked); the commands
    pass `COMMAND_RESULTS`."""
    from shiftbench.llm.cache import default_cache_dir

    return (root if root is not None else default_cache_dir() / "results") / label


def write_json(path: Path, document: Any) -> None:
    """Write JSON atomically: a crash never leaves half a file under the final name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def model_meta(model: Mapping[str, object]) -> dict[str, object]:
    """mteb's metadata of an evaluated model, as mteb's ResultCache keeps it beside the
    results (`model_meta.json`): the registry's entry when mteb knows the model by its
    name, else an entry naming only the model; the name and revision are the ones the
    results were made with.

    The entry is kept in the cache folder per installed mteb version and model name:
    `import mteb` alone took about a seventh of a whole STSBenchmark evaluate (issue 50),
    and the entry only changes with mteb.
    """
    name = str(model["id"]).removeprefix("mteb:")
    kept = _kept_meta(name)
    out = _cached_json(kept) if kept is not None else None
    if out is None:
        out = _mteb_meta(name)
        if kept is not None:
            # a cache that cannot be written only costs the next run the import
            with contextlib.suppress(OSError):
                write_json(kept, out)
    out.update(name=name, revision=model.get("revision"))
    return out


def _mteb_meta(name: str) -> dict[str, object]:
    import mteb
    from mteb.models import ModelMeta

    try:
        meta = mteb.get_model_meta(name)
    except KeyError:
        meta = ModelMeta.create_empty({"name": name})
    out: dict[str, object] = json.loads(json.dumps(meta.to_dict(), default=str))
    for key, value in out.items():
        # a set of mteb's (training_datasets) comes out in the process's hash order:
        # sorted, equal runs write equal bytes
        if isinstance(getattr(meta, key, None), (set, frozenset)) and isinstance(value, list):
            out[key] = sorted(value, key=str)
    return out


def _kept_meta(name: str) -> Path | None:
    """Where mteb's entry for `name` is kept for the installed mteb (None: no mteb found)."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    from shiftbench.llm.cache import default_cache_dir

    try:
        mteb_version = version("mteb")
    except PackageNotFoundError:
        return None
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:24]
    return default_cache_dir() / "mteb-model-meta" / mteb_version / f"{digest}.json"


def _cached_json(path: Path) -> dict[str, object] | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent, unreadable or torn: ask mteb again
        return None
    return found if isinstance(found, dict) else None


def mteb_layout(document: ResultsDocument) -> dict[Path, dict[str, object]]:
    """Per (model, config): a result file laid out like mteb's (`<model>/<revision>/
    <source>.<config>.json` holding `scores[split]` entries with `hf_subset`, `languages`
    and `main_score`), with shiftbench's own fields under `shiftbench`, and the model's
    `model_meta.json` beside them. The task name is
    `<source>.<config>`, the name `mteb_tasks` gives the config's task, so mteb's
    `ResultCache` reads the folder as results of those tasks."""
    source = document["source"]
    files: dict[Path, dict[str, object]] = {}
    for entry in document["models"]:
        model = entry["model"]
        revision = model_folder_name(model.get("revision") or "no_revision")
        folder = Path(model_folder_name(model["id"])) / revision
        files[folder / "model_meta.json"] = model_meta(model)
        by_config: dict[str, list[ScoreRecord]] = {}
        for record in entry["results"]:
            if not record.get("partial"):  # a query-side or corpus-side figure (sides.py)
                by_config.setdefault(record["config"], []).append(record)
        for config, records in by_config.items():
            scores: dict[str, list[dict[str, object]]] = {}
            for r in records:
                scores.setdefault(r["split"], []).append(
                    {
                        **r["scores"],
                        "main_score": r["main_score"],
                        "hf_subset": r["subset"],
                        "languages": (source.get("languages") or {}).get(r["subset"], []),
                    }
                )
            first = records[0]
            task = f"{source['name']}.{config}"
            files[folder / f"{model_folder_name(task)}.json"] = {
                "dataset_revision": source.get("revision"),
                "task_name": task,
                "mteb_version": document["mteb_version"],
                "scores": scores,
                "evaluation_time": round(sum(r["evaluation_time"] for r in records), 3),
                "kg_co2_emissions": None,
                "shiftbench": {
                    "version": document["shiftbench_version"],
                    "config": config,
                    "kind": first["kind"],
                    "transform": first["transform"],
                    "axis": first["axis"],
                    "seed": first["seed"],
                    "model": model,
                    "per_split": {
                        r["split"]: {
                            k: r.get(k)
                            for k in ("rows", "rows_total", "original_same_rows", "delta", "ci95")
                        }
                        for r in records
                    },
                },
            }
    return files


def results_json(document: Any) -> str:
    """A results document as JSON with no NaN or Infinity in it (JSON has neither, and
    readers refuse them): a figure a metric leaves undefined on its rows (one of mteb's
    means over no document, say) is null. A record's main score, delta or original score
    cannot be null: add_results refuses to write one that is not finite."""
    return json.dumps(_defined(document), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _defined(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _defined(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_defined(v) for v in value]
    return value


def write_outputs(
    folder: Path,
    documents: Sequence[ResultsDocument],
    *,
    per_config: bool,
    plots: bool,
    settings: ReportSettings | None = None,
    html: bool = False,
) -> ReportSummary:
    """Write a results folder: results.json (evaluate only), the mteb-layout files,
    summary.json, report.md, the plots and, with `html`, report.html (the same report as
    one self-contained page, its plots embedded). Returns the summary.

    The files are written as one set: each is made in a hidden staging folder inside
    `folder` and moved into place only once all are made, results.json last, so a
    failure on the way (a full disk, a figure matplotlib cannot draw) leaves the folder as
    it was (a folder this call made is removed again). Plots drawn earlier are removed
    when none are drawn now, and so is a report.html not asked for now, as they would
    show other results."""
    summary = summarise_results(documents, settings)
    texts: dict[Path, str] = {}
    if per_config:
        for path, content in mteb_layout(documents[0]).items():
            texts[path] = results_json(content)
    texts[Path("summary.json")] = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    if per_config:
        texts[Path(RESULTS_FILE)] = results_json(documents[0])  # last in, last moved
    made = _missing_top(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _remove_dead_stagings(folder)
    stage = folder / f"{STAGING}{os.getpid()}"
    try:
        shutil.rmtree(stage, ignore_errors=True)
        drawn: list[Path] = []
        if plots:
            from shiftbench.evaluate.plots import write_plots

            main_scores = sorted({d["main_score"] for d in documents})
            drawn = write_plots(summary, stage / "plots", " / ".join(main_scores))
        # the report links the plots drawn, so it is made once they are
        blocks = report_blocks(documents, summary, [p.name for p in drawn])
        texts[Path("report.md")] = markdown_blocks(blocks)
        if html:
            from shiftbench.evaluate.report.html import html_report

            pictures = {p.name: p.read_bytes() for p in drawn}
            texts[Path(HTML_REPORT)] = html_report(blocks, pictures)
        for path, text in texts.items():
            (stage / path).parent.mkdir(parents=True, exist_ok=True)
            (stage / path).write_text(text, encoding="utf-8")
        for path in texts:
            if path.name != RESULTS_FILE:
                _move(stage / path, folder / path)
        for name in PLOTS:  # the figures of these results, and none of others
            if stage / "plots" / name in drawn:
                _move(stage / "plots" / name, folder / "plots" / name)
            else:
                (folder / "plots" / name).unlink(missing_ok=True)
        if not html:
            (folder / HTML_REPORT).unlink(missing_ok=True)
        if not drawn and (folder / "plots").is_dir() and not any((folder / "plots").iterdir()):
            (folder / "plots").rmdir()
        if per_config:
            _move(stage / RESULTS_FILE, folder / RESULTS_FILE)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        if made is not None:
            _remove_empty(folder, made)
        raise
    shutil.rmtree(stage, ignore_errors=True)
    return summary


def _move(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)


def _missing_top(folder: Path) -> Path | None:
    """The outermost folder of `folder` (itself included) that does not exist yet."""
    top = None
    for part in (folder, *folder.parents):
        if part.exists():
            break
        top = part
    return top


def _remove_empty(folder: Path, top: Path) -> None:
    """Remove `folder` and its parents up to `top` where each is empty (a write that
    failed leaves no folder it made)."""
    for part in (folder, *folder.parents):
        try:
            part.rmdir()
        except OSError:
            return
        if part == top:
            return


def _remove_dead_stagings(folder: Path) -> None:
    """Staging folders of writes whose process is gone (killed on the way)."""
    for stage in folder.glob(f"{STAGING}*"):
        pid = stage.name.removeprefix(STAGING)
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(stage, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def model_key(entry: ModelResults) -> tuple[str, str | None]:
    """A model of results.json as models are told apart: its name and revision."""
    return str(entry["model"]["id"]), entry["model"].get("revision")


def check_addable(
    folder: Path, document: ResultsDocument, interval: str | None = None
) -> ResultsDocument | None:
    """The results document already in `folder` (None when there is none), once it is
    known that `document`'s models can join it: the same target, source and protocol, no
    model it holds at another revision, and (`interval`: this run's interval method) the
    intervals made the same way. Anything else is an InputError naming the folder and what
    differs, so a results folder only ever holds results that compare."""
    if not (folder / RESULTS_FILE).is_file():
        return None
    held = read_results(folder)
    ours = cast(ResultsDocument, json.loads(results_json({**document, "models": []})))
    what = _difference(held, ours)
    if what is not None:
        raise InputError(
            f"results folder {folder} holds results {what}; one results folder holds one "
            f"source scored one way: choose another {option('output')}"
        )
    revisions = {str(e["model"]["id"]): e["model"].get("revision") for e in held["models"]}
    for entry in document["models"]:
        name, revision = model_key(entry)
        if name in revisions and revisions[name] != revision:
            raise InputError(
                f"results folder {folder} holds {name} at revision {revisions[name]}, and "
                f"this run loads revision {revision}: choose another {option('output')}"
            )
    made = {
        r.get("interval", "percentile")
        for e in held["models"] for r in e["results"] if r.get("ci95") is not None
    }  # fmt: skip
    if interval is not None and made and interval not in made:
        raise InputError(
            f"results folder {folder} holds intervals made with {option('interval')} "
            f"{', '.join(sorted(made))}, and this run's are {interval}: choose another "
            f"{option('output')}, or evaluate with that {option('interval')}"
        )
    return held


IDENTITY = ("target", "task_type", "main_score")
# how a protocol was chosen, not how it scores
CHOICE = ("chosen_by", "overrides_run_folder")


def _difference(held: ResultsDocument, ours: ResultsDocument) -> str | None:
    """How the results already held differ from this run's in what they score, in words,
    or None."""
    held_source, our_source = held["source"], ours["source"]
    if (held_source.get("name"), held_source.get("revision")) != (
        our_source.get("name"), our_source.get("revision")
    ):  # fmt: skip
        return f"on {_named(held_source)}, and this run is on {_named(our_source)}"
    held_protocol = dict(held.get("protocol") or {})
    our_protocol = dict(ours.get("protocol") or {})
    if held_protocol.get("name") != our_protocol.get("name"):
        return (
            f"scored under {_protocol(held_protocol)}, and this run's are under "
            f"{_protocol(our_protocol)}"
        )
    pairs: list[tuple[str, Any, Any]] = [
        *((key, held.get(key), ours.get(key)) for key in IDENTITY),
        *((f"source.{k}", held_source.get(k), our_source.get(k))
          for k in dict.fromkeys([*held_source, *our_source])),
        *((f"protocol.{k}", held_protocol.get(k), our_protocol.get(k))
          for k in dict.fromkeys([*held_protocol, *our_protocol]) if k not in CHOICE),
    ]  # fmt: skip
    for key, theirs, mine in pairs:
        if theirs != mine:
            return (
                f"on {_named(held_source)} with another {key} ({json.dumps(theirs)} there, "
                f"{json.dumps(mine)} in this run)"
            )
    return None


def _protocol(protocol: Mapping[str, object]) -> str:
    name = protocol.get("name")
    return f"the {name} protocol" if name else "no protocol on record (an older results.json)"


def _named(source: Any) -> str:
    revision = source.get("revision")
    return f"{source.get('name')}@{revision}" if revision else str(source.get("name"))


def add_results(
    folder: Path, document: ResultsDocument, *, plots: bool, settings: ReportSettings | None = None
) -> ReportSummary:
    """Add `document`'s models to the results folder and write it again (results.json,
    the mteb-layout files, summary.json, report.md and the plots, all of every model it
    then holds). One writer at a time: the folder is held while it is read, merged and
    written, and a second process waits for it (lock_wait(), SHIFTBENCH_LOCK_WAIT).
    A model the folder holds already (the same name and revision) is replaced by this
    run's scores, and a line says so. Returns the summary written."""
    _finite_scores(document)
    with writing(folder, wait=lock_wait()):
        held = check_addable(folder, document)
        merged = document
        if held is not None:
            new = {model_key(e): e for e in document["models"]}
            had = [model_key(e) for e in held["models"]]
            for name, revision in (key for key in had if key in new):
                report(
                    log,
                    f"{folder / RESULTS_FILE}: replaced the results of {name} (revision "
                    f"{revision}) with this run's",
                )
            models = [new.get(key, e) for key, e in zip(had, held["models"], strict=True)]
            models += [e for key, e in new.items() if key not in had]
            merged = {**document, "models": models}
        return write_outputs(folder, [merged], per_config=True, plots=plots, settings=settings)


def _finite_scores(document: ResultsDocument) -> None:
    """A record whose main score (or delta, or original score) came out NaN or infinite
    stops the write: results.json cannot hold it, and the folder is left as it was."""
    for entry in document["models"]:
        for record in entry["results"]:
            for key in ("main_score", "original_same_rows", "delta"):
                value = record.get(key)
                if (key == "main_score" or value is not None) and not (
                    isinstance(value, (int, float)) and math.isfinite(value)
                ):
                    where = (
                        f"{record['config']} (split {record['split']}, subset {record['subset']})"
                    )
                    raise RuntimeFault(
                        f"{entry['model']['id']}'s {key} on {where} came out {json.dumps(value)}, "
                        "which results.json cannot hold; the results folder is left as it was"
                    )


def format_table(
    model: str, main_score: str, records: list[ScoreRecord], protocol: str | None = None
) -> str:
    """A plain-text table: one line per config and split, with the paired delta and its
    95% interval (`-0.21672 [-0.49449, +0.06216]`, `*` after a thin or zero-width one, with
    the notes saying so: core/evidence.py).
    Results scored under `--protocol hteb` show as HTEB prints them: x100, two decimals."""
    shown = figures_for(protocol)
    if shown is SCORES:
        shown = Figures(places=5)
    header = ["config", "split", "rows", main_score, "original (same rows)", "delta [lo, hi]"]
    lines = [
        [
            config_label(r), r["split"], str(r["rows"]), shown.num(r["main_score"]),
            shown.num(r["original_same_rows"]), shown.delta(r),
        ]
        for r in records
    ]  # fmt: skip
    notes = flagged_notes(line[-1] for line in lines)
    notes += [HTEB_NOTE] if shown is HTEB_POINTS else []
    return "\n".join([f"model: {model}", plain_table(header, lines, left=2), *notes])
