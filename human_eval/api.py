"""human_eval as a library: rating batches out, ratings in, a screened report.

Each function is one `shiftbench human-eval` command and writes what it writes:

    >>> from shiftbench.human_eval.api import BatchSettings, export_batches, make_batches
    >>> batch = make_batches("runs/sample", "runs/sample-human", BatchSettings(raters=2))
    >>> export_batches(batch.folder, "html")
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from shiftbench.core.messages import counted
from shiftbench.core.ratings import read_batch, read_ratings
from shiftbench.core.records import BatchDescription, HumanEvalReport
from shiftbench.core.settings import check, chosen, ranged
from shiftbench.errors import InputError
from shiftbench.human_eval.batches import Plan, build, load_scheme, write
from shiftbench.human_eval.export import EXPORT_DIR, export
from shiftbench.human_eval.export import FORMATS as EXPORT_FORMATS
from shiftbench.human_eval.ingest import canonical, write_ratings


@dataclass(frozen=True)
class BatchSettings:
    """How rating batches are drawn; every field is the `shiftbench human-eval batch`
    option of its name.

    Attributes:
        scheme: Packaged rating scheme: "quality" (1-5) or "similarity" (0-5).
        scheme_file: Your own scheme (instructions, labels, examples), replacing it.
        per_stratum: Items drawn per stratum (a transformation, and its output language
            when that differs from the source's).
        raters: Batches to make, one per rater.
        controls: Control pairs per batch (an easy positive and an easy negative each).
        tolerance: How far a control rating may be from the expected one.
        seed: Seed of the sample, the controls and every batch's order.
    """

    scheme: str = chosen("quality", "quality", "similarity")
    scheme_file: Path | None = None
    per_stratum: int = ranged(50, low=1)
    raters: int = ranged(3, low=1)
    controls: int = ranged(1, low=1)
    tolerance: float = ranged(1.0, float, low=0)
    seed: int = 0

    def __post_init__(self) -> None:
        check(self)


@dataclass(frozen=True)
class BatchResult:
    """The batches written.

    Attributes:
        folder: The batch folder (items.jsonl, batch.json).
        raters: Batches made, one per rater.
        items_per_batch: Items in each batch, controls included.
        controls_per_batch: Control items in each batch.
        strata: Stratum -> items sampled from it.
        description: batch.json as written.
    """

    folder: Path
    raters: int
    items_per_batch: int
    controls_per_batch: int
    strata: dict[str, int]
    description: BatchDescription = field(repr=False, compare=False)

    def summary(self) -> str:
        """What `shiftbench human-eval batch` prints: a line of what was written, and when
        a stratum held fewer items than asked, a line naming each such stratum."""
        strata = ", ".join(f"{k} {v}" for k, v in self.strata.items())
        line = (
            f"wrote {counted(self.raters, 'batch', 'batches')} of "
            f"{counted(self.items_per_batch, 'item')} to {self.folder} "
            f"({strata}; controls {self.controls_per_batch} per batch)"
        )
        short = self.description.get("short_strata", {})
        if not short:
            return line
        asked = next(iter(short.values()))["asked"]
        fewer = ", ".join(f"{k} {v['sampled']}" for k, v in short.items())
        return f"{line}\nfewer items than the {asked} asked per stratum, all there were: {fewer}"


@dataclass(frozen=True)
class ImportResult:
    """Ratings added by an import.

    Attributes:
        added: Ratings read from the files.
        raters: Distinct raters among them.
        total: Ratings the batch folder holds now.
    """

    added: int
    raters: int
    total: int

    def summary(self) -> str:
        return (
            f"imported {counted(self.added, 'rating')} from "
            f"{counted(self.raters, 'rater')}; {self.total} in all"
        )


def make_batches(
    run: str | Path, output: str | Path, settings: BatchSettings | None = None
) -> BatchResult:
    """Sample a run folder's rewrites into rating batches, stratified by transformation.

    Raises:
        InputError: The run, the scheme or the output folder is not usable.
    """

    s = settings or BatchSettings()
    plan = Plan(
        load_scheme(s.scheme, s.scheme_file), s.per_stratum, s.raters, s.controls,
        s.tolerance, s.seed,
    )  # fmt: skip
    description, table = build(Path(run), plan)
    write(Path(output), description, table)
    return BatchResult(
        folder=Path(output),
        raters=s.raters,
        items_per_batch=description["items_per_batch"],
        controls_per_batch=description["controls_per_batch"],
        strata={k: v["sampled"] for k, v in description["strata"].items()},
        description=description,
    )


@dataclass(frozen=True)
class ExportSettings:
    """How `shiftbench human-eval export` writes a batch folder's batches.

    Attributes:
        fmt: The format: "html", "mturk", "labelstudio" or "argilla".
        items_per_hit: Items per MTurk HIT (mturk only).
        completion_code: The completion code of the Prolific study (prolific only, and
            required there): the form shows it, with the link back to Prolific, once the
            ratings are in.
        submit_url: Where the prolific form POSTs its ratings CSV (as text/plain; the
            endpoint must allow cross-origin requests). None: the form downloads the CSV.
    """

    fmt: str = chosen("html", *EXPORT_FORMATS)
    items_per_hit: int = ranged(10, low=1)
    completion_code: str | None = None
    submit_url: str | None = None

    def __post_init__(self) -> None:
        check(self)
        if self.fmt != "prolific":
            if self.completion_code is not None or self.submit_url is not None:
                raise InputError("--completion-code and --submit-url apply to --format prolific")
            return
        if self.completion_code is None:
            raise InputError(
                "--format prolific needs --completion-code, the code Prolific gives the study"
            )
        if not re.fullmatch(r"[A-Za-z0-9]{4,40}", self.completion_code):
            raise InputError(
                f"completion code {self.completion_code!r} is not 4 to 40 letters and digits"
            )
        if self.submit_url is not None:
            url = urlsplit(self.submit_url)
            if url.scheme not in ("http", "https") or not url.netloc:
                raise InputError(f"--submit-url {self.submit_url!r} is not an http(s) URL")


def export_batches(
    batch: str | Path,
    fmt: str = "html",
    items_per_hit: int = 10,
    completion_code: str | None = None,
    submit_url: str | None = None,
) -> list[Path]:
    """Write a batch folder's batches as files for raters, into BATCH/export/<fmt>/.

    Args:
        batch: The batch folder.
        fmt: "html", "mturk", "labelstudio" or "argilla".
        items_per_hit: Items per MTurk HIT (mturk only).
        completion_code: The Prolific study's completion code (prolific only, required).
        submit_url: Where the prolific form sends its ratings; None: it downloads them.

    Returns:
        The files written.
    """

    settings = ExportSettings(fmt, items_per_hit, completion_code, submit_url)
    folder = Path(batch)
    description, table = read_batch(folder)
    description["items_per_hit"] = settings.items_per_hit
    if settings.completion_code is not None:
        description["prolific"] = {
            "completion_code": settings.completion_code,
            "submit_url": settings.submit_url,
        }
    return export(description, table, fmt, folder / EXPORT_DIR / fmt)


def import_ratings(batch: str | Path, files: Sequence[str | Path]) -> ImportResult:
    """Add the ratings in `files` (the HTML form's CSVs, MTurk or Turkle results CSVs,
    Label Studio JSON exports, Argilla records JSON) to BATCH/ratings.jsonl.

    Every file is checked first; one bad line raises InputError and nothing is written.
    """

    folder = Path(batch)
    description, table = read_batch(folder)
    earlier = read_ratings(folder)
    new = canonical([Path(f) for f in files], description, table, earlier)
    write_ratings(folder, earlier + new)
    return ImportResult(len(new), len({r["rater_id"] for r in new}), len(earlier) + len(new))


def report_ratings(
    batch: str | Path, threshold: float = 3.0, weights: str = "ordinal"
) -> HumanEvalReport:
    """Screen raters on the controls, summarise the ratings (mean ± SD, acceptance,
    Gwet's AC2 with `weights`, Krippendorff's alpha with ordinal and interval distances),
    write human_eval.json and human_eval.md into the batch folder, and return the report."""
    from shiftbench.human_eval.report import summarise_ratings, write

    folder = Path(batch)
    description, table = read_batch(folder)
    doc = summarise_ratings(
        description, table, read_ratings(folder), threshold=threshold, weights=weights
    )
    write(folder, doc)
    return doc
