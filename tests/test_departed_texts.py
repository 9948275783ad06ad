"""Vectors no chunk uses any more are removed by looking only at the texts that left the chunks:
a rewritten section, a deleted note; a text another note still has keeps its vector, and a run
where nothing left touches no vector table."""

from __future__ import annotations

from pathlib import Path

import psycopg

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
from tests.test_embed_checks import _Embedder

SHARED = "## Shared\n\nzq the same paragraph in two notes\n"


def _sync(conn: psycopg.Connection, vault: Path) -> int:
    sync_source(conn, LocalSource(vault))
    refresh_latest(conn, "docs_local")
    return refresh_chunks(conn).embeddings_removed


def _vectors(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM rag.embeddings").fetchone()
    return int(row[0]) if row else 0


def _texts(conn: psycopg.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT text_hash FROM rag.chunks").fetchall()}


def _unused(conn: psycopg.Connection) -> int:
    row = conn.execute(
        "SELECT count(*) FROM rag.embeddings e WHERE NOT EXISTS (SELECT 1 FROM rag.embedding_inputs"
        " i JOIN rag.chunks c ON c.text_hash = i.chunk_hash"
        " WHERE i.model = e.model AND i.text_hash = e.text_hash)"
    ).fetchone()
    return int(row[0]) if row else 0


def _vault(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "one.md").write_text("# One\n\n## Own\n\nzq first note text\n\n" + SHARED)
    (root / "two.md").write_text("# Two\n\n## Own\n\nzq second note text\n\n" + SHARED)
    return root


def test_a_rewritten_section_loses_its_old_vector(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        embed_missing(conn, embedder)
        before, texts = _vectors(conn), _texts(conn)
        (vault / "one.md").write_text("# One\n\n## Own\n\nzq first note rewritten\n\n" + SHARED)
        removed = _sync(conn, vault)
        embed_missing(conn, embedder)
        after, unused, gone = _vectors(conn), _unused(conn), texts - _texts(conn)
    assert removed == len(gone) >= 1 and after == before and unused == 0


def test_a_deleted_note_loses_its_own_vectors_but_not_shared_ones(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        embed_missing(conn, _Embedder())
        before = _vectors(conn)
        (vault / "two.md").unlink()
        removed = _sync(conn, vault)
        after, unused = _vectors(conn), _unused(conn)
        shared = conn.execute(
            "SELECT count(*) FROM rag.chunks c JOIN rag.embedding_inputs i"
            " ON i.chunk_hash = c.text_hash WHERE c.content LIKE '%%same paragraph%%'"
        ).fetchone()
    # two.md had a title chunk of its own, its own section and the shared one (still in one.md)
    assert removed >= 1 and after == before - removed and unused == 0
    assert shared == (1,)


def test_a_run_where_nothing_left_touches_no_vector_table(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        embed_missing(conn, _Embedder())
        writes = conn.execute("SELECT count(*) FROM rag.index_writes").fetchone()
        removed = _sync(conn, vault)
        again = conn.execute("SELECT count(*) FROM rag.index_writes").fetchone()
        queued = conn.execute("SELECT count(*) FROM rag.departed_texts").fetchone()
    assert removed == 0 and writes == again == (0,) and queued == (0,)


def test_only_notes_whose_content_or_chunker_settings_changed_are_chunked_again(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        first = refresh_chunks(conn)
        unchanged = refresh_chunks(conn)
        (vault / "two.md").write_text("# Two\n\n## Own\n\nzq second note changed\n")
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        edited = refresh_chunks(conn)
        other_limit = refresh_chunks(conn, max_tokens=300)
        conn.execute("UPDATE rag.chunks SET doc_hash = 'stale' WHERE chunk_index = 0"
                     " AND document_id = (SELECT id FROM rag.latest_docs WHERE file_path = 'one.md')")  # fmt: skip
        conn.commit()
        stale = refresh_chunks(conn, max_tokens=300)
    assert sorted(first.documents) == ["one.md", "two.md"] and unchanged.documents == []
    assert edited.documents == ["two.md"]
    assert sorted(other_limit.documents) == ["one.md", "two.md"]
    assert stale.documents == ["one.md"]
