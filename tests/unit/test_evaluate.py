"""evaluate: scores equal mteb's on real data, and run folders are scored pair by pair."""

from __future__ import annotations

import numpy as np
import pytest

from shiftbench.evaluate.evaluators.sts import sts_metrics


class _PointScoring:
    """A Scoring whose texts are their own 2-d embeddings ("x y")."""

    @staticmethod
    def make(train, rows, main="accuracy"):
        from shiftbench.evaluate.evaluators import Scoring

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

    from shiftbench.evaluate.evaluators.classification import evaluate

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
    from shiftbench.evaluate.evaluators.pair_classification import threshold_metrics

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


def test_metrics_match_hand_computed_values():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    b = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    metrics = sts_metrics(a, b, [5.0, 0.0, 2.5], (0.0, 5.0))
    # cosine similarities 1, 0, 0.707 rank exactly as the gold scores do
    assert metrics["cosine_spearman"] == pytest.approx(1.0)
    assert metrics["euclidean_spearman"] == pytest.approx(1.0)


def test_self_retrieval_ranks_each_original_among_all_originals():
    """Hand-made vectors: a' is nearest its original, b' is nearer C than B, c' is
    nearest to A then B then C (its original third)."""
    from shiftbench.evaluate.evaluators import Scoring
    from shiftbench.evaluate.evaluators.self_retrieval import self_retrieval, text_pairs

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
    from shiftbench.evaluate.evaluators.evalrank import evalrank, top_quarter

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
    from shiftbench.evaluate.collect import Collection, ConfigView
    from shiftbench.evaluate.resample import interval
    from shiftbench.evaluate.run import score_collection

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
