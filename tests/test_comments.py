"""Comments (a template's ``<!-- … -->`` or Obsidian's ``%% … %%``) are left out of a note's
title and its passages, as the note page leaves them out; code keeps them. Every case runs with
each syntax: the HTML text below, and the same text with Obsidian's markers."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.chunking import chunk_document
from knowledge_assets.core.chunks.strategies import ChunkingOptions, chunk_for
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.links.resolve import NoteLinks
from knowledge_assets.core.sources.local import LocalSource
from tests.migration_support import notes_to_rechunk, rerun_migration
from tests.test_search import ingest

TEMPLATE = (
    "<!--\n# 雛形の見出し\nここに要約を書く\n-->\n# 庭の記録\n\n"
    "<!-- draft: 2024 -->\n水やりをした。<!-- 後で書く --> 花が咲いた。\n\n"
    "## 道具 <!-- 要確認 -->\n\nじょうろ `<!-- code -->` を使う。\n\n"
    "```html\n<!-- 例 -->\n```\n"
)
NOTES = {
    "庭.md": TEMPLATE,
    "無題.md": "<!-- # 下書き -->\n<!--\n# 下書きの題\n-->\n本文だけの覚え書き。\n",
    "plain.md": "# 普通\n\n本文。\n",
}
MIGRATIONS = {"html": "032", "obsidian": "035"}  # the one that re-reads notes stored before
# comments a later line of their paragraph closes; how far the paragraph runs, as the page reads it
ACROSS_LINES = ["042", "046"]


@pytest.fixture(params=list(MIGRATIONS))
def syntax(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def written(text: str, syntax: str) -> str:
    """``text`` (written with HTML comments) with the comments of ``syntax``."""
    return text.replace("<!--", "%%").replace("-->", "%%") if syntax == "obsidian" else text


def test_comments_never_title_a_note_nor_show_in_its_passages(syntax: str) -> None:
    chunks = chunk_document("庭.md", {}, written(TEMPLATE, syntax))
    assert [c.heading_path for c in chunks] == ["庭の記録", "庭の記録 > 道具"]
    assert chunks[0].content == "水やりをした。 花が咲いた。"
    assert "title:庭の記録|" in chunks[0].embedding_text
    # code keeps its comments: a code span and a fenced block
    code = "じょうろ `<!-- code -->` を使う。\n\n```html\n<!-- 例 -->\n```"
    assert chunks[1].content == written(code, syntax)
    assert all("雛形" not in c.embedding_text and "draft" not in c.embedding_text for c in chunks)


@pytest.mark.parametrize("strategy", ["document", "scene", "recursive"])
def test_every_strategy_leaves_comments_out(strategy: str, syntax: str) -> None:
    options = ChunkingOptions(strategy=strategy)
    chunks = chunk_for("庭.md", {}, written(TEMPLATE, syntax), options=options)
    assert chunks and all(c.heading_path.startswith("庭の記録") for c in chunks)
    assert all("雛形" not in c.embedding_text and "後で" not in c.content for c in chunks)


@pytest.mark.parametrize(
    "body",
    ["<!-- open\n# 見出し\n", "<!-- c --> 後ろの文\n# 見出し\n"],
    ids=["unclosed", "text-after-close"],
)
def test_what_is_no_comment_block_stays_text(body: str, syntax: str) -> None:
    chunks = chunk_document("n.md", {}, written(body, syntax))
    assert chunks[0].heading == "見出し"
    assert written("<!--", syntax) in chunks[0].content or "後ろの文" in chunks[0].content


# A comment a later line of its paragraph closes goes with the lines between; one that a blank
# line, a heading, a list item or a fence comes before stays text, as on the note page.
ACROSS = [
    ("本文 <!-- 覚え\n書き --> 続き。", "本文  続き。"),
    ("- 項目 <!-- 覚え\n  書き --> 後\n- 次", "- 項目  後\n- 次"),
    ("> 引用 <!-- 覚え\n> 書き --> 後", "> 引用  後"),
    ("> 引用 <!-- 覚え\n書き --> 後", "> 引用  後"),  # a lazy line goes on with the quote
    ("本文 <!-- 覚え\n\n書き --> 続き。", "本文 <!-- 覚え\n\n書き --> 続き。"),
    ("本文 <!-- 覚え\n- 書き --> 続き。", "本文 <!-- 覚え\n- 書き --> 続き。"),
    ("本文 <!-- 覚え\n```\n書き -->\n```", "本文 <!-- 覚え\n```\n書き -->\n```"),
    ("本文 `<!--` 覚え\n書き --> 続き。", "本文 `<!--` 覚え\n書き --> 続き。"),  # code
    ("一 <!-- a\n二 --> 三 <!-- b\n四 --> 五", "一  三  五"),
    # Lines that start no block go on with the paragraph: inline HTML, a number that starts no
    # list (only 1 may end a paragraph), an empty list marker, a | line that heads no table.
    ("本文 <!-- 覚え\n<b>書き</b> --> 続き。", "本文  続き。"),
    ("生まれは <!-- 覚え\n1984. 書き --> 続き。", "生まれは  続き。"),
    ("本文 <!-- 覚え\n2) 書き --> 続き。", "本文  続き。"),
    ("本文 <!-- 覚え\n*\n書き --> 続き。", "本文  続き。"),
    ("本文 <!-- 覚え\n| 書き --> 続き。", "本文  続き。"),
    ("本文 <!-- 覚え\n** 書き --> 続き。", "本文  続き。"),
    # Blocks that end it: a block element, a quote in a quote, a table's header, the list's
    # next item whatever its number, a quote after a lazy line.
    ("本文 <!-- 覚え\n<div>書き --> 続き。", "本文 <!-- 覚え\n<div>書き --> 続き。"),
    ("> 引用 <!-- 覚え\n> > 書き --> 後", "> 引用 <!-- 覚え\n> > 書き --> 後"),
    ("本文 <!-- 覚え\n書き | x\n--- | ---\n-->", "本文 <!-- 覚え\n書き | x\n--- | ---\n-->"),
    ("1. 項目 <!-- 覚え\n2. 書き --> 後", "1. 項目 <!-- 覚え\n2. 書き --> 後"),
    ("1. 項目 <!-- 覚え\n   2. 書き --> 後", "1. 項目  後"),  # in the item: no list from 2
]


@pytest.mark.parametrize(("body", "kept"), ACROSS)
def test_a_comment_closed_on_a_later_line_of_its_paragraph_is_cut(
    body: str, kept: str, syntax: str
) -> None:
    chunks = chunk_document("n.md", {}, "# 題\n\n" + written(body, syntax))
    assert [c.content for c in chunks] == [written(kept, syntax)]
    # The note page shows the same words.
    html = render_note(written(body, syntax), NoteLinks("n.md", lambda: [], source="local"))
    for word in ("覚え", "書き"):
        assert (word in html) == (word in kept), html


def _store(root: Path, syntax: str) -> LocalSource:
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(written(text, syntax), encoding="utf-8")
    return LocalSource(root)


def _titles(conn: psycopg.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT file_path, title FROM rag.latest_docs").fetchall())


def _ingest(conn: psycopg.Connection, root: Path, syntax: str) -> None:
    sync_source(conn, _store(root, syntax))
    refresh_latest(conn, "docs_local")
    refresh_chunks(conn)


def test_the_stored_title_skips_headings_inside_comments(
    db_url: str, tmp_path: Path, syntax: str
) -> None:
    with db.connect(db_url) as conn:
        _ingest(conn, tmp_path / "vault", syntax)
        titles = _titles(conn)
        parents = conn.execute("SELECT DISTINCT parent_heading FROM rag.chunks").fetchall()
    assert titles == {"庭.md": "庭の記録", "無題.md": "無題", "plain.md": "普通"}
    assert sorted(r[0] for r in parents) == ["庭の記録", "普通", "無題"]


def test_notes_with_comments_stored_before_are_titled_and_chunked_again_and_only_they(
    db_url: str, tmp_path: Path, syntax: str
) -> None:
    with db.connect(db_url) as conn:
        _ingest(conn, tmp_path / "vault", syntax)
        # as the earlier rule stored them: titled by the heading inside the comment
        conn.execute("UPDATE rag.latest_docs SET title = '雛形の見出し' WHERE file_path = '庭.md'")
        conn.execute("UPDATE rag.latest_docs SET title = '下書きの題' WHERE file_path = '無題.md'")
        conn.commit()
    rerun_migration(db_url, MIGRATIONS[syntax])
    with db.connect(db_url) as conn:
        refresh_latest(conn, "docs_local")
        assert _titles(conn) == {"庭.md": "庭の記録", "無題.md": "無題", "plain.md": "普通"}
        assert notes_to_rechunk(conn) == ["庭.md", "無題.md"]


@pytest.mark.parametrize("migration", ACROSS_LINES)
def test_notes_with_comments_stored_before_are_chunked_again_and_only_they(
    db_url: str, tmp_path: Path, syntax: str, migration: str
) -> None:
    with db.connect(db_url) as conn:
        _ingest(conn, tmp_path / "vault", syntax)
        assert notes_to_rechunk(conn) == []
    rerun_migration(db_url, migration)
    with db.connect(db_url) as conn:
        assert notes_to_rechunk(conn) == ["庭.md", "無題.md"]
        report = refresh_chunks(conn)
    assert sorted(report.documents) == ["庭.md", "無題.md"]
    # Their comments close on the line they open: the same passages, kept as they were.
    assert report.chunks_written == 0 and report.chunks_unchanged > 0


CODE_NOTES = {
    "手順.md": "インストールの手順。\n\n```bash\n# install deps\nnpm i\n```\n",
    "見出しあり.md": "```sh\n# 古い手順\n```\n\n# 本当の題\n\n本文。\n",
    "題あり.md": "---\ntitle: 表紙の題\n---\n```\n# x\n```\n",
}


def test_a_comment_line_in_a_code_block_never_titles_a_note(db_url: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in CODE_NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    ingest(db_url, None, vault)
    expected = {"手順.md": "手順", "見出しあり.md": "本当の題", "題あり.md": "表紙の題"}
    with db.connect(db_url) as conn:
        assert _titles(conn) == expected
        # as the earlier rule stored them, from the shell comments
        conn.execute(
            "UPDATE rag.latest_docs SET title = 'install deps' WHERE file_path = '手順.md'"
        )
        conn.commit()
    rerun_migration(db_url, "037")
    with db.connect(db_url) as conn:
        assert notes_to_rechunk(conn) == [
            "手順.md",
            "見出しあり.md",
        ]  # fenced, no frontmatter title
    ingest(db_url, None, vault)
    with db.connect(db_url) as conn:
        assert _titles(conn) == expected
