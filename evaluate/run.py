"""Score encoders on a run folder (original plus variants) or on a source, and report."""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from shiftbench import __version__
from shiftbench.core.data.parts import DEFAULT, context_name, folder_split
from shiftbench.core.data.runfolder import (
    OK,
    config_name,
    is_run_folder,
    read_config_split,
    read_json,
    read_meta,
    usable,
)
from shiftbench.core.data.sources import RANKING_TYPES, Source
from shiftbench.core.models.encoders import Encoder
from shiftbench.core.records import SourceRecord, plain
from shiftbench.core.tables import plain_table
from shiftbench.errors import InputError
from shiftbench.evaluate.clustering import seeded_by_evaluation
from shiftbench.evaluate.resample import (
    RESAMPLES,
    SEED,
    THIN_NOTE,
    Replicate,
    paired_delta,
    record_fields,
    thin,
)
from shiftbench.evaluate.sides import (
    certified_context,
    config_label,
    narrowed,
    own_context,
    rewritten_parts,
    side_records,
)
from shiftbench.evaluate.tasks import EVALUATORS, Scoring, evaluator, train_split

if TYPE_CHECKING:
    from shiftbench.evaluate.faithful import CertifiedRows
    from shiftbench.evaluate.report import ReportSettings


@dataclass
class ConfigView:
    """One config's rows per split, with the metadata that says what it is."""

    name: str
    meta: dict[str, Any]  # the config's record, as evaluate works on it (records.plain)
    splits: dict[str, list[dict[str, Any]]]


@dataclass
class Collection:
    """Everything evaluate scores: the source's description and its configs."""

    label: str
    source: dict[str, Any]  # the source's record, as evaluate works on it (records.plain)
    configs: list[ConfigView]
    # the parts a run folder's variants rewrote (shiftbench.core.data.parts)
    rewrite: tuple[str, ...] = DEFAULT


def collect_run_folder(folder: Path) -> Collection:
    meta = read_meta(folder)
    ranking = meta["source"]["task_type"] in RANKING_TYPES
    configs = []
    for name, info in meta["configs"].items():
        splits = {}
        for split in info["rows"]:
            rows = read_config_split(folder, meta, name, split)
            splits[context_name(split) if ranking else split] = rows
        configs.append(ConfigView(name, plain(info), splits))
    rewrite = tuple(meta.get("rewrite", DEFAULT))
    return Collection(folder.resolve().name, plain(meta["source"]), configs, rewrite)


def collect_source(source: Source) -> Collection:
    from shiftbench.core.data.sources import source_meta

    require_evaluable(source_meta(source), source.name)
    configs = []
    for subset in source.subsets:
        splits = {
            s: [{"row_id": i, **r} for i, r in enumerate(ds.to_list())]
            for s, ds in source.load(subset).items()
        }
        configs.append(
            ConfigView(
                config_name("original", subset, source.multi_subset),
                {"kind": "original", "subset": subset},
                splits,
            )
        )
    return Collection(source.name, plain(source_meta(source)), configs)


RELEASE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+@.*$")


def collect(target: str, source_factory: Any, data_dir: str | None = None) -> Collection:
    """A run folder when `target` is one; a published release for `ORG/NAME@vX.Y.Z`;
    otherwise whatever `source_factory` resolves. A ranking task's run folder or release
    gets its corpus and judgements from its source (`data_dir` for a local copy)."""
    if is_run_folder(Path(target)):
        return with_ranking_context(collect_run_folder(Path(target)), data_dir)
    if RELEASE.match(target) and not Path(target).exists():
        return with_ranking_context(collect_release(target), data_dir)
    return collect_source(source_factory(target))


def collect_generated(target: str) -> Collection:
    """A run folder, or a published release `ORG/NAME@vX.Y.Z`; anything else (a source,
    which holds no variants) is an InputError."""
    if is_run_folder(Path(target)):
        return collect_run_folder(Path(target))
    if RELEASE.match(target) and not Path(target).exists():
        return collect_release(target)
    raise InputError(f"{target} is neither a run folder nor a release ORG/NAME@vX.Y.Z")


