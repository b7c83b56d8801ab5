"""human-eval: rating batches, their exports, imported ratings and the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from shiftbench.cli.commands.from_settings import settings_options, settings_values
from shiftbench.cli.commands.options import CONTEXT, OutputFolder
from shiftbench.core.messages import counted
from shiftbench.human_eval.settings import BatchSettings, ExportSettings


@click.group("human-eval", context_settings=CONTEXT)
def human_eval() -> None:
    """Human ratings of a run folder's rewrites: batch, export, import, report.

    batch samples items into rating batches (one per rater, with control items); export
    writes them as rating forms; import reads the raters' files back; report screens
    raters on the controls and writes mean ± SD, acceptance, Gwet's AC2 and Krippendorff's
    alpha.
    """


@human_eval.command("batch", context_settings=CONTEXT)
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--output", "-o", type=OutputFolder(), required=True,
    help="Folder for the batch (items.jsonl, batch.json); it must not hold one already.",
)  # fmt: skip
@settings_options(BatchSettings)
def human_eval_batch(run: Path, output: Path, **given: Any) -> None:
    """Sample RUN's rewrites into rating batches, stratified by transformation."""
    from shiftbench.human_eval.api import make_batches

    settings = BatchSettings(**settings_values(BatchSettings, given))
    click.echo(make_batches(run, output, settings).summary())


@human_eval.command("export", context_settings=CONTEXT)
@click.argument("batch", type=click.Path(file_okay=False, path_type=Path))
@settings_options(ExportSettings)
def human_eval_export(batch: Path, **given: Any) -> None:
    """Write BATCH's rating batches as files for raters, into BATCH/export/<format>/."""
    from shiftbench.human_eval.api import export_batches
    from shiftbench.human_eval.export import EXPORT_DIR

    settings = ExportSettings(**settings_values(ExportSettings, given))
    written = export_batches(batch, settings)
    click.echo(f"wrote {counted(len(written), 'file')} to {batch / EXPORT_DIR / settings.fmt}")


@human_eval.command("import", context_settings=CONTEXT)
@click.argument("batch", type=click.Path(file_okay=False, path_type=Path))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def human_eval_import(batch: Path, files: tuple[Path, ...]) -> None:
    """Add the ratings in FILES to BATCH/ratings.jsonl: the HTML form's CSVs, MTurk (or
    Turkle) batch results CSVs, Label Studio JSON exports, Argilla records JSON.

    Every file is checked first; one bad line stops the import and nothing is written.
    """
    from shiftbench.human_eval.api import import_ratings

    click.echo(import_ratings(batch, files).summary())


@human_eval.command("report", context_settings=CONTEXT)
@click.argument("batch", type=click.Path(file_okay=False, path_type=Path))
@click.option("--threshold", type=float, default=3.0, show_default=True,
              help="Acceptance: an item's mean rating must reach it.")  # fmt: skip
@click.option("--weights", type=click.Choice(["ordinal", "linear", "quadratic", "identity"]),
              default="ordinal", show_default=True,
              help="Gwet's agreement weights (identity gives AC1).")  # fmt: skip
def human_eval_report(batch: Path, threshold: float, weights: str) -> None:
    """Screen raters on the controls and summarise BATCH's ratings.

    Per criterion, transformation and axis: mean ± SD, acceptance, Gwet's AC2, and
    Krippendorff's alpha with ordinal and with interval distances (95% intervals from 1000
    item bootstraps). Writes human_eval.json and human_eval.md into BATCH and prints the
    table.
    """
    from shiftbench.human_eval.api import report_ratings
    from shiftbench.human_eval.report import ratings_markdown

    click.echo(ratings_markdown(report_ratings(batch, threshold, weights)), nl=False)
