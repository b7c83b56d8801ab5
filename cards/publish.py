"""Publishing a run folder as a frozen, tagged version on the Hugging Face Hub; verifying one.

A version is one commit holding the whole release (files changed since the previous
version are uploaded, files no longer part of it are deleted) and the tag `vX.Y.Z` on that
exact commit. The tag is made last, so a failure anywhere before it leaves no tag, and
running the same command again completes the release: files already on the Hub with the
same content are not sent twice, and a commit whose answer was lost is found again.

A tag that exists is never moved: publishing it again is a no-op when the release manifest
on the Hub lists the same files with the same sha256, and is refused otherwise.

The token comes from `HF_TOKEN` or huggingface_hub's stored login and is handed to
huggingface_hub only; nothing here prints or writes it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shiftbench import __version__
from shiftbench.cards.release import Release, build, check_folder, release_inputs
from shiftbench.cards.settings import ReleaseSettings
from shiftbench.core.data.writes import scratch as scratch_folder
from shiftbench.core.hub import (
    KEEP,
    MANIFEST,
    check_files,
    fetch_release,
    hub_api,
    quiet_hub,
    require_token,
    short_error,
    transient,
    with_retries,
)
from shiftbench.core.messages import counted, report
from shiftbench.core.progress import bar
from shiftbench.core.records import RunMeta
from shiftbench.errors import InputError, RuntimeFault

log = logging.getLogger(__name__)

UPLOAD_CHUNK = 16_000_000  # bytes of files pre-uploaded in one request (see _chunks)


def publish(
    folder: Path,
    repo: str,
    tag: str,
    settings: ReleaseSettings,
    *,
    dry_run: bool = False,
    quiet: bool = False,
) -> str:
    """Publish the release; returns what happened: `published`, `unchanged` or `planned`.

    What was published and how to load it (unless `quiet`) and a dry run's plan (always)
    are reported line by line (core/messages.py); retries are logged.
    """

    def assemble(data_format: str, inputs: str | None = None) -> tuple[Release, RunMeta, str]:
        options = _options(settings, data_format)
        return build(folder, repo, tag, **options, inputs=inputs, checked=checked)

    data_format = settings.data_format or "parquet"
    # every row read and checked before the Hub is asked anything: a folder with a row
    # evaluate would refuse is named at once, whatever the Hub holds or can be reached
    checked = check_folder(folder)
    if dry_run:
        release, meta, _ = assemble(data_format)
    else:
        require_token()
    api = hub_api()
    if quiet:
        quiet_hub()

    def tell(line: str) -> None:  # the plan of a dry run shows even when quiet
        if not quiet:
            report(log, line)

    remote = _remote_state(api, repo, tag, dry_run)
    held = _published_manifest(api, repo, tag) if remote.get("tag_commit") else None
    if not dry_run:
        inputs = release_inputs(folder, repo, tag, **_options(settings, data_format))
        if held is not None and held.get("inputs") == inputs:
            # built from the same files and options: the same release, not built again
            tell(f"{repo}@{tag} is already published with this content; nothing to do.")
            return "unchanged"
        release, meta, _ = assemble(data_format, inputs)
    if remote.get("tag_commit"):
        _refuse_changed(repo, tag, held, release, assemble)
        tell(f"{repo}@{tag} is already published with this content; nothing to do.")
        return "unchanged"
    if dry_run:
        files = _files_at(api, repo, "main") if remote.get("exists") else []
        _print_plan(release, repo, tag, remote, [p for p in files if p not in release.files])
        return "planned"
    oid = _upload(api, release, repo, tag, remote, private=settings.private, quiet=quiet)
    tell(f"published {repo}@{tag} (commit {oid}): {counted(len(release.files), 'file')}")
    for line in _loading(repo, tag, meta):
        tell(line)
    return "published"


def _options(settings: ReleaseSettings, data_format: str) -> dict[str, Any]:
    """The settings as build and release_inputs take them, in `data_format`."""
    return {
        "human_dirs": settings.human_dirs, "license_id": settings.license_id,
        "data_format": data_format, "results": settings.results, "rai": settings.rai,
        "date_published": settings.date_published,
    }  # fmt: skip


def _loading(repo: str, tag: str, meta: RunMeta) -> list[str]:
    """How to load each config of the published version, after a blank line."""
    return [
        "",
        "from datasets import load_dataset",
        *(f'load_dataset("{repo}", "{name}", revision="{tag}")' for name in meta["configs"]),
    ]


def _refuse_changed(
    repo: str,
    tag: str,
    held: dict[str, Any] | None,
    release: Release,
    assemble: Callable[[str], tuple[Release, RunMeta, str]],
) -> None:
    """Refuses a tag already published (`held`: its manifest) with other content than
    `release`, or with no shiftbench release; returns when the content is the same."""
    published: list[dict[str, Any]] | None = held.get("files", []) if held else None
    if published is not None and published != release.listing() and _jsonl(published):
        # a version published as JSON Lines stays so: compare with that form of it
        release, _, _ = assemble("jsonl")
    if published == release.listing():
        return
    if published is None:
        raise InputError(
            f"{repo} already has a tag {tag} that holds no shiftbench release; "
            "published versions are frozen: choose another --version"
        )
    changed = _differences(published, release.listing())
    raise InputError(
        f"{repo}@{tag} is already published with other content ({changed}); "
        "published versions are frozen: publish a new --version"
    )


def _upload(
    api: Any,
    release: Release,
    repo: str,
    tag: str,
    remote: dict[str, Any],
    *,
    private: bool,
    quiet: bool,
) -> str:
    """Creates the repository if need be, commits the release and tags the commit, each
    step retried; returns the commit's id. A failure says at which step it happened."""
    step = "creating the repository"
    try:
        created = not remote.get("exists") and with_retries(
            "create repository", lambda: _create(api, repo, private), quiet=quiet
        )
        step = "the commit"
        # only a first try on a repository made just now may skip reading its main
        fresh = iter([created])
        oid = with_retries(
            "commit",
            lambda: _commit(api, release, repo, tag, next(fresh, False), quiet),
            quiet=quiet,
        )
        step = "tagging"
        with_retries("tag", lambda: _tag(api, repo, tag, oid), quiet=quiet)
    except (InputError, RuntimeFault):
        raise
    except Exception as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):  # running it again cannot help: the token is refused
            raise InputError(
                f"the Hub refused the token at {step} ({short_error(exc)}); nothing was "
                f"published: set HF_TOKEN (or 'hf auth login') to a token that may write "
                f"to {repo}"
            ) from None
        raise RuntimeFault(
            f"publishing {repo}@{tag} failed at {step} ({short_error(exc)}); no tag was made: "
            "run the same command again to complete the release"
        ) from None
    return oid


