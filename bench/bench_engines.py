"""Tokens per second of the embedded backend's two engines, llama.cpp against transformers.

Both engines paraphrase the same sample sentences (the paraphrase prompt, seeds 1000+i,
a budget of --budget tokens each, shiftbench's default sampling) on the default SmolLM2
GGUF. Each side runs as its own process; its model load is not timed, only the
generation. The pairs alternate which side goes first (A,B then B,A ...), and what is
printed is each side's tokens per second and the ratio llama.cpp / transformers of each
pair, as min / median / max, with the date and the load average before and after. The
engines' outputs differ (docs/guides/backends.md); each side's outputs must be the same
in every pair (seeded), and the bench says so.

    python bench/bench_engines.py [--rows 32] [--budget 64] [--pairs 3] [--threads N]
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from importlib import resources

ENGINES = ("llama.cpp", "transformers")


def side(engine: str, rows: int, budget: int, threads: int | None) -> None:
    """One side's run: load (untimed), generate, print tokens, seconds and an output digest."""
    from shiftbench.core.text.transforms import TRANSFORMS, load_prompts
    from shiftbench.llm.backends import Request, Sampling, get_backend

    prompt = load_prompts(TRANSFORMS["paraphrase"])[0]
    sample = resources.files("shiftbench").joinpath("sample", "data", "test.jsonl")
    texts = [json.loads(line)["sentence1"] for line in sample.read_text().splitlines()][:rows]
    requests = [Request(prompt.render(t, "English"), 1000 + i, budget) for i, t in enumerate(texts)]
    backend = get_backend("embedded", None, engine=engine)
    backend.load()
    if threads:
        backend._set_threads(threads)  # type: ignore[attr-defined]
    start = time.perf_counter()
    made = backend.generate(requests, Sampling())
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(json.dumps([g.text for g in made]).encode()).hexdigest()[:16]
    tokens = sum(g.output_tokens or 0 for g in made)
    print(json.dumps({"tokens": tokens, "seconds": seconds, "outputs": digest}))


def run(engine: str, args: argparse.Namespace) -> dict[str, float | str]:
    argv = [sys.executable, __file__, "--side", engine, "--rows", str(args.rows),
            "--budget", str(args.budget)]  # fmt: skip
    if args.threads:
        argv += ["--threads", str(args.threads)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    result: dict[str, float | str] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=32, help="sample sentences (at most 42)")
    parser.add_argument("--budget", type=int, default=64, help="token budget of each call")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="both engines; default theirs")
    parser.add_argument("--side", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        side(args.side, args.rows, args.budget, args.threads)
        return
    before = os.getloadavg()
    print(f"{datetime.datetime.now():%Y-%m-%d %H:%M}, load average {before[0]:.2f} before; "
          f"{args.rows} paraphrase prompts, budget {args.budget}, {args.pairs} pairs")  # fmt: skip
    rates: dict[str, list[float]] = {e: [] for e in ENGINES}
    digests: dict[str, set[str]] = {e: set() for e in ENGINES}
    ratios = []
    for pair in range(args.pairs):
        order = ENGINES if pair % 2 == 0 else ENGINES[::-1]
        got = {engine: run(engine, args) for engine in order}
        for engine, result in got.items():
            rate = float(result["tokens"]) / float(result["seconds"])
            rates[engine].append(rate)
            digests[engine].add(str(result["outputs"]))
            print(f"pair {pair + 1} {engine:>12}: {result['tokens']} tokens in "
                  f"{float(result['seconds']):.1f}s = {rate:.1f} tokens/s")  # fmt: skip
        ratios.append(rates["llama.cpp"][-1] / rates["transformers"][-1])
    for engine in ENGINES:
        same = "same outputs in every pair" if len(digests[engine]) == 1 else "OUTPUTS DIFFER"
        print(f"{engine:>12}: median {statistics.median(rates[engine]):.1f} tokens/s; {same}")
    print(f"llama.cpp / transformers tokens/s: min {min(ratios):.2f} / median "
          f"{statistics.median(ratios):.2f} / max {max(ratios):.2f}; load average "
          f"{os.getloadavg()[0]:.2f} after")  # fmt: skip


if __name__ == "__main__":
    main()
