"""Protocol presets and per-step prompt files."""

from __future__ import annotations

import json

import pytest

from shiftbench.llm.backends import Sampling


def _meta(folder):
    return json.loads((folder / "shiftbench.json").read_text(encoding="utf-8"))


def test_pteb_preset(scripted, invoke, tmp_path):
    from support.scripted_backend import ScriptedBackend

    out = tmp_path / "run"
    result = invoke("gen", "sample", "--protocol", "pteb", "--limit", "2", "-b", "scripted",
                    "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = _meta(out)
    assert sorted(meta["configs"]) == ["original"] + [f"paraphrase-s{s}" for s in range(1337, 1343)]
    protocol = meta["protocol"]
    assert protocol["name"] == "pteb"
    assert protocol["overridden"] == []
    assert protocol["settings"] == {
        "transforms": ["paraphrase"],
        "seeds": [1337, 1338, 1339, 1340, 1341, 1342],
        "temperature": None,
        "top_p": None,
        "top_k": None,
        "max_attempts": 3,
        "token_budgets": "grown",
        "rewrite": {"Classification": ["queries", "train"], "*": ["queries"]},
        "classification_scoring": "full-train",
        "retrieval_scoring": "mteb",
    }
    assert protocol["rewrite"] == ["queries"]  # the sample is an STS set
    config = meta["configs"]["paraphrase-s1340"]
    assert config["sampling"] == {"temperature": None, "top_p": None, "max_new_tokens": None}
    assert set(ScriptedBackend.samplings) == {Sampling(None, None, None)}


def test_hteb_preset_with_an_override(scripted, invoke, tmp_path):
    from support.scripted_backend import ScriptedBackend

    out = tmp_path / "run"
    result = invoke("gen", "sample", "--protocol", "hteb", "--seed", "7", "--limit", "2",
                    "--max-attempts", "2", "-b", "scripted", "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = _meta(out)
    assert len(meta["configs"]) == 9  # original + the eight transformations at seed 7
    assert "translation-s7" in meta["configs"] and "backtranslation-s7" in meta["configs"]
    protocol = meta["protocol"]
    assert protocol["overridden"] == ["seeds", "max_attempts"]
    assert protocol["settings"]["seeds"] == [7]
    assert protocol["preset"]["seeds"] == [1337, 1338, 1339]
    assert (protocol["settings"]["temperature"], protocol["settings"]["top_p"]) == (1.0, 0.95)
    assert (protocol["settings"]["top_k"], protocol["settings"]["max_attempts"]) == (64, 2)
    assert (protocol["preset"]["max_attempts"], protocol["preset"]["token_budgets"]) == (4, "flat")
    assert protocol["preset"]["rewrite"]["Retrieval"] == ["queries", "corpus"]
    assert set(ScriptedBackend.samplings) == {Sampling(1.0, 0.95, None, 64, "flat")}
    # HTEB's flat budgets: 1024 for an expansion call, 512 for every other call
    configs = meta["configs"]
    assert configs["paraphrase-s7"]["token_budgets"] == ["512 (flat)"]
    assert configs["summarised-expansion-s7"]["token_budgets"] == ["1024 (flat)", "512 (flat)"]
    assert configs["expansion-s7"]["sampling"]["top_k"] == 64
    assert configs["expansion-s7"]["max_attempts"] == 2
    by_input = {}
    for text, budget in ScriptedBackend.budgets:
        by_input.setdefault(budget, set()).add(text)
    assert set(by_input) == {512, 1024}


def test_hteb_preset_without_top_k(scripted, invoke, tmp_path):
    """--top-k 0 sends no top-k cut under hteb, and the other presets send none."""
    from support.scripted_backend import ScriptedBackend

    out = tmp_path / "run"
    result = invoke("gen", "sample", "--protocol", "hteb", "-t", "paraphrase", "--seed", "7",
                    "--limit", "2", "--top-k", "0", "-b", "scripted", "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = _meta(out)
    assert meta["protocol"]["settings"]["top_k"] is None
    assert "top_k" not in meta["configs"]["paraphrase-s7"]["sampling"]
    assert set(ScriptedBackend.samplings) == {Sampling(1.0, 0.95, None, None, "flat")}


def test_default_protocol_keeps_todays_settings(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--limit", "2", "-b", "scripted", "-q", "-o", out)
    assert result.exit_code == 0, result.output
    meta = _meta(out)
    assert list(meta["configs"]) == ["original", "paraphrase-s1337"]
    assert meta["protocol"]["name"] == "shiftbench"
    assert meta["configs"]["paraphrase-s1337"]["sampling"] == {
        "temperature": 0.7, "top_p": 0.95, "max_new_tokens": None}  # fmt: skip


def test_prompt_file_reaches_step_two(scripted, invoke, tmp_path):
    from support.scripted_backend import ScriptedBackend

    prompt = tmp_path / "back.txt"
    prompt.write_text("Put this back into {language}, please.\n\n{text}", encoding="utf-8")
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-t", "backtranslation", "--prompt-file",
                    f"backtranslation:2={prompt}", "--limit", "1", "-b", "scripted", "-q",
                    "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    prompts = _meta(out)["configs"]["backtranslation-s1337"]["prompts"]
    assert prompts[0]["origin"] == "shiftbench:translate.txt"
    assert prompts[1] == {
        "origin": str(prompt.resolve()),
        "sha256": __import__("hashlib").sha256(prompt.read_bytes()).hexdigest(),
        "text": "Put this back into {language}, please.\n\n{text}",
    }
    second = [p for p in ScriptedBackend.prompts if p.startswith("Put this back into ")]
    assert second and all(p.startswith("Put this back into English, please.\n\nREWRITTEN ")
                          for p in second)  # fmt: skip
    assert len(second) == len(ScriptedBackend.prompts) // 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--protocol", "ptb"],
            "unknown protocol 'ptb'; available: shiftbench, pteb, hteb; did you mean pteb?",
        ),
        (
            ["-t", "backtranslation", "--prompt-file", "backtranslation:3={prompt}"],
            "--prompt-file backtranslation:3={prompt}: backtranslation has 2 steps",
        ),
        (
            ["--prompt-file", "paraphrase:2={prompt}"],
            "--prompt-file paraphrase:2={prompt}: paraphrase has 1 step",
        ),
        (
            ["--prompt-file", "backtranslation:2={prompt}"],
            "--prompt-file backtranslation:2={prompt}: backtranslation is not being generated",
        ),
        (["--prompt-file", "parafrase={prompt}"], "unknown transform 'parafrase'"),
        (["--prompt-file", "paraphrase={missing}"], "prompt file {missing} does not exist"),
        (["--prompt-file", "paraphrase={bare}"], "prompt file {bare} has no {{text}} placeholder"),
    ],
)
def test_bad_protocol_and_prompt_files(scripted, invoke, tmp_path, args, message):
    prompt = tmp_path / "p.txt"
    prompt.write_text("Do it: {text}", encoding="utf-8")
    bare = tmp_path / "bare.txt"
    bare.write_text("Do it.", encoding="utf-8")
    paths = {"prompt": prompt, "missing": tmp_path / "none.txt", "bare": bare}
    out = tmp_path / "run"
    result = invoke("gen", "sample", *[a.format(**paths) for a in args], "-b", "scripted",
                    "-o", out)  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {message.format(**paths)}")
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_card_lists_the_protocol_and_its_overrides(scripted, invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--protocol", "pteb", "--temperature", "0.5", "--limit",
                    "1", "-b", "scripted", "-q", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    result = invoke("card", str(out))
    assert result.exit_code == 0, result.output
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Made with `--protocol pteb`: PTEB: paraphrases only" in card
    assert (
        "| seeds | 1337, 1338, 1339, 1340, 1341, 1342 | 1337, 1338, 1339, 1340, 1341, 1342 |"
        in card
    )
    assert "| temperature | backend default (not sent) | 0.5 (overridden) |" in card
    assert "| top_p | backend default (not sent) | backend default (not sent) |" in card
    assert "| classification_scoring | full-train | full-train |" in card
    assert "Overridden by explicit options: temperature." in card
    assert "sampling: temperature=0.5, top_p=backend default, max_new_tokens=None;" in card


def test_a_specs_protocol_reaches_gen(scripted, invoke, tmp_path):
    """The spec's transforms and seeds are its own; the protocol sets the sampling."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "output: out\nsources:\n  - name: sample\n    limit: 2\ntransforms: [paraphrase]\n"
        "seeds: [5]\nprotocol: hteb\ngenerator:\n  backend: scripted\n",
        encoding="utf-8",
    )
    result = invoke("run", spec, "--until", "gen", "-q")
    assert result.exit_code == 0, result.stderr
    protocol = _meta(tmp_path / "out" / "sample" / "run")["protocol"]
    assert protocol["name"] == "hteb"
    assert protocol["overridden"] == ["transforms", "seeds"]
    assert (protocol["settings"]["seeds"], protocol["settings"]["temperature"]) == ([5], 1.0)
