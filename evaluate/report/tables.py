"""The report's tables, plain for the terminal and Markdown for report.md, from a summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shiftbench.core.evidence import MARK, flagged_notes, weak, width_places
from shiftbench.core.protocols import protocol_name
from shiftbench.core.records import ReportSummary, ResultsDocument
from shiftbench.core.tables import markdown_table, plain_table
from shiftbench.evaluate.report.units import AXES, TRANSFORMATIONS_FIRST
from shiftbench.evaluate.sides import config_label


@dataclass(frozen=True)
class Figures:
    """How the report prints a main-score figure (a score, a delta and its interval):
    times `factor`, with `places` decimals. With `follow_width`, a delta that has an
    interval, and the interval, get only the decimals that show the interval's width to
    two significant digits (`-0.22 [-0.49, +0.06]`, not `-0.21672 [-0.49449, +0.06216]`):
    digits below the interval's own uncertainty are noise. `places` stays the most."""

    factor: float = 1.0
    places: int = 4
    follow_width: bool = True

    def num(self, value: float | None, signed: bool = False, places: int | None = None) -> str:
        if value is None:
            return ""
        shown = self.places if places is None else places
        return f"{value * self.factor:{'+' if signed else ''}.{shown}f}"

    def delta_places(self, figure: Mapping[str, Any] | None) -> int:
        """The decimals of a figure's delta and interval (core.evidence.width_places)."""
        if not self.follow_width or not figure:
            return self.places
        return width_places(figure.get("ci95"), self.places, self.factor)

    def change(self, figure: Mapping[str, Any] | None) -> str:
        """A figure's delta alone, at its interval's decimals."""
        if not figure or figure.get("delta") is None:
            return ""
        return self.num(figure["delta"], True, self.delta_places(figure))

    def delta(self, figure: Mapping[str, Any] | None) -> str:
        """`-0.012 [-0.020, -0.005]`: a delta with its 95% interval when it has one,
        and `*` after a thin or zero-width one (core/evidence.py)."""
        if not figure or figure.get("delta") is None:
            return ""
        text = self.change(figure)
        return text + (f" {self.interval(figure)}" if figure.get("ci95") else "")

    def interval(self, figure: Mapping[str, Any]) -> str:
        """`[-0.020, -0.005]` with `*` after it when it is weak evidence (thin, or of
        no width at these decimals); empty when the figure has no interval."""
        if not figure.get("ci95"):
            return ""
        places = self.delta_places(figure)
        low, high = (self.num(end, True, places) for end in figure["ci95"])
        return f"[{low}, {high}]" + (MARK if weak(figure, low, high) else "")


SCORES = Figures()
# HTEB's release prints every score times 100 with two decimals (`reported_score`); results
# scored under --protocol hteb are printed so, scores, deltas and intervals alike.
HTEB_POINTS = Figures(100.0, 2, follow_width=False)
HTEB_NOTE = "Scores, deltas and intervals are x100 with two decimals, as HTEB prints them."


def figures_for(protocol: str | None) -> Figures:
    """How the main score of results scored under `protocol` is printed."""
    return HTEB_POINTS if protocol == "hteb" else SCORES


def summary_figures(summary: Mapping[str, Any]) -> Figures:
    """HTEB's points for a report whose every result was scored under --protocol hteb."""
    return figures_for("hteb" if summary.get("aggregation") == TRANSFORMATIONS_FIRST else None)


def _num(value: float | None, signed: bool = False) -> str:
    return SCORES.num(value, signed)


def _delta(figure: Mapping[str, Any] | None) -> str:
    return SCORES.delta(figure)


def _shift(test: Mapping[str, Any]) -> list[str]:
    """A Hodges-Lehmann shift and its interval, at the decimals of the interval's width."""
    places = width_places((test["ci_low"], test["ci_high"]), SCORES.places)
    low, high = (SCORES.num(test[k], True, places) for k in ("ci_low", "ci_high"))
    return [SCORES.num(test["hodges_lehmann"], True, places), f"[{low}, {high}]"]


