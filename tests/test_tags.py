"""Tags mean the same in the embedding text (Python) and in latest_docs / search filters (SQL)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.chunk_text import MAX_LIST_DEPTH, SPACES
from knowledge_assets.core.chunks.chunking import normalise_tags
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search.notes import list_tags
from knowledge_assets.core.sources.local import LocalSource
from tests.migration_support import notes_to_rechunk, rerun_migration


def _nested(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


CASES: list[tuple[Any, list[str]]] = [
    (["日記", "memo"], ["日記", "memo"]),
    (["#日記", " spaced ", "", None], ["日記", "spaced"]),
    ("日記, memo ,#rag", ["日記", "memo", "rag"]),
    ("日記 memo  #rag", ["日記", "memo", "rag"]),
    ("#single", ["single"]),
    ("", []),
    (None, []),
    ({"not": "tags"}, []),
    (2026, ["2026"]),
    (True, []),
    ([["日記", "夢"], "旅"], ["日記", "夢", "旅"]),
    (["旅", ["#夢", ["旅", "日記"]], "夢"], ["旅", "夢", "日記"]),
    ("旅, 夢, #旅", ["旅", "夢"]),
    ([None, True, {"k": "v"}, ["x", False], 1.5], ["x", "1.5"]),
    (["a", _nested("deepest kept", MAX_LIST_DEPTH - 1), _nested("too deep", MAX_LIST_DEPTH)],
     ["a", "deepest kept"]),
    # An input method's ideographic space after the word, tabs, no-break and zero-width spaces
    # are blanks around a tag; inside one they stay (日　記 is its own tag).
    (["日記\u3000", "\t旅\u00a0", "#\u3000夢", "\u200b日記\ufeff", "日\u3000記"],
     ["日記", "旅", "夢", "日\u3000記"]),
    (["\u200b", "\u3000", "#\u2060"], []),
    ("日記\u3000メモ\u00a0 #旅\u2003", ["日記", "メモ", "旅"]),
    ("日記 \u200b メモ", ["日記", "メモ"]),
]  # fmt: skip


def test_spaces_are_every_character_python_takes_for_whitespace() -> None:
    assert set(SPACES) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}


@pytest.mark.parametrize(("value", "expected"), CASES)
def test_python_and_sql_normalise_tags_alike(db_url: str, value: Any, expected: list[str]) -> None:
    assert normalise_tags(value) == expected
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT rag.note_tags(%s)", (Jsonb(value),)).fetchone()
    assert row is not None and row[0] == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([["シンデレラ", "灰かぶり"], "姫"], ["シンデレラ", "灰かぶり", "姫"]),
        ([" jira:ABC-1 ", ["jira:ABC-1", "", None, 7]], ["jira:ABC-1", "7"]),
        (["灰かぶり\u3000", "\u200b", "\t姫\u00a0"], ["灰かぶり", "姫"]),
        ("ひとつ", ["ひとつ"]),
        ({"not": "aliases"}, []),
        (None, []),
    ],
    ids=["nested", "messy", "unicode-blanks", "string", "mapping", "none"],
)
def test_aliases_are_flattened_trimmed_and_once(
    db_url: str, value: Any, expected: list[str]
) -> None:
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT rag.jsonb_text_array(%s)", (Jsonb(value),)).fetchone()
    assert row is not None and row[0] == expected


NESTED_NOTE = """---
tags:
  - 日記
  - - 夢
    - "#日記"
  - [旅, [夢]]
aliases: [[夢日記, ゆめ], 夢日記]
---
# 夢の記録

空を飛んだ。
"""


def test_a_block_list_with_sub_lists_gives_each_tag_once(db_url: str, tmp_path: Path) -> None:
    (tmp_path / "夢.md").write_text(NESTED_NOTE, encoding="utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(tmp_path))
        refresh_latest(conn, "docs_local")
        row = conn.execute("SELECT tags, aliases FROM rag.latest_docs").fetchone()
        counts = dict(list_tags(conn))
    assert row == (["日記", "夢", "旅"], ["夢日記", "ゆめ"])
    assert counts == {"日記": 1, "夢": 1, "旅": 1}


def test_notes_stored_under_the_earlier_rule_get_the_current_tags(
    db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "夢.md").write_text(NESTED_NOTE, encoding="utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(tmp_path))
        refresh_latest(conn, "docs_local")
        # as the earlier rule stored them: the sub-lists as literal text
        conn.execute("UPDATE rag.latest_docs SET tags = %s, aliases = %s",
                     (["日記", "['夢', '#日記']"], ["['夢日記', 'ゆめ']", "夢日記"]))  # fmt: skip
        conn.execute("DELETE FROM meta.migrations WHERE name = 'R__views.sql'")
        conn.commit()
    db.migrate(db_url)  # what the next start does once the rules changed
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT tags, aliases FROM rag.latest_docs").fetchone()
    assert row == (["日記", "夢", "旅"], ["夢日記", "ゆめ"])


def test_notes_whose_lists_read_differently_are_chunked_again_and_only_they(
    db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "夢.md").write_text(NESTED_NOTE, encoding="utf-8")
    (tmp_path / "twice.md").write_text("---\ntags: [旅, '#旅']\n---\n# 旅\n\n京都へ。\n", "utf-8")
    (tmp_path / "flag.md").write_text(
        "---\ncharacters: [太郎, true]\n---\n# 劇\n\n台詞。\n", "utf-8"
    )
    (tmp_path / "plain.md").write_text("---\ntags: [旅, 日記]\n---\n# 日記\n\n晴れ。\n", "utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(tmp_path))
        refresh_latest(conn, "docs_local")
        refresh_chunks(conn)
        conn.commit()
        assert notes_to_rechunk(conn) == []
    rerun_migration(db_url, "026")
    with db.connect(db_url) as conn:
        assert notes_to_rechunk(conn) == ["flag.md", "twice.md", "夢.md"]
