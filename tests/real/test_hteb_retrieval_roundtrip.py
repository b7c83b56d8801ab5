"""HTEB's retrieval files both ways: a tree built as HTEB's generator writes one is
imported, scored under `--protocol hteb` as HTEB's evaluation scores it (each variant on
its own rewritten queries and, where it rewrote them, documents; a text given up on
scored on its original), and exported as files HTEB's loader accepts, byte for byte the
ones read."""

from __future__ import annotations

import json

import pytest
from support.environment import ENCODER
from support.hteb_retrieval import (
    arguana_tree,
    as_stored,
    hteb_ndcg,
    loader_accepts,
    tree_files,
)


def test_an_htebs_retrieval_tree_imports_scores_and_exports_as_hteb_reads_it(
    shared_data, invoke, tmp_path, embedding_store
):
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    tree, run, results, back = (tmp_path / n for n in ("tree", "run", "results", "back"))
    records = arguana_tree(shared_data, tree)
    assert invoke("hteb", "import", tree, "-o", run).exit_code == 0
    done = invoke(
        "evaluate", run, "--protocol", "hteb", "-m", ENCODER, "--precision", "float32",
        "--cache-dir", embedding_store, "--no-plots", "-q", "-o", results,
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert doc["main_score"] == "cosine_ndcg_at_10"
    ours = {r["config"]: r for r in doc["models"][0]["results"] if not r.get("partial")}
    assert set(ours) == {"original", "paraphrase-s1337", "style-change-s1338"}
    assert {c: r["rows"] for c, r in ours.items()} == dict.fromkeys(ours, 29)

    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")

    def encode(texts):
        return model.encode(texts, convert_to_numpy=True)

    original = records["original"]
    for config, rewritten in records.items():
        expected = hteb_ndcg(original, None if config == "original" else rewritten, encode, True)
        assert ours[config]["main_score"] == pytest.approx(expected, abs=1e-6), config
    # the variants differ from the original, and the one that rewrote its documents too
    # is also scored on each side alone
    assert len({r["main_score"] for r in ours.values()}) == 3
    sides = [r["rewritten"] for r in doc["models"][0]["results"] if r.get("partial")]
    assert sides == [["queries"], ["corpus"]]
    # each text HTEB's generator gave up on was scored on its original
    assert ours["paraphrase-s1337"]["restored"] == {"rows": 1, "texts": 1, "kept_as_written": 0}

    assert invoke("hteb", "export", run, "-o", back).exit_code == 0
    assert tree_files(back) == tree_files(tree)
    read = loader_accepts(back)
    stored = as_stored(original)
    assert read["paraphrasing/1337"] == (stored, as_stored(records["paraphrase-s1337"]))
    assert read["style_change/1338"] == (stored, as_stored(records["style-change-s1338"]))
