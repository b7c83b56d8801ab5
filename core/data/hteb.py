"""HTEB's published transformation files: their layout, names and rules.

HTEB (v1.1) keeps each rewrite of a dataset as a pair of files in
`<root>/<generator>/<dataset>/<transformation>/<seed>/`: `data_<hash>.parquet` with two
struct columns (`original` and `<transformation>_seed_<seed>`, one row per source record,
in source order) and `metadata_<hash>.JSON` beside it (generator, identity, generation
limits, statistics of the generation and of its data filter). `<generator>` is the
model's Hub id with every character outside letters, digits and `_.-` written as `~XX`
(its UTF-8 bytes in hex); `<hash>` is the sha256 of the identity and the generation time
as compact, key-sorted JSON. A folder may hold several pairs: the newest generation time
wins, and a pair without one (`data.parquet`, `metadata.JSON`) loses to any dated pair.

This module holds the rules both directions need: reading and checking a pair (what
HTEB's own loader accepts, written here from its rules), and naming and hashing one for
an export, and which rewritten texts HTEB gives up on (put back by `--protocol hteb`,
written empty by an export). It reads and writes no run folder; gen/hteb.py imports,
cards/hteb.py exports.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from shiftbench.core.data.hteb_datasets import DATASETS as DATASETS  # given from here too
from shiftbench.core.data.hteb_datasets import HtebDataset as HtebDataset
from shiftbench.core.data.hteb_sets import listed_languages
from shiftbench.core.data.listfields import field_texts, text_statuses
from shiftbench.core.data.runfolder import FALLBACK, TRUNCATED
from shiftbench.core.messages import counted
from shiftbench.core.records import DataRow
from shiftbench.core.text.languages import get_language
from shiftbench.errors import InputError

# HTEB's transformation names and shiftbench's, both ways
TRANSFORMATIONS = {
    "paraphrasing": "paraphrase",
    "backtranslation": "backtranslation",
    "style_change": "style-change",
    "expansion": "expansion",
    "summarise": "summarisation",
    "summarised_expansion": "summarised-expansion",
    "translation": "translation",
    "cross_translation": "cross-translation",
}
HTEB_NAMES = {ours: theirs for theirs, ours in TRANSFORMATIONS.items()}


MTEB_NAMES = {d.task: name for name, d in DATASETS.items()}
# HTEB's task types whose records hold two texts, numbered side by side (text_ordinals)
PAIR_TASKS = ("sts", "str", "pair_classification")

FALLBACK_REASONS = (
    "prompt_too_long",
    "invalid_json_after_retries",
    "invalid_text_after_retries",
    "output_length_after_retries",
    "backend_failure",
)
# What HTEB's generator gives up on, and so what its reuse mode scores on the original:
# an output it finds unusable (unusable), and a text whose status says it gave up on it
# (still cut at the token budget after its retries, or a fallback in HTEB's own file).
# Every other status names a check HTEB's generator does not make: scored as written.
GAVE_UP = frozenset({TRUNCATED, FALLBACK})
PLACEHOLDERS = frozenset({"[text]", "<text>", "placeholder", "n/a", "none"})
# the marks an output made of nothing else is refused for (HTEB's generator's list: not
# every punctuation mark; "$", "%", dashes and curly quotes are text to it)
_PUNCTUATION = frozenset(".,;:!?-_'\"\u2026\u00b7\u2022*+()[]<>/\\|#@&^~`")
REQUIRED_KEYS = (
    "generator_model",
    "transformation",
    "dataset",
    "seed_transform",
    "generation_datetime",
    "max_model_length",
    "max_tokens",
    "max_retries",
    "generation_statistics",
)
COUNTS = (
    "records_total",
    "records_targeted",
    "text_fields_total",
    "records_with_fallback",
    "text_fields_with_fallback",
    "unchanged_outputs",
)
HISTORY = ("retried_text_fields", "recovered_after_retry_text_fields", "fallback_reasons")
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
DATA_NAME = re.compile(r"data(?:_([0-9a-f]{64}))?\.parquet")
KEPT = re.compile(r"[A-Za-z0-9_.\-]")
DEVICE = re.compile(r"CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9]", re.I)


def unusable(text: Any) -> bool:
    """Whether HTEB's generator would have refused this output: not a string, blank, a
    placeholder (in any case), or marks of _PUNCTUATION and spaces only."""
    if not isinstance(text, str) or not text.strip():
        return True
    bare = text.strip()
    if bare.casefold() in PLACEHOLDERS:
        return True
    return all(c in _PUNCTUATION or c.isspace() for c in bare)


def gave_up(text: Any, status: Any) -> bool:
    """Whether HTEB would have put the original in this output's place: the output is
    unusable, or its own status (see text_statuses) is one HTEB's generator gives up on."""
    return unusable(text) or (isinstance(status, str) and status in GAVE_UP)


