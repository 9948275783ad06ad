"""Reads of single notes: notes similar to one, a note by path, the tags in use and the notes
carrying a tag.

Search (:mod:`knowledge_assets.core.search`) ranks chunks for a query; these start from a note,
named by its path and, where several sources hold that path, its source
(:mod:`knowledge_assets.core.search.note_sources`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from knowledge_assets.core.ingest.conventions import Conventions
from knowledge_assets.core.search import (
    NoActiveModel,
    hnsw_scan,
    notes_sql,
    search_sql,
    similar_words,
)
from knowledge_assets.core.search.engine import NO_ACTIVE_MODEL
from knowledge_assets.core.search.filters import SearchFilters
from knowledge_assets.core.search.listing import ListedNote, notes_kept
from knowledge_assets.core.search.note_sources import (
    AmbiguousNote,
    NoteRef,
    UnknownSource,
    locate,
    source_name,
    source_table,
)

__all__ = [
    "AmbiguousNote",
    "NoteRef",
    "SimilarNote",
    "TaggedNote",
    "UnknownNote",
    "UnknownSource",
    "get_doc",
    "is_latest_note",
    "latest_fields",
    "latest_notes",
    "list_tags",
    "locate",
    "notes_tagged",
    "similar",
    "similar_to",
]


class UnknownNote(KeyError):
    """The path names no latest note (unknown, superseded, a draft, or without a body)."""


@dataclass(frozen=True)
class SimilarNote:
    """A note close to another one, with its closest chunk."""

    file_path: str
    title: str
    score: float
    heading: str
    content: str
    tags: tuple[str, ...]
    source: str  # the source's name: with file_path, what get and similar take


def similar(
    conn: psycopg.Connection, file_path: str, *, limit: int = 5, source: str | None = None
) -> list[SimilarNote]:
    """Notes nearest to ``file_path`` in meaning and in the words that set it apart, best first;
    see :func:`similar_to`."""
    return similar_to(conn, file_path, limit=limit, source=source)[1]


def similar_to(
    conn: psycopg.Connection, file_path: str, *, limit: int = 5, source: str | None = None
) -> tuple[NoteRef, list[SimilarNote]]:
    """The note compared with (its source and the other sources holding its path) and the notes
    most like it, best first: those whose chunks lie nearest to its mean vector (active model)
    fused with those BM25 finds for its title and distinctive words
    (:mod:`~knowledge_assets.core.search.similar_words`); ``score`` is the fused score (0 to 1).
    A note with no vector yet (synced without embeddings) is compared by its words alone.

    ``source`` names the source of the note (None: as :func:`locate` chooses). The note itself
    and every version of it (older or newer, through ``previous``) are left out; a note of
    another source at the same path is another note. Raises :class:`UnknownNote` when
    ``file_path`` is not a latest note, :class:`NoActiveModel` before any model is active, and
    :class:`UnknownSource` / :class:`AmbiguousNote` as :func:`locate` does.
    """
    info = search_sql.get_model(conn)
    if info is None:
        raise NoActiveModel(NO_ACTIVE_MODEL)
    ref = locate(conn, file_path, source, latest_only=True)
    if ref is None:
        raise UnknownNote(file_path)
    vector, family = notes_sql.note_vector(conn, info, ref.file_path, ref.table)
    # Each list's candidates: enough notes beyond ``limit`` for the other list to lift some.
    candidates = max(4 * limit, 20)
    k = max(8 * candidates, 40)
    rows: list[dict[str, Any]] = []
    while vector is not None:  # none yet (synced without embeddings): its words alone
        rows, got = notes_sql.similar_notes(
            conn, info, vector, table=ref.table, exclude=family, limit=candidates, k=k
        )
        if len(rows) >= candidates or got < k or k >= hnsw_scan.EF_SEARCH_MAX:
            break
        k = min(4 * k, hnsw_scan.EF_SEARCH_MAX)
    query = similar_words.note_words(conn, ref.table, ref.file_path)
    words = similar_words.keyword_neighbours(
        conn, query, table=ref.table, exclude=family, k=candidates
    )
    rows = similar_words.fuse(rows, words, limit, weight=None if vector is not None else 0.0)
    return ref, [
        SimilarNote(
            file_path=r["file_path"], title=r["title"] or "", score=float(r["score"]),
            heading=r["heading"], content=r["content"], tags=tuple(r["tags"] or ()),
            source=source_name(r["source_table"]),
        )
        for r in rows
    ]  # fmt: skip


def get_doc(
    conn: psycopg.Connection, file_path: str, source: str | None = None
) -> dict[str, Any] | None:
    """A note by path (in ``source``; None: as :func:`locate` chooses): the latest version
    (``latest`` true), else a stored older or draft version (``latest`` false,
    ``superseded_by`` set when a newer version exists), else None.

    ``source`` is the source read; ``also_in`` names the other sources holding the path.
    ``not_searchable`` says why search does not return it (draft, empty, superseded by X,
    rejected because Y, could not be chunked), or is None for a searchable note; ``draft`` the
    marker that makes the version a draft (``draft: true``), or None; ``versions`` the (path,
    title) of the versions it replaces through ``previous``, newest first.
    ``file_rejected`` is the reason the file now at the path was rejected (broken YAML, not
    UTF-8): what is returned is then its last good version, or None. ``warnings`` lists what
    was odd in the stored version but cost it nothing (a frontmatter key written twice, a date
    that is not one and was left empty)."""
    from knowledge_assets.core.ingest.store import note_warnings
    from knowledge_assets.core.search.explain import rejection, why_not_searchable
    from knowledge_assets.core.settings import SourceSettings

    ref = locate(conn, file_path, source)
    doc = notes_sql.get_doc(conn, ref.file_path, ref.table) if ref is not None else None
    if ref is not None and doc is not None:
        file_path = ref.file_path  # as stored: a name typed in NFC finds one stored in NFD
        settings = SourceSettings.from_env()
        conventions = Conventions(
            settings.draft_markers, settings.created_keys, settings.updated_keys
        )
        doc["source"], doc["also_in"] = ref.source, list(ref.also_in)
        doc["not_searchable"] = why_not_searchable(conn, file_path, conventions, ref.table)
        doc["file_rejected"] = rejection(conn, file_path, ref.table)
        doc["warnings"] = next(iter(w for _, w in note_warnings(conn, ref.table, [file_path])), [])
        doc["warnings"] += conventions.date_warnings(doc["frontmatter"] or {})
        doc["draft"] = conventions.draft_marker(doc["frontmatter"] or {})
        doc["versions"] = notes_sql.earlier_versions(conn, file_path, ref.table)
    return doc


def shown_in_note_view(doc: dict[str, Any]) -> bool:
    """Whether the note view shows this version (:func:`get_doc`): the latest one, an empty one
    (frontmatter only, a cleared file) or one a newer version replaced through ``previous``
    (seed 000 keeps them as history); never a draft."""
    from knowledge_assets.core.search.explain import EMPTY

    replaced = bool(doc.get("superseded_by")) and not doc.get("draft")
    return bool(doc.get("latest")) or doc.get("not_searchable") == EMPTY or replaced


def list_tags(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(tag, number of latest notes carrying it), most used first."""
    return notes_sql.list_tags(conn)


