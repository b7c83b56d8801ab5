"""Croissant metadata of a release: `croissant.json`, JSON-LD that mlcroissant reads.

The document describes the release as the Croissant 1.0 vocabulary does: the dataset
(name, description, license, version, keywords, languages, citation), one FileObject per
Parquet data file with its sha256, and one RecordSet per card config and split whose
fields read that file's columns. Croissant's responsible-AI vocabulary (RAI 1.0) carries
what the rows are and how they were made: the source rewritten, the model and backend
that rewrote it, the prompts' hashes, the validation that followed, human ratings, and
what the release cannot vouch for. Users add to or replace those fields with
`--rai FIELD=TEXT`.

While a release is built the document is read back with mlcroissant (beside the loading
of the configs, in a child process where the platform forks: see `validating`); what it
rejects is an InputError before anything is sent, so a card never carries metadata that a
Croissant reader would refuse.
Nothing here reads the run folder's path or the Hub token.
"""

from __future__ import annotations

import gc
import json
import logging
import multiprocessing
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any

from shiftbench.cards.facts import source_place
from shiftbench.core.messages import counted
from shiftbench.core.records import RunMeta, ValidationReport
from shiftbench.errors import InputError

CROISSANT_FILE = "croissant.json"
# How long a validation running beside the release build may take before it is given up
# and done again in the calling process: mlcroissant needs about 10 ms per record set.
ASIDE_DEADLINE_S = 600.0
CONFORMS_TO = ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]

# Croissant's JSON-LD context for version 1.0, with the RAI prefix.
CONTEXT: dict[str, object] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

# The RAI fields a user may set with --rai, and whether each holds one text or a list.
RAI_FIELDS = {
    "dataCollection": "one",
    "dataCollectionType": "many",
    "dataCollectionMissingData": "one",
    "dataCollectionRawData": "one",
    "dataCollectionTimeframe": "many",
    "dataImputationProtocol": "one",
    "dataPreprocessingProtocol": "many",
    "dataManipulationProtocol": "one",
    "dataAnnotationProtocol": "many",
    "dataAnnotationPlatform": "many",
    "dataAnnotationAnalysis": "many",
    "annotationsPerItem": "one",
    "annotatorDemographics": "many",
    "machineAnnotationTools": "many",
    "dataBiases": "many",
    "dataUseCases": "many",
    "dataLimitations": "many",
    "dataSocialImpact": "one",
    "personalSensitiveInformation": "many",
    "dataReleaseMaintenancePlan": "one",
}


def parse_rai(items: tuple[str, ...]) -> list[tuple[str, str]]:
    """`--rai FIELD=TEXT` options as (field, text); an unknown field or empty text is an
    InputError naming it."""
    out = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip().removeprefix("rai:")
        if not sep or not text.strip():
            raise InputError(f"--rai takes FIELD=TEXT, got {item!r}")
        if key not in RAI_FIELDS:
            raise InputError(
                f"--rai: unknown Croissant RAI field {key!r}; known: {', '.join(RAI_FIELDS)}"
            )
        out.append((key, text.strip()))
    return out


def data_type(arrow_type: Any) -> tuple[str, bool]:
    """A Parquet column's Croissant dataType, and whether each row holds a list of them."""
    import pyarrow as pa

    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        inner, _ = data_type(arrow_type.value_type)
        return inner, True
    if pa.types.is_boolean(arrow_type):
        return "sc:Boolean", False
    if pa.types.is_integer(arrow_type):
        return "sc:Integer", False
    if pa.types.is_floating(arrow_type):
        return "sc:Float", False
    return "sc:Text", False


def _record_set(name: str, path: str, schema: Any) -> dict[str, object]:
    fields = []
    for column in schema:
        kind, repeated = data_type(column.type)
        entry: dict[str, object] = {
            "@type": "cr:Field",
            "@id": f"{name}/{column.name}",
            "name": column.name,
            "dataType": kind,
            "source": {"fileObject": {"@id": path}, "extract": {"column": column.name}},
        }
        if repeated:
            entry["repeated"] = True
        fields.append(entry)
    return {"@type": "cr:RecordSet", "@id": name, "name": name, "field": fields}


