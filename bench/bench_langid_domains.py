"""The wrong-language check's false alarms and misses on every dataset in ../shared/data.

False alarms: every distinct text of every text field of each dataset and language is
checked as if it were a rewrite that should stay in its own language; an answer other
than that language is a false alarm ("und", too short or unsure, is not an alarm).
Misses: real translations, checked against the language they were translated from. The
aligned rows of STSBenchmarkMultilingualSTS (each of de, es, fr, it, nl checked with
English expected, and each English sentence with the other language expected) and the
aligned XQuAD queries and passages (de, es against en, both ways); every answer that is
not a flag (the expected language or "und") is a miss. A translation identical to its
original is left out. A language the identifier does not know is "not checked".

    python bench/bench_langid_domains.py /data [--langid lingua] [--show 20]

Fields left out: Banking77's label_text and MasakhaNEWS's labels (class names), XQuAD's
titles (English Wikipedia page names in every language's corpus).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path

MASAKHA = {"eng": "en", "fra": "fr", "hau": "ha", "swa": "sw", "amh": "am"}
TEXT_FIELDS = ("sentence1", "sentence2", "text", "sentences")
STS_LANGS = ("de", "es", "fr", "it", "nl")
XQUAD_LANGS = ("de", "es")


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _texts(files: list[Path]) -> list[str]:
    seen: dict[str, None] = {}
    for path in files:
        for row in _rows(path):
            for field in TEXT_FIELDS:
                value = row.get(field)
                if isinstance(value, str) and value.strip():
                    seen[value.lstrip("\ufeff")] = None
    return list(seen)


def originals(data: Path) -> Iterator[tuple[str, str, list[str]]]:
    """(dataset, language, distinct texts) for every dataset and language."""
    for name in ("BIOSSES", "STSBenchmark", "MRPC", "Banking77Classification"):
        yield name, "en", _texts(sorted((data / name / "data").glob("*.jsonl")))
    for folder, lang in MASAKHA.items():
        yield (
            "MasakhaNEWS",
            lang,
            _texts([data / "MasakhaNEWSClusteringS2S" / folder / "test.jsonl"]),
        )
    for lang in ("en", *XQUAD_LANGS):
        for part in ("corpus", "queries"):
            yield f"XQuAD-{part}", lang, _texts([data / "XQuADRetrieval" / lang / f"{part}.jsonl"])
    for lang in ("en", *STS_LANGS):
        yield (
            "STSBMultilingual",
            lang,
            _texts([data / "STSBenchmarkMultilingualSTS" / lang / "test.jsonl"]),
        )


def translations(data: Path) -> Iterator[tuple[str, str, str, list[str]]]:
    """(dataset, text language, expected language, texts): real translations checked
    against the language they were translated from (or into)."""

    def pairs(a: list[str], b: list[str]) -> list[tuple[str, str]]:
        return list(
            dict.fromkeys(
                (x.lstrip("\ufeff"), y.lstrip("\ufeff"))
                for x, y in zip(a, b, strict=True)
                if x.strip() != y.strip()
            )
        )

    sts = data / "STSBenchmarkMultilingualSTS"
    en_rows = _rows(sts / "en" / "test.jsonl")
    for lang in STS_LANGS:
        rows = _rows(sts / lang / "test.jsonl")
        aligned = pairs(
            [r[f] for r in en_rows for f in ("sentence1", "sentence2")],
            [r[f] for r in rows for f in ("sentence1", "sentence2")],
        )
        yield "STSBMultilingual", lang, "en", [t for _, t in aligned]
        yield "STSBMultilingual", "en", lang, [e for e, _ in aligned]
    xq = data / "XQuADRetrieval"
    for part in ("queries", "corpus"):
        en = {r["id"]: r["text"] for r in _rows(xq / "en" / f"{part}.jsonl")}
        for lang in XQUAD_LANGS:
            other = {r["id"]: r["text"] for r in _rows(xq / lang / f"{part}.jsonl")}
            ids = [i for i in en if i in other]
            aligned = pairs([en[i] for i in ids], [other[i] for i in ids])
            yield f"XQuAD-{part}", lang, "en", [t for _, t in aligned]
            yield f"XQuAD-{part}", "en", lang, [e for e, _ in aligned]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the ../shared/data folder")
    parser.add_argument("--langid", default="lingua")
    parser.add_argument("--show", type=int, default=0, help="print up to N alarms and misses")
    args = parser.parse_args()

    from shiftbench.core.text.langid import UNDETERMINED, checkable, get_identifier

    identifier = get_identifier(args.langid)
    identifier.detect(["warm-up sentence for the identifier"], ["en"])
    shown: list[str] = []
    start = time.perf_counter()
    judged = 0

    print(f"false alarms ({args.langid}): originals checked against their own language")
    print(f"{'dataset':<24} {'lang':<5} {'texts':>6} {'alarms':>7} {'rate':>7} {'und':>5}")
    total = [0, 0]
    for dataset, lang, texts in originals(args.data):
        if not checkable(identifier, lang):
            print(f"{dataset:<24} {lang:<5} {len(texts):>6} {'not checked':>13}")
            continue
        found = identifier.detect(texts, [lang] * len(texts))
        judged += len(texts)
        alarms = [
            (t, c) for t, c in zip(texts, found, strict=True) if c not in (lang, UNDETERMINED)
        ]
        und = sum(c == UNDETERMINED for c in found)
        total[0] += len(texts)
        total[1] += len(alarms)
        rate = len(alarms) / len(texts)
        print(f"{dataset:<24} {lang:<5} {len(texts):>6} {len(alarms):>7} {rate:>7.2%} {und:>5}")
        shown += [f"  alarm {dataset}/{lang} -> {c}: {t[:160]!r}" for t, c in alarms]
    print(f"{'all':<24} {'':<5} {total[0]:>6} {total[1]:>7} {total[1] / total[0]:>7.2%}")

    print(f"\nmisses ({args.langid}): translations checked against the language of their original")
    head = f"{'dataset':<24} {'lang':<5} {'expect':<6} {'texts':>6} {'misses':>7}"
    print(f"{head} {'rate':>7} {'und':>5}")
    total = [0, 0]
    for dataset, lang, wanted, texts in translations(args.data):
        found = identifier.detect(texts, [wanted] * len(texts))
        judged += len(texts)
        missed = [(t, c) for t, c in zip(texts, found, strict=True) if c in (wanted, UNDETERMINED)]
        und = sum(c == UNDETERMINED for c in found)
        total[0] += len(texts)
        total[1] += len(missed)
        rate = len(missed) / len(texts)
        cells = f"{dataset:<24} {lang:<5} {wanted:<6} {len(texts):>6} {len(missed):>7}"
        print(f"{cells} {rate:>7.2%} {und:>5}")
        shown += [f"  miss {dataset}/{lang} as {wanted} -> {c}: {t[:160]!r}" for t, c in missed]
    print(f"{'all':<24} {'':<5} {'':<6} {total[0]:>6} {total[1]:>7} {total[1] / total[0]:>7.2%}")
    elapsed = time.perf_counter() - start
    print(f"\n{judged} texts judged at {judged / elapsed:.0f} texts/s")

    # A runaway output is judged on its first SAMPLE_CHARS characters: right or wrong.
    for text, wanted in (
        ("The cell line was treated with 5 mM ABT-737 for 24 h. ", "en"),
        ("Die Zellen wurden 24 Stunden lang behandelt. ", "en"),
    ):
        runaway = text * (10_000_000 // len(text))
        tick = time.perf_counter()
        found = identifier.detect([runaway], [wanted])[0]
        ms = (time.perf_counter() - tick) * 1000
        print(f"a {len(runaway) / 1e6:.0f} MB output expected {wanted}: {found} in {ms:.0f} ms")
    if args.show:
        print("\n" + "\n".join(shown[: args.show]))


if __name__ == "__main__":
    main()
