"""shiftbench probe: the alignment probes' figures against an independent computation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from support.environment import ENCODER
from support.files import read_rows
from support.probes import COSINE_GRID, NED_GRID, _cos, _embedder, _expected_anchors, _ned

RULES = ("synonym-swap-1,synonym-swap-2,synonym-swap-3,antonym-swap,word-jumble-1,"
         "word-jumble-2,word-jumble-3")  # fmt: skip


def _cli(*args):
    from shiftbench.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def mrpc_run(tmp_path_factory, shared_data, wordnet_dir) -> Path:
    """The first 200 pairs of MRPC's test split with every rule-based control, seed 1."""
    out = tmp_path_factory.mktemp("probes") / "mrpc"
    result = _cli("gen", shared_data / "MRPC", "--task-type", "PairClassification",
                  "--source-language", "en", "--limit", "200", "-t", RULES, "-s", "1",
                  "--wordnet-dir", wordnet_dir, "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def stsb_probe_run(tmp_path_factory, shared_data, wordnet_dir) -> Path:
    """A second dataset: the first 300 pairs of STSBenchmark's test split, seed 1."""
    out = tmp_path_factory.mktemp("probes") / "stsb"
    result = _cli("gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit",
                  "300", "-t", "synonym-swap-1,word-jumble-1", "-s", "1", "--wordnet-dir",
                  wordnet_dir, "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def probed(mrpc_run, static_encoder, tmp_path_factory):
    out = tmp_path_factory.mktemp("probes") / "results"
    cache = tmp_path_factory.mktemp("probes") / "embeddings"
    result = _cli("probe", mrpc_run, "-m", ENCODER, "-m", static_encoder, "--epsilon",
                  "0.1,0,0.05", "--cache-dir", cache, "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    return out, cache, result.stdout


def _control_pairs(run: Path, name: str, anchors, embed, base):
    """(anchor index, embedding) of the control's ok rows among the anchors."""
    position = {a[0]: i for i, a in enumerate(anchors)}
    rows = [r for r in read_rows(run / f"{name}-s1" / "test.jsonl")
            if r["row_id"] in position and r["status_sentence1"] == "ok"]  # fmt: skip
    index = [position[r["row_id"]] for r in rows]
    return index, embed([r["sentence1"] for r in rows])


def test_figures_match_an_independent_computation(mrpc_run, probed):
    """Every figure of all-MiniLM-L6-v2 in probes.json, recomputed here from the run
    folder's files with sentence-transformers and numpy, as ALIGN-SIM defines them."""
    out, _, _ = probed
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    anchors = _expected_anchors(mrpc_run)
    (dataset,) = doc["datasets"]
    assert dataset["anchors"] == len(anchors) == 133
    assert doc["epsilons"] == [0.0, 0.05, 0.1]
    assert dataset["paraphrases"] == "gold pairs with label 1"
    assert doc["distinction_grids"] == {
        "cosine": pytest.approx(COSINE_GRID.tolist()), "ned": pytest.approx(NED_GRID.tolist())
    }  # fmt: skip
    embed = _embedder()
    base = embed(a[1] for a in anchors)
    tol = 1.5 / len(anchors)  # a float-level difference may move one anchor
    rand_cos = _cos(base, embed(a[3] for a in anchors)).mean()  # inside eq. 2 as printed
    shares = {}
    for measure, pair, grid in (("cosine", _cos, COSINE_GRID), ("ned", _ned, NED_GRID)):
        pooled = doc["models"][0]["measures"][measure]
        figures = pooled["datasets"]["mrpc"]
        para = pair(base, embed(a[2] for a in anchors))
        rand = pair(base, embed(a[3] for a in anchors))
        # one dataset: the adjustment comes from its own random pairs
        assert pooled["random_pair_mean_pooled"] == pytest.approx(rand.mean(), abs=1e-5)
        assert figures["random_pair_mean"] == pytest.approx(rand.mean(), abs=1e-5)
        assert figures["paraphrase_mean"] == pytest.approx(para.mean(), abs=1e-5)
        diffs = para - rand
        if measure == "cosine":  # criterion 1: Sim(S, S_P) - Sim(S, R) > ε
            by_margin = [np.mean(diffs > e) for e in grid]
            closer = diffs
        else:  # NED(S, S_P) - NED(S, R) < ε
            by_margin = [np.mean(diffs < e) for e in grid]
            closer = -diffs
        share = shares[measure] = figures["distinction"]["grid_share"]
        assert share == pytest.approx(np.mean(by_margin), abs=tol)
        # a good encoder passes every anchor at ε = 0, not at the wide positive margins
        assert figures["distinction"]["share_above"]["0"] == 1.0
        assert 0.6 < share < 0.95
        for eps in ("0", "0.05", "0.1"):
            expected = np.mean(closer > float(eps))
            assert figures["distinction"]["share_above"][eps] == pytest.approx(expected, abs=tol)
        for name in RULES.split(","):
            index, made = _control_pairs(mrpc_run, name, anchors, embed, base)
            values = pair(base[index], made)
            if name.startswith("synonym"):
                entry = figures["preserved"][name]
                assert entry["n"] == len(index)
                assert entry["mean"] == pytest.approx(values.mean(), abs=1e-5)
                if measure == "cosine":  # eq. 1: mean x (1 - mean random cosine)
                    expected = values.mean() * (1 - rand.mean())
                else:  # eq. 2 as printed: 1 - (1 - mean NED) x (1 - mean random cosine)
                    expected = 1 - (1 - values.mean()) * (1 - rand_cos)
                    inside = 1 - (1 - values.mean()) * (1 - rand.mean())  # random NED inside
                    assert entry["adjusted_ned_inside"] == pytest.approx(inside, abs=1e-5)
                assert entry["adjusted"] == pytest.approx(expected, abs=1e-5)
            else:  # criteria 3 and 5: raw differences, paraphrase closer than the control
                entry = figures["sensitivity"][name]
                gaps = para[index] - values if measure == "cosine" else values - para[index]
                assert entry["n"] == len(index)
                assert entry["mean"] == pytest.approx(gaps.mean(), abs=1e-5)
                for eps in ("0", "0.05", "0.1"):
                    expected_share = np.mean(gaps > float(eps))
                    assert entry["share_above"][eps] == pytest.approx(expected_share, abs=tol)
    # one grid, but NED gaps are about half the cosine gaps: the shares differ
    assert shares["ned"] < shares["cosine"] - 0.1
    # NED is reported as a distance: a synonym swap is near, its adjusted figure is not 1 - x
    ned = doc["models"][0]["measures"]["ned"]["datasets"]["mrpc"]
    assert ned["paraphrase_mean"] < ned["random_pair_mean"]
    assert ned["preserved"]["synonym-swap-1"]["mean"] < 0.1


def test_alpha_is_averaged_over_the_datasets_of_the_run(mrpc_run, stsb_probe_run, probed, tmp_path):
    """Two targets in one probe: the adjustment uses the mean over the two datasets of
    each one's mean random-pair figure (ALIGN-SIM eq. 1 and 2), not the mean over all
    anchors, and every dataset's adjusted figures use it; raw figures do not change."""
    _, cache, _ = probed
    out = tmp_path / "both"
    result = _cli("probe", mrpc_run, stsb_probe_run, "-m", ENCODER, "--epsilon", "0", "--cache-dir",
                  cache, "-q", "--no-plots", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    assert doc["targets"] == ["mrpc", "stsb"]
    alone = json.loads((probed[0] / "probes.json").read_text(encoding="utf-8"))
    embed = _embedder()
    mrpc = _expected_anchors(mrpc_run)
    stsb = _expected_anchors(stsb_probe_run, gold=lambda r: r["score"] >= 4.0)
    assert [d["anchors"] for d in doc["datasets"]] == [len(mrpc), len(stsb)]
    for measure, pair in (("cosine", _cos), ("ned", _ned)):
        base = {"mrpc": embed(a[1] for a in mrpc), "stsb": embed(a[1] for a in stsb)}
        rand = {
            "mrpc": pair(base["mrpc"], embed(a[3] for a in mrpc)),
            "stsb": pair(base["stsb"], embed(a[3] for a in stsb)),
        }
        pooled = (rand["mrpc"].mean() + rand["stsb"].mean()) / 2
        by_anchor = np.concatenate([rand["mrpc"], rand["stsb"]]).mean()
        assert abs(pooled - by_anchor) > 1e-4  # the two readings differ on these data
        figures = doc["models"][0]["measures"][measure]
        assert figures["random_pair_mean_pooled"] == pytest.approx(pooled, abs=1e-5)
        if measure == "cosine":
            pooled_cos = pooled
        else:  # eq. 2 as printed takes the cosine's; its other reading, NED's own
            factor = figures["adjustment_factor_ned_inside"]
            assert factor == pytest.approx(1 - pooled, abs=1e-5)
        assert figures["adjustment_factor"] == pytest.approx(1 - pooled_cos, abs=1e-5)
        for label, run, anchors in (("mrpc", mrpc_run, mrpc), ("stsb", stsb_probe_run, stsb)):
            index, made = _control_pairs(run, "synonym-swap-1", anchors, embed, base[label])
            mean = pair(base[label][index], made).mean()
            expected = (
                mean * (1 - pooled) if measure == "cosine" else 1 - (1 - mean) * (1 - pooled_cos)
            )
            entry = figures["datasets"][label]["preserved"]["synonym-swap-1"]
            assert entry["adjusted"] == pytest.approx(expected, abs=1e-5)
        before = alone["models"][0]["measures"][measure]["datasets"]["mrpc"]
        after = figures["datasets"]["mrpc"]
        assert after["random_pair_mean"] == before["random_pair_mean"]
        assert after["distinction"]["grid_share"] == before["distinction"]["grid_share"]
        assert after["preserved"]["synonym-swap-1"]["adjusted"] != pytest.approx(
            before["preserved"]["synonym-swap-1"]["adjusted"], abs=1e-4
        )


def test_a_bag_of_tokens_encoder_cannot_see_word_order(probed):
    """The static (mean-pooled word-piece) encoder gives a jumbled text the anchor's own
    embedding: it never prefers the paraphrase, at any margin. It is also far more
    anisotropic than all-MiniLM-L6-v2, which the synonym adjustment corrects for."""
    out, _, _ = probed
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    minilm, static = (m["measures"]["cosine"]["datasets"]["mrpc"] for m in doc["models"])
    for n in (1, 2, 3):
        entry = static["sensitivity"][f"word-jumble-{n}"]
        assert set(entry["share_above"].values()) == {0.0}
        assert entry["mean"] < 0
    assert static["random_pair_mean"] > minilm["random_pair_mean"] + 0.2
    kept = static["preserved"]["synonym-swap-1"]
    assert kept["mean"] > minilm["preserved"]["synonym-swap-1"]["mean"]
    assert kept["adjusted"] < minilm["preserved"]["synonym-swap-1"]["adjusted"]
    rows = read_rows(out / "probe-rows.jsonl")
    anchors = doc["datasets"][0]["anchors"]
    assert len(rows) == 2 * anchors
    assert {r["dataset"] for r in rows} == {"mrpc"}
    jumbled = [v for r in rows[anchors:] for v in r["cosine"].get("word-jumble-1", [])]
    assert min(jumbled) > 0.99999
    ned_jumbled = [v for r in rows[anchors:] for v in r["ned"].get("word-jumble-1", [])]
    assert max(ned_jumbled) < 1e-5  # NED is a distance: a jumble is at the anchor itself


def test_printed_tables_and_files(probed):
    out, _, stdout = probed
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    lines = stdout.splitlines()
    assert lines[0] == (
        "mrpc: 133 anchors (gold pairs with label 1; field sentence1); random partners drawn "
        "with seed 0"
    )
    pairs = doc["datasets"][0]["controls"]["synonym-swap-1"]["pairs"]
    assert lines[1] == (
        f"  synonym-swap-1 (meaning preserved; ALIGN-SIM criterion 2): {pairs} pairs from "
        "synonym-swap-1-s1"
    )
    assert lines[4].startswith("  antonym-swap (meaning changed; ALIGN-SIM criterion 3): ")
    assert lines[5].startswith("  word-jumble-1 (meaning changed; ALIGN-SIM criterion 5): ")
    at = lines.index(
        "cosine similarity (higher is closer), ALIGN-SIM's figures (C1 share averaged over ε "
        "from -1 to 1; adjusted with the random-pair mean of 1 dataset):"
    )
    assert lines[at + 1].split() == [
        "model", "dataset", "C1", "share", "C1", "paraphrase", "C1", "random", "C2",
        "synonym-swap-1", "adj", "C2", "synonym-swap-2", "adj", "C2", "synonym-swap-3", "adj",
        "alpha",
    ]  # fmt: skip
    cosine = doc["models"][0]["measures"]["cosine"]
    figures = cosine["datasets"]["mrpc"]
    assert lines[at + 3].split() == [
        ENCODER, "mrpc", f"{figures['distinction']['grid_share']:.4f}",
        f"{figures['paraphrase_mean']:.4f}", f"{figures['random_pair_mean']:.4f}",
        *(f"{figures['preserved'][f'synonym-swap-{n}']['adjusted']:.4f}" for n in (1, 2, 3)),
        f"{cosine['adjustment_factor']:.4f}",
    ]  # fmt: skip
    at = lines.index(
        "cosine similarity, share of anchors whose paraphrase is closer by more than ε (raw):"
    )
    assert lines[at + 1].split() == [
        "model", "dataset", "ε", "C1", "distinction", "C3", "antonym-swap", "C5",
        "word-jumble-1", "C5", "word-jumble-2", "C5", "word-jumble-3",
    ]  # fmt: skip
    first = lines[at + 3].split()
    assert first[:5] == [
        ENCODER, "mrpc", "0", f"{figures['distinction']['share_above']['0']:.4f}",
        f"{figures['sensitivity']['antonym-swap']['share_above']['0']:.4f}",
    ]  # fmt: skip
    at = lines.index(
        "normalised Euclidean distance (lower is closer), ALIGN-SIM's figures (C1 share averaged "
        "over ε from -1 to 1; adjusted with the random-pair mean of 1 dataset):"
    )
    # both readings of equation 2, and their factors
    ned_header = " ".join(lines[at + 1].split())
    assert "C2 synonym-swap-3 adj C2 synonym-swap-1 adj NED-in" in ned_header
    assert ned_header.endswith("C2 synonym-swap-3 adj NED-in 1 - random cos 1 - random NED")
    ned = doc["models"][0]["measures"]["ned"]
    assert lines[at + 3].split()[-2:] == [
        f"{ned['adjustment_factor']:.4f}", f"{ned['adjustment_factor_ned_inside']:.4f}"
    ]  # fmt: skip
    assert ned["adjustment_factor"] == cosine["adjustment_factor"]
    assert lines[-1] == f"results: {out}"
    report = (out / "probes.md").read_text(encoding="utf-8")
    assert "## cosine similarity" in report and "## normalised Euclidean distance" in report
    for measure in ("cosine", "ned"):
        assert (out / "plots" / f"probes-{measure}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_rerun_is_byte_identical_and_the_seed_moves_the_partners(
    mrpc_run, probed, static_encoder, tmp_path
):
    out, cache, _ = probed
    again = tmp_path / "again"
    result = _cli("probe", mrpc_run, "-m", ENCODER, "-m", static_encoder, "--epsilon",
                  "0,0.05,0.1", "--cache-dir", cache, "-q", "--no-plots", "-o", again)  # fmt: skip
    assert result.exit_code == 0, result.output
    for name in ("probes.json", "probes.md", "probe-rows.jsonl"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
    assert not (again / "plots").exists()
    other = tmp_path / "seed7"
    result = _cli("probe", mrpc_run, "-m", ENCODER, "--seed", "7", "--epsilon", "0,0.05,0.1",
                  "--cache-dir", cache, "-q", "--no-plots", "-o", other)  # fmt: skip
    assert result.exit_code == 0, result.output
    first = json.loads((out / "probes.json").read_text(encoding="utf-8"))["models"][0]
    moved = json.loads((other / "probes.json").read_text(encoding="utf-8"))["models"][0]
    cosine = moved["measures"]["cosine"]["datasets"]["mrpc"]
    before = first["measures"]["cosine"]["datasets"]["mrpc"]
    assert cosine["random_pair_mean"] != before["random_pair_mean"]
    # the controls' gaps do not depend on the partners, the adjusted synonym figures do
    assert cosine["sensitivity"] == before["sensitivity"]
    assert cosine["preserved"] != before["preserved"]


def test_sts_gold_pairs_use_the_top_fifth_of_the_scale(stsb_probe_run, tmp_path):
    scores = [r["score"] for r in read_rows(stsb_probe_run / "original" / "test.jsonl")]
    for extra, threshold in (([], 4.0), (["--min-score", "3"], 3.0)):
        out = tmp_path / f"p{threshold}"
        result = _cli("probe", stsb_probe_run, "-m", ENCODER, "-q", "--no-plots", "-o", out, *extra)
        assert result.exit_code == 0, result.output
        (dataset,) = json.loads((out / "probes.json").read_text(encoding="utf-8"))["datasets"]
        assert dataset["anchors"] == sum(s >= threshold for s in scores)
        assert dataset["paraphrases"] == f"gold pairs scored {threshold:g} or more"


def test_label_0_random_pairs_are_align_sims_shuffled_non_paraphrases(mrpc_run, probed, tmp_path):
    """--random-pairs label-0: the label-0 rows' first texts in row order, each with the
    second text of the row numpy's default_rng(seed).permutation puts in its place, the
    i-th pair beside the i-th anchor (cycling); criterion 1 and the random-pair means
    recomputed here from the run folder's rows."""
    _, cache, _ = probed
    out = tmp_path / "label0"
    result = _cli("probe", mrpc_run, "-m", ENCODER, "--random-pairs", "label-0", "--epsilon",
                  "0", "--cache-dir", cache, "-q", "--no-plots", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    assert doc["random_pairs"]["rule"] == "label-0"
    rows = read_rows(mrpc_run / "original" / "test.jsonl")
    negatives = [r for r in rows if r["labels"] == 0]
    order = np.random.default_rng(0).permutation(len(negatives))
    pairs = [
        (r["sentence1"], negatives[j]["sentence2"]) for r, j in zip(negatives, order, strict=True)
    ]
    positives = [r for r in rows if r["labels"] == 1]
    assert len(pairs) < len(positives)  # so the pairs cycle
    chosen = [pairs[i % len(pairs)] for i in range(len(positives))]
    embed = _embedder()
    base = embed(r["sentence1"] for r in positives)
    paraphrase = _cos(base, embed(r["sentence2"] for r in positives))
    random = _cos(embed(p[0] for p in chosen), embed(p[1] for p in chosen))
    figures = doc["models"][0]["measures"]["cosine"]["datasets"]["mrpc"]
    assert figures["random_pair_mean"] == pytest.approx(random.mean(), abs=1e-6)
    share = np.mean([np.mean(paraphrase - random > e) for e in COSINE_GRID])
    assert figures["distinction"]["grid_share"] == pytest.approx(share, abs=1e-9)
    ned = doc["models"][0]["measures"]["ned"]["datasets"]["mrpc"]
    nrandom = _ned(embed(p[0] for p in chosen), embed(p[1] for p in chosen))
    assert ned["random_pair_mean"] == pytest.approx(nrandom.mean(), abs=1e-6)


NEGATION_PAIRS = [
    ("The museum was not open on Monday.", "The museum was closed on Monday."),
    ("She did not remember the address.", "She forgot the address."),
    ("The results were not published until May.", "The results came out in May."),
    ("Nobody answered the phone.", "The phone rang unanswered."),
    ("The bridge is not safe for trucks.", "The bridge is unsafe for trucks."),
    ("He never eats meat.", "He is a vegetarian."),
]


def test_negation_pairs_give_criterion_4_on_human_pairs(mrpc_run, probed, tmp_path):
    """--negation-pairs scores criterion 4 on human-written pairs, as ALIGN-SIM scores it on
    AFIN: the pairs' mean figure, adjusted with the probed dataset's random pairs (eq. 1;
    eq. 2 in both readings), worked out here with sentence-transformers and numpy. A CSV
    file gives the same figures; a bad line is one PATH:LINE error, exit 2, nothing written."""
    _, cache, _ = probed
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"negated": n, "affirmative": a}) + "\n"
                             for n, a in NEGATION_PAIRS), encoding="utf-8")  # fmt: skip
    out = tmp_path / "results"
    args = ["-m", ENCODER, "--cache-dir", cache, "--no-plots", "-q"]
    result = _cli("probe", mrpc_run, "--negation-pairs", pairs, *args, "-o", out)
    assert result.exit_code == 0, result.output
    assert "ALIGN-SIM criterion 4 on 6 human-written negated/affirmative pairs" in result.stdout
    assert "C4-LLM" not in result.stdout  # no affirmative-paraphrase control in this run
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    assert doc["negation_pairs"] == {"file": "pairs.jsonl", "pairs": 6}
    embed = _embedder()
    anchors = _expected_anchors(mrpc_run)
    base, partners = embed(a[1] for a in anchors), embed(a[3] for a in anchors)
    negated, affirmative = embed(n for n, _ in NEGATION_PAIRS), embed(a for _, a in NEGATION_PAIRS)
    rand_cos = _cos(base, partners).mean()
    rand_ned = _ned(base, partners).mean()
    measures = doc["models"][0]["measures"]
    cos = _cos(negated, affirmative).mean()
    assert measures["cosine"]["negation_pairs"] == pytest.approx(
        {"n": 6, "mean": cos, "adjusted": cos * (1 - rand_cos)}, abs=1e-5
    )
    ned = _ned(negated, affirmative).mean()
    assert measures["ned"]["negation_pairs"] == pytest.approx(
        {"n": 6, "mean": ned, "adjusted": 1 - (1 - ned) * (1 - rand_cos),
         "adjusted_ned_inside": 1 - (1 - ned) * (1 - rand_ned)}, abs=1e-5
    )  # fmt: skip

    table = tmp_path / "pairs.csv"
    table.write_text("negated,affirmative\n" + "".join(f'"{n}","{a}"\n' for n, a in NEGATION_PAIRS),
                     encoding="utf-8")  # fmt: skip
    result = _cli("probe", mrpc_run, "--negation-pairs", table, *args, "-o", tmp_path / "csv")
    assert result.exit_code == 0, result.output
    again = json.loads((tmp_path / "csv" / "probes.json").read_text(encoding="utf-8"))
    assert again["models"][0]["measures"] == measures

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"negated": "a", "affirmative": "b"}) + "\n"
                   + json.dumps({"negated": "c"}) + "\n", encoding="utf-8")  # fmt: skip
    result = _cli("probe", mrpc_run, "--negation-pairs", bad, *args, "-o", tmp_path / "bad")
    assert result.exit_code == 2
    assert result.stderr == f"Error: {bad}:2: affirmative is not a non-empty string\n"
    assert not (tmp_path / "bad").exists()
