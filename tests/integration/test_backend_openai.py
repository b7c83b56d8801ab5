"""The openai backend against a local OpenAI-compatible server, faults included."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path

import pytest
from support.files import read_rows
from support.openai_server import OpenAIStub

from shiftbench.llm.backends.openai import OpenAIBackend

# every test talks to the OpenAI-compatible stub server on 127.0.0.1


@pytest.fixture
def openai_stub(monkeypatch):
    monkeypatch.setattr(OpenAIBackend, "BACKOFF", 0.0)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIStub() as server:
        yield server


def gen_args(openai_stub, out, *extra):
    return (
        "gen",
        "sample",
        "--limit",
        "3",
        "-b",
        "openai",
        "--base-url",
        openai_stub.url,
        "-m",
        "stub-model",
        "-q",
        "-o",
        out,
        *extra,
    )


def test_faults_are_retried_and_every_row_completes(openai_stub, invoke, tmp_path):
    openai_stub.faults = ["500", "reset", "malformed", "429"]
    out = tmp_path / "run"
    result = invoke(*gen_args(openai_stub, out, "--concurrency", "1"))
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert [r["sentence1"] for r in rows] == [f"ECHO {r['original_sentence1']}" for r in rows]
    assert {r["status"] for r in rows} == {"ok"}
    assert len(openai_stub.requests) == 6 + 4
    for body in openai_stub.requests:
        assert 0 <= body["seed"] < 2**31
        assert (body["temperature"], body["top_p"]) == (0.7, 0.95)
        text = body["messages"][0]["content"].rsplit("\n\n", 1)[-1]
        assert body["max_tokens"] == min(512, 48 + max(4 * len(text.split()), len(text) // 2))


def test_hteb_sends_top_k_and_flat_budgets(openai_stub, invoke, tmp_path):
    """Under --protocol hteb every request carries HTEB's top_k 64 (an OpenAI-compatible
    server's extension, which vLLM and llama.cpp read) and its flat budget of 512 tokens."""
    out = tmp_path / "run"
    args = ["--protocol", "hteb", "-t", "paraphrase", "--seed", "1"]
    assert invoke(*gen_args(openai_stub, out, *args)).exit_code == 0
    assert len(openai_stub.requests) == 6
    for body in openai_stub.requests:
        assert (body["temperature"], body["top_p"], body["top_k"]) == (1.0, 0.95, 64)
        assert body["max_tokens"] == 512
    shiftbench = tmp_path / "shiftbench"
    assert invoke(*gen_args(openai_stub, shiftbench, "--no-cache")).exit_code == 0
    assert all("top_k" not in body for body in openai_stub.requests[6:])


def test_same_seed_same_requests(openai_stub, invoke, tmp_path):
    for name in ("a", "b"):
        assert invoke(*gen_args(openai_stub, tmp_path / name, "--no-cache")).exit_code == 0
    first, second = openai_stub.requests[:6], openai_stub.requests[6:]
    key = lambda b: b["messages"][0]["content"]  # noqa: E731 - a sort key
    assert sorted(first, key=key) == sorted(second, key=key)
    assert (tmp_path / "a" / "paraphrase-s1337" / "test.jsonl").read_bytes() == (
        tmp_path / "b" / "paraphrase-s1337" / "test.jsonl"
    ).read_bytes()


def test_persistent_failure_exits_1_and_keeps_finished_rows(
    openai_stub, scripted, invoke, tmp_path
):
    out = tmp_path / "run"
    openai_stub.faults = [""] * 2 + ["500"] * 100  # two good answers, then nothing but errors
    result = invoke(*gen_args(openai_stub, out, "--concurrency", "1"))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr == (
        f"Error: {openai_stub.url} kept failing (HTTP 500: injected 500) after 5 tries; "
        "finished rows are cached\n"
    )
    assert not out.exists()
    openai_stub.faults = []
    before = len(openai_stub.requests)
    result = invoke(*gen_args(openai_stub, out))
    assert result.exit_code == 0, result.output
    assert len(openai_stub.requests) - before == 6 - 2  # the two finished rows came from the cache


def test_unknown_model_and_unreachable_server(openai_stub, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "gen", "sample", "-b", "openai", "--base-url", openai_stub.url, "-m", "stub-modl", "-o", out
    )
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: the server at {openai_stub.url} does not serve 'stub-modl'; it serves stub-model; "
        "did you mean stub-model?\n",
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    result = invoke("gen", "sample", "-b", "openai", "--base-url", closed, "-m", "x", "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: cannot reach an OpenAI-compatible server at {closed} (set --base-url)\n",
    )
    result = invoke("gen", "sample", "-b", "openai", "--base-url", openai_stub.url, "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: the openai backend needs --model: the model name the server serves\n",
    )
    assert not out.exists()


