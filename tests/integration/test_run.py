"""shiftbench run and init: one spec file drives every stage, strictly read, resumable."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml
from support.run import stsb_spec, write_spec

from shiftbench.runner.spec import SECTIONS, TOP_FIELDS, read_spec

BAD_SPECS = [
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\ncolour: red\n",
     "spec.yaml:5: colour: unknown key; allowed here: cache_dir, control_pos, evaluate, "
     "generator, hteb_prompts, human_eval, languages, output, prompt_file, prompt_variant, "
     "protocol, release, rewrite, scale, seeds, sources, transforms, validate, wordnet_dir"),
    ("output: o\nsources:\n  - name: sample\n    limt: 3\ntransforms: [paraphrase]\nseeds: [1]\n",
     "spec.yaml:4: sources[0].limt: unknown key; allowed here: data_dir, folder, limit, name, "
     "source_language, splits, subsets, task_type; did you mean limit, splits?"),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\n"
     "generator:\n  temperature: hot\n",
     "spec.yaml:6: generator.temperature: must be a number, not 'hot'"),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1, two]\n",
     "spec.yaml:4: seeds[1]: must be an integer, not 'two'"),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\n"
     "generator:\n  top_p: 1.5\n",
     "spec.yaml:6: generator.top_p: 1.5 is not in the range 0<x<=1."),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\n"
     "human_eval:\n  scheme: stars\n",
     "spec.yaml:6: human_eval.scheme: 'stars' is not one of 'quality', 'similarity'."),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase, parafrase]\nseeds: [1]\n",
     "spec.yaml:3: transforms[1]: unknown transform 'parafrase'; available: paraphrase, "
     "backtranslation, style-change, expansion, summarisation, summarised-expansion, "
     "translation, cross-translation, synonym-swap-1, synonym-swap-2, synonym-swap-3, "
     "antonym-swap, word-jumble-1, word-jumble-2, word-jumble-3, negation, "
     "affirmative-paraphrase (groups: all, controls); did you mean paraphrase?"),
    ("sources: [{name: sample}]\nseeds: [1]\n", "spec.yaml:1: output: is required"),
    ("output: o\nsources:\n  - limit: 3\ntransforms: [paraphrase]\nseeds: [1]\n",
     "spec.yaml:3: sources[0]: needs 'name'"),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\nseeds: [2]\n",
     "spec.yaml:5: seeds is given twice"),
    ("output: o\nsources: [{name: sample}\n",
     "spec.yaml:2: not valid YAML (expected ',' or ']', but got '<stream end>')"),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\n"
     "release:\n  repo: my-org/x\n",
     "spec.yaml:5: release: a repo needs a version"),
    ("output: o\nsources: [{name: sample}, {name: sample}]\ntransforms: [paraphrase]\n"
     "seeds: [1]\n",
     "spec.yaml:2: sources[1]: folder 'sample' is taken by sources[0]; give this source its "
     "own 'folder'"),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\n"
     "generator:\n  backend: olama\n",
     "spec.yaml:6: generator.backend: unknown backend 'olama'; available: embedded, "
     "ollama, openai, vllm; did you mean ollama?"),
    ("output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\n"
     "human_eval:\n  formats: [html, prolific]\n",
     "spec.yaml:5: human_eval.completion_code: --format prolific needs --completion-code, "
     "the code Prolific gives the study"),
    ("output: o\nsources: [{name: sample, folder: ../../escape}]\ntransforms: [paraphrase]\n"
     "seeds: [1]\n",
     "spec.yaml:2: sources[0].folder: '../../escape' must be one folder name inside the "
     "output, not a path"),
    # an alias bomb: nine levels of nine aliases stand for 9**9 values, refused unexpanded
    ("output: o\nsources: [{name: sample}]\nseeds: [1]\nscale: &a0 [x, x, x, x, x, x, x, x, x]\n"
     + "".join(f"k{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)),
     "spec.yaml:5: YAML aliases (*a0) are not allowed in a spec; write the value out"),
    ("output: o\n" + "# padding\n" * 100_000,
     "spec.yaml: holds 1,000,010 characters; a spec is at most 1,000,000 (it names sources "
     "and settings, not data)"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), BAD_SPECS)
def test_a_bad_spec_is_one_line_naming_file_line_and_key(invoke, tmp_path, text, message):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    for extra in ([], ["--dry-run"]):
        result = invoke("run", spec, *extra)
        assert result.exit_code == 2
        assert result.stderr == f"Error: {spec.parent}/{message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


def test_a_spec_without_transforms_or_seeds_takes_its_protocols(
    invoke, scripted, shared_data, tmp_path
):
    """HTEB's eight transforms, three seeds and rewritten corpus, planned as gen plans them
    (greedy decoding shares calls across seeds), then generated and recorded."""
    spec = write_spec(
        tmp_path,
        f"""
        output: out
        sources:
          - name: XQuADRetrieval
            data_dir: {shared_data / "XQuADRetrieval"}
            subsets: [en]
            splits: [test]
            limit: 2
        protocol: hteb
        generator:
          backend: scripted
          temperature: 0
        cache_dir: cache
        """,
    )
    result = invoke("run", spec, "--dry-run")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "generator: scripted (default model); protocol hteb"
    planned = lines[4].split()
    gen = invoke(
        "gen", "XQuADRetrieval", "--data-dir", shared_data / "XQuADRetrieval", "--subset", "en",
        "--split", "test", "--limit", "2", "--protocol", "hteb", "-b", "scripted",
        "--temperature", "0", "--cache-dir", tmp_path / "cache", "-o", tmp_path / "gen",
        "--dry-run",
    )  # fmt: skip
    assert gen.exit_code == 0, gen.stderr
    total = next(line for line in gen.stdout.splitlines() if line.startswith("all ")).split()
    # configs, texts, calls, cached, shared, to make: gen's own figures for the same run
    assert planned[0] == "XQuADRetrieval" and planned[1] == "24"
    assert planned[3:7] == total[1:5]
    assert int(planned[5]) > 0  # seeds share the greedy calls
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]

    assert invoke("run", spec, "--until", "gen").exit_code == 0
    record = json.loads((tmp_path / "out/XQuADRetrieval/run/shiftbench.json").read_text())
    protocol = record["protocol"]
    assert protocol["name"] == "hteb"
    assert protocol["settings"]["seeds"] == [1337, 1338, 1339]
    assert len(protocol["settings"]["transforms"]) == 8
    assert protocol["overridden"] == ["temperature"]
    assert len(record["configs"]) == 1 + 8 * 3
    assert record["configs"]["paraphrase-s1339.en"]["rows"] == {"test": 2, "corpus.test": 2}


def test_a_spec_gives_prompt_files_for_one_step_read_from_its_folder(invoke, scripted, tmp_path):
    """prompt_file takes gen's three forms, one string or a list; FILE is read from the
    spec's folder, TRANSFORM:STEP=FILE reaches the second call of backtranslation."""
    from support.scripted_backend import ScriptedBackend

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "back.txt").write_text(
        "Put this back into {language}, please.\n\n{text}", encoding="utf-8"
    )
    (tmp_path / "prompts" / "para.txt").write_text("Say it again: {text}", encoding="utf-8")
    spec = write_spec(
        tmp_path,
        """
        output: out
        sources:
          - name: sample
            limit: 1
        transforms: [paraphrase, backtranslation]
        seeds: [1]
        prompt_file: [paraphrase=prompts/para.txt, "backtranslation:2=prompts/back.txt"]
        generator:
          backend: scripted
        """,
    )
    result = invoke("run", spec, "--until", "gen", "-q")
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "out/sample/run/shiftbench.json").read_text(encoding="utf-8"))
    origins = {
        name: [p["origin"] for p in c["prompts"]]
        for name, c in meta["configs"].items()
        if c["kind"] == "transform"
    }
    assert origins == {
        "paraphrase-s1": [str(tmp_path / "prompts" / "para.txt")],
        "backtranslation-s1": ["shiftbench:translate.txt", str(tmp_path / "prompts" / "back.txt")],
    }
    assert any(p.startswith("Put this back into English, please.") for p in ScriptedBackend.prompts)
    assert any(p.startswith("Say it again: ") for p in ScriptedBackend.prompts)

    # one string is a one-item list; a step the transform lacks is bad input, nothing written
    text = spec.read_text(encoding="utf-8")
    spec.write_text(
        text.replace(
            'prompt_file: [paraphrase=prompts/para.txt, "backtranslation:2=prompts/back.txt"]',
            "prompt_file: backtranslation:3=prompts/back.txt",
        ).replace("output: out", "output: out2"),
        encoding="utf-8",
    )
    result = invoke("run", spec, "--until", "gen")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: [gen] sample: --prompt-file backtranslation:3={tmp_path}/prompts/back.txt: "
        "backtranslation has 2 steps\n",
    )
    assert not (tmp_path / "out2").exists()


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("rewrite: [queries, documents]",
         "spec.yaml:4: rewrite[1]: unknown part 'documents'; parts: queries, corpus, train, "
         "references"),
        ("protocol: htb",
         "spec.yaml:4: protocol: unknown protocol 'htb'; available: shiftbench, pteb, hteb; "
         "did you mean hteb?"),
        ("transforms: []", "spec.yaml:4: transforms: names no transform"),
    ],
)  # fmt: skip
def test_a_bad_protocol_or_part_in_a_spec_is_one_line(invoke, tmp_path, key, message):
    spec = write_spec(tmp_path, f"output: o\nsources: [{{name: sample}}]\ngenerator: {{}}\n{key}\n")
    result = invoke("run", spec, "--dry-run")
    assert (result.exit_code, result.stderr) == (2, f"Error: {spec.parent / message}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


def test_a_missing_spec_is_bad_input(invoke, tmp_path):
    result = invoke("run", tmp_path / "nope.yaml")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: spec {tmp_path}/nope.yaml does not exist\n",
    )


