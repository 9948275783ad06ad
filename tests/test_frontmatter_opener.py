"""Only a first line of exactly ``---`` opens frontmatter, as in Obsidian: a note that starts
with a longer horizontal rule (``----``) is all body, where the prose under its rule was read as
YAML (the note rejected, or its text taken for frontmatter)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
from tests.migration_support import rerun_migration

RULED = "----\n序文です。\n----\n本文。\n"


@pytest.mark.parametrize(
    ("text", "frontmatter", "body"),
    [
        (RULED, {}, RULED),
        ("-----\ntitle: 題\n-----\n本文\n", {}, "-----\ntitle: 題\n-----\n本文\n"),
        ("---\ntitle: 題\n---\n本文\n", {"title": "題"}, "\n本文\n"),
        ("--- \t\ntitle: 題\n---\n本文\n", {"title": "題"}, "\n本文\n"),  # trailing blanks
        ("---\ntitle: 題\n----\n本文\n", {"title": "題"}, "\n本文\n"),  # closed as before
    ],
)
def test_only_three_dashes_open_frontmatter(text: str, frontmatter: dict, body: str) -> None:
    doc = parse_document("a.md", text.encode())
    assert isinstance(doc, ParsedDoc)
    assert (doc.frontmatter, doc.body) == (frontmatter, body)


def test_a_note_rejected_before_for_its_opening_rule_lands_at_the_next_sync(
    db_url: str, tmp_path: Path
) -> None:
    """sql/062: a file rejected for its frontmatter is read again once, and lands."""
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "ruled.md"
    note.write_text("---\n序文です。  \n---\n本文。\n", encoding="utf-8")  # as long as RULED
    os.utime(note, ns=(1, 1))
    with db.connect(db_url) as conn:
        first = sync_source(conn, LocalSource(vault))
    assert [p for p, _ in first.rejected] == ["ruled.md"]
    note.write_text(RULED, encoding="utf-8")  # what an older version rejected, unchanged since
    os.utime(note, ns=(1, 1))
    with db.connect(db_url) as conn:
        unchanged = sync_source(conn, LocalSource(vault))
    assert [p for p, _ in unchanged.still_rejected] == ["ruled.md"]
    rerun_migration(db_url, "062")
    with db.connect(db_url) as conn:
        again = sync_source(conn, LocalSource(vault))
        stored = conn.execute("SELECT content FROM raw.docs_local").fetchall()
        left = conn.execute("SELECT count(*) FROM raw.rejected_files").fetchone()
    assert again.new == ["ruled.md"] and stored == [(RULED,)] and left == (0,)
