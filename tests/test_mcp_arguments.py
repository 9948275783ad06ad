"""Tool arguments over the real protocol: unknown arguments and bad values are refused in one
line that names the argument and what it accepts, before the store is touched."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from knowledge_assets.core.chunks.chunk_text import VISIBLE_PATTERN
from knowledge_assets.mcp.arguments import argument_problem
from tests.mcp_support import TOOLS, McpClient, server_env, stdio_session, text_of

pytestmark = pytest.mark.timeout(120)

PREFIX = "Error executing tool {}: "
SEARCH_ARGS = "query, tags, limit, mode, content_type, type, top_heading, per_note, offset"
# Argument checks come before any query, so the server needs no store: one that cannot be
# reached shows that a refused call never got as far as the database.
UNREACHABLE = "postgresql://postgres@/postgres?host=/nonexistent-socket-dir"


@pytest.fixture(scope="module")
def client() -> Iterator[McpClient]:
    with stdio_session({**server_env(""), "DATABASE_URL": UNREACHABLE}) as session:
        yield session


def refusal(client: McpClient, tool: str, arguments: dict[str, Any]) -> str:
    """The error of a call, without the SDK's prefix; it must be one line."""
    result = client.call(tool, arguments)
    assert result.is_error
    text = text_of(result)
    assert "\n" not in text, text
    assert text.startswith(PREFIX.format(tool)), text
    return text.removeprefix(PREFIX.format(tool))


def test_every_tool_publishes_that_it_takes_no_other_arguments(client: McpClient) -> None:
    tools = client.list_tools()
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.input_schema["additionalProperties"] is False, tool.name
    query = tools["search_docs"].input_schema["properties"]["query"]
    # A blank query is refused, and clients can see it: zero-width characters alone included.
    assert query["pattern"] == VISIBLE_PATTERN
    assert [bool(re.search(query["pattern"], q)) for q in ("梅雨", " \u200b\ufeff")] == [
        True,
        False,
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("search_docs", {"query": "日記", "limt": 3},
         "unknown argument 'limt' for search_docs; did you mean 'limit'?"),
        # A misspelt filter ran an unfiltered search that looked filtered.
        ("search_docs", {"query": "日記", "tag": ["日記"]},
         "unknown argument 'tag' for search_docs; did you mean 'tags'?"),
        ("search_docs", {"query": "日記", "kind": "x"},
         f"unknown argument 'kind' for search_docs; accepted: {SEARCH_ARGS}"),
        ("get_doc", {"file_path": "a.md", "pages": 2},
         "unknown argument 'pages' for get_doc; did you mean 'page'?"),
        # Its missing twin is the same mistake, not one more.
        ("get_doc", {"path": "docs/a.md"},
         "unknown argument 'path' for get_doc; did you mean 'file_path'?"),
        ("get_doc", {"path": "docs/a.md", "page": 0},
         "unknown argument 'path' for get_doc; did you mean 'file_path'? (and 1 more)"),
        ("get_doc", {"file_path": "a.md", "heading": "x"},
         "unknown argument 'heading' for get_doc; accepted: file_path, section, page, source"),
        ("similar_docs", {"file_path": "a.md", "limits": 2},
         "unknown argument 'limits' for similar_docs; did you mean 'limit'?"),
        ("list_tags", {"tag": "日記"},
         "unknown argument 'tag' for list_tags; list_tags takes no arguments"),
    ],
)  # fmt: skip
def test_an_unknown_argument_is_refused_with_the_accepted_ones(
    client: McpClient, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    assert refusal(client, tool, arguments) == expected


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("search_docs", {"query": "x", "limit": 0},
         "bad argument 'limit' for search_docs: 0 is not a whole number from 1 to 50"),
        ("search_docs", {"query": "x", "limit": 51},
         "bad argument 'limit' for search_docs: 51 is not a whole number from 1 to 50"),
        ("search_docs", {"query": "x", "limit": 2.5},
         "bad argument 'limit' for search_docs: 2.5 is not a whole number from 1 to 50"),
        ("search_docs", {"query": "x", "limit": "many"},
         "bad argument 'limit' for search_docs: \"many\" is not a whole number from 1 to 50"),
        ("search_docs", {"query": "x", "mode": "semantic"},
         "bad argument 'mode' for search_docs: \"semantic\" is not one of hybrid, vector, keyword"),
        ("search_docs", {"query": "   "},
         "bad argument 'query' for search_docs: \"   \" is not non-blank text of at most 2000 characters"),
        ("search_docs", {"query": "\u200b"},
         "bad argument 'query' for search_docs: \"\u200b\" is not non-blank text of at most 2000 characters"),
        ("search_docs", {"query": ""},
         "bad argument 'query' for search_docs: \"\" is not non-blank text of at most 2000 characters"),
        ("search_docs", {"limit": 3},
         "missing argument 'query' for search_docs: pass non-blank text of at most 2000 characters"),
        ("search_docs", {"query": "x", "tags": [1]},
         "bad argument 'tags' for search_docs: [1] is not a list of at most 100 strings of at most 200 characters each"),
        # Any other value matched no document, and the search said so as if tags were at fault.
        ("search_docs", {"query": "x", "type": ["markdown"]},
         "bad argument 'type' for search_docs: [\"markdown\"] is not a list of at most 2 values, each one of markdown_note, bookmark_json"),
        ("search_docs", {"query": "x", "tags": ["t" * 201]},
         f"bad argument 'tags' for search_docs: [\"{'t' * 57}… is not a list of at most 100 strings of at most 200 characters each"),
        ("search_docs", {"query": "x", "per_note": "sometimes"},
         "bad argument 'per_note' for search_docs: \"sometimes\" is not true or false"),
        # No coercion between JSON types: a mistaken type would run some other call.
        ("search_docs", {"query": "x", "limit": "3"},
         "bad argument 'limit' for search_docs: \"3\" is not a whole number from 1 to 50"),
        ("search_docs", {"query": "x", "limit": True},
         "bad argument 'limit' for search_docs: true is not a whole number from 1 to 50"),
        ("search_docs", {"query": "x", "per_note": "yes"},
         "bad argument 'per_note' for search_docs: \"yes\" is not true or false"),
        ("search_docs", {"query": "x", "per_note": "true"},
         "bad argument 'per_note' for search_docs: \"true\" is not true or false"),
        ("search_docs", {"query": "x", "per_note": 1},
         "bad argument 'per_note' for search_docs: 1 is not true or false"),
        ("get_doc", {"file_path": "a.md", "page": "2"},
         "bad argument 'page' for get_doc: \"2\" is not a whole number of at least 1"),
        ("similar_docs", {"file_path": "a.md", "limit": True},
         "bad argument 'limit' for similar_docs: true is not a whole number from 1 to 50"),
        ("get_doc", {"file_path": "a.md", "page": 0},
         "bad argument 'page' for get_doc: 0 is not a whole number of at least 1"),
        ("similar_docs", {"file_path": ["a.md"]},
         "bad argument 'file_path' for similar_docs: [\"a.md\"] is not text"),
        # A section no heading is: its 'no section' reply quoted all 100,000 characters.
        ("get_doc", {"file_path": "a.md", "section": "x" * 100_000},
         f"bad argument 'section' for get_doc: \"{'x' * 58}… is not text of at most 1000 characters"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_the_argument_and_what_it_accepts(
    client: McpClient, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    assert refusal(client, tool, arguments) == expected


NUL = "it holds a NUL character (\\u0000), which no note, tag, path or source does: remove it"


@pytest.mark.parametrize(
    ("tool", "arguments", "name"),
    [
        ("search_docs", {"query": "梅雨", "tags": ["日記", "a\x00b"]}, "tags"),
        ("search_docs", {"query": "梅雨\x00"}, "query"),
        ("tagged_docs", {"tag": "\x00"}, "tag"),
        ("get_doc", {"file_path": "a.md", "source": "lo\x00cal"}, "source"),
    ],
)
def test_text_with_a_nul_is_a_bad_value_before_the_store_is_asked(
    client: McpClient, tool: str, arguments: dict[str, Any], name: str
) -> None:
    """It was sent on to Postgres, whose refusal came back as a 'knowledge store error'."""
    assert refusal(client, tool, arguments) == f"bad argument {name!r} for {tool}: {NUL}"


def test_several_problems_name_the_first_and_count_the_rest(client: McpClient) -> None:
    message = refusal(client, "search_docs", {"query": "x", "limit": 0, "mode": "all"})
    assert message.startswith("bad argument 'limit' for search_docs: 0 is not")
    assert message.endswith(" (and 1 more)")


def _raw_reply(server: subprocess.Popen[bytes], line: str) -> dict[str, Any]:
    """Send one JSON-RPC line and read the reply, waiting at most 30 s."""
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(line.encode() + b"\n")
    server.stdin.flush()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([server.stdout], [], [], deadline - time.monotonic())
        if ready:
            reply: dict[str, Any] = json.loads(server.stdout.readline())
            return reply
    raise AssertionError("the server did not reply within 30 s")


def _raw_call(call: str) -> dict[str, Any]:
    """The reply to one ``tools/call`` with ``call`` (its params, as JSON text) from a client
    that writes its own JSON, sent to a new server after the handshake."""
    env = {**os.environ, **server_env(""), "DATABASE_URL": UNREACHABLE}
    command = [sys.executable, "-m", "knowledge_assets.mcp_server"]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env) as server:  # fmt: skip
        try:
            hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "raw", "version": "0"}}  # fmt: skip
            _raw_reply(server, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))  # fmt: skip
            return _raw_reply(server, f'{{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {call}}}')  # fmt: skip
        finally:
            server.kill()


