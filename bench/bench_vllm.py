"""Time `shiftbench gen -b vllm` against a bare `vllm.LLM.generate` call, whole process, as
paired ratios.

A is what a user runs: `python -m shiftbench gen sample -b vllm -t paraphrase -s 1
--temperature 0 --limit ROWS --max-new-tokens 48 --num-ctx 8192 --engine-arg ...
--max-failure-rate 1 --cache-dir OUT/cache -o OUT/run -q` (a fresh, empty cache each run,
the dequantised model copy shared through $SHIFTBENCH_MODELS_DIR; greedy decoding, so that
both sides' texts compare exactly; failed rows do not end the run). B is
`bench/vllm_side.py`: `vllm.LLM` on the checkpoint the backend serves, with the keyword
arguments the backend gives it (`VLLMBackend.engine_kwargs`), and one `LLM.generate` call on
exactly the requests A sends: each prompt as token ids (the chat template applied as the
backend applies it), with its seed, token budget and sampling settings
(`vllm_backend.sampling_kwargs`). Before any timing this script finds those requests with
shiftbench's own code, in this process and untimed: the library's `generate` with the same
settings, handed a stand-in backend that keeps what it is asked and answers each request
with a numbered placeholder (the run folder it writes then tells which text each request
is). The cap of 48 tokens is paraphrase's smallest first budget, so every call's budget is
the cap and gen never asks again with a larger one: A makes exactly B's calls (a cap that
would let gen ask again is refused). The runs are paired with the first side alternating,
after one uncounted warm-up run of each (bench/paired.py); in every pair, each row of A's
variant must hold B's output for its text (as the backend keeps it: stripped), and both
sides must have made the same texts.
Goal: A's time at most 1/0.98 of B's (throughput at least 0.98x, median), as
docs/benchmarks.md states.

Then, in this process (one engine loaded here after the pairs; not whole process, so not
what a user pays): the re-run cost (the same texts again, every call cached, as a share of
the first run; goal under 2%) and the stream gain (the --stream-transforms at seeds 1 and
2, one variant after another against all as one stream, gen's order; goal above 1).
`--no-in-process` skips them.

    python bench/bench_vllm.py [--model SPEC] [--rows 42] [--max-new-tokens 48] [--pairs 4]
        [--warmup 1] [--num-ctx 8192] [--engine-arg KEY=VALUE ...] [--no-in-process]

Engine arguments by default: the vllm tests' `enforce_eager=true` (no torch.compile, which
takes over a minute per process on two cores) and `gpu_memory_utilization=0.1`; any
--engine-arg replaces both. Needs vLLM: run it with the python of the environment
`bash tests/vllm_env.sh --build-only` builds (shiftbench is installed there from the clone).
`--shiftbench-path DIR` puts DIR first on A's PYTHONPATH (to time another copy).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paired import OUT, Run, paired, shiftbench_env, throughput_lines

HERE = Path(__file__).resolve().parent
TRANSFORM = "paraphrase"
SEED = 1
GOAL = 0.98  # gen's throughput at least 0.98x the bare generate's (median of the pairs)
FIELDS = ("sentence1", "sentence2")
TESTS_ENGINE_ARGS = ["enforce_eager=true", "gpu_memory_utilization=0.1"]
PLACEHOLDER = "request {}"  # the stand-in backend's answer to the request of that number


class Recorder:
    """A stand-in for the vllm backend: keeps every request gen hands it, in order, and
    answers each with a numbered placeholder that ends by itself (finish reason "stop")."""

    name = "vllm"

    def __init__(self, real: Any) -> None:
        self.chunk_size = real.chunk_size
        self.concurrent = real.concurrent
        described = real.describe_unloaded()  # what the loaded engine describes, unloaded
        if described is None:
            raise SystemExit("name the precision: --engine-arg dtype=... (vLLM on a GPU)")
        self.described = described
        self.sent: list[tuple[Any, Any]] = []  # (Request, Sampling)
        self.lock = threading.Lock()

    def load(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return self.described

    def generate(self, requests: list[Any], sampling: Any, on_done: Any = None) -> list[Any]:
        from shiftbench.llm.backends import Generation

        with self.lock:
            first = len(self.sent)
            self.sent.extend((r, sampling) for r in requests)
        made = [Generation(PLACEHOLDER.format(first + i), "stop") for i in range(len(requests))]
        for i, gen in enumerate(made):
            if on_done is not None:
                on_done(i, gen)
        return made


class Every(dict):
    """gen's mapping of loaded generators, holding one generator for every key."""

    def __init__(self, engine: Any) -> None:
        super().__init__()
        self.engine = engine

    def get(self, key: Any, default: Any = None) -> Any:
        return self.engine


def gen_settings(
    args: argparse.Namespace, engine_args: dict[str, Any], output: Path, cache: Path | None
) -> Any:
    """A's command line as the library's settings (no row cache when `cache` is None)."""
    from shiftbench.gen.api import GenSettings

    return GenSettings(
        transforms=(TRANSFORM,), seeds=(SEED,), backend="vllm", model=args.model,
        temperature=0.0, max_new_tokens=args.max_new_tokens, num_ctx=args.num_ctx,
        engine_args=engine_args, limit=args.rows, output=output, cache_dir=cache,
        no_cache=cache is None, max_failure_rate=1.0, quiet=True,
    )  # fmt: skip


