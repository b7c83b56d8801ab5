"""Messages that say what is true, where a case needs a process of its own: a file-size
limit (ulimit -f), a progress bar on the terminal a command fails on, an export killed
midway; and text from rating files written where a spreadsheet or a Markdown reader sees
it. docs/guides/errors.md lists each case."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.files import read_rows
from support.human_eval import HEADER, make_batch, write_csv
from support.terminal import OnTerminal
from support.waiting import wait_for

TESTS = Path(__file__).parents[1]  # where `support` is, for the scripts a test starts
LIMIT = 8192  # bytes: the file-size limit (RLIMIT_FSIZE) the limited commands run under


def limited(args: list[str], cwd: Path, limit: int = LIMIT) -> subprocess.CompletedProcess:
    """`shiftbench ARGS` in a process that may write no file past `limit` bytes, as under
    `ulimit -f`."""
    import resource

    def limit_writes() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "shiftbench", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=600, preexec_fn=limit_writes,
    )  # fmt: skip


def past_limit(file: str) -> str:
    return (
        f"Error: writing {file} stopped at the file-size limit of {LIMIT:,} bytes (ulimit -f); "
        "raise the limit (ulimit -f unlimited) and run the command again\n"
    )


def test_a_file_size_limit_in_the_load_check_is_not_blamed_on_the_data(invoke, tmp_path):
    """card loads every config as load_dataset would, writing Arrow files in a scratch
    folder: one of them past the limit is named with the limit (exit 1), where the data
    was said not to load; the card the folder had stays."""
    run = tmp_path / "run"
    assert invoke("gen", "sample", "-t", "word-jumble-1", "-q", "-o", run).exit_code == 0
    before = (run / "README.md").read_bytes()
    done = limited(["card", run, "--repo", "org/name", "--version", "1.0.0"], tmp_path)
    assert done.returncode == 1, done.stderr
    written = re.fullmatch(r"Error: writing (\S+) stopped at .*\n", done.stderr)
    assert written, done.stderr
    assert done.stderr == past_limit(written[1])
    assert written[1].endswith(".arrow") and "shiftbench-release-" in written[1]
    assert "load_dataset" not in done.stderr
    assert (run / "README.md").read_bytes() == before


def test_a_file_size_limit_on_the_cache_is_not_blamed_on_the_cache(tmp_path):
    """SQLite says "disk I/O error" when the limit stops a write to the generation cache:
    the file it stopped in is named with the limit (exit 1), where the cache was called
    not a readable database, to be deleted."""
    cache = tmp_path / "cache"
    # an LLM transform (rule-based ones open no cache); the cache opens before any server
    # is asked, so none need answer at this address
    args = ["gen", "sample", "-t", "paraphrase", "-b", "openai", "--base-url",
            "http://127.0.0.1:9/v1", "-q", "--cache-dir", cache, "-o", "run"]  # fmt: skip
    done = limited(args, tmp_path)
    assert (done.returncode, done.stderr) == (1, past_limit(f"{cache}/generations.sqlite-shm"))
    assert not (tmp_path / "run").exists()


def test_a_file_size_limit_on_a_plain_write_names_the_file(tmp_path):
    """A file written by shiftbench's own code (init's starter spec, over 8 kB) stops at
    the limit: its name comes from the write that failed (an OSError from a write carries
    none)."""
    done = limited(["init", "spec.yaml"], tmp_path)
    assert (done.returncode, done.stderr) == (1, past_limit("spec.yaml"))


FAILING_GEN = """
import sys
sys.path.insert(0, {tests!r})
from shiftbench.llm.backends import BACKENDS
from support.scripted_backend import ScriptedBackend
BACKENDS["scripted"] = "support.scripted_backend:ScriptedBackend"
ScriptedBackend.fail_from_call = 2  # the first chunk comes back, then every call fails
import shiftbench.llm.calls
shiftbench.llm.calls.time.sleep = lambda s: None
from shiftbench.cli import main
sys.argv = ["shiftbench", *sys.argv[1:]]
main()
"""


def test_the_error_line_starts_its_own_line_after_a_progress_bar(tmp_path):
    """gen fails while its progress bar is drawn on stderr (tqdm ends a drawing with \\r,
    not a newline): the bar is ended first, so `Error:` begins a line, and the error is the
    last thing written (no bar drawn again after it)."""
    script = FAILING_GEN.format(tests=str(TESTS))
    args = ["gen", "sample", "-b", "scripted", "--cache-dir", tmp_path / "cache", "-o", "run"]
    code, _, stderr = OnTerminal(args, script=script, cwd=tmp_path).finish()  # \r kept
    stderr = stderr.replace("\r\n", "\n")  # the terminal's own line ends
    assert code == 1, stderr
    error = (
        "Error: backend scripted failed 3 times; finished rows are cached (ConnectionError: "
        "scripted failure)\n"
    )
    assert "\rparaphrase-s1337:   0%|" in stderr  # a bar was drawn
    assert stderr.endswith("\n" + error)
    assert stderr.count("\nError: ") == 1


EXPORT_KILLED = """
import pathlib, sys
import shiftbench.cards.hteb_pairs as hteb  # where every exported pair is written
written = hteb.write_pair
def write_then_wait(stage, *args):
    folder = written(stage, *args)
    pathlib.Path({marker!r}).write_text(str(stage))
    sys.stdin.read()  # killed here, the staging folder half written
    return folder
