"""Where the checks' measured misses fall: the plants `shiftbench measure-checks` counts as
missed, split by what the text they were planted into looks like.

Plants the same failures into the same seeded sample as the packaged measurement
(validate/measured.json: its plant cap and seed) and splits three rows of its misses table:
- truncated, cut to 50% and 90% of its words with no finish reason: texts that end with a
  sentence mark, and texts with none (headlines, titles, queries), where a shorter output is
  no sign of a cut and the check stays silent by design;
- prefix-leak, held-out answer prefixes: texts that open with a label of their own ("Climate
  change: ..."), where an output may keep a label, and the others;
- reasoning-leak, held-out reasoning: texts that already hold a first-person word ("Can I
  ..."), where a new "I" is no sign of reasoning, and the others.
No model or language ID is used, so it takes seconds.

    python bench/explain_misses.py /path/to/shared/data
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path


def split_misses(data: Path) -> list[tuple[str, str, int, int]]:
    """(planted failure, the text it went into, planted, missed), in the table's order."""
    from shiftbench.core.text import checks
    from shiftbench.validate import measure, planted

    settings = measure.measured()["settings"]
    parts = {
        "truncated": ("ends a sentence", "no final mark",
                      lambda t: checks._SENTENCE_END.search(t.strip()) is not None),
        "prefix-leak": ("opens with a label", "no label",
                        lambda t: checks._label(t, False) is not None),
        "reasoning-leak": ("holds a first-person word", "no first person",
                           lambda t: checks._SELF.search(t.lower()) is not None),
    }  # fmt: skip
    chosen = [
        p
        for p in planted.PLANTS
        if (p.check == "truncated" and p.finish_reason is None and "10%" not in p.kind)
        or (p.check in ("prefix-leak", "reasoning-leak") and p.held_out)
    ]
    names = [f"{p.check}, {p.kind}" for p in chosen]
    planted: Counter = Counter()
    missed: Counter = Counter()
    for d in measure.DATASETS:
        rows = measure._rows(data, d)
        texts = measure._sample(measure._texts(rows, d), settings["plant_cap"],
                                f"plants:{d.name}/{d.language}", settings["seed"])  # fmt: skip
        for name, plant in zip(names, chosen, strict=True):
            yes, no, test = parts[plant.check]
            for i, text in enumerate(texts):
                case = checks.Case(text, plant.make(text, d.language, i), plant.transform,
                                   d.language, None, plant.finish_reason)  # fmt: skip
                key = (name, yes if test(text) else no)
                planted[key] += 1
                missed[key] += not checks.CHECKS[plant.check](case)
    return [
        (name, part, planted[(name, part)], missed[(name, part)])
        for name, plant in zip(names, chosen, strict=True)
        for part in parts[plant.check][:2]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the shared data folder measure-checks reads")
    args = parser.parse_args()
    print(f"{'planted failure':<53} {'the text it went into':<25} {'missed':>18}")
    for name, part, n, m in split_misses(args.data):
        print(f"{name:<53} {part:<25} {f'{m} of {n}':>11} {m / n:>6.1%}")


if __name__ == "__main__":
    main()