def given_up(row: DataRow, field: str) -> list[bool]:
    """For each text of a rewritten row's `field`, whether HTEB would have given up on it
    (gave_up, with the text's own status, or the row's in a row that records none)."""
    texts = field_texts(row.get(field))
    return [gave_up(t, s) for t, s in zip(texts, text_statuses(row, field), strict=True)]


def generator_directory(model: str) -> str:
    """The folder name HTEB gives a generator's Hub id: every byte outside letters,
    digits and `_.-` as `~XX`, a Windows device name's first letter and trailing dots
    escaped too."""
    if not model.strip():
        raise InputError("the generator's model name is empty")
    name = "".join(
        c if KEPT.fullmatch(c) else "".join(f"~{b:02X}" for b in c.encode("utf-8")) for c in model
    )
    if DEVICE.fullmatch(name.split(".")[0]):
        name = f"~{ord(name[0]):02X}{name[1:]}"
    stripped = name.rstrip(".")
    name = stripped + "~2E" * (len(name) - len(stripped))
    if len(name.encode("utf-8")) > 255:
        raise InputError(f"the generator name {model!r} is too long for a folder name")
    return name


def generator_model(directory: str) -> str:
    """The Hub id a generator folder name stands for (generator_directory, undone)."""
    return unquote(re.sub(r"~([0-9A-Fa-f]{2})", r"%\1", directory), errors="strict")


def settings_hash(doc: dict[str, Any]) -> str:
    """HTEB's hash of a settings object: the sha256 of it as compact JSON with sorted keys."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def identity_hash(
    model: str, transformation: str, dataset: str, seed: int, generated: str | None
) -> str:
    """The <hash> of a pair's file names: the settings hash of its identity (and generation
    time, when it has one)."""
    doc: dict[str, Any] = {
        "generator_model": model,
        "transformation": transformation,
        "dataset": dataset,
        "seed_transform": seed,
    }
    if generated is not None:
        doc["generation_datetime"] = generated
    return settings_hash(doc)


# The languages HTEB's translation and cross_translation write into (hteb/generation.py),
# in its order (Spanish, French, German, Turkish, Arabic); a text's own language is left
# out. HTEB's files do not store the language a text went into: it follows from these
# rules, as HTEB recomputes it for its results.
TARGET_POOL = ("es", "fr", "de", "tr", "ar")


def target_pool(source: Iterable[str]) -> tuple[str, ...]:
    """The pool less the source languages (the whole pool when nothing would be left)."""
    excluded = set(source)
    return tuple(code for code in TARGET_POOL if code not in excluded) or TARGET_POOL


def translation_target(dataset: str, seed: int, source: Iterable[str]) -> str:
    """`translation`'s one language for every text of `dataset` at `seed`: the pool's
    entry at the settings hash of {dataset, seed_transform}, as an integer, modulo the
    pool's size."""
    pool = target_pool(source)
    return pool[int(settings_hash({"dataset": dataset, "seed_transform": seed}), 16) % len(pool)]


def cross_translation_target(seed: int, ordinal: int, source: Iterable[str]) -> str:
    """`cross_translation`'s language for the text numbered `ordinal` (text_ordinals):
    Python's `random.Random(seed + ordinal).choice` over the pool."""
    return random.Random(seed + ordinal).choice(target_pool(source))


