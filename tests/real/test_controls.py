"""Rule-based controls and the negation control: the rules, determinism, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.controls import NO_GENERATOR, RULES, _files, _gen, _mrpc
from support.environment import ENCODER
from support.files import read_rows

from shiftbench.core.text.transforms import CONTROLS
from shiftbench.gen.controls import (
    FUNCTION_VERBS,
    PARTS_OF_SPEECH,
    TOKEN,
    WORD,
    inflect,
)


@pytest.fixture(scope="module")
def mrpc_controls(tmp_path_factory, shared_data, wordnet_dir) -> Path:
    """Every rule-based control of MRPC's test split (1724 pairs), seed 1."""
    out = tmp_path_factory.mktemp("controls") / "mrpc"
    rules = ",".join(RULES)
    _gen(CliRunner(), *_mrpc(shared_data), "-t", rules, "-s", "1", "--wordnet-dir",
         wordnet_dir, *NO_GENERATOR, "-q", "-o", out)  # fmt: skip
    return out


@pytest.mark.parametrize("dataset", ["MRPC", "STSBenchmark"])
def test_controls_are_byte_identical_across_runs(
    dataset, shared_data, wordnet_dir, tmp_path, mrpc_controls
):
    """The whole test split, every rule: a second run in a fresh process state writes the
    same bytes (data, shiftbench.json, card); no generator is loaded or contacted."""
    if dataset == "MRPC":
        args, first = _mrpc(shared_data), mrpc_controls
    else:
        args = ["STSBenchmark", "--data-dir", shared_data / "STSBenchmark"]
        first = tmp_path / "first"
        _gen(CliRunner(), *args, "-t", ",".join(RULES), "-s", "1", "--wordnet-dir",
             wordnet_dir, *NO_GENERATOR, "-q", "-o", first)  # fmt: skip
    from shiftbench.gen.controls import _tags

    _tags.cache_clear()
    again = tmp_path / "again"
    out = _gen(CliRunner(), *args, "-t", ",".join(RULES), "-s", "1", "--wordnet-dir",
               wordnet_dir, *NO_GENERATOR, "-q", "-o", again)  # fmt: skip
    assert out.startswith("wrote original, synonym-swap-1-s1, synonym-swap-2-s1, ")
    assert _files(first) == _files(again)
    meta = json.loads((again / "shiftbench.json").read_text(encoding="utf-8"))
    rows = 1724 if dataset == "MRPC" else 1379
    for name in RULES:
        config = meta["configs"][f"{name}-s1"]
        assert config["kind"] == "control"
        assert config["meaning"] == CONTROLS[name].meaning
        assert config["axis"] is None
        assert sum(config["status_counts"]["test"].values()) == rows
        assert "model" not in config and "backend" not in config
        if name.startswith("word-jumble"):
            assert "lexicon" not in config
        else:
            lexicon = config["lexicon"]
            assert lexicon["wordnet"]["version"] == "3.0"
            assert len(lexicon["wordnet"]["sha256"]) == 64
            assert lexicon["parts_of_speech"] == ["verb", "adjective"]
    # most MRPC rows offer a verb or adjective with a synonym in both sentences; fewer of
    # STSBenchmark's short captions do once a synonym must come from a sense with 40% of
    # the word's uses ("playing", "riding": 1043 rows ok before that filter, 488 after)
    counts = meta["configs"]["synonym-swap-1-s1"]["status_counts"]["test"]
    assert counts["ok"] > {"MRPC": 0.7, "STSBenchmark": 0.3}[dataset] * rows


def test_another_seed_gives_other_outputs(shared_data, wordnet_dir, tmp_path, mrpc_controls):
    out = tmp_path / "s2"
    _gen(CliRunner(), *_mrpc(shared_data), "-t", "synonym-swap-1,word-jumble-1", "-s", "2",
         "--limit", "200", "--wordnet-dir", wordnet_dir, "-q", "-o", out)  # fmt: skip
    for name in ("synonym-swap-1", "word-jumble-1"):
        seed1 = read_rows(mrpc_controls / f"{name}-s1" / "test.jsonl")[:200]
        seed2 = read_rows(out / f"{name}-s2" / "test.jsonl")
        both = [(a, b) for a, b in zip(seed1, seed2, strict=True) if a["status"] == "ok"]
        assert sum(a["sentence1"] != b["sentence1"] for a, b in both) > len(both) // 4


def _tagged(text: str) -> list[tuple[str, str]]:
    from shiftbench.gen.controls import _tags

    tokens = TOKEN.findall(text)
    return list(zip(tokens, _tags(tuple(tokens)), strict=True))


def _case(word: str) -> str:
    return (
        "upper" if len(word) > 1 and word.isupper() else "title" if word[0].isupper() else "lower"
    )


