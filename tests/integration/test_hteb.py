"""shiftbench hteb import: HTEB's published transformation files, written here in HTEB's
layout from rows of the shared STSBenchmark and Banking77, read into a run folder."""

from __future__ import annotations

import json
import random
from typing import get_type_hints

import pytest
from support.environment import ENCODER
from support.files import read_rows
from support.hteb import MODEL, rewritten, statistics, sts_rows, write_pair

from shiftbench.core.data.hteb import (
    generator_directory,
    latest_pair,
    pair_names,
    read_pair,
    translation_target,
)
from shiftbench.core.records import ConfigRecord, RunMeta

GENERATOR = generator_directory(MODEL)


def test_a_tree_imports_as_one_config_per_transformation_and_seed(
    sts_tree, shared_data, invoke, tmp_path
):
    out = tmp_path / "run"
    result = invoke("hteb", "import", sts_tree, "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"imported HTEB's stsbenchmark-sts rewrites by {MODEL} as original, "
        f"paraphrase-s1337, paraphrase-s1338, summarisation-s1337 to {out}\n"
    )
    meta = json.loads((out / "shiftbench.json").read_text())
    assert set(meta) <= set(get_type_hints(RunMeta))  # every key typed in core/records.py
    assert all(set(c) <= set(get_type_hints(ConfigRecord)) for c in meta["configs"].values())
    assert meta["protocol"]["name"] == "hteb"
    assert meta["source"]["name"] == "STSBenchmark"
    assert meta["source"]["dataset_path"] == "mteb/stsbenchmark-sts"
    # original: the shared rows as HTEB held them, each with its row_id
    source = read_rows(shared_data / "STSBenchmark" / "data" / "test.jsonl")[:12]
    assert read_rows(out / "original" / "test.jsonl") == [
        {"row_id": i, **row} for i, row in enumerate(source)
    ]
    # the newest pair of paraphrasing/1337 was read: rows 0 and 1 came back unchanged
    newest = meta["configs"]["paraphrase-s1337"]
    assert newest["hteb"]["generation_datetime"] == "2026-09-16T08:00:00Z"
    assert newest["status_counts"] == {"test": {"identical": 2, "ok": 10}}
    rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
    assert [r["status"] for r in rows[:3]] == ["identical", "identical", "ok"]
    assert rows[2]["sentence1"] == f"In other words: {source[2]['sentence1']}"
    assert rows[2]["original_sentence1"] == source[2]["sentence1"]
    # a fallback text is a failure, empty, never the original
    fallback = read_rows(out / "paraphrase-s1338" / "test.jsonl")[5]
    assert (fallback["status"], fallback["sentence2"]) == ("fallback", "")
    assert fallback["original_sentence2"] == source[5]["sentence2"]
    assert meta["configs"]["paraphrase-s1338"]["hteb"]["generation_statistics"][
        "fallback_reasons"
    ] == {"output_length_after_retries": 1}
    # summarise/1337 held only an undated pair: it is read
    undated = meta["configs"]["summarisation-s1337"]
    assert (undated["hteb"]["file"], undated["axis"]) == ("data.parquet", "Length")
    assert invoke("validate", out, "-q").exit_code == 0
    # the card says where each config came from and what HTEB counted
    card = tmp_path / "card.md"
    assert invoke("card", out, "-o", card).exit_code == 0
    text = card.read_text(encoding="utf-8")
    assert "Read from HTEB's files and recorded with `--protocol hteb`" in text
    assert "- sampling: not recorded in HTEB's files; at most 4 attempts per text" in text
    hteb_section = text.split("## HTEB's files")[1]
    row = next(x for x in hteb_section.splitlines() if x.startswith("| `paraphrase-s1338` |"))
    assert row.split(" | ")[1:] == [
        f"`{meta['configs']['paraphrase-s1338']['hteb']['file']}`", "2026-09-15T11:18:02Z",
        "512", "3", "4096", "24", "1 (output_length_after_retries 1)", "0 |",
    ]  # fmt: skip
    assert "with the status `fallback`, never the source text in disguise" in text


