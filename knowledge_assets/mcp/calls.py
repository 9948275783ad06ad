"""What every MCP tool shares: the reader store it runs on, and failures turned into a
ToolError a client can act on (database unreachable, no embedding model yet) with any secret
in the message redacted."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import psycopg
from mcp.server.mcpserver.exceptions import ToolError

from knowledge_assets.core import secrets
from knowledge_assets.mcp.failures import describe_failure
from knowledge_assets.mcp.reader import ReaderStore

T = TypeVar("T")


class StoreCalls:
    """Runs a tool's statements on one ReaderStore's connections."""

    def __init__(self, store: ReaderStore) -> None:
        self.store = store

    def _call(self, fn: Callable[[psycopg.Connection], T]) -> T:
        return self._call_pair(lambda conn, _companion: fn(conn), pair=False)

    def _call_pair(
        self, fn: Callable[[psycopg.Connection, psycopg.Connection | None], T], *,
        pair: bool = True,
    ) -> T:  # fmt: skip
        try:
            return self.store.run_pair(fn) if pair else self.store.run(lambda c: fn(c, None))
        except Exception as exc:
            raise ToolError(secrets.redact(describe_failure(exc))) from None
