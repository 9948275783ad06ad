"""A loopback GitHub REST server for tests: real HTTP in PyGithub's wire format, in-memory repo.

    with FakeGitHub(token="t0ken") as gh:           # serves on 127.0.0.1, a free port
        sha = gh.commit({"notes/a.md": b"# A"})     # None deletes; renames={old: new} moves
        gh.commit({"notes/l.md": b"a.md"}, modes={"notes/l.md": SYMLINK})  # a symlink to a.md
        GitHubSource(gh.repo, token="t0ken", base_url=gh.base_url)
        gh.fail_next(502, times=2)                  # canned answers served before normal ones
        gh.requests                                 # [(method, path?query), ...]

Blobs and trees get git's real SHAs. Comparisons behave like GitHub's: a three-dot diff from
the merge base, ``files`` only on page 1 and at most 300 of them, ``commits`` paginated with
``Link`` headers. ``tree_limit`` truncates recursive tree listings as GitHub does for huge trees.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

Answer = tuple[int, Any, dict[str, str]]
CONTENTS_MAX_BYTES = 1024 * 1024  # the contents API leaves larger files' content empty
FILE, SYMLINK, SUBMODULE = "100644", "120000", "160000"  # git tree entry modes


def git_sha(kind: str, data: bytes) -> str:
    """The SHA git gives an object: ``git_sha("blob", data)`` is ``git hash-object``."""
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


@dataclass
class FakeCommit:
    sha: str
    tree: str
    parent: str | None
    files: dict[str, str]  # path -> blob sha (a submodule's: its commit sha)
    renames: dict[str, str]  # old -> new, made by this commit
    message: str
    modes: dict[str, str]  # path -> mode, for entries other than a plain file (FILE)


class FakeGitHub:
    """One repository (``repo``), its branches and commits, behind a threaded HTTP server."""

    def __init__(
        self,
        repo: str = "owner/notes",
        *,
        token: str | None = None,
        default_branch: str = "main",
        compare_file_limit: int = 300,
        tree_limit: int | None = None,
        echo_auth: bool = False,
        renamed_from: str | None = None,
    ) -> None:
        self.repo = repo
        # The repository's name before its owner renamed it: GitHub answers requests for the old
        # name with 301 and the new location (its query kept).
        self.renamed_from = renamed_from
        # A misbehaving server: every error body quotes the Authorization header it received.
        self.echo_auth = echo_auth
        self.token = token
        self.default_branch = default_branch
        self.compare_file_limit = compare_file_limit
        self.tree_limit = tree_limit
        self.blobs: dict[str, bytes] = {}
        # Blob sizes, which tree listings give even for a blob a test withholds from ``blobs``.
        self.sizes: dict[str, int] = {}
        self.trees: dict[str, list[tuple[str, str, str, str]]] = {}  # name, mode, type, sha
        self.commits: dict[str, FakeCommit] = {}
        self.branches: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []
        self._faults: deque[Answer] = deque()
        self._lock = threading.RLock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None
        routes: list[tuple[str, Callable[..., Answer]]] = [
            ("", self._get_repo),
            ("/branches/(.+)", self._get_branch),
            ("/commits/([^/]+)", self._get_commit),
            ("/git/trees/([^/]+)", self._get_tree),
            ("/git/blobs/([0-9a-f]{40})", self._get_blob),
            ("/contents/?(.*)", self._get_contents),
            (r"/compare/(.+?)\.\.\.(.+)", self._get_compare),
        ]
        prefix = f"/repos/{re.escape(repo)}"
        self._routes = [(re.compile(prefix + pattern), handler) for pattern, handler in routes]

    @property
    def base_url(self) -> str:
        """The API root to hand to PyGithub as ``base_url``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeGitHub:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- what tests do -----------------------------------------------------------------

    def commit(
        self,
        files: dict[str, bytes | None] | None = None,
        renames: dict[str, str] | None = None,
        branch: str | None = None,
        message: str = "change",
        modes: dict[str, str] | None = None,
    ) -> str:
        """Commit on ``branch``: renames first, then writes (``None`` deletes). Returns the SHA.

        ``modes`` makes a written path a symlink (SYMLINK: its data is the link's target) or a
        submodule (SUBMODULE: its data is the submodule commit's SHA)."""
        branch = branch or self.default_branch
        renames = dict(renames or {})
        with self._lock:
            parent = self.branches.get(branch)
            state = dict(self.commits[parent].files) if parent else {}
            kinds = dict(self.commits[parent].modes) if parent else {}
            for old, new in renames.items():
                state[new] = state.pop(old)
                if old in kinds:
                    kinds[new] = kinds.pop(old)
            for path, data in (files or {}).items():
                kinds.pop(path, None)
                if data is None:
                    state.pop(path, None)
                elif (modes or {}).get(path) == SUBMODULE:
                    state[path], kinds[path] = data.decode(), SUBMODULE
                else:
                    state[path] = git_sha("blob", data)
                    self.blobs[state[path]] = data
                    self.sizes[state[path]] = len(data)
                    if (modes or {}).get(path, FILE) != FILE:
                        kinds[path] = (modes or {})[path]
            tree = self._store_tree(state, kinds)
            body = f"tree {tree}\nparent {parent}\n#{len(self.commits)}\n\n{message}\n"
            sha = git_sha("commit", body.encode())
            self.commits[sha] = FakeCommit(sha, tree, parent, state, renames, message, kinds)
            self.branches[branch] = sha
        return sha

    def reset(self, sha: str, branch: str | None = None) -> None:
        """Point ``branch`` at ``sha``, as a force-push does."""
        with self._lock:
            self.branches[branch or self.default_branch] = sha

    def fail_next(
        self, status: int, headers: dict[str, str] | None = None, body: Any = None, times: int = 1
    ) -> None:
        """Answer the next ``times`` requests with ``status`` (before any routing or auth)."""
        body = body if body is not None else {"message": HTTPStatus(status).phrase}
        with self._lock:
            self._faults.extend([(status, body, dict(headers or {}))] * times)

    def paths(self, fragment: str) -> list[str]:
        """The logged request paths containing ``fragment``."""
        return [path for _, path in self.requests if fragment in path]

    # -- serving -----------------------------------------------------------------------

    def handle(self, method: str, target: str, authorization: str | None) -> Answer:
        """The answer to one request; also logs it."""
        status, body, headers = self._answer(method, target, authorization)
        if self.echo_auth and status >= 400 and isinstance(body, dict):
            body = {
                **body,
                "message": f"{body.get('message', '')} (Authorization: {authorization})",
            }
            body["request_headers"] = {"Authorization": authorization}
        return status, body, headers

    def _answer(self, method: str, target: str, authorization: str | None) -> Answer:
        with self._lock:
            self.requests.append((method, target))
            if self._faults:
                return self._faults.popleft()
            if self.token is not None and (authorization or "").split(" ")[-1] != self.token:
                return 401, {"message": "Bad credentials"}, {}
            url = urlsplit(target)
            old = f"/repos/{self.renamed_from}"
            if self.renamed_from and (url.path == old or url.path.startswith(old + "/")):
                moved = self.base_url + f"/repos/{self.repo}" + target[len(old) :]
                return 301, {"message": "Moved Permanently", "url": moved}, {"Location": moved}
            query = {key: values[-1] for key, values in parse_qs(url.query).items()}
            for pattern, handler in self._routes:
                match = pattern.fullmatch(unquote(url.path))
                if match and method == "GET":
                    return handler(*match.groups(), query=query)
            return _not_found()

    def _api(self, path: str = "") -> str:
        return f"{self.base_url}/repos/{self.repo}{path}"

    def _resolve(self, ref: str) -> FakeCommit | None:
        return self.commits.get(ref) or self.commits.get(self.branches.get(ref, ""))

    def _store_tree(self, files: dict[str, str], modes: dict[str, str]) -> str:
        entries: dict[str, tuple[str, str, str]] = {}
        folders: dict[str, dict[str, str]] = {}
        inner_modes: dict[str, dict[str, str]] = {}
        for path, sha in files.items():
            name, _, rest = path.partition("/")
            if rest:
                folders.setdefault(name, {})[rest] = sha
                if path in modes:
                    inner_modes.setdefault(name, {})[rest] = modes[path]
            else:
                mode = modes.get(path, FILE)
                entries[name] = (mode, "commit" if mode == SUBMODULE else "blob", sha)
        for name, inner in folders.items():
            entries[name] = ("040000", "tree", self._store_tree(inner, inner_modes.get(name, {})))
        ordered = sorted(entries.items(), key=lambda e: e[0] + ("/" if e[1][1] == "tree" else ""))
        raw = b"".join(
            f"{mode.lstrip('0')} {name}\0".encode() + bytes.fromhex(sha)
            for name, (mode, _, sha) in ordered
        )
        sha = git_sha("tree", raw)
        self.trees[sha] = [(name, mode, kind, obj) for name, (mode, kind, obj) in ordered]
        return sha

    def _commit_json(self, commit: FakeCommit) -> dict[str, Any]:
        parents = [commit.parent] if commit.parent else []
        return {
            "sha": commit.sha,
            "url": self._api(f"/commits/{commit.sha}"),
            "commit": {"message": commit.message, "tree": {"sha": commit.tree}},
            "parents": [{"sha": p, "url": self._api(f"/commits/{p}")} for p in parents],
        }

    def _get_repo(self, *, query: dict[str, str]) -> Answer:
        owner, name = self.repo.split("/")
        body = {"id": 1, "name": name, "full_name": self.repo, "owner": {"login": owner}}
        return 200, {**body, "default_branch": self.default_branch, "url": self._api()}, {}

    def _get_branch(self, name: str, *, query: dict[str, str]) -> Answer:
        if name not in self.branches:
            return 404, {"message": "Branch not found"}, {}
        commit = self._commit_json(self.commits[self.branches[name]])
        links = {"self": self._api(f"/branches/{name}"), "html": ""}
        return 200, {"name": name, "commit": commit, "_links": links, "protected": False}, {}

    def _get_commit(self, ref: str, *, query: dict[str, str]) -> Answer:
        commit = self._resolve(ref)
        return (200, self._commit_json(commit), {}) if commit else _not_found()

    def _get_tree(self, ref: str, *, query: dict[str, str]) -> Answer:
        commit = self._resolve(ref)
        sha = commit.tree if commit else ref
        if sha not in self.trees:
            return _not_found()
        recursive = query.get("recursive") not in (None, "0", "false")
        entries = self._tree_entries(sha, recursive)
        truncated = recursive and self.tree_limit is not None and len(entries) > self.tree_limit
        entries = entries[: self.tree_limit] if truncated else entries
        return 200, {"sha": sha, "url": "", "tree": entries, "truncated": truncated}, {}

    def _tree_entries(self, sha: str, recursive: bool, folder: str = "") -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name, mode, kind, obj in self.trees[sha]:
            path = folder + name
            entry = {"path": path, "mode": mode, "type": kind, "sha": obj}
            out.append({**entry, "size": self.sizes[obj]} if kind == "blob" else entry)
            if recursive and kind == "tree":
                out.extend(self._tree_entries(obj, True, path + "/"))
        return out

    def _get_blob(self, sha: str, *, query: dict[str, str]) -> Answer:
        if sha not in self.blobs:
            return _not_found()
        data = self.blobs[sha]
        content = base64.encodebytes(data).decode()
        body = {"sha": sha, "size": len(data), "content": content, "encoding": "base64"}
        return 200, {**body, "url": self._api(f"/git/blobs/{sha}")}, {}

    def _get_contents(self, path: str, *, query: dict[str, str]) -> Answer:
        commit = self._resolve(query.get("ref", self.default_branch))
        if commit is None:
            return _not_found()
        path = path.strip("/")
        if path in commit.files and path in commit.modes:  # a symlink or a submodule
            return 200, self._special_json(path, commit), {}
        if path in commit.files:
            return 200, self._content_json(path, commit.files[path]), {}
        inside = f"{path}/" if path else ""
        children = {p[len(inside) :].split("/")[0] for p in commit.files if p.startswith(inside)}
        if not children:
            return _not_found()
        listing = [{"type": "dir", "name": n, "path": inside + n, "sha": ""} for n in children]
        return 200, sorted(listing, key=lambda e: e["name"]), {}

    def _special_json(self, path: str, commit: FakeCommit) -> dict[str, Any]:
        """The contents API's answer for a symlink (whose target is not resolved here) or a
        submodule: no ``content``, and a ``type`` other than ``file``."""
        sha, mode = commit.files[path], commit.modes[path]
        body = {"name": path.rsplit("/", 1)[-1], "path": path, "sha": sha, "size": 0}
        if mode == SYMLINK:
            return {**body, "type": "symlink", "target": self.blobs[sha].decode()}
        return {**body, "type": "submodule", "submodule_git_url": "https://example.invalid/m"}

    def _content_json(self, path: str, sha: str) -> dict[str, Any]:
        data = self.blobs[sha]
        large = len(data) > CONTENTS_MAX_BYTES
        return {
            "type": "file",
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": len(data),
            "encoding": "none" if large else "base64",
            "content": "" if large else base64.encodebytes(data).decode(),
            "url": self._api(f"/contents/{path}"),
        }

    def _ancestry(self, sha: str) -> list[str]:
        line: list[str] = []
        current: str | None = sha
        while current:
            line.append(current)
            current = self.commits[current].parent
        return line

    def _get_compare(self, base_ref: str, head_ref: str, *, query: dict[str, str]) -> Answer:
        base, head = self._resolve(base_ref), self._resolve(head_ref)
        if base is None or head is None:
            return _not_found()
        heads, bases = self._ancestry(head.sha), self._ancestry(base.sha)
        merge_base = next((sha for sha in heads if sha in bases), None)
        if merge_base is None:
            return 404, {"message": f"No common ancestor between {base_ref} and {head_ref}."}, {}
        ahead, behind = heads[: heads.index(merge_base)], bases[: bases.index(merge_base)]
        status = {(0, 0): "identical", (1, 0): "ahead", (0, 1): "behind"}.get(
            (min(len(ahead), 1), min(len(behind), 1)), "diverged"
        )
        commits = [self.commits[sha] for sha in reversed(ahead)]
        page, per_page = int(query.get("page", 1)), int(query.get("per_page", 250))
        body: dict[str, Any] = {
            "url": self._api(f"/compare/{base_ref}...{head_ref}"),
            "status": status,
            "ahead_by": len(ahead),
            "behind_by": len(behind),
            "total_commits": len(ahead),
            "merge_base_commit": self._commit_json(self.commits[merge_base]),
            "commits": [self._commit_json(c) for c in commits][(page - 1) * per_page :][:per_page],
        }
        if page == 1:
            body["files"] = self._diff(merge_base, commits)[: self.compare_file_limit]
        last = max(1, -(-len(commits) // per_page))
        return 200, body, self._links(body["url"], query, page, last)

    def _links(self, url: str, query: dict[str, str], page: int, last: int) -> dict[str, str]:
        if page >= last:
            return {}
        links = [
            f'<{url}?{urlencode({**query, "page": number})}>; rel="{rel}"'
            for rel, number in (("next", page + 1), ("last", last))
        ]
        return {"Link": ", ".join(links)}

    def _diff(self, base: str, commits: list[FakeCommit]) -> list[dict[str, Any]]:
        old = self.commits[base].files
        new = commits[-1].files if commits else old
        old_modes = self.commits[base].modes
        new_modes = commits[-1].modes if commits else old_modes
        origin: dict[str, str] = {}  # path at head -> path at base, following explicit renames
        for commit in commits:
            for before, after in commit.renames.items():
                origin[after] = origin.pop(before, before)
        gone = sorted(path for path in old if path not in new)
        files = []
        for path, sha in new.items():
            retyped = path in old and old_modes.get(path) != new_modes.get(path)
            if retyped:  # a file made a symlink, or back: git's type change
                files.append(_file(path, "changed", sha))
            elif old.get(path, sha) != sha:
                files.append(_file(path, "modified", sha))
        for path in sorted(set(new) - set(old)):
            source = origin.get(path)
            if source not in gone:  # git's rename detection, for identical content only
                source = next((p for p in gone if old[p] == new[path]), None)
            if source is None:
                files.append(_file(path, "added", new[path]))
            else:
                gone.remove(source)
                files.append({**_file(path, "renamed", new[path]), "previous_filename": source})
        files.extend(_file(path, "removed", old[path]) for path in gone)
        return sorted(files, key=lambda f: f["filename"])


def _file(path: str, status: str, sha: str) -> dict[str, Any]:
    return {"sha": sha, "filename": path, "status": status, "additions": 0, "deletions": 0}


# A body for ``fail_next``: the answer's connection closes after its first bytes.
DROPPED: Any = object()


def _not_found() -> Answer:
    return 404, {"message": "Not Found"}, {}


def _handler(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            status, body, headers = fake.handle(
                self.command, self.path, self.headers.get("Authorization")
            )
            if body is DROPPED:  # the connection closes in the middle of the answer
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self.wfile.write(b'{"sha": "')
                self.close_connection = True
                return
            # bytes: a page that is not the API's (a proxy's), sent as it is
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            kind = "text/html" if isinstance(body, bytes) else "application/json; charset=utf-8"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``fake.requests`` instead."""

    return Handler
