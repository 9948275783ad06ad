"""What the server refuses before a route runs: a request addressed to a host it does not answer
to, an ``/api`` call without the token when one is needed, a body that is not JSON, and a body
over the size limit."""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import FastAPI, Request
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from knowledge_assets.api.errors import MAX_BODY_BYTES, TOO_LARGE, error_reply
from knowledge_assets.api.settings import HOSTS_ENV, ApiSettings


class BodyLimit:
    """Refuse a request body over ``limit`` bytes, as its Content-Length announces it or as its
    chunks add up, with a 413 in the API's error shape (Starlette's own limit answers in plain
    text). The largest request the API serves (a 2,000-character question with 100 tags of 200
    characters, every character escaped as JSON allows) stays well under 1 MiB."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:  # refused unread
            await error_reply(413, TOO_LARGE)(scope, receive, send)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.limit:  # FastAPI passes this on to the error handlers
                raise HTTPException(413)
            return message

        await self.app(scope, limited, send)


def _not_json(request: Request) -> str | None:
    """How a request body not declared as JSON was sent ("as 'text/plain'", "without a
    Content-Type"), else None. FastAPI reads a body as JSON only when it is declared so."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return None
    declared = request.headers.get("content-type", "").strip()
    if not declared:
        headers = request.headers
        sent = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
        return "without a Content-Type" if sent else None  # no body: the route says what it needs
    kind = declared.split(";", 1)[0].strip().lower()
    if kind == "application/json" or kind.endswith("+json"):
        return None
    return f"as {kind if len(kind) <= 100 else kind[:100] + '…'!r}"


def install(app: FastAPI, settings: ApiSettings) -> None:
    """The checks, the host first: a page that had its own name resolve to this machine (DNS
    rebinding) learns nothing, not even whether a token is needed."""
    app.add_middleware(BodyLimit)

    # Every body the API takes is JSON. One sent as a form (curl's -d) or as text was refused
    # only as "not a valid dictionary"; and those are what a page of another site may post here
    # without the browser asking first, so they go no further than this.
    @app.middleware("http")
    async def json_body(request: Request, call_next: Any) -> Any:
        sent = _not_json(request) if request.url.path.startswith("/api/") else None
        if sent is not None:
            return error_reply(415, (
                f"the request body was sent {sent}, not as JSON: send a JSON object with"
                " 'Content-Type: application/json' (curl: -H 'Content-Type: application/json')"
            ))  # fmt: skip
        return await call_next(request)

    @app.middleware("http")
    async def bearer_token(request: Request, call_next: Any) -> Any:
        if settings.needs_token and request.url.path.startswith("/api/"):
            # The scheme is case-insensitive (RFC 9110 §11.1): "bearer <it>" is the same token.
            scheme, _, sent = request.headers.get("authorization", "").strip().partition(" ")
            right = scheme.lower() == "bearer"
            if not (hmac.compare_digest(sent.strip().encode(), settings.token.encode()) and right):
                message = "missing or wrong bearer token: send 'Authorization: Bearer <KA_API_TOKEN>'"  # fmt: skip
                return error_reply(401, message, headers={"WWW-Authenticate": "Bearer"})
        return await call_next(request)

    @app.middleware("http")  # added last, so it runs first
    async def known_host(request: Request, call_next: Any) -> Any:
        host = request.headers.get("host", "")
        if not settings.answers_to(host):
            shown = host if len(host) <= 100 else host[:100] + "…"
            return error_reply(400, (
                f"this server does not answer to the host {shown!r}, only to localhost, 127.0.0.1, "
                f"[::1], the address it serves on and the names in {HOSTS_ENV}: to reach it by "
                f"this name, add it to {HOSTS_ENV} and restart the server"
            ))  # fmt: skip
        return await call_next(request)
