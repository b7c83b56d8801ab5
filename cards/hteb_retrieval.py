"""A retrieval run written as HTEB's transformation files (`shiftbench hteb export`).

cards/hteb.py hands a retrieval run here. HTEB's files hold the corpus and the judgements
beside the queries (core/data/hteb_retrieval.py), so the run must hold them too: one
imported from HTEB, or made with `--rewrite queries,corpus`. Each transform config HTEB
has becomes one pair: the original config's documents, queries and judgements as HTEB's
records, and beside them the same records with the variant's rewritten queries and, when
the variant rewrote its corpus (`transform_corpus`), its rewritten documents. A text
HTEB's generator would have given up on is written empty (core/data/hteb.py `given_up`:
an unusable output, a text whose own status is `truncated` or `fallback`), as
`--protocol hteb` restores exactly those; a blank original, which HTEB never sends, is
written as it was, and so is a document field the run did not rewrite.

An imported config gets its own metadata and its records' layout back, so import then
export writes the same bytes. Any other gets metadata made as HTEB's writer makes it: no
generation time, limits from the run, statistics counted from the records, the retry
history unknown, and a data filter report that left nothing out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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
    staged,
    write_checked,
)
from shiftbench.core.data.hteb import DATASETS, given_up, stored_statistics
from shiftbench.core.data.hteb_retrieval import (
    CORPUS,
    PARTS,
    QRELS,
    QUERIES,
    Layout,
    blank,
    check_filter_report,
    check_records,
    check_rewrite,
    component_splits,
    derived_layout,
    part_counts,
    records_of,
    targets,
)
from shiftbench.core.data.parts import folder_split
from shiftbench.core.data.runfolder import read_config_split
from shiftbench.core.records import DataRow, RunMeta
from shiftbench.errors import InputError

LAYOUT_KEY = "records"  # gen/hteb_retrieval.py keeps the records' layout there


def export_retrieval(
    run: Path, output: Path, meta: RunMeta, dataset: str, generator: str | None
) -> Exported:
    """Write the retrieval run `run` (its shiftbench.json `meta`, HTEB's `dataset`) as
    HTEB's transformation tree under `output`. A bad input raises InputError, and
    nothing is written."""
    source = meta["source"]
    splits = list(source.get("splits") or [])
    subsets = {c.get("subset", "default") for c in meta["configs"].values()}
    if len(splits) != 1 or subsets != {"default"}:
        raise InputError(
            f"{run}: HTEB's {dataset} is one split of one subset; the run has splits "
            f"{', '.join(splits)} and subsets {', '.join(sorted(subsets))}"
        )
    split = splits[0]
    names = {QUERIES: split, CORPUS: folder_split(f"corpus/{split}"),
             QRELS: folder_split(f"qrels/{split}")}  # fmt: skip
    original = meta["configs"].get("original")
    if original is None or any(n not in original["rows"] for n in names.values()):
        raise InputError(
            f"{run}: its original config holds no corpus and judgements of its own, which "
            "HTEB's files hold; export a run imported from HTEB or made with "
            "--rewrite queries,corpus"
        )
    rows = {part: read_config_split(run, meta, "original", n) for part, n in names.items()}
    stems = hteb_configs(run, meta)
    held = next(
        (i["hteb"][LAYOUT_KEY] for i in stems.values() if LAYOUT_KEY in i.get("hteb", {})), None
    )
    layout = (
        Layout.from_record(held)
        if held is not None
        else derived_layout(rows, component_splits(dataset, split), hteb_language(source))
    )
    originals = records_of(rows, layout)
    folders = []
    with staged(output) as stage:
        for name, info in stems.items():
            model = generator_id(run, name, info, generator)
            rewrites_corpus = names[CORPUS] in info["rows"]
            own = {QUERIES: read_config_split(run, meta, name, split)}
            if rewrites_corpus:
                own[CORPUS] = read_config_split(run, meta, name, names[CORPUS])
            transformed = _transformed(originals, own, rewrites_corpus, f"{run / name}")
            config = ConfigPair(name, info, model, originals, transformed)
            doc = _metadata(config, dataset, source, rewrites_corpus)
            pair = write_checked(stage, doc, config, run)
            check_records(originals, pair.data)
            if "data_filtering" in doc:
                check_filter_report(doc["data_filtering"], originals, pair.data)
            check_rewrite(originals, transformed, rewrites_corpus, str(pair.data))
            folders.append(pair_folder(doc))
    return Exported(output, tuple(folders), left_out(meta, stems))


def _transformed(
    originals: list[DataRow],
    own: dict[str, list[DataRow]],
    rewrites_corpus: bool,
    where: str,
) -> list[DataRow]:
    """The original records with each text HTEB rewrote as the variant has it: empty
    where HTEB's generator would have given up, the original where HTEB never sent it (a
    blank text) or the run did not rewrite it (a document's title, which gen keeps)."""
    by_id = {part: {r["row_id"]: r for r in rows} for part, rows in own.items()}
    position = dict.fromkeys(PARTS, 0)
    out = []
    sent = targets(originals, rewrites_corpus)
    for i, record in enumerate(originals):
        part = record["_hteb_part"]
        new = dict(record)
        fields = [f for f in ("title", "text") if (i, f) in sent]
        if fields:
            row = by_id[part].get(position[part])
            if row is None:
                raise InputError(f"{where}: has no {part} row {position[part]}")
            for field in fields:
                if blank(record[field]) or f"original_{field}" not in row:
                    continue
                (failed,) = given_up(row, field)
                new[field] = "" if failed else row[field]
        if part != QRELS:
            position[part] += 1
        out.append(new)
    return out


def _metadata(
    config: ConfigPair, dataset: str, source: Any, rewrites_corpus: bool
) -> dict[str, Any]:
    """The pair's metadata, in the order HTEB's writer puts its keys."""
    kept = kept_metadata(config, (LAYOUT_KEY,))
    if kept is not None:
        return kept
    originals, transformed = config.originals, config.transformed
    sent = [(k, n) for k, n in targets(originals, rewrites_corpus).items() if n is not None]
    failed = [(i, f) for (i, f), _ in sent if blank(transformed[i][f])]
    unchanged = [(i, f) for (i, f), _ in sent if transformed[i][f] == originals[i][f]]
    counts = part_counts(originals)
    revision = source.get("revision")
    same_data = source.get("dataset_path") == DATASETS[dataset].hf_dataset
    pinned = same_data and isinstance(revision, str) and re.fullmatch(r"[0-9a-f]{40}", revision)
    statistics = stored_statistics(
        len(originals),
        len({i for (i, _), _ in sent}),
        len(sent),
        len({i for i, _ in failed}),
        len(failed),
        len(unchanged),
    )
    # what HTEB's generator records of its data filter, which here left nothing out
    filtering = {
        "version": 2,
        "task_type": "retrieval",
        "input_scope": "stored_records",
        "counts_before": counts,
        "counts_after": dict(counts),
        "excluded": [],
        "excluded_documents": [],
        "excluded_candidates": [],
    }
    doc = made_metadata(config, dataset, statistics, revision if pinned else None, filtering)
    doc["transform_corpus"] = rewrites_corpus
    return doc
