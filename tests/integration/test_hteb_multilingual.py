"""HTEB's multilingual sets (other than retrieval and reranking) and its nested clustering
sets, both ways: a small tree of each dataset's shape, laid out as HTEB's loader reads the
Hub (every config one after another, each record's `language` its config; a nested
clustering record a set of texts and its labels), imports and exports back byte for byte."""

from __future__ import annotations

import json

import pytest
from support.files import read_rows
from support.hteb import MODEL, statistics, write_pair

from shiftbench.core.data.hteb import generator_directory, latest_pair

GENERATOR = generator_directory(MODEL)


def _pairs(config: str, n: int, score: str = "score") -> list[dict]:
    """n sentence pairs of one config, with a gold score that varies."""
    return [
        {"sentence1": f"{config} first {i}", "sentence2": f"{config} second {i}",
         score: float(i) / n, "_hteb_split": "test", "language": config}
        for i in range(n)
    ]  # fmt: skip


def _labelled(language: str, n: int) -> list[dict]:
    """Classification records as HTEB reads them: the train split first, then the test."""
    return [
        {"text": f"{split} text {i}", "label": i % 2, "_hteb_split": split, "language": language}
        for split in ("train", "test")
        for i in range(n)
    ]


def _nli(configs: tuple[str, ...], n: int) -> list[dict]:
    return [
        {"sentence1": f"{c} premise {i}", "sentence2": f"{c} hypothesis {i}", "labels": i % 2,
         "_hteb_split": "test", "language": c}
        for c in configs
        for i in range(n)
    ]  # fmt: skip


# Each dataset: its records as HTEB's loader builds them, its text fields, the subsets
# the import makes of them
SHAPES = {
    "IndicCrosslingualSTS": (
        _pairs("en-as", 3) + _pairs("en-hi", 3), ("sentence1", "sentence2"), ["en-as", "en-hi"]
    ),
    "sts17-crosslingual-sts": (
        _pairs("ar-ar", 3) + _pairs("en-de", 3) + _pairs("ko-ko", 2),
        ("sentence1", "sentence2"), ["ar-ar", "en-de", "ko-ko"],
    ),
    # SemRel2024's own columns: the score is `label` (the run folder calls it `score`)
    "semrel2024": (
        _pairs("afr", 3, "label") + _pairs("esp", 3, "label"), ("sentence1", "sentence2"),
        ["afr", "esp"],
    ),
    "rte3": (_nli(("de", "en", "it"), 2), ("sentence1", "sentence2"), ["de", "en", "it"]),
    "indonli": (
        [{**r, "language": "ind", "_hteb_split": "test_expert"} for r in _nli(("x",), 4)],
        ("sentence1", "sentence2"), ["default"],
    ),
    "IsiZuluNewsClassification.v2": (_labelled("zul", 3), ("text",), ["default"]),
    # English sets HTEB reads from mteb's subset "en" (their language_configs) and its
    # test split (mteb scores validation too): each record's language is "en", the run's
    # subset too
    "AmazonCounterfactualClassification": (_labelled("en", 3), ("text",), ["en"]),
    "MassiveIntentClassification": (_labelled("en", 3), ("text",), ["en"]),
    "SentimentAnalysisHindi.v2": (_labelled("hin", 3), ("text",), ["default"]),
    # the Hub's rows hold one text each; HTEB's loader makes them one set, its keys
    # language and _hteb_split in that order
    "PlscClusteringS2S.v2": (
        [{"sentences": [f"tekst {i}" for i in range(6)], "labels": ["a", "b", "c"] * 2,
          "language": "pol", "_hteb_split": "test"}],
        ("sentences",), ["default"],
    ),
}  # fmt: skip


def _rewritten(records: list[dict], fields: tuple[str, ...], mark: str, empty: int | None):
    """Each text with `mark` before it; the text numbered `empty` (counting every text of
    every record) given up, as HTEB writes a fallback: empty."""
    out, count = [], 0
    for record in records:
        new = dict(record)
        for field in fields:
            texts = record[field] if isinstance(record[field], list) else [record[field]]
            made = []
            for text in texts:
                made.append("" if count == empty else f"{mark} {text}")
                count += 1
            new[field] = made if isinstance(record[field], list) else made[0]
        out.append(new)
    return out, count


