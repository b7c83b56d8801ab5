"""Rewrite a source's texts with a transform and write the results as run-folder configs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from shiftbench.core.data.hubfolder import row_line
from shiftbench.core.data.jsonfiles import FIELD_KINDS, shown_value
from shiftbench.core.data.listfields import field_texts, misfit
from shiftbench.core.data.parts import (
    CORPUS,
    DEFAULT,
    check_rewrite,
    ranking_rows,
    rewritten_splits,
)
from shiftbench.core.data.runfolder import (
    GOLD_FIELDS,
    ConfigData,
    check_target,
    config_name,
    usable,
    write_run,
)
from shiftbench.core.data.source_languages import field_languages, with_detected
from shiftbench.core.data.sources import (
    LISTED_TYPES,
    RANKING_TYPES,
    TABULAR_TYPES,
    Source,
    source_meta,
)
from shiftbench.core.messages import differences, option
from shiftbench.core.protocols import check_protocol
from shiftbench.core.records import DataRow, RunExtras, RunMeta, SourceRecord
from shiftbench.core.text.languages import Language, draw
from shiftbench.core.text.transforms import PER_DATASET, PER_TEXT
from shiftbench.errors import InputError
from shiftbench.gen.configs import (
    SubsetVariant,
    original_config,
    recorded_settings,
    rule_config,
    variant_config,
    variant_settings,
)
from shiftbench.gen.controls import RuleVariant
from shiftbench.gen.rewrite import (
    NOT_APPLICABLE,
    RowResult,
    Variant,
    needs_source_language,
    rewrite_texts,
)
from shiftbench.gen.schedule import Jobs
from shiftbench.llm.backends import Backend
from shiftbench.llm.cache import GenerationCache


@dataclass(frozen=True)
class Prepared:
    """What gen read and checked before its first call, and the configs still to make."""

    data: dict[str, dict[str, list[DataRow]]]  # subset -> split -> rows
    languages: dict[str, tuple[Language | None, ...]]  # subset -> each field's language
    recorded: SourceRecord
    top: RunExtras
    meta: RunMeta | None  # the run folder's shiftbench.json, if it exists
    todo: list[tuple[str, Variant | RuleVariant]]  # (subset, variant) still to make
    parts: tuple[str, ...] = ()  # the run-folder splits a variant rewrites
    source: Source | None = None  # the source with the languages found for it


def check_gen(
    source: Source,
    variants: list[Variant | RuleVariant],
    output: Path,
    *,
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
    rewrite: tuple[str, ...] = DEFAULT,
    protocol: dict[str, Any] | None = None,
) -> Prepared:
    """Read the rows and check everything that needs no generator: a bad input raises
    InputError, and nothing is written. gen runs this before it loads a model, so a typo
    costs no model load. `rewrite` names the parts rewritten (shiftbench.core.data.parts):
    the scored texts, and a ranking corpus or a Classification train split. The configs to make are
    left for `prepare_gen`, which needs the generator's description."""
    if source.task_type not in (*TABULAR_TYPES, *RANKING_TYPES, *LISTED_TYPES):
        raise InputError(
            f"gen does not rewrite {source.task_type} tasks yet; it handles "
            f"{', '.join((*TABULAR_TYPES, *RANKING_TYPES, *LISTED_TYPES))}"
        )
    rewrite = check_rewrite(source.task_type, rewrite)
    if shard is not None and CORPUS in rewrite:
        raise InputError(
            f"{option('shard')} cannot split a rewritten corpus; run {option('rewrite')} "
            "corpus unsharded"
        )
    parts = rewritten_splits(source, rewrite)
    loaded = {subset: _rewritable(source, subset, rewrite) for subset in source.subsets}
    source = with_detected(source, loaded)  # before sharding, so every shard finds the same
    data = {s: _subset_rows(source, loaded[s], limit, shard) for s in source.subsets}
    for subset, splits in data.items():
        _check_text_columns(source, subset, {s: splits[s] for s in parts})
    languages = {s: field_languages(source.languages.get(s) or [], source.text_fields)
                 for s in source.subsets}  # fmt: skip
    for variant in variants:
        _check_languages(source, variant, languages)
    recorded = source_meta(source)
    recorded["row_limit"] = limit
    top: RunExtras = {"shard": {"index": shard[0], "count": shard[1]}} if shard else {}
    meta = check_target(output, recorded, top.get("shard"))
    if rewrite != DEFAULT:
        top["rewrite"] = list(rewrite)
    _check_rewrite_matches(output, meta, rewrite)
    if protocol is not None:
        check_protocol(output, meta, protocol["name"])
        top["protocol"] = protocol
    return Prepared(data, languages, recorded, top, meta, [], tuple(parts), source)


