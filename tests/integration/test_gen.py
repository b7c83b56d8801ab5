"""gen end to end with the embedded model, and the engine's guarantees with a scripted one."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from support.files import read_rows


def test_crash_keeps_finished_rows_and_resume_uses_them(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    scripted.fail_from_call = 2
    result = invoke("gen", "sample", "--limit", "3", "-b", "scripted", "-q", "-o", out)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: backend scripted failed 3 times; finished rows are cached "
        "(ConnectionError: scripted failure)\n"
    )
    assert not out.exists()
    done_before = list(scripted.calls[0])
    assert len(done_before) == 2
    # without a cache, the message does not promise one
    scripted.calls.clear()
    result = invoke("gen", "sample", "--limit", "3", "-b", "scripted", "-q", "--no-cache",
                    "-o", out)  # fmt: skip
    assert result.stderr == (
        "Error: backend scripted failed 3 times; nothing is kept (--no-cache) "
        "(ConnectionError: scripted failure)\n"
    )

    scripted.fail_from_call = None
    scripted.calls.clear()
    result = invoke("gen", "sample", "--limit", "3", "-b", "scripted", "-q", "-o", out)
    assert result.exit_code == 0, result.output
    asked_again = [t for call in scripted.calls for t in call]
    assert not set(asked_again) & set(done_before)
    assert len(asked_again) == 6 - 2
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert all(r["sentence1"] == f"REWRITTEN {r['original_sentence1']}" for r in rows)
    assert {r["status"] for r in rows} == {"ok"}


def test_a_retried_call_resends_only_the_unfinished_requests(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    scripted.fail_once_after = 1
    result = invoke("gen", "sample", "--limit", "1", "-b", "scripted", "-q", "-o", out)
    assert result.exit_code == 0, result.output
    first, second = scripted.calls
    assert len(first) == 2 and second == first[1:]
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert rows[0]["sentence1"] == f"REWRITTEN {rows[0]['original_sentence1']}"
    assert rows[0]["sentence2"] == f"REWRITTEN {rows[0]['original_sentence2']}"


def test_failed_row_keeps_status_and_is_never_the_original(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    first = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")[0]
    scripted.empty_for = {first["sentence2"]}
    result = invoke("gen", "sample", "--limit", "2", "-b", "scripted", "-q", "-o", out)
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert rows[0]["status"] == "empty"
    assert rows[0]["sentence2"] == ""
    assert rows[0]["original_sentence2"] == first["sentence2"]
    assert rows[0]["attempt"] == 3
    assert rows[1]["status"] == "ok"
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["configs"]["paraphrase-s1337"]["status_counts"] == {"test": {"empty": 1, "ok": 1}}


def test_identical_texts_are_generated_once(scripted, invoke, tmp_path):
    rows = [{"sentence1": "same words", "sentence2": "same words", "score": 1.0}] * 3
    folder = tmp_path / "dup"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "test.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test.jsonl\n---\n",
        encoding="utf-8",
    )
    result = invoke(
        "gen", folder, "--task-type", "STS", "-b", "scripted", "-q", "-o", tmp_path / "run"
    )
    assert result.exit_code == 0, result.output
    assert [t for call in scripted.calls for t in call] == ["same words"]


def test_second_seed_adds_a_config(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    assert invoke("gen", "sample", "--limit", "2", "-b", "scripted", "-q", "-o", out).exit_code == 0
    original = (out / "original" / "test.jsonl").read_bytes()
    result = invoke("gen", "sample", "--limit", "2", "-b", "scripted", "-s", "7", "-q", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote paraphrase-s7 to {out}\n"
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert list(meta["configs"]) == ["original", "paraphrase-s1337", "paraphrase-s7"]
    assert (out / "original" / "test.jsonl").read_bytes() == original
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("args", "config", "rewritten", "kept", "original_splits"),
    [
        (
            ["Banking77Classification", "--data-dir", "{data}/Banking77Classification"],
            "paraphrase-s1337",
            ["text"],
            ["label", "label_text"],
            ["test", "train"],
        ),
        (
            [
                "MasakhaNEWSClusteringS2S",
                "--data-dir",
                "{data}/MasakhaNEWSClusteringS2S",
                "--subset",
                "fra",
            ],
            "paraphrase-s1337.fra",
            ["sentences"],
            ["labels"],
            ["test"],
        ),
        (
            ["{data}/MRPC", "--task-type", "PairClassification"],
            "paraphrase-s1337",
            ["sentence1", "sentence2"],
            ["labels"],
            ["test"],
        ),
    ],
)
def test_each_row_task_type_rewrites_its_declared_fields(
    scripted, invoke, tmp_path, shared_data, args, config, rewritten, kept, original_splits
):
    out = tmp_path / "run"
    args = [a.format(data=shared_data) for a in args]
    result = invoke("gen", *args, "--limit", "3", "-b", "scripted", "-q", "-o", out)
    assert result.exit_code == 0, result.output
    base = config.replace("paraphrase-s1337", "original")
    assert sorted(p.stem for p in (out / base).iterdir()) == original_splits
    assert sorted(p.stem for p in (out / config).iterdir()) == ["test"]
    variant = datasets.load_dataset(str(out), config, split="test")
    assert variant.num_rows == 3
    for row in variant:
        for field in rewritten:
            assert row[field] == f"REWRITTEN {row['original_' + field]}"
        for field in kept:
            assert f"original_{field}" not in row and row[field] is not None


def test_outputs_failing_the_checks_are_regenerated_then_kept_with_their_reason(
    scripted, invoke, tmp_path
):
    sample = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
    a, b = sample[0]["sentence1"], sample[0]["sentence2"]
    scripted.script = {
        a: [a.upper(), f"Paraphrase: {a}", "A gardener waters her tomatoes."],
        b: [b, "<think>hmm</think> no", b + " " + "and so on " * 20],
    }
    out = tmp_path / "run"
    result = invoke(
        "gen",
        "sample",
        "--limit",
        "1",
        "-b",
        "scripted",
        "-q",
        "-o",
        out,
        "--max-failure-rate",
        "1",
    )
    assert result.exit_code == 0, result.output
    (row,) = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert row["sentence1"] == "A gardener waters her tomatoes."
    assert row["sentence2"] == b + " " + "and so on " * 20  # the last try, kept as it came
    assert (row["status"], row["attempt"]) == ("runaway", 3)
    assert [t for call in scripted.calls for t in call].count(a) == 3


def test_too_many_failed_rows_exit_1_but_keep_the_run(scripted, invoke, tmp_path):
    sample = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")[:2]
    scripted.empty_for = {sample[0]["sentence1"], sample[1]["sentence1"]}
    out = tmp_path / "run"
    args = ["gen", "sample", "--limit", "2", "-b", "scripted", "-q", "-o", out]
    result = invoke(*args, "--max-failure-rate", "0.5")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: 2 of 2 rows (100%) failed the checks, more than --max-failure-rate 0.5; they "
        f"are in {out} with their reasons\n"
    )
    assert {r["status"] for r in read_rows(out / "paraphrase-s1337" / "test.jsonl")} == {"empty"}
    result = invoke(*args, "--max-failure-rate", "1", "-s", "2")
    assert result.exit_code == 0, result.output


def test_an_unchanged_back_translation_is_kept_but_an_unchanged_paraphrase_fails(
    scripted, invoke, tmp_path
):
    (row,) = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")[:1]
    a, b = row["sentence1"], row["sentence2"]
    scripted.script = {
        # the paraphrase gives each text back three times over
        a: [a, a, a, *["Una mujer riega las tomateras."] * 3],
        b: [b, b, b, *["Una mujer riega tomateras."] * 3],
        # the back-translation's way back lands on the input again, every time
        "Una mujer riega las tomateras.": [a] * 3,
        "Una mujer riega tomateras.": [b] * 3,
    }
    out = tmp_path / "run"
    result = invoke(
        "gen", "sample", "--limit", "1", "-t", "paraphrase,backtranslation", "-b", "scripted",
        "-q", "-o", out, "--max-failure-rate", "0.4",
    )  # fmt: skip
    # only the paraphrase counts as failed: 1 of 2 rows
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: 1 of 2 rows (50%) failed the checks")

    (para,) = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert (para["status"], para["attempt"], para["sentence1"]) == ("identical", 3, a)
    (back,) = read_rows(out / "backtranslation-s1337" / "test.jsonl")
    assert (back["status"], back["attempt"]) == ("identical", 1)
    assert (back["sentence1"], back["sentence2"]) == (a, b)
    sent = [t for call in scripted.calls for t in call]
    assert sent.count("Una mujer riega las tomateras.") == 1  # not asked again
    configs = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))["configs"]
    assert configs["backtranslation-s1337"]["status_counts"] == {"test": {"identical": 1}}
    assert configs["paraphrase-s1337"]["status_counts"] == {"test": {"identical": 1}}


def test_a_row_identical_in_one_field_and_failed_in_another_is_a_failure(
    scripted, invoke, tmp_path
):
    (row,) = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")[:1]
    a, b = row["sentence1"], row["sentence2"]
    scripted.script = {a: ["Una mujer riega las tomateras."], "Una mujer riega las tomateras.": [a]}
    scripted.empty_for = {b}
    out = tmp_path / "run"
    args = ["gen", "sample", "--limit", "1", "-t", "backtranslation", "-b", "scripted", "-q"]
    assert invoke(*args, "-o", out, "--max-failure-rate", "1").exit_code == 0
    (back,) = read_rows(out / "backtranslation-s1337" / "test.jsonl")
    assert (back["status"], back["sentence1"], back["sentence2"]) == ("empty", a, "")


def test_an_output_cut_at_its_budget_is_asked_again_with_twice_the_budget(
    scripted, invoke, tmp_path
):
    rows = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")[:2]
    a = rows[0]["sentence1"]
    first = 48 + max(4 * len(a.split()), len(a) // 2)
    scripted.length_for = {a}
    out = tmp_path / "run"
    args = ["gen", "sample", "--limit", "2", "-b", "scripted", "--temperature", "0", "-q"]
    result = invoke(*args, "-o", out, "--max-failure-rate", "1")
    assert result.exit_code == 0, result.output
    asked = [n for text, n in scripted.budgets if text == a]
    assert first == 88
    assert asked == [88, 176, 352, 512]  # doubled until the cap
    top, other = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert (top["status"], top["finish_reason"], top["attempt"]) == ("truncated", "length", 1)
    assert top["sentence1"] == f"REWRITTEN {a}"  # kept, never the original
    assert (other["status"], other["finish_reason"]) == ("ok", "stop")
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    config = meta["configs"]["paraphrase-s1337"]
    assert config["status_counts"] == {"test": {"ok": 1, "truncated": 1}}
    assert (config["max_new_tokens"], config["budget_growth"]) == (512, 2)
    # Same seed on every budget of a call: a longer budget lets the same answer finish.
    seeds = [s for s in scripted.seeds if s[0] == a]
    assert len({seed for _, seed in seeds}) == 1


def test_max_new_tokens_above_the_default_cap_reaches_the_backend(scripted, invoke, tmp_path):
    a = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")[0]["sentence1"]
    scripted.length_for = {a}
    out = tmp_path / "run"
    result = invoke(
        "gen", "sample", "--limit", "1", "-b", "scripted", "--temperature", "0",
        "--max-new-tokens", "2000", "--max-failure-rate", "1", "-q", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    asked = [n for text, n in scripted.budgets if text == a]
    assert asked == [88, 176, 352, 704, 1408, 2000]
    config = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))["configs"]
    assert config["paraphrase-s1337"]["max_new_tokens"] == 2000


def test_embedded_sampler_cuts_to_top_k_then_top_p():
    """The embedded backend's sampler keeps the k likeliest tokens, renormalises them, and
    then keeps the smallest prefix holding top_p of that mass, as vLLM and llama.cpp cut:
    with probabilities 0.4, 0.3, 0.2, 0.1, top_k 3 leaves 4/9, 3/9, 2/9, and top_p 0.42
    then keeps the first token alone (without the renormalisation it would keep two)."""
    import torch

    from shiftbench.llm.backends.embedded import _GumbelSampler

    scores = torch.log(torch.tensor([[0.4, 0.3, 0.2, 0.1]]))
    seeds = range(300)
    picked = {
        int(_GumbelSampler([s], 1.0, 0.42, 3)(None, scores).argmax()) for s in seeds
    }  # fmt: skip
    assert picked == {0}
    picked = {int(_GumbelSampler([s], 1.0, 1.0, 3)(None, scores).argmax()) for s in seeds}
    assert picked == {0, 1, 2}
    picked = {int(_GumbelSampler([s], 1.0, 1.0, None)(None, scores).argmax()) for s in seeds}
    assert picked == {0, 1, 2, 3}
