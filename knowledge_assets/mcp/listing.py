"""search_docs with a query of Obsidian operators alone (``path:日記/``, ``tag:日記 -tag:運動``):
the notes they keep, as Obsidian's search box lists them. A client asking for a folder's or a
tag combination's notes gets them at once, in the listing tagged_docs gives for one tag, rather
than a refusal it would have to work around."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult

from knowledge_assets.core.search import SearchFilters
from knowledge_assets.core.search.listing import EVERY_OTHER_NOTE, ListedNote, notes_kept
from knowledge_assets.core.search.operators import QueryParts, UnsearchableQuery, listed
from knowledge_assets.mcp import format as fmt
from knowledge_assets.mcp import schemas

Call = Callable[[Callable[[Any], tuple[int, list[ListedNote]]]], tuple[int, list[ListedNote]]]


def operator_listing(
    call: Call, query: str, filters: SearchFilters, parts: QueryParts, limit: int
) -> CallToolResult:
    """The notes the operators of ``parts`` (and ``filters``) keep, newest first, as
    search_docs's output: mode ``list``, no hits, ``total`` and a page of ``notes``."""
    try:
        kept = listed(filters, parts)
    except UnsearchableQuery as exc:
        raise ToolError(str(exc)) from None
    total, notes = call(lambda conn: notes_kept(conn, kept, limit=limit))
    page = fmt.tagged_result("", total, notes)
    result: dict[str, Any] = {"query": query, "mode": "list", "hits": [], "total": total}
    result |= {"notes": page["notes"], "excludes_only": parts.excludes_only}
    if parts.excludes_only:  # as in Obsidian; said, lest it read as one folder's or tag's notes
        result["warnings"] = [EVERY_OTHER_NOTE]
    return schemas.structured(result)
