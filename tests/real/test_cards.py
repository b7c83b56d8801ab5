"""cards: dataset cards, and frozen versions published to a local Hub and loaded back.

The Hub is tests/support/hub_server.py on 127.0.0.1; shiftbench, huggingface_hub and datasets
reach it through HF_ENDPOINT in subprocesses, as a user's shell would.
"""

from __future__ import annotations

import json

from support.cards import REPO
from support.files import read_rows
from support.human_eval import rated_batch


def test_card_describes_the_run_and_loads(stsb_copy, invoke, tmp_path):
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    batch = rated_batch(invoke, stsb_copy, tmp_path)
    human = json.loads((batch / "human_eval.json").read_text(encoding="utf-8"))

    result = invoke("card", stsb_copy, "--human-eval", batch, "--repo", REPO, "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    text = (stsb_copy / "README.md").read_text(encoding="utf-8")
    card = DatasetCard.load(stsb_copy / "README.md", repo_type="dataset")
    data = card.data.to_dict()
    assert data["pretty_name"] == "STSBenchmark (shiftbench variants)"
    assert data["license"] == "other"  # mteb gives STSBenchmark's license as "not specified"
    assert data["language"] == ["de", "en"]
    assert data["multilinguality"] == "translation"
    assert data["task_categories"] == ["sentence-similarity"]
    assert data["size_categories"] == ["n<1K"]
    assert data["source_datasets"] == [
        "mteb/stsbenchmark-sts@b0fddb56ed78048fa8b90373c8a3cfc37b684831"
    ]
    assert data["annotations_creators"] == ["machine-generated"]
    assert {"mteb", "synthetic", "robustness"} <= set(data["tags"])
    names = ["original", "paraphrase-s1", "paraphrase-s2", "translation-s1"]
    assert [c["config_name"] for c in data["configs"]] == names
    assert [i["config_name"] for i in data["dataset_info"]] == sorted(names)
    for info in data["dataset_info"]:
        assert info["splits"] == [
            {"name": "test", "num_bytes": info["splits"][0]["num_bytes"], "num_examples": 20}
        ]
    # Prose: config table, generation settings, validation, human figures, loading.
    assert "| `translation-s1` | translation | Language | 1 | de | 20 test | ok 20 |" in text
    assert "- model: `scripted-model`" in text
    assert "Rewrite the text below in different words." in text
    validation = json.loads((stsb_copy / "validation.json").read_text(encoding="utf-8"))
    rate_t = validation["configs"]["translation-s1"]["total_error_rate"]
    assert "| `translation-s1` | 20 | " in text and f"{100 * rate_t:.1f}%" in text
    first = human["rows"][0]
    ac2 = first["agreement"]
    assert (
        f"| {first['criterion']} | {first['level']} | {first['group']} | {first['items']} | "
        f"{first['ratings']} | {first['mean']:.2f} ± {first['sd']:.2f} | "
        f"{100 * first['accepted_share']:.0f}% | {ac2['value']:.3f} "
        f"[{ac2['ci95'][0]:.3f}, {ac2['ci95'][1]:.3f}] |"
    ) in text
    assert "People rated samples in these languages only: de, en." in text
    assert f'load_dataset("{REPO}", "paraphrase-s2", revision="v1.0.0")' in text
    assert "@inproceedings{cer-etal-2017-semeval" in text
    assert "r1" not in human_rater_lines(text)
    # load_dataset accepts the card's configs (and its dataset_info) for every config.
    for name in names:
        ds = load_dataset(str(stsb_copy), name, split="test")
        assert ds.to_list() == read_rows(stsb_copy / name / "test.jsonl")
    # Same folder, same options: the same bytes.
    again = tmp_path / "again.md"
    args = ["--human-eval", batch, "--repo", REPO, "--version", "1.0.0", "-o", again]
    assert invoke("card", stsb_copy, *args).exit_code == 0
    assert again.read_bytes() == (stsb_copy / "README.md").read_bytes()


def human_rater_lines(text: str) -> str:
    start = text.index("## Human evaluation")
    return text[start : text.index("## Loading")]
