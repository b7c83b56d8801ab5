"""The embedded backend: a causal LM run in this process (no server; CPU works).

Two engines run it: transformers (any Hub model, folder or GGUF file) and llama.cpp
(GGUF files, through llama-cpp-python: llamacpp.py). "auto", the default, takes llama.cpp
for a GGUF file when llama-cpp-python is installed (about 3x the tokens per second of
transformers on the default model), else transformers. Their outputs differ; within one
engine a seeded output is the same every time, and describe() names the engine, so the
cache and the run folder never take one engine's outputs for the other's.

In the transformers engine, sampling is seeded per request, not per batch: each prompt gets
its own torch.Generator, and a token is drawn by adding Gumbel noise from that generator to
the log-probabilities and taking the arg-max (the Gumbel-max trick draws exactly from the
softmax). So a prompt's output depends on its own seed, not on which other prompts share its
batch.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shiftbench.core.messages import option
from shiftbench.core.packaged import installed_version, package_pin
from shiftbench.core.progress import loading_line, step
from shiftbench.core.records import BackendDescription, GeneratorModel
from shiftbench.errors import InputError
from shiftbench.llm.backends import llamacpp
from shiftbench.llm.backends.base import (
    EMBEDDED_ENGINES,
    Generation,
    OnDone,
    Request,
    Sampling,
    Stopped,
    token_budget,
)
from shiftbench.llm.backends.threads import CoreShare, threads_from_env, usable_cores
from shiftbench.llm.backends.weights import (
    DEFAULT_MODEL,
    ModelLocation,
    dequantised_checkpoint,
    first_line,
    locate_model,
    models_dir,
    silence_gguf_progress,
)
from shiftbench.llm.logprobs import spellings

_LOADED: dict[ModelLocation, tuple[Any, Any]] = {}
# A fast tokenizer changes its own padding settings on calls that ask for other ones, and
# raises if another thread uses it meanwhile; generate() runs in every job's thread.
_TOKENIZING = threading.Lock()
_TORCH_THREADS: int | None = None  # torch's thread count before the first batch changed it


def _load(location: ModelLocation, cache_dir: Path | None = None) -> tuple[Any, Any]:
    """Load tokenizer and model once per process (tests and repeated seeds reuse them).

    A GGUF file is read through its dequantised copy in the models folder, made on first
    use: the same float32 weights and tokenizer, loaded in under a second.
    """
    if location in _LOADED:
        return _LOADED[location]
    imports = "transformers" not in sys.modules  # their import is part of the wait
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    silence_gguf_progress()
    try:
        path = location.path
        if location.gguf_file is not None:
            path = str(dequantised_checkpoint(location, models_dir(cache_dir)))
        step(loading_line(model_name(location), Path(path), imports))
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    except OSError as exc:
        raise InputError(
            f"cannot load model {location.spec!r}: it is not a local folder or .gguf file, and "
            f"the Hugging Face Hub did not provide it ({first_line(exc)})"
        ) from None
    model.eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    _LOADED[location] = (tokenizer, model)
    return tokenizer, model


AUTO, TRANSFORMERS, LLAMA_CPP = EMBEDDED_ENGINES


def choose_engine(engine: str, location: ModelLocation) -> str:
    """The engine that runs the model at `location`: `engine` itself, or for "auto"
    llama.cpp when the model is a GGUF file and llama-cpp-python is installed, else
    transformers. An InputError for an unknown engine, or llama.cpp where it cannot run."""
    if engine not in EMBEDDED_ENGINES:
        raise InputError(
            f"unknown embedded engine {engine!r}; available: {', '.join(EMBEDDED_ENGINES)}"
        )
    gguf = location.gguf_file is not None
    if engine == AUTO:
        return LLAMA_CPP if gguf and llamacpp.installed() else TRANSFORMERS
    if engine == LLAMA_CPP and not llamacpp.installed():
        raise InputError(
            f"the llama.cpp engine needs llama-cpp-python, which is not installed: "
            f"{llamacpp.INSTALL}; or use {option('engine')} transformers"
        )
    if engine == LLAMA_CPP and not gguf:
        raise InputError(
            f"the llama.cpp engine runs GGUF files only, and model {location.spec!r} is not "
            f"one: give a .gguf file (or a folder holding one), or use {option('engine')} "
            f"transformers"
        )
    return engine


def thread_count() -> int:
    """The threads an engine computes on at most: $OMP_NUM_THREADS when set, else the CPUs
    this process may use (llm/backends/threads.py), for both engines."""
    return threads_from_env() or usable_cores()


def model_name(location: ModelLocation) -> str:
    """The model's own name, as a person calls it: a Hub id's last part, a file's stem."""
    if location.gguf_file is not None and location.package is None:
        return Path(location.gguf_file).stem
    return Path(location.spec.rstrip("/")).name or location.spec


