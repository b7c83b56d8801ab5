"""mteb's side of bench_evaluate.py: `mteb.evaluate` on a local copy of a task's data, as a
process of its own (what a user of mteb pays: imports, model load, the evaluation).

The model is the sentence-transformers model in FOLDER_OF_MODEL; the task is mteb's registered
task of that name with its data replaced by the local folder's (as tests/real/test_evaluate.py
does), so mteb reaches no network. Writes mteb's scores of the first subset of the test split
to OUT/scores.json.

    python bench/mteb_side.py KIND DATA_FOLDER FOLDER_OF_MODEL OUT
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main() -> None:
    kind, folder, model_folder, out = sys.argv[1:5]
    folder = Path(folder)
    import datasets
    import mteb
    from sentence_transformers import SentenceTransformer

    split = "test"
    if kind == "sts":
        task = mteb.get_task("STSBenchmark")
        task.dataset = datasets.load_dataset(str(folder))
    elif kind == "classification":
        task = mteb.get_task("Banking77Classification")
        # columns read whole (the tests' note: mteb indexes lazy columns row by row)
        task.dataset = datasets.load_dataset(str(folder)).with_format("pandas")
    elif kind == "clustering":  # one language, one set: mteb's legacy layout
        task = mteb.get_task("MasakhaNEWSClusteringS2S", languages=["eng"])
        table = rows(folder / "eng" / "test.jsonl")
        one_set = {
            "sentences": [[r["sentences"] for r in table]],
            "labels": [[r["labels"] for r in table]],
        }
        task.dataset = {"eng": datasets.DatasetDict({"test": datasets.Dataset.from_dict(one_set)})}
    elif kind == "retrieval":  # XQuAD, en
        task = mteb.get_task("XQuADRetrieval", languages=["eng"])
        split = "validation"  # the split mteb's task names; the folder calls it test
        relevant: dict[str, dict[str, int]] = {}
        for r in rows(folder / "en" / "qrels.jsonl"):
            relevant.setdefault(r["query-id"], {})[r["corpus-id"]] = r["score"]
        task.dataset = {
            "en": {
                split: {
                    "corpus": datasets.Dataset.from_list(rows(folder / "en" / "corpus.jsonl")),
                    "queries": datasets.Dataset.from_list(rows(folder / "en" / "queries.jsonl")),
                    "relevant_docs": relevant,
                    "top_ranked": None,
                }
            }
        }
    else:
        raise SystemExit(f"unknown kind {kind!r}")
    task.data_loaded = True
    model = SentenceTransformer(model_folder)
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always")
    scores = result.task_results[0].scores[split][0]
    Path(out, "scores.json").write_text(json.dumps(scores, default=str), encoding="utf-8")
    print(f"main_score {scores['main_score']:.5f}")


if __name__ == "__main__":
    main()
