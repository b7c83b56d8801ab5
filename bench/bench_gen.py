"""Embedded-backend throughput by batch size, against batch size 1 in the same run.

Outputs are identical at every batch size (seeded per text), so only time differs.

    python bench/bench_gen.py [--rows 16] [--batch-sizes 1,4,8,16]
"""

from __future__ import annotations

import argparse
import json
import time
from importlib import resources


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16, help="sample sentences to paraphrase")
    parser.add_argument("--batch-sizes", default="1,4,8,16")
    args = parser.parse_args()

    from shiftbench.core.text.transforms import TRANSFORMS, load_prompts
    from shiftbench.llm.backends import Request, Sampling, get_backend

    transform = TRANSFORMS["paraphrase"]
    prompt = load_prompts(transform)[0]
    budget = transform.steps[0].budget
    sample = resources.files("shiftbench").joinpath("sample", "data", "test.jsonl")
    texts = [json.loads(line)["sentence1"] for line in sample.read_text().splitlines()]
    texts = texts[: args.rows]
    sampling = Sampling()
    requests = [
        Request(prompt.render(t, "English"), 1000 + i, budget.tokens(t, transform.max_new_tokens))
        for i, t in enumerate(texts)
    ]
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    # the transformers engine: batch size is its setting (llama.cpp runs one at a time)
    get_backend("embedded", None, engine="transformers").load()  # loading is not measured
    times, outputs = {}, {}
    for size in sizes:
        backend = get_backend("embedded", None, batch_size=size, engine="transformers")
        start = time.perf_counter()
        outputs[size] = backend.generate(requests, sampling)
        times[size] = time.perf_counter() - start
    anchor = sizes[0]
    for size in sizes:
        same = outputs[size] == outputs[anchor]
        print(
            f"batch {size:>3}: {times[size]:6.1f}s  {len(texts) / times[size]:5.2f} texts/s  "
            f"ratio to batch {anchor}: {times[size] / times[anchor]:.2f}  identical: {same}"
        )


if __name__ == "__main__":
    main()
