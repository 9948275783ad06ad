"""Template rows of bench/search_quality.py: vector and hybrid quality of one model under every
embedding template, without re-indexing the store per template.

Each chunk the pipeline wrote is rendered with the template and split into parts exactly as the
``embeddings`` asset does (``embedding_text.parts``); vectors come from the model (through the
bench's disk cache). Vector search is the exact cosine ranking the product runs below 5,000
chunks (a chunk scores its best part); hybrid search fuses the keyword candidates already
retrieved by ``search()`` with that ranking through ``fusion.fuse`` with the model's default
weights, the keyword candidates re-scored by their cosine, as ``search()`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from common import best_part_scores

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.index.embedding_text import ChunkFields, parts
from knowledge_assets.core.search import SearchHit
from knowledge_assets.core.search.fusion import HybridWeights, fuse

Key = tuple[str, str]


@dataclass
class Chunks:
    """The stored chunks: id, judged key and seed 000 fields, in one order."""

    ids: list[str]
    keys: list[Key]
    fields: list[ChunkFields]

    @classmethod
    def load(cls, url: str) -> Chunks:
        with db.connect(url) as conn:
            rows = conn.execute(
                "SELECT c.id::text, d.file_path, c.heading, c.embedding_text,"
                " c.parent_heading, c.content FROM rag.chunks c"
                " JOIN rag.latest_docs d ON d.id = c.document_id ORDER BY c.id"
            ).fetchall()
        return cls(
            [r[0] for r in rows],
            [(r[1], r[2]) for r in rows],
            [ChunkFields.parse(r[3], r[4], r[2], r[5]) for r in rows],
        )


def chunk_scores(emb: Embedder, chunks: Chunks, template: str, qvecs: np.ndarray) -> np.ndarray:
    """(queries x chunks) cosine of each chunk's best part under ``template``."""
    count: Callable[[str], int] = getattr(emb, "count_tokens", None) or (lambda t: 0)
    groups = [parts(template, f, emb.max_tokens, count) for f in chunks.fields]
    return best_part_scores(emb, groups, qvecs)


def rankings(
    chunks: Chunks, scores: np.ndarray, kw_hits: list[list[SearchHit]], weights: HybridWeights,
    depth: int,
) -> tuple[list[list[Key]], list[list[Key]]]:  # fmt: skip
    """Top-10 keys of vector search and of hybrid search, per query."""
    column = {cid: j for j, cid in enumerate(chunks.ids)}
    vector, hybrid = [], []
    for row, kw in zip(scores, kw_hits, strict=True):
        top = np.argsort(-row, kind="stable")[:depth]
        vec = [(chunks.ids[j], float(row[j])) for j in top]
        dense = {h.chunk_id: float(row[column[h.chunk_id]]) for h in kw}
        fused = fuse(vec, [(h.chunk_id, h.score) for h in kw], weights, 10, dense)
        vector.append([chunks.keys[j] for j in top[:10]])
        hybrid.append([chunks.keys[column[i]] for i, _, _ in fused])
    return vector, hybrid


def template_rows(url: str, ev: Any, emb: Embedder, templates: list[str], qvecs: np.ndarray,
                  kw_hits: list[list[SearchHit]], depth: int) -> None:  # fmt: skip
    """One vector row and one hybrid row per template (``ev.row`` prints them)."""
    chunks = Chunks.load(url)
    weights = HybridWeights.from_env(emb.model)
    for template in templates:
        vector, hybrid = rankings(
            chunks, chunk_scores(emb, chunks, template, qvecs), kw_hits, weights, depth
        )
        ev.row(f"vector {emb.model} template {template}", vector)
        ev.row(f"hybrid {emb.model} template {template} (default fusion)", hybrid)
