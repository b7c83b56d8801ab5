"""Language ID accuracy and speed: lingua against langdetect on real translated sentences.

Reads STSBenchmarkMultilingualSTS (the STS Benchmark test sentences in six languages, each
file labelled with its language) and prints, per language, how often each identifier names
it and how often it answers "und" (text too short); then the two identifiers' speed, as
paired ratios (A = lingua, B = langdetect; bench/paired.py), a measurement with no goal:

  whole process  `bench/langid_side.py NAME TEXTS OUT` for each identifier, a process of its
                 own (interpreter start, the identifier's import and model load, detecting
                 every text): what validate's language ID costs a user; each pair must have
                 answered every text on both sides
  in process     detecting every text, the identifiers loaded beforehand (isolates the
                 detection from the load); the accuracy table, printed after both, is this
                 part's first pair

Both alternate which side goes first after one uncounted warm-up of each, and print every
pair's A/B time ratio and min / median / max with the load average and the date, then
lingua's throughput as a share of langdetect's (B/A).

    python bench/bench_langid.py /data/STSBenchmarkMultilingualSTS [--per-language 500]
        [--pairs 4]

With --expected it also measures the wrong-language check as validate runs it: each
sentence is checked against its own language (a flag there is a false alarm) and against
each of the five other languages (a flag there is a catch), with the expected-language
share rule and with plain arg-max (EXPECTED_SHARE = 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from paired import Report, Run, paired, paired_calls, summary  # noqa: E402


def show(report: Report, texts: int) -> None:
    """The report's lines, then each side's texts per second and lingua's share (B/A)."""
    for line in report.lines():
        print(line, flush=True)
    a = summary([texts / a.seconds for a, _ in report.pairs])
    b = summary([texts / b.seconds for _, b in report.pairs])
    share = summary([1 / r for r in report.ratios])
    print(f"  lingua texts/s min / median / max      {a[0]:.0f} / {a[1]:.0f} / {a[2]:.0f}")
    print(f"  langdetect texts/s min / median / max  {b[0]:.0f} / {b[1]:.0f} / {b[2]:.0f}")
    print(
        f"  lingua's throughput / langdetect's (B/A) {share[0]:.2f} / {share[1]:.2f} / "
        f"{share[2]:.2f}  (a measurement)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--per-language", type=int, default=0, help="0: every sentence")
    parser.add_argument("--expected", action="store_true", help="measure the check's rule")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side")
    args = parser.parse_args()
    print(" ".join(sys.argv), flush=True)
    scratch = tempfile.TemporaryDirectory(prefix="bench-langid-")

    from shiftbench.core.text import langid
    from shiftbench.core.text.langid import UNDETERMINED, get_identifier

    texts: dict[str, list[str]] = {}
    for lang_dir in sorted(p for p in args.folder.iterdir() if p.is_dir()):
        rows = [json.loads(line) for line in (lang_dir / "test.jsonl").read_text().splitlines()]
        unique = list(dict.fromkeys(t for r in rows for t in (r["sentence1"], r["sentence2"])))
        texts[lang_dir.name] = unique[: args.per_language] if args.per_language else unique

    n = sum(map(len, texts.values()))
    file = Path(scratch.name) / "texts.json"
    file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    side = [sys.executable, str(HERE / "langid_side.py")]

    def answered(ours: Run, theirs: Run) -> str | None:
        for run in (ours, theirs):
            codes = json.loads((run.out / "codes.json").read_text(encoding="utf-8"))
            if {k: len(v) for k, v in codes.items()} != {k: len(v) for k, v in texts.items()}:
                return f"side {run.side} did not answer every text"
        return None

    whole = paired(
        f"A = lingua, B = langdetect: {n} texts, whole process (import, model load, detection)",
        [*side, "lingua", str(file), "{out}"], [*side, "langdetect", str(file), "{out}"],
        args.pairs, answered, warmup=args.warmup,
    )  # fmt: skip
    show(whole, n)

    identifiers = {name: get_identifier(name) for name in ("lingua", "langdetect")}
    for identifier in identifiers.values():
        identifier.detect(["warm-up sentence for the identifier"])

    def detect(name: str) -> dict[str, list[str]]:
        return {lang: identifiers[name].detect(batch) for lang, batch in texts.items()}

    def same_count(a: dict[str, list[str]], b: dict[str, list[str]]) -> str | None:
        lengths = {k: len(v) for k, v in texts.items()}
        ok = {k: len(v) for k, v in a.items()} == lengths == {k: len(v) for k, v in b.items()}
        return None if ok else "an identifier did not answer every text"

    inside = paired_calls(
        f"A = lingua, B = langdetect: {n} texts, in process (detection only)",
        lambda: detect("lingua"), lambda: detect("langdetect"), args.pairs, same_count,
        warmup=args.warmup,
    )  # fmt: skip
    show(inside, n)
    first_a, first_b = inside.pairs[0]
    results = {"langdetect": first_b.result, "lingua": first_a.result}

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
    cells = [f"{r / n:>{len(name)}.1%} {u / n:>6.1%}" for name, (r, u) in totals.items()]
    print(f"{'all':<5} {n:>6}  " + "  ".join(cells))
    scratch.cleanup()

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
