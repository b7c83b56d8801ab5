"""A local model folder's own name, read from its files (no model loads)."""

from __future__ import annotations

import json

from shiftbench.core.models.names import own_name, split_named


def test_a_local_folder_is_named_by_its_card_then_config_then_folder(tmp_path):
    """The model card's model-index name or first heading (a template's placeholder
    skipped), else a Hub id in the config, else a Hub cache snapshot's id, else the folder's
    name; a path in the config is no name."""
    folder = tmp_path / "checkpoint-1200"
    folder.mkdir()
    assert own_name(folder) == "checkpoint-1200"
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "/home/me/base"}))
    assert own_name(folder) == "checkpoint-1200"
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "org/base-model"}))
    assert own_name(folder) == "org/base-model"
    (folder / "README.md").write_text(
        "---\nlanguage: en\n---\n\n# SentenceTransformer based on x/y\n"
    )
    assert own_name(folder) == "org/base-model"
    (folder / "README.md").write_text("```\n# not a heading\n```\n# my-encoder\n\n# Usage\n")
    assert own_name(folder) == "my-encoder"
    (folder / "README.md").write_text("---\nmodel-index:\n- name: org/tuned\n---\n# other\n")
    assert own_name(folder) == "org/tuned"
    snapshot = tmp_path / "hub" / "models--org--cached" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    assert own_name(snapshot) == "org/cached"


def test_a_path_holding_equals_is_a_path(tmp_path):
    """NAME=SPEC splits at the first '=', unless the whole of it exists as a path; an
    endpoint's URL keeps its '='."""
    folder = tmp_path / "a=b"
    folder.mkdir()
    assert split_named(str(folder), "--model") == (None, str(folder))
    assert split_named(f"mini={folder}", "--model") == ("mini", str(folder))
    url = "openai:m@http://127.0.0.1:8000/v1?x=y"
    assert split_named(url, "--model") == (None, url)
    assert split_named(f"e5={url}", "--model") == ("e5", url)
