"""shiftbench probe: the alignment probes' figures against an independent computation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import ENCODER, read_rows

RULES = ("synonym-swap-1,synonym-swap-2,synonym-swap-3,antonym-swap,word-jumble-1,"
         "word-jumble-2,word-jumble-3")  # fmt: skip


def _cli(*args):
    from shiftbench.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def mrpc_run(tmp_path_factory, shared_data, wordnet_dir) -> Path:
    """The first 400 pairs of MRPC's test split with every rule-based control, seed 1."""
    out = tmp_path_factory.mktemp("probes") / "mrpc"
    result = _cli("gen", shared_data / "MRPC", "--task-type", "PairClassification",
                  "--source-language", "en", "--limit", "400", "-t", RULES, "-s", "1",
                  "--wordnet-dir", wordnet_dir, "-q", "-o", out)  # fmt: skip
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


def _expected_anchors(run: Path, seed: int = 0):
    """The documented recipe: label-1 pairs in row order; each anchor's random partner
    drawn from the split's unique texts with numpy's default_rng(seed), skipping the
    anchor and its paraphrase."""
    rows = read_rows(run / "original" / "test.jsonl")
    pool = list(dict.fromkeys(r[f] for r in rows for f in ("sentence1", "sentence2")))
    rng = np.random.default_rng(seed)
    anchors = []
    for r in rows:
        if r["labels"] != 1:
            continue
        while (partner := pool[int(rng.integers(len(pool)))]) in (r["sentence1"], r["sentence2"]):
            pass
        anchors.append((r["row_id"], r["sentence1"], r["sentence2"], partner))
    return anchors


def _cos(a, b):
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _ned_similarity(a, b):
    ca, cb = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
    ned = 0.5 * np.sum((ca - cb) ** 2, axis=1) / (np.sum(ca**2, axis=1) + np.sum(cb**2, axis=1))
    return 1 - ned


def test_figures_match_an_independent_computation(mrpc_run, probed):
    """Every figure of all-MiniLM-L6-v2 in probes.json, recomputed here from the run
    folder's files with sentence-transformers and numpy."""
    from sentence_transformers import SentenceTransformer

    from shiftbench.evaluate.encoders import resolve_encoder

    out, _, _ = probed
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    anchors = _expected_anchors(mrpc_run)
    assert doc["anchors"] == len(anchors) == 262
    assert doc["epsilons"] == [0.0, 0.05, 0.1]
    assert doc["paraphrases"] == "gold pairs with label 1"
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")

    def embed(texts):
        return model.encode(texts, convert_to_numpy=True).astype(np.float64)

    base = embed([a[1] for a in anchors])
    for measure, sim in (("cosine", _cos), ("ned", _ned_similarity)):
        figures = doc["models"][0]["measures"][measure]
        para = sim(base, embed([a[2] for a in anchors]))
        rand = sim(base, embed([a[3] for a in anchors]))
        tol = 1.5 / len(anchors)  # a float-level difference may move one anchor
        assert figures["random_pair_mean"] == pytest.approx(rand.mean(), abs=1e-5)
        for eps in ("0", "0.05", "0.1"):
            share = figures["distinction"]["share_above"][eps]
            assert share == pytest.approx(np.mean(para - rand > float(eps)), abs=tol)
        position = {a[0]: i for i, a in enumerate(anchors)}
        for name in RULES.split(","):
            rows = [r for r in read_rows(mrpc_run / f"{name}-s1" / "test.jsonl")
                    if r["row_id"] in position and r["status_sentence1"] == "ok"]  # fmt: skip
            index = [position[r["row_id"]] for r in rows]
            made = sim(base[index], embed([r["sentence1"] for r in rows]))
            if name.startswith("synonym"):
                entry = figures["synonym"][name]
                assert entry["n"] == len(rows)
                expected = made.mean() * (1 - rand.mean())
                assert entry["adjusted"] == pytest.approx(expected, abs=1e-5)
            else:
                entry = figures["sensitivity"][name]
                gaps = para[index] - made
                assert entry["n"] == len(rows)
                assert entry["mean"] == pytest.approx(gaps.mean(), abs=1e-5)
                for eps in ("0", "0.05", "0.1"):
                    expected_share = np.mean(gaps > float(eps))
                    assert entry["share_above"][eps] == pytest.approx(expected_share, abs=tol)


def test_a_bag_of_tokens_encoder_cannot_see_word_order(probed):
    """The static (mean-pooled word-piece) encoder gives a jumbled text the anchor's own
    embedding: it never prefers the paraphrase, at any margin. It is also far more
    anisotropic than all-MiniLM-L6-v2, which the synonym adjustment corrects for."""
    out, _, _ = probed
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    minilm, static = (m["measures"]["cosine"] for m in doc["models"])
    for n in (1, 2, 3):
        entry = static["sensitivity"][f"word-jumble-{n}"]
        assert set(entry["share_above"].values()) == {0.0}
        assert entry["mean"] < 0
    assert static["random_pair_mean"] > minilm["random_pair_mean"] + 0.2
    rows = read_rows(out / "probe-rows.jsonl")
    assert len(rows) == 2 * doc["anchors"]
    jumbled = [v for r in rows[doc["anchors"] :] for v in r["cosine"].get("word-jumble-1", [])]
    assert min(jumbled) > 0.99999