def _validated(meta: RunMeta, report: ValidationReport | None) -> list[str]:
    """How the rows were checked after generation, from validate's report."""
    if report is None:
        return ["The rows were not checked with shiftbench validate before release."]
    checked = {
        name: summary
        for name, summary in report.get("configs", {}).items()
        if name in meta["configs"]
        and meta["configs"][name].get("settings_sha256") == summary.get("settings_sha256")
    }
    if not checked:
        return ["No config was checked with shiftbench validate in its current form."]
    rows = sum(int(s.get("rows", 0)) for s in checked.values())
    failed = sum(int(s.get("failed_rows", 0)) for s in checked.values())
    language_id = report.get("language_id", {}).get("name", "?")
    out = [
        f"shiftbench validate checked {counted(len(checked), 'config')} ({counted(rows, 'row')}) "
        "with the checks "
        f"{', '.join(report.get('checks', []))} (language identification: {language_id}); "
        f"{counted(failed, 'row')} failed at least one check. Per-row results are in "
        "validation/<config>.jsonl; the checks do not change a row's status."
    ]
    measures = sorted({m for s in checked.values() for m in s.get("measures", {})})
    if measures:
        out.append(f"LLM-judge measures recorded per row: {', '.join(measures)}.")
    return out


def _named(part: Mapping[str, object] | None, key: str) -> str:
    """A recorded part's name (its `key`), "None" where the part or the key is missing."""
    return str(part.get(key) if part else None)


def _generated(meta: RunMeta, report: ValidationReport | None) -> dict[str, list[str]]:
    """The RAI fields shiftbench fills from the run's own record."""
    source = meta["source"]
    configs = meta["configs"]
    variants = {n: i for n, i in configs.items() if i.get("kind") == "transform"}
    controls = [n for n, i in configs.items() if i.get("kind") == "control"]
    models = sorted({_named(i.get("model"), "id") for i in variants.values()})
    backends = sorted({_named(i.get("backend"), "name") for i in variants.values()})
    transforms = sorted({str(i.get("transform")) for i in variants.values()})
    seeds = sorted({i["seed"] for i in variants.values() if i.get("seed") is not None})
    statuses: Counter[str] = Counter()
    for info in variants.values():
        for per_split in info.get("status_counts", {}).values():
            statuses.update(per_split)
    where = source_place(source)
    limit = source.get("row_limit")
    collection = (
        f"The config `original` holds rows of {where} as they are"
        + (f" (the first {limit} per split)" if limit else "")
        + ". Every other config rewrites the fields "
        + ", ".join(source.get("text_fields", []))
        + f" with the language model(s) {', '.join(models) or '-'} served by "
        + f"{', '.join(backends) or '-'}, one config per transformation ("
        + ", ".join(transforms)
        + f") and seed ({', '.join(str(s) for s in seeds) or '-'}). Each config's prompts, "
        "their sha256 and the sampling settings are recorded in shiftbench.json."
    )
    kinds = ["Machine-generated: LLM rewrites of an existing benchmark's texts"]
    if controls:
        kinds.append(f"Rule-based controls: {', '.join(controls)}")
    status = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) or "none"
    preprocessing = [
        "Each rewritten row carries its source text (original_<field>), a status, each "
        "rewritten field's own status (status_<field>, where the run recorded one) and the "
        f"attempt that produced it; statuses at generation: {status}. Rows whose status is "
        "not ok (or identical, for back-translation) are kept in the data and left out "
        "when scoring."
    ]
    annotation = _validated(meta, report)
    return {
        "dataCollection": [collection],
        "dataCollectionType": kinds,
        "dataCollectionRawData": [f"Source: {where}."],
        "dataPreprocessingProtocol": preprocessing,
        "dataAnnotationProtocol": annotation,
        "machineAnnotationTools": [f"{m} (rewriting)" for m in models],
        "dataUseCases": [
            "Measuring how much of a text-embedding model's score on the source task "
            "survives when its texts are reworded, resized or translated (original against "
            "variant, per robustness axis). Not meant for training."
        ],
        "dataBiases": [
            "The rows inherit the source dataset's biases; the rewrites add those of the "
            "rewriting model."
        ],
        "personalSensitiveInformation": [
            "Whatever the source dataset holds; the rewriting adds no collected data."
        ],
    }


