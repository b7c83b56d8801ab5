"""The vllm backend on the real vLLM engine (the CPU build), serving SmolLM2-135M-Instruct.

vLLM pins its own torch and transformers, so it does not install beside the project's other
test dependencies: `tests/vllm_env.sh` builds an environment for it and runs this file there
with SHIFTBENCH_REQUIRE_VLLM=1. Elsewhere these tests are skipped; with that variable set,
a missing vllm fails them instead.
"""

from __future__ import annotations

import json
import os

import pytest
from support.environment import ENCODER

from shiftbench.core.text.transforms import TRANSFORMS
from shiftbench.errors import InputError
from shiftbench.llm.backends import Request, Sampling
from shiftbench.llm.backends.vllm_backend import VLLMBackend
from shiftbench.llm.backends.weights import DEFAULT_MODEL, locate_model

# the real vLLM engine (only in tests/vllm_env.sh's environment)

if os.environ.get("SHIFTBENCH_REQUIRE_VLLM") == "1":
    import vllm  # noqa: F401  (an ImportError here fails the run, as it should)
else:
    pytest.importorskip("vllm", reason="vllm is not installed (see tests/vllm_env.sh)")

# Eager mode skips vLLM's torch.compile warm-up (over a minute here on two cores). A tenth
# of the host's memory (2.4 GB here) holds every test's KV cache many times over; the
# backend's default, half of it, took 12 GB from the suite running beside these tests, and
# the engine's start took 57.5 s instead of 48.3 s.
ENGINE_ARGS = {"enforce_eager": True, "gpu_memory_utilization": 0.1}
# A small context keeps vLLM's per-step token budget small, so a test can outgrow it cheaply.
NUM_CTX = 2048
CLI_ENGINE_ARGS = ["--engine-arg", "enforce_eager=true", "--engine-arg",
                   "gpu_memory_utilization=0.1", "--num-ctx", str(NUM_CTX)]  # fmt: skip
# gen on vLLM with a small cap, one attempt and no failure gate
QUICK_CALLS = ["--max-new-tokens", "32", "--max-attempts", "1", "--max-failure-rate", "1",
               "-b", "vllm", *CLI_ENGINE_ARGS]  # fmt: skip
CONFIGS = ["original"] + [f"{t}-s{s}" for t in TRANSFORMS for s in (1, 2)]
TEXTS = [
    "A man is playing a guitar on the street.",
    "The committee postponed its decision until next spring.",
    "Two dogs are running through a field of tall grass.",
    "Prices rose sharply after the storm damaged the harbour.",
    "She forgot her umbrella at the station.",
    "The recipe calls for three eggs and a cup of flour.",
]


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory):
    """One cache folder for the module, so every test (the CLI ones included) shares one
    vLLM engine (the dequantised GGUF copy is in conftest's session-wide models folder)."""
    return tmp_path_factory.mktemp("vllm-cache")


@pytest.fixture(scope="module")
def backend(model_cache):
    engine = VLLMBackend(cache_dir=model_cache, num_ctx=NUM_CTX, engine_args=ENGINE_ARGS)
    engine.load()
    return engine


def requests_for(texts, seed=7, budget=16):
    # 16 tokens tell seeds apart as surely as 48 did, in a third of the decoding steps
    return [
        Request(f"Rewrite this sentence in other words:\n\n{t}", seed + i, budget)
        for i, t in enumerate(texts)
    ]


def data_files(out):
    return {p.relative_to(out): p.read_bytes() for p in out.glob("*/test.jsonl")}


def test_describe_names_the_gguf_weights_and_vllm(backend):
    import vllm

    described = backend.describe()
    assert described["model"]["id"] == DEFAULT_MODEL
    assert (described["model"]["runtime"], described["model"]["dtype"]) == ("vllm", "float32")
    assert described["model"]["digest"] == locate_model(DEFAULT_MODEL).digest()
    assert described["backend"] == {
        "name": "vllm",
        "vllm": vllm.__version__,
        "max_model_len": NUM_CTX,
        "engine_args": ENGINE_ARGS,
    }


