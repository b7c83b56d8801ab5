"""human-eval: batches, the HTML form in real headless Chromium, import, screening, report."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from conftest import read_rows
from support.waiting import wait_for

from shiftbench.human_eval.agreement import gwet
from shiftbench.human_eval.export import export_html

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")


@pytest.fixture
def run(scripted, invoke, tmp_path):
    """Eight sample rows, paraphrased and summarised by the scripted generator."""
    out = tmp_path / "run"
    args = ["gen", "sample", "--limit", "8", "-t", "paraphrase,summarisation", "-s", "1"]
    assert invoke(*args, "-b", "scripted", "-q", "-o", out).exit_code == 0
    return out


def make_batch(invoke, run, out, *extra):
    result = invoke("human-eval", "batch", run, "-o", out, "--per-stratum", "5", *extra)
    assert result.exit_code == 0, result.output
    return read_rows(out / "items.jsonl")


def test_batches_are_seeded_stratified_and_shuffled_per_rater(run, invoke, tmp_path):
    table = make_batch(invoke, run, tmp_path / "a", "--raters", "3")
    again = make_batch(invoke, run, tmp_path / "b", "--raters", "3")
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
    other = make_batch(invoke, run, tmp_path / "c", "--raters", "3", "--seed", "1")
    assert other != again
    sim = make_batch(invoke, run, tmp_path / "d", "--raters", "3", "--scheme", "similarity")
    assert any(r["swapped"] for r in sim)
    swapped = next(r for r in sim if r["swapped"] and not r["is_control"])
    original = next(r for r in table if r["item_id"] == swapped["item_id"])
    assert (swapped["text_a"], swapped["text_b"]) == (original["text_b"], original["text_a"])


def test_batch_refuses_bad_input(run, invoke, tmp_path):
    make_batch(invoke, run, tmp_path / "a")
    result = invoke("human-eval", "batch", run, "-o", tmp_path / "a")
    assert result.exit_code == 2
    assert (
        result.stderr == f"Error: {tmp_path / 'a'} already holds a batch; choose another --output\n"
    )
    bad = tmp_path / "scheme.json"
    bad.write_text(json.dumps({"criteria": {"quality": {"question": "?", "scale": [1, 2]}}}))
    result = invoke("human-eval", "batch", run, "-o", tmp_path / "b", "--scheme-file", bad)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {bad}: criterion 'quality' has no label for point 1\n"
    assert not (tmp_path / "b").exists()


# ------------------------------------------------------------------ the browser form


def start_chromedriver(log: Path) -> tuple[subprocess.Popen, int]:
    """chromedriver on a free 127.0.0.1 port, waited for up to a minute; its log goes to
    `log`, and into the failure message if it never listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [DRIVER, f"--port={port}", "--allowed-ips=127.0.0.1", f"--log-path={log}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"chromedriver exited ({process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    try:
        wait_for(listening, 60, f"chromedriver to listen on 127.0.0.1:{port}")
    except AssertionError as exc:
        process.kill()
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
        pytest.fail(f"{exc}: {tail}")
    return process, port


@pytest.fixture
def browser(tmp_path):
    if not (CHROMIUM and DRIVER):
        if os.environ.get("SHIFTBENCH_REQUIRE_BROWSER") == "1":
            pytest.fail(
                "chromium and chromedriver are required (apt install chromium chromium-driver)"
            )
        pytest.skip("chromium and chromedriver are not installed")
    from selenium import webdriver

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    process, port = start_chromedriver(tmp_path / "chromedriver.log")
    try:
        driver = webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=options)
        driver.downloads = downloads
        yield driver
        driver.quit()
    finally:
        process.terminate()
        process.wait(timeout=30)


def rate(item: dict, criterion: str, rater: str) -> int:
    """A simulated rater: controls as expected (r3 gets the easy negative wrong), real
    items by a fixed rule with a small per-rater offset."""
    if item["is_control"]:
        if rater == "r3" and item["control"] == "negative" and criterion == "quality":
            return 5
        return item["expected"][criterion]
    base = 3 + len(item["text_b"]) % 3  # 3, 4 or 5
    return max(1, base - (1 if rater == "r2" and item["position"] % 2 else 0))


def fill_form(driver, page: Path, rater: str, items: list[dict], criteria: list[str]) -> Path:
    from selenium.webdriver.common.by import By

    driver.get(page.as_uri())
    driver.find_element(By.ID, "rater").send_keys(rater)
    download = driver.find_element(By.ID, "download")
    half = len(items) // 2
    for index, item in enumerate(items):
        if index == half:  # a reload halfway keeps what was answered
            driver.refresh()
            progress = driver.find_element(By.ID, "progress").text
            assert progress == f"{half * len(criteria)} of {len(items) * len(criteria)} answered"
            assert driver.find_element(By.ID, "rater").get_attribute("value") == rater
            download = driver.find_element(By.ID, "download")
        for criterion in criteria:
            value = rate(item, criterion, rater)
            driver.find_element(
                By.CSS_SELECTOR,
                f"#item-{index} input[name='r{index}-{criterion}'][value='{value}']",
            ).click()
        assert download.is_enabled() == (index == len(items) - 1)
    download.click()
    return finished_download(
        driver.downloads / f"{items[0]['batch_id']}-{rater}.csv", len(items) * len(criteria)
    )


def finished_download(target: Path, rows: int, timeout: float = 60) -> Path:
    """`target` once Chromium has finished writing it: it exists, no .crdownload temporary
    is left beside it, its size is the same (and not zero) at two looks in a row, and it
    parses as the form's CSV with its header and `rows` rows."""
    sizes: list[int] = []

    def finished() -> bool:
        if any(target.parent.glob("*.crdownload")) or not target.is_file():
            sizes.clear()
            return False
        sizes.append(target.stat().st_size)
        if sizes[-1] == 0 or sizes[-2:-1] != sizes[-1:]:
            return False
        try:
            text = target.read_bytes().decode("utf-8")
        except UnicodeDecodeError:  # cut inside a character
            return False
        table = list(csv.reader(io.StringIO(text, newline="")))
        return bool(table) and table[0] == HEADER.split(",") and len(table) == rows + 1

    return wait_for(
        lambda: finished() and target, timeout, f"Chromium to finish downloading {target.name}"
    )


@pytest.mark.browser
def test_form_round_trip_in_chromium(run, invoke, browser, tmp_path):
    batch = tmp_path / "batch"
    table = make_batch(invoke, run, batch, "--raters", "3")
    assert invoke("human-eval", "export", batch).exit_code == 0
    criteria = ["quality", "fluency"]
    files = []
    for b, rater in (("b01", "r1"), ("b02", "r2"), ("b03", "r3")):
        items = [r for r in table if r["batch_id"] == b]
        files.append(
            fill_form(browser, batch / "export" / "html" / f"{b}.html", rater, items, criteria)
        )
    result = invoke("human-eval", "import", batch, *files)
    assert result.exit_code == 0, result.output
    assert result.output == "imported 72 ratings from 3 rater(s); 72 in all\n"
    ratings = read_rows(batch / "ratings.jsonl")
    by_item = {r["item_id"]: r for r in table}
    for r in ratings:
        item = next(
            t for t in table if t["item_id"] == r["item_id"] and t["batch_id"] == r["batch_id"]
        )
        assert r["rating"] == rate(item, r["criterion"], r["rater_id"])
    assert {(r["batch_id"], r["rater_id"]) for r in ratings} == {
        ("b01", "r1"),
        ("b02", "r2"),
        ("b03", "r3"),
    }

    result = invoke("human-eval", "report", batch)
    assert result.exit_code == 0, result.output
    doc = json.loads((batch / "human_eval.json").read_text(encoding="utf-8"))
    assert doc["kept_raters"] == ["r1", "r2"] and doc["excluded_raters"] == ["r3"]
    assert doc["raters"]["r3"]["reason"] == "1 control rating(s) outside the tolerance"
    assert "- r3: 1 control rating(s) outside the tolerance" in result.output
    row = next(x for x in doc["rows"] if (x["criterion"], x["group"]) == ("quality", "paraphrase"))
    items = sorted({r["item_id"] for r in table if r["transform"] == "paraphrase"})
    matrix = np.array(
        [[next(x["rating"] for x in ratings if x["item_id"] == i and x["rater_id"] == rater
               and x["criterion"] == "quality") for rater in ("r1", "r2")] for i in items],
        dtype=float,
    )  # fmt: skip
    expected = gwet(matrix, [1, 2, 3, 4, 5], "ordinal")
    assert row["agreement"]["value"] == round(expected.value, 4)
    for level in ("ordinal", "interval"):  # raters x items for the krippendorff package
        theirs = krippendorff.alpha(
            matrix.T, value_domain=[1, 2, 3, 4, 5], level_of_measurement=level
        )
        assert row["alpha"][level]["value"] == round(float(theirs), 4)
        assert len(row["alpha"][level]["ci95"]) == 2 and row["alpha"][level]["resamples"] == 1000
    assert row["mean"] == round(float(matrix.mean()), 4) and row["items"] == len(items) == 5
    assert row["ratings"] == 10 and by_item


@pytest.mark.browser
def test_item_text_is_shown_as_text_and_runs_nothing(browser, tmp_path):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    from shiftbench.human_eval.batches import packaged_scheme

    hostile = [
        "<script>alert(1)</script>",
        '<img src=x onerror="window.__pwned = 1">',
        "</script><script>window.__pwned = 2</script>",
    ]
    table = [
        {
            "batch_id": "b01",
            "position": i + 1,
            "item_id": f"x/{i}",
            "stratum": "paraphrase",
            "transform": "paraphrase",
            "axis": "Lexical/Stylistic",
            "language": "en",
            "text_a": "A plain sentence.",
            "text_b": text,
            "swapped": False,
            "is_control": False,
            "control": None,
            "expected": None,
            "tolerance": None,
        }
        for i, text in enumerate(hostile)
    ]
    (page,) = export_html({"scheme": packaged_scheme("quality")}, table, tmp_path / "html")
    browser.get(page.as_uri())

    def rendered() -> bool:  # the form's script has built every item and run update()
        return (
            browser.execute_script("return document.readyState") == "complete"
            and len(browser.find_elements(By.CSS_SELECTOR, ".item .text")) == 2 * len(hostile)
            and browser.find_element(By.ID, "progress").text.endswith(" answered")
        )

    wait_for(rendered, 30, "the form to render its items")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    assert browser.execute_script("return window.__pwned === undefined")
    shown = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".item .text")]
    assert shown[1::2] == hostile  # the rewrites, exactly as written
    assert not browser.find_elements(By.CSS_SELECTOR, ".item img, .item script")


