"""What a probe run writes beside probes.json: the per-row records and the histograms."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from shiftbench.core.models.encoders import Encoder
from shiftbench.core.records import ProbeDocument
from shiftbench.core.text.transforms import CHANGED
from shiftbench.evaluate.plots import _pyplot, _save, _short
from shiftbench.evaluate.probes.anchors import MEASURES, Dataset
from shiftbench.evaluate.probes.figures import Values, closer_by
from shiftbench.evaluate.probes.tables import _names, markdown
from shiftbench.evaluate.results import write_json


def row_records(
    datasets: list[Dataset], per_model: list[tuple[Encoder, dict[str, dict[str, Values]]]]
) -> list[dict[str, object]]:
    """Every figure behind the tables, one record per (model, dataset, anchor)."""
    records: list[dict[str, object]] = []
    for encoder, by_measure in per_model:
        for dataset in datasets:
            per_anchor: dict[int, dict[str, dict[str, Any]]] = defaultdict(
                lambda: defaultdict(dict)
            )
            for measure, by_dataset in by_measure.items():
                values = by_dataset[dataset.label]
                for i in range(len(dataset.anchors)):
                    per_anchor[i][measure]["paraphrase"] = round(float(values.paraphrase[i]), 6)
                    per_anchor[i][measure]["random"] = round(float(values.random[i]), 6)
                for name, (index, made) in values.controls.items():
                    for i, value in zip(index.tolist(), made.tolist(), strict=True):
                        per_anchor[i][measure].setdefault(name, []).append(round(value, 6))
            for i, anchor in enumerate(dataset.anchors):
                records.append(
                    {"model": encoder.name, "dataset": dataset.label, "subset": anchor.subset,
                     "split": anchor.split, "row_id": anchor.row_id, **per_anchor[i]}
                )  # fmt: skip
    return records


def histogram(
    document: ProbeDocument,
    per_model: list[tuple[Encoder, dict[str, dict[str, Values]]]],
    measure: str,
    path: Path,
) -> None:
    """One panel per probe (distinction and each meaning-changing control): every encoder's
    distribution, over all datasets, of how much closer the paraphrase is than the other
    text, with the ε grid."""

    plt = _pyplot()
    panels = ["random partner", *_names(document, CHANGED)]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.2), squeeze=False)
    palette = plt.get_cmap("tab10")
    for ax, panel in zip(axes[0], panels, strict=True):
        series = [_gaps(by_measure[measure], measure, panel) for _, by_measure in per_model]
        values = np.concatenate(series) if series else np.zeros(0)
        low, high = (float(values.min()), float(values.max())) if len(values) else (-1.0, 1.0)
        bins = np.linspace(min(low, 0.0), max(high, 0.0) + 1e-9, 31)
        for m, ((encoder, _), diffs) in enumerate(zip(per_model, series, strict=True)):
            ax.hist(diffs, bins=bins, histtype="step", lw=1.4, color=palette(m % 10),
                    label=_short(encoder.name))  # fmt: skip
        for eps in document["epsilons"]:
            ax.axvline(eps, color="#888888", lw=0.7, ls="--")
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("paraphrase closer than this by", fontsize=8)
    axes[0][0].set_ylabel("anchors")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(f"Alignment probes, {MEASURES[measure]} (dashed: ε grid)", fontsize=10, y=1.04)
    _save(fig, path)
    plt.close(fig)


def _gaps(by_dataset: dict[str, Values], measure: str, panel: str) -> np.ndarray:
    parts = []
    for v in by_dataset.values():
        if panel == "random partner":
            parts.append(closer_by(measure, v.paraphrase, v.random))
        elif panel in v.controls:
            index, made = v.controls[panel]
            parts.append(closer_by(measure, v.paraphrase[index], made))
    return np.concatenate(parts) if parts else np.zeros(0)


def write_probe_outputs(
    folder: Path,
    document: ProbeDocument,
    datasets: list[Dataset],
    per_model: list[tuple[Encoder, dict[str, dict[str, Values]]]],
    plots: bool,
) -> None:
    """probes.json, probes.md, probe-rows.jsonl and (with `plots`) one histogram per
    measure in plots/."""
    write_json(folder / "probes.json", document)
    (folder / "probes.md").write_text(markdown(document), encoding="utf-8")
    lines = "".join(
        json.dumps(r, ensure_ascii=False) + "\n" for r in row_records(datasets, per_model)
    )
    (folder / "probe-rows.jsonl").write_text(lines, encoding="utf-8")
    if plots:
        (folder / "plots").mkdir(parents=True, exist_ok=True)
        for measure in MEASURES:
            histogram(document, per_model, measure, folder / "plots" / f"probes-{measure}.png")