def test_init_writes_every_default_in_one_place(invoke, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("init")
    assert (result.exit_code, result.stdout) == (
        0, "wrote shiftbench.yaml; run it with: shiftbench run shiftbench.yaml\n")  # fmt: skip
    assert invoke("init").stderr == "Error: shiftbench.yaml exists; pass --force to replace it\n"
    starter = Path("shiftbench.yaml").read_text(encoding="utf-8")
    as_written = read_spec(Path("shiftbench.yaml")).values
    # every commented key shows its default: uncommenting all of them changes nothing
    keys = "|".join({f.key for s in SECTIONS for f in s.fields} | {f.key for f in TOP_FIELDS})
    uncommented = re.sub(rf"^(\s*)# (- )?(({keys}): )", r"\1\2\3", starter, flags=re.M)
    assert uncommented.count("\n") == starter.count("\n")
    Path("all.yaml").write_text(uncommented, encoding="utf-8")
    assert read_spec(Path("all.yaml")).values == as_written
    shown = yaml.safe_load(uncommented)
    # temperature and top_p left out take the protocol's, as gen's options do
    assert shown["generator"]["temperature"] is None and shown["human_eval"]["raters"] == 3
    assert "# temperature: null" in starter and "shiftbench: 0.7" in starter
    assert shown["validate"]["judge_modes"] == ["similarity", "quality"]
    assert as_written["sources"] == [
        {"name": "sample", "folder": None, "task_type": None, "data_dir": None, "subsets": [],
         "splits": [], "limit": None, "source_language": None}
    ]  # fmt: skip


def test_dry_run_prints_the_plan_and_writes_nothing(invoke, scripted, shared_data, tmp_path):
    spec = stsb_spec(tmp_path, shared_data)
    result = invoke("run", spec, "--dry-run")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        f"spec {spec} (sha256 {hashlib.sha256(spec.read_bytes()).hexdigest()[:16]}"
    )
    assert lines[0].endswith("stages gen, validate, human-eval, card")
    assert lines[1] == (
        "generator: scripted (default model); protocol shiftbench; transforms "
        "paraphrase, summarisation; seeds 1, 2"
    )
    table = {line.split()[0]: line.split()[1:] for line in lines[4:7]}
    # configs, texts, calls, cached, shared, to make: STSBenchmark's 6 rows hold 12 texts
    # (none repeated) and the sample's 42 rows 84, each sent once per transform and seed
    assert table["STSBenchmark"][:6] == ["4", "48", "48", "0", "0", "48"]
    assert table["sample"][:6] == ["4", "336", "336", "0", "0", "336"]
    assert table["all"] == ["8", "384", "384", "0", "0", "384"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


def test_the_validation_gate_stops_the_run(invoke, scripted, shared_data, tmp_path):
    # the scripted generator's "summaries" are longer than their inputs: every one fails
    spec = stsb_spec(tmp_path, shared_data, "validate:\n  max_error_rate: 0.05\n")
    result = invoke("run", spec, "-q")
    assert result.exit_code == 1
    exceed = ("2 configs exceed --max-error-rate 5.0%: run/summarisation-s1 (100.0%), "
              "run/summarisation-s2 (100.0%)")  # fmt: skip
    assert result.stderr == (
        f"Error: stopped at the validation gate (validate.max_error_rate 0.05): STSBenchmark: "
        f"{exceed}; sample: {exceed}; the reports are in each run folder's validation.md\n"
    )
    out = tmp_path / "out"
    for name in ("STSBenchmark", "sample"):
        assert sorted(json.loads((out / name / "state.json").read_text())) == ["gen"]
        assert (out / name / "run" / "validation.md").is_file()
        assert not (out / name / "human-eval").exists()
    # a gate that lets them through goes on from validation
    spec.write_text(spec.read_text().replace("0.05", "1.0"), encoding="utf-8")
    result = invoke("run", spec, "-q", "--until", "human-eval")
    assert result.exit_code == 0, result.stderr
    assert "[gen] sample: finished earlier, skipped" in result.stdout
    assert "[validate] sample: running" in result.stdout


def test_human_eval_batches_with_ratings_are_never_replaced(
    invoke, scripted, shared_data, tmp_path
):
    spec = stsb_spec(tmp_path, shared_data)
    assert invoke("run", spec, "-q", "--until", "human-eval").exit_code == 0
    ratings = tmp_path / "out" / "sample" / "human-eval" / "ratings.jsonl"
    ratings.write_text('{"item_id": "x", "rater_id": "r", "criterion": "quality", "rating": 3}\n')
    spec.write_text(spec.read_text().replace("per_stratum: 4", "per_stratum: 5"), encoding="utf-8")
    result = invoke("run", spec, "-q")
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: [human-eval] sample: {ratings.parent} already holds ratings and its settings "
        "changed (human_eval.per_stratum 4 -> 5); move it away to make new batches\n"
    )


def test_until_publish_needs_a_release_repo(invoke, tmp_path):
    spec = write_spec(
        tmp_path, "output: o\nsources: [{name: sample}]\ntransforms: [paraphrase]\nseeds: [1]\n"
    )
    result = invoke("run", spec, "--until", "publish")
    assert (result.exit_code, result.stderr) == (
        2, "Error: --until publish: the spec names no release.repo to publish to\n")  # fmt: skip
    assert not (tmp_path / "o").exists()
    result = invoke("run", spec, "--until", "judge")
    assert result.exit_code == 2
    assert (
        "'judge' is not one of 'gen', 'validate', 'human-eval', 'evaluate', 'card', 'publish'"
        in result.stderr
    )


def test_a_release_without_a_token_stops_before_any_work(invoke, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    spec = write_spec(
        tmp_path,
        """
        output: o
        sources: [{name: sample}]
        transforms: [paraphrase]
        seeds: [1]
        release: {repo: my-org/x, version: 1.0.0}
        """,
    )
    result = invoke("run", spec)
    message = "no Hugging Face token: set HF_TOKEN or log in with 'hf auth login' first"
    assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n")
    assert not (tmp_path / "o").exists()
    assert invoke("run", spec, "--until", "card", "--dry-run").exit_code == 0