def test_a_classification_tree_keeps_its_train_and_test_records(shared_data, invoke, tmp_path):
    """Banking77 as HTEB stores it: train and test records in one file; the run folder
    has both splits, the train split rewritten too (as the hteb protocol rewrites it)."""
    folder = shared_data / "Banking77Classification" / "data"
    records = [
        {**r, "_hteb_split": split, "language": "eng"}
        for split in ("train", "test")
        for r in read_rows(folder / f"{split}.jsonl")[:5]
    ]
    changed = [{**r, "text": r["text"].upper()} for r in records]
    write_pair(tmp_path / "t", "banking77", "style_change", 1339, records, changed,
               stats=statistics(10, 10),
               source_revision="18072d2685ea682290f7b8924d94c62acc19c0b2")  # fmt: skip
    out = tmp_path / "run"
    result = invoke("hteb", "import", tmp_path / "t" / GENERATOR, "-o", out)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text())
    assert meta["rewrite"] == ["queries", "train"]
    assert meta["source"]["revision"] == "18072d2685ea682290f7b8924d94c62acc19c0b2"
    assert meta["configs"]["style-change-s1339"]["rows"] == {"test": 5, "train": 5}
    train = read_rows(out / "style-change-s1339" / "train.jsonl")
    assert [r["text"] for r in train] == [r["text"].upper() for r in records[:5]]
    assert {r["status"] for r in train} == {"ok"}


def test_translations_carry_the_languages_htebs_rules_give(shared_data, invoke, tmp_path):
    """HTEB's files do not store where a translation went; the import works it out as
    HTEB does for its results: translation, one language for the dataset and seed;
    cross_translation, one per text, numbered over every first sentence, then every
    second (worked out here with random.Random over HTEB's language names)."""
    originals = sts_rows(shared_data, 6)
    for transformation, seed in (("translation", 1337), ("cross_translation", 1338)):
        extra = {"translation_language_selection": "dataset"} if seed == 1337 else {}
        write_pair(tmp_path / "t", "stsbenchmark-sts", transformation, seed, originals,
                   rewritten(originals, {2}, set()), stats=statistics(6, 12, fallback=1),
                   **extra)  # fmt: skip
    out = tmp_path / "run"
    result = invoke("hteb", "import", tmp_path / "t" / GENERATOR, "-o", out)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text())
    shared = translation_target("stsbenchmark-sts", 1337, ["en"])
    rows = read_rows(out / "translation-s1337" / "test.jsonl")
    assert {(r["language_sentence1"], r["language_sentence2"]) for r in rows} == {(shared, shared)}
    assert meta["configs"]["translation-s1337"]["target_languages"] == [shared]
    assert meta["configs"]["translation-s1337"]["language_pool"] == ["es", "fr", "de", "tr", "ar"]
    names = ["Spanish", "French", "German", "Turkish", "Arabic"]
    codes = dict(zip(names, ["es", "fr", "de", "tr", "ar"], strict=True))
    rows = read_rows(out / "cross-translation-s1338" / "test.jsonl")
    expected = [
        (codes[random.Random(1338 + i).choice(names)],
         codes[random.Random(1338 + 6 + i).choice(names)])
        for i in range(6)
    ]  # fmt: skip
    assert [(r["language_sentence1"], r["language_sentence2"]) for r in rows] == expected
    assert (rows[2]["status"], rows[2]["sentence2"]) == ("fallback", "")  # sent, not returned
    drawn = sorted({code for pair in expected for code in pair})
    assert meta["configs"]["cross-translation-s1338"]["target_languages"] == drawn
    # exported back, each text is in the language HTEB will name: nothing to point out
    result = invoke("hteb", "export", out, "-o", tmp_path / "back")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"wrote 2 HTEB pairs (cross_translation/1338, translation/1337) to {tmp_path / 'back'}\n"
    )


