"""sql/050: a store whose notes were read by YAML 1.1 and titled by the earlier rules reads again
only the files whose frontmatter may read differently, and chunks again only their notes and
the notes whose title or heading reads differently; the other notes are neither read nor
chunked, and texts that did not change keep their vectors."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import yaml

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest import frontmatter
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.core.sources.registry import (
    KIND_DEFAULTS,
    SourceProfile,
    build_source,
    register,
)
from tests.migration_support import notes_to_rechunk, rerun_migration
from tests.test_embed_checks import _Embedder

# path -> (the text the store read, as it read it; the file as written). Where they differ, the
# first makes this build store what YAML 1.1 and the earlier title rules stored of the second.
NOTES = {
    # YAML 1.1 read `no` as false: stored false, passages titled "False"
    "no.md": (
        '---\ntitle: "False"\n---\nzqno 梅雨の庭。\n',
        "---\ntitle: no\n---\nzqno 梅雨の庭。\n",
    ),
    # 12:30 was the number 750; the title is the H1, which no reading changes
    "clock.md": (
        "---\ntime: 750\n---\n# 時計\n\nzqclock 本文。\n",
        "---\ntime: 12:30\n---\n# 時計\n\nzqclock 本文。\n",
    ),
    # a number YAML 1.2 reads alike: read again all the same (it might have been 0123)
    "rated.md": ("---\nrating: 5\n---\n# 評価\n\nzqrated 本文。\n",) * 2,
    # a list title, which the chunker wrote as Python's ['a', 'b']
    "list.md": (
        "---\ntitle: \"['a', 'b']\"\n---\nzqlist 本文。\n",
        "---\ntitle: [a, b]\n---\nzqlist 本文。\n",
    ),
    # latest_docs kept the ideographic spaces the chunker stripped
    "space.md": ('---\ntitle: "\u3000題\u3000"\n---\nzqspace 本文。\n',) * 2,
    # texts, dates and no frontmatter at all read alike: left alone
    "plain.md": (
        '---\ntitle: 庭の記録\ncreated: 2024-01-05\ntags: [日記, 旅]\naliases: ["yes"]\n---\n'
        "zqplain 本文。\n",
    )
    * 2,
    "bare.md": ("# 素\n\nzqbare 本文。\n",) * 2,
}
READ_AGAIN = ["clock.md", "no.md", "rated.md"]
RETITLED = ["list.md", "space.md"]
# rejected by YAML 1.1, which could not build a lone "="
REJECTED = ("eq.md", "---\ntitle: =\n---\nzqeq 本文。\n")
YAML_1_1_REASON = (
    "malformed YAML frontmatter: could not determine a constructor for the tag"
    " 'tag:yaml.org,2002:value' (line 2, column 8)"
)


def _build(conn: psycopg.Connection, vault: Path) -> LocalSource:
    """A store made before: notes read as YAML 1.1 read them, and chunked and embedded."""
    vault.mkdir()
    for path, (stored, _) in NOTES.items():
        (vault / path).write_text(stored, encoding="utf-8")
    source = LocalSource(vault)
    sync_source(conn, source)
    refresh_latest(conn, source.table)
    refresh_chunks(conn)
    embed_missing(conn, _Embedder())
    for path, (stored, written) in NOTES.items():
        if written != stored:
            (vault / path).write_text(written, encoding="utf-8")
            _as_read_before(conn, vault, path, source.scan()[path])
    conn.execute(
        "UPDATE rag.latest_docs SET title = %s WHERE file_path = 'space.md'", ("\u3000題\u3000",)
    )
    (vault / REJECTED[0]).write_text(REJECTED[1], encoding="utf-8")
    conn.execute(
        "INSERT INTO raw.rejected_files (source_table, file_path, reason, version)"
        " VALUES ('docs_local', %s, %s, %s)",
        (REJECTED[0], YAML_1_1_REASON, source.scan()[REJECTED[0]]),
    )
    conn.commit()
    return source


def _as_read_before(conn: psycopg.Connection, vault: Path, path: str, version: str) -> None:
    """The file at ``path`` as a sync before YAML 1.2 stored it: its version and hash, with the
    frontmatter YAML 1.1 reads (its latest row and chunks keep what the earlier text made)."""
    parsed = parse_document(path, (vault / path).read_bytes())
    assert isinstance(parsed, ParsedDoc)
    fm_text = (vault / path).read_text(encoding="utf-8").split("---\n")[1]
    as_read = frontmatter.json_safe(yaml.safe_load(fm_text))  # PyYAML's own loader: YAML 1.1
    hashed = {
        "p": path,
        "fm": json.dumps(as_read, ensure_ascii=False),
        "h": parsed.content_hash,
        "v": version,
    }
    conn.execute(
        "UPDATE raw.docs_local SET frontmatter = %(fm)s::jsonb, content_hash = %(h)s,"
        " version = %(v)s WHERE file_path = %(p)s",
        hashed,
    )
    conn.execute(
        "UPDATE rag.latest_docs SET frontmatter = %(fm)s::jsonb, content_hash = %(h)s"
        " WHERE file_path = %(p)s",
        hashed,
    )
    conn.execute(
        "UPDATE rag.chunks c SET doc_hash = %(h)s FROM rag.latest_docs d"
        " WHERE c.document_id = d.id AND d.file_path = %(p)s",
        hashed,
    )


def _titles(conn: psycopg.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT file_path, title FROM rag.latest_docs").fetchall())


def _texts(conn: psycopg.Connection, paths: list[str]) -> set[str]:
    rows = conn.execute(
        "SELECT c.text_hash FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
        " WHERE d.file_path = ANY(%s)",
        (paths,),
    ).fetchall()
    return {r[0] for r in rows}


def _vectors(conn: psycopg.Connection, paths: list[str]) -> set[tuple[str, str]]:
    """(model, text hash) of the vectors the chunks of ``paths`` are searched by."""
    rows = conn.execute(
        "SELECT e.model, e.text_hash FROM rag.chunks c JOIN rag.latest_docs d"
        " ON d.id = c.document_id JOIN rag.embedding_inputs i ON i.chunk_hash = c.text_hash"
        " JOIN rag.embeddings e ON e.model = i.model AND e.text_hash = i.text_hash"
        " WHERE d.file_path = ANY(%s)",
        (paths,),
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


KEPT = ["bare.md", "clock.md", "plain.md", "rated.md", "space.md"]  # texts unchanged


def test_only_files_read_differently_are_read_and_chunked_again(
    db_url: str, tmp_path: Path
) -> None:
    with db.connect(db_url) as conn:
        source = _build(conn, tmp_path / "vault")
        # the store as it was: nothing is read again, nothing waits to be chunked
        assert sync_source(conn, source).fetched == 0
        assert notes_to_rechunk(conn) == []
        kept_texts, vectors = _texts(conn, KEPT), _vectors(conn, KEPT)
    rerun_migration(db_url, "050")
    embedder = _Embedder()
    with db.connect(db_url) as conn:
        report = sync_source(conn, source)
        refresh_latest(conn, source.table)
        waiting = notes_to_rechunk(conn)
        chunked = refresh_chunks(conn)
        embed_missing(conn, embedder)
        titles, stored = _titles(conn), dict(conn.execute(
            "SELECT file_path, frontmatter FROM raw.docs_local").fetchall())  # fmt: skip
        after_texts, after_vectors = _texts(conn, KEPT), _vectors(conn, KEPT)
    assert report.fetched == len(READ_AGAIN) + 1
    assert sorted(report.changed) == READ_AGAIN and report.new == [REJECTED[0]]
    assert stored["clock.md"] == {"time": "12:30"} and stored["no.md"] == {"title": "no"}
    assert waiting == sorted([*READ_AGAIN, *RETITLED, REJECTED[0]])
    assert sorted(chunked.documents) == waiting
    assert titles == {
        "no.md": "no", "clock.md": "時計", "rated.md": "評価", "list.md": "a, b",
        "space.md": "題", "plain.md": "庭の記録", "bare.md": "素", "eq.md": "=",
    }  # fmt: skip
    # Texts that did not change kept their vectors: only the retitled notes' were embedded.
    assert after_texts == kept_texts and after_vectors == vectors and vectors
    sent = {text.split("zq")[1].split(" ")[0] for text in embedder.sent}
    assert sent == {"no", "list", "eq"}


def test_a_refresh_before_the_sync_redoes_nothing_with_the_old_reading(
    db_url: str, tmp_path: Path
) -> None:
    """The latest and chunk refreshes may run before the next sync (a run of the later assets
    alone): a note waiting to be read again is not rewritten from its old frontmatter, whose
    reading would then stay, the file being unchanged."""
    with db.connect(db_url) as conn:
        source = _build(conn, tmp_path / "vault")
    rerun_migration(db_url, "050")
    with db.connect(db_url) as conn:
        refresh_latest(conn, source.table)
        early = refresh_chunks(conn)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        late = refresh_chunks(conn)
        titles = _titles(conn)
    assert sorted(early.documents) == RETITLED
    assert sorted(late.documents) == sorted([*READ_AGAIN, REJECTED[0]])
    assert titles["no.md"] == "no" and titles["list.md"] == "a, b"


def test_bookmark_files_are_json_and_only_retitled(db_url: str, tmp_path: Path) -> None:
    """A bookmark file's numbers were read by JSON, not YAML: it is not read again; one whose
    heading is a list shows it as its passages do."""
    folder = tmp_path / "articles"
    folder.mkdir()
    entry = [{"title": "記事", "url": "https://example.com/a"}]
    files = {
        "listed.json": {"heading": ["ai", "ml"], "count": 3, "body": entry},
        "plain.json": {"heading": "ai", "count": 3, "body": entry},
    }
    for name, value in files.items():
        (folder / name).write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    doc_type, content_type = KIND_DEFAULTS["bookmarks"]
    profile = SourceProfile("articles", "bookmarks", doc_type, content_type)
    with db.connect(db_url) as conn:
        register(conn, profile)
        source = build_source(profile, {"path": str(folder)})
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn)
        # latest_docs read a list heading as JSON text before
        conn.execute(
            'UPDATE rag.latest_docs SET top_heading = \'["ai", "ml"]\''
            " WHERE file_path = 'listed.json'"
        )
        conn.commit()
    rerun_migration(db_url, "050")
    with db.connect(db_url) as conn:
        report = sync_source(conn, source)
        refresh_latest(conn, source.table)
        waiting = notes_to_rechunk(conn)
        headings = dict(
            conn.execute("SELECT file_path, top_heading FROM rag.latest_docs").fetchall()
        )
    assert report.fetched == 0
    assert waiting == ["listed.json"]
    assert headings == {"listed.json": "ai, ml", "plain.json": "ai"}
