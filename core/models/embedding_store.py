"""The embedding cache on disk (evaluate's --cache-dir): one SQLite file per model,
revision and precision, each text's vector stored once."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from shiftbench.errors import database_faults, lock_wait


class EmbeddingStore:
    """Embeddings on disk, one SQLite file per model, revision and precision, keyed by
    the sha256 of prompt and text. Writes are committed per batch, so a crash loses at
    most the batch being encoded."""

    def __init__(self, folder: Path, key: dict[str, object]) -> None:
        import sqlite3

        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
        self.path = folder / f"{name}.sqlite"
        with database_faults(self.path, "embedding"):
            self._db = sqlite3.connect(self.path, timeout=lock_wait())
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB)"
            )
            self._db.execute("CREATE TABLE IF NOT EXISTS model (key TEXT)")
            if not self._db.execute("SELECT 1 FROM model").fetchone():
                self._db.execute("INSERT INTO model VALUES (?)", (json.dumps(key, sort_keys=True),))
            self._db.commit()
        self.hits = 0

    @staticmethod
    def text_key(prompt: str | None, text: str) -> str:
        return hashlib.sha256(f"{prompt or ''}\0{text}".encode()).hexdigest()

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, vector FROM embeddings WHERE key IN ({marks})"
            with database_faults(self.path, "embedding"):
                for key, blob in self._db.execute(query, chunk):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        self.hits += len(found)
        return found

    def put(self, items: dict[str, np.ndarray]) -> None:
        with database_faults(self.path, "embedding"):
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )
            self._db.commit()
