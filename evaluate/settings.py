"""evaluate's and probe's settings, each declared once: its type, default, bound or
choices, help and --help section live on its field, and `shiftbench evaluate`'s and
`shiftbench probe`'s options, the spec's evaluate keys, `init`'s starter spec and the spec
reference are all built from them. The encoder's settings (EncoderSettings) are declared
once for both commands.

    >>> from shiftbench.evaluate.settings import ProbeRunSettings
    >>> ProbeRunSettings(epsilons="0.1,0").epsilons
    (0.0, 0.1)

This module imports nothing heavy: the command line builds its options from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.settings import check, chosen, declared, ranged

PRECISIONS = ("float32", "float16", "bfloat16")  # the dtypes an encoder's weights load in
# how a delta's interval is read from its bootstrap draws (evaluate.resample.interval)
INTERVALS = ("percentile", "expanded")
EVALRANK_POSITIVES = ("quantile", "exact")  # evaluate.evalrank.POSITIVES
# criterion 1's random pairs (evaluate.probes.anchors.RANDOM_PAIRS says what each is)
RANDOM_PAIRS = ("anchor", "label-0")
DEFAULT_EPSILONS = (0.0, 0.05, 0.1, 0.2)

# the --help sections of evaluate's and probe's settings, in the order they are shown
EVALUATE_SECTIONS = ("Source", "Encoder", "Scoring", "Output")
PROBE_SECTIONS = ("Encoder", "Probe", "Output")


def as_paths(settings: Any) -> None:
    """A folder given as a str (as Python callers write one) made a Path."""
    for name in ("output", "cache_dir"):
        if isinstance(getattr(settings, name, None), str):
            object.__setattr__(settings, name, Path(getattr(settings, name)))


@dataclass(frozen=True)
class EncoderSettings:
    """How an encoder is loaded and run: the options evaluate and probe share; every field
    is the option of its name, and its help is the option's.

    `precision` None is the command's default (see EvalSettings and ProbeRunSettings);
    `device` None picks one; `cache_dir` None keeps no embedding cache.
    """

    batch_size: int = ranged(
        32, low=1, section="Encoder", show_default=True, help="Texts per encoder batch."
    )
    device: str | None = declared(
        None, section="Encoder", help="torch device (cpu, cuda, mps). Default: auto."
    )
    precision: str | None = chosen(
        None,
        *PRECISIONS,
        section="Encoder",
        help="Dtype the encoder's weights are loaded in. Default: float32 (evaluate "
        "--protocol hteb: bfloat16, as HTEB's release loads every model).",
    )
    trust_remote_code: bool = declared(
        False,
        section="Encoder",
        help="Run the code a model ships with it (models whose architecture is not in "
        "transformers).",
    )
    model_kwargs: dict[str, object] = declared(
        factory=dict,
        section="Encoder",
        flags=("--model-kwarg",),
        metavar="KEY=VALUE",
        help="Keyword argument for the model's transformers model (repeatable), e.g. "
        "attn_implementation=eager; VALUE is read as JSON when it can be.",
        spec_help="Keyword arguments for each model's transformers model, e.g. "
        "{attn_implementation: eager}.",
    )
    encode_kwargs: dict[str, object] = declared(
        factory=dict,
        section="Encoder",
        flags=("--encode-kwarg",),
        metavar="KEY=VALUE",
        help="Keyword argument for every encode call (repeatable), e.g. "
        "normalize_embeddings=true or truncate_dim=256; VALUE is read as JSON when it can be.",
        spec_help="Keyword arguments for every encode call, e.g. {normalize_embeddings: true}.",
    )
    prompts: dict[str, str] = declared(
        factory=dict,
        section="Encoder",
        flags=("--prompt",),
        metavar="NAME=TEXT",
        help="A prompt by name, added to the model's own (repeatable; a given name "
        "replaces the model's): a task name, a task type, query, document or TYPE-query, "
        "picked in mteb's order (task-role, task, type-role, type, role), e.g. "
        "--prompt 'query=query: ' --prompt 'document=passage: '.",
        spec_help="Prompts by name (a task name, a task type, query, document or "
        "TYPE-query), added to and overriding each model's own, e.g. {query: 'query: '}.",
    )
    cache_dir: Path | None = declared(
        None,
        section="Encoder",
        path=True,
        written=True,
        help="Keep embeddings on disk here, keyed by model, revision, precision, model "
        "and encode arguments, and text, so later runs encode only texts never seen "
        "before.",
        spec_help="Keep embeddings on disk here, so a re-run encodes only texts never seen "
        "before. null: no embedding cache.",
    )

    def __post_init__(self) -> None:
        as_paths(self)
        check(self)


@dataclass(frozen=True)
class EvalSettings(EncoderSettings):
    """How evaluate scores; every field is the `shiftbench evaluate` option of its name
    and its help is the option's (`shiftbench evaluate --help`), the encoder's among them
    (EncoderSettings: with no precision named, bfloat16 under the hteb protocol for a
    model loaded here, float32 otherwise).

    `task_type`, `data_dir`, `subsets` and `splits` pick what a source target reads (the
    options gen shares; `()`: all subsets, mteb's evaluation splits). `output`, None by
    default, is <cache>/results/<target name>, under $SHIFTBENCH_CACHE_DIR or
    ~/.cache/shiftbench (the command's -o, whose default is shiftbench-results/<target
    name>); `quiet` turns progress bars off.
    """

    task_type: str | None = None  # the source options the command shares with gen
    data_dir: str | None = None
    subsets: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    output: Path | None = None  # the command's -o, declared there
    protocol: str | None = declared(
        None,
        section="Scoring",
        metavar="NAME",
        help="Scoring protocol: shiftbench (mteb's), pteb or hteb (Classification: one "
        "logistic regression fitted on the whole train split; hteb also scores a failed "
        "rewrite with its original text in its place, as HTEB's release does, where the "
        "others leave the row out, reports HTEB's main scores for pair classification "
        "(cosine AP), summarisation (one Spearman over all summaries) and reranking (mean "
        "AP over each query's candidates), seeds clustering with the evaluation seed, "
        "pools a multilingual dataset's subsets into one score, loads encoders in "
        "bfloat16 and prints scores x100 with two decimals, as HTEB's tables do; "
        "results.json keeps mteb's scale). Default: the protocol the run folder was made "
        "with, else shiftbench.",
        spec_help="Scoring protocol: shiftbench (mteb's), pteb or hteb. null: the protocol "
        "the run folder was made with (the top-level protocol).",
    )
    faithful: str | None = declared(
        None,
        section="Scoring",
        metavar="CRITERION",
        help="Also score each transformation on the rows certified as meaning-preserving: "
        "judge>=4 (validate's LLM judges, 0-5), quality>=4, paraplue>0, a validation measure "
        "key with >=, >, <= or <, or human[>=3] (human-eval ratings of kept raters). A row "
        "counts when every text field passes. Run folders only.",
    )
    human_dirs: tuple[Path, ...] = declared(
        (),
        section="Scoring",
        flags=("--human-eval",),
        spec=None,
        separator="",
        help="Human-eval batch folder with imported ratings, for --faithful human; "
        "repeatable. Default: the run's sibling human-eval/ folder (the layout 'shiftbench "
        "run' writes).",
    )
    resamples: int = declared(
        1000,
        section="Scoring",
        show_default=True,
        help="Paired-bootstrap draws for each delta's 95% interval (at least 1000; 0 for no "
        "intervals).",
    )
    resample_seed: int = declared(
        0,
        section="Scoring",
        show_default=True,
        help="Seed of the bootstrap draws, made once per split and shared by every variant "
        "and model.",
    )
    interval: str = chosen(
        "percentile",
        *INTERVALS,
        section="Scoring",
        show_default=True,
        help="How each delta's 95% interval is read from the draws: percentile, or expanded "
        "(the expanded percentile interval: wider on few items, where the percentile one "
        "covers less than 95%; about equal from a few hundred items).",
    )
    evalrank_positives: str = chosen(
        "quantile",
        *EVALRANK_POSITIVES,
        section="Scoring",
        show_default=True,
        help="EvalRank's 'top 25%' of STS pairs: quantile (every pair at or above the 75th "
        "percentile of gold, ties at the cut kept) or exact (the top quarter exactly, ties "
        "broken by row order).",
    )
    evalrank_centre: bool = declared(
        False,
        section="Scoring",
        flags=("--evalrank-centre/--no-evalrank-centre",),
        show_default=True,
        help="Centre the embeddings (subtract the split's mean sentence vector) before "
        "EvalRank ranks, as its authors' released code does; the paper does not say so.",
    )
    plots: bool = declared(
        True,
        section="Output",
        flags=("--plots/--no-plots",),
        show_default=True,
        help="Write the PNG plots (bars, heatmap, scatter).",
    )
    quiet: bool = False  # the command's -q, declared there


@dataclass(frozen=True)
class ProbeRunSettings(EncoderSettings):
    """How `probe` runs the alignment probes; every field is the `shiftbench probe` option
    of its name and its help is the option's (`shiftbench probe --help`), the encoder's
    among them (EncoderSettings; with no precision named, float32). The spec has no probe
    section.

    `epsilons` are sorted and each kept once; they also take a comma-separated string.
    `output`, None by default, is <cache>/results/<targets>-probes, under
    $SHIFTBENCH_CACHE_DIR or ~/.cache/shiftbench (the command's -o, whose default is
    shiftbench-results/<targets>-probes); `quiet` turns progress bars off.
    """

    paraphrases: str = declared(
        "gold",
        section="Probe",
        metavar="gold|CONFIG",
        show_default=True,
        spec=None,
        help="Where anchors get their paraphrase: gold pairs of the dataset "
        "(PairClassification label 1, STS score at or above --min-score), or an LLM "
        "transform config of the run folder (e.g. paraphrase-s1).",
    )
    min_score: float | None = declared(
        None,
        section="Probe",
        spec=None,
        help="STS gold pairs: the lowest score that counts as a paraphrase. Default: 80% of "
        "the way up the score range (4.0 on 0-5).",
    )
    random_pairs: str = chosen(
        "anchor",
        *RANDOM_PAIRS,
        section="Probe",
        show_default=True,
        spec=None,
        help="Criterion 1's random pairs: each anchor with a random text of its dataset, or "
        "ALIGN-SIM's (section 5.1): the label-0 pairs of PairClassification data shuffled, a "
        "row's first text with another row's second.",
    )
    negation_pairs: Path | None = declared(
        None,
        section="Probe",
        metavar="FILE",
        spec=None,
        help="Human-written pairs to score criterion 4 on, as ALIGN-SIM scores it on AFIN: "
        "JSON Lines, CSV or TSV with the fields negated and affirmative. Without it, "
        "criterion 4 is only the affirmative-paraphrase control's LLM rewrites (labelled "
        "C4-LLM).",
    )
    seed: int = declared(
        0, section="Probe", show_default=True, spec=None, help="Seed of the random partners."
    )
    epsilons: tuple[float, ...] = declared(
        DEFAULT_EPSILONS,
        section="Probe",
        flags=("--epsilon",),
        key="epsilons",
        metavar="E[,E...]",
        show_default=True,
        spec=None,
        separator="",  # the settings read the numbers, so a bad one is named as typed
        help="Margins for the per-margin shares: an anchor passes when its paraphrase is "
        "closer than the other text by more than E (criterion 1's own average uses one "
        "fixed grid, -1 to 1 by 0.1, for both measures).",
    )
    output: Path | None = None  # the command's -o, declared there
    plots: bool = declared(
        True,
        section="Output",
        flags=("--plots/--no-plots",),
        show_default=True,
        spec=None,
        help="Write one histogram PNG per similarity measure.",
    )
    quiet: bool = False  # the command's -q, declared there

    def __post_init__(self) -> None:
        if isinstance(self.negation_pairs, str):  # a str, as callers write one
            object.__setattr__(self, "negation_pairs", Path(self.negation_pairs))
        if self.epsilons != DEFAULT_EPSILONS:  # the default needs no checking
            object.__setattr__(self, "epsilons", _epsilons(self.epsilons))
        super().__post_init__()


def _epsilons(given: str | tuple[Any, ...] | list[Any]) -> tuple[float, ...]:
    """Margins given as numbers, as number strings or as one comma-separated string (the
    option's values joined), sorted and each once; a bad one named as it was typed."""
    from shiftbench.evaluate.probes.anchors import parse_epsilons

    text = given if isinstance(given, str) else ",".join(str(x) for x in given)
    return parse_epsilons(text)
