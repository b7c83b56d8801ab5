"""Rule-based controls and the negation control: the rules, determinism, bad input."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support.controls import NO_GENERATOR, RULES, _files, _gen, _mrpc
from support.files import read_rows, write_folder

from shiftbench.core.text.transforms import CONTROLS
from shiftbench.gen.controls import (
    inflect,
    match_case,
)


def test_rules_on_known_sentences(tmp_path, wordnet_dir):
    """Exact outputs and not-applicable rows, from a local STS folder."""
    rows = [
        {"sentence1": "Large dogs bark loudly.", "sentence2": "Yes.", "score": 1.0},
        {"sentence1": "The museum is closed on Mondays.", "sentence2": "go go go", "score": 2.0},
        {"sentence1": "One two", "sentence2": "", "score": 3.0},
    ]
    folder = write_folder(tmp_path / "tiny", rows)
    out = tmp_path / "run"
    _gen(CliRunner(), folder, "--task-type", "STS", "-t", ",".join(RULES), "-s", "1",
         "--wordnet-dir", wordnet_dir, *NO_GENERATOR, "-q", "-o", out)  # fmt: skip

    def field(name, i, f="sentence1"):
        row = read_rows(out / f"{name}-s1" / "test.jsonl")[i]
        return row[f], row[f"status_{f}"]

    assert field("synonym-swap-1", 0) == ("Big dogs bark loudly.", "ok")  # case kept
    assert field("antonym-swap", 0) == ("Small dogs bark loudly.", "ok")
    assert field("antonym-swap", 1) == ("The museum is opened on Mondays.", "ok")  # VBN kept
    assert field("synonym-swap-1", 0, "sentence2") == ("", "not-applicable")
    assert field("synonym-swap-2", 0) == ("", "not-applicable")  # one eligible word only
    assert field("word-jumble-1", 1, "sentence2") == ("", "not-applicable")  # no two differ
    assert field("word-jumble-1", 2) == ("two One", "ok")
    assert field("word-jumble-2", 2) == ("", "not-applicable")  # two words, one pair
    assert field("word-jumble-1", 2, "sentence2") == ("", "empty-input")


def test_case_and_inflection_helpers():
    assert match_case("Walked", "strolled") == "Strolled"
    assert match_case("NASA", "space") == "SPACE"
    assert match_case("walked", "Strolled") == "strolled"
    assert inflect("stroll", "VBD") == "strolled"
    assert inflect("big", "JJR") == "bigger"
    assert inflect("mend", "VBZ") == "mends"


def _fails(invoke, tmp_path, *args) -> str:
    out = tmp_path / "out"
    result = invoke("gen", *args, "-o", out)
    assert result.exit_code == 2, result.output
    assert not out.exists()
    (line,) = result.stderr.strip().splitlines()
    return line


def test_bad_control_input_is_one_line_and_exit_2(invoke, tmp_path, shared_data, wordnet_dir):
    assert _fails(invoke, tmp_path, "sample", "-t", "synonym-swap-1", "--control-pos",
                  "verb,colour") == (
        "Error: --control-pos takes parts of speech from verb, adjective, adverb, noun, "
        "not 'colour'"
    )  # fmt: skip
    assert _fails(invoke, tmp_path, "sample", "-t", "antonym-swap", "--wordnet-dir",
                  tmp_path) == (
        f"Error: WordNet folder {tmp_path} holds no WordNet database (no index.noun); it "
        "should be a WordNet 3.0 dict folder such as /usr/share/wordnet"
    )  # fmt: skip
    assert _fails(invoke, tmp_path, "sample", "-t", "antonym-swop") == (
        "Error: unknown transform 'antonym-swop'; available: paraphrase, backtranslation, "
        "style-change, expansion, summarisation, summarised-expansion, translation, "
        "cross-translation, synonym-swap-1, synonym-swap-2, synonym-swap-3, antonym-swap, "
        "word-jumble-1, word-jumble-2, word-jumble-3, negation, affirmative-paraphrase (groups: "
        "all, controls); did "
        "you mean antonym-swap, synonym-swap-3, synonym-swap-2?"
    )
    multilingual = ["STSBenchmarkMultilingualSTS", "--data-dir",
                    shared_data / "STSBenchmarkMultilingualSTS", "--subset", "de"]  # fmt: skip
    assert _fails(invoke, tmp_path, *multilingual, "-t", "synonym-swap-1", "--wordnet-dir",
                  wordnet_dir, *NO_GENERATOR) == (
        "Error: synonym-swap-1 looks words up in the English WordNet; "
        "STSBenchmarkMultilingualSTS[de] is in German"
    )  # fmt: skip


def test_no_wordnet_anywhere_says_how_to_get_one(invoke, tmp_path, monkeypatch):
    from shiftbench.gen import wordnet

    monkeypatch.delenv(wordnet.WORDNET_ENV, raising=False)
    monkeypatch.setattr(wordnet, "SYSTEM_FOLDERS", ())
    monkeypatch.setattr(wordnet, "_nltk_installed", lambda: None)
    wordnet._open.cache_clear()
    try:
        line = _fails(invoke, tmp_path, "sample", "-t", "synonym-swap-1")
    finally:
        wordnet._open.cache_clear()
    assert line == (
        "Error: WordNet is not installed: run python -m nltk.downloader wordnet, or point "
        "--wordnet-dir (or $SHIFTBENCH_WORDNET_DIR) at a WordNet 3.0 dict folder such as "
        "Debian's /usr/share/wordnet (apt install wordnet-base)"
    )


def test_word_jumble_needs_no_wordnet(invoke, tmp_path, monkeypatch):
    from shiftbench.gen import wordnet

    monkeypatch.setattr(wordnet, "_open", None)  # any use would fail
    result = invoke("gen", "sample", "-t", "word-jumble-1", *NO_GENERATOR, "-o", tmp_path / "r")
    assert result.exit_code == 0, result.output


def test_negation_is_an_llm_control(invoke, tmp_path, scripted):
    """negation goes through the backend with its own prompt; an output equal to its
    input, or one that neither adds nor removes a negation, is asked for again."""
    scripted.script["A woman is watering the tomato plants in her garden."] = [
        "A woman is watering the tomato plants in her garden.",
        "A woman is not watering the tomato plants in her garden.",
    ]
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "negation", "-b", "scripted", "--limit", "2", "-q",
                    "--max-failure-rate", "1", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    config = meta["configs"]["negation-s1337"]
    assert (config["kind"], config["meaning"], config["axis"]) == ("control", "changed", None)
    assert config["prompts"][0]["origin"] == "shiftbench:negation.txt"
    assert all(p.startswith("Negate the main statement") for p in scripted.prompts)
    first, second = read_rows(out / "negation-s1337" / "test.jsonl")
    assert first["sentence1"] == "A woman is not watering the tomato plants in her garden."
    assert first["status_sentence1"] == "ok"
    sent = [t for call in scripted.calls for t in call]
    assert sent.count(first["original_sentence1"]) == 2  # the identical reply, then the fix
    # a reply with as many negation cues as its input was reworded, not negated: asked
    # for again up to --max-attempts, then kept with that status
    assert second["sentence1"] == "REWRITTEN The train to Lyon left twenty minutes late."
    assert (second["status_sentence1"], second["attempt"]) == ("not-negated", 3)


AFFIRMATIVE_ROWS = [
    {"sentence1": "The museum is not open on Mondays.", "sentence2": "Mondays are busy.",
     "score": 4.5},
    {"sentence1": "Nobody answered the phone.", "sentence2": "The phone rang twice.",
     "score": 4.2},
    {"sentence1": "The train left on time.", "sentence2": "It wasn't late.", "score": 4.8},
]  # fmt: skip


def test_affirmative_paraphrase_sends_negated_texts_only(invoke, tmp_path, scripted):
    """ALIGN-SIM's criterion 4 control: only texts with a negation cue reach the backend;
    the others are not-applicable and left empty. An output that still has a negation cue
    is asked for again, and kept as still-negated when every attempt has one."""
    folder = write_folder(tmp_path / "negated", AFFIRMATIVE_ROWS)
    scripted.script["The museum is not open on Mondays."] = [
        "The museum isn't open on Mondays either.",
        "The museum is closed on Mondays.",
    ]
    scripted.script["It wasn't late."] = ["It was on time."]
    scripted.script["Nobody answered the phone."] = ["No one picked up."] * 3
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "STS", "--source-language", "en", "-t",
                    "affirmative-paraphrase", "-b", "scripted", "--max-failure-rate", "1", "-q",
                    "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    sent = [t for call in scripted.calls for t in call]
    assert sorted(set(sent)) == [
        "It wasn't late.", "Nobody answered the phone.", "The museum is not open on Mondays."
    ]  # fmt: skip
    assert sent.count("The museum is not open on Mondays.") == 2
    assert sent.count("Nobody answered the phone.") == 3
    assert all(p.startswith("The text below contains a negation") for p in scripted.prompts)
    first, second, third = read_rows(out / "affirmative-paraphrase-s1337" / "test.jsonl")
    assert (first["sentence1"], first["status_sentence1"]) == (
        "The museum is closed on Mondays.", "ok"
    )  # fmt: skip
    assert (first["sentence2"], first["status_sentence2"]) == ("", "not-applicable")
    assert first["status"] == "ok"  # one field made, the other had no negation
    assert (second["sentence1"], second["status_sentence1"]) == (
        "No one picked up.", "still-negated"
    )  # fmt: skip
    assert second["status"] == "still-negated"  # a failure outranks not-applicable
    assert (third["sentence1"], third["status_sentence1"]) == ("", "not-applicable")
    assert (third["sentence2"], third["status_sentence2"]) == ("It was on time.", "ok")
    counts = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))["configs"][
        "affirmative-paraphrase-s1337"
    ]["status_counts"]["test"]
    assert counts == {"ok": 2, "still-negated": 1}
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    config = meta["configs"]["affirmative-paraphrase-s1337"]
    assert (config["kind"], config["meaning"], config["axis"]) == ("control", "preserved", None)
    assert config["prompts"][0]["origin"] == "shiftbench:affirmative-paraphrase.txt"


def test_affirmative_paraphrase_is_a_control_and_needs_english(invoke, tmp_path, scripted):
    """-t controls names it; its not-applicable rows are no failure for
    --max-failure-rate (every text of the sample is one, and the run passes at the default
    0.5); a source in another language is refused."""
    from shiftbench.core.text.transforms import expand_transforms

    named = [t.name for t in expand_transforms(("controls",))]
    assert named[-2:] == ["negation", "affirmative-paraphrase"]
    assert (CONTROLS["affirmative-paraphrase"].meaning, CONTROLS["negation"].meaning) == (
        "preserved", "changed"
    )  # fmt: skip
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "affirmative-paraphrase", "--limit", "4", "-b",
                    "scripted", "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert scripted.calls == []
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    counts = meta["configs"]["affirmative-paraphrase-s1337"]["status_counts"]["test"]
    assert counts == {"not-applicable": 4}
    folder = write_folder(tmp_path / "de", AFFIRMATIVE_ROWS[:1])
    assert _fails(invoke, tmp_path, folder, "--task-type", "STS", "--source-language", "de",
                  "-t", "affirmative-paraphrase", "-b", "scripted") == (
        "Error: affirmative-paraphrase finds negations by English cues; de[default] is "
        "in German"
    )  # fmt: skip


def test_sharded_controls_merge_into_the_unsharded_folder(shared_data, wordnet_dir, tmp_path):
    """Each text's choices depend on the text alone, so shards merge into the folder one
    process writes, byte for byte."""
    args = [*_mrpc(shared_data), "--limit", "100", "-t", ",".join(RULES), "-s", "3",
            "--wordnet-dir", wordnet_dir, *NO_GENERATOR, "-q"]  # fmt: skip
    _gen(CliRunner(), *args, "-o", tmp_path / "whole")
    for i in (0, 1):
        _gen(CliRunner(), *args, "--shard", f"{i}/2", "-o", tmp_path / f"part{i}")
    from shiftbench.cli import cli

    result = CliRunner().invoke(
        cli, ["merge", str(tmp_path / "part0"), str(tmp_path / "part1"), "-o",
              str(tmp_path / "merged")], catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _files(tmp_path / "merged") == _files(tmp_path / "whole")


def test_a_spec_makes_rule_controls_without_a_generator(invoke, tmp_path, wordnet_dir):
    """`shiftbench run` takes controls from the spec (with control_pos and wordnet_dir);
    the plan counts no generator calls for them, and gen never contacts the generator."""
    spec = tmp_path / "controls.yaml"
    spec.write_text(
        "output: out\nsources: [{name: sample}]\n"
        "transforms: [word-jumble-2, synonym-swap-1]\nseeds: [5]\n"
        f"control_pos: adjective\nwordnet_dir: {wordnet_dir}\n"
        "generator: {backend: openai, base_url: 'http://127.0.0.1:9/v1'}\n",
        encoding="utf-8",
    )
    plan = invoke("run", spec, "--dry-run")
    assert plan.exit_code == 0, plan.output
    row = next(line for line in plan.stdout.splitlines() if line.startswith("sample "))
    # configs, texts, calls: two configs of the 84 texts each, no generator call
    assert row.split()[:4] == ["sample", "2", "168", "0"]
    done = invoke("run", spec, "--until", "gen", "-q")
    assert done.exit_code == 0, done.output
    meta = json.loads((tmp_path / "out/sample/run/shiftbench.json").read_text(encoding="utf-8"))
    assert list(meta["configs"]) == ["original", "word-jumble-2-s5", "synonym-swap-1-s5"]
    assert meta["configs"]["synonym-swap-1-s5"]["lexicon"]["parts_of_speech"] == ["adjective"]
