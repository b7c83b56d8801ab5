"""A run folder (or a published release) as mteb tasks, one per config.

`mteb_tasks(target)` returns mteb task objects whose data is a config's rows as
`shiftbench evaluate` scores them: a transform's rows that passed the checks (`ok`, and
`identical` where an unchanged output is a result), every row of the original. A ranking
config keeps the source's corpus and judgements, or its own rewritten corpus. So
`mteb.evaluate(model, mteb_tasks(run))` gives, config by config, the main score that
`shiftbench evaluate` reports for it (not the delta: that needs the original on the same
rows, which evaluate pairs and mteb does not).

Each task is the source's own mteb task when the run was made from one (its metadata,
prompts and evaluator), else a registered task of the same type standing in for a local
folder; its name becomes `<source>.<config>` and its data is replaced, so mteb never
downloads anything. A Clustering task holds one row per set to cluster (a row of lists
stays one; rows of one text each form one set), for mteb's legacy protocol; a task of the
bootstrap protocol is refused, since mteb draws its samples from one generator shared by
the task's subsets in order. A Reranking task holds each query's candidates as mteb's
retrieval evaluator reads them (`top_ranked`), without those a rewritten corpus lost, as
evaluate ranks them. A Classification task holds the train split evaluate fits on (the
original's, or the variant's own rewritten one) and the undersampling settings recorded in
the run folder; mteb scores it with its own rounds of undersampled training sets, which
is evaluate's figure under the shiftbench protocol (not PTEB's or HTEB's one classifier on
the whole train split).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiftbench.core.data.runfolder import OK, usable
from shiftbench.core.records import SourceRecord
from shiftbench.errors import InputError
from shiftbench.evaluate.collect import collect_generated, with_ranking_context
from shiftbench.evaluate.evaluators import train_split
from shiftbench.evaluate.evaluators.retrieval import judgements
from shiftbench.evaluate.sides import own_context

# Registered mteb tasks whose evaluator scores a local folder of their type.
STAND_INS = {
    "STS": "STSBenchmark",
    "PairClassification": "TwitterSemEval2015",
    "Retrieval": "SciFact",
    "Classification": "Banking77Classification",
    "Summarization": "SummEvalSummarization.v2",
    "Clustering": "TwentyNewsgroupsClustering",  # mteb's legacy clustering protocol
    "Reranking": "AskUbuntuDupQuestions",  # a retrieval task with pre-ranked candidates
}


def mteb_tasks(
    target: str | Path, *, data_dir: str | None = None, configs: tuple[str, ...] = ()
) -> list[Any]:
    """mteb task objects, one per config of a run folder or release (controls left out).

    Args:
        target: A run folder, or a published release `ORG/NAME@vX.Y.Z`.
        data_dir: Local copy of a ranking source's data (its corpus and judgements).
        configs: The configs to make tasks of; () for every one.

    Returns:
        Task objects for `mteb.evaluate`, in the run folder's config order.

    Raises:
        InputError: `target` is neither, its task type has no mteb task here, or a config
            named is not in it.
    """
    import mteb

    collection = collect_generated(str(target))
    source = collection.source
    kind = source["task_type"]
    if kind not in STAND_INS:
        raise InputError(
            f"mteb_tasks makes {', '.join(STAND_INS)} tasks; {collection.label} is {kind}"
        )
    collection = with_ranking_context(collection, data_dir)
    known = [c.name for c in collection.configs]
    missing = [c for c in configs if c not in known]
    if missing:
        raise InputError(
            f"{collection.label} has no config {missing[0]!r}; it has {', '.join(known)}"
        )
    originals = {c.meta["subset"]: c for c in collection.configs if c.meta["kind"] == "original"}
    tasks = []
    for config in collection.configs:
        if config.meta["kind"] == "control" or (configs and config.name not in configs):
            continue
        task = mteb.get_task(source.get("mteb_task") or STAND_INS[kind])
        if kind == "Clustering" and (source.get("protocol") or {}).get("clustering") == "bootstrap":
            raise InputError(
                f"{source['name']} is clustered with mteb's bootstrap protocol, whose draws "
                "mteb shares across a task's subsets in order; mteb_tasks makes clustering "
                "tasks of the legacy protocol only"
            )
        subset = config.meta["subset"]
        splits = [s for s in source["splits"] if s in config.splits]
        data = {s: _split_data(kind, source, config, originals.get(subset), s) for s in splits}
        task.metadata = task.metadata.model_copy(
            update={
                "name": f"{source['name']}.{config.name}",
                "eval_splits": splits,
                "main_score": source["main_score"],
                "superseded_by": None,  # a task of this run, not the registered one
            }
        )
        if kind in ("STS", "Summarization") and (scale := source.get("score_range")):
            low, high = scale  # the gold scale
            setattr(task, "min_score", low)  # noqa: B010 (not on AbsTask's type)
            setattr(task, "max_score", high)  # noqa: B010
        if kind == "Classification":
            data[train_split(source)] = _train_data(source, config, originals.get(subset))
            _mteb_protocol(task, source)
        task.hf_subsets = [subset]
        task.dataset = {subset: data}
        task.data_loaded = True
        tasks.append(task)
    return tasks


def _split_data(kind: str, source: SourceRecord, config: Any, original: Any, split: str) -> Any:
    """One split of a config in the layout mteb's evaluator of `kind` reads."""
    import datasets

    transform = config.meta.get("transform")
    rows = [r for r in config.splits[split] if usable(r.get("status", OK), transform)]
    if kind == "Summarization":  # each text field as it is, rewritten or not
        columns = ("text", "human_summaries", "machine_summaries", "relevance")
        return datasets.Dataset.from_list([{c: r[c] for c in columns} for r in rows])
    if kind == "Classification":
        (text,) = source["text_fields"]
        return datasets.Dataset.from_list([{"text": r[text], "label": r["label"]} for r in rows])
    if kind == "Clustering":  # each set a row, as mteb's legacy evaluator reads them
        from shiftbench.evaluate.evaluators.clustering import cluster_sets

        (text,) = source["text_fields"]
        sets = cluster_sets(rows, text)
        return datasets.Dataset.from_list(
            [{"sentences": texts, "labels": labels} for texts, labels in sets]
        )
    if kind in ("STS", "PairClassification"):
        first, second = source["text_fields"]
        label = "score" if kind == "STS" else "labels"
        return datasets.Dataset.from_list(
            [{"sentence1": r[first], "sentence2": r[second], label: r[label]} for r in rows]
        )

    context_splits = source.get("context_splits", [])
    context = {s: original.splits[s] for s in context_splits if s in original.splits}
    if config is not original:
        context.update(own_context(config, context_splits, transform))
    corpus = context[f"corpus/{split}"]
    queries = [{"id": str(r["id"]), "text": r["text"]} for r in rows]
    documents = [
        {"id": str(d["id"]), "title": d.get("title") or "", "text": d["text"]} for d in corpus
    ]
    candidates = None
    if f"top_ranked/{split}" in context:  # Reranking: each query's candidates only
        known = {d["id"] for d in documents}  # as evaluate: a failed rewrite drops out
        candidates = {
            str(r["query-id"]): [str(d) for d in r["corpus-ids"] if str(d) in known]
            for r in context[f"top_ranked/{split}"]
        }
    return {
        "corpus": datasets.Dataset.from_list(documents),
        "queries": datasets.Dataset.from_list(queries),
        "relevant_docs": judgements(context[f"qrels/{split}"]),
        "top_ranked": candidates,
    }


def _train_data(source: SourceRecord, config: Any, original: Any) -> Any:
    """The train split a Classification config is scored with: the original's, or the
    config's own rewritten one (its usable rows), as evaluate fits on it."""
    import datasets

    name = train_split(source)
    rows = original.splits[name]
    if config is not original:
        rows = own_context(config, [name], config.meta.get("transform")).get(name, rows)
    (text,) = source["text_fields"]
    return datasets.Dataset.from_list([{"text": r[text], "label": r["label"]} for r in rows])


def _mteb_protocol(task: Any, source: SourceRecord) -> None:
    """The undersampling settings evaluate used (the source's task's own, recorded in the
    run folder), on the task object mteb's classification evaluator reads them from."""
    protocol = source.get("protocol") or {}
    for key in ("n_experiments", "samples_per_label", "seed"):
        if protocol.get(key) is not None:
            setattr(task, key, protocol[key])
    task.train_split = train_split(source)
