"""`shiftbench validate` on run folders written by gen: reports, gating, bad input."""

from __future__ import annotations

import json

import pytest
from support.files import read_rows

from shiftbench.core.text.langid import get_identifier


@pytest.mark.parametrize(("name", "floor"), [("lingua", 0.95), ("langdetect", 0.8)])
def test_language_id_on_real_translated_sentences(shared_data, name, floor):
    """The first 300 sentences of each language; bench/bench_langid.py measured lingua at
    96.7-99.3% and langdetect at 83.7-98.7% on them."""
    identifier = get_identifier(name)
    for lang in ("de", "en", "es", "fr", "it", "nl"):
        rows = read_rows(shared_data / "STSBenchmarkMultilingualSTS" / lang / "test.jsonl")
        texts = list(dict.fromkeys(t for r in rows for t in (r["sentence1"], r["sentence2"])))
        found = identifier.detect(texts[:300])
        assert sum(c == lang for c in found) / len(found) >= floor, lang


def test_a_real_generated_run_validates(invoke, tmp_path):
    out = tmp_path / "real"
    made = invoke("gen", "sample", "--limit", "3", "-t", "paraphrase", "-q", "-o", out)
    assert made.exit_code == 0, made.output
    result = invoke("validate", out)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    summary = report["configs"]["paraphrase-s1337"]
    assert summary["rows"] == 3 and 0 < summary["mean_edit_distance"] <= 1
    assert len(read_rows(out / "validation" / "paraphrase-s1337.jsonl")) == 3
    assert "paraphrase-s1337" in result.stdout
