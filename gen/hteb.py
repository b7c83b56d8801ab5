"""HTEB's published transformation files, imported as a run folder.

One config per (transformation, seed) pair HTEB's loader would read (core/data/hteb.py
picks and checks it), and `original` from the pair's own original records, which must be
the same in every pair, as HTEB requires. Each text's status (`status_<field>`) comes
from what HTEB's file holds: a text its generator gave up on (HTEB writes it empty and
counts the reason, per file, not per text) is `fallback`, never the original in disguise;
an output equal to its input is `identical`; any other is `ok`. A row's `status` names
its first failed text. The run folder records HTEB's generator, generation limits,
statistics and data filtering per config (`hteb`), and the hteb protocol, so `evaluate`
scores it as HTEB does (a fallback text scored on its original, as HTEB's reuse mode
does).

STS, pair classification, classification and clustering are read: a per-language
dataset's records, and those of a dataset HTEB reads config by config (its
language_configs), become one subset per `language`; a nested clustering record (a set of
texts and its labels) becomes one row, its texts rewritten one by one
(core/data/hteb_sets.py). Retrieval (gen/hteb_retrieval.py), reranking and summarisation
(gen/hteb_lists.py) are read too. Other task types are refused in one line.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from shiftbench.core.data.hteb import (
    DATASETS,
    TRANSFORMATIONS,
    Pair,
    generator_model,
    latest_pair,
    read_pair,
    translated_languages,
)
from shiftbench.core.data.hteb_sets import check_records, language_order, text_outcomes, to_run
from shiftbench.core.data.listfields import field_texts, regrouped
from shiftbench.core.data.runfolder import (
    FALLBACK,  # noqa: F401 (the status a text HTEB gave up on gets: hteb_sets.text_outcomes)
    ConfigData,
)
from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.data.sources import load_source
from shiftbench.core.protocols import get_protocol
from shiftbench.core.records import DataRow, RunExtras, SourceRecord
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
from shiftbench.gen.hteb_lists import LISTED, listed_run
from shiftbench.gen.hteb_retrieval import import_retrieval

TABULAR = ("STS", "PairClassification", "Classification")
READ = (*TABULAR, "Clustering")
# every task type an import reads: retrieval and the list-holding types in modules of their own
IMPORTED = (*READ, "Retrieval", *LISTED)
HTEB_FIELDS = ("language",)  # fields HTEB adds to a source record (besides _hteb_*)


def dataset_folder(tree: Path, generator: str | None = None, dataset: str | None = None) -> Path:
    """The <generator>/<dataset> folder of an HTEB transformation tree: `tree` is that
    folder, a generator's folder or the root (data/transformations) that holds them;
    `generator` (a Hub id or its folder name) and `dataset` (HTEB's name) choose where
    `tree` holds several."""
    if not tree.is_dir():
        raise InputError(f"{tree} is not a folder")

    def holds_transformations(folder: Path) -> bool:
        return any((folder / name).is_dir() for name in TRANSFORMATIONS)

    def subfolders(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.is_dir())

    def only(found: list[Path], where: Path, what: str, option: str, chosen: str | None) -> Path:
        names = ", ".join(p.name for p in found)
        if chosen is not None:
            picked = [p for p in found if chosen in (p.name, generator_model(p.name))]
            if not picked:
                raise InputError(f"{where} holds no {what} {chosen!r}; it holds: {names}")
            return picked[0]
        if len(found) != 1:
            raise InputError(
                f"{where} holds {len(found)} {what}s ({names}); choose one with {option}"
            )
        return found[0]

    if holds_transformations(tree):
        folder = tree
    elif datasets := [p for p in subfolders(tree) if holds_transformations(p)]:
        folder = only(datasets, tree, "dataset", "--dataset", dataset)
    else:
        generators = [p for p in subfolders(tree) if any(map(holds_transformations, subfolders(p)))]
        if not generators:
            raise InputError(
                f"{tree} holds no HTEB transformation tree "
                "(<generator>/<dataset>/<transformation>/<seed>/data_<hash>.parquet)"
            )
        chosen = only(generators, tree, "generator", "--generator", generator)
        datasets = [p for p in subfolders(chosen) if holds_transformations(p)]
        folder = only(datasets, chosen, "dataset", "--dataset", dataset)
    if folder.name not in DATASETS:
        raise InputError(
            f"{folder}: unknown HTEB dataset {folder.name!r}; known: {', '.join(sorted(DATASETS))}"
        )
    return folder


def find_pairs(folder: Path) -> list[Pair]:
    """The pair HTEB reads from each <transformation>/<seed> folder, in name order."""
    pairs = []
    for transformation in sorted(p for p in folder.iterdir() if p.is_dir()):
        if transformation.name not in TRANSFORMATIONS:
            raise InputError(
                f"{transformation}: unknown HTEB transformation {transformation.name!r}; "
                f"known: {', '.join(TRANSFORMATIONS)}"
            )
        for seed in sorted((p for p in transformation.iterdir() if p.is_dir()), key=_seed):
            pairs.append(latest_pair(seed))
    if not pairs:
        raise InputError(f"{folder} holds no <transformation>/<seed> folder")
    return pairs


def _seed(folder: Path) -> int:
    if not folder.name.isdigit():
        raise InputError(f"{folder}: a seed folder is named by its seed, a whole number")
    return int(folder.name)


def import_hteb(
    tree: Path,
    output: Path,
    *,
    generator: str | None = None,
    dataset: str | None = None,
) -> Imported:
    """Read an HTEB transformation tree (see dataset_folder) into a new run folder at
    `output`. A bad tree raises InputError naming the file, and nothing is written."""
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InputError(f"output {output} exists; choose another --output")
    folder = dataset_folder(tree, generator, dataset)
    pairs = find_pairs(folder)
    read = [(pair, *read_pair(pair)) for pair in pairs]
    first_pair, originals, _ = read[0]
    for pair, theirs, _ in read[1:]:
        if theirs != originals:
            raise InputError(
                f"{pair.data}: its original records differ from those of {first_pair.data}; "
                "HTEB scores one dataset against the same originals"
            )
    name = folder.name
    definition = DATASETS[name]
    source = load_source(definition.task)
    if definition.eval_split is not None:  # the one split HTEB scores of several
        source = replace(source, splits=(definition.eval_split,))
    if source.task_type == "Retrieval":  # one record list of three parts: a module of its own
        return import_retrieval(folder, output, read, source)
    listed = source.task_type in LISTED  # reranking and summarisation: gen/hteb_lists.py
    if not listed and source.task_type not in READ:
        raise InputError(
            f"{folder}: importing HTEB's {source.task_type} files is not supported yet; "
            f"it reads {', '.join(IMPORTED)}"
        )
    for pair, theirs, transformed in [] if listed else read:  # lists: gen/hteb_lists.py
        check_records(name, definition.clustering_format, source.text_fields, theirs,
                      transformed, pair.data)  # fmt: skip
    recorded = imported_source(source, name, first_pair)
    if listed:
        recorded, configs, extras = listed_run(name, source, recorded, read)
        return write_imported(output, name, first_pair, recorded, configs, extras)
    if definition.languages:  # HTEB's configs, one after another
        groups = language_order(originals, definition.languages, first_pair.data)
        known = recorded.get("languages") or {}
        recorded["languages"] = {s: known.get(s, []) for s in groups}
    else:
        groups = _subsets(definition.clustering_format, source.subsets, originals,
                          first_pair.data)  # fmt: skip
    recorded["subsets"] = list(groups)
    # where each translation pair sent each text (HTEB's rules), once for all subsets
    first_language = recorded_language(recorded, next(iter(groups)))
    translated = {
        pair.data: translated_languages(
            originals, source.text_fields, pair.transformation, name, pair.seed, first_language
        )
        for pair in pairs
        if TRANSFORMATIONS[pair.transformation] in TRANSLATING
    }
    configs = []
    for subset, positions in groups.items():
        suffix = "" if subset == "default" else f".{subset}"
        held = [originals[i] for i in positions]
        splits = _split_rows(source.task_type, source.splits[0], held, first_pair.data, name)
        configs.append(original_config(splits, subset, f"original{suffix}"))
        for pair, _, transformed in read:
            variant = _variant(pair, source.text_fields, splits, originals, transformed,
                               _languages(recorded, subset, source.text_fields), positions,
                               subset, translated.get(pair.data))  # fmt: skip
            configs.append(replace(variant, name=variant.name + suffix))
    recorded["splits"] = [s for s in configs[0].splits if s != "train"]
    recorded["context_splits"] = [s for s in configs[0].splits if s == "train"]
    top: RunExtras = {"protocol": hteb_protocol(pairs, source.task_type)}
    rewrite = list(get_protocol("hteb").rewrite_for(source.task_type))
    if rewrite != ["queries"]:
        top["rewrite"] = rewrite
    return write_imported(output, name, first_pair, recorded, configs, top)


def _subsets(
    layout: str | None, known: tuple[str, ...], records: list[DataRow], where: Path
) -> dict[str, list[int]]:
    """The positions of the records of each subset: a per-language clustering file's
    records by their `language` (a subset of the source's, in the source's order);
    otherwise all of them, as subset `default`."""
    if layout != "per_language":
        return {"default": list(range(len(records)))}
    found: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        label = record.get("language")
        if label not in known:
            raise InputError(
                f"{where}: record {i} has language {label!r}, not a subset of the dataset "
                f"({', '.join(known)})"
            )
        found.setdefault(str(label), []).append(i)
    return {subset: found[subset] for subset in known if subset in found}


def _split_rows(
    task_type: str, eval_split: str, records: list[DataRow], where: Path, dataset: str
) -> dict[str, list[DataRow]]:
    """HTEB's records as run-folder rows per split: the split from `_hteb_split`, a
    `row_id` counting within it, and every field HTEB read from the dataset."""
    allowed = (eval_split, "train") if task_type == "Classification" else (eval_split,)
    out: dict[str, list[DataRow]] = {}
    for record in records:
        split = str(record.get("_hteb_split") or eval_split)
        if split not in allowed:
            raise InputError(
                f"{where}: a record of split {split!r}; a {task_type} dataset has "
                f"{' and '.join(allowed)}"
            )
        rows = out.setdefault(split, [])
        rows.append({"row_id": len(rows), **_source_fields(to_run(dataset, record))})
    return {s: out[s] for s in allowed if s in out}


def _source_fields(record: DataRow) -> dict[str, object]:
    return {k: v for k, v in record.items() if not k.startswith("_hteb_") and k not in HTEB_FIELDS}


def _languages(
    recorded: SourceRecord, subset: str, fields: tuple[str, ...]
) -> dict[str, str | None]:
    """The ISO 639-1 code of each text field's language in a subset (a cross-lingual
    pair's two sides each their own)."""
    tags = (recorded.get("languages") or {}).get(subset) or []
    found = field_languages(tags, fields)
    return {f: (x.code if x else None) for f, x in zip(fields, found, strict=True)}


def _variant(
    pair: Pair,
    fields: tuple[str, ...],
    splits: dict[str, list[DataRow]],
    originals: list[DataRow],
    transformed: list[DataRow],
    languages: dict[str, str | None],
    members: list[int],
    subset: str,
    translated: dict[tuple[int, str], str | None] | None,
) -> ConfigData:
    """One pair's records at `members` (one subset's) as a transform config: each text
    field rewritten (empty where HTEB fell back), its original and its own status beside
    it, and the row's status."""
    ours = TRANSFORMATIONS[pair.transformation]
    language = next(iter(languages.values()))
    targets: set[str] = set()
    positions: dict[str, int] = {}
    out: dict[str, list[DataRow]] = {s: [] for s in splits}
    # rows pair up by position, as HTEB's loader pairs them
    for i in members:
        original, rewritten = originals[i], transformed[i]
        split = str(original.get("_hteb_split") or next(iter(splits)))
        index = positions.get(split, 0)
        positions[split] = index + 1
        row = dict(splits[split][index])
        statuses = []
        for field in fields:
            before, after = original.get(field), rewritten.get(field)
            # a set of texts (nested clustering) has a text and a status per member
            text, status, outcomes = text_outcomes(before, after)
            row[field] = text
            row[f"original_{field}"] = before
            # where HTEB sent the text: its files do not say, its rules do
            own = regrouped(before, [languages[field]] * len(field_texts(before)))
            row[f"language_{field}"] = translated[(i, field)] if translated else own
            if translated:
                targets |= {str(t) for t in field_texts(translated[(i, field)]) if t}
            row[f"status_{field}"] = status  # which text HTEB gave up on
            statuses += outcomes
        out[split].append(finish_row(row, statuses, ours))
    # the order of a record's fields, for an export to give the same records
    keys = list(originals[members[0]]) if members else []
    return pair_config(pair, subset, out, language, languages, targets, record_keys=keys)
