"""shiftbench hteb import: HTEB's published transformation files, written here in HTEB's
layout from rows of the shared STSBenchmark and Banking77, read into a run folder."""

from __future__ import annotations

import json
from typing import get_type_hints

import pytest
from support.files import read_rows
from support.hteb import MODEL, statistics, sts_rows, write_pair

from shiftbench.core.data.hteb import generator_directory, pair_names
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
            "AmazonCounterfactualClassification, MassiveIntentClassification, "
            "SprintDuplicateQuestions, TwitterURLCorpus, banking77, biosses-sts, "
            "stsbenchmark-sts, summeval, twittersemeval2015-pairclassification"
        )
    result = invoke("hteb", "import", sts_tree, "-o", out)
    assert (result.exit_code, result.stderr) == (2, f"Error: {expected}\n")
    assert not out.exists() or [p.name for p in out.iterdir()] == ["keep.txt"]