hteb.write_pair = write_then_wait
from shiftbench.cli import main
sys.argv = ["shiftbench", "hteb", "export", {run!r}, "-o", {out!r}]
main()
"""


def test_the_staging_folder_of_a_killed_hteb_export_is_removed_by_the_next(
    sts_tree, invoke, tmp_path
):
    """kill -9 while hteb export writes: its hidden `.NAME.tmp-*` folder stays beside the
    output. The next export (holding the writer lock) removes it, and writes the tree."""
    run, out = tmp_path / "run", tmp_path / "back"
    assert invoke("hteb", "import", sts_tree, "-o", run).exit_code == 0
    marker = tmp_path / "staged"
    script = EXPORT_KILLED.format(marker=str(marker), run=str(run), out=str(out))
    export = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE)
    try:
        wait_for(lambda: marker.exists() or export.poll() is not None, 120, "the first pair")
        assert export.poll() is None
    finally:
        export.send_signal(signal.SIGKILL)
        export.wait(timeout=60)
    stage = Path(marker.read_text())
    assert stage.is_dir() and stage.name.startswith(f".back.tmp-{export.pid}-")
    assert not out.exists()
    result = invoke("hteb", "export", run, "-o", out)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".back")) == []
    assert out.is_dir()


def test_staging_leftovers_of_live_writers_stay_and_of_dead_ones_go(tmp_path):
    """Without the writer lock only a dead process's leftovers go: a live writer's staging
    folder, and a folder whose name only begins alike, are left alone."""
    from shiftbench.core.data.writes import leftovers, stage_beside

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (tmp_path / f".out.tmp-{dead}-abcd1234").mkdir()
    (tmp_path / f".out.tmp-{os.getppid()}-abcd1234").mkdir()  # pytest's parent: alive
    (tmp_path / ".out.tmp-abcd1234").mkdir()  # an older shiftbench's: no pid to go by
    (tmp_path / ".out.tmp-notes").mkdir()  # not a staging folder at all
    removed = leftovers(tmp_path, ".out.tmp-", held=False)
    assert [p.name for p in removed] == [f".out.tmp-{dead}-abcd1234"]
    removed = leftovers(tmp_path, ".out.tmp-", held=True)
    assert sorted(p.name for p in removed) == sorted(
        [f".out.tmp-{os.getppid()}-abcd1234", ".out.tmp-abcd1234"]
    )
    stage = stage_beside(tmp_path / "out")
    assert stage.name.startswith(f".out.tmp-{os.getpid()}-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".out.tmp-notes", stage.name])


# ------------------------------------------------------------------ rating files


HOSTILE = "=cmd|' /C calc'!A0"  # what a spreadsheet runs as a command, from a rater id


def _form_csv(path: Path, table: list[dict], batch_id: str, rater: str) -> Path:
    """One rater's ratings of a batch as the HTML form writes them: `rater` as its cell
    (a value that begins like a formula is guarded with a leading ')."""
    lines = [HEADER]
    for item in (r for r in table if r["batch_id"] == batch_id):
        for criterion in ("quality", "fluency"):
            lines.append(f"{batch_id},{item['item_id']},{rater},{criterion},3,")
    return write_csv(path, lines)


def test_a_rater_id_with_a_control_character_is_refused_at_import(batch, invoke, tmp_path):
    table = read_rows(batch / "items.jsonl")
    item = next(r for r in table if r["batch_id"] == "b01")
    bad = write_csv(tmp_path / "nul.csv", [HEADER, f"b01,{item['item_id']},r\x001,quality,3,"])
    result = invoke("human-eval", "import", batch, bad)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {bad}:2: rater_id 'r\\x001' holds the control character U+0000; a rater id "
        "is one line of visible text\n",
    )
    assert not (batch / "ratings.jsonl").exists()


