"""HTEB's one-text-per-field task types, end to end: classification (banking77), pair
classification (SprintDuplicateQuestions), per-language clustering (MasakhaNEWS) and STR
(semrel2024). For each, a small tree written as HTEB's generator and writer write it
imports, scores under `--protocol hteb` as HTEB's evaluation scores it, and exports back
as the same files, which HTEB's loader accepts.

HTEB's side is worked out here from its release (hteb/generation.py,
hteb/transformation_parquet.py, hteb/dataset_preparation.py, hteb/evaluation.py), in this
test's own code. Its generator strips an output and refuses a blank one, a placeholder
("n/a", "none", ... in any case), one of punctuation marks alone, and one cut at its token
budget; after its retries it writes the text empty and counts the reason. So each tree
holds a model answer "N/A", one of "?!" and one cut at the budget, all written empty, and
HTEB's reuse mode puts each empty text back by its original before scoring."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import numpy as np
from support.environment import ENCODER
from support.files import read_rows

MODEL, STAMP, SEED = "org/rewriter-9b", "2026-10-02T09:30:00Z", 1337
FOLDER = "org~2Frewriter-9b"  # the model's Hub id, escaped as HTEB names its folder
MAX_RETRIES = 3
# the three answers HTEB's generator gives up on: a placeholder, marks alone, a cut answer
NA = {"text": "N/A", "finish_reason": "stop"}
MARKS = {"text": " ?! ", "finish_reason": "stop"}
CUT = {"text": "It is about the account and the way the", "finish_reason": "length"}
_PLACEHOLDERS = {"[text]", "<text>", "placeholder", "n/a", "none"}
_MARKS_ONLY = re.compile(r"^[\s.,;:!?\-_'\"…·•*+()\[\]<>/\\|#@&^~`]+$")


def _hteb_hash(value: dict) -> str:
    """HTEB's settings hash: sha256 of compact JSON, keys sorted, non-ASCII kept."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                      sort_keys=True)  # fmt: skip
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _hteb_generates(
    originals: list[dict],
    fields: tuple[str, ...],
    rewrite: Callable[[str], str],
    answers: dict[tuple[int, str], dict],
) -> tuple[list[dict], dict]:
    """HTEB's generator on `originals` with a model that answers `rewrite(text)`, or
    `answers[(record, field)]` at every attempt: the rewritten records (an accepted
    answer stripped, a refused one empty after the retries) and the statistics."""
    rewritten = [dict(r) for r in originals]
    reasons: dict[str, int] = {}
    total = unchanged = 0
    targeted, failed_records = set(), set()
    for i, record in enumerate(originals):
        for field in fields:
            text = record[field]
            if not text.strip():
                continue
            total += 1
            targeted.add(i)
            answer = answers.get((i, field), {"text": rewrite(text), "finish_reason": "stop"})
            cleaned = answer["text"].strip()
            if answer["finish_reason"] == "length":
                reason = "output_length_after_retries"
            elif not cleaned or cleaned.casefold() in _PLACEHOLDERS or _MARKS_ONLY.match(cleaned):
                reason = "invalid_text_after_retries"
            else:
                rewritten[i][field] = cleaned
                unchanged += cleaned == text
                continue
            rewritten[i][field] = ""
            reasons[reason] = reasons.get(reason, 0) + 1
            failed_records.add(i)
    failed = sum(reasons.values())
    stats = {
        "records_total": len(originals),
        "records_targeted": len(targeted),
        "text_fields_total": total,
        "records_with_fallback": len(failed_records),
        "text_fields_with_fallback": failed,
        "unchanged_outputs": unchanged,
        "retried_text_fields": failed,  # each refused text was tried MAX_RETRIES more times
        "recovered_after_retry_text_fields": 0,
        "fallback_reasons": reasons,
    }
    return rewritten, stats


