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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from shiftbench import __version__
from shiftbench.core.data.parts import context_name
from shiftbench.core.data.runcard import META_FILE, render_card
from shiftbench.core.data.sources import LISTED_TYPES
from shiftbench.core.messages import report
from shiftbench.core.records import (
    ConfigRecord,
    RunExtras,
    RunMeta,
    ShardRecord,
    SourceRecord,
    ValidationReport,
)
from shiftbench.errors import InputError, RuntimeFault

log = logging.getLogger(__name__)

OK = "ok"
# An output equal to its input. For back-translation that is a result (HTEB's near-identity
# baseline): kept, scored, counted on its own. For every other transform it is a failure.
IDENTICAL = "identical"
IDENTITY_KEPT = ("backtranslation",)
TRUNCATED = "truncated"  # still cut at the token cap after the larger budgets
SPEC_FILE = "shiftbench-spec.yaml"  # the `shiftbench run` spec that made the folder, verbatim
FORMAT_VERSION = 1
VALIDATION_REPORT = "validation.json"  # what validate writes into a run folder


def read_jsonl(
    path: Path,
    *,
    required: Iterable[str] = (),
    strings: Iterable[str] = (),
    missing_ok: bool = False,
) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file, each checked as it is read.

    Every line must be one JSON object holding the `required` fields; each of `strings`
    that a row holds must be a string. A fault is an InputError naming the file, the line
    and the field, so a truncated or hand-edited file fails in one line before anything is
    written. A missing file is an error too, unless `missing_ok` (then no rows).
    """
    need, texts = tuple(required), tuple(strings)
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        if missing_ok:
            return []
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a JSON Lines file") from None
    rows: list[dict[str, Any]] = []
    with handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                    f"column {len(raw[: exc.start].decode('utf-8', 'replace')) + 1})"
                ) from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                # the line stops inside the row: at its end, or inside a string it opened
                cut = exc.pos >= len(line.rstrip("\r\n")) or exc.msg.startswith("Unterminated")
                why = (
                    "the line ends before the row does" if cut else f"{exc.msg}, column {exc.colno}"
                )
                raise InputError(f"{path}:{number}: not valid JSON ({why})") from None
            if not isinstance(row, dict):
                raise InputError(f"{path}:{number}: a row must be a JSON object")
            _check_row(row, f"{path}:{number}", need, texts)
            rows.append(row)
    return rows


def _check_row(
    row: dict[str, Any], where: str, need: tuple[str, ...], texts: tuple[str, ...]
) -> None:
    """A row holds the `need` fields, and each of `texts` it holds is a string."""
    absent = [f for f in need if f not in row]
    if absent:
        raise InputError(f"{where}: missing field(s) {', '.join(absent)}")
    for f in texts:
        if f in row and not isinstance(row[f], str):
            kind = "null" if row[f] is None else type(row[f]).__name__
            raise InputError(f"{where}: field {f} must be a string, not {kind}")


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
    folder: Path, split: str, *, required: Iterable[str] = (), strings: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """The rows of one split of a config folder, JSON Lines or Parquet, checked as
    read_jsonl checks them (a Parquet column's missing values are absent keys)."""
    path = split_file(folder, split)
    if path is None:
        raise InputError(f"{folder / split}.jsonl: no such file")
    if path.suffix == ".jsonl":
        return read_jsonl(path, required=required, strings=strings)
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types; all mean "not readable"
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    rows = [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]
    need, texts = tuple(required), tuple(strings)
    for number, row in enumerate(rows, 1):
        _check_row(row, f"{path}: row {number}", need, texts)
    return rows


def row_texts(meta: RunMeta) -> tuple[str, ...]:
    """The fields every row of a run folder holds as a string, as evaluate needs them: the
    source's text fields (none for a listed type, whose text fields hold lists)."""

    if meta["source"]["task_type"] in LISTED_TYPES:
        return ()
    return tuple(meta["source"].get("text_fields", ()))


def read_config_split(
    folder: Path, meta: RunMeta, name: str, split: str, *, required: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """One split of a config that `meta` (the folder's shiftbench.json) lists, checked as
    every stage needs it: the file is there, each row holds the `required` fields and the
    source's text fields as strings (a ranking table's rows: those it has), and it holds
    as many rows as shiftbench.json says, so an emptied or cut file is named, not scored."""
    path = split_file(folder / name, split)
    if path is None:
        raise InputError(
            f"{folder / name / split}.jsonl: no such file, though {META_FILE} lists {name}/{split}"
        )
    texts = row_texts(meta)
    # a ranking task's judgements and candidates (`qrels.test`) hold ids, not texts
    held = texts if context_name(split) == split else ()
    rows = read_split(folder / name, split, required=(*required, *held), strings=texts)
    expected = meta["configs"][name]["rows"][split]
    if len(rows) != expected:
        raise InputError(
            f"{path}: holds {len(rows)} row(s), but {META_FILE} says {expected}; was the file "
            "cut or replaced?"
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
    splits: dict[str, list[dict[str, Any]]]


def usable(status: str | None, transform: str | None) -> bool:
    """Whether a transformed row (or field) with this status is scored: `ok`, and
    `identical` for a transform whose unchanged output is a result (IDENTITY_KEPT)."""
    return status == OK or (status == IDENTICAL and transform in IDENTITY_KEPT)


def tally_status(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many rows have each status, in name order."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return dict(sorted(counts.items()))


def is_run_folder(path: Path) -> bool:
    return (path / META_FILE).is_file()


def read_json(path: Path, missing: str | None = None) -> Any:
    """The JSON document in the file `path`. Every way it can fail to be one is an
    InputError naming the file: `missing` (or `PATH: no such file`) when there is no file,
    then a folder in its place, bytes that are not UTF-8, text that is not JSON (with the
    line and column)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(missing or f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a JSON file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
        ) from None


def read_report(path: Path, what: str) -> dict[str, Any] | None:
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


def unwritable(path: Path) -> str | None:
    """Why the folder `path` (which need not exist yet) cannot be written, or None: a part
    of it is a file, or the nearest folder of it that exists is on a read-only file
    system or not writable by this user."""
    for part in (path, *path.parents):
        if not part.exists():
            continue
        if not part.is_dir():
            return f"{part} is a file, not a folder" if part != path else "it is a file"
        if os.access(part, os.W_OK):
            return None
        read_only = hasattr(os, "statvfs") and os.statvfs(part).f_flag & os.ST_RDONLY
        why = "a read-only file system" if read_only else "no permission to write"
        return f"{part} cannot be written ({why})"
    return None


@contextmanager
def writing(path: Path, *, wait: float | None = None) -> Iterator[None]:
    """Hold the folder `path` for one writer. The lock is an flock on a file in the
    temporary folder keyed by the folder's absolute path, so the folder and its parent
    need not exist yet and nothing is written beside them; the system drops it when its
    holder exits, however it exits.

    With `wait` None (gen's run folders: a second gen would redo the first's work), a
    second process that asks while the first holds it is refused at once with one line
    naming the holder's pid. With `wait` seconds (evaluate's results folders, whose
    writes are short and add to each other), it waits that long for the holder, then
    stops with a RuntimeFault naming the holder."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): one writer at a time is up to the user
        yield
        return
    import hashlib
    import time

    folder = Path(tempfile.gettempdir()) / "shiftbench-locks"
    folder.mkdir(exist_ok=True)
    key = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:32]
    lock = folder / f"{key}.lock"
    with open(lock, "a+", encoding="utf-8") as handle:
        deadline = None if wait is None else time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                handle.seek(0)
                holder = handle.read().strip() or "?"
            if deadline is None:
                raise InputError(
                    f"output {path} is being written by another shiftbench process (pid "
                    f"{holder}); wait for it to finish, or choose another --output"
                ) from None
            if time.monotonic() >= deadline:
                raise RuntimeFault(
                    f"output {path} stayed locked by another shiftbench process (pid "
                    f"{holder}) for {wait or 0:g} s; wait for it to finish, or choose another "
                    "--output"
                ) from None
            if not told:  # said once, so that a pause has its reason on screen
                report(
                    log,
                    f"output {path} is being written by another shiftbench process (pid "
                    f"{holder}); waiting up to {wait or 0:g} s",
                )
                told = True
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


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
            "folder; choose another --output"
        )
    meta = read_meta(path)
    if _matched(meta.get("source")) != _matched(source_meta):
        held = meta.get("source", {}).get("name", "another source")
        raise InputError(
            f"output {path} holds a run of {held} with other source settings; "
            "choose another --output"
        )
    if meta.get("shard") != shard:
        raise InputError(
            f"output {path} holds another shard of this source; choose another --output"
        )
    return meta


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
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path.parent.glob(f".{path.name}.tmp-*"))
    stage = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
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
    _remove_stale(path.glob(".staging-*"))
    stage = Path(tempfile.mkdtemp(prefix=".staging-", dir=path))
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


def _remove_stale(leftovers: Iterable[Path]) -> None:
    """Staging folders a killed run left behind (one writer per run folder at a time)."""
    for leftover in leftovers:
        shutil.rmtree(leftover, ignore_errors=True)


def _write_config(folder: Path, config: ConfigData) -> None:
    folder.mkdir(parents=True)
    for split, rows in config.splits.items():
        with open(folder / f"{split}.jsonl", "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _write_meta(folder: Path, meta: RunMeta) -> None:
    atomic_write_text(folder / META_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(folder / "README.md", render_card(meta))


def atomic_write_text(path: Path, text: str) -> None:
    """Write `path` whole or not at all: the text goes to a hidden file beside it, is
    flushed to disk, and replaces `path` in one rename. A failure (a full disk) leaves
    `path` as it was and removes the partial file."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
