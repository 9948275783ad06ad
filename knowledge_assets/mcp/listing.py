"""The MCP tools that list notes rather than search them: list_tags, tagged_docs, and
search_docs with a query of Obsidian operators alone (``path:日記/``, ``tag:日記 -tag:運動``),
which lists the notes they keep as Obsidian's search box does. A client asking for a folder's or
a tag combination's notes gets them at once, in the listing tagged_docs gives for one tag, rather
than a refusal it would have to work around.

Every listing comes in pages: ``offset`` says where a page starts and ``next_offset`` where the
next one does (null after the last note), so a client can walk a folder of thousands of notes.
"""

from __future__ import annotations

from typing import Annotated, Any

import psycopg
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

from knowledge_assets.core.search import SearchFilters
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.listing import EVERY_OTHER_NOTE, MAX_OFFSET, notes_kept
from knowledge_assets.core.search.operators import QueryParts, UnsearchableQuery, listed
from knowledge_assets.mcp import format as fmt
from knowledge_assets.mcp import schemas
from knowledge_assets.mcp.calls import StoreCalls

Offset = Annotated[int, Field(description="How many of the most recently updated notes to skip: a listing's next_offset, for its next page.", ge=0, le=MAX_OFFSET)]  # fmt: skip


class ListingTools(StoreCalls):
    """list_tags, tagged_docs and search_docs's listing of operators alone."""

    def list_tags(self) -> Annotated[CallToolResult, schemas.ListTagsOutput]:
        """List every tag used by the current notes with how many notes carry it, most used
        first. Use the tag names to filter search_docs."""
        return schemas.structured(fmt.tags_result(self._call(core_notes.list_tags)))

    def tagged_docs(
        self,
        tag: Annotated[str, Field(description="A tag as list_tags names it (any case, '#' optional); notes with a tag nested under it (tag/sub) are listed too.", min_length=1, max_length=200)],
        limit: Annotated[int, Field(description="How many notes to return.", ge=1, le=100)] = 20,
        offset: Offset = 0,
    ) -> Annotated[CallToolResult, schemas.TaggedDocsOutput]:  # fmt: skip
        """List the current notes carrying a tag, most recently updated first, with how many
        there are in all. Each note has its title, path, source, tags and dates; read one with
        get_doc. Tags come from the frontmatter and from the text (#tag), as in Obsidian.
        ``next_offset`` is the offset of the next page, null after the last note."""

        def run(conn: psycopg.Connection) -> tuple[int, list[core_notes.TaggedNote]]:
            return core_notes.notes_tagged(conn, tag, limit=limit, offset=offset)

        return schemas.structured(fmt.tagged_result(tag, *self._call(run), offset=offset))

    def _operator_listing(
        self, query: str, filters: SearchFilters, parts: QueryParts, limit: int, offset: int
    ) -> CallToolResult:
        """The notes the operators of ``parts`` (and ``filters``) keep, newest first, as
        search_docs's output: mode ``list``, no hits, ``total`` and a page of ``notes`` from
        ``offset``, with the ``next_offset`` of the page after it."""
        try:
            kept = listed(filters, parts)
        except UnsearchableQuery as exc:
            raise ToolError(str(exc)) from None
        total, notes = self._call(lambda conn: notes_kept(conn, kept, limit=limit, offset=offset))
        page = fmt.tagged_result("", total, notes, offset)
        result: dict[str, Any] = {"query": query, "mode": "list", "hits": [], "total": total}
        result |= {k: page[k] for k in ("offset", "next_offset", "notes")}
        result["excludes_only"] = parts.excludes_only
        if parts.excludes_only:  # as in Obsidian; said, lest it read as one folder's or tag's
            result["warnings"] = [EVERY_OTHER_NOTE]
        return schemas.structured(result)
