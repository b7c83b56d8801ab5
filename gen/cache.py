"""A per-row generation cache in SQLite, so finished rows survive a crash and are reused.

The key is a hash of everything a row's output depends on (DESIGN.md, "Determinism"), so a
stale entry cannot be reused after the prompt, model or sampling changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from shiftbench.gen.backends.base import Generation


def default_cache_dir() -> Path:
    env = os.environ.get("SHIFTBENCH_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shiftbench"


def row_key(**parts: Any) -> str:
    """A stable hash of the named parts (order of keyword arguments does not matter)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class GenerationCache:
    """SQLite table key -> (text, finish_reason); every put is committed at once."""

    def __init__(self, directory: Path | None) -> None:
        self.conn: sqlite3.Connection | None = None
        if directory is None:
            self.memory: dict[str, Generation] = {}
            return
        directory.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(directory / "generations.sqlite")
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS generations (key TEXT PRIMARY KEY, "
            "text TEXT NOT NULL, finish_reason TEXT NOT NULL)"
        )
        self.conn.commit()

    def get_many(self, keys: list[str]) -> dict[str, Generation]:
        if self.conn is None:
            return {k: self.memory[k] for k in keys if k in self.memory}
        found: dict[str, Generation] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT key, text, finish_reason FROM generations WHERE key IN ({marks})", chunk
            )
            found.update({k: Generation(t, f) for k, t, f in rows})
        return found

    def put_many(self, items: dict[str, Generation]) -> None:
        if self.conn is None:
            self.memory.update(items)
            return
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO generations VALUES (?, ?, ?)",
                [(k, g.text, g.finish_reason) for k, g in items.items()],
            )

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
