"""human-eval: batches, the HTML form in real headless Chromium, import, screening, report."""

from __future__ import annotations

import json

import pytest
from support.files import read_rows
from support.human_eval import HEADER, make_batch, rate, write_csv


def test_batches_are_seeded_stratified_and_shuffled_per_rater(batch_run, invoke, tmp_path):
    table = make_batch(invoke, batch_run, tmp_path / "a", "--raters", "3")
    again = make_batch(invoke, batch_run, tmp_path / "b", "--raters", "3")
    assert (tmp_path / "a" / "items.jsonl").read_bytes() == (
        tmp_path / "b" / "items.jsonl"
    ).read_bytes()
    batches = {}
    for row in table:
        batches.setdefault(row["batch_id"], []).append(row)
    assert list(batches) == ["b01", "b02", "b03"]
    real = [{r["item_id"] for r in rows if not r["is_control"]} for rows in batches.values()]
    assert real[0] == real[1] == real[2] and len(real[0]) == 10  # 5 per transform
    strata = {r["stratum"] for r in table if not r["is_control"]}
    assert strata == {"paraphrase", "summarisation"}
    orders = [[r["item_id"] for r in rows if not r["is_control"]] for rows in batches.values()]
    assert orders[0] != orders[1]  # each rater sees their own order
    for rows in batches.values():
        controls = [r for r in rows if r["is_control"]]
        assert sorted(r["control"] for r in controls) == ["negative", "positive"]
        positive = next(r for r in controls if r["control"] == "positive")
        assert positive["expected"] == {"quality": 5, "fluency": 5}
        assert positive["text_b"] == positive["text_a"].rstrip(".")  # near-identical
        negative = next(r for r in controls if r["control"] == "negative")
        assert negative["expected"] == {"quality": 1, "fluency": 5}
        assert [r["position"] for r in rows] == list(range(1, len(rows) + 1))
    assert not any(r["swapped"] for r in table)  # quality is not symmetric
    other = make_batch(invoke, batch_run, tmp_path / "c", "--raters", "3", "--seed", "1")
    assert other != again
    sim = make_batch(invoke, batch_run, tmp_path / "d", "--raters", "3", "--scheme", "similarity")
    assert any(r["swapped"] for r in sim)
    swapped = next(r for r in sim if r["swapped"] and not r["is_control"])
    original = next(r for r in table if r["item_id"] == swapped["item_id"])
    assert (swapped["text_a"], swapped["text_b"]) == (original["text_b"], original["text_a"])


def test_batch_refuses_bad_input(batch_run, invoke, tmp_path):
    make_batch(invoke, batch_run, tmp_path / "a")
    result = invoke("human-eval", "batch", batch_run, "-o", tmp_path / "a")
    assert result.exit_code == 2
    assert (
        result.stderr == f"Error: {tmp_path / 'a'} already holds a batch; choose another --output\n"
    )
    bad = tmp_path / "scheme.json"
    bad.write_text(json.dumps({"criteria": {"quality": {"question": "?", "scale": [1, 2]}}}))
    result = invoke("human-eval", "batch", batch_run, "-o", tmp_path / "b", "--scheme-file", bad)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {bad}: criterion 'quality' has no label for point 1\n"
    assert not (tmp_path / "b").exists()


SCALE_TEXT = "is not on the quality scale"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([HEADER, "b01,nope/1,r1,quality,3,"], ":2: unknown item 'nope/1' in batch 'b01'"),
        ([HEADER, "b01,{item},r1,quality,6,"], f":2: rating '6' {SCALE_TEXT} (1, 2, 3, 4, 5)"),
        ([HEADER, "b01,{item},r1,quality,good,"], f":2: rating 'good' {SCALE_TEXT}"),
        (
            [HEADER, "b01,{item},r1,clarity,3,"],
            ":2: unknown criterion 'clarity'; the scheme has quality, fluency",
        ),
        (
            [HEADER, "b01,{item},r1,quality,3,", "b01,{item},r1,quality,4,"],
            ":3: a second quality rating of '{item}' by 'r1' (the first is in {file})",
        ),
        (
            ["batch_id,item_id,criterion,rating", "b01,{item},quality,3"],
            ":1: missing column(s) rater_id",
        ),
        ([HEADER, "b01,{item},,quality,3,"], ":2: empty rater_id"),
        (
            [HEADER, "b01,{item},r1,quality,3," + "x" * 200_000],
            ":2: not a CSV row (field larger than field limit (131072))",
        ),
    ],
)
def test_bad_rating_files(batch, invoke, tmp_path, lines, message):
    item = next(r["item_id"] for r in read_rows(batch / "items.jsonl") if not r["is_control"])
    path = tmp_path / "ratings.csv"
    write_csv(path, [line.replace("{item}", item) for line in lines])
    result = invoke("human-eval", "import", batch, path)
    assert result.exit_code == 2
    expected = message.replace("{item}", item).replace("{file}", str(path))
    assert result.stderr.startswith(f"Error: {path}{expected}")
    assert len(result.stderr.splitlines()) == 1
    assert not (batch / "ratings.jsonl").exists()


