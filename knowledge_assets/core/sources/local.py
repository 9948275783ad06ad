"""A local vault folder: recursive ``.md`` files, hidden folders (``.obsidian/``, ``.git/``) skipped."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from knowledge_assets.core.sources.base import (
    MARKDOWN_SUFFIXES,
    ChangeSet,
    SourceError,
    is_markdown,
)


class LocalSource:
    """Notes in a folder. Version tokens are ``size:mtime_ns``, so an untouched file is never read."""

    table = "docs_local"

    def __init__(
        self,
        root: Path | str,
        *,
        suffixes: tuple[str, ...] = MARKDOWN_SUFFIXES,
        table: str = "docs_local",
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        self.suffixes = suffixes
        self.table = table
        # The default source keeps its historical key; a declared source's key names its table.
        self.key = f"local:{self.root}" if table == "docs_local" else f"{table}:{self.root}"

    def _check(self) -> None:
        if not self.root.is_dir():
            raise SourceError(f"vault folder {self.root} does not exist or is not a folder")

    def scan(self) -> dict[str, str]:
        """Every note path (relative, POSIX) with its ``size:mtime_ns`` version token."""
        self._check()
        return {rel: f"{st.st_size}:{st.st_mtime_ns}" for rel, st in self._walk()}

    def _walk(self) -> Iterator[tuple[str, os.stat_result]]:
        stack = [self.root]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue  # an unreadable sub-folder must not stop the rest of the vault
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file():
                    rel = Path(entry.path).relative_to(self.root).as_posix()
                    if is_markdown(rel, self.suffixes):
                        yield rel, entry.stat()

    def head(self) -> str:
        """The vault's git HEAD commit when it is a git work tree, else a fingerprint of the tree."""
        sha = git_head(self.root)
        return sha if sha else self.fingerprint()

    def fingerprint(self, versions: Mapping[str, str] | None = None) -> str:
        """A hash of every path, size and mtime: cheap, and changes whenever Obsidian saves."""
        digest = hashlib.sha256()
        for path, token in sorted((versions or self.scan()).items()):
            digest.update(f"{path}\0{token}\n".encode())
        return "tree:" + digest.hexdigest()

    def changes(self, since: str | None, known: Mapping[str, str]) -> ChangeSet:
        """Compare the folder with the stored version tokens; only changed files are read later."""
        versions = self.scan()
        fetch = sorted(path for path, token in versions.items() if known.get(path) != token)
        deleted = sorted(set(known) - set(versions))
        return ChangeSet(
            head=git_head(self.root) or self.fingerprint(versions),
            fetch=fetch,
            deleted=deleted,
            versions={path: versions[path] for path in fetch},
            present=set(versions),
            base=since,
        )

    def read(self, path: str) -> bytes:
        """The bytes of one note."""
        target = (self.root / path).resolve()
        if not target.is_relative_to(self.root):
            raise SourceError(f"{path} is outside the vault")
        return target.read_bytes()


def git_head(folder: Path) -> str | None:
    """The commit SHA of HEAD when ``folder`` is the top of a git work tree, read without git."""
    git_dir = folder / ".git"
    try:
        head = (git_dir / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        ref_file = git_dir / ref
        if ref_file.exists():
            return ref_file.read_text().strip()
        for line in (git_dir / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except OSError:
        return None
    return None