def test_an_export_says_when_hteb_will_name_other_target_languages(
    shared_data, scripted, invoke, tmp_path
):
    """gen draws a translation's language per row; HTEB's translation has one per dataset
    and seed, and its results name that one: the export says which configs differ."""
    run, out = tmp_path / "run", tmp_path / "transformations"
    made = invoke("gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark",
                  "--limit", "6", "-t", "translation", "-s", "7", "-b", "scripted", "-q",
                  "-o", run)  # fmt: skip
    assert made.exit_code == 0, made.output
    rows = read_rows(run / "translation-s7" / "test.jsonl")
    hteb = translation_target("stsbenchmark-sts", 7, ["en"])
    assert {r["language_sentence1"] for r in rows} != {hteb}  # gen's draws, row by row
    result = invoke("hteb", "export", run, "-o", out, "--generator", "org/scripted-7b")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"wrote 1 HTEB pair (translation/7) to {out}; HTEB's results will name other target "
        "languages than the texts of translation-s7 are in (its files do not store them: "
        "HTEB works them out from its own rules)\n"
    )


@pytest.mark.parametrize(
    "case",
    ["incomplete pair", "unknown transformation", "seed not a number", "output exists",
     "originals differ", "unknown dataset"],
)  # fmt: skip
def test_a_bad_tree_is_refused_in_one_line_and_nothing_is_written(
    sts_tree, shared_data, invoke, tmp_path, case
):
    dataset = sts_tree / GENERATOR / "stsbenchmark-sts"
    out = tmp_path / "run"
    if case == "incomplete pair":
        data = next((dataset / "paraphrasing" / "1338").glob("data_*.parquet"))
        meta = data.with_name(data.name.replace("data_", "metadata_").replace(".parquet", ".JSON"))
        data.unlink()
        expected = f"{data}: missing or not a regular file, so {meta.name} has no pair"
    elif case == "unknown transformation":
        (dataset / "paraphrase" / "1").mkdir(parents=True)
        expected = (
            f"{dataset / 'paraphrase'}: unknown HTEB transformation 'paraphrase'; known: "
            "paraphrasing, backtranslation, style_change, expansion, summarise, "
            "summarised_expansion, translation, cross_translation"
        )
    elif case == "seed not a number":
        (dataset / "summarise" / "seed_1").mkdir()
        seed = dataset / "summarise" / "seed_1"
        expected = f"{seed}: a seed folder is named by its seed, a whole number"
    elif case == "output exists":
        out.mkdir()
        (out / "keep.txt").write_text("mine\n")
        expected = f"output {out} exists; choose another --output"
    elif case == "originals differ":
        originals = sts_rows(shared_data, 12)
        originals[3] = {**originals[3], "score": 0.0}
        first, _ = write_pair(sts_tree, "stsbenchmark-sts", "expansion", 1337, originals,
                              originals, stats=statistics(12, 24, unchanged=24))  # fmt: skip
        newest = (
            dataset
            / "paraphrasing"
            / "1337"
            / pair_names(MODEL, "paraphrasing", "stsbenchmark-sts", 1337, "2026-09-16T08:00:00Z")[0]
        )
        expected = (
            f"{newest}: its original records differ from those of {first}; HTEB scores one "
            "dataset against the same originals"
        )
    elif case == "unknown dataset":
        dataset.rename(dataset.with_name("stsb"))
        expected = (
            f"{dataset.with_name('stsb')}: unknown HTEB dataset 'stsb'; known: "
            "AmazonCounterfactualClassification, BiorxivClusteringS2S, "
            "CQADupstackGamingRetrieval, Ko-StrategyQA, MasakhaNEWSClusteringS2S, "
            "MassiveIntentClassification, MedrxivClusteringS2S, SciFact, "
            "SprintDuplicateQuestions, TwentyNewsgroupsClustering, TwitterHjerneRetrieval, "
            "TwitterURLCorpus, arguana, banking77, biosses-sts, stsbenchmark-sts, summeval, "
            "twittersemeval2015-pairclassification"
        )
    result = invoke("hteb", "import", sts_tree, "-o", out)
    assert (result.exit_code, result.stderr) == (2, f"Error: {expected}\n")
    assert not out.exists() or [p.name for p in out.iterdir()] == ["keep.txt"]


