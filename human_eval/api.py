"""human_eval as a library: rating batches out, ratings in, a screened report.

Each function is one `shiftbench human-eval` command and writes what it writes:

    >>> from shiftbench.human_eval.api import (
    ...     BatchSettings, ExportSettings, export_batches, make_batches)
    >>> batch = make_batches("runs/sample", "runs/sample-human", BatchSettings(raters=2))
    >>> export_batches(batch.folder, ExportSettings("mturk"))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shiftbench.core.messages import counted
from shiftbench.core.ratings import read_batch, read_ratings
from shiftbench.core.records import BatchDescription, HumanEvalReport
from shiftbench.human_eval.batches import Plan, build, load_scheme, write
from shiftbench.human_eval.export import EXPORT_DIR, export
from shiftbench.human_eval.ingest import canonical, write_ratings
from shiftbench.human_eval.settings import BatchSettings, ExportSettings

__all__ = [
    "BatchResult",
    "BatchSettings",
    "ExportSettings",
    "ImportResult",
    "export_batches",
    "import_ratings",
    "make_batches",
    "report_ratings",
]


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


def export_batches(batch: str | Path, settings: ExportSettings | None = None) -> list[Path]:
    """Write a batch folder's batches as files for raters, into BATCH/export/<fmt>/.

    Args:
        batch: The batch folder.
        settings: The format and its options; None: ExportSettings() (html).

    Returns:
        The files written.
    """

    settings = settings or ExportSettings()
    folder = Path(batch)
    description, table = read_batch(folder)
    description["items_per_hit"] = settings.items_per_hit
    if settings.completion_code is not None:
        description["prolific"] = {
            "completion_code": settings.completion_code,
            "submit_url": settings.submit_url,
        }
    return export(description, table, settings.fmt, folder / EXPORT_DIR / settings.fmt)


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
