"""BM25 keyword search in SQL over the chunks' Sudachi lexemes (``tokenize.chunk_tsvector``).

Per query term ``t`` (a token, or a pair of adjacent tokens weighted ``bigram_weight``)::

    idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))

``tf`` counts a heading occurrence (tsvector weights A, B) ``heading_tf`` times and a body one
once; ``dl`` is the chunk's length in tokens (``rag.chunks.token_count``), ``avgdl`` and the
document frequencies come from ``rag.keyword_totals`` / ``rag.keyword_lexemes``, which triggers keep
current. ``k1`` depends on the query's script (``default_settings``). The defaults were chosen on
the tune half of ``shared/eval/jsquad`` (``bench/search_quality.py``) and checked on English text
(``bench/english_docstrings.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import psycopg
from psycopg import sql

from knowledge_assets.core.chunks.tokenize import query_lexemes
from knowledge_assets.core.search.filters import SearchFilters, filter_clause
from knowledge_assets.core.search.phrases import phrase_query
from knowledge_assets.core.search.search_sql import HIT_COLUMNS, fetch_dicts

# BM25 candidates are the chunks containing one of the query's rarer words, chosen rarest first
# until their document frequencies add up to this (the rarest word always counts). Fetching a
# candidate costs microseconds, so this bounds keyword latency at any store size; on jsquad every
# budget from 100 to 20,000 gave the same R@1/5/10 and MRR@10 (docs/search.md).
KEYWORD_BUDGET = 1000
# Candidates are pre-ranked by BM25 with binary term frequencies; this many of the best are
# re-scored exactly (term frequencies from the tsvector positions).
PRERANK_MIN = 100
PRERANK_FACTOR = 4


@dataclass(frozen=True)
class KeywordSettings:
    """BM25 parameters. ``length`` ``tokens`` (default) or ``lexemes`` (distinct words, the
    former definition, kept for comparison). Search uses ``default_settings(query)``."""

    k1: float = 1.2
    b: float = 0.75
    heading_tf: float = 3.0
    bigram_weight: float = 0.5
    length: str = "tokens"

    def __post_init__(self) -> None:
        if self.length not in ("tokens", "lexemes"):
            raise ValueError(f"unknown BM25 length {self.length!r}: choose tokens or lexemes")


# Term-frequency saturation for queries in Japanese (kana or kanji). Sudachi's short units repeat
# through a Japanese section far more than English words do, so their counts say less: on the tune
# half of jsquad k1 0.6 ranks better than 1.2 (keyword MRR@10 0.9455 against 0.9429), on English
# docstrings worse (0.4636 against 0.5042), so other queries keep the usual 1.2 (docs/search.md).
K1_JAPANESE = 0.6
_JAPANESE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")


def default_settings(query: str) -> KeywordSettings:
    """The BM25 settings search uses for ``query``: ``k1`` ``K1_JAPANESE`` when the query holds
    kana or kanji, else the defaults of ``KeywordSettings``."""
    return KeywordSettings(k1=K1_JAPANESE) if _JAPANESE.search(query) else KeywordSettings()


# Distinct words: the lexemes with a word position (weights A, D), adjacent pairs left out.
_DISTINCT_WORDS = "length(ts_filter({}.tokens, '{{a,d}}'))"


def _doc_length(settings: KeywordSettings, column: str) -> sql.Composable:
    if settings.length == "tokens":
        return sql.SQL("{}.token_count").format(sql.Identifier(column))
    return sql.SQL(_DISTINCT_WORDS).format(sql.Identifier(column))


# The BM25 statistics of the query's lexemes in one round trip. It also turns parallel query off
# for this connection: the per-term index scans look costly to the planner but each takes well
# under a millisecond, and starting parallel workers would cost more than the whole search.
_TERMS = (
    "SELECT t.ndocs, t.total_length, (SELECT coalesce(jsonb_object_agg(k.lexeme, k.ndoc), '{}')"
    "  FROM rag.keyword_lexemes k WHERE k.lexeme = ANY(%s::text[]) AND k.ndoc > 0),"
    " set_config('max_parallel_workers_per_gather', '0', false)"
    " FROM rag.keyword_totals t"
)


def keyword_terms(
    conn: psycopg.Connection, lexemes: Sequence[str], settings: KeywordSettings
) -> tuple[list[tuple[str, int]], int, float]:
    """Document frequencies of the lexemes that occur, the number of chunks, the mean length."""
    row = conn.execute(_TERMS, (list(lexemes),)).fetchone()
    ndocs, total, df = (int(row[0]), int(row[1]), dict(row[2])) if row else (0, 0, {})
    if settings.length == "lexemes":
        avg = conn.execute(
            sql.SQL("SELECT avg({}) FROM rag.chunks c").format(_doc_length(settings, "c"))
        ).fetchone()
        total = int(float(avg[0] or 0) * ndocs) if avg else 0
    terms = [(lx, int(df[lx])) for lx in dict.fromkeys(lexemes) if lx in df]
    return terms, ndocs, (total / ndocs if ndocs else 0.0)


def _tsquery(lexemes: Sequence[str]) -> str:
    return " | ".join("'" + lx.replace("\\", "\\\\").replace("'", "''") + "'" for lx in lexemes)


def _generating_terms(terms: list[tuple[str, int]], budget: int) -> list[str]:
    """The rarest terms whose document frequencies add up to at most ``budget`` (at least one)."""
    chosen: list[str] = []
    total = 0
    for lx, df in sorted(terms, key=lambda t: (t[1], t[0])):
        if chosen and total + df > budget:
            break
        chosen.append(lx)
        total += df
    return chosen


def _saturation(tf: str, dl: sql.Composable) -> sql.Composable:
    return sql.SQL(
        "{tf} * (%(k1)s + 1) / ({tf} + %(k1)s * (1 - %(b)s + %(b)s * {dl} / %(avgdl)s))"
    ).format(tf=sql.SQL(tf), dl=dl)


def _presence(n: int, dl: sql.Composable) -> sql.Composable:
    """Which of the query's terms (``_presence_terms``) each candidate holds, from the GIN index
    alone.

    One index scan per term, ANDed with the candidate query: a candidate's tsvector (often a few
    KB, stored out of line) is never read, so pre-ranking thousands of candidates stays cheap.
    The scans leave the filters out (each would join rag.latest_docs again, for the same
    candidates); the pre-ranking applies them once, by the note each row names.
    """
    scans = [
        sql.SQL(
            "SELECT c.id, c.document_id, {dl} AS dl, {i}::float8 AS w FROM rag.chunks c"
            " WHERE c.tokens @@ (%(tsq)s::tsquery && {t}::tsquery)"
        ).format(t=sql.Placeholder(f"t{i}"), i=sql.Placeholder(f"i{i}"), dl=dl)
        for i in range(n)
    ]
    return sql.SQL(" UNION ALL ").join(scans)


# Term frequency of one lexeme of the chunk: heading positions (weights A, B) count heading_tf,
# the others once. Counted with array functions rather than a sub-query over the weights: the
# sub-query ran twice per lexeme and was most of the exact re-scoring's time. A lexeme without
# positions counts once.
_TF = (
    "coalesce(cardinality(u.weights) + (%(htf)s - 1) * (cardinality(array_positions(u.weights,"
    " 'A')) + cardinality(array_positions(u.weights, 'B'))), 1)"
)


def _presence_terms(idf: dict[str, float], words: set[str]) -> list[tuple[str, float]]:
    """The pre-ranking's scans as (tsquery, weight): one per word with its IDF, and one for any of
    the word pairs, weighted as the rarest pair.

    The pairs tell a compound (東京大学, two words to the tokenizer) from its words apart, but a
    scan each was 7 of 16 for a question of 9 words. One scan for all of them gave the same hits
    on jsquad, and 15.1 against 17.5 ms of server CPU per search at 10,000 notes
    (bench/results/scale.txt)."""
    present = [(_tsquery([lx]), w) for lx, w in idf.items() if lx in words]
    pairs = [lx for lx in idf if lx not in words]
    if pairs:
        present.append((_tsquery(pairs), max(idf[lx] for lx in pairs)))
    return present


def _narrowed(tsq: str, phrases: tuple[str, ...]) -> str:
    """The candidate query ``tsq`` kept to passages holding every phrase."""
    return f"({tsq}) & ({phrase_query(phrases)})" if phrases else tsq


def keyword_bm25(
    conn: psycopg.Connection, query: str, *, filters: SearchFilters | None, limit: int,
    settings: KeywordSettings | None = None, budget: int = KEYWORD_BUDGET,
) -> list[dict[str, Any]]:  # fmt: skip
    """Chunks of the latest notes ranked by BM25 for the search text ``query`` (with
    ``default_settings(query)`` unless ``settings`` are given)."""
    s = settings or default_settings(query)
    words, pairs = query_lexemes(query)
    terms, ndocs, avgdl = keyword_terms(conn, words + (pairs if s.bigram_weight else []), s)
    word_set = set(words)
    unigrams = [t for t in terms if t[0] in word_set]
    if not unigrams or not ndocs:
        return []
    weight = {lx: (1.0 if lx in word_set else s.bigram_weight) for lx, _ in terms}
    idf = {lx: weight[lx] * math.log(1 + (ndocs - df + 0.5) / (df + 0.5)) for lx, df in terms}
    present = _presence_terms(idf, word_set)
    # Quoted phrases narrow every presence scan (as index lexemes), so only passages holding
    # them are candidates, from the index alone; filter_clause's forms of them would read each
    # candidate's tokens or name a passage alias this statement's filter has not.
    phrases = filters.phrases if filters is not None else ()
    where, params = filter_clause(
        replace(filters, phrases=(), phrase_passages=None) if filters is not None else None
    )
    # Every chunk belongs to a latest note (ON DELETE CASCADE), so rag.latest_docs is joined
    # only when a filter needs its columns.
    join = sql.SQL("" if filters is None or filters.is_empty() else
                   " JOIN rag.latest_docs d ON d.id = p.document_id")  # fmt: skip
    # Pre-rank: BM25 with every term frequency taken as 1 (no tsvector is read); exact BM25 then
    # re-scores the best of them from their term positions.
    query_sql = sql.SQL(
        "WITH p AS MATERIALIZED ({presence}),"
        " pre AS (SELECT p.id, p.dl, sum(p.w) * {binary} AS pre FROM p{join} WHERE {where}"
        "  GROUP BY p.id, p.dl ORDER BY pre DESC, p.id LIMIT %(pre)s),"
        " s AS (SELECT pre.id, (SELECT sum((%(idf)s::float8[])[array_position(%(terms)s::text[],"
        "    x.lexeme)] * {sat}) FROM (SELECT u.lexeme, {tf} AS tf"
        "      FROM unnest(ts_delete(c.tokens, tsvector_to_array("
        "        ts_delete(c.tokens, %(terms)s::text[])))) u) x) AS score"
        "  FROM pre JOIN rag.chunks c ON c.id = pre.id ORDER BY score DESC, pre.id LIMIT %(limit)s)"
        " SELECT {cols}, s.score FROM s"
        " JOIN rag.chunks c ON c.id = s.id JOIN rag.latest_docs d ON d.id = c.document_id"
        " ORDER BY s.score DESC, c.id"
    ).format(
        cols=HIT_COLUMNS, presence=_presence(len(present), _doc_length(s, "c")), join=join,
        where=where,
        tf=sql.SQL(_TF), binary=_saturation("1.0", sql.SQL("p.dl")),
        sat=_saturation("x.tf", sql.SQL("pre.dl")),
    )  # fmt: skip
    params |= {
        "k1": s.k1, "b": s.b, "htf": s.heading_tf, "avgdl": max(avgdl, 1.0), "terms": list(idf),
        "idf": list(idf.values()), "tsq": _narrowed(_tsquery(_generating_terms(unigrams, budget)), phrases),
        "limit": limit, "pre": max(PRERANK_MIN, PRERANK_FACTOR * limit),
    }  # fmt: skip
    params |= {f"t{i}": tsq for i, (tsq, _) in enumerate(present)}
    params |= {f"i{i}": w for i, (_, w) in enumerate(present)}
    return fetch_dicts(conn, query_sql, params)  # without parallel workers (keyword_terms)
