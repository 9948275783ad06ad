"""Which parser reads a file: bookmark JSON (``.json``) or Markdown (everything else)."""

from __future__ import annotations

from knowledge_assets.core.ingest.parsing import (
    DEFAULT_MAX_BYTES,
    ParsedDoc,
    Rejection,
    parse_document,
)
from knowledge_assets.core.sources.bookmarks import BOOKMARK_SUFFIXES, parse_bookmarks


def parse_file(path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedDoc | Rejection:
    """Parse one file by its suffix; sources only offer ``.json`` files when they hold bookmarks."""
    if path.lower().endswith(BOOKMARK_SUFFIXES):
        return parse_bookmarks(path, data, max_bytes)
    return parse_document(path, data, max_bytes)