def test_an_imported_tree_exports_back_to_the_same_files(sts_tree, invoke, tmp_path):
    """Import, then export: each folder's newest pair comes back with the same records
    and the same metadata, byte for byte, and HTEB's rules accept every pair written."""
    run, back = tmp_path / "run", tmp_path / "back"
    assert invoke("hteb", "import", sts_tree, "-o", run).exit_code == 0
    result = invoke("hteb", "export", run, "-o", back)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"wrote 3 HTEB pairs (paraphrasing/1337, paraphrasing/1338, summarise/1337) to {back}\n"
    )
    for folder in sorted((sts_tree / GENERATOR / "stsbenchmark-sts").glob("*/*")):
        theirs = latest_pair(folder)
        ours = latest_pair(back / folder.relative_to(sts_tree))
        assert ours.data.name == theirs.data.name
        assert read_pair(ours) == read_pair(theirs)
        metadata = theirs.data.name.replace("data", "metadata").replace(".parquet", ".JSON")
        assert (ours.data.parent / metadata).read_bytes() == (folder / metadata).read_bytes()


def test_a_generated_run_exports_as_hteb_writes_its_files(shared_data, scripted, invoke, tmp_path):
    """A run gen made: the texts as written, the one text still cut at its budget empty
    (HTEB's fallback; the other text of its row as written), statistics counted from the
    rows, no generation time."""
    source = read_rows(shared_data / "STSBenchmark" / "data" / "test.jsonl")[:6]
    scripted.length_for = {source[2]["sentence1"]}
    run, out = tmp_path / "run", tmp_path / "transformations"
    made = invoke("gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit",
                  "6", "-t", "paraphrase,word-jumble-1", "-s", "7", "-b", "scripted",
                  "--max-failure-rate", "1", "-q", "-o", run)  # fmt: skip
    assert made.exit_code == 0, made.output
    result = invoke("hteb", "export", run, "-o", out, "--generator", "org/scripted-7b")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"wrote 1 HTEB pair (paraphrasing/7) to {out}; not HTEB transformations, "
        "left out: word-jumble-1-s7\n"
    )
    folder = out / "org~2Fscripted-7b" / "stsbenchmark-sts" / "paraphrasing" / "7"
    pair = latest_pair(folder)
    assert pair.data.name == "data.parquet"
    originals, rewritten = read_pair(pair)
    assert originals == [{**r, "_hteb_split": "test", "language": "eng"} for r in source]
    assert [r["sentence1"] for r in rewritten] == [
        "" if i == 2 else f"REWRITTEN {r['sentence1']}" for i, r in enumerate(source)
    ]
    assert rewritten[2]["sentence2"] == f"REWRITTEN {source[2]['sentence2']}"
    stats = pair.metadata["generation_statistics"]
    assert (stats["records_with_fallback"], stats["text_fields_with_fallback"]) == (1, 1)
    assert pair.metadata["max_retries"] == 2  # gen's three attempts


