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

from pathlib import Path

from shiftbench.core.data.hteb import (
    TRANSFORMATIONS,
    Pair,
    cross_translation_target,
    record_languages,
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
)
from shiftbench.core.data.sources import Source
from shiftbench.core.records import DataRow, RunExtras
from shiftbench.errors import InputError
from shiftbench.gen.configs import original_config
from shiftbench.gen.hteb_imported import (
    TRANSLATING,
    Imported,
    finish_row,
    hteb_protocol,
    imported_source,
    pair_config,
    recorded_language,
    write_imported,
)
from shiftbench.gen.rewrite import EMPTY_INPUT

LAYOUT_KEY = "records"  # where a variant's `hteb` keeps the records' layout


def import_retrieval(
    folder: Path,
    output: Path,
    read: list[tuple[Pair, list[DataRow], list[DataRow]]],
    source: Source,
) -> Imported:
    """Write the checked pairs `read` ((pair, originals, rewritten) each, one original
    record list for all) of the retrieval dataset `folder` as a new run folder at
    `output`. A bad record raises InputError naming its file, and nothing is written."""
    name = folder.name
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
    recorded = imported_source(source, name, first)
    recorded["subsets"] = ["default"]
    recorded["splits"] = [split]
    recorded["context_splits"] = [f"corpus/{split}", f"qrels/{split}"]
    language = recorded_language(recorded, "default")
    configs = [original_config(splits)]
    for pair, _, transformed in read:
        configs.append(_variant(pair, name, layout, originals, transformed, rows, split, language))
    top: RunExtras = {"protocol": hteb_protocol((r[0] for r in read), source.task_type)}
    if any(r[0].metadata["transform_corpus"] for r in read):
        top["rewrite"] = [QUERIES_PART, CORPUS_PART]
    return write_imported(output, name, first, recorded, configs, top)


def _languages(
    pair: Pair, dataset: str, originals: list[DataRow], default: str | None
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
        if ordinal is None or ours not in TRANSLATING:
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
    originals: list[DataRow],
    transformed: list[DataRow],
    rows: dict[str, list[DataRow]],
    split: str,
    language: str | None,
) -> ConfigData:
    """One pair as a transform config: its queries, and its documents when it rewrote
    them, each rewritten text beside its original with its own status."""
    ours = TRANSFORMATIONS[pair.transformation]
    rewrites_corpus = bool(pair.metadata["transform_corpus"])
    sent = targets(originals, rewrites_corpus)
    languages = _languages(pair, dataset, originals, language)
    out: dict[str, list[DataRow]] = {split: []}
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
        finish_row(row, statuses, ours, sent_statuses)
        out[split if part == QUERIES else folder_split(f"corpus/{split}")].append(row)
    targeted = {v for k, v in languages.items() if sent[k] is not None and v}
    return pair_config(pair, "default", out, language, {"text": language}, targeted,
                          **{LAYOUT_KEY: layout.record()})  # fmt: skip
