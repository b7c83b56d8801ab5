"""Throughput of `shiftbench validate`, whole process, against reading the same rows, as
paired ratios; and the cost of language ID, in process.

Before any timing, this script writes a larger copy of RUN (a run folder written by `shiftbench
gen`): every config's rows repeated, under new row ids, until the transformed configs hold
at least --rows rows.

Whole process: A is what a user runs, `python -m shiftbench validate COPY -q` (every check,
language ID by lingua, the reports written into the folder), with `--meaning-encoder none`
(`--compare checks`: the form checks alone) or as it comes (`--compare default`: the meaning
check too, which loads the packaged encoder and encodes the paraphrase-like rows). Each run
gets a fresh copy of the folder (copied untimed), since validate writes into it. B is
`bench/rows_side.py`, which reads the same rows (JSON parsing only) in a process of its own.
Each pair: validate's validation.json must count, config by config, the rows B read. What
is printed: every pair's A/B ratio and min / median / max, then A's rows per second (rows
/ A's seconds, whole process) and the goal docs/benchmarks.md states, 1000 rows per second,
met or not on the median.

In process (isolates language ID's share): on the rows parsed once, A is every check with
language ID (`--langid` identifiers, loaded beforehand), B every check but wrong-language,
with the edit distance on both sides, called alternately (bench/paired.py `paired_calls`).
Each pair: the two sides' failures other than wrong-language must be the same. Printed
with A's rows per second and the same goal.

All pairs alternate which side goes first, after one uncounted warm-up of each.

    python bench/bench_validate.py RUN_FOLDER [--rows 20000] [--pairs 4]
        [--compare checks,default] [--langid lingua,langdetect]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from paired import Report, Run, paired, paired_calls, run_process  # noqa: E402

GOAL = 1000.0  # rows per second (docs/benchmarks.md), median of the pairs
COMPARE = {
    "checks": ("validate --meaning-encoder none", ["--meaning-encoder", "none"]),
    "default": ("validate (meaning check on)", []),
}


def enlarge(run: Path, rows: int, where: Path) -> int:
    """Write to `where` a copy of `run` whose configs' rows are repeated until the
    transformed ones hold at least `rows`; returns how many transformed rows it holds."""
    meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
    configs = meta["configs"]
    held = sum(sum(c["rows"].values()) for c in configs.values() if c["kind"] == "transform")
    if not held:
        raise SystemExit(f"{run} has no transformed rows")
    times = -(-rows // held)
    where.mkdir(parents=True)
    for name, config in configs.items():
        (where / name).mkdir()
        for split in config["rows"]:
            lines = (run / name / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
            table = [json.loads(line) for line in lines if line.strip()]
            out = []
            for k in range(times):  # row ids stay unique and match across configs
                for row in table:
                    rid = row["row_id"]
                    new = rid + k * 10**9 if isinstance(rid, int) else f"{rid}~{k}"
                    out.append(json.dumps({**row, "row_id": new}, ensure_ascii=False))
            (where / name / f"{split}.jsonl").write_text("\n".join(out) + "\n", "utf-8")
            config["rows"][split] = len(out)
    (where / "shiftbench.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    if (run / "README.md").exists():
        shutil.copyfile(run / "README.md", where / "README.md")
    return held * times


def same_counts(ours: Run, theirs: Run) -> str | None:
    """None when validation.json counts the rows B read, config by config."""
    report = json.loads((ours.out / "run" / "validation.json").read_text(encoding="utf-8"))
    mine = {name: c["rows"] for name, c in report["configs"].items()}
    read = json.loads((theirs.out / "rows.json").read_text(encoding="utf-8"))
    return None if mine == read else f"validate counted {mine}, B read {read}"


def copying_runner(folder: Path):
    """run_process, with a fresh copy of `folder` put at OUT/run first (untimed) for the
    command that validates it."""

    def run(argv: Sequence[str], out: Path, env: dict[str, str] | None) -> Run:
        if "validate" in argv:
            shutil.copytree(folder, out / "run")
        return run_process(argv, out, env)

    return run


def rates(report: Report, rows: int) -> str:
    """A's rows per second over the pairs, min / median / max, and the goal."""
    per_second = sorted(rows / a.seconds for a, _ in report.pairs)
    mid = statistics.median(per_second)
    met = "met" if mid >= GOAL else "not met"
    return (
        f"  A rows per second min / median / max  {per_second[0]:.0f} / {mid:.0f} / "
        f"{per_second[-1]:.0f}  goal >= {GOAL:.0f}: {met} (median)"
    )


