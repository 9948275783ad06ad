"""``GET /api/attachments/{path}``: an image of the local vault, for the note view's ``<img>``
(see :mod:`knowledge_assets.api.attachments` for what may be served)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse

from knowledge_assets.api.attachments import HEADERS, VaultFiles
from knowledge_assets.api.errors import quoted
from knowledge_assets.api.settings import ApiSettings

router = APIRouter(prefix="/api")


@router.get("/attachments/{path:path}", summary="An image kept in the vault")
def attachment(path: str, request: Request) -> FileResponse:
    """The image file at ``path`` (vault-relative) of the local vault folder: PNG, JPEG, GIF,
    WebP, SVG or AVIF only, never a file outside the vault (``..``, symlinks) or in a hidden
    folder. 404 for anything else, and when the vault is a GitHub repository."""
    settings: ApiSettings = request.app.state.settings
    found = VaultFiles(settings.vault).file(path) if settings.vault else None
    if found is None:
        raise HTTPException(404, f"no image at {quoted(path)} in the vault")
    real, kind = found
    headers = dict(HEADERS)
    if kind == "image/svg+xml":  # opened on its own, an SVG is a document that may run script
        headers["Content-Disposition"] = "attachment"
    return FileResponse(real, media_type=kind, headers=headers)
