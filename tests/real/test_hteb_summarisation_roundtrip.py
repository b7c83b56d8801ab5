"""An HTEB summarisation tree, both ways: import, `evaluate --protocol hteb` equal to
HTEB's summarisation figure worked out here, export back to the same files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import spearmanr
from support.environment import ENCODER
from support.files import read_rows
from support.hteb import MODEL
from support.hteb_lists import hteb_load, write_hteb_pair
from support.summarization import DOCUMENTS

from shiftbench.core.data.hteb import generator_directory

FIELDS = ("human_summaries", "machine_summaries")
DATASET = "summeval"


def _records() -> list[dict]:
    """The test documents as HTEB's summeval records (mteb/summeval's columns)."""
    return [
        {"id": f"doc-{i}", **doc, "_hteb_split": "test", "language": "eng"}
        for i, doc in enumerate(DOCUMENTS)
    ]


def _rewritten(records, given_up=()):
    """HTEB's transformed column: every summary without its last word, empty where
    `given_up` names (record, field, position)."""
    out = []
    for i, record in enumerate(records):
        new = dict(record)
        for field in FIELDS:
            new[field] = [
                "" if (i, field, j) in given_up else " ".join(t.split()[:-1])
                for j, t in enumerate(record[field])
            ]
        out.append(new)
    return out


@pytest.fixture
def summeval_tree(tmp_path):
    root = tmp_path / "transformations"
    records = _records()
    given_up = {(0, "machine_summaries", 1), (2, "human_summaries", 0)}
    write_hteb_pair(root, DATASET, "paraphrasing", 1337, records, _rewritten(records, given_up),
                    FIELDS)  # fmt: skip
    write_hteb_pair(root, DATASET, "backtranslation", 1338, records, records, FIELDS,
                    generated=None)  # fmt: skip
    return root, records


def hteb_summarisation(records: list[dict]) -> float:
    """HTEB's summarisation figure: each machine summary's highest cosine (numpy, no norm
    below 1e-12) to its record's human summaries, one Spearman correlation with the
    relevance scores over every machine summary of every record."""
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")

    def unit(x):
        return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)

    predicted, gold = [], []
    for r in records:
        human = unit(model.encode(r["human_summaries"]))
        for vector in unit(model.encode(r["machine_summaries"])):
            predicted.append(float(np.max((human * vector[None, :]).sum(-1))))
        gold += r["relevance"]
    return float(spearmanr(gold, predicted).statistic)


def test_a_summarisation_tree_imports_scores_as_hteb_and_exports_back(
    summeval_tree, invoke, tmp_path
):
    tree, records = summeval_tree
    run, results, back = tmp_path / "run", tmp_path / "results", tmp_path / "back"
    made = invoke("hteb", "import", tree, "-o", run)
    assert (made.exit_code, made.stdout) == (0, (
        f"imported HTEB's {DATASET} rewrites by {MODEL} as original, backtranslation-s1338, "
        f"paraphrase-s1337 to {run}\n"
    ))  # fmt: skip
    rows = read_rows(run / "paraphrase-s1337" / "test.jsonl")
    assert rows[0]["status_machine_summaries"] == ["ok", "fallback", "ok", "ok"]
    assert rows[2]["status_human_summaries"] == ["fallback", "ok"]
    assert [r["status"] for r in rows] == ["fallback", "ok", "fallback", "ok"]
    unchanged = read_rows(run / "backtranslation-s1338" / "test.jsonl")
    assert {s for r in unchanged for s in r["status_machine_summaries"]} == {"identical"}

    done = invoke("evaluate", run, "-m", ENCODER, "--precision", "float32", "--no-plots",
                  "--resamples", "0", "-q", "-o", results)  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["name"] == "hteb"
    scored = {r["config"]: r for r in doc["models"][0]["results"] if not r.get("partial")}
    data = tree / generator_directory(MODEL) / DATASET
    for config, folder in (("original", None), ("paraphrase-s1337", "paraphrasing/1337"),
                           ("backtranslation-s1338", "backtranslation/1338")):  # fmt: skip
        if folder is None:
            texts = records
        else:
            (pair,) = (data / folder).glob("data*.parquet")
            texts = hteb_load(pair, FIELDS)[1]  # HTEB restores what its generator gave up
        assert scored[config]["main_score"] == pytest.approx(hteb_summarisation(texts), abs=1e-6)
    assert scored["paraphrase-s1337"]["restored"] == {"rows": 2, "texts": 2, "kept_as_written": 0}
    assert abs(scored["paraphrase-s1337"]["main_score"] - scored["original"]["main_score"]) > 1e-3

    exported = invoke("hteb", "export", run, "-o", back)
    assert (exported.exit_code, exported.stdout) == (
        0, f"wrote 2 HTEB pairs (backtranslation/1338, paraphrasing/1337) to {back}\n"
    )  # fmt: skip
    for folder in ("paraphrasing/1337", "backtranslation/1338"):
        theirs = sorted((data / folder).iterdir())
        ours = sorted((back / data.relative_to(tree) / folder).iterdir())
        assert [p.name for p in ours] == [p.name for p in theirs]
        assert [p.read_bytes() for p in ours] == [p.read_bytes() for p in theirs]
        (pair,) = (p for p in ours if p.suffix == ".parquet")
        assert hteb_load(pair, FIELDS) == hteb_load(
            next(p for p in theirs if p.suffix == ".parquet"), FIELDS
        )


@pytest.mark.parametrize(
    "case", ["score missing", "blank summary", "summary lost", "one score", "list missing"]
)
def test_a_summarisation_tree_hteb_refuses_is_refused_in_one_line(invoke, tmp_path, case):
    """Nothing is written, and the line names the file and the record."""
    root, out = tmp_path / "transformations", tmp_path / "run"
    records = _records()
    rewritten = _rewritten(records)
    if case == "score missing":
        records[1] = dict(records[1], relevance=records[1]["relevance"][:3])
    elif case == "blank summary":
        records[2] = dict(records[2], human_summaries=["", *records[2]["human_summaries"][1:]])
    elif case == "summary lost":
        rewritten[0]["machine_summaries"] = rewritten[0]["machine_summaries"][:3]
    elif case == "one score":
        records = [dict(r, relevance=[3.0] * len(r["relevance"])) for r in records]
    rewritten = [dict(r, relevance=o["relevance"]) for r, o in zip(rewritten, records, strict=True)]
    if case == "list missing":  # null: HTEB gives up on each of its texts
        rewritten[3]["machine_summaries"] = None
    data, _ = write_hteb_pair(root, DATASET, "paraphrasing", 1337, records, rewritten, FIELDS)
    expected = {
        "score missing": f"{data}: record 1: 4 machine summaries but 3 relevance scores",
        "blank summary": f"{data}: record 2: human_summaries must be a non-empty list of "
        "non-blank texts",
        "summary lost": f"{data}: record 0: machine_summaries: the rewrite holds 3 texts, the "
        "original 4",
        "one score": f"{data}: the relevance scores must hold two distinct values",
    }.get(case)
    result = invoke("hteb", "import", root, "-o", out)
    if expected is None:  # a wholly missing list is given up on text by text, as HTEB does
        assert result.exit_code == 0, result.output
        rows = read_rows(out / "paraphrase-s1337" / "test.jsonl")
        assert rows[3]["status_machine_summaries"] == ["fallback"] * 4
        return
    assert (result.exit_code, result.stderr) == (2, f"Error: {expected}\n")
    assert not out.exists()


def test_a_generated_summarisation_run_exports_as_hteb_writes_its_files(
    scripted, summeval_dir, invoke, tmp_path
):
    """gen's own run (the hteb protocol: both lists rewritten): each text HTEB's generator
    would have given up on is written empty (an empty output, a placeholder), every other
    as gen wrote it, with statistics counted from the records and HTEB's loader accepting
    the pair."""
    scripted.empty_for = {"The council has an education budget."}
    scripted.script = {"Rye loaf wins.": ["N/A"] * 9}
    run, out = tmp_path / "run", tmp_path / "transformations"
    made = invoke("gen", "SummEvalSummarization.v2", "--data-dir", summeval_dir, "-t",
                  "paraphrase", "-s", "3", "-b", "scripted", "--protocol", "hteb",
                  "--max-failure-rate", "1", "-q", "-o", run, "--no-cache")  # fmt: skip
    assert made.exit_code == 0, made.output
    result = invoke("hteb", "export", run, "-o", out, "--generator", "org/scripted-7b")
    assert (result.exit_code, result.stdout) == (
        0,
        f"wrote 1 HTEB pair (paraphrasing/3) to {out}\n",
    )
    (data,) = (out / "org~2Fscripted-7b" / DATASET / "paraphrasing" / "3").glob("data*.parquet")
    originals, restored = hteb_load(data, FIELDS)
    rows = read_rows(run / "paraphrase-s3" / "test.jsonl")
    empty = {(2, 2), (3, 3)}  # (record, machine summary): the empty output and the "N/A"
    assert [r["id"] for r in originals] == [f"doc-{i}" for i in range(len(DOCUMENTS))]
    written = pq_column(data, "paraphrasing_seed_3")
    for i, (record, row) in enumerate(zip(written, rows, strict=True)):
        assert record["human_summaries"] == row["human_summaries"]
        assert record["machine_summaries"] == [
            "" if (i, j) in empty else t for j, t in enumerate(row["machine_summaries"])
        ]
        assert restored[i]["machine_summaries"] == [
            originals[i]["machine_summaries"][j] if (i, j) in empty else t
            for j, t in enumerate(row["machine_summaries"])
        ]
    meta = json.loads(next(data.parent.glob("metadata*.JSON")).read_text(encoding="utf-8"))
    stats = meta["generation_statistics"]
    assert (stats["text_fields_total"], stats["text_fields_with_fallback"]) == (24, 2)
    assert (stats["records_targeted"], stats["records_with_fallback"]) == (4, 2)


def pq_column(data, column):
    import pyarrow.parquet as pq

    return pq.read_table(data).column(column).to_pylist()