def text_ordinals(
    records: list[DataRow], fields: tuple[str, ...], pair_task: bool
) -> dict[tuple[int, str], int]:
    """HTEB's numbering of the texts a transformation rewrites, keyed by (record, field):
    non-blank texts only, in record order, field by field within a record; for a pair
    task every record's first text first, then every record's second."""
    if pair_task:
        slots = [(i, field) for field in fields for i in range(len(records))]
    else:
        slots = [(i, field) for i in range(len(records)) for field in fields]
    out: dict[tuple[int, str], int] = {}
    for i, field in slots:
        text = records[i].get(field)
        if isinstance(text, str) and text.strip():
            out[(i, field)] = len(out)
    return out


def translated_languages(
    records: list[DataRow],
    fields: tuple[str, ...],
    transformation: str,
    dataset: str,
    seed: int,
    default: str | None,
) -> dict[tuple[int, str], Any]:
    """The language HTEB's `translation` or `cross_translation` (HTEB's names) wrote each
    text of `records` into, keyed by (record, field); None for a blank original, which
    HTEB sends nowhere; a list of them for a field holding a set of texts
    (hteb_sets.listed_languages). A record's own language is its `language` label, else
    `default` (the dataset's)."""
    pair_task = DATASETS[dataset].task_type in PAIR_TASKS
    if any(isinstance(r.get(f), list) for r in records for f in fields):  # sets of texts
        mine = (default,) if default else ()
        shared = translation_target(dataset, seed, mine)
        return listed_languages(records, fields, transformation, seed, target_pool(mine), shared)
    ordinals = text_ordinals(records, fields, pair_task)
    out: dict[tuple[int, str], Any] = {}
    for i, record in enumerate(records):
        whole = record_languages(record.get("language"), None) or ((default,) if default else ())
        for side, field in enumerate(fields):
            if (i, field) not in ordinals:
                out[(i, field)] = None
            elif transformation == "translation":
                out[(i, field)] = translation_target(dataset, seed, whole)
            else:
                own = record_languages(record.get("language"), side if pair_task else None)
                own = own or ((default,) if default else ())
                out[(i, field)] = cross_translation_target(seed, ordinals[(i, field)], own)
    return out


def record_languages(label: object, side: int | None) -> tuple[str, ...]:
    """The ISO 639-1 codes of a record's `language` label ("eng", "en-de"): for one side
    of a pair (`side` 0 or 1) the label's part for that side when it names two."""
    if not isinstance(label, str) or not label.strip():
        return ()
    parts = [p for p in re.split(r"[-_/]", label) if p]
    if side is not None and len(parts) == 2:
        parts = [parts[side]]
    codes = []
    for part in parts:
        try:
            codes.append(get_language(part).code)
        except InputError:  # a script or region tag, or a code no table knows
            continue
    return tuple(dict.fromkeys(codes))


def pair_names(
    model: str, transformation: str, dataset: str, seed: int, generated: str | None
) -> tuple[str, str]:
    """The (data, metadata) file names of a pair."""
    if generated is None:
        return "data.parquet", "metadata.JSON"
    digest = identity_hash(model, transformation, dataset, seed, generated)
    return f"data_{digest}.parquet", f"metadata_{digest}.JSON"


@dataclass(frozen=True)
class Pair:
    """One checked pair of an HTEB transformation folder."""

    data: Path
    metadata: dict[str, Any]

    @property
    def transformation(self) -> str:
        return str(self.metadata["transformation"])

    @property
    def seed(self) -> int:
        return int(self.metadata["seed_transform"])


def _int(doc: dict[str, Any], key: str, least: int, where: Path) -> int:
    value = doc.get(key)
    if type(value) is not int or value < least:
        raise InputError(f"{where}: {key} must be a whole number of at least {least}")
    return value