# ------------------------------------------------------------------ import errors


@pytest.fixture
def batch(run, invoke, tmp_path):
    out = tmp_path / "batch"
    make_batch(invoke, run, out, "--raters", "1")
    return out


def write_csv(path: Path, lines: list[str], encoding: str = "utf-8") -> Path:
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    return path


HEADER = "batch_id,item_id,rater_id,criterion,rating,answered_at"


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


def test_mturk_export_and_results_import(run, invoke, tmp_path):
    import csv
    import re

    batch = tmp_path / "batch"
    table = make_batch(invoke, run, batch, "--raters", "2")
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


def test_label_studio_round_trip(run, invoke, tmp_path):
    import xml.etree.ElementTree as ET

    batch = tmp_path / "batch"
    table = make_batch(invoke, run, batch, "--raters", "2")
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


@pytest.mark.server
def test_argilla_round_trip(run, invoke, tmp_path, argilla_client):
    """The export is the folder argilla.Dataset.to_disk writes: argilla's own parsers read
    its settings and records; records annotated with argilla's own Response objects and
    written by its own records writer import back as ratings."""
    import argilla as rg
    from argilla.records._io import JsonIO  # what Dataset.records.to_json calls

    batch = tmp_path / "batch"
    table = make_batch(invoke, run, batch, "--raters", "2")
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


