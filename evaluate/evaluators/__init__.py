"""Evaluators: what an encoder's embeddings score, one module per MTEB task type.

Every task type's module has one call: `evaluate(scoring: Scoring) -> metrics`, mteb's
metrics by name, computed the way mteb does (the same signature mteb's `_evaluators/` give
each task type). A `Scoring` holds the source's description, the encoder, the rows to
score and the context splits of the original, such as Classification's train split. An
evaluator also leaves on the `Scoring` a `replicate`: the main score of any weighted draw
of its rows (see evaluate/resample.py), computed from what it already embedded, so a
delta's bootstrap interval never embeds again. Adding a task type is one module and one
line in `EVALUATORS`; modules load only when their task type is scored.

Beside them: `similarity` (the pair similarities STS and PairClassification share), and the
two measures every variant also gets, whatever its task type: `self_retrieval` and
`evalrank` (STS only).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shiftbench.core.models.encoders import Encoder
from shiftbench.core.records import DataRow, SourceRecord
from shiftbench.core.registry import Registry
from shiftbench.evaluate.resample import Replicate

EVALUATORS = Registry(
    "task type",
    {
        "STS": "shiftbench.evaluate.evaluators.sts:evaluate",
        "PairClassification": "shiftbench.evaluate.evaluators.pair_classification:evaluate",
        "Classification": "shiftbench.evaluate.evaluators.classification:evaluate",
        "Clustering": "shiftbench.evaluate.evaluators.clustering:evaluate",
        "Retrieval": "shiftbench.evaluate.evaluators.retrieval:evaluate",
        "Reranking": "shiftbench.evaluate.evaluators.retrieval:evaluate",
        "Summarization": "shiftbench.evaluate.evaluators.summarization:evaluate",
    },
)


@dataclass
class Scoring:
    """What an evaluator needs: the source, the encoder, the rows, and the context splits."""

    source: SourceRecord
    encoder: Encoder
    rows: list[DataRow]
    context: dict[str, list[DataRow]] = field(default_factory=dict)
    split: str = "test"
    # Clustering's bootstrap protocol: the labels of the (split, subset)s mteb scores before
    # this one, whose random draws come first
    prior: list[list[Any]] = field(default_factory=list)
    # the evaluation seed: under HTEB's clustering, a variant's own seed (its paired
    # original's too); None where the protocol fixes its seeds
    seed: int | None = None
    # set by the evaluator: weights (draws x rows) -> the main score of each draw
    replicate: Replicate | None = None

    @property
    def main_score(self) -> str:
        return str(self.source["main_score"])

    def embed(self, texts: list[str], role: str | None = None) -> Any:
        """Embeddings of `texts` with the prompt the model's own prompts give this task
        and role ("query", "document", or None for a symmetric task), as mteb picks it."""
        prompt = self.encoder.prompt(self.source.get("mteb_task"), self.source["task_type"], role)
        return self.encoder.embed(texts, prompt)


Evaluator = Callable[[Scoring], Mapping[str, float]]


def evaluator(task_type: str) -> Evaluator:
    found: Evaluator = EVALUATORS.load(task_type)
    return found


def train_split(source: SourceRecord) -> str:
    """The split Classification fits on: the task's own train split, "train" by default."""
    return str((source.get("context_splits") or ["train"])[0])
