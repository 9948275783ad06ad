"""A latest_docs refresh re-plans only what changed: with nothing changed it reuses its last plan,
with a few files changed (and no note naming a previous version) it classifies those alone, and
anything that links notes, changes the conventions or fails makes it plan every file again."""

from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.conventions import Conventions
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource

MARK = "__stored-plan-marker__"


def _linked_vault(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.md").write_text("---\nupdated: 2025-01-02\n---\n# A\n\nbody a\n")
    (root / "b.md").write_text("---\nprevious: a.md\n---\n# B\n\nbody b\n")
    (root / "c.md").write_text("---\ndraft: true\n---\n# C\n\nbody c\n")
    return root


def _plain_vault(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.md").write_text("---\nupdated: 2025-01-02\n---\n# A\n\nbody a\n")
    (root / "b.md").write_text("# B\n\nbody b\n")
    (root / "c.md").write_text("---\ndraft: true\n---\n# C\n\nbody c\n")
    (root / "d.md").write_text("---\ncreated: 2025-13-40\n---\n# D\n\nbody d\n")
    return root


def _mark_stored_plan(conn: psycopg.Connection) -> None:
    """Put a marker among the stored drafts: a refresh that returns it reused the stored plan."""
    row = conn.execute("SELECT plan FROM meta.latest_state WHERE source_table = 'docs_local'")
    state = dict(row.fetchone()[0])  # type: ignore[index]
    state["plan"]["drafts"] = sorted([*state["plan"]["drafts"], MARK])
    conn.execute("UPDATE meta.latest_state SET plan = %s", (Jsonb(state),))
    conn.commit()


def _latest(conn: psycopg.Connection) -> dict[str, object]:
    return dict(conn.execute("SELECT file_path, updated FROM rag.latest_docs").fetchall())


def _first(conn: psycopg.Connection, vault: Path) -> None:
    sync_source(conn, LocalSource(vault))
    refresh_latest(conn, "docs_local")
    _mark_stored_plan(conn)


def test_unchanged_inputs_reuse_the_stored_plan(db_url: str, tmp_path: Path) -> None:
    vault = _linked_vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        first = refresh_latest(conn, "docs_local")
        _mark_stored_plan(conn)
        again = refresh_latest(conn, "docs_local")
    assert first.plan.kept == ["b.md"] and first.plan.superseded == {"a.md": "b.md"}
    assert again.plan.drafts == [MARK, "c.md"]  # reused, not planned again
    assert again.plan.kept == ["b.md"] and again.plan.superseded == {"a.md": "b.md"}
    assert (again.upserted, again.removed) == (0, 0)


def test_changed_and_deleted_files_alone_are_classified_again(db_url: str, tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        _first(conn, vault)
        (vault / "c.md").write_text("---\ndraft: false\n---\n# C\n\nbody c\n")
        (vault / "b.md").write_text("---\npublished: false\n---\n# B\n\nbody b\n")
        (vault / "a.md").unlink()
        (vault / "e.md").write_text("---\nupdated: 2025-02-03\n---\n# E\n\nbody e\n")
        sync_source(conn, LocalSource(vault))
        report = refresh_latest(conn, "docs_local")
        latest = _latest(conn)
        again = refresh_latest(conn, "docs_local")
    assert report.plan.drafts == [MARK, "b.md"]  # the stored plan, merged with b.md's new state
    assert report.plan.kept == ["c.md", "d.md", "e.md"]
    assert report.plan.bad_dates == [("d.md", "created", "2025-13-40")]
    assert (report.upserted, report.removed) == (2, 2)
    assert set(latest) == {"c.md", "d.md", "e.md"} and str(latest["e.md"]) == "2025-02-03"
    assert again.plan.kept == report.plan.kept and again.plan.drafts == report.plan.drafts


def test_a_change_among_linked_notes_plans_every_file(db_url: str, tmp_path: Path) -> None:
    vault = _linked_vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        _first(conn, vault)
        (vault / "c.md").write_text("---\ndraft: false\n---\n# C\n\nbody c\n")
        sync_source(conn, LocalSource(vault))
        report = refresh_latest(conn, "docs_local")
        latest = _latest(conn)
    assert report.plan.drafts == [] and report.plan.kept == ["b.md", "c.md"]
    assert set(latest) == {"b.md", "c.md"}


def test_a_new_link_plans_every_file(db_url: str, tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        _first(conn, vault)
        (vault / "e.md").write_text("---\nprevious: b.md\n---\n# E\n\nbody e\n")
        sync_source(conn, LocalSource(vault))
        report = refresh_latest(conn, "docs_local")
        latest = _latest(conn)
    assert report.plan.drafts == ["c.md"] and report.plan.superseded == {"b.md": "e.md"}
    assert set(latest) == {"a.md", "d.md", "e.md"}


def test_changed_conventions_plan_every_file(db_url: str, tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        _first(conn, vault)
        report = refresh_latest(conn, "docs_local", Conventions(draft_markers=("hidden=true",)))
    assert report.plan.drafts == [] and report.plan.kept == ["a.md", "b.md", "c.md", "d.md"]


def test_rows_removed_behind_its_back_are_written_again(db_url: str, tmp_path: Path) -> None:
    for vault in (_linked_vault(tmp_path / "linked"), _plain_vault(tmp_path / "plain")):
        with db.connect(db_url) as conn:
            conn.execute("DELETE FROM raw.docs_local")
            conn.execute("DELETE FROM meta.latest_state")
            conn.commit()
            _first(conn, vault)
            expected = _latest(conn)
            conn.execute("DELETE FROM rag.latest_docs")
            conn.commit()
            report = refresh_latest(conn, "docs_local")
            latest = _latest(conn)
        assert report.upserted == len(expected) and latest == expected


def test_a_failed_write_leaves_no_stored_plan_behind(db_url: str, tmp_path: Path) -> None:
    """The plan is stored in the transaction that writes the rows: a write that fails stores
    nothing, so the next refresh plans again and converges."""
    vault = _linked_vault(tmp_path / "vault")
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