def _tree(root, dataset: str):
    records, fields, _ = SHAPES[dataset]
    extra = {"clustering_format": "nested"} if dataset == "PlscClusteringS2S.v2" else {}
    para, texts = _rewritten(records, fields, "Namely,", 1)
    write_pair(root, dataset, "paraphrasing", 1337, records, para,
               stats=statistics(len(records), texts, fallback=1), **extra)  # fmt: skip
    crossed, _ = _rewritten(records, fields, "[x]", None)
    write_pair(root, dataset, "cross_translation", 1338, records, crossed,
               stats=statistics(len(records), texts), generated=None, **extra)  # fmt: skip
    return root / GENERATOR / dataset


@pytest.mark.parametrize("dataset", list(SHAPES))
def test_a_multilingual_set_imports_a_subset_per_config_and_exports_back_byte_for_byte(
    invoke, tmp_path, dataset
):
    _, fields, subsets = SHAPES[dataset]
    tree = _tree(tmp_path / "t", dataset)
    run, back = tmp_path / "run", tmp_path / "back"
    result = invoke("hteb", "import", tree, "-o", run)
    assert result.exit_code == 0, result.output
    names = [f"{stem}{'' if s == 'default' else '.' + s}" for s in subsets
             for stem in ("original", "cross-translation-s1338", "paraphrase-s1337")]  # fmt: skip
    assert result.stdout.split(" as ")[1] == f"{', '.join(names)} to {run}\n"
    meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["source"]["subsets"] == subsets
    # the second text of all is given up: empty, `fallback`, never the original
    suffix = "" if subsets == ["default"] else f".{subsets[0]}"
    splits = meta["configs"][f"paraphrase-s1337{suffix}"]["rows"]
    rows = [r for split in sorted(splits, key=lambda s: s != "train")
            for r in read_rows(run / f"paraphrase-s1337{suffix}" / f"{split}.jsonl")]  # fmt: skip
    outcomes = [
        (text, status)
        for r in rows
        for f in fields
        for text, status in zip(*(
            x if isinstance(x, list) else [x] for x in (r[f], r[f"status_{f}"])
        ), strict=True)
    ]  # fmt: skip
    assert [s for _, s in outcomes].count("fallback") == 1
    assert outcomes[1] == ("", "fallback") and outcomes[0][1] == "ok"
    if dataset == "semrel2024":
        assert [r["score"] for r in rows] == [0.0, 1 / 3, 2 / 3]
        assert "label" not in rows[0]

    result = invoke("hteb", "export", run, "-o", back)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"wrote 2 HTEB pairs (cross_translation/1338, paraphrasing/1337) to {back}\n"
    )

    def files(root):
        return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())

    written = files(tmp_path / "t")
    assert files(back) == written
    for path in written:  # the same files, byte for byte
        assert (back / path).read_bytes() == (tmp_path / "t" / path).read_bytes(), path
    for folder in (back / GENERATOR / dataset).glob("*/*"):
        latest_pair(folder)  # HTEB's loader rules, on what was written


