"""A local stand-in for the Hugging Face Hub, for tests (no Hub is reachable here).

It speaks the parts of the Hub HTTP API that `huggingface_hub` and `datasets` use to
publish a dataset and load it back at a revision:

- `POST /api/repos/create`, `GET /api/whoami-v2`, `POST /api/validate-yaml`;
- `GET /api/datasets/{repo}[/revision/{rev}]` (repo info with siblings and the commit);
- `POST /api/datasets/{repo}/preupload/{rev}` (every file "regular", with the oid of the
  file already at that path so unchanged files are skipped);
- `POST /api/datasets/{repo}/commit/{rev}` (NDJSON: header, file, deletedFile,
  deletedFolder; `parentCommit` checked);
- `GET /api/datasets/{repo}/refs`, `POST /api/datasets/{repo}/tag/{rev}` (409 when the tag
  exists), `DELETE /api/datasets/{repo}/tag/{tag}`;
- `GET /api/datasets/{repo}/tree/{rev}[/{path}]` (`recursive`), `POST .../paths-info/{rev}`;
- `GET|HEAD /datasets/{repo}/resolve/{rev}/{path}` with `X-Repo-Commit`, `ETag` and byte
  ranges.

Revisions are branch names, tag names or 40-hex commit ids, URL-quoted as the clients send
them. Errors carry the `X-Error-Code` header the clients map to their exception types.
Writes need `Authorization: Bearer <token>` with the server's token; reads are public.

`fail(endpoint, status, times, after_apply)` injects faults: the next `times` calls of an
endpoint answer `status`, before doing anything or (with `after_apply`) after the change
is made, as when a response is lost on the way back. Status `HANG` never answers: the call
is held open until the server stops, as a Hub that accepts and stalls would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from support.http_stub import Handler, StubServer

HEX40 = re.compile(r"^[0-9a-f]{40}$")
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"


def blob_oid(data: bytes) -> str:
    """The git blob id the Hub reports for a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


HANG = 0  # a fault status: the call is never answered


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    files: dict[str, bytes]


@dataclass
class Repo:
    name: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        oid = self.branches.get(revision) or self.tags.get(revision)
        if oid is None and HEX40.match(revision):
            oid = revision
        return self.commits.get(oid) if oid else None

    def commit(self, branch: str, title: str, files: dict[str, bytes]) -> Commit:
        parent = self.branches.get(branch)
        digest = hashlib.sha1(f"{parent}\n{title}\n".encode())
        for path in sorted(files):
            digest.update(f"{path} {blob_oid(files[path])}\n".encode())
        commit = Commit(digest.hexdigest(), parent, title, dict(files))
        self.commits[commit.oid] = commit
        self.branches[branch] = commit.oid
        return commit


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.extra = status, message, code, extra


class LocalHub(StubServer):
    """The server's state, served on 127.0.0.1 in a thread (`start()`, or `with`)."""

    def __init__(self, token: str, user: str = "tester") -> None:
        self.token, self.user = token, user
        self.repos: dict[str, Repo] = {}
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, bool]] = []  # method, path, authorised
        self.faults: dict[str, list[tuple[int, bool]]] = {}
        self.stopping = threading.Event()  # lets calls held by a HANG fault go
        hub = self

        class Hub(_Handler):
            state = hub

        super().__init__(Hub)

    def stop(self) -> None:
        self.stopping.set()
        super().stop()

    def fail(self, endpoint: str, status: int = 500, times: int = 1, after_apply: bool = False):
        self.faults.setdefault(endpoint, []).extend([(status, after_apply)] * times)

    def writes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p, _ in self.requests if m in ("POST", "PUT", "DELETE")]

    # -- helpers
    def repo(self, repo_id: str) -> Repo:
        repo = self.repos.get(repo_id)
        if repo is None:
            raise HubError(404, "Repository not found", "RepoNotFound")
        return repo

    def revision(self, repo: Repo, revision: str) -> Commit:
        commit = repo.resolve(unquote(revision))
        if commit is None:
            raise HubError(404, f"Invalid rev id: {unquote(revision)}", "RevisionNotFound")
        return commit