def record_requests(args: argparse.Namespace, engine_args: dict[str, Any], scratch: Path) -> dict:
    """B's requests: what `shiftbench gen` with A's settings sends its vllm backend, found by
    running gen's library function on a Recorder, with the checkpoint and the engine's
    keyword arguments."""
    from vllm.tokenizers import get_tokenizer

    from shiftbench.gen.api import generate
    from shiftbench.llm.backends.vllm_backend import VLLMBackend, _prompt_ids, sampling_kwargs

    real = VLLMBackend(args.model, num_ctx=args.num_ctx, engine_args=engine_args)
    recorder = Recorder(real)
    generate("sample", gen_settings(args, engine_args, scratch / "recorded", None),
             engines=Every(recorder))  # fmt: skip
    text_of = {}  # placeholder -> input text, from the run folder gen wrote
    table = scratch / "recorded" / f"{TRANSFORM}-s{SEED}" / "test.jsonl"
    for line in table.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for field in FIELDS:
            text_of[row[field]] = row[f"original_{field}"]
    checkpoint = real._checkpoint()  # dequantised once per machine, into the models folder
    tokenizer = get_tokenizer(checkpoint)  # vLLM's own loader, as LLM.get_tokenizer's
    requests = []
    for i, (request, sampling) in enumerate(recorder.sent):
        params = sampling_kwargs(request, sampling)
        if params["max_tokens"] != args.max_new_tokens:
            raise SystemExit(
                f"a call's budget is {params['max_tokens']} tokens, below the cap of "
                f"{args.max_new_tokens}: gen would ask a cut output again with a larger "
                f"budget, which one generate call does not; use --max-new-tokens 48 or less"
            )
        requests.append(
            {
                "text": text_of[PLACEHOLDER.format(i)],
                "prompt_token_ids": _prompt_ids(tokenizer, request.prompt),
                "params": params,
            }
        )
    return {"checkpoint": checkpoint, "engine": real.engine_kwargs(), "requests": requests}


def kept(raw: str) -> str:
    """An output as the vllm backend keeps it (stripped; a character cut by the budget
    dropped)."""
    from shiftbench.llm.backends import Generation

    return Generation(raw.strip(), "stop").text


def same_texts(ours: Run, theirs: Run) -> str | None:
    """None when every row of gen's variant holds the bare call's output for its text and
    the two sides made outputs for the same texts."""
    bare = json.loads((theirs.out / "texts.json").read_text(encoding="utf-8"))
    table = ours.out / "run" / f"{TRANSFORM}-s{SEED}" / "test.jsonl"
    seen = set()
    for line in table.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for field in FIELDS:
            text = row[f"original_{field}"]
            if text not in bare:
                return f"the bare call made no output for {text!r}"
            if row[field] != kept(bare[text]):
                return f"{text!r}: gen {row[field]!r}, bare call {kept(bare[text])!r}"
            seen.add(text)
    if not seen:
        return "gen wrote no rows"
    if seen != set(bare):
        return f"the bare call made outputs for {len(set(bare) - seen)} texts gen has not"
    return None


def main() -> None:
    from shiftbench.gen.settings import defaults
    from shiftbench.llm.backends.vllm_backend import parse_engine_args
    from shiftbench.llm.backends.weights import models_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="default: the embedded default model")
    parser.add_argument("--rows", type=int, default=42, help="sample rows (42: all of them)")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="gen's cap (at most 48)")
    parser.add_argument("--num-ctx", type=int, default=defaults()["num_ctx"])
    parser.add_argument("--engine-arg", action="append", default=None, metavar="KEY=VALUE",
                        help=f"default: {' '.join(TESTS_ENGINE_ARGS)}")  # fmt: skip
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side")
    parser.add_argument("--shiftbench-path", help="put this first on A's PYTHONPATH")
    parser.add_argument("--no-in-process", action="store_true", help="skip re-run and stream")
    parser.add_argument(
        "--stream-transforms",
        default="paraphrase,summarisation,backtranslation",
        help="transforms of the in-process stream comparison (each at seeds 1 and 2)",
    )
    args = parser.parse_args()
    print(" ".join(sys.argv), flush=True)
    given = args.engine_arg if args.engine_arg is not None else TESTS_ENGINE_ARGS
    engine_args = parse_engine_args(given)

    with tempfile.TemporaryDirectory() as scratch:
        spec = record_requests(args, engine_args, Path(scratch))
        file = Path(scratch) / "requests.json"
        file.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        model = ["-m", args.model] if args.model else []
        engine = [x for pair in given for x in ("--engine-arg", pair)]
        ours = [
            sys.executable, "-m", "shiftbench", "gen", "sample", "-b", "vllm", *model,
            "-t", TRANSFORM, "-s", str(SEED), "--temperature", "0", "--limit", str(args.rows),
            "--max-new-tokens", str(args.max_new_tokens), "--num-ctx", str(args.num_ctx),
            *engine, "--max-failure-rate", "1", "--cache-dir", f"{OUT}/cache",
            "-o", f"{OUT}/run", "-q",
        ]  # fmt: skip
        theirs = [sys.executable, str(HERE / "vllm_side.py"), str(file), OUT]
        # both sides log as the backend has vLLM log (it sets these unless set), and A
        # finds the model copy B loads instead of making one in its fresh cache
        quiet = {"VLLM_LOGGING_LEVEL": "ERROR", "VLLM_CONFIGURE_LOGGING": "1"}
        env_a = {**quiet, "SHIFTBENCH_MODELS_DIR": str(models_dir())}
        env_a.update(shiftbench_env(args.shiftbench_path) or {})
        print(
            f"{len(spec['requests'])} unique texts of the sample's first {args.rows} rows, "
            f"cap {args.max_new_tokens} tokens (every call's budget), greedy; "
            f"model {spec['checkpoint']}; vllm.LLM arguments {json.dumps(spec['engine'])}",
            flush=True,
        )
        report = paired(
            "A = shiftbench gen -b vllm, B = one bare vllm.LLM.generate call (whole process)",
            ours, theirs, args.pairs, same_texts, env_a=env_a, env_b=quiet, warmup=args.warmup,
        )  # fmt: skip
    for line in throughput_lines(report, GOAL):
        print(line, flush=True)
    if not args.no_in_process:
        in_process(args, engine_args, spec)


