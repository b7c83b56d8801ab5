"""Progress on stderr while long work runs: on a terminal, bars (seen under a
pseudo-terminal before the command ends); with -q, none; when stderr is not a terminal,
a few plain lines without carriage returns; and gen's count, whose total never grows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.environment import ENCODER
from support.hub_server import LocalHub
from support.terminal import OnTerminal

from shiftbench.core import progress
from shiftbench.core.progress import bar

TESTS = Path(__file__).parents[1]
TOKEN = "hf_shiftbenchFAKEtokenNeverToBeShown0042"

# gen with the scripted backend (tests/support/scripted_backend.py) in a process of its
# own: the first text comes back empty every time, so it is tried again twice
SCRIPTED_GEN = """
import sys
sys.path.insert(0, {tests!r})
from shiftbench.llm.backends import BACKENDS
from support.scripted_backend import ScriptedBackend
from support.files import read_rows
BACKENDS["scripted"] = "support.scripted_backend:ScriptedBackend"
from pathlib import Path
first = read_rows(Path({sample!r}))[0]["sentence1"]
ScriptedBackend.empty_for = {{first}}
from shiftbench.cli import main
sys.argv = ["shiftbench", *sys.argv[1:]]
main()
"""
SAMPLE = TESTS.parent / "sample" / "data" / "test.jsonl"


def counted(stderr: str, count: str, unit: str) -> bool:
    """Whether a bar showed `count` (`2/2`) of `unit`s (tqdm says `unit/s` or `s/unit`)."""
    return re.search(rf"{count} \[[^\]]*{unit}", stderr) is not None


def scripted_gen(out: Path, *more: str) -> OnTerminal:
    script = SCRIPTED_GEN.format(tests=str(TESTS), sample=str(SAMPLE))
    args = ["gen", "sample", "--limit", "3", "-b", "scripted", "-t", "paraphrase",
            "--max-failure-rate", "1", "-o", out, *more]  # fmt: skip
    return OnTerminal(args, script=script)


@pytest.fixture
def progress_run(invoke, scripted, tmp_path) -> Path:
    """The sample's first 4 rows paraphrased by the scripted backend, with a control."""
    run = tmp_path / "run"
    done = invoke("gen", "sample", "--limit", "4", "-t", "paraphrase,word-jumble-1",
                  "-b", "scripted", "-q", "-o", run)  # fmt: skip
    assert done.exit_code == 0, done.output
    return run


def test_gen_counts_texts_on_a_terminal_shows_retries_apart_and_nothing_with_q(tmp_path):
    shown = scripted_gen(tmp_path / "run")
    shown.wait_while_running("paraphrase-s1337:")
    code, stdout, stderr = shown.finish()
    assert code == 0, stderr
    assert stdout == f"wrote original, paraphrase-s1337 to {tmp_path / 'run'}\n"
    # 3 rows of 3 texts each (sentence1, sentence2): 6 texts, 2 of them tried again
    assert counted(stderr, "0/6", "text") and counted(stderr, "6/6", "text")
    assert "retries: 2" in stderr
    assert "7/6" not in stderr and "/7 [" not in stderr and "/8 [" not in stderr
    # -q: the same work (now cached) and output, nothing on the terminal
    code, quiet_stdout, stderr = scripted_gen(tmp_path / "quiet", "-q").finish()
    assert (code, stderr) == (0, "")
    assert quiet_stdout == stdout.replace(str(tmp_path / "run"), str(tmp_path / "quiet"))


def test_evaluate_shows_the_model_load_and_a_count_of_configs(progress_run, tmp_path):
    out = tmp_path / "results"
    shown = OnTerminal(["evaluate", progress_run, "-m", ENCODER, "--no-plots", "-o", out])
    shown.wait_while_running(f"{ENCODER}:")
    code, _, stderr = shown.finish()
    assert code == 0, stderr
    assert stderr.startswith(f"loading {ENCODER} (about ")
    assert counted(stderr, "2/2", "config")  # the original and the paraphrase


def test_validate_with_a_drift_encoder_counts_its_checks(progress_run):
    shown = OnTerminal(["validate", progress_run, "--langid", "langdetect",
                        "--drift-encoder", ENCODER])  # fmt: skip
    shown.wait_while_running(f"validate {progress_run.name}:")
    code, _, stderr = shown.finish()
    assert code == 0, stderr
    assert stderr.startswith(f"loading {ENCODER} (about ")
    assert counted(stderr, "2/2", "check")  # the checks, then the drift


def test_probe_counts_its_probes(progress_run, tmp_path):
    shown = OnTerminal(["probe", progress_run, "-m", ENCODER, "--paraphrases", "paraphrase-s1337",
                        "--no-plots", "-o", tmp_path / "p"])  # fmt: skip
    shown.wait_while_running(f"probe {progress_run.name}:")
    code, _, stderr = shown.finish()
    assert code == 0, stderr
    assert stderr.startswith(f"loading {ENCODER} (about ")
    assert counted(stderr, "2/2", "probe")  # cosine and NED on one dataset


