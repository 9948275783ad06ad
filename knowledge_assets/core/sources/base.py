"""The source interface shared by the local-folder and GitHub sources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

MARKDOWN_SUFFIXES = (".md", ".markdown")


class SourceError(RuntimeError):
    """The source could not be read (unreachable, unauthorised, missing). Nothing was written."""


class UnreadableFile(SourceError):
    """One file exists but cannot be read (permissions, a symlink loop, a link out of the vault).

    Only that file is rejected: the rest of the sync goes on, and a stored version is kept.
    """


class FileTooLarge(UnreadableFile):
    """A file over the size limit, found so before it is read whole: a file of gigabytes with a
    note's name (a log, a disk image) would otherwise be held in memory only to be rejected."""

    def __init__(self, size: int) -> None:
        super().__init__(f"file is {size:,} bytes")
        self.size = size


@dataclass
class ChangeSet:
    """What changed in a source relative to what the store already holds.

    ``versions`` maps every path in ``fetch`` to a cheap version token (the blob SHA for GitHub,
    ``size:mtime_ns`` for a folder), stored so that the next sync can skip unchanged files.
    ``renamed`` holds ``(old, new)`` pairs whose content may also need fetching (then ``new`` is
    in ``fetch`` too). ``complete`` is True when ``present`` lists every file of the source.
    ``unreadable`` maps folders that exist but could not be listed to the reason: the notes
    stored under them are kept, never taken for deleted.
    """

    head: str
    fetch: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    present: set[str] | None = None
    base: str | None = None
    unreadable: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.present is not None


class Source(Protocol):
    """A place notes are read from.

    ``table`` names the raw table (``docs_local`` or ``docs_github``); ``key`` identifies this
    source's sync state (``local:/abs/path`` or ``github:owner/repo@branch/prefix``).
    ``location`` is where the notes are read from as a user names it (``/abs/path``,
    ``owner/repo@branch/prefix``), and ``place`` what kind of place that is (``folder``), for
    messages such as "the folder changed from X to Y".
    """

    table: str
    key: str
    location: str
    place: str

    def head(self) -> str:
        """A cheap identifier of the source's current state: a commit SHA or a tree fingerprint."""
        ...

    def changes(self, since: str | None, known: Mapping[str, str]) -> ChangeSet:
        """Compare the source with ``known`` (path -> version token) and the last synced head.

        ``since`` is the head recorded by the previous sync, or None for a full comparison.
        """
        ...

    def read(self, path: str, limit: int | None = None) -> bytes:
        """The raw bytes of one file, as of the head returned in the last ``changes`` call.

        A file over ``limit`` bytes may be refused with :class:`FileTooLarge` unread."""
        ...


def is_markdown(path: str, suffixes: tuple[str, ...] = MARKDOWN_SUFFIXES) -> bool:
    """True for note paths (Markdown unless other ``suffixes`` are given), ignoring files in
    hidden folders (``.obsidian/``, ``.git/``)."""
    parts = path.split("/")
    if any(part.startswith(".") for part in parts):
        return False
    return path.lower().endswith(suffixes)
