"""Protocol presets: the settings a paper fixes, applied as one choice.

A protocol names the transforms, seeds and sampling a paper generates with, which parts of
each task type it rewrites (`queries`: the scored texts, i.e. ranking queries and the
evaluation split of other task types; `corpus`: ranking documents and reranking
candidates; `train`: the classification train split; `references`: a summarisation task's
human summaries) and how evaluate scores
classification and retrieval. An option the user gives explicitly wins over the preset,
and the record says which ones did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

from shiftbench.core.records import ScoringRecord, SourceRecord
from shiftbench.core.registry import suggest
from shiftbench.core.text.transforms import FLAT, GROUPS, GROWN
from shiftbench.errors import InputError

QUERIES = "queries"
CORPUS = "corpus"
TRAIN = "train"
REFERENCES = "references"
PARTS = (QUERIES, CORPUS, TRAIN, REFERENCES)

# How evaluate scores Classification: mteb's rounds of undersampled training sets, or one
# logistic regression fitted on the whole train split.
MTEB: Final = "mteb"
FULL_TRAIN: Final = "full-train"
CLASSIFICATION_SCORING = (MTEB, FULL_TRAIN)
ClassificationScoring = Literal["mteb", "full-train"]

# What evaluate does with a variant's failed rewrites: leave the row out of the variant and
# its paired original (shiftbench), or score the original text in the failed text's place
# and every other output as written (HTEB's release; evaluate/restore.py).
LEFT_OUT: Final = "left-out"
ORIGINAL_IN_PLACE: Final = "original-in-place"
FailedRows = Literal["left-out", "original-in-place"]

# How evaluate clusters: as mteb does (its legacy or bootstrap protocol, k-means seeded with
# 42 or the task's seed), or as HTEB's release does: every set clustered once, k-means seeded
# with the evaluation seed (a variant's own seed; the original once per seed, averaged).
EVALUATION_SEED: Final = "evaluation-seed"
CLUSTERING_SCORING = (MTEB, EVALUATION_SEED)
ClusteringScoring = Literal["mteb", "evaluation-seed"]

# How evaluate scores Retrieval: as mteb does (the model's similarity, the top 1000 documents
# per query, nDCG@10 among mteb's metrics), or as HTEB's release does: an explicit cosine,
# the top 10 per query (ties in corpus order, a document named as its query left out where
# the dataset says so) and the mean nDCG@10 rounded to five decimals
# (evaluate/evaluators/retrieval.py).
TOP_TEN_COSINE: Final = "top-10-cosine"
RETRIEVAL_SCORING = (MTEB, TOP_TEN_COSINE)
RetrievalScoring = Literal["mteb", "top-10-cosine"]

# How evaluate takes the cosine of a pair (STS, PairClassification): as mteb does
# (scikit-learn's paired cosine distance), or as HTEB's release does: each embedding divided
# by its length (at least 1e-12) and the products summed, in float32
# (evaluate/evaluators/similarity.py).
# The two differ by a float32 step at most, which reorders exact ties (identical pairs).
UNIT_COSINE: Final = "unit-cosine"
PAIR_COSINE = (MTEB, UNIT_COSINE)
PairCosine = Literal["mteb", "unit-cosine"]

# How evaluate treats a dataset's subsets: each scored on its own and their figures
# averaged (mteb's way), or pooled into one set of rows scored once (HTEB's release;
# evaluate/pool.py).
AVERAGED: Final = "averaged"
POOLED: Final = "pooled"
Subsets = Literal["averaged", "pooled"]

DEFAULT_PROTOCOL = "shiftbench"


@dataclass(frozen=True)
class SamplingPreset:
    """Temperature, top_p and top_k; None leaves the value to the backend (not sent)."""

    temperature: float | None
    top_p: float | None
    top_k: int | None = None


BACKEND_DEFAULT = SamplingPreset(None, None)


@dataclass(frozen=True)
class Protocol:
    """What one paper's protocol fixes for generation and scoring."""

    name: str
    description: str
    citation: str
    transforms: tuple[str, ...]
    seeds: tuple[int, ...]
    sampling: SamplingPreset
    # task type -> parts rewritten; "*" for every task type not named
    rewrite: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: {"*": (QUERIES,)})
    classification: ClassificationScoring = MTEB
    retrieval: RetrievalScoring = MTEB
    pair_cosine: PairCosine = MTEB
    failed_rows: FailedRows = LEFT_OUT
    # generation: tries per text, and how each call's token budget is set
    max_attempts: int = 3
    token_budgets: str = GROWN
    clustering: ClusteringScoring = MTEB
    subsets: Subsets = AVERAGED
    # the dtype an encoder loaded here gets when evaluate's --precision names none
    precision: str = "float32"
    # task type -> the main score evaluate reports in place of mteb's
    main_scores: Mapping[str, str] = field(default_factory=dict)

    def rewrite_for(self, task_type: str) -> tuple[str, ...]:
        """The parts of a task of `task_type` that the protocol rewrites."""
        return tuple(self.rewrite.get(task_type, self.rewrite.get("*", (QUERIES,))))

    def settings(self) -> dict[str, Any]:
        """Every setting the protocol fixes, as recorded in shiftbench.json and results."""
        return {
            "transforms": list(self.transforms),
            "seeds": list(self.seeds),
            "temperature": self.sampling.temperature,
            "top_p": self.sampling.top_p,
            "top_k": self.sampling.top_k,
            "max_attempts": self.max_attempts,
            "token_budgets": self.token_budgets,
            "rewrite": {k: list(v) for k, v in self.rewrite.items()},
            "classification_scoring": self.classification,
            "retrieval_scoring": self.retrieval,
        }


