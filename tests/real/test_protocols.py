"""Protocol presets and per-step prompt files."""

from __future__ import annotations

import json

import pytest

from shiftbench.gen.generate import spread_over_labels


def test_pteb_scores_classification_with_one_classifier_on_all_train_rows(
    scripted, shared_data, invoke, tmp_path
):
    """A run folder made with --protocol pteb is scored as PTEB does by default: one
    logistic regression on every train row, checked against plain sklearn."""
    import datasets
    import numpy as np
    from sentence_transformers import SentenceTransformer
    from sklearn.linear_model import LogisticRegression

    from shiftbench.core.models.encoders import Encoder

    model_name = "sentence-transformers/all-MiniLM-L6-v2"
    run = tmp_path / "run"
    data = shared_data / "Banking77Classification"
    args = ["--data-dir", data, "--limit", "200", "--protocol", "pteb", "-s", "1", "-q"]
    result = invoke("gen", "Banking77Classification", *args, "-b", "scripted", "-o", run)
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", model_name, "-o", out, "--resamples", "0", "-q")
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["name"] == "pteb"
    assert doc["protocol"]["chosen_by"] == "run folder"
    original = doc["models"][0]["results"][0]
    assert (original["config"], original["protocol"]) == ("original", "pteb")

    def limited(split):  # --limit 200 spreads over the labels (tested in test_rewrite_parts)
        rows = datasets.load_dataset(str(data), split=split)
        return [rows[i] for i in spread_over_labels(rows["label"], 200)]

    train, test = limited("train"), limited("test")
    encoder = SentenceTransformer(Encoder(model_name).path, device="cpu")
    fitted = LogisticRegression(max_iter=100, random_state=42).fit(
        encoder.encode([r["text"] for r in train]), [r["label"] for r in train]
    )
    predicted = fitted.predict(encoder.encode([r["text"] for r in test]))
    expected = float(np.mean(predicted == np.array([r["label"] for r in test])))
    assert original["main_score"] == pytest.approx(expected, abs=1e-6)

    mteb_out = tmp_path / "mteb"
    result = invoke("evaluate", run, "-m", model_name, "-o", mteb_out, "--resamples", "0",
                    "-q", "--protocol", "shiftbench")  # fmt: skip
    assert result.exit_code == 0, result.output
    mteb_doc = json.loads((mteb_out / "results.json").read_text(encoding="utf-8"))
    assert mteb_doc["protocol"]["overrides_run_folder"] is True
    assert mteb_doc["models"][0]["results"][0]["main_score"] != original["main_score"]
