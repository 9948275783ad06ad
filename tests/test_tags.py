"""Tags mean the same in the embedding text (Python) and in latest_docs / search filters (SQL)."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg.types.json import Jsonb

from knowledge_assets.core.chunks.chunking import normalise_tags
from knowledge_assets.core.database import db

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
]


@pytest.mark.parametrize(("value", "expected"), CASES)
def test_python_and_sql_normalise_tags_alike(db_url: str, value: Any, expected: list[str]) -> None:
    assert normalise_tags(value) == expected
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT rag.note_tags(%s)", (Jsonb(value),)).fetchone()
    assert row is not None and row[0] == expected