def test_nan_from_a_client_that_sends_it_is_a_bad_value() -> None:
    # The SDK's own client sends NaN as null; other clients send the bare NaN token, which the
    # server's JSON parser accepts.
    reply = _raw_call('{"name": "search_docs", "arguments": {"query": "x", "limit": NaN}}')
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"] == PREFIX.format("search_docs") + (
        "bad argument 'limit' for search_docs: NaN is not a whole number from 1 to 50"
    )


class _Range(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    low: float | None = None


class _Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tags: list[str] | None = None
    dateRange: _Range | None = None


class _Search(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str
    filters: _Filters | None = None


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"query": "x", "filters": {"tag": ["a"]}},
         "unknown argument 'filters.tag' for search; did you mean 'filters.tags'?"),
        ({"query": "x", "filters": {"dateRange": {"from": 1}}},
         "unknown argument 'filters.dateRange.from' for search; accepted in filters.dateRange: low"),
        ({"query": "x", "filters": {"dateRange": {"low": float("nan")}}},
         "bad argument 'filters.dateRange.low' for search: NaN is not a finite number"),
        ({"query": "x", "filters": {"tags": "a"}},
         "bad argument 'filters.tags' for search: \"a\" is not a list of strings"),
    ],
)  # fmt: skip
def test_nested_objects_name_the_full_path_and_their_own_keys(
    arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        _Search.model_validate(arguments)
    assert (
        argument_problem("search", _Search.model_json_schema(), arguments, caught.value) == expected
    )
