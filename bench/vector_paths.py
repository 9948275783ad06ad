"""What a vector search costs by store size and filter share: the whole vector leg as search runs
it (``legs._vector_rows``: exact ranking, the HNSW index or an iterative filtered scan, whichever
it chooses), unfiltered and with path filters keeping about a tenth, a hundredth and a
thousandth of the notes, for ``limit`` 10 (a vector search) and 50 (a hybrid search's leg).

On a kept bench/scale_steps.py or bench/scale.py store (``--exact-max`` lifts the size up to which
a store counts as small, to time a store of a few thousand chunks that way)::

    .venv/bin/python bench/vector_paths.py --store /path/to/store [--queries 60]
    ROOT=/path/to/older/checkout .venv/bin/python bench/vector_paths.py --store /path/to/store

Hash query vectors, as the store's: the figures are costs, not recall. Each line gives the p50
and p95 wall time, the mean server CPU per query, and the paths taken (``exact`` chunk by chunk,
``scan`` of every vector, ``index``, ``iterative``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, str(Path(__file__).resolve().parent)]

from scale import HashEmbedder  # noqa: E402
from scale_search import jsquad_questions, time_each  # noqa: E402

from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.search import SearchFilters, legs, search_sql  # noqa: E402

CODE = Path(ROOT).name if "ROOT" in os.environ else "this checkout"
# The functions whose calls name a path; older code has vector_hnsw where this has vector_nearest.
PATHS = {"vector_exact": "exact", "vector_hnsw_filtered": "iterative", "vector_hnsw": "index"}


def _spy_paths() -> Counter[str]:
    """Count the calls of each ranking function of ``search_sql`` from now on."""
    taken: Counter[str] = Counter()
    for name in [*PATHS, "vector_nearest"]:
        original = getattr(search_sql, name, None)
        if original is None:
            continue

        def run(*args: Any, _name: str = name, _fn: Any = original, **kwargs: Any) -> Any:
            exact = kwargs.get("exact", False)
            taken["scan" if exact else PATHS.get(_name, "index")] += 1
            return _fn(*args, **kwargs)

        setattr(search_sql, name, run)
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True, help="folder holding pg/")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--exact-max", type=int, default=None, help="EXACT_MAX_ROWS to use")
    args = parser.parse_args()
    if args.exact_max is not None:
        search_sql.EXACT_MAX_ROWS = args.exact_max
    print(f"command: .venv/bin/python bench/vector_paths.py --store {args.store.name}"
          f" --queries {args.queries}" + (f" --exact-max {args.exact_max}" if args.exact_max
          is not None else "") + f"; code: {CODE}; load {os.getloadavg()}")  # fmt: skip
    vectors = HashEmbedder().embed(jsquad_questions(args.queries), "query")
    taken = _spy_paths()
    with db.connect(db.embedded_url(args.store / "pg")) as conn:
        info = search_sql.get_model(conn)
        assert info is not None, "the store has no active model"
        row = conn.execute(
            "SELECT (SELECT count(*) FROM rag.latest_docs), (SELECT count(*) FROM rag.chunks),"
            " (SELECT pg_relation_size(reltoastrelid) FROM pg_class"
            "  WHERE oid = 'rag.embeddings'::regclass)"
        ).fetchone()
        assert row is not None
        notes, chunks, toast = int(row[0]), int(row[1]), int(row[2])
        where = "out of line (TOAST)" if toast else "in their rows"
        print(f"data: {notes:,} notes, {chunks:,} chunks; vectors stored {where}"
              f" (TOAST {toast / 2**20:.0f} MB); EXACT_MAX_ROWS {search_sql.EXACT_MAX_ROWS:,}")  # fmt: skip
        pid = conn.info.backend_pid
        for prefix in ("", "c00", "c000", "c0000"):
            filters = SearchFilters(path_prefix=prefix) if prefix else None
            left = search_sql.count_filtered(conn, filters, 10**9) if filters else chunks
            label = f"path {prefix}* ({left:,} chunks)" if prefix else f"unfiltered ({chunks:,})"
            for limit in (10, 50):

                def run(v: list[float], f: Any = filters, n: int = limit) -> object:
                    return legs._vector_rows(conn, info, v, filters=f, limit=n, min_similarity=None)

                taken.clear()
                line = time_each(run, vectors, pid)
                paths = "+".join(sorted(taken))
                print(f"  {label:28s} limit {limit:2d}  {line}  path {paths}", flush=True)


if __name__ == "__main__":
    main()
