"""evaluate, probe and report: score encoders, run the alignment probes, combine results."""

from __future__ import annotations

from pathlib import Path

import click

from shiftbench.cli.commands.options import (
    CONTEXT,
    EVAL,
    PROBE,
    NamedResults,
    OutputFolder,
    encoder_fields,
    encoder_options,
    plots_option,
    quiet_option,
    source_options,
)
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.core.messages import counted
from shiftbench.core.records import ScoreRecord
from shiftbench.evaluate.api import EVALRANK_POSITIVES, INTERVALS

# the encoder options' section (evaluate's and probe's)
ENCODERS = (
    "models", "batch_size", "device", "precision", "trust_remote_code", "model_kwargs",
    "encode_kwargs", "prompts", "cache_dir",
)  # fmt: skip
# evaluate --help's sections: title -> its options' parameter names, in the order shown
EVALUATE_SECTIONS = {
    "Source": ("task_type", "data_dir", "subsets", "splits"),
    "Encoder": ENCODERS,
    "Scoring": (
        "protocol", "faithful", "human_dirs", "resamples", "resample_seed", "interval",
        "evalrank_positives", "evalrank_centre",
    ),
    "Output": ("output", "plots"),
}  # fmt: skip


@click.command(cls=SectionedCommand, sections=EVALUATE_SECTIONS, context_settings=CONTEXT)
@click.argument("target")
@source_options
@encoder_options
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
    default=None,
    help="Results folder. Default: shiftbench-results/<target>.",
)
@click.option(
    "--faithful",
    default=None,
    metavar="CRITERION",
    help="Also score each transformation on the rows certified as meaning-preserving: "
    "judge>=4 (validate's LLM judges, 0-5), quality>=4, paraplue>0, a validation measure "
    "key with >=, >, <= or <, or human[>=3] (human-eval ratings of kept raters). A row "
    "counts when every text field passes. Run folders only.",
)
@click.option(
    "--human-eval",
    "human_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Human-eval batch folder with imported ratings, for --faithful human; repeatable. "
    "Default: the run's sibling human-eval/ folder (the layout 'shiftbench run' writes).",
)
@click.option(
    "--resamples",
    type=int,
    default=EVAL.resamples,
    show_default=True,
    help="Paired-bootstrap draws for each delta's 95% interval (at least 1000; 0 for no "
    "intervals).",
)
@click.option(
    "--resample-seed",
    type=int,
    default=EVAL.resample_seed,
    show_default=True,
    help="Seed of the bootstrap draws, made once per split and shared by every variant and model.",
)
@click.option(
    "--interval",
    type=click.Choice(INTERVALS),
    default=EVAL.interval,
    show_default=True,
    help="How each delta's 95% interval is read from the draws: percentile, or expanded "
    "(the expanded percentile interval: wider on few items, where the percentile one "
    "covers less than 95%; about equal from a few hundred items).",
)
@click.option(
    "--evalrank-positives",
    type=click.Choice(EVALRANK_POSITIVES),
    default=EVAL.evalrank_positives,
    show_default=True,
    help="EvalRank's 'top 25%' of STS pairs: quantile (every pair at or above the 75th "
    "percentile of gold, ties at the cut kept) or exact (the top quarter exactly, ties "
    "broken by row order).",
)
@click.option(
    "--evalrank-centre/--no-evalrank-centre",
    default=EVAL.evalrank_centre,
    show_default=True,
    help="Centre the embeddings (subtract the split's mean sentence vector) before "
    "EvalRank ranks, as its authors' released code does; the paper does not say so.",
)
@click.option(
    "--protocol",
    default=None,
    metavar="NAME",
    help="Scoring protocol: shiftbench (mteb's), pteb or hteb (Classification: one "
    "logistic regression fitted on the whole train split; hteb also scores a failed "
    "rewrite with its original text in its place, as HTEB's release does, where the "
    "others leave the row out, reports HTEB's main scores for pair classification "
    "(cosine AP), summarisation (one Spearman over all summaries) and reranking (mean "
    "AP over each query's candidates), seeds clustering with the evaluation seed, "
    "pools a multilingual dataset's subsets into one score, loads encoders in "
    "bfloat16 and prints scores x100 with two decimals, as HTEB's tables do; "
    "results.json keeps mteb's scale). "
    "Default: the "
    "protocol the run folder was made with, else shiftbench.",
)
@plots_option
@quiet_option
def evaluate(
    target: str,
    task_type: str | None,
    data_dir: str | None,
    subsets: tuple[str, ...],
    splits: tuple[str, ...],
    models: tuple[str, ...],
    batch_size: int,
    device: str | None,
    precision: str | None,
    trust_remote_code: bool,
    model_kwargs: tuple[str, ...],
    encode_kwargs: tuple[str, ...],
    prompts: tuple[str, ...],
    cache_dir: Path | None,
    output: Path | None,
    faithful: str | None,
    human_dirs: tuple[Path, ...],
    resamples: int,
    resample_seed: int,
    interval: str,
    evalrank_positives: str,
    evalrank_centre: bool,
    protocol: str | None,
    plots: bool,
    quiet: bool,
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
    from shiftbench.evaluate.api import EvalSettings, Evaluation
    from shiftbench.evaluate.report.tables import axis_rows
    from shiftbench.evaluate.results import COMMAND_RESULTS, format_table

    settings = EvalSettings(
        task_type=task_type,
        data_dir=data_dir,
        subsets=subsets,
        splits=splits,
        batch_size=batch_size,
        device=device,
        precision=precision,
        **encoder_fields(trust_remote_code, model_kwargs, encode_kwargs, prompts),
        cache_dir=cache_dir,
        output=output,
        faithful=faithful,
        human_dirs=human_dirs,
        resamples=resamples,
        resample_seed=resample_seed,
        interval=interval,
        evalrank_positives=evalrank_positives,
        evalrank_centre=evalrank_centre,
        protocol=protocol,
        plots=plots,
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
        click.echo(format_table(model, main_score, records, evaluation.scoring["name"]))
        click.echo("")

    result = evaluation.score(models, on_model=show)
    if any(m["transforms"] for m in result.summary["models"].values()):
        click.echo(plain_table(*axis_rows(result.summary)))
        click.echo("")
    click.echo(f"results: {result.folder}")


# probe --help's sections: title -> its options' parameter names, in the order shown
PROBE_SECTIONS = {
    "Encoder": ENCODERS,
    "Probe": (
        "paraphrases", "min_score", "random_pairs", "negation_pairs", "seed", "epsilons",
    ),
    "Output": ("output", "plots"),
}  # fmt: skip


@click.command(cls=SectionedCommand, sections=PROBE_SECTIONS, context_settings=CONTEXT)
@click.argument("targets", metavar="TARGET...", nargs=-1, required=True)
@encoder_options
@click.option(
    "--epsilon",
    "epsilons",
    default=PROBE.epsilons,
    show_default=True,
    metavar="E[,E...]",
    help="Margins for the per-margin shares: an anchor passes when its paraphrase is closer "
    "than the other text by more than E (criterion 1's own average uses one fixed grid, "
    "-1 to 1 by 0.1, for both measures).",
)
@click.option(
    "--paraphrases",
    default=PROBE.paraphrases,
    show_default=True,
    metavar="gold|CONFIG",
    help="Where anchors get their paraphrase: gold pairs of the dataset (PairClassification "
    "label 1, STS score at or above --min-score), or an LLM transform config of the run "
    "folder (e.g. paraphrase-s1).",
)
@click.option(
    "--min-score",
    type=float,
    default=None,
    help="STS gold pairs: the lowest score that counts as a paraphrase. Default: 80% of "
    "the way up the score range (4.0 on 0-5).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the random partners.",
)
@click.option(
    "--random-pairs",
    type=click.Choice(["anchor", "label-0"]),
    default=PROBE.random_pairs,
    show_default=True,
    help="Criterion 1's random pairs: each anchor with a random text of its dataset, or "
    "ALIGN-SIM's (section 5.1): the label-0 pairs of PairClassification data shuffled, a "
    "row's first text with another row's second.",
)
@click.option(
    "--negation-pairs",
    type=click.Path(path_type=Path),
    default=None,
    metavar="FILE",
    help="Human-written pairs to score criterion 4 on, as ALIGN-SIM scores it on AFIN: JSON "
    "Lines, CSV or TSV with the fields negated and affirmative. Without it, criterion 4 "
    "is only the affirmative-paraphrase control's LLM rewrites (labelled C4-LLM).",
)
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
    default=None,
    help="Results folder. Default: shiftbench-results/<target>-probes (several targets' "
    "names joined by +).",
)
@click.option(
    "--plots/--no-plots",
    default=True,
    show_default=True,
    help="Write one histogram PNG per similarity measure.",
)
@quiet_option
def probe(
    targets: tuple[str, ...],
    models: tuple[str, ...],
    epsilons: str,
    paraphrases: str,
    min_score: float | None,
    seed: int,
    random_pairs: str,
    negation_pairs: Path | None,
    batch_size: int,
    device: str | None,
    precision: str | None,
    trust_remote_code: bool,
    model_kwargs: tuple[str, ...],
    encode_kwargs: tuple[str, ...],
    prompts: tuple[str, ...],
    cache_dir: Path | None,
    output: Path | None,
    plots: bool,
    quiet: bool,
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
    from shiftbench.evaluate.api import ProbeRunSettings, probe_encoders
    from shiftbench.evaluate.probes.tables import plain
    from shiftbench.evaluate.results import COMMAND_RESULTS

    settings = ProbeRunSettings(
        epsilons=epsilons, paraphrases=paraphrases, min_score=min_score, seed=seed,
        random_pairs=random_pairs, negation_pairs=negation_pairs, batch_size=batch_size,
        device=device, precision=precision,
        cache_dir=cache_dir,
        output=output, plots=plots, quiet=quiet,
        **encoder_fields(trust_remote_code, model_kwargs, encode_kwargs, prompts),
    )  # fmt: skip
    result = probe_encoders(targets, models, settings, results_root=COMMAND_RESULTS)
    folder, document = result.folder, result.document
    click.echo(plain(document))
    click.echo("")
    click.echo(f"results: {folder}")


@click.command(context_settings=CONTEXT)
@click.argument("results", nargs=-1, required=True, type=NamedResults())
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
    required=True,
    help="Folder for summary.json, report.md and plots/.",
)
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
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
    required=True,
    help="The folder to write the page to (index.html).",
)
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
