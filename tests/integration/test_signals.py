"""Signals, and servers that take a connection and never answer.

Ctrl-C (SIGINT) and SIGTERM end gen at once while it waits on a server that answers
nothing: exit 130 or 143, one line, the finished rows in the cache. gen runs here as a real
process (`python -m shiftbench`), as a shell starts it, since a signal reaches a process and
its threads, not click's test runner. A server that takes the connection but never answers
the first check of a backend or an embeddings endpoint is a runtime fault once the deadline
has passed: exit 1, saying what it did not answer and for how long.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.files import cached_rows
from support.http_stub import Handler, StubServer
from support.ollama_server import OllamaStub
from support.openai_server import OpenAIStub
from support.waiting import wait_for

from shiftbench.core.models.remote_encoders import EmbeddingsEndpoint
from shiftbench.errors import RuntimeFault

STARTED = 180.0  # seconds gen may take to start and send its requests on a busy machine
ENDED = 20.0  # seconds a signalled gen may take to end; it used to wait on the server for minutes


def start_gen(*args: object) -> subprocess.Popen[str]:
    """`python -m shiftbench gen sample ...`, with the test's environment (its own cache)."""
    command = [sys.executable, "-m", "shiftbench", "gen", "sample", "-q", *map(str, args)]
    return subprocess.Popen(
        command, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def held(stub: StubServer, process: subprocess.Popen[str], rows: int = 0) -> bool:
    """Whether gen is waiting on a request the stub holds, with `rows` rows cached."""
    if process.poll() is not None:
        raise AssertionError(f"gen ended (exit {process.returncode}) before it was signalled")
    cache = Path(os.environ["SHIFTBENCH_CACHE_DIR"])
    return stub.held > 0 and cached_rows(cache) >= rows


def signalled(process: subprocess.Popen[str], signum: int) -> tuple[int, str, float]:
    """Send `signum`; the exit code, stderr and seconds until gen ended (ENDED at most)."""
    start = time.monotonic()
    process.send_signal(signum)
    try:
        _, err = process.communicate(timeout=ENDED)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"gen still ran {ENDED:g} s after signal {signum}") from None
    return process.returncode, err, time.monotonic() - start


def openai_args(stub: OpenAIStub, out: Path, *extra: object) -> list[object]:
    return ["--limit", 3, "-b", "openai", "--base-url", stub.url, "-m", "stub-model",
            "--timeout", 30, "-o", out, *extra]  # fmt: skip


def test_ctrl_c_ends_a_wait_on_a_silent_server_and_keeps_finished_rows(invoke, tmp_path):
    """Two rows answered, the third never: Ctrl-C ends gen at once with exit 130, and a
    rerun asks the server only for the rows not finished."""
    out = tmp_path / "run"
    with OpenAIStub() as stub:
        stub.faults = ["", ""] + ["hang"] * 20
        process = start_gen(*openai_args(stub, out, "--concurrency", 1))
        wait_for(lambda: held(stub, process, rows=2), STARTED, "gen to wait on the held request")
        code, err, seconds = signalled(process, signal.SIGINT)
        assert code == 130, err
        assert err.splitlines()[-1] == "Interrupted; finished rows are cached."
        assert seconds < ENDED
        assert not out.exists()
        stub.faults = []
        before = len(stub.requests)
        result = invoke("gen", "sample", "-q", *openai_args(stub, out))
        assert result.exit_code == 0, result.output
        assert len(stub.requests) - before == 6 - 2  # the two finished rows came from the cache


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        ((), "Terminated; finished rows are cached."),
        (("--no-cache",), "Terminated; nothing is kept (--no-cache)."),
    ],
    ids=["cached", "no-cache"],
)
def test_sigterm_ends_a_wait_on_a_silent_server(tmp_path, extra, line):
    """SIGTERM, while two variants' jobs wait on requests the server never answers (four at
    a time): exit 143 and one line."""
    out = tmp_path / "run"
    with OpenAIStub() as stub:
        stub.faults = ["hang"] * 20
        process = start_gen(*openai_args(stub, out, "--seeds", "1,2", *extra))
        wait_for(lambda: held(stub, process), STARTED, "gen to wait on a held request")
        code, err, seconds = signalled(process, signal.SIGTERM)
    assert code == 143, err
    assert err.splitlines()[-1] == line
    assert err.count("\n") == 1, err
    assert seconds < ENDED
    assert not out.exists()


def test_ctrl_c_ends_a_wait_on_a_silent_ollama(tmp_path):
    out = tmp_path / "run"
    with OllamaStub() as stub:
        stub.faults = ["hang"] * 20
        process = start_gen("--limit", 3, "-b", "ollama", "--base-url", stub.url, "-m", "stub",
                            "--timeout", 30, "-o", out)  # fmt: skip
        wait_for(lambda: held(stub, process), STARTED, "gen to wait on a held request")
        code, err, seconds = signalled(process, signal.SIGINT)
    assert code == 130, err
    assert err.splitlines()[-1] == "Interrupted; finished rows are cached."
    assert seconds < ENDED


class Silent(Handler):
    """Takes every request and answers none."""

    def do_GET(self) -> None:
        self.hold()

    do_POST = do_GET


@pytest.mark.parametrize(
    ("engine", "root", "message"),
    [
        (
            "openai",
            "/v1",
            "the server at {url} accepted the connection but did not answer GET /v1/models "
            "within 2 s",
        ),
        (
            "ollama",
            "",
            "Ollama at {url} accepted the connection but did not answer POST /api/show within 2 s",
        ),
    ],
    ids=["openai", "ollama"],
)
def test_a_server_that_never_answers_the_first_check_is_a_fault_within_the_deadline(
    invoke, tmp_path, engine, root, message
):
    """Not 'cannot reach' (exit 2) after the default five minutes: something listens there,
    so it is the server's fault (exit 1), said once --timeout has passed."""
    out = tmp_path / "run"
    with StubServer(Silent, root=root) as stub:
        start = time.monotonic()
        result = invoke("gen", "sample", "--limit", 3, "-b", engine, "--base-url", stub.url,
                        "-m", "stub-model", "--timeout", 2, "-o", out)  # fmt: skip
        seconds = time.monotonic() - start
    assert (result.exit_code, result.stderr) == (1, f"Error: {message.format(url=stub.url)}\n")
    assert stub.held == 1  # one check, not retried
    assert seconds < ENDED
    assert not out.exists()


def test_an_embeddings_endpoint_that_never_answers_its_check_is_a_fault(monkeypatch):
    monkeypatch.setenv("SHIFTBENCH_HTTP_TIMEOUT", "1")
    with StubServer(Silent, root="/v1") as stub, pytest.raises(RuntimeFault) as failed:
        EmbeddingsEndpoint("m", stub.url).check()
    assert str(failed.value) == (
        f"the embeddings endpoint at {stub.url} accepted the connection but did not answer "
        "GET /v1/models within 1 s"
    )
