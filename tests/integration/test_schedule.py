"""Greedy calls shared across seeds, every job of a run in one stream, and gen --dry-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.files import read_rows
from support.stream_backend import StreamBackend, input_text

from shiftbench.core.text.transforms import TRANSFORMS

GREEDY = ["--temperature", "0"]


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch):
    """Register the stream backend (see support/stream_backend.py) with a clean slate."""
    from shiftbench.llm import calls as llm_calls
    from shiftbench.llm.backends import BACKENDS

    monkeypatch.setitem(BACKENDS, "stream", "support.stream_backend:StreamBackend")
    monkeypatch.setattr(StreamBackend, "concurrent", True)
    monkeypatch.setattr(StreamBackend, "requests", [])
    monkeypatch.setattr(StreamBackend, "hold", None)
    monkeypatch.setattr(StreamBackend, "fail_for", set())
    monkeypatch.setattr(StreamBackend, "held_too_long", [])
    monkeypatch.setattr(llm_calls.time, "sleep", lambda s: None)
    return StreamBackend


def gen_args(out: Path, *extra: str) -> list[str]:
    return ["gen", "sample", "--limit", "4", "-b", "stream", "-q", "-o", str(out), *extra]


def data_files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.glob("*/test.jsonl"))}


def language_chains(out: Path, config: str) -> set[tuple[str, ...]]:
    """(text, languages of its calls) for every text of a config, read from its rows."""
    chains = set()
    for row in read_rows(out / config / "test.jsonl"):
        for field in ("sentence1", "sentence2"):
            pivot = row.get(f"pivot_{field}")
            langs = (pivot, "en") if pivot else (row[f"language_{field}"],)
            chains.add((row[f"original_{field}"], *langs))
    return chains


@pytest.mark.parametrize("concurrent", [True, False], ids=["one-stream", "one-by-one"])
def test_greedy_seeds_share_calls_and_write_what_separate_runs_write(
    stream, invoke, tmp_path, concurrent
):
    stream.concurrent = concurrent
    separate = tmp_path / "separate"
    alone_calls = 0
    for seed in ("1", "2", "3"):
        cache = tmp_path / f"cache-{seed}"  # a separate empty cache for each seed
        result = invoke(*gen_args(separate, "-t", "all", "-s", seed, *GREEDY,
                                  "--cache-dir", str(cache)))  # fmt: skip
        assert result.exit_code == 0, result.output
        alone_calls += len(stream.requests)
        stream.requests.clear()

    if concurrent:  # held until three jobs' requests are in flight together
        stream.hold = lambda r, seen: len({p.prompt.split("\n")[0] for p in seen}) < 3
    shared = tmp_path / "shared"
    result = invoke(*gen_args(shared, "-t", "all", "--seeds", "1,2,3", *GREEDY))
    assert result.exit_code == 0, result.output
    assert stream.held_too_long == []
    assert data_files(shared) == data_files(separate)
    assert len(data_files(shared)) == 1 + 8 * 3

    # Independently of the engine: one call per text and step for each distinct language
    # chain the single-seed runs wrote (the seed only draws languages).
    expected = 0
    for name, transform in TRANSFORMS.items():
        chains = set().union(*(language_chains(separate, f"{name}-s{s}") for s in (1, 2, 3)))
        expected += len(chains) * transform.calls
    sent = stream.requests
    assert len(sent) == expected
    assert len({(r.prompt, r.seed, r.max_new_tokens) for r in sent}) == expected  # none twice
    assert alone_calls == 3 * 8 * (1 + 1 + 1 + 1 + 1 + 2 + 1 + 2)  # 8 texts, 10 steps
    # a transform without a language draw makes one third of the calls it made alone
    for prompt in ("Rewrite the text below in different words.", "Change the register"):
        assert len([r for r in sent if r.prompt.startswith(prompt)]) == 8


def test_greedy_seeds_keep_their_own_language_draws(stream, invoke, tmp_path):
    """Cross-translation draws each text's language per seed: only texts whose language
    coincides share a call, and each row is in the language its seed drew."""
    out = tmp_path / "run"
    result = invoke(*gen_args(out, "-t", "cross-translation", "--seeds", "1,2,3", *GREEDY))
    assert result.exit_code == 0, result.output
    chains = set().union(*(language_chains(out, f"cross-translation-s{s}") for s in (1, 2, 3)))
    assert len(stream.requests) == len(chains)
    assert 8 < len(chains) < 24  # some texts drew the same language, some did not
    names = {"es": "Spanish", "fr": "French", "de": "German", "tr": "Turkish", "ar": "Arabic"}
    for seed in (1, 2, 3):
        for row in read_rows(out / f"cross-translation-s{seed}" / "test.jsonl"):
            assert f"({names[row['language_sentence1']]} " in row["sentence1"]


def test_sampling_seeds_share_nothing(stream, invoke, tmp_path):
    result = invoke(*gen_args(tmp_path / "run", "-t", "paraphrase", "--seeds", "1,2,3"))
    assert result.exit_code == 0, result.output
    assert len(stream.requests) == 3 * 8
    assert len({r.seed for r in stream.requests}) == 3 * 8


def test_every_variant_is_in_flight_at_once_and_writes_what_one_by_one_writes(
    stream, invoke, tmp_path
):
    """Paraphrase requests are held until back-translation's second step has come in: the
    run can only finish if the jobs run together and a job's second step does not wait
    for the other jobs."""
    back = "Translate the text below into English."

    def hold(request, seen):
        return request.prompt.startswith("Rewrite") and not any(
            r.prompt.startswith(back) for r in seen
        )

    stream.hold = hold
    together = tmp_path / "together"
    args = ["-t", "paraphrase,backtranslation,summarisation", "--seeds", "1,2"]
    result = invoke(*gen_args(together, *args, "--no-cache"))
    assert result.exit_code == 0, result.output
    assert stream.held_too_long == []
    meta = json.loads((together / "shiftbench.json").read_text(encoding="utf-8"))
    assert list(meta["configs"]) == [
        "original",
        "paraphrase-s1",
        "paraphrase-s2",
        "backtranslation-s1",
        "backtranslation-s2",
        "summarisation-s1",
        "summarisation-s2",
    ]

    stream.hold = None
    stream.concurrent = False
    one_by_one = tmp_path / "one-by-one"
    result = invoke(*gen_args(one_by_one, *args, "--no-cache"))
    assert result.exit_code == 0, result.output
    assert data_files(together) == data_files(one_by_one)
    assert len(data_files(together)) == 7


def test_a_failing_job_fails_the_run_and_its_finished_rows_are_kept(stream, invoke, tmp_path):
    rows = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
    stream.fail_for = {rows[3]["sentence2"]}
    out = tmp_path / "run"
    args = gen_args(out, "-t", "paraphrase,summarisation,expansion", "-s", "1")
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: backend stream failed 3 times; finished rows are cached (ConnectionError: "
        f"no answer for {rows[3]['sentence2']!r})\n"
    )
    assert not out.exists()
    failing = {(r.prompt, r.seed) for r in stream.requests if input_text(r) == rows[3]["sentence2"]}
    answered = {(r.prompt, r.seed) for r in stream.requests} - failing
    assert 1 <= len(failing) <= 3 and len(answered) >= 6  # a failing job's first chunks came in

    stream.fail_for = set()
    stream.requests.clear()
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    again = {(r.prompt, r.seed) for r in stream.requests}
    assert failing <= again and not again & answered  # finished rows are not asked again
    assert len(again | answered) == 3 * 8
    for config in ("paraphrase-s1", "summarisation-s1", "expansion-s1"):
        assert {r["status"] for r in read_rows(out / config / "test.jsonl")} == {"ok"}


def test_dry_run_prints_the_plan_and_the_run_makes_it(stream, invoke, tmp_path):
    out = tmp_path / "run"
    cache = tmp_path / "cache"
    args = gen_args(out, "-t", "paraphrase,backtranslation", "--seeds", "1,2,3", *GREEDY,
                    "--cache-dir", str(cache))  # fmt: skip
    plan = invoke(*args, "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert not out.exists() and not cache.exists()
    assert stream.requests == []
    lines = plan.stdout.splitlines()
    assert lines[0].split() == ["config", "texts", "calls", "cached", "shared", "to", "make"]
    assert lines[1].split() == ["paraphrase-s1", "8", "8", "0", "0", "8"]
    assert lines[2].split() == ["paraphrase-s2", "8", "8", "0", "8", "0"]
    assert lines[3].split() == ["paraphrase-s3", "8", "8", "0", "8", "0"]
    total = lines[7].split()
    assert total[:3] == ["all", str(3 * 8 + 3 * 16), "0"]

    result = invoke(*args)
    assert result.exit_code == 0, result.output
    made = len(stream.requests)
    assert int(total[4]) == made  # to make: exactly the calls the run made
    # the back-translation rows: each seed's pivots, shared where they coincide
    chains = set().union(*(language_chains(out, f"backtranslation-s{s}") for s in (1, 2, 3)))
    assert made == 8 + 2 * len(chains)
    assert lines[4].split()[:5] == ["backtranslation-s1", "8", "16", "0", "0"]
    shared = sum(int(line.split()[4]) for line in lines[4:7])
    assert shared == 3 * 16 - 2 * len(chains)

    again = invoke(*gen_args(tmp_path / "other", "-t", "paraphrase,backtranslation",
                             "--seeds", "1,2,3", *GREEDY, "--cache-dir", str(cache),
                             "--dry-run"))  # fmt: skip
    assert again.exit_code == 0, again.output
    rows = [line.split() for line in again.stdout.splitlines()[1:7]]
    assert [(r[3], r[5]) for r in rows] == [("8", "0")] * 3 + [("16", "0")] * 3
    assert again.stdout.splitlines()[7].split()[1:] == [str(3 * 8 + 3 * 16)] * 2 + ["0", "0"]
    done = invoke(*args, "--dry-run")
    assert done.stdout == f"nothing to do: every config asked for is already complete in {out}\n"


def test_dry_run_checks_its_input_and_loads_no_model(invoke, tmp_path, monkeypatch):
    from shiftbench.llm.backends import embedded, llamacpp

    def no_loading(*_):
        raise AssertionError("the dry run loaded the model")

    monkeypatch.setattr(embedded, "_load", no_loading)
    monkeypatch.setattr(llamacpp, "load", no_loading)  # the llama.cpp engine's load
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--limit", "2", "-s", "1,2", "--dry-run", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split() == ["paraphrase-s1", "4", "4", "0", "0", "4"]
    assert result.stdout.splitlines()[2].split() == ["paraphrase-s2", "4", "4", "0", "0", "4"]
    assert not out.exists()

    bad = invoke("gen", "sample", "-t", "parafrase", "--dry-run", "-o", out)
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error: unknown transform 'parafrase'")
    folder = tmp_path / "local"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "test.jsonl").write_text('{"sentence1": "a b", "sentence2": "c d", '
                                                '"score": 1.0}\n', encoding="utf-8")  # fmt: skip
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
        "    path: data/test.jsonl\n---\n",
        encoding="utf-8",
    )
    bad = invoke("gen", folder, "--task-type", "STS", "-t", "translation", "--dry-run", "-o", out)
    assert bad.exit_code == 2
    assert bad.stderr == (
        "Error: translation needs the source language of local[default]; name it with "
        "--source-language\n"
    )
    assert not out.exists()


def test_the_embedded_backends_callers_share_batches():
    """Two jobs' requests in the embedded backend's queue: the second job's requests fill
    the first's last batch, each result reaches the job that asked for it (by its own
    index), a request of other sampling never joins a batch, and abort drops the rest."""
    import threading

    from shiftbench.llm.backends import Generation, Request, Sampling
    from shiftbench.llm.backends.base import Stopped
    from shiftbench.llm.backends.embedded import _Item, _SharedBatches

    queue = _SharedBatches(batch_size=4)
    warm, cold = Sampling(temperature=0.7), Sampling(temperature=0.0)
    batches: list[list[str]] = []

    def run_batch(items):
        batches.append([i.prompt for i in items])
        if len(batches) == 1:  # the first batch runs until the second job has queued
            with queue._changed:
                assert queue._changed.wait_for(lambda: len(queue._queued) == 5, timeout=120)
        return [Generation(f"out {i.prompt}", "stop") for i in items]

    def items(job, count, sampling):
        return [_Item(k, f"{job}{k}", Request(f"{job}{k}", k), sampling) for k in range(count)]

    got: dict[str, list[tuple[int, str]]] = {"a": [], "b": []}
    first, second = (
        items("a", 6, warm),
        [*items("b", 2, warm), _Item(2, "b2", Request("b2", 2), cold)],
    )

    def job(name, own):
        queue.run(own, run_batch, lambda i, gen: got[name].append((i, gen.text)))

    a = threading.Thread(target=job, args=("a", first))
    a.start()
    with queue._changed:  # the first job's first batch is running
        assert queue._changed.wait_for(lambda: queue._running, timeout=120)
    b = threading.Thread(target=job, args=("b", second))
    b.start()
    a.join(timeout=300)
    b.join(timeout=300)
    assert batches == [["a0", "a1", "a2", "a3"], ["a4", "a5", "b0", "b1"], ["b2"]]
    assert sorted(got["a"]) == [(k, f"out a{k}") for k in range(6)]
    assert sorted(got["b"]) == [(k, f"out b{k}") for k in range(3)]

    queued = items("c", 2, warm)
    queue._queued.extend(queued)
    queue.abort()
    assert all(isinstance(i.error, Stopped) and i.done for i in queued) and not queue._queued
