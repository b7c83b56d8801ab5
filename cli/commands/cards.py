"""card, publish and verify: a run folder's dataset card and its frozen releases on the Hub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from shiftbench.cards.settings import RELEASE_SECTIONS, ReleaseSettings
from shiftbench.cli.commands.from_settings import (
    settings_options,
    settings_sections,
    settings_values,
)
from shiftbench.cli.commands.options import CONTEXT, quiet_option
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.core.messages import counted
from shiftbench.errors import RuntimeFault

# what card's options say otherwise than publish's (the fields' own help): the card only
# names the repository and version in its load snippets, and shows its run folder's files
CARD: dict[str, dict[str, Any]] = {
    "repo": {"help": "The Hub repository (ORG/NAME) the load snippets name."},
    "version": {"help": "The version (X.Y.Z) the load snippets name."},
    "data_format": {
        "default": "jsonl",
        "help": "The data files the card names: the run folder's own JSON Lines, or the "
        "Parquet files a release holds (a preview of the release's card; needs --output).",
    },
}
# a release needs both, and its files are Parquet unless asked otherwise
PUBLISH: dict[str, dict[str, Any]] = {
    "repo": {"required": True},
    "version": {"required": True},
    "data_format": {"default": "parquet"},
}


@click.command(context_settings=CONTEXT)
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@settings_options(ReleaseSettings, skip=("private",), changes=CARD)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the card here instead of RUN/README.md.",
)
def card(run: Path, output: Path | None, **given: Any) -> None:
    """Write the dataset card of a run folder (RUN/README.md).

    The card's YAML (license, languages, task categories, sizes, source, configs with
    `original` the default, features, and with --results a model-index) and its text
    (configs, generation settings, validation and human-eval figures, results, how to load
    and evaluate, citation, limitations) come from the folder's shiftbench.json,
    validation.json, the --human-eval reports and the --results folders. Every config is
    loaded first, with the builder load_dataset uses for its files, and the card is read
    back by datasets.
    """
    from shiftbench.cards.api import write_card

    settings = ReleaseSettings(**settings_values(ReleaseSettings, given))
    click.echo(f"card: {write_card(run, settings, output)}")


# publish --help's sections: the settings' own (each field names its section), --dry-run
# closing the release's
_SECTIONS = settings_sections(ReleaseSettings, RELEASE_SECTIONS, {})
PUBLISH_SECTIONS = {**_SECTIONS, "Release": (*_SECTIONS["Release"], "dry_run")}


@click.command(cls=SectionedCommand, sections=PUBLISH_SECTIONS, context_settings=CONTEXT)
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@settings_options(ReleaseSettings, changes=PUBLISH)
@click.option("--dry-run", is_flag=True, help="Print the plan; upload, create and tag nothing.")
@quiet_option
def publish(run: Path, dry_run: bool, quiet: bool, **given: Any) -> None:
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
    from shiftbench.cards.api import publish_release

    settings = ReleaseSettings(**settings_values(ReleaseSettings, given))
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
