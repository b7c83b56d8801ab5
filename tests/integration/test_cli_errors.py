"""Bad input: one line on stderr, exit code 2, nothing written."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import pytest
from support.files import write_folder

from shiftbench.core.data import mteb_tasks


def assert_refused(result, message: str, out: Path) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr == f"Error: {message}\n"
    assert result.stdout == ""
    assert not out.exists()


def test_unknown_task_suggests_close_matches(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "STSBenchmrk", "-o", out)
    assert_refused(
        result,
        "unknown task 'STSBenchmrk' (neither an MTEB task nor a local folder); "
        "did you mean STSBenchmark, STSBenchmark.v2, STSBenchmark-VN?",
        out,
    )


@pytest.mark.usefixtures("no_model")
def test_unknown_split(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--split", "dev", "-o", out)
    assert_refused(result, "unknown split 'dev' for sample[default]; available: test", out)


def test_unknown_config(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--subset", "fr", "-o", out)
    assert_refused(result, "unknown subset (config) 'fr' for sample; available: default", out)


@pytest.mark.usefixtures("no_model")
def test_missing_text_columns(invoke, tmp_path):
    folder = write_folder(tmp_path / "src", [{"a": "x", "b": "y", "score": 1.0}] * 3)
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "STS", "-o", out)
    assert_refused(
        result,
        "STS needs columns sentence1, sentence2, score but src[default/test] lacks "
        "sentence1, sentence2 (found: a, b, score)",
        out,
    )


@pytest.mark.usefixtures("no_model")
def test_non_text_column(invoke, tmp_path):
    rows = [{"sentence1": "a b", "sentence2": 3, "score": 1.0}] * 2
    folder = write_folder(tmp_path / "src", rows)
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "STS", "-o", out)
    data = folder.resolve() / "data" / "test.jsonl"
    assert_refused(result, f"{data}:1: field sentence2 must be a string, not int", out)


def test_local_folder_needs_task_type(invoke, tmp_path):
    folder = write_folder(tmp_path / "src", [{"sentence1": "a", "sentence2": "b", "score": 1}])
    out = tmp_path / "run"
    result = invoke("gen", folder, "-o", out)
    assert_refused(
        result,
        f"{folder} is a local folder: name its task type with --task-type (STS, "
        "PairClassification, Classification, Clustering, Retrieval, Reranking, Summarization)",
        out,
    )


def test_folder_without_configs(invoke, tmp_path):
    folder = write_folder(tmp_path / "src", [{"x": 1}], configs="pretty_name: x\n")
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "STS", "-o", out)
    assert_refused(result, f"{folder / 'README.md'} has no configs: list in its YAML header", out)


@pytest.mark.usefixtures("no_model")
def test_offline_hub(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "STSBenchmark", "-o", out)
    assert_refused(
        result,
        "cannot load mteb/stsbenchmark-sts@b0fddb56ed78 from the Hugging Face Hub (offline or "
        "unreachable); pass --data-dir with a local copy in Hub layout",
        out,
    )


def test_unreachable_hub_is_detected_without_offline_switches(monkeypatch):
    from huggingface_hub import constants

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with socket.socket() as sock:  # a port that was free a moment ago refuses connections
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    assert mteb_tasks.hub_reachable(timeout=1.0) is False


def test_unknown_transform(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--transform", "paraphrse", "-o", out)
    assert_refused(
        result,
        "unknown transform 'paraphrse'; available: paraphrase, backtranslation, style-change, "
        "expansion, summarisation, summarised-expansion, translation, cross-translation, "
        "synonym-swap-1, synonym-swap-2, synonym-swap-3, antonym-swap, word-jumble-1, "
        "word-jumble-2, word-jumble-3, negation, affirmative-paraphrase (groups: all, "
        "controls); did you mean paraphrase?",
        out,
    )


def test_unknown_backend(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--backend", "embeded", "-o", out)
    assert_refused(
        result,
        "unknown backend 'embeded'; available: embedded, ollama, openai, vllm; "
        "did you mean embedded?",
        out,
    )


def test_vllm_backend_without_vllm(invoke, tmp_path):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-b", "vllm", "-o", out)
    assert_refused(
        result,
        "the vllm backend needs vLLM: pip install 'shiftbench[vllm]' on a CUDA machine, "
        "or run tests/vllm_env.sh for a CPU-only environment",
        out,
    )


def test_engine_arg_needs_the_vllm_backend(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--engine-arg", "dtype=float32", "-o", out)
    assert_refused(result, "--engine-arg applies to the vllm backend only", out)


def test_engine_arg_must_be_key_value(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-b", "vllm", "--engine-arg", "enforce_eager", "-o", out)
    assert_refused(result, "--engine-arg 'enforce_eager' is not KEY=VALUE", out)


def test_missing_model_file(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-m", tmp_path / "nope.gguf", "-o", out)
    assert_refused(result, f"model file {tmp_path / 'nope.gguf'} does not exist", out)


def test_prompt_without_placeholder(invoke, tmp_path):
    prompt = tmp_path / "p.txt"
    prompt.write_text("Rewrite this.", encoding="utf-8")
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--prompt-file", prompt, "-o", out)
    assert_refused(result, f"prompt file {prompt} has no {{text}} placeholder", out)


@pytest.mark.usefixtures("no_model")
def test_output_that_is_not_a_run_folder(invoke, tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    result = invoke("gen", "sample", "-o", out)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: output {out} is a non-empty folder that is not a shiftbench run folder; "
        "choose another --output\n"
    )
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_bad_option_is_one_line(invoke, tmp_path):
    result = invoke("gen", "sample", "--temperature", "-1")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("Error: Invalid value for '--temperature'")


def test_unknown_option_is_one_line(invoke):
    result = invoke("evaluate", "sample", "--bogus")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("Error: No such option") and "--bogus" in result.stderr


@pytest.mark.parametrize("target", ["STSBenchmrk", "sample"])
def test_evaluate_missing_encoder(invoke, tmp_path, target):
    out = tmp_path / "results"
    result = invoke("evaluate", target, "-m", tmp_path / "no-model", "-o", out)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_evaluate_unsupported_task_type(invoke, tmp_path):
    rows = [{"text": "hello there", "label": 0}, {"text": "good bye", "label": 1}]
    folder = write_folder(tmp_path / "src", rows)
    out = tmp_path / "results"
    result = invoke(
        "evaluate",
        folder,
        "--task-type",
        "Classification",
        "-m",
        "sentence-transformers/all-MiniLM-L6-v2",
        "-o",
        out,
    )
    assert_refused(
        result, "Classification fits its classifiers on a train split; src has only test", out
    )
    result = invoke("evaluate", folder, "--task-type", "Retrieval", "-m", "x", "-o", out)
    assert_refused(
        result,
        f"{folder} has no queries config; a Retrieval folder holds corpus, queries and "
        "qrels configs (or <lang>-corpus, <lang>-queries, <lang>-qrels)",
        out,
    )


def test_report_refuses_a_folder_that_is_not_evaluate_results(invoke, tmp_path):
    folder = tmp_path / "not-results"
    folder.mkdir()
    (folder / "results.json").write_text('{"something": 1}', encoding="utf-8")
    out = tmp_path / "report"
    result = invoke("report", folder, "-o", out)
    assert_refused(result, f"{folder} is not an evaluate results folder (no models or target)", out)


def test_evaluate_release_without_a_version(invoke, tmp_path):
    out = tmp_path / "results"
    result = invoke("evaluate", "my-org/stsb@", "-m", "x", "-o", out)
    assert_refused(result, "name the version to evaluate: ORG/NAME@vX.Y.Z, got 'my-org/stsb@'", out)


@pytest.mark.usefixtures("no_model")
def test_gen_refuses_machine_summaries_that_are_not_a_list(invoke, tmp_path):
    rows = [
        {"text": "A long text.", "human_summaries": ["Short."], "machine_summaries": ["Brief."],
         "relevance": [3.0]},
        {"text": "Another text.", "human_summaries": ["Short."], "machine_summaries": "Brief.",
         "relevance": [3.0]},
    ]  # fmt: skip
    folder = write_folder(tmp_path / "summ", rows)
    out = tmp_path / "run"
    result = invoke("gen", folder, "--task-type", "Summarization", "-o", out)
    data = folder.resolve() / "data" / "test.jsonl"
    assert_refused(
        result, f"{data}:2: field machine_summaries must be a list of texts, not str", out
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "Invalid value for '--max-new-tokens': 0 is not in the range x>=1."),
        ("-5", "Invalid value for '--max-new-tokens': -5 is not in the range x>=1."),
        ("lots", "Invalid value for '--max-new-tokens': 'lots' is not a valid integer range."),
    ],
)
def test_bad_max_new_tokens(invoke, tmp_path, value, message):
    out = tmp_path / "run"
    result = invoke("gen", "sample", "-b", "scripted", "--max-new-tokens", value, "-o", out)
    assert_refused(result, message, out)


@pytest.mark.parametrize("backend", ["ollama", "vllm"])
def test_max_new_tokens_must_leave_room_for_the_prompt(invoke, tmp_path, backend):
    out = tmp_path / "run"
    args = ["gen", "sample", "-b", backend, "-m", "m", "--num-ctx", "4096", "-o", out]
    result = invoke(*args, "--max-new-tokens", "4096")
    assert_refused(
        result,
        f"--max-new-tokens 4096 leaves no room for the prompt in the {backend} backend's "
        "context of 4096 tokens; raise --num-ctx",
        out,
    )


@pytest.mark.parametrize(
    ("command", "target", "message"),
    [
        (
            ["gen", "sample"],
            "shiftbench.gen.api.generate",
            "Interrupted; finished rows are cached.",
        ),
        (
            ["run", "spec.yaml"],
            "shiftbench.runner.pipeline.execute",
            "Interrupted; finished rows are cached.",
        ),
        (
            ["gen", "sample", "--no-cache"],
            "shiftbench.gen.api.generate",
            "Interrupted; nothing is kept (--no-cache).",
        ),
        (["init"], "shiftbench.cli.commands.specdoc.starter", "Interrupted."),
    ],
)
def test_ctrl_c_is_one_line_and_exit_130(invoke, monkeypatch, tmp_path, command, target, message):
    """Ctrl-C (KeyboardInterrupt) is no click "Aborted.": exit 130, and the commands that
    generate say their finished rows are cached (tests/real/test_resume.py sends a real SIGINT)."""
    from shiftbench.cli import cli
    from shiftbench.cli.commands.specdoc import starter

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    (tmp_path / "spec.yaml").write_text(starter("spec.yaml", cli), encoding="utf-8")
    monkeypatch.setattr(target, interrupt)
    monkeypatch.chdir(tmp_path)
    result = invoke(*command)
    assert result.exit_code == 130, result.output
    assert result.stderr.splitlines()[-1] == message
    assert result.stdout == ""
