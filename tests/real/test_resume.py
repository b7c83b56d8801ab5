"""A run killed with SIGKILL at any moment, or stopped with Ctrl-C, finishes, once
restarted, exactly as an uninterrupted run would: no row lost, duplicated, or generated
again needlessly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from support.files import cached_rows
from support.openai_server import OpenAIStub
from support.waiting import wait_for

# each test starts gen in a subprocess against a local OpenAI-compatible server

ROWS = 20  # 40 unique sentences
CONCURRENCY = 2
STEP = 8  # finished rows each killed attempt caches before its kill
PROGRESS_TIMEOUT = 300  # seconds a run may take to cache STEP more rows


def signal_once_cached(process: subprocess.Popen, cache: Path, rows: int, signum: int) -> bool:
    """Wait (at most PROGRESS_TIMEOUT) until the cache holds `rows` finished rows or the
    process exits; send `signum` if it still runs. True when the signal was sent. On a
    timeout the process is killed and the AssertionError raised."""

    def settled() -> bool:
        return process.poll() is not None or cached_rows(cache) >= rows

    try:
        wait_for(settled, PROGRESS_TIMEOUT, f"the run to cache {rows} rows or exit")
    except AssertionError:
        process.kill()
        process.wait()
        raise
    if process.poll() is not None:
        return False
    process.send_signal(signum)
    return True


def gen_args(stub: OpenAIStub) -> list[str]:
    """gen on ROWS sample rows through the stub, CONCURRENCY requests at a time."""
    return [
        "gen",
        "sample",
        "--limit",
        str(ROWS),
        "-b",
        "openai",
        "--base-url",
        stub.url,
        "-m",
        "stub-model",
        "--concurrency",
        str(CONCURRENCY),
        "-q",
    ]


def test_sigkill_and_resume_gives_the_uninterrupted_output(invoke, tmp_path):
    with OpenAIStub() as stub:
        args = gen_args(stub)
        reference = tmp_path / "reference"
        assert invoke(*args, "--no-cache", "-o", reference).exit_code == 0
        sent_once = len(stub.requests)
        assert sent_once == 2 * ROWS

        stub.requests.clear()
        stub.delay = 0.25
        out = tmp_path / "runs" / "killed"
        cache = tmp_path / "cache"
        env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(cache)}
        kills = 0
        for _ in range(30):
            # Kill once this attempt has cached a few more finished rows: every attempt makes
            # progress however slow the machine is, and the kill points depend on progress,
            # not on a clock (where in flight the other requests are varies by itself).
            kill_at = cached_rows(cache) + STEP
            process = subprocess.Popen(
                [sys.executable, "-m", "shiftbench", *map(str, args), "-o", str(out)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if signal_once_cached(process, cache, kill_at, signal.SIGKILL):
                process.wait()
                kills += 1
                continue
            assert process.returncode == 0
            break
        else:
            raise AssertionError("the run never finished")
        assert kills >= 1, "the run should have been killed at least once"

    for name in ("original", "paraphrase-s1337"):
        assert (out / name / "test.jsonl").read_bytes() == (
            reference / name / "test.jsonl"
        ).read_bytes()
    assert (out / "shiftbench.json").read_bytes() == (reference / "shiftbench.json").read_bytes()
    # at most the requests in flight at each kill were sent twice
    assert sent_once <= len(stub.requests) <= sent_once + kills * CONCURRENCY
    assert not [p.name for p in out.parent.iterdir() if p.name.startswith(".")]
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_ctrl_c_exits_130_and_a_rerun_reuses_the_cached_rows(invoke, tmp_path):
    with OpenAIStub() as stub:
        args = gen_args(stub)
        reference = tmp_path / "reference"
        assert invoke(*args, "--no-cache", "-o", reference).exit_code == 0

        stub.delay = 0.25
        cache, out = tmp_path / "cache", tmp_path / "runs" / "interrupted"
        env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(cache)}
        command = [sys.executable, "-m", "shiftbench", *args, "-o", str(out)]
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        sent = signal_once_cached(process, cache, STEP, signal.SIGINT)
        try:
            _, err = process.communicate(timeout=PROGRESS_TIMEOUT)
        finally:
            process.kill()
        assert sent, f"the run ended (exit {process.returncode}) before it was interrupted"
        assert process.returncode == 130, err
        assert err.splitlines()[-1] == "Interrupted; finished rows are cached.", err
        assert not out.exists()
        cached = cached_rows(cache)
        assert STEP <= cached < 2 * ROWS

        stub.requests.clear()
        stub.delay = 0
        rerun = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=PROGRESS_TIMEOUT
        )
        assert rerun.returncode == 0, rerun.stderr
        # the rerun asked only for the rows the interrupted run had not finished
        assert len(stub.requests) == 2 * ROWS - cached

    for name in ("original", "paraphrase-s1337"):
        assert (out / name / "test.jsonl").read_bytes() == (
            reference / name / "test.jsonl"
        ).read_bytes()
    assert (out / "shiftbench.json").read_bytes() == (reference / "shiftbench.json").read_bytes()
