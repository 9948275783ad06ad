"""The MCP server as a user's client starts it: a subprocess over stdio, with blocking calls."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

from knowledge_assets.core.database import db

CALL_TIMEOUT = 60  # the first search loads the query embedder
TOOLS = {"search_docs", "get_doc", "list_tags", "similar_docs"}


def server_env(url: str) -> dict[str, str]:
    env = {"DATABASE_URL": url, "PYTHONPATH": str(db.PROJECT_ROOT)}
    if os.environ.get("KA_READER_URL"):
        env["KA_READER_URL"] = os.environ["KA_READER_URL"]
    return env


class McpClient:
    """Blocking calls into an MCP ClientSession that lives in a portal's event loop."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def _run(self, fn: Any, *args: Any) -> Any:
        async def bounded() -> Any:
            with anyio.fail_after(CALL_TIMEOUT):
                return await fn(*args)

        return self.portal.call(bounded)

    def list_tools(self) -> dict[str, Any]:
        return {t.name: t for t in self._run(self.session.list_tools).tools}

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self._run(self.session.call_tool, name, arguments or {})


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def json_of(result: CallToolResult) -> Any:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


@contextmanager
def stdio_session(env: dict[str, str]) -> Iterator[McpClient]:
    """``python -m knowledge_assets.mcp_server`` with ``env``, initialised, over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "knowledge_assets.mcp_server"],
        env=env,
        cwd=str(db.PROJECT_ROOT),
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(stdio_client(params)) as (read, write),
        portal.wrap_async_context_manager(ClientSession(read, write)) as session,
    ):
        portal.call(session.initialize)
        yield McpClient(portal, session)
