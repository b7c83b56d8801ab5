"""The synonym swaps' sense filter: its measured wrong-sense rate, and rare senses kept out."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner
from support.controls import NO_GENERATOR, _gen
from support.files import read_rows
from support.package import ROOT

BENCH = ROOT / "bench" / "bench_synonym_senses.py"

# What the bench printed when the filter was chosen; the controls guide quotes it.
MEASURED = """\
300 labelled swaps; sense filter: a sense with >= 40% of the word's tagged uses
all, before                  198/300 wrong =  66.0%  95% CI [60.5%, 71.1%]
all, after                    77/153 wrong =  50.3%  95% CI [42.5%, 58.1%]
pick half, before             93/150 wrong =  62.0%  95% CI [54.0%, 69.4%]
pick half, after              38/83  wrong =  45.8%  95% CI [35.5%, 56.4%]
report half, before          105/150 wrong =  70.0%  95% CI [62.2%, 76.8%]
report half, after            39/70  wrong =  55.7%  95% CI [44.1%, 66.8%]
BIOSSES, before               56/100 wrong =  56.0%  95% CI [46.2%, 65.3%]
BIOSSES, after                29/62  wrong =  46.8%  95% CI [34.9%, 59.0%]
STSBenchmark, before          76/100 wrong =  76.0%  95% CI [66.8%, 83.3%]
STSBenchmark, after           22/36  wrong =  61.1%  95% CI [44.9%, 75.2%]
MRPC, before                  66/100 wrong =  66.0%  95% CI [56.3%, 74.5%]
MRPC, after                   26/55  wrong =  47.3%  95% CI [34.7%, 60.2%]
"""


def test_labelled_swaps_give_the_measured_rates(shared_data, wordnet_dir):
    """The 300 hand-labelled swaps, re-read from the datasets: the wrong-sense rate before
    the filter and among the swaps it still allows is the one the guide gives."""
    done = subprocess.run(
        [sys.executable, str(BENCH), str(shared_data), "--labels-only", "--wordnet-dir",
         str(wordnet_dir)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == MEASURED
    guide = (ROOT / "docs" / "guides" / "controls.md").read_text(encoding="utf-8")
    assert MEASURED in guide


def test_a_rare_sense_is_not_swapped(shared_data, wordnet_dir, tmp_path):
    """'solid' in "solid tumors" has a synonym only in a sense with 1 of its 32 tagged uses
    (a hearty meal); BIOSSES's synonym swaps leave it, and 'established tumors', alone."""
    from shiftbench.core.text.transforms import CONTROLS
    from shiftbench.gen.controls import MIN_SENSE_SHARE, SYNONYM, Lexicon, replacements
    from shiftbench.gen.wordnet import open_wordnet

    lexicon = Lexicon(open_wordnet(str(wordnet_dir)), ("verb", "adjective"))
    unfiltered = replacements("solid", "JJ", lexicon, SYNONYM)
    assert unfiltered == ("hearty", "satisfying", "square", "substantial")
    assert replacements("solid", "JJ", lexicon, SYNONYM, MIN_SENSE_SHARE[SYNONYM]) == ()

    out = tmp_path / "run"
    names = [f"synonym-swap-{n}" for n in (1, 2, 3)]
    _gen(CliRunner(), shared_data / "BIOSSES", "--task-type", "STS", "--source-language", "en",
         "-t", ",".join(names), "-s", "1", "--wordnet-dir", wordnet_dir, *NO_GENERATOR, "-q",
         "-o", out)  # fmt: skip
    seen = []
    for name in names:
        assert CONTROLS[name].version == 2
        for row in read_rows(out / f"{name}-s1" / "test.jsonl"):
            for field in ("sentence1", "sentence2"):
                for phrase in ("solid tumors", "established tumors"):
                    if phrase in row[f"original_{field}"]:
                        status = row[f"status_{field}"]
                        seen.append((name, phrase, status, phrase in row[field]))
    # before the filter, seed 1 made "hearty tumors" and "founded tumors"; now the one
    # swap made keeps the phrase, and the other texts have no other word to swap
    assert seen == [
        ("synonym-swap-1", "solid tumors", "ok", True),
        *[("synonym-swap-1", "established tumors", "not-applicable", False)] * 2,
        *[(n, p, "not-applicable", False) for n in names[1:]
          for p in ("solid tumors", "established tumors", "established tumors")],
    ]  # fmt: skip