RANKING_PARTS = (QUERIES, CORPUS)

PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in [
        Protocol(
            "shiftbench",
            "shiftbench's own defaults: mteb-exact scoring, only the scored texts rewritten",
            "",
            ("paraphrase",),
            (1337,),
            SamplingPreset(0.7, 0.95),
        ),
        Protocol(
            "pteb",
            "PTEB: paraphrases only, six seeds, the generator's default sampling, the "
            "classification train split paraphrased too and scored with one classifier "
            "fitted on all of it",
            "PTEB: Paraphrasing Text Embedding Benchmark (sections 3-4, appendix C)",
            ("paraphrase",),
            (1337, 1338, 1339, 1340, 1341, 1342),
            BACKEND_DEFAULT,
            {"Classification": (QUERIES, TRAIN), "*": (QUERIES,)},
            classification=FULL_TRAIN,
        ),
        Protocol(
            "hteb",
            "HTEB (current release): the eight transformations, three seeds, the release's "
            "sampling defaults, ranking documents, classification train and human reference "
            "summaries rewritten too, "
            "classification scored with one classifier fitted on the whole train split",
            "HTEB: Harder Text Embedding Benchmark (section 3, appendices A.1 and E); code "
            "release hteb/config.py, hteb/evaluation.py, hteb/dataset_preparation.py, "
            "configs/hteb_english.yaml",
            tuple(GROUPS["all"]),  # the eight LLM transformations
            (1337, 1338, 1339),
            SamplingPreset(1.0, 0.95, 64),
            {
                "Classification": (QUERIES, TRAIN),
                "Retrieval": RANKING_PARTS,
                "Reranking": RANKING_PARTS,
                # the release rewrites every text field of a summarisation row: the machine
                # and the human summaries (the document is never embedded)
                "Summarization": (QUERIES, REFERENCES),
                "*": (QUERIES,),
            },
            classification=FULL_TRAIN,
            retrieval=TOP_TEN_COSINE,
            pair_cosine=UNIT_COSINE,
            failed_rows=ORIGINAL_IN_PLACE,
            # hteb/generation.py: three retries after the first try, and flat budgets
            max_attempts=4,
            token_budgets=FLAT,
            clustering=EVALUATION_SEED,
            subsets=POOLED,
            precision="bfloat16",  # hteb/config.py's evaluation dtype, for every model
            # hteb/evaluation.py: pair classification's AP on the cosine alone, one
            # Spearman over every machine summary of a summarisation task, reranking's
            # mean over queries of scikit-learn's AP of their candidates, and retrieval's
            # nDCG@10 of the ten documents nearest by cosine, rounded to five decimals
            main_scores={
                "PairClassification": "cosine_ap",
                "Summarization": "pooled_cosine_spearman",
                "Reranking": "mean_candidate_ap",
                "Retrieval": "cosine_ndcg_at_10",
            },
        ),
    ]
}


def get_protocol(name: str) -> Protocol:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise InputError(
            f"unknown protocol {name!r}; available: {', '.join(PROTOCOLS)}"
            f"{suggest(name, list(PROTOCOLS))}"
        ) from None


