"""Declared sources in the store (``meta.sources``): what each holds, how it is chunked, and the
clean removal of a source whose declaration is gone.

A declared source named ``books`` keeps its files in ``raw.docs_books`` (seed 000's
``raw.{entity}_{source}``); the table is created on its first sync. The source set by the
environment alone (``KA_SOURCE``) keeps ``raw.docs_local`` / ``raw.docs_github`` and is not
registered here, so it is never removed by this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from knowledge_assets.core.chunks.strategies import BOOKMARK_TYPE, NOTE_TYPE, ChunkingOptions
from knowledge_assets.core.ingest.store import RAW_TABLES, source_name, source_table
from knowledge_assets.core.sources.base import MARKDOWN_SUFFIXES, Source, SourceError
from knowledge_assets.core.sources.bookmarks import BOOKMARK_SUFFIXES

NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")
# raw.docs_local and raw.docs_github hold the KA_SOURCE vault: a declared source of either name
# would share its table, and each sync would delete the other's notes.
RESERVED_NAMES = tuple(source_name(table) for table in RAW_TABLES)
# kind -> (type, content_type) of seed 004's payload
KIND_DEFAULTS = {
    "local": (NOTE_TYPE, "notes"),
    "github": (NOTE_TYPE, "notes"),
    "books": (NOTE_TYPE, "books"),
    "bookmarks": (BOOKMARK_TYPE, "articles"),
}


@dataclass(frozen=True)
class SourceProfile:
    """One declared source: its name and kind, the payload fields its documents carry and how
    they are chunked. ``default_heading`` is the ``top_heading`` of a document without a
    frontmatter ``heading`` (books have none: seed 004 calls it ``unknown``)."""

    name: str
    kind: str
    doc_type: str
    content_type: str
    default_heading: str | None = None
    chunking: ChunkingOptions = field(default_factory=ChunkingOptions)

    def __post_init__(self) -> None:
        if not NAME.fullmatch(self.name):
            raise ValueError(
                f"source name {self.name!r}: use lower-case letters, digits and _, "
                "starting with a letter (at most 41 characters)"
            )
        if self.name in RESERVED_NAMES:
            raise ValueError(
                f"source name {self.name!r} is taken by the vault of KA_SOURCE (its notes are in"
                f" raw.{source_table(self.name)}): choose another name"
            )
        if self.kind not in KIND_DEFAULTS:
            raise ValueError(f"unknown source kind {self.kind!r}: use one of {list(KIND_DEFAULTS)}")
        # The kind decides how files are read: a bookmarks source read as Markdown stored raw
        # JSON, a books source read as bookmarks rejected every note, and the run succeeded.
        if self.doc_type != (own := KIND_DEFAULTS[self.kind][0]):
            raise ValueError(
                f"type {self.doc_type!r} does not fit kind {self.kind!r}, whose files are read"
                f" as {own}: leave type out (the kind sets it)"
            )

    @property
    def table(self) -> str:
        return source_table(self.name)

    @property
    def asset_key(self) -> str:
        """Asset keys are table names: ``raw_docs_books`` for ``raw.docs_books``."""
        return f"raw_{self.table}"


def register(conn: psycopg.Connection, profile: SourceProfile) -> None:
    """Create the source's raw table if needed and record (or update) its profile."""
    conn.execute("SELECT raw.ensure_docs_table(%s)", (profile.table,))
    conn.execute(
        "INSERT INTO meta.sources (name, source_table, kind, doc_type, content_type,"
        " default_heading, chunking, chunking_sig) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, doc_type = EXCLUDED.doc_type,"
        " content_type = EXCLUDED.content_type, default_heading = EXCLUDED.default_heading,"
        " chunking = EXCLUDED.chunking, chunking_sig = EXCLUDED.chunking_sig",
        (
            profile.name,
            profile.table,
            profile.kind,
            profile.doc_type,
            profile.content_type,
            profile.default_heading,
            Jsonb(profile.chunking.to_json()),
            profile.chunking.signature(),
        ),
    )


def registered_tables(conn: psycopg.Connection) -> dict[str, str]:
    """source_table -> name of every registered source."""
    return dict(conn.execute("SELECT source_table, name FROM meta.sources").fetchall())


@dataclass
class Removal:
    """A source removed because it is no longer declared, and what went with it."""

    name: str
    table: str
    notes: int
    files: int


def remove_undeclared(conn: psycopg.Connection, declared: Iterable[str]) -> list[Removal]:
    """Remove every registered source whose table is not in ``declared``: its latest notes (and
    their chunks), its raw rows, rejections, superseded list and sync state. One transaction."""
    keep = set(declared)
    removals: list[Removal] = []
    with conn.transaction():
        for table, name in sorted(registered_tables(conn).items()):
            if table in keep:
                continue
            notes = conn.execute(
                "DELETE FROM rag.latest_docs WHERE source_table = %s", (table,)
            ).rowcount
            files = conn.execute(
                sql.SQL("DELETE FROM {}").format(sql.Identifier("raw", table))
            ).rowcount
            conn.execute("DELETE FROM raw.rejected_files WHERE source_table = %s", (table,))
            conn.execute("DELETE FROM rag.superseded_docs WHERE source_table = %s", (table,))
            conn.execute("DELETE FROM meta.sync_state WHERE source_key LIKE %s", (f"{table}:%",))
            conn.execute("DELETE FROM meta.sources WHERE name = %s", (name,))
            removals.append(Removal(name, table, notes, files))
    return removals


def build_source(profile: SourceProfile, settings: dict[str, str]) -> Source:
    """The source object of a declared source: a folder (``local``, ``books``, ``bookmarks``:
    ``path``) or a GitHub branch (``repo``, ``branch``, ``prefix``, ``token``, ``base_url``)."""
    from knowledge_assets.core.sources.local import LocalSource

    if profile.kind == "github":
        from knowledge_assets.core.sources.github import GitHubSource

        if not settings.get("repo"):
            raise SourceError(f"source {profile.name}: 'repo' (owner/name) is required")
        github = GitHubSource(
            settings["repo"],
            settings.get("branch") or "main",
            settings.get("prefix") or "",
            token=settings.get("token") or None,
            base_url=settings.get("base_url") or "https://api.github.com",
        )
        github.table = profile.table
        github.key = f"{profile.table}:{github.key}"
        return github
    if not settings.get("path"):
        raise SourceError(f"source {profile.name}: 'path' (a folder) is required")
    suffixes = BOOKMARK_SUFFIXES if profile.kind == "bookmarks" else MARKDOWN_SUFFIXES
    return LocalSource(Path(settings["path"]), suffixes=suffixes, table=profile.table)