def _rank(figure: Mapping[str, Any] | None) -> str:
    if not figure or "rank" not in figure:
        return ""
    low, high = figure["rank"]
    return str(low) if low == high else f"{low}-{high}"


@dataclass
class Table:
    """One table of the report: a title, a sentence saying what it shows, and the rows."""

    title: str
    note: str
    header: list[str]
    rows: list[list[str]]
    left: int = 1


def axis_rows(summary: ReportSummary) -> tuple[list[str], list[list[str]]]:
    """The axis table: per model, the original, each axis (score, delta with its 95%
    interval), the total, and the rank interval of the total delta when there is one."""
    models = summary["models"]
    axes = [a for a in AXES if any(a in s["axes"] for s in models.values())]
    ranked = any(_rank(s["total"]) for s in models.values())
    header = ["model", "original"]
    for axis in axes:
        header += [axis, "delta"]
    header += ["total", "delta"] + (["rank"] if ranked else [])
    shown = summary_figures(summary)
    rows = []
    for model, s in models.items():
        row = [model, shown.num(s["original"])]
        for axis in axes:
            pair = s["axes"].get(axis)
            row += [shown.num(pair and pair["score"]), shown.delta(pair)]
        total = s["total"]
        row += [shown.num(total and total["score"]), shown.delta(total)]
        rows.append(row + ([_rank(total)] if ranked else []))
    return header, rows


def report_tables(summary: ReportSummary) -> list[Table]:
    """Every table of the report after the axis table, in order; empty ones left out."""
    tables = [_shared_table(summary)]
    tables += [_transform_table(summary), _sides_table(summary), _faithful_table(summary)]
    tables += [_prompt_table(summary)]
    tables += [_tests_table(summary)]
    tables += [_baseline_table(summary), _mad_table(summary), _kendall_table(summary)]
    tables += [
        _split_half_table(summary, "split_half"),
        _split_half_table(summary, "split_half_delta"),
    ]
    return [t for t in tables if t.rows]


def _shared_table(summary: ReportSummary) -> Table:
    rows = [
        [s["source"], s["revision"] or "-", ", ".join(s["merged"])]
        for s in summary.get("shared_sources", [])
    ]
    return Table(
        "Run folders of one source",
        "Results of the same source (name and revision) count as one dataset in every "
        "figure over datasets (means, tests, Kendall's tau, split-half): their figures are "
        "averaged, as a dataset's subsets are. Each keeps its own section below.",
        ["source", "revision", "results"],
        rows,
        left=3,
    )


def _transform_table(summary: ReportSummary) -> Table:
    shown = summary_figures(summary)
    rows = []
    for m, s in summary["models"].items():
        for t, v in s["transforms"].items():
            er = v.get("evalrank", {})
            sr = v.get("self_retrieval", {})
            rows.append(
                [m, t, v["axis"], shown.num(v.get("score")), shown.delta(v), _num(er.get("mrr")),
                 _num(er.get("delta_mrr"), True), _num(sr.get("mrr")), _num(sr.get("hits_at_1"))]
            )  # fmt: skip
    return Table(
        "Transformations",
        "Mean over seeds, subsets and datasets; delta = variant minus the original on the "
        "same rows, with its 95% paired bootstrap interval. EvalRank (STS sources): MRR "
        "of each gold top-quartile pair's partner against every sentence of the split "
        "(cosine), and its change against the original on the same rows. Self-retrieval: "
        "MRR and Hits@1 of each rewrite's own original among all originals of its split."
        + (f" {HTEB_NOTE}" if shown is HTEB_POINTS else ""),
        ["model", "transform", "axis", "score", "delta [95% CI]", "EvalRank MRR",
         "EvalRank ΔMRR", "self-retrieval MRR", "Hits@1"],
        rows,
        left=3,
    )  # fmt: skip


