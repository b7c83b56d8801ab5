"""`shiftbench report --html`: the whole report as one page that opens offline."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser

from support.docs_pictures import write_fixed_results


class _Page(HTMLParser):
    """What a reader of the page sees: headings, paragraphs, table rows, images, and any
    address it would load (a script, a stylesheet, a link)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[str, object]] = []
        self.loads: list[str] = []
        self.scripts = 0
        self._tag: str | None = None
        self._text: list[str] = []
        self._row: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href"):
            if attrs.get(key) and not attrs[key].startswith("data:"):
                self.loads.append(attrs[key])
        if tag == "img":
            self.blocks.append(("img", (attrs["alt"], attrs["src"])))
        if tag == "tr":
            self._row = []
        if tag in ("h1", "h2", "p", "td", "th"):
            self._tag, self._text = tag, []

    def handle_data(self, data):
        if self._tag:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == self._tag:
            text = "".join(self._text)
            if tag in ("td", "th"):
                self._row.append(text)
            else:
                self.blocks.append((tag, text))
            self._tag = None
        if tag == "tr":
            self.blocks.append(("row", self._row))


def _markdown_blocks(text: str) -> list[tuple[str, object]]:
    """report.md read back the same way: headings, paragraphs, table rows, images."""
    blocks: list[tuple[str, object]] = []
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("## "):
            blocks.append(("h2", line[3:]))
        elif line.startswith("# "):
            blocks.append(("h1", line[2:]))
        elif found := re.fullmatch(r"!\[(.*)\]\((.*)\)", line):
            blocks.append(("img", (found[1], found[2])))
        elif line.startswith("| ---"):
            continue
        elif line.startswith("| "):
            cells = re.split(r"(?<!\\) \| ", line[2:-2])
            cells = [c.replace("\\|", "|").replace("&lt;", "<").replace("&gt;", ">") for c in cells]
            blocks.append(("row", cells))
        else:
            blocks.append(("p", line))
    return blocks


def test_report_html_holds_the_whole_report_offline(invoke, tmp_path):
    results = write_fixed_results(tmp_path / "results")
    out = tmp_path / "report"
    done = invoke("report", *results, "-o", out, "--html")
    assert done.exit_code == 0, done.output
    page = out / "report.html"
    assert done.stdout.endswith(f"\nreport: {out}\npage: {page}\n")

    text = page.read_text(encoding="utf-8")
    seen = _Page()
    seen.feed(text)
    assert (seen.loads, seen.scripts) == ([], 0)  # nothing to fetch, nothing to run
    html_blocks = seen.blocks
    md_blocks = _markdown_blocks((out / "report.md").read_text(encoding="utf-8"))
    # the same headings, sentences, table rows, in the same order; each plot embedded
    assert [b for b in html_blocks if b[0] != "img"] == [b for b in md_blocks if b[0] != "img"]
    images = [b[1] for b in html_blocks if b[0] == "img"]
    linked = [b[1] for b in md_blocks if b[0] == "img"]
    assert (
        [alt for alt, _ in images] == [alt for alt, _ in linked] == ["bars", "heatmap", "scatter"]
    )
    for (_, src), (_, link) in zip(images, linked, strict=True):
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix)
        assert base64.b64decode(src[len(prefix) :]) == (out / link).read_bytes()
    assert ("row", ["all-MiniLM-L6-v2", "0.8184", "0.7688", "-0.050 [-0.086, -0.011]",
                    "0.6981", "-0.12 [-0.18, -0.06]", "0.7334",
                    "-0.085 [-0.120, -0.053]", "1-2"]) in html_blocks  # fmt: skip

    # equal inputs give equal bytes; without --html the page of older results goes
    again = invoke("report", *results, "-o", tmp_path / "again", "--html")
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again" / "report.html").read_bytes() == page.read_bytes()
    plain = invoke("report", *results, "-o", out)
    assert plain.exit_code == 0, plain.output
    assert not page.exists() and "page:" not in plain.stdout


def test_report_html_escapes_names_and_draws_no_plots_when_asked(invoke, tmp_path):
    results = write_fixed_results(tmp_path / "results")
    for folder in results:
        doc = json.loads((folder / "results.json").read_text())
        doc["models"][1]["model"]["id"] = "<b>bold</b>"
        (folder / "results.json").write_text(json.dumps(doc))
    out = tmp_path / "report"
    done = invoke("report", *results, "-o", out, "--html", "--no-plots")
    assert done.exit_code == 0, done.output
    text = (out / "report.html").read_text(encoding="utf-8")
    assert "<b>" not in text and "&lt;b&gt;bold&lt;/b&gt;" in text
    assert "<img" not in text and not (out / "plots").exists()


def test_report_html_of_a_folder_that_is_no_results_writes_nothing(invoke, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "report"
    done = invoke("report", empty, "-o", out, "--html")
    assert done.exit_code == 2
    assert done.stderr == f"Error: {empty} is not an evaluate results folder (no results.json)\n"
    assert not out.exists()


def test_report_help_names_the_page():
    from click.testing import CliRunner

    from shiftbench.cli import cli

    shown = CliRunner().invoke(cli, ["report", "--help"]).output
    assert "--html" in shown and "report.html" in shown
