"""evaluate, probe and report: score encoders, run the alignment probes, combine results."""

from __future__ import annotations

from pathlib import Path

import click

from shiftbench.cli.commands.from_settings import (
    settings_options,
    settings_sections,
    settings_values,
)
from shiftbench.cli.commands.options import (
    CONTEXT,
    NamedResults,
    models_option,
    output_option,
    plots_option,
    quiet_option,
    source_options,
)
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.core.messages import counted
from shiftbench.core.records import ScoreRecord
from shiftbench.evaluate.settings import (
    EVALUATE_SECTIONS,
    PROBE_SECTIONS,
    EvalSettings,
    ProbeRunSettings,
)

# evaluate's and probe's --help sections: the settings' own (each field names its
# section), after the commands' own options of that section
EVALUATE = settings_sections(
    EvalSettings,
    EVALUATE_SECTIONS,
    {
        "Source": ("task_type", "data_dir", "subsets", "splits"),
        "Encoder": ("models",),
        "Output": ("output",),
    },
)
PROBE = settings_sections(
    ProbeRunSettings, PROBE_SECTIONS, {"Encoder": ("models",), "Output": ("output",)}
)


@click.command(cls=SectionedCommand, sections=EVALUATE, context_settings=CONTEXT)
@click.argument("target")
@source_options
@models_option
@settings_options(EvalSettings, skip=("output", "quiet"))
@output_option("Results folder. Default: shiftbench-results/<target>.")
@quiet_option
def evaluate(
    target: str,
    task_type: str | None,
    data_dir: str | None,
    subsets: tuple[str, ...],
    splits: tuple[str, ...],
    models: tuple[str, ...],
    output: Path | None,
    quiet: bool,
    **given: object,
) -> None:
    """Score encoders on TARGET: a run folder (original and every variant), a published
    release ORG/NAME@vX.Y.Z, or a source (MTEB task, local folder, sample).

    Scores follow mteb's protocol for the task type (main scores: STS cosine_spearman,
    PairClassification max_ap, Classification accuracy, Clustering v_measure, Retrieval
    ndcg_at_10, Reranking map_at_1000, Summarization cosine_spearman). For each variant,
    only rows whose status is ok are scored, and the original is scored again on those
    same rows, so the delta compares like with like, with a 95% interval from a paired
    bootstrap over the items (the same draws for every variant and model of a split). STS
    configs also get EvalRank (MRR, Hits@1/3 of the gold top-quartile pairs among every
    sentence of the split), and each variant self-retrieval (MRR, Hits@1/3 of each
    rewrite's own original among all originals). Control configs are left to 'shiftbench
    probe'. Classification trains on the original train split, and ranking tasks search
    the original corpus, for every config, unless the run rewrote them (gen --rewrite):
    then a variant uses its own, and a ranking variant is also scored query-side and
    corpus-side.

    The results folder holds results.json (everything), one mteb-style file per model
    and config (<model>/<revision>/<source>.<config>.json, the task shiftbench.mteb_tasks
    names), summary.json and report.md (the axis
    table: mean over seeds, then over an axis's transformations; total = mean of the
    axes; with the statistics) and plots/ (bars, heatmap, scatter). A folder that holds
    results of the same target and protocol keeps them: the models scored now are added
    (a model it holds at the same revision is replaced), and the report shows them all.
    """
    from shiftbench.core.tables import plain_table
    from shiftbench.evaluate.api import Evaluation
    from shiftbench.evaluate.report.tables import axis_rows
    from shiftbench.evaluate.results import COMMAND_RESULTS, format_table

    settings = EvalSettings(
        **settings_values(EvalSettings, given),
        task_type=task_type,
        data_dir=data_dir,
        subsets=subsets,
        splits=splits,
        output=output,
        quiet=quiet,
    )
    evaluation = Evaluation(target, settings, results_root=COMMAND_RESULTS)
    controls = evaluation.controls
    if controls:
        more = ", ..." if len(controls) > 3 else ""
        click.echo(
            f"{counted(len(controls), 'control config')} ({', '.join(controls[:3])}{more}) "
            f"{'is' if len(controls) == 1 else 'are'} left to 'shiftbench probe'"
        )
    main_score = evaluation.collection.source["main_score"]

    def show(model: str, records: list[ScoreRecord]) -> None:
        click.echo(format_table(model, main_score, records, evaluation.scoring.name))
        click.echo("")

    result = evaluation.score(models, on_model=show)
    if any(m["transforms"] for m in result.summary["models"].values()):
        click.echo(plain_table(*axis_rows(result.summary)))
        click.echo("")
    click.echo(f"results: {result.folder}")


