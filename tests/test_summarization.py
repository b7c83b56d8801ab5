"""Summarization: machine summaries rewritten by gen, scored by evaluate as mteb scores them.

The data is a small folder laid out as the Hub's mteb/summeval (one default config, a test
split, mteb's column names), with texts written for these tests: four documents, two human
summaries and four machine summaries each, relevance on SummEval's 1-5 scale. The last
document's summaries are all rated alike, so mteb (and shiftbench) skip it.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest
from conftest import ENCODER, read_rows
from scipy.stats import spearmanr

SHARED = "The article reports on a local event."  # a machine summary of two documents

DOCUMENTS = [
    {
        "text": "The river town opened a new footbridge on Saturday after two years of "
        "building. The bridge links the old market to the railway station, and the mayor "
        "said it would cut the walk to the trains from twenty minutes to five.",
        "human_summaries": [
            "A footbridge linking the market and the station opened after two years.",
            "The town's new bridge shortens the walk to the railway station.",
        ],
        "machine_summaries": [
            "A new footbridge opened, cutting the walk to the station to five minutes.",
            "The mayor spoke on Saturday.",
            SHARED,
            "Trains in the region run every twenty minutes.",
        ],
        "relevance": [4.6667, 2.0, 2.3333, 1.3333],
    },
    {
        "text": "Researchers counted more than three hundred nesting turtles on the "
        "island's beaches this season, the highest number in a decade. They credit a "
        "ban on night lighting near the shore, which no longer confuses the hatchlings.",
        "human_summaries": [
            "Turtle nests on the island reached a ten-year high.",
            "A ban on beach lighting helped hatchling turtles, researchers say.",
        ],
        "machine_summaries": [
            "Over three hundred turtles nested, helped by a ban on lights near the shore.",
            "Researchers went to the island.",
            "Night lighting is popular on many beaches.",
            "Turtle numbers hit their highest level in ten years.",
        ],
        "relevance": [5.0, 1.6667, 1.0, 4.3333],
    },
    {
        "text": "The city library will stay open until midnight during the exam weeks. "
        "Students had asked for longer hours, and the council agreed to pay for extra "
        "staff from its education budget.",
        "human_summaries": [
            "The library extends its hours to midnight for exams.",
            "The council funds late opening of the library for students.",
        ],
        "machine_summaries": [
            SHARED,
            "Students asked for longer library hours during exams, and the council agreed.",
            "The council has an education budget.",
            "The library closes at midnight.",
        ],
        "relevance": [2.0, 4.6667, 1.6667, 3.3333],
    },
    {
        "text": "A bakery on the main square won the regional bread prize for its rye "
        "loaf, made with flour from a mill that has worked since 1850.",
        "human_summaries": [
            "A bakery's rye loaf won the regional bread prize.",
            "Rye bread from the square's bakery took the region's prize.",
        ],
        "machine_summaries": [
            "The bakery won a prize.",
            "A mill has worked since 1850.",
            "The square has a bakery.",
            "Rye loaf wins.",
        ],
        "relevance": [3.0, 3.0, 3.0, 3.0],
    },
]


def summeval_folder(root: Path) -> Path:
    """The documents as a Hub-layout copy of mteb/summeval (its columns, one test split)."""
    (root / "data").mkdir(parents=True)
    with open(root / "data" / "test.jsonl", "w", encoding="utf-8") as fh:
        for i, doc in enumerate(DOCUMENTS):
            scores = {k: doc["relevance"] for k in ("coherence", "fluency", "consistency")}
            fh.write(json.dumps({"id": f"doc-{i}", **doc, **scores}) + "\n")
    (root / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test.jsonl\n---\n\n# summeval (test copy)\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def folder(tmp_path) -> Path:
    return summeval_folder(tmp_path / "summeval")


def _results(out: Path) -> list[dict]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]


@pytest.mark.slow
def test_scores_equal_mteb_to_1e6(folder, invoke, tmp_path):
    """The MTEB task with --data-dir and the folder with --task-type both give mteb's own
    figures (its v2 evaluator run on the same data with the same encoder)."""
    import mteb

    from shiftbench.core.models.encoders import Encoder

    task = mteb.get_task("SummEvalSummarization.v2")
    task.dataset = datasets.load_dataset(str(folder))
    task.data_loaded = True
    run = mteb.evaluate(Encoder(ENCODER).model, task, cache=None, overwrite_strategy="always")
    theirs = run.task_results[0].scores["test"][0]
    for source in (
        ["SummEvalSummarization.v2", "--data-dir", folder],
        [folder, "--task-type", "Summarization"],
    ):
        out = tmp_path / f"results-{len(source)}"
        result = invoke("evaluate", *source, "-m", ENCODER, "-o", out, "--no-plots")
        assert result.exit_code == 0, result.output
        (ours,) = _results(out)
        assert ours["rows"] == 4
        metrics = ["pearson", "spearman", "cosine_spearman", "cosine_pearson"]
        assert sorted(ours["scores"]) == sorted([*metrics, "dot_spearman", "dot_pearson"])
        for metric, value in ours["scores"].items():
            assert value == pytest.approx(theirs[metric], abs=1e-6), metric
        assert ours["main_score"] == pytest.approx(theirs["main_score"], abs=1e-6)


def test_superseded_summeval_is_refused_before_loading_a_model(folder, invoke, tmp_path):
    out = tmp_path / "results"
    result = invoke("evaluate", "SummEval", "--data-dir", folder, "-m", "no/such-model", "-o", out)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "Error: SummEval is scored with mteb's superseded summarisation metric; "
        "evaluate SummEvalSummarization.v2 (the same data) instead\n"
    )
    assert not out.exists()


@pytest.fixture
def summ_run(scripted, folder, invoke, tmp_path) -> Path:
    """The folder paraphrased by the scripted backend; one machine summary of the third
    document always comes back empty."""
    scripted.empty_for = {"The council has an education budget."}
    out = tmp_path / "run"
    result = invoke(
        "gen", "SummEvalSummarization.v2", "--data-dir", folder, "-t", "paraphrase",
        "-s", "1", "-b", "scripted", "-q", "-o", out, "--no-cache",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_gen_rewrites_each_machine_summary(summ_run, scripted):
    rows = read_rows(summ_run / "paraphrase-s1" / "test.jsonl")
    assert [r["row_id"] for r in rows] == [0, 1, 2, 3]
    for row, doc in zip(rows, DOCUMENTS, strict=True):
        assert row["original_machine_summaries"] == doc["machine_summaries"]
        assert row["text"] == doc["text"]
        assert row["human_summaries"] == doc["human_summaries"]
        assert row["relevance"] == doc["relevance"]
        assert "original_text" not in row and "original_human_summaries" not in row
    first = rows[0]
    assert first["machine_summaries"] == [
        f"REWRITTEN {t}" for t in DOCUMENTS[0]["machine_summaries"]
    ]
    assert first["status_machine_summaries"] == ["ok"] * 4
    assert first["language_machine_summaries"] == ["en"] * 4
    assert first["status"] == "ok"
    third = rows[2]
    assert third["machine_summaries"][2] == ""  # a failed summary is never the original
    assert third["status_machine_summaries"] == ["ok", "ok", "empty", "ok"]
    assert third["status"] == "empty"
    assert [r["status"] for r in rows] == ["ok", "ok", "empty", "ok"]
    # the summary two documents share is sent once; every other text once per attempt
    sent = [t for call in scripted.calls for t in call]
    assert sent.count(SHARED) == 1
    unique = {t for d in DOCUMENTS for t in d["machine_summaries"]}
    assert unique == set(sent)
    meta = json.loads((summ_run / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["configs"]["paraphrase-s1"]["status_counts"] == {"test": {"empty": 1, "ok": 3}}
    assert meta["source"]["text_fields"] == ["machine_summaries"]
    assert datasets.load_dataset(str(summ_run), "paraphrase-s1", split="test").num_rows == 4


def _per_document(machine: list[list[str]], docs: list[dict], model) -> np.ndarray:
    """Each document's Spearman(relevance, best cosine to a human summary) in float64,
    NaN where the relevance or the predictions are all equal."""
    found = []
    for summaries, doc in zip(machine, docs, strict=True):
        m = model.encode(summaries).astype(np.float64)
        h = model.encode(doc["human_summaries"]).astype(np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        h /= np.linalg.norm(h, axis=1, keepdims=True)
        best = (m @ h.T).max(axis=1)
        constant = len(set(doc["relevance"])) == 1 or len(set(best.round(12))) == 1
        found.append(np.nan if constant else spearmanr(doc["relevance"], best).statistic)
    return np.asarray(found)


@pytest.mark.slow
def test_evaluate_scores_rewritten_summaries_against_original_human_scores(
    summ_run, invoke, tmp_path
):
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    out = tmp_path / "results"
    result = invoke("evaluate", summ_run, "-m", ENCODER, "-o", out, "--no-plots")
    assert result.exit_code == 0, result.output
    original, variant = _results(out)
    assert (original["config"], variant["config"]) == ("original", "paraphrase-s1")
    assert (variant["rows"], variant["rows_total"]) == (3, 4)
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    machine = [d["machine_summaries"] for d in DOCUMENTS]
    before = _per_document(machine, DOCUMENTS, model)
    # the variant's summaries against the original human summaries and relevance; the
    # third document's row failed (one empty summary), so it is left out on both sides
    after = _per_document([[f"REWRITTEN {t}" for t in m] for m in machine], DOCUMENTS, model)
    after[2] = np.nan
    assert np.isnan(before[3]) and np.isfinite(before[:3]).all()
    assert original["main_score"] == pytest.approx(np.nanmean(before), abs=1e-6)
    assert variant["main_score"] == pytest.approx(np.nanmean(after), abs=1e-6)
    same = np.nanmean(before[[0, 1]])
    assert variant["original_same_rows"] == pytest.approx(same, abs=1e-6)
    assert variant["delta"] == pytest.approx(np.nanmean(after) - same, abs=1e-6)
    # the paired bootstrap: documents drawn with replacement (seed 0), each draw's mean
    # over its scored documents, variant minus original
    drawn = np.random.default_rng(0).integers(0, 4, size=(1000, 4))
    deltas = []
    for draw in drawn:
        scored = [i for i in draw if np.isfinite(after[i])]
        deltas.append(np.mean(after[scored]) - np.mean(before[scored]) if scored else np.nan)
    deltas = np.asarray(deltas)
    replicates = np.asarray([np.nan if v is None else v for v in variant["delta_replicates"]])
    assert np.isnan(replicates).tolist() == np.isnan(deltas).tolist()
    assert np.nanmax(np.abs(replicates - deltas)) < 1e-5
    finite = deltas[np.isfinite(deltas)]
    assert variant["ci95"] == pytest.approx(np.percentile(finite, [2.5, 97.5]).tolist(), abs=1e-5)
    assert variant["self_retrieval"]["pairs"] == 12


@pytest.mark.parametrize(
    ("command", "options"),
    [
        (["validate"], []),
        (["human-eval", "batch"], ["-o", "batch"]),
        (["probe"], ["-m", "no/such-model", "-o", "probes"]),
    ],
)
def test_stages_reading_one_text_per_field_refuse_a_summarization_run(
    summ_run, invoke, tmp_path, command, options
):
    before = sorted(p.relative_to(summ_run) for p in summ_run.rglob("*"))
    outputs = [str(tmp_path / o) if o in ("batch", "probes") else o for o in options]
    result = invoke(*command, summ_run, *outputs)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"Error: {command[0]} does not handle Summarization runs yet: each row's "
        "machine_summaries is a list of texts\n"
    )
    assert sorted(p.relative_to(summ_run) for p in summ_run.rglob("*")) == before
    assert not (tmp_path / "batch").exists() and not (tmp_path / "probes").exists()


def test_run_plan_counts_each_machine_summary_once(folder, invoke, tmp_path):
    """15 unique texts: 16 machine summaries, one of them in two documents; the document,
    the human summaries are not sent."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "output: out\nsources:\n  - name: SummEvalSummarization.v2\n"
        f"    data_dir: {folder}\ntransforms: [paraphrase]\nseeds: [1, 2]\n",
        encoding="utf-8",
    )
    result = invoke("run", spec, "--dry-run")
    assert result.exit_code == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("SummEval"))
    # configs, texts, calls: two configs, each sending the 15 unique texts once
    assert row.split()[:4] == ["SummEvalSummarization.v2", "2", "30", "30"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml", "summeval"]


@pytest.mark.slow
def test_references_rewrites_the_human_summaries_too(scripted, folder, invoke, tmp_path):
    """--rewrite queries,references (HTEB's parts for summarisation) rewrites each human
    summary as well; evaluate scores the rewritten machine summaries against the rewritten
    human summaries, with the original relevance scores."""
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    out = tmp_path / "run"
    result = invoke(
        "gen", "SummEvalSummarization.v2", "--data-dir", folder, "-t", "paraphrase", "-s", "1",
        "-b", "scripted", "-q", "-o", out, "--no-cache", "--protocol", "hteb",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["rewrite"] == ["queries", "references"]
    assert meta["source"]["text_fields"] == ["machine_summaries", "human_summaries"]
    rows = read_rows(out / "paraphrase-s1" / "test.jsonl")
    for row, doc in zip(rows, DOCUMENTS, strict=True):
        assert row["original_human_summaries"] == doc["human_summaries"]
        assert row["human_summaries"] == [f"REWRITTEN {t}" for t in doc["human_summaries"]]
        assert row["status_human_summaries"] == ["ok"] * len(doc["human_summaries"])
        assert row["text"] == doc["text"]  # the document is never embedded, nor rewritten

    results = tmp_path / "results"
    result = invoke("evaluate", out, "-m", ENCODER, "-o", results, "--no-plots")
    assert result.exit_code == 0, result.output
    original, variant = _results(results)
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    rewritten = [
        {**d, "human_summaries": [f"REWRITTEN {t}" for t in d["human_summaries"]]}
        for d in DOCUMENTS
    ]
    machine = [[f"REWRITTEN {t}" for t in d["machine_summaries"]] for d in DOCUMENTS]
    after = _per_document(machine, rewritten, model)
    assert variant["rows"] == 4
    # the run folder's protocol (hteb) scores it: HTEB's pooled Spearman is the main score,
    # mteb's mean per document beside it
    assert variant["main_score"] == pytest.approx(_pooled(machine, rewritten, model), abs=1e-6)
    assert variant["scores"]["cosine_spearman"] == pytest.approx(np.nanmean(after), abs=1e-6)
    originals = [d["machine_summaries"] for d in DOCUMENTS]
    before = _per_document(originals, DOCUMENTS, model)
    assert original["main_score"] == pytest.approx(_pooled(originals, DOCUMENTS, model), abs=1e-6)
    assert original["scores"]["cosine_spearman"] == pytest.approx(np.nanmean(before), abs=1e-6)


def test_references_is_a_summarization_part_only(scripted, shared_data, invoke, tmp_path):
    result = invoke("gen", "sample", "--rewrite", "queries,references", "-b", "scripted",
                    "-o", tmp_path / "run")  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --rewrite references: STS tasks have no references to rewrite; their parts: "
        "queries\n"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["shiftbench", "hteb"])
def test_mteb_scores_the_run_as_tasks_as_evaluate_does(
    scripted, folder, invoke, tmp_path, protocol, embedding_store, mteb_model
):
    """shiftbench.mteb_tasks on a summarisation run, machine summaries rewritten (and, under
    hteb, the human summaries too): mteb's own evaluator gives evaluate's main scores."""
    from test_mteb_tasks import ours, theirs

    import shiftbench

    run = tmp_path / "run"
    result = invoke(
        "gen", "SummEvalSummarization.v2", "--data-dir", folder, "-t", "paraphrase", "-s", "1",
        "-b", "scripted", "-q", "-o", run, "--no-cache", "--protocol", protocol,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tasks = shiftbench.mteb_tasks(run)
    # mteb's tasks score with mteb's metric (the mean per document), evaluate's under the
    # shiftbench protocol; --protocol hteb's main score is HTEB's pooled Spearman instead
    expected = ours(invoke, run, tmp_path, embedding_store, "--protocol", "shiftbench")
    assert [t.metadata.name for t in tasks] == [
        "SummEvalSummarization.v2.original",
        "SummEvalSummarization.v2.paraphrase-s1",
    ]
    got = theirs(mteb_model, tasks, "SummEvalSummarization.v2")
    assert sorted(got) == sorted(expected) == ["original", "paraphrase-s1"]
    if protocol == "shiftbench":  # (rank correlations of four documents can tie)
        assert got["original"] != pytest.approx(got["paraphrase-s1"], abs=1e-3)
    for config, value in expected.items():
        assert got[config] == pytest.approx(value, abs=1e-4), config


def _pooled(machine: list[list[str]], docs: list[dict], model) -> float:
    """HTEB's figure by hand: one Spearman over every machine summary of every document,
    each predicted by its best float64 cosine to its document's human summaries."""
    gold, best = [], []
    for summaries, doc in zip(machine, docs, strict=True):
        m = model.encode(summaries).astype(np.float64)
        h = model.encode(doc["human_summaries"]).astype(np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        h /= np.linalg.norm(h, axis=1, keepdims=True)
        best += list((m @ h.T).max(axis=1))
        gold += list(doc["relevance"])
    return float(spearmanr(gold, best).statistic)


@pytest.mark.slow
def test_hteb_scores_summaries_with_one_pooled_spearman(summ_run, invoke, tmp_path):
    """Under --protocol hteb the main score is HTEB's: one Spearman pooled over all 16
    machine summaries (the document mteb skips included), the failed summary scored as
    its original text; mteb's per-document mean stays among the metrics."""
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    out = tmp_path / "results"
    args = ["-m", ENCODER, "-o", out, "--no-plots", "--protocol", "hteb"]
    result = invoke("evaluate", summ_run, *args)
    assert result.exit_code == 0, result.output
    original, variant = _results(out)
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    machine = [d["machine_summaries"] for d in DOCUMENTS]
    rewritten = [[f"REWRITTEN {t}" for t in m] for m in machine]
    rewritten[2][2] = machine[2][2]  # the empty rewrite, put back
    before, after = _pooled(machine, DOCUMENTS, model), _pooled(rewritten, DOCUMENTS, model)
    assert (variant["rows"], variant["restored"]) == (4, {"rows": 1, "texts": 1,
                                                          "kept_as_written": 0})  # fmt: skip
    assert original["main_score"] == pytest.approx(before, abs=1e-6)
    assert variant["main_score"] == pytest.approx(after, abs=1e-6)
    assert variant["delta"] == pytest.approx(after - before, abs=1e-6)
    assert variant["scores"]["pooled_cosine_spearman"] == variant["main_score"]
    per_document = _per_document(rewritten, DOCUMENTS, model)
    assert variant["scores"]["cosine_spearman"] == pytest.approx(np.nanmean(per_document), abs=1e-6)
    low, high = variant["ci95"]
    assert low <= variant["delta"] <= high
