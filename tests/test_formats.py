"""Seed 004's formats on real Postgres: books without frontmatter, article JSON bookmarks, the
``heading`` -> ``top_heading`` convention, and the payload fields and filters of search hits."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.formats import parse_file
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.sources.bookmarks import bookmark_sections, parse_bookmarks
from knowledge_assets.core.sources.registry import (
    KIND_DEFAULTS,
    SourceProfile,
    build_source,
    register,
)
from knowledge_assets.mcp import format as fmt
from tests.api_support import api_server
from tests.migration_support import notes_to_rechunk, rerun_migration

BOOK = """# 建築の四書

序文: 本書はウィトルウィウスの建築論を受け継ぐ古典である。

## 第一書 オーダー

円柱の比例を論じる。
"""
NOTE = """---
heading: architecture
description: 建築とは?
---

## 建築家の仕事

建築家は施主と対話して空間を設計する。
"""
ARTICLES = {
    "heading": "ai",
    "description": "AIについて",
    "body": [
        {
            "title": "形態素解析入門",
            "url": "https://example.com/sudachi",
            "ogTitle": "形態素解析入門",
            "ogDescription": "SudachiPy で日本語を分かち書きする方法",
            "quote": "辞書は三種類ある",
        },
        {
            "title": "ベクトル検索",
            "url": "https://example.com/pgvector",
            "ogTitle": "pgvector で近傍探索",
            "ogDescription": "HNSW 索引の作り方",
        },
    ],
}


def test_bookmark_text_is_title_ogtitle_when_different_description_and_quote() -> None:
    doc = parse_bookmarks("ai.json", json.dumps(ARTICLES, ensure_ascii=False).encode())
    assert isinstance(doc, ParsedDoc)
    assert doc.frontmatter == {"heading": "ai", "description": "AIについて"}
    first, second = bookmark_sections(doc.body)
    assert first.text == "形態素解析入門\nSudachiPy で日本語を分かち書きする方法\n辞書は三種類ある"
    assert second.text == "ベクトル検索\npgvector で近傍探索\nHNSW 索引の作り方"
    assert (first.url, second.url) == (
        "https://example.com/sudachi",
        "https://example.com/pgvector",
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"heading": "ai", "body": [', "malformed JSON: Expecting value (line 1, column 28)"),
        (b"[1, 2]", "not a bookmark file: the top level is a JSON array, not an object"),
        (b'{"heading": "ai"}', "not a bookmark file: 'body' is missing or not a list"),
        (b'{"body": ["x"]}', "not a bookmark file: body[0] is a JSON string, not an object"),
        (b'{"body": [{"title": 3}]}', "not a bookmark file: body[0].title is not a string"),
        (
            b'{"body": [{"ogImageUrl": "x"}]}',
            "not a bookmark file: body[0] has no title, url, ogTitle, ogDescription or quote",
        ),
        (b"\xff\xfe{}", "UTF-16 text, not UTF-8: save it as UTF-8"),
        (b"{\x81}", "not valid UTF-8: byte 0x81 at offset 1; save it as UTF-8"),
        *(
            (
                b'{"body": [{"title": "a", "x": ' + b"[" * depth + b"]" * depth + b"}]}",
                "not a bookmark file: arrays or objects nested too deeply",
            )
            for depth in (500, 100_000)
        ),
    ],
)
def test_malformed_bookmark_files_are_rejected_with_a_reason(data: bytes, reason: str) -> None:
    assert parse_bookmarks("bad.json", data) == Rejection("bad.json", reason)


def test_a_bad_entry_is_left_out_with_a_warning_and_the_good_ones_land() -> None:
    """One bad entry rejected the whole file, and every good bookmark in it."""
    data = json.dumps({"heading": "ai", "body": [
        {"title": "形態素解析入門", "url": "https://example.com/a"},
        "a stray string", {"title": "x", "url": 42}, {"ogImageUrl": "x.png"},
        {"ogTitle": "OG だけの記事", "ogDescription": "説明"},
    ]}, ensure_ascii=False).encode()  # fmt: skip
    doc = parse_bookmarks("marks.json", data)
    assert isinstance(doc, ParsedDoc)
    assert [b.title for b in bookmark_sections(doc.body)] == ["形態素解析入門", "OG だけの記事"]
    assert doc.warnings == (
        "body[1] is a JSON string, not an object: the entry is left out",
        "body[2].url is not a string: the entry is left out",
        "body[3] has no title, url, ogTitle, ogDescription or quote: the entry is left out",
    )


def test_many_bad_entries_are_named_up_to_five_and_counted() -> None:
    data = json.dumps({"body": [{"title": "ok"}, *([1] * 8)]}).encode()
    doc = parse_bookmarks("marks.json", data)
    assert isinstance(doc, ParsedDoc) and len(doc.warnings) == 6
    assert doc.warnings[-1] == "3 more entries are left out for the same kinds of reason"


def test_a_number_too_long_for_python_is_kept_as_written() -> None:
    """It rejected the whole file: "could not be parsed: ValueError: Exceeds the limit (4300
    digits) ...; use sys.set_int_max_str_digits()"."""
    digits = "9" * 5000
    data = f'{{"id": {digits}, "body": [{{"title": "a", "id": {digits}}}]}}'.encode()
    doc = parse_bookmarks("marks.json", data)
    assert isinstance(doc, ParsedDoc) and doc.frontmatter == {"id": digits}
    assert [b.title for b in bookmark_sections(doc.body)] == ["a"]


