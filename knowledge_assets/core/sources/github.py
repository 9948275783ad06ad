"""A branch of a GitHub repository as a note source, read over REST through PyGithub.

A first sync lists the tree at the head; later ones ask the compare API what changed since the
last synced commit (:mod:`knowledge_assets.core.sources.github_changes`, which also looks up
the files a previous sync could not read, without listing the whole tree). Notes are read as
git blobs, which unlike the contents API serve files over 1 MB. The requests themselves (bounded
retries, rate limits, a token that never appears in a message) are
:mod:`knowledge_assets.core.sources.github_api`'s.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from knowledge_assets.core.sources.base import ChangeSet, SourceError, UnreadableFile, is_markdown
from knowledge_assets.core.sources.exclusions import Exclusions
from knowledge_assets.core.sources.github_api import GitHubAPI, HTTPError, decode
from knowledge_assets.core.sources.github_changes import Diff, is_file


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
        self.exclusions = Exclusions(exclude)  # paths under the prefix (KA_VAULT_EXCLUDE)
        # The exclusions are part of the key: a comparison lists only the files a commit
        # changed, so notes an exclusion removed since would never come back without the full
        # comparison a new key starts with.
        excluding = ", ".join(sorted({e.strip() for e in exclude if e.strip()}))
        self.key = f"github:{repo}@{branch}/{self.prefix}" + (
            f" excluding {excluding}" if excluding else ""
        )
        self.location = f"{repo}@{branch}/{self.prefix}"
        self.base_url = base_url.rstrip("/")
        self.api = GitHubAPI(
            repo, token, self.base_url, max_retries, max_backoff_s, timeout_s, sleep
        )
        self._head: str | None = None
        self._blobs: dict[str, str] = {}

    def head(self) -> str:
        """The SHA of the branch's head commit."""
        repo = self.api.repository()

        def branch() -> tuple[str, Mapping[str, Any]]:
            found = repo.get_branch(self.branch)
            return str(found.commit.sha), found.raw_data

        answer = self.api.found(f"branch {self.branch}", branch)
        if answer is None:
            raise SourceError(self._missing_message())
        sha, raw = answer
        self.api.follow(moved_to(raw))
        return sha

    def changes(self, since: str | None, known: Mapping[str, str]) -> ChangeSet:
        """What changed since commit ``since``: by the compare API, else by the full tree.

        The full tree is read when ``since`` is None, unknown to GitHub, not an ancestor of the
        head (a force-push), when the comparison lists too many files to be complete, when a
        folder listing it needs is truncated, or when the files a previous sync could not read
        sit in too many folders to look them up one folder at a time (:class:`Diff`).
        """
        head = self._head = self.head()
        self._blobs = {}
        # A note excluded since it was stored leaves the store, as a full listing leaves it out:
        # a comparison lists only the files that changed.
        excluded = [path for path in known if self._excluded(path)]
        # A file with no version waits to be read again (a previous sync could not read it).
        waiting = any(not version and self._wanted(path) for path, version in known.items())
        if since == head and not waiting:
            return ChangeSet(head=head, base=since, deleted=excluded)
        if since is not None:
            diff = Diff(self.api, self._wanted)
            changes = diff.changes(since, head, known, excluded)
            if changes is not None:
                self._blobs = diff.blobs
                return changes
        return self._full(head, since, known)

    def read(self, path: str, limit: int | None = None) -> bytes:
        """The bytes of one file at the head of the last ``changes`` call (or the current head).
        ``limit`` is left to the parser: GitHub serves a blob of at most 100 MB.

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
        return is_file(kind, mode) and self._wanted(path)

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
        if default == self.branch:  # GitHub names a default branch before its first commit
            return (
                f"GitHub repository {self.repo} has no commits yet on {self.branch!r}: push your"
                " notes to it, and the next sync reads them"
            )
        return (
            f"branch {self.branch!r} not found in GitHub repository {self.repo} "
            f"(its default branch is {default!r})"
        )


_REPO_IN_LINK = re.compile(r"/repos/([^/]+/[^/]+)/branches/")


def moved_to(branch: Mapping[str, Any]) -> str | None:
    """The repository's ``owner/name`` as GitHub answers for it now (from a branch's own link):
    a renamed or transferred repository keeps answering to its old name with redirects."""
    links = branch.get("_links")
    link = links.get("self") if isinstance(links, Mapping) else None
    found = _REPO_IN_LINK.search(link) if isinstance(link, str) else None
    return unquote(found.group(1)) if found else None
