"""Tags written in a note's text (``#日記``) are its tags too, as in Obsidian: listed, filtered
on and shown beside the frontmatter's, and kept current as the text changes."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.chunks.inline_tags import MAX_INLINE_TAGS, inline_tags
from knowledge_assets.core.database import db
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.search.notes import list_tags
from tests.migration_support import notes_to_rechunk, rerun_migration
from tests.test_search import ingest


@pytest.mark.parametrize(
    ("body", "tags"),
    [
        ("本文 #日記 と #project/alpha。", ["日記", "project/alpha"]),
        ("#日記です。次の文", ["日記です"]),  # Japanese runs to the punctuation, as in Obsidian
        ("#行頭\n途中の#ではない", ["行頭"]),
        ("# 見出し\n## 節\n#タグ行", ["タグ行"]),  # "#タグ行" is no heading: a tag
        ("#Tag と #tag と #TAG", ["Tag"]),  # one tag, its first spelling
        ("#a/ と #1984 と #y1984 と #-", ["a", "y1984"]),  # a tag holds a letter
        ("issue #123を解決する #2024年", []),  # starting with a digit: an issue, a number
        ("　#全角スペースの後", ["全角スペースの後"]),
    ],
)
def test_tags_in_the_text(body: str, tags: list[str]) -> None:
    assert inline_tags(body) == tags


@pytest.mark.parametrize(
    "body",
    [
        "```\n#include <stdio.h>\n```",
        "~~~md\n#タグ\n~~~",
        "段落\n\n    #インデントのコード",
        "`#コード` と ``a`#b`` ",
        "<!-- #隠す -->\n<!--\n#隠す\n-->",
        "%% #隠す %%\n%%\n#隠す\n%%",
        "[[note#見出し]] [a](#anchor) https://example.com/#frag &#38; a#b",
        "[背景知識]: #背景知識\n[ref]: https://example.com/#a",
        "# 見出し\n## 節 #です",  # a heading's text is its title
    ],
)
def test_no_tags_in_code_comments_links_or_headings(body: str) -> None:
    assert inline_tags(body) == []


def test_a_list_keeps_its_indented_paragraphs_as_text() -> None:
    assert inline_tags("- 項目\n\n    #続きの段落\n\n        #入れ子の\n") == [
        "続きの段落",
        "入れ子の",
    ]


def test_a_note_of_thousands_of_tags_keeps_the_first_ones() -> None:
    body = " ".join(f"#t{i}" for i in range(5000))
    assert inline_tags(body) == [f"t{i}" for i in range(MAX_INLINE_TAGS)]


NOTES = {
    "inline.md": "# 京都\n\n寺を歩いた。 #旅 #Project\n",
    "both.md": "---\ntags: [project, 日記]\n---\n# 両方\n\n寺を見た。 #旅 #PROJECT\n",
    "code.md": "# コード\n\n寺の話。\n\n```sh\n#旅\n```\n",
    "plain.md": "# 無し\n\n寺の話だけ。\n",
}


def _vault(folder: Path) -> Path:
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _tags(conn: psycopg.Connection) -> dict[str, list[str]]:
    return dict(conn.execute("SELECT file_path, tags FROM rag.latest_docs").fetchall())


def _found(conn: psycopg.Connection, tag: str) -> set[str]:
    hits = search(conn, "寺", mode="keyword", filters=SearchFilters(tags=(tag,)), limit=20).hits
    return {h.file_path for h in hits}


def test_inline_tags_are_listed_filtered_and_follow_edits(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    ingest(db_url, None, vault)
    with db.connect(db_url) as conn:
        # the frontmatter's tags first, then the inline ones none of them has (case folded)
        assert _tags(conn) == {
            "inline.md": ["旅", "Project"], "both.md": ["project", "日記", "旅"],
            "code.md": [], "plain.md": [],
        }  # fmt: skip
        assert _found(conn, "旅") == {"inline.md", "both.md"}
        assert dict(list_tags(conn))["旅"] == 2
    (vault / "inline.md").write_text("# 京都\n\n寺を歩いた。 #散歩\n", encoding="utf-8")
    ingest(db_url, None, vault)
    with db.connect(db_url) as conn:
        assert _tags(conn)["inline.md"] == ["散歩"]
        assert _found(conn, "旅") == {"both.md"} and _found(conn, "散歩") == {"inline.md"}


def test_notes_stored_before_are_chunked_again_for_their_tags(db_url: str, tmp_path: Path) -> None:
    ingest(db_url, None, _vault(tmp_path / "vault"))
    with db.connect(db_url) as conn:  # as a store made before inline tags holds them
        conn.execute("UPDATE rag.latest_docs SET inline_tags = '{}', tags = '{}'")
        conn.commit()
    rerun_migration(db_url, "036")
    with db.connect(db_url) as conn:
        assert notes_to_rechunk(conn) == ["both.md", "code.md", "inline.md"]  # a "#" to read
    ingest(db_url, None, tmp_path / "vault")
    with db.connect(db_url) as conn:
        assert _tags(conn)["inline.md"] == ["旅", "Project"]
        assert _tags(conn)["both.md"] == ["project", "日記", "旅"]
