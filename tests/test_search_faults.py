"""Search degrades gracefully: a failing query embedding falls back to keyword results in hybrid
mode, vector mode says why in one line, and MCP tells its failures apart and runs calls side by
side. Remote providers are loopback servers speaking Voyage's wire format."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from knowledge_assets.core import search
from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import keyword_sql
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.mcp.failures import describe_failure
from knowledge_assets.mcp.reader import ReaderStore, reader_url
from knowledge_assets.mcp.tools import KnowledgeTools
from tests.fakes.voyage_server import FakeEmbeddingServer

from .conftest import EXAMPLE_VAULT

KEY = "pa-search-faults-key-0001"


@pytest.fixture
def voyage() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(api_key=KEY) as fake:
        yield fake


@pytest.fixture
def voyage_store(db_url: str, voyage: FakeEmbeddingServer) -> str:
    """The sample vault indexed with voyage-3-lite (served by the loopback server), active."""
    with db.connect(db_url) as conn:
        source = LocalSource(EXAMPLE_VAULT)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=512)
        embedder = make_embedder("voyage", api_key=KEY, base_url=voyage.voyage_base_url)
        assert embed_missing(conn, embedder).active
    return db_url


@pytest.mark.parametrize("failure", ["bad key", "provider down"])
def test_hybrid_falls_back_to_keyword_results_with_a_warning(
    voyage_store: str, voyage: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-wrong-key-000000" if failure == "bad key" else KEY)
    if failure == "provider down":
        voyage.fail(503, times=100)  # "Service is temporarily unavailable", on every request
    with db.connect(voyage_store) as conn:
        response = search.search(conn, "チャンキング", mode="hybrid")
        assert response.hits and all(h.retrievers == ("keyword",) for h in response.hits)
        assert len(response.warnings) == 1
        assert (
            "voyage-3-lite" in response.warnings[0]
            and "keyword results only" in response.warnings[0]
        )
        with pytest.raises(search.QueryEmbeddingFailed) as info:
            search.search(conn, "チャンキング", mode="vector")
    message = str(info.value)
    assert "\n" not in message and "voyage-3-lite" in message and "keyword" in message
    assert "pa-wrong-key" not in message and KEY not in message


def test_cli_search_warns_and_vector_mode_is_one_line(
    voyage_store: str, voyage: FakeEmbeddingServer
) -> None:
    env = os.environ | {"DATABASE_URL": voyage_store, "VOYAGE_API_KEY": "pa-wrong-key-000000"}
    run = [sys.executable, "-m", "knowledge_assets.cli", "search", "チャンキング"]
    hybrid = subprocess.run(run, capture_output=True, text=True, timeout=120, env=env)
    assert hybrid.returncode == 0 and "[keyword]" in hybrid.stdout
    assert hybrid.stderr.startswith("warning: query embedding with voyage-3-lite failed")
    vector = subprocess.run([*run, "--mode", "vector"], capture_output=True, text=True,
                            timeout=120, env=env)  # fmt: skip
    assert vector.returncode != 0 and "Traceback" not in vector.stderr
    assert len(vector.stderr.strip().splitlines()) == 1


def test_mcp_search_reports_the_fallback_and_the_vector_failure(
    voyage_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-wrong-key-000000")
    store = ReaderStore(reader_url(voyage_store))
    tools = KnowledgeTools(store)
    try:
        result = tools.search_docs("チャンキング", mode="hybrid").structured_content
        assert result["hits"] and "keyword results only" in result["warnings"][0]
        with pytest.raises(ToolError, match="cannot embed the query with voyage-3-lite"):
            tools.search_docs("チャンキング", mode="vector")
        with pytest.raises(ToolError, match=r"bad input: the query is \d+ characters long"):
            tools.search_docs("あ" * (search.MAX_QUERY_CHARS + 1), mode="keyword")
    finally:
        store.close()


def test_mcp_tells_timeout_bad_input_and_unreachable_apart(db_url: str) -> None:
    store = ReaderStore(reader_url(db_url))
    failures: list[str] = []
    try:
        for fn in (
            lambda c: c.execute("SET LOCAL statement_timeout = 100; SELECT pg_sleep(2)"),
            # What a huge query did to the tsquery parser: "stack depth limit exceeded".
            lambda c: c.execute(
                "SELECT to_tsquery('simple', %s)", ("(" * 100_000 + "a" + ")" * 100_000,)
            ),
        ):
            try:
                store.run(fn)
            except psycopg.Error as exc:
                failures.append(describe_failure(exc))
    finally:
        store.close()
    gone = ReaderStore("postgresql://ka_reader@/postgres?host=/nonexistent-dir&connect_timeout=2")
    with pytest.raises(psycopg.OperationalError) as unreachable:
        gone.run(lambda c: c.execute("SELECT 1"))
    failures.append(describe_failure(unreachable.value))
    assert failures[0].startswith("timeout:")
    assert failures[1].startswith("bad input: the query is too complex")
    assert failures[2].startswith("cannot reach the knowledge store")


def test_one_slow_call_does_not_hold_up_another(db_url: str) -> None:
    store = ReaderStore(reader_url(db_url))
    finished: dict[str, float] = {}
    start = time.perf_counter()

    def slow() -> None:
        store.run(lambda c: c.execute("SELECT pg_sleep(3)"))
        finished["slow"] = time.perf_counter() - start

    thread = threading.Thread(target=slow)
    try:
        thread.start()
        time.sleep(0.3)  # the slow call holds its connection now
        store.run(lambda c: c.execute("SELECT 1").fetchone())
        finished["quick"] = time.perf_counter() - start
        thread.join(timeout=30)
    finally:
        store.close()
    assert finished["quick"] < 2.0 < finished["slow"]


def test_calls_beyond_the_connection_limit_wait_a_bounded_time(db_url: str) -> None:
    from knowledge_assets.mcp.reader import ServerBusy

    store = ReaderStore(reader_url(db_url), max_connections=1, wait_s=0.5)
    thread = threading.Thread(target=lambda: store.run(lambda c: c.execute("SELECT pg_sleep(2)")))
    try:
        thread.start()
        time.sleep(0.3)
        began = time.perf_counter()
        with pytest.raises(ServerBusy, match="retry in a moment"):
            store.run(lambda c: c.execute("SELECT 1"))
        assert time.perf_counter() - began < 1.5
        thread.join(timeout=30)
    finally:
        store.close()


def test_with_a_companion_the_keyword_leg_runs_while_the_query_is_embedded(
    voyage_store: str, voyage: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    began: list[float] = []
    bm25 = keyword_sql.keyword_bm25

    def timed(*args: Any, **kwargs: Any) -> Any:
        began.append(time.perf_counter())
        return bm25(*args, **kwargs)

    monkeypatch.setattr(keyword_sql, "keyword_bm25", timed)
    voyage.delay_s = 1.0  # the provider takes a second to answer
    query = "チャンキングの設計を見直した理由"  # embedded nowhere else, so not cached yet
    with db.connect(voyage_store) as conn, db.connect(voyage_store) as companion:
        start = time.perf_counter()
        paired = search.search(conn, query, companion=companion)
        assert began[0] - start < 0.5 and paired.timings["embed_ms"] >= 1000
        voyage.delay_s = 0.0
        alone = search.search(conn, query)  # the vector comes from the query cache now
    assert paired.hits == alone.hits
    assert {"keyword", "vector"} <= {r for h in paired.hits for r in h.retrievers}


def test_the_api_tells_a_timeout_and_a_query_over_the_limits_from_a_bug(db_url: str) -> None:
    """Both fell through to HTTP 500 "report it", with a traceback in the server's log."""
    from knowledge_assets.api.app import _STATUSES
    from knowledge_assets.api.store import QueryTooComplex, ReadTimedOut, read

    store = ReaderStore(reader_url(db_url))
    try:
        with pytest.raises(ReadTimedOut, match="ran over 30 s and was cancelled"):
            read(store, lambda c, _: c.execute("SET LOCAL statement_timeout = 100; SELECT pg_sleep(2)"))  # fmt: skip
        with pytest.raises(QueryTooComplex, match=r"too complex to search .*; shorten it"):
            read(store, lambda c, _: c.execute("SELECT to_tsquery('simple', %s)", ("(" * 100_000 + "a" + ")" * 100_000,)))  # fmt: skip
        assert read(store, lambda c, _: c.execute("SELECT 1").fetchone()) == (1,)  # still usable
    finally:
        store.close()
    statuses = {error: status for error, status, _ in _STATUSES}
    assert (statuses[ReadTimedOut], statuses[QueryTooComplex]) == (503, 422)