@pytest.mark.parametrize("data", [b"", b"  \n"], ids=["zero-bytes", "blank"])
def test_a_cleared_bookmark_file_is_an_empty_note(data: bytes) -> None:
    doc = parse_bookmarks("marks.json", data)
    assert isinstance(doc, ParsedDoc) and doc.body == "" and doc.frontmatter == {}
    assert bookmark_sections(doc.body) == []


def _profile(name: str, kind: str, heading: str | None = None) -> SourceProfile:
    doc_type, content_type = KIND_DEFAULTS[kind]
    return SourceProfile(name, kind, doc_type, content_type, default_heading=heading)


def _ingest(url: str, profile: SourceProfile, folder: Path) -> list[tuple[str, str]]:
    with db.connect(url) as conn:
        register(conn, profile)
        conn.commit()
        source = build_source(profile, {"path": str(folder)})
        report = sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=8000)
    return report.rejected


def test_books_notes_and_bookmarks_share_one_store(db_url: str, tmp_path: Path) -> None:
    books, notes, marks = (tmp_path / n for n in ("book", "note", "article"))
    for folder in (books, notes, marks):
        folder.mkdir()
    (books / "9784003362211.md").write_text(BOOK)
    (notes / "architect.md").write_text(NOTE)
    (notes / "ignored.json").write_text("{}")  # notes sources read Markdown only
    (marks / "ai.json").write_text(json.dumps(ARTICLES, ensure_ascii=False))
    (marks / "broken.json").write_text('{"body": [')
    (marks / "readme.md").write_text("# not a bookmark")  # bookmark sources read JSON only
    assert _ingest(db_url, _profile("books", "books", "unknown"), books) == []
    assert _ingest(db_url, _profile("notes", "local"), notes) == []
    rejected = _ingest(db_url, _profile("articles", "bookmarks"), marks)
    assert rejected == [("broken.json", "malformed JSON: Expecting value (line 1, column 11)")]

    with db.connect(db_url) as conn:
        book = search(conn, "ウィトルウィウス", mode="keyword", limit=3).hits[0]
        note = search(conn, "施主", mode="keyword", limit=3).hits[0]
        mark = search(conn, "分かち書き", mode="keyword", limit=3).hits[0]
        only_books = search(
            conn, "建築", mode="keyword", filters=SearchFilters(content_types=("books",))
        ).hits
        by_heading = search(
            conn, "建築", mode="keyword", filters=SearchFilters(top_headings=("architecture",))
        ).hits
        by_type = search(
            conn, "索引", mode="keyword", filters=SearchFilters(types=("bookmark_json",))
        ).hits
        none = search(conn, "施主", mode="keyword", filters=SearchFilters(types=("bookmark_json",)))
    # a book: title from the H1, the text before the first ## kept, top heading "unknown"
    assert (book.title, book.heading, book.type, book.content_type) == (
        "建築の四書", "建築の四書", "markdown_note", "books",
    )  # fmt: skip
    assert book.top_heading == "unknown" and book.heading_path == ("unknown", "建築の四書")
    # a note: frontmatter heading becomes top_heading
    assert (note.top_heading, note.content_type) == ("architecture", "notes")
    assert note.heading_path == ("architecture", "architect", "建築家の仕事")
    # a bookmark: one chunk per article, url kept
    assert (mark.type, mark.content_type, mark.top_heading) == ("bookmark_json", "articles", "ai")
    assert mark.url == "https://example.com/sudachi" and mark.heading == "形態素解析入門"
    assert {h.file_path for h in only_books} == {"9784003362211.md"}
    assert {h.file_path for h in by_heading} == {"architect.md"}
    assert [h.url for h in by_type] == ["https://example.com/pgvector"]
    assert none.hits == []
    rendered = fmt.search_result(type("R", (), {**vars(none), "hits": [mark]})())  # type: ignore[arg-type]
    hit = rendered["hits"][0]
    assert hit["heading_path"] == ["ai", "AIについて", "形態素解析入門"]
    assert (hit["type"], hit["content_type"], hit["url"]) == (
        "bookmark_json", "articles", "https://example.com/sudachi",
    )  # fmt: skip


