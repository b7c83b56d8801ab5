"""Output a user can act on: validation's per-row files hold the texts, validation.md
lists the worst rows, a refusal names what differs, a short human-eval batch says so,
and a card calls rule-based controls what they are."""

from __future__ import annotations

import json
from pathlib import Path

from support.environment import ENCODER
from support.files import read_rows

SAMPLE = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
FIELDS = ("sentence1", "sentence2")


def _gen(invoke, out: Path, *args) -> None:
    result = invoke("gen", "sample", "-q", "-o", out, *args)
    assert result.exit_code == 0, result.output


def test_validation_rows_carry_the_original_and_the_output(scripted, invoke, tmp_path):
    run = tmp_path / "run"
    _gen(invoke, run, "--limit", "2", "-t", "paraphrase", "-s", "1", "-b", "scripted")
    assert invoke("validate", run, "-q").exit_code == 0
    rows = read_rows(run / "validation" / "paraphrase-s1.jsonl")
    assert [list(r)[:5] for r in rows] == [["split", "row_id", "original", "output", "failed"]] * 2
    for row, source in zip(rows, SAMPLE, strict=False):
        assert row["original"] == {f: source[f] for f in FIELDS}
        assert row["output"] == {f: f"REWRITTEN {source[f]}" for f in FIELDS}


def test_validation_md_lists_the_worst_rows(scripted, invoke, tmp_path):
    """The rows of largest drift (each by its field of largest drift) and the first row of
    each failure kind, with config, row, original and output, cut and escaped."""
    scripted.script = {SAMPLE[1]["sentence1"]: ["..."], SAMPLE[2]["sentence2"]: ["a | b"]}
    run = tmp_path / "run"
    _gen(invoke, run, "--limit", "4", "-t", "paraphrase", "-s", "1", "-b", "scripted")
    result = invoke("validate", run, "--drift-encoder", f"mini={ENCODER}", "-q")
    assert result.exit_code == 0, result.output
    rows = read_rows(run / "validation" / "paraphrase-s1.jsonl")
    drift = []
    for row in rows:
        values = row["measures"]["drift:mini"]
        field = max(values, key=lambda f: values[f])
        drift.append((values[field], row["row_id"], field))
    drift.sort(key=lambda d: (-d[0], d[1]))

    def cut(text: str) -> str:
        return "`" + (text if len(text) <= 80 else text[:79] + "…") + "`"

    source = SAMPLE[1]["sentence1"]
    expected = [
        "## Worst rows",
        "",
        "The 5 rows of largest drift per drift measure (each by its field of largest drift), "
        "when drift was measured, and the first example of each failure kind found; texts "
        "cut to 80 characters. validation/<config>.jsonl holds every row's texts beside its "
        "results.",
        "",
        "| config | row | field | why | original | output |",
        "|---|---|---|---|---|---|",
        *(
            f"| paraphrase-s1 | test {i} | {f} | drift:mini {value:.3f} | "
            f"{cut(rows[i]['original'][f])} | {cut(rows[i]['output'][f])} |".replace(
                "a | b", "a \\| b"
            )
            for value, i, f in drift
        ),
        f"| paraphrase-s1 | test 1 | sentence1 | ellipsis | {cut(source)} | `...` |",
        f"| paraphrase-s1 | test 1 | sentence1 | truncated | {cut(source)} | `...` |",
        "",
    ]
    text = (run / "validation.md").read_text(encoding="utf-8")
    start = text.index("## Worst rows")
    assert text[start:].splitlines()[: len(expected)] == expected
    assert "a \\| b" in text  # a cell's | is escaped


