"""A latest_docs refresh whose inputs are unchanged reuses its last plan; any changed input (a
file, the stored rows, the conventions, a failed earlier write) makes it plan again."""

from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from knowledge_assets.core import db
from knowledge_assets.core.conventions import Conventions
from knowledge_assets.core.ingest import sync_source
from knowledge_assets.core.latest import refresh_latest
from knowledge_assets.core.sources.local import LocalSource

MARK = "__stored-plan-marker__"


def _vault(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.md").write_text("---\nupdated: 2025-01-02\n---\n# A\n\nbody a\n")
    (root / "b.md").write_text("---\nprevious: a.md\n---\n# B\n\nbody b\n")
    (root / "c.md").write_text("---\ndraft: true\n---\n# C\n\nbody c\n")
    return root


def _mark_stored_plan(conn: psycopg.Connection) -> None:
    """Put a marker in the stored plan: a refresh that returns it reused the plan."""
    plan = conn.execute("SELECT plan FROM meta.latest_state WHERE source_table = 'docs_local'")
    stored = dict(plan.fetchone()[0])  # type: ignore[index]
    stored["drafts"] = [MARK]
    conn.execute("UPDATE meta.latest_state SET plan = %s", (Jsonb(stored),))
    conn.commit()


def _latest(conn: psycopg.Connection) -> dict[str, object]:
    return dict(conn.execute("SELECT file_path, updated FROM rag.latest_docs").fetchall())


def test_unchanged_inputs_reuse_the_stored_plan(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        first = refresh_latest(conn, "docs_local")
        _mark_stored_plan(conn)
        again = refresh_latest(conn, "docs_local")
    assert first.plan.kept == ["b.md"] and first.plan.superseded == {"a.md": "b.md"}
    assert again.plan.drafts == [MARK]  # reused, not planned again
    assert again.plan.kept == ["b.md"] and again.plan.superseded == {"a.md": "b.md"}
    assert (again.upserted, again.removed) == (0, 0)


def test_a_changed_file_plans_again(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        _mark_stored_plan(conn)
        (vault / "c.md").write_text("---\ndraft: false\n---\n# C\n\nbody c\n")
        sync_source(conn, LocalSource(vault))
        report = refresh_latest(conn, "docs_local")
        latest = _latest(conn)
    assert report.plan.drafts == [] and report.plan.kept == ["b.md", "c.md"]
    assert set(latest) == {"b.md", "c.md"}


def test_changed_conventions_plan_again(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        _mark_stored_plan(conn)
        report = refresh_latest(conn, "docs_local", Conventions(draft_markers=("hidden=true",)))
    assert report.plan.drafts == [] and report.plan.kept == ["b.md", "c.md"]


def test_rows_removed_behind_its_back_are_written_again(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        _mark_stored_plan(conn)
        conn.execute("DELETE FROM rag.latest_docs")
        conn.execute("DELETE FROM rag.superseded_docs")
        conn.commit()
        report = refresh_latest(conn, "docs_local")
        latest = _latest(conn)
        superseded = conn.execute("SELECT file_path FROM rag.superseded_docs").fetchall()
    assert report.plan.drafts == ["c.md"] and report.upserted == 1
    assert set(latest) == {"b.md"} and superseded == [("a.md",)]


def test_a_failed_write_leaves_no_stored_plan_behind(db_url: str, tmp_path: Path) -> None:
    """The plan is stored in the transaction that writes the rows: a write that fails stores
    nothing, so the next refresh plans again and converges."""
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        conn.execute(
            "CREATE FUNCTION pg_temp.refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'refused'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON rag.latest_docs"
            " FOR EACH ROW EXECUTE FUNCTION pg_temp.refuse()"
        )
        conn.commit()
        try:
            refresh_latest(conn, "docs_local")
        except psycopg.Error:
            conn.rollback()
        else:
            raise AssertionError("the refused write should have failed the refresh")
        conn.execute("DROP TRIGGER refuse ON rag.latest_docs")
        conn.commit()
        stored = conn.execute("SELECT count(*) FROM meta.latest_state").fetchone()
        report = refresh_latest(conn, "docs_local")
        latest = _latest(conn)
    assert stored == (0,)
    assert report.plan.kept == ["b.md"] and set(latest) == {"b.md"}
