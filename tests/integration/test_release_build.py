"""Building a release without the Hub: configs loaded together as each loads alone, and
the Croissant check that runs beside the loading."""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
from pathlib import Path

import pytest

from shiftbench.cards import croissant
from shiftbench.cards.release import (
    _load,
    build,
    check_folder,
    data_paths,
    infos_by_loading,
    release_files,
)
from shiftbench.core.data.parts import context_name
from shiftbench.core.data.runcard import table_config
from shiftbench.errors import InputError


def alone(files: dict[str, Path | bytes], meta, tmp_path: Path) -> dict[str, object]:
    """Every card config loaded by a builder of its own, as load_dataset of that config
    builds it."""
    view = tmp_path / "view" / "repo"
    for path, item in files.items():
        target = view / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item if isinstance(item, bytes) else item.read_bytes())
    splits: dict[str, list[tuple[str, str]]] = {}
    for name, info in meta["configs"].items():
        for split in info["rows"]:
            kind, _, of = context_name(split).rpartition("/")
            card = table_config(name, kind, info.get("subset")) if kind else name
            splits.setdefault(card, []).append((of, f"{name}/{split}.parquet"))
    out = {}
    for card, its_splits in splits.items():
        out[card] = _load(view, card, its_splits, "parquet", tmp_path / "scratch")
    return out


@pytest.mark.parametrize("run", ["stsb_copy", "corpus_run"])
def test_configs_loaded_together_record_what_each_records_alone(run, request, tmp_path):
    """Configs whose files share a schema are loaded by one Parquet builder; each gets the
    features, split sizes and row counts, download size and dataset size that a builder of
    its own records (the STSBenchmark run: original and transformed configs, two schemas;
    the retrieval run: a config per table as well)."""
    folder = request.getfixturevalue(run)
    meta = check_folder(folder)
    files = release_files(folder, meta, "parquet")
    together = infos_by_loading(files, meta, "parquet")
    each = alone(files, meta, tmp_path)
    assert set(together) == set(meta["configs"]) and len(each) >= len(together)
    for name, info in together.items():
        single = each[name]
        assert info.features == single.features
        assert {s: (v.num_bytes, v.num_examples) for s, v in info.splits.items()} == {
            s: (v.num_bytes, v.num_examples) for s, v in single.splits.items()
        }
        assert (info.download_size, info.dataset_size) == (
            single.download_size,
            single.dataset_size,
        )


def test_a_config_that_does_not_load_is_named_alone(stsb_copy):
    """A damaged Parquet file fails the builder of its group; the message names the one
    config that does not load, as when each config had a builder of its own."""
    meta = check_folder(stsb_copy)
    files = release_files(stsb_copy, meta, "parquet")
    name, split = data_paths(meta)[2]
    path = f"{name}/{split}.parquet"
    good = files[path]
    assert isinstance(good, bytes)
    files[path] = good[: len(good) // 2]
    with pytest.raises(InputError) as caught:
        infos_by_loading(files, meta, "parquet")
    assert str(caught.value).startswith(f"config {name} does not load with load_dataset: ")


@pytest.fixture
def document(stsb_copy) -> dict:
    release, _, _ = build(stsb_copy, "org/name", "v1.0.0")
    doc: dict = json.loads(release.files[croissant.CROISSANT_FILE])
    return doc


def refusal(doc: dict) -> str:
    with pytest.raises(InputError) as caught:
        croissant.validate(doc)
    return str(caught.value)


def test_the_check_beside_the_build_says_what_mlcroissant_says(document):
    with croissant.validating(document) as validated:
        validated()  # a good document: nothing to say
    bad = {**document, "datePublished": "yesterday"}
    expected = refusal(bad)
    assert expected.startswith("the Croissant metadata does not validate: ")
    assert "ISO 8601" in expected
    with croissant.validating(bad) as validated, pytest.raises(InputError) as caught:
        validated()
    assert str(caught.value) == expected
    assert multiprocessing.active_children() == []


def test_a_check_whose_child_dies_is_done_in_the_caller(document, monkeypatch):
    """A child that exits without a verdict: the wait validates the document itself."""
    monkeypatch.setattr(croissant, "_validate_in_child", lambda doc, sender: os._exit(3))
    bad = {**document, "datePublished": "yesterday"}
    with croissant.validating(bad) as validated, pytest.raises(InputError) as caught:
        validated()
    assert str(caught.value) == refusal(bad)
    with croissant.validating(document) as validated:
        validated()


def test_leaving_the_build_early_ends_the_check(document):
    """A failure in the body (here: an error of the loading) ends the child too."""
    with pytest.raises(RuntimeError), croissant.validating(document):
        assert len(multiprocessing.active_children()) == 1
        raise RuntimeError("the loading failed")
    assert multiprocessing.active_children() == []


def test_a_child_that_cannot_start_leaves_the_check_to_the_caller(document, monkeypatch):
    def refuse(self):
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.get_context("fork").Process, "start", refuse)
    bad = {**document, "datePublished": "yesterday"}
    with croissant.validating(bad) as validated:
        assert multiprocessing.active_children() == []
        with pytest.raises(InputError) as caught:
            validated()
    assert str(caught.value) == refusal(bad)


def test_without_fork_the_check_runs_in_the_caller(document, monkeypatch):
    monkeypatch.setattr(croissant.sys, "platform", "darwin")
    bad = {**document, "datePublished": "yesterday"}
    with croissant.validating(bad) as validated:
        assert multiprocessing.active_children() == []
        with pytest.raises(InputError) as caught:
            validated()
    assert str(caught.value) == refusal(bad)


def test_a_release_build_leaves_no_scratch_folder(stsb_copy, tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    build(stsb_copy, "org/name", "v1.0.0")
    assert list(scratch.iterdir()) == []
