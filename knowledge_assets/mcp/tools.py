"""The MCP tools over the knowledge store: search_docs, get_doc, list_tags, tagged_docs,
similar_docs, linking_docs.

Each tool's docstring is the description an LLM client reads, and each parameter carries a
description in the input schema. Failures a caller can act on (unknown note, refused path, no
embedding model yet, database unreachable) come back as ``isError`` results with a clear message.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any, Literal

import psycopg
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from knowledge_assets.cli_hints import closest_paths, did_you_mean
from knowledge_assets.core import search as core_search
from knowledge_assets.core.chunks.chunk_text import VISIBLE_PATTERN
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.index import coverage
from knowledge_assets.core.index.coverage import missing_warning
from knowledge_assets.core.links.backlinks import note_backlinks
from knowledge_assets.core.plain_text import plain_doc
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.explain import EMPTY, rejection
from knowledge_assets.core.search.note_sources import in_source, source_table
from knowledge_assets.core.search.operators import UnsearchableQuery, read_query
from knowledge_assets.core.search.search_sql import SearchFilters, get_model
from knowledge_assets.mcp import format as fmt
from knowledge_assets.mcp import schemas
from knowledge_assets.mcp.arguments import strict_tool
from knowledge_assets.mcp.listing import ListingTools, Offset
from knowledge_assets.mcp.reader import (
    MAX_PATH_CHARS,
    PathRefused,
    ReaderStore,
    check_note_path,
)
from knowledge_assets.mcp.stdio import KnowledgeServer

SERVER_NAME = "knowledge-assets"
INSTRUCTIONS = (
    "Personal knowledge base (an Obsidian vault, mostly Japanese Markdown notes). Use search_docs "
    "to find passages, get_doc to read a whole note by the path a result gives, similar_docs for "
    "related notes, linking_docs for the notes that link to a note, list_tags to see which tags "
    "exist and tagged_docs to list a tag's notes. Everything is read-only."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
Mode = Literal["hybrid", "vector", "keyword"]
DocType = Literal["markdown_note", "bookmark_json"]  # any other value matched nothing, unsaid
# A heading path ("parent > heading") far longer than any heading; one longer was echoed whole
# in the reply saying no section has it.
MAX_SECTION_CHARS = 1000
Source = Annotated[str | None, Field(description="The note's source, as search_docs returned it (e.g. 'local', 'books'), when several sources hold the path; default: the vault's note, else the only one there is.")]  # fmt: skip


class KnowledgeTools(ListingTools):
    """The tool implementations, bound to one ReaderStore; the listings are ListingTools's."""

    def __init__(self, store: ReaderStore) -> None:
        super().__init__(store)
        self._missing = coverage.RecentCount()  # a long-lived server counts once a minute

    def search_docs(
        self,
        query: Annotated[str, Field(description="What to look for, in natural language or keywords (Japanese or English). As in Obsidian, tag:T in it keeps the notes tagged T (as tags does), path:P those whose path contains P, file:F those whose file name contains F, and [K:V] those whose frontmatter property K holds V ([K] any value, [K:A OR B] either, [K:null] empty); a phrase in double quotes (\"two words\") must be there as written; -tag:T, -path:P, -file:F, -[K:V] and -word (or -\"two words\") leave out the notes they would match; tag:T OR tag:U keeps the notes of either (OR joins two operators of one kind). Operators alone (path:日記/, tag:T -tag:U) list the notes they keep (mode 'list').", max_length=core_search.MAX_QUERY_CHARS, pattern=VISIBLE_PATTERN)],
        tags: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(description="Only notes carrying at least one of these tags (see list_tags).", max_length=100)] = None,
        limit: Annotated[int, Field(description="How many notes (or passages, with per_note false) to return.", ge=1, le=50)] = 5,
        mode: Annotated[Mode, Field(description="hybrid (default: keyword and vector results fused), vector (embedding similarity only) or keyword (BM25 over Japanese morphemes only).")] = "hybrid",
        content_type: Annotated[list[Annotated[str, Field(max_length=1000)]] | None, Field(description="Only these kinds of content, any of: notes, books, articles.", max_length=100)] = None,
        type: Annotated[list[DocType] | None, Field(description="Only these formats, any of: markdown_note, bookmark_json.", max_length=2)] = None,
        top_heading: Annotated[list[Annotated[str, Field(max_length=1000)]] | None, Field(description="Only documents under one of these top headings (a note's frontmatter 'heading', a bookmark file's category).", max_length=100)] = None,
        per_note: Annotated[bool, Field(description="true (default): distinct notes, each with its best passage and up to 3 more matching sections; false: the best passages, several possibly from one note.")] = True,
        offset: Annotated[Offset, Field(description="Only for a query of operators alone (mode 'list'): how many of the most recently updated notes to skip; pass the listing's next_offset for its next page.")] = 0,
    ) -> Annotated[CallToolResult, schemas.SearchDocsOutput]:  # fmt: skip
        """Search the personal notes and return the best-matching notes with their best passages.

        Each hit has the note title, the section heading, the note path, a relevance score, which
        retrievers found it (keyword / vector), the note's tags, a snippet of the passage, its
        type, content_type, top_heading, heading_path (a list) and, when known, url and dates;
        ``more_sections`` lists the note's other matching sections (heading, score, snippet).
        Higher scores are better: cosine similarity in vector mode, BM25 in keyword mode and in
        hybrid mode the BM25 score and the cosine similarity, each scaled to 0..1 over the
        query's candidates, added with weights (only the order matters).
        Pass a hit's path and source to get_doc to read the whole note. Only the latest version of each
        note is searched; drafts and superseded versions are left out. Returns compact JSON with
        the timings in milliseconds. A query of operators alone (no words) returns mode 'list',
        no hits, and ``notes`` (title, path, source, tags, dates; newest first; ``limit`` of
        ``total`` from ``offset``), as tagged_docs lists a tag's notes; ``next_offset`` is the
        offset of the next page, null after the last note.
        """
        try:  # a tag of "#" alone is refused, as tag:# in the query is
            filters = SearchFilters(
                tags=tuple(tags or ()), content_types=tuple(content_type or ()),
                types=tuple(type or ()), top_headings=tuple(top_heading or ()),
            )  # fmt: skip
        except UnsearchableQuery as exc:
            raise ToolError(f"bad input: {exc}") from None
        if (parts := self._call(lambda conn: read_query(conn, query))).lists_notes:
            return self._operator_listing(query, filters, parts, limit, offset)
        if offset:  # a search returns its best hits only: ignored, it would repeat them
            raise ToolError("offset pages a listing of operators alone (path:日記/, tag:日記)")

        def run(
            conn: psycopg.Connection, companion: psycopg.Connection | None
        ) -> core_search.SearchResponse:
            embedder = None if mode == "keyword" else self._embedder(conn)
            found = core_search.search(
                conn, query, mode=mode, filters=filters, limit=limit, embedder=embedder,
                per_note=per_note, companion=companion, parts=parts,
            )  # fmt: skip
            gap = missing_warning(self._missing.count(conn)) if mode != "keyword" else None
            return replace(found, warnings=(*found.warnings, gap)) if gap else found

        if mode == "hybrid":  # its keyword and vector legs run at once, on two connections
            response = self._call_pair(run)
        else:
            response = self._call(lambda conn: run(conn, None))
        return schemas.structured(fmt.search_result(response))

    def get_doc(
        self,
        file_path: Annotated[str, Field(description="The note's vault-relative path, exactly as search_docs or similar_docs returned it, e.g. 'projects/garden.md'.")],
        section: Annotated[str | None, Field(description="Only this section: its heading as search_docs showed it (## or ###).", max_length=MAX_SECTION_CHARS)] = None,
        page: Annotated[int, Field(description="Which page of a long note (about 6,000 characters each).", ge=1)] = 1,
        source: Source = None,
    ) -> str:  # fmt: skip
        """Return a note: a metadata header (path, title, tags, aliases, dates, and its other
        frontmatter properties on a line 'properties: status: done | type: book'), a line '---',
        then the Markdown body. A long note comes in pages (the header says 'page: 1/3' and lists
        the sections); pass page=2 for more, or section='heading' for just one section.

        Superseded and empty versions are returned too, with a line 'not searchable:' saying why
        (empty, superseded by X, could not be chunked). Drafts are never served: the error says
        the note is a draft, and a rejected file's error says why it was rejected. An unknown
        path or one outside the vault (absolute, '..') is an error. When several sources hold
        the path, pass the hit's source; without one the vault's note is returned (the header
        says 'also in:'), and a path only other sources share is an error naming them.
        """
        path, where = self._path(file_path, source), in_source(source)
        doc = self._call(lambda conn: self._find_doc(conn, path, source))
        if doc is None:
            table = source_table(source) if source else None
            rejected = self._call(lambda conn: rejection(conn, path, table))
            if rejected:
                raise ToolError(f"{path!r}{where} is not stored: rejected because {rejected}")
        elif not _served(doc):
            why = doc.get("not_searchable") or "not searchable"
            raise ToolError(f"{path!r} is not served: {why}")
        if doc is None:
            raise ToolError(f"no note at {path!r}{where}{self._close_to(path, source)}")
        try:
            return fmt.document_part(doc, section, page)
        except LookupError as exc:
            raise ToolError(str(exc)) from None

    def similar_docs(
        self,
        file_path: Annotated[str, Field(description="The vault-relative path of the note to compare with, as search_docs returned it.")],
        limit: Annotated[int, Field(description="How many similar notes to return.", ge=1, le=50)] = 5,
        source: Source = None,
    ) -> Annotated[CallToolResult, schemas.SimilarDocsOutput]:  # fmt: skip
        """Find the notes most similar in meaning to the given note (by their embeddings).

        The note itself and its older or newer versions are never listed. Each result has the
        title, path, source, score, the best-matching section heading, tags and a snippet.
        Returns compact JSON. Name the note's source as for get_doc.
        """
        path = self._path(file_path, source)

        def run(
            conn: psycopg.Connection,
        ) -> tuple[list[core_notes.SimilarNote], core_notes.NoteRef] | None:
            try:
                ref, notes = core_notes.similar_to(conn, path, limit=limit, source=source)
            except core_notes.UnknownNote:
                return None
            return notes, ref

        found = self._call(run)
        if found is None:
            raise ToolError(
                f"no current note at {path!r}{in_source(source)} (unknown, a draft or a superseded"
                f" version){self._close_to(path, source)}"
            )
        return schemas.structured(fmt.similar_result(path, *found))

    def linking_docs(
        self,
        file_path: Annotated[str, Field(description="The vault-relative path of the note linked to, as search_docs returned it.")],
        source: Source = None,
    ) -> Annotated[CallToolResult, schemas.LinkingDocsOutput]:  # fmt: skip
        """List the current notes that link to the given note (Obsidian's backlinks), by title:
        their wikilinks, embeds and Markdown links outside code, resolved as Obsidian resolves
        them, so a note of the same name in another folder is not counted. Each has its title,
        path and source; 'more' is true when more notes name the note than were read. Name the
        note's source as for get_doc."""
        path = self._path(file_path, source)
        found = self._call(lambda conn: note_backlinks(conn, path, source))
        if found is None:
            raise ToolError(f"no note at {path!r}{in_source(source)}{self._close_to(path, source)}")
        return schemas.structured(fmt.linking_result(found))

    def all(self) -> tuple[Callable[..., Any], ...]:
        """The tools, in the order a client lists them."""
        return (
            self.search_docs, self.get_doc, self.list_tags, self.tagged_docs, self.similar_docs,
            self.linking_docs,
        )  # fmt: skip

    def _close_to(self, path: str, source: str | None) -> str:
        """The note paths ``path`` may mean (a file name without its folder), else where the
        valid ones come from."""
        close = self._call(lambda conn: closest_paths(conn, path, source))
        return did_you_mean(close) if close else "; search_docs returns valid paths"

    def _embedder(self, conn: psycopg.Connection) -> Embedder | None:
        info = get_model(conn)
        if info is None:
            return None
        return self.store.cached_embedder(info.model, lambda: core_search.query_embedder(conn))

    @staticmethod
    def _find_doc(conn: psycopg.Connection, path: str, source: str | None) -> dict[str, Any] | None:
        # A path in any Unicode form finds the note (a Mac stores decomposed names): locate's.
        return core_notes.get_doc(conn, path, source)

    def _path(self, file_path: str, source: str | None = None) -> str:
        """``file_path`` in the vault-relative form :func:`check_note_path` makes of it, unless
        it is a stored note's path as it is: a path is only a key here, so a note named
        ``~archive/old.md``, `` lead.md`` or ``back\\slash.md`` is served as search_docs lists it."""
        try:
            path: str | None = check_note_path(file_path)
        except PathRefused as exc:
            path, refused = None, exc
        if path != file_path and _storable(file_path):
            if self._call(lambda conn: self._find_doc(conn, file_path, source)) is not None:
                return file_path
        if path is None:
            raise ToolError(str(refused)) from refused
        return path


