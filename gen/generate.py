"""Rewrite a source's texts with a transform and write the results as run-folder configs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiftbench.errors import InputError
from shiftbench.gen.backends import Backend
from shiftbench.gen.cache import GenerationCache
from shiftbench.gen.controls import RuleVariant
from shiftbench.gen.languages import Language, get_language
from shiftbench.gen.protocols import check_protocol
from shiftbench.gen.rewrite import (
    BUDGET_GROWTH,
    NOT_APPLICABLE,
    RowResult,
    Variant,
    needs_source_language,
    rewrite_texts,
)
from shiftbench.gen.transforms import PIVOT, SOURCE
from shiftbench.runfolder import (
    IDENTICAL,
    OK,
    ConfigData,
    check_target,
    config_name,
    tally_status,
    usable,
    write_run,
)
from shiftbench.sources import RANKING_TYPES, TABULAR_TYPES, Source


def source_meta(source: Source) -> dict[str, Any]:
    """What shiftbench.json records about the source (also how folders are matched)."""
    return {
        "name": source.name,
        "task_type": source.task_type,
        "dataset_path": source.dataset_path,
        "revision": source.revision,
        "mteb_task": source.mteb_task,
        "subsets": list(source.subsets),
        "splits": list(source.splits),
        "context_splits": list(source.context_splits),
        "languages": source.languages,
        "main_score": source.main_score,
        "text_fields": list(source.text_fields),
        "score_range": list(source.score_range) if source.score_range else None,
        "license": source.license,
        # only where the task type has evaluation settings, so other run folders keep theirs
        **({"protocol": source.protocol} if source.protocol else {}),
    }


def run_gen(
    source: Source,
    variants: list[Variant | RuleVariant],
    backend: Backend | None,
    output: Path,
    *,
    cache: GenerationCache,
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
    overwrite: bool = False,
    quiet: bool = False,
    protocol: dict[str, Any] | None = None,
) -> list[ConfigData]:
    """Generate every variant of every subset of `source` into the run folder `output`.

    Everything that can be checked is checked before the first model call, so bad input
    writes nothing. With `shard` (index, count), only rows whose row_id % count == index are
    made; `shiftbench merge` puts the shards together. `backend` may be None when every
    variant is a rule-based control. Returns the configs written.
    """
    if source.task_type not in (*TABULAR_TYPES, *RANKING_TYPES):
        raise InputError(
            f"gen does not rewrite {source.task_type} tasks yet; it handles "
            f"{', '.join((*TABULAR_TYPES, *RANKING_TYPES))}"
        )
    data = {subset: _rows(_rewritable(source, subset), limit, shard) for subset in source.subsets}
    for subset, splits in data.items():
        _check_text_columns(source, subset, {s: splits[s] for s in source.splits})
    languages = {subset: subset_language(source, subset) for subset in source.subsets}
    for variant in variants:
        _check_languages(source, variant, languages)
    recorded = {**source_meta(source), "row_limit": limit}
    top = {"shard": {"index": shard[0], "count": shard[1]}} if shard else {}
    meta = check_target(output, recorded, top.get("shard"))
    if protocol is not None:
        check_protocol(output, meta, protocol["name"])
        top["protocol"] = protocol
    described = backend.describe() if backend is not None else {}
    todo = _configs_to_make(source, variants, described, meta, output, overwrite)
    configs = []
    for subset, splits in data.items():
        original = config_name("original", subset, source.multi_subset)
        if meta is None or original not in meta["configs"]:
            configs.append(_original_config(source, subset, splits))
        rewritten = {s: splits[s] for s in source.splits}
        texts = [r[f] for rows in rewritten.values() for r in rows for f in source.text_fields]
        for variant in (v for sub, v in todo if sub == subset):
            if isinstance(variant, RuleVariant):
                ruled = variant.apply(texts)
                configs.append(_rule_config(source, subset, rewritten, variant, ruled))
                continue
            assert backend is not None, "an LLM variant needs a backend"
            done = rewrite_texts(
                texts,
                variant,
                backend,
                cache,
                source_language=languages[subset],
                dataset_id=f"{source.name}/{subset}",
                quiet=quiet,
            )
            configs.append(_variant_config(source, subset, rewritten, variant, described, done))
    if not configs:
        return []
    write_run(output, recorded, configs, meta, top)
    return configs


def _check_languages(
    source: Source, variant: Variant | RuleVariant, languages: dict[str, Language | None]
) -> None:
    """Refuse a variant that cannot be made for the source's languages."""
    transform = variant.transform
    if isinstance(variant, RuleVariant):
        if variant.lexicon is not None:  # the jumble works on any language that spaces words
            _require_english(
                source, languages, f"{transform.name} looks words up in the English WordNet"
            )
        return
    if transform.negated_only:
        _require_english(source, languages, f"{transform.name} finds negations by English cues")
    missing = [s for s, lang in languages.items() if lang is None]
    if missing and needs_source_language(transform):
        raise InputError(
            f"{transform.name} needs the source language of "
            f"{source.name}[{missing[0]}]; name it with --source-language"
        )


