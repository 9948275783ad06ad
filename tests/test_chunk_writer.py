"""Set-based chunk writes on real Postgres: batches, token reuse, keyword statistics, and a bad
note that is recorded while the rest of its batch still lands."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.chunks import chunk_refresh, chunk_writer
from knowledge_assets.core.chunks.chunking import chunk_document
from knowledge_assets.core.chunks.tokenize import chunk_keywords_batch
from knowledge_assets.core.chunks.tokenize_pool import tokenizer
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.progress import Update, subscribe
from knowledge_assets.core.sources.local import LocalSource


def _vault(root: Path, notes: int) -> Path:
    for i in range(notes):
        sections = "\n\n".join(f"## 節{j}\n\n東京の大学{i}で研究{j}をした。" for j in range(3))
        (root / f"n{i:03d}.md").write_text(f"# ノート{i}\n\n{sections}\n", encoding="utf-8")
    return root


def _sync(
    url: str, vault: Path, helper: chunk_refresh.Connect | None = None
) -> chunk_refresh.ChunkReport:
    with db.connect(url) as conn:
        source = LocalSource(vault)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        return chunk_refresh.refresh_chunks(conn, max_tokens=8000, helper=helper)


def _stats_match(url: str) -> None:
    """The keyword statistics equal a recount from scratch."""
    with db.connect(url) as conn:
        totals = conn.execute("SELECT ndocs, total_length FROM rag.keyword_totals").fetchone()
        recount = conn.execute(
            "SELECT count(*), coalesce(sum(token_count), 0) FROM rag.chunks"
        ).fetchone()
        assert totals == recount
        diff = conn.execute(
            "SELECT count(*) FROM (SELECT lexeme, ndoc FROM rag.keyword_lexemes"
            " EXCEPT ALL SELECT u.lexeme, count(*) FROM rag.chunks c, unnest(c.tokens) u"
            " GROUP BY 1) x"
        ).fetchone()
        assert diff == (0,)
        miscounted = conn.execute(
            "SELECT count(*) FROM rag.chunks WHERE token_count <> rag.tsvector_token_count(tokens)"
        ).fetchone()
        assert miscounted == (0,)  # each length written with the tokens, as Postgres counts it


def test_batches_write_every_note_with_tokens_and_statistics(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunk_refresh, "CHUNK_BATCH_NOTES", 4)  # 10 notes: three batches
    seen: list[Update] = []
    stop = subscribe(seen.append)
    try:
        report = _sync(db_url, _vault(tmp_path, 10))
    finally:
        stop()
    assert len(report.documents) == 10 and report.chunks_written == 30
    assert [u.done for u in seen if u.stage == "chunks"] == [0, 4, 8, 10]
    with db.connect(db_url) as conn:
        tokens = conn.execute(
            "SELECT tokens::text FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
            " WHERE d.file_path = 'n003.md' AND c.heading = '節1'"
        ).fetchone()
    assert tokens is not None and "'研究'" in tokens[0] and "'東京'" in tokens[0]
    _stats_match(db_url)


def test_an_edit_reuses_the_tokens_of_unchanged_texts(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path, 2)
    _sync(db_url, vault)
    note = vault / "n000.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n## 追加\n\n新しい節。\n", "utf-8")
    report = _sync(db_url, vault)
    # Three chunks before keep their text; only the new fourth one is tokenized.
    assert (report.chunks_unchanged, report.chunks_written, report.tokens_reused) == (3, 1, 3)
    _stats_match(db_url)
    note.write_text("# ノート0\n\n## 節0\n\n短くなった。\n", "utf-8")
    report = _sync(db_url, vault)
    assert report.chunks_removed == 3
    _stats_match(db_url)


def test_a_renamed_note_is_chunked_at_its_new_path_with_the_tokens_it_had(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path, 3)
    # No H1 and no frontmatter title: the title, in the chunk's text, is the file name.
    (vault / "名前だけ.md").write_text("## 節\n\n題のないノート。\n", encoding="utf-8")
    _sync(db_url, vault)
    (vault / "moved").mkdir()
    (vault / "n001.md").rename(vault / "moved" / "n001.md")
    (vault / "名前だけ.md").rename(vault / "新しい名前.md")
    report = _sync(db_url, vault)
    # The moved note's three sections keep their tokens; the renamed note's one section has
    # another text (its title changed with the file name) and is tokenized.
    assert (report.chunks_written, report.tokens_reused) == (4, 3)
    with db.connect(db_url) as conn:
        paths = {r[0] for r in conn.execute(
            "SELECT DISTINCT d.file_path FROM rag.chunks c JOIN rag.latest_docs d"
            " ON d.id = c.document_id"
        ).fetchall()}  # fmt: skip
        (text,) = conn.execute(
            "SELECT c.embedding_text FROM rag.chunks c JOIN rag.latest_docs d"
            " ON d.id = c.document_id WHERE d.file_path = '新しい名前.md'"
        ).fetchone() or ("",)
        kept = conn.execute("SELECT count(*) FROM rag.departed_tokens").fetchone()
    assert paths == {"n000.md", "moved/n001.md", "n002.md", "新しい名前.md"}
    assert "新しい名前" in text and "名前だけ" not in text
    assert kept == (0,)  # emptied once the notes were written
    _stats_match(db_url)


def test_a_chunk_over_the_tsvector_limits_gets_its_token_count_from_postgres(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path, 2)
    (vault / "long.md").write_text("# 長文\n\n" + "検索 " * 17_000, encoding="utf-8")
    with db.connect(db_url) as conn:
        source = LocalSource(vault)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        report = chunk_refresh.refresh_chunks(conn, max_tokens=100_000)
        row = conn.execute(
            "SELECT count(*), min(token_count) FROM rag.chunks c JOIN rag.latest_docs d"
            " ON d.id = c.document_id WHERE d.file_path = 'long.md'"
        ).fetchone()
    assert report.failed == []
    assert row == (1, 256 + 2)  # one chunk: 256 positions of 検索 kept, and the title's two
    _stats_match(db_url)


def test_a_note_that_cannot_be_written_is_recorded_and_the_batch_lands(db_url: str) -> None:
    with db.connect(db_url) as conn:
        ids = []
        for i in range(3):
            row = conn.execute(
                "INSERT INTO rag.latest_docs (id, source_table, file_path, title, content,"
                " content_hash) VALUES (gen_random_uuid(), 'docs_local', %s, 't', 'x', 'h')"
                " RETURNING id",
                (f"p{i}.md",),
            ).fetchone()
            assert row is not None
            ids.append(row[0])
        conn.commit()
        notes = []
        for i, doc_id in enumerate(ids):
            body = "## a\n\n本文\x00です" if i == 1 else "## a\n\n本文です"  # NUL: Postgres refuses
            chunks = chunk_document(f"p{i}.md", {}, body)
            notes.append(
                chunk_writer.NoteChunks(
                    doc_id, f"p{i}.md", "h", chunks, [("", "本文")], keywords=[("'本文':1D", 1)]
                )
            )
        report = chunk_refresh.ChunkReport()
        chunk_refresh._write(conn, notes, "sig", report)
        assert report.documents == ["p0.md", "p2.md"]
        assert [p for p, _ in report.failed] == ["p1.md"]
        stored = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
    assert stored == (2,)
    _stats_match(db_url)


def test_worker_processes_tokenize_exactly_like_the_caller() -> None:
    texts = [(f"見出し{i}", f"東京の大学{i}で don't 研究した。") for i in range(50)] + [("", "")]
    with tokenizer(2) as pool:
        assert pool.workers == 2
        assert pool.map(texts)() == chunk_keywords_batch(texts)


def _keyword_hits(url: str, lexeme: str) -> int:
    with db.connect(url) as conn:
        conn.execute("SET enable_seqscan = off")  # answer through the keyword index
        row = conn.execute(
            "SELECT count(*) FROM rag.chunks WHERE tokens @@ %s::tsquery", (f"'{lexeme}'",)
        ).fetchone()
    return int(row[0]) if row else 0


def _index_while_writing(url: str, vault: Path, stop_after: int | None = None) -> list[bool]:
    """Sync, noting after each written batch whether rag.chunks had its keyword index then;
    with ``stop_after``, the run is interrupted once that many notes are written."""
    seen: list[bool] = []

    def look(update: Update) -> None:
        if update.stage != "chunks" or update.done == 0:
            return
        with db.connect(url) as other:
            seen.append(chunk_writer.has_keyword_index(other))
        if stop_after is not None and update.done >= stop_after:
            raise KeyboardInterrupt

    stop = subscribe(look)
    try:
        _sync(url, vault)
    finally:
        stop()
    return seen


def test_a_bulk_load_builds_the_keyword_index_once_at_the_end(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunk_refresh, "DEFER_KEYWORD_INDEX_MIN", 2)
    monkeypatch.setattr(chunk_refresh, "CHUNK_BATCH_NOTES", 2)
    vault = _vault(tmp_path, 6)
    # The first build of every note writes without the index, then builds it.
    assert _index_while_writing(db_url, vault) == [False, False, False]
    with db.connect(db_url) as conn:
        assert chunk_writer.has_keyword_index(conn)
        # ... the planner's statistics describe the loaded tables, not the empty ones, and a
        # VACUUM recorded the new rows as visible to all, so searches need not check each one.
        analyzed = conn.execute(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = 'rag'"
            " AND relname IN ('chunks', 'latest_docs') AND last_analyze IS NOT NULL"
            " AND last_vacuum IS NOT NULL"
        ).fetchall()
        visible = conn.execute(
            "SELECT relpages > 0 AND relallvisible = relpages FROM pg_class"
            " WHERE oid = 'rag.chunks'::regclass"
        ).fetchone()
    assert sorted(r[0] for r in analyzed) == ["chunks", "latest_docs"]
    assert visible == (True,)
    assert _keyword_hits(db_url, "研究") == 18
    _stats_match(db_url)
    # One edited note of six is not a bulk load: the index stays and is maintained.
    (vault / "n000.md").write_text("# ノート0\n\n## 節0\n\n大阪で研究した。\n", "utf-8")
    assert _index_while_writing(db_url, vault) == [True]
    assert _keyword_hits(db_url, "大阪") == 1
    _stats_match(db_url)


def test_an_interrupted_bulk_load_puts_the_keyword_index_back(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunk_refresh, "DEFER_KEYWORD_INDEX_MIN", 2)
    monkeypatch.setattr(chunk_refresh, "CHUNK_BATCH_NOTES", 2)
    vault = _vault(tmp_path, 6)
    with pytest.raises(KeyboardInterrupt):
        _index_while_writing(db_url, vault, stop_after=2)
    with db.connect(db_url) as conn:
        assert chunk_writer.has_keyword_index(conn)
        stored = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
    assert stored is not None and _keyword_hits(db_url, "研究") == stored[0]  # every chunk
    _stats_match(db_url)
    _sync(db_url, vault)  # the next run converges
    assert _keyword_hits(db_url, "研究") == 18


def test_a_keyword_index_a_killed_run_left_dropped_is_rebuilt(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path, 2)
    _sync(db_url, vault)
    with db.connect(db_url) as conn:
        chunk_writer.drop_keyword_index(conn)  # as a bulk load killed before its end leaves it
    report = _sync(db_url, vault)  # nothing to re-chunk
    assert report.chunks_written == 0
    with db.connect(db_url) as conn:
        assert chunk_writer.has_keyword_index(conn)
    assert _keyword_hits(db_url, "研究") == 6


def _pending_pages(url: str) -> int:
    """Pages of the keyword index's pending list (merged, and so emptied, by this call)."""
    with db.connect(url) as conn:
        row = conn.execute(
            "SELECT gin_clean_pending_list(%s::regclass)", (f"rag.{chunk_writer.KEYWORD_INDEX}",)
        ).fetchone()
    return int(row[0]) if row else -1