@dataclass(frozen=True)
class Applied:
    """A protocol with the user's explicit options laid over it."""

    protocol: Protocol
    transforms: tuple[str, ...]
    seeds: tuple[int, ...]
    temperature: float | None
    top_p: float | None
    overridden: tuple[str, ...]
    top_k: int | None = None
    max_attempts: int = 3

    def record(self, task_type: str | None = None) -> dict[str, Any]:
        """What shiftbench.json and the card say about the protocol."""
        settings = {
            **self.protocol.settings(),
            "transforms": list(self.transforms),
            "seeds": list(self.seeds),
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "max_attempts": self.max_attempts,
        }
        out: dict[str, Any] = {
            "name": self.protocol.name,
            "description": self.protocol.description,
            "citation": self.protocol.citation,
            "settings": settings,
            "preset": self.protocol.settings(),
            "overridden": list(self.overridden),
        }
        if task_type is not None:
            out["rewrite"] = list(self.protocol.rewrite_for(task_type))
        return out


# gen options a preset fills, and the setting each one decides
GEN_OPTIONS = {"transforms": "transforms", "seeds": "seeds", "temperature": "temperature",
               "top_p": "top_p", "top_k": "top_k", "max_attempts": "max_attempts"}  # fmt: skip


def apply_protocol(protocol: Protocol, given: Mapping[str, Any]) -> Applied:
    """The protocol's settings with the explicitly given options (`given`: option name ->
    parsed value, holding only options the user set) in their place."""
    unknown = set(given) - set(GEN_OPTIONS)
    if unknown:
        raise ValueError(f"options no protocol sets: {sorted(unknown)}")
    preset = {
        "transforms": protocol.transforms,
        "seeds": protocol.seeds,
        "temperature": protocol.sampling.temperature,
        "top_p": protocol.sampling.top_p,
        "top_k": protocol.sampling.top_k,
        "max_attempts": protocol.max_attempts,
    }
    merged = {**preset, **given}
    if merged["top_k"] == 0:  # --top-k 0: none sent, the backend's own
        merged["top_k"] = None
    overridden = tuple(k for k in GEN_OPTIONS if k in given)
    return Applied(
        protocol,
        tuple(merged["transforms"]),
        tuple(merged["seeds"]),
        merged["temperature"],
        merged["top_p"],
        overridden,
        merged["top_k"],
        int(merged["max_attempts"]),
    )


def folder_protocol(meta: Mapping[str, Any] | None) -> str | None:
    """The protocol a run folder was made with (None for a folder from before protocols)."""
    recorded = (meta or {}).get("protocol")
    return recorded["name"] if recorded else None


def check_protocol(output: Any, meta: Mapping[str, Any] | None, name: str) -> None:
    """Refuse adding configs of one protocol to a run folder made with another."""
    held = folder_protocol(meta) if meta is not None else None
    if meta is not None and (held or DEFAULT_PROTOCOL) != name:
        raise InputError(
            f"output {output} holds a run made with --protocol {held or DEFAULT_PROTOCOL}; "
            f"choose another --output for --protocol {name}"
        )


ChosenBy = Literal["--protocol", "run folder", "default"]


@dataclass(frozen=True)
class ScoringProtocol:
    """How evaluate scores (results.json's `protocol`): the preset's scoring choices, and
    where the choice came from."""

    name: str
    classification_scoring: ClassificationScoring
    retrieval_scoring: RetrievalScoring
    failed_rows: FailedRows
    clustering_scoring: ClusteringScoring
    subsets: Subsets
    precision: str
    main_scores: Mapping[str, str]  # task type -> the main score reported in mteb's place
    chosen_by: ChosenBy
    run_folder_protocol: str | None
    overrides_run_folder: bool

    @property
    def pair_cosine(self) -> PairCosine:
        """How STS and PairClassification take a pair's cosine (not recorded: the preset's)."""
        return get_protocol(self.name).pair_cosine

    @property
    def seeds(self) -> tuple[int, ...]:
        """The preset's seeds: those an original is clustered with when no variant brings
        its own."""
        return get_protocol(self.name).seeds

    def record(self) -> ScoringRecord:
        """The record results.json holds, key by key in its order."""
        return {
            "name": self.name,
            "classification_scoring": self.classification_scoring,
            "retrieval_scoring": self.retrieval_scoring,
            "failed_rows": self.failed_rows,
            "clustering_scoring": self.clustering_scoring,
            "subsets": self.subsets,
            "precision": self.precision,
            "main_scores": dict(self.main_scores),
            "chosen_by": self.chosen_by,
            "run_folder_protocol": self.run_folder_protocol,
            "overrides_run_folder": self.overrides_run_folder,
        }

    @classmethod
    def from_results(cls, document: Mapping[str, object]) -> ScoringProtocol | None:
        """The protocol a results.json records (None for results from before protocols);
        a key an older record lacks is its named preset's (shiftbench's for a name this
        version does not know)."""
        recorded = cast("Mapping[str, Any] | None", document.get("protocol"))
        if not recorded:
            return None
        name = str(recorded["name"])
        preset = PROTOCOLS.get(name, PROTOCOLS[DEFAULT_PROTOCOL])
        made_with = recorded.get("run_folder_protocol")
        return cls(
            name=name,
            classification_scoring=recorded.get("classification_scoring", preset.classification),
            retrieval_scoring=recorded.get("retrieval_scoring", preset.retrieval),
            failed_rows=recorded.get("failed_rows", preset.failed_rows),
            clustering_scoring=recorded.get("clustering_scoring", preset.clustering),
            subsets=recorded.get("subsets", preset.subsets),
            precision=str(recorded.get("precision", preset.precision)),
            main_scores=dict(recorded.get("main_scores", preset.main_scores)),
            chosen_by=recorded.get("chosen_by", "default"),
            run_folder_protocol=made_with,
            overrides_run_folder=bool(recorded.get("overrides_run_folder", False)),
        )