class _Handler(Handler):
    state: LocalHub
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # -- plumbing
    def _dispatch(self, method: str) -> None:
        hub = self.state
        url = urlsplit(self.path)
        self.body = self.body_bytes()
        self.query = parse_qs(url.query)
        authorised = self.headers.get("Authorization") == f"Bearer {hub.token}"
        hub.requests.append((method, url.path, authorised))
        try:
            for pattern, verb, handler, endpoint in ROUTES:
                match = pattern.match(url.path)
                if match and verb == method.replace("HEAD", "GET"):
                    if verb != "GET" and not authorised:
                        raise HubError(401, "Invalid credentials in Authorization header")
                    fault = hub.faults.get(endpoint)
                    injected = fault.pop(0) if fault else None
                    if injected and injected[0] == HANG:
                        hub.stopping.wait(600)  # the client gives up long before
                        return
                    if injected and not injected[1]:
                        raise HubError(injected[0], "injected fault")
                    with hub.lock:
                        status, headers, body = handler(self, **match.groupdict())
                    if injected:
                        raise HubError(injected[0], "injected fault after the change")
                    break
            else:
                raise HubError(404, f"no route for {method} {url.path}")
        except HubError as exc:
            status, body = exc.status, json.dumps({"error": exc.message, **exc.extra}).encode()
            headers = {"Content-Type": "application/json", "X-Error-Message": exc.message}
            if exc.code:
                headers["X-Error-Code"] = exc.code
        kind = headers.pop("Content-Type", None)
        self.reply(status, body, kind, headers)

    def _json(self, doc: Any, status: int = 200) -> tuple[int, dict[str, str], bytes]:
        return status, {"Content-Type": "application/json"}, json.dumps(doc).encode()

    # -- account and repos
    def whoami(self) -> tuple[int, dict[str, str], bytes]:
        if self.headers.get("Authorization") != f"Bearer {self.state.token}":
            raise HubError(401, "Invalid credentials in Authorization header")
        return self._json({"type": "user", "name": self.state.user, "orgs": []})

    def create_repo(self) -> tuple[int, dict[str, str], bytes]:
        doc = json.loads(self.body)
        if doc.get("type") != "dataset":
            raise HubError(400, "this local hub only holds dataset repos")
        repo_id = f"{doc.get('organization') or self.state.user}/{doc['name']}"
        url = f"http://{self.headers['Host']}/datasets/{repo_id}"
        if repo_id in self.state.repos:
            raise HubError(409, "You already created this dataset repo", url=url)
        repo = Repo(repo_id, bool(doc.get("private")))
        repo.commit("main", "initial commit", {".gitattributes": GITATTRIBUTES})
        self.state.repos[repo_id] = repo
        return self._json({"url": url, "name": repo_id})

    def validate_yaml(self) -> tuple[int, dict[str, str], bytes]:
        import yaml

        content = json.loads(self.body)["content"]
        match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
        errors = []
        try:
            meta = yaml.safe_load(match.group(1)) if match else {}
            if not isinstance(meta, dict):
                errors.append({"message": "metadata must be a mapping"})
        except yaml.YAMLError as exc:
            errors.append({"message": f"invalid YAML: {exc}"})
        status = 400 if errors else 200
        return self._json({"errors": errors, "warnings": []}, status)

    def info(self, repo: str, rev: str = "main") -> tuple[int, dict[str, str], bytes]:
        held = self.state.repo(repo)
        commit = self.state.revision(held, rev)
        return self._json(
            {
                "_id": hashlib.sha1(repo.encode()).hexdigest()[:24],
                "id": repo,
                "author": repo.split("/")[0],
                "sha": commit.oid,
                "lastModified": "2026-01-01T00:00:00.000Z",
                "private": held.private,
                "disabled": False,
                "gated": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "siblings": [{"rfilename": p} for p in sorted(commit.files)],
            }
        )

    # -- uploads
    def preupload(self, repo: str, rev: str) -> tuple[int, dict[str, str], bytes]:
        held = self.state.repo(repo)
        commit = self.state.revision(held, rev)
        files = []
        for entry in json.loads(self.body)["files"]:
            held_file = commit.files.get(entry["path"])
            answer = {"path": entry["path"], "uploadMode": "regular", "shouldIgnore": False}
            if held_file is not None:
                answer["oid"] = blob_oid(held_file)
            files.append(answer)
        return self._json({"files": files, "commitOid": commit.oid})

    def commit(self, repo: str, rev: str) -> tuple[int, dict[str, str], bytes]:
        held = self.state.repo(repo)
        branch = unquote(rev)
        if branch not in held.branches:
            raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        files = dict(held.commits[held.branches[branch]].files)
        lines = [json.loads(line) for line in self.body.splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HubError(400, "the first line must be the header")
        header = lines[0]["value"]
        parent = header.get("parentCommit")
        if parent and parent != held.branches[branch]:
            raise HubError(412, "A commit has happened since. Please refresh and try again.")
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            if key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                if files.pop(value["path"], None) is None:
                    raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: d for p, d in files.items() if not p.startswith(prefix)}
            else:
                raise HubError(
                    400, f"unexpected commit operation {key!r} (all uploads are regular)"
                )
        commit = held.commit(branch, header["summary"], files)
        url = f"http://{self.headers['Host']}/datasets/{repo}/commit/{commit.oid}"
        return self._json({"success": True, "commitOid": commit.oid, "commitUrl": url})

    # -- refs
    def refs(self, repo: str) -> tuple[int, dict[str, str], bytes]:
        held = self.state.repo(repo)

        def ref(kind: str, name: str, oid: str) -> dict[str, str]:
            return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": oid}

        return self._json(
            {
                "branches": [ref("heads", n, o) for n, o in sorted(held.branches.items())],
                "tags": [ref("tags", n, o) for n, o in sorted(held.tags.items())],
                "converts": [],
            }
        )

    def create_tag(self, repo: str, rev: str) -> tuple[int, dict[str, str], bytes]:
        held = self.state.repo(repo)
        commit = self.state.revision(held, rev)
        tag = json.loads(self.body)["tag"]
        if tag in held.tags or tag in held.branches:
            raise HubError(409, f"Tag reference refs/tags/{tag} already exists")
        held.tags[tag] = commit.oid
        return self._json({})

    def delete_tag(self, repo: str, tag: str) -> tuple[int, dict[str, str], bytes]:
        held = self.state.repo(repo)
        if held.tags.pop(unquote(tag), None) is None:
            raise HubError(404, f"Invalid rev id: {unquote(tag)}", "RevisionNotFound")
        return self._json({})

    # -- reads
    def _entries(self, commit: Commit, base: str, recursive: bool) -> list[dict[str, Any]]:
        prefix = f"{base}/" if base else ""
        entries: dict[str, dict[str, Any]] = {}
        for path, data in sorted(commit.files.items()):
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix) :].split("/")
            for depth in range(1, len(parts)):
                folder = prefix + "/".join(parts[:depth])
                entries.setdefault(folder, _folder_entry(folder))
                if not recursive:
                    break
            if recursive or len(parts) == 1:
                entries[path] = _file_entry(path, data)
        return [entries[k] for k in sorted(entries)]

    def tree(self, repo: str, rev: str, path: str = "") -> tuple[int, dict[str, str], bytes]:
        commit = self.state.revision(self.state.repo(repo), rev)
        base = unquote(path or "").strip("/")
        if base and base in commit.files:
            raise HubError(404, f"{base} is a file, not a folder", "EntryNotFound")
        if base and not any(p.startswith(base + "/") for p in commit.files):
            raise HubError(404, f"{base} does not exist", "EntryNotFound")
        recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        return self._json(self._entries(commit, base, recursive))

    def paths_info(self, repo: str, rev: str) -> tuple[int, dict[str, str], bytes]:
        commit = self.state.revision(self.state.repo(repo), rev)
        form = parse_qs(self.body.decode())
        if not form and self.body:
            form = {"paths": json.loads(self.body).get("paths", [])}
        found = []
        for path in form.get("paths", []):
            path = path.strip("/")
            if path in commit.files:
                found.append(_file_entry(path, commit.files[path]))
            elif any(p.startswith(path + "/") for p in commit.files) or path == "":
                found.append(_folder_entry(path))
        return self._json(found)

    def resolve(self, repo: str, rev: str, path: str) -> tuple[int, dict[str, str], bytes]:
        commit = self.state.revision(self.state.repo(repo), rev)
        path = unquote(path)
        data = commit.files.get(path)
        if data is None:
            raise HubError(404, "Entry not found", "EntryNotFound")
        headers = {
            "Content-Type": "application/octet-stream",
            "X-Repo-Commit": commit.oid,
            "ETag": f'"{blob_oid(data)}"',
            "Accept-Ranges": "bytes",
        }
        status = 200
        wanted = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range") or "")
        if wanted and data:
            start = int(wanted.group(1) or 0)
            end = min(int(wanted.group(2)) if wanted.group(2) else len(data) - 1, len(data) - 1)
            if start >= len(data):
                raise HubError(416, "range not satisfiable")
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start : end + 1], 206
        return status, headers, data


