"""shiftbench's vllm backend against a bare `LLM.generate` call on the same engine.

Both submit the same paraphrase requests (same token ids, seeds and budgets) to one vLLM
engine in this process. Printed, each against an anchor timed in this run:
  throughput ratio   bare LLM.generate time / shiftbench time   (goal: at least 0.95)
  re-run cost        completed run again / first run            (goal: under 2%)
  stream gain        one variant at a time / all variants as one stream, over the
                     --stream-transforms at seeds 1 and 2 on the same engine (goal: above 1)

    python bench/bench_vllm.py [--model SPEC] [--rows 42] [--engine-arg KEY=VALUE ...]

Needs vLLM (on a CPU-only machine, the environment tests/vllm_env.sh builds).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="default: the embedded default model")
    parser.add_argument("--rows", type=int, default=42, help="sample pairs (two texts each)")
    parser.add_argument("--engine-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--stream-transforms",
        default="paraphrase,summarisation,backtranslation",
        help="transforms of the stream comparison (each at seeds 1 and 2)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=None, help="cap on every call")
    args = parser.parse_args()

    from vllm import SamplingParams

    from shiftbench.core.text.languages import LANGUAGES
    from shiftbench.core.text.transforms import TRANSFORMS, load_prompts
    from shiftbench.gen.rewrite import Variant, call_key, rewrite_texts
    from shiftbench.llm.backends import Request, Sampling
    from shiftbench.llm.backends.base import token_budget
    from shiftbench.llm.backends.vllm_backend import (
        VLLMBackend,
        _prompt_ids,
        parse_engine_args,
    )
    from shiftbench.llm.cache import GenerationCache

    sample = resources.files("shiftbench").joinpath("sample", "data", "test.jsonl")
    rows = [json.loads(line) for line in sample.read_text().splitlines()][: args.rows]
    texts = list(dict.fromkeys(r[f] for r in rows for f in ("sentence1", "sentence2")))
    transform = TRANSFORMS["paraphrase"]
    sampling = Sampling(max_new_tokens=args.max_new_tokens)
    variant = Variant(transform, load_prompts(transform), 1337, sampling, max_attempts=1)
    en = LANGUAGES["en"]

    with tempfile.TemporaryDirectory() as scratch:
        backend = VLLMBackend(
            args.model,
            engine_args=parse_engine_args(args.engine_arg),
            cache_dir=Path(scratch),
        )
        backend.load()
        llm = backend._llm
        described = backend.describe()["model"]
        tokenizer = llm.get_tokenizer()
        prompts, params = [], []
        for text in texts:  # exactly what shiftbench submits for these texts
            key = call_key(text, variant, described, 0, en, 1)
            request = Request(
                variant.prompts[0].render(text, "English"),
                int(key[:15], 16),
                transform.steps[0].budget.tokens(text, transform.max_new_tokens),
            )
            prompts.append({"prompt_token_ids": _prompt_ids(tokenizer, request.prompt)})
            params.append(
                SamplingParams(
                    temperature=sampling.temperature,
                    top_p=sampling.top_p,
                    seed=request.seed,
                    max_tokens=token_budget(request, sampling),
                )
            )
        llm.generate(prompts[:2], params[:2], use_tqdm=False)  # warm-up
        start = time.perf_counter()
        bare_out = llm.generate(prompts, params, use_tqdm=False)
        bare = time.perf_counter() - start

        cache = GenerationCache(Path(scratch) / "rows")
        start = time.perf_counter()
        results = rewrite_texts(
            texts, variant, backend, cache, source_language=en, dataset_id="bench", quiet=True
        )
        ours = time.perf_counter() - start
        start = time.perf_counter()
        rewrite_texts(
            texts, variant, backend, cache, source_language=en, dataset_id="bench", quiet=True
        )
        rerun = time.perf_counter() - start
        cache.close()

        one_by_one, stream, equal = stream_gain(
            backend, texts, args.stream_transforms.split(","), sampling, Path(scratch)
        )

    same = sum(
        o.outputs[0].text.strip() == results[t].text for o, t in zip(bare_out, texts, strict=True)
    )
    print(f"{len(texts)} texts, one vLLM engine ({described.get('dtype')})")
    print(f"bare LLM.generate (anchor) {bare:7.2f}s")
    ratio = bare / ours
    print(f"shiftbench gen             {ours:7.2f}s   throughput ratio {ratio:.2f} (goal >= 0.95)")
    share = rerun / ours
    print(f"re-run, all cached         {rerun:7.2f}s   {share:.1%} of the first run (goal < 2%)")
    print(f"outputs equal to the bare call's: {same} of {len(texts)}")
    print(f"one variant at a time      {one_by_one:7.2f}s   ({args.stream_transforms}, seeds 1,2)")
    gain = one_by_one / stream
    print(f"all variants, one stream   {stream:7.2f}s   stream gain {gain:.2f} (goal > 1)")
    print(f"outputs equal in both orders: {'yes' if equal else 'NO'}")


def stream_gain(
    backend: Any, texts: list[str], names: list[str], sampling: Any, scratch: Path
) -> tuple[float, float, bool]:
    """Seconds for the variants one after another (gen's order before the stream) and as
    one stream (gen's order now), each with an empty cache; and whether the outputs agree."""
    from shiftbench.core.text.languages import LANGUAGES
    from shiftbench.core.text.transforms import get_transform, load_prompts
    from shiftbench.gen.rewrite import Variant, rewrite_texts
    from shiftbench.gen.schedule import Jobs
    from shiftbench.llm.cache import GenerationCache

    variants = [
        Variant(t, load_prompts(t), seed, sampling, max_attempts=1)
        for t in map(get_transform, names)
        for seed in (1, 2)
    ]
    en = LANGUAGES["en"]

    def job(variant: Variant, cache: GenerationCache) -> Callable[[Any], dict[str, Any]]:
        def run(engine: Any) -> dict[str, Any]:
            done = rewrite_texts(texts, variant, engine, cache, source_language=en,
                                 dataset_id="bench", quiet=True)  # fmt: skip
            return {t: r.text for t, r in done.items()}

        return run

    cache = GenerationCache(scratch / "one-by-one")
    start = time.perf_counter()
    alone = [job(v, cache)(backend) for v in variants]
    one_by_one = time.perf_counter() - start
    cache.close()

    cache = GenerationCache(scratch / "stream")
    jobs: Jobs[dict[str, Any]] = Jobs(backend, len(variants))
    start = time.perf_counter()
    together = jobs.gather([jobs.submit(job(v, cache)) for v in variants])
    stream = time.perf_counter() - start
    cache.close()
    return one_by_one, stream, alone == together


if __name__ == "__main__":
    main()
