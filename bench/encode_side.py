"""The bare side of bench_evaluate.py --variants: encode a run folder's unique texts once,
as a process of its own (interpreter start, imports, model load, one encode call).

This is the least work that could produce evaluate's scores of an STS run folder: read each
config's rows, encode every distinct text once with the same packaged sentence-transformers
model at the same batch size, and correlate. To show that both sides computed the same
thing, it also writes each config's cosine Spearman (the main score, computed as mteb
computes it: float32 paired cosine, Spearman against the gold) to OUT/scores.json with the
number of unique texts; the bench requires them equal to evaluate's results.json to five
decimals. The correlations cost milliseconds: sentence-transformers imports scipy and
scikit-learn already, so they add no import.

    python bench/encode_side.py RUN_FOLDER FOLDER_OF_MODEL OUT [--batch-size 32]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

FIELDS = ("sentence1", "sentence2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("model", help="folder of the sentence-transformers model")
    parser.add_argument("out", type=Path)
    parser.add_argument("--batch-size", type=int, default=32, help="evaluate's default")
    args = parser.parse_args()

    meta = json.loads((args.run / "shiftbench.json").read_text(encoding="utf-8"))
    tables: dict[str, list[dict]] = {}
    for name in meta["configs"]:
        with open(args.run / name / "test.jsonl", encoding="utf-8") as fh:
            tables[name] = [json.loads(line) for line in fh if line.strip()]
    texts = list(dict.fromkeys(r[f] for rows in tables.values() for r in rows for f in FIELDS))

    import numpy as np
    from scipy.stats import spearmanr
    from sentence_transformers import SentenceTransformer
    from sklearn.metrics.pairwise import paired_cosine_distances

    model = SentenceTransformer(args.model)
    vectors = model.encode(
        texts, batch_size=args.batch_size, convert_to_numpy=True, show_progress_bar=False
    )
    index = {t: i for i, t in enumerate(texts)}

    scores = {}
    for name, rows in tables.items():
        a = vectors[[index[r["sentence1"]] for r in rows]].astype(np.float32)
        b = vectors[[index[r["sentence2"]] for r in rows]].astype(np.float32)
        cosine = (1 - paired_cosine_distances(a, b)).astype(np.float32).astype(np.float64)
        gold = np.asarray([float(r["score"]) / 5.0 for r in rows], dtype=np.float64)
        scores[name] = float(spearmanr(gold, cosine)[0])
    document = {"unique_texts": len(texts), "main_scores": scores}
    (args.out / "scores.json").write_text(json.dumps(document), encoding="utf-8")
    print(f"{len(texts)} unique texts; original cosine_spearman {scores['original']:.5f}")


if __name__ == "__main__":
    main()
