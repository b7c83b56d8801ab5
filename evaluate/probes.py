"""Task-free alignment probes (after ALIGN-SIM): does an encoder move when meaning changes
and stay put when it does not?

Every probe starts from an anchor: the first text field of an original row that has a
paraphrase (a gold pair of the dataset, or an LLM paraphrase config of the run folder).
Each anchor gets one random partner, drawn with the seed from the texts of the same
dataset and split. With sim one of two similarities (cosine, and one minus ALIGN-SIM's
normalised Euclidean distance), the probes are:

- distinction: sim(anchor, paraphrase) - sim(anchor, random), and the share above each ε;
- synonym robustness: mean sim(anchor, synonym-swap-n) times (1 - the mean random-pair
  similarity), so an encoder that rates every pair as similar gains nothing;
- sensitivity, for each control that changes meaning (antonym-swap, word-jumble-n,
  negation): sim(anchor, paraphrase) - sim(anchor, control), and the share above each ε.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shiftbench import __version__
from shiftbench.errors import InputError
from shiftbench.evaluate.encoders import Encoder
from shiftbench.evaluate.run import Collection, ConfigView, write_json
from shiftbench.gen.transforms import CHANGED, CONTROLS, PRESERVED
from shiftbench.runfolder import IDENTITY_KEPT, usable

MEASURES = {"cosine": "cosine similarity", "ned": "1 - normalised Euclidean distance"}
GOLD = "gold"
STS_TOP_SHARE = 0.8  # STS pairs scored in the top fifth of the scale count as paraphrases


@dataclass
class Anchor:
    """One original text with its paraphrase, random partner and controls."""

    subset: str
    split: str
    row_id: Any
    text: str
    paraphrase: str
    random: str
    controls: dict[str, list[str]] = field(default_factory=dict)  # control -> one per seed


@dataclass(frozen=True)
class ProbeSettings:
    epsilons: tuple[float, ...]
    seed: int
    paraphrases: str  # "gold" or a config name
    min_score: float | None  # STS gold pairs: the lowest score that counts as a paraphrase


def parse_epsilons(text: str) -> tuple[float, ...]:
    """'0,0.05,0.1' as sorted unique floats."""
    try:
        values = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise InputError(f"--epsilon takes numbers separated by commas, not {text!r}") from None
    if not values or any(not -2.0 <= v <= 2.0 for v in values):
        raise InputError(f"--epsilon takes numbers from -2 to 2, not {text!r}")
    return tuple(values)


def control_configs(collection: Collection) -> list[ConfigView]:
    return [c for c in collection.configs if c.meta.get("kind") == "control"]


def gather(collection: Collection, settings: ProbeSettings) -> list[Anchor]:
    """The anchors of every subset and split, with their partners and controls."""
    source = collection.source
    controls = control_configs(collection)
    if not controls:
        raise InputError(
            f"{collection.label} holds no control configs; make them with "
            "'shiftbench gen SOURCE -t controls'"
        )
    originals = {c.meta["subset"]: c for c in collection.configs if c.meta["kind"] == "original"}
    field_name = source["text_fields"][0]
    rng = np.random.default_rng(settings.seed)
    anchors: list[Anchor] = []
    for subset, original in originals.items():
        for split in source.get("splits") or list(original.splits):
            rows = original.splits.get(split, [])
            pairs = _paraphrase_pairs(collection, subset, split, rows, settings)
            pool = list(dict.fromkeys(r[f] for r in rows for f in source["text_fields"]))
            for row_id, text, paraphrase in pairs:
                partner = _draw_partner(pool, {text, paraphrase}, rng)
                anchors.append(Anchor(subset, split, row_id, text, paraphrase, partner))
            by_id = {a.row_id: a for a in anchors if (a.subset, a.split) == (subset, split)}
            for config in (c for c in controls if c.meta["subset"] == subset):
                for row in config.splits.get(split, []):
                    anchor = by_id.get(row["row_id"])
                    status = row.get(f"status_{field_name}", row.get("status"))
                    if anchor is not None and usable(status, config.meta["transform"]):
                        name = config.meta["transform"]
                        anchor.controls.setdefault(name, []).append(row[field_name])
    if not anchors:
        raise InputError(f"{collection.label} has no paraphrase pairs to anchor the probes")
    return anchors


def _paraphrase_pairs(
    collection: Collection,
    subset: str,
    split: str,
    rows: list[dict[str, Any]],
    settings: ProbeSettings,
) -> list[tuple[Any, str, str]]:
    """(row_id, anchor, paraphrase) for the rows that have a paraphrase."""
    source = collection.source
    fields = source["text_fields"]
    if settings.paraphrases != GOLD:
        config = next(
            (c for c in collection.configs
             if c.meta["subset"] == subset and _base(c) == settings.paraphrases),
            None,
        )  # fmt: skip
        if config is None:
            raise InputError(_no_config(collection, settings.paraphrases))
        return [
            (r["row_id"], r[f"original_{fields[0]}"], r[fields[0]])
            for r in config.splits.get(split, [])
            if usable(r.get("status"), config.meta.get("transform")) and r[fields[0]].strip()
        ]
    task_type = source["task_type"]
    if task_type == "PairClassification":
        return [(r["row_id"], r[fields[0]], r[fields[1]]) for r in rows if r["labels"] == 1]
    if task_type in ("STS", "STR"):
        threshold = gold_threshold(source, settings.min_score)
        return [(r["row_id"], r[fields[0]], r[fields[1]]) for r in rows if r["score"] >= threshold]
    raise InputError(
        f"gold paraphrase pairs come from STS or PairClassification data; {collection.label} "
        f"is a {task_type} run: name an LLM paraphrase config with --paraphrases"
    )


def gold_threshold(source: dict[str, Any], min_score: float | None) -> float:
    if min_score is not None:
        return min_score
    low, high = source.get("score_range") or (0.0, 5.0)
    return float(low + STS_TOP_SHARE * (high - low))


def _base(config: ConfigView) -> str:
    """A config's name without its subset suffix."""
    subset = config.meta["subset"]
    return config.name[: -len(subset) - 1] if config.name.endswith(f".{subset}") else config.name


