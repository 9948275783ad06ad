"""Similar notes' keyword half: a note's title and distinctive words as a BM25 query, and the
fusion of its notes with the vector's nearest ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.search.similar_words import fuse, keyword_neighbours, note_words
from tests.test_search import notes_store


def _row(path: str, score: float, heading: str = "", table: str = "docs_local") -> dict[str, Any]:
    return {"source_table": table, "file_path": path, "score": score, "heading": heading}


@pytest.mark.parametrize(
    ("vector", "keyword", "limit", "expected"),
    [
        # x: 1 + 0, z: 0 + 1 (a tie, kept in path order), y: 0.875 + 0, w: 0 + 0
        ([_row("x", .9), _row("y", .8), _row("z", .1)], [_row("z", 10), _row("w", 5)], 3,
         [("x", .5), ("z", .5), ("y", .4375)]),
        # no keyword list: the vector's order; one row alone scales to 1
        ([_row("a", .3), _row("b", .2)], [], 5, [("a", .5), ("b", 0.0)]),
        ([], [_row("k", 2.0)], 5, [("k", .5)]),
        # the same path in two sources is two notes
        ([_row("p", .9, table="docs_local")], [_row("p", 3, table="docs_books")], 5,
         [("p", .5), ("p", .5)]),
    ],
)  # fmt: skip
def test_fuse_weighs_each_list_scaled_to_one(
    vector: list[dict[str, Any]], keyword: list[dict[str, Any]], limit: int,
    expected: list[tuple[str, float]],
) -> None:  # fmt: skip
    fused = fuse(vector, keyword, limit, weight=0.5)
    assert [(r["file_path"], round(r["score"], 4)) for r in fused] == expected


def test_a_note_found_by_both_lists_keeps_its_nearest_section() -> None:
    fused = fuse([_row("n", 0.9, "近い節")], [_row("n", 4.0, "語の合う節")], 1, weight=0.5)
    assert fused[0]["heading"] == "近い節" and fused[0]["score"] == 1.0


def test_the_query_is_the_title_and_the_words_that_set_the_note_apart(
    server_url: str, tmp_path: Path
) -> None:
    """A word every note uses says nothing of the topic; the note's own rare words do, and the
    notes sharing them are its keyword neighbours, the note itself and its family left out."""
    common = "今日も記録を書いた。"
    notes = {
        "front.md": f"# 梅雨前線\n\n{common}停滞前線が北上し、梅雨前線の雨が続く。停滞前線。\n",
        "rain.md": f"# 雨の日\n\n{common}停滞前線のせいで洗濯物が乾かない。\n",
        "food.md": f"# 料理\n\n{common}味噌ラーメンを作った。\n",
    }
    with notes_store(server_url, tmp_path, notes) as url, db.connect(url) as conn:
        query = note_words(conn, "docs_local", "front.md")
        found = keyword_neighbours(conn, query, table="docs_local", exclude=["front.md"], k=5)
    assert query.startswith("梅雨前線 ") and "停滞" in query.split()
    assert "記録" not in query.split()  # in every note
    assert [r["file_path"] for r in found][:1] == ["rain.md"]
    assert "front.md" not in [r["file_path"] for r in found]
