"""The run folder: a Hugging Face dataset repository on disk, plus shiftbench.json.

Layout: `README.md` (card with `configs:`), one folder per config holding one JSON Lines file
per split, and `shiftbench.json` with the provenance of every config. Writes are atomic: a
new folder is staged beside its target and renamed into place; a config added to an
existing folder is staged inside it, moved into place, and only then recorded in the
metadata, so an interrupted write never leaves a half-written config on record.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from shiftbench import __version__
from shiftbench.core.data.jsonfiles import check_row, read_json, read_jsonl
from shiftbench.core.data.names import check_name, inside
from shiftbench.core.data.parts import context_name
from shiftbench.core.data.runcard import META_FILE, render_card
from shiftbench.core.data.sources import LISTED_TYPES
from shiftbench.core.data.writes import atomic_write_text, is_held, leftovers, stage_beside
from shiftbench.core.messages import counted, differences, option
from shiftbench.core.records import (
    ConfigRecord,
    DataRow,
    RunExtras,
    RunMeta,
    ShardRecord,
    SourceRecord,
    ValidationReport,
)
from shiftbench.errors import InputError

log = logging.getLogger(__name__)

OK = "ok"
# An output equal to its input. For back-translation that is a result (HTEB's near-identity
# baseline): kept, scored, counted on its own. For every other transform it is a failure.
IDENTICAL = "identical"
IDENTITY_KEPT = ("backtranslation",)
TRUNCATED = "truncated"  # still cut at the token cap after the larger budgets
FALLBACK = "fallback"  # an imported HTEB text its generator gave up on (gen/hteb.py)
SPEC_FILE = "shiftbench-spec.yaml"  # the `shiftbench run` spec that made the folder, verbatim
FORMAT_VERSION = 1
VALIDATION_REPORT = "validation.json"  # what validate writes into a run folder


# Each task type's gold field in a row (and a ranking task's judgements), and its kind.
GOLD_FIELDS: dict[str, dict[str, str]] = {
    "STS": {"score": "score"},
    "PairClassification": {"labels": "label"},
    "Classification": {"label": "label"},
    "Clustering": {"labels": "label"},
    "qrels": {"score": "score"},
}


DATA_FORMATS = ("jsonl", "parquet")  # a run folder's data files; a release's (parquet)


def split_file(folder: Path, split: str) -> Path | None:
    """The data file of one split of a config folder: `<split>.jsonl` (what gen writes) or
    `<split>.parquet` (what a release holds); None when there is neither."""
    for suffix in DATA_FORMATS:
        path = folder / f"{split}.{suffix}"
        if path.is_file():
            return path
    return None


def read_split(
    folder: Path,
    split: str,
    *,
    required: Iterable[str] = (),
    strings: Iterable[str] = (),
    values: Mapping[str, str] | None = None,
) -> list[DataRow]:
    """The rows of one split of a config folder, JSON Lines or Parquet, checked as
    read_jsonl checks them (a Parquet column's missing values are absent keys)."""
    path = split_file(folder, split)
    if path is None:
        raise InputError(f"{folder / split}.jsonl: no such file")
    if path.suffix == ".jsonl":
        return read_jsonl(path, required=required, strings=strings, values=values)
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types; all mean "not readable"
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    rows = [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]
    need, texts = tuple(required), tuple(strings)
    for number, row in enumerate(rows, 1):
        # Parquet holds UTF-8 strings, which decode to no surrogate
        check_row(row, f"{path}: row {number}", need, texts, values, surrogates=False)
    return rows


def row_texts(meta: RunMeta) -> tuple[str, ...]:
    """The fields every row of a run folder holds as a string, as evaluate needs them: the
    source's text fields (none for a listed type, whose text fields hold lists)."""

    if meta["source"]["task_type"] in LISTED_TYPES:
        return ()
    return tuple(meta["source"].get("text_fields", ()))


def read_config_split(
    folder: Path, meta: RunMeta, name: str, split: str, *, required: Iterable[str] = ()
) -> list[DataRow]:
    """One split of a config that `meta` (the folder's shiftbench.json) lists, checked as
    every stage needs it: the file is there, each row holds the `required` fields and the
    source's text fields as strings (a ranking table's rows: those it has), and it holds
    as many rows as shiftbench.json says, so an emptied or cut file is named, not scored."""
    where = folder / META_FILE
    config = inside(folder, name, where=where, key="config")
    path = split_file(config, split)
    if path is None:
        raise InputError(
            f"{folder / name / split}.jsonl: no such file, though {META_FILE} lists {name}/{split}"
        )
    inside(folder, name, path.name, where=where, key=f"configs.{name}: data file")
    texts = row_texts(meta)
    # a ranking task's judgements and candidates (`qrels.test`) hold ids, not texts
    table = context_name(split)
    held = texts if table == split else ()
    # the gold scores and labels evaluate scores against, checked as publish would freeze them
    gold = GOLD_FIELDS.get(meta["source"]["task_type"] if table == split else table.split("/")[0])
    if meta["source"]["task_type"] == "Clustering" and table == split:
        # a row holds a text and its label, or a set of texts and their labels
        gold, texts = {**{f: "texts" for f in texts}, "labels": "labels"}, ()
    need = (*required, *held, *(gold or {}))
    rows = read_split(folder / name, split, required=need, strings=texts, values=gold)
    expected = meta["configs"][name]["rows"][split]
    if len(rows) != expected:
        raise InputError(
            f"{path}: holds {counted(len(rows), 'row')}, but {META_FILE} says {expected}; "
            "was the file cut or replaced?"
        )
    return rows


def config_name(base: str, subset: str, multi_subset: bool) -> str:
    """`original`, `paraphrase-s1337`; with several subsets, `original.de` and so on."""
    return f"{base}.{subset}" if multi_subset else base


@dataclass
class ConfigData:
    """One config to write: its metadata and its rows per split."""

    name: str
    meta: ConfigRecord
    splits: dict[str, list[DataRow]]


def usable(status: str | None, transform: str | None) -> bool:
    """Whether a transformed row (or field) with this status is scored: `ok`, and
    `identical` for a transform whose unchanged output is a result (IDENTITY_KEPT)."""
    return status == OK or (status == IDENTICAL and transform in IDENTITY_KEPT)


def tally_status(rows: list[DataRow]) -> dict[str, int]:
    """How many rows have each status, in name order."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return dict(sorted(counts.items()))


def is_run_folder(path: Path) -> bool:
    return (path / META_FILE).is_file()


def read_report(path: Path, what: str) -> dict[str, object] | None:
    """A report a stage wrote (validation.json, human_eval.json), its shape checked: an
    object whose `configs`, if it has them, is an object of objects. None when there is
    no such file (the stage has not run); any other fault is an InputError naming it."""
    if not path.exists():
        return None
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: must hold one JSON object ({what})")
    configs = doc.get("configs", {})
    if not isinstance(configs, dict) or not all(isinstance(c, dict) for c in configs.values()):
        raise InputError(f"{path}: configs must be an object of config name -> its summary")
    for name in configs:  # each names a file of its rows (validation/<config>.jsonl)
        check_name(name, path, "config name")
    return doc


def read_validation(folder: Path) -> ValidationReport | None:
    """The run folder's validation.json (checked by read_report); None before validate."""
    return cast(
        "ValidationReport | None", read_report(folder / VALIDATION_REPORT, "what validate found")
    )


def read_meta(path: Path) -> RunMeta:
    """A run folder's shiftbench.json, its shape checked: a fault is one InputError
    naming the file and the key."""
    where = path / META_FILE
    meta = read_json(where, missing=f"{path} is not a shiftbench run folder (no {META_FILE})")
    check_meta(meta, where)
    return cast(RunMeta, meta)


def check_meta(meta: Any, where: Path) -> None:
    """The shape every stage relies on: an object with a `source` object (its name, task
    type and main score strings, its text fields a list of strings) and `configs`, an object of
    configs, each an object whose `kind` and `subset` are strings and whose `rows` map
    each split to a row count."""

    def fail(what: str) -> InputError:
        return InputError(f"{where}: {what}")

    if not isinstance(meta, dict):
        raise fail("must hold one JSON object")
    source = meta.get("source")
    if not isinstance(source, dict):
        raise fail("source must be an object (the source's description)")
    for key in ("name", "task_type", "main_score"):
        if not isinstance(source.get(key), str):
            raise fail(f"source.{key} must be a string")
    if not isinstance(source.get("dataset_path", ""), str):
        raise fail("source.dataset_path must be a string")
    fields = source.get("text_fields", [])
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise fail("source.text_fields must be a list of field names")
    configs = meta.get("configs")
    if not isinstance(configs, dict):
        raise fail("configs must be an object of config name -> its description")
    for name, info in configs.items():
        # a config's name and its splits' names become paths: RUN/<config>/<split>.jsonl
        check_name(name, where, "config name")
        if not isinstance(info, dict):
            raise fail(f"configs.{name} must be an object")
        for key in ("kind", "subset"):
            if key in info and not isinstance(info[key], str):
                raise fail(f"configs.{name}.{key} must be a string")
        rows = info.get("rows")
        if not isinstance(rows, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in rows.values()
        ):
            raise fail(f"configs.{name}.rows must be an object of split -> row count")
        for split in rows:
            check_name(split, where, f"configs.{name}.rows: split name")
        if "subset" in info:
            check_name(info["subset"], where, f"configs.{name}.subset")


def check_target(
    path: Path, source_meta: SourceRecord, shard: ShardRecord | None = None
) -> RunMeta | None:
    """Refuse an output folder that is not a run folder of this source (and shard)."""
    if path.exists() and not path.is_dir():
        raise InputError(f"output {path} exists and is not a folder")
    if not path.exists() or not any(path.iterdir()):
        return None
    if not is_run_folder(path):
        raise InputError(
            f"output {path} is a non-empty folder that is not a shiftbench run "
            f"folder; choose another {option('output')}"
        )
    meta = read_meta(path)
    held_source, asked = _matched(meta.get("source")), _matched(source_meta)
    if held_source != asked:
        held = meta.get("source", {}).get("name", "another source")
        raise InputError(
            f"output {path} holds a run of {held} with other source settings "
            f"({differences(held_source, asked)}); choose another {option('output')}"
        )
    if meta.get("shard") != shard:
        raise InputError(
            f"output {path} holds {_shard(meta.get('shard'))} of this source, not "
            f"{_shard(shard)}; choose another {option('output')}"
        )
    return meta


def _shard(shard: Any) -> str:
    """A shard as a refusal names it: `shard 0/2`, or `an unsharded run`."""
    if not isinstance(shard, dict):
        return "an unsharded run"
    return f"shard {shard.get('index')}/{shard.get('count')}"


def _matched(source: Any) -> Any:
    """A recorded source as folders are matched on: without the citation, which run folders
    made before it was recorded lack."""
    if not isinstance(source, dict):
        return source
    return {k: v for k, v in source.items() if k != "citation"}


def write_run(
    path: Path,
    source_meta: SourceRecord,
    configs: list[ConfigData],
    meta: RunMeta | None,
    top: RunExtras | None = None,
) -> None:
    """Write configs into the run folder at `path` (new when `meta` is None).

    `top` adds keys to a new folder's metadata (a shard's index and count).
    """
    if meta is None:
        _write_new(path, source_meta, configs, top or {})
    else:
        _add_configs(path, meta, configs)


def _write_new(
    path: Path, source_meta: SourceRecord, configs: list[ConfigData], top: RunExtras
) -> None:
    """Stage the whole folder beside its target, then rename it into place."""
    meta = cast(
        RunMeta,
        {
            "format": FORMAT_VERSION,
            "shiftbench_version": __version__,
            **top,
            "source": source_meta,
            "configs": {c.name: c.meta for c in configs},
        },
    )
    stage = stage_beside(path)
    try:
        for config in configs:
            _write_config(stage / config.name, config)
        _write_meta(stage, meta)
        if path.exists():  # an empty folder the user made beforehand
            path.rmdir()
        os.replace(stage, path)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _add_configs(path: Path, meta: RunMeta, configs: list[ConfigData]) -> None:
    """Stage configs inside the folder, move each into place, then record them."""
    leftovers(path, ".staging-", held=is_held(path))
    stage = Path(tempfile.mkdtemp(prefix=f".staging-{os.getpid()}-", dir=path))
    try:
        for config in configs:
            _write_config(stage / config.name, config)
        for config in configs:
            target = path / config.name
            if target.exists():
                shutil.rmtree(target)
            os.replace(stage / config.name, target)
            meta["configs"][config.name] = config.meta
        meta["shiftbench_version"] = __version__
        _write_meta(path, meta)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _write_config(folder: Path, config: ConfigData) -> None:
    folder.mkdir(parents=True)
    for split, rows in config.splits.items():
        with open(folder / f"{split}.jsonl", "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _write_meta(folder: Path, meta: RunMeta) -> None:
    atomic_write_text(folder / META_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(folder / "README.md", render_card(meta))