class EmbeddedBackend:
    """Generate with a model inside this process, on the transformers or llama.cpp engine.

    Requests from every thread that calls generate() share one queue, and batches are
    taken from it: a run's jobs (one per config) hand in their requests together (gen's
    `concurrent` schedule), so the few texts of each small config fill batches with those
    of the others instead of running as a batch of their own. A row's output does not
    depend on what shares its batch (module docstring). The llama.cpp engine runs one
    request at a time: its batches hold one request.
    """

    name = "embedded"
    chunk_size = 64
    concurrent = True

    def __init__(
        self,
        model: str | None = None,
        batch_size: int = 8,
        cache_dir: Path | None = None,
        engine: str = AUTO,
        **_: Any,
    ) -> None:
        self.location = locate_model(model or DEFAULT_MODEL)
        self.engine = choose_engine(engine, self.location)
        self.batch_size = batch_size
        self.cache_dir = cache_dir  # its models/ folder holds the dequantised GGUF copy
        self.threads = thread_count()
        self._queue = _SharedBatches(1 if self.engine == LLAMA_CPP else batch_size)
        self._described: BackendDescription | None = None
        self._share = CoreShare()  # counts from here: the first batch's choice needs no wait

    def describe(self) -> BackendDescription:
        if self._described is None:
            self._described = self._describe()
        return self._described

    def _describe(self) -> BackendDescription:
        info: GeneratorModel = {"id": self.location.spec}
        if self.location.gguf_file is not None:
            info["file"] = self.location.gguf_file
            info["digest"] = self.location.digest()
        if self.location.package is not None:
            info["package"] = package_pin(self.location.package)
        if self.location.path != self.location.spec and self.location.package is None:
            info["path"] = self.location.path
        if self.engine == LLAMA_CPP:
            version = llamacpp.version()
            # in the model's entry, which every cache key and settings hash holds, so that
            # no output of one engine is taken for the other's (the transformers engine's
            # entry has none, as before there were two)
            info["engine"] = f"llama.cpp {version}"
            # the engine's library and version, as the transformers engine's entry names
            # transformers and torch (and that entry stays as it was)
            return {"model": info, "backend": {"name": self.name, "llama_cpp": version}}
        return {
            "model": info,
            "backend": {
                "name": self.name,
                "transformers": installed_version("transformers", "transformers"),
                "torch": installed_version("torch", "torch"),
            },
        }

    def describe_unloaded(self) -> BackendDescription:
        """describe(), which needs no weights loaded (gen --dry-run)."""
        return self.describe()

    def load(self) -> None:
        if self.engine == LLAMA_CPP:
            self._llama()
        else:
            _load(self.location, self.cache_dir)

    def _llama(self) -> llamacpp.LlamaModel:
        return llamacpp.load(self.location, self.threads, model_name(self.location))

    def _set_threads(self, n: int) -> None:
        """Compute on `n` threads from the next request on (the llama.cpp engine's context,
        which every backend of this model in the process shares)."""
        if self.engine == LLAMA_CPP:
            self._llama()._set_threads(n)
        self.threads = n

    def _free_cores(self) -> None:
        """Before a batch (a request, on llama.cpp): the engine's thread count set to the
        cores other processes leave free (llm/backends/threads.py), at most what it loaded
        with; a thread count the user fixed ($OMP_NUM_THREADS) is left alone."""
        global _TORCH_THREADS
        if self._share.fixed is not None:
            return
        if self.engine == LLAMA_CPP:
            threads = min(self._share.threads(), thread_count())
            if threads != self._llama().threads:  # the context every backend shares
                self._set_threads(threads)
            return
        import torch

        if _TORCH_THREADS is None:  # torch's own choice (physical cores) is the most
            _TORCH_THREADS = torch.get_num_threads()
        threads = min(self._share.threads(), _TORCH_THREADS)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: OnDone | None = None
    ) -> list[Generation]:
        if self.engine == LLAMA_CPP:
            self._llama()
            items = [_Item(i, r.prompt, r, sampling) for i, r in enumerate(requests)]
            self._queue.run(items, self._run_llama, on_done)
            return [item.result for item in items]
        tokenizer, _ = _load(self.location, self.cache_dir)
        with _TOKENIZING:
            prompts = [self._chat(tokenizer, r.prompt) for r in requests]
            lengths = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
        # Similar lengths share a batch, so little compute goes to padding.
        order = sorted(range(len(requests)), key=lambda i: lengths[i])
        items = [_Item(i, prompts[i], requests[i], sampling) for i in order]
        self._queue.run(items, self._run_batch, on_done)
        return [item.result for item in sorted(items, key=lambda item: item.index)]

    def abort(self) -> None:
        """Drop every request not yet in a batch; their callers get a Stopped error."""
        self._queue.abort()

    def _run_llama(self, items: list[_Item]) -> list[Generation]:
        model = self._llama()
        self._free_cores()
        return [model.generate(i.request, i.sampling) for i in items]

    def _run_batch(self, items: list[_Item]) -> list[Generation]:
        return self._generate_batch(
            [i.prompt for i in items], [i.request for i in items], items[0].sampling
        )

    def answer_logprobs(
        self, prompts: list[str], answers: tuple[str, ...]
    ) -> list[dict[str, float | None]]:
        """Per prompt, the log-probability that the reply begins with each answer word
        (summed over its single-token spellings), from the model's full next-token
        distribution. One prompt per forward pass, so no padding touches the numbers."""
        if self.engine == LLAMA_CPP:
            return self._llama_answer_logprobs(prompts, answers)
        import torch

        tokenizer, model = _load(self.location, self.cache_dir)
        ids: dict[str, list[int]] = {}
        for answer in answers:
            tokens = {
                t[0]
                for v in spellings(answer)
                if len(t := tokenizer.encode(v, add_special_tokens=False)) == 1
            }
            if not tokens:
                raise InputError(f"{self.location.spec}: no spelling of {answer!r} is one token")
            ids[answer] = sorted(tokens)
        results: list[dict[str, float | None]] = []
        for prompt in prompts:
            self._free_cores()
            enc = tokenizer(self._chat(tokenizer, prompt), return_tensors="pt",
                            add_special_tokens=False)  # fmt: skip
            with torch.inference_mode():
                logits = model(**enc).logits[0, -1].float()
            logp = torch.log_softmax(logits, dim=-1)
            results.append({a: float(torch.logsumexp(logp[ids[a]], dim=0)) for a in answers})
        return results

    def _llama_answer_logprobs(
        self, prompts: list[str], answers: tuple[str, ...]
    ) -> list[dict[str, float | None]]:
        import numpy as np

        model = self._llama()
        ids: dict[str, list[int]] = {}
        for answer in answers:
            ids[answer] = model.single_tokens(spellings(answer))
            if not ids[answer]:
                raise InputError(f"{self.location.spec}: no spelling of {answer!r} is one token")
        results: list[dict[str, float | None]] = []
        for prompt in prompts:
            logp = model.next_logprobs(prompt)
            results.append({a: float(np.logaddexp.reduce(logp[ids[a]])) for a in answers})
        return results

    @staticmethod
    def _chat(tokenizer: Any, prompt: str) -> str:
        if getattr(tokenizer, "chat_template", None):
            text: str = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            return text
        return prompt

    def _generate_batch(
        self, prompts: list[str], requests: list[Request], sampling: Sampling
    ) -> list[Generation]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        tokenizer, model = _load(self.location, self.cache_dir)
        self._free_cores()
        with _TOKENIZING:
            enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        budgets = [token_budget(r, sampling) for r in requests]
        eos = model.generation_config.eos_token_id
        eos_ids = {eos} if isinstance(eos, int) else set(eos or [tokenizer.eos_token_id])
        config = GenerationConfig(
            max_new_tokens=max(budgets),
            do_sample=False,
            eos_token_id=sorted(eos_ids),
            pad_token_id=tokenizer.pad_token_id,
        )
        processors = LogitsProcessorList()
        if sampling.sampled:
            # the backend's own default, when none is given: the model's plain distribution
            temperature = 1.0 if sampling.temperature is None else sampling.temperature
            top_p = 1.0 if sampling.top_p is None else sampling.top_p
            seeds = [r.seed for r in requests]
            processors.append(_GumbelSampler(seeds, temperature, top_p, sampling.top_k))
        prompt_len = enc["input_ids"].shape[1]
        stopping = StoppingCriteriaList([_RowBudget(budgets, prompt_len)])
        with torch.inference_mode():
            out = model.generate(
                **enc,
                generation_config=config,
                logits_processor=processors,
                stopping_criteria=stopping,
            )
        results = []
        prompt_tokens = enc["attention_mask"].sum(dim=1).tolist()  # padding left out
        rows = zip(out[:, prompt_len:].tolist(), budgets, prompt_tokens, strict=True)
        for row, budget, prompt_count in rows:
            row = row[:budget]
            stop = next((k for k, tok in enumerate(row) if tok in eos_ids), None)
            tokens = row if stop is None else row[:stop]
            with _TOKENIZING:
                text = tokenizer.decode(tokens, skip_special_tokens=True).strip()
            reason = "length" if stop is None else "stop"
            results.append(Generation(text, reason, int(prompt_count), len(tokens)))
        return results


