"""The embedded backend's llama.cpp engine (llama-cpp-python) on the packaged SmolLM2 GGUF:
chosen by "auto", seeded per request like the transformers engine, told apart from it in
every record, and refused with a reason where it cannot run."""

from __future__ import annotations

import json
import math
import sys
import threading

import pytest
from support.waiting import wait_for

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (the test extra has it)")

from shiftbench.llm.backends import Request, Sampling, get_backend

TEXTS = [
    "A woman is watering the tomato plants in her garden.",
    "The train to Lyon left twenty minutes late.",
    "Two children are building a sandcastle on the beach.",
    "A man is fixing the chain of his bicycle.",
]
SAMPLED = Sampling(temperature=0.7, top_p=0.95, top_k=40)


def prompts() -> list[str]:
    from shiftbench.core.text.transforms import TRANSFORMS, load_prompts

    template = load_prompts(TRANSFORMS["paraphrase"])[0]
    return [template.render(t, "English") for t in TEXTS]


@pytest.fixture(scope="module")
def llama():
    backend = get_backend("embedded")  # "auto": the packaged model is a GGUF file
    assert backend.engine == "llama.cpp"
    backend.load()
    return backend


def test_auto_takes_llama_cpp_for_the_gguf_and_describe_names_it(llama):
    import llama_cpp

    assert llama.engine == "llama.cpp"
    described = llama.describe()
    assert described["model"]["engine"] == f"llama.cpp {llama_cpp.__version__}"
    assert described["backend"] == {"name": "embedded", "llama_cpp": llama_cpp.__version__}
    other = get_backend("embedded", engine="transformers").describe()
    assert "engine" not in other["model"]  # the transformers engine's entry as it was
    assert set(other["backend"]) == {"name", "transformers", "torch"}


def test_seeded_outputs_are_byte_identical_in_any_order_alone_or_together(llama):
    requests = [Request(p, 1000 + i, 12) for i, p in enumerate(prompts()[:3])]
    together = llama.generate(requests, SAMPLED)
    backwards = llama.generate(list(reversed(requests)), SAMPLED)[::-1]
    alone = llama.generate(requests[2:], SAMPLED)  # after the others, as the first ran first
    assert backwards == together
    assert alone == together[2:]
    assert all(g.output_tokens and g.prompt_tokens for g in together)
    reseeded = llama.generate([Request(r.prompt, r.seed + 1, 12) for r in requests], SAMPLED)
    assert [g.text for g in reseeded] != [g.text for g in together]


def test_the_gguf_chat_template_budget_and_finish_reasons(llama, models_folder):
    """The prompt is formatted as transformers formats it from the same GGUF (same text,
    same token count); a request stops at its own budget ("length") or at the end of its
    turn ("stop")."""
    from transformers import AutoTokenizer

    from shiftbench.llm.backends.weights import dequantised_checkpoint

    copy = dequantised_checkpoint(llama.location, models_folder)
    tokenizer = AutoTokenizer.from_pretrained(copy)
    prompt = prompts()[0]
    chat = [{"role": "user", "content": prompt}]
    expected = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert llama._llama().chat(prompt) == expected
    short, free = llama.generate(
        [Request(prompt, 7, 3), Request(prompt, 7, 200)], Sampling(temperature=0)
    )
    counted = len(tokenizer(expected, add_special_tokens=False)["input_ids"])
    assert (short.finish_reason, short.output_tokens, short.prompt_tokens) == ("length", 3, counted)
    assert free.finish_reason == "stop" and 3 < free.output_tokens < 200
    assert free.text.startswith(short.text)


def test_answer_logprobs_are_the_next_token_distribution(llama):
    """The judges' yes/no log-probabilities: the same alone as together, and within a
    small margin of the transformers engine's on the same (dequantised) weights."""
    asked = ["Is the sky blue on a clear day? Answer Yes or No.", "Is fire cold? Answer Yes or No."]
    together = llama.answer_logprobs(asked, ("Yes", "No"))
    alone = [llama.answer_logprobs([p], ("Yes", "No"))[0] for p in asked]
    assert together == alone
    reference = get_backend("embedded", engine="transformers").answer_logprobs(asked, ("Yes", "No"))
    for ours, theirs in zip(together, reference, strict=True):
        assert math.exp(ours["Yes"]) + math.exp(ours["No"]) <= 1.0
        for answer in ("Yes", "No"):
            assert ours[answer] == pytest.approx(theirs[answer], abs=0.3)


def test_abort_drops_the_queued_requests_with_stopped(llama, monkeypatch):
    from shiftbench.llm.backends.base import Stopped
    from shiftbench.llm.backends.llamacpp import LlamaModel

    entered, release = threading.Event(), threading.Event()
    ran: list[str] = []
    real = LlamaModel.generate

    def held(self, request, sampling):
        ran.append(request.prompt)
        entered.set()
        assert release.wait(timeout=300)
        return real(self, request, sampling)

    monkeypatch.setattr(LlamaModel, "generate", held)
    outcome: list[BaseException] = []

    def job():
        try:
            llama.generate([Request(p, 1, 8) for p in prompts()[:3]], SAMPLED)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=job)
    worker.start()
    wait_for(entered.is_set, 300, "the first request to start")
    llama.abort()
    release.set()
    worker.join(timeout=300)
    assert len(ran) == 1  # the one running finished; the two queued never ran
    assert [type(e) for e in outcome] == [Stopped]


