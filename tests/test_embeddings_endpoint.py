"""Encoders behind an OpenAI-compatible embeddings endpoint (`-m openai:NAME@URL`).

The real server is llama.cpp's (llama-cpp-python's, started here on 127.0.0.1), serving
SmolLM2-135M's GGUF file with mean pooling declared in its metadata (a copy made with
gguf's own metadata writer), so that it answers one vector per text. The same file run in
this process by llama.cpp gives the reference embeddings.
"""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest
from conftest import read_rows
from scipy.stats import spearmanr
from support.llama_server import llama_cpp_server, llama_threads
from test_cli_errors import write_folder

from shiftbench.core.models.remote_encoders import EmbeddingsEndpoint
from shiftbench.errors import InputError, RuntimeFault


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
@pytest.mark.slow
@pytest.mark.server
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


def scripted_endpoint(replies):
    """An EmbeddingsEndpoint whose HTTP calls `replies` answers in turn: an int is a
    status code, a list the embedding sizes of a 200 answer."""
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        calls.append(body)
        reply = replies.pop(0)
        if isinstance(reply, int):
            return httpx.Response(reply, json={"error": {"message": "busy"}})
        data = [{"index": i, "embedding": [0.5] * size} for i, size in enumerate(reply)]
        return httpx.Response(200, json={"data": data})

    endpoint = EmbeddingsEndpoint("m", "http://endpoint.test/v1", extra={"dimensions": 4})
    endpoint._http = httpx.Client(
        base_url="http://endpoint.test/v1", transport=httpx.MockTransport(handler)
    )
    endpoint.BACKOFF = 0.0
    return endpoint, calls


def test_batches_retries_and_a_changing_dimension():
    endpoint, calls = scripted_endpoint([[4, 4], 503, 429, [4]])
    vectors = endpoint.encode(["a", "b", "c"], prompt="q: ", batch_size=2)
    assert vectors.shape == (3, 4) and vectors.dtype == np.float32
    assert [c["input"] for c in calls] == [["q: a", "q: b"], ["q: c"], ["q: c"], ["q: c"]]
    assert {c["dimensions"] for c in calls} == {4}  # --encode-kwarg fields travel along

    endpoint, _ = scripted_endpoint([[4], [3]])
    endpoint.encode(["a"])
    with pytest.raises(RuntimeFault, match="changed its embedding dimension from 4 to 3"):
        endpoint.encode(["b"])

    endpoint, _ = scripted_endpoint([500] * 5)
    with pytest.raises(RuntimeFault, match=r"kept failing \(HTTP 500\) after 5 tries"):
        endpoint.encode(["a"])

    endpoint, _ = scripted_endpoint([400])
    with pytest.raises(RuntimeFault, match="answered HTTP 400: busy"):
        endpoint.encode(["a"])


def test_endpoint_specs():
    from shiftbench.core.models.remote_encoders import parse_endpoint

    assert parse_endpoint("openai:m@http://h:1/v1/") == ("m", "http://h:1/v1")
    with pytest.raises(InputError, match="must start with http"):
        parse_endpoint("openai:m@h:1")


def test_an_endpoint_that_never_answers_fails_after_its_deadline(monkeypatch):
    """A server that takes the connection and says nothing: each try waits
    SHIFTBENCH_HTTP_TIMEOUT seconds, then the endpoint gives up in one message that says
    what it waited for."""
    import socket

    monkeypatch.setenv("SHIFTBENCH_HTTP_TIMEOUT", "0.5")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the system accepts connections; nobody reads or answers them
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        endpoint = EmbeddingsEndpoint("m", url)
        endpoint.BACKOFF = 0.0
        with pytest.raises(RuntimeFault) as failed:
            endpoint.encode(["a"])
    assert str(failed.value) == f"{url} kept failing (no answer within 0.5 s) after 5 tries"
