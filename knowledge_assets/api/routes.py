"""The ``/api`` endpoints: seed 001's search, Q&A, similar notes and history, plus notes (tags:
:mod:`knowledge_assets.api.tag_routes`)."""

from __future__ import annotations

import json
import logging
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, HTTPException, Query, Request
from sse_starlette.sse import EventSourceResponse

from knowledge_assets.answer import Answer, Asker, LLMError, Turn
from knowledge_assets.answer import history as qa_history
from knowledge_assets.api import answers, store
from knowledge_assets.api.errors import UNEXPECTED, error_body, quoted
from knowledge_assets.api.schemas import (  # fmt: skip
    ByNote,
    DateRange,
    Filters,
    HybridSearch,
    KeywordSearch,
    QARequest,
    SemanticSearch,
)
from knowledge_assets.api.settings import ApiSettings
from knowledge_assets.core import search as core_search
from knowledge_assets.core.chunks.tokenize import query_terms
from knowledge_assets.core.index.coverage import RecentCount, missing_warning
from knowledge_assets.core.plain_text import plain_heading
from knowledge_assets.core.search import GivenWeights, SearchFilters, SearchHit, SearchResponse
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.note_sources import (
    in_source,
)
from knowledge_assets.core.search.operators import split_query
from knowledge_assets.mcp.reader import ReaderStore

router = APIRouter(prefix="/api")
log = logging.getLogger(__name__)
PREVIEW_CHARS = 200  # seed 001: the similar-notes preview is the first 200 characters
MAX_OFFSET = 2**31 - 1  # far past any history, and within Postgres's bigint OFFSET
T = TypeVar("T")


def _settings(request: Request) -> ApiSettings:
    settings: ApiSettings = request.app.state.settings
    return settings


def _filters(filters: Filters | None, tags: list[str] | None = None) -> SearchFilters | None:
    if filters is None and not tags:
        return None
    f = filters or Filters()
    created, updated = f.dateRange or DateRange(), f.updatedRange or DateRange()
    return SearchFilters(
        tags=tuple(f.tags or tags or ()), path_prefix=f.pathPrefix, alias_prefix=f.aliasPrefix,
        content_types=tuple(f.contentTypes or ()), types=tuple(f.types or ()),
        top_headings=tuple(f.topHeadings or ()),
        created_from=created.from_, created_to=created.to,
        updated_from=updated.from_, updated_to=updated.to,
    )  # fmt: skip


def _match_type(hit: SearchHit) -> str:
    return (
        "hybrid" if len(hit.retrievers) > 1 else hit.retrievers[0] if hit.retrievers else "keyword"
    )


def _hit(h: SearchHit) -> dict[str, Any]:
    return {
        "id": h.file_path, "title": h.title, "heading": h.heading, "parentHeading": h.parent_heading,
        "content": h.content, "score": round(h.score, 4), "matchType": _match_type(h),
        "tags": list(h.tags), "chunkId": h.chunk_id, "source": h.source,
        # seed 004's fields: the document's kind, where it sits, a bookmark's article, its dates
        "type": h.type, "contentType": h.content_type, "topHeading": h.top_heading,
        "headingPath": [plain_heading(part) for part in h.heading_path], "url": h.url,
        "created": h.created, "updated": h.updated,
    }  # fmt: skip


def _search_result(response: SearchResponse, per_note: bool = False) -> dict[str, Any]:
    t = response.timings
    data = [
        _hit(h) | ({"sections": [_hit(s) for s in h.sections]} if per_note else {})
        for h in response.hits
    ]
    return {
        "success": True, "count": len(data), "data": data, "mode": response.mode,
        "model": response.model, "terms": query_terms(split_query(response.query).words),
        "timing": {"embedding": t["embed_ms"], "search": t["search_ms"], "total": t["total_ms"]},
        "warnings": list(response.warnings),
    }  # fmt: skip


def _note_path(note_id: str) -> str:
    """``note_id``, or a 404 when it holds a NUL or a lone surrogate: no stored path does (the
    sync renames such files), and Postgres would refuse the query. Other control characters,
    a tab say, are legal in a file name and go to the lookup."""
    if "\x00" in note_id or any(unicodedata.category(c) == "Cs" for c in note_id):
        raise _no_note(note_id, None)
    return note_id


def _no_note(note_id: str, source: str | None) -> HTTPException:
    return HTTPException(404, (
        f"no current note at {quoted(note_id)}{in_source(source)}: name a note by its path in its "
        "source, as search results give it (e.g. 'folder/note.md'); drafts and deleted notes "
        "are not served"
    ))  # fmt: skip


def _readers(request: Request) -> ReaderStore:
    readers: ReaderStore = request.app.state.readers
    return readers


def _read(request: Request, fn: Callable[[Any], T]) -> T:
    """``fn(conn)`` on one of the server's pooled read-only connections."""
    return store.read(_readers(request), lambda conn, _companion: fn(conn))


