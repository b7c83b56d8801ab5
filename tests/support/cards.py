"""Shared by the card and publish tests: the local Hub's repository name and the
STSBenchmark run they publish."""

from __future__ import annotations

from pathlib import Path

REPO = "shiftbench-test/stsb-variants"


def build_stsb_run(out: Path, invoke, shared_data: Path) -> None:
    """20 real STSBenchmark test rows, paraphrased with two seeds and translated to German."""
    common = ["--data-dir", shared_data / "STSBenchmark", "--limit", "20", "-b", "scripted", "-q"]
    args = ["gen", "STSBenchmark", *common, "-t", "paraphrase", "-s", "1", "-s", "2", "-o", out]
    assert invoke(*args).exit_code == 0
    args = ["gen", "STSBenchmark", *common, "-t", "translation", "--languages", "de", "-o", out]
    assert invoke(*args, "-s", "1").exit_code == 0
    assert invoke("validate", out, "-q").exit_code == 0