@pytest.mark.parametrize("bulk", [False, True])
def test_keyword_writes_leave_no_pending_list_for_searches_to_scan(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: bool
) -> None:
    # The first build either maintains the index or rebuilds it at the end (bulk); either way
    # the refresh that writes the edit ends with the index's pending list merged.
    monkeypatch.setattr(chunk_refresh, "DEFER_KEYWORD_INDEX_MIN", 2 if bulk else 10_000)
    vault = _vault(tmp_path, 6)
    _sync(db_url, vault)
    # Enough new words that a pending list would take pages; one note of six is no bulk load.
    words = " ".join(f"word{chr(97 + j % 26)}{chr(97 + j // 26)}" for j in range(400))
    (vault / "n005.md").write_text(f"# ノート5\n\n## 節\n\n{words}\n", "utf-8")
    _sync(db_url, vault)
    assert _keyword_hits(db_url, "wordjp") == 1  # word 399
    assert _pending_pages(db_url) == 0


def _stale(url: str) -> tuple[bool, int]:
    """(statistics marked stale, lexeme rows)."""
    with db.connect(url) as conn:
        row = conn.execute(
            "SELECT t.stale, (SELECT count(*) FROM rag.keyword_lexemes) FROM rag.keyword_totals t"
        ).fetchone()
    assert row is not None
    return bool(row[0]), int(row[1])


