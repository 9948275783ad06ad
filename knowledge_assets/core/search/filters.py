"""Which latest notes a search may return: :class:`SearchFilters` and the SQL condition on
``rag.latest_docs d`` they become (:func:`filter_clause`), shared by every leg of a search.

Values always travel as query parameters; LIKE patterns are escaped first, so a ``%`` or ``_``
in a path is that character and nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any

import psycopg
from psycopg import sql

from knowledge_assets.core.chunks.chunk_text import normalise_tags
from knowledge_assets.core.chunks.tokenize import quote_lexeme
from knowledge_assets.core.search.id_lists import as_array, from_array
from knowledge_assets.core.search.phrases import (
    passages_holding,
    phrase_condition,
    phrase_query,
    quoted_phrases,
    refusal,
    word_lexemes,
)
from knowledge_assets.core.search.properties import (
    PropertyTest,
    holding,
    like_escaped,
    notes_passing,
)

__all__ = [
    "SearchFilters", "UnsearchableQuery", "filter_clause", "named_tags", "with_excluded_notes",
    "with_phrases", "word_lexemes",
]  # fmt: skip


class UnsearchableQuery(ValueError):
    """The query's operators or filters leave nothing to search (no words, an empty value, an
    excluded word search cannot see, a tag of ``#`` alone)."""


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions on which latest notes may match; every set field must hold.

    ``tags``: any of them, or a tag nested under one (``project`` matches ``project/alpha``, as
    in Obsidian), in any case (``project`` matches ``Project``); written as in frontmatter, so
    ``#旅`` is ``旅``. ``all_tags``: every one of them, read the same way (the ``tag:`` operators of a
    query, as Obsidian's search reads several). ``alias_prefix``: an alias starting with it
    (``jira:``).
    ``path_prefix``: the vault-relative path starts with it (``projects/`` for a folder).
    ``path_contains``: the path holds each of them anywhere, in any case (``path:`` operators).
    ``file_contains``: the file name (the path's last part, with its extension) holds each of
    them anywhere, in any case (``file:`` operators).
    ``tag_groups``, ``path_groups`` and ``file_groups``: for each group, any of its tags, path
    texts or file-name texts, read as ``tags``, ``path_contains`` and ``file_contains`` are (a
    query's operators joined by ``OR``).
    ``properties``: each test holds (:class:`~.properties.PropertyTest`, a query's
    ``[status:done]``); ``property_groups``: for each group, any of its tests.
    ``content_types``: any of them. Dates are inclusive bounds on ``created`` / ``updated``.
    ``types`` (``markdown_note``, ``bookmark_json``) and ``top_headings``: any of them.

    Exclusions (a query's ``-tag:``, ``-path:``, ``-file:``, ``-[K:V]`` and ``-word``): ``exclude_tags``
    leaves out the notes carrying any of them (or a tag nested under one), ``exclude_properties``
    those any of these tests holds for, ``exclude_paths``
    those whose path holds any of them, ``exclude_files`` those whose file name does,
    ``exclude_words`` those with a section holding any of the words, judged
    by the keyword index's tokens (:func:`word_lexemes`), or a title holding one as text;
    ``exclude_notes``: the notes of these
    ids (``rag.latest_docs.id`` as text), what a search turns its excluded words and excluded
    property tests into (:func:`with_excluded_notes`); ``note_ids``, when set, the only notes
    kept: what it turns its property tests into.
    """

    tags: tuple[str, ...] = ()
    all_tags: tuple[str, ...] = ()
    alias_prefix: str | None = None
    path_prefix: str | None = None
    path_contains: tuple[str, ...] = ()
    content_types: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    top_headings: tuple[str, ...] = ()
    created_from: date | None = None
    created_to: date | None = None
    updated_from: date | None = None
    updated_to: date | None = None
    exclude_tags: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    exclude_words: tuple[str, ...] = ()
    exclude_notes: tuple[str, ...] = ()
    tag_groups: tuple[tuple[str, ...], ...] = ()
    path_groups: tuple[tuple[str, ...], ...] = ()
    file_contains: tuple[str, ...] = ()
    exclude_files: tuple[str, ...] = ()
    file_groups: tuple[tuple[str, ...], ...] = ()
    properties: tuple[PropertyTest, ...] = ()
    property_groups: tuple[tuple[PropertyTest, ...], ...] = ()
    exclude_properties: tuple[PropertyTest, ...] = ()
    # Only these notes (ids as text): what a search turns its property tests into.
    note_ids: tuple[str, ...] | None = None
    # A query's quoted phrases, every one held by each passage (:mod:`.phrases`), and the
    # passages (ids as text) holding them all, once a search has looked them up.
    phrases: tuple[str, ...] = ()
    phrase_passages: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        # Tags as frontmatter's are stored (a leading '#' dropped). A blank tag names no tag:
        # kept, it would match no note (or be dropped and widen the search), so it is refused,
        # as a query's tag:# is.
        for name in ("tags", "all_tags", "exclude_tags"):
            object.__setattr__(self, name, named_tags(getattr(self, name)))
        groups = tuple(named_tags(g) for g in self.tag_groups)
        object.__setattr__(self, "tag_groups", groups)

    def is_empty(self) -> bool:
        """True when nothing is restricted."""
        return self == SearchFilters()


def named_tags(given: tuple[str, ...]) -> tuple[str, ...]:
    """``given`` as frontmatter tags are stored; :class:`UnsearchableQuery` for a tag that is
    empty once its ``#`` is dropped."""
    for tag in given:
        if not normalise_tags([tag]):
            raise UnsearchableQuery(
                f"the tag {tag!r} names nothing: give it a name, e.g. 日記 (or #日記)"
            )
    return tuple(normalise_tags(list(given)))


def _any_word(words: tuple[str, ...]) -> str:
    """A tsquery literal matching a section that holds any of ``words``."""
    each = [" & ".join(quote_lexeme(lx) for lx in word_lexemes(w)) for w in words]
    return " | ".join(f"({q})" for q in each if q) or "''"


def with_excluded_notes(
    conn: psycopg.Connection, filters: SearchFilters | None
) -> SearchFilters | None:
    """``filters`` with their excluded words turned into the ids of the notes holding them,
    found once through the keyword index, and their property tests into the ids of the notes
    they keep or leave out (:func:`~.properties.notes_passing`).

    A search runs several statements (the count of what the filters leave, each leg, a deeper
    vector scan): each then leaves the notes out by a list of ids, which Postgres hashes and
    looks up row by row. With the sub-query instead, the planner costed every lookup of a
    note as building the sub-query's hash again, and chose to compare each vector neighbour
    with every note left: a vector search at 10,000 notes leaving out a word held by half of
    them took 348 ms p50 that way, 72 ms with the list (bench/results/exclusion_latency.txt).
    The ids travel as one text parameter (:mod:`.id_lists`).
    """
    if filters is not None and (filters.properties or filters.property_groups):
        groups = [(test,) for test in filters.properties] + list(filters.property_groups)
        ids, passing = notes_passing(conn, groups)
        filters = _only(replace(filters, properties=(), property_groups=()), ids, keep=passing)
    if filters is not None and filters.exclude_properties:
        ids, passing = notes_passing(conn, [filters.exclude_properties])
        filters = _only(replace(filters, exclude_properties=()), ids, keep=not passing)
    if filters is not None and filters.phrases and filters.phrase_passages is None:
        held = passages_holding(conn, filters.phrases)
        if held is not None:  # else too many to list: each statement tests its passages
            filters = replace(_only(filters, held[1], keep=True), phrase_passages=held[0])
    if filters is None or not filters.exclude_words:
        return filters
    row = conn.execute(
        "SELECT array_agg(DISTINCT id)::text FROM (SELECT document_id AS id FROM rag.chunks"
        " WHERE tokens @@ %s::tsquery UNION SELECT d.id FROM rag.latest_docs d"
        " WHERE lower(d.title) LIKE ANY(%s::text[])) x",  # the title too (_title_patterns)
        (_any_word(filters.exclude_words), _title_patterns(filters.exclude_words)),
        prepare=False,  # planned for this query's words (fetch_dicts says why)
    ).fetchone()
    ids = from_array(row[0] if row else None)
    return replace(filters, exclude_words=(), exclude_notes=(*filters.exclude_notes, *ids))


def with_phrases(filters: SearchFilters | None, words: str) -> SearchFilters | None:
    """``filters`` with the quoted phrases of a query's ``words`` added (:mod:`.phrases`);
    :class:`UnsearchableQuery` for a phrase search keeps no word of."""
    phrases = quoted_phrases(words)
    if not phrases:
        return filters
    if why := refusal(phrases):  # refused before any statement runs
        raise UnsearchableQuery(why)
    base = filters or SearchFilters()
    return replace(base, phrases=tuple(dict.fromkeys((*base.phrases, *phrases))))


def _only(filters: SearchFilters, ids: tuple[str, ...], *, keep: bool) -> SearchFilters:
    """``filters`` keeping only the notes ``ids`` (``keep``) or leaving them out, whichever
    list notes_passing found shorter. Every note kept, as ids, let the planner start from the
    notes' primary key and rank every passage exactly (358 ms at 10,000 notes against 25 ms
    leaving out none)."""
    if not keep:
        return replace(filters, exclude_notes=(*filters.exclude_notes, *ids))
    if filters.note_ids is not None:  # already narrowed: both must hold
        ids = tuple(set(ids) & set(filters.note_ids))
    return replace(filters, note_ids=ids)


def _title_patterns(words: tuple[str, ...]) -> list[str]:
    """Patterns for a lower-cased title holding any of ``words``. A title is the note's name in
    every list of results: a note titled 2026年1月11日の日記 holds 日記 even when none of its
    sections says it (a frontmatter title is not among its sections' words)."""
    return [form for word in words for form in holding(word)]


class _Clause:
    """Conditions ANDed together, and their parameters."""

    def __init__(self) -> None:
        self.parts: list[sql.Composable] = [sql.SQL("true")]
        self.params: dict[str, Any] = {}

    def add(self, cond: str | sql.Composable, name: str, value: Any) -> None:
        self.parts.append(sql.SQL(cond) if isinstance(cond, str) else cond)
        self.params[name] = value


def filter_clause(
    filters: SearchFilters | None, chunks: str | None = None
) -> tuple[sql.Composable, dict[str, Any]]:
    """A boolean SQL condition on ``d`` (rag.latest_docs) and its parameters; with ``chunks``
    (the alias of rag.chunks in the statement), quoted phrases are tested per passage rather
    than per note."""
    f = filters or SearchFilters()
    clause = _Clause()
    _tag_conditions(clause, f)
    _path_conditions(clause, f)
    _field_conditions(clause, f)
    if f.exclude_words or f.properties or f.property_groups or f.exclude_properties:
        # Left to a sub-query in every statement, the planner compared each vector neighbour
        # with every note left (with_excluded_notes says why): the notes come looked up instead.
        raise ValueError(
            "excluded words and property tests reach a search as the notes they keep or leave"
            " out: call with_excluded_notes first"
        )
    if f.note_ids is not None:
        ids = as_array(f.note_ids)
        # IS TRUE keeps the list out of index conditions: as one, every note a vector scan
        # reached was looked up once per listed id (85 µs a note for 944 ids), where a
        # filter tests each note against the list hashed once (bench/property_latency.py).
        clause.add("(d.id = ANY(%(f_ids)s::uuid[])) IS TRUE", "f_ids", ids)
    if f.exclude_notes:
        clause.add("NOT (d.id = ANY(%(f_noids)s::uuid[]))", "f_noids", as_array(f.exclude_notes))
    if f.phrases and f.phrase_passages is not None and chunks is not None:
        # Plain, not IS TRUE: the few passages listed are where a count or an exact ranking
        # starts (their primary key); a vector scan reaches passages by their text instead.
        cond = sql.SQL("{}.id = ANY(%(f_passages)s::uuid[])").format(sql.Identifier(chunks))
        clause.add(cond, "f_passages", as_array(f.phrase_passages))
    elif f.phrases and f.phrase_passages is None:  # not looked up: tested row by row
        clause.add(phrase_condition(f.phrases, chunks), "f_phrase", phrase_query(f.phrases))
    # Looked up, in a statement of notes alone: note_ids keeps the notes holding them.
    return sql.SQL(" AND ").join(clause.parts), clause.params


def _tag_conditions(clause: _Clause, f: SearchFilters) -> None:
    # tag_paths (sql/027, sql/029): the keys of each tag of the note and of its parents,
    # GIN-indexed. The filter's tags take their keys from the same SQL function, so case
    # folds alike on both sides; with constant tags the planner computes them once.
    if f.tags:
        clause.add("d.tag_paths && rag.tag_keys(%(f_tags)s::text[])", "f_tags", list(f.tags))
    if f.all_tags:  # every one: the note's keys (with its tags' parents) hold each tag's key
        clause.add("d.tag_paths @> rag.tag_keys(%(f_all)s::text[])", "f_all", list(f.all_tags))
    for i, group in enumerate(f.tag_groups):  # any of the group's tags
        name = f"f_anytags{i}"
        cond = sql.SQL("d.tag_paths && rag.tag_keys({}::text[])").format(sql.Placeholder(name))
        clause.add(cond, name, list(group))
    if f.exclude_tags:
        clause.add(
            "NOT (d.tag_paths && rag.tag_keys(%(f_notags)s::text[]))",
            "f_notags",
            list(f.exclude_tags),
        )


# What a path: operator reads, and what a file: operator reads: the file name, all after the
# path's last "/".
_PATH = sql.SQL("lower(d.file_path)")
_FILE_NAME = sql.SQL("lower(substring(d.file_path FROM '[^/]*$'))")


def _path_conditions(clause: _Clause, f: SearchFilters) -> None:
    if f.path_prefix:
        pattern = like_escaped(f.path_prefix) + "%"
        clause.add("d.file_path LIKE %(f_path)s ESCAPE '\\'", "f_path", pattern)
    # Obsidian's path: and file: match text anywhere in the path or the file name, in any case
    # (lower() of the path against lower-cased patterns: three times cheaper than ILIKE).
    # LIKE ... ANY takes backslash as its escape character.
    for column, kind, held, groups, excluded in (
        (_PATH, "path", f.path_contains, f.path_groups, f.exclude_paths),
        (_FILE_NAME, "file", f.file_contains, f.file_groups, f.exclude_files),
    ):
        holds = [(text,) for text in held] + list(groups)
        for i, texts in enumerate(holds):  # each text, or any text of a group
            name = f"f_{kind}{i}"
            cond = sql.SQL("{} LIKE ANY({}::text[])").format(column, sql.Placeholder(name))
            clause.add(cond, name, [form for text in texts for form in holding(text)])
        if excluded:
            name = f"f_no{kind}s"
            cond = sql.SQL("NOT ({} LIKE ANY({}::text[]))").format(column, sql.Placeholder(name))
            clause.add(cond, name, [form for text in excluded for form in holding(text)])


def _field_conditions(clause: _Clause, f: SearchFilters) -> None:
    if f.alias_prefix:
        clause.add(
            "EXISTS (SELECT 1 FROM unnest(d.aliases) a WHERE a LIKE %(f_alias)s ESCAPE '\\')",
            "f_alias",
            like_escaped(f.alias_prefix) + "%",
        )
    for column, name, values in (
        ("content_type", "f_ctypes", f.content_types),
        ("doc_type", "f_types", f.types),
        ("top_heading", "f_theads", f.top_headings),
    ):
        if values:
            cond = sql.SQL("{} = ANY({}::text[])").format(
                sql.Identifier("d", column), sql.Placeholder(name)
            )
            clause.add(cond, name, list(values))
    for col, op, name, value in (
        ("created", ">=", "f_cfrom", f.created_from),
        ("created", "<=", "f_cto", f.created_to),
        ("updated", ">=", "f_ufrom", f.updated_from),
        ("updated", "<=", "f_uto", f.updated_to),
    ):
        if value is not None:
            cond = sql.SQL("{} {} {}::date").format(
                sql.Identifier("d", col), sql.SQL(op), sql.Placeholder(name)
            )
            clause.add(cond, name, value)
