"""An imported HTEB tree evaluates as HTEB scores it: a text HTEB's generator gave up on
is scored on its original, every other output as written."""

from __future__ import annotations

import json

import numpy as np
from scipy.stats import spearmanr
from support.environment import ENCODER
from support.files import read_rows


def test_an_imported_run_scores_as_hteb_scores_its_files(sts_tree, invoke, tmp_path):
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    run, results = tmp_path / "run", tmp_path / "results"
    assert invoke("hteb", "import", sts_tree, "-o", run).exit_code == 0
    done = invoke("evaluate", run, "-m", ENCODER, "--precision", "float32", "--no-plots",
                  "-q", "-o", results)  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads((results / "results.json").read_text())
    assert doc["protocol"]["name"] == "hteb"
    scored = {r["config"]: r["main_score"] for r in doc["models"][0]["results"]}

    # HTEB's reuse mode, written out: a blank text is replaced by its original, then the
    # Spearman correlation of the pairs' cosine similarities with the gold scores
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    for config in ("original", "paraphrase-s1337", "paraphrase-s1338", "summarisation-s1337"):
        rows = read_rows(run / config / "test.jsonl")
        texts = [
            [r[f] if str(r[f]).strip() else r.get(f"original_{f}", r[f]) for r in rows]
            for f in ("sentence1", "sentence2")
        ]
        a, b = (model.encode(t, convert_to_numpy=True) for t in texts)
        cosine = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        expected = spearmanr(cosine, [r["score"] for r in rows]).statistic
        assert abs(scored[config] - expected) < 1e-6, config
    # the fallback row is scored, on its original second sentence
    assert [r["rows"] for r in doc["models"][0]["results"]] == [12, 12, 12, 12]
