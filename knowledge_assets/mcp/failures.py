"""A failed tool call, worded for the LLM client that made it: what went wrong and what to do,
in one line, never a traceback."""

from __future__ import annotations

import psycopg

from knowledge_assets.core import search as core_search
from knowledge_assets.core.database.db import DatabaseUrlError
from knowledge_assets.core.database.server_output import EmbeddedStoreError
from knowledge_assets.core.secrets import redact
from knowledge_assets.mcp.reader import (
    STATEMENT_TIMEOUT_MS,
    ServerBusy,
    is_unreachable,
    over_limits,
)

__all__ = ["describe_failure"]


def describe_failure(exc: BaseException) -> str:
    """The real reason a tool call failed, worded for the caller: an unreachable store, a
    statement timeout and bad input each say so, with what to do."""
    if isinstance(exc, psycopg.errors.QueryCanceled):
        seconds = STATEMENT_TIMEOUT_MS // 1000
        return f"timeout: the search ran over {seconds} s and was cancelled; narrow the query"
    if isinstance(exc, psycopg.Error) and over_limits(exc):
        return f"bad input: the query is too complex to search ({_message(exc)}); shorten it"
    if isinstance(exc, psycopg.OperationalError) and is_unreachable(exc):
        return (
            f"cannot reach the knowledge store as a read-only reader: {_message(exc)}. Start the "
            "store (or fix DATABASE_URL); on a new store run `knowledge-assets migrate`, which "
            "creates the ka_reader role, or set KA_READER_URL."
        )
    if isinstance(exc, psycopg.Error):
        return f"knowledge store error: {_message(exc)}"
    if isinstance(exc, EmbeddedStoreError):  # the embedded store could not start: a full disk
        return exc.one_line()
    if isinstance(exc, DatabaseUrlError):  # the server's own setting, not the caller's input
        return f"setup error: {_message(exc)}; fix {exc.variable} and restart the MCP server"
    if isinstance(exc, (core_search.QueryEmbeddingFailed, ServerBusy)):
        return _message(exc)
    if isinstance(exc, (ValueError, LookupError)):  # bad arguments, no active model yet
        return f"bad input: {_message(exc)}" if isinstance(exc, ValueError) else _message(exc)
    return f"unexpected error ({type(exc).__name__}): {_message(exc)}"


def _message(exc: BaseException) -> str:
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    text = redact(text)  # a reader URL libpq cannot parse is quoted whole, password too
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__