def with_ranking_context(collection: Collection, data_dir: str | None) -> Collection:
    """Add the source's corpus, qrels (and candidates) to a ranking run's original
    configs, after checking that the source is at the revision the run was made from."""
    from shiftbench.core.data.sources import resolve_source

    recorded = collection.source
    if recorded["task_type"] not in RANKING_TYPES:
        return collection
    originals = [c for c in collection.configs if c.meta["kind"] == "original"]
    if all(n in c.splits for c in originals for n in recorded.get("context_splits", [])):
        return collection  # a run that rewrote its corpus holds its context itself
    if recorded.get("mteb_task"):
        spec, local_copy = recorded["mteb_task"], data_dir
    else:  # a local source: the folder it was made from, or --data-dir where it is now
        spec, local_copy = data_dir or recorded["dataset_path"], None
    try:
        source = resolve_source(
            spec,
            task_type=None if recorded.get("mteb_task") else recorded["task_type"],
            data_dir=local_copy,
            subsets=tuple(dict.fromkeys(c.meta["subset"] for c in originals)),
            splits=tuple(recorded["splits"]),
        )
        if source.revision != recorded.get("revision"):
            raise InputError(
                f"{spec} is at revision {source.revision}, the run was made from "
                f"{recorded.get('revision')}"
            )
        for config in originals:
            loaded = source.load(config.meta["subset"])
            for name in source.context_splits:
                config.splits[name] = [dict(r) for r in loaded[name].to_list()]
    except InputError as exc:
        raise InputError(
            f"{collection.label} is a {recorded['task_type']} run: its corpus and judgements "
            f"come from its source, which failed: {exc}"
        ) from None
    return collection


def collect_release(spec: str) -> Collection:
    """A published version, downloaded and checked file by file against its manifest
    before anything is scored."""
    import tempfile

    from shiftbench.core.hub import check_files, fetch_release

    with tempfile.TemporaryDirectory(prefix="shiftbench-evaluate-") as scratch:
        local, repo, tag, sha = fetch_release(spec, Path(scratch), quiet=True, what="evaluate")
        problems = check_files(local, tag)
        if problems:
            raise InputError(f"{repo}@{tag} does not match its manifest: {problems[0]}")
        collection = collect_run_folder(local)
    collection.label = f"{repo.split('/')[-1]}@{tag}"
    collection.source = {**collection.source, "release": {"repo": repo, "tag": tag, "commit": sha}}
    return collection


def require_evaluable(source: SourceRecord | dict[str, Any], label: str) -> None:
    """Refuse what evaluate cannot score, before any data loads."""
    task_type = source["task_type"]
    if task_type not in EVALUATORS:
        raise InputError(
            f"evaluate scores {', '.join(EVALUATORS)} tasks so far; {label} is {task_type}"
        )
    if task_type == "Summarization":
        from shiftbench.evaluate.summarization import SUPERSEDED

        newer = SUPERSEDED.get(source.get("mteb_task") or "")
        if newer:
            raise InputError(
                f"{source['mteb_task']} is scored with mteb's superseded summarisation metric; "
                f"evaluate {newer} (the same data) instead"
            )


def chosen_parts(
    collection: Collection, splits: tuple[str, ...], subsets: tuple[str, ...]
) -> Collection:
    """The collection with only the `splits` and `subsets` asked for (each must be one it
    holds; empty: all), the context splits (a train split, a corpus) kept for scoring."""
    from dataclasses import replace

    held_splits = list(dict.fromkeys(s for c in collection.configs for s in c.splits))
    held_subsets = list(dict.fromkeys(c.meta["subset"] for c in collection.configs))
    for asked, held, kind in ((splits, held_splits, "split"), (subsets, held_subsets, "subset")):
        for name in asked:
            if name not in held:
                raise InputError(
                    f"unknown {kind} {name!r} for {collection.label}; available: {', '.join(held)}"
                )
    if not splits and not subsets:
        return collection
    context = set(collection.source.get("context_splits", []))

    def kept(split: str) -> bool:
        return not splits or split in splits or split in context

    configs = [
        replace(c, splits={k: v for k, v in c.splits.items() if kept(k)})
        for c in collection.configs
        if not subsets or c.meta["subset"] in subsets
    ]
    source = dict(collection.source)
    if splits:
        source["splits"] = [x for x in source.get("splits", held_splits) if x in splits]
    if subsets:
        source["subsets"] = [x for x in source.get("subsets", held_subsets) if x in subsets]
    return replace(collection, source=source, configs=configs)


