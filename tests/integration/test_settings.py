"""Ranges and choices are written once, on the settings fields; the settings, the CLI and
the spec reader all refuse the same values with the same words."""

from __future__ import annotations


def test_the_cli_and_a_spec_refuse_a_value_with_the_settings_words(invoke, tmp_path):
    result = invoke("human-eval", "batch", str(tmp_path), "-o", tmp_path / "b", "--raters", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--raters': 0 is not in the range x>=1." in result.stderr
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "output: out\nsources:\n- name: sample\ntransforms: [paraphrase]\nseeds: [1]\n"
        "human_eval:\n  raters: 0\n",
        encoding="utf-8",
    )
    result = invoke("run", spec, "--dry-run")
    assert result.exit_code == 2
    assert result.stderr == f"Error: {spec}:7: human_eval.raters: 0 is not in the range x>=1.\n"