def test_results_come_back_in_request_order_and_are_reported_once(backend):
    requests = requests_for(TEXTS)
    seen = []
    results = backend.generate(requests, Sampling(), lambda i, g: seen.append((i, g)))
    assert sorted(i for i, _ in seen) == list(range(len(TEXTS)))
    assert [g for _, g in sorted(seen, key=lambda x: x[0])] == results
    for request, result in zip(requests, results, strict=True):
        assert result.text and result.finish_reason in ("stop", "length")
        assert 0 < result.output_tokens <= request.max_new_tokens
        assert result.prompt_tokens > 10 and result.latency > 0


def test_output_depends_on_the_seed_not_on_the_batch(backend):
    """In float32 (the CPU default), not in bfloat16: see the module's docstring."""
    requests = requests_for(TEXTS)
    together = [g.text for g in backend.generate(requests, Sampling())]
    alone = [backend.generate([r], Sampling())[0].text for r in requests]
    reversed_order = [g.text for g in backend.generate(requests[::-1], Sampling())][::-1]
    assert together == alone == reversed_order
    reseeded = [g.text for g in backend.generate(requests_for(TEXTS, seed=1000), Sampling())]
    assert reseeded != together


def test_a_chunk_larger_than_one_engine_step(backend):
    """Prompts that together outgrow one engine step (NUM_CTX tokens) are scheduled over
    several steps; seeded sampling has to survive that (see CPU_DEFAULTS). Fourteen prompts of
    about 220 tokens outgrow it by half."""
    long_text = " ".join(TEXTS * 3)
    requests = [
        Request(f"Rewrite this text in other words:\n\n{i}. {long_text}", i, 4) for i in range(14)
    ]
    results = backend.generate(requests, Sampling())
    assert sum(r.prompt_tokens for r in results) > 1.25 * NUM_CTX
    assert all(1 <= r.output_tokens <= 4 for r in results)
    again = backend.generate(requests[::-1], Sampling())[::-1]
    assert [r.text for r in again] == [r.text for r in results]


def test_each_request_stops_at_its_own_budget(backend):
    requests = [
        Request("Write a long story about a lighthouse keeper.", 3, 5),
        Request("Write a long story about a lighthouse keeper.", 3, 40),
    ]
    short, longer = backend.generate(requests, Sampling())
    assert (short.finish_reason, short.output_tokens) == ("length", 5)
    assert longer.output_tokens > 5
    capped = backend.generate(requests[1:], Sampling(max_new_tokens=7))[0]
    assert (capped.finish_reason, capped.output_tokens) == ("length", 7)


def test_greedy_decoding_ignores_the_seed(backend):
    greedy = Sampling(temperature=0.0)
    a = backend.generate(requests_for(TEXTS[:2], seed=1), greedy)
    b = backend.generate(requests_for(TEXTS[:2], seed=99), greedy)
    assert [g.text for g in a] == [g.text for g in b]


def test_requests_from_several_threads_share_the_engine(backend):
    """gen's jobs call generate from their own threads at once (one stream into the
    engine): each caller gets its own results, the same as when it calls alone."""
    from concurrent.futures import ThreadPoolExecutor

    batches = [requests_for(TEXTS, seed=s) for s in (11, 22, 33)]
    alone = [[g.text for g in backend.generate(b, Sampling())] for b in batches]
    with ThreadPoolExecutor(3) as pool:
        together = list(
            pool.map(lambda b: [g.text for g in backend.generate(b, Sampling())], batches)
        )
    assert together == alone
    assert len({tuple(texts) for texts in alone}) == 3


def test_abort_drops_the_queued_requests_and_the_engine_serves_on(backend):
    import threading

    from shiftbench.llm.backends.base import Stopped

    first_in = threading.Event()
    failures = []
    many = [Request(f"Write a long story about the number {i}.", i, 4 + 24 * i) for i in range(24)]

    def run():
        try:
            backend.generate(many, Sampling(), lambda i, g: first_in.set())
        except Stopped as exc:
            failures.append(str(exc))

    caller = threading.Thread(target=run)
    caller.start()
    assert first_in.wait(timeout=600)
    backend.abort()
    caller.join(timeout=600)
    assert failures == ["stopped: the vllm engine dropped the queued requests"]
    assert not backend._llm.llm_engine.has_unfinished_requests()
    (after,) = backend.generate(requests_for(TEXTS[:1]), Sampling())
    assert after.text


