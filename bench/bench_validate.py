"""Throughput of the automatic checks, against reading the same rows, in one run.

Takes a run folder written by `shiftbench gen`, repeats its transformed rows until there
are --rows of them, and times, per row (all text fields):
  anchor       reading the rows (JSON parsing only)
  checks       every check but wrong-language (no language ID)
  with langid  every check, language ID included (lingua and langdetect)
Printed: rows per second, and each as a ratio to the 1000 rows/s goal.

    python bench/bench_validate.py RUN_FOLDER [--rows 20000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--rows", type=int, default=20000)
    args = parser.parse_args()

    from shiftbench.core.text.checks import CHECKS, Case, failures
    from shiftbench.core.text.langid import get_identifier
    from shiftbench.validate.report import edit_distance

    meta = json.loads((args.run / "shiftbench.json").read_text(encoding="utf-8"))
    fields = meta["source"]["text_fields"]
    lines = []
    for name, config in meta["configs"].items():
        if config.get("kind") == "transform":
            for path in sorted((args.run / name).glob("*.jsonl")):
                transform = config["transform"]
                lines += [(transform, line) for line in path.read_text("utf-8").splitlines()]
    lines = (lines * (args.rows // len(lines) + 1))[: args.rows]

    start = time.perf_counter()
    rows = [(t, json.loads(line)) for t, line in lines]
    anchor = time.perf_counter() - start

    no_langid = tuple(c for c in CHECKS if c != "wrong-language")
    start = time.perf_counter()
    for transform, row in rows:
        for f in fields:
            original, output = row[f"original_{f}"], row[f] or ""
            failures(Case(original, output, transform, row.get(f"language_{f}")), no_langid)
            edit_distance(original, output)
    checks = time.perf_counter() - start

    timed = {}
    sample = rows[: min(len(rows), 4000)]
    for name in ("lingua", "langdetect"):
        identifier = get_identifier(name)
        identifier.detect(["warm-up text for the identifier"])
        start = time.perf_counter()
        identifier.detect(
            [row[f] or "" for _, row in sample for f in fields],
            [row.get(f"language_{f}") for _, row in sample for f in fields],
        )
        per_row = (time.perf_counter() - start) / len(sample)
        timed[name] = checks / len(rows) + per_row

    n = len(rows)
    print(f"{n} rows, {len(fields)} text fields each, from {args.run}")
    print(f"anchor: read rows      {n / anchor:10.0f} rows/s")
    print(f"checks, no langid      {n / checks:10.0f} rows/s   {n / checks / 1000:6.2f}x the goal")
    for name, seconds in timed.items():
        rate = 1 / seconds
        print(f"checks + {name:<12}  {rate:10.0f} rows/s   {rate / 1000:6.2f}x the goal")


if __name__ == "__main__":
    main()
