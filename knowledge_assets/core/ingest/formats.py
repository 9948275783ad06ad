"""Which parser reads a file: bookmark JSON (``.json``) or Markdown (everything else)."""

from __future__ import annotations

from knowledge_assets.core.ingest.parsing import (
    DEFAULT_MAX_BYTES,
    ParsedDoc,
    Rejection,
    parse_document,
)
from knowledge_assets.core.sources.bookmarks import BOOKMARK_SUFFIXES, parse_bookmarks

# What Git LFS leaves in place of a file it has not fetched (a clone without `git lfs pull`, or
# GitHub's API, which serves the pointer): stored as is, it would become a note of that text.
_LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\n"
_LFS_POINTER_MAX = 1024  # bytes: a pointer is about 130


def parse_file(path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedDoc | Rejection:
    """Parse one file by its suffix; sources only offer ``.json`` files when they hold bookmarks."""
    if len(data) <= _LFS_POINTER_MAX and data.startswith(_LFS_POINTER):
        return Rejection(
            path,
            "a Git LFS pointer, not the file: fetch it with `git lfs pull`, or keep notes out of"
            " LFS (GitHub's API serves only the pointer)",
        )
    if path.lower().endswith(BOOKMARK_SUFFIXES):
        return parse_bookmarks(path, data, max_bytes)
    return parse_document(path, data, max_bytes)
