"""HTEB's nested clustering, end to end: a tree of TwentyNewsgroupsClustering's shape (each
record a set of texts and its labels), written as HTEB's writer writes it, imports, scores
under `--protocol hteb` as HTEB's evaluation scores it, and exports back as the same
records, which HTEB's loader accepts.

HTEB's side is worked out here from its release (hteb/transformation_parquet.py,
hteb/dataset_preparation.py, hteb/evaluation.py, hteb/util.py), in this test's own code:
the file names and statistics, the loader's checks, the putting back of each empty text by
its original, and the clustering (scikit-learn's MiniBatchKMeans, as many clusters as the
set has labels, batches of 500, n_init "auto", seeded with the evaluation seed) scored by
the mean V-measure over the sets."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from support.environment import ENCODER
from support.files import read_rows

DATASET, MODEL, STAMP = "TwentyNewsgroupsClustering", "org/rewriter-9b", "2026-10-01T12:00:00Z"
FOLDER = "org~2Frewriter-9b"  # the model's Hub id, escaped as HTEB names its folder
SETS, PER_SET = 3, 14
GIVEN_UP = {(0, 3), (2, 0), (2, 9)}  # (set, text) HTEB's generator gave up on: written empty


def _hteb_hash(value: dict) -> str:
    """HTEB's settings hash: sha256 of compact JSON, keys sorted, non-ASCII kept."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                      sort_keys=True)  # fmt: skip
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _statistics(originals: list[dict], rewritten: list[dict]) -> dict:
    """HTEB's statistics of a stored pair: every non-empty text a target, an empty output
    a fallback, an output equal to its input unchanged; no retry history."""
    slots = [(i, a, b) for i, (o, r) in enumerate(zip(originals, rewritten, strict=True))
             for a, b in zip(o["sentences"], r["sentences"], strict=True) if a.strip()]  # fmt: skip
    failed = [(i, a, b) for i, a, b in slots if not b.strip()]
    return {
        "records_total": len(originals),
        "records_targeted": len({i for i, _, _ in slots}),
        "text_fields_total": len(slots),
        "records_with_fallback": len({i for i, _, _ in failed}),
        "text_fields_with_fallback": len(failed),
        "unchanged_outputs": sum(1 for _, a, b in slots if b == a),
        "retried_text_fields": "",
        "recovered_after_retry_text_fields": "",
        "fallback_reasons": "",
    }