def test_a_bulk_load_counts_keyword_statistics_once_and_a_killed_one_is_counted_next_run(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunk_refresh, "DEFER_KEYWORD_INDEX_MIN", 2)
    monkeypatch.setattr(chunk_refresh, "CHUNK_BATCH_NOTES", 2)
    recount = chunk_writer.recount_keyword_stats
    # A first build killed after its batches, before its recount: the batches counted nothing
    # and left the statistics marked stale.
    monkeypatch.setattr(chunk_writer, "recount_keyword_stats", lambda conn: False)
    vault = _vault(tmp_path, 6)
    _sync(db_url, vault)
    assert _stale(db_url) == (True, 0)
    monkeypatch.setattr(chunk_writer, "recount_keyword_stats", recount)
    report = _sync(db_url, vault)  # nothing to re-chunk, but the statistics are owed
    assert report.chunks_written == 0
    stale, lexemes = _stale(db_url)
    assert not stale and lexemes > 0
    _stats_match(db_url)
    # Per-batch statistics again for a small change, on top of the recount.
    (vault / "n001.md").write_text("# ノート1\n\n## 節0\n\n名古屋で研究した。\n", "utf-8")
    _sync(db_url, vault)
    assert _stale(db_url)[0] is False
    _stats_match(db_url)
    assert _keyword_hits(db_url, "名古屋") == 1


