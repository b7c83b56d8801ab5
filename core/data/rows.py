"""A local folder's JSON Lines splits read without `datasets`.

Importing `datasets` and building its Arrow cache costs a second or more, most of a short
command's start (`gen` on a sample, `evaluate` of a local folder). For the common case, a
config whose every split is one small JSON Lines file of flat records, `read_plain` reads
the files with pyarrow's JSON reader exactly as `datasets`' JSON loader does (the same
reader, block size and schema inference, every split in the first split's schema), so each
row holds the same values of the same types; `Rows` then offers the parts of
`datasets.Dataset` that shiftbench uses. Any other case (a card that declares features,
patterns, several files, a large file, nested records, splits of different schemas, a file
pyarrow cannot read) returns None and goes to `datasets`, whose messages name what is
wrong. tests/integration/test_rows.py checks the rows against `datasets` on the real
datasets and on files made to differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

# datasets' JSON loader reads a file in chunks of this many bytes (its `chunksize`), and
# gives pyarrow blocks of 1/32 of a chunk (never under 16 KiB)
CHUNK = 10 << 20
BLOCK = max(CHUNK // 32, 16 << 10)
# configs keys that change how datasets reads the files (beyond which files they are)
PLAIN_KEYS = frozenset({"config_name", "data_files", "default"})


class Rows:
    """A split's rows in order, with `column_names`, `len` (and `num_rows`), iteration,
    `ds[i]` (a row), `ds[column]` (its values), `to_list()` and `select(indices)`, as
    datasets' Dataset has them. Rows handed out are copies: a caller that changes one
    changes nothing here."""

    def __init__(self, columns: list[str], rows: list[dict[str, Any]]) -> None:
        self.column_names = list(columns)
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def num_rows(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (dict(r) for r in self._rows)

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            if key not in self.column_names:
                raise KeyError(key)
            return [r[key] for r in self._rows]
        if isinstance(key, int) and not isinstance(key, bool):
            return dict(self._rows[key])
        raise TypeError(f"rows are indexed by position or column name, not {type(key).__name__}")

    def to_list(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._rows]

    def select(self, indices: Iterable[int]) -> Rows:
        return Rows(self.column_names, [self._rows[i] for i in indices])

    def __repr__(self) -> str:
        return f"Rows(columns={self.column_names}, rows={len(self._rows)})"


def read_plain(folder: Path, meta: Any, config: str) -> dict[str, Rows] | None:
    """`config`'s splits as Rows when they are plain JSON Lines (see the module's
    docstring); None when `datasets` should read them. `meta` is the card's YAML header."""
    if not isinstance(meta, dict) or "dataset_info" in meta:
        return None  # features the card declares: datasets casts the rows to them
    entries = [e for e in meta.get("configs") or [] if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("config_name", "default") == config), None)
    if entry is None or set(entry) - PLAIN_KEYS:
        return None
    files = entry.get("data_files")
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        return None
    paths: dict[str, Path] = {}
    root = folder.resolve()
    for item in files:
        split, path = item.get("split"), item.get("path")
        if set(item) - {"split", "path"} or not isinstance(split, str) or split in paths:
            return None
        if not isinstance(path, str) or not path.endswith(".jsonl"):
            return None
        if any(c in path for c in "*?[{"):  # a pattern: datasets expands it
            return None
        file = (folder / path).resolve()
        if not file.is_relative_to(root) or not file.is_file() or file.stat().st_size >= CHUNK:
            return None
        paths[split] = file
    if not paths:
        return None
    tables = {}
    for split, file in paths.items():
        table = _table(file)
        if table is None:
            return None
        tables[split] = table
    schemas = {str(t.schema) for t in tables.values()}
    if len(schemas) != 1:
        return None  # datasets casts every split to the first one's schema
    return {s: Rows(t.column_names, t.to_pylist()) for s, t in tables.items()}


def _table(file: Path) -> Any:
    """The file's rows as pyarrow's JSON reader reads them for datasets, or None when
    datasets would take another way (a BOM, a list, a nested record, a parse error)."""
    data = file.read_bytes()
    if not data.strip() or data.startswith((b"\xef\xbb\xbf", b"[")):
        return None
    try:
        records = [json.loads(line) for line in data.splitlines() if line.strip()]
    except ValueError:
        return None
    if not all(isinstance(r, dict) and _flat(r) for r in records):
        return None  # datasets looks for records of mixed structure and may re-encode them
    import pyarrow as pa
    import pyarrow.json as paj

    block = len(data) if len(data) // 8 > BLOCK else BLOCK
    try:
        table = paj.read_json(pa.BufferReader(data), read_options=paj.ReadOptions(block_size=block))
        table.validate()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return table if table.num_rows == len(records) else None


def _flat(record: dict[str, Any]) -> bool:
    """No field is an object, and no list holds one."""
    for value in record.values():
        if isinstance(value, dict):
            return False
        if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            return False
    return True
