"""gen on a shared machine: what a fixed CPU load beside it costs, whole process, paired.

Each pair runs the same `shiftbench gen sample` twice as whole processes: A beside `--load`
processes that each keep one core busy (a plain Python loop, started before A and stopped
after it), B on the machine as it is. A/B is what the other work costs gen. It is measured
twice: with the embedded backend choosing its threads from the cores other processes leave
free (what gen does), and with the thread count fixed to every core (OMP_NUM_THREADS, what
gen did before). Losing a core on a 2-core machine costs gen at most the time it takes with
one thread (about 1.4x here), and sharing the remaining core with a second load process
about 1.5x more; goal for the adaptive count: A/B at most 2.0 beside one load process (the
median), 3.0 beside two. Outputs must be byte-identical between the busy and the idle run
(the thread count never changes what a seed produces).

    python bench/bench_gen_busy.py [--rows 16] [--load 1] [--pairs 3] [--max-new-tokens 64]
        [--engine transformers|llama.cpp]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired import OUT, Run, paired, run_process

BUSY = "import signal, sys; signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\nwhile True: pass"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16, help="sample rows to paraphrase")
    parser.add_argument("--load", type=int, default=1, help="busy processes beside A")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument(
        "--engine", default="transformers", help="the embedded engine (default: the quickstart's)"
    )
    args = parser.parse_args()

    from shiftbench.llm.backends.weights import models_dir

    gen = [
        sys.executable, "-m", "shiftbench", "gen", "sample", "-t", "paraphrase",
        "--limit", str(args.rows), "--max-new-tokens", str(args.max_new_tokens),
        "--engine", args.engine, "-o", f"{OUT}/run", "-q",
    ]  # fmt: skip
    # every run generates afresh (its own cache folder) from the one dequantised model copy
    models = {"SHIFTBENCH_MODELS_DIR": str(models_dir(None))}

    def runner(argv: Sequence[str], out: Path, env: dict[str, str] | None) -> Run:
        env = {**models, **(env or {}), "SHIFTBENCH_CACHE_DIR": str(out / "cache")}
        busy = env.pop("BENCH_BUSY", "0") == "1"
        load = [
            subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load if busy else 0)
        ]
        try:
            return run_process(argv, out, env)
        finally:
            for process in load:
                process.terminate()
                process.wait()

    cores = str(len(os.sched_getaffinity(0)))
    goal = 2.0 if args.load <= 1 else 3.0
    for label, extra in (
        ("threads from the free cores (gen's choice)", {}),
        (f"threads fixed at {cores} (OMP_NUM_THREADS={cores})", {"OMP_NUM_THREADS": cores}),
    ):
        report = paired(
            f"gen of {args.rows} sample rows ({args.engine}), {label}: A = beside {args.load} busy "
            "process(es), B = alone",
            gen,
            gen,
            args.pairs,
            _same_rows,
            env_a={**extra, "BENCH_BUSY": "1"},
            env_b=dict(extra),
            runner=runner,
            warmup=args.warmup,
        )
        print("\n".join(report.lines(goal if not extra else None)), flush=True)


def _same_rows(a: Run, b: Run) -> str | None:
    """Every data file of the two run folders byte-identical (the manifest holds times)."""
    files_a = sorted(p.relative_to(a.out / "run") for p in (a.out / "run").rglob("*.jsonl"))
    files_b = sorted(p.relative_to(b.out / "run") for p in (b.out / "run").rglob("*.jsonl"))
    if files_a != files_b:
        return f"different files: {files_a} vs {files_b}"
    if not files_a:
        return "no rows written"
    for name in files_a:
        if (a.out / "run" / name).read_bytes() != (b.out / "run" / name).read_bytes():
            return f"{name} differs"
    return None


if __name__ == "__main__":
    main()
