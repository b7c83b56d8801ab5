"""shiftbench hteb: HTEB's published transformation files, both ways."""

from __future__ import annotations

from pathlib import Path

import click

from shiftbench.cli.commands.options import CONTEXT, output_option


@click.group(context_settings=CONTEXT)
def hteb() -> None:
    """HTEB's published transformation files, read as a run folder and written from one.

    HTEB keeps each rewrite as a pair of files in
    <generator>/<dataset>/<transformation>/<seed>/: data_<hash>.parquet and
    metadata_<hash>.JSON. `hteb import` reads such a tree into a run folder that validate,
    evaluate (under --protocol hteb, which it records), probe, card and publish take;
    `hteb export` writes a run folder as such a tree, for HTEB's reuse mode.
    """


@hteb.command("import", context_settings=CONTEXT)
@click.argument("tree", type=click.Path(exists=True, file_okay=False, path_type=Path))
@output_option("The run folder to write (must not exist, or be empty).", required=True)
@click.option(
    "--generator",
    help="The generator to read, by Hub id or folder name, where TREE holds several.",
)
@click.option(
    "--dataset",
    help="The dataset to read, by HTEB's name (banking77, stsbenchmark-sts, ...), where "
    "TREE holds several.",
)
def hteb_import(tree: Path, output: Path, generator: str | None, dataset: str | None) -> None:
    """Read TREE, HTEB's transformation files, into a new run folder.

    TREE is a <generator>/<dataset> folder, a generator's folder, or the root that holds
    them (HTEB's data/transformations). Each <transformation>/<seed> folder gives one
    config, from the pair HTEB itself would read: every pair in it checked as HTEB's
    loader checks it, then the newest generation time (an undated data.parquet loses to
    any dated pair). `original` is the pairs' original records, which must be the same in
    all of them. A text HTEB's generator gave up on (empty in its file) gets the status
    fallback, an unchanged one identical. Transformation names become shiftbench's
    (paraphrasing: paraphrase, summarise: summarisation, cross_translation:
    cross-translation, ...); a translation's target languages are worked out by HTEB's
    rules, which its files do not store. Reads STS, pair classification, classification
    and per-language clustering datasets (MasakhaNEWS: a subset per language).
    """
    from shiftbench.gen.hteb import import_hteb

    click.echo(import_hteb(tree, output, generator=generator, dataset=dataset).summary())


@hteb.command("export", context_settings=CONTEXT)
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@output_option(
    "The root of the tree to write, HTEB's data/transformations (must not exist).", required=True
)
@click.option(
    "--generator",
    help="The generator's Hub id, where the run recorded a local model.",
)
def hteb_export(run: Path, output: Path, generator: str | None) -> None:
    """Write RUN as HTEB's transformation files, for HTEB's reuse mode.

    Each transform config HTEB has a transformation for becomes a pair in
    <generator>/<dataset>/<transformation>/<seed>/, with HTEB's two record columns and
    its metadata, checked against HTEB's rules as written. A text HTEB's generator would
    have given up on (still cut at its budget, or blank) is written empty, as HTEB writes
    its fallbacks. A config imported from HTEB gets its own metadata back; any other gets
    metadata from the run folder and no generation time (data.parquet, metadata.JSON).
    A per-language clustering run's subsets go into one pair each. The summary line says
    when HTEB's results will name other target languages than a translation config's
    texts are in.
    """
    from shiftbench.cards.hteb import export_hteb

    click.echo(export_hteb(run, output, generator=generator).summary())