def protocol_name(document: Mapping[str, object]) -> str | None:
    """The name of the protocol a results.json was scored under (None: before protocols)."""
    scoring = ScoringProtocol.from_results(document)
    return scoring.name if scoring else None


def scoring_protocol(given: str | None, folder_meta: Mapping[str, Any] | None) -> ScoringProtocol:
    """How evaluate scores: the protocol named with --protocol, else the one the run folder
    was made with, else shiftbench's. Says where the choice came from and whether it
    replaced the run folder's."""
    made_with = folder_protocol(folder_meta)
    name = given or made_with or DEFAULT_PROTOCOL
    protocol = get_protocol(name)
    return ScoringProtocol(
        name=name,
        classification_scoring=protocol.classification,
        retrieval_scoring=protocol.retrieval,
        failed_rows=protocol.failed_rows,
        clustering_scoring=protocol.clustering,
        subsets=protocol.subsets,
        precision=protocol.precision,
        main_scores=dict(protocol.main_scores),
        chosen_by="--protocol" if given else "run folder" if made_with else "default",
        run_folder_protocol=made_with,
        overrides_run_folder=bool(given and made_with and given != made_with),
    )


def ignores_identical_ids(source: SourceRecord) -> bool:
    """Whether a Retrieval dataset leaves out of a query's ranking the document that has the
    query's own id (ArguAna's queries are documents of its corpus): as the source's
    evaluation settings record it, else as its MTEB task declares it (HTEB's metadata
    agrees with mteb's for every dataset HTEB ships), else no."""
    recorded = (source.get("protocol") or {}).get("ignore_identical_ids")
    if recorded is not None:
        return bool(recorded)
    if source.get("mteb_task"):
        from shiftbench.core.data.mteb_tasks import get_task

        return bool(getattr(get_task(str(source["mteb_task"])), "ignore_identical_ids", False))
    return False


def with_scoring(source: SourceRecord, scoring: ScoringProtocol) -> SourceRecord:
    """The source description with the scoring choice among the task's evaluation settings
    (where the evaluators read them) and the protocol's main score for the task type;
    shiftbench's scoring leaves it as it is."""
    out = source.copy()
    main = scoring.main_scores.get(source["task_type"])
    if main is not None:
        out["main_score"] = main
    settings = dict(source.get("protocol") or {})
    if scoring.classification_scoring != MTEB:
        settings["classification"] = scoring.classification_scoring
    if source["task_type"] == "Retrieval" and scoring.retrieval_scoring != MTEB:
        settings["retrieval_scoring"] = scoring.retrieval_scoring
        settings["ignore_identical_ids"] = ignores_identical_ids(source)
    if source["task_type"] in ("STS", "PairClassification") and scoring.pair_cosine != MTEB:
        settings["pair_cosine"] = scoring.pair_cosine
    if scoring.clustering_scoring != MTEB:
        settings["clustering_scoring"] = scoring.clustering_scoring
        # the seeds an original is clustered with when no variant brings its own
        settings["evaluation_seeds"] = list(scoring.seeds)
    if settings != (source.get("protocol") or {}):
        out = {**out, "protocol": settings}  # a new key order only where settings changed
    return out
