"""The HTTP API (seed 001's endpoints) and the search page, on FastAPI.

``knowledge-assets serve`` runs it with uvicorn on 127.0.0.1:8000; the OpenAPI docs are at
``/docs``. Searches read as the read-only ``ka_reader`` role; answers are recorded as
``ka_qa_writer``. Off loopback every ``/api`` call needs ``Authorization: Bearer $KA_API_TOKEN``.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from knowledge_assets.answer import Asker, LLMConfigError, LLMError
from knowledge_assets.api import routes
from knowledge_assets.api.settings import ApiSettings
from knowledge_assets.api.store import StoreUnavailable, pooled
from knowledge_assets.core.search import NoActiveModel
from knowledge_assets.mcp.reader import ServerBusy

STATIC = Path(__file__).parent / "static"


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"success": False, "error": message}, status_code=status)


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

    @app.exception_handler(StoreUnavailable)
    async def store_down(request: Request, exc: StoreUnavailable) -> JSONResponse:
        return _error(503, str(exc))

    @app.exception_handler(ServerBusy)
    async def busy(request: Request, exc: ServerBusy) -> JSONResponse:
        return _error(503, str(exc))

    @app.exception_handler(NoActiveModel)
    async def no_model(request: Request, exc: NoActiveModel) -> JSONResponse:
        return _error(409, f"{exc} (or use keyword search)")

    @app.exception_handler(LLMError)
    async def llm_failed(request: Request, exc: LLMError) -> JSONResponse:
        return _error(502, str(exc))

    @app.exception_handler(LLMConfigError)
    async def llm_config(request: Request, exc: LLMConfigError) -> JSONResponse:
        return _error(500, str(exc))

    app.include_router(routes.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    @app.get("/notes/{note_id:path}", include_in_schema=False)
    def page(note_id: str = "") -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    return app
