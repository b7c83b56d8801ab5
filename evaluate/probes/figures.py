"""The probes' figures: each pair scored (cosine similarity, NED), criterion 1's
distinction shares over the ε grid, the adjusted means of the controls that keep the
meaning, the gaps of those that change it, human-written negation pairs, and the probe
document (probes.json)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Required, TypedDict, cast

import numpy as np

from shiftbench import __version__
from shiftbench.core.data.runfolder import IDENTITY_KEPT
from shiftbench.core.models.encoders import Encoder
from shiftbench.core.records import ProbeDocument, SourceRecord
from shiftbench.core.text.transforms import CONTROLS, PRESERVED
from shiftbench.evaluate.probes.anchors import (
    ADJUSTMENTS,
    DISTANCES,
    DISTINCTION_GRIDS,
    GOLD,
    MEASURES,
    RANDOM_PAIRS,
    Anchor,
    Dataset,
    NegationPairs,
    ProbeSettings,
    control_configs,
    gold_threshold,
)


def measured_pairs(measure: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity, or NED, of two stacks of embeddings.

    NED is ALIGN-SIM's normalised Euclidean distance, 0.5 |a' - b'|^2 / (|a'|^2 + |b'|^2),
    where a' and b' are the vectors minus their own mean component (0 for equal vectors,
    0.5 for uncorrelated ones, 1 for opposite ones).
    """
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    if measure == "cosine":
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        return np.asarray(np.sum(a * b, axis=1) / np.maximum(norms, 1e-12))
    ca = a - a.mean(axis=1, keepdims=True)
    cb = b - b.mean(axis=1, keepdims=True)
    spread = np.sum(ca * ca, axis=1) + np.sum(cb * cb, axis=1)
    return np.asarray(0.5 * np.sum((ca - cb) ** 2, axis=1) / np.maximum(spread, 1e-12))


def closer_by(measure: str, near: np.ndarray, other: np.ndarray) -> np.ndarray:
    """How much closer the first text of each pair is than the second: a similarity
    difference for the cosine, the reversed distance difference for NED."""
    return np.asarray(other - near) if measure in DISTANCES else np.asarray(near - other)


@dataclass
class Values:
    """Per-anchor similarities (cosine) or distances (NED) of one encoder on one dataset."""

    paraphrase: np.ndarray
    random: np.ndarray
    controls: dict[str, tuple[np.ndarray, np.ndarray]]  # name -> (anchor index, value)


def score(encoder: Encoder, anchors: list[Anchor], measure: str) -> Values:
    texts = [a.text for a in anchors]
    base = encoder.embed(texts)
    paraphrase = measured_pairs(measure, base, encoder.embed([a.paraphrase for a in anchors]))
    if any(a.random_with is not None for a in anchors):
        firsts = encoder.embed([a.random_with or a.text for a in anchors])
    else:
        firsts = base
    random = measured_pairs(measure, firsts, encoder.embed([a.random for a in anchors]))
    controls = {}
    for name in _control_names(anchors):
        index = [i for i, a in enumerate(anchors) for _ in a.controls.get(name, [])]
        made = [t for a in anchors for t in a.controls.get(name, [])]
        values = measured_pairs(measure, base[index], encoder.embed(made))
        controls[name] = (np.asarray(index, dtype=np.int64), values)
    return Values(paraphrase, random, controls)


class Shares(TypedDict):
    """How much closer the paraphrase is than another text: the gaps' count, mean, median
    and the share above each ε (None: no pairs)."""

    n: int
    mean: float | None
    median: float | None
    share_above: dict[str, float | None]  # eps_key(ε) -> share


class Distinction(TypedDict):
    """Criterion 1: the paraphrase against a random partner."""

    grid_share: float
    difference: float
    n: int
    mean: float | None
    median: float | None
    share_above: dict[str, float | None]


class PairsFigure(TypedDict, total=False):
    """A meaning-preserving control's (or the human negation pairs') mean figure, raw and
    adjusted."""

    n: Required[int]
    mean: Required[float]
    adjusted: Required[float]
    adjusted_ned_inside: float  # a distance's other reading of equation 2


class DatasetFigures(TypedDict):
    """One measure's probe figures on one dataset."""

    paraphrase_mean: float
    random_pair_mean: float
    distinction: Distinction
    preserved: dict[str, PairsFigure]
    sensitivity: dict[str, Shares]


class MeasureFigures(TypedDict, total=False):
    """One encoder's figures under one measure (probes.json's `measures` entry)."""

    random_pair_mean_pooled: float
    adjustment_factor: float
    adjustment_factor_ned_inside: float
    datasets: dict[str, DatasetFigures]
    negation_pairs: PairsFigure


