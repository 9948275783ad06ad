"""The notes a query names by their title, an alias or a short name, looked up in the store
(known-item lookup).

:func:`.title_match.titles_first` can only move a note the ranking found. A title typed in
hiragana where it is written in katakana or kanji (``ぱっけーじ`` for ``パッケージ``) often shares
no keyword token with the note, an Obsidian alias (``aliases:``) is in no passage at all, and a
note titled ``ジェネリクス (generics)`` need not say either name in a passage, so such notes were
not among the hits. Nor was a note named by a file name its title does not say
(``20251230_rag-design.md`` titled ``RAG設計メモ``). Here they are fetched directly:
``rag.latest_docs.name_keys`` holds the :func:`.title_match.title_key` of each note's title, of
the short names :func:`.title_match.short_names` gives it, of its aliases and of its file name
(:func:`.title_match.file_name_keys`; sql/057, sql/058 and sql/064, computed by ``rag.title_key``,
the same key in SQL), GIN-indexed, so the lookup is one index probe.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from knowledge_assets.core.search.filters import SearchFilters, filter_clause
from knowledge_assets.core.search.search_hits import SearchHit, make_hit
from knowledge_assets.core.search.search_sql import HIT_COLUMNS, fetch_dicts
from knowledge_assets.core.search.title_match import ALIAS, SHORT_NAME, TITLE, title_key

__all__ = ["ALIAS", "SHORT_NAME", "TITLE", "named_notes"]

# The query's key is worked out by the same SQL function as the stored keys, so the two never
# disagree; the function is immutable, so the planner folds each use into a constant before
# planning and probes the GIN index with it. name_keys holds the title's key first, the two short
# names' next, then the aliases' (sql/058) and the file name's two (sql/064): a whole title comes
# first, then aliases and file names, then short names, as a person who wrote an alias or named
# a file meant it as the note's name.
_NAMED = sql.SQL(
    "SELECT {cols}, CASE WHEN d.name_keys[1] = rag.title_key(%(q)s) THEN {title}"
    " WHEN rag.title_key(%(q)s) = ANY(d.name_keys[4:]) THEN {alias} ELSE {short} END AS named_by"
    " FROM rag.latest_docs d JOIN rag.chunks c ON c.document_id = d.id AND c.chunk_index = 0"
    " WHERE d.name_keys @> ARRAY[rag.title_key(%(q)s)] AND rag.title_key(%(q)s) <> ''"
    " AND {where} ORDER BY named_by, d.file_path, d.source_table LIMIT %(most)s"
)

_TIERS = {
    "title": sql.Literal(TITLE),
    "alias": sql.Literal(ALIAS),
    "short": sql.Literal(SHORT_NAME),
}


def named_notes(
    conn: psycopg.Connection, query: str, filters: SearchFilters | None, most: int
) -> list[tuple[int, SearchHit]]:
    """Up to ``most`` notes passing ``filters`` whose title, an alias, a file name or a short
    name *is* ``query`` (by title key): titles, then aliases and file names, then short names,
    each as its tier (:data:`TITLE`, :data:`ALIAS` for an alias or a file name,
    :data:`SHORT_NAME`) and the note's first section.

    A note found only this way is no keyword or vector hit; it is marked ``keyword``, the search
    its title belongs to, so every client's list of match types stays as it was.
    """
    if not title_key(query):  # no letters or digits: nothing is named by it, no round trip
        return []
    where, params = filter_clause(filters)
    rows = fetch_dicts(
        conn,
        _NAMED.format(cols=HIT_COLUMNS, where=where, **_TIERS),
        {**params, "q": query, "most": most},
    )
    return [(int(r["named_by"]), make_hit(r, 0.0, ("keyword",))) for r in rows]
