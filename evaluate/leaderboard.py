"""A leaderboard page: one self-contained HTML file of models, their changes and intervals.

Built from the report's summary (core/records.ReportSummary) and the results documents it
was made of: models by (original, each axis, total), each change (a signed delta: the
rewritten score less the original's on the same rows) with its 95% interval, marked `*`
where the report marks it (core/evidence.py), and its rank interval (a model ranks ahead
of another only when its whole interval lies above the other's, so overlapping models
share ranks and are shown as tied), sortable columns, a drill-down per model to each
dataset, transformation and seed, a chart per axis, the datasets and protocols covered,
and links to the cards of the published releases scored.

The page needs no server and no network: its style and its sorting script are inline, and
every text from the inputs (model names, dataset names) is escaped, so a name holding
markup shows as text.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from shiftbench import __version__
from shiftbench.core.evidence import flagged_notes
from shiftbench.core.protocols import DEFAULT_PROTOCOL, protocol_name
from shiftbench.core.records import ReportSummary, ResultsDocument
from shiftbench.core.report_rows import FigureRecord, ModelFigures
from shiftbench.errors import InputError
from shiftbench.evaluate.report.tables import (
    HTEB_NOTE,
    HTEB_POINTS,
    SCORES,
    Figures,
    summary_figures,
)
from shiftbench.evaluate.report.units import dataset_labels

AXES = ("Lexical/Stylistic", "Length", "Language")
HUB = "https://huggingface.co/datasets"

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse;margin:8px 0}th,td{padding:4px 10px;text-align:right;
border-bottom:1px solid #d8dee4;white-space:nowrap}th{background:#f3f5f7;cursor:pointer;
user-select:none}th.text,td.text{text-align:left}th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"}
.ci{display:block;color:#57606a;font-size:11px}
.tied{background:#fff4d6}.badge{font-size:11px;color:#7a5b00;margin-left:4px}
.meta{color:#57606a}details{margin:6px 0}summary{cursor:pointer;font-weight:600}
svg text{font:12px system-ui,sans-serif;fill:#1b1f24}
"""

SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th, column) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
      var nx = parseFloat(x), ny = parseFloat(y), order;
      if (x === "" || y === "") { order = (x === "") - (y === ""); return order; }
      order = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(
    value: float | None, text: str, figure: Mapping[str, Any] | None = None, shown: Figures = SCORES
) -> str:
    """A figure's cell; with `figure`, its interval below, `*` after a thin or zero-width one."""
    sort = "" if value is None else f"{value:.10g}"
    interval = shown.interval(figure) if figure else ""
    extra = f'<span class="ci">{_e(interval)}</span>' if interval else ""
    return f'<td data-sort="{sort}">{_e(text)}{extra}</td>'


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _rank_text(figure: FigureRecord | None) -> tuple[str, float | None, bool]:
    """The rank interval as shown, its sort key, and whether it is shared (tied)."""
    if not figure or "rank" not in figure:
        return "", None, False
    low, high = figure["rank"]
    return (str(low) if low == high else f"{low}\u2013{high}"), low + high / 1000, low != high


def page(summary: ReportSummary, documents: Sequence[ResultsDocument]) -> str:
    """The whole page, as text (equal inputs give equal bytes)."""
    models = summary["models"]
    axes = [a for a in AXES if any(a in m["axes"] for m in models.values())]
    labels = dataset_labels(documents) if documents else list(summary["datasets"])
    protocols = sorted({_protocol(d) for d in documents}) or ["as the report recorded"]
    order = sorted(models, key=lambda m: _order_key(models[m]))
    shown = summary_figures(summary)  # HTEB's points for results scored as HTEB scores
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>shiftbench leaderboard</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>shiftbench leaderboard</h1>",
        f'<p class="meta">{_count(len(models), "model")} on {_count(len(labels), "dataset")} '
        f"({_e(', '.join(labels))}); protocol {_e(', '.join(protocols))}; "
        f"{_e(summary['interval'])} 95% intervals; aggregation {_e(summary['aggregation'])}; "
        f"made by shiftbench {_e(__version__)}.</p>",
        '<p class="meta">Each change is a model\'s score on the rewritten texts less its '
        "score on the same original texts (negative: a drop), averaged over the datasets, "
        "with its 95% interval. A rank is an interval: a model ranks ahead of another only "
        "when its whole interval lies above the other's (rank 1: the largest change, that is "
        "the smallest drop); models whose intervals overlap share ranks and are marked tied. "
        "Click a column to sort." + (f" {HTEB_NOTE}" if shown is HTEB_POINTS else "") + "</p>",
        _main_table(models, order, axes, shown),
        _charts(models, order, axes, shown),
        "<h2>Per model</h2>",
        *(
            _drilldown(name, documents, labels, shown)
            if documents
            else _unit_drilldown(name, summary, shown)
            for name in order
        ),
        _sources(documents, labels) if documents else _dataset_list(labels),
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    # what a `*` means, under the table, where an interval on the page has one
    notes = "".join(f'<p class="meta">{_e(note)}</p>' for note in flagged_notes(parts))
    if notes:
        table = next(i for i, part in enumerate(parts) if part.startswith("<table"))
        parts.insert(table + 1, notes)
    return "\n".join(parts) + "\n"