def _sides_table(summary: ReportSummary) -> Table:
    rows = []
    for v in summary.get("sides", []):
        cells = [_side(v[c]) for c in ("corpus_side", "query_side", "both_sides")]
        rows += [[v["model"], v["transform"], "original", _num(v["original"]), cells[0]]]
        rows += [[v["model"], v["transform"], "rewritten", cells[1], cells[2]]]
    return Table(
        "Query-side and corpus-side shift",
        "Ranking datasets whose corpus was rewritten too (gen --rewrite queries,corpus): "
        "the main score with original or rewritten queries (rows) against the original or "
        "rewritten corpus (columns), all four on the same queries and documents (those "
        "whose rewrites are usable), with each delta against the original of the four. "
        "Mean over seeds, splits and subsets, then over datasets.",
        ["model", "transform", "queries", "corpus original", "corpus rewritten"],
        rows,
        left=3,
    )


def _side(figure: Mapping[str, Any] | None) -> str:
    if not figure:
        return ""
    return f"{figure['score']:.4f} ({figure['delta']:+.4f})"


def _faithful_table(summary: ReportSummary) -> Table:
    rows = [
        [m, t, v["faithful"]["criterion"], _delta(v), str(v["faithful"]["rows"]),
         _num(v["faithful"]["delta"], True) if v["faithful"]["delta"] is not None
         else "too few rows"]
        for m, s in summary["models"].items()
        for t, v in s["transforms"].items()
        if "faithful" in v
    ]  # fmt: skip
    return Table(
        "Faithful rewrites only",
        "Each transformation scored again on the rows whose every rewritten text passes "
        "the criterion (evaluate --faithful), against the original on the same rows, "
        "beside the delta on all usable rows: a drop that shrinks here came from rewrites "
        "that lost the meaning, one that stays is the encoder's. Certified rows are summed "
        "over seeds, subsets and datasets; 'too few rows' when a config behind the figure "
        "had too few to score.",
        ["model", "transform", "criterion", "delta (all rows)", "certified rows",
         "delta (certified)"],
        rows,
        left=3,
    )  # fmt: skip


def _prompt_table(summary: ReportSummary) -> Table:
    rows = [
        [r["model"], r["transform"], r["variant"], str(r["seeds"]), _num(r["delta"], True),
         _num(r["seed_sd"]), f"{r['seed_min']:+.4f} .. {r['seed_max']:+.4f}"]
        for r in summary.get("prompt_sensitivity", [])
    ]  # fmt: skip
    return Table(
        "Prompt sensitivity",
        "Each prompt variant of a transformation as its own row: its delta (mean over "
        "datasets) and its spread over seeds (per seed the mean delta over datasets; SD "
        "and range). Axes and totals use the default prompt only.",
        ["model", "transform", "variant", "seeds", "delta", "SD over seeds", "seed range"],
        rows,
        left=3,
    )


def _tests_table(summary: ReportSummary) -> Table:
    rows = [
        [t["model"], t["transform"], str(t["n"]), *_shift(t), f"{t['ci_level']:.3f}",
         f"{t['wilcoxon_statistic']:g}", f"{t['p']:.4g}", t["p_method"], f"{t['p_holm']:.4g}"]
        for t in summary["tests"]
        if t["n"] >= 2
    ]  # fmt: skip
    return Table(
        "Tests over datasets",
        "One observation per dataset (seeds and subsets averaged; '(all models)': the mean "
        "over models per dataset, as HTEB): Wilcoxon signed-rank test of the deltas (p by: "
        "exact, permutation or normal, as scipy's default chooses), Hodges-Lehmann shift "
        "with its distribution-free interval and the level it reaches, Holm across each "
        "group's transformations.",
        ["model", "transform", "n", "HL shift", "CI", "level", "W", "p", "p by", "p (Holm)"],
        rows,
        left=2,
    )


def _baseline_table(summary: ReportSummary) -> Table:
    rows = [
        [t["transform"], t["way"], t["model"], str(t["n"]), *_shift(t), f"{t['p']:.4g}",
         t["p_method"],
         f"{t['p_holm']:.4g}"]
        for t in summary.get("baseline_tests", [])
    ]  # fmt: skip
    baseline = next((t["baseline"] for t in summary.get("baseline_tests", [])), "")
    return Table(
        f"Models against the baseline {baseline}",
        "PTEB's test: differences baseline minus model of the transformed scores (negative "
        "favours the model). pooled: one per (dataset, seed), HL interval by percentile "
        "bootstrap (1000); run-averaged: one per dataset, distribution-free HL interval. "
        "Wilcoxon signed-rank p (p by: exact, permutation or normal, as scipy's default "
        "chooses), Holm across models.",
        ["transform", "way", "model", "n", "HL shift", "CI", "p", "p by", "p (Holm)"],
        rows,
        left=3,
    )


