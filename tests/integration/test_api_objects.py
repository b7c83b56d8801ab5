"""The Python API takes what a Python user holds: a source by name, a loaded
SentenceTransformer or mteb model, and gives a DataFrame back; it writes nothing into the
current folder unasked, names its arguments in errors and says when a call found
everything made already."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import pytest
from support.environment import ENCODER

import shiftbench
from shiftbench.core.messages import REPORT

QUICK = {"quiet": True, "plots": False, "resamples": 0}


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch):
    """An empty current folder, which the API must leave empty."""
    here = tmp_path / "empty_cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    return here


def test_generate_takes_a_source_name_and_says_when_all_was_there(
    scripted, empty_cwd, caplog, monkeypatch
):
    cache = Path(os.environ["SHIFTBENCH_CACHE_DIR"])
    settings = shiftbench.GenSettings(backend="scripted", quiet=True)
    first = shiftbench.generate("sample", settings)
    assert first.folder == cache / "runs" / "sample"
    assert (first.configs, first.kept) == (("original", "paraphrase-s1337"), ())
    # a handler of its own, as the README tells a caller who wants the REPORT lines (the
    # command line's sink, once installed, stops them reaching the root logger)
    logger = logging.getLogger("shiftbench")
    monkeypatch.setattr(logger, "level", REPORT)
    monkeypatch.setattr(logger, "handlers", [caplog.handler])
    monkeypatch.setattr(logger, "propagate", False)
    again = shiftbench.generate("sample", settings)
    assert (again.configs, again.kept) == ((), ("original", "paraphrase-s1337"))
    assert [r.getMessage() for r in caplog.records if r.levelno == REPORT] == [
        f"nothing to do: every config asked for is already complete in {first.folder}"
    ]
    assert list(empty_cwd.iterdir()) == []


def test_errors_raised_to_python_name_the_argument(scripted, empty_cwd):
    settings = shiftbench.GenSettings(backend="scripted", engine_args={"enforce_eager": True})
    with pytest.raises(shiftbench.InputError) as caught:
        shiftbench.generate("sample", settings)
    assert str(caught.value) == "engine_args applies to the vllm backend only"
    with pytest.raises(shiftbench.InputError) as caught:
        shiftbench.score_encoders("sample", [ENCODER], shiftbench.EvalSettings(resamples=10))
    assert str(caught.value) == "resamples must be 0 (no intervals) or at least 1000, not 10"
    assert list(empty_cwd.iterdir()) == []


def test_a_loaded_model_scores_as_its_name_does(scripted, empty_cwd, tmp_path):
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    cache = Path(os.environ["SHIFTBENCH_CACHE_DIR"])
    run = shiftbench.generate("sample", shiftbench.GenSettings(backend="scripted", quiet=True))
    by_name = shiftbench.score_encoders(
        run.folder, [ENCODER], shiftbench.EvalSettings(output=tmp_path / "by-name", **QUICK)
    )
    model = SentenceTransformer(resolve_encoder(ENCODER)[0])  # the packaged copy's folder
    with_intervals = shiftbench.EvalSettings(**{**QUICK, "resamples": 1000})
    loaded = shiftbench.score_encoders(run.folder, [model], with_intervals)
    assert loaded.folder == cache / "results" / "sample"
    assert list(empty_cwd.iterdir()) == []
    assert [(s.model, s.config, s.score, s.delta) for s in loaded.scores] == [
        (s.model, s.config, s.score, s.delta) for s in by_name.scores
    ]
    described = _model_entry(loaded.folder)
    assert described["id"] == ENCODER and described["object"] == "SentenceTransformer"
    assert described["revision"].startswith("sha256:")

    wrapped = SentenceTransformerEncoderWrapper(model)  # what mteb.get_model returns for it
    through_mteb = shiftbench.score_encoders(
        run.folder, [wrapped], shiftbench.EvalSettings(output=tmp_path / "mteb", **QUICK)
    )
    assert {s.model for s in through_mteb.scores} == {f"mteb:{ENCODER}"}
    # mteb batches the texts its own way: equal to float32's last digits
    assert [round(s.score, 6) for s in through_mteb.scores] == [
        round(s.score, 6) for s in by_name.scores
    ]

    frame = loaded.to_dataframe()
    assert list(frame.columns) == [
        "model", "config", "kind", "transform", "axis", "seed", "split", "subset", "rows",
        "main_score_name", "main_score", "original_same_rows", "delta", "ci95_low", "ci95_high",
    ]  # fmt: skip
    assert len(frame) == len(loaded.scores) == 2
    for (_, row), score in zip(frame.iterrows(), loaded.scores, strict=True):
        expected = (
            score.model, score.config, score.kind, score.split, score.subset, score.rows,
            loaded.main_score, score.score,
        )  # fmt: skip
        assert (
            row.model, row.config, row.kind, row.split, row.subset, row.rows,
            row.main_score_name, row.main_score,
        ) == expected  # fmt: skip
        for column, value in (
            ("original_same_rows", score.original_same_rows),
            ("delta", score.delta),
            ("ci95_low", score.ci95[0] if score.ci95 else None),
            ("ci95_high", score.ci95[1] if score.ci95 else None),
        ):
            assert math.isnan(row[column]) if value is None else row[column] == value, column
    assert frame.loc[1, "seed"] == 1337 and frame.loc[1, "transform"] == "paraphrase"


def _model_entry(folder: Path) -> dict:
    import json

    document = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return document["models"][0]["model"]
