"""HTEB's retrieval files imported as a self-contained run folder (`shiftbench hteb import`).

gen/hteb.py finds and checks the pairs of a dataset's folder and hands a retrieval
dataset's here. Its records (core/data/hteb_retrieval.py) become the `original` config's
queries (the evaluation split, e.g. `test`), documents (`corpus.test`) and judgements
(`qrels.test`), so `evaluate` needs no source. Each pair becomes a variant holding its
rewritten queries and, when its metadata says `transform_corpus`, its rewritten documents
(`corpus.test`; the title and the text each rewritten on its own), so it is scored on its
own corpus; otherwise on the original's. Each text has its own status, as for every other
task type: `fallback` where HTEB's generator gave up (an empty text), `identical` for an
output equal to its input, `empty-input` for a blank original HTEB never sent (kept as it
was), `ok` otherwise. The pair's metadata is kept under `hteb`, with the records' layout,
so an export writes the same files back.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, cast

from shiftbench.core.data.hteb import (
    DATASETS,
    TRANSFORMATIONS,
    Pair,
    cross_translation_target,
    record_languages,
    target_pool,
    translation_target,
)
from shiftbench.core.data.hteb_retrieval import (
    CORPUS,
    QRELS,
    QUERIES,
    Layout,
    blank,
    check_filter_report,
    check_records,
    check_rewrite,
    rows_of,
    targets,
)
from shiftbench.core.data.parts import CORPUS as CORPUS_PART
from shiftbench.core.data.parts import QUERIES as QUERIES_PART
from shiftbench.core.data.parts import folder_split
from shiftbench.core.data.runfolder import (
    FALLBACK,
    IDENTICAL,
    OK,
    ConfigData,
    tally_status,
    usable,
    write_run,
)
from shiftbench.core.data.sources import Source, source_meta
from shiftbench.core.data.writes import writing
from shiftbench.core.hub import sha256_file
from shiftbench.core.protocols import apply_protocol, get_protocol
from shiftbench.core.records import ConfigRecord, RunExtras
from shiftbench.core.text.transforms import TRANSFORMS
from shiftbench.errors import InputError
from shiftbench.gen.hteb_imported import Imported, subset_language
from shiftbench.gen.rewrite import EMPTY_INPUT

LAYOUT_KEY = "records"  # where a variant's `hteb` keeps the records' layout


def import_retrieval(
    folder: Path,
    output: Path,
    read: list[tuple[Pair, list[dict[str, Any]], list[dict[str, Any]]]],
    source: Source,
) -> Imported:
    """Write the checked pairs `read` ((pair, originals, rewritten) each, one original
    record list for all) of the retrieval dataset `folder` as a new run folder at
    `output`. A bad record raises InputError naming its file, and nothing is written."""
    name = folder.name
    definition = DATASETS[name]
    first = read[0][0]
    originals = read[0][1]
    layout = check_records(originals, first.data)
    split = source.splits[0]
    if layout.splits[QRELS] != split:
        raise InputError(
            f"{first.data}: its judgements are of split {layout.splits[QRELS]!r}; "
            f"{source.name} is scored on {split!r}"
        )
    for pair, _, transformed in read:
        if "data_filtering" in pair.metadata:
            check_filter_report(pair.metadata["data_filtering"], originals, pair.data)
        column = f"{pair.transformation}_seed_{pair.seed}"
        check_rewrite(
            originals, transformed, bool(pair.metadata["transform_corpus"]), f"{pair.data} {column}"
        )
    rows = rows_of(originals)
    corpus_split, qrels_split = folder_split(f"corpus/{split}"), folder_split(f"qrels/{split}")
    splits = {split: rows[QUERIES], corpus_split: rows[CORPUS], qrels_split: rows[QRELS]}
    recorded = source_meta(source)
    recorded["dataset_path"] = definition.hf_dataset
    revision = first.metadata.get("source_revision")
    if revision:
        recorded["revision"] = revision
    recorded["row_limit"] = None
    recorded["subsets"] = ["default"]
    recorded["splits"] = [split]
    recorded["context_splits"] = [f"corpus/{split}", f"qrels/{split}"]
    language = subset_language(recorded, "default")
    original = cast(
        ConfigRecord,
        {"kind": "original", "subset": "default", "rows": {s: len(r) for s, r in splits.items()}},
    )
    configs = [ConfigData("original", original, splits)]
    for pair, _, transformed in read:
        configs.append(_variant(pair, name, layout, originals, transformed, rows, split, language))
    used = [TRANSFORMATIONS[p.transformation] for p in (r[0] for r in read)]
    applied = apply_protocol(
        get_protocol("hteb"),
        {
            "transforms": tuple(dict.fromkeys(used)),
            "seeds": tuple(sorted({r[0].seed for r in read})),
        },
    )
    top: RunExtras = {"protocol": applied.record(source.task_type)}
    if any(r[0].metadata["transform_corpus"] for r in read):
        top["rewrite"] = [QUERIES_PART, CORPUS_PART]
    with writing(output):
        write_run(output, recorded, configs, None, top)
    model = str(first.metadata["generator_model"])
    return Imported(output, name, model, tuple(c.name for c in configs))


def _languages(
    pair: Pair, dataset: str, originals: list[dict[str, Any]], default: str | None
) -> dict[tuple[int, str], str | None]:
    """Where a translation or cross-translation sent each text (HTEB's rules: its files do
    not say); every other transformation keeps the text's language."""
    ours = TRANSFORMATIONS[pair.transformation]
    sent = targets(originals, bool(pair.metadata["transform_corpus"]))
    out: dict[tuple[int, str], str | None] = {}
    for (i, field), ordinal in sent.items():
        own = record_languages(originals[i].get("language"), None) or (
            (default,) if default else ()
        )
        if ordinal is None or ours not in ("translation", "cross-translation"):
            out[(i, field)] = default
        elif ours == "translation":
            out[(i, field)] = translation_target(dataset, pair.seed, own)
        else:
            out[(i, field)] = cross_translation_target(pair.seed, ordinal, own)
    return out