class _Item:
    """One request in the shared queue, and its outcome once its batch has run."""

    def __init__(self, index: int, prompt: str, request: Request, sampling: Sampling) -> None:
        self.index = index  # in its caller's list
        self.prompt = prompt  # the chat-formatted prompt
        self.request = request
        self.sampling = sampling
        self.result: Any = None  # a Generation once done
        self.error: BaseException | None = None
        self.done = False
        self.reported = False  # passed to its caller's on_done


class _SharedBatches:
    """Requests from any number of threads, run `batch_size` at a time, one batch at once.

    There is no thread of its own: a caller that finds no batch running takes the next one
    from the queue (the oldest request and those after it with the same sampling, up to
    `batch_size`) and runs it, whoever's requests it holds; every caller waits for its own
    results and passes each to its own on_done, in its own thread.
    """

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self._changed = threading.Condition()
        self._queued: list[_Item] = []
        self._running = False

    def run(
        self,
        items: list[_Item],
        run_batch: Callable[[list[_Item]], list[Generation]],
        on_done: OnDone | None,
    ) -> None:
        with self._changed:
            self._queued.extend(items)
            self._changed.notify_all()
        try:
            while not all(item.reported for item in items):
                batch: list[_Item] = []
                with self._changed:
                    while not batch:
                        finished = [i for i in items if i.done and not i.reported]
                        if finished:
                            break
                        if not self._running and self._queued:
                            batch = self._take()
                            self._running = True
                        else:
                            self._changed.wait()
                if batch:
                    self._run(batch, run_batch)
                    continue
                for item in finished:
                    item.reported = True
                    if item.error is not None:
                        raise item.error
                    if on_done is not None:
                        on_done(item.index, item.result)
        finally:  # on a failure, this caller's requests still queued are dropped
            mine = {id(item) for item in items}
            with self._changed:
                self._queued = [i for i in self._queued if id(i) not in mine]

    def abort(self) -> None:
        with self._changed:
            for item in self._queued:
                item.error = Stopped("stopped: the embedded backend dropped the queued requests")
                item.done = True
            self._queued = []
            self._changed.notify_all()

    def _take(self) -> list[_Item]:
        sampling = self._queued[0].sampling
        batch = [i for i in self._queued if i.sampling == sampling][: self.batch_size]
        taken = {id(item) for item in batch}
        self._queued = [i for i in self._queued if id(i) not in taken]
        return batch

    def _run(
        self, batch: list[_Item], run_batch: Callable[[list[_Item]], list[Generation]]
    ) -> None:
        try:
            outs: list[Any] = run_batch(batch)
            error: BaseException | None = None
        except BaseException as exc:  # every caller with a request in the batch hears it
            outs, error = [None] * len(batch), exc
        with self._changed:
            for item, out in zip(batch, outs, strict=True):
                item.result, item.error, item.done = out, error, True
            self._running = False
            self._changed.notify_all()


