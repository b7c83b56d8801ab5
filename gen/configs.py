"""The configs a gen run writes, built from its rows: the original, each LLM variant (its
record: transform, seed, prompts, generator, sampling, languages, status counts) and each
rule-based control; and each transformed row with its originals and statuses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from shiftbench.core.data.listfields import field_texts, regrouped
from shiftbench.core.data.runfolder import (
    IDENTICAL,
    OK,
    ConfigData,
    config_name,
    tally_status,
    usable,
)
from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.data.sources import (
    Source,
)
from shiftbench.core.records import ConfigRecord, DataRow
from shiftbench.core.text.languages import Language
from shiftbench.core.text.transforms import PIVOT, SOURCE
from shiftbench.gen.controls import RuleVariant
from shiftbench.gen.rewrite import (
    BUDGET_GROWTH,
    NOT_APPLICABLE,
    RowResult,
    Variant,
)


def original_config(
    splits: dict[str, list[DataRow]], subset: str = "default", name: str = "original"
) -> ConfigData:
    """The original config `name` holding `splits` (gen's, and an HTEB import's)."""
    meta: ConfigRecord = {
        "kind": "original",
        "subset": subset,
        "rows": {s: len(r) for s, r in splits.items()},
    }
    return ConfigData(name, meta, splits)


def subset_language(source: Source, subset: str) -> Language | None:
    """The language of a subset's texts (its first text field's, for a cross-lingual
    subset), from mteb's metadata, the folder or --source-language."""
    return field_languages(source.languages.get(subset) or [], source.text_fields)[0]


@dataclass(frozen=True)
class SubsetVariant:
    """One LLM variant of one subset, as gen makes its config: the subset's rows to rewrite
    per split (`rows`), the generator's description (`described`) and the subset's
    language per text field (`languages`)."""

    source: Source
    subset: str
    rows: dict[str, list[DataRow]]
    variant: Variant
    described: Mapping[str, Any]
    languages: tuple[Language | None, ...]


def variant_config(made: SubsetVariant, done: dict[str, dict[str, RowResult]]) -> ConfigData:
    """The variant's config from each text's result (`done`, by field and text)."""
    source, subset, splits, variant = made.source, made.subset, made.rows, made.variant
    described, languages = made.described, made.languages
    fields = source.text_fields
    pivot = any(step.language == PIVOT for step in variant.transform.steps)
    out: dict[str, list[DataRow]] = {}
    counts: dict[str, dict[str, int]] = {}
    control = variant.transform.control
    for split, rows in splits.items():
        out[split] = [
            _variant_row(row, fields, done, variant.transform.name, pivot) for row in rows
        ]
        counts[split] = tally_status(out[split])
    used = [
        done[f][t]
        for rows in splits.values()
        for r in rows
        for f in fields
        for t in field_texts(r[f])
    ]
    source_language = languages[0]
    meta = cast(
        ConfigRecord,
        {
            "kind": "control" if control else "transform",
            "subset": subset,
            "settings_sha256": variant.settings_sha256(described),
            "transform": variant.transform.name,
            "transform_version": variant.transform.version,
            **({"meaning": variant.transform.meaning} if control else {}),
            "axis": variant.transform.axis,
            "calls": variant.transform.calls,
            "seed": variant.seed,
            "prompt_variant": variant.prompt_variant,
            "prompts": [
                {"origin": p.origin, "sha256": p.sha256, "text": p.text} for p in variant.prompts
            ],
            "token_budgets": variant.budget_descriptions(),
            "max_new_tokens": variant.cap,
            "budget_growth": BUDGET_GROWTH,
            **described,
            "sampling": variant.sampling.as_dict(),
            "max_attempts": variant.max_attempts,
            "source_language": source_language.code if source_language else None,
            "source_languages": {
                f: lang.code if lang else None for f, lang in zip(fields, languages, strict=True)
            },
            "language_pool": [lang.code for lang in variant.pool],
            **_drawn_languages(variant, used),
            "rows": {s: len(r) for s, r in out.items()},
            "status_counts": counts,
        },
    )
    return ConfigData(config_name(variant.base_name, subset, source.multi_subset), meta, out)


def _drawn_languages(variant: Variant, used: list[RowResult]) -> dict[str, list[str]]:
    """The target (translation) or pivot (back-translation) languages the rows used."""
    steps = variant.transform.steps
    drawn = [i for i, step in enumerate(steps) if step.language != SOURCE]
    codes = sorted({r.languages[i] for r in used if r.languages for i in drawn} - {""})
    if any(step.language == PIVOT for step in steps):
        return {"target_languages": [], "pivot_languages": codes}
    return {"target_languages": codes}


