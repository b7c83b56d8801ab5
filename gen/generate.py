"""Rewrite a source's texts with a transform and write the results as run-folder configs."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.errors import InputError, RuntimeFault
from shiftbench.gen.backends import Backend, Generation, Request, Sampling
from shiftbench.gen.cache import GenerationCache, row_key
from shiftbench.gen.transforms import Prompt, Transform
from shiftbench.runfolder import ConfigData, check_target, config_name, write_run
from shiftbench.sources import TABULAR_TYPES, Source

OK = "ok"
EMPTY_OUTPUT = "empty-output"
EMPTY_INPUT = "empty-input"
CHUNK = 32  # rows sent to the backend between cache commits
BACKEND_TRIES = 3


@dataclass(frozen=True)
class RowResult:
    """The outcome for one unique input text."""

    text: str
    status: str
    attempt: int
    finish_reason: str


@dataclass(frozen=True)
class Variant:
    """One transform at one seed, with everything its outputs depend on."""

    transform: Transform
    prompt: Prompt
    seed: int
    sampling: Sampling
    max_attempts: int = 3

    @property
    def base_name(self) -> str:
        return f"{self.transform.name}-s{self.seed}"


def rewrite_texts(
    texts: list[str],
    variant: Variant,
    backend: Backend,
    cache: GenerationCache,
    *,
    quiet: bool = False,
) -> dict[str, RowResult]:
    """Rewrite each unique text once; identical texts share one result.

    A text whose output comes back empty is tried again with the next attempt's seed (when
    sampling; greedy decoding would only repeat itself), up to `variant.max_attempts`.
    """
    model = backend.describe()["model"]
    results = {t: RowResult("", EMPTY_INPUT, 0, "") for t in texts if not t.strip()}
    pending = [t for t in dict.fromkeys(texts) if t.strip()]
    attempts = variant.max_attempts if variant.sampling.temperature > 0 else 1
    progress = _progress(len(pending), variant.base_name, quiet)
    for attempt in range(1, attempts + 1):
        keys = {t: _row_key(t, variant, model, attempt) for t in pending}
        outputs = _generate_missing(keys, variant, backend, cache, progress)
        still_empty = []
        for text in pending:
            gen = outputs[keys[text]]
            if gen.text.strip():
                results[text] = RowResult(gen.text, OK, attempt, gen.finish_reason)
            else:
                still_empty.append(text)
                results[text] = RowResult("", EMPTY_OUTPUT, attempt, gen.finish_reason)
        pending = still_empty
        if not pending:
            break
        progress.total += len(pending) if attempt < attempts else 0
    progress.close()
    return results


def _row_key(text: str, variant: Variant, model: dict[str, Any], attempt: int) -> str:
    """Everything one output depends on (DESIGN.md, "Determinism"), and nothing else."""
    return row_key(
        text=text,
        transform=variant.transform.name,
        prompt=variant.prompt.sha256,
        model=model,
        sampling=variant.sampling.as_dict(),
        seed=variant.seed,
        target_language=None,
        attempt=attempt,
    )


def _generate_missing(
    keys: dict[str, str],
    variant: Variant,
    backend: Backend,
    cache: GenerationCache,
    progress: Any,
) -> dict[str, Generation]:
    """Outputs for every key: cached ones, then the rest generated chunk by chunk.

    Each chunk is committed to the cache as soon as it is done, so a crash loses at most
    the chunk in flight.
    """
    outputs = cache.get_many(list(keys.values()))
    todo = [t for t, k in keys.items() if k not in outputs]
    progress.update(len(keys) - len(todo))
    cap = variant.sampling.max_new_tokens
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        requests = [
            Request(
                variant.prompt.render(t),
                int(keys[t][:15], 16),
                variant.transform.token_budget(t, cap),
            )
            for t in chunk
        ]
        made = _call_backend(backend, requests, variant.sampling)
        fresh = {keys[t]: g for t, g in zip(chunk, made, strict=True)}
        cache.put_many(fresh)
        outputs.update(fresh)
        progress.update(len(chunk))
    return outputs


def _call_backend(
    backend: Backend, requests: list[Request], sampling: Sampling
) -> list[Generation]:
    for attempt in range(1, BACKEND_TRIES + 1):
        try:
            return backend.generate(requests, sampling)
        except InputError:
            raise
        except Exception as exc:  # any backend failure is retried, then reported
            if attempt == BACKEND_TRIES:
                raise RuntimeFault(
                    f"backend {backend.name} failed {BACKEND_TRIES} times; "
                    f"finished rows are cached ({type(exc).__name__}: {exc})"
                ) from exc
            time.sleep(0.5 * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def _progress(total: int, label: str, quiet: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(
        total=total, desc=label, unit="text", disable=quiet, file=sys.stderr, dynamic_ncols=True
    )


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
    }


def run_gen(
    source: Source,
    variants: list[Variant],
    backend: Backend,
    output: Path,
    *,
    cache: GenerationCache,
    limit: int | None = None,
    overwrite: bool = False,
    quiet: bool = False,
) -> list[str]:
    """Generate every variant of every subset of `source` into the run folder `output`.

    Everything that can be checked is checked before the first model call, so bad input
    writes nothing. Returns the names of the configs written.
    """
    if source.task_type not in TABULAR_TYPES:
        raise InputError(
            f"gen does not rewrite {source.task_type} tasks yet; it handles "
            f"{', '.join(TABULAR_TYPES)}"
        )
    data = {subset: _limited(source.load(subset), limit) for subset in source.subsets}
    for subset, splits in data.items():
        _check_text_columns(source, subset, {s: splits[s] for s in source.splits})
    names = [
        config_name(base, subset, source.multi_subset)
        for subset in source.subsets
        for base in ["original", *(v.base_name for v in variants)]
    ]
    recorded = {**source_meta(source), "row_limit": limit}
    meta = check_target(output, recorded, names[1:], overwrite)
    described = backend.describe()
    configs = []
    for subset, splits in data.items():
        if (
            meta is None
            or config_name("original", subset, source.multi_subset) not in meta["configs"]
        ):
            configs.append(_original_config(source, subset, splits))
        rewritten = {s: splits[s] for s in source.splits}
        for variant in variants:
            configs.append(
                _variant_config(
                    source, subset, rewritten, variant, backend, described, cache, quiet
                )
            )
    write_run(output, recorded, configs, meta)
    return [c.name for c in configs]


def _limited(splits: dict[str, Any], limit: int | None) -> dict[str, list[dict[str, Any]]]:
    rows = {split: ds.to_list() for split, ds in splits.items()}
    return {split: r[:limit] if limit else r for split, r in rows.items()}


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
    rows = {split: [{"row_id": i, **r} for i, r in enumerate(rs)] for split, rs in splits.items()}
    meta = {"kind": "original", "subset": subset, "rows": {s: len(r) for s, r in rows.items()}}
    return ConfigData(config_name("original", subset, source.multi_subset), meta, rows)


def _variant_config(
    source: Source,
    subset: str,
    splits: dict[str, list[dict[str, Any]]],
    variant: Variant,
    backend: Backend,
    described: dict[str, Any],
    cache: GenerationCache,
    quiet: bool,
) -> ConfigData:
    fields = source.text_fields
    texts = [r[f] for rows in splits.values() for r in rows for f in fields]
    done = rewrite_texts(texts, variant, backend, cache, quiet=quiet)
    out: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, dict[str, int]] = {}
    for split, rows in splits.items():
        out[split] = [_variant_row(i, row, fields, done) for i, row in enumerate(rows)]
        tally: dict[str, int] = {}
        for row in out[split]:
            tally[row["status"]] = tally.get(row["status"], 0) + 1
        counts[split] = dict(sorted(tally.items()))
    meta = {
        "kind": "transform",
        "subset": subset,
        "transform": variant.transform.name,
        "axis": variant.transform.axis,
        "seed": variant.seed,
        "prompt": {
            "origin": variant.prompt.origin,
            "sha256": variant.prompt.sha256,
            "text": variant.prompt.text,
        },
        **described,
        "sampling": variant.sampling.as_dict(),
        "max_attempts": variant.max_attempts,
        "target_languages": [],
        "rows": {s: len(r) for s, r in out.items()},
        "status_counts": counts,
    }
    return ConfigData(config_name(variant.base_name, subset, source.multi_subset), meta, out)


def _variant_row(
    index: int, row: dict[str, Any], fields: tuple[str, ...], done: dict[str, RowResult]
) -> dict[str, Any]:
    """The row with its fields rewritten, its originals kept, and one status for the row.

    A failed field stays empty rather than falling back to the original text, and the row's
    status names the first failure.
    """
    new = {"row_id": index, **row}
    statuses, attempts, reasons = [], [], []
    for field in fields:
        result = done[row[field]]
        new[field] = result.text
        new[f"original_{field}"] = row[field]
        statuses.append(result.status)
        attempts.append(result.attempt)
        reasons.append(result.finish_reason)
    new["status"] = next((s for s in statuses if s != OK), OK)
    new["attempt"] = max(attempts)
    new["finish_reason"] = "length" if "length" in reasons else "stop"
    return new
