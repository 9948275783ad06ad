"""A frontmatter value used as a title or heading is read by one rule in the chunker and in
latest_docs: text stripped, a number as written, a list's texts and numbers joined by ", ",
nothing for a boolean, null or mapping (the title then falls back to the H1 or file name). The
chunker wrote ``['a', 'b']`` and ``True`` where latest_docs showed ``["a", "b"]`` and ``true``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from knowledge_assets.core.chunks.chunk_text import title_text
from knowledge_assets.core.chunks.strategies import BOOKMARK_TYPE, ChunkingOptions, chunk_for
from knowledge_assets.core.database import db
from knowledge_assets.core.search import search
from tests.migration_support import notes_to_rechunk, rerun_migration
from tests.test_search import ingest

TITLES: dict[str, tuple[Any, str | None]] = {
    "text": ("  庭の記録 ", "庭の記録"),
    "ideographic-space": ("\u3000題\u3000", "題"),
    "no-break-space": ("\u00a0題\t", "題"),
    "blank": (" \u3000 ", None),
    "zero-width": ("\u200b", None),
    "zero-width-and-spaces": (" \u200b\ufeff\u2060 ", None),
    "zero-width-in-a-list": (["\u200b", "題"], "題"),
    "zero-width-beside-text": ("\u200c題", "\u200c題"),
    "empty": ("", None),
    "int": (1984, "1984"),
    "negative": (-7, "-7"),
    "float": (1.5, "1.5"),
    "big-float": (1e16, "10000000000000000"),
    "small-float": (1.5e-07, "0.00000015"),
    "zero": (0, "0"),
    "list": (["a", "b"], "a, b"),
    "wikilink": ([["Note"]], "Note"),
    "nested": (["上巻", ["中巻", ["下巻"]]], "上巻, 中巻, 下巻"),
    "list-of-mixed": ([" a ", 2, True, None, {"x": 1}, "", "b"], "a, 2, b"),
    "list-of-nothing": ([None, False, {"x": 1}], None),
    "empty-list": ([], None),
    "true": (True, None),
    "false": (False, None),
    "null": (None, None),
    "mapping": ({"x": 1}, None),
}


@pytest.mark.parametrize("case", sorted(TITLES))
def test_one_rule_reads_a_title(case: str) -> None:
    value, expected = TITLES[case]
    assert title_text(value) == expected


def test_postgres_reads_every_title_as_python_does(db_url: str) -> None:
    """rag.frontmatter_title and title_text agree on every case, every character Python strips
    as whitespace, and numbers stored from Python floats (Postgres prints them in full)."""
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    values = [v for v, _ in TITLES.values()]
    values += [f"{s}題{s}" for s in spaces] + [[f"{s}a", f"b{s}"] for s in spaces]
    values += [1e300, 2.5e-300, 123456789.125, -0.0, 10**30, 1e-05, 0.1, ["\u200b"]]
    with db.connect(db_url) as conn:
        stored = conn.execute(
            "SELECT v.value, rag.frontmatter_title(v.value)"
            " FROM unnest(%s::jsonb[]) WITH ORDINALITY AS v(value, n) ORDER BY v.n",
            ([Jsonb(v) for v in values],),
        ).fetchall()
    # The chunker reads the frontmatter back from Postgres, as psycopg loads it.
    mismatches = {json.dumps(v): (sql, title_text(v)) for v, sql in stored if sql != title_text(v)}
    assert mismatches == {}
    assert len(stored) == len(values)


BODY = "# 本文の題\n\n梅雨の庭 zqtitle の記録。\n"


@pytest.mark.parametrize("strategy", ["headings", "document", "scene", "recursive"])
@pytest.mark.parametrize(
    ("title", "expected"),
    [(["a", "b"], "a, b"), (True, "本文の題"), ({"x": 1}, "本文の題"), (2024, "2024")],
)
def test_every_strategy_titles_passages_by_the_rule(
    strategy: str, title: Any, expected: str
) -> None:
    chunks = chunk_for("n.md", {"title": title}, BODY, options=ChunkingOptions(strategy=strategy))
    assert chunks and {c.title for c in chunks} == {expected}
    assert chunks[0].embedding_text.startswith(f"title:{expected}|")


def test_a_bookmark_file_is_titled_by_the_rule() -> None:
    body = json.dumps([{"title": "記事", "url": "https://example.com/a"}])
    listed = chunk_for("ai.json", {"heading": ["ai", "ml"]}, body, doc_type=BOOKMARK_TYPE)
    mapped = chunk_for(
        "ai.json", {"title": {"x": 1}, "heading": "ai"}, body, doc_type=BOOKMARK_TYPE
    )
    assert [c.title for c in listed] == ["ai, ml"]
    assert [c.title for c in mapped] == ["ai"]


NOTES = {
    "no.md": "---\ntitle: no\n---\n" + BODY,
    "list.md": "---\ntitle: [a, b]\nheading: [旅, 2024]\n---\n" + BODY,
    "flag.md": "---\ntitle: true\n---\n" + BODY,
    "map.md": "---\ntitle: {x: 1}\nheading: {y: 2}\n---\n" + BODY,
    "year.md": "---\ntitle: 1984\nheading: 12:30\n---\n" + BODY,
}
SHOWN = {
    "no.md": ("no", None),
    "list.md": ("a, b", "旅, 2024"),
    "flag.md": ("本文の題", None),
    "map.md": ("本文の題", None),
    "year.md": ("1984", "12:30"),
}


def _chunk_titles(conn: psycopg.Connection) -> dict[str, set[str]]:
    rows = conn.execute(
        "SELECT d.file_path, c.parent_heading, split_part(c.embedding_text, '|', 1)"
        " FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
    ).fetchall()
    titles: dict[str, set[str]] = {}
    for path, parent, header in rows:
        titles.setdefault(path, set()).update({parent, header.removeprefix("title:")})
    return titles


def test_a_note_shows_one_title_in_latest_docs_passages_and_results(
    db_url: str, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    ingest(db_url, None, vault)
    with db.connect(db_url) as conn:
        latest = {
            r[0]: (r[1], r[2])
            for r in conn.execute("SELECT file_path, title, top_heading FROM rag.latest_docs")
        }
        chunk_titles = _chunk_titles(conn)
        hits = search(conn, "zqtitle", mode="keyword", limit=10).hits
    assert latest == SHOWN
    # Each note's passages are headed and embedded with its title: an H1 under a title of its
    # own heads them below it (parent_heading is then the H1).
    for path, (title, _) in SHOWN.items():
        assert title in chunk_titles[path], (path, chunk_titles[path])
        assert chunk_titles[path] <= {title, "本文の題"}
    assert {h.file_path: (h.title, h.top_heading) for h in hits} == SHOWN


def test_a_note_stored_with_a_zero_width_title_is_titled_again(db_url: str, tmp_path: Path) -> None:
    """A store made before zero-width titles were blank: the note is read again once and then
    titled as a note without a title is, by its heading."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "zw.md").write_text('---\ntitle: "\u200b"\n---\n# 見出し\n\n本文。\n', "utf-8")
    (vault / "plain.md").write_text("# 普通\n\n本文。\n", "utf-8")
    ingest(db_url, None, vault)
    with db.connect(db_url) as conn:  # as the rule before stored it
        conn.execute("UPDATE rag.latest_docs SET title = %s WHERE file_path = 'zw.md'", ("\u200b",))
        conn.commit()
    rerun_migration(db_url, "053")
    with db.connect(db_url) as conn:
        marked = conn.execute("SELECT file_path FROM rag.latest_docs WHERE content_hash = ''")
        marked_paths = [r[0] for r in marked]
    ingest(db_url, None, vault)
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT title FROM rag.latest_docs WHERE file_path = 'zw.md'").fetchone()
        again = notes_to_rechunk(conn)
    assert marked_paths == ["zw.md"]
    assert row == ("見出し",) and again == []
