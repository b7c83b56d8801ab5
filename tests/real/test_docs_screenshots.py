"""The documentation's pictures are screenshots this test takes in headless Chromium: the
leaderboard page, the report page and its bars plot (`report --html`), the rating form and
a dataset card. Their inputs are fixed (support/docs_pictures.py, fixed rating items, the
sample rewritten by the scripted backend), so each page's source is the same from run to
run; docs/images/screenshots.json keeps the digest of the page each committed picture was
taken from, and the test fails when a page now renders otherwise (the picture is stale).

Refresh the pictures with the command in REFRESH (it writes docs/images/)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from support.docs_pictures import write_fixed_results
from support.files import REPO, SAMPLE_ROWS, read_rows
from support.waiting import wait_for

IMAGES = REPO / "docs" / "images"
MANIFEST = IMAGES / "screenshots.json"
REFRESH = "SHIFTBENCH_UPDATE_SCREENSHOTS=1 pytest tests/real/test_docs_screenshots.py"
# the window's width (each picture is cut from a page this wide) and the height of the cut
SIZES = {"report.png": (1240, 560), "leaderboard.png": (1000, 620)}
DEFAULT_SIZE = (1000, 640)
# what each picture shows, the page it is taken from, and the guide that shows it
PICTURES = {
    "leaderboard.png": ("shiftbench leaderboard", "guides/evaluate.md"),
    "report.png": ("shiftbench report --html: the top of report.html", "guides/evaluate.md"),
    "report-bars.png": ("shiftbench report --html: plots/bars.png in report.html",
                        "getting-started.md"),
    "rating-form.png": ("shiftbench human-eval export: the HTML rating form",
                        "guides/human-eval.md"),
    "dataset-card.png": ("shiftbench card: README.md rendered as Markdown",
                         "guides/cards-and-releases.md"),
}  # fmt: skip
CARD_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><style>
body{{font:14px/1.5 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff}}
h1{{font-size:22px}}h2{{font-size:17px;margin-top:24px}}table{{border-collapse:collapse}}
th,td{{padding:3px 10px;border-bottom:1px solid #d8dee4;text-align:left}}
th{{background:#f3f5f7}}code{{background:#f3f5f7;padding:0 3px}}
</style></head><body>{body}</body></html>
"""


def _pages(invoke, tmp_path: Path) -> dict[str, Path]:
    """Each page a picture is taken from, made by the command a user runs."""
    from shiftbench.human_eval.batches import packaged_scheme
    from shiftbench.human_eval.export import export_html

    results = write_fixed_results(tmp_path / "results")
    done = invoke("leaderboard", *results, "-o", tmp_path / "board")
    assert done.exit_code == 0, done.output
    done = invoke("report", *results, "-o", tmp_path / "report", "--html")
    assert done.exit_code == 0, done.output

    rows = read_rows(SAMPLE_ROWS)[:3]
    rewrites = [
        "In her garden, a woman waters her tomato plants.",
        "The Lyon-bound train departed twenty minutes behind time.",
        "On the beach, two kids are making a castle of sand.",
    ]
    items = [
        {"batch_id": "b01", "position": i + 1, "item_id": f"sample/paraphrase-s1337/{i}",
         "stratum": "paraphrase", "transform": "paraphrase", "axis": "Lexical/Stylistic",
         "language": "en", "text_a": row["sentence1"], "text_b": text, "swapped": False,
         "is_control": False, "control": None, "expected": None, "tolerance": None}
        for i, (row, text) in enumerate(zip(rows, rewrites, strict=True))
    ]  # fmt: skip
    (form,) = export_html({"scheme": packaged_scheme("quality")}, items, tmp_path / "form")

    run = tmp_path / "run"
    done = invoke("gen", "sample", "-b", "scripted", "-q", "-o", run)
    assert done.exit_code == 0, done.output
    done = invoke("card", run)
    assert done.exit_code == 0, done.output
    return {
        "leaderboard.png": tmp_path / "board" / "index.html",
        "report.png": tmp_path / "report" / "report.html",
        "report-bars.png": tmp_path / "report" / "report.html",
        "rating-form.png": form,
        "dataset-card.png": _card_page(run / "README.md", tmp_path / "card.html"),
    }