def _storable(path: str) -> bool:
    """Whether ``path`` could be a stored path at all: Postgres refuses NUL and lone surrogates."""
    return (
        bool(path.strip()) and len(path) <= MAX_PATH_CHARS and "\x00" not in path
        and not any("\ud800" <= c <= "\udfff" for c in path)
    )  # fmt: skip


def _served(doc: dict[str, Any]) -> bool:
    """Whether get_doc returns ``doc``: the latest version, an older one or an empty note, but
    never a draft."""
    if doc.get("latest", True) or doc.get("superseded_by"):
        return True
    return doc.get("not_searchable") == EMPTY


def build_server(store: ReaderStore | None = None, *, warm_up: bool = False) -> MCPServer[Any]:
    """The MCP server with the six read-only tools. Opens no connection, unless ``warm_up``
    starts loading the active model's query embedder in the background."""
    tools = KnowledgeTools(store or ReaderStore())
    if warm_up:
        tools.store.warm_up(tools._embedder)
    # get_doc returns Markdown for the reader; the others return data with an output schema.
    strict: list[Tool] = [
        strict_tool(
            fn,
            description=plain_doc(inspect.cleandoc(fn.__doc__ or "")),
            annotations=READ_ONLY,
            structured_output=fn != tools.get_doc,
        )
        for fn in tools.all()
    ]
    return KnowledgeServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=_version(), log_level="WARNING",
        tools=strict,
    )  # fmt: skip


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("knowledge-assets")
    except PackageNotFoundError:
        return "0"
