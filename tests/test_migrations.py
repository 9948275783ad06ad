"""The migration runner: idempotent, recorded, refuses edited files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knowledge_assets.core import db


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
