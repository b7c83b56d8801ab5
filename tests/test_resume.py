"""A run killed with SIGKILL at any moment finishes, once restarted, exactly as an
uninterrupted run would: no row lost, duplicated, or generated again needlessly."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from openai_server import OpenAIStub

ROWS = 20  # 40 unique sentences
CONCURRENCY = 2


def test_sigkill_and_resume_gives_the_uninterrupted_output(invoke, tmp_path):
    with OpenAIStub() as stub:
        args = [
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
        reference = tmp_path / "reference"
        assert invoke(*args, "--no-cache", "-o", reference).exit_code == 0
        sent_once = len(stub.requests)
        assert sent_once == 2 * ROWS

        stub.requests.clear()
        stub.delay = 0.25
        out = tmp_path / "runs" / "killed"
        env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(tmp_path / "cache")}
        rng = random.Random(7)
        kills = 0
        for _ in range(30):
            # Kill once the stub has taken a few more requests than can be in flight: with
            # CONCURRENCY slots, each request past them means an earlier one was answered, so
            # every attempt finishes some rows however slow the machine is. The kill points
            # vary (seeded) and depend on progress, not on a clock.
            kill_at = len(stub.requests) + CONCURRENCY + 4 + rng.randrange(6)
            process = subprocess.Popen(
                [sys.executable, "-m", "shiftbench", *map(str, args), "-o", str(out)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 300
            while process.poll() is None and len(stub.requests) < kill_at:
                if time.monotonic() > deadline:
                    process.kill()
                    raise AssertionError("the run made no progress for 300 s")
                time.sleep(0.01)
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
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