def test_a_prompt_longer_than_the_context_is_refused(backend):
    with pytest.raises(InputError, match=r"^a prompt of \d+ tokens does not fit the context of "):
        backend.generate([Request("word " * (NUM_CTX + 10), 1, 8)], Sampling())


def test_all_transforms_two_seeds_on_real_data(shared_data, invoke, tmp_path, model_cache):
    args = [
        "gen",
        "STSBenchmark",
        "--data-dir",
        shared_data / "STSBenchmark",
        "--limit",
        "1",
        # as the embedded and llama.cpp runs of tests/real/test_real_servers.py: one row and
        # QUICK_CALLS (retries with doubled budgets took most of the time)
        *QUICK_CALLS,
        "--cache-dir",
        model_cache,
        "-q",
    ]
    first = invoke(*args, "-t", "all", "--seeds", "1,2", "-o", tmp_path / "a")
    assert first.exit_code == 0, first.output
    meta = json.loads((tmp_path / "a" / "shiftbench.json").read_text(encoding="utf-8"))
    assert list(meta["configs"]) == CONFIGS
    assert meta["configs"]["paraphrase-s1"]["backend"]["name"] == "vllm"
    import datasets

    statuses = {"ok", "empty", "identical", "reasoning-leak", "prefix-leak", "runaway", "truncated"}
    for name in CONFIGS[1:]:
        rows = datasets.load_dataset(str(tmp_path / "a"), name, split="test")
        assert rows.num_rows == 1
        assert set(rows["status"]) <= statuses
    # Seed 2 of the two-call transforms again, generated afresh (no cache) and in other
    # batches: byte-identical data files.
    subset = ["-t", "backtranslation,summarised-expansion", "-s", "2"]
    again = invoke(*args, *subset, "--no-cache", "-o", tmp_path / "b")
    assert again.exit_code == 0, again.output
    same = data_files(tmp_path / "b")
    assert len(same) == 3
    assert same == {k: v for k, v in data_files(tmp_path / "a").items() if k in same}


def test_a_run_that_dies_midway_resumes_to_the_same_output(
    shared_data, invoke, tmp_path, model_cache, monkeypatch
):
    from shiftbench.llm.cache import GenerationCache

    args = [
        "gen",
        "STSBenchmark",
        "--data-dir",
        shared_data / "STSBenchmark",
        "--limit",
        "6",
        "-t",
        "paraphrase",
        "-s",
        "5",
        # what is tested is the resume, not the rewrites' quality
        *QUICK_CALLS,
        "-q",
    ]
    whole = invoke(*args, "--no-cache", "--cache-dir", model_cache, "-o", tmp_path / "whole")
    assert whole.exit_code == 0, whole.output

    rows_cache = tmp_path / "rows"  # the dequantised weights stay in conftest's models folder
    put_many = GenerationCache.put_many
    kept = []

    def dies_after_four(self, items):
        if len(kept) == 4:
            raise KeyboardInterrupt  # stands in for the process being stopped
        kept.append(items)
        return put_many(self, items)

    monkeypatch.setattr(GenerationCache, "put_many", dies_after_four)
    stopped = invoke(*args, "--cache-dir", rows_cache, "-o", tmp_path / "resumed")
    monkeypatch.setattr(GenerationCache, "put_many", put_many)
    assert stopped.exit_code == 130, stopped.output  # Ctrl-C's exit status
    assert "Interrupted; finished rows are cached." in stopped.output
    assert len(kept) == 4
    assert not (tmp_path / "resumed").exists()

    calls = []
    generate = VLLMBackend.generate

    def counting(self, requests, sampling, on_done=None):
        calls.append(len(requests))
        return generate(self, requests, sampling, on_done)

    monkeypatch.setattr(VLLMBackend, "generate", counting)
    resumed = invoke(*args, "--cache-dir", rows_cache, "-o", tmp_path / "resumed")
    assert resumed.exit_code == 0, resumed.output
    assert data_files(tmp_path / "resumed") == data_files(tmp_path / "whole")
    # Only the texts not kept before the stop are sent again.
    import datasets

    original = datasets.load_dataset(str(tmp_path / "whole"), "original", split="test")
    texts = set(original["sentence1"]) | set(original["sentence2"])
    assert calls[0] == len(texts) - 4


