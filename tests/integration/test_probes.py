"""shiftbench probe: the alignment probes' figures against an independent computation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.environment import ENCODER
from support.probes import COSINE_GRID, NED_GRID, _cos, _embedder, _expected_anchors, _ned

# ALIGN-SIM's printed criterion-1 figures for the 12 models whose rows it shows (SBERT's
# are withheld), per dataset (QQP, PAWS-Wiki, MRPC): Table 6's and Table 7's difference of
# the mean paraphrase and random-pair cosine and NED, and Table 3's criterion-1 share (%)
# for the cosine and for NED.
ALIGN_SIM_C1 = {  # model: ((cos diff, NED diff, cos share, NED share) per dataset)
    "USE": ((0.707, -0.3534, 85.4, 67.7), (0.878, -0.4387, 93.6, 71.9),
            (0.713, -0.3565, 85.8, 67.9)),
    "SimCSE": ((0.500, -0.2503, 75.0, 62.5), (0.711, -0.3555, 85.7, 67.8),
               (0.555, -0.277, 77.7, 63.9)),
    "Infer-Sent": ((0.255, -0.2245, 62.8, 61.3), (0.295, -0.2879, 64.8, 64.4),
                   (0.225, -0.2259, 61.3, 61.3)),
    "LASER": ((0.333, -0.2500, 66.6, 62.5), (0.355, -0.3041, 67.8, 65.2),
              (0.300, -0.2541, 65.0, 62.7)),
    "Bloom": ((0.004, -0.0023, 50.1, 50.1), (0.005, -0.0032, 50.2, 50.1),
              (0.003, -0.0018, 50.1, 50.0)),
    "GPTNeo": ((0.189, -0.0960, 59.5, 54.8), (0.320, -0.1625, 66.2, 58.3),
               (0.236, -0.1199, 61.9, 56.0)),
    "GPT3-Ada": ((0.211, -0.1055, 60.5, 55.2), (0.266, -0.1330, 63.3, 56.7),
                 (0.219, -0.1095, 61.0, 55.5)),
    "LLaMA-2": ((0.333, -0.1679, 66.7, 58.5), (0.517, -0.2608, 75.8, 63.0),
                (0.359, -0.1810, 67.9, 59.1)),
    "LLaMA-3": ((0.360, -0.1804, 68.2, 59.1), (0.493, -0.2474, 75.0, 62.5),
                (0.417, -0.2088, 70.9, 60.5)),
    "Mistral": ((0.267, -0.1363, 63.6, 57.0), (0.444, -0.2248, 72.4, 61.3),
                (0.394, -0.1987, 69.7, 60.0)),
    "OpenELM": ((0.164, -0.0874, 58.4, 54.4), (0.221, -0.1182, 61.3, 56.0),
                (0.186, -0.0980, 59.4, 54.9)),
    "OLMo": ((0.383, -0.1921, 69.3, 59.7), (0.571, -0.2869, 78.7, 64.4),
             (0.466, -0.2338, 73.3, 61.7)),
}  # fmt: skip


def test_the_criterion_1_grid_gives_align_sims_table_3_from_its_tables_6_and_7():
    """The paper does not list its ε grid. With ours (the same 21 margins for both
    measures), every anchor put at the mean difference of Table 6 or 7 gives Table 3's
    share within 4 points, for all 36 printed cells and both measures (the spread of the
    real differences around their mean accounts for the rest). A NED grid half as wide,
    which NED's smaller gaps might suggest, misses Table 3 by up to 18.6 points."""
    from shiftbench.evaluate.probes.anchors import DISTINCTION_GRIDS
    from shiftbench.evaluate.probes.figures import distinction_share

    assert DISTINCTION_GRIDS["cosine"] == DISTINCTION_GRIDS["ned"]
    assert np.allclose(DISTINCTION_GRIDS["cosine"], COSINE_GRID)
    zero = np.zeros(1)
    missed = {"cosine": 0.0, "ned": 0.0, "ned, half as wide": 0.0}
    for cells in ALIGN_SIM_C1.values():
        for cos_diff, ned_diff, cos_share, ned_share in cells:
            ours = {
                "cosine": 100 * distinction_share("cosine", np.array([cos_diff]), zero),
                "ned": 100 * distinction_share("ned", np.array([ned_diff]), zero),
                "ned, half as wide": 100 * np.mean([ned_diff < e / 2 for e in NED_GRID]),
            }
            paper = {"cosine": cos_share, "ned": ned_share, "ned, half as wide": ned_share}
            for key in missed:
                missed[key] = max(missed[key], abs(ours[key] - paper[key]))
    assert missed["cosine"] < 4 and missed["ned"] < 4, missed
    assert missed["ned, half as wide"] > 15, missed


