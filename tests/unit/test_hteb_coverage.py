"""The hteb guide's coverage table is what the code does: every dataset of HTEB v1.1's two
groups, its MTEB task, and for its task type whether `hteb import` reads it, `hteb export`
writes it, the figure `--protocol hteb` reports and the test that holds each task type's
chain (an HTEB tree -> import -> evaluate equal to HTEB's computation -> export back).

Refresh the table with `SHIFTBENCH_UPDATE_DOCS=1 pytest tests/unit/test_hteb_coverage.py`."""

from __future__ import annotations

import os
from pathlib import Path

from shiftbench.cards.hteb import EXPORTED
from shiftbench.core.data.hteb import DATASETS
from shiftbench.gen.hteb import IMPORTED

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "hteb.md"
START, END = "<!-- hteb-coverage:start -->", "<!-- hteb-coverage:end -->"

# HTEB v1.1's groups (hteb/dataset_metadata/groups.json), in its order; semrel2024 is in both
GROUPS = {
    "English": (
        "AmazonCounterfactualClassification", "banking77", "MassiveIntentClassification",
        "BiorxivClusteringS2S", "MedrxivClusteringS2S", "TwentyNewsgroupsClustering",
        "SprintDuplicateQuestions", "twittersemeval2015-pairclassification", "TwitterURLCorpus",
        "askubuntudupquestions-reranking", "SciDocsRR", "StackOverflowDupQuestions", "arguana",
        "CQADupstackGamingRetrieval", "SciFact", "semrel2024", "biosses-sts",
        "stsbenchmark-sts", "summeval",
    ),
    "multilingual": (
        "IsiZuluNewsClassification.v2", "SentimentAnalysisHindi.v2", "MasakhaNEWSClusteringS2S",
        "PlscClusteringS2S.v2", "rte3", "indonli", "VoyageMMarcoReranking",
        "NamaaMrTydiReranking", "TwitterHjerneRetrieval", "Ko-StrategyQA", "semrel2024",
        "sts17-crosslingual-sts", "IndicCrosslingualSTS",
    ),
}  # fmt: skip
# the figure HTEB's evaluation reports for each of its task types, as `--protocol hteb`
# reports it, and the test of the whole chain for that task type
FIGURES = {
    "classification": ("accuracy of one classifier on the whole train split",
                       "tests/real/test_hteb_roundtrip_tabular.py"),
    "clustering": ("V-measure, k-means seeded with the evaluation seed",
                   "tests/real/test_hteb_nested_clustering_roundtrip.py",
                   "tests/real/test_hteb_roundtrip_tabular.py"),
    "pair_classification": ("cosine average precision",
                            "tests/real/test_hteb_roundtrip_tabular.py"),
    "sts": ("cosine Spearman", "tests/real/test_hteb.py", "tests/integration/test_hteb.py"),
    "str": ("cosine Spearman", "tests/real/test_hteb_roundtrip_tabular.py"),
    "reranking": ("mean candidate average precision",
                  "tests/real/test_hteb_reranking_roundtrip.py"),
    "retrieval": ("top-10 cosine nDCG@10", "tests/real/test_hteb_retrieval_roundtrip.py"),
    "summarisation": ("Spearman pooled over all summaries",
                      "tests/real/test_hteb_summarisation_roundtrip.py"),
}  # fmt: skip
# for each task type (a clustering one by its layout), the test of `gen --protocol hteb
# --hteb-prompts` that compares the requests a stub server receives with HTEB's, and the
# dataset it generates from; STR's pairs go the way of STS's
REQUESTS = {
    "classification": ("tests/integration/test_hteb_requests.py", "Banking77Classification"),
    "clustering (per-language)": ("tests/integration/test_hteb_requests.py",
                                  "MasakhaNEWSClusteringS2S"),
    "clustering (nested)": ("tests/integration/test_hteb_requests_lists.py",
                            "TwentyNewsgroupsClustering"),
    "pair classification": ("tests/integration/test_hteb_requests.py", "MRPC"),
    "sts": ("tests/integration/test_hteb_requests.py", "STSBenchmark"),
    "str": ("tests/integration/test_hteb_requests.py", "STSBenchmark"),
    "reranking": ("tests/integration/test_hteb_requests_lists.py", "SciDocsRR"),
    "retrieval": ("tests/integration/test_hteb_requests.py", "XQuADRetrieval"),
    "summarisation": ("tests/integration/test_hteb_requests_lists.py", "summeval"),
}  # fmt: skip
# MTEB's name of each HTEB task type
MTEB_TYPES = {
    "classification": "Classification", "clustering": "Clustering",
    "pair_classification": "PairClassification", "sts": "STS", "str": "STS",
    "reranking": "Reranking", "retrieval": "Retrieval", "summarisation": "Summarization",
}  # fmt: skip


def coverage_table() -> str:
    """The guide's coverage table, from DATASETS and the import and export modules."""
    lines = [
        "| HTEB dataset | group | task type | MTEB task | import | export | `--protocol hteb` "
        "figure | HTEB's requests |",
        "|---|---|---|---|---|---|---|---|",
    ]
    names = list(dict.fromkeys(n for group in GROUPS.values() for n in group))
    for name in names:
        d = DATASETS[name]
        groups = " and ".join(g for g, members in GROUPS.items() if name in members)
        kind = MTEB_TYPES[d.task_type]
        layout = f" ({d.clustering_format.replace('_', '-')})" if d.clustering_format else ""
        tick = {True: "✓", False: "✗"}
        typed = f"{d.task_type.replace('_', ' ')}{layout}"
        lines.append(
            f"| `{name}` | {groups} | {typed} | {d.task} | {tick[kind in IMPORTED]} | "
            f"{tick[kind in EXPORTED]} | {FIGURES[d.task_type][0]} | {tick[typed in REQUESTS]} |"
        )
    lines += ["", "| task type | the chain's tests |", "|---|---|"]
    for kind, (_figure, *tests) in FIGURES.items():
        lines.append(f"| {kind.replace('_', ' ')} | {', '.join(f'`{t}`' for t in tests)} |")
    lines += ["", "| task type | the requests' test (dataset) |", "|---|---|"]
    for typed, (test, dataset) in REQUESTS.items():
        lines.append(f"| {typed} | `{test}` ({dataset}) |")
    return "\n".join(lines)


def test_every_dataset_of_htebs_groups_is_known():
    names = {n for group in GROUPS.values() for n in group}
    assert len(names) == 31
    assert set(DATASETS) == names


def test_each_task_types_chain_has_its_test():
    for _figure, *tests in FIGURES.values():
        for test in tests:
            assert (ROOT / test).is_file(), test
    assert set(FIGURES) == {d.task_type for d in DATASETS.values()}
    for test, dataset in REQUESTS.values():  # the test generates from that dataset
        assert f'"{dataset}"' in (ROOT / test).read_text(encoding="utf-8"), (test, dataset)


def test_the_hteb_guide_shows_the_coverage_the_code_has():
    page = GUIDE.read_text(encoding="utf-8")
    head, rest = page.split(START)
    block, tail = rest.split(END)
    block = block.strip("\n")
    if os.environ.get("SHIFTBENCH_UPDATE_DOCS"):
        GUIDE.write_text(f"{head}{START}\n{coverage_table()}\n{END}{tail}", encoding="utf-8")
        return
    assert block == coverage_table(), (
        "docs/guides/hteb.md's coverage table is stale; refresh it with "
        "SHIFTBENCH_UPDATE_DOCS=1 pytest tests/unit/test_hteb_coverage.py"
    )
    assert "✗" not in block
