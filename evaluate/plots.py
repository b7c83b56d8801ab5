"""The report's figures as PNG files (matplotlib, drawn off-screen).

- bars.png: per model, the original's score beside each axis's score;
- heatmap.png: model x transformation, the mean paired delta;
- scatter.png: per dataset, each (model, transformation)'s score against the original's
  on the same rows, with the line of no change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiftbench.core.records import ReportSummary
from shiftbench.evaluate.report import AXES

COLOURS = {"original": "#4d4d4d", "Lexical/Stylistic": "#1b9e77", "Length": "#d95f02",
           "Language": "#7570b3"}  # fmt: skip
MARKERS = {"Lexical/Stylistic": "o", "Length": "s", "Language": "^"}


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


def bars(summary: ReportSummary, path: Path, main_score: str) -> None:
    plt = _pyplot()
    models = summary["models"]
    groups = ["original", *(a for a in AXES if any(a in s["axes"] for s in models.values()))]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(models) * len(groups) / 2), 3.6))
    width = 0.8 / len(groups)
    for g, group in enumerate(groups):
        values = [
            s["original"] if group == "original" else s["axes"].get(group, {}).get("score")
            for s in models.values()
        ]
        xs = [m + (g - (len(groups) - 1) / 2) * width for m in range(len(models))]
        ax.bar(xs, [v if v is not None else 0.0 for v in values], width, label=group,
               color=COLOURS[group])  # fmt: skip
    ax.set_xticks(range(len(models)), [_short(m) for m in models])
    ax.set_ylabel(main_score)
    ax.set_title("Original and per-axis scores")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, path)
    plt.close(fig)


def heatmap(summary: ReportSummary, path: Path) -> None:
    plt = _pyplot()
    models = list(summary["models"])
    transforms = list(dict.fromkeys(t for s in summary["models"].values() for t in s["transforms"]))
    grid = [
        [summary["models"][m]["transforms"].get(t, {}).get("delta", float("nan"))
         for t in transforms]
        for m in models
    ]  # fmt: skip
    finite = [abs(v) for row in grid for v in row if v == v]
    bound = max(finite, default=0.01) or 0.01
    fig, ax = plt.subplots(
        figsize=(max(4.0, 1.3 * len(transforms) + 2), max(2.0, 0.6 * len(models) + 1.4))
    )
    image = ax.imshow(grid, cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    ax.set_xticks(range(len(transforms)), transforms, rotation=30, ha="right")
    ax.set_yticks(range(len(models)), [_short(m) for m in models])
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if value == value:
                ink = "white" if abs(value) > 0.6 * bound else "black"
                ax.text(j, i, f"{value:+.3f}", ha="center", va="center", fontsize=8, color=ink)
    fig.colorbar(image, ax=ax, label="delta (variant - original, same rows)")
    ax.set_title("Paired delta by model and transformation")
    _save(fig, path)
    plt.close(fig)


def scatter(summary: ReportSummary, path: Path, main_score: str) -> None:
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
                    original = t["score"] - t["delta"]
                    low, high = min(low, original, t["score"]), max(high, original, t["score"])
                    ax.scatter(original, t["score"], color=palette(m % 10),
                               marker=MARKERS.get(t["axis"], "o"), s=28)  # fmt: skip
                    ax.annotate(name, (original, t["score"]), fontsize=6,
                                xytext=(3, 2), textcoords="offset points")  # fmt: skip
        pad = max(0.01, (high - low) * 0.1)
        ax.plot([low - pad, high + pad], [low - pad, high + pad], color="#999999", lw=0.8)
        ax.set_xlabel(f"original (same rows), {main_score}")
        ax.set_ylabel(f"transformed, {main_score}")
        ax.set_title(dataset, fontsize=9)
    handles = [
        plt.Line2D([], [], color=palette(m % 10), marker="o", ls="", label=_short(model))
        for m, model in enumerate(models)
    ] + [
        plt.Line2D([], [], color="#555555", marker=mk, ls="", label=axis)
        for axis, mk in MARKERS.items()
    ]
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