def test_a_multilingual_run_scores_its_configs_pooled_as_hteb_does(invoke, tmp_path):
    """rte3's configs, scored under --protocol hteb: one figure over every config's
    records, as HTEB's evaluation reads one file."""
    from support.environment import ENCODER

    run, out = tmp_path / "run", tmp_path / "scores"
    assert invoke("hteb", "import", _tree(tmp_path / "t", "rte3"), "-o", run).exit_code == 0
    result = invoke("evaluate", run, "-m", ENCODER, "--no-plots", "--resamples", "0", "-q",
                    "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["name"] == "hteb"
    assert {(r["config"], r["rows"]) for r in doc["models"][0]["results"]} == {
        ("original", 6), ("cross-translation-s1338", 6), ("paraphrase-s1337", 6)
    }  # fmt: skip


@pytest.mark.parametrize(
    "case", ["not a config", "configs out of order", "a text where a set belongs",
             "labels not one per text", "an empty original text", "a rewritten set cut short",
             "a list where a text belongs"],
)  # fmt: skip
def test_a_tree_htebs_loader_refuses_is_refused_in_one_line_and_nothing_is_written(
    invoke, tmp_path, case
):
    root = tmp_path / "t"
    if case in ("not a config", "configs out of order"):
        records = _pairs("en-as", 2) + _pairs("en-hi", 2)
        if case == "not a config":
            records[3]["language"] = "en-xx"
            expected = ("record 3 has language 'en-xx', not one of the dataset's configs "
                        "(en-as, en-bn, en-gu, en-hi, en-kn, en-ml, en-mr, en-or, en-pa, "
                        "en-ta, en-te, en-ur)")  # fmt: skip
        else:
            records = records[2:] + records[:2]
            expected = ("record 2 (en-as) comes after records of en-hi; HTEB writes the "
                        "configs one after another, in the order en-as, en-bn, en-gu, en-hi, "
                        "en-kn, en-ml, en-mr, en-or, en-pa, en-ta, en-te, en-ur")  # fmt: skip
        data, _ = write_pair(root, "IndicCrosslingualSTS", "paraphrasing", 1, records, records,
                             stats=statistics(4, 8))  # fmt: skip
    elif case == "a list where a text belongs":
        records = [{**r, "sentence1": [r["sentence1"]]} for r in _nli(("de",), 2)]
        data, _ = write_pair(root, "rte3", "paraphrasing", 1, records, records,
                             stats=statistics(2, 4))  # fmt: skip
        expected = "original record 0: sentence1 holds a list; shiftbench reads one text per "
        expected += "sentence1 in rte3"
    else:
        record = {"sentences": ["a b", "c d", "e f"], "labels": ["x", "y", "x"],
                  "_hteb_split": "test", "language": "eng"}  # fmt: skip
        rewritten = {**record, "sentences": ["A", "", "E"]}
        if case == "a text where a set belongs":
            record = rewritten = {**record, "sentences": "a b"}
            expected = ("original record 0: sentences must be a list of texts, as "
                        "BiorxivClusteringS2S's clustering_format 'nested' has it")  # fmt: skip
        elif case == "labels not one per text":
            record = {**record, "labels": ["x", "y"]}
            rewritten = {**rewritten, "labels": ["x", "y"]}
            expected = "record 0: its labels must be a list as long as sentences (3)"
        elif case == "an empty original text":
            record = {**record, "sentences": ["a b", " ", "e f"]}
            expected = "record 0: sentences holds an empty text or none"
        else:
            rewritten = {**rewritten, "sentences": ["A", "C"]}
            expected = "rewritten record 0: sentences holds 2 texts, its labels 3"
        data, _ = write_pair(root, "BiorxivClusteringS2S", "paraphrasing", 1, [record],
                             [rewritten], stats=statistics(1, 3, fallback=1),
                             clustering_format="nested")  # fmt: skip
    out = tmp_path / "run"
    result = invoke("hteb", "import", root / GENERATOR, "-o", out)
    assert (result.exit_code, result.stderr) == (2, f"Error: {data}: {expected}\n")
    assert not out.exists()


def test_an_sts_export_pins_the_dataset_revision_hteb_pins(shared_data, scripted, invoke, tmp_path):
    """A run gen made from mteb's STSBenchmark: the pair's source_revision is HTEB's pin of
    mteb/stsbenchmark-sts, not the revision mteb loads."""
    run, out = tmp_path / "run", tmp_path / "transformations"
    made = invoke("gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark",
                  "--limit", "3", "-t", "paraphrase", "-s", "7", "-b", "scripted", "-q",
                  "-o", run)  # fmt: skip
    assert made.exit_code == 0, made.output
    mteb_pin = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))["source"]
    assert mteb_pin["revision"] != "96943a16ea6a35129e253c659081cb59daf81b30"
    result = invoke("hteb", "export", run, "-o", out, "--generator", "org/scripted-7b")
    assert result.exit_code == 0, result.output
    pair = latest_pair(out / "org~2Fscripted-7b" / "stsbenchmark-sts" / "paraphrasing" / "7")
    assert pair.metadata["source_revision"] == "96943a16ea6a35129e253c659081cb59daf81b30"