def _hteb_writes(
    root: Path, dataset: str, task_type: str, originals: list[dict], rewritten: list[dict],
    stats: dict, revision: str, clustering_format: str | None = None,
) -> Path:  # fmt: skip
    """One pair as HTEB's writer writes it: the dated identity's hash in both names, two
    struct columns of one type (zstd, dictionary, statistics, Parquet 2.6), the metadata
    keys in its order (its filter report of stored records kept whole, the source
    revision, a clustering set's layout), indented JSON with a final newline."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    identity = {"generator_model": MODEL, "transformation": "paraphrasing", "dataset": dataset,
                "seed_transform": SEED, "generation_datetime": STAMP}  # fmt: skip
    digest = _hteb_hash(identity)
    assert quote(MODEL, safe="").replace("%", "~") == FOLDER
    folder = root / FOLDER / dataset / "paraphrasing" / str(SEED)
    folder.mkdir(parents=True)
    kind = pa.array(originals).type
    table = pa.Table.from_arrays(
        [pa.array(originals, type=kind), pa.array(rewritten, type=kind)],
        names=["original", f"paraphrasing_seed_{SEED}"],
    )
    pq.write_table(table, folder / f"data_{digest}.parquet", compression="zstd",
                   use_dictionary=True, write_statistics=True, version="2.6")  # fmt: skip
    counts = {"records": len(originals)}
    metadata = {
        **identity, "max_model_length": 8192, "max_tokens": 512, "max_retries": MAX_RETRIES,
        "generation_statistics": stats,
        "data_filtering": {"version": 2, "task_type": task_type, "input_scope": "stored_records",
                           "counts_before": counts, "counts_after": counts, "excluded": [],
                           "excluded_documents": [], "excluded_candidates": []},
        "source_revision": revision,
        **({"clustering_format": clustering_format} if clustering_format else {}),
    }  # fmt: skip
    with (folder / f"metadata_{digest}.JSON").open("x", encoding="utf-8") as handle:
        json.dump(metadata, handle, ensure_ascii=False, indent=2, allow_nan=False)
        handle.write("\n")
    return folder


def _hteb_loads(folder: Path, fields: tuple[str, ...]) -> tuple[list[dict], list[dict], dict]:
    """HTEB's loader on a transformation folder: its one pair, named from its identity,
    exactly its two struct columns of one type and no schema metadata, the metadata's keys
    and counts (the failed texts' reasons adding up), every original text present; then
    each empty rewritten text put back by its original. Returns (original, restored,
    metadata)."""
    import pyarrow.parquet as pq

    (data,) = sorted(folder.glob("data*.parquet"))
    meta = json.loads(data.with_name(
        data.name.replace("data", "metadata", 1).replace(".parquet", ".JSON")
    ).read_text(encoding="utf-8"))  # fmt: skip
    identity = {k: meta[k] for k in ("generator_model", "transformation", "dataset",
                                     "seed_transform", "generation_datetime")}  # fmt: skip
    assert data.name == f"data_{_hteb_hash(identity)}.parquet"
    optional = {"data_filtering", "source_revision", "clustering_format"} & set(meta)
    assert set(meta) == {*identity, "max_model_length", "max_tokens", "max_retries",
                         "generation_statistics", *optional}  # fmt: skip
    assert re.fullmatch(r"[0-9a-f]{40}", meta["source_revision"])
    stats = meta["generation_statistics"]
    assert sum(stats["fallback_reasons"].values()) == stats["text_fields_with_fallback"]
    assert stats["records_with_fallback"] <= stats["text_fields_with_fallback"]
    column = f"{meta['transformation']}_seed_{meta['seed_transform']}"
    schema = pq.read_schema(data)
    assert not schema.metadata and schema.names == ["original", column]
    assert schema.field("original").type == schema.field(column).type
    table = pq.read_table(data).to_pydict()
    originals, rewritten = table["original"], table[column]
    assert stats["records_total"] == len(originals)
    assert meta["data_filtering"]["counts_after"] == {"records": len(originals)}
    restored = []
    for o, r in zip(originals, rewritten, strict=True):
        assert all(isinstance(o[f], str) and o[f].strip() for f in fields)
        restored.append({**r, **{f: o[f] if r[f] is None or not r[f].strip() else r[f]
                                 for f in fields}})  # fmt: skip
    return originals, restored, meta


# HTEB's evaluation of records, written out


def _model():
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    return SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-12)
    return (a * b).sum(-1)


def _hteb_accuracy(model, records: list[dict]) -> float:
    """One logistic regression (100 iterations, the evaluation seed) fitted on every train
    record, its accuracy on the test records."""
    from sklearn.linear_model import LogisticRegression

    train = [r for r in records if r["_hteb_split"] == "train"]
    test = [r for r in records if r["_hteb_split"] == "test"]
    fitted = LogisticRegression(random_state=SEED, n_jobs=1, max_iter=100).fit(
        model.encode([r["text"] for r in train]), np.asarray([r["label"] for r in train])
    )
    predicted = fitted.predict(model.encode([r["text"] for r in test]))
    return float(np.mean(predicted == np.asarray([r["label"] for r in test])))


def _hteb_pair_ap(model, records: list[dict]) -> float:
    """scikit-learn's average precision of the pairs' cosines, each distinct text
    embedded once."""
    from sklearn.metrics import average_precision_score

    left, right = [r["sentence1"] for r in records], [r["sentence2"] for r in records]
    unique = list(dict.fromkeys([*left, *right]))
    vectors = dict(zip(unique, model.encode(unique), strict=True))
    similarity = _cosine(
        np.stack([vectors[t] for t in left]), np.stack([vectors[t] for t in right])
    )
    return float(average_precision_score([r["labels"] for r in records], similarity))


def _hteb_v_measures(model, records: list[dict]) -> dict[str, float]:
    """Per language (in record order), its texts clustered once: MiniBatchKMeans with as
    many clusters as labels, batches of 500, n_init "auto", seeded with the evaluation
    seed; its V-measure."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import v_measure_score

    out = {}
    for language in dict.fromkeys(r["language"] for r in records):
        texts = [r["sentences"] for r in records if r["language"] == language]
        labels = [str(r["labels"]) for r in records if r["language"] == language]
        fitted = MiniBatchKMeans(n_clusters=len(set(labels)), batch_size=500, n_init="auto",
                                 random_state=SEED).fit(model.encode(texts))  # fmt: skip
        out[language] = float(v_measure_score(labels, fitted.labels_))
    return out


def _hteb_spearman(model, records: list[dict]) -> float:
    """Spearman's correlation of the pairs' cosines with the gold `label`, every record
    of every language at once."""
    from scipy.stats import spearmanr

    a = model.encode([r["sentence1"] for r in records])
    b = model.encode([r["sentence2"] for r in records])
    return float(spearmanr(_cosine(a, b), [float(r["label"]) for r in records]).statistic)


def _import_evaluate(invoke, tree: Path, tmp_path: Path) -> tuple[Path, list[dict]]:
    run, results = tmp_path / "run", tmp_path / "results"
    made = invoke("hteb", "import", tree, "-o", run)
    assert made.exit_code == 0, made.output
    done = invoke("evaluate", run, "-m", ENCODER, "--precision", "float32", "--no-plots",
                  "--resamples", "0", "-q", "-o", results)  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["name"] == "hteb"
    return run, doc["models"][0]["results"]


def _exports_back(invoke, run: Path, tree: Path, folder: Path, tmp_path: Path, fields):
    """The export holds the tree's pair: HTEB's loader reads the same records and
    metadata from it, and its files are the tree's, byte for byte."""
    back = tmp_path / "back"
    result = invoke("hteb", "export", run, "-o", back)
    assert (result.exit_code, result.stdout) == (
        0, f"wrote 1 HTEB pair (paraphrasing/{SEED}) to {back}\n"
    )  # fmt: skip
    assert _hteb_loads(back / folder, fields) == _hteb_loads(tree / folder, fields)
    theirs = sorted((tree / folder).iterdir())
    assert [p.name for p in sorted((back / folder).iterdir())] == [p.name for p in theirs]
    for path in theirs:
        assert (back / folder / path.name).read_bytes() == path.read_bytes(), path.name


def _statuses(rows: list[dict], fields: tuple[str, ...]) -> list[tuple[int, str]]:
    return [(i, f) for i, r in enumerate(rows) for f in fields if r[f"status_{f}"] == "fallback"]


# the four task types


def test_banking77_scores_as_htebs_classifier_and_exports_back(shared_data, invoke, tmp_path):
    """Banking77's train and test records of three intents in one file; the train texts
    are rewritten too, and HTEB fits its classifier on the rewritten train split."""
    dataset, fields = "banking77", ("text",)
    folder = shared_data / "Banking77Classification" / "data"
    originals = []
    for split, per_label in (("train", 8), ("test", 5)):
        rows = read_rows(folder / f"{split}.jsonl")
        for label in (0, 1, 2):
            picked = [r for r in rows if r["label"] == label][:per_label]
            originals += [{**r, "_hteb_split": split, "language": "eng"} for r in picked]
    given_up = {(2, "text"): NA, (30, "text"): MARKS, (35, "text"): CUT}  # 2 train, 2 test
    rewritten, stats = _hteb_generates(
        originals, fields, lambda t: f"Customer writes: {t.lower()}", given_up
    )
    tree = tmp_path / "tree"
    folder = _hteb_writes(tree, dataset, "classification", originals, rewritten, stats,
                          "18072d2685ea682290f7b8924d94c62acc19c0b2")  # fmt: skip
    run, results = _import_evaluate(invoke, tree, tmp_path)
    train = read_rows(run / "paraphrase-s1337" / "train.jsonl")
    test = read_rows(run / "paraphrase-s1337" / "test.jsonl")
    assert (_statuses(train, fields), _statuses(test, fields)) == (
        [(2, "text")],
        [(6, "text"), (11, "text")],
    )

    model = _model()
    scored = {r["config"]: r for r in results}
    _, restored, _ = _hteb_loads(folder, fields)
    assert abs(scored["original"]["main_score"] - _hteb_accuracy(model, originals)) < 1e-6
    assert abs(scored["paraphrase-s1337"]["main_score"] - _hteb_accuracy(model, restored)) < 1e-6
    assert scored["paraphrase-s1337"]["restored"] == {"rows": 2, "texts": 2, "kept_as_written": 0}
    _exports_back(invoke, run, tree, folder.relative_to(tree), tmp_path, fields)


def test_sprint_duplicate_questions_scores_as_htebs_average_precision(
    shared_data, invoke, tmp_path
):
    """MRPC's pairs laid out as SprintDuplicateQuestions' records (sentence1, sentence2,
    labels); HTEB's main figure is the average precision of the pairs' cosines."""
    dataset, fields = "SprintDuplicateQuestions", ("sentence1", "sentence2")
    rows = read_rows(shared_data / "MRPC" / "data" / "test.jsonl")[:24]
    originals = [{**r, "_hteb_split": "test", "language": "eng"} for r in rows]
    given_up = {(1, "sentence2"): NA, (4, "sentence1"): MARKS, (9, "sentence2"): CUT}
    rewritten, stats = _hteb_generates(
        originals,
        fields,
        lambda t: " ".join(t.split()[: max(3, len(t.split()) * 2 // 3)]),
        given_up,
    )
    tree = tmp_path / "tree"
    folder = _hteb_writes(tree, dataset, "pair_classification", originals, rewritten, stats,
                          "58edec77c9d5106bf6070489e9c0a73c69b6c4c0")  # fmt: skip
    run, results = _import_evaluate(invoke, tree, tmp_path)
    variant = read_rows(run / "paraphrase-s1337" / "test.jsonl")
    assert _statuses(variant, fields) == sorted(given_up)
    # one text of a pair given up: the other is scored as written
    assert variant[1]["sentence1"] == rewritten[1]["sentence1"] != rows[1]["sentence1"]

    model = _model()
    scored = {r["config"]: r for r in results}
    _, restored, _ = _hteb_loads(folder, fields)
    assert abs(scored["original"]["main_score"] - _hteb_pair_ap(model, originals)) < 1e-6
    assert abs(scored["paraphrase-s1337"]["main_score"] - _hteb_pair_ap(model, restored)) < 1e-6
    assert scored["paraphrase-s1337"]["restored"] == {"rows": 3, "texts": 3, "kept_as_written": 0}
    _exports_back(invoke, run, tree, folder.relative_to(tree), tmp_path, fields)


def test_masakhanews_scores_per_language_as_htebs_k_means(shared_data, invoke, tmp_path):
    """MasakhaNEWS' English and French headlines of four topics, a record each, their
    subset in `language`; HTEB clusters each language apart and averages the V-measures,
    as shiftbench scores each subset and averages them."""
    dataset, fields = "MasakhaNEWSClusteringS2S", ("sentences",)
    originals = []
    for language in ("eng", "fra"):
        rows = read_rows(shared_data / dataset / language / "test.jsonl")
        topics = sorted({r["labels"] for r in rows})[:4]
        for k in range(4):
            originals += [{**[r for r in rows if r["labels"] == t][k], "_hteb_split": "test",
                           "language": language} for t in topics]  # fmt: skip
    given_up = {(2, "sentences"): NA, (17, "sentences"): MARKS, (25, "sentences"): CUT}
    rewritten, stats = _hteb_generates(originals, fields, lambda t: f"News: {t.lower()}", given_up)
    tree = tmp_path / "tree"
    folder = _hteb_writes(tree, dataset, "clustering", originals, rewritten, stats,
                          "c4724b56a0ca58f2da7e3eb415726d04952e3965",
                          clustering_format="per_language")  # fmt: skip
    run, results = _import_evaluate(invoke, tree, tmp_path)
    eng = read_rows(run / "paraphrase-s1337.eng" / "test.jsonl")
    fra = read_rows(run / "paraphrase-s1337.fra" / "test.jsonl")
    assert (_statuses(eng, fields), _statuses(fra, fields)) == (
        [(2, "sentences")], [(1, "sentences"), (9, "sentences")]
    )  # fmt: skip

    model = _model()
    scored = {(r["config"], r["subset"]): r["main_score"] for r in results}
    _, restored, _ = _hteb_loads(folder, fields)
    for config, records in (("original", originals), ("paraphrase-s1337", restored)):
        expected = _hteb_v_measures(model, records)
        for language, figure in expected.items():
            assert abs(scored[(f"{config}.{language}", language)] - figure) < 1e-6
        # HTEB's figure: the mean over the languages
        ours = np.mean([scored[(f"{config}.{lang}", lang)] for lang in ("eng", "fra")])
        assert abs(ours - np.mean(list(expected.values()))) < 1e-6
    _exports_back(invoke, run, tree, folder.relative_to(tree), tmp_path, fields)


def test_semrel2024_scores_as_htebs_spearman_over_every_language(shared_data, invoke, tmp_path):
    """STSBenchmark's pairs as SemRel2024's records of two configs (eng, esp), the gold
    relatedness in `label`; HTEB scores one Spearman over both, as shiftbench pools the
    subsets under `--protocol hteb`."""
    dataset, fields = "semrel2024", ("sentence1", "sentence2")
    rows = read_rows(shared_data / "STSBenchmark" / "data" / "test.jsonl")[:24]
    originals = [
        {"sentence1": r["sentence1"], "sentence2": r["sentence2"], "label": r["score"] / 5,
         "_hteb_split": "test", "language": "eng" if i < 12 else "esp"}
        for i, r in enumerate(rows)
    ]  # fmt: skip
    given_up = {(3, "sentence1"): NA, (14, "sentence2"): MARKS, (20, "sentence1"): CUT}
    rewritten, stats = _hteb_generates(
        originals, fields, lambda t: f"Roughly: {t.lower()}", given_up
    )
    tree = tmp_path / "tree"
    folder = _hteb_writes(tree, dataset, "str", originals, rewritten, stats,
                          "ef5c383d1b87eb8feccde3dfb7f95e42b1b050dd")  # fmt: skip
    run, results = _import_evaluate(invoke, tree, tmp_path)
    esp = read_rows(run / "paraphrase-s1337.esp" / "test.jsonl")
    assert _statuses(esp, fields) == [(2, "sentence2"), (8, "sentence1")]
    assert [r["score"] for r in esp] == [o["label"] for o in originals[12:]]

    model = _model()
    scored = {r["config"]: r for r in results if r["subset"] == "pooled"}
    _, restored, _ = _hteb_loads(folder, fields)
    assert abs(scored["original"]["main_score"] - _hteb_spearman(model, originals)) < 1e-6
    assert abs(scored["paraphrase-s1337"]["main_score"] - _hteb_spearman(model, restored)) < 1e-6
    assert scored["paraphrase-s1337"]["restored"] == {"rows": 3, "texts": 3, "kept_as_written": 0}
    _exports_back(invoke, run, tree, folder.relative_to(tree), tmp_path, fields)


def test_identical_pairs_tie_as_htebs_cosine_ties_them(shared_data, invoke, tmp_path):
    """Rewrites cut to their first three words make many pairs identical. HTEB's cosine (each
    embedding divided by its length, the products summed) gives every such pair the same
    value, where scikit-learn's paired cosine, mteb's, can be a float32 step apart from
    one pair to the next; the ties, and so the Spearman, are HTEB's under --protocol hteb."""
    from scipy.stats import spearmanr
    from sklearn.metrics.pairwise import paired_cosine_distances

    dataset, fields = "semrel2024", ("sentence1", "sentence2")
    rows = read_rows(shared_data / "STSBenchmark" / "data" / "test.jsonl")[:24]
    originals = [
        {"sentence1": r["sentence1"], "sentence2": r["sentence2"], "label": r["score"] / 5,
         "_hteb_split": "test", "language": "eng" if i < 12 else "esp"}
        for i, r in enumerate(rows)
    ]  # fmt: skip
    rewritten, stats = _hteb_generates(originals, fields, lambda t: " ".join(t.split()[:3]), {})
    same = sum(r["sentence1"] == r["sentence2"] for r in rewritten)
    assert same >= 8
    tree = tmp_path / "tree"
    folder = _hteb_writes(tree, dataset, "str", originals, rewritten, stats,
                          "ef5c383d1b87eb8feccde3dfb7f95e42b1b050dd")  # fmt: skip
    _run, results = _import_evaluate(invoke, tree, tmp_path)
    scored = {r["config"]: r for r in results if r["subset"] == "pooled"}
    _, restored, _ = _hteb_loads(folder, fields)
    model = _model()
    expected = _hteb_spearman(model, restored)
    assert abs(scored["paraphrase-s1337"]["main_score"] - expected) < 1e-6
    # mteb's cosine on the same embeddings orders the tied pairs otherwise
    a = model.encode([r["sentence1"] for r in restored])
    b = model.encode([r["sentence2"] for r in restored])
    mteb_cosine = 1 - paired_cosine_distances(a, b)
    other = spearmanr(mteb_cosine, [float(r["label"]) for r in restored]).statistic
    assert abs(other - expected) > 1e-3