def test_criterion_1_is_one_half_when_the_paraphrase_is_no_closer_than_a_random_text():
    """Signal-free data: paraphrase and random-pair figures drawn from one distribution
    (and so with a difference symmetric about 0) give a share of one half for either
    measure, on the symmetric grid; a paraphrase that is always closer by a wide margin
    passes every ε but the widest."""
    from shiftbench.evaluate.probes.figures import distinction_share

    rng = np.random.default_rng(7)
    for measure, draw in (("cosine", lambda n: rng.uniform(-1, 1, n)),
                          ("ned", lambda n: rng.uniform(0, 1, n))):  # fmt: skip
        share = distinction_share(measure, draw(40_000), draw(40_000))
        assert share == pytest.approx(0.5, abs=0.01), measure
    # by 0.95 closer: passes the 20 margins below 0.95, not ε = 1
    assert distinction_share("cosine", np.full(5, 0.97), np.full(5, 0.02)) == 20 / 21
    assert distinction_share("ned", np.full(5, 0.01), np.full(5, 0.96)) == 20 / 21


def test_paraphrases_from_an_llm_config(invoke, tmp_path, scripted):
    run = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "paraphrase,word-jumble-1", "-b", "scripted", "-q",
                    "-o", run)  # fmt: skip
    assert result.exit_code == 0, result.output
    out = tmp_path / "p"
    result = invoke("probe", run, "-m", ENCODER, "--paraphrases", "paraphrase-s1337", "-q",
                    "--no-plots", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    (dataset,) = json.loads((out / "probes.json").read_text(encoding="utf-8"))["datasets"]
    assert dataset["anchors"] == 42
    assert dataset["paraphrases"] == "config paraphrase-s1337 (rows with status ok)"
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


def test_two_targets_of_one_name_are_refused(invoke, tmp_path, scripted):
    run = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "word-jumble-1", "-b", "scripted", "-q", "-o", run)
    assert result.exit_code == 0, result.output
    out = tmp_path / "p"
    result = invoke("probe", run, run, "-m", ENCODER, "-o", out)
    assert (result.exit_code, result.stderr.strip()) == (
        2, "Error: two targets are both called run; each target is one dataset"
    )  # fmt: skip
    assert not out.exists()


NEGATED = [
    ("The museum is not open on Mondays.", "On Mondays the museum stays shut.",
     "The museum is closed on Mondays."),
    ("Nobody answered the phone at the office.", "At the office the phone rang unanswered.",
     "The phone at the office went unanswered."),
    ("The bridge over the river was never finished.", "Work on the river bridge stopped early.",
     "The bridge over the river remains unfinished."),
]  # fmt: skip
PLAIN = [
    ("Cats chase mice in the old barn.", "In the old barn, cats run after mice."),
    ("A chef is slicing onions for the soup.", "Someone cuts onions to make soup."),
    ("The orchestra played a waltz at noon.", "At midday the orchestra performed a waltz."),
]  # fmt: skip


