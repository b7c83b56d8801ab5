"""The report's figures as PNG files (matplotlib, drawn off-screen). Each pairs as the
tables do: a variant's score beside the original's on the same rows (the variant's usable
rows), never beside the original's score on all rows.

- bars.png: per model, each axis and the total (each transformation where none has an
  axis): above, the original (same rows) beside the rewritten score; below, the paired
  change with its 95% interval;
- heatmap.png: model x transformation, the paired change;
- scatter.png: per dataset, each (model, transformation)'s score against the original's
  on the same rows, with the change's 95% interval and the line of no change.

A thin or zero-width interval (core/evidence.py) is marked `*`, as in the tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shiftbench.core.evidence import MARK
from shiftbench.core.records import ReportSummary, present
from shiftbench.core.report_rows import FigureRecord, ModelFigures
from shiftbench.evaluate.report.tables import summary_figures
from shiftbench.evaluate.report.units import AXES, TOTAL

COLOURS = {"original": "#4d4d4d", "Lexical/Stylistic": "#1b9e77", "Length": "#d95f02",
           "Language": "#7570b3", TOTAL: "#e7298a"}  # fmt: skip
OTHER = "#66a61e"  # a transformation of no known axis
MARKERS = {"Lexical/Stylistic": "o", "Length": "s", "Language": "^"}
PAIRED = "original (same rows)"
THIN_LEGEND = f"{MARK} thin or zero-width interval: see the report's note"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    # Fixed metadata keeps equal figures byte-identical from run to run.
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})


def _short(model: str) -> str:
    return model.rstrip("/").split("/")[-1]


def _same_rows(figure: Mapping[str, Any]) -> float:
    """The original's score on the rows a variant figure was scored on."""
    return float(figure["score"] - figure["delta"])


def _weak(summary: ReportSummary, figure: Mapping[str, Any]) -> bool:
    """Whether the tables mark this figure's interval (thin, or no width as printed)."""
    return summary_figures(summary).interval(figure).endswith(MARK)


def _bar_slots(models: dict[str, ModelFigures]) -> list[tuple[str, str, FigureRecord]]:
    """(model, label, figure) of each bar: every axis and the total (the axis table's), or
    where no variant belongs to an axis, every transformation (the transformation table's)."""
    groups = [a for a in AXES if any(a in s["axes"] for s in models.values())]
    if not groups:
        return [(m, t, f) for m, s in models.items() for t, f in s["transforms"].items()
                if f.get("delta") is not None]  # fmt: skip
    return [
        (model, group, figure)
        for model, s in models.items()
        for group in [*groups, TOTAL]
        if (figure := s["total"] if group == TOTAL else s["axes"].get(group))
        and figure.get("delta") is not None
    ]


