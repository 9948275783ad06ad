"""What a filtered vector search costs, and what the alternatives would: the iterative HNSW scan
search uses (``search_sql.vector_hnsw_filtered``) with its candidate list at several
``hnsw.ef_search`` values, against exact ranking of every chunk the filter leaves
(``search_sql.vector_exact``), and against what search does where pgvector has no iterative
scans (0.7): plain index scans deepened until enough rows pass, exact ranking if even 1,000
neighbours are not enough. The filter keeps a tenth of the notes, as bench/scale_search.py's
filtered queries do; ``limit`` 10 is a vector search, 50 a hybrid search's vector leg.

On a kept bench/scale_steps.py or bench/scale.py store::

    .venv/bin/python bench/filtered_vector.py --store /path/to/store [--queries 50]

Hash query vectors (as the store's): the figures are costs, not recall.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

import psycopg  # noqa: E402
from scale import HashEmbedder  # noqa: E402
from scale_search import WARM_UP, jsquad_questions, tenth_prefix, time_each  # noqa: E402

from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.search import SearchFilters, hnsw_scan, legs, search_sql  # noqa: E402
from knowledge_assets.core.search.search_sql import ModelInfo  # noqa: E402

EF_SEARCH = (None, 10, 40, 80)  # None: what search sets (max(40, 2 * limit))


def _rows(
    conn: psycopg.Connection, info: ModelInfo, tenth: SearchFilters, limit: int,
    exact: bool = False, ef: int | None = None,
) -> Callable[[list[float]], object]:  # fmt: skip
    """One filtered vector search of ``limit`` rows, exact or through the index (at ``ef``)."""
    if exact:
        return lambda v: search_sql.vector_exact(
            conn, info, v, filters=tenth, limit=limit, min_similarity=None
        )

    def through_index(v: list[float]) -> object:
        set_scan = search_sql.set_hnsw_scan

        def scan(
            c: psycopg.Connection, *, ef_search: int, iterative: bool = False,
            max_tuples: int = hnsw_scan.ITERATIVE_MAX_TUPLES,
        ) -> bool:  # fmt: skip
            depth = ef if ef and iterative else ef_search
            return set_scan(c, ef_search=depth, iterative=iterative, max_tuples=max_tuples)

        search_sql.set_hnsw_scan = scan  # type: ignore[assignment]
        try:
            return search_sql.vector_hnsw_filtered(
                conn, info, v, filters=tenth, limit=limit, min_similarity=None
            )
        finally:
            search_sql.set_hnsw_scan = set_scan

    return through_index


def _without_iterative_scans(
    conn: psycopg.Connection, info: ModelInfo, tenth: SearchFilters, limit: int
) -> Callable[[list[float]], object]:
    """Search's filtered vector rows as on pgvector 0.7 (this server's version taken as older)."""

    def deepened(v: list[float]) -> object:
        since = hnsw_scan.ITERATIVE_SCAN_PGVECTOR
        hnsw_scan.ITERATIVE_SCAN_PGVECTOR = (99, 0)
        try:
            return legs._vector_rows(conn, info, v, filters=tenth, limit=limit, min_similarity=None)
        finally:
            hnsw_scan.ITERATIVE_SCAN_PGVECTOR = since

    return deepened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True, help="folder holding pg/")
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/filtered_vector.py --store {args.store.name}"
          f" --queries {args.queries}")  # fmt: skip
    vectors = HashEmbedder().embed(jsquad_questions(args.queries), "query")
    with db.connect(db.embedded_url(args.store / "pg")) as conn:
        row = conn.execute("SELECT count(*) FROM rag.latest_docs").fetchone()
        notes = int(row[0]) if row else 0
        prefix = tenth_prefix(notes)
        tenth = SearchFilters(path_prefix=prefix)
        left = search_sql.count_filtered(conn, tenth, 10**9)
        print(f"data: {notes:,} notes; filter path {prefix}* leaves {left:,} chunks")
        info = search_sql.get_model(conn)
        assert info is not None, "the store has no active model"
        pid = conn.info.backend_pid
        # Unrecorded: the first configuration timed otherwise pays for reading the index in.
        time_each(_rows(conn, info, tenth, 50), vectors, pid)
        for limit in (10, 50):
            for ef in EF_SEARCH:
                line = time_each(_rows(conn, info, tenth, limit, ef=ef), vectors, pid)
                label = "as search sets it" if ef is None else f"ef_search asked {ef}"
                print(f"  limit {limit:2d}  iterative HNSW scan, {label:20s} {line}", flush=True)
            line = time_each(_without_iterative_scans(conn, info, tenth, limit), vectors, pid)
            print(f"  limit {limit:2d}  without iterative scans (pgvector 0.7)  {line}", flush=True)
            # Exact ranking is slow: a few queries tell.
            line = time_each(
                _rows(conn, info, tenth, limit, exact=True), vectors[: WARM_UP + 10], pid
            )
            print(
                f"  limit {limit:2d}  exact ranking of the filtered chunks      {line}", flush=True
            )


if __name__ == "__main__":
    main()
