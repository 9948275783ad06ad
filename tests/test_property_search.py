"""Obsidian's property search typed in a query, ``[status]`` and ``[status:done]``: how the text
between the brackets is read (unit), and which notes each test keeps on real Postgres over a
vault whose frontmatter is as varied as people write it (lists, numbers, true/false, empty
values, a property name in capitals, a value with LIKE's wildcards, a decomposed Japanese value),
alone, with words, excluded and joined by OR."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.search import search
from knowledge_assets.core.search.listing import notes_kept
from knowledge_assets.core.search.operators import (
    UnsearchableQuery,
    listed,
    read_query,
    split_query,
)
from knowledge_assets.core.search.properties import (
    PropertyTest,
    property_values,
    read_property,
    shown_properties,
)
from tests.test_search import notes_store

NOTES = {
    "book.md": "---\nstatus: 進行中\ntype: book\nauthors: [宮沢賢治, 高村光太郎]\nrating: 5\n"
    "published: true\n---\n# 銀河鉄道の夜\n\n読書メモ。星祭りの夜の話。\n",
    "done.md": "---\nStatus: Done\ntype: Book\n---\n# 春と修羅\n\n読み終えた詩集。\n",
    "blank.md": "---\nstatus:\n---\n# 空のステータス\n\n値のないプロパティ。\n",
    "quoted.md": '---\nstatus: ""\n---\n# 空の文字列\n\n空文字のプロパティ。\n',
    "list.md": "---\nstatus: []\n---\n# 空のリスト\n\n空リストのプロパティ。\n",
    "percent.md": "---\nstatus: 50%_half\n---\n# 半分\n\n半分まで進んだ。\n",
    "nfd.md": f"---\nproject: {unicodedata.normalize('NFD', 'ブログ')}\n---\n# 記事\n\n下書き。\n",
    "plain.md": "# 読書の記録\n\nフロントマターのないノート。読書について。\n",
}
STATUS = {"book.md", "done.md", "blank.md", "quoted.md", "list.md", "percent.md"}
EMPTY = {"blank.md", "quoted.md", "list.md"}


@pytest.mark.parametrize(
    ("typed", "test"),
    [
        ("status", PropertyTest("status")),
        (" Status ", PropertyTest("status")),
        ("status:done", PropertyTest("status", ("done",))),
        ("Status : Done ", PropertyTest("status", ("Done",))),
        ("status:in progress", PropertyTest("status", ("in progress",))),
        ('status:"in progress"', PropertyTest("status", ("in progress",))),
        ("status:done OR draft", PropertyTest("status", ("done", "draft"))),
        ("status:done or draft", PropertyTest("status", ("done or draft",))),  # OR in capitals
        ("status:null", PropertyTest("status", (), empty=True)),
        ("status:done OR null", PropertyTest("status", ("done",), empty=True)),
        ('status:"null"', PropertyTest("status", ("null",))),  # the word, quoted
        ("status:", PropertyTest("status", ("",))),  # left for the reader to refuse
        ("status:done OR", PropertyTest("status", ("done", ""))),
    ],
)
def test_the_text_between_the_brackets_is_read_as_obsidian_reads_it(
    typed: str, test: PropertyTest
) -> None:
    assert read_property(typed) == test


@pytest.mark.parametrize(
    ("query", "kept", "not_kept", "words"),
    [
        ("[status:done] 旅行", ("status:done",), (), "旅行"),
        ("-[status:done] 旅行", (), ("status:done",), "旅行"),
        ("[status:in progress] 旅行", ("status:in progress",), (), "旅行"),
        ("[a] [b:x]", ("a", "b:x"), (), ""),
        # links and a lone pair of brackets are words
        ("[[銀河鉄道]] 星", (), (), "[[銀河鉄道]] 星"),
        ("[text](https://example.com) 星", (), (), "[text](https://example.com) 星"),
        ("[ ] 星", (), (), "[ ] 星"),
        ("[:x] 星", (), (), "[:x] 星"),
    ],
)
def test_property_operators_are_read_out_of_the_query(
    query: str, kept: tuple[str, ...], not_kept: tuple[str, ...], words: str
) -> None:
    parts = split_query(query)
    assert (parts.properties, parts.not_properties, parts.words) == (kept, not_kept, words)


def test_property_operators_joined_by_or_are_one_group() -> None:
    parts = split_query("[type:book] OR [status:null] 星")
    assert parts.any_properties == (("type:book", "status:null"),) and parts.words == "星"
    with pytest.raises(UnsearchableQuery, match=r"two \[property\] searches"):
        listed(None, split_query("[type:book] OR tag:日記"))


@pytest.mark.parametrize("query", ["[status:]", "[status:done OR] 星", '-[status:""]'])
def test_a_property_test_without_a_value_is_refused_with_the_fix(query: str) -> None:
    with pytest.raises(UnsearchableQuery, match=r"names nothing after the colon.*\[status\]"):
        listed(None, split_query(query))


@pytest.fixture(scope="module")
def conn(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[psycopg.Connection]:
    folder: Path = tmp_path_factory.mktemp("properties")
    with notes_store(server_url, folder, NOTES) as url, db.connect(url) as c:
        yield c


def _kept(conn: psycopg.Connection, query: str) -> set[str]:
    total, notes = notes_kept(conn, listed(None, split_query(query)), limit=100)
    assert total == len(notes)
    return {n.file_path for n in notes}


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("[status]", STATUS),  # any value, an empty one too; names in any case (Status:)
        ("[STATUS:DONE]", {"done.md"}),  # values in any case
        ("[status:null]", EMPTY),  # no value, "" and [] alike
        ("[status:進行中 OR done]", {"book.md", "done.md"}),
        ("[status:done OR null]", {"done.md", *EMPTY}),
        ("[authors:宮沢]", {"book.md"}),  # an item of a list
        ("[rating:5]", {"book.md"}),  # a number as written
        ("[published:true]", {"book.md"}),
        ("[status:%]", {"percent.md"}),  # a wildcard is the character itself
        ("[status:_half]", {"percent.md"}),
        ("[status:d_ne]", set()),  # nor is _ any character (Done)
        ("[project:ブログ]", {"nfd.md"}),  # written decomposed, typed composed
        ("[type:book] -[status:done]", {"book.md"}),
        ("[type:book] OR [status:null]", {"book.md", "done.md", *EMPTY}),
        ("-[status]", {"nfd.md", "plain.md"}),
        ("[nothing]", set()),
        ("[type:magazine]", set()),
    ],
)
def test_a_query_of_property_tests_lists_exactly_the_notes_they_keep(
    conn: psycopg.Connection, query: str, kept: set[str]
) -> None:
    assert _kept(conn, query) == kept


def test_a_property_test_narrows_a_keyword_search(conn: psycopg.Connection) -> None:
    def found(query: str) -> set[str]:
        return {h.file_path for h in search(conn, query, mode="keyword").hits}

    assert {"book.md", "done.md", "plain.md"} <= found("読書 読み終える 詩集")
    assert found("読書 読み終える 詩集 [type:book]") == {"book.md", "done.md"}
    assert found("読書 読み終える 詩集 -[type:book]") == {"plain.md"}
    assert found("読書 [status:進行中]") == {"book.md"}


def test_the_values_a_property_is_given_are_listed_most_used_first(
    conn: psycopg.Connection,
) -> None:
    assert property_values(conn, "type") == ["Book", "book"]
    assert property_values(conn, "status") == ["50%_half", "Done", "進行中"]
    assert property_values(conn, "nothing") == []


@pytest.mark.parametrize(
    ("frontmatter", "shown"),
    [
        (None, []),
        ({"title": "t", "tags": ["a"], "aliases": ["b"], "created": "2026-01-01"}, []),
        ({"Updated": "2026-01-02", "createdAt": "2026-01-01"}, []),  # the dates' line has them
        (
            {"type": "book", "Authors": ["宮沢賢治", "高村光太郎"], "rating": 5},
            [("Authors", "宮沢賢治, 高村光太郎"), ("rating", "5"), ("type", "book")],
        ),
        (
            {"done": True, "status": None, "links": []},
            [("done", "true"), ("links", ""), ("status", "")],
        ),
        ({"date": "2026-01-10", "meta": {"a": 1}}, [("date", "2026-01-10"), ("meta", '{"a": 1}')]),
    ],
)
def test_a_notes_other_properties_are_shown_by_name_as_text(
    frontmatter: dict[str, object] | None, shown: list[tuple[str, str]]
) -> None:
    assert shown_properties(frontmatter) == shown


@pytest.mark.parametrize(
    ("query", "properties", "words"),
    [
        ("[status:done] 読書", ("status:done",), "読書"),
        ("[STATUS] 読書", ("STATUS",), "読書"),  # a name in any case
        ("[x] 読書", (), "[x] 読書"),  # no note has x: a checkbox, a footnote mark, text
        ("[prev] 読書 [type:book]", ("type:book",), "[prev] 読書"),
        # joined by OR, a term naming no note's property is a test: it keeps no note
        ("[注意:重要] OR [type:book] 読書", ("注意:重要", "type:book"), "読書"),
    ],
)
def test_a_bracketed_term_is_a_property_test_only_when_a_note_has_that_property(
    conn: psycopg.Connection, query: str, properties: tuple[str, ...], words: str
) -> None:
    parts = read_query(conn, query)
    assert (parts.all_properties, parts.words, parts.or_problem) == (properties, words, "")


def test_pasted_text_with_brackets_is_searched_not_filtered(conn: psycopg.Connection) -> None:
    """What an LLM client or a pasted line holds ([x], [1]) finds what its words find."""
    hits = {h.file_path for h in search(conn, "[x] 読書 [1]", mode="keyword").hits}
    assert hits == {h.file_path for h in search(conn, "読書", mode="keyword").hits} != set()