def bars(summary: ReportSummary, path: Path, main_score: str) -> None:
    """Per model, each axis and the total (the axis table's figures; without any axis,
    each transformation): above, the original on the same rows beside the rewritten
    score; below, the paired change with its 95% interval as error bars."""
    plt = _pyplot()
    models = summary["models"]
    slots = _bar_slots(models)
    xs = list(range(len(slots)))
    colours = [COLOURS.get(str(f.get("axis", group)), OTHER) for _, group, f in slots]
    fig, (top, bottom) = plt.subplots(
        2, 1, sharex=True, figsize=(max(4.0, 1.1 * len(slots) + 2.0), 5.6),
        gridspec_kw={"height_ratios": [3, 2]},
    )  # fmt: skip
    width = 0.38
    top.bar([x - width / 2 for x in xs], [_same_rows(f) for _, _, f in slots], width,
            label=PAIRED, color=COLOURS["original"])  # fmt: skip
    top.bar([x + width / 2 for x in xs], [f["score"] for _, _, f in slots], width,
            label="rewritten", color=colours)  # fmt: skip
    top.set_ylabel(main_score)
    top.set_title("Rewritten against the original on the same rows")
    from matplotlib.patches import Patch

    shown = dict.fromkeys(zip((g for _, g, _ in slots), colours, strict=True))
    keys = [Patch(color=COLOURS["original"], label=PAIRED)]
    keys += [Patch(color=c, label=f"rewritten, {g}") for g, c in shown]
    top.legend(handles=keys, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    deltas = [f["delta"] for _, _, f in slots]
    bottom.bar(xs, deltas, 0.6, label="change", color=colours)
    ranged = [(x, f) for x, (_, _, f) in zip(xs, slots, strict=True) if f.get("ci95")]
    if ranged:  # drawn from its ends: a delta may lie outside its percentile interval
        lows, highs = ([present(f["ci95"], "ci95")[k] for _, f in ranged] for k in (0, 1))
        where = [x for x, _ in ranged]
        bottom.vlines(where, lows, highs, colors="black", lw=1, label="95% interval")
        bottom.scatter(where * 2, lows + highs, marker="_", color="black", s=30)
    weak = [(x, f) for x, f in ranged if _weak(summary, f)]
    for x, f in weak:
        bottom.annotate(MARK, (x, max(present(f["ci95"], "ci95")[1], f["delta"])), ha="center",
                        xytext=(6, 0), textcoords="offset points")  # fmt: skip
    bottom.axhline(0.0, color="#999999", lw=0.8)
    bottom.set_ylabel("change (same rows)")
    if ranged:
        interval = plt.Line2D([], [], color="black", lw=1, label="95% interval")
        bottom.legend(handles=[interval], fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    several = len(models) > 1
    bottom.set_xticks(xs, [f"{_short(m)}\n{g}" if several else g for m, g, _ in slots], fontsize=8)
    if weak:
        bottom.set_xlabel(THIN_LEGEND, fontsize=7)
    _save(fig, path)
    plt.close(fig)


def heatmap(summary: ReportSummary, path: Path) -> None:
    """Model x transformation: the paired change (the transformation table's delta) and
    its 95% interval."""
    plt = _pyplot()
    models = list(summary["models"])
    transforms = list(dict.fromkeys(t for s in summary["models"].values() for t in s["transforms"]))
    # None only where the grid holds NaN, a cell never drawn
    figures: list[list[Any]] = [
        [summary["models"][m]["transforms"].get(t) for t in transforms] for m in models
    ]
    grid = [[f["delta"] if f else float("nan") for f in row] for row in figures]
    shown = summary_figures(summary)
    finite = [abs(v) for row in grid for v in row if v == v]
    bound = max(finite, default=0.01) or 0.01
    fig, ax = plt.subplots(
        figsize=(max(4.0, 1.3 * len(transforms) + 2), max(2.0, 0.6 * len(models) + 1.4))
    )
    image = ax.imshow(grid, cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    ax.set_xticks(range(len(transforms)), transforms, rotation=30, ha="right")
    ax.set_yticks(range(len(models)), [_short(m) for m in models])
    weak = False
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if value == value:
                ink = "white" if abs(value) > 0.6 * bound else "black"
                figure = figures[i][j]
                weak = weak or _weak(summary, figure)
                # as the tables print it: decimals to the interval's width, `*` when weak
                interval = shown.interval(figure)
                text = shown.change(figure) + (f"\n{interval}" if interval else "")
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=ink)
    fig.colorbar(image, ax=ax, label="delta (variant - original, same rows)")
    ax.set_title("Paired delta [95% interval]")
    if weak:
        ax.set_xlabel(THIN_LEGEND, fontsize=7)
    _save(fig, path)
    plt.close(fig)


def scatter(summary: ReportSummary, path: Path, main_score: str) -> None:
    """Per dataset: each (model, subset, transformation)'s score against the original's
    on the same rows, its change's 95% interval as a vertical bar."""
    plt = _pyplot()
    datasets = summary["datasets"]
    models = list(summary["models"])
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 4.0), squeeze=False)
    palette = plt.get_cmap("tab10")
    for ax, dataset in zip(axes[0], datasets, strict=True):
        points = [u for u in summary["units"] if u["dataset"] == dataset]
        low, high = 1.0, 0.0
        for m, model in enumerate(models):
            for u in (u for u in points if u["model"] == model):
                for name, t in u["transforms"].items():
                    original = _same_rows(t)
                    ends = [original + e for e in t.get("ci95") or []]
                    low = min(low, original, t["score"], *ends)
                    high = max(high, original, t["score"], *ends)
                    if ends:
                        ax.plot([original, original], ends, color=palette(m % 10), lw=0.8,
                                alpha=0.6)  # fmt: skip
                    ax.scatter(original, t["score"], color=palette(m % 10),
                               marker=MARKERS.get(t["axis"], "o"), s=28)  # fmt: skip
                    mark = MARK if t.get("ci95") and _weak(summary, t) else ""
                    ax.annotate(name + mark, (original, t["score"]), fontsize=6,
                                xytext=(3, 2), textcoords="offset points")  # fmt: skip
        pad = max(0.01, (high - low) * 0.1)
        ax.plot([low - pad, high + pad], [low - pad, high + pad], color="#999999", lw=0.8)
        ax.set_xlabel(f"{PAIRED}, {main_score}")
        ax.set_ylabel(f"transformed, {main_score}")
        ax.set_title(dataset, fontsize=9)
    handles = [
        plt.Line2D([], [], color=palette(m % 10), marker="o", ls="", label=_short(model))
        for m, model in enumerate(models)
    ] + [
        plt.Line2D([], [], color="#555555", marker=mk, ls="", label=axis)
        for axis, mk in MARKERS.items()
    ]
    if any(MARK in t.get_text() for ax in axes[0] for t in ax.texts):
        handles.append(plt.Line2D([], [], ls="", label=THIN_LEGEND))
    axes[0][-1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, path)
    plt.close(fig)


def write_plots(summary: ReportSummary, folder: Path, main_score: str) -> list[Path]:
    """The three figures into `folder`; none when there is no variant to show."""
    if not any(s["transforms"] for s in summary["models"].values()):
        return []
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / "bars.png", folder / "heatmap.png", folder / "scatter.png"]
    bars(summary, paths[0], main_score)
    heatmap(summary, paths[1])
    scatter(summary, paths[2], main_score)
    return paths
