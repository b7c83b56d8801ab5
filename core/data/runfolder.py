"""The run folder: a Hugging Face dataset repository on disk, plus shiftbench.json.

Layout: `README.md` (card with `configs:`), one folder per config holding one JSON Lines file
per split, and `shiftbench.json` with the provenance of every config. Writes are atomic: a
new folder is staged beside its target and renamed into place; a config added to an
existing folder is staged inside it, moved into place, and only then recorded in the
metadata, so an interrupted write never leaves a half-written config on record.
"""

from __future__ import annotations

import codecs
import glob
import json
import logging
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from shiftbench import __version__
from shiftbench.core.data.names import RULE, check_name, inside, is_safe_name
from shiftbench.core.data.parts import context_name
from shiftbench.core.data.runcard import META_FILE, render_card
from shiftbench.core.data.sources import LISTED_TYPES
from shiftbench.core.messages import counted, differences, option, report
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
FALLBACK = "fallback"  # an imported HTEB text its generator gave up on (gen/hteb.py)
SPEC_FILE = "shiftbench-spec.yaml"  # the `shiftbench run` spec that made the folder, verbatim
FORMAT_VERSION = 1
VALIDATION_REPORT = "validation.json"  # what validate writes into a run folder


# UTF-32's little-endian mark starts with UTF-16's: the longer marks are tried first
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def wrong_unicode(path: Path | str, data: bytes) -> InputError | None:
    """The error for a file in another Unicode encoding than UTF-8, told by the byte-order
    mark it starts with (as a spreadsheet's "Unicode text" export does); None for other
    bytes. The bytes are text, only encoded otherwise: the message says so, and how to fix it."""
    for mark, name in _BOMS:
        if data.startswith(mark):
            return InputError(
                f"{path}: {name} text (it starts with {name}'s byte-order mark), not UTF-8; "
                "save it as UTF-8"
            )
    return None