def _jsonl(listing: list[dict[str, Any]]) -> bool:
    """Whether a published release holds JSON Lines data (as releases did before Parquet)."""
    paths = [f["path"] for f in listing]
    return not any(p.endswith(".parquet") for p in paths) and any(
        p.endswith(".jsonl") and not p.startswith("validation/") for p in paths
    )


def _remote_state(api: Any, repo: str, tag: str, dry_run: bool) -> dict[str, Any]:
    """Whether the repo exists (None: unknown, in a dry run), and the commit of `tag`."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = with_retries(
            "read refs", lambda: api.list_repo_refs(repo, repo_type="dataset"), quiet=True
        )
    except RepositoryNotFoundError:
        return {"exists": False}
    except Exception as exc:
        if dry_run and transient(exc):
            return {"exists": None, "error": short_error(exc)}
        raise RuntimeFault(f"cannot read {repo} from the Hub: {short_error(exc)}") from None
    tags = {t.name: t.target_commit for t in refs.tags}
    return {"exists": True, "tag_commit": tags.get(tag)}


def _files_at(api: Any, repo: str, revision: str) -> list[str]:
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    """The files at `revision` that a release owns (all but the Hub's .gitattributes)."""
    try:
        files: list[str] = with_retries(
            "list files",
            lambda: api.list_repo_files(repo, repo_type="dataset", revision=revision),
            quiet=True,
        )
    except (RepositoryNotFoundError, RevisionNotFoundError):
        return []
    return [f for f in files if f != KEEP]


def _published_manifest(api: Any, repo: str, tag: str) -> dict[str, Any] | None:
    """The release manifest published at `tag`, or None when it has none."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    with scratch_folder("manifest") as scratch:
        try:
            path = with_retries(
                "read manifest",
                lambda: hf_hub_download(
                    repo, MANIFEST, repo_type="dataset", revision=tag, cache_dir=scratch,
                    endpoint=api.endpoint,
                ),
                quiet=True,
            )  # fmt: skip
        except EntryNotFoundError:
            return None
        doc: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return doc


def _differences(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> str:
    before = {f["path"]: f["sha256"] for f in old}
    after = {f["path"]: f["sha256"] for f in new}
    changed = sorted(p for p in before.keys() & after.keys() if before[p] != after[p])
    added, removed = sorted(after.keys() - before.keys()), sorted(before.keys() - after.keys())
    parts = []
    for label, paths in (("changed", changed), ("new", added), ("removed", removed)):
        if paths:
            shown = ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")
            parts.append(f"{len(paths)} {label}: {shown}")
    return "; ".join(parts)


def _create(api: Any, repo: str, private: bool) -> bool:
    """Create the dataset repository; whether this call made it (False: it was there)."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        api.create_repo(repo, repo_type="dataset", private=private)
    except HfHubHTTPError as exc:
        if exc.response is None or exc.response.status_code != 409:
            raise
        return False  # made meanwhile, or by a try whose answer was lost
    return True


def _commit(
    api: Any, release: Release, repo: str, tag: str, fresh: bool = False, quiet: bool = True
) -> str:
    """One commit that makes main hold exactly the release; its id.

    Every attempt reads main afresh (a retried commit may have landed already) and names
    that head as the parent, so a concurrent commit fails this one instead of mixing in.
    A `fresh` repository, made by this publish a moment ago, holds only the Hub's own
    `.gitattributes`: the first attempt on it reads nothing. Files the Hub stores apart
    (LFS: the data files) are uploaded before the commit, a few megabytes at a time
    (_chunks), counted on stderr unless `quiet`; the commit then carries the rest.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    head, held = None, []
    if not fresh:
        main = api.repo_info(repo, repo_type="dataset", revision="main")
        head = main.sha
        held = [s.rfilename for s in main.siblings or [] if s.rfilename != KEEP]
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=path, path_or_fileobj=item)
        for path, item in sorted(release.files.items())
    ]
    with bar(len(operations), f"publish {repo}", unit="file", quiet=quiet) as progress:
        for chunk in _chunks(operations, [release.size(op.path_in_repo) for op in operations]):
            api.preupload_lfs_files(repo, chunk, repo_type="dataset")
            progress.update(len(chunk))
    operations += [
        CommitOperationDelete(path_in_repo=path)
        for path in sorted(held)
        if path not in release.files
    ]
    info = api.create_commit(
        repo,
        operations,
        commit_message=f"shiftbench release {tag}",
        commit_description=f"Published with shiftbench {__version__}.",
        repo_type="dataset",
        parent_commit=head,
    )
    return str(info.oid)


def _chunks(items: list[Any], sizes: list[int]) -> list[list[Any]]:
    """`items` in order, cut into runs of about UPLOAD_CHUNK bytes (a larger item alone).

    Each run is one pre-upload: a request that asks the Hub how to store its files, then
    the uploads of those stored apart. Asking file by file cost a round trip per file (27
    for 25 configs), more than the uploads of a small release; one run per few megabytes
    still moves the progress count along while a large release uploads.
    """
    chunks: list[list[Any]] = []
    held = 0
    for item, size in zip(items, sizes, strict=True):
        if not chunks or held + size > UPLOAD_CHUNK:
            chunks.append([])
            held = 0
        chunks[-1].append(item)
        held += size
    return chunks


def _tag(api: Any, repo: str, tag: str, oid: str) -> None:
    from huggingface_hub.errors import HfHubHTTPError

    try:
        api.create_tag(repo, tag=tag, revision=oid, tag_message=f"shiftbench release {tag}",
                       repo_type="dataset")  # fmt: skip
    except HfHubHTTPError as exc:
        # A retried request whose first answer was lost: the tag is there, on our commit.
        if exc.response is None or exc.response.status_code != 409:
            raise
        refs = api.list_repo_refs(repo, repo_type="dataset")
        if {t.name: t.target_commit for t in refs.tags}.get(tag) != oid:
            raise RuntimeFault(f"{repo} got a tag {tag} on another commit meanwhile") from None


def _print_plan(
    release: Release, repo: str, tag: str, remote: dict[str, Any], stale: list[str]
) -> None:
    def say(line: str) -> None:
        report(log, line)

    if remote.get("exists") is None:
        state = f"unknown (the Hub did not answer: {remote.get('error')})"
    elif remote["exists"]:
        state = "exists; the release becomes a new commit on main"
    else:
        state = "does not exist yet; it would be created (dataset repository)"
    say("dry run: nothing is uploaded, created or tagged")
    say(f"repository {repo}: {state}")
    say(f"target revision: main, then tag {tag} on the new commit")
    total = 0
    rows = []
    for path in sorted(release.files):
        size = release.size(path)
        total += size
        rows.append((path, size))
    width = max(len(p) for p, _ in rows)
    for path, size in rows:
        say(f"  {path:<{width}}  {human_size(size):>9}")
    for path in stale:
        say(f"  {path:<{width}}  {'(delete)':>9}")
    say(
        f"{counted(len(rows), 'file')}, {human_size(total)}"
        + (f"; {len(stale)} deleted" if stale else "")
    )


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"


def verify(spec: str, *, load: bool = True, quiet: bool = False) -> list[str]:
    """Download `ORG/NAME@vX.Y.Z` and check it against its manifest; returns the problems
    (and reports what was checked)."""
    with scratch_folder("verify") as scratch:
        local, repo, tag, sha = fetch_release(spec, Path(scratch), quiet=quiet, what="verify")
        problems = check_files(local, tag)
        doc = json.loads((local / MANIFEST).read_text(encoding="utf-8"))
        if load and not problems:
            problems += _load_all(local, doc.get("configs", {}))
    report(
        log,
        f"{repo}@{tag} (commit {sha}): {counted(len(doc.get('files', [])), 'file')} checked "
        f"against {MANIFEST}"
        + (f", {counted(len(doc.get('configs', {})), 'config')} loaded" if load else ""),
    )
    return problems


def _load_all(local: Path, configs: dict[str, dict[str, int]]) -> list[str]:
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    problems = []
    with scratch_folder("verify-cache") as cache:
        for name, rows in configs.items():
            try:
                loaded = datasets.load_dataset(str(local), name, cache_dir=cache)
            except Exception as exc:  # any failure to load is the finding
                problems.append(f"config {name} does not load: {str(exc).splitlines()[0]}")
                continue
            counts = {split: loaded[split].num_rows for split in loaded}
            if counts != rows:
                problems.append(f"config {name} has rows {counts}, the manifest says {rows}")
    return problems
