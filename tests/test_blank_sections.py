"""A section of invisible text (zero-width characters, no-break or ideographic spaces) is as
empty as a heading with no body: it never becomes a passage of invisible text. Python's blank
rule and the whole-note rule of the store (``has_body``) are the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from psycopg import sql

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.chunk_text import is_blank
from knowledge_assets.core.chunks.chunking import chunk_document
from knowledge_assets.core.chunks.strategies import ChunkingOptions, chunk_for
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
from tests.migration_support import notes_to_rechunk, rerun_migration

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00a0", "\u3000"]


def _note(blank: str) -> str:
    return f"# 庭\n\n{blank}\n\n## 空\n\n## 幅\n{blank}{blank}\n \n## 実\n\n水やりをした。\n"


@pytest.mark.parametrize("blank", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_a_section_of_invisible_text_is_as_empty_as_a_heading_alone(blank: str) -> None:
    chunks = chunk_document("庭.md", {}, _note(blank))
    assert [c.heading for c in chunks] == ["空", "幅", "実"]  # the blank intro makes none
    empty, invisible, _ = chunks
    assert invisible.content == empty.content == ""
    assert invisible.embedding_text == empty.embedding_text.replace("## 空", "## 幅")
    assert chunks[2].embedding_text.count("[prev]") == 0


@pytest.mark.parametrize("strategy", ["document", "scene", "recursive"])
def test_every_strategy_leaves_invisible_sections_out(strategy: str) -> None:
    chunks = chunk_for("庭.md", {}, _note("\u200b\u2060"), options=ChunkingOptions(strategy))
    assert chunks and all(not is_blank(c.content) for c in chunks)


def test_python_and_the_store_call_the_same_characters_blank(db_url: str) -> None:
    """Every code point (but ``#``, a heading line by itself) is blank for the chunker exactly
    when ``has_body`` (the whole-note rule) finds no text in it."""
    with db.connect(db_url) as conn:
        row = conn.execute(
            "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a"
            " ON a.attrelid = d.adrelid AND a.attnum = d.adnum"
            " WHERE d.adrelid = 'raw.docs_local'::regclass AND a.attname = 'has_body'"
        ).fetchone()
        assert row is not None
        query = sql.SQL(
            "SELECT array_agg(i ORDER BY i) FROM (SELECT i, chr(i) AS content"
            " FROM generate_series(1, 1114111) i WHERE i NOT BETWEEN 55296 AND 57343) t"
            " WHERE NOT ({})"
        ).format(sql.SQL(row[0]))
        found = conn.execute(query).fetchone()
    assert found is not None
    in_store = set(found[0]) - {ord("#")}
    in_python = {i for i in range(1, 0x110000) if not 0xD800 <= i <= 0xDFFF and is_blank(chr(i))}
    assert in_python == in_store
    assert {ord(c) for c in INVISIBLE} <= in_python


def test_notes_chunked_before_are_chunked_again_and_only_they(db_url: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "庭.md").write_text(_note("\u200b"), encoding="utf-8")
    (vault / "畑.md").write_text(_note("\u3000"), encoding="utf-8")  # blank under the old rule
    (vault / "空.md").write_text("# 空\n\n## 見出し\n\n## 本文\n\n晴れ。\n", encoding="utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        refresh_chunks(conn)
        # as the earlier rule chunked it: the zero-width section kept its text
        conn.execute(
            "UPDATE rag.chunks SET content = %s WHERE heading = '幅' AND document_id ="
            " (SELECT id FROM rag.latest_docs WHERE file_path = '庭.md')",
            ("\u200b\u200b",),
        )
        conn.commit()
    rerun_migration(db_url, "033")
    with db.connect(db_url) as conn:
        stale = notes_to_rechunk(conn)
        refresh_chunks(conn)
        invisible = conn.execute(
            "SELECT count(*) FROM rag.chunks WHERE content = %s", ("\u200b\u200b",)
        ).fetchone()
    assert stale == ["庭.md"]
    assert invisible == (0,)
