"""The bare side of bench_validate.py: read a run folder's transformed rows, as a process of
its own (interpreter start, JSON parsing of every row, nothing else).

This is the least any check of the rows has to do. It writes the number of rows it read per
config to OUT/rows.json, for the bench to check against the row counts of validate's
validation.json.

    python bench/rows_side.py RUN_FOLDER OUT
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()

    meta = json.loads((args.run / "shiftbench.json").read_text(encoding="utf-8"))
    counts = {}
    for name, config in meta["configs"].items():
        if config.get("kind") != "transform":
            continue
        rows = 0
        for split in config["rows"]:
            with open(args.run / name / f"{split}.jsonl", encoding="utf-8") as fh:
                rows += sum(1 for line in fh if line.strip() and json.loads(line))
        counts[name] = rows
    (args.out / "rows.json").write_text(json.dumps(counts), encoding="utf-8")
    print(f"{sum(counts.values())} rows read from {len(counts)} configs")


if __name__ == "__main__":
    main()
