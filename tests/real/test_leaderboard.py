"""shiftbench leaderboard in headless Chromium: two encoders on two datasets of real
variants (SmolLM2's paraphrases of shared STSBenchmark rows, its summaries of BIOSSES')."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.environment import ENCODER, built_once

HOSTILE = "<script>window.pwned = 1</script>"  # a model name holding markup


@pytest.fixture(scope="module")
def scored(tmp_path_factory, shared_data, static_encoder) -> list[Path]:
    """Two results folders, each scoring all-MiniLM-L6-v2 and the static encoder, as HTEB
    scores, on SmolLM2's rewrites of 8 pairs: STSBenchmark's paraphrased (the
    Lexical/Stylistic axis), BIOSSES' summarised (Length)."""

    def build(out: Path, invoke) -> None:
        out.mkdir(parents=True)
        for name, transform in (("STSBenchmark", "paraphrase"), ("BIOSSES", "summarisation")):
            run = out / f"run-{name}"
            made = invoke("gen", name, "--data-dir", shared_data / name, "--limit", "8", "-t",
                          transform, "-s", "1", "--max-new-tokens", "24",
                          "--max-failure-rate", "1", "-q", "-o", run)  # fmt: skip
            assert made.exit_code == 0, made.output
            done = invoke("evaluate", run, "-m", ENCODER, "-m", static_encoder, "--protocol",
                          "hteb", "--precision", "float32", "--no-plots", "-q", "-o",
                          out / name)  # fmt: skip
            assert done.exit_code == 0, done.output

    base = built_once(tmp_path_factory, "leaderboard", build)
    return [base / "STSBenchmark", base / "BIOSSES"]


def renamed(folders: list[Path], tmp_path: Path, old: str, new: str) -> list[Path]:
    """Copies of the results folders with one model's name replaced."""
    out = []
    for folder in folders:
        copy = Path(shutil.copytree(folder, tmp_path / folder.name))
        doc = json.loads((copy / "results.json").read_text())
        for entry in doc["models"]:
            if entry["model"]["id"] == old:
                entry["model"]["id"] = new
        (copy / "results.json").write_text(json.dumps(doc))
        out.append(copy)
    return out


@pytest.mark.browser
@pytest.mark.heavy  # SmolLM2 rewrites two datasets first
def test_the_page_sorts_shows_ties_and_escapes_names(scored, static_encoder, invoke, browser,
                                                     tmp_path):  # fmt: skip
    from selenium.webdriver.common.by import By

    results = renamed(scored, tmp_path, static_encoder.name, HOSTILE)
    done = invoke("leaderboard", *results, "-o", tmp_path / "board")
    assert done.exit_code == 0, done.output
    page = tmp_path / "board" / "index.html"
    assert done.stdout == f"leaderboard: {page}\n"
    again = invoke("leaderboard", *results, "-o", tmp_path / "again")  # equal inputs: equal bytes
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again" / "index.html").read_bytes() == page.read_bytes()
    reported = invoke("report", *results, "-o", tmp_path / "report", "--no-plots")
    assert reported.exit_code == 0, reported.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())

    browser.set_window_size(1200, 900)
    browser.get(page.as_uri())
    # the hostile name is text, and its script never ran
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    names = [r.get_attribute("data-model") for r in rows]
    assert sorted(names) == sorted([ENCODER, HOSTILE])
    assert HOSTILE in browser.find_element(By.ID, "leaderboard").text

    # ranks and ties: each model's rank interval is the report's, and a model is marked
    # tied exactly when another model's total-drop interval overlaps its own
    totals = {m: summary["models"][m]["total"] for m in names}
    for row, name in zip(rows, names, strict=True):
        low, high = totals[name]["rank"]
        rank = row.find_elements(By.TAG_NAME, "td")[1].text
        assert rank == (str(low) if low == high else f"{low}\u2013{high}")
        a, b = totals[name]["ci95"]
        overlaps = any(
            totals[o]["ci95"][0] <= b and a <= totals[o]["ci95"][1] for o in names if o != name
        )
        assert ("tied" in row.get_attribute("class").split()) == overlaps
        assert ("tied" in row.text) == overlaps

    # sorting: by original, ascending then descending, as the report's figures order them
    header = browser.find_elements(By.CSS_SELECTOR, "#leaderboard thead th")[3]
    assert header.text == "original"
    expected = sorted(names, key=lambda m: summary["models"][m]["original"])
    header.click()
    order = [r.get_attribute("data-model") for r in browser.find_elements(
        By.CSS_SELECTOR, "#leaderboard tbody tr")]  # fmt: skip
    assert (order, header.get_attribute("aria-sort")) == (expected, "ascending")
    header.click()
    order = [r.get_attribute("data-model") for r in browser.find_elements(
        By.CSS_SELECTOR, "#leaderboard tbody tr")]  # fmt: skip
    assert (order, header.get_attribute("aria-sort")) == (expected[::-1], "descending")

    # the drill-down: every (dataset, transformation, seed) the model was scored on
    details = browser.find_element(By.CSS_SELECTOR, f'details[data-model="{ENCODER}"]')
    details.find_element(By.TAG_NAME, "summary").click()
    cells = [
        [c.text for c in r.find_elements(By.TAG_NAME, "td")[:3]]
        for r in details.find_elements(By.CSS_SELECTOR, "tbody tr")
    ]
    assert cells == [["STSBenchmark", "paraphrase", "1"], ["BIOSSES", "summarisation", "1"]]

    # layout: the table fits the window, each chart has a dot per model
    assert (
        browser.execute_script(
            "return document.getElementById('leaderboard').getBoundingClientRect().right"
        )
        <= 1200
    )
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert [c.get_attribute("data-axis") for c in charts] == [
        "Lexical/Stylistic",
        "Length",
        "total",
    ]
    assert all(len(c.find_elements(By.TAG_NAME, "circle")) == 2 for c in charts)
    shot = tmp_path / "board.png"
    assert browser.save_screenshot(str(shot))
    _check_screenshot(shot, browser)


def _check_screenshot(shot: Path, browser) -> None:
    """The screenshot is the window's size and shows the table: dark text pixels and the
    tied rows' shading inside the table's box, the page's white around it."""
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    width, height = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    assert image.size[0] >= width - 20 and image.size[1] >= height - 20
    box = browser.execute_script(
        "var r = document.getElementById('leaderboard').getBoundingClientRect();"
        "return [r.left, r.top, r.right, r.bottom]"
    )
    table = image.crop(tuple(int(v) for v in box))
    colours = table.getcolors(maxcolors=1 << 20) or []
    assert any(sum(c) < 200 for _, c in colours)  # text
    assert image.getpixel((2, int(box[3]) + 40)) == (255, 255, 255)  # the page around it