def test_writes_in_a_transaction_that_defers_statistics_leave_them_to_the_recount(
    db_url: str, tmp_path: Path
) -> None:
    _sync(db_url, _vault(tmp_path, 2))  # statistics maintained per batch
    _stats_match(db_url)
    with db.connect(db_url) as conn:
        chunk_writer.defer_keyword_stats(conn)
        conn.execute("DELETE FROM rag.chunks WHERE chunk_index = 0")
        conn.commit()
        assert chunk_writer.recount_keyword_stats(conn) is True
        assert chunk_writer.recount_keyword_stats(conn) is False  # nothing owed any more
    _stats_match(db_url)
    with db.connect(db_url) as conn:  # the setting ended with its transaction
        conn.execute("DELETE FROM rag.chunks WHERE chunk_index = 1")
        conn.commit()
    assert _stale(db_url)[0] is False
    _stats_match(db_url)


def test_a_bulk_load_builds_the_keyword_index_on_a_second_connection_while_it_recounts(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunk_refresh, "DEFER_KEYWORD_INDEX_MIN", 2)
    monkeypatch.setattr(chunk_refresh, "CHUNK_BATCH_NOTES", 2)
    opened: list[tuple[bool, bool]] = []  # (keyword index there when opened, when closed)

    @contextmanager
    def helper() -> Iterator[psycopg.Connection]:
        with db.connect(db_url) as conn:
            before = chunk_writer.has_keyword_index(conn)
            conn.commit()
            yield conn
            opened.append((before, chunk_writer.has_keyword_index(conn)))

    vault = _vault(tmp_path, 6)
    seen: list[Update] = []
    stop = subscribe(lambda u: seen.append(u) if u.stage == "keyword index" else None)
    try:
        report = _sync(db_url, vault, helper)
    finally:
        stop()
    assert report.chunks_written == 18
    assert opened == [(False, True)]  # the helper's connection built the index
    # ... while this one followed it, in passages (the chunks it indexes).
    assert (seen[0].done, seen[0].total, seen[-1].done) == (0, 18, 18)
    assert {u.unit for u in seen} == {"passages"}
    stale, lexemes = _stale(db_url)
    assert not stale and lexemes > 0
    _stats_match(db_url)
    assert _keyword_hits(db_url, "東京") == 18
    # An incremental run has its index already: no second connection.
    (vault / "n001.md").write_text("# ノート1\n\n## 節0\n\n名古屋で研究した。\n", "utf-8")
    _sync(db_url, vault, helper)
    assert opened == [(False, True)]
    _stats_match(db_url)
    assert _keyword_hits(db_url, "名古屋") == 1