def _variant(
    pair: Pair,
    dataset: str,
    layout: Layout,
    originals: list[dict[str, Any]],
    transformed: list[dict[str, Any]],
    rows: dict[str, list[dict[str, Any]]],
    split: str,
    language: str | None,
) -> ConfigData:
    """One pair as a transform config: its queries, and its documents when it rewrote
    them, each rewritten text beside its original with its own status."""
    ours = TRANSFORMATIONS[pair.transformation]
    transform = TRANSFORMS[ours]
    rewrites_corpus = bool(pair.metadata["transform_corpus"])
    sent = targets(originals, rewrites_corpus)
    languages = _languages(pair, dataset, originals, language)
    out: dict[str, list[dict[str, Any]]] = {split: []}
    if rewrites_corpus:
        out[folder_split(f"corpus/{split}")] = []
    position = {QUERIES: 0, CORPUS: 0}
    for i, (before, after) in enumerate(zip(originals, transformed, strict=True)):
        part = before["_hteb_part"]
        if part == QRELS or (part == CORPUS and not rewrites_corpus):
            continue
        row = dict(rows[part][position[part]])
        position[part] += 1
        statuses = []
        for field in (f for f in ("title", "text") if (i, f) in sent):
            original, text = before[field], after.get(field)
            if blank(original):
                status, text = EMPTY_INPUT, original  # never sent: HTEB keeps it
            elif blank(text):
                status, text = FALLBACK, ""
            else:
                status = IDENTICAL if text == original else OK
            row[field] = text
            row[f"original_{field}"] = original
            row[f"language_{field}"] = languages[(i, field)]
            row[f"status_{field}"] = status
            statuses.append(status)
        sent_statuses = [s for s in statuses if s != EMPTY_INPUT] or [EMPTY_INPUT]
        failed = [s for s in sent_statuses if not usable(s, ours)]
        row["status"] = failed[0] if failed else (IDENTICAL if IDENTICAL in statuses else OK)
        row["attempt"] = None  # HTEB counts retries per file, not per text
        out[split if part == QUERIES else folder_split(f"corpus/{split}")].append(row)
    meta = pair.metadata
    stats = meta["generation_statistics"]
    targeted = sorted({v for k, v in languages.items() if sent[k] is not None and v})
    record = cast(
        ConfigRecord,
        {
            "kind": "transform",
            "subset": "default",
            "settings_sha256": hashlib.sha256(
                json.dumps(meta, sort_keys=True).encode("utf-8")
            ).hexdigest(),
            "transform": ours,
            "transform_version": transform.version,
            "axis": transform.axis,
            "calls": transform.calls,
            "seed": pair.seed,
            "prompt_variant": None,
            "prompts": [],  # HTEB's files do not record its prompts
            "token_budgets": [f"flat: {meta['max_tokens']} tokens (HTEB)"],
            "max_new_tokens": meta["max_tokens"],
            "model": {"id": meta["generator_model"]},
            "backend": {"name": "hteb", "max_model_length": meta["max_model_length"]},
            "sampling": {},  # HTEB's files do not record its sampling
            "max_attempts": meta["max_retries"] + 1,
            "source_language": language,
            "source_languages": {"text": language},
            "language_pool": list(target_pool([language] if language else []))
            if ours in ("translation", "cross-translation")
            else [],
            "target_languages": targeted if ours in ("translation", "cross-translation") else [],
            "rows": {s: len(r) for s, r in out.items()},
            "status_counts": {s: tally_status(r) for s, r in out.items()},
            "hteb": {
                **meta,
                "file": pair.data.name,
                "file_sha256": sha256_file(pair.data),
                "fallback_texts": stats["text_fields_with_fallback"],
                LAYOUT_KEY: layout.record(),
            },
        },
    )
    return ConfigData(f"{ours}-s{pair.seed}", record, out)
