"""The Hugging Face Hub as shiftbench reads and writes it: retries, release ids, the
frozen-release manifest, and downloading a published version.

Publishing (cards) and evaluating a published release (evaluate) both use it, so it sits
in the core layer. The token is handed to huggingface_hub only; messages name the status
and path of a failed call, never its headers.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from shiftbench.core.data.jsonfiles import read_json
from shiftbench.errors import InputError, env_seconds

log = logging.getLogger(__name__)

T = TypeVar("T")
RETRY_STATUSES = (408, 429, 500, 502, 503, 504)
ATTEMPTS = 5
KEEP = ".gitattributes"  # made by the Hub with the repository; not part of a release


MANIFEST = "shiftbench-release.json"
VERSION = re.compile(r"^\d+\.\d+\.\d+$")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_version(version: str) -> str:
    """`1.0.0` (a leading v is accepted) → the tag `v1.0.0`."""
    bare = version[1:] if version.startswith("v") else version
    if not VERSION.match(bare):
        raise InputError(f"--version must look like 1.0.0 (MAJOR.MINOR.PATCH), got {version!r}")
    return f"v{bare}"


def check_repo(repo: str) -> str:
    if not REPO_ID.match(repo) or ".." in repo or repo.endswith((".git", ".")):
        raise InputError(f"--repo must be ORG/NAME (a Hub dataset repository id), got {repo!r}")
    return repo


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_files(folder: Path) -> dict[str, Path]:
    """The run folder's files by repo path, without hidden entries (staging leftovers) or
    temporary files (`*.tmp`, a write a crash or a full disk cut short). A symbolic link
    that leads out of the folder is an InputError: what it points to (a key, a password
    file) must never be uploaded as part of the folder."""
    base = folder.resolve()
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        hidden = any(part.startswith(".") for part in rel.parts)
        if hidden or path.name.endswith(".tmp"):
            continue
        if path.is_symlink():
            target = path.resolve()
            if base not in target.parents:
                raise InputError(
                    f"{path} is a symbolic link to {target}, outside {folder}; a file of a "
                    "folder must stay inside it (copy the file in, or remove the link)"
                )
        if path.is_file():
            found[rel.as_posix()] = path
    return found


def retry_wait() -> float:
    """Seconds before the first retry (doubling after); `SHIFTBENCH_HUB_RETRY_WAIT` sets it."""
    return float(os.environ.get("SHIFTBENCH_HUB_RETRY_WAIT", "2"))


def hub_timeout() -> float:
    """Seconds any one Hub request may wait to connect, or between bytes of its answer
    (`SHIFTBENCH_HUB_TIMEOUT`, default 60); a request past it is retried like an HTTP 503."""
    return env_seconds("SHIFTBENCH_HUB_TIMEOUT", 60.0)


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The transport errors (refused, reset, timed out) of the HTTP clients the Hub's
    libraries use: httpx, and huggingface_hub's own httpx2 where it has one."""
    import httpx

    found: list[type[BaseException]] = [httpx.TransportError]
    try:
        import httpx2  # huggingface_hub 2.x

        found.append(httpx2.TransportError)
    except ImportError:
        pass
    return tuple(found)


def transient(exc: BaseException) -> bool:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, HfHubHTTPError):
        response = getattr(exc, "response", None)
        return response is not None and response.status_code in RETRY_STATUSES
    return isinstance(exc, (*_transport_errors(), ConnectionError, TimeoutError))


def with_retries(what: str, call: Callable[[], T], *, quiet: bool = False) -> T:
    """Run `call`, retrying transient Hub errors with exponential backoff."""
    wait = retry_wait()
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return call()
        except Exception as exc:
            if not transient(exc) or attempt == ATTEMPTS:
                raise
            if not quiet:
                log.warning(
                    "%s: %s; retrying in %gs (%d/%d)",
                    what,
                    short_error(exc),
                    wait,
                    attempt,
                    ATTEMPTS - 1,
                )
            time.sleep(wait)
            wait *= 2
    raise AssertionError("unreachable")


def short_error(exc: BaseException) -> str:
    """The first line of a Hub error: status and URL, never headers (which hold the token)."""
    response = getattr(exc, "response", None)
    if response is not None:
        return f"HTTP {response.status_code} from {response.request.url.path}"
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def quiet_hub() -> None:
    """Silence huggingface_hub for a quiet run: no progress bars, and none of its own
    warnings (its retries of an HTTP error); errors still end the command in one line."""
    import logging

    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def hub_api() -> Any:
    """A Hub client whose every request has a deadline (hub_timeout): huggingface_hub's
    shared HTTP session waits forever by default."""
    from huggingface_hub import HfApi, get_session

    session = get_session()
    session.timeout = type(session.timeout)(hub_timeout())
    return HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)


def require_token() -> None:
    from huggingface_hub import get_token

    if not get_token():
        raise InputError("no Hugging Face token: set HF_TOKEN or log in with 'hf auth login' first")


def fetch_release(
    spec: str, scratch: Path, *, quiet: bool = False, what: str = "verify"
) -> tuple[Path, str, str, str]:
    """Download the snapshot of `ORG/NAME@vX.Y.Z` into `scratch`; returns (folder, repo,
    tag, commit)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    repo, _, version = spec.partition("@")
    if not version:
        raise InputError(f"name the version to {what}: ORG/NAME@vX.Y.Z, got {spec!r}")
    check_repo(repo)
    tag = check_version(version)
    api = hub_api()
    if quiet:
        quiet_hub()
    try:
        info = with_retries(
            "read version",
            lambda: api.dataset_info(repo, revision=tag),
            quiet=quiet,
        )
    except RepositoryNotFoundError:
        raise InputError(f"{repo} is not a dataset repository on the Hub") from None
    except RevisionNotFoundError:
        raise InputError(f"{repo} has no version {tag}") from None
    local = Path(
        with_retries(
            "download",
            lambda: snapshot_download(
                repo, repo_type="dataset", revision=info.sha,
                local_dir=scratch / "repo", endpoint=api.endpoint,
            ),
            quiet=quiet,
        )
    )  # fmt: skip
    return local, repo, tag, str(info.sha)


def check_files(local: Path, tag: str) -> list[str]:
    """Every file against the manifest: present, same size and sha256, nothing extra."""
    if not (local / MANIFEST).is_file():
        raise InputError(f"version {tag} holds no {MANIFEST}: not a shiftbench release")
    doc = read_json(local / MANIFEST)
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, list) or not all(
        isinstance(f, dict) and {"path", "size", "sha256"} <= f.keys() for f in files
    ):
        raise InputError(
            f"version {tag}: {MANIFEST} does not list the release's files (path, size, "
            "sha256 each); not a shiftbench release"
        )
    problems = []
    if doc.get("version") != tag:
        problems.append(f"the manifest names version {doc.get('version')}, not {tag}")
    listed = {f["path"]: f for f in doc.get("files", [])}
    for path, entry in sorted(listed.items()):
        file = local / path
        if not file.is_file():
            problems.append(f"{path}: listed in the manifest, missing from the release")
        elif file.stat().st_size != entry["size"] or sha256_file(file) != entry["sha256"]:
            problems.append(f"{path}: content differs from the manifest's sha256")
    present = {p for p in folder_files(local) if p not in (MANIFEST, KEEP)}
    problems += [f"{p}: in the release, not in the manifest" for p in sorted(present - set(listed))]
    return problems