def rated_batch(invoke, run: Path, tmp_path: Path) -> Path:
    """A batch of the run rated by two raters (the `rate` rule), imported and reported."""
    batch = tmp_path / "batch"
    table = make_batch(invoke, run, batch, "--raters", "2")
    files = []
    for b, rater in (("b01", "r1"), ("b02", "r2")):
        lines = [HEADER]
        for item in (r for r in table if r["batch_id"] == b):
            for c in ("quality", "fluency"):
                lines.append(f"{b},{item['item_id']},{rater},{c},{rate(item, c, rater)},")
        files.append(write_csv(tmp_path / f"{b}.csv", lines))
    assert invoke("human-eval", "import", batch, *files).exit_code == 0
    assert invoke("human-eval", "report", batch).exit_code == 0
    return batch


@pytest.mark.slow
def test_report_correlates_ratings_with_drift(run, invoke, tmp_path):
    from scipy.stats import spearmanr

    assert invoke("validate", run, "--drift-encoder", "all-MiniLM-L6-v2", "-q").exit_code == 0
    batch = rated_batch(invoke, run, tmp_path)
    table = read_rows(batch / "items.jsonl")
    result = invoke("human-eval", "report", batch)
    assert result.exit_code == 0, result.output
    doc = json.loads((batch / "human_eval.json").read_text(encoding="utf-8"))
    (quality,) = [c for c in doc["drift_correlation"] if c["criterion"] == "quality"]
    drift = {}
    for config in ("paraphrase-s1", "summarisation-s1"):
        for row in read_rows(run / "validation" / f"{config}.jsonl"):
            for field, value in row["measures"]["drift:all-MiniLM-L6-v2"].items():
                drift[f"{config}/{row['split']}/{row['row_id']}/{field}"] = value
    real = sorted({r["item_id"] for r in table if not r["is_control"]})
    ratings = read_rows(batch / "ratings.jsonl")
    means = [
        np.mean([x["rating"] for x in ratings if x["item_id"] == i and x["criterion"] == "quality"])
        for i in real
    ]
    assert quality["items"] == len(real) == 10
    assert quality["spearman"] == round(float(spearmanr(means, [drift[i] for i in real])[0]), 4)
    assert quality["ci95"][0] <= quality["spearman"] <= quality["ci95"][1]
    assert "Item mean rating against embedding drift" in result.output


