"""gen --protocol hteb --hteb-prompts sends, request for request, what HTEB's generator
sends (issue 51, point 4).

The test writes a stand-in for HTEB's hteb/prompts.py (its shape, our own placeholder
words), runs gen against the OpenAI-compatible stub, which records every request body,
and compares the bodies with the requests HTEB v1.1's generator builds for the same
records, seed and settings, worked out here on their own from HTEB's rules
(hteb/generation.py, hteb/dataset_preparation.py, hteb/config.py, hteb/load_datasets.py
of ThisIsManuel/HTEB): a system turn holding the stage's instruction with its language
names filled in and a user turn holding the bare text; every text slot in HTEB's order,
blank ones skipped and repeated texts sent once per slot; translation's language drawn
once per dataset and seed, back-translation's and cross-translation's per text ordinal;
the JSON output constraint and HTEB's sampling; a reply that holds no usable
`transformed_text` (or is cut at the budget) asked again with seed + retry, three retries
at most, and a text that fails a stage sent to no later stage.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.files import read_rows

SEED = 1337
NAMES = {"en": "English", "eng": "English", "fra": "French", "swa": "Swahili", "de": "German",
         "es": "Spanish", "fr": "French", "tr": "Turkish", "ar": "Arabic"}  # fmt: skip
TRANSLATION_POOL = ("Spanish", "French", "German", "Turkish", "Arabic")
PIVOT_POOL = ("English", *TRANSLATION_POOL)
STAGES = {"backtranslation": ("backtranslate_forward", "backtranslate_backward"),
          "summarised_expansion": ("expansion", "summarise")}  # fmt: skip
# stand-in instructions of HTEB's shape: a dict named GENERATION_PROMPTS in prompts.py,
# one instruction per stage, the translating ones with both language placeholders
STAND_IN = {
    "paraphrasing": "Quill the passage anew.",
    "expansion": "Widen the passage.",
    "summarise": "Narrow the passage.",
    "style_change": "Turn the passage's register.",
    "translation": "Carry the passage from {source_language} into {target_language}.",
    "cross_translation": "Ferry the passage from {source_language} into {target_language}.",
    "backtranslate_forward": "Send the passage from {source_language} to {target_language}.",
    "backtranslate_backward": "Bring the passage from {source_language} to {target_language}.",
}
SCHEMA = {"type": "object", "properties": {"transformed_text": {"type": "string"}},
          "required": ["transformed_text"]}  # fmt: skip


def write_prompts(folder: Path) -> Path:
    lines = ['"""Stand-in instructions."""', "", "GENERATION_PROMPTS: dict[str, str] = {"]
    lines += [f"    {k!r}: ({v!r})," for k, v in STAND_IN.items()]
    (folder / "hteb").mkdir(parents=True)
    (folder / "hteb" / "prompts.py").write_text("\n".join([*lines, "}", ""]), encoding="utf-8")
    return folder


# (task type, gen's source arguments, shiftbench transform, HTEB transformation, HTEB's
# dataset name, each subset's language label, HTEB task type)
CASES = [
    ("STS", ["STSBenchmark", "--data-dir", "{data}/STSBenchmark"], "backtranslation",
     "backtranslation", "stsbenchmark-sts", None, "sts"),
    ("Classification",
     ["Banking77Classification", "--data-dir", "{data}/Banking77Classification"],
     "translation", "translation", "banking77", None, "classification"),
    ("Clustering",
     ["MasakhaNEWSClusteringS2S", "--data-dir", "{data}/MasakhaNEWSClusteringS2S",
      "--subset", "eng", "--subset", "fra", "--subset", "swa"],
     "cross-translation", "cross_translation", "MasakhaNEWSClusteringS2S", "subset",
     "clustering"),
    ("Retrieval",
     ["XQuADRetrieval", "--data-dir", "{data}/XQuADRetrieval", "--subset", "en",
      "--subset", "de", "--split", "test"],
     "paraphrase", "paraphrasing", "XQuADRetrieval", "subset", "retrieval"),
    ("PairClassification", ["{data}/MRPC", "--task-type", "PairClassification"],
     "summarised-expansion", "summarised_expansion", "MRPC", None, "pair_classification"),
]  # fmt: skip


def hteb_records(run: Path, subset: str, task: str) -> list[dict[str, Any]]:
    """The records HTEB would read for the rows gen read (its `original` config), in
    HTEB's order: a classification's train split before its evaluation split, a
    retrieval corpus before its queries."""
    folder = run / (f"original.{subset}" if subset != "default" else "original")
    if task == "classification":
        return [*read_rows(folder / "train.jsonl"), *read_rows(folder / "test.jsonl")]
    if task == "retrieval":
        corpus = [{**r, "_hteb_part": "corpus"} for r in read_rows(folder / "corpus.test.jsonl")]
        queries = [{**r, "_hteb_part": "queries"} for r in read_rows(folder / "test.jsonl")]
        return [*corpus, *queries]
    return read_rows(folder / "test.jsonl")


def text_slots(records: list[dict[str, Any]], task: str) -> list[tuple[str, str | None]]:
    """HTEB's text targets (transformation_text_targets): (text, language label) of each
    slot in order, pair tasks role by role."""
    if task in ("sts", "pair_classification"):
        work = [(r, f) for f in ("sentence1", "sentence2") for r in records]
    elif task == "retrieval":
        work = [
            (r, f)
            for r in records
            for f in (
                [k for k in ("title", "text") if r.get(k) is not None]
                if r["_hteb_part"] == "corpus"
                else ["text"]
            )
        ]
    else:
        field = "text" if task == "classification" else "sentences"
        work = [(r, field) for r in records]
    return [(r[f], r.get("language")) for r, f in work]


def settings_hash(value: dict[str, Any]) -> int:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16)


def languages(stage: str, label: str | None, ordinal: int, dataset: str) -> tuple[str, str]:
    """(source, target) language names of a stage's instruction (HTEB's _stage_requests)."""
    source = NAMES[label] if label else "the input language"
    own = {source}
    if stage == "translation":
        options = tuple(n for n in TRANSLATION_POOL if n not in own) or TRANSLATION_POOL
        return source, options[settings_hash({"dataset": dataset, "seed_transform": SEED})
                               % len(options)]  # fmt: skip
    if stage == "cross_translation":
        options = tuple(n for n in TRANSLATION_POOL if n not in own) or TRANSLATION_POOL
        return source, random.Random(SEED + ordinal).choice(options)
    if stage.startswith("backtranslate"):
        options = tuple(n for n in PIVOT_POOL if n not in own) or PIVOT_POOL
        pivot = random.Random(SEED + ordinal).choice(options)
        if stage == "backtranslate_forward":
            return source, pivot
        return pivot, source if label else "the original language"
    return source, source


def stub_reply(text: str, replies: dict[str, str], budget: int) -> tuple[str, bool]:
    """What the stub answers a user turn (its scripted reply, else an echo), and whether
    it was cut at the budget (more words than max_tokens)."""
    asked = text.rsplit("\n\n", 1)[-1]
    words = replies.get(asked.strip(), "ECHO " + asked).split(" ")
    return " ".join(words[:budget]), len(words) > budget


def reply_text(reply: str) -> str | None:
    """HTEB's reading of a JSON reply: the object's stripped `transformed_text`, unless
    blank, a placeholder or punctuation only (the stub's replies need no rescue)."""
    try:
        value = json.loads(reply.strip())
    except json.JSONDecodeError:
        return None if "{" not in reply else pytest.fail(f"a reply to rescue: {reply!r}")
    text = value.get("transformed_text", "").strip() if isinstance(value, dict) else ""
    if not text or text.casefold() in {"[text]", "<text>", "placeholder", "n/a", "none"}:
        return None
    return text


def expected_requests(
    slots: list[tuple[str, str | None]], transformation: str, dataset: str,
    replies: dict[str, str], start: int,
) -> tuple[list[dict[str, Any]], int]:  # fmt: skip
    """The request bodies HTEB's generator makes for the slots (numbered from `start`),
    as an OpenAI-compatible server receives them, and the next ordinal."""
    active = []
    ordinal = start
    for text, label in slots:
        if text.strip():
            active.append((ordinal, label, text))
            ordinal += 1
    bodies = []
    for stage in STAGES.get(transformation, (transformation,)):
        budget = 1024 if stage == "expansion" else 512
        pending = active
        done = []
        for retry in range(4):
            again = []
            for number, label, text in pending:
                source, target = languages(stage, label, number, dataset)
                system = STAND_IN[stage].replace("{source_language}", source)
                system = system.replace("{target_language}", target)
                bodies.append({
                    "model": "stub-model",
                    "messages": [{"role": "system", "content": system},
                                 {"role": "user", "content": text}],
                    "temperature": 1.0, "top_p": 0.95, "top_k": 64, "repetition_penalty": 1.0,
                    "response_format": {"type": "json_schema", "json_schema": {
                        "name": "transformed_text", "schema": SCHEMA}},
                    "chat_template_kwargs": {"enable_thinking": False},
                    "max_tokens": budget, "seed": SEED + retry, "stream": False,
                })  # fmt: skip
                reply, cut = stub_reply(text, replies, budget)
                output = None if cut else reply_text(reply)
                if output is None:
                    again.append((number, label, text))
                else:
                    done.append((number, label, output))
            pending = again
            if not pending:
                break
        active = sorted(done)
    return bodies, ordinal


def canonical(bodies: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(b, sort_keys=True, ensure_ascii=False) for b in bodies)


def scripted_replies(data: Path, args: list[str]) -> dict[str, str]:
    """JSON replies for every other text of the source's files (the rest are echoed, which
    HTEB's parser refuses, so they are retried to the end), and for those replies' own
    rewrites (a second stage's inputs)."""
    del args
    replies: dict[str, str] = {}
    texts = []
    for path in sorted(data.rglob("*.jsonl")):
        if path.name.startswith("qrels"):
            continue
        for row in read_rows(path):
            texts += [v for k, v in row.items() if k in ("sentence1", "sentence2", "text",
                                                       "sentences", "title") and v]  # fmt: skip
    for i, text in enumerate(dict.fromkeys(texts)):
        if i % 2 == 0:
            first = f"Plume {text.strip()}"
            replies[text.strip()] = json.dumps({"transformed_text": first})
            replies[first] = json.dumps({"transformed_text": f"Plume {first}"})
    return replies


@pytest.mark.parametrize(
    ("kind", "args", "transform", "transformation", "dataset", "label", "task"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_gen_sends_the_requests_htebs_generator_sends(
    hteb_stub, invoke, tmp_path, shared_data, kind, args, transform, transformation, dataset, label,
    task,
):  # fmt: skip
    prompts = write_prompts(tmp_path / "HTEB")
    args = [a.format(data=shared_data) for a in args]
    data = Path(args[0] if "/" in args[0] else args[2])
    hteb_stub.replies = scripted_replies(data, args)
    out = tmp_path / "run"
    result = invoke(
        "gen", *args, "--limit", "2", "--protocol", "hteb", "--hteb-prompts", prompts,
        "-t", transform, "-s", SEED, "-b", "openai", "--base-url", hteb_stub.url, "-m",
        "stub-model", "--max-failure-rate", "1", "--no-cache", "-q", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    subsets = list(dict.fromkeys(c["subset"] for c in meta["configs"].values()))
    expected: list[dict[str, Any]] = []
    start = 0
    for subset in subsets:
        records = hteb_records(out, subset, task)
        language = subset if label == "subset" else "eng"
        records = [{**r, "language": language} for r in records]
        bodies, start = expected_requests(
            text_slots(records, task), transformation, dataset, hteb_stub.replies, start
        )
        expected += bodies
    assert canonical(hteb_stub.requests) == canonical(expected)
    assert len(hteb_stub.requests) == len(expected) > 0
    seeds = Counter(body["seed"] for body in hteb_stub.requests)
    assert seeds[SEED + 3] > 0  # echoed texts were tried four times
    if kind == "Retrieval":  # documents of one article share its title: sent once per slot
        sent = [b for b in hteb_stub.requests if b["seed"] == SEED]
        titles = Counter(b["messages"][1]["content"] for b in sent)
        assert titles["Super_Bowl_50"] > 1


def _prompts_file(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "prompts.py").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("case", "extra", "message"),
    [
        ("empty", [], "--hteb-prompts {p}: holds no prompts.py (nor hteb/prompts.py); give "
         "HTEB's hteb/prompts.py or the folder holding it"),
        ("no dict", [], "{p}/prompts.py: assigns no GENERATION_PROMPTS, the dict of HTEB's "
         "instructions"),
        ("a stage missing", [], "{p}/prompts.py:1: GENERATION_PROMPTS has no instruction for "
         "summarise"),
        ("not strings", [], "{p}/prompts.py:1: GENERATION_PROMPTS is not a dict of strings"),
        ("not python", [], "{p}/prompts.py:1: not Python, as HTEB's prompts.py is"),
        ("good", ["--protocol", "shiftbench"],
         "--hteb-prompts goes with --protocol hteb, not shiftbench"),
        ("good", ["-b", "ollama"], "--hteb-prompts sends HTEB's chat turns and JSON output "
         "request, which the ollama backend does not send; use --backend openai (vLLM's "
         "server among others)"),
        ("good", ["--shard", "0/2"], "--shard would number each shard's texts apart, where "
         "HTEB numbers the dataset's for its language draws; run --hteb-prompts unsharded"),
        ("good", ["-t", "negation"], "HTEB has no transformation negation; --hteb-prompts "
         "makes HTEB's eight: paraphrase, backtranslation, style-change, expansion, "
         "summarisation, summarised-expansion, translation, cross-translation"),
    ],
)  # fmt: skip
def test_bad_hteb_prompts_are_one_line_and_exit_2(invoke, tmp_path, case, extra, message):
    stages = {k: v for k, v in STAND_IN.items() if k != "summarise"}
    texts = {
        "no dict": "PROMPTS = {}\n",
        "a stage missing": f"GENERATION_PROMPTS = {stages!r}\n",
        "not strings": "GENERATION_PROMPTS = {'paraphrasing': 1}\n",
        "not python": "GENERATION_PROMPTS = {\n",
        "good": f"GENERATION_PROMPTS = {STAND_IN!r}\n",
    }
    folder = tmp_path / "HTEB"
    if case == "empty":
        folder.mkdir()
    else:
        _prompts_file(folder, texts[case])
    out = tmp_path / "run"
    result = invoke("gen", "sample", "--protocol", "hteb", "--hteb-prompts", folder, "-b",
                    "openai", "-m", "stub-model", *extra, "-q", "-o", out)  # fmt: skip
    assert (result.exit_code, result.stderr) == (2, f"Error: {message.format(p=folder)}\n")
    assert result.stdout == ""
    assert not out.exists()