def test_a_utf16_rating_file_is_named_as_what_it_is(batch, invoke, tmp_path):
    table = read_rows(batch / "items.jsonl")
    item = next(r for r in table if r["batch_id"] == "b01")
    lines = [HEADER, f"b01,{item['item_id']},r1,quality,3,"]
    saved = write_csv(tmp_path / "ratings.csv", lines, encoding="utf-16")
    result = invoke("human-eval", "import", batch, saved)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {saved}: UTF-16 text (it starts with UTF-16's byte-order mark), not UTF-8; "
        "save it as UTF-8\n",
    )


def test_a_formula_rater_id_is_kept_as_written_and_escaped_where_it_lands(
    batch_run, invoke, tmp_path
):
    """A rater id that a spreadsheet would run (the form's CSV guards it with a quote)
    comes back as the rater typed it, and human_eval.md shows it as text: no table cell
    broken by its pipe, no Markdown or HTML read into it."""
    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "2")
    files = [
        _form_csv(tmp_path / "a.csv", table, "b01", "'" + HOSTILE),
        _form_csv(tmp_path / "b.csv", table, "b02", "<b>r2</b>"),
    ]
    assert invoke("human-eval", "import", batch, *files).exit_code == 0
    raters = {r["rater_id"] for r in read_rows(batch / "ratings.jsonl")}
    assert raters == {HOSTILE, "<b>r2</b>"}
    assert invoke("human-eval", "report", batch).exit_code == 0
    report = (batch / "human_eval.md").read_text(encoding="utf-8")
    excluded = sorted(line.split(": ")[0] for line in report.splitlines() if line[:2] == "- ")
    assert excluded == ["- &lt;b&gt;r2&lt;/b&gt;", "- \\=cmd\\|' /C calc'!A0"]
    assert "<b>" not in report
    assert json.loads((batch / "human_eval.json").read_text())["raters"].keys() == raters


def test_formula_like_texts_are_guarded_in_the_mturk_csv_and_read_back(batch_run, invoke, tmp_path):
    """An item's text that begins like a formula (=, +, -, @) goes into batch.csv behind a
    leading quote, so a spreadsheet shows it; the HIT template takes the quote off for the
    rater, and the import reads the ids back as they were."""
    batch = tmp_path / "batch"
    rows = make_batch(invoke, batch_run, batch, "--raters", "1")
    rows[0]["text_b"] = '=HYPERLINK("http://example.com")'
    rows[1]["text_a"] = "-5 degrees tonight"
    (batch / "items.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8"
    )
    result = invoke("human-eval", "export", batch, "--format", "mturk")
    assert result.exit_code == 0, result.output
    folder = batch / "export" / "mturk"
    with open(folder / "batch.csv", newline="", encoding="utf-8") as fh:
        cells = [v for hit in csv.DictReader(fh) for v in hit.values()]
    assert cells and not [c for c in cells if c.startswith(("=", "+", "-", "@"))]
    assert '\'=HYPERLINK("http://example.com")' in cells and "'-5 degrees tonight" in cells
    template = (folder / "hit.html").read_text(encoding="utf-8")
    assert "t.data = t.data.slice(1)" in template
    assert sorted(p.name for p in (batch / "export").iterdir()) == ["mturk"]  # no stage left


@pytest.mark.parametrize(
    ("value", "cell"),
    [("=1+2", "'=1+2"), ("-5", "'-5"), ("@SUM(A1)", "'@SUM(A1)"), ("+x", "'+x"),
     ("\tx", "'\tx"), ("'=x", "''=x"), ("'abc", "'abc"), ("abc", "abc"), ("", "")],
)  # fmt: skip
def test_a_spreadsheet_cell_guards_formulas_and_gives_back_every_value(value, cell):
    from shiftbench.core.tables import from_spreadsheet_cell, spreadsheet_cell

    assert spreadsheet_cell(value) == cell
    assert from_spreadsheet_cell(cell) == value


def test_a_markdown_table_keeps_each_cell_in_its_row():
    from shiftbench.core.tables import markdown_table

    table = markdown_table(["rater", "n"], [["a|b\nc<i>x</i>", "1"]])
    assert table.splitlines()[2] == "| a\\|b c&lt;i&gt;x&lt;/i&gt; | 1 |"
