"""Time shiftbench's STS scoring against mteb.evaluate, and variants against bare encoding.

Both parts run in this process on the same loaded encoder; the figures that matter are
the ratios, since absolute times on a shared machine mean little:

1. shiftbench on STSBenchmark against `mteb.evaluate` on the same data (goal: at most 1.0);
2. shiftbench on a run folder holding the original plus --variants variants (texts edited
   per seed, so each variant brings new texts) against encoding the folder's unique texts
   with the bare model (goal: at most 1.2).

    python bench/bench_evaluate.py /path/to/STSBenchmark [--repeat 3] [--variants 8]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", help="local copy of STSBenchmark in Hub layout")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", type=int, default=8)
    args = parser.parse_args()

    import datasets
    import mteb

    from shiftbench.core.data.sources import resolve_source
    from shiftbench.core.models.encoders import Encoder
    from shiftbench.evaluate.run import collect_source, score_collection

    encoder = Encoder(MODEL)
    source = resolve_source("STSBenchmark", data_dir=args.data_dir)
    mteb_times, ours_times = [], []
    for _ in range(args.repeat):
        task = mteb.get_task("STSBenchmark")
        task.dataset = datasets.load_dataset(args.data_dir)
        task.data_loaded = True
        start = time.perf_counter()
        theirs = mteb.evaluate(encoder.model, task, cache=None, overwrite_strategy="always")
        mteb_times.append(time.perf_counter() - start)

        encoder._cache.clear()  # time a cold embedding cache, as a first run would see
        start = time.perf_counter()
        (ours,) = score_collection(collect_source(source), encoder)
        ours_times.append(time.perf_counter() - start)

    their_score = theirs.task_results[0].scores["test"][0]["cosine_spearman"]
    print(f"cosine_spearman  mteb {their_score:.5f}  shiftbench {ours['main_score']:.5f}")
    print(f"mteb.evaluate (anchor)   best {min(mteb_times):.2f}s of {args.repeat}")
    print(f"shiftbench evaluate      best {min(ours_times):.2f}s of {args.repeat}")
    print(f"ratio shiftbench/mteb    {min(ours_times) / min(mteb_times):.2f}  (goal: <= 1.0)")
    variants_part(encoder, source, args.variants, args.repeat)


def edited(text: str, seed: int) -> str:
    """A per-seed edit that keeps the words: rotate them by the seed."""
    words = text.split()
    k = seed % max(1, len(words))
    return " ".join(words[k:] + words[:k] + [f"({seed})"])


def write_variants_folder(folder: Path, rows: list[dict], variants: int) -> list[str]:
    """A run folder (original plus variants) for evaluate; returns every unique text."""
    configs = {"original": {"kind": "original", "subset": "default", "rows": {"test": len(rows)}}}
    (folder / "original").mkdir(parents=True)
    tables = {"original": rows}
    for seed in range(1, variants + 1):
        name = f"edit-s{seed}"
        configs[name] = {
            "kind": "transform", "subset": "default", "transform": "edit", "axis": "bench",
            "seed": seed, "rows": {"test": len(rows)},
        }  # fmt: skip
        tables[name] = [
            {**r, "sentence1": edited(r["sentence1"], seed),
             "sentence2": edited(r["sentence2"], seed), "status": "ok"}
            for r in rows
        ]  # fmt: skip
    for name, table in tables.items():
        (folder / name).mkdir(exist_ok=True)
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in table)
        (folder / name / "test.jsonl").write_text(lines, encoding="utf-8")
    source = {
        "name": "STSBenchmark", "task_type": "STS", "main_score": "cosine_spearman",
        "text_fields": ["sentence1", "sentence2"], "score_range": [0.0, 5.0], "splits": ["test"],
    }  # fmt: skip
    meta = {"format": 1, "source": source, "configs": configs}
    (folder / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
    return list(
        dict.fromkeys(r[f] for t in tables.values() for r in t for f in ("sentence1", "sentence2"))
    )


def variants_part(encoder, source, variants: int, repeat: int) -> None:
    from shiftbench.evaluate.run import (
        collect_run_folder,
        collect_source,
        results_document,
        score_collection,
        write_outputs,
    )

    (original,) = collect_source(source).configs
    rows = original.splits["test"]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "run"
        texts = write_variants_folder(folder, rows, variants)
        bare_times, ours_times = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            encoder.model.encode(
                texts, batch_size=encoder.batch_size, convert_to_numpy=True, show_progress_bar=False
            )
            bare_times.append(time.perf_counter() - start)
            encoder._cache.clear()
            start = time.perf_counter()
            collection = collect_run_folder(folder)
            records = score_collection(collection, encoder)
            # the whole of what evaluate writes: results, mteb-style files, report, plots
            document = results_document(collection, [(encoder, records)])
            write_outputs(Path(scratch) / "results", [document], per_config=True, plots=True)
            ours_times.append(time.perf_counter() - start)
    print(
        f"original + {variants} variants: {len(records)} configs scored, {len(texts)} unique texts"
    )
    print(f"bare encode of the unique texts (anchor)  best {min(bare_times):.2f}s of {repeat}")
    print(f"shiftbench evaluate on the run folder     best {min(ours_times):.2f}s of {repeat}")
    ratio = min(ours_times) / min(bare_times)
    print(f"ratio shiftbench/bare encode              {ratio:.2f}  (goal: <= 1.2)")


if __name__ == "__main__":
    main()