def _no_config(collection: Collection, name: str) -> str:
    have = [_base(c) for c in collection.configs if c.meta["kind"] == "transform"]
    listed = ", ".join(dict.fromkeys(have)) or "none"
    return (
        f"--paraphrases {name}: no such transform config in {collection.label} (it has: {listed})"
    )


def _draw_partner(pool: list[str], avoid: set[str], rng: np.random.Generator) -> str:
    """A text of the pool other than the anchor and its paraphrase."""
    if len(set(pool) - avoid) == 0:
        raise InputError("the dataset has too few texts to draw random pairs from")
    while True:
        candidate = pool[int(rng.integers(len(pool)))]
        if candidate not in avoid:
            return candidate


def similarity(measure: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise similarity of two stacks of embeddings.

    cosine: the cosine of the angle. ned: 1 - NED, with ALIGN-SIM's normalised Euclidean
    distance NED = 0.5 |a' - b'|^2 / (|a'|^2 + |b'|^2), where a' and b' are the vectors
    minus their own mean component (0 for equal vectors, 0.5 for uncorrelated ones).
    """
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    if measure == "cosine":
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        return np.asarray(np.sum(a * b, axis=1) / np.maximum(norms, 1e-12))
    ca = a - a.mean(axis=1, keepdims=True)
    cb = b - b.mean(axis=1, keepdims=True)
    spread = np.sum(ca * ca, axis=1) + np.sum(cb * cb, axis=1)
    ned = 0.5 * np.sum((ca - cb) ** 2, axis=1) / np.maximum(spread, 1e-12)
    return np.asarray(1.0 - ned)


@dataclass
class Values:
    """Per-anchor similarities of one encoder under one measure."""

    paraphrase: np.ndarray
    random: np.ndarray
    controls: dict[str, tuple[np.ndarray, np.ndarray]]  # name -> (anchor index, similarity)


def score(encoder: Encoder, anchors: list[Anchor], measure: str) -> Values:
    texts = [a.text for a in anchors]
    base = encoder.embed(texts)
    paraphrase = similarity(measure, base, encoder.embed([a.paraphrase for a in anchors]))
    random = similarity(measure, base, encoder.embed([a.random for a in anchors]))
    controls = {}
    for name in _control_names(anchors):
        index = [i for i, a in enumerate(anchors) for _ in a.controls.get(name, [])]
        made = [t for a in anchors for t in a.controls.get(name, [])]
        sims = similarity(measure, base[index], encoder.embed(made))
        controls[name] = (np.asarray(index, dtype=np.int64), sims)
    return Values(paraphrase, random, controls)


def _control_names(anchors: list[Anchor]) -> list[str]:
    present = {name for a in anchors for name in a.controls}
    return [name for name in CONTROLS if name in present]


def summarise(values: Values, epsilons: tuple[float, ...]) -> dict[str, Any]:
    """The probe figures of one encoder under one measure."""
    baseline = float(np.mean(values.random))
    alpha = 1.0 - baseline
    gap = values.paraphrase - values.random
    out: dict[str, Any] = {
        "paraphrase_mean": float(np.mean(values.paraphrase)),
        "random_pair_mean": baseline,
        "alpha": alpha,
        "distinction": _shares(gap, epsilons),
        "synonym": {},
        "sensitivity": {},
    }
    for name, (index, sims) in values.controls.items():
        if CONTROLS[name].meaning == PRESERVED:
            raw = float(np.mean(sims))
            out["synonym"][name] = {"n": len(sims), "mean": raw, "adjusted": raw * alpha}
        else:
            out["sensitivity"][name] = _shares(values.paraphrase[index] - sims, epsilons)
    return out


def _shares(diffs: np.ndarray, epsilons: tuple[float, ...]) -> dict[str, Any]:
    return {
        "n": len(diffs),
        "mean": float(np.mean(diffs)) if len(diffs) else None,
        "median": float(np.median(diffs)) if len(diffs) else None,
        "share_above": {
            eps_key(e): float(np.mean(diffs > e)) if len(diffs) else None for e in epsilons
        },
    }


def eps_key(epsilon: float) -> str:
    return f"{epsilon:g}"


def probe_document(
    collection: Collection,
    settings: ProbeSettings,
    anchors: list[Anchor],
    per_model: list[tuple[Encoder, dict[str, dict[str, Any]]]],
) -> dict[str, Any]:
    controls = control_configs(collection)
    source = collection.source
    return {
        "shiftbench_version": __version__,
        "target": collection.label,
        "source": source,
        "paraphrases": _paraphrase_rule(source, settings),
        "seed": settings.seed,
        "epsilons": list(settings.epsilons),
        "anchor_field": source["text_fields"][0],
        "anchors": len(anchors),
        "controls": {
            name: {
                "meaning": CONTROLS[name].meaning,
                "configs": [c.name for c in controls if c.meta["transform"] == name],
                "pairs": sum(len(a.controls.get(name, [])) for a in anchors),
            }
            for name in _control_names(anchors)
        },
        "measures": MEASURES,
        "models": [{"model": enc.describe(), "measures": m} for enc, m in per_model],
    }


def _paraphrase_rule(source: dict[str, Any], settings: ProbeSettings) -> str:
    if settings.paraphrases != GOLD:
        kept = "ok or identical" if settings.paraphrases.startswith(IDENTITY_KEPT) else "ok"
        return f"config {settings.paraphrases} (rows with status {kept})"
    if source["task_type"] == "PairClassification":
        return "gold pairs with label 1"
    return f"gold pairs scored {gold_threshold(source, settings.min_score):g} or more"


def tables(document: dict[str, Any]) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Per measure, one table across encoders: a row per (model, ε) with the shares above
    ε, then the ε-free figures (adjusted synonym similarity, random-pair mean)."""
    names = list(document["controls"])
    changed = [n for n in names if document["controls"][n]["meaning"] == CHANGED]
    kept = [n for n in names if document["controls"][n]["meaning"] == PRESERVED]
    out = {}
    for measure in document["measures"]:
        header = ["model", "ε", "distinction", *changed, *kept, "random mean"]
        rows = []
        for entry in document["models"]:
            figures = entry["measures"][measure]
            for eps in document["epsilons"]:
                key = eps_key(eps)
                shares = [figures["distinction"]["share_above"][key]] + [
                    figures["sensitivity"][n]["share_above"][key] for n in changed
                ]
                rows.append(
                    [entry["model"]["id"], key, *(_num(v) for v in shares),
                     *(_num(figures["synonym"][n]["adjusted"]) for n in kept),
                     _num(figures["random_pair_mean"])]
                )  # fmt: skip
        out[measure] = (header, rows)
    return out


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def coverage_lines(document: dict[str, Any]) -> list[str]:
    lines = [
        f"anchors: {document['anchors']} ({document['paraphrases']}; field "
        f"{document['anchor_field']}); random partners drawn with seed {document['seed']}"
    ]
    for name, info in document["controls"].items():
        lines.append(
            f"  {name} ({info['meaning']}): {info['pairs']} pairs from {', '.join(info['configs'])}"
        )
    return lines


def markdown(document: dict[str, Any]) -> str:
    from shiftbench.evaluate.report import markdown_table

    parts = [f"# Alignment probes: {document['target']}", "", *coverage_lines(document), ""]
    parts += [
        "Shares: the share of anchors for which sim(anchor, paraphrase) exceeds sim(anchor, "
        "random partner) (distinction) or sim(anchor, control) (the controls that change "
        "meaning) by more than ε. Synonym columns: mean sim(anchor, synonym-swap-n) times "
        "(1 - random mean). Higher is better everywhere.",
        "",
    ]
    for measure, (header, rows) in tables(document).items():
        parts += [f"## {document['measures'][measure]}", "", markdown_table(header, rows), ""]
    return "\n".join(parts)


def plain(document: dict[str, Any]) -> str:
    from shiftbench.evaluate.report import plain_table

    parts = coverage_lines(document)
    for measure, (header, rows) in tables(document).items():
        parts += ["", f"{document['measures'][measure]}:", plain_table(header, rows)]
    return "\n".join(parts)


def row_records(
    anchors: list[Anchor], per_model: list[tuple[Encoder, dict[str, Values]]]
) -> list[dict[str, Any]]:
    """Every similarity behind the figures, one record per (model, anchor)."""
    records = []
    for encoder, by_measure in per_model:
        per_anchor: dict[int, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
        for measure, values in by_measure.items():
            for i in range(len(anchors)):
                per_anchor[i][measure]["paraphrase"] = round(float(values.paraphrase[i]), 6)
                per_anchor[i][measure]["random"] = round(float(values.random[i]), 6)
            for name, (index, sims) in values.controls.items():
                for i, value in zip(index.tolist(), sims.tolist(), strict=True):
                    per_anchor[i][measure].setdefault(name, []).append(round(value, 6))
        for i, anchor in enumerate(anchors):
            records.append(
                {"model": encoder.spec, "subset": anchor.subset, "split": anchor.split,
                 "row_id": anchor.row_id, **per_anchor[i]}
            )  # fmt: skip
    return records


def histogram(
    document: dict[str, Any],
    per_model: list[tuple[Encoder, dict[str, Values]]],
    measure: str,
    path: Path,
) -> None:
    """One panel per probe (distinction and each meaning-changing control): every encoder's
    distribution of sim(anchor, paraphrase) - sim(anchor, other), with the ε grid."""
    from shiftbench.evaluate.plots import _pyplot, _save, _short

    plt = _pyplot()
    names = [n for n, i in document["controls"].items() if i["meaning"] == CHANGED]
    panels = ["random partner", *names]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.2), squeeze=False)
    palette = plt.get_cmap("tab10")
    for ax, panel in zip(axes[0], panels, strict=True):
        series = []
        for _, by_measure in per_model:
            v = by_measure[measure]
            if panel == "random partner":
                series.append(v.paraphrase - v.random)
            else:
                index, sims = v.controls[panel]
                series.append(v.paraphrase[index] - sims)
        values = np.concatenate(series) if series else np.zeros(0)
        low, high = (float(values.min()), float(values.max())) if len(values) else (-1.0, 1.0)
        bins = np.linspace(min(low, 0.0), max(high, 0.0) + 1e-9, 31)
        for m, ((encoder, _), diffs) in enumerate(zip(per_model, series, strict=True)):
            ax.hist(diffs, bins=bins, histtype="step", lw=1.4, color=palette(m % 10),
                    label=_short(encoder.spec))  # fmt: skip
        for eps in document["epsilons"]:
            ax.axvline(eps, color="#888888", lw=0.7, ls="--")
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("sim(a, paraphrase) - sim(a, this)", fontsize=8)
    axes[0][0].set_ylabel("anchors")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(f"Alignment probes, {MEASURES[measure]} (dashed: ε grid)", fontsize=10, y=1.04)
    _save(fig, path)
    plt.close(fig)


def write_probe_outputs(
    folder: Path,
    document: dict[str, Any],
    anchors: list[Anchor],
    per_model: list[tuple[Encoder, dict[str, Values]]],
    plots: bool,
) -> None:
    """probes.json, probes.md, probe-rows.jsonl and (with `plots`) one histogram per
    measure in plots/."""
    write_json(folder / "probes.json", document)
    (folder / "probes.md").write_text(markdown(document), encoding="utf-8")
    lines = "".join(
        json.dumps(r, ensure_ascii=False) + "\n" for r in row_records(anchors, per_model)
    )
    (folder / "probe-rows.jsonl").write_text(lines, encoding="utf-8")
    if plots:
        (folder / "plots").mkdir(parents=True, exist_ok=True)
        for measure in MEASURES:
            histogram(document, per_model, measure, folder / "plots" / f"probes-{measure}.png")
