"""How often a synonym swap's replacement is not a synonym in the sentence's sense.

Reads the hand labels in bench/data/synonym_swap_labels.jsonl: 300 swaps the synonym-swap
rule before its sense filter made on the test splits of BIOSSES, STSBenchmark and MRPC
(100 distinct texts each), each labelled 1 when the replacement means what the word means
in that sentence, else 0. The file names the dataset, split, row, field, word position,
word and replacement, never the sentence: the texts are read again from the data folder.
It prints the share of wrong swaps with a 95% Wilson interval, before the filter (all
300) and after it (the swaps among them that the current rule still allows), on all of
them, on each half (the filter's threshold was chosen on the even lines, the pick half,
and is reported on the odd ones) and per dataset. Then, per dataset, the share of
distinct texts that still offer 1, 2 and 3 words to swap, before and after. `--sweep`
adds the two halves' rates at other thresholds.

    python bench/bench_synonym_senses.py /data [--labels-only] [--sweep]

`--draw N` prints the seeded sample of N swaps per dataset instead (without labels), the
way the labelled file was drawn.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

LABELS = Path(__file__).parent / "data" / "synonym_swap_labels.jsonl"
DATASETS = (("BIOSSES", "test"), ("STSBenchmark", "test"), ("MRPC", "test"))
FIELDS = ("sentence1", "sentence2")
COUNTS = (1, 2, 3)
SWEEP = (0.0, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5)  # the sense shares --sweep tries


def wilson(errors: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of errors / n."""
    if not n:
        return 0.0, 1.0
    p = errors / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_line(name: str, wrong: int, n: int) -> str:
    low, high = wilson(wrong, n)
    share = wrong / n if n else 0.0
    return f"{name:<28} {wrong:>3}/{n:<3} wrong = {share:6.1%}  95% CI [{low:.1%}, {high:.1%}]"


def read_rows(data: Path, dataset: str, split: str) -> list[dict]:
    path = data / dataset / "data" / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def options(text: str, lexicon, min_share: float) -> list[tuple[int, tuple[str, ...]]]:
    """(token position, replacements) of each word a synonym swap may change."""
    from shiftbench.gen.controls import SYNONYM, TOKEN, _tags, replacements

    tokens = TOKEN.findall(text)
    tags = _tags(tuple(tokens))
    found = [
        (i, replacements(word, tag, lexicon, SYNONYM, min_share))
        for i, (word, tag) in enumerate(zip(tokens, tags, strict=True))
    ]
    return [(i, r) for i, r in found if r]


def draw(data: Path, per_dataset: int, lexicon) -> list[dict]:
    """A seeded sample of swaps of the rule without its sense filter: per dataset, distinct
    texts in a shuffled order, one word of each drawn, then one of its replacements."""
    from shiftbench.gen.controls import TOKEN

    sample = []
    for dataset, split in DATASETS:
        rows = read_rows(data, dataset, split)
        units = [(i, f) for i in range(len(rows)) for f in FIELDS]
        rng = random.Random(f"synonym-senses {dataset}")
        rng.shuffle(units)
        seen: set[str] = set()
        drawn = 0
        for row, field in units:
            text = rows[row][field]
            if text in seen or not text.strip():
                continue
            seen.add(text)
            found = options(text, lexicon, 0.0)
            if not found:
                continue
            index, replacements = rng.choice(found)
            sample.append({
                "dataset": dataset, "split": split, "row": row, "field": field, "index": index,
                "word": TOKEN.findall(text)[index], "replacement": rng.choice(replacements),
            })  # fmt: skip
            drawn += 1
            if drawn == per_dataset:
                break
    return sample


