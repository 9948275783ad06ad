"""The migration runner: idempotent, recorded, refuses edited files."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.database import db


def test_migrate_from_blank_is_recorded_and_idempotent(blank_db_url: str) -> None:
    first = db.migrate(blank_db_url)
    assert "001_core.sql" in first
    assert db.migrate(blank_db_url) == []
    with db.connect(blank_db_url) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM meta.migrations")}
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_schema || '.' || table_name FROM information_schema.tables"
            )
        }
    assert "001_core.sql" in names
    assert {"raw.docs_github", "raw.docs_local", "rag.chunks", "rag.embeddings"} <= tables
    assert "rag.documents_with_metadata" in tables


def test_edited_migration_is_refused(blank_db_url: str, tmp_path: Path) -> None:
    sql_dir = tmp_path / "sql"
    shutil.copytree(db.SQL_DIR, sql_dir)
    db.migrate(blank_db_url, sql_dir)
    target = sql_dir / "001_core.sql"
    target.write_text(target.read_text() + "\n-- edited\n")
    with pytest.raises(db.MigrationError, match=r"001_core\.sql was edited"):
        db.migrate(blank_db_url, sql_dir)


def test_new_migration_is_applied_after_existing(blank_db_url: str, tmp_path: Path) -> None:
    sql_dir = tmp_path / "sql"
    shutil.copytree(db.SQL_DIR, sql_dir)
    db.migrate(blank_db_url, sql_dir)
    (sql_dir / "900_extra.sql").write_text("CREATE TABLE meta.extra (x int);")
    assert db.migrate(blank_db_url, sql_dir) == ["900_extra.sql"]


@pytest.mark.parametrize("bad_name", ["1_x.sql", "001-x.sql", "views.sql"])
def test_misnamed_sql_file_is_refused(tmp_path: Path, bad_name: str) -> None:
    (tmp_path / bad_name).write_text("SELECT 1;")
    with pytest.raises(db.MigrationError, match=r"expected NNN_name\.sql"):
        db.load_migrations(tmp_path)


def _migrate_without(url: str, tmp_path: Path, migration: str) -> None:
    """Migrate ``url`` as the version before ``migration`` did: every other file but it."""
    older = tmp_path / "sql"
    shutil.copytree(db.SQL_DIR, older)
    (older / migration).unlink()
    db.migrate(url, older)


def test_float32_model_indexes_become_halfvec_and_search_uses_them(
    blank_db_url: str, tmp_path: Path
) -> None:
    from knowledge_assets.core.index.index_build import model_index_name

    _migrate_without(blank_db_url, tmp_path, "010_halfvec_and_bulk_writes.sql")
    name = model_index_name("m")
    with db.connect(blank_db_url) as conn:  # a store as the previous version left it
        conn.execute(
            "INSERT INTO rag.embeddings (model, text_hash, dims, embedding)"
            " SELECT 'm', 'h' || i, 3, ('[' || i || ',1,' || (i % 7) || ']')::vector"
            " FROM generate_series(1, 200) i"
        )
        conn.execute(
            f"CREATE INDEX {name} ON rag.embeddings USING hnsw"
            " ((embedding::vector(3)) vector_cosine_ops) WHERE model = 'm'"
        )
    assert db.migrate(blank_db_url) == ["010_halfvec_and_bulk_writes.sql"]
    with db.connect(blank_db_url) as conn:
        row = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (name,))
        definition = row.fetchone()
        assert definition is not None
        assert "halfvec(3)" in definition[0] and "halfvec_cosine_ops" in definition[0]
        assert "model = 'm'" in definition[0]
        # Only the index can give the order without a sort (pgvector 0.7 costs the HNSW scan of
        # 200 rows above sorting them).
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_sort = off")
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN SELECT text_hash FROM rag.embeddings WHERE model = 'm'"
                " ORDER BY (embedding::halfvec(3)) <=> '[1,1,1]'::halfvec(3) LIMIT 5"
            )
        )
        assert name in plan


def test_vault_notes_stored_without_a_content_type_become_notes(
    blank_db_url: str, tmp_path: Path
) -> None:
    from tests.test_search import ingest

    _migrate_without(blank_db_url, tmp_path, "024_vault_notes_content_type.sql")
    ingest(blank_db_url, None)
    with db.connect(blank_db_url) as conn:  # as the previous version wrote them
        conn.execute("UPDATE rag.latest_docs SET content_type = NULL WHERE content_type = 'notes'")
    assert db.migrate(blank_db_url) == ["024_vault_notes_content_type.sql"]
    with db.connect(blank_db_url) as conn:
        types = dict(conn.execute("SELECT file_path, content_type FROM rag.latest_docs"))
    assert types["projects/garden.md"] == "project"  # its own frontmatter's
    assert set(types.values()) == {"project", "notes"}


@pytest.mark.parametrize(
    "tsv",
    [
        "",
        "'東京':1A,5D '大学':2A '東京 大学':1B 'の':3D,4D,9D",
        "'a':1A,2B,3C,4D 'b c':2C",
        " ".join(f"'w{i}':" + ",".join(f"{p}D" for p in range(1, 300)) for i in range(3)),
    ],
)
def test_token_count_counts_heading_and_body_positions(db_url: str, tsv: str) -> None:
    with db.connect(db_url) as conn:
        row = conn.execute(
            "SELECT rag.tsvector_token_count(%(v)s::tsvector), (SELECT count(*)::integer"
            " FROM unnest(%(v)s::tsvector) u, unnest(u.weights) w WHERE w IN ('A', 'D'))",
            {"v": tsv},
        ).fetchone()
    assert row is not None and row[0] == row[1]


def _tag_indexes(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_indexes WHERE schemaname = 'raw'"
        " AND indexdef LIKE '%%USING gin (%%frontmatter -> ''tags''%%'"
    )
    return {r[0] for r in rows}


def test_unused_tag_indexes_are_dropped_with_the_copies_of_declared_sources(
    blank_db_url: str, tmp_path: Path
) -> None:
    before = tmp_path / "sql"
    before.mkdir()
    for path in sorted(db.SQL_DIR.glob("0*.sql")):  # the repeatable files are today's
        if path.name < "031":
            shutil.copy(path, before / path.name)
    db.migrate(blank_db_url, before)
    with db.connect(blank_db_url) as conn:
        conn.execute("SELECT raw.ensure_docs_table('docs_notes')")  # a source declared then
        conn.commit()
        assert _tag_indexes(conn) == {"docs_local", "docs_github", "docs_notes"}
    db.migrate(blank_db_url)
    with db.connect(blank_db_url) as conn:
        conn.execute("SELECT raw.ensure_docs_table('docs_later')")  # and one declared now
        assert _tag_indexes(conn) == set()
        assert conn.execute("SELECT to_regclass('rag.latest_docs_tags_idx')").fetchone() == (None,)


def test_a_database_migrated_while_another_updates_a_shared_role_is_migrated_all_the_same(
    server_url: str, db_url: str
) -> None:
    """Roles belong to the server: a database migrated while another one's transaction updates
    ka_reader's settings (two stores on one server, a test suite's workers) failed with "tuple
    concurrently updated" once that transaction committed. Its migration runs again instead."""
    from tests.conftest import new_database
    from tests.process_support import wait_for

    outcome: list[object] = []
    with new_database(server_url) as fresh, psycopg.connect(db_url) as holder:
        _update_reader_role(holder)
        name = psycopg.conninfo.conninfo_to_dict(fresh)["dbname"]

        def run() -> None:
            try:
                outcome.append(db.migrate(fresh))
            except Exception as exc:  # reported by the assertion below
                outcome.append(exc)

        worker = threading.Thread(target=run)
        worker.start()
        with psycopg.connect(server_url, autocommit=True) as watcher:
            waiting = wait_for(
                lambda: watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = %s AND wait_event_type = 'Lock'", (name,)
                ).fetchone()[0],  # type: ignore[index]
                30, every=0.05,
            )  # fmt: skip
        holder.commit()  # the migration's update of the same row now fails: it runs again
        worker.join(60)
        assert waiting and not worker.is_alive()
        assert outcome and isinstance(outcome[0], list), outcome
        assert "002_search.sql" in outcome[0] and db.migrate(fresh) == []


