"""Reading what runs write: JSON Lines rows, the generation cache's row count, the sample."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE_ROWS = REPO / "sample" / "data" / "test.jsonl"  # the bundled sample's test split


def read_rows(path: Path) -> list[dict]:
    """The rows of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def cached_rows(cache: Path) -> int:
    """How many finished rows the generation cache in `cache` (llm/cache.py) holds; 0
    before a run made it. Read-only, so a test watching a run never checkpoints the cache
    or changes what a kill left in it."""
    path = cache / "generations.sqlite"
    if not path.is_file():
        return 0
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
            (count,) = conn.execute("SELECT count(*) FROM generations").fetchone()
    except sqlite3.OperationalError:  # the run has not made the table yet
        return 0
    return int(count)


def write_folder(root: Path, rows: list[dict], configs: str | None = None) -> Path:
    (root / "data").mkdir(parents=True)
    with open(root / "data" / "test.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    configs = configs or (
        "configs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test.jsonl\n"
    )
    (root / "README.md").write_text(f"---\n{configs}---\n\n# test data\n", encoding="utf-8")
    return root


def fenced_after(text: str, marker: str) -> str:
    found = re.search(re.escape(marker) + r"\n```\w*\n(.*?)```", text, re.S)
    assert found, f"README.md has no block after {marker}"
    return found.group(1)
