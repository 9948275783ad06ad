"""The settings of an HNSW index scan, set before each query through a model's index.

How deep the scan looks (``hnsw.ef_search``, ``SEARCH_DEPTH`` times the rows a query wants, as
the index's build parameters assume) and, for a filtered search, whether it walks on until enough
rows pass the filters (``hnsw.iterative_scan``, pgvector >= 0.8).
"""

from __future__ import annotations

import math

import psycopg

from knowledge_assets.core.index.index_build import SEARCH_DEPTH

EF_SEARCH_MAX = 1000  # pgvector's upper bound for hnsw.ef_search
# How many index tuples an iterative filtered scan may visit before it gives up (pgvector's
# default); a filter that rare falls back to deepening and then to exact ranking.
ITERATIVE_MAX_TUPLES = 20000
# The first pgvector with iterative index scans. Older ones (0.7, with halfvec, is the oldest the
# store takes) reserve the ``hnsw.`` settings prefix, so even switching the scans off is an error
# there: a filtered search then deepens the plain index scan instead.
ITERATIVE_SCAN_PGVECTOR = (0, 8)
# Whether the database's pgvector has iterative scans (a catalog read of one row).
_ITERATIVE_SUPPORTED = (
    "(SELECT (regexp_match(extversion, '^(\\d+)\\.(\\d+)'))::int[] >= %(since)s::int[]"
    " FROM pg_extension WHERE extname = 'vector')"
)
# The scan settings; the iterative ones only where the database has them.
_SET_SCAN = (
    "SELECT set_config('hnsw.ef_search', %(depth)s, false),"
    " CASE WHEN " + _ITERATIVE_SUPPORTED + " THEN"
    "  set_config('hnsw.iterative_scan', %(scan)s, false)"
    "  || set_config('hnsw.max_scan_tuples', %(tuples)s, false) END"
)


def set_hnsw_scan(
    conn: psycopg.Connection, *, ef_search: int, iterative: bool = False,
    max_tuples: int = ITERATIVE_MAX_TUPLES,
) -> bool:  # fmt: skip
    """The HNSW settings of the session's next vector query, all in one round trip: a
    candidate list ``SEARCH_DEPTH`` times ``ef_search`` (the rows the query wants), as the
    index's build parameters assume, and an iterative scan if asked for and the database's
    pgvector has them (``ITERATIVE_SCAN_PGVECTOR``), visiting at most ``max_tuples``. Returns
    whether the scan is iterative.

    Every query through the index sets all of them, so none inherits another's: an iterative
    scan left on would make a plain nearest-neighbour query walk on past its ``ef_search``.
    """
    depth = min(math.ceil(ef_search * SEARCH_DEPTH), EF_SEARCH_MAX)
    row = conn.execute(
        _SET_SCAN,
        {
            "depth": str(depth),
            "scan": "relaxed_order" if iterative else "off",
            "tuples": str(max_tuples),
            "since": list(ITERATIVE_SCAN_PGVECTOR),
        },
    ).fetchone()
    return iterative and row is not None and row[1] is not None


def has_iterative_scans(conn: psycopg.Connection) -> bool:
    """Whether the database's pgvector has iterative index scans."""
    row = conn.execute(
        "SELECT coalesce(" + _ITERATIVE_SUPPORTED + ", false)",
        {"since": list(ITERATIVE_SCAN_PGVECTOR)},
    ).fetchone()
    return bool(row and row[0])
