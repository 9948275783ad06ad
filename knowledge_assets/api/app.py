"""The HTTP API (seed 001's endpoints) and the search page, on FastAPI.

``knowledge-assets serve`` runs it with uvicorn on 127.0.0.1:8000; the OpenAPI docs are at
``/docs`` (served from this machine) and ``/openapi.json``. Searches read as the read-only
``ka_reader`` role; answers are recorded as ``ka_qa_writer``. Off loopback every ``/api`` call
needs ``Authorization: Bearer $KA_API_TOKEN``; on any interface only requests addressed to
loopback's names, the served address or ``KA_API_HOSTS`` are answered. Errors: see
:mod:`knowledge_assets.api.errors`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Response
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from knowledge_assets.answer import Asker, LLMConfigError, LLMError
from knowledge_assets.api import attachment_routes, note_routes, routes, status_routes, tag_routes
from knowledge_assets.api.errors import install as install_errors
from knowledge_assets.api.guards import install as install_guards
from knowledge_assets.api.note_cache import RenderCache
from knowledge_assets.api.note_html import RendersBusy, RenderSlots
from knowledge_assets.api.settings import ApiSettings
from knowledge_assets.api.store import QueryTooComplex, ReadTimedOut, StoreUnavailable, pooled
from knowledge_assets.core.index.coverage import RecentCount
from knowledge_assets.core.search import NoActiveModel, QueryEmbeddingFailed
from knowledge_assets.core.search.note_sources import AmbiguousNote, UnknownSource
from knowledge_assets.core.search.operators import UnsearchableQuery
from knowledge_assets.mcp.reader import ReaderStore, ServerBusy

DESCRIPTION = """Search your notes and ask them questions (answers cite the notes).

Every error is JSON of one shape: `{"success": false, "error": "<what went wrong and what to do>",
"detail": ...}`. `error` is one line to show a person; `detail` is the same line, or, when the
request fails validation (422), FastAPI's list of problems (`loc`, `msg`, `type`, and `input`
cut to its first 100 characters). Request bodies over 1 MiB are refused (413), and bodies sent
without `Content-Type: application/json` (415). Durations
(`timing`, `metadata.responseTime`, `metadata.searchTime`) are in milliseconds."""

STATIC = Path(__file__).parent / "static"
# The page's icon (a magnifier), also at /favicon.ico, where browsers look for one by default.
ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" '
    'rx="7" fill="#2f6fdb"/><circle cx="14" cy="14" r="7" fill="none" stroke="#fff" '
    'stroke-width="3"/><path d="M19 19l7 7" stroke="#fff" stroke-width="3.5" '
    'stroke-linecap="round"/></svg>'
)

# The page runs only the scripts it loads from this server: the note view shows notes' HTML
# through an allowlist, and should anything slip past it (a handler, a javascript: address), the
# browser still runs none of it. Inline styles stay: Markdown tables align their cells with them.
# Images: the vault's, data: addresses (the note view's, when a token is needed), and a note's
# web images from their address, as Obsidian shows them (an image runs no script).
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
    " img-src 'self' data: https: http:;"
    " object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

# Errors the routes let through, with the status that says whose fault they are and what to add
# to their message.
_STATUSES: tuple[tuple[type[Exception], int, str], ...] = (
    (StoreUnavailable, 503, ""),
    (ReadTimedOut, 503, ""),
    (QueryTooComplex, 422, ""),
    (ServerBusy, 503, ""),
    (RendersBusy, 503, ""),
    (NoActiveModel, 409, " (or use keyword search)"),
    (QueryEmbeddingFailed, 502, ""),
    (UnknownSource, 404, ""),
    (AmbiguousNote, 409, ""),
    (UnsearchableQuery, 422, ""),
    (LLMError, 502, ""),
    (LLMConfigError, 500, ""),
)


def create_app(
    settings: ApiSettings, asker: Asker | None = None, readers: ReaderStore | None = None,
    renders: RenderSlots | None = None,
) -> FastAPI:  # fmt: skip
    """The application; opens no connection until a request arrives. It reads on ``readers``
    (default: the server's pool of read-only connections) and renders notes in ``renders``
    (default: ``KA_NOTE_RENDERS`` at once), keeping them in a cache of ``KA_NOTE_CACHE_MB``."""
    readers = readers or pooled(settings.reader_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        readers.close()

    # The API docs load Swagger UI from fastapi-offline's copy: nothing is fetched from a CDN
    # (nothing leaves the machine, and /docs works offline). No ReDoc: its page fetches its
    # maker's logo from their site.
    app = FastAPIOffline(
        redoc_url=None,
        title="knowledge-assets",
        description=DESCRIPTION,
        version="1",
        lifespan=lifespan,
        favicon_url="/favicon.ico",
        static_url="/docs-static",
        swagger_ui_parameters={"validatorUrl": None},  # no badge fetched from swagger.io
    )
    app.state.settings = settings
    app.state.asker = asker or Asker()
    app.state.readers = readers
    app.state.render_slots = renders or RenderSlots.from_env()
    app.state.note_cache = RenderCache.from_env()
    app.state.missing_vectors = RecentCount()  # passages without a vector, counted once a minute
    install_guards(app, settings)
    install_errors(app, _STATUSES)
    app.include_router(routes.router)
    app.include_router(tag_routes.router)
    app.include_router(note_routes.router)
    app.include_router(attachment_routes.router)
    app.include_router(status_routes.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    @app.api_route("/notes/{note_id:path}", methods=["GET", "HEAD"], include_in_schema=False)
    def page(note_id: str = "") -> FileResponse:
        return FileResponse(
            STATIC / "index.html",
            media_type="text/html; charset=utf-8",
            headers={"Content-Security-Policy": PAGE_POLICY},
        )

    @app.api_route("/favicon.ico", methods=["GET", "HEAD"], include_in_schema=False)
    def icon() -> Response:
        return Response(ICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})  # fmt: skip

    return app
