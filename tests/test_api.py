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
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import fenced_after

import shiftbench

README = Path(__file__).resolve().parents[1] / "README.md"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
GENERATIONS_ENV = "SHIFTBENCH_TEST_GENERATIONS"


def readme_block(marker: str) -> str:
    return fenced_after(README.read_text(encoding="utf-8"), f"<!-- {marker} -->")


def readme_example() -> str:
    return readme_block("python-example")


@pytest.mark.heavy
@pytest.mark.slow
def test_the_readme_example_prints_the_commands_scores(tmp_path, invoke, monkeypatch):
    """The example run as a user would (a fresh interpreter in an empty folder), then the
    same run through the commands: same run folder bytes, same scores."""
    cache = tmp_path / "cache"
    seed = os.environ.get(GENERATIONS_ENV)
    if seed:  # CI: the main command's rows (module docstring)
        cache.mkdir()
        shutil.copyfile(Path(seed) / "generations.sqlite", cache / "generations.sqlite")
    env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    api = tmp_path / "api"
    api.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", readme_example()],
        cwd=api, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == readme_block("python-output"), "README.md shows other figures"
    printed = done.stdout.splitlines()
    rows = [line.split() for line in printed[:-1]]
    assert [r[0] for r in rows] == ["original", "paraphrase-s1337"]

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(cache))
    gen = invoke("gen", "sample", "--limit", "12", "--max-new-tokens", "64", "-o", "cli/run", "-q")
    assert gen.exit_code == 0, gen.output
    made = sorted(p.relative_to(tmp_path / "cli/run") for p in (tmp_path / "cli/run").rglob("*"))
    assert made == sorted(
        p.relative_to(api / "runs/sample") for p in (api / "runs/sample").rglob("*")
    )
    for path in made:
        if (api / "runs/sample" / path).is_file():
            assert (tmp_path / "cli/run" / path).read_bytes() == (
                api / "runs/sample" / path
            ).read_bytes(), path

    out = tmp_path / "cli/results"
    evaluated = invoke("evaluate", "cli/run", "-m", MODEL, "-o", out, "-q")
    assert evaluated.exit_code == 0, evaluated.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    records = results["models"][0]["results"]
    assert [r[1] for r in rows] == [f"{r['main_score']:.5f}" for r in records]
    assert rows[1][2] == f"{records[1]['delta']:+.5f}" and len(rows[0]) == 2
    total = json.loads((out / "summary.json").read_text(encoding="utf-8"))["models"][MODEL]["total"]
    low, high = total["ci95"]
    assert printed[-1] == (
        f"Interval(score={total['score']!r}, delta={total['delta']!r}, ci95=({low!r}, {high!r}))"
    )


def test_generate_refuses_bad_settings_before_writing(tmp_path):
    source = shiftbench.load_source("sample")
    settings = shiftbench.GenSettings(transforms=("paraphrase",), output=tmp_path / "run")
    bad = [
        (
            {"engine_args": {"enforce_eager": True}},
            "--engine-arg applies to the vllm backend only",
        ),
        ({"transforms": ("paraphrse",)}, "unknown transform 'paraphrse'"),
        ({"protocol": "ptb"}, "unknown protocol 'ptb'"),
        ({"rewrite": "corpus"}, "--rewrite corpus"),
    ]
    from dataclasses import replace

    for changes, message in bad:
        with pytest.raises(shiftbench.InputError, match=re.escape(message)):
            shiftbench.generate(source, replace(settings, **changes))
    assert not (tmp_path / "run").exists()


def test_the_commands_defaults_are_the_settings_defaults():
    """One place for each default: `shiftbench gen --help` shows GenSettings' values."""
    from shiftbench.cli import evaluate, gen

    settings = shiftbench.GenSettings()
    options = {p.name: p.to_info_dict()["default"] for p in gen.params}
    for name in ("languages", "backend", "num_ctx", "concurrency", "batch_size", "protocol"):
        assert options[name] == getattr(settings, name), name
    for name in ("transforms", "seeds", "temperature", "top_p", "top_k", "max_attempts"):
        assert getattr(settings, name) is None and options[name] in (None, ()), name
    scoring = shiftbench.EvalSettings()
    options = {p.name: p.to_info_dict()["default"] for p in evaluate.params}
    for name in ("batch_size", "precision", "resamples", "resample_seed"):
        assert options[name] == getattr(scoring, name), name


