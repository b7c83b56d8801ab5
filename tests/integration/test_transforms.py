"""The eight transformations: their calls, languages, prompts and configs."""

from __future__ import annotations

import json

import datasets
import pytest
from support.files import read_rows

from shiftbench.core.text.languages import LANGUAGES, draw, parse_pool
from shiftbench.core.text.transforms import TRANSFORMS
from shiftbench.errors import InputError

ALL = [
    "paraphrase",
    "backtranslation",
    "style-change",
    "expansion",
    "summarisation",
    "summarised-expansion",
    "translation",
    "cross-translation",
]


def test_all_eight_transforms_with_two_seeds_become_loadable_configs(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "gen",
        "sample",
        "--limit",
        "3",
        "-t",
        "all",
        "--seeds",
        "1,2",
        "-b",
        "scripted",
        "-q",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    expected = ["original"] + [f"{t}-s{s}" for t in ALL for s in (1, 2)]
    assert list(meta["configs"]) == expected
    for name in expected:
        assert datasets.load_dataset(str(out), name, split="test").num_rows == 3
    axes = {meta["configs"][f"{t}-s1"]["axis"] for t in ALL}
    assert axes == {"Lexical/Stylistic", "Length", "Language"}
    calls = {t: meta["configs"][f"{t}-s1"]["calls"] for t in ALL}
    assert calls == {t: 2 if t in ("backtranslation", "summarised-expansion") else 1 for t in ALL}


def test_two_call_transforms_feed_the_first_output_into_the_second(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "gen",
        "sample",
        "--limit",
        "2",
        "-t",
        "summarised-expansion",
        "-b",
        "scripted",
        "-q",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    for row in read_rows(out / "summarised-expansion-s1337" / "test.jsonl"):
        assert row["sentence1"] == f"REWRITTEN REWRITTEN {row['original_sentence1']}"
    expansions = [p for p in scripted.prompts if p.startswith("Make the text below longer")]
    summaries = [p for p in scripted.prompts if p.startswith("Shorten the text below")]
    assert len(expansions) == len(summaries) == 4
    assert all(p.endswith("\n\nREWRITTEN " + p.rsplit("REWRITTEN ", 1)[-1]) for p in summaries)


def test_translation_uses_one_target_per_dataset_and_seed(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "gen",
        "sample",
        "-t",
        "translation",
        "--seeds",
        "1,2,3,4",
        "-b",
        "scripted",
        "-q",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    targets = []
    for seed in (1, 2, 3, 4):
        rows = read_rows(out / f"translation-s{seed}" / "test.jsonl")
        langs = {r[f"language_{f}"] for r in rows for f in ("sentence1", "sentence2")}
        assert len(langs) == 1 and langs != {"en"}
        assert meta["configs"][f"translation-s{seed}"]["target_languages"] == sorted(langs)
        expected = draw(
            parse_pool("es,fr,de,tr,ar"), LANGUAGES["en"], "translation", seed, "sample/default"
        )
        assert langs == {expected.code}
        targets.append(expected.code)
    names = {LANGUAGES[c].name for c in targets}
    assert any(f"into {name}." in p for p in scripted.prompts for name in names)


def test_cross_translation_draws_per_text_and_never_the_source(scripted, invoke, tmp_path):
    full, part = tmp_path / "full", tmp_path / "part"
    for out, limit in ((full, []), (part, ["--limit", "5"])):
        result = invoke(
            "gen", "sample", *limit, "-t", "cross-translation", "-b", "scripted", "-q", "-o", out
        )
        assert result.exit_code == 0, result.output
    rows = read_rows(full / "cross-translation-s1337" / "test.jsonl")
    langs = [r[f"language_{f}"] for r in rows for f in ("sentence1", "sentence2")]
    assert "en" not in langs
    assert set(langs) == {"es", "fr", "de", "tr", "ar"}
    # a text's language depends on the text and seed, not on which rows share the run
    assert read_rows(part / "cross-translation-s1337" / "test.jsonl") == rows[:5]


def test_backtranslation_pivots_through_pool_plus_english_and_returns(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "gen",
        "sample",
        "-t",
        "backtranslation",
        "--languages",
        "de,fr",
        "-b",
        "scripted",
        "-q",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "backtranslation-s1337" / "test.jsonl")
    pivots = {r["pivot_sentence1"] for r in rows} | {r["pivot_sentence2"] for r in rows}
    assert pivots == {"de", "fr"}  # English is the source, so it is never the pivot
    assert {r["language_sentence1"] for r in rows} == {"en"}
    back = [p for p in scripted.prompts if "into English." in p]
    assert len(back) == len(scripted.prompts) // 2
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["configs"]["backtranslation-s1337"]["pivot_languages"] == ["de", "fr"]


def test_pivot_pool_adds_english_for_a_non_english_source(scripted, invoke, tmp_path, shared_data):
    out = tmp_path / "run"
    result = invoke(
        "gen",
        "STSBenchmarkMultilingualSTS",
        "--data-dir",
        shared_data / "STSBenchmarkMultilingualSTS",
        "--subset",
        "de",
        "--limit",
        "40",
        "-t",
        "backtranslation",
        "--languages",
        "de,fr",
        "-b",
        "scripted",
        "-q",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "backtranslation-s1337.de" / "test.jsonl")
    assert {r["pivot_sentence1"] for r in rows} == {"en", "fr"}
    assert {r["language_sentence1"] for r in rows} == {"de"}


def test_prompt_variants(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "gen", "sample", "--limit", "2", "--prompt-variant", "3", "-b", "scripted", "-q", "-o", out
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote original, paraphrase-p3-s1337 to {out}\n"
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["configs"]["paraphrase-p3-s1337"]["prompts"][0]["origin"] == (
        "shiftbench:paraphrase-3.txt"
    )
    texts = {TRANSFORMS["paraphrase"].steps[0].prompt_file}
    assert texts == {"paraphrase.txt"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prompt-variant", "5"], "paraphrase has variants 1-4; --prompt-variant 5 asked"),
        (
            ["-t", "translation", "--prompt-variant", "2"],
            "translation has no prompt variants; --prompt-variant 2 asked",
        ),
        (
            ["-t", "backtranslation", "--prompt-file", "{prompt}"],
            "backtranslation makes 2 calls; --prompt-file FILE replaces the prompt of "
            "single-call transforms only (name a step: backtranslation:STEP=FILE)",
        ),
        (["--seed", "1,x"], "--seed takes whole numbers, not 'x'"),
        (
            ["-t", "translation", "--languages", "es,xx"],
            "unknown language 'xx': not an ISO 639-1 or 639-3 code or a language tag such as "
            "eng-Latn",
        ),
        (
            ["-t", "translation", "--languages", "en"],
            "the language pool (en) has no language other than the source language (en)",
        ),
        (["--languages", "es,es"], "the language pool 'es,es' names a language twice"),
    ],
)
@pytest.mark.usefixtures("no_model")
def test_bad_transform_options(invoke, tmp_path, args, message):
    prompt = tmp_path / "p.txt"
    prompt.write_text("Do it: {text}", encoding="utf-8")
    out = tmp_path / "run"
    result = invoke("gen", "sample", *[a.format(prompt=prompt) for a in args], "-o", out)
    assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n")
    assert not out.exists()


def test_language_transforms_need_a_source_language(scripted, invoke, tmp_path):
    folder = tmp_path / "src"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "test.jsonl").write_text(
        json.dumps({"sentence1": "a cat", "sentence2": "a dog", "score": 1.0}) + "\n" * 1,
        encoding="utf-8",
    )
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test.jsonl\n---\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    result = invoke(
        "gen", folder, "--task-type", "STS", "-t", "translation", "-b", "scripted", "-o", out
    )
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: translation needs the source language of src[default]; name it with "
        "--source-language\n",
    )
    result = invoke(
        "gen",
        folder,
        "--task-type",
        "STS",
        "-t",
        "translation",
        "--source-language",
        "en",
        "-b",
        "scripted",
        "-q",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    (row,) = read_rows(out / "translation-s1337" / "test.jsonl")
    assert row["language_sentence1"] in {"es", "fr", "de", "tr", "ar"}
    # paraphrase works without it: the prompt asks for the text's own language
    result = invoke(
        "gen", folder, "--task-type", "STS", "-b", "scripted", "-q", "-o", tmp_path / "run2"
    )
    assert result.exit_code == 0, result.output
    assert "write it in the same language as the text" in scripted.prompts[-1]


def test_draw_is_a_function_of_identity_only():
    pool = parse_pool("es,fr,de,tr,ar")
    first = [draw(pool, LANGUAGES["en"], "x", 7, f"text {i}").code for i in range(200)]
    again = [draw(pool, LANGUAGES["en"], "x", 7, f"text {i}").code for i in reversed(range(200))]
    assert first == list(reversed(again))
    assert set(first) == {"es", "fr", "de", "tr", "ar"}
    with pytest.raises(InputError):
        draw(parse_pool("en"), LANGUAGES["en"], "x", 7, "t")