def build(
    meta: RunMeta,
    schemas: dict[str, dict[str, tuple[str, Any]]],
    sha256: dict[str, str],
    *,
    name: str,
    description: str,
    license_value: str,
    keywords: list[str],
    languages: list[str],
    limitations: list[str],
    annotation: list[str],
    repo: str | None,
    version: str | None,
    cite_as: str | None,
    rai: list[tuple[str, str]],
    validation: ValidationReport | None = None,
) -> dict[str, object]:
    """The Croissant document of a release.

    `schemas` maps each card config to its splits' Parquet paths and Arrow schemas
    (`{config: {split: (path, schema)}}`); `sha256` maps every data file to its digest.
    """
    doc: dict[str, object] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": name,
        "description": description,
        "license": license_value,
        "keywords": keywords,
    }
    if languages:
        doc["inLanguage"] = languages
    if repo:
        doc["url"] = f"https://huggingface.co/datasets/{repo}"
    if version:
        doc["version"] = version.removeprefix("v")
    if cite_as:
        doc["citeAs"] = cite_as
    doc["distribution"], doc["recordSet"] = _distribution(schemas, sha256)
    fields = _generated(meta, validation)
    fields["dataLimitations"] = list(limitations)
    if annotation:
        fields["dataAnnotationAnalysis"] = list(annotation)
    for key, text in rai:
        if RAI_FIELDS[key] == "one":
            fields[key] = [text]
        else:
            fields.setdefault(key, []).append(text)
    for key in RAI_FIELDS:
        if key in fields:
            values = fields[key]
            doc[f"rai:{key}"] = values[0] if RAI_FIELDS[key] == "one" else values
    return doc


