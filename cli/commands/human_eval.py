"""human-eval: rating batches, their exports, imported ratings and the report."""

from __future__ import annotations

from pathlib import Path

import click

from shiftbench.cli.commands.options import (
    BATCH,
    CONTEXT,
    OutputFolder,
    option_type,
)
from shiftbench.core.messages import counted
from shiftbench.human_eval.api import BatchSettings, ExportSettings

EXPORT = ExportSettings()  # export's option defaults are the settings' own


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
@click.option(
    "--scheme", type=option_type(BatchSettings, "scheme"), default=BATCH.scheme,
    show_default=True,
    help="quality: rewrite quality and fluency, 1-5; similarity: meaning similarity, 0-5.",
)  # fmt: skip
@click.option(
    "--scheme-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Your own instructions, labels and examples, shaped like the packaged scheme "
    "(human_eval/schemes/<scheme>.json).",
)  # fmt: skip
@click.option(
    "--per-stratum", type=option_type(BatchSettings, "per_stratum"),
    default=BATCH.per_stratum, show_default=True,
    help="Items drawn per stratum (a transformation, and its output language when that "
    "differs from the source's).",
)  # fmt: skip
@click.option("--raters", type=option_type(BatchSettings, "raters"), default=BATCH.raters,
              show_default=True,
              help="Batches to make: one per rater.")  # fmt: skip
@click.option(
    "--controls", type=option_type(BatchSettings, "controls"), default=BATCH.controls,
    show_default=True,
    help="Control pairs per batch: each is one easy positive (a text and itself) and one "
    "easy negative (two unrelated texts).",
)  # fmt: skip
@click.option("--tolerance", type=option_type(BatchSettings, "tolerance"), default=BATCH.tolerance,
              show_default=True,
              help="How far a control rating may be from the expected one.")  # fmt: skip
@click.option("--seed", type=int, default=BATCH.seed, show_default=True,
              help="Seed of the sample, the controls and every batch's order.")  # fmt: skip
def human_eval_batch(
    run: Path, output: Path, scheme: str, scheme_file: Path | None, per_stratum: int,
    raters: int, controls: int, tolerance: float, seed: int,
) -> None:  # fmt: skip
    """Sample RUN's rewrites into rating batches, stratified by transformation."""
    from shiftbench.human_eval.api import BatchSettings, make_batches

    settings = BatchSettings(
        scheme=scheme, scheme_file=scheme_file, per_stratum=per_stratum, raters=raters,
        controls=controls, tolerance=tolerance, seed=seed,
    )  # fmt: skip
    click.echo(make_batches(run, output, settings).summary())


@human_eval.command("export", context_settings=CONTEXT)
@click.argument("batch", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=option_type(ExportSettings, "fmt"),
    default=EXPORT.fmt, show_default=True,
    help="html: a self-contained rating form per batch; mturk: HIT template and batch CSV "
    "(also Turkle, localturk); labelstudio: tasks and labeling config; argilla: the folder "
    "argilla.Dataset.from_disk loads; prolific: the html forms for a Prolific study (needs "
    "--completion-code).",
)  # fmt: skip
@click.option("--items-per-hit", type=option_type(ExportSettings, "items_per_hit"),
              default=EXPORT.items_per_hit, show_default=True,
              help="Items per MTurk HIT (mturk format).")  # fmt: skip
@click.option("--completion-code", default=None, metavar="CODE",
              help="prolific format: the study's completion code, shown (with the link back "
              "to Prolific) once the ratings are in. The rater id is the URL's PROLIFIC_PID; "
              "give the study URL ?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
              "&SESSION_ID={{%SESSION_ID%}}.")  # fmt: skip
@click.option("--submit-url", default=None, metavar="URL",
              help="prolific format: POST each participant's ratings CSV here (as text/plain; "
              "the endpoint must allow cross-origin requests). Default: the form downloads "
              "it.")  # fmt: skip
def human_eval_export(
    batch: Path, fmt: str, items_per_hit: int, completion_code: str | None, submit_url: str | None
) -> None:
    """Write BATCH's rating batches as files for raters, into BATCH/export/<format>/."""
    from shiftbench.human_eval.api import export_batches
    from shiftbench.human_eval.export import EXPORT_DIR

    written = export_batches(batch, fmt, items_per_hit, completion_code, submit_url)
    click.echo(f"wrote {counted(len(written), 'file')} to {batch / EXPORT_DIR / fmt}")


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