def prepare_gen(
    source: Source,
    variants: list[Variant | RuleVariant],
    described: Mapping[str, Any],
    output: Path,
    *,
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
    overwrite: bool = False,
    rewrite: tuple[str, ...] = DEFAULT,
    protocol: dict[str, Any] | None = None,
    checked: Prepared | None = None,
) -> Prepared:
    """`check_gen` (unless `checked` holds its result already) and the (subset, variant)
    configs still to make, given the generator's description `described` (gen and gen
    --dry-run): a bad input raises InputError, and nothing is written."""
    if checked is None:
        checked = check_gen(
            source, variants, output, limit=limit, shard=shard, rewrite=rewrite,
            protocol=protocol,
        )  # fmt: skip
    assert checked.source is not None
    todo = _configs_to_make(checked.source, variants, described, checked.meta, output, overwrite)
    return replace(checked, todo=todo)


def texts_to_rewrite(
    source: Source, splits: dict[str, list[DataRow]], parts: tuple[str, ...]
) -> tuple[dict[str, list[DataRow]], list[str]]:
    """The splits a variant rewrites, and their texts in order (repeats included); a
    list-valued field (Summarization's machine summaries) gives each of its texts."""
    rewritten = {s: splits[s] for s in parts}
    texts = [
        t
        for rows in rewritten.values()
        for r in rows
        for f in source.text_fields
        for t in field_texts(r[f])
    ]
    return rewritten, texts


def generate_run_folder(
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
    rewrite: tuple[str, ...] = DEFAULT,
    protocol: dict[str, Any] | None = None,
    checked: Prepared | None = None,
) -> list[ConfigData]:
    """Generate every variant of every subset of `source` into the run folder `output`.

    Everything that can be checked is checked before the first model call, so bad input
    writes nothing. With `shard` (index, count), only rows whose row_id % count == index are
    made; `shiftbench merge` puts the shards together. `backend` may be None when every
    variant is a rule-based control. `checked` is `check_gen`'s result for the same
    arguments, when the caller ran it already (before loading the backend). The variants'
    calls go to the backend as one stream when it serves many at once (gen/schedule.py).
    Returns the configs written.
    """
    described: Mapping[str, Any] = backend.describe() if backend is not None else {}
    ready = prepare_gen(
        source, variants, described, output, limit=limit, shard=shard, overwrite=overwrite,
        rewrite=rewrite, protocol=protocol, checked=checked,
    )  # fmt: skip
    data, languages, meta, todo = ready.data, ready.languages, ready.meta, ready.todo
    source = ready.source or source
    jobs: Jobs[ConfigData] = Jobs(backend, sum(isinstance(v, Variant) for _, v in todo))
    configs: list[ConfigData | Future[ConfigData]] = []
    starts = _hteb_starts(source, data, todo, ready.parts)
    for subset, splits in data.items():
        original = config_name("original", subset, source.multi_subset)
        if meta is None or original not in meta["configs"]:
            configs.append(original_config(splits, subset, original))
        rewritten, texts = texts_to_rewrite(source, splits, ready.parts)
        for variant in (v for sub, v in todo if sub == subset):
            if isinstance(variant, RuleVariant):
                ruled = variant.apply(texts)
                configs.append(rule_config(source, subset, rewritten, variant, ruled))
                continue
            assert backend is not None, "an LLM variant needs a backend"
            making = SubsetVariant(source, subset, rewritten, variant, described, languages[subset])
            job = _variant_job(making, splits, cache=cache, starts=starts, quiet=quiet)
            configs.append(jobs.submit(job))
    made = jobs.gather(configs)
    if not made:
        return []
    write_run(output, ready.recorded, made, meta, ready.top)
    return made