def _mad_table(summary: ReportSummary) -> Table:
    rows = [
        [r["of"], r["kind"], str(r["n"]), _num(r["median_abs_delta"])]
        for r in summary.get("median_abs_delta", [])
    ]
    return Table(
        "Median absolute difference",
        "HTEB's |Δ̃|: per dataset and transformation the delta averaged over models; the "
        "median of its absolute value over datasets (per axis: over every dataset and "
        "transformation of the axis).",
        ["of", "kind", "n", "median |delta|"],
        rows,
        left=2,
    )


def _kendall_table(summary: ReportSummary) -> Table:
    pooled = {k["of"]: k for k in summary.get("kendall", [])}
    rows = []
    for k in summary.get("kendall_per_dataset", []):
        sd = f" ± {k['sd_tau']:.3f}" if k["sd_tau"] is not None else ""
        mean = f"{k['mean_tau']:+.3f}{sd}" if k["mean_tau"] is not None else ""
        rows.append(
            [k["of"], k["kind"], str(k["datasets"]), mean, str(k["undefined"]),
             f"{pooled[k['of']]['tau']:+.3f}" if k["of"] in pooled else ""]
        )  # fmt: skip
    return Table(
        "Ranking stability (Kendall's tau)",
        "HTEB's: per dataset, tau-b between the models' original and transformed scores; "
        "mean ± sample SD over datasets (undefined: datasets where a side is constant). "
        "pooled: one tau on scores averaged over datasets first.",
        ["of", "kind", "datasets", "mean tau ± SD", "undefined", "pooled tau"],
        rows,
        left=2,
    )


def _split_half_table(summary: ReportSummary, key: str) -> Table:
    half = summary["split_half" if key == "split_half" else "split_half_delta"]
    rows = []
    if half:
        for axis, v in half["axes"].items():
            rows.append(
                [axis, f"{v['median']:+.3f}", f"[{v['low']:+.3f}, {v['high']:+.3f}]",
                 _num(v["spearman_brown"], True), f"{v['draws']}/{half['draws']}"]
            )  # fmt: skip
    what = "axis scores (HTEB's)" if key == "split_half" else "axis deltas"
    return Table(
        f"Split-half reliability, {what}",
        "Per axis: Spearman's rho across models between two task-stratified random halves "
        "of the datasets (each model's mean over a half); median and 95% range over the "
        "seeded splits, and the Spearman-Brown full-length value of the median.",
        ["axis", "median rho", "95% range", "Spearman-Brown", "draws"],
        rows,
    )


def text_report(summary: ReportSummary) -> str:
    """The report for a terminal: the axis table, then every statistics table."""
    axis_table = axis_rows(summary)
    parts = [plain_table(*axis_table)]
    tables = report_tables(summary)
    for table in tables:
        parts += ["", f"{table.title}:", plain_table(table.header, table.rows)]
    if notes := _notes([axis_table[1], *(t.rows for t in tables)]):
        parts += ["", *notes]
    if summary_figures(summary) is HTEB_POINTS:  # the terminal shows no per-table notes
        parts += ["", f"The axis and transformation tables: {HTEB_NOTE[0].lower()}{HTEB_NOTE[1:]}"]
    return "\n".join(parts)


def _notes(tables: list[list[list[str]]]) -> list[str]:
    """The notes the tables' flagged intervals (`... [lo, hi]*`) need."""
    return flagged_notes(cell for rows in tables for row in rows for cell in row)


PLOT_CAPTIONS = {
    "bars.png": "Each axis and the total: the rewritten score beside the original's on the "
    "same rows, and below the paired delta with its 95% interval.",
    "heatmap.png": "The paired delta of each model and transformation, with its 95% interval.",
    "scatter.png": "Per dataset: each transformation's score against the original's on the "
    "same rows, with the delta's 95% interval; on the grey line nothing changed.",
}


