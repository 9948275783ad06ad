"""Stored vector type against HNSW index type: load and build CPU on the same vectors.

Three layouts of the same ``--rows`` random unit vectors (what the SHAKE-256 hash "model" of
bench/scale.py gives; 512-d), each in its own table, built one after another in one process
(no parallel workers, ``maintenance_work_mem`` 1GB, m 16, ef_construction 64):

- ``vector -> halfvec``: 32-bit vectors (stored out of line, TOAST), index on ``v::halfvec(d)``
  (what the project did up to migration 011);
- ``vector -> vector``: the same table, index on the 32-bit vectors themselves;
- ``halfvec -> halfvec``: 16-bit vectors stored inline, index on the column.

Load CPU is the backend's CPU for a binary COPY of every row; build CPU the backend's for the
``CREATE INDEX``. Other load on the machine changes the wall times but hardly the CPU.
Each variant runs ``--repeat`` times, the layouts interleaved.

    .venv/bin/python bench/hnsw_types.py --rows 50000
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import psycopg
from common import fresh_database
from hnsw_params import backend_cpu, vectors
from pgvector import HalfVector
from psycopg import sql

LAYOUTS = {
    "vector -> halfvec": ("vector", "(v::halfvec({d})) halfvec_cosine_ops"),
    "vector -> vector": ("vector", "v vector_cosine_ops"),
    "halfvec -> halfvec": ("halfvec", "v halfvec_cosine_ops"),
}


def load(conn: psycopg.Connection, table: str, kind: str, base: np.ndarray) -> float:
    """Create ``table`` with a ``kind`` column and COPY ``base`` in; backend CPU seconds."""
    conn.execute(
        sql.SQL("CREATE TABLE {} (id int PRIMARY KEY, v {}({}))").format(
            sql.Identifier(table), sql.SQL(kind), base.shape[1]
        )
    )
    cpu = backend_cpu(conn.info.backend_pid)
    copy = sql.SQL("COPY {} (id, v) FROM STDIN WITH (FORMAT BINARY)").format(sql.Identifier(table))
    with conn.cursor() as cur, cur.copy(copy) as cp:
        cp.set_types(["int4", kind])
        for i, v in enumerate(base):
            cp.write_row((i, HalfVector(v) if kind == "halfvec" else v))
    conn.commit()
    return backend_cpu(conn.info.backend_pid) - cpu


def build(conn: psycopg.Connection, table: str, opclass: str, dims: int) -> tuple[float, float]:
    """(backend CPU s, wall s) of one HNSW build on ``table``."""
    conn.execute("DROP INDEX IF EXISTS hnsw_idx")
    conn.execute("SET maintenance_work_mem = '1GB'")
    conn.execute("SET max_parallel_maintenance_workers = 0")
    pid = conn.info.backend_pid
    cpu, wall = backend_cpu(pid), time.perf_counter()
    conn.execute(
        sql.SQL("CREATE INDEX hnsw_idx ON {} USING hnsw ({})").format(
            sql.Identifier(table), sql.SQL(opclass.format(d=dims))
        )
    )
    cpu, wall = backend_cpu(pid) - cpu, time.perf_counter() - wall
    conn.rollback()  # the index itself is not needed
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/hnsw_types.py --rows {args.rows}"
          f" --repeat {args.repeat}; load {os.getloadavg()}")  # fmt: skip
    base, _ = vectors("hash", None, args.rows, 1)  # type: ignore[arg-type]
    url = fresh_database()
    with psycopg.connect(url) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        tables = {}
        for kind in ("vector", "halfvec"):
            tables[kind] = f"vecs_{kind}"
            cpu = load(conn, tables[kind], kind, base)
            size = conn.execute(
                "SELECT pg_total_relation_size(%s::regclass)", (tables[kind],)
            ).fetchone()
            mb = (size[0] if size else 0) / 2**20
            print(f"  {kind} table: COPY of {args.rows:,} rows {cpu:.2f} CPU s, {mb:.0f} MB")
        print("| stored -> indexed | build CPU s | build wall s | load |")
        for _ in range(args.repeat):
            for name, (kind, opclass) in LAYOUTS.items():
                cpu, wall = build(conn, tables[kind], opclass, base.shape[1])
                print(f"| {name} | {cpu:.2f} | {wall:.2f} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
