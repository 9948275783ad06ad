"""A plain frontmatter value's YAML anchor that no alias uses (``title: &anchor``) is almost
always text starting with ``&``: YAML drops it, so the note is kept as YAML reads it (an empty
title falls back to the H1) with a warning naming the line and the quoted fix."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document
from knowledge_assets.core.store_status import read_status
from knowledge_assets.defs.index.assets import chunks
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from tests.pipeline_support import metadata_values, pipeline_resources

TABLES = [raw_docs, latest_docs, chunks]  # the embeddings step reads no frontmatter

EMPTY = 'line 2: `&anchor` is read as a YAML anchor, not text, so the value is empty: quote it: write `title: "&anchor"`'  # fmt: skip


@pytest.mark.parametrize(
    ("yaml_text", "value", "warning"),
    [
        ("title: &anchor", None, EMPTY),
        (
            "title: &amp Co",
            "Co",
            'line 2: `&amp` is read as a YAML anchor, not text, so the value is `Co`: quote it: write `title: "&amp Co"`',
        ),
        (
            "tags:\n  - &x",
            [None],
            'line 3: `&x` is read as a YAML anchor, not text, so the value is empty: quote it: write `- "&x"`',
        ),
        (
            "tags: [&x, b] # a comment",
            [None, "b"],
            'line 2: `&x` is read as a YAML anchor, not text, so the value is empty: quote it: write `tags: ["&x", b] # a comment`',
        ),
        ("base: &b x\ntitle: *b", "x", None),  # an anchor an alias uses is YAML, meant
        ('title: &a "quoted"', "quoted", None),  # quoted: written by someone who knows YAML
        ("base: &b {a: 1}\nx:\n  <<: *b", {"a": 1}, None),
    ],
)
def test_an_unused_anchor_on_a_plain_value_is_a_warning(
    yaml_text: str, value: object, warning: str | None
) -> None:
    doc = parse_document("a.md", f"---\n{yaml_text}\n---\n# 見出し\n".encode())
    assert isinstance(doc, ParsedDoc)
    key = "tags" if "tags" in doc.frontmatter else ("x" if "x" in doc.frontmatter else "title")
    assert doc.frontmatter[key] == value
    assert doc.warnings == ((warning,) if warning else ())


def _title(db_url: str, path: str) -> str | None:
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT title FROM rag.latest_docs WHERE file_path = %s", (path,))
        return row.fetchone()[0]  # type: ignore[index]


def test_the_note_lands_titled_by_its_heading_and_status_names_the_fix(
    db_url: str, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "anchor.md"
    note.write_text("---\ntitle: &anchor\n---\n# 見出し\n\n本文。\n", encoding="utf-8")
    (vault / "good.md").write_text("# 良い\n\n別の本文。\n", encoding="utf-8")
    resources = pipeline_resources(db_url, vault)
    with dg.DagsterInstance.ephemeral() as instance:
        first = dg.materialize(TABLES, resources=resources, instance=instance)
        assert metadata_values(first, "raw_docs")["warned_notes"] == 1
        assert _title(db_url, "anchor.md") == "見出し" and _title(db_url, "good.md") == "良い"
        with db.connect(db_url) as conn:
            warned = [(p.path, p.reason) for p in read_status(conn).warnings]
        assert warned == [("anchor.md", EMPTY)]

        again = dg.materialize(TABLES, resources=resources, instance=instance)
        assert metadata_values(again, "chunks")["summary"].startswith("No note changed")

        note.write_text('---\ntitle: "&anchor"\n---\n# 見出し\n\n本文。\n', encoding="utf-8")
        os.utime(note, ns=(1, 1))
        dg.materialize(TABLES, resources=resources, instance=instance)
    assert _title(db_url, "anchor.md") == "&anchor"
    with db.connect(db_url) as conn:
        assert read_status(conn).warnings == []


def test_a_note_stored_before_gets_its_warning_at_the_next_sync(
    db_url: str, tmp_path: Path
) -> None:
    """sql/061: a note with a null in its stored frontmatter is read again once; the warning
    is stored and the note is listed as no change."""
    from knowledge_assets.core.ingest.sync import store, sync_source
    from knowledge_assets.core.sources.local import LocalSource
    from tests.migration_support import rerun_migration

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "anchor.md").write_text("---\ntitle: &anchor\n---\n本文。\n", encoding="utf-8")
    (vault / "plain.md").write_text("---\ntitle: 日記\n---\n本文。\n", encoding="utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        conn.execute("UPDATE raw.docs_local SET warnings = '{}'")  # as a sync before stored it
        conn.commit()
    rerun_migration(db_url, "061")
    with db.connect(db_url) as conn:
        again = sync_source(conn, LocalSource(vault))
        warned = store.note_warnings(conn, "docs_local")
    assert (again.fetched, again.changed, again.new) == (1, [], [])
    assert [(p, list(w)) for p, w in warned] == [("anchor.md", [EMPTY])]
