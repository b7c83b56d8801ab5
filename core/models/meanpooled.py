"""Mean-pooled sentence encoders run with transformers alone.

A sentence-transformers folder of the plainest kind (a transformers encoder, mean pooling
over the attention mask with any prompt's tokens included, L2 normalisation, no prompts of
its own, the cosine) needs nothing of
sentence-transformers to be run, and importing it costs seconds (it pulls in scikit-learn,
SciPy, datasets and pandas) in a process that only encodes. `plain_recipe` reads a folder
and says whether it is of that kind; `MeanPooledModel` runs it step for step as
sentence-transformers' `encode` does (the texts ordered by length, longest first, in
batches padded to their longest text, pooled and normalised in float32), so the vectors are
equal bit for bit (tests/real/test_meanpooled.py checks them against sentence-transformers
on the real datasets). Any folder this module does not recognise entirely is loaded with
sentence-transformers, as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# the module types of such a folder's modules.json, in order, as sentence-transformers
# releases have written them
TRANSFORMER = ("sentence_transformers.models.Transformer",)
POOLING = ("sentence_transformers.models.Pooling",)
NORMALIZE = ("sentence_transformers.models.Normalize",)
# transformers architectures whose encoders were checked equal to sentence-transformers'
MODEL_TYPES = frozenset({"bert"})
POOLING_KEYS = frozenset(
    {
        "word_embedding_dimension",
        "pooling_mode_cls_token",
        "pooling_mode_mean_tokens",
        "pooling_mode_max_tokens",
        "pooling_mode_mean_sqrt_len_tokens",
        "pooling_mode_weightedmean_tokens",
        "pooling_mode_lasttoken",
        "include_prompt",
    }
)


@dataclass(frozen=True)
class Recipe:
    """What `plain_recipe` read from a folder: its maximum sequence length in tokens."""

    max_seq_length: int


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def plain_recipe(folder: Path) -> Recipe | None:
    """The recipe of a mean-pooled, normalised, prompt-free sentence-transformers folder
    whose architecture was checked, or None for any other folder (then
    sentence-transformers loads it)."""
    modules = _json(folder / "modules.json")
    if not isinstance(modules, list) or len(modules) != 3:
        return None
    kinds = (TRANSFORMER, POOLING, NORMALIZE)
    for entry, kind in zip(modules, kinds, strict=True):
        if not isinstance(entry, dict) or entry.get("type") not in kind:
            return None
    if modules[0].get("path") != "" or entry_kwargs(modules):
        return None
    pooling = _json(folder / str(modules[1].get("path", "")) / "config.json")
    if not isinstance(pooling, dict) or not set(pooling) <= POOLING_KEYS:
        return None
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is not False}
    if modes != {"pooling_mode_mean_tokens"} or pooling["pooling_mode_mean_tokens"] is not True:
        return None
    if pooling.get("include_prompt", True) is not True:
        return None  # a prompt's tokens left out of the mean
    settings = _json(folder / "sentence_bert_config.json")
    if not isinstance(settings, dict) or not set(settings) <= {"max_seq_length", "do_lower_case"}:
        return None
    if settings.get("do_lower_case", False) is not False:
        return None
    length = settings.get("max_seq_length")
    if not isinstance(length, int) or isinstance(length, bool) or length <= 0:
        return None
    own = _json(folder / "config_sentence_transformers.json")
    if own is not None and not _plain_settings(own):
        return None
    config = _json(folder / "config.json")
    if not isinstance(config, dict) or config.get("model_type") not in MODEL_TYPES:
        return None
    if config.get("torch_dtype", config.get("dtype", "float32")) not in ("float32", None):
        return None
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        return None
    return Recipe(max_seq_length=length)


def entry_kwargs(modules: list[Any]) -> bool:
    """Whether any module entry carries settings of its own (kwargs, a custom loader)."""
    return any(set(entry) - {"idx", "name", "path", "type"} for entry in modules)


def _plain_settings(own: Any) -> bool:
    """config_sentence_transformers.json that names no prompt, no other similarity than
    the cosine and no other model class."""
    if not isinstance(own, dict):
        return False
    if own.get("prompts") or own.get("default_prompt_name") is not None:
        return False
    if own.get("similarity_fn_name") not in (None, "cosine"):
        return False
    if own.get("model_type", "SentenceTransformer") != "SentenceTransformer":
        return False
    return not own.get("truncate_dim")


class MeanPooledModel:
    """A folder `plain_recipe` accepted, on the CPU in float32, looking to the evaluators
    like a sentence-transformers model: `encode` (a float32 array, one row per text),
    `similarity` and `similarity_pairwise` (the cosine), `prompts` (none)."""

    similarity_fn_name = "cosine"

    def __init__(self, folder: Path, recipe: Recipe) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.folder = folder
        self.prompts: dict[str, str] = {}
        self.model = AutoModel.from_pretrained(str(folder)).eval()
        limit = recipe.max_seq_length
        positions = getattr(self.model.config, "max_position_embeddings", None)
        if isinstance(positions, int):
            limit = min(limit, positions)
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), model_max_length=limit)
        self.max_seq_length = limit
        self._torch = torch

    def encode(
        self,
        sentences: list[str],
        prompt: str | None = None,
        batch_size: int = 32,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
    ) -> np.ndarray:
        """The unit vectors of `sentences`, in order; a `prompt` goes before each text and
        is pooled with it (the pooling's include_prompt, the only kind accepted here)."""
        torch = self._torch
        texts = list(sentences)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # longest first (before any prompt), ties as numpy's default sort leaves them: the
        # batches sentence-transformers makes, so that each text meets the same padding
        order = np.argsort([-len(t) for t in texts])
        if prompt:
            texts = [prompt + t for t in texts]
        vectors: list[Any] = [None] * len(texts)
        starts = range(0, len(texts), batch_size)
        if show_progress_bar:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc="Batches")
        with torch.inference_mode():
            for start in starts:
                chosen = order[start : start + batch_size]
                features = self.tokenizer(
                    [texts[i] for i in chosen],
                    padding=True,
                    truncation="longest_first",
                    return_tensors="pt",
                )
                tokens = self.model(**features, return_dict=True).last_hidden_state
                mask = features["attention_mask"].unsqueeze(-1).expand(tokens.size())
                mask = mask.to(tokens.dtype)
                summed = (tokens * mask).sum(dim=1, dtype=tokens.dtype)
                counts = torch.clamp(mask.sum(dim=1, dtype=tokens.dtype), min=1e-9)
                pooled = torch.nn.functional.normalize(summed / counts, p=2, dim=-1)
                for row, index in zip(pooled, chosen, strict=True):
                    vectors[index] = row
        return torch.stack(vectors).numpy()

    @property
    def dimension(self) -> int:
        return int(self.model.config.hidden_size)

    def similarity(self, a: Any, b: Any) -> Any:
        """The cosine of every row of `a` with every row of `b` (a vector counts as one row)."""
        a, b = self._rows(a), self._rows(b)
        unit = self._torch.nn.functional.normalize
        return self._torch.mm(unit(a, p=2, dim=-1), unit(b, p=2, dim=-1).transpose(0, 1))

    def similarity_pairwise(self, a: Any, b: Any) -> Any:
        """The cosine of each row of `a` with the same row of `b`."""
        unit = self._torch.nn.functional.normalize
        a, b = self._tensor(a), self._tensor(b)
        return (unit(a, p=2, dim=-1) * unit(b, p=2, dim=-1)).sum(dim=-1)

    def _tensor(self, values: Any) -> Any:
        torch = self._torch
        if isinstance(values, list) and values and isinstance(values[0], torch.Tensor):
            values = torch.stack(values)
        if not isinstance(values, torch.Tensor):
            values = torch.as_tensor(np.asarray(values))
        return values.float() if values.dtype in (torch.float16, torch.bfloat16) else values

    def _rows(self, values: Any) -> Any:
        values = self._tensor(values)
        return values.unsqueeze(0) if values.dim() == 1 else values
