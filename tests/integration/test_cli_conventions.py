"""The command line's conventions: -v and -q before or after the command's name, `list`
to see what can be named, and a mistyped spec key answered with the closest keys."""

from __future__ import annotations

import json

import click
from support.run import write_spec

from shiftbench.cli import cli
from shiftbench.core.protocols import PROTOCOLS
from shiftbench.core.text.transforms import REGISTERED
from shiftbench.llm.backends import BACKENDS

JUMBLE = ("sample", "-t", "word-jumble-1", "--limit", "2")


def command_paths(group: click.Group, words: tuple[str, ...] = ()):
    """(words after `shiftbench`, command) of every command and subgroup."""
    for name, command in group.commands.items():
        yield (*words, name), command
        if isinstance(command, click.Group):
            yield from command_paths(command, (*words, name))


def test_v_after_the_command_shows_what_v_before_it_shows(invoke, tmp_path):
    before = invoke("-v", "gen", *JUMBLE, "-o", tmp_path / "a")
    after = invoke("gen", *JUMBLE, "-v", "-o", tmp_path / "b")
    assert (before.exit_code, after.exit_code) == (0, 0)
    step = "gen sample: 1 variant(s) (word-jumble-1-s1337), rewriting queries, into {}"
    assert before.stderr.splitlines() == [step.format(tmp_path / "a")]
    assert after.stderr.splitlines() == [step.format(tmp_path / "b")]
    assert after.stdout == f"wrote original, word-jumble-1-s1337 to {tmp_path / 'b'}\n"
    plain = invoke("gen", *JUMBLE, "-o", tmp_path / "c")
    assert (plain.exit_code, plain.stderr) == (0, "")  # the level goes back for the next command


def test_q_before_the_command_silences_what_q_after_it_silences(
    invoke, scripted, tmp_path, monkeypatch
):
    from shiftbench.core import progress

    monkeypatch.setattr(progress, "PLAIN_AFTER", 0.0)  # progress shows at once, as plain lines
    args = ("sample", "-t", "paraphrase", "-s", "1", "-b", "scripted", "--limit", "4")
    shown = invoke("gen", *args, "-o", tmp_path / "a")
    assert shown.exit_code == 0
    assert "paraphrase-s1: 8/8 texts (100%) in " in shown.stderr  # progress without -q
    after = invoke("gen", *args, "-q", "-o", tmp_path / "b")
    before = invoke("-q", "gen", *args, "-o", tmp_path / "c")
    assert (after.exit_code, after.stderr) == (before.exit_code, before.stderr) == (0, "")
    assert before.stdout == after.stdout.replace(str(tmp_path / "b"), str(tmp_path / "c"))


def test_every_command_takes_v_after_its_name_and_q_before_it(invoke):
    for words, command in command_paths(cli):
        assert "verbose" in {p.name for p in command.params}, words
        assert invoke(*words, "-v", "--help").exit_code == 0, words
        assert invoke("-q", *words, "--help").exit_code == 0, words


def test_list_transforms_is_the_registry_one_per_line(invoke):
    result = invoke("list", "transforms")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(REGISTERED)
    assert lines[0] == (
        "paraphrase              Lexical/Stylistic  rephrase in the same language, same meaning"
    )
    assert lines[list(REGISTERED).index("word-jumble-1")] == (
        "word-jumble-1           control            1 random pair of words swapped; meaning changed"
    )


def test_list_transforms_json_carries_each_transforms_fields(invoke):
    result = invoke("list", "transforms", "--json")
    assert result.exit_code == 0
    entries = json.loads(result.stdout)
    assert entries == [
        {"name": t.name, "axis": "control" if t.control else t.axis,
         "description": t.description, "calls": t.calls,
         "meaning": t.meaning if t.control else None}
        for t in REGISTERED.values()
    ]  # fmt: skip
    assert entries[1] == {
        "name": "backtranslation", "axis": "Lexical/Stylistic",
        "description": "translate to a pivot language, then back to the source language",
        "calls": 2, "meaning": None,
    }  # fmt: skip


def test_list_protocols_backends_and_presets(invoke):
    protocols = invoke("list", "protocols")
    assert protocols.exit_code == 0
    assert protocols.stdout.splitlines() == [
        f"{p.name.ljust(10)}  {p.description}" for p in PROTOCOLS.values()
    ]
    backends = invoke("list", "backends")
    assert backends.exit_code == 0
    assert backends.stdout.splitlines()[:2] == [
        "embedded  default  The embedded backend: a causal LM run in this process (no server; "
        "CPU works).",
        "ollama             Ollama, through the official `ollama` Python client.",
    ]
    listed = json.loads(invoke("list", "backends", "--json").stdout)
    assert [(b["name"], b["default"]) for b in listed] == [
        (name, name == "embedded") for name in BACKENDS
    ]
    presets = json.loads(invoke("list", "presets", "--json").stdout)
    assert [p["name"] for p in presets] == list(PROTOCOLS)
    hteb = presets[2]["settings"]
    assert (hteb["seeds"], hteb["top_k"], hteb["subsets"], hteb["precision"]) == (
        [1337, 1338, 1339],
        64,
        "pooled",
        "bfloat16",
    )
    assert invoke("list", "presets").stdout.splitlines()[0] == (
        "shiftbench  transforms: paraphrase; seeds: 1337; temperature: 0.7; top_p: 0.95; "
        "top_k: none; max_attempts: 3; token_budgets: grown; rewrite: *=queries; "
        "classification_scoring: mteb; retrieval_scoring: mteb; failed_rows: left-out; "
        "clustering_scoring: mteb; subsets: averaged; precision: float32; main_scores: none"
    )


def test_a_mistyped_spec_key_gets_the_closest_keys(invoke, tmp_path):
    spec = write_spec(
        tmp_path,
        """
        output: out
        sources:
          - name: sample
            limt: 3
        transforms: [paraphrase]
        """,
    )
    result = invoke("run", spec)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {spec}:4: sources[0].limt: unknown key; allowed here: data_dir, folder, limit, "
        "name, source_language, splits, subsets, task_type; did you mean limit, splits?\n"
    )
    spec.write_text("output: out\nsources: [{name: sample}]\ntransfroms: [paraphrase]\n")
    result = invoke("run", spec)
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "spec.yaml:3: transfroms: unknown key; allowed here: cache_dir, control_pos, evaluate, "
        "generator, hteb_prompts, human_eval, languages, output, prompt_file, prompt_variant, "
        "protocol, release, rewrite, scale, seeds, sources, transforms, validate, wordnet_dir; "
        "did you mean transforms?\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]
