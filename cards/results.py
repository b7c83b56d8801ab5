"""A release's evaluation results, in the forms the Hub reads.

`shiftbench card/publish --results [NAME=]DIR` takes the results folders that
`shiftbench evaluate` wrote for this run and puts each model's main scores into the card:

- the card's YAML gains `model-index`, one entry per model (built with huggingface_hub's
  `eval_results_to_model_index`, so it is the form the Hub parses), each result naming the
  release's repository, config, split and version;
- the release gains `eval_results/<model>.yaml` in the Hub's `.eval_results` format (built
  with `eval_result_entries_to_yaml`), which a model's owner copies into the model
  repository's `.eval_results/` folder;
- the prose gains a table of main scores with each variant's difference from the
  original on the same rows, marked `*` where its interval is thin or of zero width, as
  evaluate's tables mark it (core/evidence.py).

Results of another source or revision, or of configs the run does not hold, are refused.
A model is named as evaluate recorded it (a local model by its own name or the NAME it
was given, never its path); results written before evaluate recorded names so, whose model
id is a local path, must be named (`NAME=DIR`), so no local path is ever written into a
card.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.cards.facts import TASK_CATEGORIES
from shiftbench.core.data import resultsfolder
from shiftbench.core.data.resultsfolder import RESULTS_FILE
from shiftbench.core.evidence import MARK, notes, weak, width_places
from shiftbench.core.models.names import split_named
from shiftbench.core.records import ModelResults, ResultsDocument, RunMeta
from shiftbench.errors import InputError


@dataclass(frozen=True)
class ModelScores:
    """One model's main score per config (and split) of the release."""

    name: str
    revision: str | None
    main_score: str
    task_type: str
    # (config, split, subset, main score, delta from the original on the same rows)
    scores: tuple[tuple[str, str, str, float, float | None], ...]
    # per score, why its delta's interval is weak evidence (core/evidence.py), if it is
    weak: tuple[tuple[str, ...], ...] = ()
    # per score, the decimals its delta is printed with (its interval's width decides)
    places: tuple[int, ...] = ()


def _looks_local(model_id: str) -> bool:
    return model_id.startswith(("/", "./", "../", "~")) or Path(model_id).exists()


def read_model_scores(items: tuple[str, ...], meta: RunMeta) -> list[ModelScores]:
    """The models' scores from evaluate results folders (`DIR` or `NAME=DIR`), checked
    against the run folder's metadata."""
    source = meta["source"]
    out: list[ModelScores] = []
    for item in items:
        given, where = split_named(item, "--results", "folder")  # as -m reads NAME=
        name, sep = given or "", given is not None
        missing = f"--results {item}: no {RESULTS_FILE} there"
        doc = resultsfolder.read_results(Path(where), missing=missing)
        theirs = doc["source"]
        if (theirs.get("name"), theirs.get("revision")) != (
            source.get("name"), source.get("revision")
        ):  # fmt: skip
            raise InputError(
                f"--results {item}: these are results on {theirs.get('name')} at revision "
                f"{theirs.get('revision')}, the run is {source.get('name')} at revision "
                f"{source.get('revision')}"
            )
        models = doc.get("models", [])
        if sep and len(models) != 1:
            raise InputError(
                f"--results {item}: NAME= names one model, the folder holds {len(models)}"
            )
        out += [_model_scores(item, entry, doc, meta, name, sep) for entry in models]
    names = [m.name for m in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"--results: {twice[0]} has results in more than one folder")
    return out


def _model_scores(
    item: str, entry: ModelResults, doc: ResultsDocument, meta: RunMeta, name: str, sep: bool
) -> ModelScores:
    """One model's scores in results folder `item` (`name`: the NAME= given, `sep` whether
    one was), each config checked to be the run's."""
    model_id = str(entry["model"]["id"])
    if not sep and _looks_local(model_id):
        raise InputError(
            f"--results {item}: its model was loaded from a local path; name it as "
            "it is known on the Hub: --results ORG/MODEL=DIR"
        )
    scores, flags, places = [], [], []
    for record in entry.get("results", []):
        config = record["config"]
        if config not in meta["configs"]:
            raise InputError(f"--results {item}: config {config} is not part of this run")
        if record.get("main_score") is None:
            continue
        scores.append((
            config, record["split"], record.get("subset", "default"),
            float(record["main_score"]),
            None if (delta := record.get("delta")) is None else float(delta),
        ))  # fmt: skip
        flags.append(_weak(record))
        places.append(_places(record))
    return ModelScores(
        name=name or model_id.removeprefix("mteb:"),
        revision=None if sep else entry["model"].get("revision"),
        main_score=str(doc.get("main_score")),
        task_type=str(doc.get("task_type")),
        scores=tuple(scores),
        weak=tuple(flags),
        places=tuple(places),
    )


