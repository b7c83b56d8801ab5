"""A model object the caller loaded and gives to Encoder in place of a name: whether it is
one of mteb's, the checks on it, and what identifies its weights (their digest and dtype).
"""

from __future__ import annotations

import hashlib
from typing import Any

from shiftbench.core.messages import option as argument
from shiftbench.errors import InputError


def is_mteb_model(model: Any) -> bool:
    """Whether `model` is an object `mteb.get_model` returns (it carries mteb's metadata)."""
    return not isinstance(model, str) and hasattr(model, "mteb_model_meta")


def weights_digest(module: Any) -> str:
    """A hash of a torch module's weights (every tensor of its state_dict, by name, dtype,
    shape and bytes): two objects share it only when they compute the same. It costs one
    pass over the weights, about what one batch of texts costs."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in module.state_dict().items():
        value = tensor.detach().cpu().contiguous()
        digest.update(f"{name}\0{value.dtype}\0{tuple(value.shape)}\0".encode())
        # bfloat16 has no numpy dtype: its bytes are read through a same-sized integer view
        digest.update(value.view(torch.uint8).numpy().tobytes() if value.numel() else b"")
    return "sha256:" + digest.hexdigest()[:16]


def checked_object(
    model: Any,
    from_mteb: bool,
    precision: str | None,
    prompts: dict[str, str] | None,
    *,
    loading: bool,
) -> tuple[Any, str | None]:
    """A model object given to Encoder, refused when it cannot encode, with options that
    load a model (`loading`: device, remote code, model kwargs), a precision it is not
    in, or prompts for an mteb model; its inner model and the dtype of its weights."""
    if not from_mteb and not callable(getattr(model, "encode", None)):
        raise InputError(
            f"a model is a name, a SentenceTransformer or an object mteb.get_model "
            f"returns, not a {type(model).__name__}"
        )
    if loading:
        raise InputError(
            f"{argument('device')}, {argument('trust_remote_code')} and "
            f"{argument('model_kwargs', '--model-kwarg')} load a model; they do not apply "
            "to a model object already loaded"
        )
    inner = getattr(model, "model", None) if from_mteb else model
    dtype = dtype_name(inner)
    if precision is not None and dtype is not None and precision != dtype:
        raise InputError(
            f"{argument('precision')} {precision}: the model object given is loaded in "
            f"{dtype}; convert it (model.to(torch.{precision})) or name no precision"
        )
    if from_mteb and prompts:
        raise InputError(
            f"an mteb model object uses the prompts of mteb's registry; "
            f"{argument('prompts', '--prompt')} does not apply"
        )
    return inner, dtype


def dtype_name(model: Any) -> str | None:
    """The dtype of a torch module's first parameter ("float32"), or None."""
    parameters = getattr(model, "parameters", None)
    first = next(iter(parameters()), None) if callable(parameters) else None
    return None if first is None else str(first.dtype).removeprefix("torch.")
