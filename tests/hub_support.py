"""A Hub-compatible HTTP server on 127.0.0.1, serving model folders from disk to huggingface_hub.

It answers the requests ``snapshot_download`` and ``hf_hub_download`` make, as the Hub does:
model info ``GET /api/models/{repo}/revision/{rev}`` (sha, siblings), the recursive tree
``GET /api/models/{repo}/tree/{rev}``, and file resolution ``HEAD|GET /{repo}/resolve/{rev}/{file}``
with ``X-Repo-Commit``, ``ETag`` and ``Content-Length``. A private repo answers 401 (with the
Hub's ``X-Error-Code: RepoNotFound``) unless the request carries its token. Every request is logged,
so a test can assert what was downloaded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest


@dataclass
class HubRepo:
    folder: Path
    commit: str
    branches: dict[str, str] = field(default_factory=dict)
    token: str | None = None

    def files(self) -> list[str]:
        return sorted(p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*") if p.is_file())


@dataclass
class LocalHub:
    repos: dict[str, HubRepo] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    url: str = ""

    def add(self, repo: str, folder: Path, *, branch: str = "main", token: str | None = None) -> str:
        """Serve ``folder`` as ``repo`` at ``branch``; returns the commit hash the branch resolves to."""
        digest = hashlib.sha1()
        for name in HubRepo(folder, "").files():
            digest.update(name.encode() + (folder / name).read_bytes())
        commit = digest.hexdigest()
        self.repos[repo] = HubRepo(folder, commit, {branch: commit}, token)
        return commit

    def downloaded(self) -> list[str]:
        """The files fetched with GET /.../resolve/..., in order."""
        return [path.split("/resolve/", 1)[1].split("/", 1)[1] for method, path in self.requests
                if method == "GET" and "/resolve/" in path]  # fmt: skip


class HubHandler(BaseHTTPRequestHandler):
    hub: LocalHub

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: object, headers: dict[str, str] | None = None) -> None:
        self._send(200, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _repo(self, name: str) -> HubRepo | None:
        repo = self.hub.repos.get(name)
        if repo is None:
            self._send(404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"})
            return None
        if repo.token and self.headers.get("Authorization") != f"Bearer {repo.token}":
            # The Hub hides a private repo from a caller without its token: 401, RepoNotFound.
            self._send(401, b'{"error": "Invalid credentials"}', {"X-Error-Code": "RepoNotFound"})
            return None
        return repo

    def _commit(self, repo: HubRepo, revision: str) -> str | None:
        commit = repo.branches.get(revision) or (revision if revision == repo.commit else None)
        if commit is None:
            self._send(404, b'{"error": "Revision not found"}', {"X-Error-Code": "RevisionNotFound"})
        return commit

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = unquote(urlparse(self.path).path)
        self.hub.requests.append((self.command, path))
        if path.startswith("/api/models/"):
            self._api(path.removeprefix("/api/models/"))
        elif "/resolve/" in path:
            self._resolve(path.lstrip("/"))
        else:
            self._send(404)

    def _api(self, rest: str) -> None:
        for marker in ("/revision/", "/tree/"):
            if marker in rest:
                name, revision = rest.split(marker, 1)
                break
        else:
            name, revision, marker = rest, "main", "/revision/"
        repo = self._repo(name)
        commit = repo and self._commit(repo, revision)
        if repo is None or commit is None:
            return
        files = repo.files()
        if marker == "/tree/":
            self._json([{"type": "file", "path": f, "size": (repo.folder / f).stat().st_size,
                         "oid": hashlib.sha1((repo.folder / f).read_bytes()).hexdigest()} for f in files])  # fmt: skip
            return
        self._json({"id": name, "modelId": name, "sha": commit, "private": bool(repo.token),
                    "siblings": [{"rfilename": f} for f in files]})  # fmt: skip

    def _resolve(self, rest: str) -> None:
        name, tail = rest.split("/resolve/", 1)
        revision, filename = tail.split("/", 1)
        repo = self._repo(name)
        commit = repo and self._commit(repo, revision)
        if repo is None or commit is None:
            return
        target = repo.folder / filename
        if not target.is_file():
            self._send(404, b'{"error": "Entry not found"}', {"X-Error-Code": "EntryNotFound"})
            return
        body = target.read_bytes()
        etag = hashlib.sha256(body).hexdigest()
        self._send(200, body, {"X-Repo-Commit": commit, "ETag": f'"{etag}"'})


def allow_local_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let huggingface_hub make requests: the suite sets HF_HUB_OFFLINE (nothing may reach the real Hub),
    and the local Hub is on 127.0.0.1."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


@contextmanager
def local_hub() -> Iterator[LocalHub]:
    """A running local Hub; its ``url`` is what HF_ENDPOINT should be."""
    hub = LocalHub()
    handler = type("BoundHubHandler", (HubHandler,), {"hub": hub})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
