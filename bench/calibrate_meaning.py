"""Calibrate validate's default meaning check and print its precision and recall.

The threshold and evidence kinds are chosen (validate/meaning.py: `choose`, at most 5% false
alarms on each same-meaning set, then the most changes caught) on:
- same meaning: MRPC train positives, STSBenchmark validation pairs of gold >= 4, and
  synonym-swap-1 controls of STSBenchmark validation sentences;
- changed: MRPC train negatives, STSBenchmark validation pairs of gold <= 1, and
  antonym-swap and negation controls of the same sentences.
It is then measured, unchanged, on held-out data: MRPC test, STSBenchmark test (>= 4 vs
<= 1), BIOSSES (>= 3 vs <= 1 on its 0-4 scale), and the controls of MRPC test sentences.
Negation is shiftbench's LLM control; here a rule stands in for it ("not" after the first
auxiliary), so no model is needed.

    python bench/calibrate_meaning.py /path/to/shared/data [--wordnet-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

AUXILIARY = re.compile(
    r"\b(is|are|was|were|can|will|would|should|could|may|might|must|has|have|had|does|did)\b"
)
CONTROL_SENTENCES = 500  # sentences per control set


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def negate(text: str) -> str | None:
    """The text with "not" after its first auxiliary; None when it has none."""
    m = AUXILIARY.search(text)
    return None if m is None else f"{text[: m.end()]} not{text[m.end() :]}"


def controls(sentences: list[str], wordnet_dir: str | None) -> dict[str, list[tuple[str, str]]]:
    from shiftbench.core.text.transforms import get_transform
    from shiftbench.gen.controls import RuleVariant, load_lexicon

    lexicon = load_lexicon(wordnet_dir, ("verb", "adjective"))
    unique = list(dict.fromkeys(sentences))[:CONTROL_SENTENCES]
    out = {}
    for name in ("synonym-swap-1", "antonym-swap"):
        made = RuleVariant(get_transform(name), 1, lexicon).apply(unique)
        out[name] = [(t, made[t].text) for t in unique if made[t].status == "ok"]
    out["negation (rule)"] = [(t, n) for t in unique if (n := negate(t)) is not None]
    return out


def sets(data: Path, wordnet_dir: str | None) -> tuple[dict, dict, dict, dict]:
    """(calibration same, calibration changed, held-out same, held-out changed): name ->
    pairs."""

    def pairs(rs: list[dict], keep) -> list[tuple[str, str]]:
        return [(r["sentence1"], r["sentence2"]) for r in rs if keep(r)]

    mrpc_train = rows(data / "MRPC/data/train.jsonl")
    mrpc_test = rows(data / "MRPC/data/test.jsonl")
    sts_val = rows(data / "STSBenchmark/data/validation.jsonl")
    sts_test = rows(data / "STSBenchmark/data/test.jsonl")
    biosses = rows(data / "BIOSSES/data/test.jsonl")
    cal_controls = controls([r["sentence1"] for r in sts_val], wordnet_dir)
    held_controls = controls([r["sentence1"] for r in mrpc_test], wordnet_dir)
    cal_same = {
        "MRPC train positives": pairs(mrpc_train, lambda r: r["labels"] == 1),
        "STSB validation gold>=4": pairs(sts_val, lambda r: r["score"] >= 4),
        "synonym-swap-1 (STSB validation)": cal_controls["synonym-swap-1"],
    }
    cal_changed = {
        "MRPC train negatives": pairs(mrpc_train, lambda r: r["labels"] == 0),
        "STSB validation gold<=1": pairs(sts_val, lambda r: r["score"] <= 1),
        "antonym-swap (STSB validation)": cal_controls["antonym-swap"],
        "negation rule (STSB validation)": cal_controls["negation (rule)"],
    }
    held_same = {
        "MRPC test positives": pairs(mrpc_test, lambda r: r["labels"] == 1),
        "STSB test gold>=4": pairs(sts_test, lambda r: r["score"] >= 4),
        "BIOSSES gold>=3": pairs(biosses, lambda r: r["score"] >= 3),
        "synonym-swap-1 (MRPC test)": held_controls["synonym-swap-1"],
    }
    held_changed = {
        "MRPC test negatives": pairs(mrpc_test, lambda r: r["labels"] == 0),
        "STSB test gold<=1": pairs(sts_test, lambda r: r["score"] <= 1),
        "BIOSSES gold<=1": pairs(biosses, lambda r: r["score"] <= 1),
        "antonym-swap (MRPC test)": held_controls["antonym-swap"],
        "negation rule (MRPC test)": held_controls["negation (rule)"],
    }
    return cal_same, cal_changed, held_same, held_changed


def table(title: str, same: dict, changed: dict, threshold: float, used: tuple[str, ...]) -> None:
    from shiftbench.validate.meaning import verdicts

    print(f"\n{title}")
    print(f"{'set':<36} {'pairs':>6} {'flagged':>8}")
    flagged = {}
    for group in (same, changed):
        for name, (d, p) in group.items():
            found = verdicts(d, p, threshold, used)
            flagged[name] = sum(v.changed for v in found)
            print(f"{name:<36} {len(p):>6} {flagged[name] / len(p):>8.1%}")
    tp = sum(flagged[n] for n in changed)
    fp = sum(flagged[n] for n in same)
    positives = sum(len(p) for _, p in changed.values())
    precision = tp / (tp + fp) if tp + fp else 0.0
    print(f"precision {precision:.3f}  recall {tp / positives:.3f}  (pooled: {tp} of "
          f"{positives} changed pairs caught, {fp} false alarms on "
          f"{sum(len(p) for _, p in same.values())} same-meaning pairs)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="folder holding MRPC, STSBenchmark, BIOSSES")
    parser.add_argument("--wordnet-dir", default=None)
    parser.add_argument("--encoder", default=None, help="default: the packaged one")
    parser.add_argument(
        "--drifts", type=Path, default=None,
        help="JSON file that keeps each pair's drift between runs (made when missing)",
    )  # fmt: skip
    args = parser.parse_args()

    from shiftbench.core.models.encoders import Encoder
    from shiftbench.validate.meaning import DEFAULT_ENCODER, choose, cosine_drift

    encoder = Encoder(args.encoder or DEFAULT_ENCODER, batch_size=64)
    groups = sets(args.data, args.wordnet_dir)
    kept = (
        json.loads(args.drifts.read_text("utf-8"))
        if args.drifts is not None and args.drifts.exists()
        else {}
    )
    scored = []
    for group in groups:
        scored.append({})
        for name, p in group.items():
            key = f"{encoder.name} {name} {len(p)}"
            if key not in kept:
                kept[key] = cosine_drift(encoder, p)
            scored[-1][name] = (kept[key], p)
    if args.drifts is not None:
        args.drifts.write_text(json.dumps(kept), "utf-8")
    cal_same, cal_changed, held_same, held_changed = scored
    tried: list = []
    threshold, used = choose(cal_same, cal_changed, tried=tried)
    print("evidence kinds tried: lowest threshold within 5% false alarms on each same-meaning "
          "set, mean recall over the changed sets")  # fmt: skip
    for kinds, t, recall in tried:
        said = "no threshold fits" if t is None else f"drift > {t:.2f}, recall {recall:.3f}"
        print(f"  {', '.join(kinds) or 'drift alone':<44} {said}")
    print(f"encoder {encoder.name}; chosen: drift > {threshold:.2f}, evidence: "
          f"{', '.join(used) or 'none'}")  # fmt: skip
    table("calibration (used to choose)", cal_same, cal_changed, threshold, used)
    table("held out (not used to choose)", held_same, held_changed, threshold, used)


if __name__ == "__main__":
    main()
