"""Time shiftbench's STS scoring against mteb.evaluate on the same model and data.

Both run in this process on the same loaded encoder; the figure that matters is the ratio
(shiftbench time / mteb time), since absolute times on a shared machine mean little.

    python bench/bench_evaluate.py /path/to/STSBenchmark [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", help="local copy of STSBenchmark in Hub layout")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import datasets
    import mteb

    from shiftbench.evaluate.encoders import Encoder
    from shiftbench.evaluate.run import collect_source, score_collection
    from shiftbench.sources import resolve_source

    encoder = Encoder(MODEL)
    source = resolve_source("STSBenchmark", data_dir=args.data_dir)
    mteb_times, ours_times = [], []
    for _ in range(args.repeat):
        task = mteb.get_task("STSBenchmark")
        task.dataset = datasets.load_dataset(args.data_dir)
        task.data_loaded = True
        start = time.perf_counter()
        theirs = mteb.evaluate(encoder.model, task, cache=None, overwrite_strategy="always")
        mteb_times.append(time.perf_counter() - start)

        encoder._cache.clear()  # time a cold embedding cache, as a first run would see
        start = time.perf_counter()
        (ours,) = score_collection(collect_source(source), encoder)
        ours_times.append(time.perf_counter() - start)

    their_score = theirs.task_results[0].scores["test"][0]["cosine_spearman"]
    print(f"cosine_spearman  mteb {their_score:.5f}  shiftbench {ours['main_score']:.5f}")
    print(f"mteb.evaluate (anchor)   best {min(mteb_times):.2f}s of {args.repeat}")
    print(f"shiftbench evaluate      best {min(ours_times):.2f}s of {args.repeat}")
    print(f"ratio shiftbench/mteb    {min(ours_times) / min(mteb_times):.2f}  (goal: <= 1.0)")


if __name__ == "__main__":
    main()
