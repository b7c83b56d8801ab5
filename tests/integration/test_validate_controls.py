"""validate on a run of controls only: one line that says why there is nothing to check
and points to probe, the command that measures controls."""

from __future__ import annotations


def test_a_controls_only_run_points_to_probe(invoke, tmp_path):
    run = tmp_path / "run"
    made = invoke("gen", "sample", "-t", "word-jumble-1", "--limit", "4", "-q", "-o", run)
    assert made.exit_code == 0, made.output
    result = invoke("validate", run, "-q")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {run} holds controls only (word-jumble-1-s1337); each is a rule-based "
        "control, which validate does not check (its checks look for what an LLM gets "
        f"wrong); a control's effect on meaning is measured by 'shiftbench probe {run} -m "
        "MODEL'\n",
    )
    named = invoke("validate", run, "--config", "word-jumble-1-s1337", "-q")
    assert (named.exit_code, named.stderr) == (
        2,
        "Error: word-jumble-1-s1337 is a rule-based control, which validate does not check "
        "(its checks look for what an LLM gets wrong); a control's effect on meaning is "
        f"measured by 'shiftbench probe {run} -m MODEL'\n",
    )
    assert not (run / "validation.json").exists()
