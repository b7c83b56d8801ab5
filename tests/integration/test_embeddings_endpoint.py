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

from shiftbench.core.models.remote_encoders import EmbeddingsEndpoint
from shiftbench.errors import InputError, RuntimeFault


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
    with pytest.raises(RuntimeFault, match=r"kept failing \(HTTP 500: busy\) after 5 tries"):
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