def _write_as_hteb(root: Path, originals: list[dict], rewritten: list[dict], seed: int) -> Path:
    """One pair as HTEB's writer writes it: the dated identity's hash in both names, two
    struct columns of one type (zstd, dictionary, statistics, Parquet 2.6), the metadata
    keys in its order, indented JSON with a final newline."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    identity = {"generator_model": MODEL, "transformation": "paraphrasing", "dataset": DATASET,
                "seed_transform": seed, "generation_datetime": STAMP}  # fmt: skip
    digest = _hteb_hash(identity)
    assert quote(MODEL, safe="").replace("%", "~") == FOLDER
    folder = root / FOLDER / DATASET / "paraphrasing" / str(seed)
    folder.mkdir(parents=True)
    kind = pa.array(originals).type
    table = pa.Table.from_arrays(
        [pa.array(originals, type=kind), pa.array(rewritten, type=kind)],
        names=["original", f"paraphrasing_seed_{seed}"],
    )
    pq.write_table(table, folder / f"data_{digest}.parquet", compression="zstd",
                   use_dictionary=True, write_statistics=True, version="2.6")  # fmt: skip
    metadata = {**identity, "max_model_length": 8192, "max_tokens": 512, "max_retries": 3,
                "generation_statistics": _statistics(originals, rewritten),
                "source_revision": "726b531f19733d606fd4abedff37afe05c3708fe",
                "clustering_format": "nested"}  # fmt: skip
    with (folder / f"metadata_{digest}.JSON").open("x", encoding="utf-8") as handle:
        json.dump(metadata, handle, ensure_ascii=False, indent=2, allow_nan=False)
        handle.write("\n")
    return folder


def _hteb_loads(folder: Path) -> tuple[list[dict], list[dict], dict]:
    """HTEB's loader on a transformation folder: the newest pair, its names from its
    identity, exactly its two struct columns of one type and no schema metadata, the
    metadata's keys and counts, and each record a set of texts with a label per text,
    before and after the empty texts are put back. Returns (original, rewritten,
    metadata)."""
    import pyarrow.parquet as pq

    (data,) = sorted(folder.glob("data*.parquet"))
    meta = json.loads(data.with_name(
        data.name.replace("data", "metadata", 1).replace(".parquet", ".JSON")
    ).read_text(encoding="utf-8"))  # fmt: skip
    identity = {k: meta[k] for k in ("generator_model", "transformation", "dataset",
                                     "seed_transform", "generation_datetime")}  # fmt: skip
    assert data.name == f"data_{_hteb_hash(identity)}.parquet"
    assert set(meta) == {*identity, "max_model_length", "max_tokens", "max_retries",
                         "generation_statistics", "source_revision",
                         "clustering_format"}  # fmt: skip
    assert meta["clustering_format"] == "nested"
    column = f"{meta['transformation']}_seed_{meta['seed_transform']}"
    schema = pq.read_schema(data)
    assert not schema.metadata and schema.names == ["original", column]
    assert schema.field("original").type == schema.field(column).type
    table = pq.read_table(data).to_pydict()
    originals, rewritten = table["original"], table[column]
    assert meta["generation_statistics"]["records_total"] == len(originals)
    for o, r in zip(originals, rewritten, strict=True):
        assert isinstance(o["sentences"], list) and len(o["labels"]) == len(o["sentences"])
        assert all(t.strip() for t in o["sentences"])
        assert len(_put_back(o, r)) == len(o["labels"])
    return originals, rewritten, meta


def _put_back(original: dict, rewritten: dict) -> list[str]:
    """HTEB's restoration of a set: an empty set entirely its original, else each empty
    text its original."""
    texts = rewritten["sentences"]
    if not texts:
        return list(original["sentences"])
    return [t if t and t.strip() else o for o, t in zip(original["sentences"], texts, strict=True)]


def _hteb_v_measure(model, sets: list[tuple[list[str], list]], seed: int) -> float:
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import v_measure_score

    scores = []
    for texts, labels in sets:
        labels = [str(label) for label in labels]
        vectors = model.encode(texts, convert_to_numpy=True)
        fitted = MiniBatchKMeans(n_clusters=len(set(labels)), batch_size=500, n_init="auto",
                                 random_state=seed).fit(vectors)  # fmt: skip
        scores.append(float(v_measure_score(labels, fitted.labels_)))
    return float(np.mean(scores))


@pytest.fixture
def nested_tree(shared_data, tmp_path):
    """MasakhaNEWS' English headlines as TwentyNewsgroupsClustering's records: three sets
    of 14 headlines of 7 topics, as HTEB's loader builds them from the Hub's rows (the
    Hub's fields, then _hteb_split and language)."""
    rows = read_rows(shared_data / "MasakhaNEWSClusteringS2S" / "eng" / "test.jsonl")
    by_topic: dict[str, list[str]] = {}
    for row in rows:
        by_topic.setdefault(row["labels"], []).append(row["sentences"])
    topics = sorted(by_topic)
    originals = []
    for k in range(SETS):
        picked = [(by_topic[t][k * 2 + j], t) for j in range(2) for t in topics][:PER_SET]
        originals.append({"sentences": [s for s, _ in picked], "labels": [t for _, t in picked],
                          "_hteb_split": "test", "language": "eng"})  # fmt: skip
    rewritten = [
        {**o, "sentences": ["" if (k, j) in GIVEN_UP else f"In a word: {s.lower()}"
                            for j, s in enumerate(o["sentences"])]}
        for k, o in enumerate(originals)
    ]  # fmt: skip
    _write_as_hteb(tmp_path / "tree", originals, rewritten, 1337)
    return tmp_path / "tree", originals, rewritten


def test_a_nested_clustering_tree_scores_as_hteb_and_exports_back(nested_tree, invoke, tmp_path):
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    tree, originals, rewritten = nested_tree
    run, results, back = tmp_path / "run", tmp_path / "results", tmp_path / "back"
    result = invoke("hteb", "import", tree, "-o", run)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"imported HTEB's {DATASET} rewrites by {MODEL} as original, paraphrase-s1337 to {run}\n"
    )
    rows = read_rows(run / "paraphrase-s1337" / "test.jsonl")
    assert [(k, j) for k, r in enumerate(rows) for j, s in enumerate(r["status_sentences"])
            if s == "fallback"] == sorted(GIVEN_UP)  # fmt: skip
    assert [r["status"] for r in rows] == ["fallback", "ok", "fallback"]

    done = invoke("evaluate", run, "-m", ENCODER, "--precision", "float32", "--no-plots",
                  "--resamples", "0", "-q", "-o", results)  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["name"] == "hteb"
    variant = next(r for r in doc["models"][0]["results"] if r["config"] == "paraphrase-s1337")
    assert variant["restored"] == {"rows": 2, "texts": 3, "kept_as_written": 0}

    # HTEB's evaluation of the pair, seeded with the evaluation seed (the pair's seed)
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    sets = [(_put_back(o, r), o["labels"]) for o, r in zip(originals, rewritten, strict=True)]
    assert abs(variant["main_score"] - _hteb_v_measure(model, sets, 1337)) < 1e-6

    result = invoke("hteb", "export", run, "-o", back)
    assert result.exit_code == 0, result.output
    folder = Path(FOLDER) / DATASET / "paraphrasing" / "1337"
    theirs, ours = _hteb_loads(tree / folder), _hteb_loads(back / folder)
    assert ours == theirs  # the same records and metadata
    for path in (tree / folder).iterdir():
        assert (back / folder / path.name).read_bytes() == path.read_bytes(), path.name