def test_printed_tables_and_files(probed):
    out, _, stdout = probed
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    lines = stdout.splitlines()
    assert lines[0] == (
        "anchors: 262 (gold pairs with label 1; field sentence1); random partners drawn with seed 0"
    )
    at = lines.index("cosine similarity:")
    assert lines[at + 1].split() == [
        "model", "ε", "distinction", "antonym-swap", "word-jumble-1", "word-jumble-2",
        "word-jumble-3", "synonym-swap-1", "synonym-swap-2", "synonym-swap-3", "random", "mean",
    ]  # fmt: skip
    figures = doc["models"][0]["measures"]["cosine"]
    first = lines[at + 3].split()
    assert first[:4] == [
        ENCODER,
        "0",
        f"{figures['distinction']['share_above']['0']:.4f}",
        f"{figures['sensitivity']['antonym-swap']['share_above']['0']:.4f}",
    ]
    assert first[-1] == f"{figures['random_pair_mean']:.4f}"
    assert "1 - normalised Euclidean distance:" in lines
    assert lines[-1] == f"results: {out}"
    report = (out / "probes.md").read_text(encoding="utf-8")
    assert "## cosine similarity" in report and "## 1 - normalised Euclidean distance" in report
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
    cosine, before = moved["measures"]["cosine"], first["measures"]["cosine"]
    assert cosine["random_pair_mean"] != before["random_pair_mean"]
    # the controls' gaps do not depend on the partners, the adjusted synonym figures do
    assert cosine["sensitivity"] == before["sensitivity"]
    assert cosine["synonym"] != before["synonym"]


def test_sts_gold_pairs_use_the_top_fifth_of_the_scale(shared_data, wordnet_dir, tmp_path):
    run = tmp_path / "stsb"
    result = _cli("gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit",
                  "300", "-t", "word-jumble-1", "-q", "-o", run)  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = [r["score"] for r in read_rows(run / "original" / "test.jsonl")]
    for extra, threshold in (([], 4.0), (["--min-score", "3"], 3.0)):
        out = tmp_path / f"p{threshold}"
        result = _cli("probe", run, "-m", ENCODER, "-q", "--no-plots", "-o", out, *extra)
        assert result.exit_code == 0, result.output
        doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
        assert doc["anchors"] == sum(s >= threshold for s in scores)
        assert doc["paraphrases"] == f"gold pairs scored {threshold:g} or more"


def test_paraphrases_from_an_llm_config(invoke, tmp_path, scripted):
    run = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "paraphrase,word-jumble-1", "-b", "scripted", "-q",
                    "-o", run)  # fmt: skip
    assert result.exit_code == 0, result.output
    out = tmp_path / "p"
    result = invoke("probe", run, "-m", ENCODER, "--paraphrases", "paraphrase-s1337", "-q",
                    "--no-plots", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    assert doc["anchors"] == 42
    assert doc["paraphrases"] == "config paraphrase-s1337 (rows with status ok)"
    result = invoke("probe", run, "-m", ENCODER, "--paraphrases", "paraphrase-s1", "-o", out)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: --paraphrases paraphrase-s1: no such transform config in {run.name} (it has: "
        "paraphrase-s1337)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--epsilon", "0,wide"],
            "Error: --epsilon takes numbers separated by commas, not '0,wide'",
        ),
        (["--epsilon", "3"], "Error: --epsilon takes numbers from -2 to 2, not '3'"),
    ],
)
def test_bad_epsilons(invoke, tmp_path, args, message):
    out = tmp_path / "p"
    result = invoke("probe", "sample", "-m", ENCODER, *args, "-o", out)
    assert (result.exit_code, result.stderr.strip()) == (2, message)
    assert not out.exists()


def test_probe_needs_controls(invoke, tmp_path, scripted):
    run = tmp_path / "run"
    assert invoke("gen", "sample", "-b", "scripted", "-q", "-o", run).exit_code == 0
    out = tmp_path / "p"
    result = invoke("probe", run, "-m", ENCODER, "-o", out)
    assert (result.exit_code, result.stderr.strip()) == (
        2,
        "Error: run holds no control configs; make them with 'shiftbench gen SOURCE -t controls'",
    )
    result = invoke("probe", tmp_path / "nowhere", "-m", ENCODER, "-o", out)
    assert (result.exit_code, result.stderr.strip()) == (
        2,
        f"Error: {tmp_path / 'nowhere'} is neither a run folder nor a release ORG/NAME@vX.Y.Z",
    )
    assert not out.exists()
