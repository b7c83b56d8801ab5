"""The probe document as tables: plain for the terminal, Markdown for probes.md."""

from __future__ import annotations

from shiftbench.core.messages import counted
from shiftbench.core.records import ProbeDocument
from shiftbench.core.tables import markdown_table, plain_table
from shiftbench.core.text.transforms import CHANGED, CONTROLS, PRESERVED
from shiftbench.evaluate.probes.anchors import ADJUSTMENTS, DISTANCES, DISTINCTION_GRIDS, MEASURES
from shiftbench.evaluate.probes.figures import criterion, eps_key


def negation_pair_table(
    document: ProbeDocument, measure: str
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


def _negation_title(document: ProbeDocument, measure: str) -> str:
    pairs = document["negation_pairs"]
    return (
        f"{MEASURES[measure]}, ALIGN-SIM criterion 4 on {pairs['pairs']} human-written "
        f"negated/affirmative pairs ({pairs['file']}), adjusted as above:"
    )


def _names(document: ProbeDocument, meaning: str) -> list[str]:
    """The controls of that meaning in any dataset, in registry order."""
    present = {n for d in document["datasets"] for n in d["controls"]}
    return [n for n, t in CONTROLS.items() if n in present and t.meaning == meaning]


def _label(name: str) -> str:
    number = CONTROLS[name].criterion
    if name == "affirmative-paraphrase":  # LLM rewrites, not the paper's human pairs
        return f"C{number}-LLM {name}"
    return f"C{number} {name}" if number else f"own {name}"


def figure_table(document: ProbeDocument, measure: str) -> tuple[list[str], list[list[str]]]:
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


def share_table(document: ProbeDocument, measure: str) -> tuple[list[str], list[list[str]]]:
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


def coverage_lines(document: ProbeDocument) -> list[str]:
    lines = []
    for d in document["datasets"]:
        lines.append(
            f"{d['target']}: {counted(d['anchors'], 'anchor')} ({d['paraphrases']}; field "
            f"{d['anchor_field']}); "
            + (
                f"random pairs: label-0 pairs shuffled with seed {document['seed']}"
                if (document.get("random_pairs") or {}).get("rule") == "label-0"
                else f"random partners drawn with seed {document['seed']}"
            )
        )
        for name, info in d["controls"].items():
            lines.append(
                f"  {name} (meaning {info['meaning']}; {criterion(name)}): "
                f"{counted(info['pairs'], 'pair')} from {', '.join(info['configs'])}"
            )
    return lines


def _titles(document: ProbeDocument, measure: str) -> tuple[str, str]:
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


def markdown(document: ProbeDocument) -> str:
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


def plain(document: ProbeDocument) -> str:

    parts = coverage_lines(document)
    for measure in document["measures"]:
        figures, shares = _titles(document, measure)
        parts += ["", figures, plain_table(*figure_table(document, measure)),
                  "", shares, plain_table(*share_table(document, measure))]  # fmt: skip
        human = negation_pair_table(document, measure)
        if human is not None:
            parts += ["", _negation_title(document, measure), plain_table(*human)]
    return "\n".join(parts)
