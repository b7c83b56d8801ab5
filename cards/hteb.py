"""A run folder written as HTEB's transformation files, for HTEB's reuse mode.

Each transform config whose transformation HTEB has becomes one pair in
`<root>/<generator>/<dataset>/<transformation>/<seed>/`: a Parquet file with HTEB's two
record columns (`original` and `<transformation>_seed_<seed>`, records of one type, no
schema metadata) and its metadata JSON, named and hashed as HTEB names them. The original
records are the run folder's `original` rows with the fields HTEB adds (`_hteb_split`,
`language`: the dataset's language, or for a per-language clustering dataset each
subset's name, its subsets' records one after another); a rewritten text HTEB's generator
would have given up on is written empty, as HTEB writes its fallbacks: a blank,
placeholder or punctuation-only output, and a text whose own status (`status_<field>`;
in a row without one, the row's) is `truncated` or `fallback`. These are exactly the
texts `--protocol hteb` puts back (evaluate/restore.py), so HTEB's reuse mode scores the
export as shiftbench scores the run. Every other output is written as it is, since
HTEB's generator makes no other check. Every pair written is read back
with HTEB's rules (core/data/hteb.py) before the tree is moved into place. Reranking and
summarisation runs are written by cards/hteb_lists.py.

A retrieval run is written by cards/hteb_retrieval.py: its corpus and judgements go into
every pair beside its queries.

A config imported from HTEB (`shiftbench hteb import`) gets its own metadata back
(generation time, limits, statistics, data filtering). Any other gets metadata made from
the run folder: no generation time (so the files are `data.parquet` and `metadata.JSON`,
which HTEB reads and any dated pair outranks), `max_tokens` its token cap, `max_retries`
its attempts less one, `max_model_length` the generator's context where the run recorded
it (Ollama's num_ctx, vllm's max_model_len; else HTEB's default, 8192), and statistics
counted from the rows, the retry history unknown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiftbench.cards.hteb_lists import LISTED, export_listed
from shiftbench.cards.hteb_pairs import (
    ConfigPair,
    Exported,
    generator_id,
    hteb_configs,
    hteb_language,
    kept_metadata,
    left_out,
    made_metadata,
    pair_folder,
    pinned,
    staged,
    write_checked,
)
from shiftbench.cards.hteb_retrieval import export_retrieval
from shiftbench.core.data.hteb import (
    DATASETS,
    MTEB_NAMES,
    given_up,
    stored_statistics,
    translated_languages,
)
from shiftbench.core.data.hteb_sets import as_hteb, check_records, to_hteb
from shiftbench.core.data.listfields import field_texts, regrouped
from shiftbench.core.data.runfolder import read_config_split, read_meta
from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.data.writes import writing
from shiftbench.core.records import ConfigRecord, DataRow, RunMeta
from shiftbench.errors import InputError

READ = ("STS", "PairClassification", "Classification", "Clustering")
# every task type an export writes: retrieval and the list-holding types in modules of their own
EXPORTED = (*READ, "Retrieval", *LISTED)


def export_hteb(run: Path, output: Path, *, generator: str | None = None) -> Exported:
    """Write the run folder `run` as HTEB's transformation tree under `output` (which
    must not exist). `generator` names the generator's Hub id where the run recorded a
    local model. A bad input raises InputError, and nothing is written.

    One export writes `output` at a time (writes.writing); holding it, an export also
    removes the staging folder an export killed midway left beside `output`."""
    with writing(output):
        return _export(run, output, generator)


def _export(run: Path, output: Path, generator: str | None) -> Exported:
    if output.exists():
        raise InputError(f"output {output} exists; choose another --output")
    meta = read_meta(run)
    source = meta["source"]
    task = source.get("mteb_task") or source["name"]
    dataset = MTEB_NAMES.get(str(task))
    if dataset is None:
        known = ", ".join(sorted(MTEB_NAMES))
        raise InputError(f"{run}: HTEB has no dataset for {task}; it has {known}")
    if source["task_type"] == "Retrieval":  # one record list of three parts: a module of its own
        return export_retrieval(run, output, meta, dataset, generator)
    definition = DATASETS[dataset]
    if definition.eval_split is not None:  # the one split HTEB scores of several
        if definition.eval_split not in source.get("splits", []):
            raise InputError(
                f"{run}: HTEB scores {dataset}'s {definition.eval_split} split; the run holds "
                f"{', '.join(source.get('splits', [])) or 'none'}"
            )
        source = {**source, "splits": [definition.eval_split]}
    layout = definition.clustering_format
    if source["task_type"] in LISTED:  # reranking and summarisation: cards/hteb_lists.py
        return Exported(output, *export_listed(run, output, meta, dataset, generator))
    if source["task_type"] not in READ:
        raise InputError(f"{run}: exporting {source['task_type']} runs is not supported yet")
    held = {c.get("subset", "default") for c in meta["configs"].values()}
    subsets = [s for s in source.get("subsets") or ["default"] if s in held]
    by_config = bool(definition.languages)  # HTEB's configs, a subset each, in its order
    if by_config:
        subsets = [s for s in definition.languages if s in held]
        if held - set(definition.languages) - {"default"} or not subsets:
            raise InputError(
                f"{run}: HTEB's {dataset} has the configs {', '.join(definition.languages)}; "
                f"the run has {', '.join(sorted(held))}"
            )
    elif layout != "per_language" and subsets != ["default"]:
        raise InputError(
            f"{run}: HTEB's {dataset} has one subset; the run has {', '.join(subsets)}"
        )

    def records(stem: str) -> list[DataRow]:
        """A config's records over every subset, in the source's subset order."""
        out = []
        for subset in subsets:
            name = stem if subset == "default" else f"{stem}.{subset}"
            if name not in meta["configs"]:
                raise InputError(f"{run}: config {stem} lacks subset {subset} ({name})")
            label = subset if layout == "per_language" or by_config else hteb_language(source)
            out += [to_hteb(dataset, r) for r in _records(run, meta, name, source, label)]
        return out

    originals = records("original")
    stems: dict[str, ConfigRecord] = {}  # transform configs across subsets, by stem
    for name, info in hteb_configs(run, meta).items():
        stems.setdefault(name.removesuffix(f".{info.get('subset', 'default')}"), info)
    chosen = set()
    for stem in stems:
        chosen |= {stem if s == "default" else f"{stem}.{s}" for s in subsets}
    folders, relabelled = [], []
    with staged(output) as stage:
        for name, info in stems.items():
            model = generator_id(run, name, info, generator)
            rows = records(name)
            transformed = [
                _transformed(o, r, source["text_fields"], str(info.get("transform")))
                for o, r in zip(originals, rows, strict=True)
            ]
            # an imported pair's fields in the file's order; a nested dataset's rows of one
            # text each made one set, as HTEB's loader groups the Hub's rows
            keys = (info.get("hteb") or {}).get("record_keys")
            theirs, transformed = as_hteb(layout, originals, transformed, keys, run)
            config = ConfigPair(name, info, model, theirs, transformed)
            doc = _metadata(config, dataset, source, layout)
            pair = write_checked(stage, doc, config, run)
            check_records(dataset, layout, tuple(source["text_fields"]), theirs, transformed,
                          pair.data)  # fmt: skip
            folders.append(pair_folder(doc))
            if not _languages_agree(rows, originals, doc, source):
                relabelled.append(name)
    return Exported(output, tuple(folders), left_out(meta, chosen), tuple(relabelled))


def _languages_agree(
    rows: list[DataRow], originals: list[DataRow], doc: dict[str, Any], source: Any
) -> bool:
    """Whether each translated text is in the language HTEB's rules will name for it
    (always, for a transformation that keeps the language)."""
    if doc["transformation"] not in ("translation", "cross_translation"):
        return True
    fields = tuple(source["text_fields"])
    default = field_languages((source.get("languages") or {}).get("default") or [], ("text",))[0]
    theirs = translated_languages(
        originals, fields, doc["transformation"], doc["dataset"], doc["seed_transform"],
        default.code if default else None,
    )  # fmt: skip
    return all(
        theirs[(i, field)] is None or theirs[(i, field)] == row.get(f"language_{field}")
        for i, row in enumerate(rows)
        for field in fields
    )


def _records(
    run: Path, meta: RunMeta, name: str, source: Any, language: str | None
) -> list[DataRow]:
    """A config's rows as HTEB's records: the context (train) split first, then the
    scored ones, each row without its row_id and with `_hteb_split` and `language`."""
    info = meta["configs"][name]
    splits = [s for s in (*source.get("context_splits", []), *source.get("splits", []))
              if s in info["rows"]]  # fmt: skip
    out = []
    for split in splits:
        for row in read_config_split(run, meta, name, split):
            record = {k: v for k, v in row.items() if k != "row_id"}
            record["_hteb_split"] = split
            record["language"] = language
            out.append(record)
    return out


def _transformed(
    original: DataRow, row: DataRow, fields: list[str], transform: str
) -> dict[str, Any]:
    """The original record with its text fields as the variant has them, empty where
    HTEB's generator would have fallen back (core/data/hteb.py `gave_up`, as evaluate's
    hteb scoring reads it): an unusable output (blank, a placeholder, punctuation alone;
    an imported fallback among them) and a text whose own status is `truncated` or
    `fallback` (a row without per-text statuses: each text of a cut row)."""
    out = dict(original)
    for field in fields:
        value = row.get(field)
        texts = [
            "" if failed else text
            for text, failed in zip(field_texts(value), given_up(row, field), strict=True)
        ]
        out[field] = regrouped(value, texts)  # a set of texts keeps its shape
    return {k: out[k] for k in original}


def _metadata(config: ConfigPair, dataset: str, source: Any, layout: str | None) -> dict[str, Any]:
    """The pair's metadata, in HTEB's key order."""
    kept = kept_metadata(config)
    if kept is not None:
        return kept
    originals, transformed = config.originals, config.transformed
    fields = source["text_fields"]

    def pairs(o: DataRow, t: DataRow) -> list[tuple[Any, Any]]:
        """Each text of a record beside its rewrite (every member of a set of texts)."""
        return [p for f in fields for p in zip(field_texts(o[f]), field_texts(t[f]), strict=True)]

    texts = [p for o, t in zip(originals, transformed, strict=True) for p in pairs(o, t)]
    targeted = sum(
        1 for o, t in zip(originals, transformed, strict=True)
        if any(str(before).strip() for before, _ in pairs(o, t))
    )  # fmt: skip
    fallback = sum(1 for before, after in texts if str(before).strip() and not after)
    with_fallback = sum(
        1
        for o, t in zip(originals, transformed, strict=True)
        if any(str(before).strip() and not after for before, after in pairs(o, t))
    )
    # HTEB's own pin of the dataset, never mteb's (they differ for most datasets)
    revision = DATASETS[dataset].revision
    statistics = stored_statistics(
        len(originals),
        targeted,
        sum(1 for before, _ in texts if str(before).strip()),
        with_fallback,
        fallback,
        sum(1 for before, after in texts if after and after == before),
    )
    doc = made_metadata(config, dataset, statistics, pinned(revision))
    if layout:
        doc["clustering_format"] = layout
    return doc
