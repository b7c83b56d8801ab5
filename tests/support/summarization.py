"""A small folder laid out as the Hub's mteb/summeval, with texts written for the tests."""

from __future__ import annotations

import json
from pathlib import Path

SHARED = "The article reports on a local event."  # a machine summary of two documents

DOCUMENTS = [
    {
        "text": "The river town opened a new footbridge on Saturday after two years of "
        "building. The bridge links the old market to the railway station, and the mayor "
        "said it would cut the walk to the trains from twenty minutes to five.",
        "human_summaries": [
            "A footbridge linking the market and the station opened after two years.",
            "The town's new bridge shortens the walk to the railway station.",
        ],
        "machine_summaries": [
            "A new footbridge opened, cutting the walk to the station to five minutes.",
            "The mayor spoke on Saturday.",
            SHARED,
            "Trains in the region run every twenty minutes.",
        ],
        "relevance": [4.6667, 2.0, 2.3333, 1.3333],
    },
    {
        "text": "Researchers counted more than three hundred nesting turtles on the "
        "island's beaches this season, the highest number in a decade. They credit a "
        "ban on night lighting near the shore, which no longer confuses the hatchlings.",
        "human_summaries": [
            "Turtle nests on the island reached a ten-year high.",
            "A ban on beach lighting helped hatchling turtles, researchers say.",
        ],
        "machine_summaries": [
            "Over three hundred turtles nested, helped by a ban on lights near the shore.",
            "Researchers went to the island.",
            "Night lighting is popular on many beaches.",
            "Turtle numbers hit their highest level in ten years.",
        ],
        "relevance": [5.0, 1.6667, 1.0, 4.3333],
    },
    {
        "text": "The city library will stay open until midnight during the exam weeks. "
        "Students had asked for longer hours, and the council agreed to pay for extra "
        "staff from its education budget.",
        "human_summaries": [
            "The library extends its hours to midnight for exams.",
            "The council funds late opening of the library for students.",
        ],
        "machine_summaries": [
            SHARED,
            "Students asked for longer library hours during exams, and the council agreed.",
            "The council has an education budget.",
            "The library closes at midnight.",
        ],
        "relevance": [2.0, 4.6667, 1.6667, 3.3333],
    },
    {
        "text": "A bakery on the main square won the regional bread prize for its rye "
        "loaf, made with flour from a mill that has worked since 1850.",
        "human_summaries": [
            "A bakery's rye loaf won the regional bread prize.",
            "Rye bread from the square's bakery took the region's prize.",
        ],
        "machine_summaries": [
            "The bakery won a prize.",
            "A mill has worked since 1850.",
            "The square has a bakery.",
            "Rye loaf wins.",
        ],
        "relevance": [3.0, 3.0, 3.0, 3.0],
    },
]


def summeval_folder(root: Path) -> Path:
    """The documents as a Hub-layout copy of mteb/summeval (its columns, one test split)."""
    (root / "data").mkdir(parents=True)
    with open(root / "data" / "test.jsonl", "w", encoding="utf-8") as fh:
        for i, doc in enumerate(DOCUMENTS):
            scores = {k: doc["relevance"] for k in ("coherence", "fluency", "consistency")}
            fh.write(json.dumps({"id": f"doc-{i}", **doc, **scores}) + "\n")
    (root / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test.jsonl\n---\n\n# summeval (test copy)\n",
        encoding="utf-8",
    )
    return root