TaggedNote = ListedNote  # a tag's notes are listed as any filter's


def notes_tagged(
    conn: psycopg.Connection, tag: str, *, limit: int = 50, offset: int = 0
) -> tuple[int, list[TaggedNote]]:
    """How many latest notes carry ``tag`` (read as a filter tag is: ``#`` and case do not
    matter, ``project`` takes ``project/alpha`` too), and a page of them, most recently
    updated first."""
    return notes_kept(conn, SearchFilters(tags=(tag,)), limit=limit, offset=offset)


def latest_fields(
    conn: psycopg.Connection, notes: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], dict[str, Any]]:
    """The title, tags, dates and body of the latest version of each (source, path) note, in
    one query; a note with no latest version is left out."""
    rows = notes_sql.latest_fields(conn, [(source_table(source), path) for source, path in notes])
    return {(source_name(r.pop("source_table")), r.pop("file_path")): r for r in rows}


def is_latest_note(conn: psycopg.Connection, file_path: str, source: str | None = None) -> bool:
    """Whether a latest note (of ``source``; None: of any source) is stored at exactly
    ``file_path``: one row looked up, where :func:`latest_notes` lists them all."""
    return notes_sql.is_latest_note(conn, file_path, source_table(source) if source else None)


def latest_notes(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(source, path) of every latest note: what links between notes can lead to."""
    return [(source_name(table), path) for table, path in notes_sql.latest_notes(conn)]


def superseded_notes(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(source, path) of every version a newer note supersedes: where a link leads when no
    current note answers it (its page names the note that replaced it)."""
    return [(source_name(table), path) for table, path in notes_sql.superseded_notes(conn)]


def titled(conn: psycopg.Connection, title: str, limit: int = 3) -> list[tuple[str, str]]:
    """(source, path) of the latest notes titled ``title`` (any case), by path."""
    return [(source_name(table), path) for table, path in notes_sql.titled(conn, title, limit)]


def linking_to(
    conn: psycopg.Connection, names: Sequence[str], limit: int
) -> list[tuple[str, str, str, str]]:
    """(source, path, title, body) of up to ``limit`` latest notes with a link to any of
    ``names`` (:func:`knowledge_assets.core.chunks.links.name_key`), by title."""
    return [(source_name(t), p, title, body) for t, p, title, body in notes_sql.linking_to(conn, names, limit)]  # fmt: skip