def _hteb_starts(
    source: Source,
    data: dict[str, dict[str, list[DataRow]]],
    todo: list[tuple[str, Variant | RuleVariant]],
    parts: tuple[str, ...],
) -> dict[str, int]:
    """Where each subset's texts start in HTEB's numbering, which runs across all of a
    dataset's subsets (its languages); none when no variant sends as HTEB's generator."""
    starts: dict[str, int] = {}
    if any(isinstance(v, Variant) and v.sampling.hteb for _, v in todo):
        from shiftbench.gen.hteb_slots import nonblank

        count = 0
        for subset, splits in data.items():
            starts[subset] = count
            rewritten = texts_to_rewrite(source, splits, parts)[0]
            count += nonblank(source, rewritten, splits)
    return starts


def _variant_job(
    making: SubsetVariant,
    splits: dict[str, list[DataRow]],
    *,
    cache: GenerationCache,
    starts: dict[str, int],
    quiet: bool,
) -> Callable[[Backend], ConfigData]:
    """The job that makes a subset's LLM variant with the engine it is given: as HTEB's
    generator sends its requests, or field by field."""

    def job(engine: Backend) -> ConfigData:
        if making.variant.sampling.hteb:  # as HTEB's generator sends
            from shiftbench.gen.hteb_requests import rewrite_subset

            return rewrite_subset(making, engine, cache, start=starts[making.subset],
                                  context=splits, quiet=quiet)  # fmt: skip
        done = _rewrite_fields(
            making.rows, making.source.text_fields, making.languages, making.variant, engine,
            cache, dataset_id=f"{making.source.name}/{making.subset}", quiet=quiet,
        )  # fmt: skip
        return variant_config(making, done)

    return job


@dataclass(frozen=True)
class FieldGroup:
    """The fields of a subset written in one language, their texts, and the variant they
    are rewritten with (a translation's pool without the subset's other languages)."""

    language: Language | None
    fields: tuple[str, ...]
    texts: list[str]
    variant: Variant


def field_groups(
    rewritten: dict[str, list[DataRow]],
    fields: tuple[str, ...],
    languages: tuple[Language | None, ...],
    variant: Variant,
) -> list[FieldGroup]:
    """One group per field language: each is rewritten with its language as the source
    language, so each field stays in (or returns to) its own.

    A dataset's translation target is one per (dataset, subset, seed): each group draws it
    from the pool without the other fields' languages, which leaves every group the same
    choices and so the same target.
    """
    groups = []
    for language in dict.fromkeys(languages):
        group = tuple(f for f, lang in zip(fields, languages, strict=True) if lang == language)
        texts = [t for rows in rewritten.values() for r in rows for f in group
                 for t in field_texts(r[f])]  # fmt: skip
        others = set(languages) - {language, None}
        own = variant
        if others and variant.transform.draw == PER_DATASET:
            own = replace(variant, pool=tuple(lang for lang in variant.pool if lang not in others))
        groups.append(FieldGroup(language, group, texts, own))
    return groups


def _rewrite_fields(
    rewritten: dict[str, list[DataRow]],
    fields: tuple[str, ...],
    languages: tuple[Language | None, ...],
    variant: Variant,
    backend: Backend,
    cache: GenerationCache,
    *,
    dataset_id: str,
    quiet: bool,
) -> dict[str, dict[str, RowResult]]:
    """Each field's results by input text: one rewrite_texts call per field group."""
    done: dict[str, dict[str, RowResult]] = {}
    for group in field_groups(rewritten, fields, languages, variant):
        results = rewrite_texts(
            group.texts, group.variant, backend, cache, source_language=group.language,
            dataset_id=dataset_id, quiet=quiet,
        )  # fmt: skip
        done.update({f: results for f in group.fields})
    return done