def _require_english(source: Source, languages: dict[str, Language | None], why: str) -> None:
    """Refuse a subset known to be in another language than English, saying `why`."""
    other = {s: lang for s, lang in languages.items() if lang and lang.code != "en"}
    if other:
        subset, lang = next(iter(other.items()))
        raise InputError(f"{why}; {source.name}[{subset}] is in {lang.name}")


def _configs_to_make(
    source: Source,
    variants: list[Variant | RuleVariant],
    described: dict[str, Any],
    meta: dict[str, Any] | None,
    output: Path,
    overwrite: bool,
) -> list[tuple[str, Variant | RuleVariant]]:
    """(subset, variant) pairs still to generate.

    A config already in the folder with the same settings is complete and is skipped, so
    re-running a finished command does nothing; one with other settings is replaced only
    with --overwrite.
    """
    existing = meta["configs"] if meta else {}
    todo = []
    for subset in source.subsets:
        for variant in variants:
            name = config_name(variant.base_name, subset, source.multi_subset)
            if name in existing and not overwrite:
                if existing[name].get("settings_sha256") == variant.settings_sha256(described):
                    continue
                raise InputError(
                    f"config {name!r} already exists in {output} with other settings; pass "
                    "--overwrite to replace it"
                )
            todo.append((subset, variant))
    return todo


def failure_share(configs: list[ConfigData]) -> tuple[int, int]:
    """(failed rows, transformed rows) over the generated configs given; a control's
    not-applicable rows (nothing in them to work on) are neither, and a kept identical
    back-translation is no failure."""
    failed = total = 0
    for config in configs:
        if "rule" in config.meta:
            continue
        transform = config.meta.get("transform")
        for counts in config.meta.get("status_counts", {}).values():
            made = {status: n for status, n in counts.items() if status != NOT_APPLICABLE}
            total += sum(made.values())
            failed += sum(n for status, n in made.items() if not usable(status, transform))
    return failed, total


def _rewritable(source: Source, subset: str) -> dict[str, Any]:
    """The splits a run folder holds. A ranking task's run folder holds its queries only:
    the corpus, judgements and candidates stay in the source (named with its revision in
    shiftbench.json), where evaluate reads them."""
    loaded = source.load(subset)
    if source.task_type in RANKING_TYPES:
        return {s: loaded[s] for s in source.splits}
    return loaded


def _rows(
    splits: dict[str, Any], limit: int | None, shard: tuple[int, int] | None
) -> dict[str, list[dict[str, Any]]]:
    """Each split's rows with their `row_id` (position in the split), limited and sharded."""
    out = {}
    for split, ds in splits.items():
        rows = [{"row_id": i, **r} for i, r in enumerate(ds.to_list()[:limit] if limit else ds)]
        if shard is not None:
            rows = [r for r in rows if r["row_id"] % shard[1] == shard[0]]
        out[split] = rows
    return out


def _check_text_columns(
    source: Source, subset: str, splits: dict[str, list[dict[str, Any]]]
) -> None:
    for split, rows in splits.items():
        for field in source.text_fields:
            bad = next((i for i, r in enumerate(rows) if not isinstance(r[field], str)), None)
            if bad is not None:
                raise InputError(
                    f"column {field!r} of {source.name}[{subset}/{split}] holds "
                    f"{type(rows[bad][field]).__name__} at row {bad}, not text"
                )