def read_jsonl(
    path: Path,
    *,
    required: Iterable[str] = (),
    strings: Iterable[str] = (),
    missing_ok: bool = False,
    values: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file, each checked as it is read.

    Every line must be one JSON object holding the `required` fields; each of `strings`
    that a row holds must be a string, and each field of `values` that it holds a value of
    its kind (FIELD_KINDS). A fault is an InputError naming the file, the line and the
    field, so a truncated or hand-edited file fails in one line before anything is
    written. A missing file is an error too, unless `missing_ok` (then no rows).
    """
    need, texts, kinds = tuple(required), tuple(strings), dict(values or {})
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
                other = wrong_unicode(path, raw) if number == 1 else None
                if other is not None:
                    raise other from None
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
            # only a \uD800-\uDFFF escape makes a surrogate (UTF-8 bytes cannot)
            escaped = SURROGATE_ESCAPE.search(line) is not None
            _check_row(row, f"{path}:{number}", need, texts, kinds, surrogates=escaped)
            rows.append(row)
    return rows


def _check_row(
    row: dict[str, Any],
    where: str,
    need: tuple[str, ...],
    texts: tuple[str, ...],
    kinds: Mapping[str, str] | None = None,
    *,
    surrogates: bool = True,
) -> None:
    """A row holds the `need` fields, each of `texts` it holds is a string, and each
    field of `kinds` it holds a value of that kind; with `surrogates`, no string in it
    holds a lone surrogate."""
    absent = [f for f in need if f not in row]
    if absent:
        raise InputError(f"{where}: missing field(s) {', '.join(absent)}")
    for f in texts:
        if f in row and not isinstance(row[f], str):
            raise InputError(f"{where}: field {f} must be a string, not {shown_value(row[f])}")
    for f, kind in (kinds or {}).items():
        allowed, what = FIELD_KINDS[kind]
        if f in row and not allowed(row[f]):
            raise InputError(f"{where}: field {f} must be {what}, not {shown_value(row[f])}")
    if surrogates:
        for f, value in row.items():
            found = _lone_surrogate(value)
            if found is not None:
                # a lone surrogate is no character: it cannot be written as UTF-8 (to a
                # file, a Parquet column, the Hub) nor read by a tokenizer
                raise InputError(
                    f"{where}: field {f} holds a lone surrogate (\\u{ord(found):04x}), which "
                    "is not Unicode text"
                )


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def shown_value(value: Any) -> str:
    """A value as a message names it: null, NaN, inf, a string itself (quoted, cut after 80
    characters), or its type."""
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return repr(value[:80]) + ("..." if len(value) > 80 else "")
    return type(value).__name__


def _label(value: Any) -> bool:
    return _finite(value) or isinstance(value, str)


def _listed(value: Any) -> bool:
    return isinstance(value, list) and bool(value)


# What a checked field may hold: a score a finite number; a label a finite number or a
# string (mteb's datasets use both), never null, NaN or a list; a name that becomes a
# path a safe name (names.py); a rating item's id starts with its config's name.
FIELD_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "score": (_finite, "a finite number"),
    "label": (lambda v: _finite(v) or isinstance(v, str), "a finite number or a string"),
    "name": (is_safe_name, f"a safe name ({RULE.removeprefix('a name must be ')})"),
    "item": (
        lambda v: isinstance(v, str) and is_safe_name(v.split("/")[0]),
        "CONFIG/... with CONFIG a safe name (letters, digits and . _ - +, a letter or digit first)",
    ),
    # a clustering row's text and label, or its set of texts and their labels (mteb's
    # original layout, HTEB's nested clustering datasets)
    "texts": (
        lambda v: isinstance(v, str) or (_listed(v) and all(isinstance(x, str) for x in v)),
        "a string or a list of strings",
    ),
    "labels": (
        lambda v: _label(v) or (_listed(v) and all(map(_label, v))),
        "a finite number, a string or a list of them",
    ),
}
# Each task type's gold field in a row (and a ranking task's judgements), and its kind.
GOLD_FIELDS: dict[str, dict[str, str]] = {
    "STS": {"score": "score"},
    "PairClassification": {"labels": "label"},
    "Classification": {"label": "label"},
    "Clustering": {"labels": "label"},
    "qrels": {"score": "score"},
}


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a JSON escape of a surrogate
SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string, or in the strings of a list or object."""
    if isinstance(value, str):
        match = SURROGATE.search(value)
        return match.group() if match else None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        found = _lone_surrogate(item)
        if found is not None:
            return found
    return None


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
) -> list[dict[str, Any]]:
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
        _check_row(row, f"{path}: row {number}", need, texts, values, surrogates=False)
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
        with open(path, "rb") as handle:
            other = wrong_unicode(path, handle.read(4))
        raise other or InputError(f"{path}: not UTF-8 text") from None
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
    # the path as the system holds it: a name the locale cannot decode (a non-ASCII
    # folder under LC_ALL=C) comes back to its own bytes rather than failing to encode
    key = hashlib.sha256(os.fsencode(path.resolve())).hexdigest()[:32]
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
                    f"{holder}); wait for it to finish, or choose another {option('output')}"
                ) from None
            if time.monotonic() >= deadline:
                raise RuntimeFault(
                    f"output {path} stayed locked by another shiftbench process (pid "
                    f"{holder}) for {wait or 0:g} s; wait for it to finish, or choose another "
                    f"{option('output')}"
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
        _HELD.add(path.resolve())
        try:
            yield
        finally:
            _HELD.discard(path.resolve())
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


_HELD: set[Path] = set()  # the folders this process holds with writing()


def stage_beside(target: Path) -> Path:
    """A new hidden folder beside `target` to build it in, then rename into place:
    `.NAME.tmp-PID-XXXXXXXX`, named after this process. Leftovers of earlier runs that were
    killed before they could rename or remove theirs are removed first (leftovers)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    leftovers(target.parent, f".{target.name}.tmp-", held=target.resolve() in _HELD)
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))


@contextmanager
def scratch(name: str) -> Iterator[Path]:
    """A folder in the temporary folder for work deleted when it is done
    (`shiftbench-NAME-PID-XXXXXXXX`); the scratch folders of killed runs (their process
    gone) are removed first, so a kill -9 does not leave one there for good."""
    base = Path(tempfile.gettempdir())
    leftovers(base, f"shiftbench-{name}-", held=False)
    folder = Path(tempfile.mkdtemp(prefix=f"shiftbench-{name}-{os.getpid()}-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def leftovers(folder: Path, prefix: str, *, held: bool) -> list[Path]:
    """Remove what killed runs left in `folder` under names starting with `prefix` (staging
    folders, temporary files); returns what was removed. A leftover whose name carries a
    process id (`PREFIX<pid>` or `PREFIX<pid>-...`) is removed once that process is gone;
    any other, made by an older shiftbench, only when the caller holds the target with
    writing(), so no other writer can be using it (`held`). A live writer's is left alone."""
    removed = []
    for entry in folder.glob(f"{glob.escape(prefix)}*"):
        rest = entry.name[len(prefix) :]
        owner = re.fullmatch(r"(\d+)(?:-[a-z0-9_]{8})?", rest)  # PID, or PID-<mkdtemp's 8>
        if owner is not None:
            if not held and _alive(int(owner[1])):
                continue
        elif not (held and re.fullmatch(r"[a-z0-9_]{8}", rest)):  # an older shiftbench's
            continue  # or another folder's name that happens to begin alike
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process with this id runs now (this one counts: its files are in use)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as another user's
        return True
    return True


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
    leftovers(path, ".staging-", held=path.resolve() in _HELD)
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


def atomic_write_text(path: Path, text: str) -> None:
    """Write `path` whole or not at all: the text goes to a hidden file beside it, is
    flushed to disk, and replaces `path` in one rename. A failure (a full disk) leaves
    `path` as it was and removes the partial file."""
    leftovers(path.parent, f".{path.name}.tmp-", held=False)  # of writes killed midway
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