def require_supported(collection: Collection) -> None:
    require_evaluable(collection.source, collection.label)
    task_type = collection.source["task_type"]
    if task_type == "Classification":
        train = train_split(collection.source)
        for config in collection.configs:
            if config.meta["kind"] == "original" and train not in config.splits:
                held = ", ".join(config.splits)
                raise InputError(
                    f"Classification fits its classifiers on a train split; "
                    f"{collection.label} has only {held}"
                )
    context_splits = collection.source.get("context_splits", [])
    for config in collection.configs:  # a rewritten corpus must keep a document to rank
        if config.meta["kind"] != "transform":
            continue
        transform = config.meta.get("transform")
        for name in context_splits:
            if not name.startswith("corpus/") or name not in config.splits:
                continue
            rows = config.splits[name]
            if not any(usable(r.get("status", OK), transform) for r in rows):
                counts = Counter(r.get("status", OK) for r in rows)
                shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                raise InputError(
                    f"{collection.label} {config.name}/{folder_split(name)} has no usable "
                    f"document to rank ({shown}); make it again, e.g. with a larger "
                    f"--max-new-tokens"
                )
    if task_type == "STS":  # a correlation needs two pairs: refuse before any model loads
        for config in collection.configs:
            if config.meta["kind"] == "control":
                continue
            transform = config.meta.get("transform")
            for split, rows in config.splits.items():
                n = sum(usable(r.get("status", OK), transform) for r in rows)
                if n < 2:
                    raise InputError(
                        f"{collection.label} {config.name}/{split} has {n} usable pair(s); "
                        f"STS correlates at least two (use a larger --limit)"
                    )


def score_collection(
    collection: Collection,
    encoder: Encoder,
    faithful: CertifiedRows | None = None,
    *,
    resamples: int = RESAMPLES,
    resample_seed: int = SEED,
    interval: str = "percentile",
    evalrank_reading: tuple[str, bool] = ("quantile", False),
) -> list[dict[str, Any]]:
    """One record per (config, split): mteb's metrics, and for variants the paired delta
    with its paired-bootstrap 95% interval (`resamples` draws, 0 for none; `interval`:
    resample.interval's method; `evalrank_reading`: _evalrank's `reading`); with
    `faithful`, each transformation also on its certified rows alone."""
    require_supported(collection)
    originals = {c.meta["subset"]: c for c in collection.configs if c.meta["kind"] == "original"}
    context_splits = collection.source.get("context_splits", [])
    records = []
    for config in collection.configs:
        if config.meta["kind"] == "control":
            continue  # probes, not robustness variants: `shiftbench probe` scores them
        base = originals.get(config.meta["subset"])
        transform = config.meta.get("transform")
        context = {s: base.splits[s] for s in context_splits if base and s in base.splits}
        # a variant's own rewritten corpus or train split replaces the original's; its
        # paired original keeps the original's on the same rows
        own = own_context(config, context_splits, transform) if base is not config else {}
        base_context = context
        paired_context, context = narrowed(context, own), {**context, **own}
        for split, rows in config.splits.items():
            if split in context_splits and split not in collection.source.get("splits", []):
                continue  # kept as it is for the evaluation of the others (Classification's train)
            started = time.perf_counter()
            prior = _prior(collection, originals, config.meta["subset"], split)
            seed = seeds = None
            if seeded_by_evaluation(collection.source):  # HTEB's k-means seeds
                if config.meta["kind"] == "original":
                    seeds = evaluation_seeds(collection, config.meta["subset"])
                else:
                    seed = config.meta.get("seed")
            record, replicate = _score_rows(
                collection, encoder, config, split, rows, context, prior, seed, seeds
            )
            replicates = sides = None
            base_rows = base.splits.get(split, []) if base is not None else rows
            if config.meta["kind"] != "original" and base is not None:
                by_id = {r["row_id"]: r for r in base_rows}
                same = [by_id[r["row_id"]] for r in rows if usable(r.get("status", OK), transform)]
                paired, paired_replicate = _metrics(
                    collection, encoder, same, paired_context, split, prior, seed
                )
                main = collection.source["main_score"]
                record["original_same_rows"] = paired[main]
                record["delta"] = record["main_score"] - paired[main]
                # the draws depend on the original split and the seed alone, so every
                # variant and model of the split gets the same ones
                draws = Draws(len(base_rows), resamples, resample_seed, interval)
                position = {r["row_id"]: i for i, r in enumerate(base_rows)}
                if resamples and replicate is not None and paired_replicate is not None:
                    replicates = draws.delta(
                        [position[r["row_id"]] for r in same], replicate, paired_replicate
                    )
                record["self_retrieval"] = _self_retrieval(
                    collection, encoder, rows, by_id, split, transform
                )
                if f"corpus/{split}" in own:  # query-side and corpus-side, as in sides.py
                    kept = [r for r in rows if usable(r.get("status", OK), transform)]
                    sides = [(["queries"], kept, paired_context), (["corpus"], same, context)]
                    positions = [position[r["row_id"]] for r in same]
                    delta_of = partial(_side_delta, draws, positions, paired_replicate)
                if faithful is not None and config.meta["kind"] == "transform":
                    keep = faithful.rows.get(config.name, set())
                    chosen = [
                        r for r in rows
                        if usable(r.get("status", OK), transform) and (split, r["row_id"]) in keep
                    ]  # fmt: skip
                    # a rewritten corpus or train split: its certified rows alone, and the
                    # paired original's context on the same rows
                    trusted = certified_context(own, keep)
                    contexts = ({**base_context, **trusted}, narrowed(base_context, trusted))
                    record["faithful"] = _faithful_figures(
                        collection, encoder, chosen, by_id, contexts, split, prior,
                        faithful.criterion, draws, position, seed,
                    )  # fmt: skip
                    if own:
                        record["faithful"]["context_rows"] = {
                            name: len(rows) for name, rows in trusted.items()
                        }
            record.update(record_fields(replicates, interval, record["rows"]))
            if "restored" in config.meta:  # HTEB's originals in failed texts' places
                record["restored"] = config.meta["restored"].get(split)
            record["evalrank"] = _evalrank(
                collection, encoder, rows, base_rows, split, transform, evalrank_reading
            )
            record["evaluation_time"] = round(time.perf_counter() - started, 3)
            if collection.rewrite != DEFAULT:
                record["rewritten"] = rewritten_parts(own) if base is not config else []
            records.append(record)
            if sides:
                score = partial(_metrics, collection, encoder, split=split, prior=prior, seed=seed)
                main = collection.source["main_score"]
                records += side_records(record, sides, score, delta_of, main, interval)
    return records


