"""Sources: where a dataset comes from, what it holds, and which of its texts get transformed.

A source is an MTEB task (metadata from the `mteb` package: dataset path, pinned revision,
eval splits, subsets, languages, main score), optionally with its data read from a local
copy in Hub layout; or a plain local folder in Hub layout with a task type the user names;
or the small STS sample that ships with shiftbench.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from shiftbench.core.data.hubfolder import (
    card_metadata,
    folder_digest,
    load_local,
    read_card_configs,
    single_config,
)
from shiftbench.core.data.mteb_tasks import get_task, load_from_hub, task_protocol
from shiftbench.core.data.source_languages import OPTION, declared_languages
from shiftbench.core.messages import counted, option
from shiftbench.core.records import SourceRecord
from shiftbench.core.text.languages import get_language
from shiftbench.errors import InputError

SAMPLE_NAME = "sample"
SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample"  # the package root's


class SourceArguments(TypedDict):
    """`load_source`'s arguments, as a spec's source gives them to gen (and to each of a
    Ray run's shards, as JSON)."""

    name: str
    task_type: str | None
    data_dir: str | None
    subsets: tuple[str, ...]
    splits: tuple[str, ...]
    source_language: str | None


@dataclass(frozen=True)
class TaskSchema:
    """mteb's column conventions for one task type, and which columns shiftbench rewrites."""

    text_fields: tuple[str, ...]
    required: tuple[str, ...]
    main_score: str
    # text fields holding a list of texts per row, each text rewritten on its own
    list_fields: tuple[str, ...] = ()
    # the label column a row limit spreads over (gen --limit), so a small run keeps classes
    label_field: str | None = None


# Which fields each task type transforms (docs/guides/what-gets-rewritten.md). Columns follow
# mteb's own names after its dataset_transform. Types without a tabular layout (retrieval,
# reranking, summarisation) are named here so the contract is in one place; `tabular` says
# which ones gen can already rewrite row by row.
TASK_SCHEMAS: dict[str, TaskSchema] = {
    "STS": TaskSchema(
        ("sentence1", "sentence2"), ("sentence1", "sentence2", "score"), "cosine_spearman"
    ),
    "PairClassification": TaskSchema(
        ("sentence1", "sentence2"), ("sentence1", "sentence2", "labels"), "max_ap"
    ),
    "Classification": TaskSchema(("text",), ("text", "label"), "accuracy", label_field="label"),
    "Clustering": TaskSchema(
        ("sentences",), ("sentences", "labels"), "v_measure", label_field="labels"
    ),
    # Ranking tasks: the rows are the queries (only they are transformed); the corpus,
    # the relevance judgements and (Reranking) the candidates are context per split.
    "Retrieval": TaskSchema(("text",), ("id", "text"), "ndcg_at_10"),
    "Reranking": TaskSchema(("text",), ("id", "text"), "map_at_1000"),
    "Summarization": TaskSchema(
        ("machine_summaries",),
        ("text", "human_summaries", "machine_summaries", "relevance"),
        "cosine_spearman",
        list_fields=("machine_summaries", "human_summaries"),
    ),
}
TABULAR_TYPES = ("STS", "PairClassification", "Classification", "Clustering")
RANKING_TYPES = ("Retrieval", "Reranking")
# Types whose rows hold a list of texts to rewrite (listfields.py).
LISTED_TYPES = ("Summarization",)
# The context tables of a ranking split, and the columns each must have.
RANKING_TABLES: dict[str, tuple[str, ...]] = {
    "corpus": ("id", "text"),
    "qrels": ("query-id", "corpus-id", "score"),
    "top_ranked": ("query-id", "corpus-ids"),
}


def ranking_context(task_type: str, splits: tuple[str, ...]) -> tuple[str, ...]:
    """Context names ("corpus/test", ...) a ranking task needs for its scored splits."""
    if task_type not in RANKING_TYPES:
        return ()
    kinds = ("corpus", "qrels", "top_ranked") if task_type == "Reranking" else ("corpus", "qrels")
    return tuple(f"{kind}/{split}" for split in splits for kind in kinds)


def ranking_subsets(configs: dict[str, Any]) -> tuple[str, ...]:
    """The subsets of a ranking dataset in Hub layout: "<lang>-queries" configs name
    languages; a plain "queries" config is the single subset "default"."""
    if "queries" in configs:
        return ("default",)
    return tuple(name[: -len("-queries")] for name in configs if name.endswith("-queries"))


@dataclass(frozen=True)
class Source:
    """A resolved dataset: its identity, its layout and the fields shiftbench transforms."""

    name: str
    task_type: str
    dataset_path: str
    revision: str | None
    data_dir: Path | None
    subsets: tuple[str, ...]
    splits: tuple[str, ...]
    languages: dict[str, list[str]] = field(default_factory=dict)
    # where each subset's languages came from, when not from mteb (source_languages.py)
    language_origin: dict[str, str] = field(default_factory=dict)
    main_score: str = "cosine_spearman"
    mteb_task: str | None = None
    score_range: tuple[float, float] | None = None
    license: str | None = None
    # the BibTeX mteb records for the task, kept so that a card needs no mteb import
    citation: str | None = None
    # Splits that evaluation needs as they are, never rewritten (Classification's train).
    context_splits: tuple[str, ...] = ()
    # Settings of mteb's evaluation protocol that the task sets (Classification's
    # n_experiments, samples_per_label and seed); empty for the other task types.
    protocol: dict[str, object] = field(default_factory=dict)
    # text fields a run rewrites beyond the task type's own (parts.with_parts)
    extra_text_fields: tuple[str, ...] = ()

    @property
    def schema(self) -> TaskSchema:
        return TASK_SCHEMAS[self.task_type]

    @property
    def text_fields(self) -> tuple[str, ...]:
        return (*self.schema.text_fields, *self.extra_text_fields)

    @property
    def multi_subset(self) -> bool:
        return self.subsets != ("default",)

    def load(self, subset: str) -> dict[str, Any]:
        """Load one subset as {split: datasets.Dataset} with mteb's column names.

        The result holds the chosen splits, then the context splits.
        """
        if subset not in self.subsets:
            raise InputError(
                f"unknown subset (config) {subset!r} for {self.name}; "
                f"available: {', '.join(self.subsets)}"
            )
        if self.task_type in RANKING_TYPES:
            return _load_ranking(self, subset)
        if self.mteb_task is not None:
            splits = _load_mteb(self, subset)
        else:
            splits = load_local(self.data_dir or Path(self.dataset_path), subset)
        wanted = (*self.splits, *(c for c in self.context_splits if c not in self.splits))
        missing = [s for s in wanted if s not in splits]
        if missing:
            raise InputError(
                f"unknown split {missing[0]!r} for {self.name}[{subset}]; "
                f"available: {', '.join(splits)}"
            )
        out = {}
        for split in wanted:
            ds = splits[split]
            absent = [c for c in self.schema.required if c not in ds.column_names]
            if absent:
                raise InputError(
                    f"{self.task_type} needs columns {', '.join(self.schema.required)} but "
                    f"{self.name}[{subset}/{split}] lacks {', '.join(absent)} "
                    f"(found: {', '.join(ds.column_names)})"
                )
            out[split] = ds
        return out


def resolve_source(
    spec: str,
    *,
    task_type: str | None = None,
    data_dir: str | None = None,
    subsets: tuple[str, ...] = (),
    splits: tuple[str, ...] = (),
) -> Source:
    """Turn what the user typed into a Source, or raise InputError saying why not.

    Args:
        spec: an MTEB task name, a local folder in Hub layout, or "sample".
        task_type: required for a local folder; must match mteb's for a task name.
        data_dir: a local Hub-layout copy of an MTEB task's dataset.
        subsets: subsets (Hub configs) to keep; all by default.
        splits: splits to keep; mteb's eval splits (or "test") by default.
    """
    if task_type is not None and task_type not in TASK_SCHEMAS:
        raise InputError(f"unknown task type {task_type!r}; choose from {', '.join(TASK_SCHEMAS)}")
    if spec == SAMPLE_NAME:
        source = _local_source(SAMPLE_DIR, "STS", name=SAMPLE_NAME)
        source = _with(
            source,
            dataset_path="shiftbench/sample",
            data_dir=SAMPLE_DIR,
            score_range=(0.0, 5.0),
            languages={"default": ["eng-Latn"]},
            language_origin={},
            license="cc-by-4.0",
        )
    elif os.path.isdir(spec):
        if task_type is None:
            raise InputError(
                f"{spec} is a local folder: name its task type with {option('task_type')} "
                f"({', '.join(TASK_SCHEMAS)})"
            )
        if data_dir is not None:
            raise InputError(
                f"{option('data_dir')} goes with an MTEB task name, not a local folder"
            )
        source = _local_source(Path(spec), task_type, name=Path(spec).resolve().name)
    else:
        source = _mteb_source(spec, task_type, Path(data_dir) if data_dir else None)
    return _select(source, subsets, splits)


def _select(source: Source, subsets: tuple[str, ...], splits: tuple[str, ...]) -> Source:
    for subset in subsets:
        if subset not in source.subsets:
            raise InputError(
                f"unknown subset (config) {subset!r} for {source.name}; "
                f"available: {', '.join(source.subsets)}"
            )
    chosen = tuple(splits) or source.splits
    context = tuple(c for c in source.context_splits if c not in chosen)
    if source.task_type in RANKING_TYPES:
        context = ranking_context(source.task_type, chosen)
    return _with(
        source,
        subsets=tuple(subsets) or source.subsets,
        splits=chosen,
        context_splits=context,
    )


def load_source(
    name: str,
    *,
    task_type: str | None = None,
    data_dir: str | Path | None = None,
    subsets: tuple[str, ...] = (),
    splits: tuple[str, ...] = (),
    source_language: str | None = None,
) -> Source:
    """A source to generate from or evaluate, checked; nothing is downloaded yet.

    Args:
        name: An MTEB task name, a local folder in Hub layout (with `task_type`), or
            "sample" for the small STS set shiftbench ships.
        task_type: The task type of a local folder.
        data_dir: A local copy (Hub layout) of an MTEB task's dataset, read instead of
            the Hub.
        subsets: Subsets (Hub configs) to use; () for all.
        splits: Splits to use; () for mteb's evaluation splits (a local folder: test).
        source_language: The texts' language, overriding metadata and language ID: one
            code, or one per text field, comma-separated.

    Raises:
        InputError: The source cannot be read as asked.
    """

    source = resolve_source(
        name,
        task_type=task_type,
        data_dir=None if data_dir is None else str(data_dir),
        subsets=tuple(subsets),
        splits=tuple(splits),
    )
    if source_language is not None:
        codes = [c.strip() for c in source_language.split(",")]
        source = with_language(source, [get_language(c) for c in codes])
    return source


def with_language(source: Source, language: Any) -> Source:
    """The source with every subset's language set (for folders whose metadata lacks it):
    one language for every text field, or a list of one per field."""

    langs = language if isinstance(language, list | tuple) else [language]
    if len(langs) not in {1, len(source.text_fields)}:
        raise InputError(
            f"{option('source_language')} names {counted(len(langs), 'language')}; give one, "
            "or one per text "
            f"field ({', '.join(source.text_fields)})"
        )
    tags = [lang.iso3 for lang in langs]
    return _with(
        source,
        languages={subset: tags for subset in source.subsets},
        language_origin={subset: OPTION for subset in source.subsets},
    )


def _with(source: Source, **changes: Any) -> Source:
    return Source(**{**source.__dict__, **changes})


# --- local folders -------------------------------------------------------------------------


def _local_source(folder: Path, task_type: str, *, name: str) -> Source:
    configs = read_card_configs(folder)
    subsets = tuple(configs)
    first = next(iter(configs.values()))
    if task_type in RANKING_TYPES:
        subsets = ranking_subsets(configs)
        if not subsets:
            raise InputError(
                f"{folder} has no queries config; a {task_type} folder holds corpus, "
                "queries and qrels configs (or <lang>-corpus, <lang>-queries, <lang>-qrels)"
            )
        first = configs[_ranking_config(subsets[0], "queries")]
    default_splits: tuple[str, ...] = ("test",) if "test" in first else tuple(first)
    context: tuple[str, ...] = ()
    if task_type == "Classification" and "train" in first:
        context = ("train",)
    context = ranking_context(task_type, default_splits) or context

    meta = card_metadata(folder)
    languages, origin = declared_languages(
        meta if isinstance(meta, dict) else {}, subsets, len(TASK_SCHEMAS[task_type].text_fields)
    )
    return Source(
        name=name,
        task_type=task_type,
        dataset_path=str(folder.resolve()),
        revision=folder_digest(folder),
        data_dir=None,
        subsets=subsets,
        splits=default_splits,
        context_splits=context,
        main_score=TASK_SCHEMAS[task_type].main_score,
        languages=languages,
        language_origin=origin,
    )


# --- MTEB tasks ------------------------------------------------------------------------------


def _mteb_source(name: str, task_type: str | None, data_dir: Path | None) -> Source:
    task = get_task(name)
    meta = task.metadata
    if meta.type not in TASK_SCHEMAS:
        raise InputError(
            f"{name} is an MTEB {meta.type} task; shiftbench handles {', '.join(TASK_SCHEMAS)}"
        )
    if task_type is not None and task_type != meta.type:
        raise InputError(f"{name} is an MTEB {meta.type} task, not {task_type}")
    subsets = tuple(meta.hf_subsets)
    if data_dir is not None:
        if not data_dir.is_dir():
            raise InputError(f"{option('data_dir')} {data_dir} is not a folder")
        local = read_card_configs(data_dir)
        held_subsets = ranking_subsets(local) if meta.type in RANKING_TYPES else tuple(local)
        if meta.is_multilingual:
            subsets = tuple(s for s in subsets if s in held_subsets)
            if not subsets:
                raise InputError(
                    f"{data_dir} has none of {name}'s subsets "
                    f"({', '.join(meta.hf_subsets)}); it has {', '.join(local)}"
                )
    splits = tuple(meta.eval_splits)
    if data_dir is not None:
        # A local copy often holds only some of mteb's eval splits: default to those.
        held = next(iter(local.values()))
        if meta.type in RANKING_TYPES and held_subsets:
            held = local[_ranking_config(held_subsets[0], "queries")]
        splits = tuple(s for s in splits if s in held) or splits
    score_range = None
    if meta.type in ("STS", "Summarization"):
        score_range = (float(task.min_score), float(task.max_score))
    return Source(
        name=meta.name,
        task_type=meta.type,
        dataset_path=meta.dataset["path"],
        revision=meta.dataset.get("revision"),
        data_dir=data_dir,
        subsets=subsets,
        splits=splits,
        context_splits=(task.train_split,)
        if meta.type == "Classification"
        else ranking_context(meta.type, splits),
        protocol=task_protocol(task),
        languages=dict(meta.hf_subsets_to_langscripts),
        main_score=meta.main_score,
        mteb_task=meta.name,
        score_range=score_range,
        license=meta.license,
        citation=(meta.bibtex_citation or "").strip() or None,
    )


def _load_mteb(source: Source, subset: str) -> dict[str, Any]:
    """Load an MTEB task's subset and apply mteb's own dataset_transform to it."""
    assert source.mteb_task is not None
    task = get_task(source.mteb_task)
    if source.data_dir is not None:
        config = subset if task.metadata.is_multilingual else single_config(source.data_dir)
        data = load_local(source.data_dir, config, plain=False)  # mteb takes datasets'
        import datasets

        loaded = datasets.DatasetDict(data)
        task.dataset = {subset: loaded} if task.metadata.is_multilingual else loaded
        # A local copy may already be in mteb's schema (as copies made after mteb's
        # transform are); mteb's transform runs only on a copy that still needs it.
        first = next(iter(loaded.values()))
        if any(c not in first.column_names for c in source.schema.required):
            task.dataset_transform()
        task.data_loaded = True
    else:
        load_from_hub(task, _hub_name(source))
    dataset = task.dataset[subset] if task.metadata.is_multilingual else task.dataset
    return dict(dataset)


def _ranking_config(subset: str, table: str) -> str:
    return table if subset == "default" else f"{subset}-{table}"


def _load_ranking(source: Source, subset: str) -> dict[str, Any]:
    """A ranking subset: {split: queries, "corpus/<split>": ..., "qrels/<split>": ...,
    ("top_ranked/<split>": ...)} as datasets in mteb's column names."""
    import datasets

    if subset not in source.subsets:
        raise InputError(
            f"unknown subset (config) {subset!r} for {source.name}; "
            f"available: {', '.join(source.subsets)}"
        )
    folder = source.data_dir or (Path(source.dataset_path) if source.mteb_task is None else None)
    tables: dict[str, Any] = {}
    if folder is not None:
        configs = read_card_configs(folder)
        kinds = {"queries", *(c.split("/")[0] for c in source.context_splits)}
        for kind in sorted(kinds):
            name = _ranking_config(subset, kind)
            if kind == "qrels" and name not in configs and "default" in configs:
                name = "default"  # single-subset mteb datasets keep their qrels as default
            if name not in configs:
                raise InputError(f"{folder} has no {name} config ({source.task_type} needs it)")
            tables[kind] = load_local(folder, name)
    else:
        task = get_task(source.mteb_task or "")
        load_from_hub(task, _hub_name(source))
        for split in source.splits:
            data = task.dataset[subset][split]
            qrels = [
                {"query-id": q, "corpus-id": d, "score": s}
                for q, docs in data["relevant_docs"].items()
                for d, s in docs.items()
            ]
            tables.setdefault("queries", {})[split] = data["queries"]
            tables.setdefault("corpus", {})[split] = data["corpus"]
            tables.setdefault("qrels", {})[split] = datasets.Dataset.from_list(qrels)
            if data.get("top_ranked"):
                ranked = [
                    {"query-id": q, "corpus-ids": ids} for q, ids in data["top_ranked"].items()
                ]
                tables.setdefault("top_ranked", {})[split] = datasets.Dataset.from_list(ranked)
    out: dict[str, Any] = {}
    for split in source.splits:
        if split not in tables["queries"]:
            raise InputError(
                f"unknown split {split!r} for {source.name}[{subset}]; "
                f"available: {', '.join(tables['queries'])}"
            )
        out[split] = _checked(source, subset, split, tables["queries"][split], ("id", "text"))
    for name in source.context_splits:
        kind, _, split = name.partition("/")
        table = tables.get(kind, {})
        # a corpus or qrels table with one split serves every split
        ds = table.get(split) if split in table else next(iter(table.values()), None)
        if ds is None:
            raise InputError(f"{source.name}[{subset}] has no {kind} for {split}")
        out[name] = _checked(source, subset, name, ds, RANKING_TABLES[kind])
    return out


def _checked(source: Source, subset: str, split: str, ds: Any, required: tuple[str, ...]) -> Any:
    absent = [c for c in required if c not in ds.column_names]
    if absent:
        raise InputError(
            f"{source.task_type} needs columns {', '.join(required)} but "
            f"{source.name}[{subset}/{split}] lacks {', '.join(absent)} "
            f"(found: {', '.join(ds.column_names)})"
        )
    return ds


def _hub_name(source: Source) -> str:
    return f"{source.dataset_path}@{(source.revision or '')[:12]}"


def source_meta(source: Source) -> SourceRecord:
    """What shiftbench.json records about the source (also how folders are matched)."""
    record = {
        "name": source.name,
        "task_type": source.task_type,
        "dataset_path": source.dataset_path,
        "revision": source.revision,
        "mteb_task": source.mteb_task,
        "subsets": list(source.subsets),
        "splits": list(source.splits),
        "context_splits": list(source.context_splits),
        "languages": source.languages,
        **({"language_origin": source.language_origin} if source.language_origin else {}),
        "main_score": source.main_score,
        "text_fields": list(source.text_fields),
        "score_range": list(source.score_range) if source.score_range else None,
        "license": source.license,
        **({"citation": source.citation} if source.citation else {}),
        # only where the task type has evaluation settings, so other run folders keep theirs
        **({"protocol": source.protocol} if source.protocol else {}),
    }
    return cast(SourceRecord, record)
