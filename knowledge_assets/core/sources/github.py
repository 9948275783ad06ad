"""A branch of a GitHub repository as a note source, read over REST through PyGithub.

A first sync lists the tree at the head; later ones ask the compare API what changed since the
last synced commit. A comparison gives no file's mode, so the folders holding the files it
would read are listed (one folder at a time, from the root): a symlink or a submodule is then
left out as a full sync leaves it out. Notes are read as git blobs, which unlike the contents API
serve files over 1 MB. The requests themselves (bounded retries, rate limits, a token that never
appears in a message) are :mod:`knowledge_assets.core.sources.github_api`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from knowledge_assets.core.sources.base import ChangeSet, SourceError, UnreadableFile, is_markdown
from knowledge_assets.core.sources.exclusions import Exclusions
from knowledge_assets.core.sources.github_api import GitHubAPI, HTTPError, decode

# GitHub lists at most 300 changed files in a comparison, without pagination: a comparison that
# lists that many may be truncated, so the full tree is compared instead.
COMPARE_FILE_LIMIT = 300
# "changed" is a path whose kind changed (a note made a symlink or a submodule, or back): the
# comparison does not say what it is now; its folder's listing does.
_RETYPED = "changed"
_FETCH_STATUSES = frozenset({"added", "modified", "copied", _RETYPED})
_SYMLINK_MODE = "120000"
_NONE = ("", "")  # the kind and mode of a path missing from its folder's listing
_Change = tuple[str, str, str | None, str]  # status, path, previous path, blob sha


class GitHubSource:
    """Markdown notes on one branch of a GitHub repository, optionally under a folder ``prefix``.

    Version tokens are git blob SHAs, so a note whose content did not change is never re-read.
    Stored paths are repository-relative and include the prefix.
    """

    table = "docs_github"
    place = "GitHub repository, branch or prefix"

    def __init__(
        self,
        repo: str,
        branch: str = "main",
        prefix: str = "",
        token: str | None = None,
        base_url: str = "https://api.github.com",
        max_retries: int = 5,
        max_backoff_s: float = 60.0,
        timeout_s: float = 30.0,
        *,
        sleep: Callable[[float], None] = time.sleep,
        exclude: Iterable[str] = (),
    ) -> None:
        owner, _, name = repo.partition("/")
        if not owner or not name or "/" in name:
            raise SourceError(f"GitHub repository must be given as 'owner/name', got {repo!r}")
        self.repo = repo
        self.branch = branch
        self.prefix = prefix.strip("/")
        self.key = f"github:{repo}@{branch}/{self.prefix}"
        self.location = f"{repo}@{branch}/{self.prefix}"
        self.exclusions = Exclusions(exclude)  # paths under the prefix (KA_VAULT_EXCLUDE)
        self.base_url = base_url.rstrip("/")
        self.api = GitHubAPI(
            repo, token, self.base_url, max_retries, max_backoff_s, timeout_s, sleep
        )
        self._head: str | None = None
        self._blobs: dict[str, str] = {}

    def head(self) -> str:
        """The SHA of the branch's head commit."""
        repo = self.api.repository()
        sha = self.api.found(
            f"branch {self.branch}", lambda: repo.get_branch(self.branch).commit.sha
        )
        if sha is None:
            raise SourceError(self._missing_message())
        return sha

    def changes(self, since: str | None, known: Mapping[str, str]) -> ChangeSet:
        """What changed since commit ``since``: by the compare API, else by the full tree.

        The full tree is read when ``since`` is None, unknown to GitHub, not an ancestor of the
        head (a force-push), when the comparison lists too many files to be complete, or when
        a file a previous sync could not read waits to be read again.
        """
        head = self._head = self.head()
        self._blobs = {}
        unread = self._unread(known)
        # A note excluded since it was stored leaves the store, as a full listing leaves it out:
        # a comparison lists only the files that changed.
        excluded = [path for path in known if self._excluded(path)]
        if since == head and not unread:
            return ChangeSet(head=head, base=since, deleted=excluded)
        files = self._compare(since, head) if since and not unread else None
        if files is None:
            return self._full(head, since, known)
        changes = ChangeSet(head=head, base=since, deleted=excluded)
        for status, path, previous, sha in files:
            if status == "renamed" and previous:
                self._renamed(changes, previous, path, sha, known)
            elif status == "removed" and path in known:  # excluded or not, it is gone
                if path not in changes.deleted:
                    changes.deleted.append(path)
            elif status in _FETCH_STATUSES and self._wanted(path):
                # A path whose kind changed is looked at even when its blob did not change.
                have = None if status == _RETYPED else known.get(path)
                self._changed(changes, path, sha, have)
        if not self._keep_notes(changes, head, known):
            self._blobs = {}
            return self._full(head, since, known)
        return changes

    def read(self, path: str) -> bytes:
        """The bytes of one file at the head of the last ``changes`` call (or the current head).

        A file GitHub will not serve (404, 403, an unknown encoding) is :class:`UnreadableFile`:
        only that file is rejected. Failures retrying cannot fix for the whole source (401,
        unreachable) still stop the sync before anything is written.
        """
        sha = self._blobs.get(path)
        try:
            if sha is None:
                return self._read_contents(path)
            return self.api.blob(sha, path)
        except HTTPError as exc:
            raise UnreadableFile(f"GitHub did not serve the file (HTTP {exc.status})") from exc

    def _unread(self, known: Mapping[str, str]) -> bool:
        """True when a file under the prefix has no version: a previous sync could not read it
        (GitHub did not serve it, a 403 or 404) and kept what was stored. A diff lists only what
        changed since, and such a file need not have changed, so it would never be read again
        (a new note stays missing, an edited one stale): the whole tree is compared instead."""
        return any(not version and self._wanted(path) for path, version in known.items())

    def _wanted(self, path: str) -> bool:
        rel = self._note(path)
        return rel is not None and not self.exclusions.excludes_anywhere(rel)

    def _excluded(self, path: str) -> bool:
        rel = self._note(path)
        return rel is not None and self.exclusions.excludes_anywhere(rel)

    def _note(self, path: str) -> str | None:
        """``path`` relative to the prefix when it is a note under it, else None."""
        scope = f"{self.prefix}/" if self.prefix else ""
        rel = path[len(scope) :] if path.startswith(scope) else None
        return rel if rel is not None and is_markdown(rel) else None

    def _changed(self, changes: ChangeSet, path: str, sha: str, have: str | None) -> None:
        self._blobs[path] = sha
        if have != sha:
            changes.fetch.append(path)
            changes.versions[path] = sha

    def _renamed(
        self, changes: ChangeSet, old: str, new: str, sha: str, known: Mapping[str, str]
    ) -> None:
        """A rename inside the prefix moves the note; one across its edge deletes or adds it."""
        old_in, new_in = self._wanted(old), self._wanted(new)
        if old_in and new_in:
            changes.renamed.append((old, new))
            self._changed(changes, new, sha, known.get(old))
        elif old_in:
            changes.deleted.append(old)
        elif new_in:
            self._changed(changes, new, sha, known.get(new))

    def _compare(self, since: str, head: str) -> list[_Change] | None:
        """The files changed from ``since`` to ``head``, or None when the full tree is needed."""
        repo = self.api.repository()

        def fetch() -> tuple[str, list[_Change]]:
            comparison = repo.compare(since, head)
            files: list[_Change] = [
                (f.status, f.filename, f.previous_filename, f.sha) for f in comparison.files
            ]
            return comparison.status, files

        # 404: ``since`` is unknown; 422: a diff GitHub will not compute.
        found = self.api.found(f"comparison {since[:12]}...{head[:12]}", fetch, (404, 422))
        if found is None or found[0] not in ("ahead", "identical"):
            return None  # unusable, or ``since`` is not an ancestor of the head (a force-push)
        return found[1] if len(found[1]) < COMPARE_FILE_LIMIT else None

    def _keep_notes(self, changes: ChangeSet, head: str, known: Mapping[str, str]) -> bool:
        """Leave out of ``changes`` the files to read that are no notes at the head: symlinks
        and submodules, which a comparison lists as files without their mode.

        A symlink's blob is its target's path: read as a note, its text was "a.md" until a full
        sync deleted it. What such a path held before goes, as in a full sync: a stored note
        made a symlink is deleted, a rejection forgotten. False when a folder's listing is
        truncated (the full tree is compared instead)."""
        if not changes.fetch:
            return True
        entries = self._folders(head, changes.fetch)
        if entries is None:
            return False
        for path in [p for p in changes.fetch if not self._is_note(p, *entries.get(p, _NONE))]:
            changes.fetch.remove(path)
            del changes.versions[path]
            del self._blobs[path]
            moved = [old for old, new in changes.renamed if new == path]
            for old in moved:  # renamed onto a symlink: the note at ``old`` is gone
                changes.renamed.remove((old, path))
                changes.deleted.append(old)
            if not moved and path in known:
                changes.deleted.append(path)
        return True

    def _folders(self, head: str, paths: Iterable[str]) -> dict[str, tuple[str, str]] | None:
        """The kind and mode of every entry of the folders holding ``paths`` at ``head``: each
        folder on the way to them is listed once, without recursion. None when GitHub
        truncated a listing."""
        needed = {""}
        for path in paths:
            parts = path.split("/")[:-1]
            needed.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
        entries: dict[str, tuple[str, str]] = {}
        pending = [("", head)]
        while pending:  # bounded: each folder of ``needed`` is listed at most once
            folder, sha = pending.pop()
            truncated, listing = self.api.tree(f"tree {folder or '/'}", sha, recursive=False)
            if truncated:
                return None
            for name, kind, mode, child in listing:
                path = f"{folder}/{name}" if folder else name
                entries[path] = (kind, mode)
                if kind == "tree" and path in needed:
                    pending.append((path, child))
        return entries

    def _full(self, head: str, since: str | None, known: Mapping[str, str]) -> ChangeSet:
        blobs = self._tree(head)
        self._blobs.update(blobs)
        fetch = sorted(path for path, sha in blobs.items() if known.get(path) != sha)
        return ChangeSet(
            head=head,
            fetch=fetch,
            deleted=sorted(set(known) - set(blobs)),
            versions={path: blobs[path] for path in fetch},
            present=set(blobs),
            base=since,
        )

    def _tree(self, head: str) -> dict[str, str]:
        """Every wanted note path with its blob SHA; walks folder by folder if GitHub truncates."""
        truncated, entries = self.api.tree("tree", head, recursive=True)
        if truncated:
            return self._walk(head)
        return {path: sha for path, kind, mode, sha in entries if self._is_note(path, kind, mode)}

    def _walk(self, head: str) -> dict[str, str]:
        scope = f"{self.prefix}/" if self.prefix else ""
        found: dict[str, str] = {}
        stack = [("", head)]
        while stack:  # bounded: each tree of the commit is listed at most once
            folder, sha = stack.pop()
            _, entries = self.api.tree(f"tree {folder or '/'}", sha, recursive=False)
            for name, kind, mode, child in entries:
                path = folder + name
                toward = scope.startswith(path + "/")
                inside = path.startswith(scope) and not name.startswith(".")
                if kind == "tree" and (toward or inside):
                    stack.append((path + "/", child))
                elif self._is_note(path, kind, mode):
                    found[path] = child
        return found

    def _is_note(self, path: str, kind: str, mode: str) -> bool:
        return kind == "blob" and mode != _SYMLINK_MODE and self._wanted(path)

    def _read_contents(self, path: str) -> bytes:
        """Read a file the last ``changes`` did not list; files over 1 MB go through their blob."""
        ref = self._head or self.head()
        repo = self.api.repository()
        found = self.api.found(f"file {path}", lambda: repo.get_contents(path, ref=ref))
        if found is None:
            raise SourceError(f"{path} not found in GitHub repository {self.repo} at {ref}")
        if isinstance(found, list) or found.type != "file":
            raise SourceError(f"{path} in GitHub repository {self.repo} is not a file")
        if found.encoding == "none" or (found.size and not found.content):
            return self.api.blob(found.sha, path)
        return decode(found.encoding, found.content, path)

    def _missing_message(self) -> str:
        repo = self.api.repository()
        default = self.api.found("repository", lambda: repo.default_branch)
        if default is None:
            return (
                f"GitHub repository {self.repo} not found (404): check it, and the token's access"
            )
        return (
            f"branch {self.branch!r} not found in GitHub repository {self.repo} "
            f"(its default branch is {default!r})"
        )