def _side_delta(
    draws: Draws, positions: list[int], original: Replicate | None, variant: Replicate | None
) -> Any:
    if not draws.resamples or variant is None or original is None:
        return None
    return draws.delta(positions, variant, original)


def _prior(
    collection: Collection, originals: dict[str, ConfigView], subset: str, split: str
) -> list[list[Any]]:
    """For Clustering's bootstrap protocol: the original labels of every (split, subset)
    mteb scores before this one (splits outer, subsets inner, in the source's order)."""
    bootstrap = (collection.source.get("protocol") or {}).get("clustering") == "bootstrap"
    if not bootstrap or seeded_by_evaluation(collection.source):  # HTEB's: no draws
        return []
    order = [
        (s, sub)
        for s in collection.source.get("splits", [])
        for sub in collection.source.get("subsets", [])
        if sub in originals and s in originals[sub].splits
    ]
    if (split, subset) not in order:
        return []
    before = order[: order.index((split, subset))]
    return [[r["labels"] for r in originals[sub].splits[s]] for s, sub in before]


@dataclass(frozen=True)
class Draws:
    """The bootstrap draws of one original split: what makes a delta's replicates."""

    items: int
    resamples: int
    seed: int
    method: str = "percentile"  # resample.interval's

    def delta(self, positions: list[int], variant: Replicate, original: Replicate) -> Any:
        return paired_delta(self.items, positions, variant, original, self.resamples, self.seed)


