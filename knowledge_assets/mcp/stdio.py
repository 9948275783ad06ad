"""The stdio transport, answering every request it can read an id from.

The SDK's stdio reader validates each line with pydantic's JSON parser, which refuses a JSON
escape of a lone UTF-16 surrogate (``"\\ud800"``: valid JSON grammar, but no character) and
hands the transport error to the session, which drops it (it only logs it): the request is never
answered and the client waits forever. :class:`KnowledgeServer` serves stdio as the SDK does,
but reads the session's stream through :class:`_AnswerUnreadable`, which replies to such a line
with a JSON-RPC error for its id, so the client gets an answer and the server goes on serving.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream, WriteStream

_Item = SessionMessage | Exception


class KnowledgeServer(MCPServer[Any]):
    """The SDK's server; its stdio transport answers requests the SDK could not read."""

    async def run_stdio_async(self) -> None:
        # As MCPServer.run_stdio_async, with the read side wrapped; the SDK offers no other
        # place between its stdio reader and the session.
        lowlevel = self._lowlevel_server
        async with stdio_server() as (read_stream, write_stream):
            await lowlevel.run(
                _AnswerUnreadable(read_stream, write_stream),
                write_stream,
                lowlevel.create_initialization_options(),
            )


class _AnswerUnreadable:
    """``stream`` without the requests it could not read, each answered on ``replies``."""

    def __init__(self, stream: ReadStream[_Item], replies: WriteStream[SessionMessage]) -> None:
        self._stream = stream
        self._replies = replies

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, which the session runs its handler in."""
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> _Item:
        while True:
            item = await self._stream.receive()
            reply = unreadable_reply(item) if isinstance(item, ValidationError) else None
            if reply is None:
                return item
            await self._replies.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> _AnswerUnreadable:
        return self

    async def __anext__(self) -> _Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _AnswerUnreadable:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def unreadable_reply(exc: ValidationError) -> JSONRPCError | None:
    """The error reply to a line the SDK could not read, when Python's JSON reads it as a
    request (so it has an id to answer); None for anything else, which the SDK handles."""
    line = next((e["input"] for e in exc.errors() if e["type"] == "json_invalid"), None)
    try:
        message = json.loads(line) if isinstance(line, str) else None
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None  # a notification, or an id no reply could carry
    where = _surrogate_at(message.get("params"), "params")
    if where is None:
        first = exc.errors()[0]["msg"].splitlines()[0]
        error = ErrorData(code=PARSE_ERROR, message=f"unreadable request: {first}")
    else:
        error = ErrorData(
            code=INVALID_PARAMS,
            message=f"invalid params: {where} holds an unpaired UTF-16 surrogate, which is no"
            " character; send the text as valid Unicode",
        )
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def _surrogate_at(value: Any, path: str) -> str | None:
    """Where in ``value`` (named ``path``) the first string holding a lone surrogate is."""
    if isinstance(value, str):
        return path if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None
    if isinstance(value, dict):
        if _surrogate_at("".join(value), path):
            return f"a key of {path}"
        items = [(f"{path}.{key}", v) for key, v in value.items()]
    elif isinstance(value, list):
        items = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
    else:
        return None
    return next((found for p, v in items if (found := _surrogate_at(v, p))), None)
