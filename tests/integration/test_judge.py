"""LLM judges, ParaPLUIE and drift in validate; judge-calibrate; compare across generators."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from scipy.stats import pearsonr, spearmanr
from support.files import read_rows
from support.judge_backend import expected_similarity, paraplue, quality, similarity

from shiftbench.core.stats import holm

SAMPLE = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
FIELDS = ("sentence1", "sentence2")
SIM = "judge-similarity:judgebot:judgebot-1"
QUAL = "judge-quality:judgebot:judgebot-1"
PARA = "paraplue:judgebot:judgebot-1"


@pytest.fixture
def judged_run(scripted, invoke, tmp_path):
    """Six sample rows paraphrased by the scripted generator ("REWRITTEN <input>")."""
    out = tmp_path / "run"
    args = ["gen", "sample", "--limit", "6", "-s", "1", "-b", "scripted", "-q", "-o", out]
    assert invoke(*args).exit_code == 0
    return out


def expected_pairs(folder: Path, config: str) -> list[tuple[str, str]]:
    rows = read_rows(folder / config / "test.jsonl")
    return [(str(r[f"original_{f}"]), str(r[f] or "")) for r in rows for f in FIELDS]


def test_judges_and_paraplue_in_the_report(judged_run, judgebot, invoke):
    pairs = expected_pairs(judged_run, "paraphrase-s1")
    judgebot.replies = {pairs[3][1]: "somewhere between 2 and 4, or 3"}
    result = invoke("validate", judged_run, "--judge", "judgebot", "--paraplue", "judgebot", "-q")
    assert result.exit_code == 0, result.output
    report = json.loads((judged_run / "validation.json").read_text(encoding="utf-8"))
    measures = report["configs"]["paraphrase-s1"]["measures"]
    assert list(measures) == [QUAL, SIM, PARA]
    sims = [similarity(a, b) for a, b in pairs]
    del sims[3]  # the scripted reply names two numbers: unscored, not 0
    sim = measures[SIM]
    assert (sim["scored"], sim["unscored"], sim["problems"]) == (11, 1, {"ambiguous": 1})
    assert sim["mean"] == round(statistics.fmean(sims), 4)
    assert sim["sd"] == round(statistics.stdev(sims), 4)
    assert sim["scale"] == [0.0, 5.0] and sim["sampling"]["temperature"] == 0.0
    quals = [quality(a, b) for i, (a, b) in enumerate(pairs) if i != 3]
    assert measures[QUAL]["mean"] == round(statistics.fmean(quals), 4)
    assert measures[PARA]["mean"] == round(statistics.fmean(paraplue(a, b) for a, b in pairs), 4)
    rows = read_rows(judged_run / "validation" / "paraphrase-s1.jsonl")
    assert rows[1]["measures"][SIM] == {"sentence1": similarity(*pairs[2]), "sentence2": None}
    assert rows[1]["replies"][SIM]["sentence2"] == "somewhere between 2 and 4, or 3"
    assert rows[0]["measures"][PARA]["sentence1"] == paraplue(*pairs[0])
    # The quality prompt tells the judge what the transform asked for, in which language.
    asked = [p for p in judgebot.prompts if p.startswith("A text was rewritten")]
    assert "following this instruction: say the same thing in other words, in English." in asked[0]
    assert f"{SIM}: " in result.output and "(11 scored, 1 not)" in result.output
    markdown = (judged_run / "validation.md").read_text(encoding="utf-8")
    assert (
        f"| paraphrase-s1 | {SIM} | {sim['mean']:.3f} ± {sim['sd']:.3f} | 11 | 1 (ambiguous: 1) |"
        in markdown
    )


def test_judge_answers_are_cached_and_kept_across_reports(judged_run, judgebot, invoke):
    assert invoke("validate", judged_run, "--judge", "judgebot", "-q").exit_code == 0
    asked = len(judgebot.prompts)
    assert asked == 24  # 6 rows x 2 fields x 2 modes
    first = json.loads((judged_run / "validation.json").read_text(encoding="utf-8"))
    # Asking again costs nothing: every answer comes from the cache.
    assert invoke("validate", judged_run, "--judge", "judgebot", "-q").exit_code == 0
    assert len(judgebot.prompts) == asked
    # A run without judges keeps the earlier judge results of the unchanged config.
    assert invoke("validate", judged_run).exit_code == 0
    again = json.loads((judged_run / "validation.json").read_text(encoding="utf-8"))
    assert (
        again["configs"]["paraphrase-s1"]["measures"]
        == first["configs"]["paraphrase-s1"]["measures"]
    )
    rows = read_rows(judged_run / "validation" / "paraphrase-s1.jsonl")
    assert set(rows[0]["measures"]) == {QUAL, SIM}


def test_judge_crash_keeps_the_answers_already_given(judged_run, judgebot, invoke, monkeypatch):
    from support.judge_backend import JudgeBot

    from shiftbench.llm import calls as llm_calls

    monkeypatch.setattr(llm_calls.time, "sleep", lambda s: None)
    real = JudgeBot.generate
    calls = {"n": 0}

    def failing(self, requests, sampling, on_done=None):
        calls["n"] += 1
        if calls["n"] > 2:
            raise ConnectionError("judge went away")
        return real(self, requests, sampling, on_done)

    monkeypatch.setattr(JudgeBot, "generate", failing)
    result = invoke(
        "validate", judged_run, "--judge", "judgebot", "--judge-mode", "similarity", "-q"
    )
    assert result.exit_code == 1
    assert "backend judgebot failed 3 times; finished rows are cached" in result.stderr
    monkeypatch.setattr(JudgeBot, "generate", real)
    judgebot.prompts.clear()
    assert (
        invoke(
            "validate", judged_run, "--judge", "judgebot", "--judge-mode", "similarity"
        ).exit_code
        == 0
    )
    assert len(judgebot.prompts) == 12 - 2 * JudgeBot.chunk_size  # two chunks were kept


def test_drift_under_a_real_encoder(scripted, invoke, tmp_path):
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    out = tmp_path / "run"
    scripted.script = {SAMPLE[0]["sentence1"]: [SAMPLE[0]["sentence1"]]}  # output == input
    args = ["gen", "sample", "--limit", "2", "-s", "1", "-b", "scripted", "-q", "-o", out]
    assert invoke(*args, "--max-attempts", "1").exit_code == 0
    result = invoke("validate", out, "--drift-encoder", "all-MiniLM-L6-v2", "-q")
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "validation" / "paraphrase-s1.jsonl")
    key = "drift:all-MiniLM-L6-v2"
    pairs = expected_pairs(out, "paraphrase-s1")
    model = SentenceTransformer(resolve_encoder("all-MiniLM-L6-v2")[0])
    a = model.encode([p[0] for p in pairs], normalize_embeddings=True)
    b = model.encode([p[1] for p in pairs], normalize_embeddings=True)
    got = [rows[i // 2]["measures"][key][FIELDS[i % 2]] for i in range(len(pairs))]
    assert got[0] == pytest.approx(0.0, abs=1e-4)  # the unchanged text did not move
    for value, x, y in zip(got, a, b, strict=True):
        assert value == pytest.approx(1 - float(x @ y), abs=2e-4)
    summary = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    drift = summary["configs"]["paraphrase-s1"]["measures"][key]
    assert drift["encoder"]["id"] == "all-MiniLM-L6-v2" and drift["scored"] == 4


def test_calibrate_against_gold_scores(judgebot, invoke, tmp_path):
    out = tmp_path / "cal.json"
    result = invoke(
        "judge-calibrate", "sample", "--judge", "judgebot", "--paraplue", "judgebot",
        "-q", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    judge, ratio = json.loads(out.read_text(encoding="utf-8"))
    gold = [r["score"] for r in SAMPLE]  # the sample is on the 0-5 scale already
    sims = [similarity(r["sentence1"], r["sentence2"]) for r in SAMPLE]
    assert (judge["pairs"], judge["scored"]) == (len(SAMPLE), len(SAMPLE))
    assert judge["spearman"] == round(float(spearmanr(gold, sims)[0]), 4)
    assert judge["pearson"] == round(float(pearsonr(gold, sims)[0]), 4)
    assert judge["mae"] == round(
        statistics.fmean(abs(s - g) for s, g in zip(sims, gold, strict=True)), 4
    )
    low, high = judge["spearman_ci95"]
    assert low <= judge["spearman"] <= high
    top = [(g, s) for g, s in zip(gold, sims, strict=True) if 4 <= g <= 5]
    assert judge["bins"][-1] == {
        "gold": "[4, 5]",
        "pairs": len(top),
        "mae": round(statistics.fmean(abs(s - g) for g, s in top), 4),
        "mean_rating": round(statistics.fmean(s for _, s in top), 4),
    }
    assert sum(b["pairs"] for b in judge["bins"]) == len(SAMPLE)
    ratios = [paraplue(r["sentence1"], r["sentence2"]) for r in SAMPLE]
    assert ratio["judge_key"] == PARA and ratio["bins"] == [] and ratio["mae"] is None
    assert ratio["spearman"] == round(float(spearmanr(gold, ratios)[0]), 4)
    assert f"judge {SIM}" in result.output and "spearman" in result.output


def test_calibrate_maps_the_gold_range(judgebot, invoke, tmp_path):
    out = tmp_path / "cal.json"
    args = ["judge-calibrate", "sample", "--judge", "judgebot", "--gold-range", "0,10", "-q"]
    assert invoke(*args, "-o", out).exit_code == 0
    (judge,) = json.loads(out.read_text(encoding="utf-8"))
    sims = [similarity(r["sentence1"], r["sentence2"]) for r in SAMPLE]
    mapped = [r["score"] / 2 for r in SAMPLE]
    assert judge["mae"] == round(
        statistics.fmean(abs(s - g) for s, g in zip(sims, mapped, strict=True)), 4
    )


def test_calibrate_on_biosses(judgebot, invoke, shared_data, tmp_path):
    out = tmp_path / "cal.json"
    args = ["judge-calibrate", "BIOSSES", "--data-dir", shared_data / "BIOSSES"]
    assert invoke(*args, "--judge", "judgebot", "-q", "-o", out).exit_code == 0
    (judge,) = json.loads(out.read_text(encoding="utf-8"))
    rows = read_rows(shared_data / "BIOSSES" / "data" / "test.jsonl")
    sims = [similarity(r["sentence1"], r["sentence2"]) for r in rows]
    assert judge["pairs"] == len(rows) == 100
    assert judge["spearman"] == round(float(spearmanr([r["score"] for r in rows], sims)[0]), 4)
    assert judge["gold_range"] == [0.0, 5.0]  # mteb's metadata for BIOSSES


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["judge-calibrate", "sample"], "name at least one --judge or --paraplue"),
        (
            ["judge-calibrate", "sample", "--judge", "judgebot", "--gold-range", "5,1"],
            "--gold-range '5,1': HIGH must be above LOW",
        ),
        (
            ["judge-calibrate", "sample", "--judge", "judgebot", "--gold-range", "a-b"],
            "--gold-range 'a-b': write it as LOW,HIGH, e.g. 0,5",
        ),
        (["judge-calibrate", "sample", "--judge", "nosuch"], "unknown backend 'nosuch'"),
        (
            ["judge-calibrate", "sample", "--paraplue", "scripted"],
            "the scripted backend does not expose log-probabilities; ParaPLUIE needs embedded, "
            "openai, ollama or vllm",
        ),
    ],
)
def test_bad_judge_input(args, message, judgebot, scripted, invoke, tmp_path):
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: " + message)
    assert len(result.stderr.strip().splitlines()) == 1


def test_calibrate_needs_sts(judgebot, invoke, shared_data):
    args = ["judge-calibrate", "Banking77Classification", "--data-dir"]
    result = invoke(*args, shared_data / "Banking77Classification", "--judge", "judgebot")
    assert result.exit_code == 2
    assert "judge-calibrate needs an STS source with gold similarity scores; " in result.stderr


def make_runs(invoke, tmp_path):
    runs = []
    for model in ("scripted-model", "halves", "scripted-model"):
        out = tmp_path / f"run{len(runs)}"
        args = ["gen", "sample", "--limit", "10", "-s", "1", "-b", "scripted", "-m", model]
        assert invoke(*args, "-q", "-o", out).exit_code == 0
        assert invoke("validate", out, "--judge", "judgebot", "-q").exit_code == 0
        runs.append(out)
    return runs


def test_compare_generators(scripted, judgebot, invoke, tmp_path):
    runs = make_runs(invoke, tmp_path)
    result = invoke("compare", *runs, "-o", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    labels = ["scripted-model (run0)", "halves", "scripted-model (run2)"]
    assert list(doc["generators"]) == labels
    (matrix,) = doc["matrix"]
    assert matrix["measure"] == QUAL and matrix["items"] == 20
    for label, judged_run in zip(labels, runs, strict=True):
        pairs = expected_pairs(judged_run, "paraphrase-s1")
        expected = statistics.fmean(quality(a, b) for a, b in pairs)
        cell = matrix["means"][label]
        assert cell["mean"] == round(expected, 4)
        assert cell["ci95"][0] <= cell["mean"] <= cell["ci95"][1]
    tests = {(t["a"], t["b"]): t for t in matrix["tests"]}
    assert len(tests) == 3
    same = tests.get((labels[0], labels[2])) or tests[(labels[2], labels[0])]
    assert (same["mean_difference"], same["p"]) == (0.0, 1.0)
    raw = [t["p"] for t in matrix["tests"]]
    assert [t["p_holm"] for t in matrix["tests"]] == [round(p, 4) for p in holm(raw)]
    worse = tests.get((labels[0], labels[1]))
    assert worse is not None and worse["mean_difference"] > 0 and worse["p_holm"] < 0.01
    table = {r["generator"]: r for r in doc["per_transform"]}
    assert table["halves"]["mean_edit_distance"] > table[labels[0]]["mean_edit_distance"]
    report = json.loads((runs[1] / "validation.json").read_text(encoding="utf-8"))
    assert table["halves"]["error_rates"] == report["configs"]["paraphrase-s1"]["error_rates"]
    assert "Error rate per check:" in result.output
    assert "## judge-quality: generators x judges" in result.output
    assert (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8") in result.output


def test_compare_refuses_what_it_cannot_compare(scripted, judgebot, invoke, tmp_path):
    runs = make_runs(invoke, tmp_path)[:1]
    result = invoke("compare", *runs)
    assert result.exit_code == 2
    assert result.stderr == "Error: compare needs runs of at least two generators\n"
    other = tmp_path / "other"
    args = ["gen", "sample", "--limit", "2", "-b", "scripted", "-m", "halves", "-q", "-o", other]
    assert invoke(*args).exit_code == 0
    result = invoke("compare", runs[0], other)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {other} has no validation.json: run 'shiftbench validate' first\n"
    )


def test_expected_scoring_weights_the_scale_by_probability(judged_run, judgebot, invoke):
    args = ["validate", judged_run, "--judge", "judgebot", "--judge-scoring", "expected"]
    assert invoke(*args, "--judge-mode", "similarity", "-q").exit_code == 0
    key = SIM + ":expected"
    rows = read_rows(judged_run / "validation" / "paraphrase-s1.jsonl")
    pairs = expected_pairs(judged_run, "paraphrase-s1")
    got = [rows[i // 2]["measures"][key][FIELDS[i % 2]] for i in range(len(pairs))]
    assert got == [expected_similarity(a, b) for a, b in pairs]
    report = json.loads((judged_run / "validation.json").read_text(encoding="utf-8"))
    assert report["configs"]["paraphrase-s1"]["measures"][key]["scoring"] == "expected"
    assert "replies" not in rows[0]  # nothing was generated


def test_calibrate_says_why_there_is_no_correlation(judgebot, invoke, tmp_path):
    judgebot.replies = {r["sentence2"]: "3" for r in SAMPLE}
    out = tmp_path / "cal.json"
    result = invoke("judge-calibrate", "sample", "--judge", "judgebot", "-q", "-o", out)
    assert result.exit_code == 0
    (judge,) = json.loads(out.read_text(encoding="utf-8"))
    assert (judge["spearman"], judge["why_no_correlation"]) == (None, "every score is 3")
    assert "spearman - (every score is 3)" in result.output
