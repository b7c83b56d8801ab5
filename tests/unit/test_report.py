"""The report's figures and statistics, each checked against an independent computation
(scipy, numpy, or a hand-worked case) and against signal-free synthetic results."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from scipy import stats as scipy_stats
from support.report import axis_documents, document, record

from shiftbench.core.data.resultsfolder import read_results
from shiftbench.core.stats import hodges_lehmann
from shiftbench.evaluate.report.statistics import (
    model_summary,
    split_half_reliability,
    stratified_halves,
)
from shiftbench.evaluate.report.summary import ReportSettings, summarise_results
from shiftbench.evaluate.report.tables import text_report
from shiftbench.evaluate.report.units import (
    ALL_MODELS,
    AXES,
    TRANSFORMATIONS_FIRST,
    Pair,
    ScoredUnit,
    aggregation,
    dataset_units,
    scored_units,
)


def simple_documents(scores):
    """scores[dataset][model] = (original, {config: transformed score}); delta is
    transformed minus original."""
    docs = []
    for dataset, models in scores.items():
        per_model = {}
        for model, (original, variants) in models.items():
            per_model[model] = [record("original", original)] + [
                record(c, s, s - original) for c, s in variants.items()
            ]
        docs.append(document(dataset, per_model))
    return docs


# --- prompt variants --------------------------------------------------------------------


def test_prompt_variants_are_rows_of_their_own_and_stay_out_of_the_axes():
    docs = [
        document(
            "d",
            {"m": [
                record("original", 0.80),
                record("paraphrase-s1", 0.70, -0.10), record("paraphrase-s2", 0.74, -0.06),
                record("paraphrase-p2-s1", 0.50, -0.30), record("paraphrase-p2-s2", 0.56, -0.24),
                record("summarisation-s1", 0.60, -0.20),
            ]},
        )
    ]  # fmt: skip
    summary = summarise_results(docs)
    model = summary["models"]["m"]
    assert set(model["transforms"]) == {"paraphrase", "paraphrase-p2", "summarisation"}
    assert model["transforms"]["paraphrase"]["delta"] == pytest.approx(-0.08)
    assert model["transforms"]["paraphrase-p2"]["delta"] == pytest.approx(-0.27)
    # the axis and the total see the default prompt only
    assert model["axes"]["Lexical/Stylistic"]["delta"] == pytest.approx(-0.08)
    assert model["total"]["delta"] == pytest.approx((-0.08 - 0.20) / 2)
    rows = {r["variant"]: r for r in summary["prompt_sensitivity"]}
    assert set(rows) == {"paraphrase", "paraphrase-p2"}
    assert rows["paraphrase-p2"]["delta"] == pytest.approx(-0.27)
    assert rows["paraphrase-p2"]["seed_sd"] == pytest.approx(statistics.stdev([-0.30, -0.24]))
    assert rows["paraphrase"]["seed_sd"] == pytest.approx(statistics.stdev([-0.10, -0.06]))
    text = text_report(summary)
    assert "Prompt sensitivity:" in text and "paraphrase-p2" in text


def test_prompt_variant_read_from_config_names_of_older_results(tmp_path):
    """results.json written before records carried their prompt variant: the reader takes
    it from the config name."""
    old = record("paraphrase-p3-s7", 0.5, -0.1)
    del old["prompt_variant"]
    older = record("paraphrase-s7", 0.55, -0.05)
    del older["prompt_variant"]
    doc = document("d", {"m": [record("original", 0.6), old, older]})
    (tmp_path / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    read = read_results(tmp_path)
    assert [r.get("prompt_variant") for r in read["models"][0]["results"]] == [None, 3, 1]
    (unit,) = scored_units([read])
    assert unit.transforms["paraphrase-p3"].delta == pytest.approx(-0.1)
    assert unit.axes()["Lexical/Stylistic"].delta == pytest.approx(-0.05)


# --- dataset-level units ----------------------------------------------------------------


def multilingual_documents(rng):
    """Two models; seven monolingual datasets and one with three subsets."""
    docs = []
    for d in range(8):
        subsets = ["de", "en", "fr"] if d == 7 else ["default"]
        per_model = {}
        for m in range(2):
            rs = []
            for subset in subsets:
                base = 0.7 + 0.05 * m
                rs.append(record("original", base, subset=subset))
                for t, shift in (("paraphrase", -0.02), ("summarisation", -0.06 * (m + 1))):
                    delta = float(rng.normal(shift, 0.01))
                    rs.append(record(f"{t}-s1", base + delta, delta, subset=subset))
            per_model[f"m{m}"] = rs
        docs.append(document(f"d{d}", per_model))
    return docs


def test_tests_take_one_observation_per_dataset():
    """A multilingual dataset's subsets are averaged into one observation, and the pooled
    test averages the models within a dataset (HTEB), so n is the number of datasets."""
    docs = multilingual_documents(np.random.default_rng(11))
    summary = summarise_results(docs)
    rows = {(r["model"], r["transform"]): r for r in summary["tests"]}
    per_dataset = {}  # (model, dataset, transform) -> mean delta over subsets
    for doc in docs:
        for entry in doc["models"]:
            for t in ("paraphrase", "summarisation"):
                deltas = [r["delta"] for r in entry["results"] if r["transform"] == t]
                per_dataset[(entry["model"]["id"], doc["target"], t)] = np.mean(deltas)
    for t in ("paraphrase", "summarisation"):
        for model in ("m0", "m1"):
            deltas = [per_dataset[(model, f"d{d}", t)] for d in range(8)]
            row = rows[(model, t)]
            assert row["n"] == 8
            assert row["p"] == pytest.approx(scipy_stats.wilcoxon(deltas, method="exact").pvalue)
        pooled = [
            (per_dataset[("m0", f"d{d}", t)] + per_dataset[("m1", f"d{d}", t)]) / 2
            for d in range(8)
        ]
        row = rows[(ALL_MODELS, t)]
        assert row["n"] == 8
        assert row["p"] == pytest.approx(scipy_stats.wilcoxon(pooled, method="exact").pvalue)
        assert row["hodges_lehmann"] == pytest.approx(hodges_lehmann(pooled)[0])


def test_run_folders_of_one_source_are_one_dataset_in_the_figures_over_datasets():
    """Two results of the same source (two generators' run folders, say) give one
    observation, their mean, in the tests and the model's means; each keeps its own
    section of the report."""
    rng = np.random.default_rng(4)
    scores = {f"d{d}": {"m": (0.8, {"paraphrase-s1": float(0.7 + rng.normal(0, 0.05))})}
              for d in range(6)}  # fmt: skip
    docs = simple_documents(scores)
    twice = simple_documents({"d0": {"m": (0.8, {"paraphrase-s1": 0.5})}})[0]
    twice["target"] = "d0-other-generator"
    docs[0]["target"] = "d0-first-generator"
    for doc in (docs[0], twice):
        doc["source"]["revision"] = "abc"
    docs.append(twice)
    summary = summarise_results(docs)
    assert summary["datasets"][0] == "d0 (d0-first-generator)"
    assert summary["shared_sources"] == [
        {"source": "d0", "revision": "abc",
         "merged": ["d0 (d0-first-generator)", "d0 (d0-other-generator)"]}
    ]  # fmt: skip
    d0 = ((scores["d0"]["m"][1]["paraphrase-s1"] - 0.8) + (0.5 - 0.8)) / 2
    deltas = [d0] + [scores[f"d{d}"]["m"][1]["paraphrase-s1"] - 0.8 for d in range(1, 6)]
    (row,) = summary["tests"]
    assert row["n"] == 6
    assert row["p"] == pytest.approx(scipy_stats.wilcoxon(deltas).pvalue)
    model = summary["models"]["m"]["transforms"]["paraphrase"]
    assert model["delta"] == pytest.approx(np.mean(deltas))
    assert "Run folders of one source:" in text_report(summary)
    # a different revision is another dataset
    twice["source"]["revision"] = "def"
    assert summarise_results(docs)["tests"][0]["n"] == 7


def test_thin_intervals_are_flagged_with_their_items_and_usable_draws():
    """An interval from fewer than 30 items, or with under 95% of its draws defined, is
    marked `*` in every table, with the note saying why; the summary records both."""
    from shiftbench.core.evidence import THIN_NOTE

    rng = np.random.default_rng(0)
    full = rng.normal(-0.1, 0.02, 1000)
    holed = full.copy()
    holed[:60] = np.nan  # 940 of 1000 draws defined

    def doc(name, rows, replicates):
        d = simple_documents({name: {"m": (0.8, {"paraphrase-s1": 0.7})}})[0]
        d["models"][0]["results"][1].update(rows=rows, delta_replicates=list(replicates))
        return d

    for rows, replicates, flagged in ((40, full, False), (29, full, True), (40, holed, True)):
        summary = summarise_results([doc("a", rows, replicates)])
        figure = summary["models"]["m"]["transforms"]["paraphrase"]
        assert figure["items"] == rows
        assert figure["usable_draws"] == np.isfinite(replicates).sum()
        assert figure["resamples"] == 1000
        text = text_report(summary)
        assert ("]*" in text) == flagged
        assert (THIN_NOTE in text) == flagged
    # over datasets the items add up: two datasets of 20 rows each are 40 items
    summary = summarise_results([doc("a", 20, full), doc("b", 20, full)])
    assert summary["models"]["m"]["total"]["items"] == 40
    assert "]*" not in text_report(summary)
    assert summary["interval"] == "percentile"


def test_report_reads_intervals_the_way_evaluate_made_them():
    """Results made with --interval expanded are summarised with the expanded interval
    over the figure's items; results that mix methods are refused in one line."""
    from shiftbench.errors import InputError
    from shiftbench.evaluate.resample import interval

    replicates = np.random.default_rng(2).normal(-0.1, 0.05, 1000)

    def doc(name, method):
        d = simple_documents({name: {"m": (0.8, {"paraphrase-s1": 0.7})}})[0]
        d["models"][0]["results"][1].update(
            rows=12, delta_replicates=list(replicates), ci95=[0, 0], interval=method
        )
        return d

    summary = summarise_results([doc("a", "expanded"), doc("b", "expanded")])
    assert summary["interval"] == "expanded"
    figure = summary["models"]["m"]["transforms"]["paraphrase"]
    assert figure["ci95"] == interval(replicates, method="expanded", items=24)
    with pytest.raises(InputError) as refused:
        summarise_results([doc("a", "expanded"), doc("b", "percentile")])
    assert str(refused.value) == (
        "the results mix interval methods (expanded, percentile): evaluate them again "
        "with one --interval"
    )


def test_figures_are_means_over_datasets_not_subsets():
    docs = simple_documents({"a": {"m": (0.8, {"paraphrase-s1": 0.6})}})
    docs.append(
        document(
            "b",
            {"m": [record("original", 0.4, subset=s) for s in ("x", "y", "z")]
             + [record("paraphrase-s1", 0.3, -0.1, subset=s) for s in ("x", "y", "z")]},
        )
    )  # fmt: skip
    model = summarise_results(docs)["models"]["m"]
    assert model["original"] == pytest.approx((0.8 + 0.4) / 2)
    assert model["transforms"]["paraphrase"]["delta"] == pytest.approx((-0.2 - 0.1) / 2)
    assert model["datasets"] == 2


# --- Kendall's tau ------------------------------------------------------------------------


def test_kendall_tau_per_dataset_mean_and_sd():
    scores = {
        "d1": {"a": (0.9, {"paraphrase-s1": 0.7}), "b": (0.8, {"paraphrase-s1": 0.75}),
               "c": (0.6, {"paraphrase-s1": 0.5})},
        "d2": {"a": (0.5, {"paraphrase-s1": 0.2}), "b": (0.6, {"paraphrase-s1": 0.4}),
               "c": (0.7, {"paraphrase-s1": 0.3})},
        "d3": {"a": (0.3, {"paraphrase-s1": 0.3}), "b": (0.4, {"paraphrase-s1": 0.4}),
               "c": (0.5, {"paraphrase-s1": 0.5})},
    }  # fmt: skip
    summary = summarise_results(simple_documents(scores))
    taus = [
        scipy_stats.kendalltau(
            [scores[d][m][0] for m in "abc"], [scores[d][m][1]["paraphrase-s1"] for m in "abc"]
        ).statistic
        for d in ("d1", "d2", "d3")
    ]
    rows = {k["of"]: k for k in summary["kendall_per_dataset"]}
    assert rows["paraphrase"]["datasets"] == 3
    assert rows["paraphrase"]["mean_tau"] == pytest.approx(np.mean(taus))
    assert rows["paraphrase"]["sd_tau"] == pytest.approx(np.std(taus, ddof=1))
    # axis and total: the same single transformation here
    assert rows["Lexical/Stylistic"]["mean_tau"] == pytest.approx(np.mean(taus))
    assert rows["total"]["mean_tau"] == pytest.approx(np.mean(taus))
    # the pooled tau is one tau on dataset-averaged scores, a different figure
    pooled = {k["of"]: k for k in summary["kendall"]}["paraphrase"]["tau"]
    means = [
        (np.mean([scores[d][m][0] for d in scores]),
         np.mean([scores[d][m][1]["paraphrase-s1"] for d in scores]))
        for m in "abc"
    ]  # fmt: skip
    expected = scipy_stats.kendalltau([x[0] for x in means], [x[1] for x in means]).statistic
    assert pooled == pytest.approx(expected)
    assert "Ranking stability (Kendall's tau):" in text_report(summary)


def test_split_half_draw_is_spearman_of_half_means():
    """One draw by hand: the halves are task-stratified, and the draw's rho is scipy's
    Spearman of each model's mean over the half."""
    docs = axis_documents(np.random.default_rng(9), models=5, datasets=7, signal=1.0)
    datasets = dataset_units(scored_units(docs))
    by_type = {"STS": ["d0", "d2", "d4", "d6"], "Clustering": ["d1", "d3", "d5"]}
    a, b = stratified_halves(by_type, np.random.default_rng(0))
    assert a | b == {f"d{i}" for i in range(7)} and not a & b
    assert len(a & set(by_type["STS"])) == 2 and abs(len(a) - len(b)) == 1
    scores = {(u.model, u.dataset): u.axes()["Length"].score for u in datasets}
    models = [f"m{m}" for m in range(5)]
    side = [[np.mean([scores[(m, d)] for d in half]) for m in models] for half in (a, b)]
    expected = scipy_stats.spearmanr(*side).statistic
    one = split_half_reliability(datasets, draws=1, seed=0)
    assert one["axes"]["Length"]["median"] == pytest.approx(expected)


def test_split_half_needs_three_models_and_two_datasets():
    docs = axis_documents(np.random.default_rng(1), models=2, datasets=6, signal=1.0)
    assert split_half_reliability(dataset_units(scored_units(docs))) is None
    docs = axis_documents(np.random.default_rng(1), models=4, datasets=1, signal=1.0)
    assert split_half_reliability(dataset_units(scored_units(docs))) is None


# --- median absolute difference -----------------------------------------------------------


def test_median_absolute_difference_per_transformation_and_axis():
    scores = {
        f"d{d}": {
            m: (0.8, {"paraphrase-s1": 0.8 + p, "backtranslation-s1": 0.8 + b})
            for m, (p, b) in zip(("x", "y"), cells, strict=True)
        }
        for d, cells in enumerate(
            [
                ((-0.1, 0.02), (-0.3, 0.04)),
                ((0.05, -0.01), (0.15, -0.03)),
                ((-0.4, 0.0), (0.0, 0.1)),
            ]
        )
    }
    rows = {r["of"]: r for r in summarise_results(simple_documents(scores))["median_abs_delta"]}
    paraphrase = [abs((-0.1 - 0.3) / 2), abs((0.05 + 0.15) / 2), abs((-0.4 + 0.0) / 2)]
    back = [abs((0.02 + 0.04) / 2), abs((-0.01 - 0.03) / 2), abs((0.0 + 0.1) / 2)]
    assert rows["paraphrase"]["median_abs_delta"] == pytest.approx(np.median(paraphrase))
    assert rows["backtranslation"]["median_abs_delta"] == pytest.approx(np.median(back))
    axis = rows["Lexical/Stylistic"]
    assert axis["n"] == 6 and axis["median_abs_delta"] == pytest.approx(
        np.median(paraphrase + back)
    )


# --- PTEB's test against a baseline -------------------------------------------------------


def test_baseline_test_pooled_over_dataset_seed_pairs_and_run_averaged():
    rng = np.random.default_rng(21)
    scores = {}
    for d in range(9):
        scores[f"d{d}"] = {
            m: (0.8, {f"paraphrase-s{s}": float(0.7 + bonus + rng.normal(0, 0.02))
                      for s in range(1337, 1343)})
            for m, bonus in (("base", 0.0), ("good", 0.03), ("same", 0.0))
        }  # fmt: skip
    summary = summarise_results(simple_documents(scores), ReportSettings(baseline="base"))
    rows = {(r["transform"], r["way"], r["model"]): r for r in summary["baseline_tests"]}
    for model in ("good", "same"):
        pooled = [
            scores[d]["base"][1][c] - scores[d][model][1][c]
            for d in scores
            for c in scores[d]["base"][1]
        ]
        row = rows[("paraphrase", "pooled", model)]
        assert row["n"] == 54
        assert row["p"] == pytest.approx(scipy_stats.wilcoxon(pooled, method="approx").pvalue)
        assert row["hodges_lehmann"] == pytest.approx(hodges_lehmann(pooled)[0])
        assert row["ci_low"] < row["hodges_lehmann"] < row["ci_high"]
        averaged = [
            np.mean(
                [scores[d]["base"][1][c] - scores[d][model][1][c] for c in scores[d]["base"][1]]
            )
            for d in scores
        ]
        row = rows[("paraphrase", "run-averaged", model)]
        assert row["n"] == 9
        assert row["p"] == pytest.approx(scipy_stats.wilcoxon(averaged, method="exact").pvalue)
    assert rows[("paraphrase", "pooled", "good")]["hodges_lehmann"] < -0.02
    assert rows[("paraphrase", "run-averaged", "good")]["p_holm"] < 0.05
    assert rows[("paraphrase", "run-averaged", "same")]["p_holm"] > 0.05
    with pytest.raises(
        Exception, match="--baseline nobody is not among the models: base, good, same"
    ):
        summarise_results(simple_documents(scores), ReportSettings(baseline="nobody"))


# PTEB's Table 6: each encoder's original and PTEB (mean of six paraphrase runs) STS score
# in %, on BIOSSES, SICK-R, STS12-STS17, STS22 and STSBenchmark
PTEB_TABLE_6 = {
    "all-mpnet-base-v2": ((80.39, 80.60, 72.64, 83.49, 78.00, 85.66, 90.61, 68.31, 83.43),
                          (77.22, 77.45, 61.85, 78.91, 72.14, 81.58, 85.06, 69.39, 74.90)),
    "embedding-gemma-300m": ((70.27, 71.99, 63.53, 67.71, 64.95, 77.19, 82.61, 58.05, 67.45),
                             (64.67, 70.28, 54.95, 73.70, 65.03, 74.47, 75.28, 63.21, 66.97)),
    "mxbai-embed-large-v1": ((86.09, 82.79, 79.07, 89.81, 85.22, 89.34, 89.22, 69.02, 89.29),
                             (84.06, 78.24, 67.91, 84.19, 78.41, 85.05, 85.00, 68.97, 82.20)),
    "e5-mistral-7b-instruct": ((84.61, 80.76, 75.83, 84.31, 79.26, 85.20, 88.86, 69.66, 84.58),
                               (77.68, 79.01, 68.23, 84.35, 78.12, 86.20, 85.61, 67.49, 82.02)),
    "qwen3-embedding-8b": ((86.29, 84.97, 81.41, 87.89, 83.32, 89.56, 92.19, 69.98, 88.50),
                           (81.44, 81.88, 67.21, 82.90, 77.10, 86.50, 88.60, 68.61, 84.56)),
}  # fmt: skip
# PTEB's Table 14: the run-averaged test against all-mpnet-base-v2 (Hodges-Lehmann shift in
# points, exact Wilcoxon p with Holm's correction, as printed to two decimals)
PTEB_TABLE_14 = {
    "embedding-gemma-300m": (+7.17, 0.02),
    "mxbai-embed-large-v1": (-3.62, 0.04),
    "e5-mistral-7b-instruct": (-3.42, 0.04),
    "qwen3-embedding-8b": (-4.46, 0.02),
}


def test_the_run_averaged_baseline_test_gives_ptebs_table_14_from_its_table_6():
    """PTEB's conservative test (its Table 14): each encoder against all-mpnet-base-v2 on
    the nine STS datasets' run-averaged PTEB scores, which its Table 6 prints. The report's
    run-averaged row recomputes every printed Hodges-Lehmann shift to the table's two
    decimals and every Holm-adjusted exact Wilcoxon p to its rounding."""
    datasets = ["BIOSSES", "SICK-R", "STS12", "STS13", "STS14", "STS15", "STS17", "STS22",
                "STSBenchmark"]  # fmt: skip
    scores = {
        name: {
            model: (original[i] / 100, {"paraphrase-s1337": pteb[i] / 100})
            for model, (original, pteb) in PTEB_TABLE_6.items()
        }
        for i, name in enumerate(datasets)
    }
    summary = summarise_results(
        simple_documents(scores), ReportSettings(baseline="all-mpnet-base-v2")
    )
    rows = {
        r["model"]: r
        for r in summary["baseline_tests"]
        if (r["transform"], r["way"]) == ("paraphrase", "run-averaged")
    }
    assert set(rows) == set(PTEB_TABLE_14)
    for model, (shift, p_holm) in PTEB_TABLE_14.items():
        row = rows[model]
        assert row["n"] == 9
        assert round(100 * row["hodges_lehmann"], 2) == shift, model
        assert round(row["p_holm"], 2) == p_holm, model


# --- intervals on every delta -------------------------------------------------------------


def test_delta_intervals_average_paired_replicates_and_rank_models():
    """Replicates drawn on the same items average over seeds and datasets; the interval is
    their 2.5/97.5 percentiles; models whose intervals overlap share ranks."""
    rng = np.random.default_rng(3)
    reps = {
        (m, d, s): rng.normal(shift, 0.01, 1000)
        for m, shift in (("a", -0.01), ("b", -0.012), ("c", -0.2))
        for d in ("d0", "d1")
        for s in (1, 2)
    }
    docs = []
    for d in ("d0", "d1"):
        per_model = {}
        for m in "abc":
            per_model[m] = [record("original", 0.8)] + [
                record(f"paraphrase-s{s}", 0.8 + reps[(m, d, s)].mean(), reps[(m, d, s)].mean(),
                       replicates=reps[(m, d, s)])
                for s in (1, 2)
            ]  # fmt: skip
        docs.append(document(d, per_model))
    summary = summarise_results(docs)
    for m in "abc":
        joint = np.mean([reps[(m, d, s)] for d in ("d0", "d1") for s in (1, 2)], axis=0)
        expected = list(np.quantile(joint, [0.025, 0.975]))
        figure = summary["models"][m]
        assert figure["transforms"]["paraphrase"]["ci95"] == pytest.approx(expected)
        assert figure["total"]["ci95"] == pytest.approx(expected)
    assert summary["models"]["a"]["total"]["rank"] == [1, 2]
    assert summary["models"]["b"]["total"]["rank"] == [1, 2]
    assert summary["models"]["c"]["total"]["rank"] == [3, 3]
    text = text_report(summary)
    low, high = summary["models"]["c"]["total"]["ci95"]
    assert f"[{low:+.3f}, {high:+.3f}]" in text  # a width of 0.01 to 0.1: three places


# HTEB's Tables 14 and 15 (English and multilingual): per model the original score and the
# three axis scores, each with its difference from the original, and the total the paper
# prints (the unweighted mean of the axes).
HTEB_AXIS_TABLES = [
    # model, original, Lexical/Stylistic, Length, Language, printed total and its delta
    ("All-MiniLM-L12-v2", 66.36, 62.64, 61.86, 37.14, 53.88, -12.48),
    ("All-MPNet-Base-v2", 67.09, 62.84, 62.57, 36.34, 53.92, -13.17),
    ("MXBAI-Emb-Large-v1", 70.75, 66.34, 65.32, 40.72, 57.46, -13.29),
    ("Stella-EN-400M-v5", 71.04, 66.67, 65.23, 45.46, 59.12, -11.92),
    ("Jasper-600M", 70.78, 67.10, 65.14, 56.69, 62.98, -7.80),
    ("Jina-Emb-v5-Small", 71.50, 67.64, 65.75, 66.12, 66.50, -5.00),
    ("F2LLM-v2-4B", 73.00, 68.42, 66.93, 67.76, 67.70, -5.30),
    ("E5-Mistral-7B-it", 67.28, 63.32, 62.71, 56.47, 60.83, -6.45),
    ("Llama-Nemotron-8B", 63.17, 59.91, 62.49, 54.16, 58.85, -4.32),
    ("Qwen3-Emb-8B", 72.77, 68.12, 66.62, 67.09, 67.28, -5.50),
    ("NV-Embed-v2", 73.34, 69.26, 66.99, 61.84, 66.03, -7.31),
    ("Harrier-270M (ML)", 58.79, 55.59, 54.64, 55.33, 55.19, -3.60),
    ("Paraphr.-ML-MPNet (ML)", 55.47, 54.35, 53.40, 58.71, 55.49, +0.02),
    ("GTE-ML-Base (ML)", 62.40, 60.11, 59.46, 61.35, 60.31, -2.10),
    ("ML-E5-Large-it (ML)", 61.69, 58.63, 57.88, 57.46, 57.99, -3.70),
    ("BGE-M3 (ML)", 62.99, 60.32, 58.95, 60.63, 59.97, -3.02),
    ("Jina-Emb-v5-Small (ML)", 63.89, 61.54, 60.86, 64.69, 62.36, -1.52),
    ("F2LLM-v2-4B (ML)", 67.89, 65.09, 63.74, 67.76, 65.53, -2.36),
    ("Llama-Nemotron-8B (ML)", 56.38, 54.86, 57.82, 56.59, 56.42, +0.05),
    ("Qwen3-Emb-8B (ML)", 64.28, 61.79, 61.02, 63.16, 61.99, -2.29),
]

# HTEB's Table 17 (English, part 1): per dataset the original score and the axis-balanced
# HTEB score (mean over 3 runs) of four models, and the Average row the paper prints.
HTEB_TABLE_17 = {
    "All-MiniLM-L12-v2": (
        [
            87.46,
            91.29,
            85.07,
            31.80,
            28.25,
            46.62,
            92.44,
            70.02,
            84.78,
            64.04,
            87.20,
            51.58,
            46.21,
            56.85,
            62.49,
            81.51,
            83.70,
            83.07,
            26.40,
        ],
        [
            85.10,
            76.83,
            73.47,
            25.89,
            23.53,
            36.21,
            74.18,
            56.35,
            70.82,
            59.16,
            75.11,
            40.44,
            31.76,
            34.00,
            49.77,
            66.36,
            72.76,
            57.76,
            14.24,
        ],
        (66.36, 53.88),
    ),
    "All-MPNet-Base-v2": (
        [
            85.37,
            92.23,
            86.08,
            33.51,
            29.58,
            50.30,
            89.97,
            73.85,
            85.09,
            65.82,
            88.64,
            51.96,
            45.83,
            59.98,
            65.56,
            80.87,
            80.39,
            83.43,
            26.25,
        ],
        [
            84.33,
            76.52,
            73.55,
            26.62,
            24.68,
            37.55,
            67.94,
            57.06,
            70.06,
            59.84,
            76.83,
            40.91,
            32.58,
            36.55,
            50.43,
            65.49,
            68.86,
            57.94,
            16.72,
        ],
        (67.09, 53.92),
    ),
    "MXBAI-Emb-Large-v1": (
        [
            89.85,
            92.04,
            86.79,
            36.30,
            27.19,
            53.06,
            96.81,
            78.52,
            86.22,
            65.20,
            87.53,
            55.20,
            65.11,
            59.01,
            73.91,
            80.54,
            86.11,
            89.29,
            35.55,
        ],
        [
            85.73,
            75.68,
            74.02,
            28.35,
            23.56,
            40.52,
            80.44,
            59.56,
            73.35,
            58.73,
            77.64,
            43.61,
            45.32,
            35.51,
            61.68,
            66.96,
            73.48,
            64.02,
            23.60,
        ],
        (70.75, 57.46),
    ),
    "Stella-EN-400M-v5": (
        [
            89.85,
            87.03,
            88.23,
            42.14,
            32.16,
            55.54,
            95.81,
            75.98,
            87.17,
            63.03,
            86.39,
            51.90,
            63.29,
            62.36,
            78.00,
            83.64,
            81.17,
            87.54,
            38.50,
        ],
        [
            85.42,
            67.32,
            73.17,
            33.69,
            27.08,
            43.77,
            77.93,
            59.69,
            74.59,
            58.84,
            78.74,
            44.18,
            50.83,
            42.48,
            66.45,
            72.66,
            74.97,
            64.36,
            27.05,
        ],
        (71.04, 59.12),
    ),
}


def _htebunit(model, dataset, original, axis_scores):
    """A dataset unit holding one transformation per axis, scored as the axis."""
    unit = ScoredUnit(model, dataset, "default", "STS", original=original)
    for name, axis, score in zip(
        ("paraphrase", "expansion", "translation"), AXES, axis_scores, strict=True
    ):
        unit.transforms[name] = Pair(score, score - original)
        unit.axis_of[name] = axis
    return unit


@pytest.mark.parametrize("row", HTEB_AXIS_TABLES, ids=[r[0] for r in HTEB_AXIS_TABLES])
def test_the_total_is_htebs_mean_of_the_axes_on_its_tables_14_and_15(row):
    """The report's total of HTEB's printed axis scores is the total HTEB prints, to its
    rounding (each axis printed to 2 decimals: the mean of three moves by at most 0.005,
    the printed total by 0.005 more)."""
    model, original, *axes, total, delta = row
    summary = model_summary([_htebunit(model, "all", original, axes)])[model]
    assert summary["total"]["score"] == pytest.approx(total, abs=0.0101)
    assert summary["total"]["delta"] == pytest.approx(delta, abs=0.0101)
    assert {a: round(summary["axes"][a]["score"], 2) for a in AXES} == dict(
        zip(AXES, axes, strict=True)
    )


@pytest.mark.parametrize("model", list(HTEB_TABLE_17))
def test_averages_over_datasets_give_htebs_table_17_average_row(model):
    """Nineteen datasets' originals and axis-balanced scores averaged as the report
    averages over datasets give the Average row HTEB prints, to its rounding."""
    originals, scores, (original_mean, total_mean) = HTEB_TABLE_17[model]
    units = [
        _htebunit(model, f"dataset-{i}", o, (s, s, s))
        for i, (o, s) in enumerate(zip(originals, scores, strict=True))
    ]
    summary = model_summary(units)[model]
    assert summary["datasets"] == 19
    assert summary["original"] == pytest.approx(original_mean, abs=0.0051)
    assert summary["total"]["score"] == pytest.approx(total_mean, abs=0.0051)


def test_htebs_order_averages_each_transformation_over_datasets_first():
    """Where a dataset lacks a transformation, the two orders differ, worked by hand:
    dataset A has paraphrase 0.8, backtranslation 0.6 (Lexical/Stylistic) and expansion 0.5
    (Length), original 0.9; dataset B paraphrase 0.4 and expansion 0.7, original 0.8.
    Per dataset: Lexical/Stylistic (0.7 + 0.4) / 2 = 0.55, total 0.575; HTEB's order:
    paraphrase 0.6 and backtranslation 0.6 give 0.6, total 0.6."""
    axis = {"paraphrase": AXES[0], "backtranslation": AXES[0], "expansion": AXES[1]}
    made = []
    for name, original, scores in [
        ("A", 0.9, {"paraphrase": 0.8, "backtranslation": 0.6, "expansion": 0.5}),
        ("B", 0.8, {"paraphrase": 0.4, "expansion": 0.7}),
    ]:
        unit = ScoredUnit("m", name, "default", "STS", original=original)
        for t, score in scores.items():
            unit.transforms[t] = Pair(score, score - original)
            unit.axis_of[t] = axis[t]
        made.append(unit)
    shiftbench = model_summary(made)["m"]
    hteb = model_summary(made, order=TRANSFORMATIONS_FIRST)["m"]
    assert shiftbench["axes"][AXES[0]]["score"] == pytest.approx(0.55)
    assert shiftbench["total"]["score"] == pytest.approx(0.575)
    assert shiftbench["total"]["delta"] == pytest.approx(-0.275)
    assert hteb["axes"][AXES[0]]["score"] == pytest.approx(0.6)
    assert hteb["axes"][AXES[0]]["delta"] == pytest.approx(-0.275)
    assert hteb["total"]["score"] == pytest.approx(0.6)
    assert hteb["total"]["delta"] == pytest.approx(-0.2625)
    assert hteb["transforms"] == shiftbench["transforms"]
    assert hteb["original"] == shiftbench["original"] == pytest.approx(0.85)
    hteb_doc, other = {"protocol": {"name": "hteb"}}, {"protocol": {"name": "shiftbench"}}
    assert aggregation([hteb_doc, hteb_doc]) == TRANSFORMATIONS_FIRST
    assert aggregation([hteb_doc, other]) == aggregation([{}]) == "per-dataset"


def test_hteb_points_are_scores_times_100_with_two_decimals():
    """A hand-worked case: HTEB prints 0.78901 as 78.90; a delta and its interval go the
    same way, and the default keeps mteb's fractions with four places."""
    from shiftbench.evaluate.report.tables import HTEB_POINTS, SCORES, figures_for

    figure = {"delta": -0.006742, "ci95": [-0.01204, 0.00049], "rows": 42, "resamples": 0}
    assert figures_for("hteb") is HTEB_POINTS and figures_for("shiftbench") is SCORES
    assert HTEB_POINTS.num(0.78901) == "78.90"
    assert HTEB_POINTS.delta(figure) == "-0.67 [-1.20, +0.05]"
    assert SCORES.num(0.78901) == "0.7890"
    # two significant digits of the width (0.0125): three places, never more than four
    assert SCORES.delta(figure) == "-0.007 [-0.012, +0.000]"
    assert HTEB_POINTS.delta({"delta": None}) == "" and SCORES.num(None) == ""


def test_decimals_follow_the_intervals_width():
    """Hand-worked: a delta and its interval print with the decimals that show the
    interval's width to two significant digits, at least one, at most the table's places;
    an interval of no width keeps them all and is marked; HTEB's points stay two places."""
    from shiftbench.core.evidence import width_places
    from shiftbench.evaluate.report.tables import HTEB_POINTS, SCORES

    def figure(delta: float, low: float, high: float) -> dict[str, object]:
        return {"delta": delta, "ci95": [low, high], "rows": 100, "resamples": 0}

    # README's BIOSSES row: width 0.56 -> two places, not five
    assert SCORES.delta(figure(-0.21672, -0.49449, 0.06216)) == "-0.22 [-0.49, +0.06]"
    assert SCORES.delta(figure(0.0321, 0.0211, 0.0434)) == "+0.032 [+0.021, +0.043]"
    assert SCORES.delta(figure(0.3, -0.4, 1.1)) == "+0.3 [-0.4, +1.1]"  # at least one
    assert SCORES.delta(figure(0.01, 0.009999, 0.010001)) == "+0.0100 [+0.0100, +0.0100]*"
    assert SCORES.delta(figure(0.0, 0.0, 0.0)) == "+0.0000 [+0.0000, +0.0000]*"
    assert SCORES.delta({"delta": -0.21672}) == "-0.2167"  # no interval: the table's places
    assert HTEB_POINTS.delta(figure(-0.21672, -0.49449, 0.06216)) == "-21.67 [-49.45, +6.22]"
    assert [width_places((0, w), 5) for w in (0.56, 0.099, 0.1, 0.0123, 3e-4, 1e-9)] == [
        2, 3, 2, 3, 5, 5,
    ]  # fmt: skip