def whole_process(folder: Path, rows: int, compare: list[str], pairs: int, warmup: int) -> None:
    bare = [sys.executable, str(HERE / "rows_side.py"), str(folder), "{out}"]
    for key in compare:
        label, options = COMPARE[key]
        ours = [sys.executable, "-m", "shiftbench", "validate", "{out}/run", "-q", *options]
        report = paired(
            f"A = shiftbench {label}, B = read the rows (JSON parsing only)",
            ours, bare, pairs, same_counts, runner=copying_runner(folder), warmup=warmup,
        )  # fmt: skip
        for line in report.lines():
            print(line, flush=True)
        print(rates(report, rows), flush=True)


def in_process(folder: Path, identifiers: list[str], pairs: int) -> None:
    from shiftbench.core.text.checks import CHECKS, Case, failures
    from shiftbench.core.text.langid import get_identifier
    from shiftbench.validate.rowchecks import edit_distance

    meta = json.loads((folder / "shiftbench.json").read_text(encoding="utf-8"))
    fields = meta["source"]["text_fields"]
    rows = []
    for name, config in meta["configs"].items():
        if config["kind"] == "transform":
            for split in config["rows"]:
                lines = (folder / name / f"{split}.jsonl").read_text("utf-8").splitlines()
                rows += [(config["transform"], json.loads(line)) for line in lines if line]
    cases = [
        (row[f"original_{f}"], row[f] or "", transform, row.get(f"language_{f}"))
        for transform, row in rows
        for f in fields
    ]
    no_langid = tuple(c for c in CHECKS if c != "wrong-language")

    def without() -> list[list[str]]:
        found = []
        for original, output, transform, language in cases:
            found.append(failures(Case(original, output, transform, language), no_langid))
            edit_distance(original, output)
        return found

    def with_langid(identifier) -> list[list[str]]:
        detected = identifier.detect([c[1] for c in cases], [c[3] for c in cases])
        found = []
        for (original, output, transform, language), code in zip(cases, detected, strict=True):
            found.append(failures(Case(original, output, transform, language, code)))
            edit_distance(original, output)
        return found

    def same(mine: list[list[str]], theirs: list[list[str]]) -> str | None:
        stripped = [[f for f in x if f != "wrong-language"] for x in mine]
        if len(stripped) != len(theirs):
            return f"{len(stripped)} texts checked against {len(theirs)}"
        differ = sum(x != y for x, y in zip(stripped, theirs, strict=True))
        return f"{differ} texts failed other checks" if differ else None

    for name in identifiers:
        identifier = get_identifier(name)
        identifier.detect(["warm-up text for the identifier"])
        report = paired_calls(
            f"A = every check with {name} language ID, B = every check but wrong-language, "
            f"{len(rows)} rows ({len(cases)} texts), in process",
            lambda identifier=identifier: with_langid(identifier), without, pairs, same,
        )  # fmt: skip
        for line in report.lines():
            print(line, flush=True)
        print(rates(report, len(rows)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side")
    parser.add_argument("--compare", default="checks,default", help="checks, default or both")
    parser.add_argument("--langid", default="lingua,langdetect", help="in process; '' for none")
    args = parser.parse_args()
    print(" ".join(sys.argv), flush=True)
    compare = [c for c in args.compare.split(",") if c]
    unknown = [c for c in compare if c not in COMPARE]
    if unknown:
        raise SystemExit(f"--compare: no such comparison {unknown}; choose from {list(COMPARE)}")

    with tempfile.TemporaryDirectory(prefix="bench-validate-") as scratch:
        folder = Path(scratch) / "run"
        rows = enlarge(args.run, args.rows, folder)
        meta = json.loads((folder / "shiftbench.json").read_text(encoding="utf-8"))
        fields = meta["source"]["text_fields"]
        print(f"{rows} transformed rows, {len(fields)} text fields each, from {args.run}")
        whole_process(folder, rows, compare, args.pairs, args.warmup)
        in_process(folder, [n for n in args.langid.split(",") if n], args.pairs)


if __name__ == "__main__":
    main()
