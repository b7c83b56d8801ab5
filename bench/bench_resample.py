"""Time the deltas' bootstrap intervals against scoring without them, as paired ratios.

Both parts use one run folder (STSBenchmark's test split plus --variants edited variants,
as bench_evaluate.py builds it), built once before any timing.

Whole process (what a user pays for the intervals): A is `python -m shiftbench evaluate RUN
-m MODEL -o OUT -q --no-plots --cache-dir CACHE --resamples N`, B the same command with
`--resamples 0`. CACHE is filled once before the pairs (an untimed run), so neither side
encodes and both read the same embeddings from disk: the difference is the intervals. Each
pair's results.json must hold the same main score for every config (five decimals), A an
interval for every variant and B none. A measurement (the goal below is the in-process one).

In process (isolates the cause): one loaded encoder, the embeddings computed once before
timing, so both sides are scoring alone and the ratio is the whole cost of the intervals,
the harshest way to count it: A is `score_collection(..., resamples=N)`, B the same with
`resamples=0`, called alternately in this process (bench/paired.py `paired_calls`), with
the same check of the main scores. Goal: at most 2.0 (median), as docs/benchmarks.md states.

Both are paired with the first side alternating, after one uncounted warm-up of each, and
print every pair's ratio and min / median / max with the load average and the date.

    python bench/bench_resample.py /path/to/STSBenchmark [--pairs 4] [--variants 8]
        [--resamples 1000] [--part whole,inprocess]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_evaluate import MODEL, write_variants_folder
from paired import Run, paired, paired_calls

GOAL = 2.0  # scoring with intervals / without, in process, median (docs/benchmarks.md)


def scores(records: list[dict]) -> dict[str, str]:
    """Each config's main score, to five decimals."""
    return {r["config"]: f"{r['main_score']:.5f}" for r in records}


def same_scores(with_intervals: list[dict], without: list[dict]) -> str | None:
    """None when both sides scored every config alike and only A has intervals."""
    mine, theirs = scores(with_intervals), scores(without)
    if mine != theirs:
        return f"main scores: with intervals {mine}, without {theirs}"
    variants = [r for r in with_intervals if r.get("delta") is not None]
    if not variants or any(r.get("ci95") is None for r in variants):
        return "side A has a variant without an interval"
    if any(r.get("ci95") is not None for r in without):
        return "side B (--resamples 0) has an interval"
    return None


def results(run: Run) -> list[dict]:
    document = json.loads((run.out / "results.json").read_text(encoding="utf-8"))
    return document["models"][0]["results"]


def whole_process(folder: Path, cache: Path, resamples: int, pairs: int) -> None:
    """evaluate with intervals against evaluate --resamples 0, each a process, encodings
    read from a filled cache."""
    import subprocess

    base = [
        sys.executable, "-m", "shiftbench", "evaluate", str(folder), "-m", MODEL, "-q",
        "--no-plots", "--cache-dir", str(cache),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as filled:  # fill the embedding cache, untimed
        subprocess.run(
            [*base, "-o", filled, "--resamples", "0"], check=True, stdout=subprocess.DEVNULL
        )
    report = paired(
        f"A = shiftbench evaluate --resamples {resamples}, B = the same with --resamples 0 "
        "(embeddings from a filled --cache-dir)",
        [*base, "-o", "{out}", "--resamples", str(resamples)],
        [*base, "-o", "{out}", "--resamples", "0"],
        pairs,
        lambda a, b: same_scores(results(a), results(b)),
    )  # fmt: skip
    for line in report.lines():
        print(line, flush=True)
    print("  (a measurement: the goal is the in-process ratio's)", flush=True)


def in_process(folder: Path, resamples: int, pairs: int) -> None:
    """score_collection with intervals against without, embeddings computed beforehand."""
    from shiftbench.core.models.encoders import Encoder
    from shiftbench.evaluate.collect import collect_run_folder
    from shiftbench.evaluate.run import score_collection

    encoder = Encoder(MODEL)
    collection = collect_run_folder(folder)
    score_collection(collection, encoder, resamples=0)  # embeddings, once
    report = paired_calls(
        f"A = scoring with intervals ({resamples} draws), B = scoring without, in process",
        lambda: score_collection(collection, encoder, resamples=resamples),
        lambda: score_collection(collection, encoder, resamples=0),
        pairs,
        same_scores,
    )  # fmt: skip
    records = report.pairs[-1][0].result
    variant = next(r for r in records if r.get("delta") is not None)
    low, high = variant["ci95"]
    print(
        f"{len(records) - 1} variants of {variant['rows']} pairs, {resamples} draws; "
        f"{variant['config']}: delta {variant['delta']:+.5f} [{low:+.5f}, {high:+.5f}]",
        flush=True,
    )
    for line in report.lines(goal=GOAL):
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", help="local copy of STSBenchmark in Hub layout")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--part", default="whole,inprocess", help="whole, inprocess or both")
    args = parser.parse_args()
    print(" ".join(sys.argv), flush=True)

    from shiftbench.core.data.sources import resolve_source
    from shiftbench.evaluate.collect import collect_source

    source = resolve_source("STSBenchmark", data_dir=args.data_dir)
    (original,) = collect_source(source).configs
    parts = args.part.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "run"
        texts = write_variants_folder(folder, original.splits["test"], args.variants)
        print(
            f"run folder: original + {args.variants} variants of STSBenchmark's test split, "
            f"{len(original.splits['test'])} pairs each, {len(texts)} unique texts",
            flush=True,
        )
        if "whole" in parts:
            whole_process(folder, Path(scratch) / "cache", args.resamples, args.pairs)
        if "inprocess" in parts:
            in_process(folder, args.resamples, args.pairs)


if __name__ == "__main__":
    main()
