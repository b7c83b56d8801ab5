"""A per-row generation cache in SQLite, so finished rows survive a crash and are reused.

The key is a hash of everything a row's output depends on (docs/concepts/determinism.md), so
a stale entry cannot be reused after the prompt, model or sampling changes.

Several jobs of one run may use the cache from their own threads at once. A job claims the
keys it is about to generate, and another job that needs one of them waits for its result
instead of asking the backend a second time (greedy calls shared across seeds).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from shiftbench.core.data.writes import unwritable
from shiftbench.core.messages import option
from shiftbench.errors import InputError, database_faults, lock_wait
from shiftbench.llm.backends.base import Generation


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
        self.path: Path | None = None
        self._lock = threading.RLock()
        self._settled = threading.Condition(self._lock)
        self._claimed: set[str] = set()
        if directory is None:
            self.memory: dict[str, Generation] = {}
            return
        problem = unwritable(directory)
        if problem:
            raise InputError(
                f"the cache folder {directory}: {problem}; give {option('cache_dir')} a folder "
                f"that can be written (or set SHIFTBENCH_CACHE_DIR), or pass "
                f"{option('no_cache')}"
            )
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "generations.sqlite"
        with database_faults(self.path, "generation"):
            # one connection for every job's thread; self._lock keeps its use one at a time
            self.conn = sqlite3.connect(self.path, check_same_thread=False, timeout=lock_wait())
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS generations (key TEXT PRIMARY KEY, "
                "text TEXT NOT NULL, finish_reason TEXT NOT NULL)"
            )
            self.conn.execute("SELECT key FROM generations LIMIT 1").fetchall()
            self.conn.commit()

    @classmethod
    def read_only(cls, directory: Path | None) -> GenerationCache:
        """The cache in `directory` for lookups only (gen --dry-run): nothing is created or
        written; a missing cache is an empty one."""
        cache = cls(None)
        path = directory / "generations.sqlite" if directory is not None else None
        if path is not None and path.is_file():
            cache.path = path
            uri = f"{path.resolve().as_uri()}?mode=ro"
            with database_faults(path, "generation"):
                cache.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
                cache.conn.execute("SELECT key FROM generations LIMIT 1").fetchall()
        return cache

    def get_many(self, keys: list[str]) -> dict[str, Generation]:
        with self._lock:
            return self._get_many(keys)

    def _get_many(self, keys: list[str]) -> dict[str, Generation]:
        if self.conn is None:
            return {k: self.memory[k] for k in keys if k in self.memory}
        found: dict[str, Generation] = {}
        with database_faults(self.path, "generation"):
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self.conn.execute(
                    f"SELECT key, text, finish_reason FROM generations WHERE key IN ({marks})",
                    chunk,
                )
                found.update({k: Generation(t, f) for k, t, f in rows})
        return found

    def put_many(self, items: dict[str, Generation]) -> None:
        """Store (and commit) the results; their keys are no longer claimed."""
        with self._lock:
            if self.conn is None:
                self.memory.update(items)
            else:
                with database_faults(self.path, "generation"), self.conn:
                    self.conn.executemany(
                        "INSERT OR REPLACE INTO generations VALUES (?, ?, ?)",
                        [(k, g.text, g.finish_reason) for k, g in items.items()],
                    )
            self._release(items)

    def claim(self, keys: list[str]) -> tuple[list[str], list[str]]:
        """(keys now claimed by the caller, keys another job is generating or has put
        since the caller last looked)."""
        with self._lock:
            done = self._get_many(keys)
            theirs = [k for k in keys if k in self._claimed or k in done]
            mine = [k for k in keys if k not in self._claimed and k not in done]
            self._claimed.update(mine)
            return mine, theirs

    def release(self, keys: list[str]) -> None:
        """Give up claims whose results will not come (a failed or stopped call)."""
        with self._lock:
            self._release(keys)

    def _release(self, keys: Any) -> None:
        if self._claimed.intersection(keys):
            self._claimed.difference_update(keys)
            self._settled.notify_all()

    def wait_for(self, keys: list[str]) -> dict[str, Generation]:
        """The results of keys other jobs claimed, once none of them is claimed any more;
        a key given up without a result is missing from the answer."""
        with self._lock:
            self._settled.wait_for(lambda: self._claimed.isdisjoint(keys))
            return self._get_many(keys)

    def close(self) -> None:
        with self._lock:
            if self.conn is not None:
                self.conn.close()