class _RowBudget:
    """Marks a row finished once it has used its own token budget."""

    def __init__(self, budgets: list[int], prompt_len: int) -> None:
        self.budgets = budgets
        self.prompt_len = prompt_len

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        made = input_ids.shape[1] - self.prompt_len
        return torch.tensor(
            [made >= b for b in self.budgets], dtype=torch.bool, device=input_ids.device
        )


class _GumbelSampler:
    """Turns greedy decoding into seeded sampling, one generator per prompt: the
    distribution at `temperature`, cut to its `top_k` likeliest tokens (when given) and
    renormalised, then to the smallest prefix holding `top_p` of the mass, as vLLM and
    llama.cpp cut it."""

    def __init__(
        self, seeds: list[int], temperature: float, top_p: float, top_k: int | None = None
    ) -> None:
        import torch

        self.generators = [torch.Generator().manual_seed(s) for s in seeds]
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        logp = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        if self.top_k is not None and self.top_k < logp.shape[-1]:
            kth = torch.topk(logp, self.top_k, dim=-1).values[..., -1:]
            logp = torch.log_softmax(logp.masked_fill(logp < kth, float("-inf")), dim=-1)
        if self.top_p < 1.0:
            sorted_logp, idx = torch.sort(logp, descending=True, dim=-1)
            cum = sorted_logp.exp().cumsum(dim=-1)
            # Keep the smallest prefix whose mass reaches top_p (always the first token).
            drop_sorted = (cum - sorted_logp.exp()) >= self.top_p
            drop = torch.zeros_like(drop_sorted).scatter(-1, idx, drop_sorted)
            logp = logp.masked_fill(drop, float("-inf"))
        uniform = torch.stack([torch.rand(logp.shape[-1], generator=g) for g in self.generators])
        exponential = (-torch.log(uniform.clamp_min(1e-20))).clamp_min(1e-20)
        gumbel = -torch.log(exponential)
        return logp + gumbel
