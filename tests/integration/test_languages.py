"""Every language mteb names, a local folder's own languages, cross-lingual subsets, and the
measures that depend on the script (edit distance, the language ID length floor)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.files import read_rows

from shiftbench.core.text.languages import get_language
from shiftbench.errors import InputError
from shiftbench.llm.backends import Generation

STSB = "STSBenchmarkMultilingualSTS"


def test_an_unknown_language_code_is_refused_before_anything_is_written(invoke, tmp_path):
    with pytest.raises(InputError) as error:
        get_language("xx")
    assert str(error.value) == (
        "unknown language 'xx': not an ISO 639-1 or 639-3 code or a language tag such as eng-Latn"
    )
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--source-language", "qx-Latn", "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: unknown language 'qx-Latn': not an ISO 639-1 or 639-3 code or a language tag "
        "such as eng-Latn\n",
    )
    assert not out.exists()


def test_a_broken_character_at_the_end_of_an_output_is_dropped(scripted, invoke, tmp_path):
    assert Generation("Le chat dort\ufffd\ufffd", "length").text == "Le chat dort"
    assert Generation("a \ufffdb", "stop").text == "a \ufffdb"  # only a cut at the end
    folder = _sts_folder(tmp_path / "src", "default", [("Un gato duerme.", "Un perro ladra.")])
    scripted.length_for = {"Un gato duerme."}
    scripted.script = {"Un gato duerme.": ["Un gato duerme en la cama\ufffd"] * 8}
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "STS", "-b", "scripted", "--source-language",
                    "es", "--temperature", "0", "--max-failure-rate", "1", "-q",
                    "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    (row,) = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert (row["sentence1"], row["status"]) == ("Un gato duerme en la cama", "truncated")


def _sts_folder(
    folder: Path, config: str, pairs: list[tuple[str, str]], language: list[str] | None = None
) -> Path:
    """A Hub-layout STS folder with one config, and the card's `language:` if given."""
    (folder / config).mkdir(parents=True)
    lines = [
        json.dumps({"sentence1": a, "sentence2": b, "score": 3.0}, ensure_ascii=False)
        for a, b in pairs
    ]
    (folder / config / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    header = "".join(f"- {code}\n" for code in language or [])
    (folder / "README.md").write_text(
        "---\n"
        + (f"language:\n{header}" if language else "")
        + f"configs:\n- config_name: {config}\n  data_files:\n  - split: test\n"
        f"    path: {config}/test.jsonl\n---\n",
        encoding="utf-8",
    )
    return folder


def _stsb_pairs(shared_data: Path, language: str, n: int = 15) -> list[tuple[str, str]]:
    rows = read_rows(shared_data / STSB / language / "test.jsonl")[:n]
    return [(r["sentence1"], r["sentence2"]) for r in rows]


@pytest.mark.parametrize(
    ("config", "card", "option", "iso3", "origin", "code"),
    [
        ("default", ["de"], None, "deu", "card", "de"),
        ("fr", None, None, "fra", "config name", "fr"),
        ("nl_NL", None, None, "nld", "config name", "nl"),  # a tag with a region
        ("default", None, None, "ita", "detected", "it"),
        ("es", ["de"], "es", "spa", "--source-language", "es"),
    ],
)
def test_a_local_folder_names_its_language(
    scripted, invoke, shared_data, tmp_path, config, card, option, iso3, origin, code
):
    """Card, then config name, then language ID; --source-language overrides them all.
    Without this, gen wrote `language_<field>: ""` and validate flagged every row."""
    data = {"deu": "de", "fra": "fr", "nld": "nl", "ita": "it", "spa": "es"}[iso3]
    folder = _sts_folder(tmp_path / "src", config, _stsb_pairs(shared_data, data), card)
    out = tmp_path / "run"
    extra = ["--source-language", option] if option else []
    result = invoke("gen", folder, "--task-type", "STS", "-b", "scripted", *extra, "-q", "-o", out)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["source"]["languages"] == {config: [iso3]}
    assert meta["source"]["language_origin"] == {config: origin}
    name = "paraphrase-s1337" if config == "default" else f"paraphrase-s1337.{config}"
    assert meta["configs"][name]["source_languages"] == {"sentence1": code, "sentence2": code}
    rows = read_rows(out / name / "test.jsonl")
    assert {r[f"language_{f}"] for r in rows for f in ("sentence1", "sentence2")} == {code}
    if origin == "card":  # the scripted outputs keep the input's language: none is flagged
        result = invoke("validate", out)
        assert result.exit_code == 0, result.output
        report = json.loads((out / "validation.json").read_text(encoding="utf-8"))
        assert report["configs"][name]["error_counts"]["wrong-language"] == 0
        assert report["configs"][name]["not_checked"] == {"wrong-language": 0}


LANGUAGE_NAMES = {"en": "English", "de": "German", "es": "Spanish", "fr": "French",
                  "tr": "Turkish", "ar": "Arabic"}  # fmt: skip
LLM_TRANSFORMS = ("paraphrase", "style-change", "expansion", "summarisation",
                  "summarised-expansion", "backtranslation", "translation",
                  "cross-translation")  # fmt: skip


@pytest.mark.parametrize("transform", LLM_TRANSFORMS)
def test_a_cross_lingual_subset_keeps_each_field_in_its_own_language(
    scripted, invoke, shared_data, tmp_path, transform
):
    """Config `en-de`: sentence1 English, sentence2 German (README `language: [en, de]`)."""
    english = [a for a, _ in _stsb_pairs(shared_data, "en", 6)]
    german = [b for _, b in _stsb_pairs(shared_data, "de", 6)]
    folder = _sts_folder(
        tmp_path / "src", "en-de", list(zip(english, german, strict=True)), ["en", "de"]
    )
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "STS", "-t", transform, "-b", "scripted",
                    "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["source"]["languages"] == {"en-de": ["eng", "deu"]}
    assert meta["source"]["language_origin"] == {"en-de": "config name"}
    name = f"{transform}-s1337.en-de"
    config = meta["configs"][name]
    assert config["source_languages"] == {"sentence1": "en", "sentence2": "de"}
    rows = read_rows(out / name / "test.jsonl")
    first = [r["language_sentence1"] for r in rows]
    second = [r["language_sentence2"] for r in rows]
    if transform == "translation":  # one target for the subset, neither field's language
        (target,) = set(first) | set(second)
        assert target not in ("en", "de")
        assert config["target_languages"] == [target]
    elif transform == "cross-translation":
        assert "en" not in first and "de" not in second
    else:
        assert (set(first), set(second)) == ({"en"}, {"de"})
    if transform == "backtranslation":
        assert not {r["pivot_sentence1"] for r in rows} & {"en"}
        assert not {r["pivot_sentence2"] for r in rows} & {"de"}
    # the language each prompt asks for
    asked = {}
    for prompt in scripted.prompts:
        text = prompt.rsplit("\n\n", 1)[-1].strip()
        named = [n for n in LANGUAGE_NAMES.values() if n in prompt.split("\n\n")[0]]
        asked[text] = named
    for original, own in [*((t, "English") for t in english), *((t, "German") for t in german)]:
        if transform in ("translation",):
            assert asked[original] == [LANGUAGE_NAMES[target]]
        elif transform == "cross-translation":
            assert len(asked[original]) == 1 and asked[original] != [own]
        elif transform == "backtranslation":
            assert len(asked[original]) == 1 and asked[original] != [own]  # the pivot
            back = next(v for t, v in asked.items() if t != original and original in t)
            assert back == [own]  # the way back
        else:
            assert asked[original] == [own]


def test_every_masakhanews_language_generates_and_unknown_ones_are_not_checked(
    scripted, invoke, shared_data, tmp_path
):
    """MasakhaNEWS's local copy plus a Lingala subset: a language outside the old table
    that language ID does not know (nor Amharic and Hausa: lingua lacks them too)."""
    import mteb

    local = shared_data / "MasakhaNEWSClusteringS2S"
    task = mteb.get_task("MasakhaNEWSClusteringS2S")
    every = task.metadata.hf_subsets_to_langscripts
    assert every["lin"] == ["lin-Latn"]
    # all 16 of the task's languages are known (name, code), and the identifiers say which
    # of them they can check; the rest are not-checked, never refused
    from shiftbench.core.text.langid import checkable, get_identifier
    from shiftbench.core.text.languages import get_language

    named = {subset: get_language(tags[0]) for subset, tags in every.items()}
    assert len(named) == 16 and named["pcm"].name == "Nigerian Pidgin"
    assert named["tir"].name == "Tigrinya" and named["orm"].code == "om"
    unknown = {
        name: sorted(
            s for s, lang in named.items() if not checkable(get_identifier(name), lang.code)
        )
        for name in ("lingua", "langdetect")
    }
    assert unknown == {
        "lingua": ["amh", "hau", "ibo", "lin", "orm", "pcm", "run", "tir"],
        "langdetect": ["amh", "hau", "ibo", "lin", "lug", "orm", "pcm", "run", "sna", "tir", "xho",
                       "yor"],
    }  # fmt: skip
    data = tmp_path / "masakhanews"
    data.mkdir()
    held = ["eng", "fra", "hau", "swa", "amh"]
    for subset in held:
        (data / subset).symlink_to(local / subset)
    (data / "lin").mkdir()
    headlines = [
        ("Bato ebele bakendaki na zando monene ya Kinshasa lelo na ntongo", "business"),
        ("Mbula enoki makasi na engumba ya Mbandaka mpe ndako mingi ebebi", "politics"),
        ("Leopards balongi lisano ya mpira na bango na sanza oyo", "sports"),
    ]
    (data / "lin" / "test.jsonl").write_text(
        "".join(json.dumps({"sentences": s, "labels": label}) + "\n" for s, label in headlines),
        encoding="utf-8",
    )
    configs = "".join(
        f"- config_name: {s}\n  data_files:\n  - split: test\n    path: {s}/test.jsonl\n"
        for s in [*held, "lin"]
    )
    (data / "README.md").write_text(f"---\nconfigs:\n{configs}---\n", encoding="utf-8")
    out = tmp_path / "run"
    result = invoke("gen", "MasakhaNEWSClusteringS2S", "--data-dir", data, "-b", "scripted",
                    "--limit", "3", "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "paraphrase-s1337.lin" / "test.jsonl")
    assert [r["language_sentences"] for r in rows] == ["ln"] * 3
    assert sum("write it in Lingala" in p for p in scripted.prompts) == 3
    result = invoke("validate", out)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    unchecked = {
        name.rsplit(".", 1)[-1]: (c["not_checked"]["wrong-language"], c["unchecked_languages"])
        for name, c in report["configs"].items()
    }
    assert unchecked == {
        "eng": (0, {}),
        "fra": (0, {}),
        "hau": (3, {"ha": 3}),
        "swa": (0, {}),
        "amh": (3, {"am": 3}),
        "lin": (3, {"ln": 3}),
    }
    assert report["configs"]["paraphrase-s1337.lin"]["error_counts"]["wrong-language"] == 0
    markdown = (out / "validation.md").read_text(encoding="utf-8")
    assert "| 3 (ln) |" in markdown
    result = invoke("card", out, "--repo", "someone/masakhanews-variants", "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| `paraphrase-s1337.lin` | 3 | 0 | 0.0% | 3 (ln) |" in card


def test_source_language_names_one_language_per_field(scripted, invoke, shared_data, tmp_path):
    english = [a for a, _ in _stsb_pairs(shared_data, "en", 3)]
    german = [b for _, b in _stsb_pairs(shared_data, "de", 3)]
    pairs = list(zip(english, german, strict=True))
    folder = _sts_folder(tmp_path / "src", "default", pairs, ["en"])
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "STS", "--source-language", "en,de,fr",
                    "-b", "scripted", "-q", "-o", out)  # fmt: skip
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: --source-language names 3 languages; give one, or one per text field "
        "(sentence1, sentence2)\n",
    )
    assert not out.exists()
    result = invoke("gen", folder, "--task-type", "STS", "--source-language", "en,de",
                    "-b", "scripted", "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["source"]["languages"] == {"default": ["eng", "deu"]}
    assert meta["source"]["language_origin"] == {"default": "--source-language"}
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert [(r["language_sentence1"], r["language_sentence2"]) for r in rows] == [("en", "de")] * 3
    assert sum("write it in German" in p for p in scripted.prompts) == 3
