"""`shiftbench judge-calibrate`: how well a judge's similarity ratings follow gold STS scores.

A user picks a judge without labelling anything: the judge rates the gold pairs of an STS
source, and the report gives Spearman's and Pearson's correlation with the gold scores
(Spearman with a 95% bootstrap interval), the mean absolute error after the gold scores
are mapped onto the judge's scale, and per gold-score bin the error and the mean rating
(a judge that rates everything 3 shows up as a flat line of means). Replies without a
usable number are counted and left out, never scored as 0.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from typing import Required, TypedDict

from scipy.stats import pearsonr, spearmanr

from shiftbench import __version__
from shiftbench.core.data.sources import Source
from shiftbench.core.messages import counted
from shiftbench.core.stats import bootstrap_statistic_ci, spearman_or_nan
from shiftbench.errors import InputError
from shiftbench.llm.cache import GenerationCache
from shiftbench.validate.judge import Item, Judge
from shiftbench.validate.report import Measure


class CalibrationBin(TypedDict):
    """One unit-wide bin of the gold score: its pairs, error and mean rating."""

    gold: str
    pairs: int
    mae: float | None
    mean_rating: float | None


class CalibrationRecord(TypedDict, total=False):
    """One judge or scorer against gold similarity scores (`judge-calibrate`'s JSON)."""

    format: int
    shiftbench_version: Required[str]
    judge: Required[dict[str, object]]  # the scorer's own description
    judge_key: Required[str]
    gold_range: Required[list[float]]
    judge_scale: list[float] | None
    pairs: Required[int]
    scored: Required[int]
    unscored: Required[int]
    problems: dict[str, int]
    spearman: Required[float | None]
    spearman_ci95: list[float] | None
    pearson: float | None
    mae: float | None
    bins: list[CalibrationBin]
    why_no_correlation: str  # when no correlation could be computed
    examples: list[dict[str, object]]
    source: dict[str, object]  # the gold pairs' source: name, path, revision


def gold_pairs(source: Source, limit: int | None = None) -> list[tuple[str, str, float]]:
    """(sentence1, sentence2, gold score) of every chosen subset and split, in order."""
    if source.task_type != "STS":
        raise InputError(
            f"judge-calibrate needs an STS source with gold similarity scores; "
            f"{source.name} is {source.task_type}"
        )
    pairs = []
    for subset in source.subsets:
        loaded = source.load(subset)
        for split in source.splits:
            rows = loaded[split].to_list()
            if limit is not None:
                rows = rows[:limit]
            pairs += [(str(r["sentence1"]), str(r["sentence2"]), float(r["score"])) for r in rows]
    if len(pairs) < 3:
        raise InputError(
            f"{source.name} has {counted(len(pairs), 'gold pair')}; calibration needs 3 or more"
        )
    return pairs


def calibrate(
    measure: Measure,
    pairs: list[tuple[str, str, float]],
    gold_range: tuple[float, float],
    cache: GenerationCache,
    *,
    quiet: bool = True,
    label: str = "",
) -> CalibrationRecord:
    """Score every pair and compare the scores with the gold ones. A judge's ratings are
    also compared in size (MAE, bins) on its scale; a score without a scale (ParaPLUIE's
    log-likelihood ratio) only by rank and correlation."""
    low, high = gold_range
    if not high > low:
        raise InputError(f"gold range {low:g},{high:g} is empty")
    scale = measure.scale if isinstance(measure, Judge) else None
    values = measure.score([Item(a, b) for a, b, _ in pairs], cache, quiet=quiet, label=label)
    floor, ceiling = scale or gold_range  # the gold scores mapped onto the judge's scale
    gold = [floor + (g - low) / (high - low) * (ceiling - floor) for _, _, g in pairs]
    kept = [(g, v) for g, (v, _, _) in zip(gold, values, strict=True) if v is not None]
    problems = Counter(p or "no value" for v, _, p in values if v is None)
    report: CalibrationRecord = {
        "format": 1,
        "shiftbench_version": __version__,
        "judge": measure.describe(),
        "judge_key": measure.key,
        "gold_range": [low, high],
        "judge_scale": list(scale) if scale else None,
        "pairs": len(pairs),
        "scored": len(kept),
        "unscored": len(pairs) - len(kept),
        "problems": dict(sorted(problems.items())),
        "spearman": None,
        "spearman_ci95": None,
        "pearson": None,
        "mae": None,
        "bins": _bins(kept, scale) if scale else [],
    }
    if kept and scale:
        report["mae"] = round(statistics.fmean(abs(s - g) for g, s in kept), 4)
    golds = [g for g, _ in kept]
    scores = [s for _, s in kept]
    if len(kept) < 3:
        report["why_no_correlation"] = "fewer than 3 pairs were scored"
    elif len(set(scores)) == 1:
        report["why_no_correlation"] = f"every score is {scores[0]:g}"
    elif len(set(golds)) == 1:
        report["why_no_correlation"] = "every gold score is the same"
    else:
        report["spearman"] = round(float(spearmanr(golds, scores)[0]), 4)
        report["pearson"] = round(float(pearsonr(golds, scores)[0]), 4)
        ci = bootstrap_statistic_ci([golds, scores], spearman_or_nan)
        report["spearman_ci95"] = [round(ci[0], 4), round(ci[1], 4)]
    report["examples"] = [
        {"gold": g, "reply": reply, "score": v, "problem": problem}
        for (_, _, g), (v, reply, problem) in list(zip(pairs, values, strict=True))[:5]
    ]
    return report


def _bins(kept: list[tuple[float, float]], scale: tuple[float, float]) -> list[CalibrationBin]:
    """Unit-wide bins of the (mapped) gold score; the last one includes the top."""
    low, high = scale
    edges = list(range(int(low), int(high) + 1))
    bins: list[CalibrationBin] = []
    for left, right in itertools.pairwise(edges):
        last = right == edges[-1]
        inside = [(g, s) for g, s in kept if left <= g < right or (last and g == right)]
        bins.append(
            {
                "gold": f"[{left}, {right}{']' if last else ')'}",
                "pairs": len(inside),
                "mae": round(statistics.fmean(abs(s - g) for g, s in inside), 4)
                if inside
                else None,
                "mean_rating": round(statistics.fmean(s for _, s in inside), 4) if inside else None,
            }
        )
    return bins


def format_report(report: CalibrationRecord) -> str:
    """The calibration for a terminal: correlations, coverage, then the bins."""

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    ci = report["spearman_ci95"]
    lines = [
        f"judge {report['judge_key']}",
        f"  pairs {report['pairs']}, scored {report['scored']}, unscored "
        f"{report['unscored']}"
        + (
            " (" + ", ".join(f"{k}: {v}" for k, v in report["problems"].items()) + ")"
            if report["problems"]
            else ""
        ),
        f"  spearman {num(report['spearman'])}"
        + (f" ({report['why_no_correlation']})" if report.get("why_no_correlation") else "")
        + (f" [95% CI {ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        + f", pearson {num(report['pearson'])}"
        + (f", MAE {num(report['mae'])}" if report["judge_scale"] else ""),
    ]
    if report["bins"]:
        lines.append(f"  {'gold bin':<10} {'pairs':>5} {'MAE':>7} {'mean rating':>12}")
    for b in report["bins"]:
        lines.append(  # one line per bin
            f"  {b['gold']:<10} {b['pairs']:>5} {num(b['mae']):>7} {num(b['mean_rating']):>12}"
        )
    return "\n".join(lines)
