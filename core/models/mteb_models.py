"""Models from mteb's registry (`--model mteb:NAME`), run as mteb runs them.

`mteb.get_model(NAME)` loads the model with the loader, revision, prompts and settings
mteb's registry gives it. `MtebModel` hands it texts the way mteb's evaluators do (a
DataLoader of {"text"}, the task's metadata, the prompt type), so the model's prompt
choice is mteb's own. shiftbench passes the task to use in place of a prompt text (see
`task_key`); a local folder, which is no registered task, is described by a registered
task of its type, renamed so that no task-specific prompt matches it.

The model comes from the Hugging Face Hub as mteb fetches it; offline, put it in the
Hugging Face cache (HF_HUB_CACHE) at the revision mteb names and set HF_HUB_OFFLINE=1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shiftbench.errors import InputError

PREFIX = "mteb:"
_KEY = "\x1fmteb-task\x1f"


def task_key(task_name: str | None, task_type: str, role: str | None) -> str:
    """What `Encoder.prompt` returns for an mteb model: the task and role, for `encode`
    to turn into mteb's task metadata and prompt type (and a distinct cache key)."""
    return _KEY + "\x1f".join((task_name or "", task_type, role or ""))


class MtebModel:
    """A model `mteb.get_model` loaded, with sentence-transformers' `encode` face."""

    def __init__(self, name: str, device: str | None = None) -> None:
        import mteb

        self.name = name
        self.prompts: dict[str, str] = {}  # mteb picks the model's prompts itself
        try:
            self.meta = mteb.get_model_meta(name)
        except (KeyError, ValueError, LookupError):
            raise InputError(f"mteb's registry has no model {name!r}") from None
        try:
            self.model: Any = mteb.get_model(name, device=device)
        except OSError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise InputError(
                f"cannot load {name!r} as mteb does (revision {self.meta.revision}): {first}; "
                "offline, put it in the Hugging Face cache and set HF_HUB_OFFLINE=1"
            ) from None
        self.similarity_fn_name = str(self.meta.similarity_fn_name or "cosine")
        self._metadata: dict[tuple[str, str], Any] = {}

    @classmethod
    def adopt(cls, model: Any, name: str) -> MtebModel:
        """One around a model `mteb.get_model` has loaded already, shown as `name`."""
        self = cls.__new__(cls)
        self.meta = model.mteb_model_meta
        self.name = name
        self.prompts = {}
        self.model = model
        self.similarity_fn_name = str(getattr(self.meta, "similarity_fn_name", None) or "cosine")
        self._metadata = {}
        return self

    def _task_metadata(self, task_name: str, task_type: str) -> Any:
        import mteb

        if (task_name, task_type) not in self._metadata:
            if task_name:
                metadata = mteb.get_task(task_name).metadata
            else:
                kinds: Any = [task_type]
                stand_in = mteb.get_tasks(task_types=kinds)[0].metadata
                metadata = stand_in.model_copy(update={"name": f"shiftbench-{task_type}"})
            self._metadata[(task_name, task_type)] = metadata
        return self._metadata[(task_name, task_type)]

    def encode(
        self,
        sentences: list[str],
        prompt: str | None = None,
        batch_size: int = 32,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
        **kwargs: Any,
    ) -> np.ndarray:
        from mteb._create_dataloaders import _create_dataloader_from_texts
        from mteb.types import PromptType

        if not prompt or not prompt.startswith(_KEY):  # no task: a symmetric text task
            prompt = task_key(None, "STS", None)
        task_name, task_type, role = prompt[len(_KEY) :].split("\x1f")
        kinds = {"query": PromptType.query, "document": PromptType.document}
        vectors = self.model.encode(
            _create_dataloader_from_texts(list(sentences), batch_size=batch_size),
            task_metadata=self._task_metadata(task_name, task_type),
            hf_split="test",
            hf_subset="default",
            prompt_type=kinds.get(role),
            batch_size=batch_size,
            show_progress_bar=show_progress_bar,
            **kwargs,
        )
        if hasattr(vectors, "detach"):
            vectors = vectors.detach().cpu().float().numpy()
        return np.asarray(vectors, dtype=np.float32)

    def similarity(self, a: Any, b: Any) -> Any:
        return self.model.similarity(a, b)

    def similarity_pairwise(self, a: Any, b: Any) -> Any:
        return self.model.similarity_pairwise(a, b)