CARD_PLACES = 4  # the most decimals a delta gets in the card


def _places(record: Mapping[str, Any]) -> int:
    return width_places(record.get("ci95"), CARD_PLACES)


def _weak(record: Mapping[str, Any]) -> tuple[str, ...]:
    """Why a record's delta interval is weak evidence, at the decimals the card prints."""
    if record.get("delta") is None or not record.get("ci95"):
        return ()
    low, high = (f"{float(end):+.{_places(record)}f}" for end in record["ci95"])
    return tuple(weak(record, low, high))


def model_index(models: list[ModelScores], repo: str | None, tag: str | None) -> list[Any]:
    """The card's `model-index`: one entry per model, a result per config and split."""
    from huggingface_hub import EvalResult
    from huggingface_hub.repocard_data import eval_results_to_model_index

    out: list[Any] = []
    for model in models:
        results = [
            EvalResult(
                task_type=TASK_CATEGORIES.get(model.task_type, "feature-extraction"),
                task_name=model.task_type,
                dataset_type=repo or "shiftbench-run",
                dataset_name=f"{repo or 'shiftbench run'} {config}",
                dataset_config=config,
                dataset_split=split,
                dataset_revision=tag,
                metric_type=model.main_score,
                metric_value=score,
                metric_name=model.main_score,
                source_name="shiftbench evaluate",
                source_url="https://pypi.org/project/shiftbench/",
            )
            for config, split, _, score, _ in model.scores
        ]
        out += eval_results_to_model_index(model.name, results)
    return out


def eval_results_files(
    models: list[ModelScores], repo: str | None, tag: str | None
) -> dict[str, bytes]:
    """`eval_results/<model>.yaml` per model, in the Hub's `.eval_results` form (needs the
    release's repository: the entries name it)."""
    import yaml
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    if not repo:
        return {}
    files = {}
    for model in models:
        entries = [
            EvalResultEntry(
                dataset_id=repo,
                task_id=config if split == "test" else f"{config}/{split}",
                value=round(score, 6),
                dataset_revision=tag,
                notes=f"{model.main_score} on config {config}, split {split}",
            )
            for config, split, _, score, _ in model.scores
        ]
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "__", model.name).strip("_") or "model"
        text = yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False)
        files[f"eval_results/{slug}.yaml"] = text.encode("utf-8")
    return files


def prose(models: list[ModelScores]) -> list[str]:
    """The card's results section: main scores and differences, a row per config."""
    if not models:
        return []
    out = [
        "",
        "## Results",
        "",
        f"Main score ({models[0].main_score}) per config, from `shiftbench evaluate`; in "
        "brackets a variant's difference from the original on the same rows. The same "
        "figures are in the card's `model-index` and, per model, in `eval_results/`.",
        "",
        "| config | " + " | ".join(f"`{m.name}`" for m in models) + " |",
        "|---|" + "---:|" * len(models),
    ]
    table: dict[tuple[str, str], dict[str, str]] = {}
    reasons: set[str] = set()
    for model in models:
        flags = model.weak or ((),) * len(model.scores)
        places = model.places or (CARD_PLACES,) * len(model.scores)
        for (config, split, _, score, delta), flag, shown in zip(
            model.scores, flags, places, strict=True
        ):
            mark = MARK if flag else ""
            cell = f"{score:.4f}" + ("" if delta is None else f" ({delta:+.{shown}f}{mark})")
            table.setdefault((config, split), {})[model.name] = cell
            reasons.update(flag)
    several = len({split for _, split in table}) > 1
    for (config, split), cells in table.items():
        label = f"`{config}`" + (f" ({split})" if several else "")
        out.append(f"| {label} | " + " | ".join(cells.get(m.name, "-") for m in models) + " |")
    for note in notes(reasons):
        out += ["", note]
    return out
