"""The HTTP API (seed 001's endpoints) and the search page, on FastAPI.

``knowledge-assets serve`` runs it with uvicorn on 127.0.0.1:8000; the OpenAPI docs are at
``/docs``. Searches read as the read-only ``ka_reader`` role; answers are recorded as
``ka_qa_writer``. Off loopback every ``/api`` call needs ``Authorization: Bearer $KA_API_TOKEN``.
"""

from __future__ import annotations

import hmac
import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from knowledge_assets.answer import Asker, LLMConfigError, LLMError
from knowledge_assets.api import attachment_routes, routes, tag_routes
from knowledge_assets.api.settings import ApiSettings
from knowledge_assets.api.store import StoreUnavailable, pooled
from knowledge_assets.core.search import NoActiveModel
from knowledge_assets.core.search.note_sources import AmbiguousNote, UnknownSource
from knowledge_assets.mcp.reader import ServerBusy

STATIC = Path(__file__).parent / "static"


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"success": False, "error": message}, status_code=status)


def _encodable(value: Any) -> Any:
    """``value`` with what JSON cannot carry spelled out: NaN and ±Infinity as strings, lone
    surrogates as ``\\udXXX`` escapes. Validation errors echo the input, which may hold either."""
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)  # 'NaN', 'Infinity' or '-Infinity', as the client wrote it
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, list | tuple):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    return value


# Errors the routes let through, with the status that says whose fault they are and what to add
# to their message.
_STATUSES: tuple[tuple[type[Exception], int, str], ...] = (
    (StoreUnavailable, 503, ""),
    (ServerBusy, 503, ""),
    (NoActiveModel, 409, " (or use keyword search)"),
    (UnknownSource, 404, ""),
    (AmbiguousNote, 409, ""),
    (LLMError, 502, ""),
    (LLMConfigError, 500, ""),
)


def _reply(status: int, suffix: str) -> Any:
    async def handler(request: Request, exc: Exception) -> JSONResponse:
        return _error(status, f"{exc}{suffix}")

    return handler


def _handle_errors(app: FastAPI) -> None:
    """Errors as JSON with a status that says whose fault they are."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own handler, with the echoed input made encodable (else it fails with a 500).
        return JSONResponse({"detail": _encodable(jsonable_encoder(exc.errors()))}, status_code=422)

    for error, status, suffix in _STATUSES:
        app.add_exception_handler(error, _reply(status, suffix))


def create_app(settings: ApiSettings, asker: Asker | None = None) -> FastAPI:
    """The application; opens no connection until a request arrives."""
    readers = pooled(settings.reader_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        readers.close()

    app = FastAPI(
        title="knowledge-assets",
        description="Search your notes and ask them questions (answers cite the notes).",
        version="1",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.asker = asker or Asker()
    app.state.readers = readers

    @app.middleware("http")
    async def bearer_token(request: Request, call_next: Any) -> Any:
        if settings.needs_token and request.url.path.startswith("/api/"):
            sent = request.headers.get("authorization", "")
            if not hmac.compare_digest(sent.encode(), f"Bearer {settings.token}".encode()):
                return _error(401, "missing or wrong bearer token (Authorization: Bearer $KA_API_TOKEN)")  # fmt: skip
        return await call_next(request)

    _handle_errors(app)
    app.include_router(routes.router)
    app.include_router(tag_routes.router)
    app.include_router(attachment_routes.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    @app.get("/notes/{note_id:path}", include_in_schema=False)
    def page(note_id: str = "") -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    return app