def _original_config(
    source: Source, subset: str, splits: dict[str, list[dict[str, Any]]]
) -> ConfigData:
    meta = {"kind": "original", "subset": subset, "rows": {s: len(r) for s, r in splits.items()}}
    return ConfigData(config_name("original", subset, source.multi_subset), meta, splits)


def subset_language(source: Source, subset: str) -> Language | None:
    """The language of a subset's texts, from mteb's metadata or --source-language."""
    tags = source.languages.get(subset) or []
    return get_language(tags[0]) if tags else None


def _variant_config(
    source: Source,
    subset: str,
    splits: dict[str, list[dict[str, Any]]],
    variant: Variant,
    described: dict[str, Any],
    done: dict[str, RowResult],
) -> ConfigData:
    fields = source.text_fields
    pivot = any(step.language == PIVOT for step in variant.transform.steps)
    out: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, dict[str, int]] = {}
    control = variant.transform.control
    for split, rows in splits.items():
        out[split] = [
            _variant_row(row, fields, done, variant.transform.name, pivot, control) for row in rows
        ]
        counts[split] = tally_status(out[split])
    used = [done[r[f]] for rows in splits.values() for r in rows for f in fields]
    source_language = subset_language(source, subset)
    meta = {
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
        "token_budgets": [step.budget.describe() for step in variant.transform.steps],
        "max_new_tokens": variant.cap,
        "budget_growth": BUDGET_GROWTH,
        **described,
        "sampling": variant.sampling.as_dict(),
        "max_attempts": variant.max_attempts,
        "source_language": source_language.code if source_language else None,
        "language_pool": [lang.code for lang in variant.pool],
        **_drawn_languages(variant, used),
        "rows": {s: len(r) for s, r in out.items()},
        "status_counts": counts,
    }
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
    row: dict[str, Any],
    fields: tuple[str, ...],
    done: dict[str, RowResult],
    transform: str,
    pivot: bool,
    control: bool = False,
) -> dict[str, Any]:
    """The row with its fields rewritten, its originals kept, and one status for the row.

    A failed field stays empty rather than falling back to the original text, and the row's
    status names the first failure; a row with none is `identical` when a field is a kept
    unchanged back-translation, else `ok`. `language_<field>` is the language the field is now
    in; back-translation adds `pivot_<field>`. A control's row also has `status_<field>`,
    since the probes use each field on its own, and its status names a field's failure
    first, then `ok` if a field was made, and `not-applicable` only when none was.
    """
    new = dict(row)
    statuses, attempts, reasons = [], [], []
    for field in fields:
        result = done[row[field]]
        new[field] = result.text
        new[f"original_{field}"] = row[field]
        new[f"language_{field}"] = result.languages[-1] if result.languages else ""
        if pivot:
            new[f"pivot_{field}"] = result.languages[0] if result.languages else ""
        if control:
            new[f"status_{field}"] = result.status
        statuses.append(result.status)
        attempts.append(result.attempt)
        reasons.append(result.finish_reason)
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
    new["attempt"] = max(attempts)
    new["finish_reason"] = "length" if "length" in reasons else "stop"
    return new


def _rule_config(
    source: Source,
    subset: str,
    splits: dict[str, list[dict[str, Any]]],
    variant: RuleVariant,
    done: dict[str, RowResult],
) -> ConfigData:
    """A rule-based control's config: each field perturbed, kept beside its original, with
    its own status and the row's (the first field's failure, if any)."""
    fields = source.text_fields
    out: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, dict[str, int]] = {}
    for split, rows in splits.items():
        out[split] = []
        for row in rows:
            new = dict(row)
            for field in fields:
                new[field] = done[row[field]].text
                new[f"original_{field}"] = row[field]
                new[f"status_{field}"] = done[row[field]].status
            new["status"] = next(
                (new[f"status_{f}"] for f in fields if new[f"status_{f}"] != OK), OK
            )
            new["attempt"] = 1  # a rule is applied once; kept for the row contract
            out[split].append(new)
        counts[split] = tally_status(out[split])
    transform = variant.transform
    meta = {
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
    }
    return ConfigData(config_name(variant.base_name, subset, source.multi_subset), meta, out)