@pytest.mark.parametrize("case", ["output exists", "dataset HTEB lacks", "no transformation"])
def test_an_export_hteb_cannot_take_is_refused_in_one_line(
    shared_data, scripted, invoke, tmp_path, case
):
    run, out = tmp_path / "run", tmp_path / "transformations"
    if case == "no transformation":  # the controls only
        source = ["STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "-t", "word-jumble-1"]
    else:
        source = ["sample", "-t", "paraphrase"]
    made = invoke("gen", *source, "--limit", "3", "-b", "scripted", "-q", "-o", run)
    assert made.exit_code == 0, made.output
    expected = {
        "output exists": f"output {out} exists; choose another --output",
        "dataset HTEB lacks": f"{run}: HTEB has no dataset for sample; it has "
        "AmazonCounterfactualClassification, ArguAna, BIOSSES, Banking77Classification, "
        "BiorxivClusteringS2S, CQADupstackGamingRetrieval, Ko-StrategyQA, "
        "MasakhaNEWSClusteringS2S, MassiveIntentClassification, MedrxivClusteringS2S, "
        "STSBenchmark, SciFact, SprintDuplicateQuestions, SummEval, "
        "TwentyNewsgroupsClustering, TwitterHjerneRetrieval, TwitterSemEval2015, "
        "TwitterURLCorpus",
        "no transformation": f"{run} holds no config of a transformation HTEB has",
    }[case]
    if case == "output exists":
        out.mkdir()
    result = invoke("hteb", "export", run, "-o", out)
    assert (result.exit_code, result.stderr) == (2, f"Error: {expected}\n")
    assert case == "output exists" or not out.exists()


def masakha_records(shared_data, languages=("eng", "fra"), n=4) -> list[dict]:
    """MasakhaNEWS headlines as HTEB stores a per-language clustering dataset: a record
    per text, its subset in `language`."""
    folder = shared_data / "MasakhaNEWSClusteringS2S"
    return [
        {**r, "_hteb_split": "test", "language": lang}
        for lang in languages
        for r in read_rows(folder / lang / "test.jsonl")[:n]
    ]


def test_a_per_language_clustering_tree_imports_a_subset_per_language_and_exports_back(
    shared_data, invoke, tmp_path
):
    """MasakhaNEWS, which HTEB clusters per language: its records become one subset per
    language (original.eng, paraphrase-s1337.eng, ...); a fallback headline is a failure;
    cross_translation never picks a headline's own language; export gives the same files
    back, clustering_format included, and the imported run evaluates."""
    records = masakha_records(shared_data)
    paraphrased = [
        {**r, "sentences": "" if i == 5 else f"Headline: {r['sentences']}"}
        for i, r in enumerate(records)
    ]
    tree = tmp_path / "t"
    layout = {"clustering_format": "per_language"}
    write_pair(tree, "MasakhaNEWSClusteringS2S", "paraphrasing", 1337, records, paraphrased,
               stats=statistics(8, 8, fallback=1), **layout)  # fmt: skip
    crossed = [{**r, "sentences": f"[x] {r['sentences']}"} for r in records]
    write_pair(tree, "MasakhaNEWSClusteringS2S", "cross_translation", 1338, records, crossed,
               **layout)  # fmt: skip
    run = tmp_path / "run"
    result = invoke("hteb", "import", tree / GENERATOR, "-o", run)
    assert result.exit_code == 0, result.output
    assert result.stdout.split(" as ")[1] == (
        "original.eng, cross-translation-s1338.eng, paraphrase-s1337.eng, original.fra, "
        f"cross-translation-s1338.fra, paraphrase-s1337.fra to {run}\n"
    )
    meta = json.loads((run / "shiftbench.json").read_text())
    assert meta["source"]["subsets"] == ["eng", "fra"]
    assert meta["configs"]["paraphrase-s1337.fra"]["subset"] == "fra"
    folder = shared_data / "MasakhaNEWSClusteringS2S"
    assert [
        {k: v for k, v in r.items() if k != "row_id"}
        for r in read_rows(run / "original.fra" / "test.jsonl")
    ] == read_rows(folder / "fra" / "test.jsonl")[:4]
    fra = read_rows(run / "paraphrase-s1337.fra" / "test.jsonl")
    assert [r["status"] for r in fra] == ["ok", "fallback", "ok", "ok"]  # record 5 is fra's 2nd
    for lang, own in (("eng", "en"), ("fra", "fr")):
        rows = read_rows(run / f"cross-translation-s1338.{lang}" / "test.jsonl")
        assert own not in {r["language_sentences"] for r in rows}
        assert all(r["language_sentences"] in ("es", "fr", "de", "tr", "ar") for r in rows)
    assert invoke("validate", run, "-q").exit_code == 0

    back = tmp_path / "back"
    result = invoke("hteb", "export", run, "-o", back)
    assert result.exit_code == 0, result.output
    for folder in sorted((tree / GENERATOR / "MasakhaNEWSClusteringS2S").glob("*/*")):
        theirs = latest_pair(folder)
        ours = latest_pair(back / folder.relative_to(tree))
        assert read_pair(ours) == read_pair(theirs)
        assert ours.metadata == theirs.metadata
        assert ours.metadata["clustering_format"] == "per_language"

    out = tmp_path / "scores"
    args = ["-m", ENCODER, "--no-plots", "--resamples", "0", "-q", "-o", out]
    result = invoke("evaluate", run, *args)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text())
    scored = {(r["config"], r["subset"]) for r in doc["models"][0]["results"]}
    assert scored == {(c, c.rsplit(".", 1)[1]) for c in meta["configs"]}  # per language
    assert doc["protocol"]["name"] == "hteb"