@click.command(cls=SectionedCommand, sections=PROBE, context_settings=CONTEXT)
@click.argument("targets", metavar="TARGET...", nargs=-1, required=True)
@models_option
@settings_options(ProbeRunSettings, skip=("output", "quiet"))
@output_option(
    "Results folder. Default: shiftbench-results/<target>-probes (several targets' names "
    "joined by +)."
)
@quiet_option
def probe(
    targets: tuple[str, ...],
    models: tuple[str, ...],
    output: Path | None,
    quiet: bool,
    **given: object,
) -> None:
    """Task-free alignment probes (after ALIGN-SIM) of encoders on each TARGET, a run folder
    (or a release ORG/NAME@vX.Y.Z) that holds control configs ('shiftbench gen SOURCE -t
    controls'). Several TARGETs are several datasets of one probe run.

    Anchors are original texts that have a paraphrase; each gets a random partner from the
    same dataset. Per encoder and dataset, with cosine similarity and with normalised
    Euclidean distance (NED): criterion 1 (paraphrase closer than the random partner,
    the share of anchors averaged over a fixed margin grid, and the mean paraphrase and
    random-pair figures); criteria 2 and 4 (synonym-swap-n and affirmative-paraphrase,
    and with --negation-pairs the human-written pairs ALIGN-SIM uses: the mean figure
    adjusted with the random-pair mean averaged over the TARGETs; NED in both readings
    of ALIGN-SIM's equation 2, with the random-pair cosine inside as printed, and with
    the random-pair NED inside); and the
    share of anchors whose paraphrase is closer by more than each epsilon than the random
    partner, antonym-swap (criterion 3), word-jumble-n (criterion 5) and negation
    (shiftbench's own control). Writes probes.json, probes.md, probe-rows.jsonl and
    plots/probes-<measure>.png.
    """
    from shiftbench.evaluate.api import probe_encoders
    from shiftbench.evaluate.probes.tables import plain
    from shiftbench.evaluate.results import COMMAND_RESULTS

    values = settings_values(ProbeRunSettings, given)
    settings = ProbeRunSettings(**values, output=output, quiet=quiet)
    result = probe_encoders(targets, models, settings, results_root=COMMAND_RESULTS)
    folder, document = result.folder, result.document
    click.echo(plain(document))
    click.echo("")
    click.echo(f"results: {folder}")


@click.command(context_settings=CONTEXT)
@click.argument("results", nargs=-1, required=True, type=NamedResults())
@output_option("Folder for summary.json, report.md and plots/.", required=True)
@click.option(
    "--baseline",
    default=None,
    metavar="MODEL",
    help="Test every other model against this one (PTEB's comparison), per transformation.",
)
@click.option(
    "--split-half-draws",
    "draws",
    type=click.IntRange(min=100),
    default=1000,
    show_default=True,
    help="Random dataset splits for the split-half reliability.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the split-half splits and the baseline test's bootstrap.",
)
@plots_option
@click.option(
    "--html",
    is_flag=True,
    help="Also write report.html: the whole report as one page that opens offline in a "
    "browser (its plots embedded, nothing loaded from elsewhere).",
)
def report(
    results: tuple[tuple[str | None, Path], ...], output: Path, baseline: str | None,
    draws: int, seed: int, plots: bool, html: bool,
) -> None:  # fmt: skip
    """Combine evaluate results folders (several datasets) into one robustness report.

    Each RESULTS is a folder evaluate wrote (or its results.json); NAME=RESULTS shows
    the folder's one model as NAME (results of a model recorded under its path, say, or
    two folders' models told apart). Figures are averaged
    over seeds, then a dataset's subsets, then datasets (results all scored under
    --protocol hteb: each transformation over datasets before the axes, as HTEB's release
    averages); every delta carries its 95%
    paired bootstrap interval when evaluate computed one, and models whose total-delta
    intervals overlap share a rank. The statistics take one observation per dataset, as
    HTEB does: Wilcoxon signed-rank test of the deltas, Hodges-Lehmann shift with a 95%
    interval, Holm across transformations; HTEB's median absolute difference; Kendall's
    tau between the models' original and transformed rankings per dataset (mean ± SD);
    split-half reliability per axis; prompt sensitivity; and with --baseline PTEB's test
    of every model against the baseline.
    """
    from shiftbench.evaluate.report.summary import ReportSettings
    from shiftbench.evaluate.report.tables import text_report
    from shiftbench.evaluate.results import HTML_REPORT, named_results, write_outputs

    documents = [named_results(path, name, f"RESULTS {name}={path}") for name, path in results]
    settings = ReportSettings(baseline=baseline, split_half_draws=draws, seed=seed)
    summary = write_outputs(
        output, documents, per_config=False, plots=plots, settings=settings, html=html
    )
    click.echo(text_report(summary))
    click.echo("")
    click.echo(f"report: {output}")
    if html:
        click.echo(f"page: {output / HTML_REPORT}")


@click.command(context_settings=CONTEXT)
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@output_option("The folder to write the page to (index.html).", required=True)
def leaderboard(results: tuple[Path, ...], output: Path) -> None:
    """Write a leaderboard page of evaluate results folders: one self-contained HTML file.

    Each RESULTS is a folder evaluate wrote (or its results.json); several datasets and
    models are combined as `report` combines them. One report output folder may stand
    in for them (its summary, seeds averaged). The page (OUTPUT/index.html) opens
    from file:// with no server or network: models by original score, each axis's change
    and the total change (rewritten less original on the same rows) with 95% intervals
    and rank intervals (models whose intervals overlap share ranks and are marked tied),
    weak intervals marked as the report marks them, sortable columns, a drill-down per model
    to each dataset, transformation and seed, a chart per axis, the datasets and
    protocols covered, and links to the cards of the published releases scored.
    """
    from shiftbench.evaluate.leaderboard import write_leaderboard

    click.echo(f"leaderboard: {write_leaderboard(results, output)}")