def test_evaluation_refuses_bad_input_before_any_model_loads(tmp_path):
    with pytest.raises(shiftbench.InputError, match="--resamples must be 0"):
        shiftbench.Evaluation("sample", shiftbench.EvalSettings(resamples=10))
    with pytest.raises(shiftbench.InputError, match="--faithful needs a run folder"):
        shiftbench.Evaluation("sample", shiftbench.EvalSettings(faithful="judge>=4"))
    evaluation = shiftbench.Evaluation("sample", shiftbench.EvalSettings(output=tmp_path / "r"))
    with pytest.raises(shiftbench.InputError, match="name at least one model"):
        evaluation.score([])
    assert not (tmp_path / "r").exists()


def test_every_stage_reads_its_defaults_from_its_settings():
    """The commands' option defaults and the spec's are the stage settings' own."""
    from shiftbench import cli
    from shiftbench.cli.commands.specdoc import option_of
    from shiftbench.runner.spec import SECTIONS, TOP_FIELDS, default

    pairs = [
        (cli.validate, shiftbench.ValidateSettings()),
        (cli.judge_calibrate, shiftbench.CalibrateSettings()),
        (cli.human_eval_batch, shiftbench.BatchSettings()),
        (cli.probe, shiftbench.ProbeRunSettings()),
    ]
    for command, settings in pairs:
        options = {p.name: p.to_info_dict()["default"] for p in command.params}
        shared = [n for n in options if hasattr(settings, n)]
        assert len(shared) >= 4, command.name
        for name in shared:
            if name == "judge_modes" and command is cli.judge_calibrate:
                continue  # calibration always asks for similarity
            want = getattr(settings, name)
            if isinstance(want, dict):  # repeated KEY=VALUE options: none is an empty mapping
                assert not options[name] and want == {}, (command.name, name)
                continue
            want = list(want) if isinstance(want, tuple) else want
            got = options[name]
            got = list(got or ()) if isinstance(want, list) else got
            assert got == want, (command.name, name)
    fields = [f for f in TOP_FIELDS if f.command] + [
        f for s in SECTIONS for f in s.fields if f.command
    ]
    assert len(fields) > 40
    for f in fields:
        if f.default is not None or f.key in ("transforms", "seeds"):
            continue
        shown = option_of(f).to_info_dict()["default"]
        value = default(f)
        if f.key == "languages":
            assert ",".join(value) == shown
        elif isinstance(value, list | dict):
            assert value == (type(value)(shown or ())), f.key
        else:
            assert value == shown, f.key


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


def test_stage_functions_refuse_bad_input_with_the_commands_messages(tmp_path):
    with pytest.raises(shiftbench.InputError, match="name at least one run folder"):
        shiftbench.validate_runs([])
    with pytest.raises(shiftbench.InputError, match="name at least one --judge or --paraplue"):
        shiftbench.calibrate_judges(
            shiftbench.load_source("sample"), shiftbench.CalibrateSettings()
        )
    with pytest.raises(shiftbench.InputError, match="a release needs a repo"):
        shiftbench.publish_release(tmp_path, shiftbench.ReleaseSettings())
    with pytest.raises(shiftbench.InputError, match=r"--version must look like 1\.0\.0"):
        shiftbench.write_card(tmp_path, shiftbench.ReleaseSettings(version="one"))
    with pytest.raises(shiftbench.InputError, match="name at least one model to probe"):
        shiftbench.probe_encoders([tmp_path], [])
    assert list(tmp_path.iterdir()) == []


def test_human_eval_functions_round_trip(status_run, tmp_path):
    batch = shiftbench.make_batches(
        status_run, tmp_path / "batch", shiftbench.BatchSettings(per_stratum=3, raters=2)
    )
    assert batch.raters == 2 and batch.folder == tmp_path / "batch"
    assert sum(batch.strata.values()) == 3
    assert batch.summary().startswith(f"wrote 2 batch(es) of {batch.items_per_batch} items")
    written = shiftbench.export_batches(batch.folder, "mturk")
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
