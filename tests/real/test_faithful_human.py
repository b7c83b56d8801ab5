"""evaluate --faithful human: a batch made by `human-eval batch`, rated through the
platforms' CSV import, certifies the rows evaluate scores again (it stopped with
KeyError: 'config' on every such batch: the batch's items did not say where their text
stands)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

import pytest
from support.environment import ENCODER
from support.files import read_rows
from support.human_eval import HEADER, make_batch, rate, write_csv

from shiftbench.core.models.encoders import Encoder
from shiftbench.evaluate.evaluators.sts import sts_metrics

FIELDS = ("sentence1", "sentence2")


def test_rows_people_rated_faithful_are_scored_again(batch_run, invoke, tmp_path):
    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "1", "--per-stratum", "16")
    lines = [HEADER]
    for item in table:
        for criterion in ("quality", "fluency"):
            lines.append(f"b01,{item['item_id']},r1,{criterion},{rate(item, criterion, 'r1')},")
    ratings = write_csv(tmp_path / "b01.csv", lines)
    assert invoke("human-eval", "import", batch, ratings).exit_code == 0

    out = tmp_path / "results"
    result = invoke(
        "evaluate", batch_run, "-m", ENCODER, "--faithful", "human>=4", "--human-eval", batch,
        "-o", out, "--no-plots", "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output

    # the same selection, recomputed from the batch's items and the rule the rater followed:
    # a field passes when every criterion's rating is 4 or more, a row when both fields do
    passed: dict[tuple[str, int], set[str]] = defaultdict(set)
    for item in (i for i in table if not i["is_control"]):
        config, split, row_id, field = item["item_id"].split("/")
        if config != "paraphrase-s1":
            continue
        means = [statistics.fmean([rate(item, c, "r1")]) for c in ("quality", "fluency")]
        if min(means) >= 4:
            passed[(split, int(row_id))].add(field)
    rows = [
        r
        for r in read_rows(batch_run / "paraphrase-s1" / "test.jsonl")
        if r["status"] == "ok" and passed.get(("test", r["row_id"])) == set(FIELDS)
    ]
    assert 3 <= len(rows) < 8
    encoder = Encoder(ENCODER)

    def spearman(first: str, second: str) -> float:
        return sts_metrics(
            encoder.embed([r[first] for r in rows]),
            encoder.embed([r[second] for r in rows]),
            [r["score"] for r in rows],
            (0.0, 5.0),
        )["cosine_spearman"]

    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (variant,) = [r for r in doc["models"][0]["results"] if r["config"] == "paraphrase-s1"]
    figures = variant["faithful"]
    assert figures["criterion"] == "human>=4" and figures["rows"] == len(rows)
    assert figures["main_score"] == pytest.approx(spearman("sentence1", "sentence2"), abs=1e-9)
    assert figures["original_same_rows"] == pytest.approx(
        spearman("original_sentence1", "original_sentence2"), abs=1e-9
    )

    # a batch made before its items said where their text stands is read by its item ids
    older = [
        {k: v for k, v in item.items() if k not in ("config", "split", "row_id", "field")}
        for item in read_rows(batch / "items.jsonl")
    ]
    (batch / "items.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in older), encoding="utf-8"
    )
    again = invoke(
        "evaluate", batch_run, "-m", ENCODER, "--faithful", "human>=4", "--human-eval", batch,
        "-o", tmp_path / "again", "--no-plots", "-q",
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    doc = json.loads((tmp_path / "again" / "results.json").read_text(encoding="utf-8"))
    (older_variant,) = [r for r in doc["models"][0]["results"] if r["config"] == "paraphrase-s1"]
    assert older_variant["faithful"] == figures
