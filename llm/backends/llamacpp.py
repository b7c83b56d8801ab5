"""The embedded backend's llama.cpp engine: a GGUF file run in this process through
llama-cpp-python, one request at a time.

It keeps the transformers engine's contract (embedded.py): a request's output depends only
on its own prompt, seed, sampling and budget. llama-cpp-python would reuse whatever part of
a prompt its context already holds, evaluated in whatever batches the request before it
used, and the bits of a cache entry depend on its batch; so every prompt is evaluated in
fixed chunks from its start (CHUNK tokens each), and only whole chunks it shares with the
prompt before are kept (`LlamaModel._fresh`): the same bits as an empty context gives. The
sampler chain is built per request from its own seed: temperature, then top_k, then top_p,
then a seeded draw (the transformers engine's order); greedy when not sampled.
"""

from __future__ import annotations

import atexit
import importlib.util
import math
import sys
import threading
from pathlib import Path
from typing import Any

from shiftbench.core.packaged import installed_version
from shiftbench.core.progress import loading_line, step
from shiftbench.errors import InputError
from shiftbench.llm.backends.base import Generation, Request, Sampling, token_budget
from shiftbench.llm.backends.weights import ModelLocation

INSTALL = "pip install llama-cpp-python (it builds llama.cpp from source: about 11 minutes, once)"

# Tokens per prompt batch: small enough that prompts sharing their instructions share most
# of them as whole chunks, large enough that a batch still computes efficiently.
CHUNK = 16

_LOADED: dict[ModelLocation, LlamaModel] = {}
_LOADING = threading.Lock()


def installed() -> bool:
    """Whether llama-cpp-python can be imported (looked up, not imported)."""
    if "llama_cpp" in sys.modules:  # None there: blocked, as a test or a user may block it
        return sys.modules["llama_cpp"] is not None
    return importlib.util.find_spec("llama_cpp") is not None


def version() -> str:
    return installed_version("llama_cpp_python", "llama_cpp")


def load(location: ModelLocation, threads: int, name: str) -> LlamaModel:
    """The model at `location`, loaded once per process (on `threads` threads, which
    `LlamaModel._set_threads` changes later)."""
    with _LOADING:
        if location not in _LOADED:
            _LOADED[location] = LlamaModel(location, threads, name)
        return _LOADED[location]


def _seed32(seed: int) -> int:
    """A request's seed as llama.cpp's 32-bit one (its all-ones value means "random")."""
    folded = (seed ^ (seed >> 32) ^ (seed >> 64)) & 0xFFFFFFFF
    return min(folded, 0xFFFFFFFE)