def test_refusals_name_the_setting_that_differs(scripted, invoke, tmp_path):
    run = tmp_path / "run"
    _gen(invoke, run, "--limit", "2", "-t", "paraphrase", "-b", "scripted")
    other = invoke("gen", "sample", "--limit", "3", "-t", "paraphrase", "-b", "scripted",
                   "-q", "-o", run)  # fmt: skip
    assert (other.exit_code, other.stderr) == (
        2,
        f"Error: output {run} holds a run of sample with other source settings (row_limit 2 -> 3); "
        "choose another --output\n",
    )
    hotter = invoke("gen", "sample", "--limit", "2", "-t", "paraphrase", "-b", "scripted",
                    "--temperature", "0.2", "-q", "-o", run)  # fmt: skip
    assert (hotter.exit_code, hotter.stderr) == (
        2,
        f"Error: config 'paraphrase-s1337' already exists in {run} with other settings "
        "(sampling.temperature 0.7 -> 0.2); pass --overwrite to replace it\n",
    )


def test_merge_names_the_setting_that_differs(scripted, invoke, tmp_path):
    base = ["gen", "sample", "--limit", "4", "-t", "paraphrase", "-b", "scripted", "-q"]
    assert invoke(*base, "--shard", "0/2", "-o", tmp_path / "s0").exit_code == 0
    assert invoke(*base, "--shard", "1/2", "-s", "9", "-o", tmp_path / "s1").exit_code == 0
    again = invoke(*base, "--shard", "1/2", "-o", tmp_path / "s0")
    assert (again.exit_code, again.stderr) == (
        2,
        f"Error: output {tmp_path / 's0'} holds shard 0/2 of this source, not shard 1/2; "
        "choose another --output\n",
    )
    result = invoke("merge", tmp_path / "s0", tmp_path / "s1", "-o", tmp_path / "merged")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {tmp_path / 's1'} was made with other settings than {tmp_path / 's0'} "
        f"(config paraphrase-s9 only in {tmp_path / 's1'}, config paraphrase-s1337 only in "
        f"{tmp_path / 's0'})\n",
    )


def test_a_batch_short_of_items_says_so(scripted, invoke, tmp_path):
    run, batch = tmp_path / "run", tmp_path / "batch"
    _gen(invoke, run, "--limit", "3", "-t", "paraphrase", "-b", "scripted")
    result = invoke("human-eval", "batch", run, "-o", batch, "--per-stratum", "20", "--raters", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"wrote 1 batch of 8 items to {batch} (paraphrase 6; controls 2 per batch)",
        "fewer items than the 20 asked per stratum, all there were: paraphrase 6",
    ]
    description = json.loads((batch / "batch.json").read_text(encoding="utf-8"))
    assert description["short_strata"] == {"paraphrase": {"asked": 20, "sampled": 6}}


def test_the_card_calls_controls_rule_based(invoke, tmp_path):
    run = tmp_path / "run"
    _gen(invoke, run, "--limit", "2", "-t", "word-jumble-1")
    readme = (run / "README.md").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("Rule-based controls of the STS dataset `") for line in readme)
    assert "| `word-jumble-1-s1337` | word-jumble-1 | control | 1337 | 2 | ok 2 |" in readme
    assert invoke("card", run).exit_code == 0
    card = (run / "README.md").read_text(encoding="utf-8")
    assert "\nRule-based controls of a local STS dataset folder named " in card
    assert "LLM-rewritten" not in card and "LLM-transformed" not in card


def test_the_worst_rows_skip_a_kept_rows_file_without_its_texts(scripted, invoke, tmp_path):
    """A config kept from an earlier validation is read from its rows file, which may come
    from an older version or another person's hands: a line without its texts as objects
    is left out of the list, never a crash."""
    run = tmp_path / "run"
    _gen(invoke, run, "--limit", "2", "-t", "paraphrase", "-s", "1", "-s", "2", "-b", "scripted")
    drift = ("--drift-encoder", f"mini={ENCODER}", "-q")
    assert invoke("validate", run, *drift).exit_code == 0
    kept = run / "validation" / "paraphrase-s2.jsonl"
    rows = read_rows(kept)
    rows[0]["original"] = ["not", "an", "object"]
    rows[1]["measures"] = "none"
    kept.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = invoke("validate", run, "--config", "paraphrase-s1", *drift)
    assert result.exit_code == 0, result.output
    table = (run / "validation.md").read_text(encoding="utf-8").split("## Worst rows")[1]
    assert "| paraphrase-s1 | test 0 |" in table and "| paraphrase-s2 |" not in table
