"""An embedded store made by the previous server (pgserver 0.1.4: PostgreSQL 16, pgvector 0.6.2)
is carried over to PostgreSQL 18 + pgvector 0.8 the first time it is opened, with every row."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.database import db, embedded, pgvector_check


def _old_store(pgdata: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The server earlier versions shipped (dev extra; it has no wheels for Python 3.13+).
    pgserver = pytest.importorskip("pgserver", reason="pgserver 0.1.4 installs on Python < 3.13")
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    url = server.get_uri()
    # Earlier versions made their stores on its pgvector 0.6.2; this one refuses it.
    with monkeypatch.context() as earlier:
        earlier.setattr(pgvector_check, "MIN_VERSION", (0, 6))
        db.migrate(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO rag.models (model, provider, dims, max_tokens) VALUES ('m', 'p', 3, 10)"
        )
        conn.execute(
            "INSERT INTO rag.embeddings (model, text_hash, dims, embedding)"
            " VALUES ('m', 'h1', 3, '[1,2,3]'), ('m', 'h2', 3, '[0,1,0]')"
        )
        conn.execute(
            "CREATE INDEX hnsw_m ON rag.embeddings USING hnsw ((embedding::vector(3))"
            " vector_cosine_ops) WHERE model = 'm'"
        )
    server.cleanup()


@pytest.mark.slow
def test_old_store_is_upgraded_with_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pgdata = tmp_path / "pg"
    _old_store(pgdata, monkeypatch)
    assert embedded.data_major(pgdata) == 16

    url = db.embedded_url(pgdata)

    assert embedded.data_major(pgdata) == 18
    assert (tmp_path / "pg.pg16" / "PG_VERSION").read_text().strip() == "16"  # kept
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SHOW server_version_num").fetchone()[0] >= "180000"
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert tuple(int(x) for x in version.fetchone()[0].split(".")[:2]) >= (0, 8)
        rows = conn.execute(
            "SELECT text_hash, embedding::text FROM rag.embeddings ORDER BY 1"
        ).fetchall()
        assert rows == [("h1", "[1,2,3]"), ("h2", "[0,1,0]")]
        assert conn.execute("SELECT to_regclass('rag.hnsw_m')").fetchone()[0] is not None
    assert db.migrate(url) == []  # the applied migrations came along: nothing re-applied


def test_unknown_old_version_is_refused_and_left_alone(tmp_path: Path) -> None:
    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    (pgdata / "PG_VERSION").write_text("13\n")
    with pytest.raises(embedded.StoreUpgradeError, match="PostgreSQL 13"):
        embedded.upgrade(pgdata, log=lambda _m: None)
    assert (pgdata / "PG_VERSION").read_text() == "13\n"