def _faithful_figures(
    collection: Collection,
    encoder: Encoder,
    chosen: list[dict[str, Any]],
    by_id: dict[Any, dict[str, Any]],
    contexts: tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]],
    split: str,
    prior: list[list[Any]],
    criterion: str,
    draws: Draws,
    position: dict[Any, int],
    seed: int | None = None,
) -> dict[str, Any]:
    """The variant and the original scored on the certified rows alone, the delta and its
    interval (the split's own draws, restricted to those rows). `contexts`: the variant's
    context and its paired original's."""
    out: dict[str, Any] = {"criterion": criterion, "rows": len(chosen)}
    main = collection.source["main_score"]
    try:
        ours, variant = _metrics(collection, encoder, chosen, contexts[0], split, prior, seed)
        same = [by_id[r["row_id"]] for r in chosen]
        theirs, original = _metrics(collection, encoder, same, contexts[1], split, prior, seed)
    except (ValueError, ZeroDivisionError) as exc:  # too few rows for the metric
        return {**out, "main_score": None, "original_same_rows": None, "delta": None,
                "ci95": None, "note": str(exc)}  # fmt: skip
    interval = None
    if draws.resamples and variant is not None and original is not None:
        replicates = draws.delta([position[r["row_id"]] for r in chosen], variant, original)
        interval = record_fields(replicates, draws.method, len(chosen))["ci95"]
    return {
        **out,
        "main_score": ours[main],
        "original_same_rows": theirs[main],
        "delta": ours[main] - theirs[main],
        "ci95": interval,
    }


def _self_retrieval(
    collection: Collection,
    encoder: Encoder,
    rows: list[dict[str, Any]],
    by_id: dict[Any, dict[str, Any]],
    split: str,
    transform: str | None,
) -> dict[str, float]:
    from shiftbench.evaluate.self_retrieval import self_retrieval, text_pairs

    fields = list(collection.source["text_fields"])
    ok = [r for r in rows if usable(r.get("status", OK), transform)]
    pairs = text_pairs(ok, by_id, fields)
    background = [t for _, t in text_pairs(list(by_id.values()), by_id, fields)]
    scoring = Scoring(collection.source, encoder, ok, {}, split)
    return self_retrieval(scoring, pairs, background)


def _evalrank(
    collection: Collection,
    encoder: Encoder,
    rows: list[dict[str, Any]],
    original_rows: list[dict[str, Any]],
    split: str,
    transform: str | None,
    reading: tuple[str, bool] = ("quantile", False),
) -> dict[str, Any] | None:
    """EvalRank on an STS config's usable rows, the positives picked by the original's
    gold; for a variant also on the original's same rows, for a paired comparison.
    `reading`: which pairs are positives (evalrank.top_quarter) and whether the
    embeddings are centred."""
    from shiftbench.evaluate.evalrank import evalrank, top_quarter

    if collection.source["task_type"] != "STS":
        return None
    fields = list(collection.source["text_fields"])
    cut, centre = reading
    positives = top_quarter(original_rows, cut)
    ok = [r for r in rows if usable(r.get("status", OK), transform)]
    scoring = Scoring(collection.source, encoder, ok, {}, split)
    figures = evalrank(scoring.embed, ok, fields, positives, centre)
    if rows is not original_rows:
        ids = {r["row_id"] for r in ok}
        same = [r for r in original_rows if r["row_id"] in ids]
        figures["original_same_rows"] = evalrank(scoring.embed, same, fields, positives, centre)
    return {"positives": cut, "centred": centre, **figures}


def _score_rows(
    collection: Collection,
    encoder: Encoder,
    config: ConfigView,
    split: str,
    rows: list[dict[str, Any]],
    context: dict[str, list[dict[str, Any]]],
    prior: list[list[Any]],
    seed: int | None = None,
    seeds: list[int] | None = None,
) -> tuple[dict[str, Any], Replicate | None]:
    """The record of one config's split. `seeds`: score once per evaluation seed and
    average every metric (HTEB's original under its clustering), each seed's main score
    kept under `per_seed`."""
    kept = [r for r in rows if usable(r.get("status", OK), config.meta.get("transform"))]
    per_seed: dict[str, float] | None = None
    if seeds:
        runs = [_metrics(collection, encoder, kept, context, split, prior, s)[0] for s in seeds]
        metrics = {k: float(np.mean([run[k] for run in runs])) for k in runs[0]}
        main = collection.source["main_score"]
        per_seed = {str(s): run[main] for s, run in zip(seeds, runs, strict=True)}
        replicate = None
    else:
        metrics, replicate = _metrics(collection, encoder, kept, context, split, prior, seed)
    meta = config.meta
    extra = {"per_seed": per_seed} if per_seed is not None else {}
    return {
        "config": config.name,
        "kind": meta["kind"],
        "subset": meta["subset"],
        "split": split,
        "transform": meta.get("transform"),
        "axis": meta.get("axis"),
        "seed": meta.get("seed"),
        "prompt_variant": meta.get("prompt_variant", 1) if meta["kind"] != "original" else None,
        "rows": len(kept),
        "rows_total": len(rows),
        "scores": dict(metrics),
        "main_score": metrics[collection.source["main_score"]],
        "original_same_rows": None,
        "delta": None,
        "self_retrieval": None,
        "evalrank": None,
        **extra,
    }, replicate