def test_criterion_4_scores_the_affirmative_paraphrase(invoke, tmp_path, scripted):
    """The affirmative paraphrase of a negated anchor is ALIGN-SIM's criterion 4: its mean
    cosine times alpha, its mean NED through eq. 2, both against a hand computation.
    negation is listed and tabled as shiftbench's own meaning-changing control."""
    from support.files import write_folder

    rows = [{"sentence1": a, "sentence2": b, "score": 5.0} for a, b, _ in NEGATED]
    rows += [{"sentence1": a, "sentence2": b, "score": 4.5} for a, b in PLAIN]
    folder = write_folder(tmp_path / "negated", rows)
    for text, _, affirmative in NEGATED:
        scripted.script[text] = [affirmative]
    run = tmp_path / "run"
    gen = ["gen", folder, "--task-type", "STS", "--source-language", "en", "-b", "scripted",
           "--max-failure-rate", "1", "-q", "-o", run]  # fmt: skip
    assert invoke(*gen, "-t", "affirmative-paraphrase").exit_code == 0
    negations = ["The museum is open on Mondays.", "Somebody answered the phone at the office.",
                 "The bridge over the river was finished."]  # fmt: skip
    for (text, _, _), negated in zip(NEGATED, negations, strict=True):
        scripted.script[text] = [negated]
    for text, _ in PLAIN:
        scripted.script[text] = [
            text.replace(" is ", " is not ").replace(" chase ", " never chase ")
        ]
    assert invoke(*gen, "-t", "negation").exit_code == 0
    out = tmp_path / "p"
    result = invoke("probe", run, "-m", ENCODER, "--epsilon", "0", "-q", "--no-plots", "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    controls = doc["datasets"][0]["controls"]
    assert controls["affirmative-paraphrase"] == {
        "meaning": "preserved", "criterion": 4, "configs": ["affirmative-paraphrase-s1337"],
        "pairs": 3,
    }  # fmt: skip
    assert (controls["negation"]["meaning"], controls["negation"]["criterion"]) == ("changed", None)
    lines = result.stdout.splitlines()
    assert (
        "  affirmative-paraphrase (meaning preserved; ALIGN-SIM criterion 4 on LLM rewrites; "
        "the paper's uses human-written pairs (--negation-pairs)): 3 pairs from "
        "affirmative-paraphrase-s1337" in lines
    )
    assert any(line.startswith("  negation (meaning changed; shiftbench's own control): ")
               for line in lines)  # fmt: skip
    headers = [line.split() for line in lines if line.startswith("model ")]
    assert all("C4-LLM" in h for h in headers[::2]) and all("own" in h for h in headers[1::2])

    anchors = _expected_anchors(run, gold=lambda r: r["score"] >= 4.0)
    assert [a[1] for a in anchors] == [r["sentence1"] for r in rows]
    embed = _embedder()
    base = embed(a[1] for a in anchors)
    affirmative = embed(made for _, _, made in NEGATED)
    rand_cos = _cos(base, embed(a[3] for a in anchors)).mean()
    for measure, pair in (("cosine", _cos), ("ned", _ned)):
        rand = pair(base, embed(a[3] for a in anchors)).mean()
        mean = pair(base[:3], affirmative).mean()
        expected = mean * (1 - rand) if measure == "cosine" else 1 - (1 - mean) * (1 - rand_cos)
        figures = doc["models"][0]["measures"][measure]["datasets"]["run"]
        entry = figures["preserved"]["affirmative-paraphrase"]
        assert (entry["n"], entry["mean"]) == (3, pytest.approx(mean, abs=1e-5))
        assert entry["adjusted"] == pytest.approx(expected, abs=1e-5)
        if measure == "ned":
            inside = 1 - (1 - mean) * (1 - rand)
            assert entry["adjusted_ned_inside"] == pytest.approx(inside, abs=1e-5)
        assert "negation" in figures["sensitivity"] and "negation" not in figures["preserved"]


def test_label_0_random_pairs_need_pair_classification_data(invoke, tmp_path, scripted):
    run = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "word-jumble-1", "-b", "scripted", "-q", "-o", run)
    assert result.exit_code == 0, result.output
    out = tmp_path / "p"
    result = invoke("probe", run, "-m", ENCODER, "--random-pairs", "label-0", "-o", out)
    assert (result.exit_code, result.stderr.strip()) == (
        2,
        "Error: --random-pairs label-0 needs PairClassification data (label-0 pairs); run is "
        "a STS run",
    )
    assert not out.exists()
