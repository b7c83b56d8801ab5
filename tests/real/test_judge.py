"""LLM judges, ParaPLUIE and drift in validate; judge-calibrate; compare across generators."""

from __future__ import annotations

import math

import pytest

from shiftbench.llm.cache import GenerationCache
from shiftbench.validate.judge import Item, Judge, render


def test_judge_through_the_real_embedded_model():
    from shiftbench.llm.backends.embedded import EmbeddedBackend
    from shiftbench.validate.paraplue import Paraplue

    backend = EmbeddedBackend(engine="transformers")
    items = [
        Item("A man is playing a guitar.", "A man plays the guitar."),
        Item("A man is playing a guitar.", "The stock market fell sharply today."),
    ]
    cache = GenerationCache(None)
    ratings = Judge(backend, "similarity").rate(items, cache)
    assert all(r.reply and r.finish_reason in ("stop", "length") for r in ratings)
    para = Paraplue(backend)
    together = para.score(items, cache)
    alone = [para.score([i], GenerationCache(None))[0] for i in items]
    assert together == alone  # one forward pass per prompt: no batch effects
    assert all(v is not None and math.isfinite(v) for v, _, _ in together)
    expected = Judge(backend, "quality", scoring="expected").score(items, cache)
    assert all(v is not None and 1.0 <= v <= 5.0 for v, _, _ in expected)


def test_paraplue_is_the_papers_likelihood_ratio_from_whole_sequence_losses():
    """ParaPLUIE's paper writes the score through perplexities: with the template's T
    tokens followed by the answer, (T+1) times the loss with "no" minus the loss with "yes".
    Recomputed that way, from transformers' own mean cross-entropy over each whole sequence
    (the answer appended, so the template's part cancels), with our sum over the four
    single-token spellings of each answer in place of the paper's one token."""
    import torch

    from shiftbench.llm.backends.embedded import EmbeddedBackend, _load
    from shiftbench.validate.judge import prompt_template
    from shiftbench.validate.paraplue import Paraplue

    backend = EmbeddedBackend(engine="transformers")
    items = [
        Item("A man is playing a guitar.", "A man plays the guitar."),
        Item("A man is playing a guitar.", "The stock market fell sharply today."),
        Item("Prices rose by 3% in May.", "In May, prices went up three percent."),
    ]
    ours = [v for v, _, _ in Paraplue(backend).score(items, GenerationCache(None))]
    tokenizer, model = _load(backend.location, backend.cache_dir)
    template = prompt_template("paraplue.txt")

    def summed_nll(ids: list[int]) -> float:
        batch = torch.tensor([ids])
        with torch.inference_mode():
            mean = model(input_ids=batch, labels=batch).loss.double().item()
        return mean * (len(ids) - 1)  # the loss averages over the len - 1 predicted tokens

    def log_total(prompt_ids: list[int], words: list[str]) -> float:
        scores = []
        for word in words:
            token = tokenizer.encode(word, add_special_tokens=False)
            if len(token) == 1:
                scores.append(-summed_nll(prompt_ids + token))
        return float(torch.logsumexp(torch.tensor(scores, dtype=torch.float64), dim=0))

    for item, score in zip(items, ours, strict=True):
        text = render(template, original=item.original, output=item.output)
        chat = [{"role": "user", "content": text}]
        prompt = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
        yes = log_total(prompt_ids, ["Yes", " Yes", "yes", " yes"])
        no = log_total(prompt_ids, ["No", " No", "no", " no"])
        assert score == pytest.approx(yes - no, abs=2e-3)
