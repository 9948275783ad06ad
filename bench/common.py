"""Shared bench helpers: a fresh database on the embedded server (or DATABASE_URL), the
jsquad vault put through the real pipeline, and embedding rates with and without a competing
CPU load."""

from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
import time
import uuid
import zlib
from collections.abc import Hashable, Mapping
from pathlib import Path

import numpy as np
import psycopg
from psycopg import sql

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
# The judged vault the quality benches read: jsquad, unless KA_EVAL_DIR names another folder laid
# out the same way (vault/ of notes; queries.jsonl, one {"question", "file_path", "heading"} per
# line), so their figures can be measured again on notes they were never tuned on.
JSQUAD = Path(os.environ.get("KA_EVAL_DIR") or SHARED / "eval" / "jsquad").resolve()
SURVIVAL = SHARED / "eval" / "survival-ts" / "docs"


def held_out(file_path: str) -> bool:
    """bench/search_quality.py's split of the jsquad questions: a question is *held out* when the
    crc32 of its note's path is odd (25 of 59 notes, 1,949 of 4,442 questions), else it belongs to
    the *tune* half that settings may be chosen on."""
    return zlib.crc32(file_path.encode()) % 2 == 1


def fresh_database() -> str:
    """A new, migrated database; the embedded server lives in a temporary folder."""
    base = os.environ.get("DATABASE_URL") or db.embedded_url(Path(tempfile.mkdtemp()) / "pg")
    name = f"ka_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(base)
    info["dbname"] = name
    url = psycopg.conninfo.make_conninfo(**info)
    db.migrate(url)
    return url


def sync_and_chunk(url: str, vault: Path, max_tokens: int) -> None:
    """``vault`` through the real pipeline into ``url``: sync, latest versions, chunks sized for
    a model of ``max_tokens``."""
    with db.connect(url) as conn:
        source = LocalSource(vault)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=max_tokens)


def ingest_jsquad(url: str, embedder: Embedder) -> None:
    """The jsquad vault through the real pipeline into ``url``, with ``embedder``'s vectors."""
    sync_and_chunk(url, JSQUAD / "vault", embedder.max_tokens)
    with db.connect(url) as conn:
        embed_missing(conn, embedder)


LOADS = ("as is", "+1 busy-loop process")


def jsquad_paragraphs(count: int) -> list[str]:
    """The first ``count`` jsquad paragraphs longer than 80 characters, cut at 600 (about a
    section's length)."""
    files = sorted((JSQUAD / "vault").rglob("*.md"))
    paragraphs = [
        p for f in files for p in f.read_text(encoding="utf-8").split("\n\n") if len(p) > 80
    ]
    return [p[:600] for p in paragraphs[:count]]


def busy(stop: float) -> None:
    while time.time() < stop:  # bounded: ends on its own even if the parent dies
        pass


def rate(embedder: Embedder, texts: list[str]) -> float:
    """Passages per second of one ``embed`` call over ``texts``."""
    started = time.perf_counter()
    embedder.embed(texts, "document")
    return len(texts) / (time.perf_counter() - started)


def rates_under_load(
    models: Mapping[Hashable, Embedder], texts: list[str], repeats: int, limit_s: float
) -> dict[tuple[str, Hashable], list[float]]:
    """Each model's rates, interleaved, as the machine is and then with one busy-loop process
    (stopped after the runs, and on its own after ``limit_s``), keyed by (load, model)."""
    results: dict[tuple[str, Hashable], list[float]] = {}
    for label in LOADS:
        worker = None
        if label != LOADS[0]:
            worker = mp.Process(target=busy, args=(time.time() + limit_s,), daemon=True)
            worker.start()
        for _ in range(repeats):
            for name, model in models.items():
                results.setdefault((label, name), []).append(rate(model, texts))
        if worker is not None:
            worker.terminate()
            worker.join(5)
        print(f"  {label}: done, load average {os.getloadavg()[0]:.1f}", flush=True)
    return results


def best_part_scores(embedder: Embedder, groups: list[list[str]], qvecs: np.ndarray) -> np.ndarray:
    """(queries x chunks): each chunk's best cosine over its parts ``groups[j]``, as search
    scores a chunk embedded in parts."""
    flat = [t for g in groups for t in g]
    size = embedder.batch_size
    vecs = np.vstack([np.asarray(embedder.embed(flat[i : i + size], "document"), dtype=np.float32)
                      for i in range(0, len(flat), size)])  # fmt: skip
    scores = qvecs @ vecs.T
    out = np.empty((qvecs.shape[0], len(groups)), dtype=np.float32)
    start = 0
    for j, g in enumerate(groups):
        out[:, j] = scores[:, start : start + len(g)].max(axis=1)
        start += len(g)
    return out
