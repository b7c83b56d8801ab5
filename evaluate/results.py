"""evaluate's results on disk: the results document, results.json with its Markdown
report, the per-(model, config) files in mteb's layout with the model's metadata, the
terminal table, and the reader of an earlier results folder."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from shiftbench import __version__
from shiftbench.core.models.encoders import Encoder
from shiftbench.core.records import ReportSummary, ResultsDocument, ScoreRecord, SourceRecord
from shiftbench.core.tables import plain_table
from shiftbench.evaluate.report.tables import (
    HTEB_NOTE,
    HTEB_POINTS,
    SCORES,
    Figures,
    figures_for,
)
from shiftbench.evaluate.resample import THIN_NOTE
from shiftbench.evaluate.sides import (
    config_label,
)

if TYPE_CHECKING:
    from shiftbench.evaluate.report import ReportSettings


from shiftbench.evaluate.collect import Collection
from shiftbench.evaluate.report import markdown_report, summarise


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


def model_folder_name(model: str) -> str:
    """A model id as a folder name, the way mteb's results name them (`org__name`): one
    path component that is neither `.`, `..` nor hidden, so no id, revision or source name
    leads out of the results folder."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip("/").replace("/", "__"))
    return name if name and not name.startswith(".") else f"_{name}"


def default_output(label: str) -> Path:
    return Path("shiftbench-results") / label


def write_json(path: Path, document: Any) -> None:
    """Write JSON atomically: a crash never leaves half a file under the final name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def model_meta(model: dict[str, Any]) -> dict[str, Any]:
    """mteb's metadata of an evaluated model, as mteb's ResultCache keeps it beside the
    results (`model_meta.json`): the registry's entry when mteb knows the model by its
    name, else an entry naming only the model; the name and revision are the ones the
    results were made with."""
    import mteb
    from mteb.models import ModelMeta

    name = str(model["id"]).removeprefix("mteb:")
    try:
        meta = mteb.get_model_meta(name)
    except KeyError:
        meta = ModelMeta.create_empty({"name": name})
    out: dict[str, Any] = json.loads(json.dumps(meta.to_dict(), default=str))
    for key, value in out.items():
        # a set of mteb's (training_datasets) comes out in the process's hash order:
        # sorted, equal runs write equal bytes
        if isinstance(getattr(meta, key, None), (set, frozenset)) and isinstance(value, list):
            out[key] = sorted(value, key=str)
    out.update(name=name, revision=model.get("revision"))
    return out


def mteb_layout(document: ResultsDocument) -> dict[Path, dict[str, Any]]:
    """Per (model, config): a result file laid out like mteb's (`<model>/<revision>/
    <source>.<config>.json` holding `scores[split]` entries with `hf_subset`, `languages`
    and `main_score`), with shiftbench's own fields under `shiftbench`, and the model's
    `model_meta.json` beside them. The task name is
    `<source>.<config>`, the name `mteb_tasks` gives the config's task, so mteb's
    `ResultCache` reads the folder as results of those tasks."""
    source = document["source"]
    files: dict[Path, dict[str, Any]] = {}
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
            scores: dict[str, list[dict[str, Any]]] = {}
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


def write_outputs(
    folder: Path,
    documents: Sequence[ResultsDocument],
    *,
    per_config: bool,
    plots: bool,
    settings: ReportSettings | None = None,
) -> ReportSummary:
    """Write a results folder: results.json (evaluate only), the mteb-layout files,
    summary.json, report.md and the plots. Returns the summary."""

    summary = summarise(documents, settings)
    if per_config:
        write_json(folder / "results.json", documents[0])
        for path, content in mteb_layout(documents[0]).items():
            write_json(folder / path, content)
    write_json(folder / "summary.json", summary)
    report = markdown_report(documents, summary)
    (folder / "report.md").write_text(report, encoding="utf-8")
    if plots:
        from shiftbench.evaluate.plots import write_plots

        main_scores = sorted({d["main_score"] for d in documents})
        write_plots(summary, folder / "plots", " / ".join(main_scores))
    return summary


def format_table(
    model: str, main_score: str, records: list[ScoreRecord], protocol: str | None = None
) -> str:
    """A plain-text table: one line per config and split, with the paired delta and its
    95% interval (`-0.21672 [-0.49449, +0.06216]`, `*` after a thin one: THIN_NOTE).
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
    notes = [THIN_NOTE] if any(line[-1].endswith("*") for line in lines) else []
    notes += [HTEB_NOTE] if shown is HTEB_POINTS else []
    return "\n".join([f"model: {model}", plain_table(header, lines, left=2), *notes])