def test_non_utf8_file_and_nothing_written_from_a_mixed_import(batch, invoke, tmp_path):
    item = next(r["item_id"] for r in read_rows(batch / "items.jsonl") if not r["is_control"])
    good = write_csv(tmp_path / "good.csv", [HEADER, f"b01,{item},r1,quality,3,"])
    latin = write_csv(
        tmp_path / "latin.csv", [HEADER, f"b01,{item},Jos\u00e9,quality,3,"], "latin-1"
    )
    result = invoke("human-eval", "import", batch, good, latin)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {latin}: not UTF-8 text (byte ")
    assert not (batch / "ratings.jsonl").exists()
    assert invoke("human-eval", "import", batch, good).exit_code == 0
    again = invoke("human-eval", "import", batch, good)  # the same ratings a second time
    assert again.exit_code == 2 and "a second quality rating" in again.stderr
    assert len(read_rows(batch / "ratings.jsonl")) == 1


# ------------------------------------------------------------------ crowd platforms


def test_mturk_export_and_results_import(batch_run, invoke, tmp_path):
    import csv
    import re

    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "2")
    result = invoke("human-eval", "export", batch, "--format", "mturk", "--items-per-hit", "5")
    assert result.exit_code == 0, result.output
    folder = batch / "export" / "mturk"
    with open(folder / "batch.csv", newline="", encoding="utf-8") as fh:
        hits = list(csv.DictReader(fh))
    assert len(hits) == 6  # 12 items per batch in HITs of 5: 5, 5, 2
    template = (folder / "hit.html").read_text(encoding="utf-8")
    placeholders = set(re.findall(r"\$\{(\w+)\}", template))
    assert placeholders and placeholders <= set(hits[0])
    assert hits[2]["item_id_3"] == "" and hits[2]["item_id_2"]
    # Results as MTurk (and Turkle) write them: one row per assignment.
    by_item = {(r["batch_id"], r["item_id"]): r for r in table}
    results = tmp_path / "Batch_123_batch_results.csv"
    answer_cols = [f"Answer.{c}_{k}" for k in range(1, 6) for c in ("quality", "fluency")]
    with open(results, "w", newline="", encoding="utf-8") as fh:
        columns = ["HITId", "WorkerId", "SubmitTime", *(f"Input.{c}" for c in hits[0])]
        writer = csv.DictWriter(fh, fieldnames=columns + answer_cols)
        writer.writeheader()
        for n, hit in enumerate(hits):
            worker = "A1WORKER" if hit["batch_id"] == "b01" else "A2WORKER"
            row = {
                "HITId": f"H{n}",
                "WorkerId": worker,
                "SubmitTime": "Sun Nov 22 07:00:00 UTC 2026",
            }
            row.update({f"Input.{c}": v for c, v in hit.items()})
            for k in range(1, 6):
                item = by_item.get((hit["batch_id"], hit[f"item_id_{k}"]))
                for c in ("quality", "fluency"):
                    row[f"Answer.{c}_{k}"] = rate(item, c, "r1") if item else ""
            writer.writerow(row)
    result = invoke("human-eval", "import", batch, results)
    assert result.exit_code == 0, result.output
    ratings = read_rows(batch / "ratings.jsonl")
    assert len(ratings) == 48
    for r in ratings:
        assert r["rating"] == rate(by_item[(r["batch_id"], r["item_id"])], r["criterion"], "r1")
    assert {r["rater_id"] for r in ratings} == {"A1WORKER", "A2WORKER"}
    broken = tmp_path / "broken.csv"
    text = results.read_text(encoding="utf-8").replace("Answer.fluency_1", "Answer.fluency_x")
    broken.write_text(text, encoding="utf-8")
    result = invoke("human-eval", "import", batch, broken)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {broken}:1: missing column(s) Answer.fluency_1\n"


