"""The Python API: the README's example prints what the commands print, and the stage
functions refuse bad input as the commands do.

The example asks the generator for the first 12 rows of what the README's main command
generates (the same prompts, seed and token budget). CI runs that command first, in a
fresh environment, and points $SHIFTBENCH_TEST_GENERATIONS at its generation cache: the
example here reads those rows instead of generating them a second time. Without it, the
example generates its rows itself.
"""

from __future__ import annotations

import json

import pytest

import shiftbench


def test_validate_runs_writes_what_the_command_writes(status_run, invoke, tmp_path):
    import shutil

    twin = tmp_path / "twin"
    shutil.copytree(status_run, twin)
    shown = []
    result = shiftbench.validate_runs(
        [twin], shiftbench.ValidateSettings(langid="langdetect", quiet=True),
        on_config=shown.append,
    )  # fmt: skip
    command = invoke("validate", status_run, "--langid", "langdetect", "-q")
    assert command.exit_code == 0, command.output
    for name in ("validation.json", "validation.md"):
        assert (twin / name).read_text(encoding="utf-8").replace(str(twin), "") == (
            status_run / name
        ).read_text(encoding="utf-8").replace(str(status_run), "")
    written = json.loads((twin / "validation.json").read_text(encoding="utf-8"))
    assert (
        [c.config for c in result.configs] == list(written["configs"]) == ["backtranslation-s1337"]
    )
    config = result.configs[0]
    assert shown == [config]
    assert config.rows == written["configs"]["backtranslation-s1337"]["rows"]
    assert config.error_rate == written["configs"]["backtranslation-s1337"]["total_error_rate"]
    assert config.error_rate > 0  # row 2 is cut at the token budget
    from dataclasses import replace

    from shiftbench.validate.api import TABLE_HEADER, table_lines

    assert command.output.splitlines() == [
        TABLE_HEADER,
        *table_lines(replace(config, run=status_run)),
    ]


def test_validate_runs_raises_too_many_errors_after_writing(status_run):
    with pytest.raises(shiftbench.TooManyErrors) as caught:
        shiftbench.validate_runs(
            [status_run], shiftbench.ValidateSettings(langid="langdetect", max_error_rate=0.0)
        )
    assert (status_run / "validation.json").is_file()
    rate = caught.value.result.configs[0].error_rate
    assert caught.value.result.over_limit == (
        f"{status_run.name}/backtranslation-s1337 ({rate:.1%})",
    )
    assert caught.value.exit_code == 1


def test_human_eval_functions_round_trip(status_run, tmp_path):
    batch = shiftbench.make_batches(
        status_run, tmp_path / "batch", shiftbench.BatchSettings(per_stratum=3, raters=2)
    )
    assert batch.raters == 2 and batch.folder == tmp_path / "batch"
    assert sum(batch.strata.values()) == 3
    assert batch.summary().startswith(f"wrote 2 batches of {batch.items_per_batch} items")
    written = shiftbench.export_batches(batch.folder, shiftbench.ExportSettings("mturk"))
    assert written and all(p.is_file() for p in written)
    with pytest.raises(shiftbench.InputError, match="no ratings imported yet"):
        shiftbench.report_ratings(batch.folder)
    # every rater gives every item of their batch the expected control rating, or 4
    table = [json.loads(line) for line in (batch.folder / "items.jsonl").read_text().splitlines()]
    criteria = list(batch.description["scheme"]["criteria"])
    lines = ["batch_id,item_id,rater_id,criterion,rating"]
    for item in table:
        for criterion in criteria:
            rating = item["expected"][criterion] if item["is_control"] else 4
            lines.append(
                f"{item['batch_id']},{item['item_id']},r-{item['batch_id']},{criterion},{rating}"
            )
    form = tmp_path / "ratings.csv"
    form.write_text("\n".join(lines) + "\n", encoding="utf-8")
    added = shiftbench.import_ratings(batch.folder, [form])
    assert (added.added, added.raters, added.total) == (len(lines) - 1, 2, len(lines) - 1)
    report = shiftbench.report_ratings(batch.folder)
    assert sorted(report["kept_raters"]) == ["r-b01", "r-b02"]
    assert (batch.folder / "human_eval.md").is_file()


def test_verbose_shows_what_the_stages_do_on_stderr(invoke, scripted, tmp_path):
    args = ("gen", "sample", "-t", "paraphrase", "-s", "1", "-b", "scripted", "--limit", "4", "-q")
    quiet = invoke(*args, "-o", tmp_path / "a")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    told = invoke("-v", *args, "-o", tmp_path / "b")
    assert told.exit_code == 0, told.output
    assert told.stderr.splitlines() == [
        f"gen sample: 1 variant(s) (paraphrase-s1), rewriting queries, into {tmp_path / 'b'}",
        "loading the scripted generator (default)",
        "gen sample: 0 of 4 checked rows failed the checks",
    ]
    assert told.stdout == quiet.stdout.replace(str(tmp_path / "a"), str(tmp_path / "b"))