def _control_names(anchors: list[Anchor]) -> list[str]:
    present = {name for a in anchors for name in a.controls}
    return [name for name in CONTROLS if name in present]


def summarise_measures(
    by_measure: dict[str, dict[str, Values]], epsilons: tuple[float, ...]
) -> dict[str, MeasureFigures]:
    """`summarise_measure` for every measure; NED's adjustment as printed takes the cosine's pooled
    random-pair mean, so the cosine is summarised first."""
    cosine = summarise_measure(by_measure["cosine"], "cosine", epsilons)
    out = {"cosine": cosine}
    for measure, by_dataset in by_measure.items():
        if measure != "cosine":
            out[measure] = summarise_measure(
                by_dataset, measure, epsilons, cosine["random_pair_mean_pooled"]
            )
    return {m: out[m] for m in by_measure}


def pooled_random_mean(by_dataset: dict[str, Values]) -> float:
    """The random-pair mean pooled over datasets: the mean of each dataset's mean."""
    return float(np.mean([float(np.mean(v.random)) for v in by_dataset.values()]))


def summarise_measure(
    by_dataset: dict[str, Values],
    measure: str,
    epsilons: tuple[float, ...],
    cosine_random_pooled: float | None = None,
) -> MeasureFigures:
    """The probe figures of one encoder under one measure, per dataset, with the
    random-pair mean pooled over the datasets (the mean of their means) for the
    adjustment. A distance also needs the cosine's pooled random-pair mean, which equation
    2 as printed puts inside; its other reading uses the distance's own."""
    pooled = pooled_random_mean(by_dataset)
    factor, inside = 1.0 - pooled, None
    out: MeasureFigures = {"random_pair_mean_pooled": pooled}
    if measure in DISTANCES:
        if cosine_random_pooled is None:
            raise ValueError(f"{measure}: the cosine's pooled random-pair mean is needed")
        factor, inside = 1.0 - cosine_random_pooled, 1.0 - pooled
    out["adjustment_factor"] = factor
    if inside is not None:
        out["adjustment_factor_ned_inside"] = inside
    out["datasets"] = {
        label: _dataset_figures(v, measure, factor, epsilons, inside)
        for label, v in by_dataset.items()
    }
    return out


def adjust(measure: str, mean: float, factor: float) -> float:
    """ALIGN-SIM's adjustment of a meaning-preserving pair's mean figure: eq. 1 for the
    cosine (mean x alpha), eq. 2 for a distance (1 - (1 - mean) x factor), with `factor`
    one minus a pooled random-pair mean (ADJUSTMENTS says which)."""
    return 1.0 - (1.0 - mean) * factor if measure in DISTANCES else mean * factor


def distinction_share(measure: str, paraphrase: np.ndarray, random: np.ndarray) -> float:
    """Criterion 1 as ALIGN-SIM reports it: the share of anchors with cos(a, p) - cos(a, r)
    > ε, or NED(a, p) - NED(a, r) < ε, averaged over the measure's ε grid."""
    diffs = paraphrase - random
    grid = DISTINCTION_GRIDS[measure]
    if measure in DISTANCES:
        return float(np.mean([np.mean(diffs < e) for e in grid]))
    return float(np.mean([np.mean(diffs > e) for e in grid]))


def _dataset_figures(
    values: Values,
    measure: str,
    factor: float,
    epsilons: tuple[float, ...],
    inside: float | None = None,
) -> DatasetFigures:
    paraphrase_mean = float(np.mean(values.paraphrase))
    random_mean = float(np.mean(values.random))
    out: DatasetFigures = {
        "paraphrase_mean": paraphrase_mean,
        "random_pair_mean": random_mean,
        "distinction": {
            "grid_share": distinction_share(measure, values.paraphrase, values.random),
            "difference": paraphrase_mean - random_mean,
            **_shares(closer_by(measure, values.paraphrase, values.random), epsilons),
        },
        "preserved": {},
        "sensitivity": {},
    }
    for name, (index, made) in values.controls.items():
        if CONTROLS[name].meaning == PRESERVED:
            raw = float(np.mean(made))
            out["preserved"][name] = {
                "n": len(made),
                "mean": raw,
                "adjusted": adjust(measure, raw, factor),
            }
            if inside is not None:
                out["preserved"][name]["adjusted_ned_inside"] = adjust(measure, raw, inside)
        else:
            gaps = closer_by(measure, values.paraphrase[index], made)
            out["sensitivity"][name] = _shares(gaps, epsilons)
    return out


