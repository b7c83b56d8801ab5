"""Screening and the human-evaluation summary of a batch folder with imported ratings.

Screening is fixed before anyone rates (a priori): a rater is kept when every control item
they rated lies within its tolerance of the expected rating, and they rated at least one.
Excluded raters are listed with their misses, and none of their ratings count.

Per criterion, over the kept raters' ratings of real (non-control) items, per
transformation and per axis: mean ± SD of the ratings, the share of items whose mean
rating reaches the acceptance threshold, pass (the mean reaches it) or fail, Gwet's AC2
(items x raters, ordinal weights by default) with its 95% interval, and Krippendorff's
alpha with ordinal and with interval distances, each with a 95% percentile interval from
1000 item bootstraps.

When the run folder was validated with --drift-encoder, the report also correlates each
item's mean rating with its embedding drift (Spearman, 95% bootstrap interval), per
criterion: do people see the change the encoder sees?
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shiftbench import __version__
from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.data.writes import atomic_write_text
from shiftbench.core.ratings import HUMAN_REPORT as REPORT_JSON
from shiftbench.core.ratings import Rating, screen
from shiftbench.core.records import BatchDescription, HumanEvalReport
from shiftbench.core.stats import bootstrap_statistic_ci, spearman_or_nan
from shiftbench.core.tables import markdown_table, markdown_text
from shiftbench.errors import InputError
from shiftbench.human_eval.agreement import gwet, krippendorff_alpha

REPORT_MD = "human_eval.md"
# Krippendorff's alpha is reported on both readings of a rating scale, each with the
# percentile interval of this many item bootstraps (seed 0).
ALPHA_LEVELS = ("ordinal", "interval")
ALPHA_RESAMPLES = 1000


def summarise_ratings(
    description: BatchDescription,
    table: list[dict[str, Any]],
    ratings: list[Rating],
    *,
    threshold: float = 3.0,
    weights: str = "ordinal",
) -> HumanEvalReport:
    if not ratings:
        raise InputError("no ratings imported yet; run 'human-eval import' first")
    raters = screen(table, ratings)
    kept = {r for r, e in raters.items() if e["kept"]}
    info = {r["item_id"]: r for r in table if not r["is_control"]}
    criteria = description["scheme"]["criteria"]
    groups = _groups(ratings, info, kept)
    rows = []
    for (criterion, level, name), items in sorted(groups.items()):
        values = [v for per_rater in items.values() for v in per_rater.values()]
        means = [statistics.fmean(per_rater.values()) for per_rater in items.values()]
        mean = statistics.fmean(values)
        row: dict[str, Any] = {
            "criterion": criterion,
            "level": level,
            "group": name,
            "items": len(items),
            "ratings": len(values),
            "mean": round(mean, 4),
            "sd": round(statistics.stdev(values), 4) if len(values) > 1 else None,
            "accepted_share": round(sum(m >= threshold for m in means) / len(means), 4),
            "passed": mean >= threshold,
            "agreement": None,
        }
        order = sorted({rater for per_rater in items.values() for rater in per_rater})
        matrix = np.array(
            [[per_rater.get(rater, np.nan) for rater in order] for per_rater in items.values()],
            dtype=np.float64,
        )
        _add_agreement(row, matrix, criteria[criterion]["scale"], weights)
        rows.append(row)
    return {
        "format": 1,
        "shiftbench_version": __version__,
        "run": description["run"],
        "drift_correlation": drift_correlation(description, ratings, kept, info),
        "scheme": description["scheme"].get("name"),
        "threshold": threshold,
        "weights": weights,
        "raters": raters,
        "kept_raters": sorted(kept),
        "excluded_raters": sorted(set(raters) - kept),
        "rows": rows,
    }


def _groups(
    ratings: list[Rating], info: dict[str, dict[str, Any]], kept: set[str]
) -> dict[tuple[str, str, str], dict[str, dict[str, float]]]:
    """The kept raters' ratings of real items by (criterion, level, group), level being
    transform or axis: item -> rater -> rating."""
    groups: dict[tuple[str, str, str], dict[str, dict[str, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for r in ratings:
        item = info.get(r["item_id"])
        if item is None or r["rater_id"] not in kept:
            continue
        for level, name in (("transform", item["transform"]), ("axis", item["axis"] or "?")):
            groups[(r["criterion"], level, name)][r["item_id"]][r["rater_id"]] = r["rating"]
    return groups


def _add_agreement(row: dict[str, Any], matrix: Any, scale: Sequence[float], weights: str) -> None:
    """Adds to `row` the raters' agreement on `matrix` (items x raters): Gwet's AC, and
    Krippendorff's alpha at each of ALPHA_LEVELS, or a note on why there is none."""
    try:
        result = gwet(matrix, scale, weights)
        row["agreement"] = {
            k: (round(v, 4) if isinstance(v, float) else v)
            for k, v in result.as_dict().items()
            if k not in ("ci95",)
        } | {"ci95": [round(result.ci95[0], 4), round(result.ci95[1], 4)]}
    except ValueError as exc:  # fewer than two ratings on every item
        row["agreement_note"] = str(exc)
    row["alpha"] = {}
    for level in ALPHA_LEVELS:
        try:
            alpha = krippendorff_alpha(matrix, scale, level, resamples=ALPHA_RESAMPLES)
        except ValueError as exc:  # no pairable item, or every rating the same
            row["alpha"][level] = None
            row["alpha_note"] = str(exc)
            continue
        row["alpha"][level] = {
            k: (round(v, 4) if isinstance(v, float) else v)
            for k, v in alpha.as_dict().items()
            if k != "ci95"
        } | {"ci95": None if alpha.ci95 is None else [round(x, 4) for x in alpha.ci95]}