def _update_reader_role(conn: psycopg.Connection) -> None:
    """ka_reader's settings updated in a transaction left open. On a shared server (``DATABASE_URL``)
    another test worker's migration may update them at the same moment: tried again, at most 5
    times."""
    for attempt in range(5):
        try:
            conn.execute("ALTER ROLE ka_reader SET default_transaction_read_only = on")
            return
        except psycopg.errors.InternalError_:
            conn.rollback()
            if attempt == 4:
                raise


def test_a_command_waiting_for_another_process_migrating_says_so(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Every command migrates first; one started while another process held the migrations'
    lock (an upgrade of a large store) hung with nothing said."""
    monkeypatch.setattr(db, "QUIET_MIGRATION_WAIT_S", 0.2)
    holder = psycopg.connect(db_url)
    holder.execute("SELECT pg_advisory_xact_lock(hashtext('knowledge_assets.migrate'))")
    waiting = threading.Thread(target=db.migrate, args=(db_url,))
    waiting.start()
    try:
        waiting.join(timeout=1.0)
        assert waiting.is_alive()  # it waits for the lock
    finally:
        holder.rollback()  # releases it
        holder.close()
    waiting.join(timeout=30)
    assert not waiting.is_alive()
    assert "waiting for another process to finish migrating" in capfd.readouterr().err
