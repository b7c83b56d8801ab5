"""What evaluate scores, gathered: a run folder, a release or a source as a Collection of
configs (each a ConfigView of rows per split), with the checks that it can be scored
(its task type, the parts and splits asked for)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shiftbench.core.data.parts import DEFAULT, context_name, folder_split
from shiftbench.core.data.runfolder import (
    OK,
    config_name,
    is_run_folder,
    read_config_split,
    read_meta,
    usable,
)
from shiftbench.core.data.sources import RANKING_TYPES, Source, resolve_source, source_meta
from shiftbench.core.hub import check_files, fetch_release
from shiftbench.core.messages import counted
from shiftbench.core.records import DataRow, SourceRecord, plain
from shiftbench.errors import InputError
from shiftbench.evaluate.evaluators import EVALUATORS, train_split

if TYPE_CHECKING:
    pass


@dataclass
class ConfigView:
    """One config's rows per split, with the metadata that says what it is."""

    name: str
    meta: Mapping[str, Any]  # the config's record, as evaluate works on it (records.plain)
    splits: dict[str, list[DataRow]]


@dataclass
class Collection:
    """Everything evaluate scores: the source's description and its configs."""

    label: str
    source: SourceRecord  # the source's record (shiftbench.json's, or made from the source)
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
    return Collection(folder.resolve().name, meta["source"], configs, rewrite)


def collect_source(source: Source) -> Collection:

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
    return Collection(source.name, source_meta(source), configs)


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

    recorded = collection.source
    if recorded["task_type"] not in RANKING_TYPES:
        return collection
    originals = [c for c in collection.configs if c.meta["kind"] == "original"]
    if all(n in c.splits for c in originals for n in recorded.get("context_splits", [])):
        return collection  # a run that rewrote its corpus holds its context itself
    if task := recorded.get("mteb_task"):
        spec, local_copy = task, data_dir
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

    with tempfile.TemporaryDirectory(prefix="shiftbench-evaluate-") as scratch:
        local, repo, tag, sha = fetch_release(spec, Path(scratch), quiet=True, what="evaluate")
        problems = check_files(local, tag)
        if problems:
            raise InputError(f"{repo}@{tag} does not match its manifest: {problems[0]}")
        collection = collect_run_folder(local)
    collection.label = f"{repo.split('/')[-1]}@{tag}"
    collection.source = {**collection.source, "release": {"repo": repo, "tag": tag, "commit": sha}}
    return collection


def require_evaluable(source: SourceRecord, label: str) -> None:
    """Refuse what evaluate cannot score, before any data loads."""
    task_type = source["task_type"]
    if task_type not in EVALUATORS:
        raise InputError(
            f"evaluate scores {', '.join(EVALUATORS)} tasks so far; {label} is {task_type}"
        )
    if task_type == "Summarization":
        from shiftbench.evaluate.evaluators.summarization import SUPERSEDED

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
    source = collection.source.copy()
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
                        f"{collection.label} {config.name}/{split} has "
                        f"{counted(n, 'usable pair')}; "
                        f"STS correlates at least two (use a larger --limit)"
                    )