def _card_page(card: Path, page: Path) -> Path:
    """The card's Markdown (below its YAML header) as the Hub's page shows it, rendered by
    the `markdown` package MkDocs uses."""
    import markdown

    body = card.read_text(encoding="utf-8").split("---\n", 2)[2]
    html = markdown.markdown(body, extensions=["tables", "fenced_code"])
    page.write_text(CARD_PAGE.format(body=html), encoding="utf-8")
    return page


def _shoot(browser, name: str, page: Path, out: Path) -> None:
    """Load `page` and save the part of it the picture shows to `out`, as a small PNG."""
    from PIL import Image
    from selenium.webdriver.common.by import By

    width, height = SIZES.get(name, DEFAULT_SIZE)
    browser.set_window_size(width, 900)
    browser.get(page.as_uri())
    wait_for(
        lambda: browser.execute_script("return document.readyState") == "complete",
        30,
        f"{page.name} to load",
    )
    if name == "rating-form.png":  # the form's script builds its items
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".item .text"), 30, "the form")
    # no scroll bar in the picture (the page is cut, not scrolled)
    browser.execute_script("document.documentElement.style.overflow = 'hidden'")
    if name == "report-bars.png":
        element = browser.find_element(By.CSS_SELECTOR, 'img[data-plot="bars.png"]')
        browser.execute_script("arguments[0].scrollIntoView()", element)
        assert element.screenshot(str(out))
    else:
        browser.save_screenshot(str(out))
        with Image.open(out) as shot:
            cut = shot.convert("RGB").crop((0, 0, shot.size[0], min(height, shot.size[1])))
        cut.save(out)
    # a palette of 64 colours keeps a screenshot of text a few tens of KB
    with Image.open(out) as shot:
        small = shot.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small.save(out, optimize=True)


def _digest(page: Path) -> str:
    return hashlib.sha256(page.read_bytes()).hexdigest()


@pytest.mark.browser
def test_screenshots(browser, invoke, scripted, tmp_path):
    """Each picture is taken from the page its command makes now, and the committed one
    is current: taken from a page with the same source."""
    from PIL import Image

    pages = _pages(invoke, tmp_path)
    shots = tmp_path / "shots"
    shots.mkdir()
    taken = {}
    for name, page in pages.items():
        _shoot(browser, name, page, shots / name)
        with Image.open(shots / name) as shot:
            assert shot.size[0] >= 400 and shot.size[1] >= 200, (name, shot.size)
            colours = shot.convert("RGB").getcolors(maxcolors=1 << 16) or []
        assert any(sum(c) < 200 for _, c in colours), f"{name} shows no text"
        taken[name] = {"page": PICTURES[name][0], "sha256": _digest(page)}
    if os.environ.get("SHIFTBENCH_UPDATE_SCREENSHOTS") == "1":
        IMAGES.mkdir(exist_ok=True)
        for name in taken:
            shutil.copyfile(shots / name, IMAGES / name)
        MANIFEST.write_text(json.dumps(taken, indent=2) + "\n", encoding="utf-8")
    recorded = json.loads(MANIFEST.read_text(encoding="utf-8")) if MANIFEST.is_file() else {}
    stale = [n for n in taken if recorded.get(n) != taken[n] or not (IMAGES / n).is_file()]
    assert not stale, (
        f"docs/images/{', '.join(stale)} no longer show(s) what the pages render; "
        f"refresh with {REFRESH}"
    )
    for name, (_, guide) in PICTURES.items():  # each is shown, and stays small
        assert f"images/{name}" in (REPO / "docs" / guide).read_text(encoding="utf-8"), guide
        assert (IMAGES / name).stat().st_size < 80_000, name