def _distribution(
    schemas: dict[str, dict[str, tuple[str, Any]]], sha256: dict[str, str]
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The data files (one per config and split, with its digest) and their record sets."""
    files: list[dict[str, object]] = []
    record_sets: list[dict[str, object]] = []
    for config, splits in schemas.items():
        for split, (path, schema) in splits.items():
            files.append({
                "@type": "cr:FileObject",
                "@id": path,
                "name": path,
                "contentUrl": path,
                "encodingFormat": "application/x-parquet",
                "sha256": sha256[path],
            })  # fmt: skip
            record_sets.append(_record_set(f"{config}/{split}", path, schema))
    return files, record_sets


def validate(doc: dict[str, object]) -> None:
    """Read `doc` with mlcroissant; what it reports as an error is one InputError line."""
    import mlcroissant as mlc

    for name in ("absl", "mlcroissant"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        mlc.Dataset(jsonld=json.loads(dumps(doc)))
    except (mlc.ValidationError, ValueError) as exc:
        raise InputError(f"the Croissant metadata does not validate: {first_issue(exc)}") from None


def _forks() -> bool:
    """Whether a child may be forked here: POSIX, but not macOS, whose system libraries do
    not survive a fork."""
    return sys.platform != "darwin" and "fork" in multiprocessing.get_all_start_methods()


class EarlyReader:
    """A child forked before the document exists: it imports mlcroissant while the caller
    converts and loads, then reads the document `validating` hands it."""

    def __init__(self, documents: Any, verdicts: Any) -> None:
        self.documents, self.verdicts = documents, verdicts

    def hand(self, doc: dict[str, object]) -> None:
        """Send `doc` to the child from a thread: the pipe holds less than a document, and
        the child reads only once its imports are done, which the caller need not wait for."""
        threading.Thread(target=self._send, args=(doc,), daemon=True).start()

    def _send(self, doc: dict[str, object]) -> None:
        # the child gone, or the pipe closed meanwhile: no verdict comes, and the caller
        # validates itself
        with suppress(OSError, ValueError):
            self.documents.send(doc)


@contextmanager
def early_reader(wanted: bool = True) -> Iterator[EarlyReader | None]:
    """An EarlyReader started now, or None where none is wanted or can be had (then
    `validating` imports mlcroissant and forks at its own start). Leaving the `with` ends
    the child."""
    if not wanted or not _forks():
        yield None
        return
    # a fork after tokenizers ran in parallel makes the library warn and turn itself off in
    # the child; publish is the one fork, so only here is its parallelism declined (set
    # process-wide, evaluate's encoding was 1.11-1.15x slower: issue 50)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    context = multiprocessing.get_context("fork")
    documents_out, documents_in = context.Pipe(duplex=False)
    verdicts_in, verdicts_out = context.Pipe(duplex=False)
    parents = (documents_in, verdicts_in)  # the child closes its copies of these
    child = context.Process(
        target=_read_when_handed, args=(documents_out, verdicts_out, parents), daemon=True
    )
    try:
        child.start()
    except OSError:  # no process to be had (a limit, memory): the check runs later, here
        for end in (documents_out, documents_in, verdicts_in, verdicts_out):
            end.close()
        yield None
        return
    documents_out.close()
    verdicts_out.close()
    try:
        yield EarlyReader(documents_in, verdicts_in)
    finally:
        documents_in.close()
        verdicts_in.close()
        child.kill()
        child.join()


def _read_when_handed(documents: Any, sender: Any, parents: tuple[Any, ...]) -> None:
    """The early child: mlcroissant imported, then the document read and judged as
    `_validate_in_child` judges it; no document (the caller failed first) ends it."""
    gc.disable()  # a short life: collecting the parent's heap would only cost time
    for end in parents:  # so that the parent's end closing is an end of input here
        end.close()
    try:
        import mlcroissant  # noqa: F401

        doc = documents.recv()
    except Exception:  # EOFError, or an import that fails: the parent validates itself
        return
    _validate_in_child(doc, sender)


@contextmanager
def validating(
    doc: dict[str, object] | None, early: EarlyReader | None = None
) -> Iterator[Callable[[], None]]:
    """`validate(doc)` started beside the body of the `with`; yields the function that
    waits for it and raises what `validate` raises (a no-op when `doc` is None).

    mlcroissant spends about 10 ms per record set in pure Python, as long as loading every
    config takes. Where the platform forks (POSIX, but not macOS) a child process reads the
    document while the caller loads and renders: the `early` reader, handed the document
    now, or else a child forked here. Anything but a verdict from the child (it died, or
    sent nothing within ASIDE_DEADLINE_S) makes the wait validate here instead, so the
    outcome is always mlcroissant's. Leaving the `with` ends a child forked here, waited
    for or not (an early one ends with its own `with`).
    """
    if doc is None:
        yield lambda: None
        return
    if early is not None:
        early.hand(doc)
        yield _waiting(doc, early.verdicts)
        return
    import mlcroissant  # noqa: F401  (imported once, here, not in every child)

    if not _forks():
        yield lambda: validate(doc)
        return
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # as in early_reader
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_validate_in_child, args=(doc, sender), daemon=True)
    try:
        child.start()
    except OSError:  # no process to be had (a limit, memory): the check runs here
        receiver.close()
        sender.close()
        yield lambda: validate(doc)
        return
    sender.close()
    try:
        yield _waiting(doc, receiver)
    finally:
        receiver.close()
        child.kill()
        child.join()


def _waiting(doc: dict[str, object], receiver: Any) -> Callable[[], None]:
    """The wait for a child's verdict on `doc` through `receiver`: an error raised as
    InputError, no verdict at all validated here."""

    def wait() -> None:
        try:
            verdict = receiver.recv() if receiver.poll(ASIDE_DEADLINE_S) else None
        except (EOFError, OSError):  # the child died without a verdict
            verdict = None
        if verdict is None:
            validate(doc)
        elif verdict:
            raise InputError(verdict)

    return wait


def _validate_in_child(doc: dict[str, object], sender: Any) -> None:
    """Sends "" when `doc` validates and the one-line error when it does not; any other
    failure sends nothing (the parent then validates itself and shows it)."""
    gc.disable()  # a short life: collecting the parent's heap would only cost time
    try:
        validate(doc)
    except InputError as exc:
        sender.send(str(exc))
    else:
        sender.send("")


def first_issue(exc: BaseException) -> str:
    """mlcroissant's report, reduced to its first error line."""
    lines = [line.strip(" -") for line in str(exc).splitlines() if line.strip(" -")]
    found = [line for line in lines if not line.lower().startswith(("found the following", "-"))]
    return (found or lines or [type(exc).__name__])[0]


def dumps(doc: dict[str, object]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
