"""The keyword half of similar notes: the notes that share the words setting a note apart.

A note's mean vector finds notes near it in meaning; a small or multilingual model blurs a
note's particular topic into its general one. The words a note uses more than the store does
(its title, and its terms of highest TF-IDF) name that topic, and BM25 finds the other notes
using them. The two lists are fused as hybrid search fuses its legs (each scaled to 0..1 over its
candidates, then weighted). Judged against the links authors wrote between notes, the fusion
found more linked notes than the vector alone: many more of the notes linking to the note (their
link words hold its title), a few more of those it links to itself
(bench/results/similar_notes.txt).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from knowledge_assets.core.search import keyword_sql
from knowledge_assets.core.search.fusion import scaled

__all__ = ["TERMS", "VECTOR_WEIGHT", "fuse", "keyword_neighbours", "note_words"]

TERMS = 6  # the note's words of highest TF-IDF that, with its title, make the keyword query
VECTOR_WEIGHT = 0.5  # the vector list's share of the fused score; the keyword list has the rest
CHUNKS_PER_NOTE = 3  # keyword candidates read per note asked for: a note's sections come in runs

# Words of one character and numbers say little of a topic (型, 1); pairs of words (bigram
# lexemes, with a space) are left to the query's own tokenization.
_NOTE_WORDS = (
    "SELECT d.title, ARRAY(SELECT u.lexeme FROM rag.chunks c, unnest(c.tokens) u,"
    "  rag.keyword_lexemes k, rag.keyword_totals t"
    "  WHERE c.document_id = d.id AND k.lexeme = u.lexeme AND k.ndoc > 0"
    "  AND char_length(u.lexeme) > 1 AND strpos(u.lexeme, ' ') = 0 AND u.lexeme !~ '^[0-9]+$'"
    "  GROUP BY u.lexeme, k.ndoc, t.ndocs"
    "  ORDER BY sum(coalesce(cardinality(u.positions), 1)) * ln(1 + t.ndocs / (k.ndoc + 1.0)) DESC,"
    "  u.lexeme LIMIT %(n)s)"
    " FROM rag.latest_docs d WHERE d.source_table = %(t)s AND d.file_path = %(p)s"
)


def note_words(conn: psycopg.Connection, table: str, path: str) -> str:
    """The keyword query of the note at ``path`` of raw table ``table``: its title and its
    ``TERMS`` words of highest TF-IDF."""
    row = conn.execute(_NOTE_WORDS, {"t": table, "p": path, "n": TERMS}).fetchone()
    return " ".join([row[0] or "", *(row[1] or [])]).strip() if row else ""


def keyword_neighbours(
    conn: psycopg.Connection, query: str, *, table: str, exclude: Sequence[str], k: int
) -> list[dict[str, Any]]:
    """The ``k`` notes whose sections BM25 ranks best for ``query``, each as its best section's
    row (``score`` its BM25), minus the paths ``exclude`` of the source of raw table ``table``."""
    if not query:
        return []
    rows = keyword_sql.keyword_bm25(conn, query, filters=None, limit=k * CHUNKS_PER_NOTE)
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:  # best first
        key = (row["source_table"], row["file_path"])
        if (key[0] == table and key[1] in exclude) or key in best:
            continue
        best[key] = row
    return list(best.values())[:k]


def _scaled(rows: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """Each note's score scaled to 0..1 over its list, as hybrid search scales its legs."""
    return scaled({(r["source_table"], r["file_path"]): float(r["score"]) for r in rows})


def fuse(
    vector: list[dict[str, Any]], keyword: list[dict[str, Any]], limit: int,
    weight: float | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """The ``limit`` best notes of both lists by ``weight`` (default ``VECTOR_WEIGHT``) × scaled
    cosine + (1 − ``weight``) × scaled BM25, a note missing from a list scoring 0 there; each as
    its row from the vector list (its nearest section) or else the keyword one, ``score`` the
    fused score."""
    weight = VECTOR_WEIGHT if weight is None else weight
    v, kw = _scaled(vector), _scaled(keyword)
    rows = {(r["source_table"], r["file_path"]): r for r in [*keyword, *vector]}
    fused = {key: weight * v.get(key, 0.0) + (1 - weight) * kw.get(key, 0.0) for key in rows}
    order = sorted(rows, key=lambda key: (-fused[key], key[1], key[0]))
    return [rows[key] | {"score": fused[key]} for key in order[:limit]]