def test_api_key_is_sent_and_never_written(openai_stub, invoke, tmp_path, monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    out = tmp_path / "run"
    result = invoke(*gen_args(openai_stub, out))
    assert result.exit_code == 0, result.output
    assert {h.get("Authorization") for h in openai_stub.headers} == {f"Bearer {secret}"}
    assert secret not in result.output
    for path in out.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(encoding="utf-8")
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["configs"]["paraphrase-s1337"]["backend"]["base_url"] == openai_stub.url


def sent_budgets(openai_stub, text):
    """(max_tokens, seed) of every request the server got for `text`, in order."""
    return [
        (b["max_tokens"], b["seed"])
        for b in openai_stub.requests
        if b["messages"][0]["content"].rsplit("\n\n", 1)[-1].strip() == text
    ]


def test_a_reply_cut_at_max_tokens_is_asked_again_with_more(openai_stub, invoke, tmp_path):
    texts = [r["sentence1"] for r in _sample_rows()]
    long, endless = texts[0], texts[1]
    openai_stub.replies = {long: " ".join(["word"] * 300), endless: " ".join(["more"] * 5000)}
    out = tmp_path / "run"
    result = invoke(*gen_args(openai_stub, out, "-t", "expansion", "--temperature", "0",
                              "--max-failure-rate", "1"))  # fmt: skip
    assert result.exit_code == 0, result.output
    first = 160 + 8 * len(long.split())
    assert [n for n, _ in sent_budgets(openai_stub, long)] == [first, 2 * first]
    assert (
        len({seed for _, seed in sent_budgets(openai_stub, long)}) == 1
    )  # the same answer, longer
    rows = read_rows(out / "expansion-s1337" / "test.jsonl")
    assert (rows[0]["status"], rows[0]["finish_reason"]) == ("ok", "stop")
    assert rows[0]["sentence1"] == openai_stub.replies[long]
    # still cut at the cap (1024 for expansion): kept, marked truncated
    second = 160 + 8 * len(endless.split())
    assert [n for n, _ in sent_budgets(openai_stub, endless)] == [
        second,
        2 * second,
        4 * second,
        1024,
    ]
    assert (rows[1]["status"], rows[1]["finish_reason"]) == ("truncated", "length")
    assert len(rows[1]["sentence1"].split()) == 1024


def test_max_new_tokens_above_the_transform_cap_reaches_the_server(openai_stub, invoke, tmp_path):
    text = _sample_rows()[0]["sentence1"]
    openai_stub.replies = {text: " ".join(["more"] * 5000)}
    out = tmp_path / "run"
    args = ("--limit", "1", "--temperature", "0", "--max-new-tokens", "3000")
    result = invoke(*gen_args(openai_stub, out, *args, "--max-failure-rate", "1"))
    assert result.exit_code == 0, result.output
    assert [n for n, _ in sent_budgets(openai_stub, text)] == [88, 176, 352, 704, 1408, 2816, 3000]
    (row,) = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert (row["status"], len(row["sentence1"].split())) == ("truncated", 3000)


def _sample_rows():
    return read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")


def test_credentials_in_the_base_url_are_never_recorded_or_printed(openai_stub, invoke, tmp_path):
    """A password in --base-url reaches the server (as HTTP basic auth) but is shown as
    *** in shiftbench.json, which publish uploads, and in every message."""
    import base64

    with_password = openai_stub.url.replace("http://", "http://me:SECRET-PASSWORD@")
    shown = openai_stub.url.replace("http://", "http://***@")
    out = tmp_path / "run"
    args = ["gen", "sample", "--limit", "2", "-b", "openai", "-m", "stub-model", "-o", out]
    result = invoke(*args, "--base-url", with_password)
    assert result.exit_code == 0, result.output
    assert "SECRET-PASSWORD" not in result.output
    for path in out.rglob("*"):
        if path.is_file():
            assert b"SECRET-PASSWORD" not in path.read_bytes(), path
    config = json.loads((out / "shiftbench.json").read_text())["configs"]["paraphrase-s1337"]
    assert config["backend"]["base_url"] == shown
    basic = base64.b64encode(b"me:SECRET-PASSWORD").decode()
    sent = {k.lower(): v for k, v in openai_stub.headers[-1].items()}
    assert sent["authorization"] == f"Basic {basic}"

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{sock.getsockname()[1]}/v1"
    result = invoke(*args, "--base-url", f"http://me:SECRET-PASSWORD@{closed}")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: cannot reach an OpenAI-compatible server at http://***@{closed} "
        "(set --base-url)\n",
    )


def test_a_server_that_never_answers_ends_the_run_with_one_line(openai_stub, invoke, tmp_path):
    """A server that accepts requests and answers none in --timeout seconds: each request
    is tried --tries times, then the run stops with one line naming the server and what it
    waited for, exit 1; the rows finished before it are cached and not asked for again."""
    assert invoke(*gen_args(openai_stub, tmp_path / "one", "--limit", "1")).exit_code == 0
    first = len(openai_stub.requests)
    openai_stub.delay = 3.0  # longer than the timeout: the server never answers in time
    out = tmp_path / "three"
    result = invoke(*gen_args(openai_stub, out, "--limit", "3", "--timeout", "0.5",
                              "--concurrency", "1"))  # fmt: skip
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"Error: {openai_stub.url} kept failing (no answer within 0.5 s) after 5 tries; finished "
        "rows are cached\n"
    )
    done = {b["messages"][0]["content"] for b in openai_stub.requests[:first]}
    asked = Counter(b["messages"][0]["content"] for b in openai_stub.requests[first:])
    assert set(asked.values()) == {5} and not done & set(asked)  # new texts, five tries each
    openai_stub.delay = 0.0
    before = len(openai_stub.requests)
    assert invoke(*gen_args(openai_stub, out, "--limit", "3")).exit_code == 0
    assert len(openai_stub.requests) - before == 6 - first  # only the texts not yet finished
