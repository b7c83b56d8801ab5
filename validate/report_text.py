"""validation.md, the validation report for people: the decision to make per config (its
error rate with a 95% interval, the checks measured unreliable for its languages), the
rates per check, the meaning check, the measures, the worst rows and example failures.
validate/report.py computes what it shows."""

from __future__ import annotations

from typing import Any

from shiftbench.core.records import (
    ConfigRecord,
    ConfigValidationRecord,
    RunMeta,
    ValidationReport,
)
from shiftbench.core.stats import wilson_interval
from shiftbench.core.tables import markdown_table
from shiftbench.validate.meaning import MEANING_CHANGED
from shiftbench.validate.measure import GOAL_FALSE_ALARMS, GOAL_MISSES, unreliable


def config_languages(meta: RunMeta, name: str) -> list[str]:
    """The languages a config's outputs should be in: its translation targets, else its
    text fields' own languages."""
    config: ConfigRecord | dict[str, Any] = meta["configs"].get(name) or {}
    targets = config.get("target_languages") or []
    if targets:
        return sorted(set(targets))
    own = {c for c in (config.get("source_languages") or {}).values() if c}
    if not own and config.get("source_language"):
        own = {str(config["source_language"])}
    return sorted(own)


def decisions(report: ValidationReport, meta: RunMeta) -> list[str]:
    """validation.md's lead, one line per config: the error rate with its 95% Wilson
    interval, and the checks measured unreliable for the config's languages or source
    (validate/measured.json, made by `shiftbench measure-checks`)."""
    source = meta["source"]["name"]
    lines = []
    for name, c in report["configs"].items():
        languages = config_languages(meta, name)
        low, high = wilson_interval(c["failed_rows"], c["rows"])
        said = f" ({', '.join(languages)})" if languages else ""
        line = (
            f"- **{name}**{said}: {_percent(c['total_error_rate'])} of {c['rows']} rows "
            f"failed a check, 95% interval [{_percent(low)}, {_percent(high)}]. "
        )
        found = unreliable(languages, source)
        where = " or ".join([", ".join(languages), source] if languages else [source])
        if found is None:
            line += "No measurement of the checks is packaged."
        elif found:
            line += f"Checks measured unreliable for {where}: {'; '.join(found)}."
        else:
            line += f"No check was measured unreliable for {where}."
        meaning = c.get("meaning") or {}
        if meaning.get("checked_rows"):
            line += (
                f" The meaning check marked {_percent(meaning['changed_rate'])} of "
                f"{meaning['checked_rows']} rows {MEANING_CHANGED} (a warning, not in the "
                "rate above; see [Meaning](#meaning))."
            )
        lines.append(line)
    return lines


WORST_DRIFT = 5  # rows of largest drift the worst-rows list shows, per drift measure
SHOWN_CHARS = 80  # an original or output in the worst-rows list is cut to this length


def validation_markdown(
    report: ValidationReport,
    worst: list[list[str]] | None = None,
    lead: list[str] | None = None,
) -> str:
    """The report for people: what to decide on per config (`lead`, from decisions), one
    table of rates per config, the measures, the worst rows (`worst`, from worst_rows),
    then example failures."""
    lines = ["# Validation report", ""]
    if lead:
        lines += _decision_lines(lead, bool(worst))
    lines += _preamble_lines(report)
    lines += _rates_lines(report)
    lines += _meaning_lines(report)
    lines += _measures_lines(report)
    if worst:
        lines += _worst_lines(worst)
    lines += _example_lines(report)
    return "\n".join(lines) + "\n"


def _decision_lines(lead: list[str], worst: bool) -> list[str]:
    """The decision section: what it shows, then `lead`, one line per config."""
    goal = f"false alarms above {GOAL_FALSE_ALARMS:.1%} or misses above {GOAL_MISSES:.0%}"
    return [
        "## Decision",
        "",
        "Per config, the share of rows that failed any check with its 95% (Wilson) "
        "interval, and the checks measured unreliable for its languages or source "
        f"({goal} on real data, or no measurement possible; `shiftbench "
        "measure-checks`, see the validate guide)"
        + ("; the rows to read first are under [Worst rows](#worst-rows)." if worst
           else "."),
        "",
        *lead,
        "",
    ]  # fmt: skip


def _preamble_lines(report: ValidationReport) -> list[str]:
    """The version, the language ID used and how the rates below are counted."""
    lid = report["language_id"]
    return [
        f"shiftbench {report['shiftbench_version']}; language ID: {lid['name']} (texts with "
        f"fewer than {lid['min_letters']} letters are undetermined, a Han, kana or Hangul "
        f"character counting as {lid.get('dense_weight', 1)}; the language an output "
        f"should be in is kept while its confidence is at least "
        f"{lid.get('expected_share', 0):.0%} of the top one's). A row counts as failed "
        "when any of its text fields fails a check; the total counts each row once. A "
        "back-translation equal to its input is no error: it is kept and scored, and counted "
        "under identical (kept). Rows whose language language ID does not know are not "
        "checked for the wrong language (not failures either): counted under language not "
        "checked.",
        "",
    ]