def _file_entry(path: str, data: bytes) -> dict[str, Any]:
    return {"type": "file", "oid": blob_oid(data), "size": len(data), "path": path}


def _folder_entry(path: str) -> dict[str, Any]:
    return {
        "type": "directory",
        "oid": hashlib.sha1(path.encode()).hexdigest(),
        "size": 0,
        "path": path,
    }


_REPO = r"(?P<repo>[^/]+/[^/]+)"
_REV = r"(?P<rev>[^/]+)"
ROUTES = [
    (re.compile(p), verb, handler, endpoint)
    for p, verb, handler, endpoint in [
        (r"^/api/whoami-v2$", "GET", _Handler.whoami, "whoami"),
        (r"^/api/repos/create$", "POST", _Handler.create_repo, "create"),
        (r"^/api/validate-yaml$", "POST", _Handler.validate_yaml, "validate-yaml"),
        (rf"^/api/datasets/{_REPO}/preupload/{_REV}$", "POST", _Handler.preupload, "preupload"),
        (rf"^/api/datasets/{_REPO}/commit/{_REV}$", "POST", _Handler.commit, "commit"),
        (rf"^/api/datasets/{_REPO}/refs$", "GET", _Handler.refs, "refs"),
        (rf"^/api/datasets/{_REPO}/tag/{_REV}$", "POST", _Handler.create_tag, "tag"),
        (rf"^/api/datasets/{_REPO}/tag/(?P<tag>[^/]+)$", "DELETE", _Handler.delete_tag, "untag"),
        (rf"^/api/datasets/{_REPO}/tree/{_REV}(?:/(?P<path>.*))?$", "GET", _Handler.tree, "tree"),
        (rf"^/api/datasets/{_REPO}/paths-info/{_REV}$", "POST", _Handler.paths_info, "paths"),
        (rf"^/api/datasets/{_REPO}/revision/{_REV}$", "GET", _Handler.info, "info"),
        (rf"^/api/datasets/{_REPO}$", "GET", _Handler.info, "info"),
        (rf"^/datasets/{_REPO}/resolve/{_REV}/(?P<path>.+)$", "GET", _Handler.resolve, "resolve"),
    ]
]
