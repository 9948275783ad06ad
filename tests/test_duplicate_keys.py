"""A frontmatter key written twice keeps the note, with the last value, and a warning naming
the key and both lines that the run and `get` show."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.search import notes
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.ingest.assets import raw_metadata

ROOT = Path(__file__).resolve().parents[1]
TWICE = (
    "---\n"  # line 1
    "title: 最初の題\n"  # 2
    "tags: [旅]\n"  # 3
    "created: 2024-05-01\n"  # 4
    "title: 二つ目の題\n"  # 5
    "tags:\n"  # 6
    "  - 日記\n"  # 7
    "---\n"
    "# 見出し\n\n本文。\n"
)
TITLE = "duplicate frontmatter key `title` (lines 2 and 5): the last value is kept;"
TAGS = "duplicate frontmatter key `tags` (lines 3 and 6): the last value is kept;"


def test_the_note_is_kept_with_the_last_value_and_a_warning_per_key() -> None:
    doc = parse_document("twice.md", TWICE.encode())
    assert isinstance(doc, ParsedDoc)
    assert doc.frontmatter == {"title": "二つ目の題", "tags": ["日記"], "created": "2024-05-01"}
    assert [w.split(" Obsidian")[0] for w in doc.warnings] == [TITLE, TAGS]
    assert doc.warnings[0].endswith("Obsidian shows the note's properties as invalid")


def test_merge_keys_are_overrides_and_nested_duplicates_are_named() -> None:
    merged = parse_document("m.md", b"---\nbase: &b {a: 1}\nx:\n  <<: *b\n  a: 2\n---\nbody\n")
    assert isinstance(merged, ParsedDoc) and merged.warnings == ()
    assert merged.frontmatter["x"] == {"a": 2}
    nested = parse_document("n.md", b"---\nx:\n  a: 1\n  a: 2\n---\nbody\n")
    assert isinstance(nested, ParsedDoc) and nested.frontmatter == {"x": {"a": 2}}
    assert nested.warnings[0].startswith("duplicate frontmatter key `a` (lines 3 and 4)")


@pytest.mark.parametrize(
    ("frontmatter", "expected", "twice"),
    [
        # 1 and true were one Python key (1 == True): "true" replaced "1" unsaid.
        ("1: x\ntrue: z", {"1": "x", "true": "z"}, None),
        ("null: n\n~: m", {"null": "m"}, "null"),  # one property twice: said so
        ("1: x\n'1': y", {"1": "y"}, "1"),  # one property written twice: said so
        ("2024-01-05: x\n0o17: y", {"2024-01-05": "x", "15": "y"}, None),  # as values read
    ],
)
def test_plain_keys_are_property_names_as_obsidian_writes_them(
    frontmatter: str, expected: dict[str, str], twice: str | None
) -> None:
    doc = parse_document("k.md", f"---\n{frontmatter}\n---\nbody\n".encode())
    assert isinstance(doc, ParsedDoc) and doc.frontmatter == expected
    said = [w.split(" (lines")[0] for w in doc.warnings]
    assert said == ([f"duplicate frontmatter key `{twice}`"] if twice else [])


def test_the_warning_is_stored_shown_by_get_and_gone_once_fixed(db_url: str, vault: Path) -> None:
    note = vault / "twice.md"
    note.write_text(TWICE, encoding="utf-8")
    with db.connect(db_url) as conn:
        first = sync_source(conn, LocalSource(vault))
        doc = notes.get_doc(conn, "twice.md")
        second = sync_source(conn, LocalSource(vault))
    assert [(p, w.split(" Obsidian")[0]) for p, w in first.warnings] == [
        ("twice.md", TITLE),
        ("twice.md", TAGS),
    ]
    assert "1 note with warnings" in str(raw_metadata(first, "docs_local")["summary"].value)
    assert doc is not None and doc["title"] == "二つ目の題"
    assert [w.split(" Obsidian")[0] for w in doc["warnings"]] == [TITLE, TAGS]
    assert second.warnings == [] and second.still_warned == ["twice.md"]
    assert raw_metadata(second, "docs_local")["summary"].value == (
        "No changes: nothing written; 1 note with warnings."
    )

    note.write_text(TWICE.replace("title: 最初の題\n", "").replace("tags: [旅]\n", ""))
    os.utime(note, ns=(1, 1))
    with db.connect(db_url) as conn:
        fixed = sync_source(conn, LocalSource(vault))
        assert store.note_warnings(conn, "docs_local") == []
        doc = notes.get_doc(conn, "twice.md")
    assert fixed.changed == ["twice.md"] and fixed.warnings == fixed.still_warned == []
    assert doc is not None and doc["warnings"] == []


def test_update_and_get_show_the_warning(db_url: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "twice.md").write_text(TWICE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    env |= {
        "DATABASE_URL": db_url, "KA_DATA_DIR": str(tmp_path / "data"), "KA_AUTOMATION": "off",
        "KA_VAULT_PATH": str(vault),
    }  # fmt: skip

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "knowledge_assets.cli", *args],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
        )  # fmt: skip

    update = cli("update", "--no-embeddings")
    assert update.returncode == 0, update.stderr
    assert update.stderr.splitlines()[:2] == [
        f"  raw_docs: twice.md: {TITLE} Obsidian shows the note's properties as invalid",
        f"  raw_docs: twice.md: {TAGS} Obsidian shows the note's properties as invalid",
    ]
    assert "0 rejected, 1 note with warnings" in update.stdout
    get = cli("get", "twice.md")
    assert get.returncode == 0, get.stderr
    lines = get.stdout.splitlines()
    assert lines[0] == "# 二つ目の題"
    assert lines[2].startswith(f"warning: {TITLE}") and lines[3].startswith(f"warning: {TAGS}")


def test_a_note_stored_before_with_a_full_width_spaced_key_gets_its_warning_at_the_next_sync(
    db_url: str, tmp_path: Path
) -> None:
    """sql/056: the file is read again once, stores the warning, and is listed as no change."""
    from tests.migration_support import rerun_migration

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "spaced.md").write_text("---\ntitle\u3000: 日記\n---\n本文。\n", encoding="utf-8")
    (vault / "plain.md").write_text("---\ntitle: 日記\n---\n本文。\n", encoding="utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        conn.execute("UPDATE raw.docs_local SET warnings = '{}'")  # as a sync before stored it
        conn.commit()
    rerun_migration(db_url, "056")
    with db.connect(db_url) as conn:
        again = sync_source(conn, LocalSource(vault))
        warned = store.note_warnings(conn, "docs_local")
    assert (again.fetched, again.changed, again.new) == (1, [], [])
    assert [(p, w[0].split(":")[0]) for p, w in warned] == [("spaced.md", "line 2 has a full-width space between `title` and its colon")]  # fmt: skip