@pytest.mark.parametrize("name", ["synonym-swap-1", "synonym-swap-2", "synonym-swap-3"])
def test_synonym_swap_keeps_part_of_speech_inflection_and_case(name, mrpc_controls, wordnet_dir):
    """Exactly n words change (besides a/an before them); each is a verb or adjective, and
    its replacement is a WordNet synonym of its lemma in the same part of speech, in the
    same inflection (walked -> strolled) and the same case."""
    from shiftbench.gen.wordnet import open_wordnet

    wn = open_wordnet(str(wordnet_dir)).reader
    count = CONTROLS[name].count
    checked = 0
    for row in read_rows(mrpc_controls / f"{name}-s1" / "test.jsonl"):
        for field in ("sentence1", "sentence2"):
            if row[f"status_{field}"] != "ok":
                assert row[field] == ""  # never a copy of the original
                assert row[f"status_{field}"] == "not-applicable"
                continue
            before = _tagged(row[f"original_{field}"])
            after = TOKEN.findall(row[field])
            assert len(before) == len(after)
            changed = [
                i for i, ((a, _), b) in enumerate(zip(before, after, strict=True))
                if a != b and a.lower() not in ("a", "an")
            ]  # fmt: skip
            assert len(changed) == count, (row[f"original_{field}"], row[field])
            for i in changed:
                word, tag = before[i]
                new = after[i]
                pos = next(p for p in ("verb", "adjective") if tag in PARTS_OF_SPEECH[p][1])
                letter = PARTS_OF_SPEECH[pos][0]
                assert word.lower() not in FUNCTION_VERBS
                lemma = wn.morphy(word.lower(), letter)
                forms = {
                    (inflect(n.name(), tag) or "").lower()
                    for s in wn.synsets(lemma, pos=letter)
                    for n in s.lemmas()
                }
                assert new.lower() in forms and new.lower() != word.lower()
                assert _case(new) == _case(word)
                checked += 1
        assert row["status"] == next(
            (row[f"status_{f}"] for f in ("sentence1", "sentence2") if row[f"status_{f}"] != "ok"),
            "ok",
        )
    assert checked > 500


def test_antonym_swap_uses_a_wordnet_antonym(mrpc_controls, wordnet_dir):
    from shiftbench.gen.wordnet import open_wordnet

    wn = open_wordnet(str(wordnet_dir)).reader
    checked = 0
    for row in read_rows(mrpc_controls / "antonym-swap-s1" / "test.jsonl"):
        if row["status_sentence1"] != "ok":
            continue
        before = _tagged(row["original_sentence1"])
        after = TOKEN.findall(row["sentence1"])
        changed = [i for i, ((a, _), b) in enumerate(zip(before, after, strict=True))
                   if a != b and a.lower() not in ("a", "an")]  # fmt: skip
        assert len(changed) == 1
        word, tag = before[changed[0]]
        letter = "v" if tag.startswith("VB") else "a"
        lemma = wn.morphy(word.lower(), letter)
        antonyms = {
            (inflect(a.name(), tag) or "").lower()
            for s in wn.synsets(lemma, pos=letter)
            for n in s.lemmas()
            if n.name().lower() == lemma
            for a in n.antonyms()
        }
        assert after[changed[0]].lower() in antonyms
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("pairs", [1, 2, 3])
def test_word_jumble_is_a_permutation_of_the_words(pairs, mrpc_controls):
    """The same words, each pair swapped exactly once: 2n words move, and punctuation and
    spacing stay where they were."""
    jumbled = 0
    for row in read_rows(mrpc_controls / f"word-jumble-{pairs}-s1" / "test.jsonl"):
        for field in ("sentence1", "sentence2"):
            original, made = row[f"original_{field}"], row[field]
            if row[f"status_{field}"] != "ok":
                assert made == ""
                continue
            a, b = WORD.findall(original), WORD.findall(made)
            assert sorted(a) == sorted(b)
            assert WORD.sub("", original) == WORD.sub("", made)
            assert sum(x != y for x, y in zip(a, b, strict=True)) == 2 * pairs
            jumbled += 1
    assert jumbled > 3000


def test_evaluate_leaves_controls_to_probe(invoke, tmp_path, scripted):
    run = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "paraphrase,word-jumble-1", "-b", "scripted", "-q",
                    "-o", run)  # fmt: skip
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", ENCODER, "-q", "--no-plots", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        "1 control config (word-jumble-1-s1337) is left to 'shiftbench probe'"
    )
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    configs = [r["config"] for r in doc["models"][0]["results"]]
    assert configs == ["original", "paraphrase-s1337"]
    # the card names the control as one, with its rule
    assert invoke("card", run).exit_code == 0
    card = (run / "README.md").read_text(encoding="utf-8")
    assert (
        "| `word-jumble-1-s1337` | word-jumble-1 | control (meaning changed) | 1337 | - | "
        "42 test | ok 42 |"
    ) in card
    assert "- `word-jumble-1-s1337`: 1 random pair of words swapped (meaning changed)" in card