def test_an_article_saved_twice_in_a_file_is_one_hit(db_url: str, tmp_path: Path) -> None:
    """Each copy was a chunk of its own, and search listed the article twice; the same article
    in another file (another category) is still its own hit."""
    marks = tmp_path / "article"
    marks.mkdir()
    first = ARTICLES["body"][0]
    ai = {**ARTICLES, "body": [first, ARTICLES["body"][1], dict(first)]}
    (marks / "ai.json").write_text(json.dumps(ai, ensure_ascii=False))
    nlp = {"heading": "nlp", "body": [first]}
    (marks / "nlp.json").write_text(json.dumps(nlp, ensure_ascii=False))
    assert _ingest(db_url, _profile("articles", "bookmarks"), marks) == []
    with db.connect(db_url) as conn:
        hits = search(conn, "分かち書き", mode="keyword", limit=10).hits
        assert sorted((h.file_path, h.url) for h in hits) == [
            ("ai.json", "https://example.com/sudachi"),
            ("nlp.json", "https://example.com/sudachi"),
        ]
        # Bookmark files stored before are chunked again, and only they.
        (tmp_path / "note").mkdir()
        (tmp_path / "note" / "architect.md").write_text(NOTE)
    assert _ingest(db_url, _profile("notes", "local"), tmp_path / "note") == []
    rerun_migration(db_url, "044")
    with db.connect(db_url) as conn:
        assert notes_to_rechunk(conn) == ["ai.json", "nlp.json"]


def test_bookmark_files_rejected_for_one_entry_are_read_again(db_url: str) -> None:
    """sql/045: such a file is unchanged, and an unchanged rejected file is never read again."""
    rows = [
        ("docs_articles", "ai.json", "not a bookmark file: body[2].url is not a string", "v1"),
        ("docs_articles", "top.json", "not a bookmark file: 'body' is missing or not a list", "v1"),
        ("docs_local", "n.md", "malformed YAML frontmatter: …", "v1"),
    ]
    with db.connect(db_url) as conn:
        conn.cursor().executemany(
            "INSERT INTO raw.rejected_files (source_table, file_path, reason, version)"
            " VALUES (%s, %s, %s, %s)",
            rows,
        )
        conn.commit()
    rerun_migration(db_url, "045")
    with db.connect(db_url) as conn:
        versions = dict(
            conn.execute("SELECT file_path, version FROM raw.rejected_files").fetchall()
        )
    assert versions == {"ai.json": "", "top.json": "v1", "n.md": "v1"}


POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"
)


@pytest.mark.parametrize("path", ["notes/大きな.md", "marks/ai.json"])
def test_a_git_lfs_pointer_is_rejected_instead_of_stored_as_the_note(path: str) -> None:
    """A note kept in LFS, read from a clone without `git lfs pull` or through GitHub's API,
    became a note whose text was the pointer."""
    found = parse_file(path, POINTER)
    assert isinstance(found, Rejection) and found.reason.startswith(
        "a Git LFS pointer, not the file"
    )


def test_a_note_about_lfs_pointers_is_a_note() -> None:
    text = POINTER + "\n".join(["LFS のポインターの書式について。"] * 40).encode()
    assert isinstance(parse_file("lfs.md", text), ParsedDoc)


def test_a_bookmark_file_reads_as_its_linked_articles_in_the_note_view(
    db_url: str, tmp_path: Path
) -> None:
    """The stored body is the articles as JSON; the API's note view shows each as a heading
    with a link to its address, its description and its quote, the texts escaped; a search hit
    of an article carries its address."""
    saved = {**ARTICLES, "body": [*ARTICLES["body"], {"title": "<b>[太字]</b>", "url": "https://example.com/a b"}]}  # fmt: skip
    (tmp_path / "ai.json").write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")
    assert _ingest(db_url, _profile("articles", "bookmarks"), tmp_path) == []
    with (
        api_server(db_url, Asker(LLMSettings())) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        note = client.get("/api/notes/ai.json", params={"source": "articles"}).json()["data"]
        hit = client.post("/api/search/keyword", json={"query": "分かち書き"}).json()["data"][0]
    html = note["html"]
    assert '"ogDescription"' not in html and "形態素解析入門</h3>" in html
    assert (
        '<a href="https://example.com/sudachi"' in html
        and "SudachiPy で日本語を分かち書きする方法" in html
    )
    assert "<blockquote>\n<p>辞書は三種類ある</p>" in html
    assert "&lt;b&gt;[太字]&lt;/b&gt;</h3>" in html and 'href="https://example.com/a%20b"' in html
    assert note["properties"] == [{"name": "description", "value": "AIについて"}, {"name": "heading", "value": "ai"}]  # fmt: skip
    assert (hit["type"], hit["url"]) == ("bookmark_json", "https://example.com/sudachi")


def test_a_sources_new_content_type_and_heading_reach_its_stored_notes(
    db_url: str, tmp_path: Path
) -> None:
    """Rows were rewritten only when their file changed: a source's new content_type or
    default_heading never reached its notes, even with update --force."""
    (tmp_path / "9784003362211.md").write_text(BOOK)
    _ingest(db_url, _profile("books", "books", "unknown"), tmp_path)
    renamed = SourceProfile("books", "books", "markdown_note", "novels", default_heading="小説")
    _ingest(db_url, renamed, tmp_path)
    with db.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT content_type, top_heading FROM rag.latest_docs WHERE source_table = 'docs_books'"
        ).fetchall()
        hits = search(conn, "ウィトルウィウス", mode="keyword", filters=SearchFilters(content_types=("novels",))).hits  # fmt: skip
    assert rows == [("novels", "小説")] and hits


@pytest.mark.parametrize(
    ("frontmatter", "content_type"),
    [
        ("content_type: project", "project"),
        ("type: meeting", "meeting"),
        ("type: [project, active]", "notes"),  # was the JSON text of the list
        ("content_type: 3\ntype: ' '", "notes"),
    ],
)
def test_a_content_type_is_a_frontmatter_text(
    db_url: str, tmp_path: Path, frontmatter: str, content_type: str
) -> None:
    (tmp_path / "n.md").write_text(f"---\n{frontmatter}\n---\n# 会議\n\n本文。\n")
    _ingest(db_url, _profile("notes", "local"), tmp_path)
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT content_type FROM rag.latest_docs").fetchone()
    assert row == (content_type,)