def _search(request: Request, query: str, **kwargs: Any) -> dict[str, Any]:
    missing: RecentCount = request.app.state.missing_vectors

    def run(conn: Any, companion: Any) -> SearchResponse:
        found = core_search.search(conn, query, companion=companion, **kwargs)
        # As the CLI and MCP say it: a passage without a vector is not found by meaning.
        gap = missing_warning(missing.count(conn)) if kwargs.get("mode") != "keyword" else None
        return replace(found, warnings=(*found.warnings, gap)) if gap else found

    # A hybrid search runs its keyword and vector legs at once, on two pooled connections.
    pair = kwargs.get("mode") == "hybrid"
    return _search_result(
        store.read(_readers(request), run, pair=pair), kwargs.get("per_note", False)
    )


def _by_note(body: ByNote) -> dict[str, Any]:
    return {"per_note": body.perNote, "sections": body.sections}


@router.post("/search/semantic", summary="Semantic (vector) search")
def semantic(body: SemanticSearch, request: Request) -> dict[str, Any]:
    """Chunks whose embedding is closest to the query's (cosine similarity, active model).
    ``timing`` is in milliseconds: ``embedding`` the query, ``search``, and ``total``."""
    return _search(request, body.query, mode="vector", limit=body.limit, threshold=body.threshold, filters=_filters(body.filters), **_by_note(body))  # fmt: skip


@router.post("/search/hybrid", summary="Hybrid search (keyword + vector)")
def hybrid(body: HybridSearch, request: Request) -> dict[str, Any]:
    """Keyword (BM25) and vector results fused with the given weights (defaults: tuned).
    ``timing`` is in milliseconds: ``embedding`` the query, ``search``, and ``total``."""
    # The weights the request leaves out are the active model's measured fusion.
    weights = GivenWeights(body.keywordWeight, body.vectorWeight)
    return _search(request, body.query, mode="hybrid", limit=body.limit, weights=weights, filters=_filters(body.filters), **_by_note(body))  # fmt: skip


@router.post("/search/keyword", summary="Keyword search (BM25)")
def keyword(body: KeywordSearch, request: Request) -> dict[str, Any]:
    """BM25 over Japanese morphemes and English words. ``timing`` is in milliseconds."""
    return _search(request, body.query, mode="keyword", limit=body.limit, filters=_filters(body.filters), **_by_note(body))  # fmt: skip


def _qa_data(conn: Any, result: Answer, conversation_id: str) -> dict[str, Any]:
    data = result.to_dict() | {"conversationId": conversation_id, "question": result.question}
    return answers.with_notes(conn, data)


def _ask_setup(body: QARequest) -> tuple[str, SearchFilters | None]:
    try:
        conversation = qa_history.parse_conversation_id(body.conversationId) if body.conversationId else qa_history.new_conversation_id()  # fmt: skip
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    return conversation, _filters(None, body.options.tags)


def _earlier(settings: ApiSettings, conversation: str | None) -> list[Turn]:
    """The turns of the conversation a question follows up ([] for a new one). 404 for one the
    history does not hold: answering anyway would silently drop the conversation's context."""
    if conversation is None:
        return []
    with store.reader(settings.reader_url) as conn:
        earlier = qa_history.turns(conn, conversation)
    if not earlier:
        raise HTTPException(404, f"no conversation {conversation} in the Q&A history (it was deleted, or the id is mistyped): ask without conversationId to start a new conversation")  # fmt: skip
    return earlier


