"""The MCP server as a user's client starts it: a subprocess over stdio, with blocking calls."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
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
TOOLS = {"search_docs", "get_doc", "list_tags", "tagged_docs", "similar_docs", "linking_docs"}


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


class RawStdio:
    """The server over stdio, spoken to line by line: a client that sends what the SDK's client
    never would (a lone surrogate escape), and waits for each reply a bounded time."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self._stdin, self._stdout = proc.stdin, proc.stdout
        self._ready = selectors.DefaultSelector()
        self._ready.register(self._stdout, selectors.EVENT_READ)

    def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        self._stdin.write(line.encode() + b"\n")
        self._stdin.flush()

    def reply(self, seconds: float = CALL_TIMEOUT) -> dict[str, Any] | None:
        """The next line the server writes, None when it writes nothing within ``seconds``."""
        if not self._ready.select(seconds):
            return None
        line = self._stdout.readline()
        return json.loads(line) if line else None


@contextmanager
def raw_stdio(env: dict[str, str]) -> Iterator[RawStdio]:
    """``python -m knowledge_assets.mcp_server`` with ``env``, initialised, spoken to raw."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "knowledge_assets.mcp_server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
        cwd=str(db.PROJECT_ROOT),
    )
    client = RawStdio(proc)
    try:
        client.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})  # fmt: skip
        assert client.reply() is not None, "the server did not answer initialize"
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield client
    finally:
        proc.kill()
        proc.wait(timeout=20)
