"""shiftbench's vllm backend against a bare `LLM.generate` call on the same engine.

Both submit the same paraphrase requests (same token ids, seeds and budgets) to one vLLM
engine in this process. Printed, each against an anchor timed in this run:
  throughput ratio   bare LLM.generate time / shiftbench time   (goal: at least 0.95)
  re-run cost        completed run again / first run            (goal: under 2%)

    python bench/bench_vllm.py [--model SPEC] [--rows 42] [--engine-arg KEY=VALUE ...]

Needs vLLM (on a CPU-only machine, the environment tests/vllm_env.sh builds).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from importlib import resources
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="default: the embedded default model")
    parser.add_argument("--rows", type=int, default=42, help="sample pairs (two texts each)")
    parser.add_argument("--engine-arg", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()

    from vllm import SamplingParams

    from shiftbench.gen.backends import Request, Sampling
    from shiftbench.gen.backends.base import token_budget
    from shiftbench.gen.backends.vllm_backend import (
        VLLMBackend,
        _prompt_ids,
        parse_engine_args,
    )
    from shiftbench.gen.cache import GenerationCache
    from shiftbench.gen.languages import LANGUAGES
    from shiftbench.gen.rewrite import Variant, call_key, rewrite_texts
    from shiftbench.gen.transforms import TRANSFORMS, load_prompts

    sample = resources.files("shiftbench").joinpath("sample", "data", "test.jsonl")
    rows = [json.loads(line) for line in sample.read_text().splitlines()][: args.rows]
    texts = list(dict.fromkeys(r[f] for r in rows for f in ("sentence1", "sentence2")))
    transform = TRANSFORMS["paraphrase"]
    sampling = Sampling()
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


if __name__ == "__main__":
    main()
