"""``GET /api/status``: what the store holds and which files need fixing, as
``knowledge-assets status`` prints it; the search page shows the problems above the search."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Query, Request

from knowledge_assets.api.routes import _read
from knowledge_assets.core.store_status import read_status

router = APIRouter(prefix="/api")


@router.get("/status", summary="The store's sources, coverage and files to fix")
def status(request: Request, limit: int = Query(default=50, ge=0, le=100_000)) -> dict[str, Any]:
    """Each source's last sync, how many notes and passages search reads, the active model and
    how many passages lack its vector, and the rejected files, notes with warnings and notes a
    step could not index, each with its reason: the first ``limit`` of each kind (a vault of
    thousands of broken files would make every page load megabytes), all of them counted in
    ``counts``."""
    found = _read(request, lambda conn: read_status(conn, limit))
    return {"success": True, "data": asdict(found) | {"problems": found.problems}}
