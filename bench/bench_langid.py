"""Language ID accuracy and speed: langdetect against lingua on real translated sentences.

Reads STSBenchmarkMultilingualSTS (the STS Benchmark test sentences in six languages, each
file labelled with its language) and prints, per language, how often each identifier names
it, how often it answers "und" (text too short), and each identifier's texts per second,
with lingua's speed as a ratio to langdetect's, timed in the same run.

    python bench/bench_langid.py /data/STSBenchmarkMultilingualSTS [--per-language 500]

With --expected it also measures the wrong-language check as validate runs it: each
sentence is checked against its own language (a flag there is a false alarm) and against
each of the five other languages (a flag there is a catch), with the expected-language
share rule and with plain arg-max (EXPECTED_SHARE = 1).
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
    parser.add_argument("--expected", action="store_true", help="measure the check's rule")
    args = parser.parse_args()

    from shiftbench.core.text import langid
    from shiftbench.core.text.langid import UNDETERMINED, get_identifier

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

    if args.expected:
        check_rule(texts, langid)


def check_rule(texts: dict[str, list[str]], langid: object) -> None:
    """False alarms and catches of the wrong-language check, share rule against arg-max."""
    from shiftbench.core.text.langid import EXPECTED_SHARE, UNDETERMINED, get_identifier

    langs = list(texts)
    print(f"{'identifier':<11} {'rule':<18} {'false alarms':>12} {'(en)':>7} {'caught':>8}")
    for name in ("langdetect", "lingua"):
        identifier = get_identifier(name)
        for share in (1.0, EXPECTED_SHARE):
            langid.EXPECTED_SHARE = share  # type: ignore[attr-defined]
            alarms = en_alarms = caught = n = m = 0
            for lang, batch in texts.items():
                for wanted in langs:
                    found = identifier.detect(batch, [wanted] * len(batch))
                    flagged = sum(c not in (wanted, UNDETERMINED) for c in found)
                    if wanted == lang:
                        alarms += flagged
                        n += len(batch)
                        en_alarms += flagged if lang == "en" else 0
                    else:
                        caught += flagged
                        m += len(batch)
            rule = "arg-max" if share == 1 else f"share >= {share:g}"
            en = len(texts.get("en", [])) or 1
            print(
                f"{name:<11} {rule:<18} {alarms / n:>12.2%} {en_alarms / en:>7.2%} "
                f"{caught / m:>8.2%}"
            )
        langid.EXPECTED_SHARE = EXPECTED_SHARE  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
