"""The API's errors, all in one shape:

``{"success": false, "error": "<one line saying what went wrong and what to do>", "detail": …}``

``error`` is always that one line. ``detail`` is FastAPI's: the same line, or for a request body
or parameter that fails validation the list of problems (``loc``, ``msg``, ``type``, ``input``),
so clients written for FastAPI's replies keep working. An echoed ``input`` is cut to its start:
a reply never carries a large request back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

MAX_BODY_BYTES = 1024 * 1024
ECHO_CHARS = 100  # of an input echoed in a validation error
ECHO_ERRORS = 20  # validation problems listed; a 500-item list of bad tags is not 500 entries
UNEXPECTED = "the server failed on this request (its log has the details): retry, or report it with that log"  # fmt: skip
TOO_LARGE = (
    f"the request body is over {MAX_BODY_BYTES // 1024} KiB, more than any search or question "
    "needs: send a shorter query and fewer filters"
)
DOCS = "the endpoints are listed at /docs (and /openapi.json)"


def quoted(text: str) -> str:
    """``text`` quoted for a message, as ``repr`` does, and cut to its first characters when
    long: a name taken from an address (a note's path, an answer's id) is echoed, but never a
    large one whole."""
    if len(text) <= ECHO_CHARS:
        return repr(text)
    return f"{text[:ECHO_CHARS]!r}… ({len(text):,} characters)"


def error_body(message: str, detail: Any = None) -> dict[str, Any]:
    """An error reply's JSON (a streamed answer's ``error`` event carries the same)."""
    return {"success": False, "error": message, "detail": message if detail is None else detail}


def error_reply(status: int, message: str, detail: Any = None, headers: Mapping[str, str] | None = None) -> JSONResponse:  # fmt: skip
    return JSONResponse(error_body(message, detail), status_code=status, headers=headers)


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


def _echo(value: Any) -> Any:
    """An input as a validation error shows it: whole when short, else its first characters
    (a list or object: of its JSON text) and how long it was."""
    value = _encodable(value)
    text = value if isinstance(value, str) else None
    if isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False, default=str)
    if text is None or len(text) <= ECHO_CHARS:
        return value
    return f"{text[:ECHO_CHARS]}… ({len(text):,} characters)"


def _problem(error: dict[str, Any]) -> str:
    """One validation problem as the page shows it: the field's path, then what is wrong."""
    loc = [str(part) for part in error.get("loc", ())]
    if error.get("type") == "json_invalid":
        reason = (error.get("ctx") or {}).get("error", "")
        where = f" at character {loc[1]}" if len(loc) > 1 else ""
        return f"the request body is not valid JSON ({reason}{where}): send a JSON object"
    field = ".".join(loc[1:])  # without "body", "query" or "path"
    return f"{field}: {error.get('msg', '')}" if field else str(error.get("msg", ""))


def _invalid(exc: RequestValidationError) -> JSONResponse:
    errors = list(exc.errors())
    shown = [e | {"input": _echo(e["input"])} if "input" in e else e for e in errors[:ECHO_ERRORS]]
    message = "; ".join(_problem(e) for e in shown)
    if len(errors) > len(shown):
        message += f"; and {len(errors) - len(shown)} more problems"
    return error_reply(422, message, _encodable(jsonable_encoder(shown)))


def _http_message(request: Request, exc: HTTPException) -> str:
    """The route's own message, or for Starlette's bare status phrases one that says what to do."""
    if exc.status_code == 413:  # no route refuses a body itself: the size limit did
        return TOO_LARGE
    if exc.detail != HTTPStatus(exc.status_code).phrase:
        return str(exc.detail)
    where = f"{request.method} {request.url.path}"
    allowed = (exc.headers or {}).get("Allow")
    if exc.status_code == 404:
        return f"nothing at {where}: {DOCS}"
    if exc.status_code == 405 and allowed:
        return f"{where} is not allowed: use {allowed} ({DOCS})"
    return str(exc.detail)


def install(app: FastAPI, statuses: tuple[tuple[type[Exception], int, str], ...]) -> None:
    """Reply to every error in the one shape: validation problems, HTTP errors (a route's, an
    unknown path, a wrong method, a body too large), the errors in ``statuses`` (type, status
    and what to add to the message), and anything unexpected."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _invalid(exc)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return error_reply(exc.status_code, _http_message(request, exc), headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # The traceback goes to the server's log (Starlette re-raises after this reply); the
        # client gets no internals.
        return error_reply(500, UNEXPECTED)

    for error, status, suffix in statuses:
        app.add_exception_handler(error, _reply(status, suffix))


def _reply(status: int, suffix: str) -> Any:
    async def handler(request: Request, exc: Exception) -> JSONResponse:
        return error_reply(status, f"{exc}{suffix}")

    return handler