def test_label_studio_round_trip(batch_run, invoke, tmp_path):
    import xml.etree.ElementTree as ET

    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "2")
    assert invoke("human-eval", "export", batch, "--format", "labelstudio").exit_code == 0
    folder = batch / "export" / "labelstudio"
    tasks = json.loads((folder / "tasks.json").read_text(encoding="utf-8"))
    assert len(tasks) == len(table) == 24
    config = ET.fromstring((folder / "config.xml").read_text(encoding="utf-8"))
    choices = {c.get("name"): [x.get("value") for x in c] for c in config.iter("Choices")}
    assert choices == {"quality": list("12345"), "fluency": list("12345")}
    assert {t.get("value") for t in config.iter("Text")} == {"$instruction", "$text_a", "$text_b"}
    # An export as Label Studio writes it, with one annotation per task.
    by_item = {(r["batch_id"], r["item_id"]): r for r in table}
    exported = []
    for n, task in enumerate(tasks, start=1):
        item = by_item[(task["data"]["batch_id"], task["data"]["item_id"])]
        result = [
            {"from_name": c, "to_name": "text_b", "type": "choices",
             "value": {"choices": [str(rate(item, c, "r2"))]}}
            for c in ("quality", "fluency")
        ]  # fmt: skip
        email = f"{task['data']['batch_id']}@example.org"  # one annotator per batch
        annotation = {"completed_by": {"id": 3, "email": email}, "result": result,
                      "created_at": "2026-11-22T07:00:00Z", "was_cancelled": False}  # fmt: skip
        exported.append({"id": n, "data": task["data"], "annotations": [annotation]})
    path = tmp_path / "project-1-at-2026-11-22.json"
    good = exported[4]["annotations"][0]["result"][0]["value"]["choices"]
    exported[4]["annotations"][0]["result"][0]["value"]["choices"] = ["9"]
    path.write_text(json.dumps(exported), encoding="utf-8")
    bad = invoke("human-eval", "import", batch, path)
    assert bad.exit_code == 2
    assert bad.stderr.startswith(f"Error: {path}: task 5: rating '9' is not on the quality scale")
    assert not (batch / "ratings.jsonl").exists()
    exported[4]["annotations"][0]["result"][0]["value"]["choices"] = good
    path.write_text(json.dumps(exported), encoding="utf-8")
    result = invoke("human-eval", "import", batch, path)
    assert result.exit_code == 0, result.output
    ratings = read_rows(batch / "ratings.jsonl")
    assert len(ratings) == 48 and {r["rater_id"] for r in ratings} == {
        "b01@example.org",
        "b02@example.org",
    }
    for r in ratings:
        assert r["rating"] == rate(by_item[(r["batch_id"], r["item_id"])], r["criterion"], "r2")


@pytest.fixture
def argilla_client():
    """An argilla SDK client on a local stub of the two calls it makes before it parses."""
    import argilla as rg
    from support.argilla_server import ArgillaStub

    stub = ArgillaStub(api_key="argilla-test-key").start()
    try:
        yield rg.Argilla(api_url=stub.url, api_key="argilla-test-key")
    finally:
        stub.stop()


def test_argilla_round_trip(batch_run, invoke, tmp_path, argilla_client):
    """The export is the folder argilla.Dataset.to_disk writes: argilla's own parsers read
    its settings and records; records annotated with argilla's own Response objects and
    written by its own records writer import back as ratings."""
    import argilla as rg
    from argilla.records._io import JsonIO  # what Dataset.records.to_json calls

    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "2")
    result = invoke("human-eval", "export", batch, "--format", "argilla")
    assert result.exit_code == 0, result.output
    folder = batch / "export" / "argilla"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json")) == [
        ".argilla/dataset.json", ".argilla/settings.json", "records.json"
    ]  # fmt: skip
    settings = rg.Settings.from_json(folder / ".argilla" / "settings.json")
    assert [q.name for q in settings.questions] == ["quality", "fluency"]
    assert [q.values for q in settings.questions] == [[1, 2, 3, 4, 5]] * 2
    assert [f.name for f in settings.fields] == ["instruction", "text_a", "text_b"]
    assert [m.name for m in settings.metadata] == ["batch_id", "item_id"]
    exported = json.loads((folder / "records.json").read_text(encoding="utf-8"))
    records = [rg.Record.from_dict(r) for r in exported]
    assert len({r.id for r in records}) == len(records) == len(table) == 24
    by_item = {(r["batch_id"], r["item_id"]): r for r in table}
    users = {
        "b01": "0c6f1d7e-3b2a-4c5d-8e9f-1a2b3c4d5e6f",
        "b02": "7a8b9c0d-1e2f-4a3b-9c4d-5e6f7a8b9c0d",
    }
    annotated = []
    for record in records:
        item = by_item[(record.metadata["batch_id"], record.metadata["item_id"])]
        assert record.fields["text_b"] == item["text_b"]
        responses = [
            rg.Response(question_name=c, value=rate(item, c, "r2"),
                        user_id=users[item["batch_id"]], status="submitted")
            for c in ("quality", "fluency")
        ]  # fmt: skip
        annotated.append(
            rg.Record(
                id=record.id,
                fields=dict(record.fields),
                metadata=dict(record.metadata),
                responses=responses,
            )
        )
    path = JsonIO.to_json(annotated, tmp_path / "argilla-records.json")
    written = json.loads(path.read_text(encoding="utf-8"))
    good = written[6]["responses"]["fluency"][0]["value"]
    written[6]["responses"]["fluency"][0]["value"] = 9
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(written), encoding="utf-8")
    result = invoke("human-eval", "import", batch, broken)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: {broken}: record 7: rating '9' is not on the fluency scale"
    )
    assert not (batch / "ratings.jsonl").exists()
    assert good in (1, 2, 3, 4, 5)
    result = invoke("human-eval", "import", batch, path)
    assert result.exit_code == 0, result.output
    ratings = read_rows(batch / "ratings.jsonl")
    assert len(ratings) == 48 and {r["rater_id"] for r in ratings} == set(users.values())
    for r in ratings:
        assert r["rating"] == rate(by_item[(r["batch_id"], r["item_id"])], r["criterion"], "r2")