Block = tuple[Any, ...]
"""One block of the report, as both report.md and report.html show it: ("h1", text),
("h2", text), ("p", text), ("table", header, rows, left) or ("plot", file name)."""


def report_blocks(
    documents: Sequence[ResultsDocument], summary: ReportSummary, plots: Sequence[str] = ()
) -> list[Block]:
    """The report, block by block: the axis table, the plots drawn (their file names under
    plots/), the statistics, every config's figures. report.md and report.html render
    the same blocks, so they hold the same content."""
    blocks: list[Block] = [("h1", "Robustness report")]
    blocks.append(("p", f"Datasets: {', '.join(summary['datasets'])}."))
    blocks.append(("h2", "Scores by axis"))
    blocks.append(
        (
            "p",
            "Mean over seeds, then over the transformations of an axis (default prompts); "
            "total = unweighted mean of the axes; every figure the mean over datasets"
            + (
                " (each transformation's first, then the axes, as HTEB's release averages)"
                if summary.get("aggregation") == TRANSFORMATIONS_FIRST
                else ""
            )
            + ". delta = variant minus the original on the same rows, with its 95% paired "
            "bootstrap interval; rank: models whose total-delta intervals overlap share ranks."
            + (f" {HTEB_NOTE}" if summary_figures(summary) is HTEB_POINTS else ""),
        )
    )
    header, rows = axis_rows(summary)
    blocks.append(("table", header, rows, 1))
    blocks += [("p", note) for note in _notes([rows])]
    if plots:
        blocks.append(("h2", "Plots"))
        for name in plots:
            blocks.append(("plot", name))
            blocks += [("p", PLOT_CAPTIONS[name])] if name in PLOT_CAPTIONS else []
    for table in report_tables(summary):
        blocks += [("h2", table.title), ("p", table.note)]
        blocks.append(("table", table.header, table.rows, table.left))
        blocks += [("p", note) for note in _notes([table.rows])]
    if not any(t["n"] >= 2 for t in summary["tests"]):
        blocks.append(("p", "The tests need two datasets or more; this report has one."))
    if not summary.get("split_half"):
        blocks.append(("p", "Split-half reliability needs two datasets or more and three models."))
    for doc, label in zip(documents, summary["datasets"], strict=True):
        blocks.append(("h2", f"{label}: {doc['task_type']}, {doc['main_score']}"))
        header = ["model", "config", "split", "rows", "score", "original (same rows)", "delta"]
        shown = figures_for(protocol_name(doc))
        rows = [
            [
                entry["model"]["id"], config_label(r), r["split"], str(r["rows"]),
                shown.num(r["main_score"]), shown.num(r["original_same_rows"]), shown.delta(r),
            ]
            for entry in doc["models"]
            for r in entry["results"]
        ]  # fmt: skip
        blocks.append(("table", header, rows, 3))
        if shown is HTEB_POINTS:
            blocks.append(("p", HTEB_NOTE))
        blocks += [("p", note) for note in _notes([rows])]
    return blocks


def markdown_report(
    documents: Sequence[ResultsDocument], summary: ReportSummary, plots: Sequence[str] = ()
) -> str:
    """The Markdown report (report.md): the report's blocks, the plots linked."""
    return markdown_blocks(report_blocks(documents, summary, plots))


def markdown_blocks(blocks: Sequence[Block]) -> str:
    """The report's blocks as Markdown, each plot linked under plots/."""
    parts: list[str] = []
    for kind, *content in blocks:
        if kind == "h1":
            parts.append(f"# {content[0]}")
        elif kind == "h2":
            parts.append(f"## {content[0]}")
        elif kind == "table":
            header, rows, left = content
            parts.append(markdown_table(header, rows, left=left))
        elif kind == "plot":
            name = content[0]
            parts.append(f"![{name.removesuffix('.png')}](plots/{name})")
        else:
            parts.append(content[0])
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"