def _check_languages(
    source: Source,
    variant: Variant | RuleVariant,
    languages: dict[str, tuple[Language | None, ...]],
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
    missing = [s for s, langs in languages.items() if None in langs]
    if missing and needs_source_language(transform):
        raise InputError(
            f"{transform.name} needs the source language of "
            f"{source.name}[{missing[0]}]; name it with {option('source_language')}"
        )
    if transform.draw not in (PER_DATASET, PER_TEXT):
        return
    for subset, langs in languages.items():
        several = len(set(langs)) > 1
        if (
            transform.draw == PER_DATASET
            and several
            and not [lang for lang in variant.pool if lang not in langs]
        ):
            raise InputError(
                f"the language pool ({', '.join(lang.code for lang in variant.pool)}) has no "
                f"language other than the source languages of {source.name}[{subset}] "
                f"({', '.join(lang.code for lang in langs if lang)})"
            )
        for lang in dict.fromkeys(langs):
            if lang is not None:  # the draw gen makes per text, refused now as it would be then
                draw(variant.drawn_pool(), lang)


def _require_english(
    source: Source, languages: dict[str, tuple[Language | None, ...]], why: str
) -> None:
    """Refuse a subset known to be in another language than English, saying `why`."""
    other = {
        s: lang for s, langs in languages.items() for lang in langs if lang and lang.code != "en"
    }
    if other:
        subset, lang = next(iter(other.items()))
        raise InputError(f"{why}; {source.name}[{subset}] is in {lang.name}")


def _configs_to_make(
    source: Source,
    variants: list[Variant | RuleVariant],
    described: Mapping[str, Any],
    meta: RunMeta | None,
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
                held, wanted = (
                    existing[name].get("settings_sha256"),
                    variant.settings_sha256(described),
                )
                if held == wanted:
                    continue
                changed = differences(
                    recorded_settings(existing[name]), variant_settings(variant, described)
                ) or differences({"settings_sha256": held}, {"settings_sha256": wanted})
                raise InputError(
                    f"config {name!r} already exists in {output} with other settings "
                    f"({changed}); pass {option('overwrite')} to replace it"
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


def _rewritable(source: Source, subset: str, rewrite: tuple[str, ...] = DEFAULT) -> dict[str, Any]:
    """The splits a run folder holds. A ranking task's run folder holds its queries only:
    the corpus, judgements and candidates stay in the source (named with its revision in
    shiftbench.json), where evaluate reads them; unless the corpus is rewritten, when
    they come along (as `corpus/<split>` and so on) and the folder is self-contained."""
    loaded = source.load(subset)
    if source.task_type in RANKING_TYPES:
        keep = (*source.splits, *(source.context_splits if CORPUS in rewrite else ()))
        return {s: loaded[s] for s in keep}
    return loaded


def _subset_rows(
    source: Source,
    loaded: dict[str, Any],
    limit: int | None,
    shard: tuple[int, int] | None,
) -> dict[str, list[DataRow]]:
    """A subset's rows per run-folder split (`loaded`: its splits as _rewritable read
    them): the splits limited and sharded, a ranking context limited to what the kept
    queries need (shiftbench.core.data.parts)."""
    splits = dict(loaded)
    tables = {name: splits.pop(name) for name in list(splits) if "/" in name}
    rows = _rows(splits, limit, shard, source.schema.label_field)
    return {**rows, **(ranking_rows(source, rows, tables, limit) if tables else {})}


def _check_rewrite_matches(output: Path, meta: RunMeta | None, rewrite: tuple[str, ...]) -> None:
    """Refuse to add configs rewriting other parts than the folder's own."""
    held = tuple(meta.get("rewrite", DEFAULT)) if meta is not None else rewrite
    if held != rewrite:
        raise InputError(
            f"output {output} was made with {option('rewrite')} {','.join(held)}, not "
            f"{','.join(rewrite)}; choose another {option('output')}"
        )


def _rows(
    splits: dict[str, Any],
    limit: int | None,
    shard: tuple[int, int] | None,
    label_field: str | None = None,
) -> dict[str, list[DataRow]]:
    """Each split's rows with their `row_id` (position in the split), limited and sharded.
    With a `label_field` the limit spreads over the labels (spread_over_labels) instead of
    taking the first rows, which in a label-sorted split would all share one class."""
    out = {}
    for split, ds in splits.items():
        if limit and label_field and label_field in ds.column_names:
            kept = spread_over_labels(ds[label_field], limit)
            rows = [{"row_id": i, **ds[i]} for i in kept]
        else:
            listed = ds.to_list()[:limit] if limit else ds
            rows = [{"row_id": i, **r} for i, r in enumerate(listed)]
        if shard is not None:
            rows = [r for r in rows if r["row_id"] % shard[1] == shard[0]]
        out[split] = rows
    return out


def _refuse_at_line(source: Source, subset: str, split: str, index: int, field: str) -> None:
    """A local JSON Lines source's row that lacks a text field, or holds something else
    there, named by its file and line as the run folder's readers name a row; nothing when
    the row cannot be placed (another format, an MTEB task's columns)."""
    if source.mteb_task is not None:
        return
    folder = source.data_dir or Path(source.dataset_path)
    found = row_line(folder, subset, split, index)
    if found is None or found[1] is None:
        return
    where, row = found
    if field not in row:
        raise InputError(f"{where}: missing field(s) {field}")
    listed = field in source.schema.list_fields
    held = misfit(row[field], listed)
    if held is not None:
        kind = "null" if row[field] is None else held
        want = "a list of texts" if listed else "a string"
        raise InputError(f"{where}: field {field} must be {want}, not {kind}")


def _check_gold(source: Source, subset: str, split: str, rows: list[DataRow]) -> None:
    """The task's gold scores or labels hold what every later stage checks them for
    (runfolder.GOLD_FIELDS): a null or NaN score is refused here, naming the file and line
    of a local JSON Lines source, rather than carried into a run folder evaluate refuses."""
    for field, kind in GOLD_FIELDS.get(source.task_type, {}).items():
        allowed, what = FIELD_KINDS[kind]
        bad = next((r for r in rows if field in r and not allowed(r[field])), None)
        if bad is None:
            continue
        index = bad.get("row_id", rows.index(bad))
        found = None
        if source.mteb_task is None:
            found = row_line(source.data_dir or Path(source.dataset_path), subset, split, index)
        where = found[0] if found else f"{source.name}[{subset}/{split}] row {index}"
        raise InputError(f"{where}: field {field} must be {what}, not {shown_value(bad[field])}")


def spread_over_labels(labels: list[Any], limit: int) -> list[int]:
    """Positions of `limit` rows taken one label at a time, in turn: the first row of each
    label (labels in order of first appearance), then the second of each, and so on;
    returned in split order. Deterministic, and equal to the first `limit` rows when every
    row has its own label."""
    by_label: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        by_label.setdefault(json.dumps(label, sort_keys=True), []).append(i)
    queues = list(by_label.values())
    picked: list[int] = []
    depth = 0
    while len(picked) < limit and queues:
        queues = [q for q in queues if depth < len(q)]
        for q in queues[: limit - len(picked)]:
            picked.append(q[depth])
        depth += 1
    return sorted(picked)


def _check_text_columns(source: Source, subset: str, splits: dict[str, list[DataRow]]) -> None:
    for split, rows in splits.items():
        _check_gold(source, subset, split, rows)
        for field in source.text_fields:
            listed = field in source.schema.list_fields
            bad = next((i for i, r in enumerate(rows) if misfit(r[field], listed)), None)
            if bad is not None:
                _refuse_at_line(source, subset, split, rows[bad].get("row_id", bad), field)
                raise InputError(
                    f"column {field!r} of {source.name}[{subset}/{split}] holds "
                    f"{misfit(rows[bad][field], listed)} at row {bad}, "
                    f"not {'a list of texts' if listed else 'text'}"
                )