# (frontmatter, text) -> the heading lines a chunk's keyword tokens are made from
TITLE_WORDS = [
    ({"title": "2026年1月10日の日記"}, "# 2026年1月10日\n\n## 料理\n\n夜は味噌ラーメン。\n", "2026年1月10日の日記\n2026年1月10日\n料理"),
    ({"title": "梅雨"}, "# 梅雨\n\n## 第1段落\n\n雨が続く。\n", "梅雨\n第1段落"),  # the same name once
    ({}, "# 梅雨\n\n## 第1段落\n\n雨が続く。\n", "梅雨\n第1段落"),
    ({"title": "梅雨"}, "## 第1段落\n\n雨が続く。\n", "梅雨\n第1段落"),  # no H1: the title leads
]  # fmt: skip


@pytest.mark.parametrize(("frontmatter", "text", "headings"), TITLE_WORDS)
def test_a_notes_title_is_among_its_heading_words_when_its_h1_says_something_else(
    frontmatter: dict[str, str], text: str, headings: str
) -> None:
    """A keyword search for 日記 found no note titled …の日記 whose H1 is the date alone."""
    chunk = next(
        c for c in chunk_document("note.md", frontmatter, text) if c.heading != c.parent_heading
    )
    assert chunk_writer.token_source(chunk)[0] == headings


def test_a_note_chunked_to_nothing_is_not_chunked_again_until_it_changes(
    db_url: str, tmp_path: Path
) -> None:
    """Found by its missing first chunk, a note of comments alone was chunked again by every
    run, and each no-op update said so."""
    vault = _vault(tmp_path, 2)
    (vault / "comment.md").write_text("<!-- 下書きのメモ -->\n", encoding="utf-8")
    (vault / "template.md").write_text("---\ntitle: 型\n---\n%% 見出しをここに %%\n")
    first = _sync(db_url, vault)
    assert {"comment.md", "template.md"} <= set(first.documents)
    assert _sync(db_url, vault).documents == []  # nothing changed: nothing chunked
    (vault / "comment.md").write_text("# 本文\n\nコメントの下に書いた。\n", encoding="utf-8")
    edited = _sync(db_url, vault)
    assert edited.documents == ["comment.md"] and edited.chunks_written == 1
    with db.connect(db_url) as conn:
        left = conn.execute("SELECT count(*) FROM rag.chunkless_docs").fetchone()
    assert left == (1,)  # template.md's; comment.md has a chunk now
