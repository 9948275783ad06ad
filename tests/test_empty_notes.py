"""A note with no text (a bookmark note of frontmatter only, a template of headings and blank
lines) stays stored and readable by path, but makes no passage to embed and no search hit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import search
from knowledge_assets.core.search.notes import get_doc
from knowledge_assets.core.sources.local import LocalSource
from tests.pipeline_support import ALL, pipeline_resources

# Blank lines as pasted from the web or typed with a Japanese keyboard: a no-break space, an
# ideographic space, a narrow no-break space.
TEMPLATE = "---\ntitle: 週報の雛形\n---\n## 今週やったこと\n\u00a0\n## 来週\n\u3000\n\u202f\n"
EMPTY = {
    "栞.md": "---\ntitle: 週報の書き方\nurl: https://example.com/weekly\n---\n",
    "空白.md": "---\ntitle: 週報の空白\n---\n\n \t\n\u3000\n",
    "雛形.md": TEMPLATE,
    # Zero-width characters only: nothing to see, so nothing to search.
    "ゼロ幅.md": "---\ntitle: 週報のゼロ幅\n---\n\u200b\n\ufeff\u200d\n## 見出し\n\u2060\u200c\n",
}
REAL = "# 週報\n\n## 今週\n\n週報に庭の水やりを書いた。\n"


def _vault(root: Path) -> Path:
    root.mkdir()
    for name, text in {**EMPTY, "週報.md": REAL}.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_empty_notes_are_stored_and_readable_but_never_embedded_or_hit(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    dg.materialize(ALL, resources=pipeline_resources(db_url, vault), partition_key="usem3")
    with db.connect(db_url) as conn:
        chunked = conn.execute(
            "SELECT DISTINCT d.file_path FROM rag.chunks c JOIN rag.latest_docs d"
            " ON d.id = c.document_id"
        ).fetchall()
        passages = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
        vectors = conn.execute("SELECT count(*) FROM rag.embeddings").fetchone()
        hits = [h for mode in ("keyword", "vector", "hybrid")
                for h in search(conn, "週報 今週やったこと 来週", mode=mode).hits]  # fmt: skip
        docs = {name: get_doc(conn, name) for name in EMPTY}
    assert chunked == [("週報.md",)]
    assert passages == vectors == (1,)
    assert hits and {h.file_path for h in hits} == {"週報.md"}
    for name, doc in docs.items():
        assert doc is not None, name
        assert doc["title"].startswith("週報の") and doc["frontmatter"]["title"] == doc["title"]
        assert doc["not_searchable"] == "empty: no text besides headings", name


def test_notes_of_zero_width_text_stored_before_leave_search_once_migrated(
    blank_db_url: str, tmp_path: Path
) -> None:
    older = tmp_path / "sql"
    shutil.copytree(db.SQL_DIR, older)
    (older / "028_zero_width_text_is_blank.sql").unlink()
    db.migrate(blank_db_url, older)
    vault = _vault(tmp_path / "vault")
    with db.connect(blank_db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        before = conn.execute("SELECT file_path FROM rag.latest_docs ORDER BY 1").fetchall()
    assert before == [("ゼロ幅.md",), ("週報.md",)]
    db.migrate(blank_db_url)
    with db.connect(blank_db_url) as conn:
        refresh_latest(conn, "docs_local")
        refresh_chunks(conn)
        latest = conn.execute("SELECT file_path FROM rag.latest_docs").fetchall()
        chunked = conn.execute(
            "SELECT DISTINCT d.file_path FROM rag.chunks c JOIN rag.latest_docs d"
            " ON d.id = c.document_id"
        ).fetchall()
    assert latest == chunked == [("週報.md",)]


def test_notes_stored_before_are_judged_by_the_same_blanks(
    blank_db_url: str, tmp_path: Path
) -> None:
    """A store whose template note was searched under the server's own notion of whitespace
    drops it from search once migrated, at the next refresh."""
    older = tmp_path / "sql"
    shutil.copytree(db.SQL_DIR, older)
    for later in ("025_blank_bodies_by_unicode_whitespace.sql", "028_zero_width_text_is_blank.sql"):
        (older / later).unlink()  # 028 judges blanks by 025's rule and more
    db.migrate(blank_db_url, older)
    vault = _vault(tmp_path / "vault")
    with db.connect(blank_db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        refresh_chunks(conn)
        before = conn.execute("SELECT count(*) FROM rag.chunks WHERE content = ''").fetchone()
        conn.execute("SELECT raw.ensure_docs_table('docs_marks')")  # a declared source's table
    # the template's two sections, under the server's C.UTF-8 rule, and the zero-width note's
    # section, whose text shows nothing
    assert before == (3,)
    db.migrate(blank_db_url)
    with db.connect(blank_db_url) as conn:
        refresh_latest(conn, "docs_local")
        refresh_chunks(conn)
        latest = conn.execute("SELECT file_path FROM rag.latest_docs").fetchall()
        blank = conn.execute("SELECT count(*) FROM rag.chunks WHERE content = ''").fetchone()
        marks = conn.execute(
            "INSERT INTO raw.docs_marks (id, file_path, content, content_hash, version)"
            " VALUES (gen_random_uuid(), 'm.md', %s, 'h', 'v') RETURNING has_body",
            (TEMPLATE.split("---\n")[-1],),
        ).fetchone()
    assert latest == [("週報.md",)] and blank == (0,)
    assert marks == (False,)


@pytest.mark.parametrize(
    "cleared",
    [b"", b" \n\n", "\u00a0\n\u3000\n".encode(), b"\xef\xbb\xbf"],
    ids=["zero-bytes", "spaces-and-newlines", "nbsp-and-ideographic-space", "bom-only"],
)
def test_a_cleared_note_becomes_an_empty_note_and_its_old_text_leaves_search(
    db_url: str, tmp_path: Path, cleared: bytes
) -> None:
    """Select all and delete in the editor: the note stays, empty, and its words find nothing."""
    vault = _vault(tmp_path / "vault")
    resources = pipeline_resources(db_url, vault)
    dg.materialize(ALL, resources=resources, partition_key="usem3")
    (vault / "週報.md").write_bytes(cleared)
    os.utime(vault / "週報.md", ns=(7, 7))
    dg.materialize(ALL, resources=resources, partition_key="usem3")
    with db.connect(db_url) as conn:
        raw = conn.execute("SELECT content FROM raw.docs_local WHERE file_path = '週報.md'")
        rejected = conn.execute("SELECT count(*) FROM raw.rejected_files").fetchone()
        latest = conn.execute("SELECT file_path FROM rag.latest_docs").fetchall()
        passages = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
        vectors = conn.execute("SELECT count(*) FROM rag.embeddings").fetchone()
        hits = [h for mode in ("keyword", "vector", "hybrid")
                for h in search(conn, "週報 庭の水やり", mode=mode).hits]  # fmt: skip
        doc = get_doc(conn, "週報.md")
    assert raw.fetchall() == [(cleared.decode("utf-8-sig"),)] and rejected == (0,)
    assert latest == [] and passages == vectors == (0,) and hits == []
    assert doc is not None and "水やり" not in doc["content"]
    assert doc["not_searchable"] == "empty: no text besides headings"
