"""Spec files for the `shiftbench run` tests."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_spec(folder: Path, text: str, name: str = "spec.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def stsb_spec(folder: Path, data: Path, extra: str = "", backend: str = "scripted") -> Path:
    body = textwrap.dedent(
        f"""
        output: out
        sources:
          - name: STSBenchmark
            data_dir: {data / "STSBenchmark"}
            limit: 6
          - name: sample
        transforms: [paraphrase, summarisation]
        seeds: [1, 2]
        generator:
          backend: {backend}
        human_eval:
          per_stratum: 4
          raters: 2
          formats: [html, mturk]
        """
    )
    return write_spec(folder, body + textwrap.dedent(extra))