def stored_statistics(*counts: int) -> dict[str, Any]:
    """generation_statistics of a pair counted from its records (`counts` in the order of
    COUNTS), the retry history unknown."""
    return {**dict(zip(COUNTS, counts, strict=True)), **dict.fromkeys(HISTORY, "")}


def check_statistics(stats: Any, where: Path) -> dict[str, Any]:
    """generation_statistics as HTEB writes it: its nine keys, and counts that agree."""
    if not isinstance(stats, dict) or set(stats) != set(COUNTS + HISTORY):
        raise InputError(
            f"{where}: generation_statistics must hold exactly {', '.join(COUNTS + HISTORY)}"
        )
    for key in COUNTS:
        _int(stats, key, 0, where)
    total, targeted = stats["records_total"], stats["records_targeted"]
    texts, fallback = stats["text_fields_total"], stats["text_fields_with_fallback"]
    with_fallback, unchanged = stats["records_with_fallback"], stats["unchanged_outputs"]
    problems = []
    if targeted > min(total, texts):
        problems.append("records_targeted exceeds records_total or text_fields_total")
    if with_fallback > min(targeted, fallback):
        problems.append("records_with_fallback exceeds records_targeted or the fallback texts")
    if fallback + unchanged > texts:
        problems.append("fallback and unchanged texts exceed text_fields_total")
    if (with_fallback > 0) != (fallback > 0):
        problems.append("records_with_fallback and text_fields_with_fallback disagree")
    if (targeted > 0) != (texts > 0):
        problems.append("records_targeted and text_fields_total disagree")
    history = [stats[k] for k in HISTORY]
    if any(v == "" for v in history) and not all(v == "" for v in history):
        problems.append("the retry counts are partly unknown")
    if history[0] != "":
        retried, recovered, reasons = history
        if type(retried) is not int or type(recovered) is not int or retried < 0:
            problems.append("the retry counts must be whole numbers")
        elif retried > texts or recovered > min(retried, texts - fallback) or recovered < 0:
            problems.append("the retry counts exceed the texts")
        if not isinstance(reasons, dict) or any(
            r not in FALLBACK_REASONS or type(n) is not int or n < 1 for r, n in reasons.items()
        ):
            problems.append(f"fallback_reasons must count some of {', '.join(FALLBACK_REASONS)}")
        elif sum(reasons.values()) != fallback:
            problems.append("fallback_reasons do not add up to text_fields_with_fallback")
    if problems:
        raise InputError(f"{where}: generation_statistics: {problems[0]}")
    return stats


def check_filtering(report: Any, task_type: str, where: Path) -> dict[str, Any]:
    """data_filtering as HTEB's loader accepts it: its version's keys, the dataset's task
    type, record counts that only shrink and leave some records, and exclusions only a
    ranking task can have (what shiftbench reads has none)."""
    version = report.get("version") if isinstance(report, dict) else None
    keys = {"version", "task_type", "input_scope", "counts_before", "counts_after", "excluded"}
    if version == 2:
        keys |= {"excluded_documents", "excluded_candidates"}
    problem = None
    if type(version) is not int or version not in (1, 2):
        problem = "version must be 1 or 2"
    elif set(report) != keys:
        problem = f"must hold exactly {', '.join(sorted(keys))}"
    elif report["task_type"] != task_type:
        problem = f"task_type must be the dataset's, {task_type}"
    elif report["input_scope"] not in ("source_records", "stored_records"):
        problem = "input_scope must be source_records or stored_records"
    else:
        counted = (
            {"records", "corpus", "queries", "qrels"} if task_type == "retrieval" else {"records"}
        )
        before, after = report["counts_before"], report["counts_after"]
        for counts in (before, after):
            if (
                not isinstance(counts, dict)
                or set(counts) != counted
                or any(type(n) is not int or n < 0 for n in counts.values())
            ):
                problem = f"counts must be whole numbers of {', '.join(sorted(counted))}"
        if problem is None and (any(after[k] > before[k] for k in counted) or not after["records"]):
            problem = "the counts after filtering must be some, and no more than before"
        lists = [report["excluded"], report.get("excluded_documents", []),
                 report.get("excluded_candidates", [])]  # fmt: skip
        if problem is None and not all(isinstance(x, list) for x in lists):
            problem = "the exclusions must be lists"
        elif problem is None and task_type not in ("retrieval", "reranking") and any(lists):
            problem = f"a {task_type} dataset excludes no record"
    if problem:
        raise InputError(f"{where}: data_filtering: {problem}")
    return dict(report)