def judge(data: Path, labels: list[dict], lexicon, min_share: float) -> list[tuple[int, bool]]:
    """(label, kept by the filter) per labelled swap; a swap the unfiltered rule cannot make
    (the data or WordNet changed) stops the run."""
    rows = {(d, s): read_rows(data, d, s) for d, s in {(x["dataset"], x["split"]) for x in labels}}
    out = []
    for n, label in enumerate(labels, 1):
        text = rows[label["dataset"], label["split"]][label["row"]][label["field"]]
        before = dict(options(text, lexicon, 0.0))
        after = dict(options(text, lexicon, min_share))
        if label["replacement"] not in before.get(label["index"], ()):
            raise SystemExit(f"{LABELS}:{n}: the rule cannot swap {label['word']!r} for "
                             f"{label['replacement']!r} in that text")  # fmt: skip
        out.append((label["label"], label["replacement"] in after.get(label["index"], ())))
    return out


def coverage(data: Path, lexicon, min_share: float) -> dict[str, list[float]]:
    """Per dataset, the share of distinct non-empty texts with at least n words to swap."""
    shares = {}
    for dataset, split in DATASETS:
        rows = read_rows(data, dataset, split)
        texts = [t for t in dict.fromkeys(r[f] for r in rows for f in FIELDS) if t.strip()]
        eligible = [len(options(t, lexicon, min_share)) for t in texts]
        shares[dataset] = [sum(e >= n for e in eligible) / len(texts) for n in COUNTS]
    return shares


def wrong(labels: list[int]) -> float:
    return sum(1 - x for x in labels) / len(labels) if labels else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the folder holding BIOSSES/, MRPC/, ...")
    parser.add_argument("--labels-only", action="store_true", help="skip the coverage table")
    parser.add_argument("--sweep", action="store_true", help="also try other sense shares")
    parser.add_argument("--draw", type=int, default=0, help="print a sample of N per dataset")
    parser.add_argument("--wordnet-dir", default=None)
    args = parser.parse_args()

    from shiftbench.gen.controls import MIN_SENSE_SHARE, SYNONYM, load_lexicon

    lexicon = load_lexicon(args.wordnet_dir, ("verb", "adjective"))
    if args.draw:
        for swap in draw(args.data, args.draw, lexicon):
            print(json.dumps(swap, ensure_ascii=False))
        return
    min_share = MIN_SENSE_SHARE[SYNONYM]
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    judged = judge(args.data, labels, lexicon, min_share)
    print(f"{len(judged)} labelled swaps; sense filter: a sense with >= {min_share:.0%} of "
          "the word's tagged uses")  # fmt: skip
    parts = [("all", judged), ("pick half", judged[0::2]), ("report half", judged[1::2])]
    parts += [(d, [j for j, x in zip(judged, labels, strict=True) if x["dataset"] == d])
              for d, _ in DATASETS]  # fmt: skip
    for part, chosen in parts:
        kept = [label for label, keep in chosen if keep]
        print(rate_line(f"{part}, before", sum(1 - label for label, _ in chosen), len(chosen)))
        print(rate_line(f"{part}, after", sum(1 - label for label in kept), len(kept)))
    if args.sweep:
        print("min share   pick half wrong   report half wrong")
        for share in SWEEP:
            cells = []
            for half in (slice(0, None, 2), slice(1, None, 2)):
                kept = [lab for lab, keep in judge(args.data, labels[half], lexicon, share) if keep]
                cells.append(f"{sum(1 - x for x in kept):>3}/{len(kept):<3} {wrong(kept):6.1%}")
            print(f"{share:>9.2f}   {cells[0]}    {cells[1]}")
    if args.labels_only:
        return
    before, after = coverage(args.data, lexicon, 0.0), coverage(args.data, lexicon, min_share)
    print("texts with at least n words to swap (before -> after):")
    for dataset in before:
        cells = "  ".join(
            f"n={n}: {b:6.1%} -> {a:6.1%}"
            for n, b, a in zip(COUNTS, before[dataset], after[dataset], strict=True)
        )
        print(f"  {dataset:<13} {cells}")


if __name__ == "__main__":
    main()
