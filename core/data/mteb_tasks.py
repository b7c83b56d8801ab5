"""MTEB's side of a source: looking a task up by name, the evaluation settings it carries,
and loading it from the Hugging Face Hub (checked for reachability first, so an offline
machine gets its answer at once)."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from shiftbench.core.registry import suggest
from shiftbench.errors import InputError


def mteb_cache_ready() -> None:
    """Let mteb import where its cache folder cannot be written (a read-only HOME).

    mteb makes its results cache ($MTEB_CACHE, or ~/.cache/mteb) when it is imported, and
    fails with a raw OSError where it cannot; shiftbench never reads that cache, so it is
    pointed at a temporary folder of this process instead. Nothing to do once mteb is
    imported, or where the folder can be written.
    """
    import sys
    from pathlib import Path

    if "mteb" in sys.modules:
        return
    folder = Path(os.environ.get("MTEB_CACHE") or Path.home() / ".cache" / "mteb")
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is not None and existing.is_dir() and os.access(existing, os.W_OK):
        return
    import atexit
    import shutil
    import tempfile

    scratch = tempfile.mkdtemp(prefix="shiftbench-mteb-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    os.environ["MTEB_CACHE"] = scratch


@cache
def task_names() -> tuple[str, ...]:
    mteb_cache_ready()
    import mteb

    return tuple(t.metadata.name for t in mteb.get_tasks(exclude_superseded=False))


def get_task(name: str) -> Any:
    mteb_cache_ready()
    import mteb

    try:
        return mteb.get_task(name)
    except (KeyError, ValueError):
        raise InputError(
            f"unknown task {name!r} (neither an MTEB task nor a local folder)"
            f"{suggest(name, task_names())}"
        ) from None


def task_protocol(task: Any) -> dict[str, object]:
    """The evaluation settings an mteb task carries: Classification's rounds, sizes and
    seed; which of mteb's two clustering protocols a Clustering task uses; a ranking task
    that leaves the query's own id out of its ranking says so (`ignore_identical_ids`)."""
    if task.metadata.type == "Clustering":
        from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy

        if isinstance(task, AbsTaskClusteringLegacy):
            return {"clustering": "legacy"}
        return {
            "clustering": "bootstrap",
            "max_fraction": task.max_fraction_of_documents_to_embed,
            "max_documents": task.max_document_to_embed,
            "cluster_size": int(task.max_documents_per_cluster),
            "n_clusters": int(task.n_clusters),
            "batch_size": int(task.k_mean_batch_size),
            "max_depth": task.max_depth,
            "seed": int(task.seed),
        }
    if getattr(task, "ignore_identical_ids", False):  # ArguAna's queries are documents too
        return {"ignore_identical_ids": True}
    if task.metadata.type != "Classification":
        return {}
    return {
        "n_experiments": int(task.n_experiments),
        "samples_per_label": int(task.samples_per_label),
        "seed": int(task.seed),
    }


def load_from_hub(task: Any, where: str) -> None:
    """Let mteb load `task` from the Hub (`where` names it in the message when it cannot)."""
    unreachable = InputError(
        f"cannot load {where} from the Hugging "
        "Face Hub (offline or unreachable); pass --data-dir with a local copy in Hub layout"
    )
    if not hub_reachable():
        raise unreachable
    try:
        task.load_data()
    except Exception as exc:  # every failure here means "not reachable"
        if not _looks_offline(exc):
            raise
        raise unreachable from None


def hub_reachable(timeout: float = 3.0) -> bool:
    """False when offline mode is on or the Hub endpoint does not accept a connection.

    Checked up front so that an offline machine gets its answer at once rather than after
    the client's retries.
    """
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    switches = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
    if constants.HF_HUB_OFFLINE or any(_env_true(name) for name in switches):
        return False
    url = urlparse(constants.ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=timeout).close()
    except OSError:
        return False
    return True


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _looks_offline(exc: BaseException) -> bool:
    names = {type(e).__name__ for e in _chain(exc)}
    offline = {
        "ConnectionError",
        "OfflineModeIsEnabled",
        "LocalEntryNotFoundError",
        "ConnectError",
        "ConnectTimeout",
        "ReadTimeout",
        "Timeout",
        "DatasetNotFoundError",
        "HfHubHTTPError",
        "MaxRetryError",
        "gaierror",
    }
    return bool(names & offline) or "offline" in str(exc).lower()


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen
