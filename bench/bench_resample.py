"""Time the deltas' bootstrap intervals against scoring without them.

One process, one loaded encoder, one run folder (STSBenchmark's test split plus
--variants edited variants, as bench_evaluate.py builds it). The embeddings are computed
once before timing, so both figures are scoring alone and the ratio is the whole cost of
the intervals (1000 paired draws per variant), the harshest way to count it:

    python bench/bench_resample.py /path/to/STSBenchmark [--repeat 3] [--variants 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench_evaluate import MODEL, write_variants_folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", help="local copy of STSBenchmark in Hub layout")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()

    from shiftbench.core.data.sources import resolve_source
    from shiftbench.core.models.encoders import Encoder
    from shiftbench.evaluate.run import collect_run_folder, collect_source, score_collection

    encoder = Encoder(MODEL)
    source = resolve_source("STSBenchmark", data_dir=args.data_dir)
    (original,) = collect_source(source).configs
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "run"
        write_variants_folder(folder, original.splits["test"], args.variants)
        collection = collect_run_folder(folder)
        score_collection(collection, encoder, resamples=0)  # embeddings, once
        plain, with_intervals = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            score_collection(collection, encoder, resamples=0)
            plain.append(time.perf_counter() - start)
            start = time.perf_counter()
            records = score_collection(collection, encoder, resamples=args.resamples)
            with_intervals.append(time.perf_counter() - start)
    variant = records[1]
    low, high = variant["ci95"]
    print(
        f"{len(records) - 1} variants of {variant['rows']} pairs, {args.resamples} draws; "
        f"{variant['config']}: delta {variant['delta']:+.5f} [{low:+.5f}, {high:+.5f}]"
    )
    print(f"scoring without intervals (anchor)  best {min(plain):.2f}s of {args.repeat}")
    print(f"scoring with intervals              best {min(with_intervals):.2f}s of {args.repeat}")
    ratio = min(with_intervals) / min(plain)
    print(f"ratio with/without intervals        {ratio:.2f}  (goal: <= 2.0)")


if __name__ == "__main__":
    main()
