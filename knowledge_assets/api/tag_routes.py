"""The listings of notes: the tags in use, the notes carrying one (what a click on a tag in the
search page or a note lists), and the notes a query of operators alone keeps (what the page
lists for ``path:日記/`` typed alone, as Obsidian's search box does)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from knowledge_assets.api.routes import _filters, _read
from knowledge_assets.api.schemas import NoteListing, TagName
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.listing import MAX_OFFSET, notes_kept
from knowledge_assets.core.search.operators import UnsearchableQuery, listed, read_query

router = APIRouter(prefix="/api")


@router.get("/tags", summary="Tags with their note counts")
def tags(request: Request) -> dict[str, Any]:
    """Every tag of the current notes with how many carry it, most used first."""
    rows = _read(request, core_notes.list_tags)
    return {"success": True, "count": len(rows), "data": [{"tag": t, "count": c} for t, c in rows]}


@router.get("/tags/{tag:path}/notes", summary="Notes carrying a tag")
def tagged(
    tag: Annotated[TagName, Path(description="the tag, as written or in any case, '#' optional")],
    request: Request, limit: int = Query(default=50, ge=1, le=200),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
) -> dict[str, Any]:  # fmt: skip
    """The current notes carrying ``tag`` or a tag nested under it (``project`` lists
    ``project/alpha`` too; case and a leading ``#`` do not matter), most recently updated
    first: ``total`` of them, ``limit`` from ``offset``."""
    total, notes = _read(
        request, lambda conn: core_notes.notes_tagged(conn, tag, limit=limit, offset=offset)
    )
    data = [asdict(n) | {"id": n.file_path} for n in notes]  # dates: ISO text in the reply
    return {"success": True, "tag": tag, "total": total, "count": len(data), "data": data}


@router.post("/search/notes", summary="Notes a query of operators alone keeps")
def operator_notes(body: NoteListing, request: Request) -> dict[str, Any]:
    """The current notes kept by a query of Obsidian operators and no words (``path:日記/``,
    ``tag:日記 -tag:運動``, ``path:日記/ -雪``) and by ``filters``, most recently updated first:
    ``total`` of them, ``limit`` from ``offset``, each with its title, path, source, tags and
    dates. ``excludesOnly`` is true when the query only leaves notes out (``-tag:仕事``): the
    notes are then every note but those, as in Obsidian. 422 for a query with words to search
    for (the search endpoints take it) and for an operator that names nothing (``tag:""``)."""
    parts = _read(request, lambda conn: read_query(conn, body.query))
    if not parts.lists_notes:
        raise UnsearchableQuery(
            "the query has words to search for: search it with /api/search/hybrid (this lists"
            " the notes of operators alone, e.g. path:日記/ or tag:日記 -tag:運動)"
        )
    filters = listed(_filters(body.filters), parts)
    total, notes = _read(
        request, lambda conn: notes_kept(conn, filters, limit=body.limit, offset=body.offset)
    )
    data = [asdict(n) | {"id": n.file_path} for n in notes]  # dates: ISO text in the reply
    return {
        "success": True, "query": body.query, "excludesOnly": parts.excludes_only,
        "total": total, "count": len(data), "data": data,
    }  # fmt: skip
