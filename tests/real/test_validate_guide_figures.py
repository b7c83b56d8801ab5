"""The validate guide's figures that no other test holds: where the checks' ✗ misses fall
(bench/explain_misses.py) and the meaning check's calibration block
(bench/calibrate_meaning.py), each as its command prints it on ../shared/data."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

from support.package import ROOT

GUIDE = ROOT / "docs" / "guides" / "validate.md"
EXPLAIN = ROOT / "bench" / "explain_misses.py"
CALIBRATE = ROOT / "bench" / "calibrate_meaning.py"

# What bench/explain_misses.py printed; the guide quotes it under its ✗ notes.
SPLIT_MISSES = """\
planted failure                                       the text it went into                 missed
reasoning-leak, reasoning before the answer           holds a first-person word   33 of 181  18.2%
reasoning-leak, reasoning before the answer           no first person             1 of 1619   0.1%
prefix-leak, answer prefix                            opens with a label         124 of 188  66.0%
prefix-leak, answer prefix                            no label                    0 of 1612   0.0%
truncated, cut to 50% of its words, no finish reason  ends a sentence             5 of 1184   0.4%
truncated, cut to 50% of its words, no finish reason  no final mark              616 of 616 100.0%
truncated, cut to 90% of its words, no finish reason  ends a sentence             3 of 1184   0.3%
truncated, cut to 90% of its words, no finish reason  no final mark              616 of 616 100.0%
"""


def test_the_guides_split_of_the_misses_is_the_bench_s(shared_data):
    """Each row's parts add up to the misses table's figure (prefix-leak held-out 124 of
    1800; truncated 621 and 619 of 1800; reasoning-leak held-out 34), and the guide's
    notes on what they mean rest on this split."""
    done = subprocess.run(
        [sys.executable, str(EXPLAIN), str(shared_data)], capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == SPLIT_MISSES
    assert SPLIT_MISSES in GUIDE.read_text(encoding="utf-8")


def _calibration_block() -> dict[str, tuple[int, str]]:
    """The guide's calibration block: set name -> (pairs, flagged) as printed."""
    page = GUIDE.read_text(encoding="utf-8")
    start = page.index("evidence kinds tried: ")
    block = page[start : page.index("```", start)]
    rows = re.findall(r"^(\S.*?)\s+(\d+)\s+(\d+\.\d%)$", block, re.MULTILINE)
    return {name: (int(pairs), flagged) for name, pairs, flagged in rows}


def test_the_calibration_blocks_sets_are_the_bench_s(shared_data, wordnet_dir):
    """Every set's pair count, as bench/calibrate_meaning.py builds the sets today (the
    sense-filtered synonym swaps, version 2, made fewer: 445 -> 236 and 478 -> 398), and
    the synonym swaps' flagged share under the shipped threshold and evidence.

    The rest of the block (the other sets' flagged shares, the thresholds tried, precision
    and recall) needs about 21,000 texts encoded, some three minutes: too much for the test
    suite, so it is not pinned here. It is made again with the guide's command after a
    change to the encoder, the threshold, the evidence or the controls."""
    from shiftbench.core.models.encoders import Encoder
    from shiftbench.validate.meaning import (
        DEFAULT_ENCODER,
        DEFAULT_THRESHOLD,
        USED_EVIDENCE,
        cosine_drift,
        verdicts,
    )

    spec = importlib.util.spec_from_file_location("calibrate_meaning", CALIBRATE)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    made = {
        name: pairs
        for group in bench.sets(shared_data, str(wordnet_dir))
        for name, pairs in group.items()
    }
    shown = _calibration_block()
    assert {name: n for name, (n, _) in shown.items()} == {n: len(p) for n, p in made.items()}
    page = GUIDE.read_text(encoding="utf-8")
    chosen = f"chosen: drift > {DEFAULT_THRESHOLD:.2f}, evidence: {', '.join(USED_EVIDENCE)}"
    assert f"encoder {DEFAULT_ENCODER}; {chosen}\n" in page
    encoder = Encoder(DEFAULT_ENCODER, batch_size=64)
    for name in ("synonym-swap-1 (STSB validation)", "synonym-swap-1 (MRPC test)"):
        pairs = made[name]
        found = verdicts(cosine_drift(encoder, pairs), pairs, DEFAULT_THRESHOLD, USED_EVIDENCE)
        assert f"{sum(v.changed for v in found) / len(pairs):.1%}" == shown[name][1], name
