"""The ``/api/tags`` endpoints: the tags in use, and the notes carrying one (what a click on a
tag in the search page or a note lists)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from knowledge_assets.api.routes import _read
from knowledge_assets.api.schemas import TagName
from knowledge_assets.core.search import notes as core_notes

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
    offset: int = Query(default=0, ge=0, le=1_000_000),
) -> dict[str, Any]:  # fmt: skip
    """The current notes carrying ``tag`` or a tag nested under it (``project`` lists
    ``project/alpha`` too; case and a leading ``#`` do not matter), most recently updated
    first: ``total`` of them, ``limit`` from ``offset``."""
    total, notes = _read(
        request, lambda conn: core_notes.notes_tagged(conn, tag, limit=limit, offset=offset)
    )
    data = [asdict(n) | {"id": n.file_path} for n in notes]  # dates: ISO text in the reply
    return {"success": True, "tag": tag, "total": total, "count": len(data), "data": data}