def test_set_threads_reaches_the_context(llama):
    import llama_cpp

    model = llama._llama()
    before = llama_cpp.llama_n_threads(model.llm.ctx)
    llama._set_threads(1)
    try:
        assert llama_cpp.llama_n_threads(model.llm.ctx) == 1
    finally:
        llama._set_threads(before)
    assert llama_cpp.llama_n_threads(model.llm.ctx) == before


def test_engine_choices_and_refusals(invoke, tmp_path, monkeypatch, models_folder):
    out = tmp_path / "run"
    bad = invoke("gen", "sample", "--engine", "llamacpp", "-o", out)
    assert (bad.exit_code, bad.stderr) == (
        2,
        "Error: Invalid value for '--engine': 'llamacpp' is not one of 'auto', "
        "'transformers', 'llama.cpp'.\n",
    )
    other = invoke("gen", "sample", "-b", "openai", "--engine", "transformers", "-o", out)
    assert (other.exit_code, other.stderr) == (
        2,
        "Error: --engine applies to the embedded backend only\n",
    )
    from shiftbench.llm.backends.weights import DEFAULT_MODEL, dequantised_checkpoint, locate_model

    folder = dequantised_checkpoint(locate_model(DEFAULT_MODEL), models_folder)  # no GGUF
    plain = invoke("gen", "sample", "-m", folder, "--engine", "llama.cpp", "-o", out)
    assert (plain.exit_code, plain.stderr) == (
        2,
        f"Error: the llama.cpp engine runs GGUF files only, and model '{folder}' is not one: "
        "give a .gguf file (or a folder holding one), or use --engine transformers\n",
    )
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as where it is not installed
    missing = invoke("gen", "sample", "--engine", "llama.cpp", "-o", out)
    assert (missing.exit_code, missing.stderr) == (
        2,
        "Error: the llama.cpp engine needs llama-cpp-python, which is not installed: pip "
        "install llama-cpp-python (it builds llama.cpp from source: about 11 minutes, once); "
        "or use --engine transformers\n",
    )
    assert get_backend("embedded").engine == "transformers"  # auto, without it
    assert not out.exists()
    with pytest.raises(Exception, match="unknown embedded engine 'fast'; available: auto, "):
        get_backend("embedded", engine="fast")


def test_a_run_folder_never_takes_one_engines_rows_for_the_others(invoke, tmp_path):
    """The engine is in the model's record: a config made by llama.cpp is another setting
    for transformers (and so is every cached call of it)."""
    import llama_cpp

    out, cache = tmp_path / "run", tmp_path / "cache"
    args = ["gen", "sample", "--limit", "1", "--max-new-tokens", "16", "--max-attempts", "1",
            "--max-failure-rate", "1", "--cache-dir", cache]  # fmt: skip
    made = invoke(*args, "-q", "-o", out)
    assert made.exit_code == 0, made.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    config = meta["configs"]["paraphrase-s1337"]
    assert config["model"]["engine"] == f"llama.cpp {llama_cpp.__version__}"
    assert config["backend"] == {"name": "embedded", "llama_cpp": llama_cpp.__version__}
    again = invoke(*args, "--engine", "transformers", "-q", "-o", out)
    assert (again.exit_code, again.stderr) == (
        2,
        f"Error: config 'paraphrase-s1337' already exists in {out} with other settings "
        f"(model.engine 'llama.cpp {llama_cpp.__version__}' -> none); pass --overwrite to "
        "replace it\n",
    )


def test_the_thread_count_never_changes_what_a_seed_produces(llama, monkeypatch):
    """On a shared machine the engines change their thread count between batches
    (llm/backends/threads.py): a seeded output must not depend on it, on either engine.
    (The counts are set here by hand, with the backends' own choice switched off.)"""
    monkeypatch.setattr(llama._share, "fixed", 2)
    requests = [Request(p, 2000 + i, 16) for i, p in enumerate(prompts()[:3])]
    before = llama._llama().threads
    try:
        llama._set_threads(1)
        one = llama.generate(requests, SAMPLED)
        llama._set_threads(2)
        two = llama.generate(requests, SAMPLED)
    finally:
        llama._set_threads(before)
    assert one == two

    import torch

    transformers = get_backend("embedded", engine="transformers", batch_size=3)
    monkeypatch.setattr(transformers._share, "fixed", 2)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = transformers.generate(requests, SAMPLED)
        torch.set_num_threads(2)
        two = transformers.generate(requests, SAMPLED)
    finally:
        torch.set_num_threads(threads)
    assert [g.text for g in one] == [g.text for g in two]


def test_a_prompt_shared_with_the_last_gives_what_an_empty_context_gives(llama):
    """Whole chunks a prompt shares with the one before are kept in the cache rather than
    evaluated again (llamacpp.LlamaModel._fresh); the outputs must be the bits an empty
    context gives, request by request."""
    requests = [Request(p, 3000 + i, 16) for i, p in enumerate(prompts())]
    model = llama._llama()
    kept = llama.generate(requests, SAMPLED)  # each after the last: their instructions shared
    alone = []
    for request in requests:
        model._prompt = []  # nothing kept: the prompt evaluated from its start
        alone.extend(llama.generate([request], SAMPLED))
    assert kept == alone
