"""human-eval: batches, the HTML form in real headless Chromium, import, screening, report."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from urllib.parse import urlsplit

import krippendorff
import numpy as np
import pytest
from support.files import read_rows
from support.http_stub import Handler, StubServer
from support.human_eval import HEADER, make_batch, rate, rated_batch
from support.waiting import wait_for

from shiftbench.human_eval.agreement import gwet
from shiftbench.human_eval.export import export_html

# ------------------------------------------------------------------ the browser form


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
def test_form_round_trip_in_chromium(batch_run, invoke, browser, tmp_path):
    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "3")
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
    assert result.output == "imported 72 ratings from 3 raters; 72 in all\n"
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
    assert doc["raters"]["r3"]["reason"] == "1 control rating outside the tolerance"
    assert "- r3: 1 control rating outside the tolerance" in result.output
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


def test_report_correlates_ratings_with_drift(batch_run, invoke, tmp_path):
    from scipy.stats import spearmanr

    assert invoke("validate", batch_run, "--drift-encoder", "all-MiniLM-L6-v2", "-q").exit_code == 0
    batch = rated_batch(invoke, batch_run, tmp_path)
    table = read_rows(batch / "items.jsonl")
    result = invoke("human-eval", "report", batch)
    assert result.exit_code == 0, result.output
    doc = json.loads((batch / "human_eval.json").read_text(encoding="utf-8"))
    (quality,) = [c for c in doc["drift_correlation"] if c["criterion"] == "quality"]
    drift = {}
    for config in ("paraphrase-s1", "summarisation-s1"):
        for row in read_rows(batch_run / "validation" / f"{config}.jsonl"):
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


class StudySite(StubServer):
    """A researcher's web server for a Prolific study: it serves the exported forms
    (GET /<batch>.html) and keeps each ratings CSV a form POSTs to /ratings."""

    def __init__(self, forms: Path, received: Path) -> None:
        received.mkdir()
        self.received = received

        class Site(Handler):
            def do_GET(self) -> None:
                page = forms / urlsplit(self.path).path.lstrip("/")
                if page.parent == forms and page.suffix == ".html" and page.is_file():
                    self.reply(200, page.read_bytes(), "text/html; charset=utf-8")
                else:
                    self.reply(404, b"not found", "text/plain")

            def do_POST(self) -> None:
                body = self.body_bytes()
                if self.path != "/ratings":
                    self.reply(404, b"not found", "text/plain")
                    return
                count = len(list(received.iterdir()))
                part = received / f"part-{count}"
                part.write_bytes(body)  # complete before it gets its final name
                part.rename(received / f"submission-{count + 1}.csv")
                self.reply(200, b"ok", "text/plain")

        super().__init__(Site)


@pytest.mark.browser
def test_prolific_round_trip_in_chromium(batch_run, invoke, browser, tmp_path):
    """A participant opens the study URL Prolific sends them: the form takes their id from
    it, sends the ratings to the study's server, and shows the completion code and the link
    back to Prolific; the CSV it sent imports with that id as the rater."""
    from selenium.webdriver.common.by import By

    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "2")
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