def drift_correlation(
    description: BatchDescription,
    ratings: list[Rating],
    kept: set[str],
    info: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    """Per criterion and drift encoder: Spearman between item mean rating and drift."""
    from scipy.stats import spearmanr

    drift: dict[str, dict[str, float]] = defaultdict(dict)  # encoder -> item -> drift
    folder = Path(description["run"]) / "validation"
    for config in sorted({i["item_id"].split("/")[0] for i in info.values()}):
        path = folder / f"{config}.jsonl"
        if not path.is_file():
            continue
        for row in read_jsonl(path):
            for key, per_field in (row.get("measures") or {}).items():
                if not key.startswith("drift:"):
                    continue
                for field, value in per_field.items():
                    if value is not None:
                        item = f"{config}/{row['split']}/{row['row_id']}/{field}"
                        drift[key][item] = value
    means: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in ratings:
        if r["item_id"] in info and r["rater_id"] in kept:
            means[r["criterion"]][r["item_id"]].append(r["rating"])
    out = []
    for key, values in sorted(drift.items()):
        for criterion, per_item in sorted(means.items()):
            pairs = [(statistics.fmean(v), values[i]) for i, v in per_item.items() if i in values]
            entry: dict[str, Any] = {"encoder": key, "criterion": criterion, "items": len(pairs)}
            a, b = [p[0] for p in pairs], [p[1] for p in pairs]
            if len(pairs) >= 3 and len(set(a)) > 1 and len(set(b)) > 1:
                entry["spearman"] = round(float(spearmanr(a, b)[0]), 4)
                low, high = bootstrap_statistic_ci([a, b], spearman_or_nan)
                entry["ci95"] = [round(low, 4), round(high, 4)]
            out.append(entry)
    return out


def ratings_markdown(doc: HumanEvalReport) -> str:
    lines = [
        "# Human evaluation",
        "",
        f"shiftbench {doc['shiftbench_version']}. Raters kept: {len(doc['kept_raters'])} of "
        f"{len(doc['raters'])} (screened on control items before the ratings were seen). "
        f"Acceptance: an item's mean rating of at least {doc['threshold']:g}; a group passes "
        f"when its mean rating does. Agreement: Gwet's AC2, {doc['weights']} weights; "
        "Krippendorff's alpha, ordinal and interval (95% intervals: percentiles of 1000 "
        "item bootstraps).",
        "",
    ]
    header = [
        "criterion", "by", "group", "items", "ratings", "mean ± SD", "accepted", "pass",
        "AC2 [95% CI]", "alpha ordinal [95% CI]", "alpha interval [95% CI]",
    ]  # fmt: skip
    rows = []
    for r in doc["rows"]:
        spread = f"{r['mean']:.2f} ± {r['sd']:.2f}" if r["sd"] is not None else f"{r['mean']:.2f}"
        a = r["agreement"]
        ac = f"{a['value']:.3f} [{a['ci95'][0]:.3f}, {a['ci95'][1]:.3f}]" if a else "-"
        alphas = [_alpha_cell((r.get("alpha") or {}).get(level)) for level in ALPHA_LEVELS]
        rows.append([
            r["criterion"], r["level"], r["group"], str(r["items"]), str(r["ratings"]), spread,
            f"{r['accepted_share']:.0%}", "pass" if r["passed"] else "fail", ac, *alphas,
        ])  # fmt: skip
    lines.append(markdown_table(header, rows, align="lllrrrrlrrr", tight_rule=True))
    correlations = [c for c in doc.get("drift_correlation", []) if "spearman" in c]
    if correlations:
        lines += [
            "",
            "Item mean rating against embedding drift (Spearman, 95% bootstrap interval):",
            "",
        ]
        rows = [
            [c["criterion"], c["encoder"], str(c["items"]),
             f"{c['spearman']:.3f} [{c['ci95'][0]:.3f}, {c['ci95'][1]:.3f}]"]
            for c in correlations
        ]  # fmt: skip
        header = ["criterion", "drift", "items", "Spearman [95% CI]"]
        lines.append(markdown_table(header, rows, left=2, tight_rule=True))
    excluded = [(name, doc["raters"][name]) for name in doc["excluded_raters"]]
    if excluded:
        lines += ["", "Excluded raters:", ""]
        for name, entry in excluded:
            lines.append(f"- {markdown_text(name)}: {entry['reason']}")
    return "\n".join(lines) + "\n"


def _alpha_cell(alpha: dict[str, Any] | None) -> str:
    if not alpha:
        return "-"
    if alpha["ci95"] is None:
        return f"{alpha['value']:.3f}"
    return f"{alpha['value']:.3f} [{alpha['ci95'][0]:.3f}, {alpha['ci95'][1]:.3f}]"


def write(folder: Path, doc: HumanEvalReport) -> None:
    # whole or not at all: a report cut short by a kill would be read by card and evaluate
    atomic_write_text(folder / REPORT_JSON, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(folder / REPORT_MD, ratings_markdown(doc))