def _shares(diffs: np.ndarray, epsilons: tuple[float, ...]) -> Shares:
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


def criterion(name: str) -> str:
    """How a control is labelled: its ALIGN-SIM criterion, or shiftbench's own."""
    number = CONTROLS[name].criterion
    if name == "affirmative-paraphrase":
        return (
            f"ALIGN-SIM criterion {number} on LLM rewrites; the paper's uses human-written "
            "pairs (--negation-pairs)"
        )
    return f"ALIGN-SIM criterion {number}" if number else "shiftbench's own control"


def probe_document(
    datasets: list[Dataset],
    settings: ProbeSettings,
    per_model: list[tuple[Encoder, dict[str, MeasureFigures]]],
    negation_pairs: NegationPairs | None = None,
) -> ProbeDocument:
    human = (
        {"file": negation_pairs.path.name, "pairs": len(negation_pairs.negated)}
        if negation_pairs is not None
        else None
    )
    document = {
        "shiftbench_version": __version__,
        "targets": [d.label for d in datasets],
        "datasets": [_dataset_entry(d, settings) for d in datasets],
        "seed": settings.seed,
        "random_pairs": {
            "rule": settings.random_pairs,
            "meaning": RANDOM_PAIRS[settings.random_pairs],
        },
        "epsilons": list(settings.epsilons),
        "distinction_grids": {m: list(g) for m, g in DISTINCTION_GRIDS.items()},
        "measures": MEASURES,
        "adjustments": ADJUSTMENTS,
        **({"negation_pairs": human} if human else {}),
        "models": [{"model": enc.describe(), "measures": m} for enc, m in per_model],
    }
    return cast(ProbeDocument, document)  # one literal, to keep probes.json's key order


class ControlEntry(TypedDict):
    """A control a probed dataset holds: what it does to meaning, and its pairs."""

    meaning: str
    criterion: int | None
    configs: list[str]
    pairs: int


class DatasetEntry(TypedDict):
    """A probed dataset in probes.json: its source, paraphrases, anchors and controls."""

    target: str
    source: SourceRecord
    paraphrases: str
    anchor_field: str
    anchors: int
    controls: dict[str, ControlEntry]


def _dataset_entry(dataset: Dataset, settings: ProbeSettings) -> DatasetEntry:
    source = dataset.collection.source
    controls = control_configs(dataset.collection)
    anchors = dataset.anchors
    # every control the target holds, also one none of whose rows passed its checks (0 pairs)
    held = {c.meta["transform"] for c in controls}
    return {
        "target": dataset.label,
        "source": source,
        "paraphrases": _paraphrase_rule(source, settings),
        "anchor_field": source["text_fields"][0],
        "anchors": len(anchors),
        "controls": {
            name: {
                "meaning": CONTROLS[name].meaning,
                "criterion": CONTROLS[name].criterion,
                "configs": [c.name for c in controls if c.meta["transform"] == name],
                "pairs": sum(len(a.controls.get(name, [])) for a in anchors),
            }
            for name in CONTROLS
            if name in held
        },
    }


def _paraphrase_rule(source: SourceRecord, settings: ProbeSettings) -> str:
    if settings.paraphrases != GOLD:
        kept = "ok or identical" if settings.paraphrases.startswith(IDENTITY_KEPT) else "ok"
        return f"config {settings.paraphrases} (rows with status {kept})"
    if source["task_type"] == "PairClassification":
        return "gold pairs with label 1"
    return f"gold pairs scored {gold_threshold(source, settings.min_score):g} or more"


def negation_pair_figures(
    encoder: Encoder, pairs: NegationPairs, figures: dict[str, MeasureFigures]
) -> None:
    """Criterion 4 on human-written pairs, added to each measure's figures: the mean figure
    of the pairs, adjusted with the probe run's pooled random-pair means as criteria 2 and
    4 are."""
    negated = encoder.embed(list(pairs.negated))
    affirmative = encoder.embed(list(pairs.affirmative))
    for measure, f in figures.items():
        mean = float(np.mean(measured_pairs(measure, negated, affirmative)))
        entry: PairsFigure = {"n": len(pairs.negated), "mean": mean,
                 "adjusted": adjust(measure, mean, f["adjustment_factor"])}  # fmt: skip
        if "adjustment_factor_ned_inside" in f:
            entry["adjusted_ned_inside"] = adjust(measure, mean, f["adjustment_factor_ned_inside"])
        f["negation_pairs"] = entry
