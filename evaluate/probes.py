"""Task-free alignment probes after ALIGN-SIM (Mahajan et al., 2024): does an encoder move
when meaning changes and stay put when it does not?

Every probe starts from an anchor: the first text field of an original row that has a
paraphrase (a gold pair of the dataset, or an LLM paraphrase config of the run folder).
Each anchor gets one random partner, drawn with the seed from the texts of the same
dataset and split. A probe run may pool several datasets (run folders or releases). Each
figure is computed with the cosine similarity and with ALIGN-SIM's normalised Euclidean
distance (NED, a distance: lower is closer):

- criterion 1, distinction: the share of anchors with cos(a, paraphrase) - cos(a, random)
  > ε, or NED(a, paraphrase) - NED(a, random) < ε, averaged over a fixed symmetric ε grid
  per measure; and the mean paraphrase and random-pair figures;
- criteria 2 and 4, the controls that keep the meaning (synonym-swap-n, the affirmative
  paraphrase of a negated text): the mean figure, adjusted with the random-pair mean
  pooled over the datasets (ALIGN-SIM's equations 1 and 2; equation 2 in both of the
  readings the paper allows, see ADJUSTMENTS);
- criteria 3 and 5 and shiftbench's own negation control, the controls that change the
  meaning: how much closer the paraphrase is than the control (raw, not adjusted), and
  the share of anchors for which that exceeds each ε.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shiftbench import __version__
from shiftbench.core.data.listfields import refuse_listed
from shiftbench.core.data.runfolder import IDENTITY_KEPT, usable
from shiftbench.core.models.encoders import Encoder
from shiftbench.core.text.transforms import CHANGED, CONTROLS, PRESERVED
from shiftbench.errors import InputError
from shiftbench.evaluate.run import Collection, ConfigView, write_json

MEASURES = {"cosine": "cosine similarity", "ned": "normalised Euclidean distance"}
DISTANCES = frozenset({"ned"})  # lower is closer
# Criterion 1 is averaged over these margins, the same 21 for both measures. ALIGN-SIM
# does not list its margins, but its Table 3 follows from its Tables 6 and 7 with these:
# put every anchor at the mean difference a table prints, and the share over this grid is
# within 3.6 points of Table 3's cosine share and 2.9 points of its NED share for each of
# the 36 printed (model, dataset) cells; a NED grid half as wide (NED gaps are about half
# the cosine gaps) is up to 18.6 points off (tests/test_probes.py).
_GRID = tuple(round(-1.0 + 0.1 * i, 2) for i in range(21))
DISTINCTION_GRIDS: dict[str, tuple[float, ...]] = {"cosine": _GRID, "ned": _GRID}
# Equation 2 as printed puts the random pairs' mean *similarity* (the cosine) inside; the
# appendix's prose beside it calls that term a distance. Both readings are reported: the
# printed one as "adjusted", the other as "adjusted_ned_inside".
ADJUSTMENTS = {
    "cosine": "mean cosine x alpha, alpha = 1 - mean over datasets of the mean random-pair "
    "cosine (ALIGN-SIM eq. 1)",
    "ned": "1 - (1 - mean NED) x (1 - mean over datasets of the mean random-pair cosine) "
    "(ALIGN-SIM eq. 2 as printed: sim(RND-Pairs) inside)",
    "ned_inside": "1 - (1 - mean NED) x (1 - mean over datasets of the mean random-pair NED) "
    "(eq. 2 with the appendix's prose: the random-pair distance inside)",
}
GOLD = "gold"
# --negation-pairs: a file of human-written pairs, a negated sentence and its affirmative
# paraphrase (ALIGN-SIM tests criterion 4 on AFIN, Hossain and Blanco 2022)
NEGATED, AFFIRMATIVE = "negated", "affirmative"
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
    # the random pair's first text: None pairs `random` with the anchor itself; with
    # --random-pairs label-0, a non-paraphrase row's first text (ALIGN-SIM's §5.1)
    random_with: str | None = None


@dataclass
class Dataset:
    """One target of a probe run: its label, what it holds, and its anchors."""

    label: str
    collection: Collection
    anchors: list[Anchor]


@dataclass(frozen=True)
class ProbeSettings:
    epsilons: tuple[float, ...]
    seed: int
    paraphrases: str  # "gold" or a config name
    min_score: float | None  # STS gold pairs: the lowest score that counts as a paraphrase
    random_pairs: str = "anchor"  # RANDOM_PAIRS


# Where criterion 1's random pairs come from: each anchor with a text drawn from its
# dataset and split (shiftbench's default), or ALIGN-SIM's §5.1 reading: the dataset's
# non-paraphrase pairs (PairClassification label 0) shuffled, each first text paired with
# another row's second text, and the i-th anchor compared with the i-th such pair (cycling
# when there are fewer of them than anchors).
RANDOM_PAIRS = {
    "anchor": "each anchor with a text drawn from its dataset and split",
    "label-0": "label-0 pairs shuffled (ALIGN-SIM §5.1): a non-paraphrase row's first text "
    "with another's second text, the i-th pair beside the i-th anchor",
}


def parse_epsilons(text: str) -> tuple[float, ...]:
    """'0,0.05,0.1' as sorted unique floats."""
    try:
        values = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise InputError(f"--epsilon takes numbers separated by commas, not {text!r}") from None
    if not values or any(not -2.0 <= v <= 2.0 for v in values):
        raise InputError(f"--epsilon takes numbers from -2 to 2, not {text!r}")
    return tuple(values)


def gather_datasets(collections: list[Collection], settings: ProbeSettings) -> list[Dataset]:
    """Each target's anchors, its partners drawn as if it were probed alone."""
    labels = [c.label for c in collections]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise InputError(f"two targets are both called {twice}; each target is one dataset")
    return [Dataset(c.label, c, gather(c, settings)) for c in collections]


