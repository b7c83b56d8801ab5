"""Language ID accuracy and speed: langdetect against lingua on real translated sentences.

Reads STSBenchmarkMultilingualSTS (the STS Benchmark test sentences in six languages, each
file labelled with its language) and prints, per language, how often each identifier names
it, how often it answers "und" (text too short), and each identifier's texts per second,
with lingua's speed as a ratio to langdetect's, timed in the same run.

    python bench/bench_langid.py /data/STSBenchmarkMultilingualSTS [--per-language 500]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--per-language", type=int, default=0, help="0: every sentence")
    args = parser.parse_args()

    from shiftbench.validate.langid import UNDETERMINED, get_identifier

    texts: dict[str, list[str]] = {}
    for lang_dir in sorted(p for p in args.folder.iterdir() if p.is_dir()):
        rows = [json.loads(line) for line in (lang_dir / "test.jsonl").read_text().splitlines()]
        unique = list(dict.fromkeys(t for r in rows for t in (r["sentence1"], r["sentence2"])))
        texts[lang_dir.name] = unique[: args.per_language] if args.per_language else unique

    results: dict[str, dict[str, list[str]]] = {}
    speed: dict[str, float] = {}
    for name in ("langdetect", "lingua"):
        identifier = get_identifier(name)
        identifier.detect(["warm-up sentence for the identifier"])
        start = time.perf_counter()
        results[name] = {lang: identifier.detect(batch) for lang, batch in texts.items()}
        speed[name] = sum(map(len, texts.values())) / (time.perf_counter() - start)

    print(f"{'lang':<5} {'texts':>6}  {'langdetect':>10} {'und':>6}  {'lingua':>8} {'und':>6}")
    totals = {name: [0, 0] for name in results}
    for lang, batch in texts.items():
        cells = []
        for name in results:
            found = results[name][lang]
            right = sum(code == lang for code in found)
            und = sum(code == UNDETERMINED for code in found)
            totals[name][0] += right
            totals[name][1] += und
            cells.append(f"{right / len(batch):>{len(name)}.1%} {und / len(batch):>6.1%}")
        print(f"{lang:<5} {len(batch):>6}  " + "  ".join(cells))
    n = sum(map(len, texts.values()))
    cells = [f"{r / n:>{len(name)}.1%} {u / n:>6.1%}" for name, (r, u) in totals.items()]
    print(f"{'all':<5} {n:>6}  " + "  ".join(cells))
    print(f"langdetect {speed['langdetect']:8.0f} texts/s (anchor)")
    print(
        f"lingua     {speed['lingua']:8.0f} texts/s "
        f"ratio {speed['lingua'] / speed['langdetect']:.2f}"
    )


if __name__ == "__main__":
    main()