class LlamaModel:
    """One llama.cpp model and its context, which serves one request at a time (every
    backend of this model in the process shares it)."""

    def __init__(self, location: ModelLocation, threads: int, name: str) -> None:
        imports = "llama_cpp" not in sys.modules  # its import is part of the wait
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        assert location.gguf_file is not None
        path = Path(location.path) / location.gguf_file
        step(loading_line(name, path, imports))
        try:
            # n_ctx 0: the context the model was trained for, as transformers allows
            self.llm = llama_cpp.Llama(
                model_path=str(path), n_ctx=0, n_threads=threads, n_threads_batch=threads,
                n_batch=CHUNK, n_ubatch=CHUNK, verbose=False,
            )  # fmt: skip
        except (ValueError, RuntimeError) as exc:
            raise InputError(f"llama.cpp cannot load model file {path}: {exc}") from None
        # freed before the interpreter takes apart the modules its finaliser needs
        atexit.register(self.llm.close)
        self.threads = threads
        self._busy = threading.Lock()
        self._prompt: list[int] = []  # the last prompt evaluated, all of it in the cache
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        meta = self.llm.metadata
        template = meta.get("tokenizer.chat_template")

        def token_text(key: str) -> str:
            ident = int(meta.get(key, -1))
            if ident < 0:
                return ""
            return bytes(llama_cpp.llama_vocab_get_text(self.vocab, ident)).decode("utf-8")

        # The GGUF's own template, rendered as transformers renders it (llama-cpp-python's
        # own chat completion may pick a built-in format that differs from it instead).
        self.formatter = None
        if template:
            eos = token_text("tokenizer.ggml.eos_token_id")
            self.formatter = Jinja2ChatFormatter(
                template, eos, token_text("tokenizer.ggml.bos_token_id")
            )

    def _set_threads(self, n: int) -> None:
        """Run on `n` threads from the next request on (prompt and generation alike)."""
        import llama_cpp

        llama_cpp.llama_set_n_threads(self.llm.ctx, n, n)
        self.threads = n

    def chat(self, prompt: str) -> str:
        """The prompt as one user turn, formatted by the model's chat template."""
        if self.formatter is None:
            return prompt
        return str(self.formatter(messages=[{"role": "user", "content": prompt}]).prompt)

    def tokens(self, prompt: str) -> list[int]:
        """The chat-formatted prompt's token ids (the template writes its own BOS)."""
        text = self.chat(prompt).encode("utf-8")
        return list(self.llm.tokenize(text, add_bos=self.formatter is None, special=True))

    def _fresh(self, tokens: list[int], budget: int = 0) -> None:
        """Evaluate `tokens` as if in an empty context, reusing what the last prompt left.

        A prompt is always evaluated CHUNK tokens at a time from its start, so the cache's
        entries for its first k*CHUNK tokens are the same bits whichever prompt computed
        them: the whole chunks it shares with the last prompt are kept, the rest is
        evaluated, and a request's output still depends on its own prompt alone. (The
        prompts of one transform share their instructions: most of each prompt.)
        """
        if len(tokens) + budget > self.llm.n_ctx():
            raise InputError(
                f"a prompt of {len(tokens)} tokens and a budget of {budget} do not fit the "
                f"model's context of {self.llm.n_ctx()} tokens"
            )
        common = 0
        for mine, last in zip(tokens, self._prompt, strict=False):
            if mine != last:
                break
            common += 1
        keep = min(common, len(tokens) - 1) // CHUNK * CHUNK  # at least one token evaluated
        self._prompt = []  # until this evaluation is whole
        self.llm.n_tokens = keep  # eval drops every cache entry from here on
        self.llm.eval(tokens[keep:])
        self._prompt = list(tokens)

    def generate(self, request: Request, sampling: Sampling) -> Generation:
        with self._busy:
            return self._generate(request, sampling)

    def _generate(self, request: Request, sampling: Sampling) -> Generation:
        import llama_cpp

        prompt = self.tokens(request.prompt)
        budget = token_budget(request, sampling)
        self._fresh(prompt, budget)
        chain = self._sampler(request.seed, sampling)
        made: list[int] = []
        reason = "length"
        try:
            while len(made) < budget:
                token = llama_cpp.llama_sampler_sample(chain, self.llm.ctx, -1)
                if llama_cpp.llama_vocab_is_eog(self.vocab, token):
                    reason = "stop"
                    break
                made.append(token)
                if len(made) < budget:
                    self.llm.eval([token])
        finally:
            llama_cpp.llama_sampler_free(chain)
        text = self.llm.detokenize(made).decode("utf-8", errors="replace").strip()
        return Generation(text, reason, len(prompt), len(made))

    @staticmethod
    def _sampler(seed: int, sampling: Sampling) -> Any:
        import llama_cpp

        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        parts = []
        if not sampling.sampled:
            parts.append(llama_cpp.llama_sampler_init_greedy())
        else:
            # the engine's own default, when none is given: the model's plain distribution
            temperature = 1.0 if sampling.temperature is None else sampling.temperature
            parts.append(llama_cpp.llama_sampler_init_temp(temperature))
            if sampling.top_k:
                parts.append(llama_cpp.llama_sampler_init_top_k(sampling.top_k))
            if sampling.top_p is not None and sampling.top_p < 1.0:
                parts.append(llama_cpp.llama_sampler_init_top_p(sampling.top_p, 1))
            parts.append(llama_cpp.llama_sampler_init_dist(_seed32(seed)))
        for part in parts:  # the chain owns and frees them
            llama_cpp.llama_sampler_chain_add(chain, part)
        return chain

    def single_tokens(self, spellings: tuple[str, ...]) -> list[int]:
        """The ids of the spellings that are one token each."""
        ids = set()
        for text in spellings:
            made = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            if len(made) == 1:
                ids.add(made[0])
        return sorted(ids)

    def next_logprobs(self, prompt: str) -> Any:
        """The log-softmax of the next-token logits at the chat-formatted prompt's end (a
        numpy array over the vocabulary)."""
        import llama_cpp
        import numpy as np

        tokens = self.tokens(prompt)
        with self._busy:
            self._fresh(tokens)
            pointer = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
            n = self.llm.n_vocab()
            logits = np.ctypeslib.as_array(pointer, shape=(n,))
            values = logits.astype(np.float64)  # a copy: the context reuses its buffer
        top = float(values.max())
        return values - (top + math.log(float(np.exp(values - top).sum())))
