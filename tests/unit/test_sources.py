"""Sources resolve MTEB metadata, local folders and the packaged sample."""

from __future__ import annotations

import re

import pytest

from shiftbench.core.data.sources import resolve_source
from shiftbench.errors import InputError


def test_mteb_task_metadata_comes_from_mteb():
    source = resolve_source("STSBenchmark")
    assert (source.task_type, source.main_score, source.splits) == (
        "STS",
        "cosine_spearman",
        ("test",),
    )
    assert source.dataset_path == "mteb/stsbenchmark-sts"
    assert re.fullmatch(r"[0-9a-f]{40}", source.revision or "")
    assert source.text_fields == ("sentence1", "sentence2")
    assert source.languages == {"default": ["eng-Latn"]}


def test_task_type_must_match_mteb():
    with pytest.raises(InputError, match="STSBenchmark is an MTEB STS task, not Clustering"):
        resolve_source("STSBenchmark", task_type="Clustering")


def test_multilingual_local_copy_keeps_the_subsets_it_has(shared_data):
    source = resolve_source(
        "STSBenchmarkMultilingualSTS", data_dir=str(shared_data / "STSBenchmarkMultilingualSTS")
    )
    assert source.subsets == ("en", "de", "es", "fr", "it", "nl")
    assert source.splits == ("test",)
    rows = source.load("de")["test"]
    assert rows.num_rows == 1379
    assert rows.column_names == ["sentence1", "sentence2", "score"]


def test_sample_ships_with_the_package():
    source = resolve_source("sample")
    test = source.load("default")["test"]
    assert test.num_rows == 42
    assert min(test["score"]) == 0.0 and max(test["score"]) <= 5.0
    assert source.dataset_path == "shiftbench/sample"


def test_local_folder_reads_its_configs(shared_data):
    source = resolve_source(
        str(shared_data / "MRPC"), task_type="PairClassification", splits=("test",)
    )
    assert source.subsets == ("default",)
    test = source.load("default")["test"]
    assert test.num_rows == 1724