def _record(settings: ApiSettings, result: Answer, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``id``: the answer's entry in the history, once recorded there."""
    with store.writer(settings.writer_url) as conn:
        return {"id": qa_history.record(conn, result, data["conversationId"])} | data


@router.post("/ai/qa", summary="Ask a question (RAG answer with citations)")
def qa(body: QARequest, request: Request) -> Any:
    """Seed 001's Q&A: hybrid retrieval of the top-K notes, then an LLM answer (or, with no LLM
    configured, quoted passages), with cited notes, confidence and metadata (``responseTime`` and
    ``searchTime`` in milliseconds). With ``options.stream`` the answer comes as server-sent
    events: ``retrieved`` (the notes found: candidates, which the answer may or may not cite),
    ``delta``… (pieces of the answer's text), ``sources`` (the notes the answer cites, as
    ``done`` lists them) and ``done`` (the whole answer), or ``error`` (the error reply's JSON)
    at any point. Every answer is kept in the history (``id``: its entry there); pass
    ``conversationId`` to follow up (404 for one the history does not hold)."""
    settings, asker = _settings(request), request.app.state.asker
    conversation, filters = _ask_setup(body)
    earlier = _earlier(settings, conversation if body.conversationId else None)
    if body.options.stream:
        events = _qa_events(settings, asker, body, (conversation, earlier), filters)
        return EventSourceResponse(events, ping=15)
    with store.reader(settings.reader_url) as conn:
        result = asker.ask(conn, body.question, history=earlier, filters=filters, top_k=body.options.topK)  # fmt: skip
        data = _qa_data(conn, result, conversation)
    return {"success": True, "data": _record(settings, result, data)}


def _qa_events(settings: ApiSettings, asker: Asker, body: QARequest, followed: tuple[str, list[Turn]], filters: SearchFilters | None) -> Iterator[dict[str, str]]:  # fmt: skip
    conversation, earlier = followed

    def sse(kind: str, data: Any) -> dict[str, str]:
        return {"event": kind, "data": json.dumps(data, ensure_ascii=False)}

    try:
        with store.reader(settings.reader_url) as conn:
            for event in asker.events(conn, body.question, history=earlier, filters=filters, top_k=body.options.topK):  # fmt: skip
                if event.kind == "sources":  # retrieved; the answer may cite none of them
                    yield sse("retrieved", [s.to_dict() for s in event.data])
                elif event.kind == "delta":
                    yield sse("delta", {"text": event.data})
                else:
                    result = event.data
                    data = _qa_data(conn, result, conversation)
        recorded = _record(settings, result, data)
        yield sse("sources", recorded["sources"])
        yield sse("done", recorded)
    except (LLMError, store.StoreUnavailable, ValueError) as exc:
        yield sse("error", error_body(str(exc)))
    except Exception:  # the reply has begun: the client learns of the failure from an event
        log.exception("a streamed answer failed")
        yield sse("error", error_body(UNEXPECTED))


Source = Annotated[str | None, Query(max_length=200, description="the note's source (as search results give it), when several sources hold the path; default: the vault's, else the only one that has it")]  # fmt: skip


@router.get("/ai/similar/{note_id:path}", summary="Notes similar to a note")
def similar(note_id: str, request: Request, limit: int = Query(default=5, ge=1, le=50), source: Source = None) -> dict[str, Any]:  # fmt: skip
    """Notes nearest in meaning to ``note_id`` (a vault-relative path) of ``source``, with a
    200-character preview. ``alsoIn`` lists the other sources holding the path."""
    note_id, source = _note_path(note_id), source or None  # ?source= names no source

    def run(conn: Any) -> tuple[list[core_notes.SimilarNote], dict[tuple[str, str], str], core_notes.NoteRef]:  # fmt: skip
        try:
            ref, notes = core_notes.similar_to(conn, note_id, limit=limit, source=source)
        except core_notes.UnknownNote:
            raise _no_note(note_id, source) from None
        return notes, _bodies(conn, [(n.source, n.file_path) for n in notes]), ref

    notes, bodies, ref = _read(request, run)
    data = [
        {"id": n.file_path, "source": n.source, "title": n.title, "score": round(n.score, 4),
         "tags": list(n.tags), "preview": (bodies.get((n.source, n.file_path)) or n.content)[:PREVIEW_CHARS]}
        for n in notes
    ]  # fmt: skip
    found = {"source": ref.source, "alsoIn": list(ref.also_in)}
    return {"success": True, "count": len(data), "data": data} | found


def _bodies(conn: Any, notes: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The body of each (source, path) note."""
    return {key: r["content"].strip() for key, r in core_notes.latest_fields(conn, notes).items()}


@router.get("/ai/qa/history", summary="Past questions and answers")
def history(request: Request, limit: int = Query(default=20, ge=1, le=200), offset: int = Query(default=0, ge=0, le=MAX_OFFSET)) -> dict[str, Any]:  # fmt: skip
    """Answered questions, newest first, ``limit`` at a time from ``offset``."""
    total, entries = _read(
        request, lambda conn: qa_history.listing(conn, limit=limit, offset=offset)
    )
    data = [e.to_dict() for e in entries]
    return {"success": True, "count": len(data), "total": total, "data": data}


@router.get("/ai/qa/history/{entry_id}", summary="One past answer, to show it again")
def history_entry(entry_id: str, request: Request) -> dict[str, Any]:
    """The history entry ``entry_id`` (a listed entry's ``id``) as ``POST /api/ai/qa`` gave the
    answer: full citations, confidence, metadata and warnings, no new LLM call. Its
    ``conversationId`` continues the conversation. An entry recorded before the history kept
    metadata and warnings has only its model, tokens and response time, and no warnings."""

    def run(conn: Any) -> dict[str, Any] | None:
        found = qa_history.entry(conn, entry_id)
        return answers.with_notes(conn, found.answer_dict()) if found else None

    data = _read(request, run)
    if data is None:
        raise HTTPException(404, f"no answer {quoted(entry_id)} in the Q&A history: it was deleted, or the id is mistyped; GET /api/ai/qa/history lists the answers kept")  # fmt: skip
    return {"success": True, "data": data}