def test_publish_counts_the_files_it_uploads(progress_run, tmp_path, monkeypatch):
    with LocalHub(TOKEN) as hub:
        for name, value in {"HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN,
                            "HF_HOME": str(tmp_path / "hf-home"),
                            "SHIFTBENCH_HUB_RETRY_WAIT": "0.01"}.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("HF_HUB_OFFLINE")
        shown = OnTerminal(["publish", progress_run, "--repo", "org/sample-variants",
                            "--version", "1.0.0"])  # fmt: skip
        shown.wait_while_running("publish org/sample-variants:")
        code, stdout, stderr = shown.finish()
    assert code == 0, stderr
    assert stdout.startswith("published org/sample-variants@v1.0.0")
    assert counted(stderr, "", "file")


def test_without_a_terminal_progress_is_a_few_plain_lines(invoke, scripted, tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_AFTER", 0.0)  # as if the work had taken long
    scripted.empty_for = set()
    done = invoke("gen", "sample", "--limit", "20", "-b", "scripted", "-t", "paraphrase",
                  "-o", tmp_path / "run")  # fmt: skip
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    assert "\r" not in done.stderr
    assert lines[0].startswith("paraphrase-s1337: ") and "/40 texts (" in lines[0]
    assert lines[-1].startswith("paraphrase-s1337: 40/40 texts (100%) in ")
    assert 2 <= len(lines) <= 12  # about one a tenth, not one per text


def test_the_total_never_grows_when_texts_are_tried_again(monkeypatch):
    """The count is fixed when made: retries are counted apart, never added to it."""
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    counted = bar(4, "x", unit="text")
    counted.update(3)
    counted.retried(2)
    counted.update(5)  # more than is left: the count stops at its total
    counted.retried()
    assert (counted.n, counted.total, counted.retries) == (4, 4, 3)
    counted.close()


def test_gen_retries_leave_its_total_as_it_was(invoke, scripted, tmp_path, monkeypatch):
    """gen's count keeps the total it was made with however many texts are tried again
    (here the first two rows' texts: each reply for them is empty, three attempts)."""
    from support.files import read_rows

    from shiftbench.gen import rewrite

    made: list[tuple[int, progress.Bar]] = []

    def recorded(total: int, label: str, **kwargs: object) -> progress.Bar:
        made.append((total, progress.Bar(total, label, "text", quiet=True)))
        return made[-1][1]

    monkeypatch.setattr(rewrite, "bar", recorded)
    rows = read_rows(SAMPLE)[:2]
    scripted.empty_for = {r["sentence1"] for r in rows}
    done = invoke("gen", "sample", "--limit", "4", "-b", "scripted", "-t", "paraphrase",
                  "--max-failure-rate", "1", "-q", "-o", tmp_path / "run")  # fmt: skip
    assert done.exit_code == 0, done.output
    ((total, counted),) = made
    assert (total, counted.total, counted.n, counted.retries) == (8, 8, 8, 4)


def test_a_terminal_that_gives_no_width_gets_plain_lines():
    """A pseudo-terminal nobody sized (0 columns) would make tqdm draw nothing at all:
    progress falls back to plain lines there, and retries after the last first attempt
    still show."""
    script = (
        "from shiftbench.core import progress\n"
        "progress.PLAIN_AFTER = 0.0\n"
        "with progress.bar(4, 'work', unit='row') as b:\n"
        "    b.update(4)\n"
        "    progress.PLAIN_EVERY = 0.0\n"
        "    b.retried(2)\n"
    )
    code, _, stderr = OnTerminal([], script=script, sized=False).finish()
    assert code == 0, stderr
    lines = stderr.replace("\r\n", "\n").splitlines()
    assert lines[0] == "work: 4/4 rows (100%)", stderr  # nothing is being made again yet
    assert lines[1] == "work: 4/4 rows (100%), making again what failed, retries: 2"
    assert lines[-1].startswith("work: 4/4 rows (100%) in ")


def test_a_count_that_reaches_its_total_says_nothing_of_retries_it_has_none(monkeypatch, capsys):
    """evaluate, validate and probe count configs, checks and probes that are never tried
    again: at their total the line is the count alone (it once said 'making again what
    failed' there)."""
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    monkeypatch.setattr(progress, "PLAIN_AFTER", 0.0)
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    with bar(2, "validate biosses", unit="check") as counted:
        counted.update(2)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "validate biosses: 2/2 checks (100%)"
    assert lines[1].startswith("validate biosses: 2/2 checks (100%) in ")


def test_the_time_left_leaves_out_the_first_items_warm_up(monkeypatch, capsys):
    """The first text took 100 s (a model's first batch), the next nine 1 s each: the
    rate is measured after the first count, 1 text/s, so 90 texts are 'about 1 min 30 s'
    away, not the 19 minutes an average over the warm-up would say; with one count
    only, no time is promised at all."""
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    monkeypatch.setattr(progress, "PLAIN_AFTER", 0.0)
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    counted = bar(100, "paraphrase-s1337", unit="text")
    clock[0] = 100.0
    counted.update(1)
    for _ in range(9):
        clock[0] += 1.0
        counted.update(1)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "paraphrase-s1337: 1/100 texts (1%)"
    assert lines[-1] == (
        f"paraphrase-s1337: 10/100 texts (10%), 1.0 texts/s, {progress.seconds(90)} left"
    )
    counted.close()
