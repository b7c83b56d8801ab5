"""The ollama backend, driven through the real ollama client against a local server."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import ollama
import pytest
from support.files import read_rows
from support.ollama_server import DIGEST

from shiftbench.llm.backends.ollama import OllamaBackend

# every test talks to the ollama stub server on 127.0.0.1


def gen(invoke, ollama_stub, out, *extra, model="stub"):
    return invoke(
        "gen",
        "sample",
        "--limit",
        "3",
        "-b",
        "ollama",
        "--base-url",
        ollama_stub.url,
        "-m",
        model,
        "-q",
        "-o",
        out,
        *extra,
    )


def test_stub_speaks_the_protocol_the_client_expects(ollama_stub):
    client = ollama.Client(host=ollama_stub.url)
    assert [m.model for m in client.list().models] == ["stub:latest", "thinker:latest"]
    assert client.show("stub").capabilities == ["completion"]
    messages = [{"role": "user", "content": "Do it.\n\nhello there"}]
    streamed = "".join(part.message.content for part in client.chat("stub", messages, stream=True))
    whole = client.chat("stub", messages, stream=False)
    assert streamed == whole.message.content == "ECHO hello there"
    assert (whole.done_reason, whole.eval_count) == ("stop", 3)
    with pytest.raises(ollama.ResponseError) as err:
        client.chat("missing", messages)
    assert err.value.status_code == 404


def test_hteb_sends_top_k_and_flat_budgets(ollama_stub, invoke, tmp_path):
    """Under --protocol hteb every request carries HTEB's top_k 64 and its flat budget of
    512 tokens, whatever the input's length, in Ollama's options."""
    out = tmp_path / "run"
    args = ["--protocol", "hteb", "-t", "paraphrase", "--seed", "1"]
    assert gen(invoke, ollama_stub, out, *args).exit_code == 0
    assert len(ollama_stub.chats) == 6
    for body in ollama_stub.chats:
        options = body["options"]
        assert (options["temperature"], options["top_p"], options["top_k"]) == (1.0, 0.95, 64)
        assert options["num_predict"] == 512


def test_rows_options_and_provenance(ollama_stub, invoke, tmp_path):
    out = tmp_path / "run"
    result = gen(invoke, ollama_stub, out)
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert [r["sentence1"] for r in rows] == [f"ECHO {r['original_sentence1']}" for r in rows]
    assert len(ollama_stub.chats) == 6
    for body in ollama_stub.chats:
        options = body["options"]
        assert options["num_ctx"] == 8192
        assert options["num_predict"] >= 48
        assert 0 <= options["seed"] < 2**31
        assert (options["temperature"], options["top_p"]) == (0.7, 0.95)
        assert body["stream"] is False and "think" not in body
    config = json.loads((out / "shiftbench.json").read_text())["configs"]["paraphrase-s1337"]
    assert config["model"] == {"id": "stub", "digest": DIGEST, "num_ctx": 8192}
    assert config["backend"]["server_version"] == "0.12.6"


def test_reasoning_models_are_told_not_to_think_and_leaks_are_removed(
    ollama_stub, invoke, tmp_path
):
    out = tmp_path / "run"
    assert gen(invoke, ollama_stub, out, model="thinker").exit_code == 0
    assert {body["think"] for body in ollama_stub.chats} == {False}
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert all(r["sentence1"].startswith("ECHO ") for r in rows)

    backend = OllamaBackend("thinker", base_url=ollama_stub.url)
    backend.load()
    backend._info["thinking"] = False  # a model that thinks although not asked to
    from shiftbench.llm.backends import Request, Sampling

    (leaky,) = backend.generate([Request("x\n\nthe answer", 1, 64)], Sampling())
    assert leaky.text == "ECHO the answer"


def test_token_budget_and_truncated_prompts_are_reported(ollama_stub, invoke, tmp_path):
    out = tmp_path / "run"
    result = gen(invoke, ollama_stub, out, "--max-new-tokens", "3", "--max-failure-rate", "1")
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert {(r["finish_reason"], r["status"]) for r in rows} == {("length", "truncated")}
    assert all(len(r["sentence1"].split()) == 3 for r in rows)

    folder = tmp_path / "long"
    (folder / "data").mkdir(parents=True)
    row = {"sentence1": " ".join(["word"] * 400), "sentence2": "short text", "score": 1.0}
    (folder / "data" / "test.jsonl").write_text(json.dumps(row) + "\n")
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        "  - split: test\n    path: data/test.jsonl\n---\n"
    )
    result = invoke(
        "gen",
        folder,
        "--task-type",
        "STS",
        "-b",
        "ollama",
        "--base-url",
        ollama_stub.url,
        "-m",
        "stub",
        "--num-ctx",
        "256",
        "--max-failure-rate",
        "1",
        "-q",
        "-o",
        tmp_path / "run2",
    )
    assert result.exit_code == 0, result.output
    (done,) = read_rows(tmp_path / "run2" / "paraphrase-s1337" / "test.jsonl")
    assert done["finish_reason"] == "length"


def test_faults_are_retried(ollama_stub, invoke, tmp_path):
    ollama_stub.faults = ["500", "reset", "malformed"]
    out = tmp_path / "run"
    result = gen(invoke, ollama_stub, out, "--concurrency", "1")
    assert result.exit_code == 0, result.output
    assert len(ollama_stub.chats) == 6 + 3
    assert {r["status"] for r in read_rows(out / "paraphrase-s1337" / "test.jsonl")} == {"ok"}


def test_unknown_model_and_unreachable_server(ollama_stub, invoke, tmp_path):
    out = tmp_path / "run"
    result = gen(invoke, ollama_stub, out, model="stubb")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: Ollama at {ollama_stub.url} has no model 'stubb' (pull it with 'ollama pull "
        "stubb'); did you mean stub?\n",
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    result = invoke("gen", "sample", "-b", "ollama", "--base-url", closed, "-m", "stub", "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: cannot reach Ollama at {closed} (start it with 'ollama serve', or set "
        "--base-url)\n",
    )
    assert not out.exists()


def test_paraplue_reads_the_servers_top_logprobs(ollama_stub):
    import math

    from shiftbench.llm.cache import GenerationCache
    from shiftbench.validate.judge import Item
    from shiftbench.validate.paraplue import Paraplue

    backend = OllamaBackend("stub", base_url=ollama_stub.url)
    backend.load()
    scorer = Paraplue(backend)
    (value, _, problem) = scorer.score(
        [Item("a cat sat", "a cat was sitting")], GenerationCache(None)
    )[0]
    yes = math.log(math.exp(-0.2) + math.exp(-3.1))  # "Yes" and " yes" both count
    assert (value, problem) == (round(yes - -1.8, 4), None)
    body = ollama_stub.chats[-1]
    assert (body["logprobs"], body["top_logprobs"]) == (True, 20)
    assert body["options"]["num_predict"] == 1 and body["options"]["temperature"] == 0.0
    assert "Text B:\na cat was sitting" in body["messages"][0]["content"]
    ollama_stub.top_logprobs = {"Yes": -0.01, "Maybe": -5.0}  # "No" is not among the alternatives
    scored = scorer.score([Item("x y z", "x y")], GenerationCache(None))
    assert scored == [(None, None, "answer not among the top log-probabilities")]


def test_done_reason_length_is_asked_again_with_a_larger_num_predict(ollama_stub, invoke, tmp_path):
    sample = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
    long, endless = sample[0]["sentence1"], sample[1]["sentence1"]
    ollama_stub.replies = {long: " ".join(["word"] * 300), endless: " ".join(["more"] * 5000)}
    out = tmp_path / "run"
    args = ("-t", "expansion", "--temperature", "0", "--max-failure-rate", "1")
    assert gen(invoke, ollama_stub, out, *args).exit_code == 0

    def asked(text):
        return [
            c["options"]["num_predict"]
            for c in ollama_stub.chats
            if c["messages"][0]["content"].rsplit("\n\n", 1)[-1].strip() == text
        ]

    first, second = (160 + 8 * len(t.split()) for t in (long, endless))
    assert asked(long) == [first, 2 * first]
    assert asked(endless) == [second, 2 * second, 4 * second, 1024]
    rows = read_rows(out / "expansion-s1337" / "test.jsonl")
    assert (rows[0]["status"], rows[0]["sentence1"]) == ("ok", ollama_stub.replies[long])
    assert (rows[1]["status"], rows[1]["finish_reason"]) == ("truncated", "length")