def _timestamp(value: Any) -> bool:
    """Whether `value` is a real UTC time written YYYY-MM-DDTHH:MM:SSZ."""
    if not isinstance(value, str) or not STAMP.fullmatch(value):
        return False
    try:
        dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


def check_metadata(doc: Any, data: Path, where: Path) -> dict[str, Any]:
    """A pair's metadata checked as HTEB checks it before it reads the data: required
    keys and their types, the folders and file name its identity gives, statistics that
    agree, and no key HTEB would not write. `data` is the pair's data file."""
    if not isinstance(doc, dict):
        raise InputError(f"{where}: not a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    generated = doc["generation_datetime"]
    if generated is not None and not _timestamp(generated):
        raise InputError(
            f"{where}: generation_datetime must be YYYY-MM-DDTHH:MM:SSZ or null, got {generated!r}"
        )
    model = doc["generator_model"]
    if not isinstance(model, str) or not model.strip():
        raise InputError(f"{where}: generator_model must be a non-empty name")
    for key in ("transformation", "dataset"):
        value = doc[key]
        if not isinstance(value, str) or value in ("", ".", "..") or "/" in value or "\\" in value:
            raise InputError(f"{where}: {key} must be a plain, non-empty name")
    if model.startswith(("/", "./", "../", "~")):
        raise InputError(f"{where}: generator_model must be a Hub model id, not a local path")
    seed = _int(doc, "seed_transform", 0, where)
    _int(doc, "max_retries", 0, where)
    _int(doc, "max_model_length", 1, where)
    _int(doc, "max_tokens", 1, where)
    expected = (generator_directory(model), doc["dataset"], doc["transformation"], str(seed))
    held = tuple(p.name for p in data.parents[:4][::-1])
    if held != expected:
        raise InputError(
            f"{where}: it describes {'/'.join(expected)}, but lies in {'/'.join(held)}"
        )
    names = pair_names(model, doc["transformation"], doc["dataset"], seed, generated)
    if data.name not in (names[0], "data.parquet"):
        raise InputError(f"{where}: its identity gives the data file {names[0]}, not {data.name}")
    if doc["dataset"] not in DATASETS:
        raise InputError(
            f"{where}: unknown HTEB dataset {doc['dataset']!r}; known: "
            f"{', '.join(sorted(DATASETS))}"
        )
    if doc["transformation"] not in TRANSFORMATIONS:
        raise InputError(
            f"{where}: unknown HTEB transformation {doc['transformation']!r}; known: "
            f"{', '.join(TRANSFORMATIONS)}"
        )
    revision = doc.get("source_revision")
    if revision is not None and not (
        isinstance(revision, str) and re.fullmatch(r"[0-9a-f]{40}", revision)
    ):
        raise InputError(f"{where}: source_revision must be a 40-digit lowercase hex commit")
    task_type = DATASETS[doc["dataset"]].task_type
    if "data_filtering" in doc:
        check_filtering(doc["data_filtering"], task_type, where)
    allowed = set(REQUIRED_KEYS) | {"data_filtering", "source_revision"}
    if doc["transformation"] == "translation":
        allowed.add("translation_language_selection")
        if doc.get("translation_language_selection", "dataset") != "dataset":
            raise InputError(f"{where}: translation_language_selection must be 'dataset'")
    if doc["transformation"] == "summarised_expansion" and "max_tokens_expansion" in doc:
        allowed.add("max_tokens_expansion")
        limit = doc["max_tokens_expansion"]
        if type(limit) is not int or not 0 < limit < doc["max_model_length"]:
            raise InputError(
                f"{where}: max_tokens_expansion must be above 0 and below max_model_length"
            )
    if task_type == "clustering":
        allowed.add("clustering_format")
        layout = DATASETS[doc["dataset"]].clustering_format
        if doc.get("clustering_format") != layout:
            raise InputError(f"{where}: clustering_format must be {layout!r}, as its dataset's")
    if task_type in ("retrieval", "reranking"):
        allowed.add("transform_corpus")
        if type(doc.get("transform_corpus")) is not bool:
            raise InputError(f"{where}: transform_corpus must be true or false")
    extra = sorted(set(doc) - allowed)
    if extra:
        raise InputError(f"{where}: keys HTEB does not write: {', '.join(extra)}")
    check_statistics(doc["generation_statistics"], where)
    return doc


def latest_pair(folder: Path) -> Pair:
    """The pair HTEB reads from a transformation folder: every pair in it checked, then
    the newest generation time; two newest is an error, as is a file without its partner."""
    if folder.is_symlink() or not folder.is_dir():
        raise InputError(f"{folder}: not a folder")
    names = {p.name for p in folder.iterdir()}
    data_names = {n for n in names if n.startswith("data") and n.endswith(".parquet")}
    for n in names:
        if n.startswith("metadata") and n.endswith(".JSON"):
            data_names.add("data" + n[len("metadata") : -len(".JSON")] + ".parquet")
    if not data_names:
        raise InputError(f"{folder}: no transformation pair (data_<hash>.parquet)")
    pairs = []
    for name in sorted(data_names):
        data = folder / name
        match = DATA_NAME.fullmatch(name)
        if match is None:
            raise InputError(f"{data}: not an HTEB data file name (data_<64 hex>.parquet)")
        meta = folder / ("metadata" + name[len("data") : -len(".parquet")] + ".JSON")
        for path, partner in ((data, meta), (meta, data)):
            if not path.is_file() or path.is_symlink():
                raise InputError(
                    f"{path}: missing or not a regular file, so {partner.name} has no pair"
                )
        try:
            doc = json.loads(meta.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{meta}: not valid JSON ({exc})") from None
        pairs.append(Pair(data, check_metadata(doc, data, meta)))
    newest = max(p.metadata["generation_datetime"] or "" for p in pairs)
    chosen = [p for p in pairs if (p.metadata["generation_datetime"] or "") == newest]
    if len(chosen) > 1:
        raise InputError(
            f"{folder}: {len(chosen)} pairs share the newest generation time {newest or 'null'}"
        )
    return chosen[0]


def read_pair(pair: Pair) -> tuple[list[DataRow], list[DataRow]]:
    """The original and the transformed records of a pair, row for row, once the file is
    what HTEB writes: exactly the two struct columns of one type, no schema metadata, as
    many rows as its statistics count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    where = pair.data
    try:
        table = pq.read_table(where)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{where}: not a readable Parquet file ({exc})") from None
    column = f"{pair.transformation}_seed_{pair.seed}"
    if table.schema.metadata:
        raise InputError(f"{where}: holds schema metadata, which HTEB's files never do")
    if table.column_names != ["original", column]:
        raise InputError(
            f"{where}: its columns must be original and {column}, got "
            f"{', '.join(table.column_names)}"
        )
    kinds = [table.schema.field(c).type for c in table.column_names]
    if not pa.types.is_struct(kinds[0]) or kinds[0] != kinds[1]:
        raise InputError(f"{where}: original and {column} must be records of one type")
    total = pair.metadata["generation_statistics"]["records_total"]
    if table.num_rows != total:
        raise InputError(
            f"{where}: holds {counted(table.num_rows, 'row')}, its metadata counts {total}"
        )
    kept = (pair.metadata.get("data_filtering") or {}).get("counts_after", {}).get("records")
    if kept is not None and kept != table.num_rows:
        raise InputError(
            f"{where}: holds {counted(table.num_rows, 'row')}, its data filter kept {kept}"
        )
    return table.column("original").to_pylist(), table.column(column).to_pylist()