def in_process(args: argparse.Namespace, engine_args: dict[str, Any], spec: dict) -> None:
    """The same comparison on one engine loaded in this process (no interpreter start,
    import or model load on either side: what is left is what gen adds to the engine's
    work), then the re-run cost and the stream gain."""
    from vllm import SamplingParams

    from shiftbench.gen.api import generate
    from shiftbench.llm.backends import Sampling
    from shiftbench.llm.backends.vllm_backend import VLLMBackend

    backend = VLLMBackend(args.model, num_ctx=args.num_ctx, engine_args=engine_args)
    backend.load()
    prompts = [{"prompt_token_ids": r["prompt_token_ids"]} for r in spec["requests"]]
    params = [SamplingParams(**r["params"]) for r in spec["requests"]]

    def gen(out: Path) -> None:  # gen's library call on the loaded engine, a fresh cache
        generate("sample", gen_settings(args, engine_args, out / "run", out / "cache"),
                 engines=Every(backend))  # fmt: skip

    def runner(argv: Any, out: Path, env: Any) -> Run:
        start = time.perf_counter()
        if argv[0] == "gen":
            gen(out)
        else:
            # the backend's feeding thread waits on its inbox while gen is not running
            made = backend._llm.generate(prompts, params, use_tqdm=False)
            pairs = zip(spec["requests"], made, strict=True)
            texts = {r["text"]: o.outputs[0].text for r, o in pairs}
            (out / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
        return Run("", time.perf_counter() - start, "", out)

    report = paired(
        "in process, one engine loaded in this process (not whole process): A = gen's "
        "library generate(), B = LLM.generate on the same requests",
        ["gen"], ["bare"], args.pairs, same_texts, runner=runner, warmup=args.warmup,
    )  # fmt: skip
    for line in report.lines(goal=1 / GOAL):
        print(line, flush=True)

    sample = resources.files("shiftbench").joinpath("sample", "data", "test.jsonl")
    rows = [json.loads(line) for line in sample.read_text().splitlines() if line][: args.rows]
    texts = list(dict.fromkeys(r[f] for r in rows for f in FIELDS))
    sampling = Sampling(max_new_tokens=args.max_new_tokens)  # gen's default sampling
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        start = time.perf_counter()
        gen(folder)
        first = time.perf_counter() - start
        start = time.perf_counter()  # the same run again into a new folder: all cached
        generate("sample", gen_settings(args, engine_args, folder / "again", folder / "cache"),
                 engines=Every(backend))  # fmt: skip
        rerun = time.perf_counter() - start
        one_by_one, stream, equal = stream_gain(
            backend, texts, args.stream_transforms.split(","), sampling, folder
        )
    # The engine's processes end here: left to the interpreter's exit, multiprocessing
    # waited for them before vLLM's own shutdown ran, and the bench never ended.
    backend._llm.llm_engine.engine_core.shutdown()
    print("in process, one engine loaded in this process (not whole process):")
    print(f"  gen's generate(), empty cache   {first:7.2f}s")
    share = rerun / first
    print(f"  the same again, all cached      {rerun:7.2f}s   {share:.1%} (goal < 2%)")
    names = args.stream_transforms
    print(f"  one variant at a time           {one_by_one:7.2f}s   ({names}, seeds 1,2, "
          "temperature 0.7)")  # fmt: skip
    gain = one_by_one / stream
    print(f"  all variants, one stream        {stream:7.2f}s   stream gain {gain:.2f} (goal > 1)")
    print(f"  outputs equal in both orders: {'yes' if equal else 'NO'}", flush=True)


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
