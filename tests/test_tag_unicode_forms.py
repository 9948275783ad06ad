"""A tag written in either Unicode form is one tag: ガイド as one character per kana (NFC, what
is typed) and as カ plus a combining mark (NFD, text pasted from a file name on macOS) print
alike, so every filter and tag list takes them for one, as paths already are."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge_assets.core.chunks.inline_tags import inline_tags
from knowledge_assets.core.database import db
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.search.notes import list_tags, notes_tagged
from tests.test_search import ingest, notes_store


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


GUIDE, PROJECT = "ガイド", "プロジェクト"
NOTES = {
    "typed.md": f"---\ntags: [{GUIDE}]\n---\n# typed\n\n京都の寺を歩いた。\n",
    "typed2.md": f"---\ntags: [{GUIDE}]\n---\n# typed2\n\n京都の寺を歩いた。\n",
    "pasted.md": f"---\ntags: [{nfd(GUIDE)}]\n---\n# pasted\n\n京都の寺を歩いた。\n",
    "nested.md": f"---\ntags: [{nfd(PROJECT)}/alpha]\n---\n# nested\n\n京都の寺を歩いた。\n",
    "inline.md": f"# inline\n\n京都の寺を歩いた。 #{nfd(GUIDE)}\n",
    # one note carrying both forms counts once
    "both.md": f"---\ntags: [{GUIDE}]\n---\n# both\n\n京都の寺を歩いた。 #{nfd(GUIDE)}\n",
    "other.md": "---\ntags: [ガイドライン]\n---\n# other\n\n京都の寺を歩いた。\n",
    # as many notes of each form: the list shows the typed one
    "drama.md": "---\ntags: [ドラマ]\n---\n# drama\n\n京都の寺を歩いた。\n",
    "drama-pasted.md": f"---\ntags: [{nfd('ドラマ')}]\n---\n# drama2\n\n京都の寺を歩いた。\n",
}
GUIDED = {"typed.md", "typed2.md", "pasted.md", "inline.md", "both.md"}


@pytest.fixture(scope="module")
def store(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with notes_store(server_url, tmp_path_factory.mktemp("vault"), NOTES) as url:
        yield url


def _found(url: str, **filters: Any) -> set[str]:
    with db.connect(url) as conn:
        hits = search(conn, "京都の寺", mode="keyword", filters=SearchFilters(**filters), limit=20)
    return {h.file_path for h in hits.hits}


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_tag_filter_finds_the_notes_of_either_form(store: str, form: str) -> None:
    tag = unicodedata.normalize(form, GUIDE)
    assert _found(store, tags=(tag,)) == GUIDED
    assert _found(store, all_tags=(tag,)) == GUIDED
    assert _found(store, exclude_tags=(tag,)) == set(NOTES) - GUIDED


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_nested_tag_is_under_its_parent_in_either_form(store: str, form: str) -> None:
    assert _found(store, tags=(unicodedata.normalize(form, PROJECT),)) == {"nested.md"}


def test_the_tag_list_shows_one_entry_for_both_forms(store: str) -> None:
    with db.connect(store) as conn:
        listed = dict(list_tags(conn))
        total, notes = notes_tagged(conn, nfd(GUIDE))
    assert listed[GUIDE] == len(GUIDED) and nfd(GUIDE) not in listed
    assert listed["ドラマ"] == 2 and nfd("ドラマ") not in listed
    assert total == len(GUIDED) and {n.file_path for n in notes} == GUIDED


def test_a_note_keeps_one_spelling_of_a_tag_it_writes_in_both_forms(store: str) -> None:
    with db.connect(store) as conn:
        row = conn.execute(
            "SELECT tags FROM rag.latest_docs WHERE file_path = 'both.md'"
        ).fetchone()
    assert row == ([GUIDE],)
    assert inline_tags(f"#{GUIDE} #{nfd(GUIDE)}") == [GUIDE]


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        (nfd("本文 #ガイド です"), [nfd("ガイド")]),
        (nfd("本文 #プロジェクト/ベータ"), [nfd("プロジェクト/ベータ")]),
        (nfd("#café au lait"), [nfd("café")]),
        ("#か\u309a行", ["か\u309a行"]),  # a mark no composed character holds
    ],
    ids=["kana", "nested", "latin", "no-composed-form"],
)
def test_an_inline_tag_written_decomposed_is_read_whole(text: str, tags: list[str]) -> None:
    assert inline_tags(text) == tags


def test_an_upgraded_store_reads_its_tags_in_either_form(blank_db_url: str, tmp_path: Path) -> None:
    """A store made before: its tag index is worked out again by the migration, and only the
    notes whose decomposed inline tag was cut short (#ガイド read as #カ) are chunked again."""
    for name, text in NOTES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    db.migrate(blank_db_url)
    ingest(blank_db_url, None, tmp_path)
    with db.connect(blank_db_url) as conn:
        conn.execute(BEFORE_055.encode())
        conn.commit()
        assert _found(blank_db_url, tags=(GUIDE,)) == {"typed.md", "typed2.md", "both.md"}
        before = _chunk_versions(conn)
    assert db.migrate(blank_db_url) == ["055_tags_fold_unicode_form.sql"]
    assert _found(blank_db_url, tags=(GUIDE,)) == GUIDED - {"inline.md"}
    ingest(blank_db_url, None, tmp_path)  # the next update chunks the marked notes again
    assert _found(blank_db_url, tags=(GUIDE,)) == GUIDED
    with db.connect(blank_db_url) as conn:
        after = _chunk_versions(conn)
        row = conn.execute(
            "SELECT tags FROM rag.latest_docs WHERE file_path = 'both.md'"
        ).fetchone()
    assert row == ([GUIDE],)
    assert {p for p in before if before[p] != after[p]} == {"inline.md", "both.md"}


def _chunk_versions(conn: Any) -> dict[str, list[str]]:
    rows = conn.execute(
        "SELECT d.file_path, array_agg(c.xmin::text ORDER BY c.chunk_index) FROM rag.chunks c"
        " JOIN rag.latest_docs d ON d.id = c.document_id GROUP BY d.file_path"
    ).fetchall()
    return {path: versions for path, versions in rows}


# The store as it was: tags keyed by case alone, and a decomposed inline tag cut at its first
# combining mark.
BEFORE_055 = """
CREATE OR REPLACE FUNCTION rag.tag_key(tag text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT lower(tag) $$;
UPDATE rag.latest_docs SET inline_tags = ARRAY['\u30ab'],
    tags = rag.merge_tags(rag.note_tags(frontmatter -> 'tags'), ARRAY['\u30ab'])
WHERE file_path IN ('inline.md', 'both.md');
ALTER TABLE rag.latest_docs DROP COLUMN tag_paths;
ALTER TABLE rag.latest_docs
    ADD COLUMN tag_paths text[] GENERATED ALWAYS AS (rag.tag_paths(rag.tag_keys(tags))) STORED;
CREATE INDEX latest_docs_tag_paths_idx ON rag.latest_docs USING GIN (tag_paths);
DELETE FROM meta.migrations WHERE name = '055_tags_fold_unicode_form.sql';
"""
