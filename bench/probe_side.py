"""The bare side of bench_controls.py's second part: encode a probe's unique texts once with
the bare sentence-transformers model, as a process of its own (interpreter start, imports,
model load, one encode call).

ANCHORS_JSON holds the probe's anchors as `shiftbench probe` gathers them (each with its
text, paraphrase, random partner and controls), written by the bench before any timing.
To show that both sides encoded the same texts with the same model, this side also writes
each anchor's cosine similarities (paraphrase, random partner, each control) to
OUT/cosines.json; the bench requires them equal to probe's probe-rows.jsonl. The cosines
cost milliseconds beside the encoding.

    python bench/probe_side.py ANCHORS_JSON FOLDER_OF_MODEL OUT [--batch-size 32]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("anchors", type=Path)
    parser.add_argument("model", help="folder of the sentence-transformers model")
    parser.add_argument("out", type=Path)
    parser.add_argument("--batch-size", type=int, default=32, help="probe's default")
    args = parser.parse_args()

    anchors = json.loads(args.anchors.read_text(encoding="utf-8"))
    texts = list(
        dict.fromkeys(
            t for a in anchors
            for t in (a["text"], a["paraphrase"], a["random"],
                      *(x for v in a["controls"].values() for x in v))
        )
    )  # fmt: skip

    import numpy as np
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(args.model)
    vectors = model.encode(
        texts, batch_size=args.batch_size, convert_to_numpy=True, show_progress_bar=False
    )
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    index = {t: i for i, t in enumerate(texts)}

    def cosine(x: str, y: str) -> float:
        return float(vectors[index[x]] @ vectors[index[y]])

    cosines = {}
    for a in anchors:
        row = {"paraphrase": cosine(a["text"], a["paraphrase"])}
        row["random"] = cosine(a["text"], a["random"])
        for name, outputs in a["controls"].items():
            row[name] = [cosine(a["text"], x) for x in outputs]
        cosines[a["key"]] = row
    document = {"unique_texts": len(texts), "cosines": cosines}
    (args.out / "cosines.json").write_text(json.dumps(document), encoding="utf-8")
    print(f"{len(anchors)} anchors, {len(texts)} unique texts encoded")


if __name__ == "__main__":
    main()