def control_configs(collection: Collection) -> list[ConfigView]:
    return [c for c in collection.configs if c.meta.get("kind") == "control"]


def gather(collection: Collection, settings: ProbeSettings) -> list[Anchor]:
    """The anchors of every subset and split, with their partners and controls."""
    source = collection.source
    refuse_listed(source, "probe")
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
            if settings.random_pairs == "label-0":
                shuffled = _shuffled_pairs(collection, split, rows, rng)
                for i, (row_id, text, paraphrase) in enumerate(pairs):
                    first, second = shuffled[i % len(shuffled)]
                    anchors.append(Anchor(subset, split, row_id, text, paraphrase, second,
                                          random_with=first))  # fmt: skip
            else:
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


def _shuffled_pairs(
    collection: Collection, split: str, rows: list[dict[str, Any]], rng: np.random.Generator
) -> list[tuple[str, str]]:
    """ALIGN-SIM's random pairs: the label-0 rows' first texts, each with the second text
    of the row a seeded permutation puts in its place."""
    source = collection.source
    if source["task_type"] != "PairClassification":
        raise InputError(
            f"--random-pairs label-0 needs PairClassification data (label-0 pairs); "
            f"{collection.label} is a {source['task_type']} run"
        )
    first, second = source["text_fields"][:2]
    negatives = [r for r in rows if r["labels"] == 0]
    if len(negatives) < 2:
        raise InputError(
            f"--random-pairs label-0: {collection.label} {split} has {len(negatives)} "
            "label-0 pair(s); at least 2 are needed to shuffle"
        )
    order = rng.permutation(len(negatives))
    return [(r[first], negatives[int(j)][second]) for r, j in zip(negatives, order, strict=True)]


def _draw_partner(pool: list[str], avoid: set[str], rng: np.random.Generator) -> str:
    """A text of the pool other than the anchor and its paraphrase."""
    if len(set(pool) - avoid) == 0:
        raise InputError("the dataset has too few texts to draw random pairs from")
    while True:
        candidate = pool[int(rng.integers(len(pool)))]
        if candidate not in avoid:
            return candidate


