"""HNSW build sizing: memory from the vectors' needs, bounded by available memory and
configurable; parallel workers from the cores; what the progress lines say; and the graph
parameters the index is built with and searched at."""

from __future__ import annotations

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.index import index_build
from knowledge_assets.core.progress import Update
from knowledge_assets.core.search.hnsw_scan import EF_SEARCH_MAX, set_hnsw_scan


@pytest.mark.parametrize(
    ("text", "expected"),
    [("512MB", 512 * 2**20), ("2 GB", 2 * 2**30), ("1048576", 2**20), ("64kb", 64 * 1024)],
)
def test_sizes_parse(text: str, expected: int) -> None:
    assert index_build.parse_size(text) == expected


def test_a_bad_size_names_the_setting() -> None:
    with pytest.raises(ValueError, match="KA_INDEX_MEMORY"):
        index_build.parse_size("lots")


def test_memory_follows_the_vectors_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KA_INDEX_MEMORY", raising=False)
    monkeypatch.setattr(index_build, "available_memory", lambda: 16 * 2**30)
    small = index_build.build_memory(1_000, 512)
    large = index_build.build_memory(194_000, 512)
    assert small == index_build.MIN_BYTES  # a tiny index never gets less than the floor
    assert 194_000 * 512 * 4 < large <= 4 * 2**30  # the whole graph, at most a quarter of RAM
    assert index_build.build_memory(50_000_000, 512) == 4 * 2**30
    monkeypatch.setattr(index_build, "available_memory", lambda: 64 * 2**30)
    assert index_build.build_memory(50_000_000, 512) == index_build.MAX_BYTES


def test_memory_and_workers_can_be_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KA_INDEX_MEMORY", "3GB")
    monkeypatch.setenv("KA_INDEX_WORKERS", "0")
    assert index_build.build_memory(10, 512) == 3 * 2**30
    assert index_build.build_workers() == 0


def test_progress_line_has_count_rate_and_time_left() -> None:
    line = Update("chunks", "notes", 4200, 10000, 12.0).line()
    assert line == "chunks: 4,200/10,000 notes (42%), 350 notes/s, about 17 s left"
    assert Update("chunks", "notes", 10, 10, 2.0).line() == "chunks: 10/10 notes (100%), 5 notes/s"


def test_a_build_on_a_small_heap_is_still_planned_with_workers(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vectors stored out of line leave rag.embeddings' heap small: the build's settings must
    lift the planner's parallel-scan floor, for this transaction only."""
    monkeypatch.setenv("KA_INDEX_WORKERS", "1")
    monkeypatch.setenv("KA_INDEX_MEMORY", "256MB")
    query = (
        "SELECT current_setting('min_parallel_table_scan_size'),"
        " current_setting('max_parallel_maintenance_workers'),"
        " current_setting('maintenance_work_mem')"
    )
    with db.connect(db_url) as conn:
        default = conn.execute(query).fetchone()
        conn.commit()
        with conn.transaction():
            assert index_build.configure_build(conn, 500, 3) == (256 * 2**20, 1)
            assert conn.execute(query).fetchone() == ("0", "1", "256MB")
        assert conn.execute(query).fetchone() == default


def test_a_model_index_is_built_with_the_graph_parameters_searches_assume(db_url: str) -> None:
    """The index is built with ef_construction 40 and every search through it keeps 1.5x the
    candidates it asks for (the pair measured to keep recall@10)."""
    with db.connect(db_url) as conn:
        index_build.ensure_model_index(conn, "graph-params-test", 3)
        row = conn.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s",
            (index_build.model_index_name("graph-params-test"),),
        ).fetchone()
        assert row is not None and sorted(row[0]) == ["ef_construction=40", "m=16"]
        for asked, kept in ((40, "60"), (100, "150"), (1000, str(EF_SEARCH_MAX))):
            set_hnsw_scan(conn, ef_search=asked)
            assert conn.execute("SHOW hnsw.ef_search").fetchone() == (kept,)
        conn.rollback()