def _protocol(doc: ResultsDocument) -> str:
    return protocol_name(doc) or DEFAULT_PROTOCOL


def _order_key(model: Mapping[str, Any]) -> tuple[float, float]:
    total = model.get("total") or {}
    rank = total.get("rank") or [10**9, 10**9]
    return (rank[0], -(total.get("delta") or 0.0))


def _main_table(
    models: dict[str, ModelFigures], order: list[str], axes: list[str], shown: Figures
) -> str:
    head = [
        '<th class="text">model</th>',
        "<th>rank</th>",
        "<th>datasets</th>",
        "<th>original</th>",
    ]
    head += [f"<th>{_e(a)} change</th>" for a in axes] + ["<th>total change</th>"]
    rows = []
    for name in order:
        m = models[name]
        total = m.get("total")
        rank, rank_key, tied = _rank_text(total)
        cells = [
            f'<td class="text" data-sort="{_e(name)}">{_e(name)}'
            + ('<span class="badge">tied</span>' if tied else "")
            + "</td>",
            f'<td data-sort="{"" if rank_key is None else rank_key}">{_e(rank)}</td>',
            _cell(m["datasets"], str(m["datasets"])),
            _cell(m.get("original"), shown.num(m.get("original"))),
        ]
        for f in [*(m["axes"].get(axis) for axis in axes), total]:
            delta = f and f["delta"]
            cells.append(_cell(delta, shown.change(f), f, shown))
        css = ' class="tied"' if tied else ""
        rows.append(f'<tr{css} data-model="{_e(name)}">' + "".join(cells) + "</tr>")
    return (
        '<table class="sortable" id="leaderboard"><thead><tr>'
        + "".join(head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _charts(
    models: dict[str, ModelFigures], order: list[str], axes: list[str], shown: Figures
) -> str:
    """Per axis (and the total): each model's change as a dot on its 95% interval."""
    out = ["<h2>Changes by axis</h2>"]
    for axis in [*axes, "total"]:
        found = [
            (n, models[n]["total"] if axis == "total" else models[n]["axes"].get(axis))
            for n in order
        ]
        figures = [(n, f) for n, f in found if f and f.get("delta") is not None]
        if not figures:
            continue
        values = [0.0] + [v for _, f in figures for v in (f["delta"], *(f.get("ci95") or []))]
        low, high = min(values), max(values)
        width, row = 720, 26
        x = _scale(low, high, 260, width - 20)

        height = row * len(figures) + 30
        items = [f'<line x1="{x(0)}" y1="4" x2="{x(0)}" y2="{height - 20}" stroke="#8c959f"/>']
        for i, (name, f) in enumerate(figures):
            y = 16 + i * row
            short = name if len(name) <= 36 else name[:35] + "\u2026"
            items.append(f'<text x="4" y="{y + 4}">{_e(short)}</text>')
            if ci95 := f.get("ci95"):
                a, b = ci95
                items.append(f'<line x1="{x(a)}" y1="{y}" x2="{x(b)}" y2="{y}" '
                             'stroke="#0969da" stroke-width="2"/>')  # fmt: skip
            tip = _e(f"{name}: {shown.delta(f)}")
            items.append(f'<circle cx="{x(f["delta"])}" cy="{y}" r="4" fill="#0969da">'
                         f"<title>{tip}</title></circle>")  # fmt: skip
        # the ends of the scale, with the decimals its range needs (as an interval's)
        ends = shown.delta_places({"ci95": (low, high)})
        first, last = shown.num(low, True, ends), shown.num(high, True, ends)
        items.append(f'<text x="{x(low)}" y="{height - 4}">{first}</text>')
        if last != first:  # one label where the range is a point
            items.append(f'<text x="{x(high) - 50}" y="{height - 4}">{last}</text>')
        out.append(f"<h3>{_e(axis)}</h3>")
        out.append(
            f'<svg class="chart" data-axis="{_e(axis)}" width="{width}" height="{height}" '
            f'role="img" aria-label="{_e(axis)} changes">' + "".join(items) + "</svg>"
        )
    return "\n".join(out)


def _scale(low: float, high: float, start: int, end: int) -> Any:
    """The x position of a value, [low, high] drawn from `start` to `end`."""
    span = (high - low) or 1.0
    return lambda v: round(start + (v - low) / span * (end - start), 1)


def _drilldown(
    name: str, documents: Sequence[ResultsDocument], labels: list[str], shown: Figures
) -> str:
    """One model's scores on each dataset, transformation and seed."""
    rows = []
    for label, doc in zip(labels, documents, strict=True):
        for entry in doc["models"]:
            if str(entry["model"].get("id")) != name:
                continue
            for r in entry["results"]:
                if r.get("kind") != "transform":
                    continue
                cells = [
                    f'<td class="text" data-sort="{_e(label)}">{_e(label)}</td>',
                    f'<td class="text" data-sort="{_e(r.get("transform"))}">'
                    f"{_e(r.get('transform'))}</td>",
                    _cell(r.get("seed"), str(r.get("seed", ""))),
                    _cell(r.get("original_same_rows"), shown.num(r.get("original_same_rows"))),
                    _cell(r["main_score"], shown.num(r["main_score"])),
                    _cell(r.get("delta"), shown.change(r), r, shown),
                    _cell(r["rows"], str(r["rows"])),
                ]
                rows.append("<tr>" + "".join(cells) + "</tr>")
    return _details(name, "seed", rows, with_rows=True)


def _unit_drilldown(name: str, summary: ReportSummary, shown: Figures) -> str:
    """One model's figures per dataset and transformation, from a report's summary (which
    keeps seeds averaged: their number is shown)."""
    rows = []
    for unit in summary["units"]:
        if unit["model"] != name:
            continue
        label = unit["dataset"] + ("" if unit["subset"] == "default" else f" ({unit['subset']})")
        for transform, f in unit["transforms"].items():
            cells = [
                f'<td class="text" data-sort="{_e(label)}">{_e(label)}</td>',
                f'<td class="text" data-sort="{_e(transform)}">{_e(transform)}</td>',
                _cell(
                    f.get("seeds"), "-" if f.get("seeds") is None else _count(f["seeds"], "seed")
                ),
                _cell(unit.get("original"), shown.num(unit.get("original"))),
                _cell(f.get("score"), shown.num(f.get("score"))),
                _cell(f.get("delta"), shown.num(f.get("delta"), True), f, shown),
            ]
            rows.append("<tr>" + "".join(cells) + "</tr>")
    return _details(name, "seeds", rows, with_rows=False)


def _details(name: str, seeds: str, rows: list[str], *, with_rows: bool) -> str:
    """A model's drill-down: a folded, sortable table of `rows`."""
    columns = ["dataset", "transformation", seeds, "original", "rewritten", "change"]
    columns += ["rows"] if with_rows else []
    head = "".join(f'<th class="{"text" if i < 2 else ""}">{c}</th>' for i, c in enumerate(columns))
    return (
        f'<details data-model="{_e(name)}"><summary>{_e(name)}</summary>'
        f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table></details>"
    )


def _dataset_list(labels: list[str]) -> str:
    return "<h2>Datasets</h2><ul>" + "".join(f"<li>{_e(x)}</li>" for x in labels) + "</ul>"


def _sources(documents: Sequence[ResultsDocument], labels: list[str]) -> str:
    items = []
    for label, doc in zip(labels, documents, strict=True):
        source = doc["source"]
        release = source.get("release") or {}
        protocol = _protocol(doc)
        line = f"{_e(label)}: {_e(source.get('task_type'))}, protocol {_e(protocol)}"
        if release.get("repo") and release.get("tag"):
            repo, tag = release["repo"], release["tag"]
            url = f"{HUB}/{repo}/blob/{tag}/README.md"
            line += f', release <a href="{_e(url)}">{_e(repo)}@{_e(tag)}</a> (its card)'
        items.append(f"<li>{line}</li>")
    return "<h2>Datasets</h2><ul>" + "".join(items) + "</ul>"


def write_leaderboard(results: Sequence[Path], output: Path) -> Path:
    """Read evaluate results folders (or their results.json), summarise them as `report`
    does, and write the page to `output`/index.html; returns the page's path. One
    `report` output folder (its summary.json, without the results it summarises) gives
    the page from that summary, its drill-down per transformation with seeds averaged."""
    from shiftbench.core.data.jsonfiles import read_json
    from shiftbench.core.data.resultsfolder import read_results
    from shiftbench.core.data.writes import atomic_write_text
    from shiftbench.evaluate.report.summary import summarise_results

    reports = [p for p in results if p.is_dir() and not (p / "results.json").exists()
               and (p / "summary.json").is_file()]  # fmt: skip
    if reports and len(results) > 1:
        raise InputError(
            f"{reports[0]} is a report folder, which stands alone: give one report folder, "
            "or evaluate results folders"
        )
    if reports:
        summary = cast(ReportSummary, read_json(reports[0] / "summary.json"))
        for key in ("datasets", "models", "units", "interval", "aggregation"):
            if key not in summary:
                raise InputError(f"{reports[0] / 'summary.json'} has no {key!r}; is it a report's?")
        text = page(summary, [])
    else:
        documents = [read_results(path) for path in results]
        text = page(summarise_results(documents), documents)
    output.mkdir(parents=True, exist_ok=True)
    target = output / "index.html"
    atomic_write_text(target, text)
    return target