def pair_scores(measure: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
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
    paraphrase = pair_scores(measure, base, encoder.embed([a.paraphrase for a in anchors]))
    if any(a.random_with is not None for a in anchors):
        firsts = encoder.embed([a.random_with or a.text for a in anchors])
    else:
        firsts = base
    random = pair_scores(measure, firsts, encoder.embed([a.random for a in anchors]))
    controls = {}
    for name in _control_names(anchors):
        index = [i for i, a in enumerate(anchors) for _ in a.controls.get(name, [])]
        made = [t for a in anchors for t in a.controls.get(name, [])]
        values = pair_scores(measure, base[index], encoder.embed(made))
        controls[name] = (np.asarray(index, dtype=np.int64), values)
    return Values(paraphrase, random, controls)


def _control_names(anchors: list[Anchor]) -> list[str]:
    present = {name for a in anchors for name in a.controls}
    return [name for name in CONTROLS if name in present]


def summarise_measures(
    by_measure: dict[str, dict[str, Values]], epsilons: tuple[float, ...]
) -> dict[str, dict[str, Any]]:
    """`summarise` for every measure; NED's adjustment as printed takes the cosine's pooled
    random-pair mean, so the cosine is summarised first."""
    cosine = summarise(by_measure["cosine"], "cosine", epsilons)
    out = {"cosine": cosine}
    for measure, by_dataset in by_measure.items():
        if measure != "cosine":
            out[measure] = summarise(
                by_dataset, measure, epsilons, cosine["random_pair_mean_pooled"]
            )
    return {m: out[m] for m in by_measure}


def pooled_random_mean(by_dataset: dict[str, Values]) -> float:
    """The random-pair mean pooled over datasets: the mean of each dataset's mean."""
    return float(np.mean([float(np.mean(v.random)) for v in by_dataset.values()]))


def summarise(
    by_dataset: dict[str, Values],
    measure: str,
    epsilons: tuple[float, ...],
    cosine_random_pooled: float | None = None,
) -> dict[str, Any]:
    """The probe figures of one encoder under one measure, per dataset, with the
    random-pair mean pooled over the datasets (the mean of their means) for the
    adjustment. A distance also needs the cosine's pooled random-pair mean, which equation
    2 as printed puts inside; its other reading uses the distance's own."""
    pooled = pooled_random_mean(by_dataset)
    factor, inside = 1.0 - pooled, None
    out: dict[str, Any] = {"random_pair_mean_pooled": pooled}
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
) -> dict[str, Any]:
    paraphrase_mean = float(np.mean(values.paraphrase))
    random_mean = float(np.mean(values.random))
    out: dict[str, Any] = {
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
    per_model: list[tuple[Encoder, dict[str, dict[str, Any]]]],
    negation_pairs: NegationPairs | None = None,
) -> dict[str, Any]:
    human = (
        {"file": negation_pairs.path.name, "pairs": len(negation_pairs.negated)}
        if negation_pairs is not None
        else None
    )
    return {
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


def _dataset_entry(dataset: Dataset, settings: ProbeSettings) -> dict[str, Any]:
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


def _paraphrase_rule(source: dict[str, Any], settings: ProbeSettings) -> str:
    if settings.paraphrases != GOLD:
        kept = "ok or identical" if settings.paraphrases.startswith(IDENTITY_KEPT) else "ok"
        return f"config {settings.paraphrases} (rows with status {kept})"
    if source["task_type"] == "PairClassification":
        return "gold pairs with label 1"
    return f"gold pairs scored {gold_threshold(source, settings.min_score):g} or more"


@dataclass(frozen=True)
class NegationPairs:
    """Human-written pairs for criterion 4: each negated sentence with its affirmative
    paraphrase, and the file they came from."""

    path: Path
    negated: tuple[str, ...]
    affirmative: tuple[str, ...]


def read_negation_pairs(path: Path) -> NegationPairs:
    """Pairs from a JSON Lines file (one object per line with `negated` and `affirmative`
    strings) or a CSV or TSV file whose header names those two columns. Bad input is one
    `PATH:LINE: what is wrong` error."""
    import csv

    if not path.is_file():
        raise InputError(f"--negation-pairs {path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        at = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{at}: not UTF-8 text") from None
    records: list[tuple[int, Any]] = []
    if path.suffix in (".csv", ".tsv"):
        reader = csv.DictReader(text.splitlines(), delimiter="\t" if path.suffix == ".tsv" else ",")
        missing = [c for c in (NEGATED, AFFIRMATIVE) if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}:1: the header has no column {', '.join(missing)}")
        records = [(reader.line_num, row) for row in reader]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from None
    negated: list[str] = []
    affirmative: list[str] = []
    for number, record in records:
        if not isinstance(record, dict):
            raise InputError(
                f"{path}:{number}: a pair is an object with {NEGATED} and {AFFIRMATIVE}"
            )
        for key, into in ((NEGATED, negated), (AFFIRMATIVE, affirmative)):
            value = record.get(key)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{path}:{number}: {key} is not a non-empty string")
            into.append(value)
    if not negated:
        raise InputError(f"{path}: holds no pairs")
    return NegationPairs(path, tuple(negated), tuple(affirmative))


def negation_pair_figures(
    encoder: Encoder, pairs: NegationPairs, figures: dict[str, dict[str, Any]]
) -> None:
    """Criterion 4 on human-written pairs, added to each measure's figures: the mean figure
    of the pairs, adjusted with the probe run's pooled random-pair means as criteria 2 and
    4 are."""
    negated = encoder.embed(list(pairs.negated))
    affirmative = encoder.embed(list(pairs.affirmative))
    for measure, f in figures.items():
        mean = float(np.mean(pair_scores(measure, negated, affirmative)))
        entry = {"n": len(pairs.negated), "mean": mean,
                 "adjusted": adjust(measure, mean, f["adjustment_factor"])}  # fmt: skip
        if "adjustment_factor_ned_inside" in f:
            entry["adjusted_ned_inside"] = adjust(measure, mean, f["adjustment_factor_ned_inside"])
        f["negation_pairs"] = entry


def negation_pair_table(
    document: dict[str, Any], measure: str
) -> tuple[list[str], list[list[str]]] | None:
    """Criterion 4 on the human-written pairs, one row per model (None without them)."""
    if not document.get("negation_pairs"):
        return None
    readings = [("adjusted", "C4 adj")]
    if measure in DISTANCES:
        readings.append(("adjusted_ned_inside", "C4 adj NED-in"))
    header = ["model", "pairs", "C4 mean", *(short for _, short in readings)]
    rows = []
    for entry in document["models"]:
        f = entry["measures"][measure]["negation_pairs"]
        rows.append([entry["model"]["id"], str(f["n"]), _num(f["mean"]),
                     *(_num(f[key]) for key, _ in readings)])  # fmt: skip
    return header, rows


def _negation_title(document: dict[str, Any], measure: str) -> str:
    pairs = document["negation_pairs"]
    return (
        f"{MEASURES[measure]}, ALIGN-SIM criterion 4 on {pairs['pairs']} human-written "
        f"negated/affirmative pairs ({pairs['file']}), adjusted as above:"
    )


def _names(document: dict[str, Any], meaning: str) -> list[str]:
    """The controls of that meaning in any dataset, in registry order."""
    present = {n for d in document["datasets"] for n in d["controls"]}
    return [n for n, t in CONTROLS.items() if n in present and t.meaning == meaning]


def _label(name: str) -> str:
    number = CONTROLS[name].criterion
    if name == "affirmative-paraphrase":  # LLM rewrites, not the paper's human pairs
        return f"C{number}-LLM {name}"
    return f"C{number} {name}" if number else f"own {name}"


def figure_table(document: dict[str, Any], measure: str) -> tuple[list[str], list[list[str]]]:
    """ALIGN-SIM's figures, one row per (model, dataset): criterion 1 averaged over its
    grid with the paraphrase and random-pair means, then the adjusted figure of each
    meaning-preserving control (criteria 2 and 4), then the adjustment factor. A distance
    has both readings of equation 2: as printed (`adj`, with 1 - the random-pair cosine)
    and with the random-pair distance inside (`adj NED-in`, with 1 - random NED)."""
    kept = _names(document, PRESERVED)
    readings = [("adjusted", "adj")]
    factors = [("adjustment_factor", "alpha")]
    if measure in DISTANCES:
        readings.append(("adjusted_ned_inside", "adj NED-in"))
        factors = [("adjustment_factor", "1 - random cos"),
                   ("adjustment_factor_ned_inside", "1 - random NED")]  # fmt: skip
    header = ["model", "dataset", "C1 share", "C1 paraphrase", "C1 random",
              *(f"{_label(n)} {short}" for _, short in readings for n in kept),
              *(short for _, short in factors)]  # fmt: skip
    rows = []
    for entry in document["models"]:
        figures = entry["measures"][measure]
        for label, f in figures["datasets"].items():
            adjusted = [f["preserved"].get(n, {}).get(key) for key, _ in readings for n in kept]
            rows.append(
                [entry["model"]["id"], label, _num(f["distinction"]["grid_share"]),
                 _num(f["paraphrase_mean"]), _num(f["random_pair_mean"]),
                 *(_num(v) for v in adjusted), *(_num(figures[key]) for key, _ in factors)]
            )  # fmt: skip
    return header, rows


def share_table(document: dict[str, Any], measure: str) -> tuple[list[str], list[list[str]]]:
    """Per (model, dataset, ε): the share of anchors whose paraphrase is closer than the
    random partner (criterion 1) or than each meaning-changing control (criteria 3 and 5,
    and negation) by more than ε, on the raw figures."""
    changed = _names(document, CHANGED)
    header = ["model", "dataset", "ε", "C1 distinction", *(_label(n) for n in changed)]
    rows = []
    for entry in document["models"]:
        for label, f in entry["measures"][measure]["datasets"].items():
            for eps in document["epsilons"]:
                key = eps_key(eps)
                shares = [f["distinction"]["share_above"][key]] + [
                    f["sensitivity"][n]["share_above"][key] if n in f["sensitivity"] else None
                    for n in changed
                ]
                rows.append([entry["model"]["id"], label, key, *(_num(v) for v in shares)])
    return header, rows


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def coverage_lines(document: dict[str, Any]) -> list[str]:
    lines = []
    for d in document["datasets"]:
        lines.append(
            f"{d['target']}: {d['anchors']} anchors ({d['paraphrases']}; field "
            f"{d['anchor_field']}); "
            + (
                f"random pairs: label-0 pairs shuffled with seed {document['seed']}"
                if (document.get("random_pairs") or {}).get("rule") == "label-0"
                else f"random partners drawn with seed {document['seed']}"
            )
        )
        for name, info in d["controls"].items():
            lines.append(
                f"  {name} (meaning {info['meaning']}; {criterion(name)}): {info['pairs']} "
                f"pairs from {', '.join(info['configs'])}"
            )
    return lines


def _titles(document: dict[str, Any], measure: str) -> tuple[str, str]:
    name = MEASURES[measure]
    closer = "lower" if measure in DISTANCES else "higher"
    count = len(document["datasets"])
    figures = (
        f"{name} ({closer} is closer), ALIGN-SIM's figures (C1 share averaged over ε from "
        f"{DISTINCTION_GRIDS[measure][0]:g} to {DISTINCTION_GRIDS[measure][-1]:g}; adjusted "
        f"with the random-pair mean of {count} dataset{'s' * (count > 1)}):"
    )
    shares = f"{name}, share of anchors whose paraphrase is closer by more than ε (raw):"
    return figures, shares


def markdown(document: dict[str, Any]) -> str:
    from shiftbench.core.tables import markdown_table

    parts = [f"# Alignment probes: {', '.join(document['targets'])}", "",
             *coverage_lines(document), ""]  # fmt: skip
    parts += [
        "Criterion 1 (C1 share): the share of anchors with cos(a, paraphrase) - cos(a, random) "
        "> ε, or NED(a, paraphrase) - NED(a, random) < ε, averaged over the measure's ε grid; "
        "C1 paraphrase and C1 random are the mean figures of those pairs. Adjusted figures "
        f"(criteria 2 and 4): cosine, {ADJUSTMENTS['cosine']}; NED (adj), {ADJUSTMENTS['ned']}; "
        f"NED (adj NED-in), {ADJUSTMENTS['ned_inside']}. Neither NED reading reproduces "
        "ALIGN-SIM's Table 8 for its encoder-only models (see the probes guide). "
        "Shares above ε: the share of anchors whose paraphrase is closer than the other text "
        "by more than ε, on raw figures. `own` marks shiftbench's own control, which is not "
        "an ALIGN-SIM criterion.",
        "",
    ]
    for measure in document["measures"]:
        figures, shares = _titles(document, measure)
        parts += [f"## {MEASURES[measure]}", "", figures, "",
                  markdown_table(*figure_table(document, measure), left=2), "", shares, "",
                  markdown_table(*share_table(document, measure), left=3), ""]  # fmt: skip
        human = negation_pair_table(document, measure)
        if human is not None:
            parts += [_negation_title(document, measure), "", markdown_table(*human, left=1), ""]
    return "\n".join(parts)


def plain(document: dict[str, Any]) -> str:
    from shiftbench.core.tables import plain_table

    parts = coverage_lines(document)
    for measure in document["measures"]:
        figures, shares = _titles(document, measure)
        parts += ["", figures, plain_table(*figure_table(document, measure)),
                  "", shares, plain_table(*share_table(document, measure))]  # fmt: skip
        human = negation_pair_table(document, measure)
        if human is not None:
            parts += ["", _negation_title(document, measure), plain_table(*human)]
    return "\n".join(parts)


def row_records(
    datasets: list[Dataset], per_model: list[tuple[Encoder, dict[str, dict[str, Values]]]]
) -> list[dict[str, Any]]:
    """Every figure behind the tables, one record per (model, dataset, anchor)."""
    records = []
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
                    {"model": encoder.spec, "dataset": dataset.label, "subset": anchor.subset,
                     "split": anchor.split, "row_id": anchor.row_id, **per_anchor[i]}
                )  # fmt: skip
    return records


def histogram(
    document: dict[str, Any],
    per_model: list[tuple[Encoder, dict[str, dict[str, Values]]]],
    measure: str,
    path: Path,
) -> None:
    """One panel per probe (distinction and each meaning-changing control): every encoder's
    distribution, over all datasets, of how much closer the paraphrase is than the other
    text, with the ε grid."""
    from shiftbench.evaluate.plots import _pyplot, _save, _short

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
                    label=_short(encoder.spec))  # fmt: skip
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
    document: dict[str, Any],
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