class StudySite:
    """A researcher's web server for a Prolific study: it serves the exported forms
    (GET /<batch>.html) and keeps each ratings CSV a form POSTs to /ratings."""

    def __init__(self, forms: Path, received: Path) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlsplit

        received.mkdir()
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _reply(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                page = forms / urlsplit(self.path).path.lstrip("/")
                if page.parent == forms and page.suffix == ".html" and page.is_file():
                    self._reply(200, page.read_bytes(), "text/html; charset=utf-8")
                else:
                    self._reply(404, b"not found", "text/plain")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path != "/ratings":
                    self._reply(404, b"not found", "text/plain")
                    return
                count = len(list(received.iterdir()))
                part = received / f"part-{count}"
                part.write_bytes(body)  # complete before it gets its final name
                part.rename(received / f"submission-{count + 1}.csv")
                self._reply(200, b"ok", "text/plain")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StudySite:
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.browser
def test_prolific_round_trip_in_chromium(run, invoke, browser, tmp_path):
    """A participant opens the study URL Prolific sends them: the form takes their id from
    it, sends the ratings to the study's server, and shows the completion code and the link
    back to Prolific; the CSV it sent imports with that id as the rater."""
    from selenium.webdriver.common.by import By

    batch = tmp_path / "batch"
    table = make_batch(invoke, run, batch, "--raters", "2")
    forms = batch / "export" / "prolific"
    criteria = ["quality", "fluency"]
    for args, message in (
        ([], "--format prolific needs --completion-code, the code Prolific gives the study"),
        (["--completion-code", "C0DE-1"],
         "completion code 'C0DE-1' is not 4 to 40 letters and digits"),
        (["--completion-code", "C0DE1234", "--submit-url", "ftp://x"],
         "--submit-url 'ftp://x' is not an http(s) URL"),
    ):  # fmt: skip
        bad = invoke("human-eval", "export", batch, "--format", "prolific", *args)
        assert (bad.exit_code, bad.stderr) == (2, f"Error: {message}\n")
    bad = invoke("human-eval", "export", batch, "--completion-code", "C0DE1234")
    assert (bad.exit_code, bad.stderr) == (
        2, "Error: --completion-code and --submit-url apply to --format prolific\n"
    )  # fmt: skip
    assert not forms.exists()
    with StudySite(forms, tmp_path / "received") as site:
        result = invoke(
            "human-eval", "export", batch, "--format", "prolific",
            "--completion-code", "C0DE1234", "--submit-url", f"{site.url}/ratings",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        for number, (b, pid) in enumerate((("b01", "5f1a2b3c"), ("b02", "6e7d8c9b")), start=1):
            browser.get(
                f"{site.url}/{b}.html?PROLIFIC_PID={pid}&STUDY_ID=st9&SESSION_ID=se{number}"
            )
            rater = browser.find_element(By.ID, "rater")
            assert rater.get_attribute("value") == pid and rater.get_attribute("readonly")
            submit = browser.find_element(By.ID, "download")
            assert submit.text == "Submit ratings" and not submit.is_enabled()
            items = [r for r in table if r["batch_id"] == b]
            for index, item in enumerate(items):
                for c in criteria:
                    browser.find_element(
                        By.CSS_SELECTOR,
                        f"#item-{index} input[name='r{index}-{c}'][value='{rate(item, c, 'r1')}']",
                    ).click()
            submit.click()
            sent = wait_for(
                lambda n=number: (
                    (site.received / f"submission-{n}.csv").is_file()
                    and site.received / f"submission-{n}.csv"
                ),
                60,
                f"the form of {b} to send its ratings",
            )
            box = browser.find_element(By.ID, "complete")
            wait_for(box.is_displayed, 30, "the completion code to show")
            assert "Your completion code is C0DE1234." in box.text
            link = browser.find_element(By.ID, "complete-link")
            assert link.get_attribute("href") == (
                "https://app.prolific.com/submissions/complete?cc=C0DE1234"
            )
            rows = list(csv.DictReader(io.StringIO(sent.read_text(encoding="utf-8"))))
            assert len(rows) == len(items) * len(criteria)
            assert {(r["rater_id"], r["study_id"], r["session_id"]) for r in rows} == {
                (pid, "st9", f"se{number}")
            }
    files = sorted((tmp_path / "received").iterdir())
    result = invoke("human-eval", "import", batch, *files)
    assert result.exit_code == 0, result.output
    ratings = read_rows(batch / "ratings.jsonl")
    assert {r["rater_id"] for r in ratings} == {"5f1a2b3c", "6e7d8c9b"}
    by_item = {(r["batch_id"], r["item_id"]): r for r in table}
    for r in ratings:
        assert r["rating"] == rate(by_item[(r["batch_id"], r["item_id"])], r["criterion"], "r1")
