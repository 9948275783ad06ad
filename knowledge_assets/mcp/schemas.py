"""Output schemas of the MCP tools that return data (search_docs, similar_docs, linking_docs,
list_tags, tagged_docs).

A client reads ``structuredContent`` against the tool's ``outputSchema``; the same JSON also
comes as one text block for clients that only read text. Fields beyond the ones named here
(per-note sections, payload such as ``type`` or ``url``) are allowed, so the schema states what
a caller can rely on without freezing every optional field.
"""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict

from knowledge_assets.mcp import format as fmt


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class SearchHit(_Open):
    rank: int
    title: str | None = None
    heading: str | None = None
    path: str
    source: str | None = None  # with path, what get_doc and similar_docs take
    score: float
    retrievers: list[str] = []
    tags: list[str] = []
    snippet: str = ""


class TaggedNote(_Open):
    title: str | None = None
    path: str
    source: str | None = None
    tags: list[str] = []
    created: str | None = None
    updated: str | None = None


class SearchDocsOutput(_Open):
    query: str
    mode: str  # "list" for a query of operators alone: no hits, the notes it keeps in ``notes``
    model: str | None = None
    timings_ms: dict[str, float] = {}
    hits: list[SearchHit]
    total: int | None = None  # with mode "list": the notes kept in all; ``notes`` is a page
    offset: int | None = None  # with mode "list": the notes before this page
    next_offset: int | None = None  # with mode "list": the next page's offset; null at the end
    notes: list[TaggedNote] = []
    excludes_only: bool = False  # with mode "list": every note but those the query leaves out


class SimilarNote(_Open):
    title: str | None = None
    path: str
    source: str | None = None
    score: float
    heading: str | None = None
    tags: list[str] = []
    snippet: str = ""


class SimilarDocsOutput(_Open):
    source: str | None = None  # the source of the note compared with
    file_path: str
    similar: list[SimilarNote]


class LinkingNote(_Open):
    title: str | None = None
    path: str
    source: str | None = None


class LinkingDocsOutput(_Open):
    source: str | None = None  # the source of the note linked to
    file_path: str
    linking: list[LinkingNote]
    more: bool = False  # more notes name it than were read for their links


class TagCount(_Open):
    tag: str
    count: int


class ListTagsOutput(_Open):
    tags: list[TagCount]
    total: int


class TaggedDocsOutput(_Open):
    tag: str
    total: int  # notes carrying the tag in all; ``notes`` is one page of them
    offset: int = 0  # the notes before this page
    next_offset: int | None = None  # the offset of the next page; null after the last note
    notes: list[TaggedNote]


def structured(payload: dict[str, Any]) -> CallToolResult:
    """``payload`` as structured content, and as compact JSON text for text-only clients."""
    return CallToolResult(
        content=[TextContent(type="text", text=fmt.to_json(payload))],
        structured_content=payload,
    )