def test_paraplue_and_expected_judge_agree_with_the_embedded_model(backend):
    """vLLM's top log-probabilities give the ParaPLUIE score the embedded backend computes
    from the same weights (both run the dequantised GGUF in float32)."""
    from shiftbench.llm.backends.embedded import EmbeddedBackend
    from shiftbench.llm.cache import GenerationCache
    from shiftbench.validate.judge import Item, Judge
    from shiftbench.validate.paraplue import Paraplue

    items = [
        Item("A man is playing a guitar.", "A man plays the guitar."),
        Item("A man is playing a guitar.", "The stock market fell sharply today."),
    ]
    served = Paraplue(backend).score(items, GenerationCache(None))
    exact = Paraplue(EmbeddedBackend()).score(items, GenerationCache(None))
    for (v, _, _), (e, _, _) in zip(served, exact, strict=True):
        assert v is not None and e is not None
        assert v == pytest.approx(e, abs=0.05)
    rated = Judge(backend, "quality", scoring="expected").score(items, GenerationCache(None))
    assert all(v is not None and 1.0 <= v <= 5.0 for v, _, _ in rated)


def scores_of(out):
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (record,) = doc["models"][0]["results"]
    return doc["models"][0]["model"], record["scores"]


def test_one_encoder_in_process_and_served_by_vllm(shared_data, invoke, tmp_path):
    """all-MiniLM-L6-v2 on BIOSSES in process and served by vLLM's OpenAI-compatible server
    as an embeddings endpoint: the same scores to 1e-3. (The same encoder through
    mteb.get_model is the main suite's test_encoders.py.) The server runs eager, as the
    engine does in the tests above: on a CPU host vLLM otherwise compiles the model with
    torch inductor before it serves, minutes of both cores for 200 short texts."""
    import socket
    import subprocess
    import sys

    import httpx
    from support.waiting import wait_for

    from shiftbench.core.models.encoders import resolve_encoder

    args = ["evaluate", "BIOSSES", "--data-dir", str(shared_data / "BIOSSES"), "--no-plots",
            "--resamples", "0", "-q"]  # fmt: skip
    done = invoke(*args, "-m", ENCODER, "-o", tmp_path / "in-process")
    assert done.exit_code == 0, done.output
    _, ours = scores_of(tmp_path / "in-process")

    path, _ = resolve_encoder(ENCODER)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "vllm-server.log"
    with open(log, "w") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", path,
             "--served-model-name", "minilm", "--runner", "pooling", "--dtype", "float32",
             "--gpu-memory-utilization", "0.1", "--enforce-eager",
             "--host", "127.0.0.1", "--port", str(port)],
            stdout=sink, stderr=subprocess.STDOUT,
            env={**os.environ, "VLLM_LOGGING_LEVEL": "WARNING"},
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"

    def serving() -> bool:
        if server.poll() is not None:
            raise AssertionError(f"vLLM's server exited: {log.read_text()[-2000:]}")
        try:
            return httpx.get(f"{url}/models", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(serving, 600, "vLLM's server to serve /v1/models")
        done = invoke(*args, "-m", f"openai:minilm@{url}", "-o", tmp_path / "served")
        assert done.exit_code == 0, done.output
    finally:
        server.terminate()
        server.wait(timeout=60)
    described, served = scores_of(tmp_path / "served")
    assert described["dimension"] == 384
    assert set(served) == set(ours)
    for metric, value in ours.items():
        assert served[metric] == pytest.approx(value, abs=1e-3), metric
