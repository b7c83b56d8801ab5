"""Bad input and faults that once ended in a raw exception and need more than the fault
table gives (tests/integration/test_faults.py): a process of its own with its own locale or
HOME, a read-only disk, a server's answer. Each ends in one line (exit 2, nothing written)
or works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.disks import tmpfs
from support.environment import ENCODER
from support.openai_server import OpenAIStub


def shiftbench(*args: object, **env: str | None) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, with `env` changed (None: unset)."""
    changed = {k: v for k, v in os.environ.items() if k not in env}
    changed.update({k: v for k, v in env.items() if v is not None})
    return subprocess.run(
        [sys.executable, "-m", "shiftbench", *map(str, args)],
        env=changed, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def read_only_disk(where: Path) -> Any:
    """A read-only file system at `where` for the test's length (as root, chmod stops
    nothing); skipped, with the reason, where this process may not mount one."""
    return tmpfs(where, "ro,size=64k")


def test_a_path_the_locale_cannot_decode_is_named_in_one_line(tmp_path):
    """A non-ASCII -o under LC_ALL=C, in an interpreter that reads arguments as ASCII (no
    UTF-8 mode; Python 3.11 turns it on by itself under LC_ALL=C, so PYTHONUTF8=0 asks
    for the others): one line naming the bytes and the two ways out, nothing written. In
    UTF-8 mode the same command writes the folder."""
    out = tmp_path / "résultats"
    args = ("gen", "sample", "-t", "word-jumble-1", "--limit", "2", "-q", "-o", out)
    done = shiftbench(*args, LC_ALL="C", PYTHONUTF8="0")
    assert (done.returncode, done.stderr) == (
        2,
        f"Error: the argument {tmp_path}/r\\xc3\\xa9sultats is not text in this locale's "
        "encoding (ascii); run under a UTF-8 locale (LC_ALL=C.UTF-8) or with PYTHONUTF8=1\n",
    )
    assert list(tmp_path.iterdir()) == []
    done = shiftbench(*args, LC_ALL="C", PYTHONUTF8=None)
    assert done.returncode == 0, done.stderr
    assert (out / "word-jumble-1-s1337" / "test.jsonl").is_file()


def test_a_read_only_home_leaves_rule_based_controls_and_evaluate_working(tmp_path):
    """HOME on a read-only disk, no cache folder set: rule-based controls need no cache
    and are written; an LLM transform says which folder and what to set; evaluate (whose
    mteb keeps a cache folder in HOME) writes its whole results folder, not a lone
    results.json."""
    with read_only_disk(tmp_path / "home") as home:
        env = {"HOME": str(home), "XDG_CACHE_HOME": None, "SHIFTBENCH_CACHE_DIR": None,
               "MTEB_CACHE": None}  # fmt: skip
        run = tmp_path / "run"
        done = shiftbench("gen", "sample", "-t", "word-jumble-1", "-q", "-o", run, **env)
        assert done.returncode == 0, done.stderr
        assert (run / "word-jumble-1-s1337" / "test.jsonl").is_file()

        out = tmp_path / "llm"
        done = shiftbench("gen", "sample", "-t", "paraphrase", "-q", "-o", out, **env)
        assert (done.returncode, done.stderr) == (
            2,
            f"Error: the cache folder {home}/.cache/shiftbench: {home} cannot be written (a "
            "read-only file system); give --cache-dir a folder that can be written (or set "
            "SHIFTBENCH_CACHE_DIR), or pass --no-cache\n",
        )
        assert not out.exists()

        results = tmp_path / "results"
        done = shiftbench("evaluate", run, "-m", ENCODER, "-q", "--no-plots", "--resamples",
                          "0", "-o", results, **env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert {"results.json", "summary.json", "report.md"} <= {p.name for p in results.iterdir()}
        assert list(home.iterdir()) == []


def test_a_read_only_cache_folder_is_named_with_the_variable_to_set(
    invoke, scripted, monkeypatch, tmp_path
):
    """SHIFTBENCH_CACHE_DIR on a read-only disk: an LLM transform is refused in one line
    before the generator loads; rule-based controls are made without it."""
    with read_only_disk(tmp_path / "disk") as disk:
        monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(disk / "cache"))
        out = tmp_path / "run"
        result = invoke("gen", "sample", "--limit", "2", "-b", "scripted", "-q", "-o", out)
        assert (result.exit_code, result.stderr) == (
            2,
            f"Error: the cache folder {disk}/cache: {disk} cannot be written (a read-only "
            "file system); give --cache-dir a folder that can be written (or set "
            "SHIFTBENCH_CACHE_DIR), or pass --no-cache\n",
        )
        assert not out.exists()
        result = invoke("gen", "sample", "-t", "word-jumble-2", "--limit", "2", "-q", "-o", out)
        assert result.exit_code == 0, result.output


def test_a_server_answer_with_a_lone_surrogate_is_written_as_unicode(invoke, tmp_path):
    """A server whose JSON answer escapes half a surrogate pair (`\\ud800`): the half is
    no character, so it becomes U+FFFD, as a cut UTF-8 character does, inside the text,
    and is dropped at its end (a pair cut by the token budget); the cache and the run
    folder take the rest, and validate reads it."""
    from shiftbench.llm.backends.openai import OpenAIBackend

    texts = [
        json.loads(line)["sentence1"]
        for line in (Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()[:2]
    ]
    with pytest.MonkeyPatch.context() as patch, OpenAIStub() as server:
        patch.setattr(OpenAIBackend, "BACKOFF", 0.0)
        server.replies = {texts[0]: "half \ud800 here", texts[1]: "cut at the end \ud83d"}
        out = tmp_path / "run"
        result = invoke("gen", "sample", "--limit", "2", "-t", "paraphrase", "-b", "openai",
                        "-m", "stub-model", "--base-url", server.url, "--cache-dir",
                        tmp_path / "cache", "--max-failure-rate", "1", "-q", "-o", out)  # fmt: skip
        assert result.exit_code == 0, result.output
    rows = [
        json.loads(line)
        for line in (out / "paraphrase-s1337" / "test.jsonl").read_text("utf-8").splitlines()
    ]
    assert [r["sentence1"] for r in rows] == ["half \ufffd here", "cut at the end"]
    assert invoke("validate", out, "-q").exit_code == 0


def test_init_onto_a_read_only_disk_is_one_line(invoke, tmp_path):
    with read_only_disk(tmp_path / "disk") as disk:
        result = invoke("init", disk / "spec.yaml")
        assert (result.exit_code, result.stderr) == (
            2,
            f"Error: {disk}/spec.yaml: {disk} cannot be written (a read-only file system)\n",
        )