def _variant_row(
    row: DataRow,
    fields: tuple[str, ...],
    done: dict[str, dict[str, RowResult]],
    transform: str,
    pivot: bool,
) -> dict[str, object]:
    """The row with its fields rewritten, its originals kept, and one status for the row.

    A failed field stays empty rather than falling back to the original text, and the row's
    status names the first failure; a row with none is `identical` when a field is a kept
    unchanged back-translation, else `ok`. `language_<field>` is the language the field is now
    in; back-translation adds `pivot_<field>`; `status_<field>` is the field's own status
    (which text failed, and why: the probes use a control's fields one by one, and
    `--protocol hteb` and `hteb export` treat each text on its own). A control's status
    names a field's failure first, then `ok` if a field was made, and `not-applicable` only
    when none was. A list-valued field has each of these as a list, one entry per text
    (see listfields.py).
    """
    new = dict(row)
    statuses, attempts, reasons = [], [], []
    for field in fields:
        value = row[field]
        results = [done[field][t] for t in field_texts(value)]
        new[field] = regrouped(value, [r.text for r in results])
        new[f"original_{field}"] = value
        new[f"language_{field}"] = regrouped(
            value, [r.languages[-1] if r.languages else "" for r in results]
        )
        if pivot:
            new[f"pivot_{field}"] = regrouped(
                value, [r.languages[0] if r.languages else "" for r in results]
            )
        # each text's own status, so a row says which of its texts failed and why
        new[f"status_{field}"] = regrouped(value, [r.status for r in results])
        statuses += [r.status for r in results]
        attempts += [r.attempt for r in results]
        reasons += [r.finish_reason for r in results]
    # a failed field first; else identical (a kept back-translation), else ok when one
    # field was made, so a row whose other field had nothing to work on still counts as
    # made for --max-failure-rate
    failed = [s for s in statuses if s != NOT_APPLICABLE and not usable(s, transform)]
    if failed:
        new["status"] = failed[0]
    elif IDENTICAL in statuses:
        new["status"] = IDENTICAL
    else:
        new["status"] = OK if OK in statuses else NOT_APPLICABLE
    new["attempt"] = max(attempts, default=0)
    new["finish_reason"] = "length" if "length" in reasons else "stop"
    return new


def rule_config(
    source: Source,
    subset: str,
    splits: dict[str, list[DataRow]],
    variant: RuleVariant,
    done: dict[str, RowResult],
) -> ConfigData:
    """A rule-based control's config: each field perturbed, kept beside its original, with
    its own status and the row's (the first field's failure, if any)."""
    fields = source.text_fields
    out: dict[str, list[DataRow]] = {}
    counts: dict[str, dict[str, int]] = {}
    for split, rows in splits.items():
        out[split] = []
        for row in rows:
            new = dict(row)
            statuses = []
            for field in fields:
                results = [done[t] for t in field_texts(row[field])]
                new[field] = regrouped(row[field], [r.text for r in results])
                new[f"original_{field}"] = row[field]
                new[f"status_{field}"] = regrouped(row[field], [r.status for r in results])
                statuses += [r.status for r in results]
            new["status"] = next((s for s in statuses if s != OK), OK)
            new["attempt"] = 1  # a rule is applied once; kept for the row contract
            out[split].append(new)
        counts[split] = tally_status(out[split])
    transform = variant.transform
    meta = cast(
        ConfigRecord,
        {
            "kind": "control",
            "subset": subset,
            "settings_sha256": variant.settings_sha256(),
            "transform": transform.name,
            "transform_version": transform.version,
            "meaning": transform.meaning,
            "axis": None,
            "rule": transform.description,
            **variant.settings(),
            "rows": {s: len(r) for s, r in out.items()},
            "status_counts": counts,
        },
    )
    return ConfigData(config_name(variant.base_name, subset, source.multi_subset), meta, out)


def recorded_settings(record: ConfigRecord) -> dict[str, object]:
    """The settings a config's rows depend on (those its settings_sha256 hashes, beyond the
    transform and seed its name holds), as its record in shiftbench.json gives them."""
    if record.get("kind") == "control":
        return {k: record.get(k) for k in ("transform_version", "lexicon") if k in record}
    return {
        "transform_version": record.get("transform_version"),
        "prompts": [str(p.get("sha256", ""))[:12] for p in record.get("prompts", [])],
        "model": record.get("model"),
        "sampling": record.get("sampling"),
        "language_pool": record.get("language_pool"),
        "max_attempts": record.get("max_attempts"),
        "budget_growth": record.get("budget_growth"),
    }


def variant_settings(
    variant: Variant | RuleVariant, described: Mapping[str, Any]
) -> dict[str, object]:
    """What recorded_settings gives for the config `variant` would make now."""
    if isinstance(variant, RuleVariant):
        return {k: v for k, v in variant.settings().items() if k not in ("transform", "seed")}
    return {
        "transform_version": variant.transform.version,
        "prompts": [p.sha256[:12] for p in variant.prompts],
        "model": described.get("model"),
        "sampling": variant.sampling.as_dict(),
        "language_pool": [lang.code for lang in variant.pool],
        "max_attempts": variant.max_attempts,
        "budget_growth": BUDGET_GROWTH,
    }
