"""The Python API: the README's example prints what the commands print, and the stage
functions refuse bad input as the commands do.

The example asks the generator for the first 12 rows of what the README's main command
generates (the same prompts, seed and token budget). CI runs that command first, in a
fresh environment, and points $SHIFTBENCH_TEST_GENERATIONS at its generation cache: the
example here reads those rows instead of generating them a second time. Without it, the
example generates its rows itself.
"""

from __future__ import annotations

import re

import pytest

import shiftbench


def test_generate_refuses_bad_settings_before_writing(tmp_path):
    source = shiftbench.load_source("sample")
    settings = shiftbench.GenSettings(transforms=("paraphrase",), output=tmp_path / "run")
    bad = [
        (
            {"engine_args": {"enforce_eager": True}},
            "engine_args applies to the vllm backend only",
        ),
        ({"transforms": ("paraphrse",)}, "unknown transform 'paraphrse'"),
        ({"protocol": "ptb"}, "unknown protocol 'ptb'"),
        ({"rewrite": "corpus"}, "rewrite corpus"),
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
    with pytest.raises(shiftbench.InputError, match=r"^resamples must be 0"):
        shiftbench.Evaluation("sample", shiftbench.EvalSettings(resamples=10))
    with pytest.raises(shiftbench.InputError, match=r"^faithful needs a run folder"):
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
        shown = option_of(f, cli.cli).to_info_dict()["default"]
        value = default(f)
        if isinstance(value, list | dict):
            assert value == (type(value)(shown or ())), f.key
        else:
            assert value == shown, f.key


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