def test_clustering_metadata_and_layouts_hteb_does_not_take_are_refused(
    shared_data, invoke, tmp_path
):
    """A clustering pair without its dataset's clustering_format; a nested clustering
    dataset (sets of texts per record), which is not read yet: one line, exit 2."""
    records = masakha_records(shared_data, ("eng",), 2)
    write_pair(tmp_path / "a", "MasakhaNEWSClusteringS2S", "paraphrasing", 1337, records, records)
    result = invoke("hteb", "import", tmp_path / "a" / GENERATOR, "-o", tmp_path / "ra")
    assert result.exit_code == 2
    assert result.stderr.endswith(
        ".JSON: clustering_format must be 'per_language', as its dataset's\n"
    )
    nested = [{"sentences": ["a b", "c d"], "labels": ["x", "y"], "_hteb_split": "test",
               "language": "eng"}]  # fmt: skip
    write_pair(tmp_path / "b", "BiorxivClusteringS2S", "paraphrasing", 1337, nested, nested,
               stats=statistics(1, 2), clustering_format="nested")  # fmt: skip
    result = invoke("hteb", "import", tmp_path / "b" / GENERATOR, "-o", tmp_path / "rb")
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "BiorxivClusteringS2S: importing HTEB's nested Clustering files is not supported yet; "
        "it reads STS, PairClassification, Classification and flat or per-language "
        "Clustering\n"
    )
    assert not (tmp_path / "ra").exists() and not (tmp_path / "rb").exists()


@pytest.mark.parametrize(
    ("key", "value"), [("dataset", "../../../escaped"), ("seed_transform", "../../escaped")]
)
def test_htebs_metadata_kept_in_a_run_folder_cannot_lead_an_export_out(
    sts_tree, invoke, tmp_path, key, value
):
    """An imported run keeps HTEB's metadata per config and exports it back; a dataset or
    seed there that is a path (a run folder from someone else) is refused in one line
    naming the file and key, and nothing is written, inside or outside the output."""
    run, out = tmp_path / "run", tmp_path / "deep" / "transformations"
    assert invoke("hteb", "import", sts_tree, "-o", run).exit_code == 0
    meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
    name = next(n for n, c in meta["configs"].items() if c.get("hteb"))
    meta["configs"][name]["hteb"][key] = value
    (run / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
    result = invoke("hteb", "export", run, "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {run}/shiftbench.json: configs.{name}.hteb.{key} {value!r} is not a safe "
        "name; a name must be one path component of letters, digits and . _ - + (a letter or "
        "digit first, at most 200 characters)\n",
    )
    assert not out.exists() and not (tmp_path / "escaped").exists()
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == []
