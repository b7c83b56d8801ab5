"""card, publish and verify: a run folder's dataset card and its frozen releases on the Hub."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from shiftbench.cli.commands.options import (
    CONTEXT,
    quiet_option,
)
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.core.data.runfolder import DATA_FORMATS
from shiftbench.core.messages import counted
from shiftbench.errors import RuntimeFault


def release_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options the card and the release share."""
    func = click.option(
        "--human-eval",
        "human_eval_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="A human-eval batch folder with a report, to show in the card (repeatable).",
    )(func)
    func = click.option(
        "--results",
        "results",
        multiple=True,
        metavar="[NAME=]DIR",
        help="A shiftbench evaluate output folder of this run: its main scores go into the "
        "card's model-index and (publish) eval_results/<model>.yaml, under the name evaluate "
        "showed (-m NAME=PATH's NAME, a local model's own name). NAME= names the folder's "
        "one model (e.g. its Hub id); results whose model id is a local path (written by an "
        "older shiftbench) need it. A DIR whose name holds '=' is read as DIR (repeatable).",
    )(func)
    func = click.option(
        "--rai",
        multiple=True,
        metavar="FIELD=TEXT",
        help="Add to (or, for single-valued fields, replace) a Croissant responsible-AI "
        "field of croissant.json, e.g. dataLimitations='Only 8 rows per config.' "
        "(repeatable; Parquet only).",
    )(func)
    func = click.option(
        "--date-published",
        metavar="DATE",
        help="Croissant's datePublished, ISO 8601 (default: none, so equal content gives "
        "equal bytes; Parquet only).",
    )(func)
    return click.option(
        "--license",
        "license_id",
        help="The Hub license id to declare, when the source's license is not one "
        "(default: the source's, or 'other' with a note).",
    )(func)


def format_option(default: str | None, help_text: str) -> Callable[..., Any]:
    return click.option(
        "--format",
        "data_format",
        type=click.Choice(DATA_FORMATS),
        default=default,
        show_default=default is not None,
        help=help_text,
    )


@click.command(context_settings=CONTEXT)
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--repo", help="The Hub repository (ORG/NAME) the load snippets name.")
@click.option("--version", "version", help="The version (X.Y.Z) the load snippets name.")
@release_options
@format_option(
    "jsonl",
    "The data files the card names: the run folder's own JSON Lines, or the Parquet files "
    "a release holds (a preview of the release's card; needs --output).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the card here instead of RUN/README.md.",
)
def card(
    run: Path,
    repo: str | None,
    version: str | None,
    human_eval_dirs: tuple[Path, ...],
    results: tuple[str, ...],
    rai: tuple[str, ...],
    date_published: str | None,
    license_id: str | None,
    data_format: str,
    output: Path | None,
) -> None:
    """Write the dataset card of a run folder (RUN/README.md).

    The card's YAML (license, languages, task categories, sizes, source, configs with
    `original` the default, features, and with --results a model-index) and its text
    (configs, generation settings, validation and human-eval figures, results, how to load
    and evaluate, citation, limitations) come from the folder's shiftbench.json,
    validation.json, the --human-eval reports and the --results folders. Every config is
    loaded first, with the builder load_dataset uses for its files, and the card is read
    back by datasets.
    """
    from shiftbench.cards.api import ReleaseSettings, write_card

    settings = ReleaseSettings(
        repo=repo, version=version, human_dirs=human_eval_dirs, license_id=license_id,
        data_format=data_format, results=results, rai=rai, date_published=date_published,
    )  # fmt: skip
    click.echo(f"card: {write_card(run, settings, output)}")


# publish --help's sections: title -> its options' parameter names, in the order shown
PUBLISH_SECTIONS = {
    "Release": ("repo", "version", "data_format", "private", "dry_run"),
    "Card and metadata": ("license_id", "date_published", "rai", "results", "human_eval_dirs"),
}


@click.command(cls=SectionedCommand, sections=PUBLISH_SECTIONS, context_settings=CONTEXT)
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--repo", required=True, help="The Hub dataset repository, ORG/NAME.")
@click.option("--version", "version", required=True, help="The version, X.Y.Z; tagged vX.Y.Z.")
@release_options
@format_option(
    "parquet",
    "The release's data files: Parquet (typed; the Hub's viewer reads them as they are; "
    "with croissant.json) or JSON Lines as gen wrote them.",
)
@click.option("--private", is_flag=True, help="Create the repository as private.")
@click.option("--dry-run", is_flag=True, help="Print the plan; upload, create and tag nothing.")
@quiet_option
def publish(
    run: Path,
    repo: str,
    version: str,
    human_eval_dirs: tuple[Path, ...],
    results: tuple[str, ...],
    rai: tuple[str, ...],
    date_published: str | None,
    license_id: str | None,
    data_format: str,
    private: bool,
    dry_run: bool,
    quiet: bool,
) -> None:
    """Release the run folder RUN to the Hugging Face Hub as the frozen version vX.Y.Z.

    Checks the folder (metadata, data files, every config loading with its card), then
    uploads one commit: every config as Parquet (`original` the default config), the
    card, croissant.json (Croissant 1.0 with its responsible-AI fields, checked with
    mlcroissant), eval_results/ for --results, the other files of the folder, and a
    release manifest (every file's sha256); and tags that commit vX.Y.Z. A published
    version never changes: publishing it again is a no-op when the content is identical
    (a version published as JSON Lines is compared as such) and refused otherwise. If
    anything fails before the tag, no tag exists and the same command completes the
    release. The token comes from HF_TOKEN or 'hf auth login'; HF_ENDPOINT names another
    Hub.
    """
    from shiftbench.cards.api import ReleaseSettings, publish_release

    settings = ReleaseSettings(
        repo=repo, version=version, human_dirs=human_eval_dirs, license_id=license_id,
        private=private, data_format=data_format, results=results, rai=rai,
        date_published=date_published,
    )  # fmt: skip
    publish_release(run, settings, dry_run=dry_run, quiet=quiet)


@click.command(context_settings=CONTEXT)
@click.argument("release")
@click.option(
    "--load/--no-load", default=True, help="Also load every config (default) or only hash files."
)
@quiet_option
def verify(release: str, load: bool, quiet: bool) -> None:
    """Download a published RELEASE (ORG/NAME@vX.Y.Z) and check it against its manifest.

    Every file's size and sha256 must match shiftbench-release.json, no file may be
    missing or extra, and every config must load with its recorded row counts. Exit 1
    on any mismatch.
    """
    from shiftbench.cards.api import verify_release

    problems = verify_release(release, load=load, quiet=quiet)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    if problems:
        raise RuntimeFault(
            f"{release} does not match its manifest ({counted(len(problems), 'problem')})"
        )
    click.echo("verified: every file matches the manifest")