def _metrics(
    collection: Collection,
    encoder: Encoder,
    rows: list[dict[str, Any]],
    context: dict[str, list[dict[str, Any]]],
    split: str,
    prior: list[list[Any]] | None = None,
    seed: int | None = None,
) -> tuple[Any, Replicate | None]:
    """The metrics of `rows`, and the main score of any weighted draw of them."""
    score = evaluator(collection.source["task_type"])
    scoring = Scoring(collection.source, encoder, rows, context, split, prior or [], seed=seed)
    return score(scoring), scoring.replicate


def evaluation_seeds(collection: Collection, subset: str) -> list[int]:
    """The seeds an original is scored with under HTEB's clustering: its variants' seeds
    (each variant is compared with the original at its own seed), or the protocol's."""
    found = {
        int(c.meta["seed"])
        for c in collection.configs
        if c.meta["kind"] != "original"
        and c.meta["subset"] == subset
        and c.meta.get("seed") is not None
    }
    return sorted(found) or list(collection.source["protocol"]["evaluation_seeds"])


def results_document(
    collection: Collection, per_model: list[tuple[Encoder, list[dict[str, Any]]]]
) -> dict[str, Any]:
    from importlib.metadata import version

    return {
        "shiftbench_version": __version__,
        "mteb_version": version("mteb"),
        "target": collection.label,
        "source": collection.source,
        "task_type": collection.source["task_type"],
        "main_score": collection.source["main_score"],
        "models": [{"model": enc.describe(), "results": recs} for enc, recs in per_model],
    }


def model_folder_name(model: str) -> str:
    """A model id as a folder name, the way mteb's results name them (`org__name`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip("/").replace("/", "__"))


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


def mteb_layout(document: dict[str, Any]) -> dict[Path, dict[str, Any]]:
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
        by_config: dict[str, list[dict[str, Any]]] = {}
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
            files[folder / f"{task}.json"] = {
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
    documents: list[dict[str, Any]],
    *,
    per_config: bool,
    plots: bool,
    settings: ReportSettings | None = None,
) -> dict[str, Any]:
    """Write a results folder: results.json (evaluate only), the mteb-layout files,
    summary.json, report.md and the plots. Returns the summary."""
    from shiftbench.evaluate.report import markdown_report, summarise

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


def format_table(model: str, main_score: str, records: list[dict[str, Any]]) -> str:
    """A plain-text table: one line per config and split, with the paired delta and its
    95% interval."""
    header = ["config", "split", "rows", main_score, "original (same rows)", "delta [lo, hi]"]
    lines = [
        [
            config_label(r),
            r["split"],
            str(r["rows"]),
            f"{r['main_score']:.5f}",
            "" if r["original_same_rows"] is None else f"{r['original_same_rows']:.5f}",
            _delta_text(r),
        ]
        for r in records
    ]
    notes = [THIN_NOTE] if any(line[-1].endswith("*") for line in lines) else []
    return "\n".join([f"model: {model}", plain_table(header, lines, left=2), *notes])


def _delta_text(record: dict[str, Any]) -> str:
    """`-0.21672 [-0.49449, +0.06216]`, with `*` when the interval is thin (THIN_NOTE)."""
    if record["delta"] is None:
        return ""
    interval = record.get("ci95")
    if not interval:
        return f"{record['delta']:+.5f}"
    low, high = interval
    flag = thin(record["rows"], record.get("usable_draws"), record.get("resamples"))
    return f"{record['delta']:+.5f} [{low:+.5f}, {high:+.5f}]" + ("*" if flag else "")


def read_results(path: Path) -> dict[str, Any]:
    """An evaluate results document, from its folder or its results.json."""
    file = path / "results.json" if path.is_dir() else path
    missing = f"{path} is not an evaluate results folder (no results.json)"
    document: dict[str, Any] = read_json(file, missing=missing)
    if not isinstance(document, dict) or "models" not in document or "target" not in document:
        raise InputError(f"{path} is not an evaluate results folder (no models or target)")
    return document