def test_a_generated_run_of_one_text_per_row_exports_as_one_set(
    shared_data, scripted, invoke, tmp_path
):
    """mteb's PlscClusteringS2S.v2 has a headline per row; HTEB's loader makes the Hub's
    rows one set (its texts, its labels, then language and _hteb_split), and the export
    writes the run so; its import reads the set back."""
    from shiftbench.core.data.hteb import read_pair

    source = tmp_path / "plsc"
    (source / "data").mkdir(parents=True)
    rows = read_rows(shared_data / "MasakhaNEWSClusteringS2S" / "eng" / "test.jsonl")[:6]
    (source / "data" / "test.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    (source / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test.jsonl\n---\n",
        encoding="utf-8",
    )
    run, out = tmp_path / "run", tmp_path / "transformations"
    made = invoke("gen", "PlscClusteringS2S.v2", "--data-dir", source, "-t", "paraphrase",
                  "-s", "7", "-b", "scripted", "-q", "-o", run)  # fmt: skip
    assert made.exit_code == 0, made.output
    result = invoke("hteb", "export", run, "-o", out, "--generator", "org/scripted-7b")
    assert result.exit_code == 0, result.output
    folder = out / "org~2Fscripted-7b" / "PlscClusteringS2S.v2" / "paraphrasing" / "7"
    pair = latest_pair(folder)
    originals, rewritten = read_pair(pair)
    assert originals == [{"sentences": [r["sentences"] for r in rows],
                          "labels": [r["labels"] for r in rows], "language": "pol",
                          "_hteb_split": "test"}]  # fmt: skip
    assert rewritten[0]["sentences"] == [f"REWRITTEN {r['sentences']}" for r in rows]
    assert pair.metadata["clustering_format"] == "nested"
    assert pair.metadata["source_revision"] == "4f99ae4f8fc9a1074c7483d9e042fb18314261a3"
    back = tmp_path / "back"
    assert invoke("hteb", "import", out, "-o", back).exit_code == 0
    assert [len(r["sentences"]) for r in read_rows(back / "original" / "test.jsonl")] == [6]


def test_validate_refuses_a_run_of_sets_of_texts_in_one_line(invoke, tmp_path):
    """validate's checks read one text per field: a nested clustering run is refused with
    one line and exit 2, and nothing is written."""
    run = tmp_path / "run"
    tree = _tree(tmp_path / "t", "PlscClusteringS2S.v2")
    assert invoke("hteb", "import", tree, "-o", run).exit_code == 0
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    result = invoke("validate", run, "-q")
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: validate does not handle Clustering runs whose rows hold sets of texts yet: "
        f"{run / 'cross-translation-s1338'}'s sentences is a list\n",
    )
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


def test_an_export_writes_empty_each_text_of_a_set_hteb_would_give_up_on(invoke, tmp_path):
    """One text of a set is a placeholder ("N/A", which HTEB's generator refuses): that
    text alone is written empty, as --protocol hteb puts that text alone back."""
    run, back = tmp_path / "run", tmp_path / "back"
    tree = _tree(tmp_path / "t", "PlscClusteringS2S.v2")
    assert invoke("hteb", "import", tree, "-o", run).exit_code == 0
    path = run / "paraphrase-s1337" / "test.jsonl"
    (row,) = read_rows(path)
    row["sentences"][4] = "N/A"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    result = invoke("hteb", "export", run, "-o", back)
    assert result.exit_code == 0, result.output
    from shiftbench.core.data.hteb import read_pair

    folder = back / GENERATOR / "PlscClusteringS2S.v2" / "paraphrasing" / "1337"
    (written,) = read_pair(latest_pair(folder))[1]
    assert written["sentences"] == ["" if j in (1, 4) else f"Namely, tekst {j}" for j in range(6)]


def test_an_export_of_another_split_than_htebs_is_refused(invoke, tmp_path):
    """MassiveIntent's MTEB task scores validation and test; HTEB reads test alone, so a
    run holding only validation has nothing HTEB would take."""
    tree = _tree(tmp_path / "t", "MassiveIntentClassification")
    run = tmp_path / "run"
    assert invoke("hteb", "import", tree, "-o", run).exit_code == 0
    meta_path = run / "shiftbench.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    assert meta["source"]["splits"] == ["test"]
    meta["source"]["splits"] = ["validation"]
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    back = tmp_path / "back"
    result = invoke("hteb", "export", run, "-o", back)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {run}: HTEB scores MassiveIntentClassification's test split; the run "
        "holds validation\n",
    )
    assert not back.exists()
