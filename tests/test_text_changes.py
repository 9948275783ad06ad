"""A model's pass after a change counts from its last complete pass through the texts the changes
touched (rag.text_changes); it must find what a count over every chunk finds, for every kind of
change, and count every chunk again whenever a change was not logged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.index import coverage, embed_checks, models, text_changes
from knowledge_assets.core.index.indexing import embed_missing
from tests.migration_support import rerun_migration
from tests.test_embed_checks import MARK, _Embedder, _mark_record, _sync, _texts

SHARED = "zq 同じ段落がふたつのノートにある。\n"


def _note(vault: Path) -> Path:
    return vault / "projects" / "garden.md"


def _edit_section(vault: Path, conn: psycopg.Connection) -> None:
    note = _note(vault)
    note.write_text(note.read_text("utf-8") + "\n\n## 追記\n\nzq 追記した節。\n", "utf-8")


def _delete_note(vault: Path, conn: psycopg.Connection) -> None:
    _note(vault).unlink()


def _shared_text(vault: Path, conn: psycopg.Connection) -> None:
    """Two new notes whose sections render the same text: one text, two chunks."""
    for name in ("a", "b"):
        (vault / f"zq-{name}.md").write_text(f"## 同じ\n\n{SHARED}", "utf-8")


def _one_of_two_removed(vault: Path, conn: psycopg.Connection) -> None:
    """A text two chunks share loses one of them: still present, not a new text."""
    _shared_text(vault, conn)
    _sync(conn, vault)
    assert embed_missing(conn, _Embedder()).complete
    (vault / "zq-a.md").unlink()


def _rename(vault: Path, conn: psycopg.Connection) -> None:
    note = _note(vault)
    note.rename(note.with_name("zq-renamed.md"))


def _vector_removed(vault: Path, conn: psycopg.Connection) -> None:
    conn.execute(
        "DELETE FROM rag.embeddings WHERE text_hash = (SELECT min(text_hash)"
        " FROM rag.embedding_inputs WHERE part = 0)"
    )
    conn.commit()


def _text_rewritten_in_place(vault: Path, conn: psycopg.Connection) -> None:
    """A chunk row updated to another text (as a re-chunk by position does)."""
    conn.execute(
        "UPDATE rag.chunks SET content = 'zq moved', text_hash = 'zq-moved'"
        " WHERE id = (SELECT id FROM rag.chunks ORDER BY id LIMIT 1)"
    )
    conn.commit()


def _complete(conn: psycopg.Connection, vault: Path, embedder: _Embedder) -> None:
    """The vault synced and embedded: the model has a complete pass to count from."""
    _sync(conn, vault)
    assert embed_missing(conn, embedder).complete


Change = Callable[[Path, psycopg.Connection], None]
CHANGES: list[Change] = [
    _edit_section,
    _delete_note,
    _shared_text,
    _one_of_two_removed,
    _rename,
    _vector_removed,
    _text_rewritten_in_place,
]


def _full_count(conn: psycopg.Connection, model: str, template: str) -> tuple[int, int]:
    _, total, done, _ = embed_checks._count_all(conn, model, template, 0)
    conn.commit()
    return total, done


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: c.__name__.strip("_"))
def test_a_recount_finds_what_counting_every_chunk_finds(
    db_url: str, vault: Path, change: Change
) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _complete(conn, vault, embedder)
        change(vault, conn)
        _sync(conn, vault)
        base = embed_checks.last_check(conn, embedder.model, "seed000")
        logged = conn.execute("SELECT count(*) FROM rag.text_changes").fetchone()
        assert base is not None and logged is not None and logged[0] > 0
        found = text_changes.recount(conn, embedder.model, "seed000", base)
        conn.commit()
        expected = _full_count(conn, embedder.model, "seed000")
        search_warns = coverage.count_missing(conn, embedder.model, "seed000")
        listed = next(m for m in models.list_models(conn) if m.model == embedder.model)
        report = embed_missing(conn, embedder)
        texts = _texts(conn)
    assert found is not None, "the change was logged: no full count needed"
    assert (found[1], found[2]) == expected
    assert search_warns == expected[0] - expected[1]
    assert (listed.chunk_texts, listed.embedded) == expected  # as `models list` shows it
    assert report.complete and report.total == texts == expected[0]
    assert report.embedded == expected[0] - expected[1]


def test_after_an_edit_only_the_texts_it_touched_are_counted(db_url: str, vault: Path) -> None:
    """From a record whose count was marked, the total moves by the edit alone: the edit's
    texts were looked at, not every chunk."""
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _complete(conn, vault, embedder)
        before = _texts(conn)
        _mark_record(conn)
        _edit_section(vault, conn)
        _sync(conn, vault)
        report = embed_missing(conn, embedder)
        after = _texts(conn)
    assert after > before
    assert report.complete and report.total == MARK + (after - before)
    assert report.embedded >= 1


def test_a_first_build_is_not_logged_and_counts_every_chunk(db_url: str, vault: Path) -> None:
    """No model has a complete pass yet: the writes are marked unlogged, not logged."""
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        logged = conn.execute("SELECT count(*) FROM rag.text_changes").fetchone()
        unlogged = conn.execute(
            "SELECT count(*) FROM rag.index_writes WHERE NOT texts_logged"
        ).fetchone()
    assert logged == (0,)
    assert unlogged is not None and unlogged[0] > 0


@pytest.mark.parametrize("table", ["rag.embeddings", "rag.chunks"])
def test_a_truncation_sends_the_next_pass_to_a_full_count(
    db_url: str, vault: Path, table: str
) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _complete(conn, vault, embedder)
        _mark_record(conn)
        conn.execute(f"TRUNCATE {table} CASCADE")
        conn.commit()
        report = embed_missing(conn, embedder)
        texts = _texts(conn)
    assert report.total == texts != MARK  # counted, not moved from the marked record
    assert report.complete and report.embedded == (texts if table == "rag.embeddings" else 0)


def test_the_log_is_emptied_once_every_pass_has_seen_it(db_url: str, vault: Path) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _complete(conn, vault, embedder)
        _edit_section(vault, conn)
        _sync(conn, vault)
        logged = conn.execute("SELECT count(*) FROM rag.text_changes").fetchone()
        assert embed_missing(conn, embedder).complete
        left = conn.execute("SELECT count(*) FROM rag.text_changes").fetchone()
    assert logged is not None and logged[0] > 0
    assert left == (0,)


def test_a_log_a_stopped_model_keeps_growing_is_dropped_and_counted_in_full(
    db_url: str, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another model's old complete pass keeps the log: past the bound it is dropped and its
    changes marked unlogged, so that model's next pass counts every chunk and finds the edit."""
    monkeypatch.setattr(text_changes, "RECOUNT_MAX", 2)
    stopped, running = _Embedder(), _Embedder()
    stopped.model = "checks-stopped"
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        assert embed_missing(conn, stopped).complete
        _mark_record(conn)
        for i in range(3):
            (vault / f"zq-{i}.md").write_text(f"## 節{i}\n\nzq 本文{i}。\n", "utf-8")
            _sync(conn, vault)
            assert embed_missing(conn, running).complete
        left = conn.execute("SELECT count(*) FROM rag.text_changes").fetchone()
        report = embed_missing(conn, stopped)
        texts = _texts(conn)
    assert left is not None and left[0] <= 2
    assert report.complete and report.total == texts != MARK
    assert report.embedded == 3


def test_changes_recorded_before_the_log_existed_send_the_next_pass_to_a_full_count(
    db_url: str, vault: Path
) -> None:
    """A store upgraded with changes its last complete pass had not seen yet: their texts were
    never logged, so the next pass counts every chunk text and finds them."""
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _complete(conn, vault, embedder)
        _mark_record(conn)
        _edit_section(vault, conn)
        _sync(conn, vault)
        conn.execute("DELETE FROM rag.text_changes")  # as the store was before the log
        conn.commit()
    rerun_migration(db_url, "052")
    with db.connect(db_url) as conn:
        report = embed_missing(conn, embedder)
        texts = _texts(conn)
    assert report.complete and report.total == texts != MARK
    assert report.embedded >= 1