def _rates_lines(report: ValidationReport) -> list[str]:
    """The table of rates per check, one row per config."""
    checks = report["checks"]
    header = ["config", "rows", "total", *checks, "identical (kept)", "language not checked"]
    rows = [
        [
            name, str(c["rows"]), _percent(c["total_error_rate"]),
            *(_percent(c["error_rates"][k]) for k in checks),
            _percent(c["identical_rate"]) if "identical_rate" in c else "-",
            _unchecked(c), f"{c['mean_edit_distance']:.3f}",
        ]
        for name, c in report["configs"].items()
    ]  # fmt: skip
    return [markdown_table([*header, "edit distance"], rows, tight_rule=True)]


def _measures_lines(report: ValidationReport) -> list[str]:
    """The measures section: each measure's mean and SD per config, and what it left
    unscored; nothing when no measure was taken."""
    measured = [
        (n, k, m) for n, c in report["configs"].items() for k, m in c.get("measures", {}).items()
    ]
    if not measured:
        return []
    lines = [
        "",
        "## Measures",
        "",
        "Drift is 1 - cosine between original and output embeddings; judges rate each "
        "(original, output) pair; unscored pairs (no value, an unparseable reply) are "
        "left out of the mean.",
        "",
    ]
    rows = []
    for name, key, m in measured:
        spread = (
            f"{m['mean']:.3f} ± {m['sd']:.3f}"
            if m["sd"] is not None
            else (f"{m['mean']:.3f}" if m["mean"] is not None else "-")
        )
        why = ", ".join(f"{k}: {v}" for k, v in m["problems"].items())
        unscored = f"{m['unscored']}{f' ({why})' if why else ''}"
        rows.append([name, key, spread, str(m["scored"]), unscored])
    header = ["config", "measure", "mean ± SD", "scored", "unscored"]
    lines.append(markdown_table(header, rows, align="llrrl", tight_rule=True))
    return lines


def _worst_lines(worst: list[list[str]]) -> list[str]:
    """The worst-rows section, its table's rows from report.worst_rows."""
    return [
        "",
        "## Worst rows",
        "",
        f"The {WORST_DRIFT} rows of largest drift per drift measure (each by its field of "
        "largest drift), when drift was measured, and the first example of each failure "
        f"kind found; texts cut to {SHOWN_CHARS} characters. validation/<config>.jsonl "
        "holds every row's texts beside its results.",
        "",
        markdown_table(
            ["config", "row", "field", "why", "original", "output"], worst, align="llllll",
            tight_rule=True,
        ),
    ]  # fmt: skip


def _example_lines(report: ValidationReport) -> list[str]:
    """Per config with failures, its example failures, one line each."""
    lines: list[str] = []
    for name, c in report["configs"].items():
        if not c["examples"]:
            continue
        lines += ["", f"## {name}: example failures", ""]
        for check, cases in c["examples"].items():
            for e in cases:
                where = f"{e['split']} row {e['row_id']}, {e['field']}"
                extra = ""
                if check == "wrong-language":
                    extra = f" (expected {e['language']}, found {e['detected']})"
                lines.append(
                    f"- **{check}** ({where}){extra}: {quote(e['original'])} → {quote(e['output'])}"
                )
    return lines


def _meaning_lines(report: ValidationReport) -> list[str]:
    """The meaning section: per config checked, its meaning-changed rate, then examples."""
    judged = {n: c["meaning"] for n, c in report["configs"].items() if c.get("meaning")}
    if not judged:
        return []
    first = next(iter(judged.values()))
    encoder = (first.get("encoder") or {}).get("id") or "its encoder"  # describe()'s id
    lines = [
        "",
        "## Meaning",
        "",
        "A row that fails no check above passes the form checks; that says nothing of its "
        f"meaning. The meaning check marks a row {MEANING_CHANGED} when a field's drift "
        f"under {encoder} is above {first['threshold']} or the output says or unsays a "
        "negation: a warning, not counted in the total above. It checks paraphrase, "
        "back-translation and style change (English fields under the default encoder).",
        "",
    ]
    rows = [
        [name, str(m["checked_rows"]), _percent(m["changed_rate"]) if m["checked_rows"] else "-",
         str(m["not_checked_rows"])]
        for name, m in judged.items()
    ]  # fmt: skip
    header = ["config", "rows checked", MEANING_CHANGED, "not checked"]
    lines.append(markdown_table(header, rows, align="lrrr", tight_rule=True))
    if any(m.get("examples") for m in judged.values()):
        lines.append("")
    for name, m in judged.items():
        for e in m.get("examples", []):
            why = f"drift {e['drift']}" if e.get("drift") is not None else "no drift"
            if e.get("evidence"):
                why += f", {', '.join(e['evidence'])}"
            lines.append(
                f"- **{MEANING_CHANGED}** ({name}, {e['split']} row {e['row_id']}, "
                f"{e['field']}; {why}): {quote(e['original'])} → {quote(e['output'])}"
            )
    return lines


def _unchecked(summary: ConfigValidationRecord) -> str:
    """Rows not checked for the wrong language, with the languages language ID lacks."""
    rows = summary.get("not_checked", {}).get("wrong-language", 0)
    if not rows:
        return "0"
    return f"{rows} ({', '.join(summary.get('unchecked_languages', {}))})"


def _percent(rate: float) -> str:
    return f"{rate:.1%}"


def quote(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return "`" + flat.replace("`", "'") + "`" if flat else "(empty)"
