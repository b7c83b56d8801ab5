"""Encoders behind an OpenAI-compatible embeddings endpoint (`-m openai:NAME@URL`).

The real server is llama.cpp's (llama-cpp-python's, started here on 127.0.0.1), serving
SmolLM2-135M's GGUF file with mean pooling declared in its metadata (a copy made with
gguf's own metadata writer), so that it answers one vector per text. The same file run in
this process by llama.cpp gives the reference embeddings.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import spearmanr
from support.files import read_rows, write_folder
from support.llama_server import llama_cpp_server, llama_threads


def pooled_copy(target):
    """SmolLM2's GGUF with `llama.pooling_type = mean` added."""
    import gguf
    from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

    from shiftbench.llm.backends.weights import DEFAULT_MODEL, locate_model

    location = locate_model(DEFAULT_MODEL)
    reader = gguf.GGUFReader(f"{location.path}/{location.gguf_file}", "r")
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()
    writer = gguf.GGUFWriter(str(target), arch=arch, endianess=reader.endianess)
    key = gguf.Keys.LLM.POOLING_TYPE.format(arch=arch)
    copy_with_new_metadata(reader, writer, {key: MetadataDetails(gguf.GGUFValueType.UINT32, 1)}, [])
    return target


@pytest.fixture(scope="module")
def embedding_server(tmp_path_factory):
    model = pooled_copy(tmp_path_factory.mktemp("gguf") / "smollm2-mean.gguf")
    options = ("--n_ctx", "512", "--embedding", "true")
    with llama_cpp_server(str(model), "smollm2-embed", *options) as url:
        yield url, model


@pytest.mark.heavy
def test_an_endpoint_scores_as_the_model_run_in_process(
    embedding_server, shared_data, invoke, tmp_path, monkeypatch
):
    from llama_cpp import Llama

    url, model = embedding_server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written-anywhere")
    out = tmp_path / "results"
    spec = f"openai:smollm2-embed@{url}"
    # BIOSSES' first 40 pairs as a local STS folder: each text is embedded twice, one per
    # call, and 80 texts rank the two ways of embedding as surely as the whole 200 would
    rows = read_rows(shared_data / "BIOSSES" / "data" / "test.jsonl")[:40]
    folder = write_folder(tmp_path / "biosses-40", rows)
    result = invoke(
        "evaluate", folder, "--task-type", "STS", "-m", spec, "-o", out,
        "--batch-size", "1", "--resamples", "0", "--no-plots",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    described = doc["models"][0]["model"]
    assert described["id"] == spec and described["dimension"] == 576
    (record,) = doc["models"][0]["results"]

    # the reference: the same file in this process, one text per call as the server was
    # sent them (llama.cpp's numbers move a little with what shares a batch); cosine and
    # Spearman by numpy and scipy
    threads = llama_threads()
    llama = Llama(
        str(model), embedding=True, n_ctx=512, n_threads=threads, n_threads_batch=threads,
        verbose=False,
    )  # fmt: skip
    a = np.asarray([llama.embed(r["sentence1"]) for r in rows], dtype=np.float64)
    b = np.asarray([llama.embed(r["sentence2"]) for r in rows], dtype=np.float64)
    cosine = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    expected = spearmanr(cosine, [r["score"] for r in rows])[0]
    assert record["scores"]["cosine_spearman"] == pytest.approx(expected, abs=1e-3)
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".md"):
            assert "sk-never-written-anywhere" not in path.read_text(encoding="utf-8")

    # bad input: a model the server does not serve, a server that is not there
    for bad, message in (
        (f"openai:nomic@{url}", f"the server at {url} does not serve 'nomic'; it serves "
                                "smollm2-embed"),
        ("openai:x@http://127.0.0.1:9/v1", "cannot reach an embeddings endpoint at "
                                           "http://127.0.0.1:9/v1 (the URL in openai:NAME@URL)"),
        # a password in the URL is never printed
        ("openai:x@http://me:pw-SECRET@127.0.0.1:9/v1", "cannot reach an embeddings endpoint "
         "at http://***@127.0.0.1:9/v1 (the URL in openai:NAME@URL)"),
        ("openai:@http://127.0.0.1:9/v1", "'openai:@http://127.0.0.1:9/v1' names no model: "
                                          "openai:NAME[@URL]"),
    ):  # fmt: skip
        refused = invoke("evaluate", "sample", "-m", bad, "-o", tmp_path / "no")
        assert (refused.exit_code, refused.stderr) == (2, f"Error: {message}\n")
        assert not (tmp_path / "no").exists()
